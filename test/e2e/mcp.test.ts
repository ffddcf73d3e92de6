/** The MCP server as agents use it: the compiled executable, a real MCP client, over stdio and HTTP. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  executable,
  MODEL_ENV,
  HOOK_TIMEOUT,
  ROOT,
  runCli,
  SHARED,
  startServe,
  SYSTEM_PATH,
  tempDir,
  testShared,
  useCliCommand,
  writeTree,
} from "../helpers.ts";
import { paragraph, SCANNED, scanOfPages, scannedPages, writePdf } from "../pdf-fixtures.ts";
import { acquireWriterLock } from "../../src/lock.ts";
import { NO_BATCHES } from "../../src/serve/stdio-transport.ts";
import { indexFiles } from "../../src/index/indexer.ts";
import { registerRepository } from "../../src/repos.ts";
import { Store } from "../../src/store/store.ts";
import { agentHint } from "../../src/serve/agent-hints.ts";

const home = tempDir();
const docs = tempDir();
const outside = tempDir();
const big = tempDir();
let exe: string;

const env = () => ({ PATH: SYSTEM_PATH, HOME: home, RESEARCHER_HOME: home, ...MODEL_ENV });

type ToolResult = {
  content: { type: string; text: string }[];
  // biome-ignore lint/suspicious/noExplicitAny: each test reads the tool's JSON answer as its assertions check it
  structuredContent?: any;
  isError?: boolean;
};

beforeAll(async () => {
  exe = await executable();
  useCliCommand([exe]);
  writeTree(docs, {
    "cars.md": "# Vehicles\n\nCars and trucks drive on the highway.\n\n## Parking\n\nThe driver parks the car in the garage.\n",
    "bread.md": "# Baking\n\nKnead the dough, let it rise, then bake the loaf.\n",
    "notes/space.md": "# Astronomy\n\nThe telescope observed a distant galaxy.\n",
    // Files on disk the repository's rules leave out: a read names the rule (a file not there names none).
    "data.csv": "a,b\n1,2\n",
    ".env": "TOKEN=x\n",
  });
  writeTree(outside, { "secret.md": "top secret\n" });
  symlinkSync(join(outside, "secret.md"), join(docs, "escape.md"));
  expect(runCli(["repo", "add", "docs", docs, "--description", "Test documents about cars and bread"], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  // 5 MiB in 5,000-byte lines: an answer must never carry it whole.
  const line = `${"lorem ipsum dolor sit amet ".repeat(185)}end`;
  writeTree(big, {
    "big.md": `# Big\n\n${Array.from({ length: 1060 }, (_, i) => `${i} ${line}`).join("\n")}\n`,
    "small.md": "# Small\n\ntiny\n",
  });
  expect(runCli(["repo", "add", "big", big, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "big"], { home }).code).toBe(0);
}, HOOK_TIMEOUT);

/** Whether `check` holds within `ms`. */
async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await Bun.sleep(20);
  return check();
}

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

  test("lists ten tools, each with a title and annotations, and tells the agent what repositories exist", async () => {
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual([
      "add_to_index",
      "get_document",
      "get_index_status",
      "list_documents",
      "list_repositories",
      "multi_get",
      "remove_from_index",
      "repositories_for",
      "search_documents",
      "search_fragments",
    ]);
    for (const tool of listed) {
      expect(typeof tool.title === "string" || typeof tool.annotations?.title === "string").toBe(true);
      expect(typeof tool.annotations?.readOnlyHint).toBe("boolean");
      expect(typeof tool.annotations?.destructiveHint).toBe("boolean");
      const writes = ["add_to_index", "remove_from_index"].includes(tool.name);
      expect([tool.name, tool.annotations?.readOnlyHint]).toEqual([tool.name, !writes]);
    }
    expect(listed.find((t) => t.name === "remove_from_index")!.annotations!.destructiveHint).toBe(true);
    // The search tools declare what their structured content is (the SDK checks every answer against it).
    for (const name of ["search_fragments", "search_documents"]) {
      expect(Object.keys(listed.find((t) => t.name === name)!.outputSchema!.properties!)).toEqual([
        "query",
        "mode",
        "repositories",
        "offset",
        "total",
        "words_found",
        "skipped",
        "unmatched",
        "warnings",
        "results",
      ]);
    }
    expect(client.getInstructions()).toContain("docs: Test documents about cars and bread");
  });

  test("search_fragments returns the CLI's JSON and a text rendering", async () => {
    const result = await call("search_fragments", { query: "garage", mode: "bm25", n_results: 2 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ query: "garage", mode: "bm25", repositories: ["big", "docs"], total: 1 });
    const hit = result.structuredContent.results[0];
    expect(Object.keys(hit)).toEqual([
      "rank",
      "score",
      "mode",
      "repository",
      "path",
      "location",
      "page",
      "docid",
      "title",
      "heading",
      "fragment",
      "snippet",
      "context",
      "metadata",
    ]);
    expect(hit).toMatchObject({
      path: "cars.md",
      location: "cars.md:7",
      heading: "Parking",
      context: "Test documents about cars and bread",
    });
    expect(result.content[0]!.text).toContain("docs:cars.md:7");
    const cli = JSON.parse(runCli(["search", "garage", "--mode", "bm25", "-n", "2", "--json"], { home }).stdout);
    expect(result.structuredContent).toEqual(cli);
    // With full, each result holds its whole fragment, as the CLI's --full gives it (s13 user #3).
    const full = await call("search_fragments", { query: "garage", mode: "bm25", n_results: 2, full: true });
    const cliFull = JSON.parse(runCli(["search", "garage", "--mode", "bm25", "-n", "2", "--json", "--full"], { home }).stdout);
    expect(full.structuredContent).toEqual(cliFull);
    expect(full.structuredContent.results[0].text).toContain("garage");
  });

  testShared("hybrid and vector search through the kept-open model", async () => {
    const hybrid = await call("search_fragments", { query: "automobile", n_results: 1 });
    expect(hybrid.structuredContent).toMatchObject({ mode: "hybrid", results: [{ path: "cars.md" }] });
    const filtered = await call("search_fragments", { query: "telescope galaxy", filter: "notes/**" });
    expect(filtered.structuredContent.results.map((r: { path: string }) => r.path)).toEqual(["notes/space.md"]);
  });

  test("where filters before ranking, as text or JSON, and is described in the tool schema", async () => {
    const { tools: listed } = await client.listTools();
    const schema = listed.find((t) => t.name === "search_fragments")!.inputSchema as {
      properties: Record<string, { description?: string }>;
    };
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
    // The same object serialised as a string (as agents often send nested arguments) is read as JSON.
    const asString = await call("search_documents", {
      query: "the",
      mode: "bm25",
      where: JSON.stringify({ all: [{ key: "format", eq: "md" }], not: [{ key: "path", in: ["notes/**", "bread.md"] }] }),
    });
    expect(asString.structuredContent.results.map((r: { path: string }) => r.path)).toEqual(["cars.md"]);
    const bad = await call("search_fragments", { query: "the", where: "title=>cars" });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toContain("where: unknown operator '=>' at column 6: title=>cars");
    // The grammar's place for an agent, which has no README (s28 agent 7).
    expect(bad.content[0]!.text).toContain('title~"borrow" (see the where parameter\'s description)');
    expect(bad.content[0]!.text).not.toContain("README");
    // An empty where, as text or JSON, would search everything: refused, as an empty filter glob is (s12 review #3).
    for (const where of ["", "  ", {}, "{}", { all: [] }]) {
      const empty = await call("search_fragments", { query: "the", where });
      expect(empty.isError).toBe(true);
      expect(empty.content[0]!.text).toContain("where needs at least one condition (got an empty filter)");
    }
  });

  test("code: where language=python keeps code of that language; the fragment's lines read back with get_document", async () => {
    const code = tempDir();
    writeTree(code, {
      "split.py": 'def split_header(line):\n    """Split a header line at its colon."""\n    return line.split(":", 1)\n',
      "split.ts": '/** Split a header line at its colon. */\nexport function splitHeader(line: string) {\n  return line.split(":");\n}\n',
    });
    expect(runCli(["repo", "add", "code", code, "--code", "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "code"], { home }).code).toBe(0);
    const found = await call("search_fragments", { query: "split header", repository: "code", where: "language=python" });
    expect(found.structuredContent.results.map((r: { path: string }) => r.path)).toEqual(["split.py"]);
    const { fragment, heading } = found.structuredContent.results[0];
    expect(heading).toBe("def split_header");
    const read = await call("get_document", { ref: `code:split.py:${fragment.start_line}-${fragment.end_line}` });
    expect(read.structuredContent.text).toContain('"""Split a header line at its colon."""');
    // A language named as people say it ("ts") finds nothing, and the answer says which names the index uses.
    const misnamed = await call("search_fragments", { query: "split header", repository: "code", where: "language=ts" });
    expect(misnamed.structuredContent.unmatched).toEqual([{ filter: "language=ts", key: "language", known: ["python", "typescript"] }]);
    expect(misnamed.content[0]!.text).toBe('no results for "split header"\nno document has language=ts; language here: python, typescript');
    // The status text names the languages, as `researcher status` does (s24 code user C9).
    expect((await call("get_index_status", { repository: "code" })).content[0]!.text).toContain("\n  code: 1 python, 1 typescript");
    // Edited since it was indexed: both reads say so, and name the tool that catches up (s9 hostile).
    writeTree(code, { "split.py": `# edited\n${"def split_header(line):\n    return line\n"}` });
    const warning = "warning: code:split.py changed since it was indexed: lines may have moved (add_to_index with its path catches up)";
    expect((await call("get_document", { ref: "code:split.py" })).content[0]!.text).toStartWith(warning);
    expect((await call("multi_get", { pattern: "code:split.py" })).content[0]!.text).toStartWith(warning);
    // Source code is served as plain text, not markdown, where a host would make its comments headings (s11 agent #8).
    const listed = (await client.listResources()).resources;
    expect(listed.find((r) => r.uri === "researcher://code/split.py")?.mimeType).toBe("text/plain");
    expect(listed.find((r) => r.uri === "researcher://docs/cars.md")?.mimeType).toBe("text/markdown");
    expect((await client.readResource({ uri: "researcher://code/split.py" })).contents[0]?.mimeType).toBe("text/plain");
    // The other tests share this home and count its repositories.
    expect(runCli(["repo", "remove", "code"], { home }).code).toBe(0);
  });

  test("code: a function longer than the code budget comes in consecutive parts with one heading, and the agent is told how to read it whole", async () => {
    const code = tempDir();
    const body = Array.from({ length: 150 }, (_, i) => `    total_${i} = compute_value(record, ${i}) + offset_${i}`);
    const source = ["def build_report(record):", ...body, "    return total_0", ""].join("\n");
    writeTree(code, { "report.py": source });
    expect(runCli(["repo", "add", "units", code, "--code", "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "units"], { home }).code).toBe(0);
    const found = await call("search_fragments", { query: "compute_value record", repository: "units", mode: "bm25", n_results: 50 });
    type Part = { heading: string; fragment: { seq: number; start_line: number; end_line: number } };
    const parts = (found.structuredContent.results as Part[])
      .filter((r) => r.heading === "def build_report")
      .map((r) => r.fragment)
      .sort((a, b) => a.seq - b.seq);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.map((p) => p.seq - parts[0]!.seq)).toEqual(parts.map((_, i) => i));
    const whole = await call("get_document", { ref: `units:report.py:${parts[0]!.start_line}-${parts.at(-1)!.end_line}` });
    expect(whole.structuredContent.text).toBe(source.split("\n").slice(0, 152).join("\n"));
    // Each part carries the ref of the whole unit, which reads the same.
    const sectionRef = (found.structuredContent.results as { heading: string; fragment: { section: { ref: string } } }[]).find(
      (r) => r.heading === "def build_report",
    )!.fragment.section.ref;
    expect((await call("get_document", { ref: sectionRef })).structuredContent.text).toBe(whole.structuredContent.text);
    // What the agent reads says so: a hit may be one part, and how to read the whole unit.
    const instructions = client.getInstructions()!.replace(/\n/g, " ");
    expect(instructions).not.toContain("a fragment is a whole function or class:");
    expect(instructions).toContain("a hit may be one part of a unit: its `fragment.section` gives the lines of the whole unit");
    expect(instructions).toContain("`fragment.section.ref` reads it in one get_document call");
    expect(instructions).toContain("get_document with a result's `fragment.ref`");
    const { tools: listed } = await client.listTools();
    const description = listed.find((t) => t.name === "search_fragments")!.description!;
    expect(description).toContain(
      "or one part of a longer one (split between statements into consecutive fragments with the same heading)",
    );
    expect(runCli(["repo", "remove", "units"], { home }).code).toBe(0);
  });

  test("search_documents groups fragments", async () => {
    const result = await call("search_documents", { query: "car driver garage", mode: "bm25" });
    expect(result.structuredContent.results[0]).toMatchObject({ path: "cars.md", fragments: expect.any(Array) });
  });

  test("indexed documents are resources: researcher://{repository}/{+path}; other files are refused", async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["researcher://{repository}/{+path}"]);
    const read = await client.readResource({ uri: "researcher://docs/cars.md" });
    expect(read.contents[0]).toMatchObject({ uri: "researcher://docs/cars.md", mimeType: "text/markdown" });
    expect(String((read.contents[0] as { text: string }).text)).toContain("driver");
    expect(await client.readResource({ uri: "researcher://docs/.env" }).catch((e: Error) => e.message)).toContain(
      "docs:.env is not indexed: it is hidden, or in a hidden folder",
    );
    // resources/list offers every indexed document (up to 1,000; list_documents pages the rest), each readable.
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain("researcher://docs/notes/space.md");
    expect(resources.find((r) => r.uri === "researcher://docs/cars.md")).toMatchObject({ name: "docs:cars.md", title: "Vehicles" });
    const listed = await client.readResource({ uri: "researcher://docs/notes/space.md" });
    expect(String((listed.contents[0] as { text: string }).text)).toContain("telescope");
    // The template describes them once; each resource repeated its 145 bytes (s24 agent A7).
    expect(resources.filter((r) => r.description !== undefined)).toEqual([]);
    expect(resourceTemplates[0]!.description).toContain("An indexed document's text");
    // A URI resources/list hands out, given to get_document as a ref, is the document it names (s24 agent A7).
    const uri = "researcher://docs/notes/space.md";
    expect((await call("get_document", { ref: uri })).structuredContent).toMatchObject({ repository: "docs", path: "notes/space.md" });
    expect((await call("get_document", { ref: "researcher://docs/100%.md" })).content[0]!.text).toStartWith(
      "error: malformed percent-encoding in researcher://docs/100%.md",
    );
    // Malformed percent-encoding is the client's error (-32602), not an internal one.
    expect(await client.readResource({ uri: "researcher://docs/100%.md" }).catch((e: { code: number }) => e.code)).toBe(-32602);
    // A URI outside the template is the SDK's own error: its "MCP error -32602:" once, not twice (s28 agent 5).
    for (const uri of ["file:///etc/passwd", "researcher://docs/"]) {
      const refused = await client.readResource({ uri }).catch((e: { code: number; message: string }) => e);
      expect({ code: refused.code, message: refused.message }).toEqual({
        code: -32602,
        message: `MCP error -32602: Resource ${uri} not found`,
      });
    }
  });

  test("a resource path outside its repository is bad input (-32602), as it is over REST (400), not -32002 (s28 hostile F8)", async () => {
    for (const [uri, path] of [
      ["researcher://docs/..%2Foutside.md", "../outside.md"],
      ["researcher://docs//etc/passwd", "/etc/passwd"],
    ]) {
      const refused = await client.readResource({ uri: uri! }).catch((e: { code: number; message: string }) => e);
      expect(refused).toMatchObject({ code: -32602, message: expect.stringContaining(`'${path}' is outside repository 'docs'`) });
    }
  });

  test("a resource of a document changed since it was indexed is headed by get_document's warning (s24 agent A11)", async () => {
    writeFileSync(join(docs, "ferry.md"), "# Ferry\n\nThe ferry left the quay.\n");
    expect((await call("add_to_index", { repository: "docs", file_path: "ferry.md" })).structuredContent).toMatchObject({ indexed: 1 });
    try {
      const text = async () =>
        String(((await client.readResource({ uri: "researcher://docs/ferry.md" })).contents[0] as { text: string }).text);
      expect(await text()).toBe("# Ferry\n\nThe ferry left the quay.");
      writeFileSync(join(docs, "ferry.md"), "new first line\n\n# Ferry\n\nThe ferry left the quay.\n");
      const warning = "warning: docs:ferry.md changed since it was indexed: lines may have moved (add_to_index with its path catches up)\n";
      expect((await call("get_document", { ref: "docs:ferry.md" })).content[0]!.text).toStartWith(warning);
      expect(await text()).toBe(`${warning}new first line\n\n# Ferry\n\nThe ferry left the quay.`);
    } finally {
      expect((await call("remove_from_index", { repository: "docs", document_path: "ferry.md" })).isError).toBeFalsy();
      rmSync(join(docs, "ferry.md"));
    }
  });

  test("get_document by location and by docid; multi_get by glob", async () => {
    const byLocation = await call("get_document", { ref: "docs:cars.md:5", max_lines: 2 });
    expect(byLocation.structuredContent).toMatchObject({ path: "cars.md", from_line: 5, to_line: 6, text: "## Parking\n" });
    const docid = (await call("search_fragments", { query: "dough", mode: "bm25" })).structuredContent.results[0].docid;
    const byDocid = await call("get_document", { ref: docid });
    expect(byDocid.structuredContent.text).toContain("Knead the dough");
    const many = await call("multi_get", { pattern: "docs:**/*.md", max_bytes: 120 });
    expect(many.structuredContent.documents.length).toBeGreaterThan(0);
    expect(many.structuredContent.skipped.length).toBeGreaterThan(0);
  });

  test("a search result's repository and location read back; list_documents lists what is indexed", async () => {
    const hit = (await call("search_fragments", { query: "garage", mode: "bm25" })).structuredContent.results[0];
    const read = await call("get_document", { repository: hit.repository, ref: hit.location, max_lines: 1 });
    expect(read.structuredContent).toMatchObject({ path: "cars.md", from: 7, to: 7, text: "The driver parks the car in the garage." });
    // A range read whole, as asked, is no cut: the text says the document goes on, not that the answer was truncated.
    const range = await call("get_document", { ref: "docs:cars.md:3:2" });
    expect(range.content[0]!.text).toEndWith("\n\n[lines 3–4 of 7, as asked; the document goes on at line 5]");
    expect(range.structuredContent).toMatchObject({ from: 3, to: 4, truncated: false });
    expect(range.structuredContent.continue_with).toBeUndefined();
    // Cut by max_bytes, a range is read on inside itself with the same ref (s11 agent #1: from_line left the range).
    const whole = (await call("get_document", { ref: "docs:cars.md:3-5" })).structuredContent.text as string;
    const cut = await call("get_document", { ref: "docs:cars.md:3-5", max_bytes: whole.indexOf("\n") });
    expect(cut.structuredContent).toMatchObject({ from: 3, to: 3, truncated: true, continue_with: { from_line: 4 } });
    const rest = await call("get_document", { ref: "docs:cars.md:3-5", from_line: 4 });
    expect(rest.structuredContent).toMatchObject({ from: 4, to: 5, truncated: false });
    expect(`${cut.structuredContent.text}\n${rest.structuredContent.text}`).toBe(whole);
    expect((await call("get_document", { ref: hit.location, max_lines: 1 })).structuredContent.text).toContain("garage");
    const missing = await call("get_document", { ref: "docs:car.md" });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toContain("did you mean docs:cars.md");
    expect(missing.content[0]!.text).toEndWith(") [DOCUMENT_NOT_FOUND]"); // the code, as the CLI and REST carry it
    // A folder, and a path with no near miss: the hints name tools an agent has (s21 MCP #4).
    const folder = await call("get_document", { ref: "docs:notes" });
    expect(folder.content[0]!.text).toContain(
      'the multi_get tool with pattern "docs:notes/" reads them, the list_documents tool with repository "docs" and prefix "notes/" lists them',
    );
    const unknown = await call("get_document", { ref: "docs:zzzzzzzzzz/qqqqqqqq.md" });
    expect(unknown.content[0]!.text).toContain(
      'the list_documents tool with repository "docs" lists them, the get_index_status tool lists failures',
    );
    // A prefix that names the repository, as a ref does (s21 MCP #2: it listed nothing).
    const named = await call("list_documents", { prefix: "docs:notes/" });
    expect(named.structuredContent.documents.map((d: { repository: string; path: string }) => `${d.repository}:${d.path}`)).toEqual([
      "docs:notes/space.md",
    ]);
    // With another repository named, the prefix's is refused, as a ref's is (s21 retest R8: it listed nothing in silence).
    const crossed = await call("list_documents", { prefix: "docs:notes/", repository: "big" });
    expect([crossed.isError, crossed.content[0]!.text]).toEqual([
      true,
      expect.stringContaining("names repository 'docs' but repository is 'big'"),
    ]);
    const listed = await call("list_documents", { repository: "docs" });
    expect(listed.structuredContent.documents.map((d: { path: string }) => d.path)).toEqual(["bread.md", "cars.md", "notes/space.md"]);
    expect(listed.structuredContent.documents[0]).toMatchObject({ repository: "docs", format: "md", fragments: 1, pages: null });
    // The text says what the description promises: fragments, pages and when modified (s21 MCP).
    expect(listed.content[0]!.text.split("\n")[0]).toMatch(
      /^docs:bread\.md {2}md {2}\d+ bytes {2}1 fragments {2}modified \d{4}-\d\d-\d\dT/,
    );
    const paged = await call("list_documents", { limit: 2, offset: 1 });
    expect(paged.structuredContent).toMatchObject({ total: 5, offset: 1 });
    expect(paged.content[0]!.text).toContain("[2 more: continue with offset 3]");
    const past = await call("list_documents", { offset: 9 });
    expect(past.structuredContent).toMatchObject({ total: 5, offset: 9, documents: [] });
    expect(past.content[0]!.text).toBe("offset 9 is past the end: 5 documents");
    // A prefix that starts no path but is inside some (s12 user #8): the paths that hold it.
    const inside = await call("list_documents", { repository: "docs", prefix: "SPACE" });
    expect(inside.content[0]!.text).toBe("no indexed path starts with 'SPACE'; 1 path contains it: docs:notes/space.md");
    expect(inside.structuredContent).toMatchObject({ total: 0, documents: [] });
  });

  test("list_documents: a prefix naming the repository given is the path inside it; an empty listing says under what (s22 review F1, agent #6)", async () => {
    const paths = (answer: ToolResult) =>
      answer.structuredContent.documents.map((d: { repository: string; path: string }) => `${d.repository}:${d.path}`);
    // It listed nothing: `notes:meetings/` was matched as a path beginning `notes:`.
    expect(paths(await call("list_documents", { prefix: "docs:notes/", repository: "docs" }))).toEqual(["docs:notes/space.md"]);
    // The refusal's advice for another repository's name works: it named a prefix that again listed nothing.
    const crossed = await call("list_documents", { prefix: "docs:notes/", repository: "big" });
    expect(crossed.content[0]!.text).toContain("leave out repository to list 'docs', or write big:docs:notes/ for a path in 'big'");
    const advised = await call("list_documents", { prefix: "big:docs:notes/", repository: "big" });
    expect([Boolean(advised.isError), advised.content[0]!.text]).toEqual([false, "no indexed documents under 'big:docs:notes/'"]);
    // A repository that holds documents elsewhere does not read as empty.
    expect((await call("list_documents", { repository: "docs", prefix: "nothing/" })).content[0]!.text).toBe(
      "no indexed documents under 'nothing/'",
    );
    // A repository's name as the first folder: paths are inside its folder, as search's filter says.
    expect((await call("list_documents", { prefix: "docs/notes" })).content[0]!.text).toBe(
      "no indexed path starts with 'docs/notes': paths are inside a repository's folder; to list the repository docs, write docs:notes",
    );
    expect(paths(await call("list_documents", { prefix: "docs:notes" }))).toEqual(["docs:notes/space.md"]);
  });

  test("mistakes that lead back: a symbol after a path, a bare key in JSON where (s22 agent #6)", async () => {
    const symbol = await call("get_document", { ref: "docs:cars.md:Parking" });
    expect([symbol.isError, symbol.content[0]!.text]).toEqual([
      true,
      expect.stringMatching(
        /^error: 'Parking' after docs:cars\.md is not a line, a line range or a page \(hint: .*`fragment\.ref`\)\) \[USAGE\]$/,
      ),
    ]);
    const bare = await call("search_fragments", { query: "car", where: { format: "md" } });
    expect(bare.isError).toBe(true);
    expect(bare.content[0]!.text).toContain(`as {"all":[{"key":"format","eq":"md"}]}, or the text form 'format=md'`);
  });

  test("get_document and multi_get number lines as `get --line-numbers` does (s22 agent #5)", async () => {
    const cli = runCli(["get", "docs:cars.md:3-4", "--line-numbers"], { home }).stdout;
    expect(cli).toBe("     3\tCars and trucks drive on the highway.\n     4\t\n");
    const one = await call("get_document", { ref: "docs:cars.md:3-4", line_numbers: true });
    expect(`${one.structuredContent.text}\n`).toBe(cli);
    expect(one.content[0]!.text).toEndWith(`\n\n${cli.slice(0, -1)}\n\n[lines 3–4 of 7, as asked; the document goes on at line 5]`);
    const several = await call("multi_get", { pattern: "docs:cars.md:3-4,docs:bread.md:3", line_numbers: true });
    expect(several.structuredContent.documents.map((d: { text: string }) => d.text)).toEqual([
      cli.slice(0, -1),
      "     3\tKnead the dough, let it rise, then bake the loaf.",
    ]);
    expect(several.content[0]!.text).toContain(`=== docs:cars.md:3-4\n${cli}`);
    // Without it, the text as it is.
    expect((await call("get_document", { ref: "docs:cars.md:3-4" })).structuredContent.text).toBe(
      "Cars and trucks drive on the highway.\n",
    );
  });

  test("search_documents takes search_fragments' parameters, each described in a line, not its descriptions again (s22 agent #7)", async () => {
    const { tools: listed } = await client.listTools();
    const input = (name: string) =>
      listed.find((t) => t.name === name)!.inputSchema as { properties: Record<string, { description?: string }> };
    const undescribed = (schema: unknown) => JSON.stringify(schema, (key, value) => (key === "description" ? undefined : value));
    expect(undescribed(input("search_documents"))).toBe(undescribed(input("search_fragments")));
    // Each mode is named, auto (the default) too (s24 agent A7).
    for (const name of ["search_fragments", "search_documents"]) {
      const mode = input(name).properties.mode as { anyOf: { enum?: string[] }[]; description: string };
      const values = mode.anyOf.flatMap((type) => type.enum ?? []); // the modes, or null (s26 agent F8)
      expect([name, values.filter((value) => !mode.description.includes(value))]).toEqual([name, []]);
    }
    const long = Object.entries(input("search_documents").properties).filter(([, p]) => p.description!.length > 100);
    expect(long.map(([name]) => name)).toEqual([]);
  });

  test("answers are capped: a 5 MiB document never becomes a 10 MB line", async () => {
    const first = await call("get_document", { ref: "big:big.md" });
    expect(first.structuredContent.truncated).toBe(true);
    expect(Buffer.byteLength(first.structuredContent.text)).toBeLessThanOrEqual(128 * 1024);
    expect(first.structuredContent.text.endsWith("end")).toBe(true);
    const next = first.structuredContent.to + 1;
    expect(first.content[0]!.text).toContain(`continue with the same ref and from_line ${next}`);
    const second = await call("get_document", { ref: "big:big.md", from_line: next, max_lines: 1 });
    expect(second.structuredContent.text.startsWith(`${next - 3} lorem`)).toBe(true);
    const asked = await call("get_document", { ref: "big:big.md", max_bytes: 10_000_000 });
    expect(Buffer.byteLength(asked.structuredContent.text)).toBeLessThanOrEqual(1024 * 1024);
    expect(JSON.stringify(asked).length).toBeLessThan(3 * 1024 * 1024);
    const small = await call("get_document", { ref: "big:big.md", max_bytes: 100 });
    // Whole lines (the title, 6 bytes) would fill less than half of it: the rest is the next line's start (s24 agent A6).
    expect(small.structuredContent).toMatchObject({ from: 1, to: 3, truncated: true, continue_with: { from_line: 3, from_char: 93 } });
    expect(small.structuredContent.text).toBe(`# Big\n\n0 ${"lorem ipsum dolor sit amet ".repeat(3)}lorem ipsu`);
    const many = await call("multi_get", { pattern: "big:*.md", max_bytes: 10_000_000 });
    expect(JSON.stringify(many).length).toBeLessThan(3 * 1024 * 1024);
    // The document that does not fit is skipped; a text file after it that fits is still given.
    expect(many.structuredContent.documents.map((d: { path: string }) => d.path)).toEqual(["small.md"]);
    expect(many.structuredContent.skipped).toEqual([
      {
        repository: "big",
        path: "big.md",
        reason: expect.stringMatching(/^\d+ bytes, more than the 1048576 left of max_bytes for the answer/),
      },
    ]);
    // A document larger than any answer of multi_get: its reason names the tool and ref that read it (s24 agent A5).
    const alone = await call("multi_get", { pattern: "big:big.md" });
    const way = 'read it by itself with the get_document tool with ref "big:big.md", an answer at a time (continue_with)';
    expect(alone.structuredContent.skipped[0].reason).toEndWith(`(131072 bytes): ${way}`);
    expect(alone.content[0]!.text).toEndWith(way);
    const lines = await call("multi_get", { pattern: "big:big.md:3-40", max_bytes: 1000 });
    expect(lines.structuredContent.skipped[0].reason).toContain('the get_document tool with ref "big:big.md:3-40"');
    const perDocument = await call("multi_get", { pattern: "docs:cars.md,docs:bread.md", max_bytes_per_document: 60 });
    expect(perDocument.structuredContent.documents.map((d: { path: string }) => d.path)).toEqual(["bread.md"]);
    // Its way on, as every other skip's (s29 agent P3).
    expect(perDocument.structuredContent.skipped[0].reason).toMatch(
      /^larger than max_bytes per document \(\d+ > 60 bytes\): read it by itself with the get_document tool with ref "docs:cars\.md"/,
    );
    // A part's heading is a ref that reads it again, as the CLI's `==> repo:path:13-20 <==` (s21 MCP).
    const part = await call("multi_get", { pattern: "docs:cars.md:3-3,docs:bread.md" });
    expect(part.content[0]!.text).toStartWith("=== docs:cars.md:3-3\n");
    expect(part.content[0]!.text).toContain("\n\n=== docs:bread.md\n");
  });

  test("a search page past the end says how many match, in every mode (s26 agent F9)", async () => {
    // "no results" read as "the query matches nothing" to an agent that paged one step too far.
    for (const mode of ["bm25", "hybrid"]) {
      const past = await call("search_fragments", { query: "garage", repository: "docs", mode, offset: 5000 });
      // (Its first line: a warning follows where ../shared's model is missing and hybrid searches with bm25.)
      expect(past.content[0]!.text.split("\n")[0]).toMatch(
        /^no results for "garage" \(\d+ fragments? match(es)?; all before offset 5000\)$/,
      );
    }
  });

  test("list_repositories and get_index_status", async () => {
    const repos = await call("list_repositories");
    expect(repos.structuredContent.repositories).toEqual([
      expect.objectContaining({ name: "big" }),
      expect.objectContaining({ name: "docs", description: "Test documents about cars and bread" }),
    ]);
    const status = await call("get_index_status", { repository: "docs" });
    // escape.md links out of the root: not indexed, and the status says why.
    expect(status.structuredContent.repositories[0].failures).toEqual([
      { path: "escape.md", reason: `resolves to ${join(outside, "secret.md")}, outside the repository` },
    ]);
    expect(status.structuredContent.repositories[0].fragments).toBeGreaterThanOrEqual(4);
  });

  test("get_index_status's text names failed files (escaped), pages search misses, and says how to index a repository never indexed", async () => {
    const docsStatus = await call("get_index_status", { repository: "docs" });
    expect(docsStatus.content[0]!.text).toContain(
      `\n  1 file failed:\n  - escape.md: resolves to ${join(outside, "secret.md")}, outside the repository`,
    );
    const fresh = tempDir();
    // A page whose text reads as symbols (s24 user U6: get_index_status never named it).
    const junk = Array.from({ length: 8 }, (_, i) => ({ text: `! %3* 1 % % % ( -.45)& % ${i} & % 3* % %- 7 % -9 &`, top: 72 + i * 14 }));
    writeTree(fresh, {
      "good.md": "# Good\n\nfine\n",
      "bad\x1b[31m.pdf": "not a pdf at all",
      "tam.pdf": await writePdf([paragraph("The technology acceptance model.", 72), junk]),
    });
    expect(runCli(["repo", "add", "fresh", fresh], { home }).code).toBe(0);
    try {
      const never = await call("get_index_status", { repository: "fresh" });
      expect(never.content[0]!.text).toBe(
        "fresh: 0 documents, 0 fragments, indexed never\n  not indexed yet: run `researcher index fresh`",
      );
      runCli(["index", "fresh"], { home }); // bad.pdf fails
      const status = await call("get_index_status", { repository: "fresh" });
      expect(status.structuredContent.repositories[0].garbled).toEqual([{ path: "tam.pdf", pages: [2] }]);
      const failed = status.content[0]!.text;
      expect(failed).toContain("\n  1 file failed:\n  - bad\\x1b[31m.pdf: ");
      expect(failed).toContain(
        "\n  1 page read as symbols, not words (tam.pdf p2) (fonts without a character map, or a scan OCR reads as gibberish: ",
      );
      expect(failed).not.toContain("\x1b");
      expect(failed).not.toContain("not indexed yet");
      // What search ranks by meaning, as `status` says it; add_to_index's text says what went wrong without failing
      // the file, not only its structured content: hosts give the model the text (s26 agent F10).
      expect(failed).toContain(`\n  ${runCli(["status", "fresh"], { home }).stdout.split("\n")[1]!.split(" · ")[2]}`);
      writeTree(fresh, { "tam2.pdf": await writePdf([paragraph("The technology acceptance model again.", 72), junk]) });
      const added = await call("add_to_index", { repository: "fresh", file_path: "tam2.pdf" });
      expect(added.content[0]!.text).toStartWith("fresh:tam2.pdf: indexed\nwarning: tam2.pdf: 1 page's text reads as symbols");
    } finally {
      expect(runCli(["repo", "remove", "fresh"], { home }).code).toBe(0);
    }
  });

  test("get_index_status lists the first 100 failures of a repository and their total (s17 hostile #4)", async () => {
    // 100,000 failures made a 13.7 MB answer, past the 10 MiB the SDK's client reads: it dropped the connection.
    const many = tempDir();
    writeTree(many, { "ok.md": "# Ok\n\nfine\n" });
    for (let i = 0; i < 150; i++) symlinkSync(join(outside, "secret.md"), join(many, `link-${i}.md`));
    expect(runCli(["repo", "add", "many", many, "--no-embed"], { home }).code).toBe(0);
    try {
      expect(runCli(["index", "many"], { home }).code).toBe(0);
      const status = await call("get_index_status", { repository: "many" });
      const [entry] = (status.structuredContent as { repositories: { failures: unknown[]; failures_total: number }[] }).repositories;
      expect([entry!.failures.length, entry!.failures_total]).toEqual([100, 150]);
      expect(status.content[0]!.text).toContain(
        "  - … 145 more (the first 100 in the structured content's `failures`; `researcher status many --json` lists every one)",
      );
    } finally {
      expect(runCli(["repo", "remove", "many"], { home }).code).toBe(0);
    }
  });

  test("add_to_index and remove_from_index change what search finds", async () => {
    writeFileSync(join(docs, "boats.md"), "# Boats\n\nThe sailboat crossed the harbour.\n");
    const added = await call("add_to_index", { repository: "docs", file_path: "boats.md" });
    expect(added.structuredContent).toMatchObject({ indexed: 1 });
    expect((await call("search_fragments", { query: "sailboat", mode: "bm25" })).structuredContent.total).toBe(1);
    const removed = await call("remove_from_index", { repository: "docs", document_path: "boats.md" });
    expect(removed.structuredContent).toEqual({ repository: "docs", path: "boats.md", removed: true, dropped: "document" });
    expect((await call("search_fragments", { query: "sailboat", mode: "bm25" })).structuredContent.total).toBe(0);
    // A slip in the docs:path form gets the hint a bare path gets (s24 review D12).
    const slip = await call("remove_from_index", { repository: "docs", document_path: "docs:cars.mdx" });
    expect(slip.content[0]!.text).toBe("error: 'cars.mdx' is not indexed in 'docs' (hint: did you mean cars.md?) [DOCUMENT_NOT_FOUND]");
    // A name decomposed on disk (from a Mac), given composed, as typed (s14 retest of hostile #1).
    const decomposed = "barque à voile.md".normalize("NFD");
    writeFileSync(join(docs, decomposed), "# Barque\n\nThe barquentine sailed.\n");
    const composed = await call("add_to_index", { repository: "docs", file_path: "barque à voile.md".normalize("NFC") });
    expect(composed.structuredContent).toMatchObject({ indexed: 1 });
    const gone = await call("remove_from_index", { repository: "docs", document_path: "barque à voile.md".normalize("NFC") });
    expect(gone.structuredContent).toMatchObject({ removed: true });
    rmSync(join(docs, decomposed));
  });

  test("add_to_index takes the repo:path that remove_from_index takes, and a file whose name begins so as it is named (s24 agent A3)", async () => {
    // It was "docs:docs:skiff.md does not exist": the pair that undo each other took different forms.
    writeFileSync(join(docs, "skiff.md"), "# Skiff\n\nThe skiff drifted ashore.\n");
    const added = await call("add_to_index", { repository: "docs", file_path: "docs:skiff.md" });
    // The first line is the outcome; a warning may follow it (embeddings pending where ../shared's model is missing).
    expect([added.content[0]!.text.split("\n")[0], added.structuredContent.indexed]).toEqual(["docs:skiff.md: indexed", 1]);
    expect((await call("search_fragments", { query: "skiff", mode: "bm25" })).structuredContent.results[0].path).toBe("skiff.md");
    expect((await call("remove_from_index", { repository: "docs", document_path: "docs:skiff.md" })).isError).toBeFalsy();
    rmSync(join(docs, "skiff.md"));
    // A file named `docs:raft.md` is that file.
    writeFileSync(join(docs, "docs:raft.md"), "# Raft\n\nThe raft floated.\n");
    expect((await call("add_to_index", { repository: "docs", file_path: "docs:raft.md" })).content[0]!.text.split("\n")[0]).toBe(
      "docs:docs:raft.md: indexed",
    );
    expect((await call("remove_from_index", { repository: "docs", document_path: "docs:raft.md" })).structuredContent.path).toBe(
      "docs:raft.md",
    );
    rmSync(join(docs, "docs:raft.md"));
  });

  test("add_to_index and remove_from_index that change the index send notifications/resources/list_changed", async () => {
    let changes = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changes++;
    });
    writeFileSync(join(docs, "canoe.md"), "# Canoe\n\nA canoe on the river.\n");
    expect((await call("add_to_index", { repository: "docs", file_path: "canoe.md" })).structuredContent).toMatchObject({ indexed: 1 });
    expect(await until(() => changes === 1)).toBe(true);
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain("researcher://docs/canoe.md");
    // Nothing changed, nothing to tell.
    expect((await call("add_to_index", { repository: "docs", file_path: "canoe.md" })).content[0]!.text.split("\n")[0]).toBe(
      "docs:canoe.md: unchanged",
    );
    await Bun.sleep(200);
    expect(changes).toBe(1);
    expect((await call("remove_from_index", { repository: "docs", document_path: "canoe.md" })).isError).toBeFalsy();
    expect(await until(() => changes === 2)).toBe(true);
    rmSync(join(docs, "canoe.md"));
  });

  test("add_to_index of a scan sends notifications/progress, page by page, to a request with a progressToken (s24 agent A2)", async () => {
    // A scan is minutes of OCR; the SDK's client gave up after 60 s, as nothing reset its clock.
    writeFileSync(join(docs, "scan.pdf"), await scanOfPages(3));
    const progress: { progress: number; message?: string }[] = [];
    let during: Promise<ToolResult> | undefined;
    try {
      const added = (await client.callTool({ name: "add_to_index", arguments: { repository: "docs", file_path: "scan.pdf" } }, undefined, {
        onprogress: (p) => {
          progress.push(p);
          during ??= call("get_index_status", { repository: "docs" }); // asked while the run holds the index
        },
        timeout: 30_000,
        resetTimeoutOnProgress: true,
      })) as ToolResult;
      expect(added.structuredContent).toMatchObject({ indexed: 1 });
      expect(progress.map((p) => p.message)).toEqual(
        expect.arrayContaining(["index 0/1 scan.pdf: OCR page 1 of 3", "index 0/1 scan.pdf: OCR page 3 of 3"]),
      );
      expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1)); // it grows with each one
      // Its text says so of any run, as `researcher status` does, not only of a first one.
      expect((await during!).content[0]!.text).toContain(`\n  being indexed now (process ${transport.pid})`);
      // Without a token, none is sent (nothing to send it to).
      writeFileSync(join(docs, "scan.pdf"), await scanOfPages(1));
      const before = progress.length;
      expect((await call("add_to_index", { repository: "docs", file_path: "scan.pdf" })).structuredContent).toMatchObject({ indexed: 1 });
      expect(progress.length).toBe(before);
    } finally {
      rmSync(join(docs, "scan.pdf"));
      await call("add_to_index", { repository: "docs", file_path: "scan.pdf" });
    }
  }, 60_000);

  test("get_index_status of a first run in progress says so, and not to start one (s25 review R2)", async () => {
    const folder = tempDir();
    writeTree(folder, { "a.md": "# A\n\nalpha\n" });
    const repo = registerRepository(home, { name: "fresh", path: folder, embed: false });
    mkdirSync(repo.dir, { recursive: true });
    const release = acquireWriterLock(repo.dir, repo.name, "index"); // as a first index run holds it
    try {
      const text = (await call("get_index_status", { repository: "fresh" })).content[0]!.text;
      expect(text).toContain(`being indexed now, for the first time (process ${process.pid})`);
      expect(text).not.toContain("not indexed yet");
    } finally {
      release();
      expect(runCli(["repo", "remove", "fresh"], { home }).code).toBe(0);
    }
  });

  test("during a first index run, search's warning and list_documents' say to wait, naming the tool (s27b agent F7, F8)", async () => {
    const folder = tempDir();
    writeTree(folder, { "a.md": "# A\n\nwombat burrow\n", "b.md": "# B\n\nwombat\n" });
    const repo = registerRepository(home, { name: "first", path: folder, embed: false });
    Store.open(repo.dir, { create: true }).close(); // a first run before its first batch
    await indexFiles(home, repo, ["a.md"]); // as its first batch
    const release = acquireWriterLock(repo.dir, repo.name, "index"); // the run, as another process holds it
    const waiting = `wait for it to finish (process ${process.pid}): the get_index_status tool (repository "first") says when it has`;
    try {
      const found = await call("search_fragments", { query: "wombat", repository: "first", mode: "bm25" });
      expect(found.structuredContent.warnings).toEqual([expect.objectContaining({ repository: "first", hint: waiting })]);
      expect(found.content[0]!.text).toContain(`hint: ${waiting}`);
      // The listing was a page of a.md with no word that b.md was still to come.
      const listed = await call("list_documents", { repository: "first" });
      expect(listed.structuredContent).toMatchObject({ total: 1, documents: [{ path: "a.md" }] });
      expect(listed.structuredContent.warnings).toEqual([
        {
          repository: "first",
          code: "NOT_INDEXED",
          message: "its first index run is under way: only the 1 file indexed so far is listed",
          hint: waiting,
        },
      ]);
      expect(listed.content[0]!.text).toContain(`hint: ${waiting}`);
    } finally {
      release();
      expect(runCli(["repo", "remove", "first"], { home }).code).toBe(0);
    }
  });

  test("during a first index run, and after it was cut short, get_document, multi_get and repositories_for say so (s28 hostile F3)", async () => {
    const folder = tempDir();
    writeTree(folder, { "a.md": "# A\n\nwombat burrow\n", "later.md": "# Later\n\nwombat\n" });
    const repo = registerRepository(home, { name: "first", path: folder, embed: false });
    Store.open(repo.dir, { create: true }).close(); // a first run before its first batch
    await indexFiles(home, repo, ["a.md"]); // as its first batch
    const reads = async () => ({
      get: await call("get_document", { ref: "first:later.md" }),
      resource: await client.readResource({ uri: "researcher://first/later.md" }).catch((e: { code: number; message: string }) => e),
      multiGet: await call("multi_get", { pattern: "first:*" }),
      where: await call("repositories_for", { query: "wombat" }),
    });
    const release = acquireWriterLock(repo.dir, repo.name, "index"); // the run, as another process holds it
    let during: Awaited<ReturnType<typeof reads>>;
    try {
      during = await reads();
    } finally {
      release();
    }
    try {
      const waiting = `wait for it to finish (process ${process.pid}): the get_index_status tool (repository "first") says when it has`;
      const notReached = "first:later.md is not indexed: the first index run of first is under way and may not have reached it yet";
      expect(during.get.content[0]!.text).toBe(`error: ${notReached} (1 file indexed so far) (hint: ${waiting}) [DOCUMENT_NOT_FOUND]`);
      expect(during.resource).toMatchObject({ code: -32002, message: expect.stringContaining(`(hint: ${waiting})`) });
      const warning = (what: string) => ({
        code: "NOT_INDEXED",
        message: `its first index run is under way: only the 1 file indexed so far is ${what}`,
        hint: waiting,
      });
      expect(during.multiGet.structuredContent).toMatchObject({
        documents: [{ path: "a.md" }],
        warnings: [{ repository: "first", ...warning("read") }],
      });
      expect(during.multiGet.content[0]!.text).toContain(`hint: ${waiting}`);
      const ranked = during.where.structuredContent.repositories.find((r: { repository: string }) => r.repository === "first");
      expect(ranked).toMatchObject({ matched: 1, warning: warning("searched") });
      expect(during.where.content[0]!.text).toContain(`warning: first: ${warning("searched").message}\nhint: ${waiting}`);
      // Cut short: the run to start, which no tool does.
      const after = await reads();
      expect(after.get.content[0]!.text).toContain(
        "first is not indexed whole yet (1 file indexed so far, on its own or by a first run cut short)",
      );
      expect(after.get.content[0]!.text).toContain("(hint: run `researcher index first`)");
      expect(after.multiGet.structuredContent.warnings).toEqual([expect.objectContaining({ hint: "run `researcher index first`" })]);
    } finally {
      expect(runCli(["repo", "remove", "first"], { home }).code).toBe(0);
    }
  });

  test("list_documents: a prefix naming no repository is REPO_NOT_FOUND as in `ls`; an empty listing's suggestions are structured (s27b agent F1, F2)", async () => {
    const typo = await call("list_documents", { prefix: "nore:x/" });
    expect(typo.isError).toBe(true);
    expect(typo.content[0]!.text).toStartWith("error: no repository named 'nore' (hint: known repositories: ");
    expect(typo.content[0]!.text).toEndWith("[REPO_NOT_FOUND]");
    const inside = await call("list_documents", { prefix: "read" });
    expect(inside.structuredContent).toMatchObject({ total: 0, documents: [], containing: ["docs:bread.md"] });
    expect(inside.content[0]!.text).toContain("1 path contains it: docs:bread.md");
    const folder = await call("list_documents", { prefix: "docs/bre" });
    expect(folder.structuredContent).toMatchObject({ total: 0, meant: { repository: "docs", prefix: "bre" } });
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
    const misspelled = await call("search_fragments", { query: "x", n_result: 3 }).catch((e: Error) => ({
      isError: true,
      content: [{ type: "text", text: e.message }],
    }));
    expect(misspelled.isError).toBe(true);
    expect(misspelled.content[0]!.text).toContain("n_result");
    const wrongType = await call("search_fragments", { query: "x", n_results: "many" }).catch((e: Error) => ({
      isError: true,
      content: [{ type: "text", text: e.message }],
    }));
    expect(wrongType.isError).toBe(true);
  });

  test("null for an optional parameter is that parameter left out, every tool's schema says so, and required ones stay non-null (s26 agent F8)", async () => {
    const { tools: listed } = await client.listTools();
    // Each tool's required parameters, as small calls that answer the same each time.
    const given: Record<string, Record<string, unknown>> = {
      search_fragments: { query: "garage" },
      search_documents: { query: "garage" },
      get_document: { ref: "docs:cars.md" },
      multi_get: { pattern: "docs:cars.md" },
      list_documents: {},
      list_repositories: {},
      repositories_for: { query: "garage" },
      get_index_status: {},
      add_to_index: { repository: "docs", file_path: "cars.md" },
      remove_from_index: { repository: "docs", document_path: "cars.md" },
    };
    type Property = { type?: string | string[]; anyOf?: { type?: string }[] };
    const nullable = (p: Property) => [p.type].flat().includes("null") || (p.anyOf ?? []).some((a) => a.type === "null");
    for (const tool of listed) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, Property>;
      const required = new Set(tool.inputSchema.required ?? []);
      expect([tool.name, Object.keys(given[tool.name]!).sort()]).toEqual([tool.name, [...required].sort()]);
      const optional = Object.keys(properties).filter((name) => !required.has(name));
      // Clients read the schema: it admits null where null is taken, and nowhere else.
      expect([tool.name, optional.filter((name) => !nullable(properties[name]!))]).toEqual([tool.name, []]);
      expect([tool.name, [...required].filter((name) => nullable(properties[name]!))]).toEqual([tool.name, []]);
      if (optional.length === 0) continue;
      const nulls = Object.fromEntries(optional.map((name) => [name, null]));
      const withNulls = await call(tool.name, { ...given[tool.name], ...nulls });
      const without = await call(tool.name, given[tool.name]);
      expect([tool.name, withNulls.isError, withNulls.content[0]!.text]).toEqual([tool.name, undefined, without.content[0]!.text]);
      expect(withNulls.structuredContent).toEqual(without.structuredContent);
    }
    // A null for a required parameter, or for a name no tool takes, is still an error naming it.
    const nullQuery = await call("search_fragments", { query: null });
    expect([nullQuery.isError, nullQuery.content[0]!.text]).toEqual([true, expect.stringContaining("query")]);
    const unknown = await call("search_fragments", { query: "garage", n_result: null });
    expect([unknown.isError, unknown.content[0]!.text]).toEqual([true, expect.stringContaining("n_result")]);
  });

  test("errors of the SDK's own argument check carry no [CODE], and SKILL.md says so", async () => {
    const tooMany = await call("search_fragments", { query: "garage", n_results: 500 });
    expect(tooMany.isError).toBe(true);
    expect(tooMany.content[0]!.text).toStartWith("MCP error -32602: Input validation error: Invalid arguments for tool search_fragments");
    expect(tooMany.content[0]!.text).not.toMatch(/\[[A-Z_]+\]$/);
    const unknown = await call("nonexistent_tool");
    expect([unknown.isError, unknown.content[0]!.text]).toEqual([true, "MCP error -32602: Tool nonexistent_tool not found"]);
    // A name an object has built in is no tool either (it was "Tool toString disabled": s21 hostile #11).
    for (const name of ["toString", "constructor", "__proto__"]) {
      expect((await call(name)).content[0]!.text).toBe(`MCP error -32602: Tool ${name} not found`);
    }
    const skill = readFileSync(join(ROOT, "SKILL.md"), "utf8").replace(/\s+/g, " ");
    expect(skill).toContain("Two kinds are protocol errors the MCP SDK raises before the tool runs, with no `[CODE]`");
    expect(skill).toContain("`MCP error -32602: Input validation error: … at <parameter>`");
    expect(skill).toContain("`MCP error -32602: Tool <name> not found`");
    // Only what the schemas check: an empty repository is the tools' own USAGE (s29 agent P1).
    expect(skill).toContain("an empty `query`, `ref`, `pattern` or path, an empty list");
    expect(skill).toContain("An empty `repository` is every tool's own `[USAGE]` error, `a repository name is empty`");
  });

  test("selections that cannot mean what they say are errors: repositories: [], and multi_get's repository against its pattern's", async () => {
    for (const tool of ["search_fragments", "search_documents"]) {
      const none = await call(tool, { query: "garage", repositories: [] });
      expect(none.isError).toBe(true);
      expect(none.content[0]!.text).toContain("at repositories");
      // An empty name was no selection at all, and searched every repository (s17 review #4).
      for (const selection of [{ repository: "" }, { repositories: ["docs", " "] }]) {
        const empty = await call(tool, { query: "garage", ...selection });
        expect({ selection, error: empty.isError, text: empty.content[0]!.text }).toEqual({
          selection,
          error: true,
          text: expect.stringMatching(/^error: a repository name is empty .*\[USAGE\]$/s),
        });
        // The tool that lists them, not the CLI command (s26 agent F8).
        expect(empty.content[0]!.text).toContain("(hint: name a repository: the list_repositories tool shows them)");
      }
    }
    // A repository removed while add_to_index ran (indexer.ts) alike; the registry's own commands stay commands.
    expect(agentHint("`researcher repo list` shows the repositories")).toBe("the list_repositories tool shows the repositories");
    expect(agentHint("see `researcher repos-for 'borrow checker'`")).toBe('see the repositories_for tool with query "borrow checker"');
    // Every word of the query, as the command joins them; in double quotes as a hint writes one by hand (s27 review F6).
    expect(agentHint("run `researcher repos-for borrow checker`")).toBe('run the repositories_for tool with query "borrow checker"');
    expect(agentHint('run `researcher repos-for "borrow checker" lifetimes`')).toBe(
      'run the repositories_for tool with query "borrow checker lifetimes"',
    );
    expect(agentHint('run `researcher repos-for "say \\"hi\\""`')).toBe('run the repositories_for tool with query "say \\"hi\\""');
    expect(agentHint("`researcher repo add notes ~/notes`")).toBe("`researcher repo add notes ~/notes`");
    // Every tool that takes a repository alike: get_document and multi_get read on in every repository, as if it were
    // left out (s29 agent P1).
    const others = {
      list_documents: {},
      get_index_status: {},
      get_document: { ref: "docs:cars.md:1:1" },
      multi_get: { pattern: "docs:cars.md" },
      add_to_index: { file_path: "cars.md" },
      remove_from_index: { document_path: "no-such.md" },
    };
    for (const [tool, args] of Object.entries(others)) {
      const empty = await call(tool, { ...args, repository: "" });
      expect({ tool, error: empty.isError, text: empty.content[0]!.text }).toEqual({
        tool,
        error: true,
        text: expect.stringMatching(/^error: a repository name is empty .*\[USAGE\]$/s),
      });
    }
    const { tools: listed } = await client.listTools();
    const schema = listed.find((t) => t.name === "search_fragments")!.inputSchema as {
      properties: Record<string, { minItems?: number; description?: string }>;
    };
    expect(schema.properties.repositories).toMatchObject({
      anyOf: [{ minItems: 1 }, { type: "null" }], // or null, as leaving it out (s26 agent F8)
      description: expect.stringContaining("at least one"),
    });
    for (const pattern of ["docs:*.md", "big:small.md, docs:cars.md"]) {
      const other = await call("multi_get", { pattern, repository: "big" });
      expect(other.isError).toBe(true);
      expect(other.content[0]!.text).toContain("names repository 'docs' but repository is 'big': they do not go together");
      expect(other.content[0]!.text).toEndWith("[USAGE]");
    }
    // get_document says the same of a ref (s11 agent #6: "big:docs:cars.md is not an indexed document").
    const ref = await call("get_document", { ref: "docs:cars.md:3:2", repository: "big" });
    expect(ref.isError).toBe(true);
    expect(ref.content[0]!.text).toContain(
      "ref 'docs:cars.md:3:2' names repository 'docs' but repository is 'big': they do not go together",
    );
    expect((await call("get_document", { ref: "docs:cars.md:3:2", repository: "docs" })).structuredContent).toMatchObject({ from: 3 });
    // A search's filter alike: `repo:glob` is the glob in that repository (it matched nothing: s24 agent A9).
    const filtered = await call("search_fragments", { query: "garage", repository: "docs", filter: "docs:car*", mode: "bm25" });
    expect(filtered.structuredContent.results.map((r: { path: string }) => r.path)).toEqual(["cars.md"]);
    const otherFilter = await call("search_fragments", { query: "garage", repository: "big", filter: "docs:car*" });
    expect(otherFilter.content[0]!.text).toContain(
      "filter 'docs:car*' names repository 'docs' but repository is 'big': they do not go together",
    );
    // A glob in a repository that does not exist is REPO_NOT_FOUND, as a ref is and as get_document and
    // list_documents say it (it was an empty match: s30 hostile F6).
    for (const pattern of ["nosuch:*", "nosuch:a.md"]) {
      const missing = await call("multi_get", { pattern });
      expect({ pattern, error: missing.isError, text: missing.content[0]!.text }).toEqual({
        pattern,
        error: true,
        text: expect.stringMatching(/^error: no repository named 'nosuch' \(hint: known repositories: .*\[REPO_NOT_FOUND\]$/),
      });
    }
    const same = await call("multi_get", { pattern: "big:small.md", repository: "big" });
    expect(same.structuredContent.documents.map((d: { path: string }) => d.path)).toEqual(["small.md"]);
    // The hint's way to a path in the repository that begins with another repository's name: an empty match, no error.
    expect((await call("multi_get", { pattern: "big:docs:*.md", repository: "big" })).structuredContent).toEqual({
      documents: [],
      skipped: [],
      skipped_total: 0,
    });
  });

  test("offset has the range the CLI's --offset and REST's offset have (search/bounds.ts): 0 to 100000", async () => {
    expect((await call("search_fragments", { query: "garage", mode: "bm25", offset: 100_000 })).isError).toBeFalsy();
    for (const offset of [100_001, 2 ** 63]) {
      const past = await call("search_fragments", { query: "garage", offset }).catch((e: Error) => ({
        isError: true,
        content: [{ type: "text", text: e.message }],
      }));
      expect(past.isError).toBe(true);
      expect(past.content[0]!.text).toContain("100000");
    }
    // min_score is ≥ 0, as the CLI's --min-score and REST's min_score are.
    const negative = await call("search_fragments", { query: "garage", min_score: -1 }).catch((e: Error) => ({
      isError: true,
      content: [{ type: "text", text: e.message }],
    }));
    expect(negative.isError).toBe(true);
  });

  test("paths outside a repository are refused, whatever the trick", async () => {
    for (const ref of ["docs:../outside.md", `docs:${join(outside, "secret.md")}`, "docs:escape.md", "docs:notes/../../x.md"]) {
      const result = await call("get_document", { ref });
      expect(result.isError).toBe(true);
      // A path that escapes by its words is named so; a link inside the root that resolves out of it is not indexed,
      // and is said to be no more than the failure its index run recorded, as get_index_status lists it: what a read
      // resolves is never told, so nothing outside can be probed (s30 hostile F6).
      expect(result.content[0]!.text).toMatch(/outside repository 'docs'|is not an indexed document|the last index run failed it/);
      if (ref === "docs:escape.md") {
        const status = (await call("get_index_status", { repository: "docs" })).structuredContent;
        const { reason } = status.repositories[0].failures.find((f: { path: string }) => f.path === "escape.md");
        expect(result.content[0]!.text).toStartWith(
          `error: docs:escape.md is not indexed: the last index run failed it: ${reason} (hint: `,
        );
      }
    }
    // A path the repository's rules leave out is said to be, by the rule (s27 code F5).
    const leftOut = await call("get_document", { ref: "docs:data.csv" });
    expect(leftOut.content[0]!.text).toStartWith("error: docs:data.csv is not indexed: its type (.csv) is not one it indexes");
    const add = await call("add_to_index", { repository: "docs", file_path: "../../etc/passwd" });
    expect(add.isError).toBe(true);
    const remove = await call("remove_from_index", { repository: "docs", document_path: "/etc/passwd" });
    expect(remove.isError).toBe(true);
  });

  test("a blank query is an error, as in the CLI and REST, not an empty result", async () => {
    for (const tool of ["search_fragments", "search_documents"]) {
      const blank = await call(tool, { query: "   " });
      expect(blank.isError).toBe(true);
      expect(blank.content[0]!.text).toContain("search needs a query");
    }
  });

  test("a huge request is refused and the server keeps serving", async () => {
    const huge = await call("search_fragments", { query: "x".repeat(200_000) }).catch((e: Error) => ({
      isError: true,
      content: [{ type: "text", text: e.message }],
    }));
    expect(huge.isError).toBe(true);
    expect((await call("search_fragments", { query: "garage", mode: "bm25" })).structuredContent.total).toBe(1);
  });
});

