/**
 * One error type for everything a user can cause or fix; `code` is stable and documented. Every interface reports
 * an error the same way: `toResearcherError` gives any thrown value its code, and ERROR_CODES says what the code is
 * in each interface (the CLI's exit status, REST's HTTP status, the JSON-RPC error of a failed MCP resource read;
 * MCP tools answer every error as a tool result with `isError`).
 */

import { statSync } from "node:fs";
import { dirname } from "node:path";

/** JSON-RPC error codes MCP uses: invalid params, resource not found, internal error. */
const RPC = { invalid: -32602, notFound: -32002, internal: -32603 } as const;

/**
 * Exit 2 is for a malformed request (unknown command, flag or mode, a flag value that does not parse, flags that
 * cannot be combined), 1 for everything else: a well-formed request the data refuses, or a failure.
 */
export const ERROR_CODES = {
  USAGE: { exit: 2, http: 400, rpc: RPC.invalid, summary: "the command line or request is malformed" },
  INVALID_INPUT: { exit: 1, http: 400, rpc: RPC.invalid, summary: "an argument or option value is not acceptable" },
  INVALID_CONFIG: { exit: 1, http: 500, rpc: RPC.internal, summary: "config.yaml does not validate" },
  REPO_NOT_FOUND: { exit: 1, http: 404, rpc: RPC.notFound, summary: "no repository with that name" },
  REPO_EXISTS: { exit: 1, http: 409, rpc: RPC.invalid, summary: "the repository name or path is already registered" },
  PATH_NOT_FOUND: { exit: 1, http: 404, rpc: RPC.notFound, summary: "a path does not exist or is not readable" },
  PATH_OUTSIDE_REPO: { exit: 1, http: 400, rpc: RPC.invalid, summary: "a path escapes its repository root" },
  DOCUMENT_NOT_FOUND: { exit: 1, http: 404, rpc: RPC.notFound, summary: "the document is not in the index" },
  FILE_UNREADABLE: { exit: 1, http: 422, rpc: RPC.internal, summary: "a file cannot be read or decoded" },
  CONVERSION_STOPPED: {
    exit: 1,
    http: 503,
    rpc: RPC.internal,
    summary: "a conversion was stopped before it finished (time or memory limit, a crashed worker, the run ending): try again",
  },
  NOT_INDEXED: { exit: 1, http: 404, rpc: RPC.notFound, summary: "the repository has never been indexed" },
  NO_VECTORS: {
    exit: 1,
    http: 409,
    rpc: RPC.invalid,
    summary: "vector search of a repository indexed without embeddings (hybrid searches it with bm25 and warns)",
  },
  UNKNOWN_QUERY: {
    exit: 1,
    http: 422,
    rpc: RPC.invalid,
    summary: "a warning, never an error: the embedding model knows none of the query's words, so vector mode ranks nothing",
  },
  NO_WORD_MATCH: {
    exit: 1,
    http: 422,
    rpc: RPC.invalid,
    summary:
      "a warning, never an error: no fragment holds the query's words, and the repository's vectors carry no weight in hybrid with its model",
  },
  LOCKED: { exit: 1, http: 409, rpc: RPC.internal, summary: "another process is writing this repository" },
  MODEL_UNAVAILABLE: { exit: 1, http: 503, rpc: RPC.internal, summary: "the embedding model cannot be loaded" },
  MODEL_MISMATCH: { exit: 1, http: 409, rpc: RPC.internal, summary: "the repository was embedded with another model" },
  PROVIDER_FAILED: { exit: 1, http: 502, rpc: RPC.internal, summary: "a remote embedding provider failed" },
  INDEX_CORRUPT: { exit: 1, http: 500, rpc: RPC.internal, summary: "an index file cannot be read" },
  PERMISSION_DENIED: {
    exit: 1,
    http: 500,
    rpc: RPC.internal,
    summary: "this user may not read or write a file or folder researcher keeps (its message names it)",
  },
  INDEX_OUTDATED: { exit: 1, http: 409, rpc: RPC.internal, summary: "an older researcher wrote the index: `researcher index` upgrades it" },
  DISK_FULL: { exit: 1, http: 507, rpc: RPC.internal, summary: "not enough free disk space for the index" },
  TOO_MANY_OPEN_FILES: {
    exit: 1,
    http: 503,
    rpc: RPC.internal,
    summary: "the process reached its limit on open files (`ulimit -n`): nothing is recorded against the files",
  },
  WATCH_FAILED: { exit: 1, http: 500, rpc: RPC.internal, summary: "a folder cannot be watched for changes (e.g. the inotify watch limit)" },
  // Refusals only the HTTP server makes (the CLI and stdio MCP never meet them): REST answers them in its error shape.
  UNAUTHORIZED: { exit: 1, http: 401, rpc: RPC.invalid, summary: "the request lacks the server's bearer token" },
  FORBIDDEN: { exit: 1, http: 403, rpc: RPC.invalid, summary: "the request's Host or Origin is not one this server answers" },
  NOT_FOUND: { exit: 1, http: 404, rpc: RPC.notFound, summary: "no such HTTP route" },
  METHOD_NOT_ALLOWED: { exit: 1, http: 405, rpc: RPC.invalid, summary: "the route does not answer this HTTP method" },
  TOO_LARGE: { exit: 1, http: 413, rpc: RPC.invalid, summary: "the request body is over the size limit" },
  OUTPUT_FAILED: {
    exit: 1,
    http: 500,
    rpc: RPC.internal,
    summary: "the output could not be written where it goes (a full disk, a closed file)",
  },
  INTERNAL: { exit: 1, http: 500, rpc: RPC.internal, summary: "an unexpected failure (a bug): its message says where" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class ResearcherError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;

  constructor(code: ErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ResearcherError";
    this.code = code;
    this.hint = options.hint;
  }

  get exitCode(): number {
    return ERROR_CODES[this.code].exit;
  }
}

export function isResearcherError(error: unknown): error is ResearcherError {
  return error instanceof ResearcherError;
}

/** A short, single-line description of any thrown value. */
export function describeError(error: unknown): string {
  // An error without a message (Emscripten's ErrnoError) is named by its code or kind: a reason is never empty.
  if (error instanceof Error) return error.message.split("\n")[0] || systemCode(error) || error.name || "an error without a message";
  const { message, name } = (error ?? {}) as { message?: unknown; name?: unknown };
  if (typeof message === "string" && message) return message.split("\n")[0]!;
  if (typeof name === "string" && name) return name;
  return String(error) || "an error without a message";
}

/** The error for a repository never indexed whole: `why` says what was found instead (no index, a cut run). */
export function notIndexedYet(name: string, why?: string): ResearcherError {
  return new ResearcherError("NOT_INDEXED", `repository '${name}' has not been indexed yet${why ? ` (${why})` : ""}`, {
    hint: `run \`researcher index ${name}\``,
  });
}

/**
 * A repository whose first index run (process `pid`) is under way: nothing to run but to wait, as `status` says;
 * "run `researcher index`" sent the user into "being indexed by process N" (s27 user U5).
 */
export function firstRunUnderWay(name: string, pid: number): ResearcherError {
  return new ResearcherError("NOT_INDEXED", `repository '${name}' has not been indexed yet (its first index run is under way)`, {
    hint: firstRunHint(name, pid),
  });
}

/** What to do while a repository's first index run is under way. */
export function firstRunHint(name: string, pid: number): string {
  return `wait for it to finish (process ${pid}): \`researcher status ${name}\` says when it has`;
}

/** The system's codes for a path that does not exist, is not a folder, or may not be read or written. */
const MISSING_OR_FORBIDDEN = new Set(["ENOENT", "ENOTDIR", "EACCES", "EPERM", "EROFS"]);

/** Why a read stopped when its caller gave up (an MCP client cancelled it). */
export const CANCELLED = "the request was cancelled";
export const cancelled = () => new ResearcherError("CONVERSION_STOPPED", CANCELLED);

/** The system's codes for a process (EMFILE) or the whole system (ENFILE) out of file descriptors. */
export const OPEN_FILES_LIMIT: ReadonlySet<string> = new Set(["EMFILE", "ENFILE"]);
export const OPEN_FILES_HINT = "raise the limit on open files (`ulimit -n 4096`) and run the command again";

/**
 * A hint's "… and run the command again" where running it again is not the fix, with what is: a watch tries a failed
 * batch again by itself; a remove whose ANN rebuild failed is done, and an index run rebuilds the file.
 */
export function insteadOfRunningAgain(hint: string, instead: string): string {
  return hint.replace(/,? and run the command again\b/, instead);
}

/** The `code` a runtime or SQLite error carries (`SQLITE_BUSY`, `ENOSPC`, …), "" when none. */
export function systemCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/**
 * SQLite's words for tables damaged, which it reports with the generic SQLITE_ERROR: FTS5's own (a config row, a
 * shadow table: `invalid fts5 file format (found 0, …)`, `no such fts5 table: main.fragments_fts`), and a table or
 * column the schema version promises but the file lacks (dropped beneath the index: `no such column: d.title`,
 * `table documents has no column named title`). The code's statements are fixed and a migration is one transaction,
 * so a current index lacks them only when damaged. A search's own scratch tables (`temp.`) are none of the index's.
 */
const TABLE_DAMAGE =
  /invalid fts5 file format|no such fts5 table|fts5: corrupt|no such column|no such table: (?!temp\.)|has no column named/i;

/** SQLite's codes for a file whose bytes are not a whole database (as opposed to busy, full or forbidden). */
export function isSqliteDamage(error: unknown): boolean {
  const code = systemCode(error);
  if (code === "SQLITE_ERROR") return TABLE_DAMAGE.test(describeError(error));
  return code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB";
}

/**
 * SQLite's codes that say nothing of the file's bytes: the index is busy, the disk full or failing, the file
 * forbidden, memory short. Any other failure of SQLite's own check of an index is damage to a rebuild, which
 * replaces the file anyway (a damaged FTS5 config row failed the check with SQLITE_ERROR, and the rebuild with it).
 */
export function isSqliteEnvironment(error: unknown): boolean {
  return /^SQLITE_(?:BUSY|LOCKED|FULL|IOERR|READONLY|PERM|CANTOPEN|AUTH|NOMEM|INTERRUPT)/.test(systemCode(error));
}

/** The hint of every damaged index: the command that replaces it. */
export function rebuildHint(repository: string): string {
  return `rebuild it with \`researcher index --rebuild ${repository}\` (it moves the damaged index aside)`;
}

/** INDEX_CORRUPT of a named repository's index, with the command that replaces it. */
export function damagedIndex(repository: string, what: string, cause?: unknown): ResearcherError {
  return new ResearcherError("INDEX_CORRUPT", `the index of '${repository}' is damaged: ${what}`, { hint: rebuildHint(repository), cause });
}

/** The repository a failure happened in, when the caller knows it (a writer does): messages and hints name it. */
export interface ErrorContext {
  repository: string;
  /** Its index folder. */
  dir: string;
}

/**
 * Any thrown value as a ResearcherError, the one place that gives errors from below (SQLite, the file system, the
 * runtime, the command-line parser) their code; ours pass through. What has no better code is INTERNAL, with its
 * message kept and the original as `cause`.
 */
export function toResearcherError(error: unknown, context?: ErrorContext): ResearcherError {
  if (error instanceof ResearcherError) return error;
  const message = describeError(error);
  const code = systemCode(error);
  const as = (kind: ErrorCode, text: string, hint?: string) => new ResearcherError(kind, text, { hint, cause: error });
  // A reader that meets damaged pages does not know which command recovers them; verify names it per repository.
  if (isSqliteDamage(error)) {
    if (!context) return as("INDEX_CORRUPT", `an index is damaged: ${message}`, DAMAGE_HINT);
    return damagedIndex(context.repository, message, error);
  }
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED") || READONLY_FOR_NOW.has(code)) {
    return as("LOCKED", `an index is busy: ${message}`, "another process is writing it: try again in a moment");
  }
  if (code === "SQLITE_READONLY" || code === "SQLITE_READONLY_DIRECTORY") {
    // Writers check index.db and its WAL files before they open it (schema.ts): this is one changed since.
    const where = context ? `the index of '${context.repository}' cannot be written` : "an index cannot be written";
    const hint = context ? permissionHint(context.dir) : undefined;
    return as("PERMISSION_DENIED", `${where}: ${message}`, hint);
  }
  if (code.startsWith("SQLITE_FULL") || code === "ENOSPC") {
    const where = context ? `the disk holding ${context.dir} is full` : "the disk is full";
    // Every write is a transaction or tmp+rename: what a failed run wrote before is whole, the rest is rolled back.
    const kept = context ? " (what was written before is kept, none of it half-written)" : "";
    return as("DISK_FULL", `${where}: ${message}`, `free some space (or move RESEARCHER_HOME) and run the command again${kept}`);
  }
  // A limit on file size (`ulimit -f`, a quota's): the environment's, like a full disk, and nothing was half-written.
  if (code === "EFBIG")
    return as(
      "DISK_FULL",
      `a file grew past the size this process may write (ulimit -f, or a quota): ${message}`,
      "raise the limit and run the command again",
    );
  // The process's or the system's limit on open files: no file's fault, and every file would meet it.
  if (OPEN_FILES_LIMIT.has(code)) return as("TOO_MANY_OPEN_FILES", message, OPEN_FILES_HINT);
  // A file where a folder is needed (an index folder replaced by a file: a restore, a sync tool's conflict copy): the
  // environment, and fixable. It was "unexpected: EEXIST … mkdir" or a bare ENOTDIR (s21 hostile #10).
  const inTheWay = code === "ENOTDIR" || (code === "EEXIST" && syscallOf(error) === "mkdir") ? fileInTheWay(pathOf(error)) : undefined;
  if (inTheWay) {
    return as(
      "PATH_NOT_FOUND",
      `${inTheWay} is a file where a folder is needed (${message})`,
      `move it away, e.g. \`mv '${inTheWay}' '${inTheWay}.bak'\`, and run the command again`,
    );
  }
  // A file or folder that is not there or may not be touched (`--home` under /proc, `-o` into a missing folder):
  // the user's environment, not a bug.
  if (MISSING_OR_FORBIDDEN.has(code)) return as("PATH_NOT_FOUND", message);
  if (code === "ELOOP")
    return as("PATH_NOT_FOUND", `a loop of symbolic links: ${message}`, "point the link at a file or folder that exists");
  // A folder where a file is written (an index file replaced by a folder): the environment, and fixable.
  if (code === "EISDIR")
    return as("PATH_NOT_FOUND", `a folder stands where a file is written: ${message}`, "move that folder away and run the command again");
  if (error instanceof URIError) return as("INVALID_INPUT", `malformed percent-encoding: ${message}`);
  // cac, the command-line parser, throws these for a missing argument or option value.
  if (error instanceof Error && error.name === "CACError") return as("USAGE", message);
  return as("INTERNAL", message);
}

const pathOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.path;
const syscallOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.syscall;

/** A folder's place taken by a link to nothing: the disk it leads to is not mounted, or what it named was moved. */
export function linkToNothing(path: string, target: string): ResearcherError {
  return new ResearcherError("PATH_NOT_FOUND", `${path} is a link to ${target}, which does not exist, where a folder is needed`, {
    hint: `mount or restore what it points to, or move the link away (\`mv '${path}' '${path}.bak'\`) to start anew`,
  });
}

/** The path, or the nearest folder above it, that exists and is no folder: what stands where a folder is needed. */
function fileInTheWay(path: string | undefined): string | undefined {
  for (let at = path; at && at !== dirname(at); at = dirname(at)) {
    try {
      const stats = statSync(at, { throwIfNoEntry: false });
      if (stats) return stats.isDirectory() ? undefined : at;
    } catch {
      // below a file (ENOTDIR): the one above is looked at
    }
  }
  return undefined;
}

/**
 * Codes of failures that say nothing about the file being indexed (a busy index, a full disk): not stamped, so the
 * next run tries the file again. A stopped conversion (a limit, a crashed worker) is the file's own: stamped with
 * the limits, tried again when the file or a limit changes.
 */
const TRANSIENT_CODES: ReadonlySet<ErrorCode> = new Set(["LOCKED", "DISK_FULL", "TOO_MANY_OPEN_FILES"]);

