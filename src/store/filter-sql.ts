/**
 * The filter tree (what `--where` and MCP `where` select by) and its compilation to SQL. search/filters.ts parses
 * the text and JSON forms into this tree and validates each term against the keys and value forms defined here;
 * the tree compiles to a condition over `documents d` and `fragments f`, which the ranking queries apply inside
 * (see `admitted` in store.ts), so a selective filter still fills a page of results.
 */
import { composed, trimRuns } from "../text.ts";
import { pathMatcher } from "../path-glob.ts";

export const FILTER_OPS = ["eq", "ne", "lt", "le", "gt", "ge", "contains", "in"] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export interface FilterTerm {
  kind: "term";
  key: string;
  op: FilterOp;
  /** One value; several for `in`. */
  values: string[];
}

/** `all`: every item holds; `any`: at least one does; `none`: no item does (the JSON form's `not`). */
export type Filter = FilterTerm | { kind: "all" | "any" | "none"; items: Filter[] };

export interface SqlCondition {
  sql: string;
  params: (string | number)[];
}

/** What a filter needs from the repository it runs in. */
export interface FilterScope {
  repository: string;
  /** Every indexed document's id and path (path globs are matched with Bun.Glob, as `multi_get` does). */
  documentPaths: () => { id: number; path: string }[];
}

/** Keys with a meaning of their own; every other key names a front-matter (metadata) field. */
export type KeyType = "glob" | "text" | "number" | "date" | "page";
// Without a prototype: a front-matter key may be any word, `constructor` and `toString` too.
export const BUILT_IN_KEYS: Readonly<Record<string, KeyType | undefined>> = Object.assign(Object.create(null), {
  path: "glob",
  format: "text",
  repository: "text",
  title: "text",
  size: "number",
  modified: "date",
  page: "page",
});

/** The value forms: a number, an ISO date or a prefix of one (2025, 2025-01, …), a page or page range (3-5). */
export const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
export const DATE = /^\d{4}(-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?)?$/;
export const PAGES = /^(\d+)(?:-(\d+))?$/;

// ---- SQL ------------------------------------------------------------------------------------------------

/** The filter as a condition over `documents d` joined with `fragments f`, with bound parameters. */
export function filterSql(filter: Filter, scope: FilterScope): SqlCondition {
  const params: (string | number)[] = [];
  const bind = (value: string | number) => {
    params.push(value);
    return "?";
  };
  // Read once however many path terms the filter has.
  let paths: { id: number; path: string }[] | undefined;
  const once: FilterScope = { ...scope, documentPaths: () => (paths ??= scope.documentPaths()) };
  const node = (f: Filter): string => {
    if (f.kind === "term") return termSql(f, bind, once);
    if (f.items.length === 0) return "1";
    const joined = balanced(f.items.map(node), f.kind === "all" ? "AND" : "OR");
    return f.kind === "none" ? `NOT ${joined}` : joined;
  };
  const sql = node(filter);
  return { sql, params };
}

/** Most filter values (an `in` list's, or terms') one filter may hold: a usage error beyond (search/filters.ts). */
export const MAX_FILTER_VALUES = 10_000;
/** The longest filter value (a path's length on most systems): a usage error beyond, as a query too long is. */
export const MAX_FILTER_VALUE_CHARS = 4096;
/**
 * Most path globs a search's filters may hold together: each is matched against every document's path in JavaScript
 * (literal paths are looked up, any number of them), and 10,000 over 100,000 notes held a server 9 minutes; 100 take
 * about half a second.
 */
export const MAX_FILTER_GLOBS = 100;

/**
 * Conditions joined by AND or OR as a balanced tree: SQLite parses `a OR b OR c …` into a tree as deep as the list is
 * long and refuses one deeper than 1,000 (SQLITE_MAX_EXPR_DEPTH), which an `in` list of 500 paths reached. Halving
 * keeps the depth to the logarithm of the count.
 */
function balanced(parts: string[], op: "AND" | "OR"): string {
  if (parts.length <= 8) return `(${parts.join(` ${op} `)})`;
  const half = Math.ceil(parts.length / 2);
  return `(${balanced(parts.slice(0, half), op)} ${op} ${balanced(parts.slice(half), op)})`;
}

type Bind = (value: string | number) => string;