/** Paths of the fields in `value` that `schema` (JSON Schema, as tools/list gives it) does not name. */
function undeclared(schema: unknown, value: unknown, path = ""): string[] {
  const node = schema as { properties?: Record<string, unknown>; items?: unknown; anyOf?: unknown[] } | undefined;
  if (!node || value === null || typeof value !== "object") return [];
  if (node.anyOf) return node.anyOf.map((option) => undeclared(option, value, path)).reduce((a, b) => (a.length <= b.length ? a : b));
  if (Array.isArray(value)) return value.flatMap((item, i) => undeclared(node.items, item, `${path}[${i}]`));
  if (!node.properties) return []; // a record (`additionalProperties` alone): its keys are data
  return Object.entries(value).flatMap(([key, child]) =>
    key in node.properties! ? undeclared(node.properties![key], child, `${path}.${key}`) : [`${path}.${key}`],
  );
}

test("a home with no repositories: list_repositories and get_index_status say how to add one, as the CLI does (s29 agent P2)", async () => {
  const empty = tempDir();
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: exe,
      args: ["serve"],
      env: { ...env(), HOME: empty, RESEARCHER_HOME: empty },
      cwd: empty,
      stderr: "pipe",
    }),
  );
  try {
    const call = tools(client);
    // The CLI's sentence (`status`, `repo list`), its hint as an agent's are written: get_index_status's text was blank.
    const sentence = agentHint("no repositories yet: add one with `researcher repo add <name> <path>`");
    expect(runCli(["status"], { home: empty }).stdout.trim()).toBe(sentence);
    for (const tool of ["list_repositories", "get_index_status"]) {
      const answer = await call(tool);
      expect({ tool, structured: answer.structuredContent, text: answer.content.map((c) => c.text) }).toEqual({
        tool,
        structured: { repositories: [] },
        text: [sentence],
      });
    }
  } finally {
    await client.close();
  }
});