export function isTransient(error: unknown): boolean {
  return TRANSIENT_CODES.has(toResearcherError(error).code);
}

/**
 * SQLite's read-only codes that are no permission problem: the file was moved or replaced under the connection (a
 * rebuild moved it aside), or a lock or recovery was in the way. Running the command again is the fix.
 */
const READONLY_FOR_NOW = new Set([
  "SQLITE_READONLY_DBMOVED",
  "SQLITE_READONLY_RECOVERY",
  "SQLITE_READONLY_CANTLOCK",
  "SQLITE_READONLY_ROLLBACK",
  "SQLITE_READONLY_CANTINIT",
]);

/** How to fix a file or folder of an index this user may not read or write. */
export function permissionHint(folder: string): string {
  return `give yourself read and write access to ${folder} and its files (\`ls -la ${folder}\` shows who has it)`;
}

/** The system's codes for a file or folder this user may not write. */
const WRITE_FORBIDDEN = new Set(["EACCES", "EPERM", "EROFS"]);

/** PERMISSION_DENIED for a file this user may not read, when `error` is the system refusing it; else undefined. */
export function readDenied(error: unknown, file: string): ResearcherError | undefined {
  if (!WRITE_FORBIDDEN.has(systemCode(error))) return undefined;
  return new ResearcherError("PERMISSION_DENIED", `cannot read ${file}: permission denied`, {
    hint: `give yourself read access to it (\`ls -l ${file}\` shows who has it)`,
    cause: error,
  });
}

/**
 * PERMISSION_DENIED naming `what` could not be written (in the folder `folder`: the index's, or the home's) when
 * `error` is the system refusing a write; undefined for any other error.
 */
export function writeDenied(error: unknown, what: string, folder: string): ResearcherError | undefined {
  const code = systemCode(error);
  if (!WRITE_FORBIDDEN.has(code)) return undefined;
  const why = code === "EROFS" ? "read-only file system" : "permission denied";
  return new ResearcherError("PERMISSION_DENIED", `cannot write ${what}: ${why}`, { hint: permissionHint(folder), cause: error });
}

/**
 * Damage verify may not see (bytes changed inside a full-text segment's valid page): the rebuild mends any (s26 hostile
 * F1).
 */
const DAMAGE_HINT = "`researcher verify` names the repository; `researcher index --rebuild <repository>` rebuilds its index";