function termSql(term: FilterTerm, bind: Bind, scope: FilterScope): string {
  if (term.op === "ne") return `NOT ${termSql({ ...term, op: "eq" }, bind, scope)}`;
  // A path list is one set of documents, whatever its length: each document's path is matched once against all of it.
  if (term.op === "in" && BUILT_IN_KEYS[term.key] === "glob") return globSql(term.values, bind, scope);
  if (term.op === "in")
    return balanced(
      term.values.map((value) => termSql({ ...term, op: "eq", values: [value] }, bind, scope)),
      "OR",
    );
  const value = term.values[0]!;
  switch (BUILT_IN_KEYS[term.key]) {
    case "glob":
      return term.op === "contains" ? textCompare("d.path", "contains", value, bind) : globSql([value], bind, scope);
    case "text":
      return textCompare(term.key === "repository" ? bind(scope.repository) : `d.${term.key}`, term.op, value, bind);
    case "number":
      return `d.${term.key} ${SQL_OPS[term.op]} ${bind(Number(value))}`;
    case "date":
      // Compared as an ISO string (UTC), so a date prefix (2025, 2025-01, 2025-01-31) means that whole period.
      return prefixCompare("strftime('%Y-%m-%dT%H:%M:%fZ', d.mtime_ms / 1000.0, 'unixepoch')", term.op, isoValue(value), bind);
    case "page":
      return pageSql(term.op, value, bind);
    default:
      return metadataSql(term, value, bind);
  }
}

const SQL_OPS: Record<string, string> = { eq: "=", lt: "<", le: "<=", gt: ">", ge: ">=" };

/** Equality and `~` ignore case; ordering compares the text as stored. */
function textCompare(column: string, op: FilterOp, value: string, bind: Bind): string {
  const forms = caseForms(value);
  if (op === "eq") return `lower(${column}) IN (${forms.map((form) => `lower(${bind(form)})`).join(", ")})`;
  if (op === "contains") return `(${forms.map((form) => `instr(lower(${column}), lower(${bind(form)})) > 0`).join(" OR ")})`;
  return `${column} ${SQL_OPS[op]} ${bind(value)}`;
}

/**
 * The forms a value is compared in: SQLite's lower() folds A–Z only, so a value with other letters (`émile`,
 * `русский`) is also tried the ways people write it: all lower case, all upper case, its first letter or every
 * word's capitalised (`Émile`, `Русский`, `Über Straße`). Mixed case beyond that is not matched.
 */
