import { beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { seeded } from "../bench/scale.ts";
import { rankRareFirst } from "../src/bm25.ts";
import { indexRepository } from "../src/indexer.ts";
import { parseQuery } from "../src/query.ts";
import { addRepository, type Repository } from "../src/repos.ts";
import { BM25_WEIGHTS, search } from "../src/search.ts";
import { Store } from "../src/store.ts";
import { HOOK_TIMEOUT, tempDir, writeTree } from "./helpers.ts";

// A Zipf-like vocabulary: a few words in most fragments, many in few, as in real text.
const VOCABULARY = Array.from({ length: 400 }, (_, i) => `w${i}x`);
const random = seeded(7);
const word = () => VOCABULARY[Math.floor(VOCABULARY.length ** random()) - 1]!; // P(rank i) ∝ 1/i
const words = (n: number) => Array.from({ length: n }, word).join(" ");
const file = () => [`# ${words(4)}`, ...Array.from({ length: 10 }, () => `## ${words(2)}\n\n${words(40)}`)].join("\n\n");

const home = tempDir();
const docs = tempDir();
let repo: Repository;

beforeAll(async () => {
  writeTree(docs, Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`d${i}.md`, file()])));
  repo = addRepository(home, { name: "zipf", path: docs, embed: false });
  await indexRepository(home, repo);
}, HOOK_TIMEOUT);

const QUERIES = ["w0x w5x w120x", "w1x w2x w3x w40x w300x", "w0x w350x", "w2x w7x w11x w13x w17x w19x w23x w29x w31x w37x"];

/** FTS5's own scores for every fragment the whole query matches. */
function fts5Scores(store: Store, query: string): Map<number, number> {
  return new Map(store.searchBm25(parseQuery(query).match!, BM25_WEIGHTS, 100_000).map((hit) => [hit.id, hit.score]));
}

test("rare words first: every hit has the score FTS5's bm25() gives it over the whole query", () => {
  const store = Store.open(repo.dir);
  try {
    expect(store.fragmentCount()).toBeGreaterThanOrEqual(1000);
    for (const query of QUERIES) {
      const ranking = rankRareFirst(store, parseQuery(query), BM25_WEIGHTS, 20)!;
      expect(ranking).not.toBeNull();
      const expected = fts5Scores(store, query);
      for (const hit of ranking.hits) expect(hit.score).toBeCloseTo(expected.get(hit.id)!, 9);
      // When it says no other fragment could enter (all but the ten-word query here), the top k is FTS5's.
      if (ranking.exact || query.split(" ").length < 10) {
        const top = [...expected.values()].sort((a, b) => b - a).slice(0, 20);
        expect(ranking.hits.map((h) => h.score)).toEqual(top.map((s) => expect.closeTo(s, 9)));
      }
    }
  } finally {
    store.close();
  }
});

test("one word, phrases and exclusions keep FTS5's own ranking", () => {
  const store = Store.open(repo.dir);
  try {
    for (const query of ["w0x", '"w0x w1x" w5x', "w0x w5x -w7x", "w0x w5*"]) {
      expect(rankRareFirst(store, parseQuery(query), BM25_WEIGHTS, 20)).toBeNull();
    }
  } finally {
    store.close();
  }
});

test("after an incremental change the scores follow the new totals, and total counts what the hits match", async () => {
  writeFileSync(join(docs, "d0.md"), `# w120x w120x\n\n## w5x\n\n${words(40)} w120x w300x`);
  writeFileSync(join(docs, "new.md"), `# w300x\n\n${words(30)}`);
  await indexRepository(home, repo);
  const store = Store.open(repo.dir);
  try {
    for (const query of QUERIES) {
      const ranking = rankRareFirst(store, parseQuery(query), BM25_WEIGHTS, 20)!;
      const expected = fts5Scores(store, query);
      for (const hit of ranking.hits) expect(hit.score).toBeCloseTo(expected.get(hit.id)!, 9);
      const response = await search(home, { query, limit: 5, mode: "bm25" });
      expect(response.total).toBe(store.countMatchingFragments(ranking.match));
      expect(response.results.map((r) => r.score)).toEqual(ranking.hits.slice(0, 5).map((h) => Math.round(h.score * 10000) / 10000));
    }
  } finally {
    store.close();
  }
});
