/**
 * `researcher serve --port`: one HTTP server for MCP (POST /mcp, Streamable HTTP) and a small REST API beside it —
 * GET /search and GET /documents/<ref> answer with the CLI's JSON; GET /documents (a listing), /repositories and
 * /status with MCP's list_documents, list_repositories and get_index_status — plus GET /health. Every route but /health
 * passes the same checks: the Host (and Origin, when sent) must name this server (DNS rebinding: a web page whose
 * name now resolves to this machine must not reach it, whatever address it is bound to), and with a token the
 * request must carry it. Only indexed documents are ever served: reads and listings go through
 * search/read-document.ts. An error's hint names the route (or MCP's tool) that does what a CLI command does.
 */
import { timingSafeEqual } from "node:crypto";
import { hostname, networkInterfaces } from "node:os";
import { loadConfig } from "../config.ts";
import { leftOutOfIndex } from "../index/discover.ts";
import { listDocumentsPage, readDocument, readPart } from "../search/read-document.ts";
import { describeError, ERROR_CODES, ResearcherError, toResearcherError } from "../errors.ts";
import { parseFilter } from "../search/filters.ts";
import { logger } from "../log.ts";
import { handleMcpRequest, startWatch } from "./mcp.ts";
import { describe } from "./mcp-tools.ts";
import { STOP_WAIT_MS } from "./watch.ts";
import { type Serial, serialized } from "../serial.ts";
import {
  ANSWER_LIMIT,
  defaultAnswerLimit,
  FROM_ONE,
  FROM_ZERO,
  LISTED,
  MAX_ANSWER_BYTES,
  LISTED_OFFSET,
  minimumScore,
  OFFSET,
  type Range,
  wholeNumber,
} from "../search/bounds.ts";
import { documentJson, searchJson } from "./render.ts";
import { search, SearchContext, searchMode } from "../search/search.ts";
import { VERSION } from "../version.ts";
import { repositoryNames } from "../repos.ts";
import { repositorySummaries, servedStatuses } from "../index/status.ts";
import { restHint, withHints } from "./agent-hints.ts";
import { HTTP_ROUTES } from "./routes.ts";

export interface HttpOptions {
  port: number;
  host?: string;
  token?: string;
  /** Keep every repository's index current from file events while serving. */
  watch?: boolean;
}

const MAX_BODY_BYTES = 1024 * 1024;
const LOOPBACK = ["127.0.0.1", "localhost", "::1"];

/** The names a request may use in Host: the loopback names, the bound address, for 0.0.0.0/:: this machine's. */
function allowedNames(host: string): string[] {
  const names = new Set(LOOPBACK);
  if (host === "0.0.0.0" || host === "::") {
    names.add(hostname());
    for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) names.add(a.address);
  } else names.add(host);
  return [...names].map((name) => (name.includes(":") ? `[${name}]` : name).toLowerCase());
}

