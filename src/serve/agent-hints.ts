/**
 * Hints as an MCP agent can act on them. The library's hints name CLI commands (`researcher ls notes` lists them),
 * which a person at a terminal runs; an agent has tools instead. Each command a tool does the same as becomes that
 * tool with its arguments; the others (`researcher index`, `repo add`, `verify`) stay commands, for the agent to
 * pass on to its user.
 */

/** A command's shell words, unquoted as shellWord (terminal.ts) quotes them; `--json` says nothing to an agent. */
function words(args: string): string[] {
  const found = [...args.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!));
  return found.filter((word) => word !== "--json" && word !== "--");
}

/** `repo:path` as a repository and the path in it, or a bare repository name. */
function splitRef(ref: string): { repository: string; path?: string } {
  const colon = ref.indexOf(":");
  return colon === -1 ? { repository: ref } : { repository: ref.slice(0, colon), path: ref.slice(colon + 1) };
}

const quoted = (value: string) => JSON.stringify(value);

/** The tool that does what a CLI command does, with its arguments, or undefined when no tool does. */
const TOOLS: Record<string, (args: string[]) => string | undefined> = {
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
  search: () => "the search_fragments tool",
  // `repo list` alone: the other `repo` commands (add, remove, rename) change the registry, which no tool does.
  repo: ([command]) => (command === "list" ? "the list_repositories tool" : undefined),
  "repos-for": ([query]) => `the repositories_for tool${query ? ` with query ${quoted(query)}` : ""}`,
};

/** `hint` with each CLI command a tool does the same as written as that tool. */
export function agentHint(hint: string): string {
  return hint.replace(/`researcher ([a-z-]+)((?: [^`]*)?)`/g, (command, name: string, args: string) => {
    // A name with control characters, quoted as $'…': left as the command it is.
    const tool = Object.hasOwn(TOOLS, name) && !args.includes("$'") ? TOOLS[name] : undefined;
    return tool?.(words(args)) ?? command;
  });
}
