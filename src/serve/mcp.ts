/**
 * `researcher serve`: every repository searchable by MCP clients, over stdio (default) or Streamable HTTP (the
 * HTTP server itself is http.ts). The server, its stdio loop and one HTTP request's handling live here; its tools
 * and resource, thin shells over the library, are in mcp-tools.ts.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, type JSONRPCMessage, McpError } from "@modelcontextprotocol/sdk/types.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { EmbedderCache } from "../embed/embedder.ts";
import { toResearcherError } from "../errors.ts";
import { logger } from "../log.ts";
import { listRepositories } from "../repos.ts";
import { SearchContext } from "../search/search.ts";
import { limited, type Serial, serialized } from "../serial.ts";
import { VERSION } from "../version.ts";
import { describe, named, registerTools, resourcesChanged, rpcError } from "./mcp-tools.ts";
import { folderNote, ocrNote } from "./render.ts";
import { InvalidMessage, LineTooLong, NO_BATCHES, StdioLineTransport, withoutNullParams } from "./stdio-transport.ts";
import { STOP_WAIT_MS, watchRepositories, type WatchHandle } from "./watch.ts";

function instructions(home: string): string {
  const repos = listRepositories(home);
  const lines = repos.map((r) => named(`- ${r.name}: ${r.description ?? "(no description)"} — ${r.path}`));
  return [
    "researcher searches the user's own document repositories by words (BM25) and meaning (vectors).",
    "Use search_fragments for passages, search_documents for whole documents, then get_document with a result's",
    "`fragment.ref` (`repo:path:3-24`, the fragment's lines; the text answer says `lines 3-24`, and for a PDF its page,",
    "`:p5`, which also reads) to read just that passage, or its #docid for the whole document (a bare `location` reads",
    "from the snippet's line to the end of the document); list_documents shows what is indexed, list_repositories and",
    "get_index_status what each repository holds. `filter` globs paths inside a repository: choose one by `repository`.",
    "In vector mode, and hybrid where the vectors have a voice, a page is always full, as every passage ranks by meaning:",
    "an answer's `words_found` false says no passage holds the query's words (mode bm25 lists only passages that do);",
    "hybrid whose vectors carry no weight with the model lists word matches alone (a NO_WORD_MATCH warning when none:",
    "mode vector ranks by meaning); a query the model knows no word of ranks nothing by meaning: vector mode answers",
    "none (an UNKNOWN_QUERY warning), hybrid its word matches.",
    "`total` counts matches before `min_score`.",
    "In source code a fragment is a whole function or class when it fits the code fragment size (chunk.code_tokens);",
    "a longer one is split between its statements into consecutive fragments with the same heading (and the units",
    "nested in it as fragments of their own between them), so a hit may be one part of a unit: its `fragment.section`",
    "gives the lines of the whole unit and `fragment.section.ref` reads it in one get_document call. A part headed by",
    "a nested function (`function parse › function expect`) is that one's: a function made of nested functions, with",
    "no part headed by itself, is read with get_document from its first part's `start_line` (`from_line`, `max_lines`).",
    "Repositories:",
    ...(lines.length ? lines : ["- (none yet: the user can add one with `researcher repo add <name> <path>`)"]),
  ].join("\n");
}

function createServer(home: string, context: SearchContext, writes = serialized()): McpServer {
  const server = new McpServer({ name: "researcher", version: VERSION }, { instructions: instructions(home) });
  registerTools(server, home, context, writes);
  reportInvalidParams(server);
  return server;
}

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * The SDK checks a request's params against the method's schema before the handler runs, and reports a mismatch
 * (say, `arguments` that is not an object) as -32603, an internal error; JSON-RPC calls it -32602, invalid
 * params, and a client should know the fault is its own. The SDK's own errors go out without the prefix its McpError
 * writes into their message (withoutPrefix). The handler table is not public, so this reaches into
 * it; the e2e test notices if an SDK update moves it.
 */
function reportInvalidParams(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers;
  const tools = (server as unknown as { _registeredTools: Record<string, unknown> })._registeredTools;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      // A tool named like an object's built-in (`toString`) is no tool: the SDK found Object.prototype's and said
      // "Tool toString disabled" (s21 hostile #11).
      const name = method === "tools/call" ? (request as { params?: { name?: unknown } }).params?.name : undefined;
      if (typeof name === "string" && !Object.hasOwn(tools, name)) {
        return { content: [{ type: "text", text: `MCP error ${ErrorCode.InvalidParams}: Tool ${name} not found` }], isError: true }; // as the SDK answers one
      }
      try {
        return await handler(request, extra);
      } catch (error) {
        if (error instanceof McpError) throw withoutPrefix(error);
        // zod's error (`ZodError`, `$ZodError` in zod 4); the tool bodies are guarded, so it comes from the SDK's check
        const issue = (error as { name?: string; issues?: { path: PropertyKey[]; message: string }[] }).issues?.[0];
        if (!/ZodError$/.test((error as Error)?.name ?? "") || !issue) throw error;
        throw rpcError(ErrorCode.InvalidParams, `invalid params for ${method}: ${issue.path.join(".") || "params"}: ${issue.message}`);
      }
    });
  }
}

