/**
 * Every environment variable researcher reads, in one place. Each is read when it is asked for, not at start-up:
 * tests and programs that embed the library change them within one process.
 */
import { homedir } from "node:os";
import { join } from "node:path";

const read = (name: string): string | undefined => process.env[name] || undefined;

/** OLLAMA_HOST as a URL (see `env.ollamaHost`); unparsable text is returned as given, for the request to refuse. */
function ollamaUrl(value: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
    if (!url.port && !/:\d+(\/|$)/.test(text)) url.port = url.protocol === "https:" ? "443" : "11434";
    return url.href.replace(/\/$/, "");
  } catch {
    return text;
  }
}

export const env = {
  /**
   * RESEARCHER_HOME: the home folder when `--home` is not given; `~/.researcher` without it; "" when set but empty
   * (`RESEARCHER_HOME=$(cat missing)`), a slip that must not fall back to the user's real home (resolveHome).
   */
  home: () => process.env.RESEARCHER_HOME ?? join(homedir(), ".researcher"),
  /** HOME: what `~/` means in a model path. */
  userHome: () => read("HOME"),
  /** RESEARCHER_MODEL_PATH, then RESEARCHER_MODEL: the embedding model for every run, over the config. */
  model: () => read("RESEARCHER_MODEL_PATH") ?? read("RESEARCHER_MODEL"),
  /**
   * RESEARCHER_MCP_TOKEN: the bearer token `serve --port` requires when `--token` is not given; "" when set but empty
   * (`RESEARCHER_MCP_TOKEN=$(cat missing-file)`), which is a slip, not a request to serve without one.
   */
  mcpToken: () => process.env.RESEARCHER_MCP_TOKEN,
  /** RESEARCHER_LOG_LEVEL: consola's level for diagnostics on stderr (default 3, info). */
  logLevel: () => read("RESEARCHER_LOG_LEVEL"),
  /** RESEARCHER_EXACT_SCAN_BELOW: vector components below which a repository is scanned exactly (tests set 0). */
  exactScanBelow: () => read("RESEARCHER_EXACT_SCAN_BELOW"),
  /** HF_ENDPOINT: a Hugging Face hub mirror, as the hub's own clients read it. */
  hubEndpoint: () => read("HF_ENDPOINT"),
  /**
   * OLLAMA_HOST: the Ollama server when the config names none, read as Ollama reads it: `host`, `host:port` or a
   * URL; the scheme defaults to http and the port to 11434 (443 for https).
   */
  ollamaHost: () => ollamaUrl(read("OLLAMA_HOST")),
  /** OPENAI_API_KEY: the key for the OpenAI-compatible provider. */
  openaiKey: () => read("OPENAI_API_KEY"),
  /**
   * The terminal's own variables (NO_COLOR, FORCE_COLOR, FORCE_HYPERLINK, TERM, TERM_PROGRAM and the terminals'
   * markers): whether output gets colour and links.
   */
  terminal: (): Readonly<Record<string, string | undefined>> => process.env,
};

/**
 * `~/x` and `$HOME/x` as the shell would expand them, where a path is read from a file (config.yaml, a model's path):
 * people write `path: ~/notes` there, and it was a folder named `~` inside the researcher home (s19 hostile #8).
 */
export function expandHome(path: string): string {
  const home = env.userHome();
  const prefix = /^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/.exec(path)?.[0];
  return home && prefix ? home + path.slice(prefix.length) : path;
}
