/** Vector and hybrid search end to end in the library: real GloVe model, real SQLite, real usearch file. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  copyFileSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { acquireWriterLock, processStartTime } from "../src/lock.ts";
import { registerRepository, getRepository } from "../src/repos.ts";
import { setConfigValue } from "../src/config.ts";
import { search, SearchContext } from "../src/search/search.ts";
import { parseFilter } from "../src/search/filters.ts";
import { repositoryStatus } from "../src/store/status.ts";
import { annPath } from "../src/search/vectors.ts";
import { agentHint, restHint } from "../src/serve/agent-hints.ts";
import { Store } from "../src/store/store.ts";
import { describeShared, GLOVE, gloveThroughOnnx, HOOK_TIMEOUT, otherGlove, runCli, tempDir, writeTree } from "./helpers.ts";

const TEN = {
  "cars.md": "# Vehicles\n\nCars and trucks drive on the highway; the driver parks the car in the garage.\n",
  "bread.md": "# Baking\n\nKnead the dough, let it rise, then bake the loaf in a hot oven.\n",
  "football.md": "# Sport\n\nThe football team won the championship after a penalty shootout.\n",
  "garden.md": "# Garden\n\nShe planted tomatoes and watered the flowers every morning.\n",
  "stocks.md": "# Markets\n\nShares dropped as investors sold and the index fell sharply.\n",
  "music.md": "# Concert\n\nThe orchestra played a symphony; the violin solo was beautiful.\n",
  "weather.md": "# Forecast\n\nHeavy rain and strong winds are expected, with snow in the mountains.\n",
  "cooking.md": "# Dinner\n\nFry the onions, add garlic and simmer the tomato sauce for pasta.\n",
  "space.md": "# Astronomy\n\nThe telescope observed a distant galaxy and several planets orbiting a star.\n",
  "health.md": "# Medicine\n\nThe doctor prescribed antibiotics for the infection and advised rest.\n",
};

// A repository this small is scanned exactly; these tests are about the ANN file, so it goes through the graph.
const GRAPH = { RESEARCHER_EXACT_SCAN_BELOW: "0" };
beforeAll(() => {
  process.env.RESEARCHER_EXACT_SCAN_BELOW = "0";
});
afterAll(() => void delete process.env.RESEARCHER_EXACT_SCAN_BELOW);

/**
 * Every file in a folder with its size and modification time. SQLite's shared-memory file is left out: every reader
 * of a WAL database records its read mark there (it holds no data and is rebuilt from the WAL when missing).
 */
function folderState(dir: string): { name: string; size: number; mtimeNs: bigint }[] {
  return readdirSync(dir)
    .filter((name) => !name.endsWith("-shm"))
    .sort()
    .map((name) => {
      const { size, mtimeNs } = statSync(join(dir, name), { bigint: true });
      return { name, size: Number(size), mtimeNs };
    });
}

