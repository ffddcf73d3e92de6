/**
 * User text → a safe FTS5 MATCH expression. Every input is valid: FTS5 syntax characters never reach SQLite
 * unquoted. Supported: `"exact phrase"` (required), `-word` / `-"phrase"` (excluded), `prefix*`; every other
 * word is optional and ranked by BM25, so natural-language questions work without all words matching.
 *
 * Size: FTS5 refuses an expression more than 256 levels deep, and every term costs a scan. Exclusions are one
 * `NOT (a OR b …)` (OR lists stay flat), at most MAX_EXCLUDED of them and MAX_REQUIRED phrases, or the query is
 * INVALID_INPUT (dropping one would change what matches); optional words past MAX_OPTIONAL are not searched
 * (they only rank).
 */
import { ResearcherError } from "../errors.ts";
import { CODE_EXTENSIONS, FILE_TYPES } from "../file-types.ts";
import { expandQueryWord, snakeWords } from "../identifiers.ts";
import { foldCase, searchForm, splitWords, stem, WORD } from "../text.ts";

export const MAX_EXCLUDED = 100;
const MAX_REQUIRED = 100;
const MAX_OPTIONAL = 200;
/**
 * Words the phrases of a query may hold in all: quoted phrases, runs of CJK characters (searched as phrases of their
 * characters) and `-words` of many parts. FTS5 matches a phrase position by position, and one of 8,000 words of a
 * common word held a server 51 s in 200,000 notes, all others waiting (s19 hostile #9); 100 phrases of 64 words, 45 s
 * (s19 retest). 256 words of such a word take about a second there, and a sentence of Japanese fits.
 */
export const MAX_PHRASE_WORDS = 256;

export interface ParsedQuery {
  /** The FTS5 expression, or null when nothing searchable is left (e.g. only punctuation or exclusions). */
  match: string | null;
  /** The parts of `match`, so search can rebuild it without terms too common to matter. */
  required: string[];
  /** Optional terms; `stem` is set for single words (what FTS5 indexed), null for phrases and prefixes. */
  optional: { fts: string; stem: string | null }[];
  excluded: string[];
  /** What snippets highlight: stems of searched words and raw prefixes. */
  highlight: { stems: Set<string>; prefixes: string[] };
  /**
   * The query when it is one identifier (`rmtree`, `parseHeader`, `_Pickler`, `$ZodType`), alone or in a question's
   * frame (`where is rmtree defined`), as symbolKey spells it: a code unit of exactly that name is what it asks for
   * (heading-boost.ts).
   */
  symbol?: string;
}

/** Function words that carry no topic; dropped from optional terms (kept when a query has nothing else). */
const STOPWORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between
  both but by can could did do does doing down during each few for from further had has have having he her here hers
  herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once
  only or other our ours ourselves out over own same she should so some such than that the their theirs them
  themselves then there these they this those through to too under until up very was we were what when where which
  while who whom why will with would you your yours yourself yourselves`.split(/\s+/),
);

type Item = { kind: "word" | "phrase" | "prefix"; tokens: string[]; required: boolean; excluded: boolean };

export function parseQuery(text: string): ParsedQuery {
  const items = tokenizeQuery(text);
  // A phrase of one word is a word (`-draft` among them): only word positions matched one after another cost.
  const quoted = items
    .filter((item) => item.kind === "phrase" && item.tokens.length > 1)
    .reduce((sum, item) => sum + item.tokens.length, 0);
  if (quoted > MAX_PHRASE_WORDS)
    throw new ResearcherError(
      "USAGE",
      `a query's phrases (quoted, or runs of CJK characters) can hold at most ${MAX_PHRASE_WORDS} words in all, this one has ${quoted}`,
      { hint: "search with the most telling part" },
    );
  const positive = items.filter((item) => !item.excluded);
  const optional = positive.filter((item) => !item.required);
  const meaningful = optional.filter((item) => item.kind !== "word" || !isStopword(item.tokens));
  const kept = meaningful.length > 0 ? meaningful : optional;
  const required = positive.filter((item) => item.required);
  const excluded = items.filter((item) => item.excluded);

  const seen = new Set<string>();
  const optionalTerms = kept.flatMap((item) => {
    const fts = ftsItem(item);
    if (seen.has(fts)) return [];
    seen.add(fts);
    return [{ fts, stem: item.kind === "word" ? stem(item.tokens[0]!) : null }];
  });
  const requiredTerms = atMost(required.map(ftsItem), MAX_REQUIRED, "quoted phrases");
  const excludedTerms = atMost(excluded.map(ftsItem), MAX_EXCLUDED, "exclusions (-word)");
  optionalTerms.splice(MAX_OPTIONAL);
  const match = buildMatch(
    requiredTerms,
    optionalTerms.map((t) => t.fts),
    excludedTerms,
  );

  const stems = new Set<string>();
  const prefixes: string[] = [];
  for (const item of [...required, ...kept]) {
    if (item.kind === "prefix") prefixes.push(foldCase(item.tokens[0]!));
    else for (const token of item.tokens) stems.add(stem(token));
  }
  // A word of combining marks alone folds to nothing, which would highlight every word (or an empty range).
  stems.delete("");
  const highlight = { stems, prefixes: prefixes.filter(Boolean) };
  const symbol = symbolOf(text);
  return { match, required: requiredTerms, optional: optionalTerms, excluded: excludedTerms, highlight, ...(symbol ? { symbol } : {}) };
}

