/**
 * A section whose own heading states the query's topic ranks above its siblings that merely repeat the words.
 *
 * FTS5's bm25() weighs the heading column inside one saturated term frequency over all columns, so one heading
 * occurrence is worth little beside five in a sibling's body ("The Difference Between Macros and Functions" ranked
 * 10th of ten fragments of its own chapter for "what is the difference between macros and functions"). On top of
 * BM25, a fragment's score is multiplied by 1 + HEADING_BOOST × the IDF-weighted share of the query's words in its
 * own heading: the last of its heading path (`class Parser › def feed` → `def feed`), or, for a fragment under no
 * heading (a document's opening, or a chapter whose one heading is its title), the document's title: giving the
 * title only to the openings of documents with sections put 30 one-heading Rust-book chapters below other chapters'
 * subsections on their own topic ("streams": 1st → 5th). An index without a single heading (SciFact's abstracts,
 * where the title for every fragment cost 0.002 nDCG@10) is left as BM25 ranks it. docs/benchmarks.md ("Questions
 * over documentation") has the measurements.
 *
 * The boost is a function of the fragment and the query alone, so a filtered search scores as the unfiltered one
 * does; it re-scores BM25's best twice as deep as asked (DEPTH_FACTOR).
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
 * How much deeper than asked BM25 is ranked before the boost re-scores it: a fragment BM25 ranks below that does not
 * rise into the list. With twice the depth, 102 of the 108 lists of the documentation questions were exact to their
 * 100th result (the other 6 by four times); ranking on until nothing below could rise cost a 100k-fragment index of
 * random words (near-equal scores) 6 ms a query at p50, twice the depth 1.5–2 ms (BM25's own depth, under 1 ms, gave
 * other anchors to hybrid fusion than a deeper page: a page of 4 and one of 1000 disagreed).
 */
const DEPTH_FACTOR = 2;

/** The best `depth` of a BM25 ranking with headings weighed in. `rank(n)` gives BM25's best n (by score). */
export function boostHeadings<List extends { hits: Ranked[]; total?: number }>(
  store: Store,
  parsed: ParsedQuery,
  depth: number,
  rank: (depth: number) => List,
): List {
  const weigh = headingWeigher(store, parsed);
  if (!weigh) return rank(depth);
  const ranked = rank(depth * DEPTH_FACTOR);
  const factors = weigh(ranked.hits);
  const hits = ranked.hits
    .map((hit, i) => ({ id: hit.id, score: hit.score * factors[i]!, i }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, depth)
    .map(({ id, score }) => ({ id, score }));
  // Fewer than asked for is every match: what a caller counts as the total.
  return { ...ranked, hits, total: ranked.hits.length < depth * DEPTH_FACTOR ? ranked.hits.length : ranked.total };
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
  return (hits) => {
    const rows = store.fragmentHeadings(hits.map((hit) => hit.id));
    return hits.map((hit) => {
      const row = rows.get(hit.id);
      if (!row) return 1;
      const last = row.heading.lastIndexOf(HEADING_SEPARATOR);
      const own = last < 0 ? row.heading : row.heading.slice(last + HEADING_SEPARATOR.length);
      return 1 + HEADING_BOOST * share(own ? (isCodeFormat(row.format) ? unitNames(own) : own) : row.title);
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
