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
 * subsections on their own topic ("streams": 1st → 5th). An index where no fragment has a heading below its title
 * (SciFact's abstracts, where the title for every fragment cost 0.002 nDCG@10; a folder of one-heading notes) is
 * left as BM25 ranks it (Store.mayHaveHeadings). docs/benchmarks.md ("Questions
 * over documentation") has the measurements.
 *
 * The boost is a function of the fragment and the query alone, so a filtered search scores as the unfiltered one
 * does. The boosted list is fixed a block of BLOCK results at a time, each block from BM25's best to a depth set by
 * the block alone (see boostHeadings), so a deeper list only appends to a shorter one: pages concatenate.
 */
import { isCodeFormat } from "../file-types.ts";
import { identifierParts } from "../identifiers.ts";
import type { Store } from "../store/store.ts";
import { HEADING_SEPARATOR } from "../store/store.ts";
import { splitCjk, stem, WORD } from "../text.ts";
import { termIdfs } from "./calibration.ts";
import type { ParsedQuery } from "./query.ts";
import { FUSION_DEPTH, type Ranked } from "./fusion.ts";

/** How much a heading that holds all of the query's words adds (0.25: ×1.25). */
export const HEADING_BOOST = 0.25;

/** Results are fixed this many at a time: the step in which searches rank deeper (search.ts, rankingDepth). */
const BLOCK = FUSION_DEPTH;

/**
 * How deep BM25 is ranked for the block ending at result n: from DEPTH_FACTOR × n, doubled while a fragment below
 * could still rise into the block (its BM25 score × the largest boost reaches the block's last score), up to
 * MAX_DEPTH_FACTOR × n. Twice the depth was exact for 102 of the 108 lists of the documentation questions (the other
 * 6 by four times). The limit is for near-equal scores (random words), where ranking on until nothing below could rise
 * cost a 100k-fragment index 6 ms a query at p50; past it a block is BM25's best within that depth.
 */
const DEPTH_FACTOR = 2;
const MAX_DEPTH_FACTOR = 8;

/**
 * The best `depth` of a BM25 ranking with headings weighed in. `rank(n)` gives BM25's best n (by score). Block by
 * block, each takes the best BLOCK of what its depth of BM25 holds that no block before took; as every block's depth
 * depends on the block alone, never on `depth`, the list for a larger depth starts with the list for a smaller one.
 */
export function boostHeadings<List extends { hits: Ranked[]; total?: number }>(
  store: Store,
  parsed: ParsedQuery,
  depth: number,
  rank: (depth: number) => List,
): List {
  const weigh = headingWeigher(store, parsed);
  if (!weigh) return rank(depth);
  // One past the last block's first depth: its check reads the score below it.
  const bm25 = new Deepening(rank, depth * DEPTH_FACTOR + 1);
  const waiting = new BoostedHeap();
  let pushed = 0; // BM25's best `pushed` are in `waiting` or taken
  const pushTo = (n: number) => {
    const hits = bm25.best(n);
    const factors = weigh(hits.slice(pushed));
    for (let i = pushed; i < hits.length; i++) waiting.push({ id: hits[i]!.id, score: hits[i]!.score * factors[i - pushed]!, i });
    pushed = Math.max(pushed, hits.length);
  };
  const taken: Ranked[] = [];
  for (let end = BLOCK; taken.length < depth; end += BLOCK) {
    let reach = end * DEPTH_FACTOR;
    pushTo(reach);
    for (;;) {
      const block = waiting.popMany(end - taken.length);
      // The best score BM25 has below what was weighed: no fragment there can beat the block's last by more than
      // the largest boost.
      const below = bm25.scoreAt(pushed);
      const last = block.at(-1)?.score;
      const settled = below === undefined || last === undefined || below * (1 + HEADING_BOOST) <= last;
      if (settled || reach >= end * MAX_DEPTH_FACTOR) {
        taken.push(...block.map(({ id, score }) => ({ id, score })));
        break;
      }
      for (const hit of block) waiting.push(hit);
      reach *= 2;
      pushTo(reach);
    }
    if (waiting.size === 0 && bm25.complete(pushed)) break;
  }
  const ranked = bm25.list();
  // All of BM25's matches fetched: their count is the total.
  return { ...ranked, hits: taken.slice(0, depth), total: bm25.complete(pushed) ? pushed : ranked.total };
}

/** BM25's ranking, ranked again deeper (twice as deep as the deepest asked) when a deeper part is asked for. */
class Deepening<List extends { hits: Ranked[] }> {
  private ranked: List;
  private asked: number;

  constructor(
    private readonly rank: (depth: number) => List,
    depth: number,
  ) {
    this.asked = depth;
    this.ranked = rank(depth);
  }

  /** BM25's best n (fewer when there are fewer matches). */
  best(n: number): Ranked[] {
    this.reach(n);
    return this.ranked.hits.slice(0, n);
  }

  /** The score of BM25's result at index n, undefined past the last match. */
  scoreAt(n: number): number | undefined {
    this.reach(n + 1);
    return this.ranked.hits[n]?.score;
  }

  /** Whether BM25 has no match past its best n. */
  complete(n: number): boolean {
    return this.scoreAt(n) === undefined;
  }

  list(): List {
    return this.ranked;
  }

  private reach(n: number): void {
    if (n <= this.asked || this.ranked.hits.length < this.asked) return; // deep enough, or every match is in
    this.asked = Math.max(n, this.asked * 2);
    this.ranked = this.rank(this.asked);
  }
}

interface Boosted extends Ranked {
  /** BM25's rank (from 0): ties of boosted scores keep BM25's order. */
  i: number;
}

/** A max-heap of boosted results: best score first, BM25's order among equals. */
class BoostedHeap {
  private readonly items: Boosted[] = [];

  get size(): number {
    return this.items.length;
  }

  push(item: Boosted): void {
    const items = this.items;
    let at = items.push(item) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!before(items[at]!, items[parent]!)) break;
      [items[at], items[parent]] = [items[parent]!, items[at]!];
      at = parent;
    }
  }

  /** The best n, best first (fewer when the heap holds fewer). */
  popMany(n: number): Boosted[] {
    const out: Boosted[] = [];
    while (out.length < n && this.items.length) out.push(this.pop());
    return out;
  }

  private pop(): Boosted {
    const items = this.items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length) {
      items[0] = last;
      let at = 0;
      for (;;) {
        const [left, right] = [2 * at + 1, 2 * at + 2];
        let best = at;
        if (left < items.length && before(items[left]!, items[best]!)) best = left;
        if (right < items.length && before(items[right]!, items[best]!)) best = right;
        if (best === at) break;
        [items[at], items[best]] = [items[best]!, items[at]!];
        at = best;
      }
    }
    return top;
  }
}

function before(a: Boosted, b: Boosted): boolean {
  return a.score > b.score || (a.score === b.score && a.i < b.i);
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
  const shares = new Map<string, number>(); // headings and titles repeat: each is read once a query
  const share = (text: string) => {
    let found = shares.get(text);
    if (found === undefined) {
      const words = wordStems(text);
      found = 0;
      for (const [term, idf] of idfs) if (words.has(term)) found += idf / mass;
      shares.set(text, found);
    }
    return found;
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
