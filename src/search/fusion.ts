/**
 * Fusing ranked lists. Within a repository, hybrid search combines BM25 and vector scores by a convex combination
 * of min-max normalised scores; across repositories, lists are merged by calibrated evidence (calibration.ts), so
 * a repository whose best match is weak cannot open the list above a strong match elsewhere.
 *
 * Why not plain RRF for hybrid: rank fusion treats the vector list as an equal voice whatever its quality. With a
 * weak model (GloVe-SIF on SciFact) plain RRF loses 0.29 nDCG@10 against BM25 and even a 0.1-weighted RRF loses
 * 0.06, because RRF's rank scores are so flat that any vector vote reorders BM25's top. Normalised scores keep
 * BM25's confident gaps. How much the vector list counts is measured per repository (fusionWeight, below);
 * LEXICAL_WEIGHT is the weight where nothing was measured, between a weak list's (1) and an equal one's (0.5).
 */

const RRF_K = 60;
export const LEXICAL_WEIGHT = 0.8;
/**
 * Each list is normalised over its first FUSION_DEPTH results (fewer when it has fewer), however deep it was
 * ranked: a result's fused score then does not depend on the page asked for. Search ranks every page of the first
 * FUSION_DEPTH results from lists of this depth (search.ts, rankingDepth).
 */
export const FUSION_DEPTH = 100;

export interface Ranked {
  id: number;
  score: number;
}

export interface Contribution {
  rank: number;
  score: number;
}

export interface Fused {
  id: number;
  /** The fused score in [0, 1]: comparable within one result list only. */
  score: number;
  bm25: Contribution | null;
  vector: Contribution | null;
}

/** Where a list's normalisation puts 1 (its best score) and 0. */
export interface Anchors {
  max: number;
  min: number;
}

/**
 * A list's anchors: 1 at its best score, 0 at its FUSION_DEPTH-th. A list shorter than that that holds every
 * fragment matching (`complete`: BM25's) puts 0 one step below its last score, a step being its mean gap: the list
 * as if it went on, so its weakest match still counts. At its last score, the weakest real match scored as nothing:
 * in a small repository a note holding the query's one word ranked below every note without it (s18 user #1). At
 * 0, BM25's absence, the list's range shrank, and a small vector share reordered its top (SciFact subsets of 150
 * documents with GloVe: 0.006 below BM25).
 */
export function anchorsOf(list: Ranked[], complete = false): Anchors {
  const max = list[0]?.score ?? 0;
  const last = list[Math.min(list.length, FUSION_DEPTH) - 1]?.score ?? 0;
  if (!complete || list.length >= FUSION_DEPTH || list.length < 2) return { max, min: last };
  return { max, min: last - (max - last) / (list.length - 1) };
}

/** The anchors of a repository's two lists: the BM25 list holds every match (to FUSION_DEPTH). */
export function listAnchors(bm25: Ranked[], vector: Ranked[]): { bm25: Anchors; vector: Anchors } {
  return { bm25: anchorsOf(bm25, true), vector: anchorsOf(vector) };
}

/**
 * Fuse a repository's two lists. Each is normalised between its anchors, its own by default. A filtered search
 * passes the unfiltered lists' anchors (search.ts), so a fragment's fused score, a function of its two scores and
 * the anchors alone, is the one it has unfiltered: a filter restricts the ranking and never rescores it.
 *
 * A vector list without a voice (BM25's weight 1) is no evidence: what it alone found is left out (it scored 0 and
 * filled pages with fragments sharing no word with the query, s28 user #3), and its places order no tie, so hybrid
 * is BM25's list in BM25's order, its places shown. Its places broke ties at fused 0 (a filter's tail past the
 * unfiltered 100th): ranked 200 deep for a page past 100, the list gave BM25's deeper matches places ahead of ties
 * a page within 100 had ordered, and the first 100 of `-n 101` differed from `-n 100` from rank 18 (s30 hostile F1).
 */
export function fuseHybrid(
  bm25: Ranked[],
  vector: Ranked[],
  lexicalWeight = LEXICAL_WEIGHT,
  anchors: { bm25: Anchors; vector: Anchors } = listAnchors(bm25, vector),
): Fused[] {
  const fused = new Map<number, Fused>();
  const vectorWeight = 1 - lexicalWeight;
  const add = (list: Ranked[], weight: number, field: "bm25" | "vector") => {
    const { max, min } = anchors[field];
    list.forEach((r, i) => {
      let item = fused.get(r.id);
      if (!item) {
        if (weight === 0) return;
        item = { id: r.id, score: 0, bm25: null, vector: null };
        fused.set(r.id, item);
      }
      item[field] = { rank: i + 1, score: r.score };
      // A single result (or all equal) normalises to 1: it is the best this list has. Past FUSION_DEPTH a result
      // counts as absent from the list (0), as it would be in a list ranked to that depth.
      item.score += weight * (max > min ? Math.max(0, (r.score - min) / (max - min)) : 1);
    });
  };
  add(bm25, lexicalWeight, "bm25");
  add(vector, vectorWeight, "vector");
  // Equal scores (most often 0: past FUSION_DEPTH in both lists) go by their first place in either list with a voice,
  // then BM25's: a deeper list only adds places after the ones before, so pages concatenate. By BM25's place first, a
  // deeper list put its new items before the vector list's, shown on an earlier page: a page of documents for "the"
  // showed one twice and another never (s26 agent F1).
  const rank = (c: Contribution | null) => c?.rank ?? Infinity;
  const first = (f: Fused) => Math.min(rank(f.bm25), vectorWeight > 0 ? rank(f.vector) : Infinity);
  return [...fused.values()].sort(
    (a, b) => b.score - a.score || first(a) - first(b) || rank(a.bm25) - rank(b.bm25) || rank(a.vector) - rank(b.vector),
  );
}