/** `Authorization: Bearer <token>`, the scheme in any case (RFC 7235), the token compared in constant time. */
function hasToken(request: Request, token: string): boolean {
  const match = /^bearer\s+(.+)$/i.exec(request.headers.get("authorization") ?? "");
  const given = Buffer.from(match?.[1]?.trim() ?? "");
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** Serve until stopped. Bound to a non-loopback address without a token, it warns: anyone reaching it can read. */
export function serveHttp(home: string, options: HttpOptions): { url: string; stop: (now?: boolean) => Promise<boolean> } {
  const context = new SearchContext();
  const writes = serialized();
  // An IPv6 address may come as in a URL ([::1]); it is bound without the brackets and written in URLs with them.
  const host = (options.host ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1");
  const origin = host.includes(":") ? `[${host}]` : host;
  const names = allowedNames(host);
  const server: Bun.Server<undefined> = listen({
    hostname: host,
    port: options.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    fetch: (request, self) =>
      route(request, {
        home,
        context,
        writes,
        names,
        port: server.port,
        token: options.token,
        waitForWork: () => {
          self.timeout(request, 0);
          return () => self.timeout(request, IDLE_SECONDS);
        },
      }),
    error: errorResponse,
  });
  // Started once it listens (a refused port watches nothing); a watch that cannot start stops the server with it.
  let watching: ReturnType<typeof startWatch> | undefined;
  try {
    watching = options.watch ? startWatch(home, writes, context.embedders) : undefined;
  } catch (error) {
    server.stop(true);
    void context.close();
    throw error;
  }
  if (!LOOPBACK.includes(host) && !options.token) {
    logger.warn(`serving ${host} without a token: anyone who can reach it can search your documents (set --token or RESEARCHER_MCP_TOKEN)`);
  }
  logger.info(`researcher on http://${origin}:${server.port} (${HTTP_ROUTES})${options.token ? ", bearer token required" : ""}`);
  const cut = () => void server.stop(true);
  let stopping: Promise<boolean> | undefined;
  return {
    url: `http://${origin}:${server.port}`,
    // Bun takes no new connection and closes idle ones at once; a request in flight is answered first (a service
    // restarted mid-read lost its answer), unless it is still running after the grace or `now` (again) cuts it.
    // The watch stops beside it, waiting STOP_WAIT_MS for its batch: false when that runs on (a scan's OCR), for the
    // process to end it (serve --watch ignored SIGTERM for minutes: s25 hostile F1).
    stop(now = false) {
      if (now) cut();
      stopping ??= (async () => {
        const watched = watching?.close(STOP_WAIT_MS) ?? Promise.resolve(true);
        const grace = setTimeout(cut, STOP_GRACE_MS);
        await server.stop();
        clearTimeout(grace);
        const ended = await watched;
        if (ended) await context.close();
        return ended;
      })();
      return stopping;
    },
  };
}

/** How long a stopping server lets requests in flight finish before it cuts them. */
const STOP_GRACE_MS = 20_000;

/** What every request of one server shares. */
interface Served {
  home: string;
  context: SearchContext;
  writes: Serial;
  /** The names this server answers to (Host and Origin checks), without the port. */
  names: string[];
  port: number | undefined;
  token?: string;
  /**
   * Let this request's connection wait as long as its work takes: Bun closes one idle for 10 s, and a read that
   * converts a scan (OCR) is silent for longer. Only for an authorised read, and only while it works: the function
   * it returns puts the idle limit back (for a kept-alive connection after the answer).
   */
  waitForWork: () => () => void;
}

/** Bun's own limit for an idle connection, in seconds: what a request gets back once its work is done. */
const IDLE_SECONDS = 10;

/** One request: health, then the Host, Origin and token checks, then MCP at /mcp or a REST route. */
async function route(request: Request, served: Served): Promise<Response> {
  const url = requestUrl(request);
  if (!url)
    return errorResponse(
      new ResearcherError("INVALID_INPUT", "malformed request: the Host header or the URL is not valid", {
        hint: `send Host: 127.0.0.1:${served.port}`,
      }),
    );
  // HEAD is GET without the body (RFC 9110), which the server leaves out.
  const reads = request.method === "GET" || request.method === "HEAD";
  if (url.pathname === "/health") return reads ? Response.json({ status: "ok", version: VERSION }) : methodNotAllowed("GET, HEAD");
  const allowedHosts = served.names.map((name) => `${name}:${served.port}`);
  const allowedOrigins = allowedHosts.map((name) => `http://${name}`);
  const refused = refusal(request, { allowedHosts, allowedOrigins, token: served.token });
  if (refused) return refused;
  const { home, context, writes } = served;
  if (url.pathname === "/mcp") {
    if (request.method !== "POST") return methodNotAllowed("POST");
    if (Number(request.headers.get("content-length") ?? 0) > MAX_BODY_BYTES)
      return errorResponse(new ResearcherError("TOO_LARGE", `a request body may hold at most ${MAX_BODY_BYTES} bytes`));
    // The SDK checks Host and Origin again, as written: give it them as this request spelled them (checked above).
    const asSent = (header: string) => [request.headers.get(header) ?? ""];
    return handleMcpRequest(request, { home, context, writes, allowedHosts: asSent("host"), allowedOrigins: asSent("origin") });
  }
  const known = Object.hasOwn(REST_ROUTES, url.pathname) || url.pathname.startsWith("/documents/");
  if (!known) {
    // A mistyped MCP address (`/mcp/`, `/MCP`) is posted to: say the route is wrong, not the method.
    return errorResponse(new ResearcherError("NOT_FOUND", `no route ${url.pathname}`, { hint: HTTP_ROUTES }));
  }
  if (!reads) return methodNotAllowed("GET, HEAD");
  const worked = served.waitForWork();
  try {
    const answer = Object.hasOwn(REST_ROUTES, url.pathname) ? REST_ROUTES[url.pathname]! : restDocument;
    // Hints inside the answer (skipped, warnings, an entry's error) name routes too, as an error's do.
    return Response.json(withHints(await answer(url, { home, context, signal: request.signal }), restHint));
  } catch (error) {
    return errorResponse(error);
  } finally {
    worked();
  }
}

/** What Bun.serve fails with for a port in use or an address this machine lacks (it tells them apart unreliably). */
const LISTEN_FAILURES = new Set(["EADDRINUSE", "EADDRNOTAVAIL", "EINVAL"]);
/** What it fails with for a --host that is no address and no name the resolver knows (`bad host`, `a..b`). */
const RESOLVE_FAILURES = new Set(["ENOTFOUND", "EAI_NONAME", "EAI_AGAIN", "EAI_FAIL"]);

/**
 * Bun.serve, its failure to listen told plainly. Its only inputs from the user are --host and --port (checked to be
 * 0–65535), so whatever it throws is a failure to listen there: a port in use or an address this machine lacks (one
 * message names both causes, as Bun's codes may not tell them apart), a name that does not resolve, or text that is
 * no address at all (`::zz` fails inside Bun with a TypeError).
 */
function listen(options: Bun.Serve.Options<undefined>): Bun.Server<undefined> {
  try {
    return Bun.serve(options);
  } catch (error) {
    const host = options.hostname ?? "127.0.0.1";
    const where = `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${options.port}`;
    const { code = "", syscall } = error as NodeJS.ErrnoException;
    const hostHint = "give --host an address of this machine (127.0.0.1, ::1, 0.0.0.0 for all) or a name that resolves to one";
    const [why, hint] = LISTEN_FAILURES.has(code)
      ? [
          "the port is taken, or the address is not one of this machine's",
          "choose another --port (--port 0 picks a free one), or a --host this machine has",
        ]
      : RESOLVE_FAILURES.has(code) || syscall === "getaddrinfo"
        ? [`'${host}' is not an address, and no name this machine can resolve`, hostHint]
        : [`'${host}' cannot be listened on (${describeError(error)})`, hostHint];
    throw new ResearcherError("INVALID_INPUT", `cannot listen on ${where}: ${why}`, { hint, cause: error });
  }
}

/** The request's URL, which Bun builds from the Host header: undefined when that makes no valid URL. */
function requestUrl(request: Request): URL | undefined {
  try {
    return new URL(request.url);
  } catch {
    return undefined;
  }
}

/**
 * A response refusing the request (foreign Host or Origin, missing token), or undefined when it may proceed. Host
 * names are compared without case, as DNS reads them (`LOCALHOST` is `localhost`). With a token the Host is not
 * checked: a page that rebinds a name to this machine cannot send the token, and through a port forward, an SSH
 * tunnel, a container's port map or a reverse proxy the Host names the front, so every request was refused (s26
 * agent F11). An Origin, which a web page's request carries, is still checked.
 */
function refusal(request: Request, checks: { allowedHosts: string[]; allowedOrigins: string[]; token?: string }): Response | undefined {
  const host = request.headers.get("host") ?? "";
  const origin = request.headers.get("origin");
  const allowed = (value: string, names: string[]) => names.includes(value.toLowerCase());
  if (origin !== null && !allowed(origin, checks.allowedOrigins)) {
    const hint = "a web page is served only from this server's own address";
    return refused(request, "FORBIDDEN", `requests from ${origin} are not served here`, hint);
  }
  if (!checks.token && !allowed(host, checks.allowedHosts)) {
    const hint = `ask for ${checks.allowedHosts.slice(0, 3).join(", ")}; through a port forward or a proxy, serve with --token (the Host is then not checked)`;
    return refused(request, "FORBIDDEN", `requests for ${host} are not served here`, hint);
  }
  if (checks.token && !hasToken(request, checks.token)) {
    const response = refused(request, "UNAUTHORIZED", "missing or wrong bearer token", "send Authorization: Bearer <token>");
    // The challenge HTTP asks of a 401 names the scheme, for clients that read it, REST's and MCP's (s27b agent note).
    response.headers.set("WWW-Authenticate", 'Bearer realm="researcher"');
    return response;
  }
  return undefined;
}

/**
 * What refusal answers, and the JSON-RPC error code of each at /mcp: the SDK's own for a foreign Host or Origin
 * (-32000), and one of the range JSON-RPC leaves to servers for a missing token.
 */
const MCP_REFUSALS = { FORBIDDEN: -32000, UNAUTHORIZED: -32001 } as const;
type Refusal = keyof typeof MCP_REFUSALS;

/**
 * A refusal in the error shape its route's clients read, with its code's status: at /mcp JSON-RPC, which an MCP
 * client parses (a 403 there was REST's: s29 agent P4), the message holding the hint as a tool error's does; elsewhere
 * REST's.
 */
function refused(request: Request, code: Refusal, message: string, hint: string): Response {
  const error = new ResearcherError(code, message, { hint });
  if (new URL(request.url).pathname !== "/mcp") return errorResponse(error);
  const body = { jsonrpc: "2.0", error: { code: MCP_REFUSALS[code], message: describe(error) }, id: null };
  return Response.json(body, { status: ERROR_CODES[code].http });
}

/**
 * A switch parameter: `documents`, `documents=1|true|yes` on, absent or `0|false|no` off. Anything else is a usage
 * error: a typo (`documents=ture`) must not silently search without it.
 */
function switchParam(params: URLSearchParams, name: string): boolean {
  const value = params.get(name);
  if (value === null) return false;
  const on = ["", "1", "true", "yes"].includes(value.toLowerCase());
  if (!on && !["0", "false", "no"].includes(value.toLowerCase()))
    throw new ResearcherError("USAGE", `${name} must be true or false (got '${value}')`, { hint: `${name}=true, or leave it out` });
  return on;
}

/** What a REST route answers from: the server's home and search context, and the request's abort signal. */
interface RestRequest {
  home: string;
  context: SearchContext;
  /** The client went away: stops a conversion only this read waits for. */
  signal: AbortSignal;
}

type RestRoute = (url: URL, request: RestRequest) => Promise<object> | object;

/** The REST routes by path, but for GET /documents/<ref> (restDocument), whose path holds the ref. */
const REST_ROUTES: Record<string, RestRoute> = {
  "/search": restSearch,
  "/documents": restListing,
  "/repositories": (url, { home }) => {
    restParams(url, NO_PARAMS);
    return { repositories: repositorySummaries(home) };
  },
  "/status": (url, { home }) => ({ repositories: servedStatuses(home, restParams(url, STATUS_PARAMS).get("repo") ?? undefined) }),
};

/** GET /search?q=&repo=&mode=&n=&offset=&where=&filter=&documents=&min_score=&full= → the CLI's `search --json`. */
async function restSearch(url: URL, { home, context }: RestRequest): Promise<object> {
  const params = restParams(url, SEARCH_PARAMS);
  const flag = (name: string) => switchParam(params, name);
  const query = params.get("q") ?? "";
  if (!query.trim()) throw new ResearcherError("USAGE", "search needs a query", { hint: "GET /search?q=your+question" });
  const limit = wholeParam(
    params,
    "n",
    ANSWER_LIMIT,
    `an answer holds at most ${ANSWER_LIMIT.max}, as MCP's: page with offset=, or use the CLI's --all`,
  );
  const mode = searchMode(params.get("mode") ?? undefined, "mode");
  const response = await search(
    home,
    {
      query,
      repositories: repositoryNames(params.getAll("repo"), "repo"), // as the CLI's --repo: `repo=` is refused
      mode,
      limit: limit ?? defaultAnswerLimit(loadConfig(home).search.limit),
      offset: wholeParam(params, "offset", OFFSET),
      minScore: minimumScore(params.get("min_score") ?? undefined, "min_score"),
      filter: params.get("filter") ?? undefined,
      where: params.getAll("where").map(restWhere),
      documents: flag("documents"),
      full: flag("full"),
    },
    context,
  );
  return searchJson(response);
}

/**
 * A `where` of /search: the text form only, as the CLI's `--where`. The JSON form MCP's tools also take was refused
 * with "expected an operator after '{'", which did not say that (s27b agent note).
 */
function restWhere(text: string): ReturnType<typeof parseFilter> {
  try {
    return parseFilter(text, "where");
  } catch (error) {
    if (!text.trimStart().startsWith("{") || !(error instanceof ResearcherError)) throw error;
    const hint = "REST's where takes the text form, as the CLI's --where: where=author%3DMarguerite (MCP's tools take JSON too)";
    throw new ResearcherError(error.code, error.message, { hint, cause: error });
  }
}

/**
 * GET /documents?repo=&prefix=&n=&offset= → MCP list_documents' answer, `{ total, offset, documents, skipped, … }`, the
 * documents as `ls --json` lists them: only what the index holds (the prefix filters its paths; no folder is read).
 */
function restListing(url: URL, { home }: RestRequest): object {
  const params = restParams(url, LISTING_PARAMS);
  const repo = params.get("repo");
  // A list, as /search takes: a listing is of one repository (a name holds no comma).
  if (repo?.includes(",")) {
    const [first] = repo.split(",");
    throw new ResearcherError("USAGE", `a listing is of one repository (got '${repo}')`, {
      hint: `GET /documents?repo=${encodeURIComponent(first!)}, one request a repository, or /documents alone for all of them`,
    });
  }
  return listDocumentsPage(home, {
    repository: repo ?? undefined,
    prefix: params.get("prefix") ?? undefined,
    offset: wholeParam(params, "offset", LISTED_OFFSET),
    limit: wholeParam(params, "n", LISTED, `an answer lists at most ${LISTED.max}: page with offset=`),
  });
}

/** GET /documents/<ref>?from=&lines= → the CLI's `get --json`; the ref is URL-encoded (`notes%3Aa.md%3A12`). */
async function restDocument(url: URL, { home, context, signal }: RestRequest): Promise<object> {
  const encoded = url.pathname.slice("/documents/".length);
  // `/documents/` names nothing to read: a listing written with a slash, or a docid whose # the client kept as the
  // URL's fragment (`/documents/#c92872`); a read's parameters (from, lines) were no answer to either (s27b agent F6).
  if (!encoded)
    throw new ResearcherError("USAGE", "/documents/ names no document to read", {
      hint: `for a listing, \`GET /documents${url.search}\` (no slash); a ref's # is sent as %23: \`GET /documents/%23<docid>\``,
    });
  const ref = percentDecoded(encoded);
  const params = restParams(url, DOCUMENT_PARAMS, "/documents/<ref>");
  const [fromLine, maxLines] = [wholeParam(params, "from", FROM_ONE), wholeParam(params, "lines", FROM_ONE)];
  const fromChar = wholeParam(params, "from_char", FROM_ZERO) ?? 0;
  const maxBytes = Math.min(wholeParam(params, "max_bytes", FROM_ONE) ?? MAX_ANSWER_BYTES, MAX_ANSWER_BYTES);
  const options = { fromLine, maxLines, conversions: context.conversions, signal, leftOut: leftOutOfIndex };
  const doc = readPart(await readDocument(home, ref, options), fromChar, maxBytes);
  if (!doc.truncated) return documentJson(doc);
  // Where to read on, in this route's own parameter names: a client passes them back with the same ref.
  const { from_line: from, from_char } = doc.continue_with!;
  return { ...documentJson(doc), truncated: true, continue_with: { from, ...(from_char === undefined ? {} : { from_char }) } };
}

/** `text` percent-decoded; `what` (the ref, a parameter) names what to encode in the error's hint. */
function percentDecoded(text: string, what = "the ref"): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ResearcherError("INVALID_INPUT", `malformed percent-encoding in '${text}'`, {
      hint: `encode ${what} as encodeURIComponent does: # is %23, : is %3A, % is %25, é is %C3%A9`,
    });
  }
}

