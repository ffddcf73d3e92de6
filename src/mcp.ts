/**
 * `researcher serve`: every repository searchable by MCP clients, over stdio (default) or Streamable HTTP.
 * A thin shell over the library: tools validate their input strictly (an unknown parameter is an error naming
 * it), call the same functions as the CLI and return the CLI's JSON shapes plus a short text rendering.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";
import { readDocument, readDocuments, safeRelativePath } from "./documents.ts";
import { describeError, isResearcherError, ResearcherError } from "./errors.ts";
import { FILTER_OPS, parseFilter, type FilterJson } from "./filters.ts";
import { indexFiles, removeDocument } from "./indexer.ts";
import { logger } from "./log.ts";
import { searchJson, searchText, styleFor } from "./render.ts";
import { getRepository, listRepositories } from "./repos.ts";
import { search, SearchContext, type SearchOptions } from "./search.ts";
import { repositoryStatus } from "./status.ts";
import { VERSION } from "./version.ts";

const plain = styleFor({ isTTY: false });

const searchInput = {
  query: z.string().min(1).max(4000).describe("Words or a natural-language question; \"phrase\", -exclude and prefix* work"),
  repository: z.string().optional().describe("Search only this repository"),
  repositories: z.array(z.string()).max(100).optional().describe("Search only these repositories"),
  mode: z.enum(["bm25", "vector", "hybrid"]).optional().describe("Default: hybrid where vectors exist, else bm25"),
  n_results: z.number().int().min(1).max(200).optional().describe("How many results (default: search.limit, 10)"),
  offset: z.number().int().min(0).max(10000).optional(),
  min_score: z.number().optional().describe("Drop results below this score of the mode"),
  filter: z.string().max(500).optional().describe("Glob on document paths, e.g. 'notes/**' or '*.md'"),
  where: z.union([z.string().max(2000), whereJson()]).optional().describe(
    "Only documents/fragments that match, applied before ranking. Text: space-separated terms that must all hold, " +
      "`key op value` with op = != < <= > >= ~ (contains, case-insensitive) or `key in (a|b)`, values bare or " +
      "\"quoted\", e.g. 'tags=rust format in (md|pdf) modified>=2025-01-01 title~\"borrow\"'. Or JSON: " +
      "{all:[{key,eq:value}…], any:[…], not:[…]} with ops eq ne lt le gt ge contains in. Keys: path (glob), format " +
      "(md, txt, pdf, docx, html, epub), repository, page (PDF page or range 3-5), modified (file date), size " +
      "(bytes), title, and any front-matter key (tags, author, date, …; a list matches if any element does).",
  ),
};

/** The JSON form of a filter, as a schema agents can read (parseFilter validates the values). */
function whereJson() {
  const scalar = z.union([z.string(), z.number(), z.boolean()]);
  const op = (name: string) => [name, (name === "in" ? z.array(scalar) : scalar).optional()] as const;
  const term = z.strictObject({ key: z.string(), ...Object.fromEntries(FILTER_OPS.map(op)) });
  const list = z.array(term).max(100).optional();
  return z.strictObject({ all: list, any: list, not: list });
}

/** A tool result: structured JSON for programs, a short text for models that read text. */
function result(structured: object, text: string) {
  return { content: [{ type: "text" as const, text }], structuredContent: structured as Record<string, unknown> };
}

function failure(error: unknown) {
  const message = isResearcherError(error) ? `${error.message}${error.hint ? ` (hint: ${error.hint})` : ""}` : describeError(error);
  return { content: [{ type: "text" as const, text: `error: ${message}` }], isError: true };
}

/** Run a tool body; a ResearcherError becomes a tool error the agent can read, never a crash. */
async function guarded<T>(body: () => Promise<T> | T): Promise<T | ReturnType<typeof failure>> {
  try {
    return await body();
  } catch (error) {
    logger.debug(error);
    return failure(error);
  }
}

/** One writer at a time inside this server (the lock file guards against other processes). */
function serialized() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}

export function instructions(home: string): string {
  const repos = listRepositories(home);
  const lines = repos.map((r) => `- ${r.name}: ${r.description ?? "(no description)"} — ${r.path}`);
  return [
    "researcher searches the user's own document repositories by words (BM25) and meaning (vectors).",
    "Use search_fragments for passages, search_documents for whole documents, then get_document with the",
    "`repo:path:line` location or #docid of a result to read it. Repositories:",
    ...(lines.length ? lines : ["- (none yet: the user can add one with `researcher repo add <name> <path>`)"]),
  ].join("\n");
}

