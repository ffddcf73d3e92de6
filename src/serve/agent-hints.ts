/**
 * Hints as an MCP agent or a REST client can act on them. The library's hints name CLI commands (`researcher ls
 * notes` lists them), which a person at a terminal runs; an agent has tools instead, and a REST client, perhaps on
 * another machine, routes. Each command a tool (a route) does the same as becomes that tool (route) with its
 * arguments; the others (`researcher index`, `repo add`, `verify`) stay commands, for the client to pass on to the
 * server's user.
 */

/**
 * A command's shell words, unquoted as shellWord (terminal.ts) quotes them, or as a hint writes a query by hand
 * (`researcher repos-for "borrow checker"`: in double quotes, a backslash escapes `"`, `\\`, `$` and a backtick);
 * `--json` says nothing to an agent.
 */
function words(args: string): string[] {
  const found = [...args.matchAll(/'((?:[^']|'\\'')*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2] !== undefined ? m[2].replace(/\\(["\\$`])/g, "$1") : m[3]!,
  );
  return found.filter((word) => word !== "--json" && word !== "--");
}

/** `repo:path` as a repository and the path in it, or a bare repository name. */
function splitRef(ref: string): { repository: string; path?: string } {
  const colon = ref.indexOf(":");
  return colon === -1 ? { repository: ref } : { repository: ref.slice(0, colon), path: ref.slice(colon + 1) };
}

const quoted = (value: string) => JSON.stringify(value);

/** What does what a CLI command does, written with the command's arguments, or undefined when nothing does. */
type Equivalent = (args: string[]) => string | undefined;

/** A `researcher search` command's words as the search's query and `--mode` (the one flag a hint passes). */
function searchArgs(args: string[]): { query: string; mode?: string } {
  const at = args.indexOf("--mode");
  const mode = at === -1 ? undefined : args[at + 1];
  const query = at === -1 ? args : [...args.slice(0, at), ...args.slice(at + 2)];
  return { query: query.join(" "), ...(mode === undefined ? {} : { mode }) };
}

/** The tool that does what a CLI command does, with its arguments. */
const TOOLS: Record<string, Equivalent> = {
  ls: ([ref]) => {
    if (ref === undefined) return "the list_documents tool";
    const { repository, path } = splitRef(ref);
    return `the list_documents tool with repository ${quoted(repository)}${path ? ` and prefix ${quoted(path)}` : ""}`;
  },
  status: ([repository]) => `the get_index_status tool${repository ? ` (repository ${quoted(repository)})` : ""}`,
  "multi-get": ([pattern]) => `the multi_get tool${pattern ? ` with pattern ${quoted(pattern)}` : ""}`,
  get: ([ref]) => `the get_document tool${ref ? ` with ref ${quoted(ref)}` : ""}`,
  remove: ([repository, path]) =>
    `the remove_from_index tool${repository && path ? ` with repository ${quoted(repository)} and document_path ${quoted(path)}` : ""}`,
  // A search in another mode names the `mode` parameter: "--mode vector" is no argument a tool takes (s28b retest R3).
  search: (args) => {
    const { query, mode } = searchArgs(args);
    const asked = [query && `query ${quoted(query)}`, mode && `mode ${quoted(mode)}`].filter(Boolean);
    return `the search_fragments tool${asked.length ? ` with ${asked.join(" and ")}` : ""}`;
  },
  // `repo list` alone: the other `repo` commands (add, remove, rename) change the registry, which no tool does.
  repo: ([command]) => (command === "list" ? "the list_repositories tool" : undefined),
  // The query is every word, as the command joins them (`repos-for borrow checker`).
  "repos-for": (query) => `the repositories_for tool${query.length ? ` with query ${quoted(query.join(" "))}` : ""}`,
};

/** A value in a route's query string: percent-encoded, but for the `/` and `:` of paths and refs, which may stay. */
const queryValue = (value: string) => encodeURIComponent(value).replace(/%2F/g, "/").replace(/%3A/g, ":");

/**
 * The REST route that does what a CLI command does, with its arguments (each part of the URL encoded as it must be).
 */
