import { describe, expect, test } from "bun:test";
import { anchorsOf, FUSION_DEPTH, fuseHybrid, listAnchors, mergeRanked, mergeScore, VECTOR_FLOOR } from "../src/search/fusion.ts";
import { seeded } from "../src/random.ts";

describe("fuseHybrid", () => {
  test("a confident BM25 gap survives a weak vector vote; agreement wins", () => {
    const bm25 = [
      { id: 1, score: 20 },
      { id: 2, score: 5 },
      { id: 3, score: 4 },
    ];
    const vector = [
      { id: 3, score: 0.9 },
      { id: 9, score: 0.5 },
      { id: 2, score: 0.1 },
    ];
    const fused = fuseHybrid(bm25, vector);
    // The word match the vector list ranks last (2) still comes before a fragment holding none of the words (9).
    expect(fused.map((f) => f.id)).toEqual([1, 3, 2, 9]);
    expect(fused[0]).toMatchObject({ bm25: { rank: 1, score: 20 }, vector: null });
    expect(fused[1]).toMatchObject({ bm25: { rank: 3, score: 4 }, vector: { rank: 1, score: 0.9 } });
  });

  test("a vector list with no share keeps BM25's order, its ties too, and adds nothing BM25 did not find", () => {
    const bm25 = [3, 2, 1, 0.5].map((score, i) => ({ id: i + 1, score }));
    const vector = [8, 4, 7, 3].map((id, i) => ({ id, score: 0.9 - i / 10 }));
    // Anchors as a filtered search's (the unfiltered lists'): 3 and 4 score 0, below the whole BM25 list's 100th.
    const fused = fuseHybrid(bm25, vector, 1, { bm25: { max: 3, min: 2 }, vector: { max: 0.9, min: 0.6 } });
    // The vector list placed 4 before 3: ranked deeper, it gave BM25's later matches such places (s30 hostile F1).
    expect(fused.map((f) => [f.id, f.score])).toEqual([
      [1, 1],
      [2, 0],
      [3, 0],
      [4, 0],
    ]);
    expect(fused[3]).toMatchObject({ bm25: { rank: 4 }, vector: { rank: 2 } }); // its place is still shown
  });

  test("lists restricted by a filter, normalised against the whole lists' anchors, keep every fused score", () => {
    const bm25 = [10, 8, 7, 5, 2].map((score, i) => ({ id: i + 1, score }));
    const vector = [0.9, 0.7, 0.6, 0.3].map((score, i) => ({ id: [3, 5, 1, 6][i]!, score }));
    const whole = new Map(fuseHybrid(bm25, vector, 0.7).map((f) => [f.id, f.score]));
    const admitted = (r: { id: number }) => r.id % 2 === 1;
    const anchors = listAnchors(bm25, vector);
    const restricted = fuseHybrid(bm25.filter(admitted), vector.filter(admitted), 0.7, anchors);
    expect(restricted.map((f) => [f.id, f.score])).toEqual([...whole].filter(([id]) => id % 2 === 1));
    // Their own anchors rescore them: id 1's cosine, the lowest admitted, would count 0 instead of (0.6 - 0.3) / 0.6.
    expect(fuseHybrid(bm25.filter(admitted), vector.filter(admitted), 0.7).find((f) => f.id === 1)!.score).not.toBe(whole.get(1));
  });

  test("a short BM25 list holds every match: its weakest still counts, above fragments holding none of the words (s18 user #1)", () => {
    // A small vault: two notes hold "sourdough", thirty do not; the vector list ranks them all, the weaker match last.
    const bm25 = [
      { id: 1, score: 2.9 },
      { id: 2, score: 2.2 },
    ];
    const vector = [
      ...Array.from({ length: 30 }, (_, i) => ({ id: 10 + i, score: 0.5 - i * 0.01 })),
      { id: 1, score: 0.1 },
      { id: 2, score: 0.05 },
    ];
    // The weaker match scored 0 from BM25, as if it held no word, and came last of 32.
    expect(
      fuseHybrid(bm25, vector, 0.8)
        .map((f) => f.id)
        .slice(0, 2),
    ).toEqual([1, 2]);
    // Its zero is one mean gap below its last match, as if the list went on.
    expect(anchorsOf(bm25, true)).toEqual({ max: 2.9, min: expect.closeTo(1.5, 9) });
    expect(anchorsOf([{ id: 1, score: 3 }], true)).toEqual({ max: 3, min: 3 }); // one result: 1, the best there is
    // A list of FUSION_DEPTH or more is cut there: past it a fragment counts as absent, whatever its score.
    const deep = Array.from({ length: FUSION_DEPTH + 5 }, (_, i) => ({ id: i, score: 200 - i }));
    expect(anchorsOf(deep, true)).toEqual({ max: 200, min: 200 - (FUSION_DEPTH - 1) });
    // A vector list has no score of absence: its own last is 0.
    expect(anchorsOf(vector)).toEqual({ max: 0.5, min: 0.05 });
  });

  test("with no BM25 match the vector list decides alone", () => {
    expect(
      fuseHybrid(
        [],
        [
          { id: 5, score: 0.4 },
          { id: 6, score: 0.2 },
        ],
      ).map((f) => f.id),
    ).toEqual([5, 6]);
  });
});

