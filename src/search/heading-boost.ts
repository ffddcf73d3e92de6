/**
 * A section whose own heading states the query's topic ranks above its siblings that merely repeat the words.
 *
 * FTS5's bm25() weighs the heading column inside one saturated term frequency over all columns, so one heading
 * occurrence is worth little beside five in a sibling's body ("The Difference Between Macros and Functions" ranked
 * 10th of ten fragments of its own chapter for "what is the difference between macros and functions"). On top of
 * BM25, a fragment's score is multiplied by 1 + HEADING_BOOST × the IDF-weighted share of the query's words in its
 * own heading: the last of its heading path (`class Parser › def feed` → `def feed`), or, for the untitled opening
 * of a document that has sections, the document's title. A document without sections gets nothing from its title:
 * the title column already counts in BM25, and every one of its fragments would rise alike (on SciFact's abstracts
 * that cost 0.002 nDCG@10). docs/benchmarks.md ("Questions over documentation") has the measurements.
 *
 * The boost is a function of the fragment and the query alone, so a filtered search scores as the unfiltered one
 * does, and the top of the list is exact: BM25 is ranked deeper until nothing below can rise into it.
 */
import { isCodeFormat } from "../file-types.ts";
import { identifierParts } from "../identifiers.ts";
import type { Store } from "../store/store.ts";
import { HEADING_SEPARATOR } from "../store/store.ts";
import { splitCjk, stem, WORD } from "../text.ts";
import { termIdfs } from "./calibration.ts";
import type { ParsedQuery } from "./query.ts";
import type { Ranked } from "./fusion.ts";

/** How much a heading that holds all of the query's words adds (0.25: ×1.25). */
export const HEADING_BOOST = 0.25;

/**
 * Rank at most this many times deeper than asked for an exact top. Real text needs one step (2×: 102 of 108 lists
 * of the documentation questions, the rest 4×); a list of near-equal scores needs more (16× in the synthetic test
 * corpus). Past it, a fragment further down keeps its BM25 place below the boosted ones.
 */
const MAX_WIDENING = 32;

/**
 * The best `depth` of a BM25 ranking with headings weighed in. `rank(n)` gives BM25's best n (by score); the
 * `total` it found, when it found fewer than asked, is all there is.
 */
export function boostHeadings<List extends { hits: Ranked[]; total?: number }>(
  store: Store,
  parsed: ParsedQuery,
  depth: number,
  rank: (depth: number) => List,
): List {
  const weigh = headingWeigher(store, parsed);
  if (!weigh) return rank(depth);
  for (let fetch = depth * 2; ; fetch *= 2) {
    const ranked = rank(fetch);
    const factors = weigh(ranked.hits);
    const boosted = ranked.hits
      .map((hit, i) => ({ id: hit.id, score: hit.score * factors[i]!, i }))
      .sort((a, b) => b.score - a.score || a.i - b.i);
    const top = boosted.slice(0, depth).map(({ id, score }) => ({ id, score }));
    const exhausted = ranked.hits.length < fetch;
    // Anything not fetched scores at most the last fetched one's BM25, raised by the whole boost.
    const ceiling = (ranked.hits.at(-1)?.score ?? 0) * (1 + HEADING_BOOST);
    const settled = exhausted || (top.length === depth && top.at(-1)!.score >= ceiling) || fetch >= depth * MAX_WIDENING;
    if (settled) return { ...ranked, hits: top, total: exhausted ? ranked.hits.length : ranked.total };
  }
}

/**
 * A function from BM25 hits to their boost factors, or null when nothing can be boosted: the query has no word to
 * weigh, or the index has no headings.
 */
function headingWeigher(store: Store, parsed: ParsedQuery): ((hits: Ranked[]) => number[]) | null {
  const stems = [...new Set(parsed.optional.flatMap((term) => (term.stem ? [term.stem] : [])))];
  if (stems.length === 0 || !store.mayHaveHeadings()) return null;
  const idfs = termIdfs(store, stems);
  const mass = [...idfs.values()].reduce((sum, idf) => sum + idf, 0);
  const share = (text: string) => {
    const words = wordStems(text);
    let found = 0;
    for (const [term, idf] of idfs) if (words.has(term)) found += idf;
    return found / mass;
  };
  const sections = new Map<number, boolean>();
  return (hits) => {
    const rows = store.fragmentHeadings(hits.map((hit) => hit.id));
    return hits.map((hit) => {
      const row = rows.get(hit.id);
      if (!row) return 1;
      const last = row.heading.lastIndexOf(HEADING_SEPARATOR);
      const own = last < 0 ? row.heading : row.heading.slice(last + HEADING_SEPARATOR.length);
      if (own) return 1 + HEADING_BOOST * share(isCodeFormat(row.format) ? unitNames(own) : own);
      const title = share(row.title);
      if (title === 0) return 1;
      if (!sections.has(row.documentId)) sections.set(row.documentId, store.hasSections(row.documentId));
      return sections.get(row.documentId) ? 1 + HEADING_BOOST * title : 1;
    });
  };
}

/**
 * The names in a code fragment's heading (`function parseHeader, function other` → `parseHeader other`): the
 * keywords (`def`, `function`, `class`) would match the words of any question about code.
 */
function unitNames(heading: string): string {
  return heading
    .split(", ")
    .map((label) => label.slice(label.lastIndexOf(" ") + 1))
    .join(" ");
}

/** The stems a heading's words index as (identifiers also by their parts, as ftsText adds them). */
function wordStems(text: string): Set<string> {
  const words = `${text} ${identifierParts(text)}`.match(WORD) ?? [];
  return new Set(words.flatMap(splitCjk).map(stem));
}
