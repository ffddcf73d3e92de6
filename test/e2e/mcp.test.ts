/** The MCP server as agents use it: the compiled executable, a real MCP client, over stdio and HTTP. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { executable, GLOVE, HOOK_TIMEOUT, runCli, SYSTEM_PATH, tempDir, useCliCommand, writeTree } from "../helpers.ts";

const home = tempDir();
const docs = tempDir();
const outside = tempDir();
let exe: string;

const env = () => ({ PATH: SYSTEM_PATH, HOME: home, RESEARCHER_HOME: home, RESEARCHER_MODEL_PATH: GLOVE });

type ToolResult = { content: { type: string; text: string }[]; structuredContent?: any; isError?: boolean };

beforeAll(async () => {
  exe = await executable();
  useCliCommand([exe]);
  writeTree(docs, {
    "cars.md": "# Vehicles\n\nCars and trucks drive on the highway.\n\n## Parking\n\nThe driver parks the car in the garage.\n",
    "bread.md": "# Baking\n\nKnead the dough, let it rise, then bake the loaf.\n",
    "notes/space.md": "# Astronomy\n\nThe telescope observed a distant galaxy.\n",
  });
  writeTree(outside, { "secret.md": "top secret\n" });
  symlinkSync(join(outside, "secret.md"), join(docs, "escape.md"));
  expect(runCli(["repo", "add", "docs", docs, "--description", "Test documents about cars and bread"], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
}, HOOK_TIMEOUT);

function tools(client: Client) {
  return (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<ToolResult>;
}

describe("MCP over stdio", () => {
  let client: Client;
  let call: ReturnType<typeof tools>;
  let transport: StdioClientTransport;

  beforeAll(async () => {
    transport = new StdioClientTransport({ command: exe, args: ["serve"], env: env(), cwd: home, stderr: "pipe" });
    client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    call = tools(client);
  }, HOOK_TIMEOUT);
  afterAll(() => client.close());

  test("lists eight tools and tells the agent what repositories exist", async () => {
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual([
      "add_to_index", "get_document", "get_index_status", "list_repositories", "multi_get", "remove_from_index", "search_documents", "search_fragments",
    ]);
    expect(client.getInstructions()).toContain("docs: Test documents about cars and bread");
  });

  test("search_fragments returns the CLI's JSON and a text rendering", async () => {
    const result = await call("search_fragments", { query: "garage", mode: "bm25", n_results: 2 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ query: "garage", mode: "bm25", repositories: ["docs"], total: 1 });
    const hit = result.structuredContent.results[0];
    expect(Object.keys(hit)).toEqual(["rank", "score", "repository", "path", "location", "page", "docid", "title", "heading", "fragment", "snippet", "context", "metadata"]);
    expect(hit).toMatchObject({ path: "cars.md", location: "cars.md:7", heading: "Parking", context: "Test documents about cars and bread" });
    expect(result.content[0]!.text).toContain("docs:cars.md:7");
    const cli = JSON.parse(runCli(["search", "garage", "--mode", "bm25", "-n", "2", "--json"], { home }).stdout);
    expect(result.structuredContent).toEqual(cli);
  });

  test("hybrid and vector search through the kept-open model", async () => {
    const hybrid = await call("search_fragments", { query: "automobile", n_results: 1 });
    expect(hybrid.structuredContent).toMatchObject({ mode: "hybrid", results: [{ path: "cars.md" }] });
    const filtered = await call("search_fragments", { query: "telescope galaxy", filter: "notes/**" });
    expect(filtered.structuredContent.results.map((r: { path: string }) => r.path)).toEqual(["notes/space.md"]);
  });

  test("where filters before ranking, as text or JSON, and is described in the tool schema", async () => {
    const { tools: listed } = await client.listTools();
    const schema = listed.find((t) => t.name === "search_fragments")!.inputSchema as { properties: Record<string, { description?: string }> };
    expect(schema.properties.where!.description).toContain("front-matter key");
    const text = await call("search_fragments", { query: "the", mode: "bm25", where: "path=notes/** format=md" });
    expect(text.structuredContent.results.map((r: { path: string }) => r.path)).toEqual(["notes/space.md"]);
    expect(text.structuredContent.results[0].metadata).toEqual({ format: "md" });
    const json = await call("search_documents", {
      query: "the",
      mode: "bm25",
      where: { all: [{ key: "format", eq: "md" }], not: [{ key: "path", in: ["notes/**", "bread.md"] }] },
    });
    expect(json.structuredContent.results.map((r: { path: string }) => r.path)).toEqual(["cars.md"]);
    const bad = await call("search_fragments", { query: "the", where: "title=>cars" });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toContain("where: unknown operator '=>' at column 6: title=>cars");
  });

  test("search_documents groups fragments", async () => {
    const result = await call("search_documents", { query: "car driver garage", mode: "bm25" });
    expect(result.structuredContent.results[0]).toMatchObject({ path: "cars.md", fragments: expect.any(Array) });
  });

  test("get_document by location and by docid; multi_get by glob", async () => {
    const byLocation = await call("get_document", { ref: "docs:cars.md:5", max_lines: 2 });
    expect(byLocation.structuredContent).toMatchObject({ path: "cars.md", from_line: 5, to_line: 6, text: "## Parking\n" });
    const docid = (await call("search_fragments", { query: "dough", mode: "bm25" })).structuredContent.results[0].docid;
    const byDocid = await call("get_document", { ref: docid });
    expect(byDocid.structuredContent.text).toContain("Knead the dough");
    const many = await call("multi_get", { pattern: "**/*.md", max_bytes: 120 });
    expect(many.structuredContent.documents.length).toBeGreaterThan(0);
    expect(many.structuredContent.skipped.length).toBeGreaterThan(0);
  });

  test("list_repositories and get_index_status", async () => {
    const repos = await call("list_repositories");
    expect(repos.structuredContent.repositories).toEqual([expect.objectContaining({ name: "docs", description: "Test documents about cars and bread" })]);
    const status = await call("get_index_status", { repository: "docs" });
    expect(status.structuredContent.repositories[0]).toMatchObject({ name: "docs", failures: [] });
    expect(status.structuredContent.repositories[0].fragments).toBeGreaterThanOrEqual(4);
  });

  test("add_to_index and remove_from_index change what search finds", async () => {
    writeFileSync(join(docs, "boats.md"), "# Boats\n\nThe sailboat crossed the harbour.\n");
    const added = await call("add_to_index", { repository: "docs", file_path: "boats.md" });
    expect(added.structuredContent).toMatchObject({ indexed: 1 });
    expect((await call("search_fragments", { query: "sailboat", mode: "bm25" })).structuredContent.total).toBe(1);
    const removed = await call("remove_from_index", { repository: "docs", document_path: "boats.md" });
    expect(removed.structuredContent).toEqual({ repository: "docs", path: "boats.md", removed: true });
    expect((await call("search_fragments", { query: "sailboat", mode: "bm25" })).structuredContent.total).toBe(0);
  });

  test("an index run by another process is visible to the running server", async () => {
    expect((await call("search_fragments", { query: "kayak", mode: "bm25" })).structuredContent.total).toBe(0);
    writeFileSync(join(docs, "kayak.md"), "# Kayak\n\nPaddling a kayak on the lake.\n");
    expect(runCli(["index", "docs"], { home }).code).toBe(0);
    expect((await call("search_fragments", { query: "kayak", mode: "bm25" })).structuredContent.total).toBe(1);
    const hybrid = await call("search_fragments", { query: "kayak paddling", n_results: 1 });
    expect(hybrid.structuredContent.results[0].path).toBe("kayak.md");
  });

  test("unknown tools and unknown or misspelled parameters are errors that name them", async () => {
    const unknownTool = await call("search_everything", { query: "x" }).catch((e: Error) => e);
    expect(String((unknownTool as Error).message ?? JSON.stringify(unknownTool))).toContain("search_everything");
    const misspelled = await call("search_fragments", { query: "x", n_result: 3 }).catch((e: Error) => ({ isError: true, content: [{ type: "text", text: e.message }] }));
    expect(misspelled.isError).toBe(true);
    expect(misspelled.content[0]!.text).toContain("n_result");
    const wrongType = await call("search_fragments", { query: "x", n_results: "many" }).catch((e: Error) => ({ isError: true, content: [{ type: "text", text: e.message }] }));
    expect(wrongType.isError).toBe(true);
  });

  test("paths outside a repository are refused, whatever the trick", async () => {
    for (const ref of ["docs:../outside.md", `docs:${join(outside, "secret.md")}`, "docs:escape.md", "docs:notes/../../x.md"]) {
      const result = await call("get_document", { ref });
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toMatch(/outside repository 'docs'/);
    }
    const add = await call("add_to_index", { repository: "docs", file_path: "../../etc/passwd" });
    expect(add.isError).toBe(true);
    const remove = await call("remove_from_index", { repository: "docs", document_path: "/etc/passwd" });
    expect(remove.isError).toBe(true);
  });

  test("a huge request is refused and the server keeps serving", async () => {
    const huge = await call("search_fragments", { query: "x".repeat(200_000) }).catch((e: Error) => ({ isError: true, content: [{ type: "text", text: e.message }] }));
    expect(huge.isError).toBe(true);
    expect((await call("search_fragments", { query: "garage", mode: "bm25" })).structuredContent.total).toBe(1);
  });
});

