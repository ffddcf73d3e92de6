/**
 * Rankings whose ties are ordered by path. Fragments of equal score (two copies of a file, a licence header in every
 * source file) came in the order of their ids, which is the history of the index: a file moved out and back ranked
 * after its twin, and a folder in one state paged differently from a fresh index of it (s28 hostile F9). Each tie is
 * ordered by its documents' paths, then by place in the document, and a list cut at depth k is cut in that order: a
 * tie that reaches past the k-th result is ranked whole first.
 */
import type { Store } from "../store/store.ts";
import type { Ranked } from "./fusion.ts";

/**
 * `rank` (a function from a depth to the best `depth` of a list by score, now or later: BM25 answers at once, vector
 * search later) with ties in path order: ranked one deeper than asked, and deeper again while the tie at the cut runs
 * to the end of what was ranked (unless the list holds the whole tie: `tiesWhole`), so a cut never splits a tie by id.
 */
export function pathOrdered<List extends { hits: Ranked[]; tiesWhole?: boolean }, Answer extends List | Promise<List>>(
  store: Store,
  rank: (depth: number) => Answer,
): (depth: number) => Answer {
  const settle = (depth: number, deeper: number): List | Promise<List> => {
    // Cut, the list holds the whole tie no more: `tiesWhole` is left off.
    const take = ({ tiesWhole, ...list }: List) =>
      tiesWhole || cutOutsideTie(list.hits, depth, deeper)
        ? ({ ...list, hits: tiesInPathOrder(store, list.hits).slice(0, depth) } as List)
        : settle(depth, deeper * 2);
    const answer = rank(deeper);
    return answer instanceof Promise ? answer.then(take) : take(answer as List);
  };
  return (depth) => (depth < 1 ? rank(depth) : (settle(depth, depth + 1) as Answer));
}

/** Whether the list ranked `ranked` deep holds every hit tied with its `depth`-th: complete, or one scores lower. */
function cutOutsideTie(hits: Ranked[], depth: number, ranked: number): boolean {
  return hits.length < ranked || hits[depth - 1]!.score !== hits[ranked - 1]!.score;
}

/** The hits, best first, with each run of equal scores in path order (one query for all of them); else as they came. */
export function tiesInPathOrder<Hit extends Ranked>(store: Store, hits: Hit[]): Hit[] {
  const tied = hits.filter((hit, i) => hits[i - 1]?.score === hit.score || hits[i + 1]?.score === hit.score);
  if (tied.length === 0) return hits;
  const place = new Map(store.inPathOrder(tied.map((hit) => hit.id)).map((id, i) => [id, i]));
  // A fragment gone since it was ranked (an index run committed meanwhile) goes after its tie, as hydrate skips it.
  const placeOf = (hit: Hit) => place.get(hit.id) ?? Number.POSITIVE_INFINITY;
  const ordered: Hit[] = [];
  for (let start = 0, end = 1; start < hits.length; start = end, end = start + 1) {
    while (end < hits.length && hits[end]!.score === hits[start]!.score) end++;
    ordered.push(...hits.slice(start, end).sort((a, b) => placeOf(a) - placeOf(b) || a.id - b.id));
  }
  return ordered;
}
