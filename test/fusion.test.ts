import { describe, expect, test } from "bun:test";
import { fuseHybrid, fuseLists } from "../src/fusion.ts";

describe("fuseHybrid", () => {
  test("a confident BM25 gap survives a weak vector vote; agreement wins", () => {
    const bm25 = [{ id: 1, score: 20 }, { id: 2, score: 5 }, { id: 3, score: 4 }];
    const vector = [{ id: 3, score: 0.9 }, { id: 9, score: 0.5 }, { id: 2, score: 0.1 }];
    const fused = fuseHybrid(bm25, vector);
    expect(fused.map((f) => f.id)).toEqual([1, 3, 9, 2]);
    expect(fused[0]).toMatchObject({ bm25: { rank: 1, score: 20 }, vector: null });
    expect(fused[1]).toMatchObject({ bm25: { rank: 3, score: 4 }, vector: { rank: 1, score: 0.9 } });
  });

  test("with no BM25 match the vector list decides alone", () => {
    expect(fuseHybrid([], [{ id: 5, score: 0.4 }, { id: 6, score: 0.2 }]).map((f) => f.id)).toEqual([5, 6]);
  });
});

describe("fuseLists", () => {
  test("interleaves repositories by rank so a small one is not starved", () => {
    expect(fuseLists([["a1", "a2", "a3"], ["b1"]])).toEqual(["a1", "b1", "a2", "a3"]);
  });
});