/**
 * The query parameters a route knows, and those that add up when repeated (as the CLI's repeatable flags); any other
 * taken twice is ambiguous.
 */
interface RouteParams {
  known: string[];
  repeatable?: string[];
}

const SEARCH_PARAMS: RouteParams = {
  known: ["q", "repo", "mode", "n", "offset", "min_score", "where", "filter", "documents", "full"],
  repeatable: ["repo", "where"],
};
const DOCUMENT_PARAMS: RouteParams = { known: ["from", "lines", "from_char", "max_bytes"] };
/** One repository, as `ls` and list_documents take it. */
const LISTING_PARAMS: RouteParams = { known: ["repo", "prefix", "n", "offset"] };
const STATUS_PARAMS: RouteParams = { known: ["repo"] };
const NO_PARAMS: RouteParams = { known: [] };

/**
 * A route's query parameters, checked as MCP checks its arguments: a name the route does not know is a 400 (a typo
 * must not silently search without it), and so is malformed percent-encoding, which URLSearchParams would turn into
 * U+FFFD and search for. `route` names the route in the error.
 */
function restParams(url: URL, { known, repeatable = [] }: RouteParams, route = url.pathname): URLSearchParams {
  const seen = new Set<string>();
  for (const part of url.search.slice(1).split("&")) {
    if (!part) continue;
    const cut = part.indexOf("=");
    const [name, value] = cut < 0 ? [part, ""] : [part.slice(0, cut), part.slice(cut + 1)];
    const decodedName = percentDecoded(name.replaceAll("+", " "), "a parameter's name");
    percentDecoded(value.replaceAll("+", " "), `the value of '${decodedName}'`);
    if (!known.includes(decodedName))
      throw new ResearcherError("USAGE", `unknown parameter '${decodedName}' for ${route}`, {
        hint: known.length ? `known parameters: ${known.join(", ")}` : `${route} takes no parameters`,
      });
    if (seen.has(decodedName) && !repeatable.includes(decodedName))
      throw new ResearcherError("USAGE", `parameter '${decodedName}' is given more than once`, {
        hint: repeatable.length ? `give it once; only ${repeatable.join(" and ")} may repeat` : "give it once",
      });
    seen.add(decodedName);
  }
  return url.searchParams;
}