describeShared("vector and hybrid search", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, TEN);
  const repo = registerRepository(home, { name: "ten", path: docs, embedding: { model: GLOVE } });
  const context = new SearchContext();
  beforeAll(async () => {
    const summary = await indexRepository(home, repo);
    expect(summary).toMatchObject({ indexed: 10, embedded: 10, model: GLOVE });
  }, HOOK_TIMEOUT);

  test("a query with no shared words finds the document by meaning", async () => {
    const vector = await search(home, { query: "automobile", mode: "vector", limit: 3 }, context);
    expect(vector.mode).toBe("vector");
    expect(vector.results[0]!.path).toBe("cars.md");
    expect((await search(home, { query: "automobile", mode: "bm25" }, context)).results).toEqual([]);
    const hybrid = await search(home, { query: "automobile", limit: 3 }, context);
    expect(hybrid.mode).toBe("hybrid");
    expect(hybrid.results[0]!.path).toBe("cars.md");
    // A full page either way: words_found says whether any of it holds the query's words (s11 agent #2: an agent
    // could not tell a page of padding from a page of matches).
    expect([hybrid.words_found, vector.words_found]).toEqual([false, false]);
    expect((await search(home, { query: "automobile garage", limit: 3 }, context)).words_found).toBe(true);
    expect((await search(home, { query: "garage", mode: "vector", limit: 3 }, context)).words_found).toBe(true);
    const text = runCli(["search", "automobile", "-n", "1"], { home }).stdout;
    expect(text).toContain("1–1 of 10 · hybrid · no fragment holds the query's words: matched by meaning alone");
  });

  test("--explain shows both lists and the fused score", async () => {
    const response = await search(home, { query: "oven dough", explain: true, limit: 2 }, context);
    const top = response.results[0]!;
    expect(top.path).toBe("bread.md");
    expect(top.explain).toMatchObject({ mode: "hybrid", bm25: { rank: 1 }, vector: { rank: expect.any(Number) } });
    expect(top.explain!.fused).toBeGreaterThan(0);
  });

  test("a deleted or corrupt vectors.usearch is scanned around and reported by search, and rebuilt by the next index run", async () => {
    const file = annPath(repo.dir);
    const searched = async () => {
      const response = await search(home, { query: "automobile", mode: "vector", limit: 1, explain: true }, new SearchContext());
      expect(response.results[0]!.path).toBe("cars.md");
      return response.notes!.filter((note) => note.includes("vectors.usearch"));
    };
    expect(existsSync(file)).toBe(true);
    rmSync(file);
    expect(await searched()).toEqual([
      "ten: vectors.usearch needs rebuilding (it is missing; searches scan the vectors exactly meanwhile): run `researcher index ten`",
    ]);
    expect(existsSync(file)).toBe(false);
    writeFileSync(file, "not an index");
    expect(await searched()).toEqual([
      "ten: vectors.usearch needs rebuilding (it does not match its recorded checksum; searches scan the vectors exactly meanwhile): run `researcher index ten`",
    ]);
    expect(readFileSync(file, "utf8")).toBe("not an index");
    rmSync(file);
    const status = runCli(["status", "ten", "--json"], { home, env: GRAPH });
    expect(JSON.parse(status.stdout).ann).toBe(
      "vectors.usearch needs rebuilding (it is missing; searches scan the vectors exactly meanwhile): run `researcher index ten`",
    );
    expect(runCli(["status"], { home, env: GRAPH }).stdout).toContain("vectors.usearch needs rebuilding");
    await indexRepository(home, repo);
    expect(JSON.parse(runCli(["status", "ten", "--json"], { home, env: GRAPH }).stdout).ann).toBeNull();
    expect(Bun.file(file).size).toBeGreaterThan(100);
    expect(await searched()).toEqual([]);
  });

  test("vectors.usearch corrupted in place (same size and mtime) is never trusted: search works, index repairs it", async () => {
    const file = annPath(repo.dir);
    const good = readFileSync(file);
    const { mtimeMs, atimeMs } = statSync(file);
    const sameStamp = () => utimesSync(file, atimeMs / 1000, mtimeMs / 1000); // seconds as numbers keep the sub-ms part
    const corrupt = Uint8Array.from(good);
    for (let i = 0; i < corrupt.length; i += 3) corrupt[i] = 0xff;
    writeFileSync(file, corrupt);
    sameStamp();
    expect(statSync(file).mtimeMs).toBe(mtimeMs);
    writeFileSync(join(repo.dir, "lock"), `${process.ppid} ${processStartTime(process.ppid)}\n`); // a writer at work
    try {
      const held = runCli(["search", "automobile", "--mode", "vector", "--json", "-n", "1"], { home, env: GRAPH });
      expect(held.stderr).not.toContain("panic");
      expect(held.code).toBe(0);
      expect(JSON.parse(held.stdout).results[0].path).toBe("cars.md");
    } finally {
      rmSync(join(repo.dir, "lock"));
    }
    const hybrid = runCli(["search", "automobile", "--json", "-n", "1"], { home, env: GRAPH });
    expect(hybrid.code).toBe(0);
    expect(JSON.parse(hybrid.stdout).results[0].path).toBe("cars.md");
    writeFileSync(file, corrupt);
    sameStamp();
    expect(runCli(["index", "ten"], { home, env: GRAPH }).code).toBe(0);
    expect(readFileSync(file).equals(corrupt)).toBe(false);
    const after = runCli(["search", "automobile", "--mode", "vector", "--json", "-n", "1"], { home, env: GRAPH });
    expect(JSON.parse(after.stdout).results[0].path).toBe("cars.md");
  }, 60_000);

  test("a 100 KB query searches by meaning, in the library and on the command line", async () => {
    const words = ["automobile", "highway", "driver", "garage", "truck"];
    const query = Array.from({ length: 20_000 }, (_, i) => words[i % words.length])
      .join(" ")
      .slice(0, 100_000);
    const response = await search(home, { query, mode: "hybrid", limit: 1 }, new SearchContext());
    expect(response.results[0]!.path).toBe("cars.md");
    // onnxruntime's telemetry scanned /proc/self/cmdline recursively: a long command line crashed the process.
    const cli = runCli(["search", "--mode", "vector", "--json", "-n", "1", query], { home });
    expect(cli.stderr).not.toContain("Segmentation fault");
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).results[0].path).toBe("cars.md");
  }, 60_000);

  test("a search never takes the writer lock nor writes in the repository folder, whatever the ANN file's state", async () => {
    const file = annPath(repo.dir);
    const untouched = () => {
      const cli = runCli(["search", "automobile", "--json", "--explain", "-n", "1"], { home, env: GRAPH });
      expect(cli.code).toBe(0);
      expect(cli.stderr).toBe(""); // nothing logged either
      expect(JSON.parse(cli.stdout).results[0].path).toBe("cars.md");
    };
    const situations: Record<string, () => void> = {
      // ctime moved: the identity recorded no longer vouches for it, so it is read whole (and not recorded)
      touched: () => utimesSync(file, new Date(), statSync(file).mtime),
      stale: () => {
        const store = Store.open(repo.dir);
        store.meta.set("ann_generation", "older"); // as if the vectors changed since the file was built
        store.close();
      },
      missing: () => rmSync(file),
    };
    for (const [situation, arrange] of Object.entries(situations)) {
      arrange();
      for (const locked of [false, true]) {
        const release = locked ? acquireWriterLock(repo.dir, repo.name, "index") : () => {}; // held here; the search runs in another process
        try {
          const before = folderState(repo.dir);
          untouched();
          expect({ situation, locked, files: folderState(repo.dir) }).toEqual({ situation, locked, files: before });
        } finally {
          release();
        }
      }
    }
    await indexRepository(home, repo); // rebuilt by the writer
    expect(existsSync(file)).toBe(true);
  }, 60_000);

  test("editing one paragraph of a long document re-embeds only that fragment", async () => {
    const paragraphs = Array.from(
      { length: 12 },
      (_, i) => `## Part ${i}\n\nParagraph number ${i} talks about rivers and lakes and boats.\n`,
    );
    writeFileSync(join(docs, "long.md"), `# Long\n\n${paragraphs.join("\n")}`);
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1, embedded: 12 });
    paragraphs[5] = "## Part 5\n\nThis paragraph now talks about mountains instead.\n";
    writeFileSync(join(docs, "long.md"), `# Long\n\n${paragraphs.join("\n")}`);
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1, embedded: 1 });
  });

  test("a different model is a clear error that says how to re-embed, whether or not a file changed", async () => {
    const fp32 = { ...repo, embedding: { model: GLOVE, dtype: "fp32" as const } };
    // Refused up front: a run with nothing to embed says what the next one, with a changed file, says.
    const unchanged = await indexRepository(home, fp32).catch((e) => e);
    expect(unchanged.code).toBe("MODEL_MISMATCH");
    const documents = repositoryStatus(repo).documents;
    writeFileSync(join(docs, "ships.md"), "a brand new document about ships\n");
    const mismatch = await indexRepository(home, fp32).catch((e) => e);
    expect({ code: mismatch.code, message: mismatch.message }).toEqual({ code: unchanged.code, message: unchanged.message });
    expect(mismatch.hint).toContain("researcher index --embeddings-only ten");
    expect(repositoryStatus(repo).documents).toBe(documents); // refused before it indexed ships.md
    const redone = await indexRepository(home, fp32, { embeddingsOnly: true });
    expect(redone.embedded).toBeGreaterThan(10);
    // The configuration names the model and no dtype: the index's own call (fp32, recorded with its vectors) is
    // kept, so its searches work; a setting that names another call is the mismatch (the fp32 runs above).
    const kept = await search(home, { query: "ships", repositories: ["ten"] }, new SearchContext());
    expect(kept.mode).toBe("hybrid");
    await indexRepository(home, repo, { embeddingsOnly: true });
  });

  test("index --rebuild --model <other> cut off while it embeds leaves the old index and its vectors, searchable (hostile s8 #1)", async () => {
    const other = otherGlove("glove-renamed"); // another model
    const switched = registerRepository(home, { name: "switched", path: tempDir(), embedding: { model: GLOVE } });
    writeTree(switched.path, { "cars.md": TEN["cars.md"], "bread.md": TEN["bread.md"] });
    await indexRepository(home, switched);
    const before = repositoryStatus(switched);
    const cut = indexRepository(home, switched, {
      rebuild: true,
      model: other,
      onProgress: (progress) => {
        if (progress.phase === "embed") throw new Error("interrupted");
      },
    });
    await expect(cut).rejects.toThrow("interrupted");
    const after = repositoryStatus(switched);
    expect([after.model, after.vectors, after.documents]).toEqual([GLOVE, before.vectors, before.documents]);
    const found = await search(home, { query: "automobile", mode: "vector", repositories: ["switched"] }, new SearchContext());
    expect(found.results[0]!.path).toBe("cars.md");
    // Cut off just after its commit (while it merges the full-text index): config.yaml already names the new model,
    // so searches agree with the index (s9 hostile #1: every search was MODEL_MISMATCH in that gap).
    const late = indexRepository(home, switched, {
      rebuild: true,
      model: other,
      onProgress: (progress) => {
        if (progress.phase === "merge") throw new Error("interrupted late");
      },
    });
    await expect(late).rejects.toThrow("interrupted late");
    expect(repositoryStatus(switched).model).toBe(other);
    const agreed = await search(home, { query: "automobile", mode: "vector", repositories: ["switched"] }, new SearchContext());
    expect(agreed.results[0]!.path).toBe("cars.md");
    // Run to its end, the rebuild switches the model.
    expect(await indexRepository(home, getRepository(home, "switched"), { rebuild: true, model: GLOVE })).toMatchObject({
      model: GLOVE,
      embedded: 2,
    });
  });

  test("a new default model (model set) is for new repositories: one embedded before keeps its model, searches and runs work (s9 new user #2)", async () => {
    const own = tempDir();
    const docs = tempDir();
    writeTree(docs, { "cars.md": TEN["cars.md"], "bread.md": TEN["bread.md"] });
    setConfigValue(own, "embedding.model", GLOVE);
    const before = registerRepository(own, { name: "before", path: docs });
    expect(await indexRepository(own, before)).toMatchObject({ embedded: 2, model: GLOVE });
    // No RESEARCHER_MODEL_PATH: the note tells models apart as an index run would, and it would take that one.
    const modelSet = (model: string) => runCli(["model", "set", model], { home: own, env: { RESEARCHER_MODEL_PATH: "" } });
    // The same model at another path (a link, a copy: its name and files) is no other model: no note (s27 review D3).
    const same = join(tempDir(), basename(GLOVE));
    symlinkSync(GLOVE, same);
    expect(modelSet(`${same}/`)).toMatchObject({
      code: 0,
      stdout: `embedding model: ${same}\n`,
      stderr: "",
    });
    // Through a link of another name, or copied: the same files, no other model (s27b retest N4).
    const link = join(tempDir(), "glovelink");
    symlinkSync(GLOVE, link);
    const copy = join(tempDir(), basename(GLOVE));
    cpSync(GLOVE, copy, { recursive: true });
    for (const path of [link, copy]) {
      expect(modelSet(path)).toMatchObject({ code: 0, stdout: `embedding model: ${path}\n`, stderr: "" });
    }
    // An index run takes the link as that model: its vectors are kept, a new file embedded beside them.
    writeTree(docs, { "tea.md": "a note about green tea\n" });
    expect(await indexRepository(own, before, { model: link })).toMatchObject({ indexed: 1, embedded: 1 });
    rmSync(join(docs, "tea.md"));
    expect(await indexRepository(own, before)).toMatchObject({ removed: 1 });
    const other = otherGlove("glove-default");
    // It says which repositories keep theirs: a user who "switched" saw nothing change (s26 user F6).
    expect(modelSet(other)).toMatchObject({
      code: 0,
      stdout: `embedding model: ${other}\n`,
      stderr:
        "note: 1 repository keeps the model it was embedded with (before): `researcher index --embeddings-only before` moves it to this model\n",
    });
    // Settings for the new default (a query prefix is part of how a model is called) leave the kept model as it was
    // called (s9 review #3: "embedded with X, not X").
    setConfigValue(own, "embedding.query_prefix", "query: ");
    const found = await search(own, { query: "automobile", mode: "hybrid", repositories: ["before"] }, new SearchContext());
    expect(found.results[0]!.path).toBe("cars.md");
    writeTree(docs, { "ships.md": "a brand new document about ships\n" });
    expect(await indexRepository(own, before)).toMatchObject({ indexed: 1, model: GLOVE });
    // Named with --model (the mismatch hint's own advice writes it into the repository's settings), it is still
    // called as it was recorded (s10 review #3).
    expect(await indexRepository(own, getRepository(own, "before"), { model: GLOVE })).toMatchObject({ model: GLOVE });
    const named = await search(own, { query: "automobile", mode: "vector", repositories: ["before"] }, new SearchContext());
    expect(named.results[0]!.path).toBe("cars.md");
    // A rebuild takes today's settings for its model: the vectors are made again, inside its transaction.
    expect(await indexRepository(own, getRepository(own, "before"), { rebuild: true })).toMatchObject({ model: GLOVE, embedded: 3 });
    const rebuilt = await search(own, { query: "automobile", mode: "vector", repositories: ["before"] }, new SearchContext());
    expect(rebuilt.results[0]!.path).toBe("cars.md");
    const later = registerRepository(own, { name: "later", path: tempDir() });
    writeTree(later.path, { "cars.md": TEN["cars.md"] });
    expect(await indexRepository(own, later)).toMatchObject({ model: other });
  });

  test("index --model with another model is refused before anything changes, changed files or not; a copy of the same model is not another", async () => {
    const other = otherGlove("another-model"); // another tokenizer: another fingerprint, so another model
    const pinned = registerRepository(home, { name: "pinned", path: tempDir() });
    writeTree(pinned.path, { "cars.md": TEN["cars.md"] });
    expect(await indexRepository(home, pinned, { model: GLOVE })).toMatchObject({ embedded: 1, model: GLOVE });
    const unchanged = await indexRepository(home, pinned, { model: other }).catch((e) => e);
    expect(unchanged.code).toBe("MODEL_MISMATCH");
    expect(unchanged.message).toContain(`was embedded with ${GLOVE}`);
    writeTree(pinned.path, { "bread.md": TEN["bread.md"] });
    const changed = await indexRepository(home, pinned, { model: other }).catch((e) => e);
    expect({ code: changed.code, message: changed.message }).toEqual({ code: unchanged.code, message: unchanged.message });
    expect(repositoryStatus(pinned).documents).toBe(1);
    // The same model through another folder (the same files, so the same fingerprint) is accepted.
    expect(await indexRepository(home, pinned, { model: gloveThroughOnnx() })).toMatchObject({ indexed: 1, embedded: 1 });
    // A folder named with --model that holds no model is a typo, refused before anything changes (it was a silent
    // success when nothing was left to embed).
    writeTree(pinned.path, { "later.md": "# Later\n\nwords\n" });
    for (const [model, why] of [
      ["/nonexistent/model", /\/nonexistent\/model does not exist/],
      [tempDir(), /is not a model folder/],
    ] as const) {
      await expect(indexRepository(home, pinned, { model })).rejects.toThrow(why);
    }
    expect(repositoryStatus(pinned).documents).toBe(2);
    // A search is refused the same way: it searched with bm25 and exited 0 (s18 user #10); an empty name names none
    // (it took the configured model without a word: s18 retest N8).
    for (const model of ["/nonexistent/model", tempDir()]) {
      const searched = await search(home, { query: "car", repositories: ["pinned"], model }).catch((e) => e);
      expect({ model, code: searched.code }).toEqual({ model, code: "MODEL_UNAVAILABLE" });
    }
    for (const model of ["", " "]) {
      expect(await search(home, { query: "car", repositories: ["pinned"], model }).catch((e) => e)).toMatchObject({ code: "USAGE" });
      expect(await indexRepository(home, pinned, { model }).catch((e) => e)).toMatchObject({ code: "USAGE" });
    }
  }, 60_000);

  test("--embeddings-only with a model that cannot load keeps the old vectors", async () => {
    const before = repositoryStatus(repo);
    expect(before.vectors).toBeGreaterThan(0);
    const broken = { ...repo, embedding: { model: "/nonexistent/model-folder" } };
    await expect(indexRepository(home, broken, { embeddingsOnly: true })).rejects.toThrow(/model-folder does not exist/);
    expect(repositoryStatus(repo)).toMatchObject({ vectors: before.vectors, model: before.model });
  });

  test("a repository keeps the model it was embedded with when no setting names one", async () => {
    const plain = registerRepository(home, { name: "remembers", path: tempDir() });
    writeTree(plain.path, { "cars.md": TEN["cars.md"], "bread.md": TEN["bread.md"] });
    expect(await indexRepository(home, plain, { model: GLOVE })).toMatchObject({ embedded: 2, model: GLOVE });
    writeTree(plain.path, { "space.md": TEN["space.md"] });
    expect(await indexRepository(home, plain)).toMatchObject({ embedded: 1, model: GLOVE }); // no --model this time
    const response = await search(
      home,
      { query: "automobile", repositories: ["remembers"], mode: "vector", limit: 1 },
      new SearchContext(),
    );
    expect(response.results[0]!.path).toBe("cars.md");
  });

  test("a BM25-only repository still searches, in bm25 mode, and says so", async () => {
    const plain = registerRepository(home, { name: "plain", path: tempDir(), embed: false });
    writeTree(plain.path, { "x.md": "# X\n\nautomobile repair manual\n" });
    await indexRepository(home, plain);
    const response = await search(home, { query: "automobile", repositories: ["plain"], explain: true }, new SearchContext());
    expect(response.mode).toBe("bm25");
    expect(response.notes![0]).toContain("no vectors");
    const error = await search(home, { query: "x", repositories: ["plain"], mode: "vector" }, new SearchContext()).catch((e) => e);
    expect(error.code).toBe("NO_VECTORS");
    // Hybrid asked by name is its bm25 half, with a warning (s15 agent #3: an error coded "never indexed").
    const hybrid = await search(home, { query: "automobile", repositories: ["plain"], mode: "hybrid" }, new SearchContext());
    expect(hybrid).toMatchObject({ mode: "bm25", total: 1 });
    expect(hybrid.warnings).toEqual([
      {
        repository: "plain",
        code: "NO_VECTORS",
        message: "searched with bm25: repository 'plain' was indexed without embeddings: it has no vectors for hybrid search",
        hint: "embed it with `researcher config set repositories.plain.embed true && researcher index plain`",
      },
    ]);
  });
});