export function createServer(home: string, context: SearchContext, writes = serialized()): McpServer {
  const server = new McpServer({ name: "researcher", version: VERSION }, { instructions: instructions(home) });

  const runSearch = async (input: z.infer<z.ZodObject<typeof searchInput>>, documents: boolean) => {
    const options: SearchOptions = {
      query: input.query,
      repositories: [...(input.repository ? [input.repository] : []), ...(input.repositories ?? [])],
      mode: input.mode,
      limit: input.n_results,
      offset: input.offset,
      minScore: input.min_score,
      filter: input.filter,
      where: input.where === undefined ? undefined : [parseFilter(input.where as string | FilterJson)],
      documents,
    };
    const response = await search(home, options, context);
    return result(searchJson(response), searchText(response, plain) || "no results");
  };

  server.registerTool(
    "search_fragments",
    { description: "Find passages (fragments) that answer a query, best first, with location, heading and snippet.", inputSchema: z.strictObject(searchInput) },
    (input) => guarded(() => runSearch(input, false)),
  );
  server.registerTool(
    "search_documents",
    { description: "Find documents that answer a query, best first, each with its top fragments.", inputSchema: z.strictObject(searchInput) },
    (input) => guarded(() => runSearch(input, true)),
  );
  server.registerTool(
    "get_document",
    {
      description: "Read a document (or part of it) by `repo:path`, `repo:path:line` or `#docid` from a search result.",
      inputSchema: z.strictObject({
        ref: z.string().min(1).max(2000),
        from_line: z.number().int().min(1).optional(),
        max_lines: z.number().int().min(1).max(100000).optional(),
      }),
    },
    (input) =>
      guarded(async () => {
        const doc = await readDocument(home, input.ref, { fromLine: input.from_line, maxLines: input.max_lines });
        return result(doc, `${doc.repository}:${doc.path} lines ${doc.from_line}–${doc.to_line} of ${doc.total_lines}\n\n${doc.text}`);
      }),
  );
  server.registerTool(
    "multi_get",
    {
      description: "Read several indexed documents whose paths match a glob, up to max_bytes of text in all.",
      inputSchema: z.strictObject({
        pattern: z.string().min(1).max(500),
        repository: z.string().optional(),
        max_bytes: z.number().int().min(1).max(10_000_000).optional(),
      }),
    },
    (input) =>
      guarded(async () => {
        const found = await readDocuments(home, input.pattern, { repository: input.repository, maxBytes: input.max_bytes });
        const text = found.documents.map((d) => `=== ${d.repository}:${d.path}\n${d.text}`).join("\n\n");
        return result(found, text || "no documents matched");
      }),
  );
  server.registerTool(
    "list_repositories",
    { description: "The repositories, what they hold (description) and how much.", inputSchema: z.strictObject({}) },
    () =>
      guarded(() => {
        const repositories = listRepositories(home).map(repositoryStatus).map(({ failures: _, ...s }) => s);
        return result({ repositories }, repositories.map((r) => `${r.name}: ${r.description ?? ""} (${r.documents} documents)`).join("\n") || "no repositories");
      }),
  );
  server.registerTool(
    "get_index_status",
    { description: "Documents, fragments, last index time, size and failed files per repository.", inputSchema: z.strictObject({ repository: z.string().optional() }) },
    (input) =>
      guarded(() => {
        const repos = input.repository ? [getRepository(home, input.repository)] : listRepositories(home);
        const repositories = repos.map(repositoryStatus);
        return result({ repositories }, repositories.map((r) => `${r.name}: ${r.documents} documents, ${r.fragments} fragments, indexed ${r.last_indexed ?? "never"}`).join("\n"));
      }),
  );
  server.registerTool(
    "add_to_index",
    {
      description: "Index (or re-index) one file of a repository now, e.g. after editing it.",
      inputSchema: z.strictObject({ repository: z.string(), file_path: z.string().min(1).max(4000) }),
    },
    (input) =>
      guarded(() =>
        writes(async () => {
          const repo = getRepository(home, input.repository);
          const path = safeRelativePath(repo, input.file_path);
          const summary = await indexFiles(home, repo, [path], { embedders: context.embedders });
          const failure = summary.failures[0];
          if (failure) throw new ResearcherError("FILE_UNREADABLE", `${repo.name}:${path} was not indexed: ${failure.reason}`);
          const what = summary.removed ? "removed (the file is gone)" : summary.indexed ? "indexed" : "unchanged";
          return result(summary, `${repo.name}:${path}: ${what}`);
        }),
      ),
  );
  server.registerTool(
    "remove_from_index",
    {
      description: "Drop one document from a repository's index (the file itself is not touched).",
      inputSchema: z.strictObject({ repository: z.string(), document_path: z.string().min(1).max(4000) }),
    },
    (input) =>
      guarded(() =>
        writes(async () => {
          const repo = getRepository(home, input.repository);
          const path = safeRelativePath(repo, input.document_path);
          await removeDocument(repo, path);
          return result({ repository: repo.name, path, removed: true }, `removed ${repo.name}:${path}`);
        }),
      ),
  );
  return server;
}