/**
 * A parameter the library counts with (n, offset, from, lines): a whole number in its range, by the CLI's and MCP's
 * rule.
 */
function wholeParam(params: URLSearchParams, name: string, range: Range, hint?: string): number | undefined {
  return params.has(name) ? wholeNumber(params.get(name), name, range, hint) : undefined;
}

function methodNotAllowed(allowed: string): Response {
  const response = errorResponse(new ResearcherError("METHOD_NOT_ALLOWED", `this route answers ${allowed} only`));
  response.headers.set("Allow", allowed);
  return response;
}

/**
 * Any error as `{ error: { code, message, hint? } }` with its code's status (errors.ts); a bug is logged, not
 * described. The hint names the route (or MCP's tool) for a CLI command one does the same as: a client of this
 * server, perhaps on another machine, cannot run `researcher ls`.
 */
function errorResponse(thrown: unknown): Response {
  const error = toResearcherError(thrown);
  const status = ERROR_CODES[error.code].http;
  if (error.code === "INTERNAL") {
    logger.error(thrown);
    return Response.json({ error: { code: error.code, message: "internal error" } }, { status });
  }
  const body = { code: error.code, message: error.message, ...(error.hint ? { hint: restHint(error.hint) } : {}) };
  return Response.json({ error: body }, { status });
}