test("a repository that embeds but holds no fragment (its one file failed) is searched without a warning, in any mode (s23 contracts L11)", async () => {
  // It said "indexed without embeddings … embed it with researcher index", a command that changed nothing.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "broken.md": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]) });
  const repo = registerRepository(home, { name: "bad", path: docs });
  await indexRepository(home, repo, { noEmbed: true });
  for (const mode of ["hybrid", "vector"] as const) {
    const response = await search(home, { query: "anything", repositories: ["bad"], mode }, new SearchContext());
    // In the mode asked: in bm25 instead, a vector search beside it said "hybrid" (s23 retest N3).
    expect({ mode: response.mode, warnings: response.warnings ?? [], results: response.results }).toEqual({
      mode,
      warnings: [],
      results: [],
    });
  }
});

describeShared("a repository whose embedding lags behind its text", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "cars.md": TEN["cars.md"], "bread.md": TEN["bread.md"] });
  const repo = registerRepository(home, { name: "lagging", path: docs, embedding: { model: GLOVE } });

  test("--explain says how much of it has vectors; hybrid still finds the unembedded text by its words", async () => {
    await indexRepository(home, repo);
    writeTree(docs, { "space.md": TEN["space.md"] });
    expect(await indexRepository(home, repo, { noEmbed: true })).toMatchObject({ indexed: 1, embedded: 0 });
    const context = new SearchContext();
    try {
      const response = await search(home, { query: "telescope galaxy", explain: true }, context);
      expect(response.mode).toBe("hybrid");
      expect(response.results[0]).toMatchObject({ path: "space.md" });
      expect(response.notes).toContainEqual(
        expect.stringMatching(/^lagging: vectors cover 2 of 3 fragments; the rest are found by bm25 only .*researcher index lagging/),
      );
      const vector = await search(home, { query: "telescope galaxy", mode: "vector", explain: true }, context);
      expect(vector.notes).toContainEqual(
        expect.stringMatching(/^lagging: vectors cover 2 of 3 fragments; the rest cannot be found in vector mode/),
      );
      await indexRepository(home, repo);
      const caughtUp = await search(home, { query: "telescope galaxy", explain: true }, context);
      expect(caughtUp.notes!.filter((n) => n.includes("vectors cover"))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describeShared("a model whose files changed since the repository was embedded", () => {
  test("is named once, with what changed, and the hint re-embeds (s15 hostile #4: 'embedded with X, not X')", async () => {
    const home = tempDir();
    const model = join(tempDir(), "model");
    cpSync(GLOVE, model, { recursive: true });
    const repo = registerRepository(home, { name: "changed", path: tempDir(), embedding: { model } });
    writeTree(repo.path, { "cars.md": TEN["cars.md"] });
    await indexRepository(home, repo);
    // A new revision or a quantised file swapped in: the same name and size, other weights.
    copyFileSync(join(model, "onnx/model.onnx"), join(model, "onnx/model_quantized.onnx"));
    const error = await search(home, { query: "automobile", mode: "vector", repositories: ["changed"] }, new SearchContext()).catch(
      (e) => e,
    );
    expect(error.code).toBe("MODEL_MISMATCH");
    expect(error.message).toMatch(
      /^the files of .*\/model changed since repository 'changed' was embedded with it \(fingerprint \w{12} → \w{12}\)$/,
    );
    expect(error.hint).toContain("researcher index --embeddings-only changed --model");
    // Searches go on with bm25 while index runs refuse the model: the hint says the index no longer follows the files.
    expect(error.hint).toContain("(until then, no index run takes in changes)");
    // By default (auto) the search answers with its words, saying why, as for a model that cannot be loaded.
    const auto = await search(home, { query: "automobile", repositories: ["changed"] }, new SearchContext());
    expect(auto).toMatchObject({ mode: "bm25", warnings: [{ repository: "changed", code: "MODEL_MISMATCH" }] });
  });

  test("another model, named by RESEARCHER_MODEL or the configuration, stays an error in auto mode (s16 review #3)", async () => {
    const home = tempDir();
    const repo = registerRepository(home, { name: "mine", path: tempDir(), embedding: { model: GLOVE } });
    writeTree(repo.path, { "cars.md": TEN["cars.md"] });
    await indexRepository(home, repo);
    const other = join(tempDir(), "other");
    cpSync(GLOVE, other, { recursive: true });
    copyFileSync(join(other, "onnx/model.onnx"), join(other, "onnx/model_quantized.onnx")); // other weights
    // Both searched bm25 with exit 0 and a warning, as if the repository's own model had changed.
    // RESEARCHER_MODEL_PATH (which the tests set) goes before RESEARCHER_MODEL: emptied, it is not set.
    const viaEnv = runCli(["search", "automobile"], { home, env: { RESEARCHER_MODEL_PATH: "", RESEARCHER_MODEL: other } });
    expect(viaEnv).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: repository 'mine' was embedded with /) });
    expect(runCli(["config", "set", "repositories.mine.embedding.model", other], { home }).code).toBe(0);
    const viaConfig = runCli(["search", "automobile"], { home, env: { RESEARCHER_MODEL_PATH: "" } });
    expect(viaConfig).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: repository 'mine' was embedded with /) });
  });
});

