import { expect, test } from "bun:test";
import { seeded } from "../src/random.ts";
import { TopScores } from "../src/search/top-scores.ts";

/** The top k by sorting everything: what TopScores must agree with. */
function bySorting(sums: Map<number, number>, k: number, admit: (id: number) => boolean) {
  const all = [...sums].filter(([id]) => admit(id)).map(([id, score]) => ({ id, score }));
  return { hits: all.sort((a, b) => b.score - a.score || a.id - b.id).slice(0, k), total: all.length };
}

test("the best k of summed scores, ties to the lowest id, across growth of its arrays and rankings in turn", () => {
  const random = seeded(11);
  for (const [ids, postings, k] of [
    [50, 400, 10],
    [300_000, 200_000, 100], // past the initial arrays: both grow
    [1000, 5000, 0],
    [20, 30, 50], // fewer ids than k
  ] as const) {
    const scores = new TopScores();
    const sums = new Map<number, number>();
    for (let i = 0; i < postings; i++) {
      const id = 1 + Math.floor(random() * ids);
      const score = Math.ceil(random() * 8) / 4; // coarse: many ties
      scores.add(id, score);
      sums.set(id, (sums.get(id) ?? 0) + score);
    }
    const odd = (id: number) => id % 2 === 1;
    expect(scores.top(k, odd)).toEqual(bySorting(sums, k, odd));
    expect(scores.top(k)).toEqual(bySorting(sums, k, () => true));
    scores.reset();
    expect(scores.top(k)).toEqual({ hits: [], total: 0 });
  }
});
