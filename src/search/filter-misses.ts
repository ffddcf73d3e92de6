/**
 * Why a filtered search found nothing, when the filter itself is the reason: a value no document holds
 * (`language=csharp` where code is indexed as `c_sharp`, `format=markdown` for `md`). An agent or a person who gets
 * an empty page otherwise concludes that nothing matches the question; the values that do exist say what to ask.
 */
import type { Repository } from "../repos.ts";
import { BUILT_IN_KEYS, type Filter, type FilterTerm } from "../store/filter-sql.ts";
import type { Store } from "../store/store.ts";
import { similarNames } from "../similar.ts";
import { shortened } from "../text.ts";
import { leadingRepository } from "../path-glob.ts";
import { OP_SYMBOLS } from "./filters.ts";

export interface FilterMiss {
  /** The term as written in the text form: `language=csharp`, `format in (markdown|org)`. */
  filter: string;
  key: string;
  /** Values the searched documents do hold for the key, most common first (at most `KNOWN_VALUES`); empty when no
   * document has the key at all. */
  known: string[];
  /**
   * When no document has the key: keys spelled like it that they have (`Author` for `author`, `language` for `lang`).
   */
  similar_keys?: string[];
  /**
   * A path filter that begins with a searched repository's name (`notes/**`, `notes:src/**`): paths are inside a
   * repository's folder, so it names a folder `notes` in one. The repository it meant, to search by name instead.
   */
  repository?: string;
}

const KNOWN_VALUES = 12;
const MAX_SIMILAR_KEYS = 3;
/** Bounds on the work an empty answer adds: terms looked at, values of an `in` list, characters of a value shown. */
const MAX_TERMS = 5;
const MAX_TERM_VALUES = 20;
const MAX_VALUE_CHARS = 60;

/**
 * The equality terms every result must pass (the filter's top-level AND) that no document of the searched
 * repositories passes, on keys whose values can be listed: `format` and front-matter fields with plain values.
 * Other keys (a title, a date, a nested object) have no short list of values to offer, and a long `in` list is a
 * list of paths or ids its sender already knows: neither is looked at. A path term is named without values.
 */
export function filterMisses(filter: Filter | undefined, searched: { repo: Repository; store: Store }[]): FilterMiss[] {
  return [...valueMisses(filter, searched), ...pathMisses(filter, searched), ...pageMisses(filter, searched)];
}

function valueMisses(filter: Filter | undefined, searched: { repo: Repository; store: Store }[]): FilterMiss[] {
  return requiredTerms(filter)
    .filter((term) => (term.op === "eq" || term.op === "in") && term.values.length <= MAX_TERM_VALUES)
    .filter((term) => term.key === "format" || !BUILT_IN_KEYS[term.key])
    .slice(0, MAX_TERMS)
    .filter((term) => !searched.some(({ repo, store }) => store.admitsAny(store.compileFilter(term, repo.name))))
    .flatMap((term) => {
      const known = knownValues(term.key, searched);
      if (!known) return [];
      const miss: FilterMiss = { filter: shortened(termText(term), MAX_VALUE_CHARS * 4), key: term.key, known };
      const similar = known.length ? [] : similarKeys(term.key, searched);
      return [similar.length ? { ...miss, similar_keys: similar } : miss];
    });
}

/**
 * Path terms no document passes: a glob no path matches (`*.rs` where none is Rust, or a typo such as `[`), or one
 * that begins with a searched repository's name and a `/` or `:` (the filter's own example is `notes/**`;
 * multi-get takes `notes:src/**`), which names the repository it meant. An agent reads an empty answer as "nothing
 * about it" otherwise.
 */
function pathMisses(filter: Filter | undefined, searched: { repo: Repository; store: Store }[]): FilterMiss[] {
  const names = new Set(searched.map(({ repo }) => repo.name));
  return requiredTerms(filter)
    .filter((term) => term.key === "path" && (term.op === "eq" || term.op === "in") && term.values.length <= MAX_TERM_VALUES)
    .slice(0, MAX_TERMS)
    .filter((term) => !searched.some(({ repo, store }) => store.admitsAny(store.compileFilter(term, repo.name))))
    .map((term) => {
      const miss: FilterMiss = { filter: shortened(termText(term), MAX_VALUE_CHARS * 4), key: "path", known: [] };
      const repository = term.values.map((value) => leadingRepository(String(value), names)?.repository).find(Boolean);
      return repository ? { ...miss, repository } : miss;
    });
}

/**
 * Page terms where no searched document has pages: only a PDF's or a scanned image's fragments do, and `page=2` over
 * EPUBs, HTML or markdown found nothing without a word (s27 user U7). Each is named without values.
 */
function pageMisses(filter: Filter | undefined, searched: { repo: Repository; store: Store }[]): FilterMiss[] {
  const terms = requiredTerms(filter)
    .filter((term) => term.key === "page" && term.op !== "ne")
    .slice(0, MAX_TERMS);
  if (terms.length === 0) return [];
  const paged: FilterTerm = { kind: "term", key: "page", op: "ge", values: ["1"] };
  if (searched.some(({ repo, store }) => store.admitsAny(store.compileFilter(paged, repo.name)))) return [];
  return terms.map((term) => ({ filter: shortened(termText(term), MAX_VALUE_CHARS * 4), key: "page", known: [] }));
}

/** Keys near `key` (similarNames) that the documents have, or that every document has (built in). */
function similarKeys(key: string, searched: { store: Store }[]): string[] {
  const keys = [...searched.flatMap(({ store }) => store.metadataKeys(1000)), ...Object.keys(BUILT_IN_KEYS)];
  return similarNames(key, keys).slice(0, MAX_SIMILAR_KEYS);
}

function requiredTerms(filter: Filter | undefined): FilterTerm[] {
  if (!filter) return [];
  if (filter.kind === "term") return [filter];
  return filter.kind === "all" ? filter.items.flatMap(requiredTerms) : [];
}

function termText(term: FilterTerm): string {
  return term.op === "in" ? `${term.key} in (${term.values.join("|")})` : `${term.key}${OP_SYMBOLS[term.op]}${term.values[0]}`;
}

/** The most common values over all the repositories, each cut short; null when the key holds objects. */
function knownValues(key: string, searched: { store: Store }[]): string[] | null {
  const counts = new Map<string, number>();
  for (const { store } of searched) {
    const values = store.keyValues(key, KNOWN_VALUES);
    if (values === null) return null;
    for (const { value, count } of values) counts.set(value, (counts.get(value) ?? 0) + count);
  }
  return [...counts]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, KNOWN_VALUES)
    .map(([value]) => shortened(value, MAX_VALUE_CHARS));
}