describeShared("a query of words the model does not know (s19 user F2)", () => {
  // GloVe-SIF embeds an unknown word as [UNK], so "restic backups", "A100" and the fragments of an Arabic or a
  // Japanese note all pointed one way, at cosine 1: those notes came first, above the one exact match.
  const home = tempDir();
  const en = registerRepository(home, { name: "en", path: tempDir(), embedding: { model: GLOVE } });
  const ar = registerRepository(home, { name: "ar", path: tempDir(), embedding: { model: GLOVE } });
  writeTree(en.path, {
    "backup.md": "# Backups\n\nNightly restic backups go to the NAS on the A100 server; we keep 12 monthly snapshots.\n",
    "cook.md": "# Cooking\n\nBoil the pasta for ten minutes and add salt.\n",
  });
  writeTree(ar.path, {
    "khat.md": "# انواع الخطوط العربية\n\nانواع الخطوط العربية انواع الخطوط العربية\n",
    "jp.md": "# 削除\n\nメニューの「スタート」⇒「コントロールパネル」\n",
  });
  beforeAll(async () => {
    await indexRepository(home, en);
    await indexRepository(home, ar);
  }, HOOK_TIMEOUT);

  test("finds nothing by meaning: the exact match comes first, and nothing of unknown words is near it", async () => {
    for (const query of ["restic backups", "A100"]) {
      const hybrid = await search(home, { query, limit: 3 }, new SearchContext());
      expect(hybrid.results.map((r) => `${r.repository}:${r.path}`)).toEqual(["en:backup.md"]);
      // What it counts is what it ranks: the BM25 match (it counted every fragment: "1–1 of 4", s19 retest).
      expect(hybrid.total).toBe(1);
      const vector = await search(home, { query, mode: "vector" }, new SearchContext());
      expect(vector).toMatchObject({ results: [], total: 0 });
      // Said, with what to do: a bare "no results" read as "nothing about it here" (s21 MCP #3).
      expect(vector.warnings?.map((w) => [w.repository, w.code, w.hint])).toEqual([
        ["ar", "UNKNOWN_QUERY", "search in hybrid or bm25 mode, or with other words"],
        ["en", "UNKNOWN_QUERY", "search in hybrid or bm25 mode, or with other words"],
      ]);
      expect(hybrid.warnings).toBeUndefined();
    }
    // On the command line, once for the repositories it is the same for (six like pairs for six: s22 user U1).
    expect(runCli(["search", "restic backups", "--mode", "vector"], { home }).stderr).toBe(
      'warning: ar, en: the embedding model knows none of the query\'s words: nothing ranks by meaning\nhint: search in hybrid or bm25 mode, or with other words\nno results for "restic backups"\n',
    );
    // A word it knows still finds by meaning.
    const known = await search(home, { query: "noodles", mode: "vector", limit: 1 }, new SearchContext());
    expect(known.results.map((r) => r.path)).toEqual(["cook.md"]);
    expect(known.warnings).toBeUndefined();
  });
});

