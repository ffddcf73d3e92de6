/** One error type for everything a user can cause or fix; `code` is stable and documented. */

export const ERROR_CODES = {
  USAGE: { exit: 2, summary: "the command line is malformed" },
  INVALID_INPUT: { exit: 1, summary: "an argument or option value is not acceptable" },
  INVALID_CONFIG: { exit: 1, summary: "config.yaml does not validate" },
  REPO_NOT_FOUND: { exit: 1, summary: "no repository with that name" },
  REPO_EXISTS: { exit: 1, summary: "the repository name or path is already registered" },
  PATH_NOT_FOUND: { exit: 1, summary: "a path does not exist or is not readable" },
  PATH_OUTSIDE_REPO: { exit: 1, summary: "a path escapes its repository root" },
  DOCUMENT_NOT_FOUND: { exit: 1, summary: "the document is not in the index" },
  FILE_UNREADABLE: { exit: 1, summary: "a file cannot be read or decoded" },
  NOT_INDEXED: { exit: 1, summary: "the repository has never been indexed" },
  LOCKED: { exit: 1, summary: "another process is writing this repository" },
  MODEL_UNAVAILABLE: { exit: 1, summary: "the embedding model cannot be loaded" },
  MODEL_MISMATCH: { exit: 1, summary: "the repository was embedded with another model" },
  PROVIDER_FAILED: { exit: 1, summary: "a remote embedding provider failed" },
  INDEX_CORRUPT: { exit: 1, summary: "an index file cannot be read" },
  DISK_FULL: { exit: 1, summary: "not enough free disk space for the index" },
  WATCH_FAILED: { exit: 1, summary: "a folder cannot be watched for changes (e.g. the inotify watch limit)" },
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
  if (error instanceof Error) return error.message.split("\n")[0] ?? String(error);
  return String(error);
}

/** SQLite's codes for a file whose bytes are not a whole database (as opposed to busy, full or forbidden). */
export function isSqliteDamage(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code ?? "";
  return code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB";
}
