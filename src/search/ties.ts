/**
 * Rankings whose ties are ordered by path. Fragments of equal score (two copies of a file, a licence header in every
 * source file) came in the order of their ids, which is the history of the index: a file moved out and back ranked
 * after its twin, and a folder in one state paged differently from a fresh index of it (s28 hostile F9). Each tie is
 * ordered by its documents' paths, then by place in the document.
 */
import type { Store } from "../store/store.ts";
import type { Ranked } from "./fusion.ts";

/**
 * `rank` (a function from a depth to the best `depth` of a list by score, now or later: BM25 answers at once, vector
 * search later) with the ties it ranked in path order. A tie that runs past the depth is cut where the ranking cut it
 * (by id): ranking deeper until every tie ended doubled a one-word query's time on a corpus of equal-length fragments
 * (the scale benchmark's, where a rare word ties hundreds), and a page is cut from a list at least FUSION_DEPTH deep.
 */
export function pathOrdered<List extends { hits: Ranked[] }, Answer extends List | Promise<List>>(
  store: Store,
  rank: (depth: number) => Answer,
): (depth: number) => Answer {
  const ordered = (list: List): List => ({ ...list, hits: tiesInPathOrder(store, list.hits) });
  return (depth) => {
    const answer = rank(depth);
    return (answer instanceof Promise ? answer.then(ordered) : ordered(answer as List)) as Answer;
  };
}

/** The hits, best first, with each run of equal scores in path order (one query for all of them); else as they came. */
function tiesInPathOrder<Hit extends Ranked>(store: Store, hits: Hit[]): Hit[] {
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