/**
 * The SDK's own error (a resource URI no template matches) as it should go out: McpError writes "MCP error -32602: "
 * into its message, which the SDK sends as it is and the client's McpError prefixes again, so clients showed it twice
 * (s28 agent 5). The code and data stay.
 */
function withoutPrefix(error: McpError): Error {
  const message = error.message.replace(`MCP error ${error.code}: `, "");
  return Object.assign(rpcError(error.code, message), error.data === undefined ? {} : { data: error.data });
}

/** How long calls still running when stdin closes may take to answer before the server exits anyway. */
const DRAIN_MS = 30_000;

/**
 * `serve --watch`: keep every repository's index current while serving. Watch batches go through the server's
 * writer queue (`writes`), so they and `add_to_index` take turns instead of one of them meeting the writer lock,
 * and use the server's models (one copy of each in memory). `changed` runs after a batch that indexed or removed
 * documents (serve over stdio tells its client that resources/list changed).
 */
export function startWatch(home: string, writes: Serial, embedders: EmbedderCache, changed?: () => void): WatchHandle {
  return watchRepositories(home, listRepositories(home), {
    followNew: true,
    exclusive: writes,
    embedders,
    onBatch: (b) => {
      if (b.scan || b.indexed || b.removed || b.failed)
        logger.info(
          `watch: ${b.repository}: ${b.indexed} indexed${ocrNote(b.ocr_pages)}, ${b.removed} removed, ${b.failed} failed (${b.seconds} s)`,
        );
      if (b.indexed || b.removed) changed?.();
    },
    onError: (error, repository) => logger.error(`watch: ${repository}: ${describe(toResearcherError(error))}`),
    onRemoved: (repository) => logger.info(`watch: ${repository}: removed from the repositories, watched no more`),
    onFolder: (repository, present, path) => (present ? logger.info : logger.warn)(`watch: ${repository}: ${folderNote(present, path)}`),
  });
}

/**
 * Serve over stdio until the client closes stdin, then answer the calls still running (at most DRAIN_MS). False when
 * the watch's batch under way runs on past STOP_WAIT_MS (a scan's OCR), for the process to end it.
 */
