/**
 * Index-time calibration and the hybrid weights it gives, through the real indexer, SQLite, usearch and BM25:
 * the weak GloVe model, and a local stand-in embedding server (OpenAI-compatible) standing in for a strong model
 * (it places a passage's words near the passage), which finds a pseudo-query's passage as well as BM25 does.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { vectorCalibration } from "../src/search/calibration.ts";
import { fusionWeight, LEXICAL_WEIGHT } from "../src/search/fusion.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search, SearchContext, type FragmentHit } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { seeded } from "../src/random.ts";
import { describeShared, GLOVE, HOOK_TIMEOUT, SHARED, standInEmbeddingServer, tempDir, writeTree } from "./helpers.ts";

const RUST_BOOK = join(SHARED, "data/corpus/markdown/rust-book");
const DIMS = 256;

/** A random unit vector per text, the same on every call. */
function randomVector(text: string): number[] {
  let state = Bun.hash.xxHash32(text) || 1;
  const v = Array.from({ length: DIMS }, () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647 - 0.5;
  });
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** Words only, so a pseudo-query (words cut from a passage) can be found in the passage it came from. */
const wordsOf = (text: string) => ` ${(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(" ")} `;

/**
 * A strong model: every passage gets its own direction, and any shorter text is placed near the passage it was
 * cut from (its direction plus noise), as a good model places a passage's words near the passage.
 */
const passages = new Map<string, string>();
function strongModel(text: string): number[] {
  const words = wordsOf(text);
  const source = [...passages.keys()].find((passage) => passage.includes(words));
  if (source === undefined) {
    passages.set(words, text);
    return randomVector(text);
  }
  const noise = randomVector(`noise ${text}`);
  return randomVector(passages.get(source)!).map((x, i) => x + 0.5 * noise[i]!);
}

const serverUrl = standInEmbeddingServer(strongModel);