describeShared("a repository whose vector list has no voice", () => {
  test(
    "adds no vector evidence to a merged list: its results rank by their words alone (s19 user F2)",
    async () => {
      const home = tempDir();
      // Part numbers GloVe has no word for: pseudo-queries find nothing by meaning, so hybrid weighs its vector list 0.
      const parts = registerRepository(home, { name: "parts", path: tempDir(), embedding: { model: GLOVE } });
      const files: Record<string, string> = {};
      for (let i = 0; i < 40; i++) files[`p${i}.md`] = `qx${1000 + i}zv wk${2000 + i}jt vq${3000 + i}rn\n`;
      files["laptop.md"] = "qx9999zv laptop\n";
      writeTree(parts.path, files);
      const notes = registerRepository(home, { name: "notes", path: tempDir(), embedding: { model: GLOVE } });
      writeTree(notes.path, { "computers.md": "# Computers\n\nA notebook computer with a keyboard and a screen.\n" });
      await indexRepository(home, parts);
      await indexRepository(home, notes);
      const found = await search(home, { query: "laptop computer", explain: true }, new SearchContext());
      const fromParts = found.results.filter((r) => r.repository === "parts");
      expect(fromParts.length).toBeGreaterThan(0);
      for (const result of fromParts) {
        expect(result.explain!.weights).toEqual({ bm25: 1, vector: 0 });
        expect(result.explain!.merge!.vector).toBeNull();
      }
    },
    HOOK_TIMEOUT,
  );
});

