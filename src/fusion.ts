/**
 * Reciprocal rank fusion. Hybrid search fuses a BM25 list and a vector list per repository; results of several
 * repositories are fused by rank again, so a small repository is never drowned by a big one's scores.
 */

export const RRF_K = 60;

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
  /** The fused (RRF) score: rank-based, comparable only within one result list. */
  score: number;
  bm25: Contribution | null;
  vector: Contribution | null;
}

/**
 * How much the vector list may move the BM25 ranking, from how much the two lists agree at the top.
 * A model that finds what BM25 finds on the many queries where words suffice has earned the right to reorder;
 * a weak model (unrelated vector results) is heard only as a tie-breaker, so hybrid stays at BM25's level.
 */
export function vectorWeight(bm25: Ranked[], vector: Ranked[], depth = 20): number {
  if (bm25.length === 0) return 1; // no word matched: meaning is all there is
  const top = new Set(bm25.slice(0, depth).map((r) => r.id));
  const shared = vector.slice(0, depth).filter((r) => top.has(r.id)).length;
  const agreement = shared / Math.min(depth, bm25.length, Math.max(1, vector.length));
  return Math.min(1, 0.1 + 2 * agreement);
}

export function fuseHybrid(bm25: Ranked[], vector: Ranked[], k = RRF_K): Fused[] {
  const weight = vectorWeight(bm25, vector);
  const fused = new Map<number, Fused>();
  const entry = (id: number) => {
    let item = fused.get(id);
    if (!item) fused.set(id, (item = { id, score: 0, bm25: null, vector: null }));
    return item;
  };
  bm25.forEach((r, i) => {
    const item = entry(r.id);
    item.bm25 = { rank: i + 1, score: r.score };
    item.score += 1 / (k + i + 1);
  });
  vector.forEach((r, i) => {
    const item = entry(r.id);
    item.vector = { rank: i + 1, score: r.score };
    item.score += weight / (k + i + 1);
  });
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.bm25?.rank ?? Infinity) - (b.bm25?.rank ?? Infinity));
}

/** Fuse already-ranked lists (one per repository) by rank; returns [list index, item] in fused order. */
export function fuseLists<T>(lists: T[][], k = RRF_K): [number, T][] {
  if (lists.length === 1) return lists[0]!.map((item) => [0, item]);
  const scored: { list: number; item: T; score: number; rank: number }[] = [];
  lists.forEach((list, l) => list.forEach((item, i) => scored.push({ list: l, item, score: 1 / (k + i + 1), rank: i })));
  return scored.sort((a, b) => b.score - a.score || a.list - b.list).map((s) => [s.list, s.item]);
}