export async function serveStdio(home: string, options: { watch?: boolean } = {}): Promise<boolean> {
  const context = new SearchContext();
  const writes = serialized();
  const server = createServer(home, context, writes);
  const watching = options.watch ? startWatch(home, writes, context.embedders, () => resourcesChanged(server)) : undefined;
  const closed = new Promise<void>((resolve) => {
    process.stdin.on("end", resolve);
    process.stdin.on("close", resolve);
  });
  const transport = new StdioLineTransport();
  await server.connect(transport);
  answerMalformedLines(transport);
  const inFlight = trackRequests(transport);
  logger.info(`researcher MCP server on stdio (home ${home})`);
  await closed;
  await Promise.race([inFlight.idle(), new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
  const ended = (await watching?.close(STOP_WAIT_MS)) ?? true;
  await server.close();
  if (ended) await context.close();
  return ended;
}

/**
 * Requests received and not yet answered: a client may send a call and close stdin before reading the answer. One
 * the client cancelled is answered by no one (MCP), so it is no longer waited for: the server exited 30 s late.
 *
 * At most MAX_IN_FLIGHT run at once, and an answer counts until stdout took it: a client that writes requests and
 * reads no answers (6,000 searches held 3.4 GB of answers) has the rest wait as the requests they are, a few hundred
 * bytes each. stdin is never paused for it: in Bun a stdin paused and resumed many times never reached its end, and
 * the server never exited (s20 retest R0).
 */
function trackRequests(transport: StdioLineTransport): { idle(): Promise<void> } {
  // Running requests by id, each id counted as often as it runs: a client may reuse one (400 calls all `"id": 1`,
  // counted once, all ran at once and took the server to 5 GB: s21 hostile #4).
  const pending = new Map<unknown, number>();
  let running = 0;
  const queue: JSONRPCMessage[] = [];
  let settle: (() => void) | undefined;
  const receive = transport.onmessage;
  const finished = (id: unknown): boolean => {
    const count = pending.get(id);
    if (count === undefined) return false;
    if (count > 1) pending.set(id, count - 1);
    else pending.delete(id);
    running--;
    return true;
  };
  const admit = () => {
    while (queue.length > 0 && running < MAX_IN_FLIGHT) {
      const message = queue.shift()!;
      if ("id" in message) {
        pending.set(message.id, (pending.get(message.id) ?? 0) + 1);
        running++;
      }
      receive?.(message);
    }
    if (running === 0 && queue.length === 0) settle?.();
  };
  const done = (id: unknown) => {
    if (finished(id)) admit();
  };
  transport.onmessage = (message) => {
    if ("method" in message && message.method === "notifications/cancelled") {
      const cancelled = message.params?.requestId;
      const waiting = queue.findIndex((m) => "id" in m && m.id === cancelled);
      if (waiting >= 0)
        queue.splice(waiting, 1); // never started: nothing to answer
      else finished(cancelled);
      admit();
    }
    if ("method" in message && "id" in message) {
      queue.push(message);
      admit();
    } else receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    try {
      await send(message);
    } finally {
      if (!("method" in message) && "id" in message) done(message.id);
    }
  };
  return {
    idle: () => (running === 0 && queue.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => (settle = resolve))),
  };
}

/** Requests a stdio server runs at once (trackRequests); an agent sends one or a few at a time. */
const MAX_IN_FLIGHT = 8;

/**
 * The stdio transport drops a line it cannot take; JSON-RPC wants an answer, so the client learns why (-32700 for
 * bad JSON, -32600 for JSON that is not a JSON-RPC message or a line over the size limit), and the server keeps
 * serving.
 */
function answerMalformedLines(transport: StdioLineTransport): void {
  const previous = transport.onerror;
  transport.onerror = (error) => {
    previous?.(error);
    const parse = error instanceof SyntaxError;
    const message = parse
      ? "Parse error"
      : error instanceof LineTooLong
        ? `Invalid Request: ${error.message}`
        : error instanceof InvalidMessage
          ? error.message
          : "Invalid Request";
    // A recovered id answers the request the client awaits.
    const id = error instanceof LineTooLong || error instanceof InvalidMessage ? error.id : null;
    void transport.send({ jsonrpc: "2.0", id: id as string, error: { code: parse ? -32700 : -32600, message } });
  };
}

/**
 * The request with its JSON body's null params made absent, as over stdio, as the transport's arguments. Bun has
 * bounded the body (maxRequestBodySize); a body that is no JSON goes to the transport as it came, for its own answer.
 */
async function withNullParamsAbsent(request: Request): Promise<[Request, { parsedBody: unknown }?]> {
  if (request.method !== "POST") return [request];
  const text = await request.text();
  try {
    return [request, { parsedBody: withoutNullParams(JSON.parse(text)) }];
  } catch {
    return [new Request(request.url, { method: "POST", headers: request.headers, body: text })];
  }
}

/**
 * Answer one MCP request over Streamable HTTP (stateless: a transport per request). The HTTP server (http.ts) has
 * already checked the token and the Host; the SDK checks Host and Origin again against the same names.
 */
export async function handleMcpRequest(
  request: Request,
  shared: { home: string; context: SearchContext; writes: Serial; allowedHosts: string[]; allowedOrigins: string[] },
): Promise<Response> {
  const [body, parsed] = await withNullParamsAbsent(request);
  // One message a request, as over stdio: a batch of a hundred calls answered 208 MB in one response (s21 hostile #5;
  // MCP 2025-06-18 has no batches).
  if (Array.isArray(parsed?.parsedBody)) {
    const error = { code: -32600, message: NO_BATCHES };
    return Response.json({ jsonrpc: "2.0", id: null, error }, { status: 400 });
  }
  return httpCalls(() => answerMcp(body, parsed, shared));
}

/** MCP calls over HTTP run at most MAX_IN_FLIGHT at once, as over stdio: ten at once held 6.5 GB (s21 hostile #5). */
const httpCalls = limited(MAX_IN_FLIGHT);

async function answerMcp(
  request: Request,
  parsed: { parsedBody: unknown } | undefined,
  shared: { home: string; context: SearchContext; writes: Serial; allowedHosts: string[]; allowedOrigins: string[] },
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    enableDnsRebindingProtection: true,
    allowedHosts: shared.allowedHosts,
    allowedOrigins: shared.allowedOrigins,
  });
  const mcp = createServer(shared.home, shared.context, shared.writes);
  await mcp.connect(transport);
  try {
    return await transport.handleRequest(request, parsed);
  } finally {
    void mcp.close();
  }
}