function caseForms(value: string): string[] {
  if (!/[^\x00-\x7f]/.test(value)) return [value];
  const lower = value.toLowerCase();
  const first = lower.replace(/\p{L}/u, (letter) => letter.toUpperCase());
  const words = lower.replace(/(^|[^\p{L}\p{M}'’])(\p{L})/gu, (_, before: string, letter: string) => before + letter.toUpperCase());
  return [...new Set([value, lower, value.toUpperCase(), first, words])];
}

/** Dates as ISO text: `=` means "starts with", so `2025-01` matches every day of January; `<=` includes it. */
function prefixCompare(column: string, op: FilterOp, value: string, bind: Bind): string {
  const after = `${value}\uffff`;
  if (op === "eq") return `(${column} >= ${bind(value)} AND ${column} < ${bind(after)})`;
  if (op === "lt" || op === "ge") return `${column} ${SQL_OPS[op]} ${bind(value)}`;
  return `${column} ${op === "le" ? "<" : ">="} ${bind(after)}`;
}

/** A full timestamp in the form SQLite prints (`2025-01-31T10:00:00.000Z`); a date prefix stays as written. */
function isoValue(value: string): string {
  return value.length > 10 ? new Date(value).toISOString() : value;
}

/**
 * Documents whose path matches any of the globs, as one set bound as one parameter. Globs without glob syntax (a
 * list of paths or names, as an agent sends) are looked up, not matched one by one.
 */
function globSql(patterns: string[], bind: Bind, scope: FilterScope): string {
  const matches = pathMatcher(patterns);
  const ids = scope
    .documentPaths()
    .filter((d) => matches(d.path))
    .map((d) => d.id);
  return `d.id IN (SELECT value FROM json_each(${bind(JSON.stringify(ids))}))`;
}

/** A fragment matches a page term by the pages it spans (`page` to `page_end`); fragments without pages never do. */
function pageSql(op: FilterOp, value: string, bind: Bind): string {
  const [, from, to = from] = PAGES.exec(value)!;
  const first = "f.page";
  const last = "coalesce(f.page_end, f.page)";
  const test =
    op === "eq"
      ? `${first} <= ${bind(Number(to))} AND ${last} >= ${bind(Number(from))}`
      : op === "lt" || op === "le"
        ? `${first} ${SQL_OPS[op]} ${bind(Number(from))}`
        : `${last} ${SQL_OPS[op]} ${bind(Number(from))}`;
  return `(f.page IS NOT NULL AND ${test})`;
}

/**
 * A metadata column as SQL's JSON functions may read it: a value that is not a JSON object (a cell damaged beneath
 * the index) reads as none, as parseMetadata reads it, where those functions would fail the whole statement.
 */
export function metadataOf(column: string): string {
  return `(CASE WHEN NOT json_valid(${column}) THEN '{}' WHEN json_type(${column}) = 'object' THEN ${column} ELSE '{}' END)`;
}

/** The JSON path of a front-matter key; a dotted key (`author.name`) names a nested field. */
export function metadataPath(key: string): string {
  return `$.${key
    .split(".")
    .map((part) => JSON.stringify(part))
    .join(".")}`;
}

/**
 * A value that compares as a number: a JSON number, or an integer's digits as text (an integer past 2^53 is kept as
 * its digits, document.ts), read as the number it writes (SQLite orders any text after every number).
 */
const INTEGER_TEXT =
  "(m.type = 'text' AND ltrim(m.value, '-') <> '' AND substr(m.value, 2) NOT GLOB '*[^0-9]*' AND m.value GLOB '[-0-9]*')";
const NUMERIC = `(m.type IN ('integer', 'real') OR ${INTEGER_TEXT})`;
const NUMERIC_VALUE = "CASE m.type WHEN 'text' THEN CAST(m.value AS REAL) ELSE m.value END";

/**
 * `<`, `>`, `<=`, `>=` against an integer, exactly when the value is an integer too: past 2^53 neighbours share a
 * double (`id>12345678901234567890` missed …891). By sign, then number of digits, then the digits.
 */
function integerCompare(op: FilterOp, value: string, bind: Bind): string {
  const digits = value.replace(/^-/, "").replace(/^0+/, "");
  const negative = value.startsWith("-") && digits !== ""; // -0 is 0
  const text = "CAST(m.value AS TEXT)";
  const magnitude = `ltrim(ltrim(${text}, '-'), '0')`;
  const byMagnitude = `(CASE WHEN length(${magnitude}) <> ${digits.length} THEN (CASE WHEN length(${magnitude}) > ${digits.length} THEN 1 ELSE -1 END)
    WHEN ${magnitude} = ${bind(digits)} THEN 0 WHEN ${magnitude} > ${bind(digits)} THEN 1 ELSE -1 END)`;
  const valueNegative = `(substr(${text}, 1, 1) = '-' AND ${magnitude} <> '')`;
  const order = `(CASE WHEN ${valueNegative} <> ${negative ? 1 : 0} THEN ${negative ? 1 : -1} ELSE ${negative ? "-" : ""}${byMagnitude} END)`;
  return `(m.type = 'integer' OR ${INTEGER_TEXT}) AND ${order} ${SQL_OPS[op]} 0`;
}

/** Keys whose values nest as Obsidian's tags do: `homelab/infra` is under `homelab`. */
const NESTING_KEYS = new Set(["tags", "tag"]);

/** A value nested under `parent` (`homelab/infra` under `homelab`), as Obsidian's tag search finds it. */
function nestedUnder(parent: string, bind: Bind): string {
  const prefix = `${trimRuns(parent, "/")}/`;
  return textCompare(`substr(m.value, 1, ${[...prefix].length})`, "eq", prefix, bind);
}

/**
 * Whether a stored text value reads as a date: a year, a year and a month (01-12), or those and a day (01-31) with
 * what follows (`2024-13-01`, `2024-W05`, `2024/02/01` and `2024-02-45` passed date filters as text: s19 retest).
 * `withMonth`: a bare year is no date here.
 */
function storedDate(column: string, withMonth = false): string {
  const year = "[0-9][0-9][0-9][0-9]";
  // A month alone, or a day of 01–31, alone or with what is no digit after it (a time): `2024-02-45` and
  // `2024-02-123` are no dates.
  const days = ["0[1-9]", "[12][0-9]", "3[01]"].flatMap((day) => [day, `${day}[^0-9]*`]);
  const months = ["0[1-9]", "1[0-2]"].flatMap((month) => [
    `${column} GLOB '${year}-${month}'`,
    ...days.map((day) => `${column} GLOB '${year}-${month}-${day}'`),
  ]);
  return `(${[...(withMonth ? [] : [`${column} GLOB '${year}'`]), ...months].join(" OR ")})`;
}

/**
 * A short hash (`97b4c70`, as `git log --oneline` prints it): `git_commit=` with 4 to 39 hex digits is the commits
 * starting with them, as git takes an abbreviated hash down to 4 (s29b retest P4: `dd4eaf` matched nothing); 40 are
 * the full hash, compared as text (s29 user F8).
 */
const SHORT_COMMIT = /^[0-9a-f]{4,39}$/i;

function isShortCommit(key: string, value: string): boolean {
  return key === "git_commit" && SHORT_COMMIT.test(value);
}

/** Whether the hash in `column` starts with the short `value`, case aside (git prints either). */
function shortCommitSql(column: string, value: string, bind: Bind): string {
  return `substr(lower(${column}), 1, ${value.length}) = ${bind(value.toLowerCase())}`;
}

/**
 * A front-matter field: a list matches when any element does. The value's form picks the comparison: a number
 * compares numbers, a date (2025-01-31…) compares ISO text by prefix, anything else compares text; a bare year
 * compares numbers and dates both.
 */
function metadataSql(term: FilterTerm, typed: string, bind: Bind): string {
  const value = composed(typed); // as metadata values are stored (boundedMetadata)
  const source = bind(metadataPath(term.key)); // bound first: its placeholder comes first
  const text = "CASE m.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE m.value END";
  const date = DATE.test(value) && value.includes("-"); // a bare year is a number here (`year>=2020`)
  let test: string;
  if (term.op === "eq" && isShortCommit(term.key, value)) test = `m.type = 'text' AND ${shortCommitSql("m.value", value, bind)}`;
  else if (term.op === "contains" || (term.op === "eq" && !date)) {
    test = textCompare(text, term.op, value, bind);
    // `rating=4.0` is `rating: 4`, `score=1e3` is `score: 1000`: a number is equal as a number too.
    if (term.op === "eq" && NUMBER.test(value)) test = `(${test}) OR (m.type IN ('integer', 'real') AND m.value = ${bind(Number(value))})`;
  } else if (date) {
    // A value that is no date (`TBD`, `n/a`, `Spring 2023`) lies in no period: it sorted after every date as text,
    // so `date>=2024-01-01` held it (s19 hostile #5). Only `!=` holds for it, as the NOT of `=` (termSql).
    test = `m.type = 'text' AND ${storedDate("m.value")} AND ${prefixCompare("m.value", term.op, value, bind)}`;
  } else if (NUMBER.test(value)) {
    test = `${NUMERIC} AND ${NUMERIC_VALUE} ${SQL_OPS[term.op]} ${bind(Number(value))}`;
    // A real compares as a number; an integer against an integer compares exactly.
    if (/^-?\d+$/.test(value)) test = `(m.type = 'real' AND ${test}) OR (${integerCompare(term.op, value, bind)})`;
  } else test = `m.type = 'text' AND ${textCompare("m.value", term.op, value, bind)}`;
  if (term.op === "eq" && NESTING_KEYS.has(term.key)) test = `(${test}) OR (m.type = 'text' AND ${nestedUnder(value, bind)})`;
  // A bare year compares numbers (`year>=2020`) and is also a period of dates (`date>=2025` holds 2025-03-01).
  if (DATE.test(value) && !value.includes("-") && term.op !== "contains")
    test = `(${test}) OR (m.type = 'text' AND ${storedDate("m.value", true)} AND ${prefixCompare("m.value", term.op, value, bind)})`;
  return `EXISTS (SELECT 1 FROM json_each(${metadataOf("d.metadata")}, ${source}) AS m WHERE ${test})`;
}