describe("MCP contract details (issue 22)", () => {
  const home = tempDir();
  const long = tempDir();
  const longLine = Array.from({ length: (2 * 1024 * 1024) / 16 }, (_, i) => `w${String(i).padStart(14, "0")} `).join("");
  // A body of one 411 KB line (generated text, a minified file), and a PDF page of one 1,800-byte paragraph.
  const oneLongLine = Array.from({ length: 15000 }, () => "alpha beta épsilon 😀emoji").join(" ");
  const glacier = Array.from({ length: 40 }, (_, i) => `sentence ${i} of the glacier paragraph runs on.`).join(" ");
  // 120,000 short lines: 0.8 MB of text, 1.7 MB numbered.
  const shortLines = Array.from({ length: 120_000 }, (_, i) => `l${i + 1}`);
  let client: Client;
  let call: ReturnType<typeof tools>;

  beforeAll(async () => {
    const line = `${"lorem ipsum dolor sit amet ".repeat(185)}end`;
    writeTree(long, {
      "line.md": `# Line\n\n${longLine}\nafter\n`,
      "big.md": `# Big\n\n${Array.from({ length: 1060 }, (_, i) => `${i} ${line}`).join("\n")}\n`,
      "bad.pdf": "not a pdf at all",
      "wide.md": "éé😀\nnext\n",
      "lines.txt": `${shortLines.join("\n")}\n`,
      "spare.md": "# Spare\n\nA note the contract test indexes and removes.\n",
      "onelong.md": `# Long\n\n${oneLongLine}\n`,
    });
    writeFileSync(join(long, "paged.pdf"), await writePdf([paragraph("The first page.", 72), paragraph(glacier, 72)]));
    expect(runCli(["repo", "add", "long", long, "--no-embed"], { home }).code).toBe(0);
    runCli(["index", "long"], { home }); // bad.pdf is a recorded failure
    const transport = new StdioClientTransport({
      command: exe,
      args: ["serve"],
      env: { ...env(), HOME: home, RESEARCHER_HOME: home },
      cwd: home,
      stderr: "pipe",
    });
    client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    call = tools(client);
  }, HOOK_TIMEOUT);
  afterAll(() => client.close());

  test("a PDF's line range names its pages in get_document's and multi_get's text, as a search cites them (s28 agent 1)", async () => {
    const whole = (await call("get_document", { ref: "long:paged.pdf" })).structuredContent;
    const line = whole.text.split("\n").indexOf("<!-- page 2 -->") + 3; // page 2's text: no marker among its lines
    const total = whole.total_lines;
    const read = async (ref: string) => (await call("get_document", { ref })).content[0]!.text.split("\n")[0];
    expect(await read(`long:paged.pdf:${line}-${line}`)).toBe(`long:paged.pdf:p2 lines ${line}–${line} of ${total}`);
    expect(await read(`long:paged.pdf:2-${line}`)).toBe(`long:paged.pdf:p1-2 lines 2–${line} of ${total}`);
    expect(await read("long:paged.pdf")).toBe(`long:paged.pdf lines 1–${total} of ${total}`); // whole: no pages
    const listed = (await call("multi_get", { pattern: `long:paged.pdf:${line}-${line},long:wide.md:1-1` })).content[0]!.text;
    expect(listed.split("\n").filter((l) => l.startsWith("=== "))).toEqual([
      `=== long:paged.pdf:${line}-${line} (p2)`,
      "=== long:wide.md:1-1",
    ]);
  });

  test("every tool declares its structured output, and every parameter has a description", async () => {
    const { tools: listed } = await client.listTools();
    expect(listed).toHaveLength(10);
    const undescribed = listed.flatMap((tool) =>
      Object.entries((tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>)
        .filter(([, schema]) => !schema.description?.trim())
        .map(([name]) => `${tool.name}.${name}`),
    );
    expect(undescribed).toEqual([]);
    expect(listed.filter((tool) => tool.outputSchema?.type !== "object").map((tool) => tool.name)).toEqual([]);
    // The SDK checks every answer against its schema: each tool answers within it. And every field an answer has is
    // declared (s21 MCP #5: add_to_index sent four its schema did not name): a client's types come from the schema.
    const answers: [string, Record<string, unknown>][] = [
      ["list_repositories", {}],
      ["get_index_status", {}],
      ["list_documents", {}],
      ["repositories_for", { query: "lorem" }],
      ["multi_get", { pattern: "long:*.md", max_bytes: 100 }],
      ["search_fragments", { query: "lorem", n_results: 2 }],
      ["search_documents", { query: "lorem", n_results: 2 }],
      ["get_document", { ref: "long:wide.md" }],
      ["add_to_index", { repository: "long", file_path: "spare.md" }],
      ["remove_from_index", { repository: "long", document_path: "spare.md" }],
    ];
    for (const [name, input] of answers) {
      const answer = await call(name, input);
      expect([name, answer.isError]).toEqual([name, undefined]);
      const schema = listed.find((tool) => tool.name === name)!.outputSchema;
      expect([name, undeclared(schema, answer.structuredContent)]).toEqual([name, []]);
    }
  });

  test("README's tool list is the registered tools with their parameters; get_document and multi_get declare from_line/to_line", async () => {
    const { tools: listed } = await client.listTools();
    const section = readFileSync(join(ROOT, "README.md"), "utf8").split("## For AI agents (MCP)")[1]!.split("\n## ")[0]!;
    const documented = [...section.matchAll(/`([a-z_]+)\(([^)`]*)\)`/g)].map((m) => [m[1]!, m[2]!.split(/,\s*/).filter(Boolean)]);
    const registered = listed.map((tool) => {
      const required = new Set(tool.inputSchema.required ?? []);
      return [tool.name, Object.keys(tool.inputSchema.properties ?? {}).map((name) => (required.has(name) ? name : `${name}?`))];
    });
    expect(documented).toHaveLength(listed.length); // each tool once
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(registered));
    // The structured result's from_line/to_line (README) are declared, not only let through as extra properties.
    const declared = (name: string) =>
      listed.find((t) => t.name === name)!.outputSchema as unknown as { properties: object; required: string[] };
    expect(declared("get_document").properties).toHaveProperty("from_line");
    expect(declared("get_document").required).toEqual(expect.arrayContaining(["from_line", "to_line"]));
    const items = (declared("multi_get").properties as { documents: { items: { required: string[] } } }).documents.items;
    expect(items.required).toEqual(expect.arrayContaining(["from_line", "to_line"]));
    // The stable fields the README documents are declared too (s14 user #10): a client building its types from the
    // schema learns of them.
    expect(declared("get_document").required).toContain("changed_since_index");
    expect(items.required).toEqual(expect.arrayContaining(["changed_since_index", "truncated"]));
    const status = (declared("get_index_status").properties as { repositories: { items: { required: string[] } } }).repositories.items;
    expect(status.required).toEqual(
      expect.arrayContaining(["ocr_pages", "bytes", "vectors", "embeddings_pending", "indexing", "languages", "failures"]),
    );
    expect((status as unknown as { properties: object }).properties).toHaveProperty("ann");
    const matches = (declared("repositories_for").properties as { repositories: { items: { required: string[] } } }).repositories.items;
    expect(matches.required).toContain("bm25");
    expect(declared("add_to_index").required).toEqual(expect.arrayContaining(["skipped", "embedded", "model", "warnings"]));
    const documentHits = (
      declared("search_documents").properties as { results: { items: { properties: { fragments: { items: { required: string[] } } } } } }
    ).results.items.properties.fragments.items;
    expect(documentHits.required).toEqual(expect.arrayContaining(["heading", "score", "snippet", "location", "ref"]));
    const read = await call("get_document", { ref: "long:line.md:1:1" });
    expect(read.structuredContent).toMatchObject({ from: 1, to: 1, from_line: 1, to_line: 1 });
  });

  test("a resource cut to one answer says so and how to read the rest; a missing one is -32002", async () => {
    const read = await client.readResource({ uri: "researcher://long/big.md" });
    const text = String((read.contents[0] as { text: string }).text);
    expect(Buffer.byteLength(text)).toBeLessThan(129 * 1024);
    expect(text).toMatch(/\[truncated at line \d+ of 1062: .*get_document tool, ref "long:big.md", from_line \d+\]$/);
    const missing = await client.readResource({ uri: "researcher://long/nope.md" }).catch((e: { code?: number; message: string }) => e);
    expect(missing).toMatchObject({ code: -32002 });
    expect((missing as Error).message).toContain("not an indexed document");
    // An agent has tools, not a shell: the hint names the tool that lists documents (s21 MCP #4).
    expect((missing as Error).message).toContain('the list_documents tool with repository "long" lists them');
    expect((missing as Error).message).not.toContain("`researcher");
    expect((missing as Error).message).toStartWith("MCP error -32002: "); // the client's prefix, once
    expect((missing as Error).message).not.toContain("MCP error -32002: MCP error");
    const noRepository = await client.readResource({ uri: "researcher://nowhere/a.md" }).catch((e: { code?: number }) => e);
    expect(noRepository).toMatchObject({ code: -32002 });
  });

  test("get_document reads a 2 MiB line whole, one answer at a time, with from_char", async () => {
    let next: { from_line: number; from_char?: number } | undefined = { from_line: 3 };
    let read = "";
    let calls = 0;
    while (next?.from_line === 3) {
      const part = await call("get_document", { ref: "long:line.md", from_line: next.from_line, from_char: next.from_char, max_lines: 1 });
      expect(part.isError).toBeFalsy();
      expect(Buffer.byteLength(part.structuredContent.text)).toBeLessThanOrEqual(128 * 1024);
      read += part.structuredContent.text;
      next = part.structuredContent.continue_with;
      if (next?.from_char !== undefined) expect(part.content[0]!.text).toContain(`from_line 3 and from_char ${next.from_char}]`);
      expect(++calls).toBeLessThan(40);
    }
    expect(read === longLine).toBe(true);
    expect(next).toBeUndefined(); // the last part completes the one line asked for (max_lines 1): nothing was cut
    const pastEnd = await call("get_document", { ref: "long:line.md", from_line: 4, from_char: 6 });
    expect(pastEnd.isError).toBe(true);
    expect(pastEnd.content[0]!.text).toContain("from_char 6 is past the end of line 4 (5 characters)");
  }, 60_000);

  test("a max_bytes smaller than the next character still reads that character: continue_with always moves on (s12 review #8)", async () => {
    let next: { from_line: number; from_char?: number } | undefined = { from_line: 1 };
    const parts: string[] = [];
    while (next?.from_line === 1 && parts.length < 10) {
      const part = await call("get_document", { ref: "long:wide.md", ...next, max_lines: 1, max_bytes: 1 });
      parts.push(part.structuredContent.text);
      next = part.structuredContent.continue_with;
    }
    expect(parts).toEqual(["é", "é", "😀"]);
  });

  test("a read whose whole lines fill less than half its budget is filled from inside the next line; reading on rebuilds the text (s24 agent A6)", async () => {
    // The parts joined as get_document's description says: after a cut inside a line with nothing, else with `\n`.
    const readOn = async (ref: string, max_bytes?: number) => {
      const parts: { text: string; continue_with?: { from_line: number; from_char?: number } }[] = [];
      let next: { from_line: number; from_char?: number } | undefined;
      do {
        const part = await call("get_document", { ref, max_bytes, ...next });
        expect(part.isError).toBeFalsy();
        expect(Buffer.byteLength(part.structuredContent.text)).toBeLessThanOrEqual(max_bytes ?? 128 * 1024);
        parts.push(part.structuredContent);
        next = part.structuredContent.continue_with;
        expect(parts.length).toBeLessThan(20);
      } while (next);
      return {
        parts,
        text: parts
          .map((p) => p.text + (p.continue_with?.from_char === undefined ? "\n" : ""))
          .join("")
          .slice(0, -1),
      };
    };
    // A page's marker and blank line (16 bytes) were the whole answer: its paragraph did not fit 600 bytes.
    const page = await readOn("long:paged.pdf:p2", 600);
    expect(page.parts[0]!.text).toStartWith("<!-- page 2 -->\n\nsentence 0 of the glacier");
    expect(Buffer.byteLength(page.parts[0]!.text)).toBeGreaterThan(300);
    const first = page.parts[0]!.text.split("\n")[2]!;
    expect(page.parts[0]!.continue_with).toEqual({ from_line: 7, from_char: first.length });
    expect(page.text).toBe((await call("get_document", { ref: "long:paged.pdf:p2" })).structuredContent.text);
    expect(page.text).toContain(glacier);
    // A title before a body of one long line was all of an answer of 131,072 bytes: now the budget is filled.
    const body = await readOn("long:onelong.md");
    expect(Buffer.byteLength(body.parts[0]!.text)).toBeGreaterThan(64 * 1024);
    expect(body.parts[0]!.text).toStartWith("# Long\n\nalpha beta épsilon");
    expect(body.text === `# Long\n\n${oneLongLine}`).toBe(true); // byte for byte
    // A resource read, cut to one answer, gives the body too, and where to read on inside its line.
    const resource = await client.readResource({ uri: "researcher://long/onelong.md" });
    const text = String((resource.contents[0] as { text: string }).text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(64 * 1024);
    expect(text).toMatch(/\[truncated at character \d+ of line 3 \(3 lines\): .* ref "long:onelong.md", from_line 3 and from_char \d+\]$/);
  }, 60_000);

  test("line_numbers count in max_bytes and the 1 MiB cap, and reading on gives every line once (s23 review R4)", async () => {
    // Numbered after the cut to the budget, an answer was 4.5 times it: 4.5 MiB where 1 MiB is the cap.
    const read = async (args: Record<string, unknown>) => {
      const part = await call("get_document", { line_numbers: true, ...args });
      expect(part.isError).toBeFalsy();
      expect(Buffer.byteLength(part.structuredContent.text)).toBeLessThanOrEqual(Math.min(Number(args.max_bytes), 1024 * 1024));
      return part.structuredContent;
    };
    expect(await read({ ref: "long:lines.txt", max_bytes: 10_000_000 })).toMatchObject({ truncated: true });
    expect(await read({ ref: "long:lines.txt", max_bytes: 1000 })).toMatchObject({ truncated: true });
    // Read on as continue_with says, inside a line too (from_char): each line once, in order, under its own number.
    const readAll = async (ref: string, max_bytes: number) => {
      const lines: string[] = [];
      const numbers: number[] = [];
      let calls = 0;
      let next: { from_line: number; from_char?: number } | undefined;
      do {
        const part = await read({ ref, max_bytes, ...next });
        for (const numbered of part.text.split("\n")) {
          const tab = numbered.indexOf("\t");
          const n = Number(numbered.slice(0, tab));
          if (n === numbers.at(-1)) lines[lines.length - 1] += numbered.slice(tab + 1);
          else {
            numbers.push(n);
            lines.push(numbered.slice(tab + 1));
          }
        }
        next = part.continue_with;
        expect(++calls).toBeLessThan(200);
      } while (next);
      return { first: numbers[0], consecutive: numbers.every((n, i) => n === numbers[0]! + i), lines };
    };
    expect(await readAll("long:lines.txt", 100_000)).toEqual({ first: 1, consecutive: true, lines: shortLines });
    const big = readFileSync(join(long, "big.md"), "utf8").split("\n");
    expect(await readAll("long:big.md:1000-1062", 3000)).toEqual({ first: 1000, consecutive: true, lines: big.slice(999, 1062) });
    // multi_get: a document whose numbered text does not fit what is left is skipped, not sent over the budget.
    const numbered = Buffer.byteLength(shortLines.slice(0, 900).join("\n")) + 900 * "     1\t".length;
    const several = async (max_bytes: number) =>
      (await call("multi_get", { pattern: "long:lines.txt:1:900", max_bytes, line_numbers: true })).structuredContent;
    const whole = await several(numbered);
    expect(whole.documents.map((d: { text: string }) => Buffer.byteLength(d.text))).toEqual([numbered]);
    expect((await several(numbered - 1)).documents).toEqual([]);
    const perDocument = await call("multi_get", {
      pattern: "long:lines.txt:1:900",
      max_bytes_per_document: numbered - 1,
      line_numbers: true,
    });
    expect(perDocument.structuredContent.skipped[0].reason).toContain(`(${numbered} > ${numbered - 1} bytes)`);
  }, 60_000);

  test("add_to_index of a missing file is an error to the caller, and clears the file's old failure", async () => {
    const status = async () =>
      (await call("get_index_status", { repository: "long" })).structuredContent.repositories[0].failures.map(
        (f: { path: string }) => f.path,
      );
    expect(await status()).toEqual(["bad.pdf"]);
    rmSync(join(long, "bad.pdf"));
    const added = await call("add_to_index", { repository: "long", file_path: "bad.pdf" });
    expect(added.isError).toBe(true);
    expect(added.content[0]!.text).toContain("long:bad.pdf does not exist");
    expect(await status()).toEqual([]);
    const never = await call("add_to_index", { repository: "long", file_path: "never.md" });
    expect(never.isError).toBe(true);
    expect(await status()).toEqual([]);
    for (const folder of [".", "./"]) {
      const itself = await call("add_to_index", { repository: "long", file_path: folder });
      expect(itself.isError).toBe(true);
      expect(itself.content[0]!.text).toContain("is the folder of repository 'long', not a file in it");
    }
  });

  test("add_to_index of a folder says it takes one file, whatever the folder's name (s24 agent A8)", async () => {
    // One named like a file answered "unchanged" and indexed nothing; any other was refused for "its type (no extension)".
    writeTree(long, { "dir.md/q.md": "# Q\n\nkookaburrafig\n", "web/page.md": "# Page\n\nwombatplum\n" });
    for (const folder of ["dir.md", "web", "web/"]) {
      const added = await call("add_to_index", { repository: "long", file_path: folder });
      expect([folder, added.isError]).toEqual([folder, true]);
      expect(added.content[0]!.text).toStartWith(
        `error: '${folder.replace(/\/$/, "")}' is a folder in repository 'long': add_to_index takes one file`,
      );
      expect(added.content[0]!.text).toEndWith(
        "`researcher index long` reads every new or changed file of the repository) [INVALID_INPUT]",
      );
    }
    // A file in it is indexed as any other.
    expect((await call("add_to_index", { repository: "long", file_path: "dir.md/q.md" })).structuredContent).toMatchObject({ indexed: 1 });
    expect((await call("remove_from_index", { repository: "long", document_path: "dir.md/q.md" })).isError).toBeFalsy();
  });
});

describe("serve --watch", () => {
  test("a batch that indexes or removes a document sends notifications/resources/list_changed", async () => {
    const home = tempDir();
    const folder = tempDir();
    writeTree(folder, { "first.md": "# First\n\nalpha\n" });
    expect(runCli(["repo", "add", "watched", folder, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "watched"], { home }).code).toBe(0);
    const transport = new StdioClientTransport({
      command: exe,
      args: ["serve", "--watch"],
      env: { ...env(), HOME: home, RESEARCHER_HOME: home },
      cwd: home,
      stderr: "pipe",
    });
    let log = "";
    transport.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString();
    });
    const client = new Client({ name: "test", version: "1.0.0" });
    let changes = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changes++;
    });
    await client.connect(transport);
    try {
      expect(await until(() => log.includes("watch: watched: 0 indexed"), 10_000)).toBe(true); // the first scan: nothing new
      expect(changes).toBe(0);
      writeFileSync(join(folder, "second.md"), "# Second\n\nbeta\n");
      expect(await until(() => changes === 1, 10_000)).toBe(true);
      expect((await client.listResources()).resources.map((r) => r.uri)).toContain("researcher://watched/second.md");
      rmSync(join(folder, "second.md"));
      expect(await until(() => changes === 2, 10_000)).toBe(true);
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe("stdio protocol hygiene", () => {
  test("blank lines between messages are no messages, and a last message without its newline is answered", async () => {
    const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
    const proc = Bun.spawn([exe, "serve"], { env: env(), cwd: home, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    proc.stdin.write(`${ping(5)}\n\n\n   \n\r\n${ping(6)}\n${ping(7)}`);
    proc.stdin.end();
    expect(await Promise.race([proc.exited, Bun.sleep(10_000).then(() => "still running")])).toBe(0);
    const answers = (await new Response(proc.stdout).text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(answers).toEqual([5, 6, 7].map((id) => ({ jsonrpc: "2.0", id, result: {} })));
  });

  test("malformed JSON-RPC gets an error, the next request still works, and the server exits when stdin closes", async () => {
    const proc = Bun.spawn([exe, "serve"], { env: env(), cwd: home, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    };
    proc.stdin.write("this is not json\n");
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "no/such/method" })}\n`);
    proc.stdin.write(`${JSON.stringify(init)}\n`);
    // `params: null` is absent params (Go clients write nil fields so): it was "Invalid Request" with id null, and
    // the client waited for its id forever (s15 hostile #5); JSON-RPC that is invalid otherwise is answered by its id.
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 8, method: "ping", params: null })}\n`);
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: { _meta: null } })}\n`);
    // A batch says why, as over HTTP: it was a bare "Invalid Request" (s29 hostile).
    proc.stdin.write(`${JSON.stringify([{ jsonrpc: "2.0", id: 11, method: "ping" }])}\n`);
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 10, method: 42 })}\n`);
    proc.stdin.flush();
    const reader = proc.stdout.getReader();
    let text = "";
    const deadline = Date.now() + 10_000;
    while (!["1", "8", "9", "10"].every((id) => text.includes(`"id":${id},`) || text.includes(`"id":${id}}`)) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const messages = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(messages.some((m) => m.error?.code === -32700 || m.error?.code === -32600)).toBe(true);
    expect(messages.find((m) => m.id === 7)?.error?.code).toBe(-32601);
    expect(messages.find((m) => m.id === 1)?.result?.serverInfo?.name).toBe("researcher");
    expect(messages.find((m) => m.id === 8)?.result).toEqual({});
    expect(messages.find((m) => m.id === 9)?.result?.tools?.length).toBeGreaterThan(5);
    expect(messages.find((m) => m.id === 10)?.error).toEqual({ code: -32600, message: "Invalid Request" });
    expect(messages.find((m) => m.id === null && m.error?.message.includes("batches"))?.error).toEqual({
      code: -32600,
      message: NO_BATCHES,
    });
    proc.stdin.end();
    const code = await Promise.race([proc.exited, Bun.sleep(5000).then(() => "still running")]);
    expect(code).toBe(0);
  });
});

