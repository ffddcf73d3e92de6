/**
 * Fusing ranked lists. Within a repository, hybrid search combines BM25 and vector scores by a convex combination
 * of min-max normalised scores; across repositories, final lists are fused by reciprocal rank so a small
 * repository is never drowned by a big one's scores.
 *
 * Why not plain RRF for hybrid: rank fusion treats the vector list as an equal voice whatever its quality. With a
 * weak model (GloVe-SIF on SciFact) plain RRF loses 0.29 nDCG@10 against BM25 and even a 0.1-weighted RRF loses
 * 0.06, because RRF's rank scores are so flat that any vector vote reorders BM25's top. Normalised scores keep
 * BM25's confident gaps. LEXICAL_WEIGHT is the largest vector share that keeps the weak model within 0.001 of
 * BM25 on SciFact train (`bun bench/tune-fusion.ts`), so a stronger model is heard as much as that floor allows.
 */

export const RRF_K = 60;
export const LEXICAL_WEIGHT = 0.8;
/** Both lists are normalised over at least this many results, so scores do not depend on the page size. */
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

export function fuseHybrid(bm25: Ranked[], vector: Ranked[], lexicalWeight = LEXICAL_WEIGHT): Fused[] {
  const fused = new Map<number, Fused>();
  const add = (list: Ranked[], weight: number, field: "bm25" | "vector") => {
    const max = list[0]?.score ?? 0;
    const min = list.at(-1)?.score ?? 0;
    list.forEach((r, i) => {
      let item = fused.get(r.id);
      if (!item) fused.set(r.id, (item = { id: r.id, score: 0, bm25: null, vector: null }));
      item[field] = { rank: i + 1, score: r.score };
      // A single result (or all equal) normalises to 1: it is the best this list has.
      item.score += weight * (max > min ? (r.score - min) / (max - min) : 1);
    });
  };
  add(bm25, lexicalWeight, "bm25");
  add(vector, 1 - lexicalWeight, "vector");
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.bm25?.rank ?? Infinity) - (b.bm25?.rank ?? Infinity));
}

/** Fuse already-ranked lists (one per repository) by reciprocal rank, ties broken by list order. */
export function fuseLists<T>(lists: T[][], k = RRF_K): T[] {
  if (lists.length === 1) return lists[0]!;
  const scored = lists.flatMap((list, l) => list.map((item, i) => ({ item, list: l, score: 1 / (k + i + 1) })));
  return scored.sort((a, b) => b.score - a.score || a.list - b.list).map((s) => s.item);
}
