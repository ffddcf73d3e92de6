/**
 * Why a filtered search found nothing, when the filter itself is the reason: a value no document holds
 * (`language=csharp` where code is indexed as `c_sharp`, `format=markdown` for `md`). An agent or a person who gets
 * an empty page otherwise concludes that nothing matches the question; the values that do exist say what to ask.
 */
import type { Repository } from "../repos.ts";
import { BUILT_IN_KEYS, type Filter, type FilterTerm } from "../store/filter-sql.ts";
import type { Store } from "../store/store.ts";

export interface FilterMiss {
  /** The term as written in the text form: `language=csharp`, `format in (markdown|org)`. */
  filter: string;
  key: string;
  /** Values the searched documents do hold for the key, most common first (at most `KNOWN_VALUES`); empty when no
   * document has the key at all. */
  known: string[];
}

const KNOWN_VALUES = 12;

/**
 * The equality terms every result must pass (the filter's top-level AND) that no document of the searched
 * repositories passes, on keys whose values can be listed: `format` and front-matter fields. Other keys (a path
 * glob, a title, a date) have no short list of values to offer.
 */
export function filterMisses(filter: Filter | undefined, searched: { repo: Repository; store: Store }[]): FilterMiss[] {
  return requiredTerms(filter)
    .filter((term) => (term.op === "eq" || term.op === "in") && (term.key === "format" || !BUILT_IN_KEYS[term.key]))
    .filter((term) => !searched.some(({ repo, store }) => store.admitsAny(store.compileFilter(term, repo.name))))
    .map((term) => ({ filter: termText(term), key: term.key, known: knownValues(term.key, searched) }));
}

function requiredTerms(filter: Filter | undefined): FilterTerm[] {
  if (!filter) return [];
  if (filter.kind === "term") return [filter];
  return filter.kind === "all" ? filter.items.flatMap(requiredTerms) : [];
}

function termText(term: FilterTerm): string {
  return term.op === "in" ? `${term.key} in (${term.values.join("|")})` : `${term.key}=${term.values[0]}`;
}

function knownValues(key: string, searched: { store: Store }[]): string[] {
  const values = new Set(searched.flatMap(({ store }) => store.keyValues(key, KNOWN_VALUES)));
  return [...values].slice(0, KNOWN_VALUES);
}