/** A raw stdio server: JSON-RPC lines in, answers by id out. */
/** A process's CPU time so far, user and system, in seconds (Linux: /proc, in clock ticks of 1/100 s). */
function cpuTime(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const [utime, stime] = stat
    .slice(stat.lastIndexOf(") ") + 2)
    .split(" ")
    .slice(11, 13)
    .map(Number);
  return (utime! + stime!) / 100;
}

/** `serve` over stdio, initialised, spoken to line by line; in `own`, a home of the caller's, or the suite's. */
function rawServer(own = home) {
  const proc = Bun.spawn([exe, "serve"], {
    env: { ...env(), HOME: own, RESEARCHER_HOME: own },
    cwd: own,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const send = (message: object) => proc.stdin.write(`${JSON.stringify(message)}\n`);
  send({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const answers = async () => {
    const text = await new Response(proc.stdout).text();
    return new Map(
      text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .map((m) => [m.id, m]),
    );
  };
  return { proc, send, answers };
}

describe("stdio: closing and bad params", () => {
  testShared("calls still running when stdin closes are answered before the server exits", async () => {
    const { proc, send, answers } = rawServer();
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "search_fragments", arguments: { query: "automobile", mode: "hybrid", repositories: ["docs"] } },
    });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_index_status", arguments: {} } });
    proc.stdin.end();
    const got = await answers();
    expect(await proc.exited).toBe(0);
    expect(got.get(1)?.result?.structuredContent?.results?.[0]?.path).toBe("cars.md");
    expect(got.get(2)?.result?.structuredContent?.repositories).toHaveLength(2);
  });

  testShared(
    "a client that stops reading gets every answer when it reads again, and the server logs no leak warning (s14 review #9)",
    async () => {
      const { proc, send, answers } = rawServer();
      const calls = 20; // 1 MiB each: far more than a pipe holds
      for (let id = 1; id <= calls; id++) {
        send({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "get_document", arguments: { ref: "big:big.md", max_bytes: 1048576 } },
        });
      }
      await Bun.sleep(3000); // the answers fill the pipe while nothing reads it
      proc.stdin.end();
      const got = await answers();
      expect(await proc.exited).toBe(0);
      expect([...got.keys()].filter((id) => id > 0)).toHaveLength(calls);
      expect(await new Response(proc.stderr).text()).not.toContain("MaxListenersExceededWarning");
    },
    60_000,
  );

  testShared(
    "a cancelled read stops its conversion: a server whose client cancels an OCR read and closes stdin exits at once",
    async () => {
      // A scan's pages are OCR'd when it is read: the indexed PDF was replaced by a 12-page scan since.
      const own = tempDir();
      const folder = tempDir();
      writeFileSync(join(folder, "doc.pdf"), await writePdf([paragraph("a placeholder with a text layer", 700)]));
      expect(runCli(["repo", "add", "scans", folder, "--no-embed"], { home: own }).code).toBe(0);
      expect(runCli(["index", "scans"], { home: own }).code).toBe(0);
      const scan = join(ROOT, "..", "shared", SCANNED, "scan-01.pdf");
      writeFileSync(join(folder, "doc.pdf"), await scannedPages(scan, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]));
      const { proc, send } = rawServer(own);
      send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_document", arguments: { ref: "scans:doc.pdf" } } });
      proc.stdin.flush();
      // OCR under way takes a core: the server has used 0.6 CPU seconds on it, however long a loaded machine makes
      // that take (a fixed two seconds measured 0.43 beside a corpus run and a CI run).
      const start = cpuTime(proc.pid);
      for (const deadline = Date.now() + 20_000; cpuTime(proc.pid) - start < 0.6 && Date.now() < deadline; ) await Bun.sleep(200);
      expect(cpuTime(proc.pid) - start).toBeGreaterThanOrEqual(0.6);
      // The server's CPU seconds over two seconds: a stopped OCR takes nothing.
      const cpuSeconds = async () => {
        const before = cpuTime(proc.pid);
        await Bun.sleep(2000);
        return cpuTime(proc.pid) - before;
      };
      send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "the user moved on" } });
      await Bun.sleep(500);
      // The OCR of twelve pages (15–30 s) went on for nobody, and held the server's exit 30 s more.
      expect(await cpuSeconds()).toBeLessThan(0.3);
      proc.stdin.end();
      const exited = await Promise.race([proc.exited, Bun.sleep(5000).then(() => "still running")]);
      proc.kill();
      expect(exited).toBe(0);
    },
    60_000,
  );

  test.each([
    ["its own id", (n: number) => n],
    ["one id for all (s21 hostile #4: counted once, all ran at once, 5 GB)", () => 1],
  ])(
    "a client that writes requests without reading its answers holds the server's memory bounded, each request with %s (s20 hostile #4)",
    async (_, idOf) => {
      // 6,000 searches queued by a client that read nothing took the server to 3.4 GB: every request ran at once.
      const own = tempDir();
      const folder = tempDir();
      writeFileSync(join(folder, "big.md"), `# Big\n\n${`${"lorem ipsum dolor ".repeat(50)}\n`.repeat(1200)}`); // ~1 MB
      expect(runCli(["repo", "add", "big", folder, "--no-embed"], { home: own }).code).toBe(0);
      expect(runCli(["index", "big"], { home: own }).code).toBe(0);
      const { proc, send } = rawServer(own);
      const requests = 400;
      for (let n = 1; n <= requests; n++)
        send({ jsonrpc: "2.0", id: idOf(n), method: "tools/call", params: { name: "get_document", arguments: { ref: "big:big.md" } } });
      await Bun.sleep(4000); // answers are not read meanwhile
      const rssMb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))![1]) / 1024;
      proc.stdin.end();
      const lines = (await new Response(proc.stdout).text()).trim().split("\n"); // read now: every request is answered
      expect(await proc.exited).toBe(0);
      expect(lines.map((line) => JSON.parse(line)).filter((m) => m.id !== 0)).toHaveLength(requests);
      expect(rssMb).toBeLessThan(250);
    },
    60_000,
  );

  testShared(
    "many requests and then the end of stdin: every one is answered and the server exits (s20 retest R0)",
    async () => {
      // A client writing from one thread and reading from another, as Python's does: with requests waiting their turn
      // and stdin paused and resumed many times, stdin never reached its end, and the server never exited.
      const client = `
import json, subprocess, sys, threading
NL = b"\\n"
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def write():
    p.stdin.write(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' + NL)
    for i in range(2000):
        call = {"name": "search_fragments", "arguments": {"query": "cell protein %d" % i, "mode": "bm25", "n_results": 10}}
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": call}) + "\\n").encode())
    p.stdin.close()
ids = set()
def read():
    for line in p.stdout:
        ids.add(json.loads(line).get("id"))
threading.Thread(target=write, daemon=True).start()
reader = threading.Thread(target=read, daemon=True)
reader.start()
try:
    code = p.wait(timeout=30)
    reader.join(10)
    print(len(ids), code)
except subprocess.TimeoutExpired:
    p.kill()
    print(len(ids), "still running")
`;
      const own = tempDir();
      const folder = tempDir();
      // SciFact's first 3,000 abstracts: answers the size of real ones (generated notes never showed it).
      const abstracts = readFileSync(join(SHARED, "data/scifact/corpus.jsonl"), "utf8").split("\n").filter(Boolean).slice(0, 3000);
      writeTree(
        folder,
        Object.fromEntries(
          abstracts
            .map((line) => JSON.parse(line) as { _id: string; title: string; text: string })
            .map((a) => [`${a._id}.md`, `# ${a.title}\n\n${a.text}\n`]),
        ),
      );
      expect(runCli(["repo", "add", "s", folder, "--no-embed"], { home: own }).code).toBe(0);
      expect(runCli(["index", "s"], { home: own }).code).toBe(0);
      const run = Bun.spawnSync(["python3", "-c", client, exe, "serve"], {
        env: { ...env(), HOME: own, RESEARCHER_HOME: own },
        cwd: own,
        timeout: 50_000,
      });
      expect({ out: run.stdout.toString().trim(), err: run.stderr.toString().slice(-300) }).toEqual({ out: "2001 0", err: "" });
    },
    60_000,
  );

  test("params that do not fit the method are -32602 (invalid params), not an internal error", async () => {
    const { proc, send, answers } = rawServer();
    send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search_fragments", arguments: "not an object" } });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { arguments: {} } });
    proc.stdin.end();
    const got = await answers();
    expect(got.get(1)?.error?.code).toBe(-32602);
    expect(got.get(2)?.error?.code).toBe(-32602);
    expect(got.get(2)?.error?.message).toContain("name");
  });
});

