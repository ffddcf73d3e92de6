import { expect, test } from "bun:test";
import { seeded } from "../src/random.ts";
import { TopScores } from "../src/search/top-scores.ts";

/** The top k by sorting everything: what TopScores must agree with. */
function bySorting(sums: Map<number, number>, k: number, admit: (id: number) => boolean) {
  const all = [...sums].filter(([id]) => admit(id)).map(([id, score]) => ({ id, score }));
  return { hits: all.sort((a, b) => b.score - a.score || a.id - b.id).slice(0, k), total: all.length };
}

test("the best k of lists summed per id, ties to the lowest id, across windows, growth and rankings in turn", () => {
  const random = seeded(11);
  for (const [ids, lists, perList, k, ordered] of [
    [50, 3, 30, 10, true],
    [3_000_000, 6, 60_000, 100, true], // ids over many windows, past the initial arrays: both grow
    [1000, 4, 500, 0, true],
    [20, 2, 15, 50, true], // fewer ids than k
    [200_000, 3, 5_000, 20, false], // a list out of order is put in order
  ] as const) {
    const scores = new TopScores();
    const sums = new Map<number, number>();
    for (let list = 0; list < lists; list++) {
      const chosen = new Set<number>();
      while (chosen.size < perList) chosen.add(1 + Math.floor(random() * ids));
      const listIds = [...chosen].sort((a, b) => (ordered ? a - b : b - a));
      scores.beginList();
      for (const id of listIds) {
        const score = Math.ceil(random() * 8) / 4; // coarse: many ties
        scores.add(id, score);
        sums.set(id, (sums.get(id) ?? 0) + score);
      }
    }
    const odd = (id: number) => id % 2 === 1;
    expect(scores.top(k, odd)).toEqual(bySorting(sums, k, odd));
    expect(scores.top(k)).toEqual(bySorting(sums, k, () => true));
    scores.reset();
    expect(scores.top(k)).toEqual({ hits: [], total: 0 });
  }
});
