/**
 * Search filters: one grammar for the CLI and MCP. The text form (`tags=rust modified>=2025-01-01 title~"borrow"`)
 * and the JSON form (`{"all":[{"key":"tags","eq":"rust"}],"any":[…],"not":[…]}`) parse into the same validated
 * tree (store/filter-sql.ts), which the store compiles to a condition its ranking queries apply inside.
 */
import { tagName } from "../convert/markdown.ts";
import { ResearcherError } from "../errors.ts";
import { fileTypeName } from "../file-types.ts";
import { lookupOf } from "../path-glob.ts";
import {
  BUILT_IN_KEYS,
  DATE,
  FILTER_OPS,
  type Filter,
  type FilterOp,
  type FilterTerm,
  type KeyType,
  MAX_FILTER_GLOBS,
  MAX_FILTER_VALUE_CHARS,
  MAX_FILTER_VALUES,
  NUMBER,
  PAGES,
} from "../store/filter-sql.ts";

export { FILTER_OPS, type Filter, type FilterOp, type FilterTerm } from "../store/filter-sql.ts";

/** The JSON form agents send. */
export interface FilterJson {
  all?: Record<string, unknown>[];
  any?: Record<string, unknown>[];
  not?: Record<string, unknown>[];
}

const TEXT_OPS: Record<string, FilterOp> = { "=": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "~": "contains" };
/** Each operator as the text form writes it, to name a term back (`page>=3`). */
export const OP_SYMBOLS = Object.fromEntries(Object.entries(TEXT_OPS).map(([symbol, op]) => [op, symbol])) as Record<
  Exclude<FilterOp, "in">,
  string
>;

const ALLOWED_OPS: Record<KeyType, readonly FilterOp[]> = {
  glob: ["eq", "ne", "contains", "in"],
  text: FILTER_OPS,
  number: ["eq", "ne", "lt", "le", "gt", "ge", "in"],
  date: ["eq", "ne", "lt", "le", "gt", "ge", "in"],
  page: ["eq", "ne", "lt", "le", "gt", "ge", "in"],
};

/** A key, or a dotted path of keys into nested front matter (`author.name`): no empty part. */
const KEY = /^[\p{L}\p{N}_][\p{L}\p{N}_-]*(?:\.[\p{L}\p{N}_-]+)*$/u;

// ---- parsing --------------------------------------------------------------------------------------------

/** Parse one filter, text or JSON; `label` names its source in errors (`--where`, `where`). */
export function parseFilter(input: string | FilterJson, label = "where"): Filter {
  const filter = typeof input === "string" ? parseFilterText(input, label) : parseFilterJson(input, label);
  // An empty filter is a mistake (an unset variable, `{}`), not "no filter": it would search everything, as an
  // empty --filter glob would, which is refused too.
  if (filter.kind === "all" && filter.items.length === 0) {
    throw new ResearcherError("USAGE", `${label} needs at least one condition (got an empty filter)`, { hint: FILTER_HINT });
  }
  return filter;
}

/**
 * A filter of more than MAX_FILTER_VALUES values (over all its terms and `in` lists), more than MAX_FILTER_GLOBS
 * path globs, or with a value longer than MAX_FILTER_VALUE_CHARS, is refused, naming the bound (MCP's JSON form had
 * no bound on a value's length).
 */
function checkSize(filter: Filter, label: string): Filter {
  const count = (f: Filter): number => (f.kind === "term" ? f.values.length : f.items.reduce((sum, item) => sum + count(item), 0));
  const longest = (f: Filter): number =>
    f.kind === "term" ? Math.max(0, ...f.values.map((value) => String(value).length)) : Math.max(0, ...f.items.map(longest));
  if (longest(filter) > MAX_FILTER_VALUE_CHARS) {
    throw new ResearcherError("USAGE", `${label}: a value holds at most ${MAX_FILTER_VALUE_CHARS} characters`, { hint: FILTER_HINT });
  }
  checkGlobs(filter, label);
  const values = count(filter);
  if (values > MAX_FILTER_VALUES) {
    throw new ResearcherError("USAGE", `${label}: ${values} values is more than one filter takes (at most ${MAX_FILTER_VALUES})`, {
      hint: "split the list and search once per part, or filter by a folder or glob (path=notes/**) instead of listing paths",
    });
  }
  return filter;
}

/**
 * How many path globs a filter holds: each is matched against every document's path (the rest are looked up:
 * pathMatcher).
 */
function pathGlobCount(f: Filter): number {
  if (f.kind !== "term") return f.items.reduce((sum, item) => sum + pathGlobCount(item), 0);
  return f.key === "path" ? f.values.filter((value) => lookupOf(String(value)) === undefined).length : 0;
}

function checkGlobs(filter: Filter, label: string): void {
  const globs = pathGlobCount(filter);
  if (globs <= MAX_FILTER_GLOBS) return;
  throw new ResearcherError("USAGE", `${label}: ${globs} path globs is more than a search takes (at most ${MAX_FILTER_GLOBS})`, {
    hint: "list paths without glob characters (any number), or match a folder with one glob (path=notes/**)",
  });
}

