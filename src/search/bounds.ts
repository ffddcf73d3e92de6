/**
 * The ranges of a search's (and a listing's) numbers, one rule for every interface: the CLI's flags
 * (cli-options.ts), REST's parameters (http.ts), MCP's arguments (its zod schemas take these bounds) and the library
 * itself (search.ts) check them here. A number out of range is a usage error naming the option as its interface
 * spells it. Unbounded, a count of 2^63 or more reached SQLite as a float and failed there ("datatype mismatch", an
 * internal error).
 */
import { ResearcherError } from "../errors.ts";

/**
 * The deepest a search ranks: `--all` stops asking for more here (a page of a million fragments is not a result
 * list), and `-n` and `--offset` stay within it.
 */
export const MAX_ALL_RESULTS = 100_000;
/** The most results one server answer carries (MCP's n_results, REST's n): more is an error; page with offset. */
const MAX_RESULTS = 200;

export interface Range {
  min: number;
  max: number;
}

/**
 * The longest query, in characters, on every interface (CLI, REST, MCP): a pasted page fits (and a model embeds
 * only its first tokens anyway); past it, a query is a mistake.
 */
export const MAX_QUERY_CHARS = 100_000;

/** How many results a search returns (`-n`, `--documents n`, the library's `limit`). */
export const LIMIT: Range = { min: 1, max: MAX_ALL_RESULTS };
/** How many results an MCP or REST answer returns (`n_results`, `n`). */
export const ANSWER_LIMIT: Range = { min: 1, max: MAX_RESULTS };
/**
 * An MCP or REST answer's count when the request names none: the configured default (`search.limit`), which
 * config.yaml allows beyond ANSWER_LIMIT for the CLI, held to it.
 */
export function defaultAnswerLimit(configured: number): number {
  return Math.min(configured, ANSWER_LIMIT.max);
}

/** How many results a page skips (`--offset`, `offset`). */
export const OFFSET: Range = { min: 0, max: MAX_ALL_RESULTS };

/**
 * How many documents one listing answer holds (MCP's list_documents `limit`, REST's /documents `n`), and MCP's
 * resources/list: page with an offset, from 0 up.
 */
export const LISTED: Range = { min: 1, max: 1000 };
/**
 * Where a listing answer starts (MCP's and REST's `offset`): past the end is an empty page, which says how many there
 * are. Bounded, as a search's offset is, past any index's count of documents (99999999999999999999 came back as
 * 1e20).
 */
export const LISTED_OFFSET: Range = { min: 0, max: 1_000_000_000 };

/**
 * The most document text one server answer carries (MCP's get_document and multi_get, REST's /documents/<ref>), in
 * UTF-8 bytes: a 40 MB file read whole by eight clients at once took a server to 1.7 GB (s28 hostile F4). A larger
 * budget is held to it; the answer says where to read on.
 */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** Any whole number from 1 on (a line number, a count of lines or bytes). */
export const FROM_ONE: Range = { min: 1, max: Number.POSITIVE_INFINITY };
/** Any whole number from 0 on (a character offset into a line). */
export const FROM_ZERO: Range = { min: 0, max: Number.POSITIVE_INFINITY };

/** Whole numbers as people type them: `Number()` alone would also take `0x10`, `1e3`, `0b1` and `1.0`. */
const DECIMAL = /^[+-]?\d+$/;

/**
 * `value` (a number, or text as typed) as a whole number within `range`, else a usage error (CLI exit 2, HTTP 400)
 * that names the option as `name` and says its range.
 */
export function wholeNumber(value: unknown, name: string, range: Range, hint?: string): number {
  const n = typeof value === "number" ? value : typeof value === "string" && DECIMAL.test(value.trim()) ? Number(value) : Number.NaN;
  if (Number.isInteger(n) && n >= range.min && n <= range.max) return n;
  const bounded = Number.isFinite(range.max);
  const expected = !Number.isFinite(range.min)
    ? "a whole number"
    : bounded
      ? `a whole number from ${range.min} to ${range.max}`
      : `a whole number ≥ ${range.min}`;
  throw new ResearcherError("USAGE", `${name} must be ${expected} (got ${String(value)})`, { hint });
}

/** Decimal numbers as people type them (`0.5`, `2`, `.25`): not `0x10`, `1e3` or a blank. */
const DECIMAL_FRACTION = /^\+?(\d+(\.\d*)?|\.\d+)$/;

/**
 * A minimum score (`--min-score`, REST's `min_score`, MCP's `min_score`, the library's `minScore`): a number ≥ 0
 * (every mode's scores are), else a usage error naming the option as `name`.
 */
export function minimumScore(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n =
    typeof value === "number" ? value : typeof value === "string" && DECIMAL_FRACTION.test(value.trim()) ? Number(value) : Number.NaN;
  if (Number.isFinite(n) && n >= 0) return n;
  throw new ResearcherError("USAGE", `${name} must be a decimal number ≥ 0, such as 0.5 (got '${String(value)}')`);
}