describeShared("a repository whose vector list has no voice, searched alone", () => {
  test(
    "lists only what BM25 matched, counts only that, and no fragment of score 0 (s28 user #3, agent #2)",
    async () => {
      const home = tempDir();
      // As "parts" above: GloVe knows no part number, so the vector list gets weight 0.
      const parts = registerRepository(home, { name: "parts", path: tempDir(), embedding: { model: GLOVE } });
      const files: Record<string, string> = {};
      for (let i = 0; i < 40; i++) files[`p${i}.md`] = `qx${1000 + i}zv wk${2000 + i}jt vq${3000 + i}rn\n`;
      files["laptop.md"] =
        `# Inventory\n\nqx9999zv laptop\n\n## Notes\n\n${"A notebook computer with a keyboard and a screen. ".repeat(60)}\n`;
      writeTree(parts.path, files);
      await indexRepository(home, parts);
      for (const documents of [false, true]) {
        const found = await search(home, { query: "laptop", documents, explain: true, limit: 5 }, new SearchContext());
        expect(found.results.every((r) => r.explain!.weights!.vector === 0)).toBe(true);
        // Every other file was listed after it at 0.00: "1–5 of 41", documents of nothing but part numbers.
        expect(found.results.map((r) => [r.path, r.score])).toEqual([["laptop.md", 1]]);
        expect(found.total).toBe(1);
      }
      // A document's further fragments: its section without the word scored 0 and was listed as "also".
      const page = await search(home, { query: "laptop", documents: true }, new SearchContext());
      const [laptop] = page.results as { fragments: { score: number }[] }[];
      expect(laptop!.fragments.map((f) => f.score)).toEqual([1]);
    },
    HOOK_TIMEOUT,
  );
});