/**
 * Everything that must hold: the `--where` filters and the `--filter` glob, ANDed; their path globs bounded together,
 * as they are matched together (fifteen filters of a hundred globs each held a server 4 s).
 */
export function combineFilters(filters: Filter[]): Filter | undefined {
  const combined = filters.length === 0 ? undefined : filters.length === 1 ? filters[0] : ({ kind: "all", items: filters } as Filter);
  if (combined) checkGlobs(combined, "the filters together"); // they may come from --filter as much as --where
  return combined;
}

/** `key op value` terms separated by spaces, all of which must hold. */
function parseFilterText(text: string, label = "where"): Filter {
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
    items.push({ kind: "term", key, op, values: asStored(key, values) });
  }
  return checkSize({ kind: "all", items }, label);
}

/** `{"all":[…], "any":[…], "not":[…]}`, each a list of `{"key": k, "<op>": value}` terms. */
function parseFilterJson(json: FilterJson, label = "where"): Filter {
  const fail = (where: string, what: string): never => {
    throw new ResearcherError("USAGE", `${label}: ${where ? `${where}: ` : ""}${what}`, { hint: FILTER_HINT });
  };
  if (!json || typeof json !== "object" || Array.isArray(json)) fail("", "expected a text filter or an object with all, any and not lists");
  const unknown = Object.keys(json).filter((k) => !["all", "any", "not"].includes(k));
  if (unknown.length) fail("", `unknown field '${unknown[0]}' (use all, any, not)`);
  const list = (name: "all" | "any" | "not"): Filter[] => {
    const terms = json[name] ?? [];
    if (!Array.isArray(terms)) fail(name, "expected a list of terms");
    // "At least one of none" holds for nothing: an empty `any` is a list a script forgot to fill, not "no condition".
    if (name === "any" && json.any !== undefined && terms.length === 0)
      fail(name, "needs at least one term (an empty list is left out, not sent)");
    return terms.map((term, i) => parseJsonTerm(term, (what) => fail(`${name}[${i}]`, what)));
  };
  // Every list is read, so that one that is not a list is refused rather than dropped (a dropped `not` is a filter
  // that returns exactly what was to be left out).
  const [all, any, not] = [list("all"), list("any"), list("not")];
  return checkSize(
    {
      kind: "all",
      items: [
        ...all,
        ...(any.length ? [{ kind: "any" as const, items: any }] : []),
        ...(not.length ? [{ kind: "none" as const, items: not }] : []),
      ],
    },
    label,
  );
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
  return { kind: "term", key, op, values: asStored(key, values) };
}

/**
 * Values spelled as the index stores its key's, by the rules that store them: a tag without the `#` Obsidian users
 * type it with (`tags=#papers/jit`), a format without an extension's dot (`format=.pdf`); each matched nothing
 * (s27 user U6). `tag`, Obsidian's older key, is kept as written in front matter, so its values are too.
 */
function asStored(key: string, values: string[]): string[] {
  if (key === "tags") return values.map(tagName);
  if (key === "format") return values.map(fileTypeName);
  return values;
}

/** Why a term cannot be evaluated (bad key, operator or value for its key), or undefined. */
function termProblem(key: string, op: FilterOp, values: string[]): string | undefined {
  if (!KEY.test(key)) return `invalid key '${key}'`;
  const type = BUILT_IN_KEYS[key];
  if (!type) return undefined;
  if (!ALLOWED_OPS[type].includes(op)) return `'${key}' does not support ${op} (use ${ALLOWED_OPS[type].join(", ")})`;
  const ranged = op === "eq" || op === "ne" || op === "in";
  for (const value of values) {
    if (type === "number" && !NUMBER.test(value)) return `'${key}' needs a number, got '${value}'`;
    if (type === "date" && !isDate(value)) return `'${key}' needs a date like 2025-01-31, got '${value}'`;
    if (type === "page" && !(ranged ? PAGES : /^\d+$/).test(value))
      return `'${key}' needs a page number${ranged ? " or range (3-5)" : ""}, got '${value}'`;
    if (type === "page" && ranged) {
      const problem = pageRangeProblem(key, value);
      if (problem) return problem;
    }
  }
  return undefined;
}

/**
 * Pages start at 1 and a range runs forward, as in a ref (`a.pdf:p0`, `:p5-3` are refused too): none matched nothing.
 */
function pageRangeProblem(key: string, value: string): string | undefined {
  const [first, last = first] = value.split("-").map(Number);
  if (first === 0) return `pages start at 1 ('${key}' got '${value}')`;
  if (last! < first!) return `the page range ${value} ends before it starts (write ${last}-${first})`;
  return undefined;
}

/** A date of the calendar: `2020-02-30` parses (as 1 March) and `2020-13-45` does not, but neither is a date. */
function isDate(value: string): boolean {
  if (!DATE.test(value) || Number.isNaN(Date.parse(value.length === 4 ? `${value}-01-01` : value.length === 7 ? `${value}-01` : value)))
    return false;
  const [year, month = 1, day = 1] = value.slice(0, 10).split("-").map(Number);
  const date = new Date(Date.UTC(year!, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const FILTER_HINT = `e.g. tags=rust format in (md|pdf) modified>=2025-01-01 title~"borrow" (see README, Filters)`;