describe("mergeRanked", () => {
  const score = (item: { s: number }) => item.s;

  test("a strong match in one repository opens the list above another repository's weak first result", () => {
    const weak = [
      { id: "w1", s: 0.2 },
      { id: "w2", s: 0.1 },
    ];
    const strong = [
      { id: "s1", s: 0.9 },
      { id: "s2", s: 0.15 },
    ];
    expect(mergeRanked([weak, strong], score).items.map((x) => x.id)).toEqual(["s1", "w1", "s2", "w2"]);
  });

  test("keeps each list's order, and interleaves by rank where there is no evidence to tell them apart", () => {
    const a = [
      { id: "a1", s: 0.3 },
      { id: "a2", s: 0.8 },
      { id: "a3", s: 0 },
    ];
    const b = [{ id: "b1", s: 0 }];
    expect(mergeRanked([a, b], score).items.map((x) => x.id)).toEqual(["a1", "a2", "b1", "a3"]);
  });
});

describe("mergeScore", () => {
  test("vector evidence below the floor counts as none; an exact lexical match outranks any vector-only result", () => {
    expect(mergeScore(null, VECTOR_FLOOR - 0.01)).toBe(0);
    expect(mergeScore(null, 0.9)).toBeCloseTo(0.9);
    expect(mergeScore(1, null)).toBe(1);
    expect(mergeScore(0.5, 0.6)).toBeCloseTo(0.8);
  });
});

test("a list ranked deeper only adds to the fused order after what a shallower one held (s26 agent F1)", () => {
  // Past FUSION_DEPTH every item scores 0; they went by BM25's place first, so a deeper BM25 list put its new items
  // before the vector list's shallower ones: a page of documents for "the" showed one twice and another never.
  const next = seeded(26);
  for (let round = 0; round < 20; round++) {
    const list = (ids: number) =>
      Array.from({ length: 600 }, (_, i) => ({ id: Math.floor(next() * ids), score: 600 - i })).filter(
        (item, i, all) => all.findIndex((other) => other.id === item.id) === i,
      );
    const [bm25, vector] = [list(900), list(900)];
    const weight = round % 3 === 0 ? 1 : 0.5; // a vector list without a voice, or an equal one
    const anchors = listAnchors(bm25, vector);
    const fused = (depth: number) => fuseHybrid(bm25.slice(0, depth), vector.slice(0, depth), weight, anchors).map((item) => item.id);
    for (const depth of [FUSION_DEPTH, 2 * FUSION_DEPTH, 3 * FUSION_DEPTH]) {
      const shallow = fused(depth);
      expect(fused(2 * depth).slice(0, shallow.length)).toEqual(shallow);
    }
  }
});