describeShared("a repository whose vector list has no voice, and a query no fragment holds the words of", () => {
  test(
    "answers nothing, and says why and that vector mode ranks by meaning; --explain keeps its weights (s28b retest R3)",
    async () => {
      const home = tempDir();
      // As "parts" above: GloVe knows no part number, so the vector list gets weight 0; it knows "staff departure".
      const parts = registerRepository(home, { name: "parts", path: tempDir(), embedding: { model: GLOVE } });
      const files: Record<string, string> = { "leaving.md": "# Leaving\n\nqx9999zv employees resigned and left the company\n" };
      for (let i = 0; i < 40; i++) files[`p${i}.md`] = `qx${1000 + i}zv wk${2000 + i}jt vq${3000 + i}rn\n`;
      writeTree(parts.path, files);
      await indexRepository(home, parts);
      const query = "staff departure";
      const found = await search(home, { query }, new SearchContext());
      const hint = `\`researcher search 'staff departure' --mode vector\` ranks by meaning`;
      expect(found).toMatchObject({ mode: "hybrid", total: 0, results: [], words_found: false });
      expect(found.warnings).toEqual([
        {
          repository: "parts",
          code: "NO_WORD_MATCH",
          message: "no fragment holds the query's words, and with this model its vectors carry no weight in hybrid",
          hint,
        },
      ]);
      // It was "no results" alone, and --explain printed nothing: the weights line went with the results.
      const text = runCli(["search", query, "--explain"], { home });
      expect(text.stderr).toBe(
        "warning: parts: no fragment holds the query's words, and with this model its vectors carry no weight in hybrid\n" +
          `hint: ${hint}\nno results for "staff departure"\n`,
      );
      expect(text.stdout).toMatch(/^parts: hybrid weights bm25 1, vector 0: /);
      expect(JSON.parse(runCli(["search", query, "--json"], { home }).stdout).warnings).toEqual(found.warnings);
      // An agent has the tool's mode, a REST client the route's.
      expect(agentHint(hint)).toBe('the search_fragments tool with query "staff departure" and mode "vector" ranks by meaning');
      expect(restHint(hint)).toBe("`GET /search?q=staff%20departure&mode=vector` ranks by meaning");
      // Vector mode ranks by meaning, and hybrid with a word match says nothing more.
      expect((await search(home, { query, mode: "vector", limit: 1 }, new SearchContext())).results).toHaveLength(1);
      expect((await search(home, { query: "employees", limit: 1 }, new SearchContext())).warnings).toBeUndefined();
      // Under a filter, the words may be in what it leaves out: said of what it admits, with the filter kept; and a
      // filter that admits nothing here is no missing word, as vector mode would answer nothing either (s29 user 2).
      const filtered = await search(home, { query: "employees", filter: "p1*.md" }, new SearchContext());
      expect(filtered.warnings).toEqual([
        {
          repository: "parts",
          code: "NO_WORD_MATCH",
          message: "no fragment the filters admit holds the query's words, and with this model its vectors carry no weight in hybrid",
          hint: "`researcher search employees --mode vector` ranks by meaning (with the same repositories and filters)",
        },
      ]);
      const none = await search(home, { query, where: [parseFilter("format=pdf")] }, new SearchContext());
      expect(none.warnings).toBeUndefined();
      // A query starting with `-` comes after `--`: as an option it was an error (s29 code A3).
      const dashed = (await search(home, { query: "-staff departure" }, new SearchContext())).warnings?.[0]?.hint;
      expect(dashed).toBe("`researcher search --mode vector -- '-staff departure'` ranks by meaning");
      expect(agentHint(dashed!)).toBe('the search_fragments tool with query "-staff departure" and mode "vector" ranks by meaning');
      // A backtick in the query ended the command's code span: the hint names the mode alone, read alike by the CLI,
      // an agent and a REST client (s29b retest F3).
      const ticked = "staff `departure`";
      const plain = "the same search in vector mode ranks by meaning";
      expect((await search(home, { query: ticked }, new SearchContext())).warnings?.[0]?.hint).toBe(plain);
      expect(runCli(["search", ticked], { home }).stderr).toContain(`\nhint: ${plain}\n`);
      expect(agentHint(plain)).toBe(plain);
      expect(restHint(plain)).toBe(plain);
    },
    HOOK_TIMEOUT,
  );
});

