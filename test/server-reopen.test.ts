/**
 * A server's SearchContext keeps each repository's index.db open between searches. When index.db becomes another
 * file — the repository removed and added again under its name, or a rebuild that moved an unusable index aside —
 * the context opens the new file rather than answering from the deleted or moved-aside one (tester's F10).
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readdirSync, renameSync } from "node:fs";
import { indexFiles, indexRepository } from "../src/index/indexer.ts";
import { removeRepository } from "../src/index/repositories.ts";
import { registerRepository, getRepository } from "../src/repos.ts";
import { search, SearchContext, type SearchOptions } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { describeShared, GLOVE, HOOK_TIMEOUT, tempDir, writeTree } from "./helpers.ts";

const found = async (home: string, context: SearchContext, query: string, options: Partial<SearchOptions> = {}) =>
  (await search(home, { query, mode: "bm25", repositories: ["r1"], ...options }, context)).results.map((r) => r.path);

describe("a long-running SearchContext under overlapping searches", () => {
  test("a commit is seen by the next search, though searches running all along share one snapshot", async () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
    const repo = registerRepository(home, { name: "r1", path: docs, embed: false });
    await indexRepository(home, repo);
    const context = new SearchContext();
    expect(await found(home, context, "alpha")).toEqual(["a.md"]);
    // A search holds the snapshot open (as overlapping searches on a busy server do), an index run commits.
    let release = () => {};
    const store = context.store(getRepository(home, "r1"));
    const held = store.snapshot(async () => {
      store.counts(); // the snapshot is taken at the transaction's first read
      await new Promise<void>((resolve) => (release = resolve));
    });
    writeTree(docs, { "b.md": "# B\n\nzebraquux arrived\n" });
    await indexFiles(home, repo, ["b.md"]); // as watch and add_to_index write
    // Within the shared snapshot's time, a new search may still join it; past it, the commit is seen.
    await Bun.sleep(600);
    expect(await found(home, context, "zebraquux")).toEqual(["b.md"]);
    release();
    await held;
    expect(await found(home, context, "zebraquux")).toEqual(["b.md"]);
    await context.close();
  });
});

describe("a long-running SearchContext whose index.db becomes another file", () => {
  test("repo remove, repo add of the same name with another folder, index: the new repository is searched", async () => {
    const home = tempDir();
    const [oldDocs, newDocs] = [tempDir(), tempDir()];
    writeTree(oldDocs, { "old.md": "# Old\n\noldword here\n" });
    writeTree(newDocs, { "new.md": "# New\n\nnewword here\n" });
    await indexRepository(home, registerRepository(home, { name: "r1", path: oldDocs, embed: false }));
    const context = new SearchContext();
    expect(await found(home, context, "oldword")).toEqual(["old.md"]);

    removeRepository(home, "r1");
    await indexRepository(home, registerRepository(home, { name: "r1", path: newDocs, embed: false }));
    expect(await found(home, context, "newword")).toEqual(["new.md"]);
    expect(await found(home, context, "oldword")).toEqual([]);
    await context.close();
  });

  test("index --rebuild moved an unusable index aside: the fresh index is searched, not the moved-aside file", async () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
    const repo = registerRepository(home, { name: "r1", path: docs, embed: false });
    await indexRepository(home, repo);
    const context = new SearchContext();
    expect(await found(home, context, "alpha")).toEqual(["a.md"]);

    // An index a newer researcher wrote: the rebuild cannot use it, so it moves it aside and builds afresh.
    const db = new Database(Store.dbPath(repo.dir));
    db.run("PRAGMA user_version = 99");
    db.close();
    writeTree(docs, { "later.md": "# Later\n\nlaterword arrived before the rebuild\n" });
    const rebuilt = await indexRepository(home, repo, { rebuild: true });
    expect(rebuilt.warnings.join("\n")).toContain("moved aside");
    expect(readdirSync(repo.dir).some((f) => f.startsWith("index.db.damaged-"))).toBe(true);
    expect(await found(home, context, "laterword")).toEqual(["later.md"]);
    await context.close();
  });

  test("index.db deleted: the search says the repository is not indexed", async () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
    await indexRepository(home, registerRepository(home, { name: "r1", path: docs, embed: false }));
    const context = new SearchContext();
    expect(await found(home, context, "alpha")).toEqual(["a.md"]);
    removeRepository(home, "r1");
    registerRepository(home, { name: "r1", path: docs, embed: false });
    expect((await found(home, context, "alpha").catch((e: { code?: string }) => e.code)) as unknown).toBe("NOT_INDEXED");
    await context.close();
  });
});

describeShared("a reopened index.db with vectors", () => {
  const TEXTS = {
    "cars.md": "# Vehicles\n\nCars and trucks drive on the highway; the driver parks the car in the garage.\n",
    "bread.md": "# Baking\n\nKnead the dough, let it rise, then bake the loaf in a hot oven.\n",
    "garden.md": "# Garden\n\nShe planted tomatoes and watered the flowers every morning.\n",
  };
  const OTHER = {
    "music.md": "# Concert\n\nThe orchestra played a symphony; the violin solo was beautiful.\n",
    "space.md": "# Astronomy\n\nThe telescope observed a distant galaxy and several planets orbiting a star.\n",
    "health.md": "# Medicine\n\nThe doctor prescribed antibiotics for the infection and advised rest.\n",
  };

  test(
    "vector and hybrid searches after a remove and add answer as a fresh context does (no vectors of the old file)",
    async () => {
      const home = tempDir();
      const [oldDocs, newDocs] = [tempDir(), tempDir()];
      writeTree(oldDocs, TEXTS);
      writeTree(newDocs, OTHER);
      await indexRepository(home, registerRepository(home, { name: "r1", path: oldDocs, embedding: { model: GLOVE } }));
      const context = new SearchContext();
      for (const mode of ["vector", "hybrid"] as const) expect(await found(home, context, "automobile", { mode })).toContain("cars.md");

      removeRepository(home, "r1");
      await indexRepository(home, registerRepository(home, { name: "r1", path: newDocs, embedding: { model: GLOVE } }));
      for (const mode of ["vector", "hybrid"] as const) {
        const options = { query: "automobile", mode, repositories: ["r1"] };
        const kept = await search(home, options, context);
        const fresh = await search(home, options, new SearchContext());
        expect(kept.results.map((r) => [r.path, r.score])).toEqual(fresh.results.map((r) => [r.path, r.score]));
        expect(kept.results.map((r) => r.path).sort()).toEqual(Object.keys(OTHER).sort());
      }
      await context.close();
    },
    HOOK_TIMEOUT,
  );

  test(
    "a search under way on the old file finishes on it while the next search opens the new one",
    async () => {
      const home = tempDir();
      const [oldDocs, newDocs] = [tempDir(), tempDir()];
      writeTree(oldDocs, TEXTS);
      writeTree(newDocs, OTHER);
      // The other repository's folder (index.db and all), put in place by renames in the middle of a search: what
      // `repo remove` and `repo add` followed by an index run leave, without awaiting anything.
      const spareHome = tempDir();
      await indexRepository(spareHome, registerRepository(spareHome, { name: "r1", path: newDocs, embedding: { model: GLOVE } }));
      const repo = registerRepository(home, { name: "r1", path: oldDocs, embedding: { model: GLOVE } });
      await indexRepository(home, repo);
      const context = new SearchContext();
      expect(await found(home, context, "automobile", { mode: "hybrid" })).toContain("cars.md");

      const during = search(home, { query: "automobile", mode: "hybrid", repositories: ["r1"] }, context); // awaits the query's embedding
      renameSync(repo.dir, `${repo.dir}.removed`);
      renameSync(getRepository(spareHome, "r1").dir, repo.dir);
      const after = search(home, { query: "automobile", mode: "hybrid", repositories: ["r1"] }, context);
      expect((await during).results.map((r) => r.path)).toContain("cars.md");
      expect((await after).results.map((r) => r.path).sort()).toEqual(Object.keys(OTHER).sort());
      await context.close();
    },
    HOOK_TIMEOUT,
  );
});