/**
 * A code symbol's name in the form two spellings of it share: `getLogger` and `getlogger`, `$ZodType` and
 * `ZodType` (the index reads `$` as a space). Underscores stay: `open` is not `_open`, nor `getsource` `get_source`.
 */
export function symbolKey(name: string): string {
  return name.replace(/\$/g, "").toLowerCase();
}

/**
 * The query as a symbol's key, when it is one identifier of letters, digits, `_` and `$`, alone or framed by
 * SYMBOL_FRAME's words: "where is Formatter defined" asks for `class Formatter` as `Formatter` does, and lost it
 * among docstrings that say "defined" (s24 agent A1: 82% first against 93%). Qualified, it is its last part
 * (`logging.Formatter`: s24 retest N6).
 */
function symbolOf(text: string): string | undefined {
  // Quotes, brackets and punctuation around a word, and a call's parentheses (`rmtree()`, `urlopen(url)`), are not
  // the name: `(rmtree)` is rmtree.
  const words = text
    .trim()
    .split(/\s+/)
    .map((word) => {
      const bare = word.replace(/^[`'(]+/, "");
      const name = bare.replace(/\(.*$/, "").replace(/[`'),.:;!?]+$/, "");
      return { name, called: name.length < bare.length && bare[name.length] === "(" };
    })
    .filter((word) => word.name);
  const named = words.filter((word) => !SYMBOL_FRAME.has(word.name.toLowerCase()));
  // One frame word alone is a name too (`find`, `type`), as any one word is.
  const [name] = named.length === 1 ? named : words.length === 1 ? words : [];
  // A qualified name (`json.loads`, `logging.Formatter`, `Vec::push`) names its last part: what a definition is
  // headed. A file name is no qualified name: `package.json` boosted `def json` (s25 review R1); a call is one
  // (`res.json()`), and so is a name of `::` or `#` (s25b review F9).
  const parts = name?.name.split(/\.|::|#/) ?? [];
  const last = parts.at(-1) ?? "";
  const file = !name?.called && !/::|#/.test(name?.name ?? "") && FILE_ENDINGS.has(last.toLowerCase());
  // Nor is an abbreviation: `e.g.`, `i.e.`.
  if (parts.length > 1 && (file || last.length < 2)) return undefined;
  const key = symbolKey(last);
  return key && parts.every((part) => IDENTIFIER.test(part)) ? key : undefined;
}

const IDENTIFIER = /^[\p{L}_$][\p{L}\p{N}_$]*$/u;

/**
 * What a file name ends in, for telling `package.json` from `json.loads`: the types read, and data and config files'.
 */
const FILE_ENDINGS = new Set([
  ...FILE_TYPES,
  ...CODE_EXTENSIONS,
  // (Not `log` or `lock`: `console.log`, `threading.Lock` are members far more often than files.)
  ...["json", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "csv", "tsv", "png", "jpg", "jpeg", "gif"],
  ...["svg", "tif", "tiff", "zip", "gz", "tar", "rst", "tex", "bib"],
]);

/**
 * The words of a question about one code symbol around its name: where it is defined, what kind it is, how it works,
 * what it returns or raises, what it takes (`does urlopen raise`, `urlopen arguments`: s24 code user C2).
 */
const SYMBOL_FRAME = new Set(
  `where is are the a an defined define definition declared declaration implemented implementation class function
  method def fn func struct enum trait interface type constant const variable how does do work works what find show me
  source code of for in
  return returns raise raises throw throws argument arguments args parameter parameters params signature take takes
  it when why with use used usage called call calls`.split(/\s+/),
);

/**
 * What a fragment must satisfy in every mode, vector lists included: each "quoted phrase", and no -word. `admit`:
 * the fragments `match` matches are the ones allowed (phrases), else the ones ruled out (exclusions alone, which
 * FTS5 cannot match by themselves). Null when the query has neither.
 */
export function queryConstraint(parsed: ParsedQuery): { match: string; admit: boolean } | null {
  if (parsed.required.length > 0) return { match: buildMatch(parsed.required, [], parsed.excluded)!, admit: true };
  if (parsed.excluded.length > 0) return { match: anyOf(parsed.excluded), admit: false };
  return null;
}

/**
 * The text a model embeds for a query: its words and phrases without the -words (embedding `-coffee` would pull
 * the query towards coffee) and without quote marks. Empty when nothing positive is left.
 */
export function embeddingQuery(text: string): string {
  const kept: string[] = [];
  for (const m of text.matchAll(QUERY_PARTS)) {
    if (m[3] === undefined) {
      if (m[1] !== "-" && m[2]?.trim()) kept.push(m[2].trim());
    } else if (!isExclusion(m[3])) kept.push(m[3]);
  }
  return kept.join(" ");
}

/** A query's parts: `-"phrase"` or `"phrase"` (sign, text; a quote left open closes at the end), or a word. */
const QUERY_PARTS = /(-?)"([^"]*)"?|(\S+)/gu;

/** `-word`: a word the results must not hold (a lone `-` is no exclusion). */
const isExclusion = (raw: string) => raw.length > 1 && raw.startsWith("-");

/**
 * `required AND (required OR optional OR optional) NOT (excluded OR excluded)`, or null when nothing positive is
 * left. The optional words rank and admit nothing of their own: a group of them alone would be a second requirement,
 * and a quoted error message with one word of context found nothing where that word was missing (s24 agent A4).
 * The required terms in the group keep it true wherever they match; bm25() counts them twice (every result holds them).
 */
export function buildMatch(required: string[], optional: string[], excluded: string[]): string | null {
  const parts = [...required];
  if (optional.length > 0) parts.push(anyOf([...required, ...optional]));
  if (parts.length === 0) return null;
  return parts.join(" AND ") + (excluded.length > 0 ? ` NOT ${anyOf(excluded)}` : "");
}

const anyOf = (terms: string[]) => (terms.length === 1 ? terms[0]! : `(${terms.join(" OR ")})`);

function atMost(terms: string[], limit: number, what: string): string[] {
  if (terms.length <= limit) return terms;
  throw new ResearcherError("USAGE", `a query can have at most ${limit} ${what}, this one has ${terms.length}`, {
    hint: "search with fewer of them",
  });
}

function isStopword(tokens: string[]): boolean {
  return tokens.length === 1 && STOPWORDS.has(foldCase(tokens[0]!));
}

/** Split user text into words, quoted phrases, prefixes and exclusions. Unbalanced quotes close at the end. */
function tokenizeQuery(text: string): Item[] {
  const items: Item[] = [];
  for (const m of text.matchAll(QUERY_PARTS)) {
    if (m[3] === undefined) {
      const tokens = wordGroups(m[2] ?? "").flat();
      if (tokens.length) items.push({ kind: "phrase", tokens, required: true, excluded: m[1] === "-" });
      continue;
    }
    let raw = m[3];
    const excluded = isExclusion(raw);
    if (excluded) raw = raw.slice(1);
    const groups = wordGroups(raw);
    if (groups.length === 0) continue;
    if (raw.endsWith("*") && groups.length === 1 && groups[0]!.length === 1 && !/[^\p{L}\p{N}\p{M}*]/u.test(raw)) {
      items.push({ kind: "prefix", tokens: groups[0]!, required: false, excluded });
    } else if (excluded) {
      items.push({ kind: "phrase", tokens: groups.flat(), required: false, excluded });
    } else {
      // `covid-19` searches `covid` and `19` as separate words (better on natural questions than a phrase);
      // a CJK run stays a phrase of its characters, which is how the index stores it.
      // `parse_header` also searches the whole identifier, as the index holds it (`parseheader`): written either way,
      // the identifier comes before text that merely has its words.
      if (raw.includes("_"))
        for (const whole of snakeWords(raw)) items.push({ kind: "word", tokens: [whole], required: false, excluded: false });
      for (const tokens of groups) {
        items.push({ kind: tokens.length > 1 ? "phrase" : "word", tokens, required: false, excluded });
        // `parseHeader` also searches `parse` and `header` (the index holds the parts of compound words: ftsText),
        // so it finds `parse_header` too, ranked after itself (the whole word is rarer).
        if (tokens.length === 1 && !excluded) {
          for (const part of expandQueryWord(tokens[0]!).slice(1))
            items.push({ kind: "word", tokens: [part], required: false, excluded: false });
        }
      }
    }
  }
  return items;
}

/**
 * Word runs of the text in the index's form (searchForm: soft hyphens dropped, NFKC); a CJK run becomes a group of its
 * characters. Applied to each part after the query's syntax is read, so full-width punctuation stays punctuation:
 * `東京 －大阪` searches both words rather than excluding the second (s19 retest).
 */
function wordGroups(text: string): string[][] {
  return (searchForm(text).match(WORD) ?? []).map(splitWords);
}

function ftsItem(item: Item): string {
  const quoted = `"${item.tokens.join(" ").replaceAll('"', '""')}"`;
  return item.kind === "prefix" ? `${quoted}*` : quoted;
}