describeShared("a repository whose vector list has a small voice", () => {
  test(
    "lists no fragment of fused score 0 among a document's own (s28 agent #2)",
    async () => {
      const home = tempDir();
      // Too few fragments to calibrate (0.8 / 0.2): the vector list's last fragment, not matched by BM25, fuses to 0.
      const notes = registerRepository(home, { name: "notes", path: tempDir(), embedding: { model: GLOVE } });
      writeTree(notes.path, {
        "ideas.md":
          "# Ideas\n\n## Pathways\n\nThe scanned paper says IKK alpha activates a second NF-kB pathway.\n\n## Cycles\n\nA weak reference breaks a reference cycle.\n\n## Garden\n\nTomatoes want sun and water in July.\n",
      });
      await indexRepository(home, notes);
      const query = "NF-kB signaling IKK alpha";
      const fragments = await search(home, { query, limit: 100 }, new SearchContext());
      expect(fragments.results.filter((r) => r.score === 0).length).toBeGreaterThan(0);
      const [ideas] = (await search(home, { query, documents: true }, new SearchContext())).results as {
        fragments: { score: number }[];
      }[];
      expect(ideas!.fragments[0]!.score).toBe(1);
      // "also lines 11" for the garden, which shares nothing with the query.
      expect(ideas!.fragments.filter((f) => f.score === 0)).toEqual([]);
    },
    HOOK_TIMEOUT,
  );

  test(
    "keeps a document's further fragments that hold the words, though they fuse to 0 past both lists' first 100 (s29 code A1)",
    async () => {
      const home = tempDir();
      const notes = registerRepository(home, { name: "notes", path: tempDir(), embedding: { model: GLOVE } });
      // 60 documents of three sections, each holding "zebra": 180 matches, most past each list's first 100.
      const section = (i: number, j: number) => `## Part ${j}\n\n${"zebra ".repeat(1 + ((i + j) % 4))}grazes on plain ${i}-${j}.\n`;
      const files: Record<string, string> = {};
      for (let i = 0; i < 60; i++) files[`z${i}.md`] = `# Z${i}\n\n${[1, 2, 3].map((j) => section(i, j)).join("\n")}`;
      writeTree(notes.path, files);
      await indexRepository(home, notes);
      const counts = async (mode: "bm25" | "hybrid") => {
        const page = await search(home, { query: "zebra", mode, documents: true, limit: 60 }, new SearchContext());
        return Object.fromEntries((page.results as { path: string; fragments: unknown[] }[]).map((r) => [r.path, r.fragments.length]));
      };
      const words = await counts("bm25");
      expect(Object.values(words).every((n) => n === 3)).toBe(true);
      expect(await counts("hybrid")).toEqual(words);
    },
    HOOK_TIMEOUT,
  );

  test(
    "adds vector evidence in proportion to it: a date near 'April … month' stays below the exact line (s22 user F1)",
    async () => {
      const home = tempDir();
      // Too few fragments to calibrate: hybrid weighs BM25 0.8 and vectors 0.2 in both, so a vector-only neighbour's
      // fused score is at most 0.2 in its repository, under the exact line's; across repositories it must be too.
      const books = registerRepository(home, { name: "books", path: tempDir(), embedding: { model: GLOVE } });
      writeTree(books.path, {
        "waste-land.md":
          "# The Burial of the Dead\n\nApril is the cruellest month, breeding lilacs out of the dead land, mixing memory and desire.\n",
        "sea.md": "# The Sea\n\nThe ship sailed west across the grey water for many days.\n",
      });
      const papers = registerRepository(home, { name: "papers", path: tempDir(), embedding: { model: GLOVE } });
      writeTree(papers.path, { "report.md": "1 July 2013\n", "other.md": "# Methods\n\nWe measured the flow of water in pipes.\n" });
      await indexRepository(home, books);
      await indexRepository(home, papers);
      const found = await search(home, { query: "April is the cruellest month", explain: true, limit: 3 }, new SearchContext());
      expect(found.results[0]).toMatchObject({ repository: "books", path: "waste-land.md" });
      const date = found.results.find((r) => r.path === "report.md");
      expect(date?.explain).toMatchObject({ weights: { bm25: 0.8, vector: 0.2 }, bm25: null });
      // The same neighbour in vector mode, where the vector list is the whole voice, carries its evidence in full.
      const vector = await search(home, { query: "April is the cruellest month", mode: "vector", explain: true }, new SearchContext());
      const full = vector.results.find((r) => r.path === "report.md")!.explain!.merge!.vector!;
      expect(date!.explain!.merge!.vector).toBeCloseTo(full * 0.25, 2);
    },
    HOOK_TIMEOUT,
  );
});