describeShared("fusion weights calibrated at index time", () => {
  const homes = { glove: tempDir(), words: tempDir() }; // one folder cannot be two repositories of one home
  const context = new SearchContext();
  const stores: Record<string, Store> = {};
  beforeAll(async () => {
    const embeddings = {
      glove: { model: GLOVE },
      words: { provider: "openai" as const, model: "strong", openai_url: serverUrl },
    };
    for (const [name, embedding] of Object.entries(embeddings)) {
      const home = homes[name as keyof typeof homes];
      const repo = registerRepository(home, { name, path: RUST_BOOK, embedding });
      await indexRepository(home, repo);
      stores[name] = Store.open(repo.dir);
    }
  }, HOOK_TIMEOUT);
  afterAll(() => {
    for (const s of Object.values(stores)) s.close();
  });

  test("a weak model's vector list finds few pseudo-query passages: BM25 keeps the weak-model weight", async () => {
    const lists = vectorCalibration(stores.glove!)!.lists!;
    expect(lists.queries).toBeGreaterThanOrEqual(24);
    expect(lists.vector).toBeLessThan(lists.bm25 / 2);
    expect(fusionWeight(lists).lexical).toBeGreaterThanOrEqual(0.75);
  });

  test("a vector list about as good as BM25 gets an equal voice, shown by --explain with the reason", async () => {
    const lists = vectorCalibration(stores.words!)!.lists!;
    expect(lists.vector).toBeGreaterThan(0.8 * lists.bm25);
    const response = await search(
      homes.words,
      { query: "ownership borrowing references", repositories: ["words"], explain: true, limit: 3 },
      context,
    );
    expect((response.results[0] as FragmentHit).explain!.weights).toEqual({ bm25: 0.5, vector: 0.5 });
    expect(response.notes!.join("\n")).toMatch(
      /words: hybrid weights bm25 0.5, vector 0.5: pseudo-queries found their passage by vector [\d.]+ \(MRR\), by bm25 [\d.]+/,
    );
  });

  test("a vector list a quarter as good as BM25 or less has no share; from 60% on it is an equal voice, linearly between", () => {
    // GloVe-SIF on SciFact (pseudo-query MRR 0.19 against BM25's 0.95): its old share of 0.2 cost nDCG@10 0.008.
    expect(fusionWeight({ bm25: 0.95, vector: 0.19, queries: 48 }).lexical).toBe(1);
    expect(fusionWeight({ bm25: 0.8, vector: 0.2, queries: 48 }).lexical).toBe(1);
    expect(fusionWeight({ bm25: 0.8, vector: 0.34, queries: 48 }).lexical).toBe(0.75);
    expect(fusionWeight({ bm25: 0.8, vector: 0.48, queries: 48 }).lexical).toBe(0.5);
    expect(fusionWeight({ bm25: 0.8, vector: 0.9, queries: 48 }).lexical).toBe(0.5);
  });

  test("in a small repository a vector list must find more to get a share: any model that matches words finds pseudo-queries there (s16 user #1)", () => {
    // GloVe in 150 SciFact abstracts: 0.50 of BM25's 0.96, a share of 0.38 that put hybrid 0.038 below BM25.
    const glove = { bm25: 0.96, vector: 0.5, queries: 48 };
    expect(fusionWeight(glove, undefined, 5183).lexical).toBe(fusionWeight(glove).lexical); // as large as SciFact: no shift
    expect(fusionWeight(glove).lexical).toBeLessThan(0.65);
    expect(fusionWeight(glove, undefined, 150).lexical).toBeGreaterThanOrEqual(0.9);
    expect(fusionWeight(glove, undefined, 150).reason).toContain("in 150 fragments, where matching words finds them");
    // A strong list keeps its equal voice at any size.
    expect(fusionWeight({ bm25: 0.96, vector: 0.9, queries: 48 }, undefined, 60).lexical).toBe(0.5);
    // The shift grows with the logarithm of how small: none from 3,000 on, all of it from 60 down.
    const weights = [40, 60, 150, 400, 1000, 3000].map((n) => fusionWeight({ bm25: 0.9, vector: 0.6, queries: 48 }, undefined, n).lexical);
    expect(weights[0]).toBe(weights[1]);
    for (let i = 2; i < weights.length; i++) expect(weights[i]!).toBeLessThanOrEqual(weights[i - 1]!);
    expect(weights.at(-1)).toBe(fusionWeight({ bm25: 0.9, vector: 0.6, queries: 48 }).lexical);
  });

  test("per query, BM25 gives up a little where its best result matches little of the query, if the vector list has a share", () => {
    const lists = { bm25: 0.8, vector: 0.34, queries: 48 };
    expect(fusionWeight(lists, 0.9).lexical).toBe(0.75);
    expect(fusionWeight(lists, 0.3).lexical).toBeCloseTo(0.65);
    // A list with no share gets none for any query (s13 questions #4).
    expect(fusionWeight({ bm25: 0.9, vector: 0.2, queries: 48 }, 0.3).lexical).toBe(1);
    expect(fusionWeight(undefined).reason).toContain("not calibrated");
    expect(fusionWeight({ ...lists, queries: 5 }).lexical).toBe(LEXICAL_WEIGHT);
  });
});

describeShared("pseudo-queries", () => {
  test("are drawn from different fragments: a repository of 30 fragments is calibrated by 30, one of 200 by 48 (s20 review F4)", async () => {
    // Drawn with replacement, 30 fragments gave 18 different ones, under the 24 fusion needs: never calibrated.
    const words = "river mountain forest ocean desert valley storm winter summer garden bridge castle engine rocket planet".split(" ");
    const queries: Record<number, number> = {};
    for (const notes of [30, 200]) {
      const home = tempDir();
      const docs = tempDir();
      const next = seeded(notes);
      writeTree(
        docs,
        Object.fromEntries(
          Array.from({ length: notes }, (_, i) => [
            `n${i}.md`,
            `# Note ${i}\n\n${Array.from({ length: 25 }, () => words[Math.floor(next() * words.length)]).join(" ")}\n`,
          ]),
        ),
      );
      const repo = registerRepository(home, { name: "v", path: docs, embedding: { model: GLOVE } });
      await indexRepository(home, repo);
      const store = Store.open(repo.dir);
      queries[notes] = vectorCalibration(store)!.lists!.queries;
      store.close();
    }
    expect(queries).toEqual({ 30: 30, 200: 48 });
  });
});
