/**
 * A section whose own heading states the query's topic ranks above its siblings that merely repeat the words.
 *
 * FTS5's bm25() weighs the heading column inside one saturated term frequency over all columns, so one heading
 * occurrence is worth little beside five in a sibling's body ("The Difference Between Macros and Functions" ranked
 * 10th of ten fragments of its own chapter for "what is the difference between macros and functions"). On top of
 * BM25, a fragment's score is multiplied by 1 + HEADING_BOOST × the IDF-weighted share of the query's words in its
 * own heading: the last of its heading path (`class Parser › def feed` → `def feed`; in code also an enclosing unit
 * whose definition the fragment holds, see definedNames), or, for a fragment under no
 * heading (a document's opening, or a chapter whose one heading is its title), the document's title: giving the
 * title only to the openings of documents with sections put 30 one-heading Rust-book chapters below other chapters'
 * subsections on their own topic ("streams": 1st → 5th). An index where no fragment has a heading below its title
 * (SciFact's abstracts, where the title for every fragment cost 0.002 nDCG@10; a folder of one-heading notes) is
 * left as BM25 ranks it (Store.mayHaveHeadings). docs/benchmarks.md ("Questions
 * over documentation") has the measurements.
 *
 * A short fragment that holds none of the query's words in its own text or heading, and matches only through what it
 * shares with its neighbours (the document's title, its parent headings), is scored as a fragment of average length
 * holding the same would be. FTS5 normalises a row by its whole length, so the shortest fragment of a document won
 * on the title alone: "Cover Image" led `Moby Dick`, a page header holding none of the question's words led the
 * abstract that held them all (s22 user F2).
 *
 * The boost is a function of the fragment and the query alone, so a filtered search scores as the unfiltered one
 * does. The boosted list is fixed a block of BLOCK results at a time, each block from BM25's best to a depth set by
 * the block alone (see boostHeadings), so a deeper list only appends to a shorter one: pages concatenate.
 */
import { isCodeFormat } from "../file-types.ts";
import { identifierParts } from "../identifiers.ts";
import type { FragmentHeadings, Store } from "../store/store.ts";
import { HEADING_SEPARATOR } from "../store/store.ts";
import { labelName, splitLabels, splitWords, stem, WORD } from "../text.ts";
import { BM25_WEIGHTS, K1 } from "./bm25.ts";
import { termIdfs } from "./calibration.ts";
import { type ParsedQuery, symbolKey } from "./query.ts";
import { FUSION_DEPTH, type Ranked } from "./fusion.ts";

/** How much a heading that holds all of the query's words adds (0.25: ×1.25). */
export const HEADING_BOOST = 0.25;

/**
 * How much more a code fragment counts that defines a unit named exactly as the query, when the query is one
 * identifier (×2): what a symbol search asks for first. Helpers named with it (`_rmtree_isdir` for `rmtree`) and
 * fragments that call it ranked above the definition (`bun bench/symbols.ts`: 0.5 and above do the same there).
 */
const SYMBOL_BOOST = 1;

/** Results are fixed this many at a time: the step in which searches rank deeper (search.ts, rankingDepth). */
const BLOCK = FUSION_DEPTH;

/**
 * How deep BM25 is ranked for the block ending at result n: DEPTH_FACTOR × n. A fragment BM25 ranks below that does
 * not rise into the block. Twice the depth was exact for 102 of the 108 lists of the documentation questions (the
 * other 6 by four times). Ranking on until nothing below could rise was exact but cost a 100k-fragment index of random
 * words (near-equal scores) 6 ms a query at p50, and doubling each block's depth while a fragment below could still
 * rise, up to eight times, took 1M fragments of random words from 7 to 19 ms of CPU a query (`bun bench/xapian.ts
 * 1m`), for no change on the documentation questions.
 */
const DEPTH_FACTOR = 2;

/**
 * Fragments at most this long are looked at for a match through shared context alone (about 100 words): a longer
 * one is at least of average length, where FTS5's normalisation gives the shared words no more than their due.
 */
const SHORT_CHARS = 600;

/**
 * The best `depth` of a BM25 ranking with headings weighed in. `rank(n)` gives BM25's best n (by score). Block by
 * block, each takes the best BLOCK of what BM25's best DEPTH_FACTOR × its end hold that no block before took; as a
 * block's depth depends on the block alone, never on `depth`, the list for a larger depth starts with the list for a
 * smaller one (pages concatenate).
 */