export interface FusionWeight {
  /** BM25's share; the vector list gets the rest. */
  lexical: number;
  /** Why this weight, for --explain. */
  reason: string;
}

/**
 * Anchors of the BM25 weight, by how well a repository's vector list found the passages pseudo-queries were cut
 * from at index time, as a share of how well BM25 found them (calibration.ts). At or below WEAK_RATIO (GloVe-SIF
 * on SciFact: 0.20) the vector list has no share: hybrid keeps BM25's order, and the vector list adds what BM25
 * did not find after it. Any share of GloVe's list (nDCG@10 0.19 against BM25's 0.70) was noise on SciFact (`bun
 * bench/tune-fusion.ts`): 0.02-0.15 moved train by -0.003 to +0.002 and cost test 0.001-0.005; the old 0.2, the
 * largest share within 0.001 of BM25 on train before identifier parts made BM25 stronger, cost test 0.008. From
 * EQUAL_RATIO on, both lists are equal voices, best on SciFact train for every stand-in model from ratio 0.55
 * (vector nDCG@10 0.24, well below BM25) up (0.5 beats 0.3 and 0.7 for all of them); between the anchors the
 * weight moves linearly. EQUAL_RATIO 0.6 scored best on train among 0.55-0.8 (0.8 cost the stand-in at ratio 0.55
 * 0.018); a stand-in as weak as GloVe by its ratio (0.16, vector nDCG@10 0.06) gives up the 0.011 (train) a 0.2
 * share gained it, as its errors are independent of BM25's, which GloVe's are not.
 *
 * Per query, BM25 gives up UNSURE_SHIFT where its first result reaches less than UNSURE_LEXICAL of the query's IDF
 * mass (most query words unmatched), in a repository whose vector list has a share: chosen on SciFact train, it
 * gains up to 0.004 with the stand-in models; shifting where the vector list's first result looks strong instead did
 * no better (it gains the strong stand-ins up to 0.004 more and costs the weak ones up to 0.001). A list without a
 * share gets none per query either: the shift gave the weakest stand-in 0.002 on SciFact test and GloVe nothing, but
 * let a random-weight model reorder BM25's results (s13 questions: hybrid below BM25 where it had no share).
 *
 * In a small repository any model that matches words finds most pseudo-queries' passages: GloVe's vector list finds
 * them at MRR 0.50 against BM25's 0.96 in 150 SciFact abstracts (0.19 against 0.92 in all 5,183), got a share, and
 * put hybrid 0.038 below BM25 (a 61-note vault, s16 user #1, likewise). So both anchors move up as a repository
 * shrinks: by SMALL_SHIFT at SMALL_FRAGMENTS fragments or fewer, by nothing from FULL_FRAGMENTS on, with the
 * logarithm of the size between (`bun bench/small-fusion.ts`: over 60-1,000 documents it gains GloVe up to 0.035, a
 * mid stand-in up to 0.031 and costs the strongest at most 0.012; of 0.2 and 0.3, from 1,000 or 3,000, 0.3 from
 * 3,000 did best).
 */
const WEAK_RATIO = 0.25;
const EQUAL_RATIO = 0.6;
const SMALL_SHIFT = 0.3;
const SMALL_FRAGMENTS = 60;
const FULL_FRAGMENTS = 3000;
const WEAK_LEXICAL = 1;
const EQUAL_LEXICAL = 0.5;
const MIN_PSEUDO_QUERIES = 24;
const UNSURE_LEXICAL = 0.5;
const UNSURE_SHIFT = 0.1;

/**
 * The repository's weight, then the query's: `lexicalTop` is the calibrated evidence of BM25's first result;
 * `fragments`, how many the calibration was measured among (unknown for calibrations from before it was kept).
 */
export function fusionWeight(
  lists: { bm25: number; vector: number; queries: number } | undefined,
  lexicalTop?: number,
  fragments?: number,
): FusionWeight {
  const base = repositoryWeight(lists, fragments);
  if (lexicalTop === undefined || lexicalTop >= UNSURE_LEXICAL || base.lexical >= WEAK_LEXICAL) return base;
  return {
    lexical: round2(base.lexical - UNSURE_SHIFT),
    reason: `${base.reason}; bm25's best reaches ${round2(lexicalTop)} of the query, less ${UNSURE_SHIFT}`,
  };
}