describe("MCP over HTTP", () => {
  async function startServer(extra: string[] = []): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
    return startServe([exe], extra, { env: env(), cwd: home });
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
      // Stateless HTTP has no stream for notifications/resources/list_changed, nor for the progress a progressToken
      // asks for (the answer is one JSON body): an index change still answers.
      writeFileSync(join(docs, "ferry.md"), "# Ferry\n\nThe ferry crossed.\n");
      const added = (await client.callTool({ name: "add_to_index", arguments: { repository: "docs", file_path: "ferry.md" } }, undefined, {
        onprogress: () => {},
      })) as ToolResult;
      expect(added.structuredContent).toMatchObject({ indexed: 1 });
      const removed = (await client.callTool({
        name: "remove_from_index",
        arguments: { repository: "docs", document_path: "ferry.md" },
      })) as ToolResult;
      expect(removed.structuredContent).toMatchObject({ removed: true });
      rmSync(join(docs, "ferry.md"));
      await client.close();
      const rebinding = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { Host: "evil.example:80", "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(rebinding.status).toBe(403);
      // The refusal says which names are served, and how a forwarded port is (s26 agent F11), in JSON-RPC at /mcp, its
      // hint in the message as a tool error's is (s29 agent P4).
      expect(((await rebinding.json()) as { error: { message: string } }).error.message).toContain("serve with --token");
      const malformed = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: "{not json",
      });
      expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
      const huge = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "x".repeat(2 * 1024 * 1024),
      });
      expect(huge.status).toBe(413);
      expect((await fetch(`${url}/health`)).status).toBe(200);
    } finally {
      proc.kill();
    }
  });

  test("`params: null` is absent params over HTTP too (it was the SDK's 400 Parse error); a batch is refused, as over stdio", async () => {
    const { url, proc } = await startServer();
    try {
      const post = async (body: unknown) => {
        const response = await fetch(`${url}/mcp`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: await response.json() };
      };
      expect(await post({ jsonrpc: "2.0", id: 8, method: "ping", params: null })).toEqual({
        status: 200,
        body: { jsonrpc: "2.0", id: 8, result: {} },
      });
      const batch = await post([
        { jsonrpc: "2.0", id: 9, method: "ping", params: { _meta: null } },
        { jsonrpc: "2.0", id: 10, method: "ping", params: null },
      ]);
      // A hundred calls in one answered 208 MB in one response (s21 hostile #5): one message a request.
      expect(batch).toMatchObject({ status: 400, body: { jsonrpc: "2.0", id: null, error: { code: -32600 } } });
      // JSON that does not parse is still the SDK's own answer.
      const malformed = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: "{not json",
      });
      expect({ status: malformed.status, code: ((await malformed.json()) as { error: { code: number } }).error.code }).toEqual({
        status: 400,
        code: -32700,
      });
    } finally {
      proc.kill();
    }
  });

  test("GET /mcp is 405 with Allow: POST (stateless: no stream to reconnect to)", async () => {
    const { url, proc } = await startServer();
    try {
      for (const method of ["GET", "DELETE"]) {
        const response = await fetch(`${url}/mcp`, { method, headers: { Accept: "text/event-stream" } });
        expect(response.status).toBe(405);
        expect(response.headers.get("allow")).toBe("POST");
      }
    } finally {
      proc.kill();
    }
  });

  test("bound to every address without a token: warns, and still refuses a foreign Host", async () => {
    const proc = Bun.spawn([exe, "serve", "--port", "0", "--host", "0.0.0.0"], { env: env(), cwd: home, stdout: "pipe", stderr: "pipe" });
    try {
      const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
      let text = "";
      while (!/listening on \S+:(\d+)\/mcp/.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`server exited: ${text}`);
        text += new TextDecoder().decode(value);
      }
      expect(text).toContain("without a token");
      const port = /listening on \S+:(\d+)\/mcp/.exec(text)![1];
      const request = (host: string) =>
        fetch(`http://127.0.0.1:${port}/mcp`, {
          method: "POST",
          headers: { Host: host, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
      // In JSON-RPC, as an MCP client reads an answer (it was REST's error shape: s29 agent P4).
      const foreign = await request("evil.example:80");
      expect({ status: foreign.status, body: await foreign.json() }).toEqual({
        status: 403,
        body: {
          jsonrpc: "2.0",
          id: null,
          error: { code: -32000, message: expect.stringMatching(/^requests for evil\.example:80 are not served here \(hint: /) },
        },
      });
      expect((await request(`evil.example:${port}`)).status).toBe(403);
      const client = new Client({ name: "http-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      expect((await client.listTools()).tools.length).toBe(10);
      await client.close();
    } finally {
      proc.kill();
    }
  });

  test("a Host or Origin is compared without case, as DNS names are, for REST and MCP alike (s20 review N1)", async () => {
    const { url, proc } = await startServer([]);
    try {
      const port = new URL(url).port;
      const headers = (host: string) => ({ Host: host, Origin: `http://${host}` });
      for (const host of [`LOCALHOST:${port}`, `LocalHost:${port}`]) {
        const rest = await fetch(`${url}/search?q=x`, { headers: headers(host) });
        const mcp = await fetch(`${url}/mcp`, {
          method: "POST",
          headers: { ...headers(host), "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
        expect({ host, rest: rest.status, mcp: mcp.status }).toEqual({ host, rest: 200, mcp: 200 });
      }
      expect((await fetch(`${url}/search?q=x`, { headers: headers(`EVIL.example:${port}`) })).status).toBe(403);
    } finally {
      proc.kill();
    }
  });

  test("the bearer scheme is case-insensitive", async () => {
    const { url, proc } = await startServer(["--token", "s3cret"]);
    try {
      for (const scheme of ["bearer", "BEARER", "Bearer"]) {
        const client = new Client({ name: "http-test", version: "1.0.0" });
        const headers = { Authorization: `${scheme} s3cret` };
        await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
        expect((await client.listTools()).tools.length).toBe(10);
        await client.close();
      }
      expect(await connect(url, "wrong").catch((e: Error) => e)).toBeInstanceOf(Error);
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
      expect(listed.length).toBe(10);
      await client.close();
    } finally {
      proc.kill();
    }
  });
  test("REST beside MCP: /search and /documents answer with the CLI's JSON, behind the same token and Host checks", async () => {
    const { url, proc } = await startServer(["--token", "s3cret"]);
    const auth = { Authorization: "Bearer s3cret" };
    try {
      const rest = (await (await fetch(`${url}/search?q=garage&mode=bm25&n=5`, { headers: auth })).json()) as {
        results: { location: string; path: string }[];
      };
      const cli = JSON.parse(runCli(["search", "garage", "--mode", "bm25", "-n", "5", "--json"], { home }).stdout);
      expect(rest).toEqual(cli);
      const location = rest.results[0]!.location;
      expect(rest.results[0]!.path).toBe("cars.md");
      expect(location).toMatch(/^cars\.md:\d+$/);

      const ref = encodeURIComponent(`docs:${location}`);
      const doc = (await (await fetch(`${url}/documents/${ref}?lines=1`, { headers: auth })).json()) as { from: number };
      expect(doc).toMatchObject({ repository: "docs", path: "cars.md", to: doc.from });

      const missing = await fetch(`${url}/documents/${encodeURIComponent("docs:.env")}`, { headers: auth });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("DOCUMENT_NOT_FOUND");
      const bad = await fetch(`${url}/search?q=x&where=${encodeURIComponent("tags=>rust")}`, { headers: auth });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: unknown }).error).toMatchObject({ code: "USAGE", message: expect.stringContaining("'=>'") });
      // An empty where (an unset variable) is a mistake, not "no filter" (s12 review #3).
      const empty = await fetch(`${url}/search?q=x&where=`, { headers: auth });
      expect(empty.status).toBe(400);
      expect(((await empty.json()) as { error: unknown }).error).toMatchObject({
        code: "USAGE",
        message: expect.stringContaining("empty filter"),
      });

      expect((await fetch(`${url}/search?q=garage`)).status).toBe(401);
      // Through a port forward, an SSH tunnel or a reverse proxy the Host names the front: with the token it is served
      // (a page rebinding a name to this machine cannot send the token), without it refused (s26 agent F11).
      const port = new URL(url).port;
      const forwarded = (...token: string[]) =>
        Bun.spawnSync([
          "curl",
          "-s",
          "-w",
          "\n%{http_code}",
          "-H",
          "Host: localhost:9031",
          ...token,
          `http://127.0.0.1:${port}/search?q=garage`,
        ])
          .stdout.toString()
          .split("\n")
          .at(-1);
      expect(forwarded("-H", "Authorization: Bearer s3cret")).toBe("200");
      expect(forwarded()).toBe("401");
      const origin = await fetch(`${url}/search?q=garage`, { headers: { ...auth, Origin: "http://evil.example" } });
      expect(origin.status).toBe(403);
    } finally {
      proc.kill();
    }
  });
});