export function boostHeadings<List extends { hits: Ranked[]; total?: number }>(
  store: Store,
  parsed: ParsedQuery,
  depth: number,
  rank: (depth: number) => List,
): List {
  const reweigh = headingWeigher(store, parsed);
  if (!reweigh) return rank(depth);
  const blocks = Math.ceil(depth / BLOCK);
  const ranked = rank(blocks * BLOCK * DEPTH_FACTOR);
  const scores = reweigh(ranked.hits);
  const waiting = new BoostedHeap();
  const taken: Ranked[] = [];
  let pushed = 0;
  for (let end = BLOCK; end <= blocks * BLOCK && (pushed < ranked.hits.length || waiting.size > 0); end += BLOCK) {
    for (; pushed < Math.min(end * DEPTH_FACTOR, ranked.hits.length); pushed++) {
      const hit = ranked.hits[pushed]!;
      waiting.push({ id: hit.id, score: scores[pushed]!, i: pushed });
    }
    for (const { id, score } of waiting.popMany(end - taken.length)) taken.push({ id, score });
  }
  // A later block may hold a score above an earlier block's last (its depth reached further): clamped to it, so the
  // list's scores never rise. Hybrid fusion sorts by score, and pulled such a fragment into an earlier page that a
  // shallower list (an earlier page's) does not hold: pages repeated and skipped results again.
  let ceiling = Number.POSITIVE_INFINITY;
  for (const hit of taken) hit.score = ceiling = Math.min(ceiling, hit.score);
  // Fewer than asked for is every match: what a caller counts as the total.
  const complete = ranked.hits.length < blocks * BLOCK * DEPTH_FACTOR;
  return { ...ranked, hits: taken.slice(0, depth), total: complete ? ranked.hits.length : ranked.total };
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
 * A function from BM25 hits to their scores with headings weighed in, or null when nothing can be boosted: the query
 * has no word to weigh, or the index has no headings.
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
  // Phrases and prefixes have no one stem to look for in a fragment's own text: such queries keep FTS5's scores.
  const plain = parsed.required.length === 0 && parsed.optional.every((term) => term.stem);
  return (hits) => {
    const rows = store.fragmentHeadings(
      hits.map((hit) => hit.id),
      plain ? SHORT_CHARS : 0,
    );
    return hits.map((hit) => {
      const row = rows.get(hit.id);
      if (!row) return hit.score;
      const last = row.heading.lastIndexOf(HEADING_SEPARATOR);
      const own = last < 0 ? row.heading : row.heading.slice(last + HEADING_SEPARATOR.length);
      const code = isCodeFormat(row.format) && row.heading !== "";
      const defined = code ? definedNames(row) : "";
      const named = parsed.symbol !== undefined && defined.split(" ").some((name) => symbolKey(name) === parsed.symbol);
      const factor = (1 + HEADING_BOOST * share(code ? defined : own || row.title)) * (named ? 1 + SYMBOL_BOOST : 1);
      const shared = row.text === null ? undefined : sharedContextScore(row as SharedContext, own, idfs);
      return Math.min(hit.score, shared ?? hit.score) * factor;
    });
  };
}

interface SharedContext {
  title: string;
  heading: string;
  text: string;
}

/**
 * The BM25 score of a fragment that holds none of the query's words in its own text or heading, at average length
 * (FTS5's formula with the length norm at 1): its words come from the title and the parent headings. Undefined when
 * its own text or heading holds one.
 */
function sharedContextScore(row: SharedContext, own: string, idfs: Map<string, number>): number | undefined {
  const ownWords = wordStems(`${own} ${row.text}`);
  for (const term of idfs.keys()) if (ownWords.has(term)) return undefined;
  const [title, heading] = [stemCounts(row.title), stemCounts(row.heading)];
  let score = 0;
  for (const [term, idf] of idfs) {
    const tf = BM25_WEIGHTS.title * (title.get(term) ?? 0) + BM25_WEIGHTS.heading * (heading.get(term) ?? 0);
    score += (idf * tf * (K1 + 1)) / (tf + K1);
  }
  return score;
}

/**
 * The names of the units whose definitions a code fragment holds: every unit the chunker recorded it defines (its
 * `defines`: a packed fragment's units past the four its heading shows, a whole class's methods; s25 code user C11),
 * those its own heading names (`def feed`), unless it goes on with a unit split before it, and each enclosing unit
 * that begins in it, as the fragment before it is not inside that unit (the fragment that holds `class Parser:` is
 * headed `class Parser › def __init__`). Only the last of the path was weighed, so a class's short methods, each
 * headed with the class's name, ranked above the fragment that defines it, and a long function's short tail above
 * its head (s22 agent #1).
 */
function definedNames(row: Pick<FragmentHeadings, "heading" | "previous" | "continued" | "defines">): string {
  const path = row.heading.split(HEADING_SEPARATOR);
  const before = row.previous?.split(HEADING_SEPARATOR) ?? [];
  const begins = (i: number) => path.slice(0, i + 1).some((label, j) => before[j] !== label);
  return [...path.filter((_, i) => (i === path.length - 1 ? !row.continued : begins(i))), row.defines ?? ""].map(unitNames).join(" ");
}

/** The names in a list of a code fragment's unit labels (`function parseHeader, parse()` → `parseHeader parse`). */
function unitNames(labels: string): string {
  return splitLabels(labels).map(labelName).join(" ");
}

/** The stems a heading's words index as (identifiers also by their parts, as ftsText adds them). */
function wordStems(text: string): Set<string> {
  return new Set(indexedStems(text));
}

/** How many times each stem is indexed in the text. */
function stemCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of indexedStems(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

function indexedStems(text: string): string[] {
  const words = `${text} ${identifierParts(text)}`.match(WORD) ?? [];
  return words.flatMap(splitWords).map(stem);
}