describe("stdio protocol hygiene", () => {
  test("malformed JSON-RPC gets an error, the next request still works, and the server exits when stdin closes", async () => {
    const proc = Bun.spawn([exe, "serve"], { env: env(), cwd: home, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    proc.stdin.write("this is not json\n");
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "no/such/method" })}\n`);
    proc.stdin.write(`${JSON.stringify(init)}\n`);
    proc.stdin.flush();
    const reader = proc.stdout.getReader();
    let text = "";
    const deadline = Date.now() + 10_000;
    while (!text.includes('"id":1') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const messages = text.trim().split("\n").map((line) => JSON.parse(line));
    expect(messages.some((m) => m.error?.code === -32700 || m.error?.code === -32600)).toBe(true);
    expect(messages.find((m) => m.id === 7)?.error?.code).toBe(-32601);
    expect(messages.find((m) => m.id === 1)?.result?.serverInfo?.name).toBe("researcher");
    proc.stdin.end();
    const code = await Promise.race([proc.exited, Bun.sleep(5000).then(() => "still running")]);
    expect(code).toBe(0);
  });
});

describe("MCP over HTTP", () => {
  async function startServer(extra: string[] = []): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
    const proc = Bun.spawn([exe, "serve", "--port", "0", ...extra], { env: env(), cwd: home, stdout: "pipe", stderr: "pipe" });
    const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!/listening on (\S+)\/mcp/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`server exited: ${text}`);
      text += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    return { url: /listening on (\S+)\/mcp/.exec(text)![1]!, proc };
  }

  const connect = async (url: string, token?: string) => {
    const client = new Client({ name: "http-test", version: "1.0.0" });
    const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
    return client;
  };

  test("without a token: health, tools, and DNS-rebinding protection", async () => {
    const { url, proc } = await startServer();
    try {
      expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: "ok" });
      const client = await connect(url);
      const result = (await client.callTool({ name: "search_fragments", arguments: { query: "garage", mode: "bm25" } })) as ToolResult;
      expect(result.structuredContent.results[0].path).toBe("cars.md");
      await client.close();
      const rebinding = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { Host: "evil.example:80", "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(rebinding.status).toBe(403);
      const malformed = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: "{not json",
      });
      expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
      const huge = await fetch(`${url}/mcp`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "x".repeat(2 * 1024 * 1024) });
      expect(huge.status).toBe(413);
      expect((await fetch(`${url}/health`)).status).toBe(200);
    } finally {
      proc.kill();
    }
  });

  test("with a token: refused without it, served with it", async () => {
    const { url, proc } = await startServer(["--token", "s3cret"]);
    try {
      const anonymous = await connect(url).catch((e: Error) => e);
      expect(anonymous).toBeInstanceOf(Error);
      const client = await connect(url, "s3cret");
      const { tools: listed } = await client.listTools();
      expect(listed.length).toBe(8);
      await client.close();
    } finally {
      proc.kill();
    }
  });
});
