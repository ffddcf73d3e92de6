/**
 * Search filters: one grammar for the CLI and MCP. The text form (`tags=rust modified>=2025-01-01 title~"borrow"`)
 * and the JSON form (`{"all":[{"key":"tags","eq":"rust"}],"any":[…],"not":[…]}`) parse into the same validated
 * tree, which compiles to an SQL condition over `documents d` and `fragments f`: search applies it inside the
 * ranking queries, so a selective filter still fills a page of results.
 */
import { ResearcherError } from "../errors.ts";

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

/** The JSON form agents send. */
export interface FilterJson {
  all?: Record<string, unknown>[];
  any?: Record<string, unknown>[];
  not?: Record<string, unknown>[];
}

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

const TEXT_OPS: Record<string, FilterOp> = { "=": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "~": "contains" };

/** Keys with a meaning of their own; every other key names a front-matter (metadata) field. */
type KeyType = "glob" | "text" | "number" | "date" | "page";
const BUILT_IN: Record<string, KeyType> = {
  path: "glob",
  format: "text",
  repository: "text",
  title: "text",
  size: "number",
  modified: "date",
  page: "page",
};
const ALLOWED_OPS: Record<KeyType, readonly FilterOp[]> = {
  glob: ["eq", "ne", "contains", "in"],
  text: FILTER_OPS,
  number: ["eq", "ne", "lt", "le", "gt", "ge", "in"],
  date: ["eq", "ne", "lt", "le", "gt", "ge", "in"],
  page: ["eq", "ne", "lt", "le", "gt", "ge", "in"],
};

const KEY = /^[\p{L}\p{N}_][\p{L}\p{N}_.-]*$/u;
const NUMBER = /^-?\d+(\.\d+)?$/;
const DATE = /^\d{4}(-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?)?$/;
const PAGES = /^(\d+)(?:-(\d+))?$/;

// ---- parsing --------------------------------------------------------------------------------------------

/** Parse one filter, text or JSON; `label` names its source in errors (`--where`, `where`). */
export function parseFilter(input: string | FilterJson, label = "where"): Filter {
  return typeof input === "string" ? parseFilterText(input, label) : parseFilterJson(input, label);
}

/** Everything that must hold: the `--where` filters and the `--filter` glob, ANDed. */
export function combineFilters(filters: Filter[]): Filter | undefined {
  return filters.length === 0 ? undefined : filters.length === 1 ? filters[0] : { kind: "all", items: filters };
}