const ROUTES: Record<string, Equivalent> = {
  ls: ([ref]) => {
    if (ref === undefined) return "`GET /documents`";
    const { repository, path } = splitRef(ref);
    return `\`GET /documents?repo=${queryValue(repository)}${path ? `&prefix=${queryValue(path)}` : ""}\``;
  },
  status: ([repository]) => `\`GET /status${repository ? `?repo=${queryValue(repository)}` : ""}\``,
  get: ([ref]) => `\`GET /documents/${ref ? encodeURIComponent(ref) : "<ref>"}\``,
  search: (args) => {
    const { query, mode } = searchArgs(args);
    return `\`GET /search?q=${query ? encodeURIComponent(query) : "…"}${mode ? `&mode=${encodeURIComponent(mode)}` : ""}\``;
  },
  repo: ([command]) => (command === "list" ? "`GET /repositories`" : undefined),
};

/** `hint` with each CLI command `equivalent` has a counterpart of written as that. */
function rewritten(hint: string, equivalent: (name: string, args: string[]) => string | undefined): string {
  return hint.replace(/`researcher ([a-z-]+)((?: [^`]*)?)`/g, (command, name: string, args: string) =>
    // A name with control characters, quoted as $'…': left as the command it is.
    args.includes("$'") ? command : (equivalent(name, words(args)) ?? command),
  );
}

/** The entry of `table` for a command's name (not one every object has: `constructor`, `toString`). */
const entry = (table: Record<string, Equivalent>, name: string) => (Object.hasOwn(table, name) ? table[name] : undefined);

/**
 * Where a hint sends a person to read (`see README, Filters`), as an agent reads it: the grammar is in the `where`
 * parameter's description, and an agent has no README (s28 agent 7).
 */
const AGENT_DOCS: Record<string, string> = { Filters: "see the where parameter's description" };

/** Where a hint sends a person to read, as a REST client reads it: the route's parameter, in the README's REST. */
const REST_DOCS: Record<string, string> = { Filters: "see where of GET /search in README, REST, and its grammar in README, Filters" };

/** `hint` with its pointers to a README section written as `docs` has them for the reader, where it has one. */
function pointedAt(hint: string, docs: Record<string, string>): string {
  return hint.replace(/see README, ([A-Z][A-Za-z ]*[a-z])/g, (pointer, section: string) =>
    Object.hasOwn(docs, section) ? docs[section]! : pointer,
  );
}

/** `hint` with each CLI command a tool does the same as written as that tool, and a README section as a tool's text. */
export function agentHint(hint: string): string {
  return rewritten(pointedAt(hint, AGENT_DOCS), (name, args) => entry(TOOLS, name)?.(args));
}

/**
 * `hint` for a REST client: each CLI command a route does the same as written as that route; one only a tool does
 * (multi-get, remove, repos-for) as that tool, which the same server offers at POST /mcp; a README section as the
 * route's parameter.
 */
export function restHint(hint: string): string {
  return rewritten(pointedAt(hint, REST_DOCS), (name, args) => {
    const route = entry(ROUTES, name)?.(args);
    if (route) return route;
    const tool = entry(TOOLS, name)?.(args);
    return tool && `${tool} (MCP, at POST /mcp)`;
  });
}

/**
 * `answer` with every hint it carries rewritten by `rewrite` (agentHint, restHint): not only a thrown error's but
 * those of a successful answer, a skipped repository's, a warning's (the first-run wait of a partial search), a
 * status or repositories_for entry's `error`, a result's `fallback`: each is an object with a `code` beside its
 * `hint`. A document's `metadata` (its own front matter) is left as written; only plain objects and arrays are
 * walked. The first-run hint reached an agent as `researcher status scans3` (s27b agent F7).
 */
export function withHints<T>(answer: T, rewrite: (hint: string) => string): T {
  if (Array.isArray(answer)) return answer.map((item) => withHints(item, rewrite)) as T;
  if (answer === null || typeof answer !== "object" || Object.getPrototypeOf(answer) !== Object.prototype) return answer;
  const problem = "code" in answer;
  const walked = Object.entries(answer).map(([key, value]) => {
    if (key === "hint" && problem && typeof value === "string") return [key, rewrite(value)];
    return [key, key === "metadata" ? value : withHints(value, rewrite)];
  });
  return Object.fromEntries(walked) as T;
}
