/**
 * Hybrid results of equal fused score in one order whatever the page (s30 hostile F1). With GloVe on SciFact the
 * vector list has no voice (weights 1 / 0): dozens of filtered results score 0 past the unfiltered BM25 list's 100th,
 * and their tie went by their place in either list. A page ending past 100 ranks the lists 200 deep, which gave BM25
 * matches a vector place ahead of the ones the shallower list had: `-n 100` and the first 100 of `-n 101` differed
 * from rank 18 on, and pages of 13 repeated 12 results. Real SciFact abstracts, real GloVe.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { parseFilter } from "../src/search/filters.ts";
import { type DocumentHit, type FragmentHit, search, SearchContext, type SearchOptions } from "../src/search/search.ts";
import { describeShared, GLOVE, HOOK_TIMEOUT, SHARED, tempDir, testShared } from "./helpers.ts";

/** SciFact abstracts `from` to `to` as notes in seven folders, each with a `group` of five in its front matter. */
function scifactNotes(from: number, to: number): string {
  const docs = tempDir();
  const lines = readFileSync(join(SHARED, "data/scifact/corpus.jsonl"), "utf8").split("\n").slice(from, to);
  lines.forEach((line, i) => {
    const { _id, title, text } = JSON.parse(line);
    mkdirSync(join(docs, String(i % 7)), { recursive: true });
    writeFileSync(join(docs, String(i % 7), `${_id}.md`), `---\ngroup: g${i % 5}\n---\n# ${title}\n\n${text}\n`);
  });
  return docs;
}

/** A result's identity and place: its fragment, or its document's fragments. */
const ids = (results: (FragmentHit | DocumentHit)[]) =>
  results.map((hit) => ("fragments" in hit ? hit.fragments.map((f) => f.id).join(",") : String(hit.fragment.id)));

describeShared("hybrid ties keep one order at every depth (s30 hostile F1)", () => {
  const home = tempDir();
  const context = new SearchContext();
  beforeAll(async () => {
    await indexRepository(home, registerRepository(home, { name: "sf", path: scifactNotes(0, 500), embedding: { model: GLOVE } }));
    await indexRepository(home, registerRepository(home, { name: "sf2", path: scifactNotes(500, 800), embedding: { model: GLOVE } }));
  }, HOOK_TIMEOUT);
  afterAll(() => context.close());

  const filters: [string, Partial<SearchOptions>][] = [
    ["--where group=g1", { where: [parseFilter("group=g1")] }],
    ["--filter '3/**'", { filter: "3/**" }],
    ["no filter", {}],
  ];
  for (const [label, filter] of filters) {
    for (const repositories of [["sf"], ["sf", "sf2"]]) {
      for (const documents of [false, true]) {
        const name = `${label}, ${repositories.join(" + ")}${documents ? ", --documents" : ""}`;
        testShared(
          `${name}: -n 100 is the first 100 of -n 101, and pages of 13 concatenate to -n 130 (or as many as there are)`,
          async () => {
            const ask = async (o: Partial<SearchOptions>) =>
              ids((await search(home, { query: "the", mode: "hybrid", repositories, documents, ...filter, ...o }, context)).results);
            const whole = await ask({ limit: 130 });
            expect(whole.length).toBeGreaterThan(60); // 130 but for the documents, or fragments, of one folder
            expect(await ask({ limit: 100 })).toEqual((await ask({ limit: 101 })).slice(0, 100));
            const pages: string[] = [];
            for (let offset = 0; offset < 130; offset += 13) pages.push(...(await ask({ limit: 13, offset })));
            expect(pages).toEqual(whole);
          },
        );
      }
    }
  }

  testShared("a vector list without a voice leaves hybrid in BM25's order, its tail of fused 0 too", async () => {
    for (const [, filter] of filters) {
      const ask = async (mode: "hybrid" | "bm25") =>
        (await search(home, { query: "protein expression", mode, repositories: ["sf"], limit: 150, explain: true, ...filter }, context))
          .results as FragmentHit[];
      const hybrid = await ask("hybrid");
      expect(hybrid[0]!.explain!.weights).toEqual({ bm25: 1, vector: 0 });
      expect(hybrid.filter((hit) => hit.score === 0).length).toBeGreaterThan(10);
      expect(ids(hybrid)).toEqual(ids(await ask("bm25")));
    }
  });
});