/** Serve over stdio until the client closes stdin. */
export async function serveStdio(home: string): Promise<void> {
  const context = new SearchContext();
  const server = createServer(home, context);
  const closed = new Promise<void>((resolve) => {
    process.stdin.on("end", resolve);
    process.stdin.on("close", resolve);
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  answerMalformedLines(transport);
  logger.info(`researcher MCP server on stdio (home ${home})`);
  await closed;
  await server.close();
  await context.close();
}

/**
 * The SDK's stdio transport drops a line it cannot parse; JSON-RPC wants an answer, so the client learns why
 * (-32700 for bad JSON, -32600 for JSON that is not a JSON-RPC message), and the server keeps serving.
 */
function answerMalformedLines(transport: StdioServerTransport): void {
  const previous = transport.onerror;
  transport.onerror = (error) => {
    previous?.(error);
    const parse = error instanceof SyntaxError;
    void transport.send({
      jsonrpc: "2.0",
      id: null as unknown as string,
      error: { code: parse ? -32700 : -32600, message: parse ? "Parse error" : "Invalid Request" },
    });
  };
}

export interface HttpOptions {
  port: number;
  host?: string;
  token?: string;
}

const MAX_BODY_BYTES = 1024 * 1024;

/** Serve MCP over Streamable HTTP at POST /mcp (stateless: one transport per request), GET /health. */
export function serveHttp(home: string, options: HttpOptions): { url: string; stop: () => Promise<void> } {
  const context = new SearchContext();
  const writes = serialized();
  const host = options.host ?? "127.0.0.1";
  const loopback = ["127.0.0.1", "localhost", "::1"].includes(host);
  const server: Bun.Server<undefined> = Bun.serve({
    hostname: host,
    port: options.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    async fetch(request): Promise<Response> {
      const url = new URL(request.url);
      if (url.pathname === "/health" && request.method === "GET") return Response.json({ status: "ok", version: VERSION });
      if (url.pathname !== "/mcp") return new Response("not found\n", { status: 404 });
      if (options.token && request.headers.get("authorization") !== `Bearer ${options.token}`) {
        return Response.json({ jsonrpc: "2.0", error: { code: -32001, message: "missing or wrong bearer token" }, id: null }, { status: 401 });
      }
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length > MAX_BODY_BYTES) return new Response("request too large\n", { status: 413 });
      const port: number = server.port!;
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        // DNS rebinding: a page on another origin must not reach a server bound to this machine.
        enableDnsRebindingProtection: loopback,
        allowedHosts: [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`],
        allowedOrigins: [`http://127.0.0.1:${port}`, `http://localhost:${port}`],
      });
      const mcp = createServer(home, context, writes);
      await mcp.connect(transport);
      try {
        return await transport.handleRequest(request);
      } finally {
        void mcp.close();
      }
    },
    error(error) {
      logger.error(error);
      return new Response("internal error\n", { status: 500 });
    },
  });
  logger.info(`researcher MCP server on http://${host}:${server.port}/mcp${options.token ? " (bearer token required)" : ""}`);
  return {
    url: `http://${host}:${server.port}`,
    async stop() {
      await server.stop(true);
      await context.close();
    },
  };
}