/** `key op value` terms separated by spaces, all of which must hold. */
export function parseFilterText(text: string, label = "where"): Filter {
  const fail = (what: string, at: number): never => {
    throw new ResearcherError("USAGE", `${label}: ${what} at column ${at + 1}: ${text}`, { hint: FILTER_HINT });
  };
  const items: Filter[] = [];
  let at = 0;
  const skipSpace = () => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  const value = (stop: RegExp): string => {
    const start = at;
    if (text[at] === '"') {
      let out = "";
      for (at++; at < text.length && text[at] !== '"'; at++) out += text[at] === "\\" && at + 1 < text.length ? text[++at] : text[at];
      if (at >= text.length) fail("unterminated quote", start);
      at++;
      return out;
    }
    while (at < text.length && !stop.test(text[at]!)) at++;
    if (at === start) fail("missing value", start);
    return text.slice(start, at);
  };
  for (skipSpace(); at < text.length; skipSpace()) {
    const keyStart = at;
    while (at < text.length && !/[\s=!<>~()"|]/.test(text[at]!)) at++;
    const key = text.slice(keyStart, at);
    if (!key) fail(`expected a key, found '${text[at]}'`, at);
    skipSpace();
    const opStart = at;
    let op: FilterOp;
    let values: string[];
    if (/^in\s*\(/i.test(text.slice(at))) {
      op = "in";
      at = text.indexOf("(", at) + 1;
      values = [];
      do {
        skipSpace();
        values.push(value(/[\s|)]/));
        skipSpace();
      } while (text[at] === "|" && ++at);
      if (text[at] !== ")") fail("expected '|' or ')' in the in (…) list", at);
      at++;
    } else {
      while (at < text.length && /[=!<>~]/.test(text[at]!)) at++;
      const symbol = text.slice(opStart, at);
      if (!symbol) fail(`expected an operator (=, !=, <, <=, >, >=, ~, in) after '${key}'`, opStart);
      if (!TEXT_OPS[symbol]) fail(`unknown operator '${symbol}'`, opStart);
      op = TEXT_OPS[symbol]!;
      skipSpace();
      values = [value(/\s/)];
    }
    const problem = termProblem(key, op, values);
    if (problem) fail(problem, keyStart);
    items.push({ kind: "term", key, op, values });
  }
  return { kind: "all", items };
}

/** `{"all":[…], "any":[…], "not":[…]}`, each a list of `{"key": k, "<op>": value}` terms. */
export function parseFilterJson(json: FilterJson, label = "where"): Filter {
  const fail = (where: string, what: string): never => {
    throw new ResearcherError("USAGE", `${label}: ${where ? `${where}: ` : ""}${what}`, { hint: FILTER_HINT });
  };
  if (!json || typeof json !== "object" || Array.isArray(json)) fail("", "expected a text filter or an object with all, any and not lists");
  const unknown = Object.keys(json).filter((k) => !["all", "any", "not"].includes(k));
  if (unknown.length) fail("", `unknown field '${unknown[0]}' (use all, any, not)`);
  const list = (name: "all" | "any" | "not"): Filter[] => {
    const terms = json[name] ?? [];
    if (!Array.isArray(terms)) fail(name, "expected a list of terms");
    return terms.map((term, i) => parseJsonTerm(term, (what) => fail(`${name}[${i}]`, what)));
  };
  return {
    kind: "all",
    items: [
      ...list("all"),
      ...(json.any?.length ? [{ kind: "any" as const, items: list("any") }] : []),
      ...(json.not?.length ? [{ kind: "none" as const, items: list("not") }] : []),
    ],
  };
}

function parseJsonTerm(term: unknown, fail: (what: string) => never): FilterTerm {
  if (!term || typeof term !== "object" || Array.isArray(term)) fail('expected {"key": …, "<op>": value}');
  const { key, ...rest } = term as Record<string, unknown>;
  if (typeof key !== "string") fail('missing "key"');
  const ops = Object.keys(rest);
  if (ops.length !== 1) fail(`expected exactly one operator (${FILTER_OPS.join(", ")}), found ${ops.length}`);
  const op = ops[0] as FilterOp;
  if (!FILTER_OPS.includes(op)) fail(`unknown operator '${op}' (use ${FILTER_OPS.join(", ")})`);
  const raw = rest[op];
  const scalar = (v: unknown) =>
    ["string", "number", "boolean"].includes(typeof v) ? String(v) : fail(`'${op}' needs a string, number or boolean`);
  const values = op === "in" ? (Array.isArray(raw) && raw.length ? raw.map(scalar) : fail("'in' needs a non-empty list")) : [scalar(raw)];
  const problem = termProblem(key, op, values);
  if (problem) fail(problem);
  return { kind: "term", key, op, values };
}

/** Why a term cannot be evaluated (bad key, operator or value for its key), or undefined. */
function termProblem(key: string, op: FilterOp, values: string[]): string | undefined {
  if (!KEY.test(key)) return `invalid key '${key}'`;
  const type = BUILT_IN[key];
  if (!type) return undefined;
  if (!ALLOWED_OPS[type].includes(op)) return `'${key}' does not support ${op} (use ${ALLOWED_OPS[type].join(", ")})`;
  const ranged = op === "eq" || op === "ne" || op === "in";
  for (const value of values) {
    if (type === "number" && !NUMBER.test(value)) return `'${key}' needs a number, got '${value}'`;
    if (type === "date" && !isDate(value)) return `'${key}' needs a date like 2025-01-31, got '${value}'`;
    if (type === "page" && !(ranged ? PAGES : /^\d+$/).test(value))
      return `'${key}' needs a page number${ranged ? " or range (3-5)" : ""}, got '${value}'`;
  }
  return undefined;
}

function isDate(value: string): boolean {
  return DATE.test(value) && !Number.isNaN(Date.parse(value.length === 4 ? `${value}-01-01` : value.length === 7 ? `${value}-01` : value));
}

const FILTER_HINT = `e.g. tags=rust format in (md|pdf) modified>=2025-01-01 title~"borrow" (see README, Filters)`;

// ---- SQL ------------------------------------------------------------------------------------------------

/** The filter as a condition over `documents d` joined with `fragments f`, with bound parameters. */
export function filterSql(filter: Filter, scope: FilterScope): SqlCondition {
  const params: (string | number)[] = [];
  const bind = (value: string | number) => {
    params.push(value);
    return "?";
  };
  const node = (f: Filter): string => {
    if (f.kind === "term") return termSql(f, bind, scope);
    if (f.items.length === 0) return "1";
    const joined = f.items.map(node).join(f.kind === "all" ? " AND " : " OR ");
    return f.kind === "none" ? `NOT (${joined})` : `(${joined})`;
  };
  const sql = node(filter);
  return { sql, params };
}

type Bind = (value: string | number) => string;

function termSql(term: FilterTerm, bind: Bind, scope: FilterScope): string {
  if (term.op === "ne") return `NOT ${termSql({ ...term, op: "eq" }, bind, scope)}`;
  if (term.op === "in") return `(${term.values.map((value) => termSql({ ...term, op: "eq", values: [value] }, bind, scope)).join(" OR ")})`;
  const value = term.values[0]!;
  switch (BUILT_IN[term.key]) {
    case "glob":
      return term.op === "contains" ? textCompare("d.path", "contains", value, bind) : globSql(value, bind, scope);
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
  if (op === "eq") return `lower(${column}) = lower(${bind(value)})`;
  if (op === "contains") return `instr(lower(${column}), lower(${bind(value)})) > 0`;
  return `${column} ${SQL_OPS[op]} ${bind(value)}`;
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
 * A path glob. As in .gitignore, a glob without a slash (`*.md`) matches a document's base name at any depth; one
 * with a slash matches the path from the repository's root (`notes/*.md` only directly in notes/).
 */
function globSql(pattern: string, bind: Bind, scope: FilterScope): string {
  const glob = new Bun.Glob(pattern);
  const subject = pattern.includes("/") ? (path: string) => path : (path: string) => path.slice(path.lastIndexOf("/") + 1);
  const ids = scope
    .documentPaths()
    .filter((d) => glob.match(subject(d.path)))
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
 * A front-matter field: a list matches when any element does. The value's form picks the comparison: a number
 * compares numbers, a date (2025-01-31…) compares ISO text by prefix, anything else compares text.
 */
function metadataSql(term: FilterTerm, value: string, bind: Bind): string {
  const path = `$.${term.key
    .split(".")
    .map((part) => JSON.stringify(part))
    .join(".")}`;
  const source = bind(path); // bound first: its placeholder comes first
  const text = "CASE m.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE m.value END";
  const date = DATE.test(value) && value.includes("-"); // a bare year is a number here (`year>=2020`)
  let test: string;
  if (term.op === "contains" || (term.op === "eq" && !date)) test = textCompare(text, term.op, value, bind);
  else if (date) test = `m.type = 'text' AND ${prefixCompare("m.value", term.op, value, bind)}`;
  else if (NUMBER.test(value)) test = `m.type IN ('integer', 'real') AND m.value ${SQL_OPS[term.op]} ${bind(Number(value))}`;
  else test = `m.type = 'text' AND ${textCompare("m.value", term.op, value, bind)}`;
  return `EXISTS (SELECT 1 FROM json_each(d.metadata, ${source}) AS m WHERE ${test})`;
}