function repositoryWeight(lists: { bm25: number; vector: number; queries: number } | undefined, fragments?: number): FusionWeight {
  if (!lists) return { lexical: LEXICAL_WEIGHT, reason: "not calibrated (index again to measure the lists)" };
  if (lists.queries < MIN_PSEUDO_QUERIES)
    return { lexical: LEXICAL_WEIGHT, reason: `too few fragments to calibrate (${lists.queries} pseudo-queries)` };
  const ratio = lists.vector / Math.max(lists.bm25, 0.01);
  const shift = smallShift(fragments);
  const [weak, equal] = [WEAK_RATIO + shift, EQUAL_RATIO + shift];
  const weakness = Math.min(1, Math.max(0, (equal - ratio) / (equal - weak)));
  const lexical = round2(EQUAL_LEXICAL + (WEAK_LEXICAL - EQUAL_LEXICAL) * weakness);
  const small = shift
    ? `; in ${fragments} fragments, where matching words finds them, the vector list must find ${round2(equal)} of bm25's for an equal voice`
    : "";
  return { lexical, reason: `pseudo-queries found their passage by vector ${lists.vector} (MRR), by bm25 ${lists.bm25}${small}` };
}

/** How far the anchors move up in a repository of `fragments` (none when unknown or large). */
function smallShift(fragments: number | undefined): number {
  if (fragments === undefined || fragments >= FULL_FRAGMENTS) return 0;
  const smallness = Math.log(FULL_FRAGMENTS / Math.max(fragments, SMALL_FRAGMENTS)) / Math.log(FULL_FRAGMENTS / SMALL_FRAGMENTS);
  return SMALL_SHIFT * smallness;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/**
 * Vector evidence below this opens no merged list: any query finds neighbours in any repository, and with GloVe-SIF
 * the best neighbour of a SciFact question in the unrelated Rust book reaches 0.35 (median; 0.46 at the 90th
 * percentile) while the best SciFact abstract reaches 0.60 (median; `bun bench/merge.ts`).
 */
export const VECTOR_FLOOR = 0.5;

/**
 * A result's merge score in [0, 1] from its lexical and vector evidence: the chance that either says it matches
 * (noisy-or), with vector evidence below the floor counted as none. An exact BM25 match (lexical 1) therefore
 * outranks every result that has only a vector neighbour to show.
 */
export function mergeScore(lexical: number | null, vector: number | null): number {
  const v = vector !== null && vector >= VECTOR_FLOOR ? vector : 0;
  return 1 - (1 - (lexical ?? 0)) * (1 - v);
}

/**
 * Merge ranked lists (one per repository) by merge score, keeping each list's own order (a repository's ranking
 * is its best judgement; an item never scores above the one ranked before it in its list). Equal scores go by
 * `ties`, in turn (the vector evidence below the floor, which with one model, measured from one background, compares
 * across repositories; then the strength of a full lexical match, which the evidence caps: one identifier's every
 * mention and its definition both reach 1, and repositories' names decided: s24 code user C1), each kept from
 * rising in its list as the score is, then interleave by reciprocal rank so a small repository is not starved.
 *
 * `finalThrough` says whether the order is final through an item: no item that a list cut short (`cut(list)`) holds
 * past its end could come before it. Such an item falls below its list's last in score, in each tie and in rank, so
 * the order is final through every item that comes before each cut list's last. A deeper ranking leaves the merged
 * order up to that item as it is: what makes pages of documents across repositories concatenate (s25 scripts D1).
 */
export function mergeRanked<T>(
  lists: T[][],
  scoreOf: (item: T) => number,
  ties: ((item: T) => number)[] = [],
  k = RRF_K,
): { items: T[]; finalThrough: (item: T, cut: (list: number) => boolean) => boolean } {
  if (lists.length === 1) return { items: lists[0]!, finalThrough: () => true };
  const keyed = lists.flatMap((list, l) => {
    let ceiling = Infinity;
    const tieCeilings = ties.map(() => Infinity);
    return list.map((item, i) => {
      ceiling = Math.min(ceiling, scoreOf(item));
      ties.forEach((tie, t) => {
        tieCeilings[t] = Math.min(tieCeilings[t]!, tie(item));
      });
      return { item, list: l, merge: ceiling, ties: [...tieCeilings], rrf: 1 / (k + i + 1) };
    });
  });
  type Keyed = (typeof keyed)[number];
  const byTies = (a: number[], b: number[]) => a.reduce((order, value, t) => order || b[t]! - value, 0);
  const order = (a: Keyed, b: Keyed) => b.merge - a.merge || byTies(a.ties, b.ties) || b.rrf - a.rrf || a.list - b.list;
  keyed.sort(order);
  // Each key falls within its list (running minimums, a falling rank), so a list's last item is its last in the order.
  const lasts: (Keyed | undefined)[] = lists.map(() => undefined);
  for (const s of keyed) lasts[s.list] = s;
  return {
    items: keyed.map((s) => s.item),
    finalThrough: (item, cut) => {
      const key = keyed.find((s) => s.item === item)!; // asked once a ranking: no index of every item is kept
      return lasts.every((last, l) => !last || !cut(l) || order(key, last) <= 0);
    },
  };
}
