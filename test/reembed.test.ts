/**
 * README's "re-embed with another model": `index <repo> --embeddings-only --model <folder>` makes that model the
 * repository's own, so its searches embed queries with it and later index runs embed new text with it; and the hint a
 * model mismatch gives is a command that works.
 */
import { Database } from "bun:sqlite";
import { beforeAll, expect, test } from "bun:test";
import { cpSync, rmSync, statSync, symlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository, getRepository } from "../src/repos.ts";
import { search, SearchContext } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { describeShared, GLOVE, HOOK_TIMEOUT, otherGlove, runCli, SHARED, tempDir, writeTree } from "./helpers.ts";

describeShared("re-embedding one repository with another model", () => {
  const home = tempDir();
  const models = tempDir();
  const minilm = join(models, "minilm-l6-arch-random");
  const fresh = tempDir();
  // No RESEARCHER_MODEL_PATH: the models come from config.yaml, as for a user.
  const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
  beforeAll(() => {
    expect(Bun.spawnSync(["bash", join(SHARED, "models/unpack-minilm.sh"), models]).exitCode).toBe(0);
    const old = tempDir();
    writeTree(old, { "x.md": "# Whales\n\nThe whale swims in the sea.\n" });
    writeTree(fresh, { "y.md": "# Songs\n\nWhale songs at sea.\n" });
    registerRepository(home, { name: "old", path: old });
    registerRepository(home, { name: "fresh", path: fresh });
    expect(cli("model", "set", GLOVE).code).toBe(0);
    expect(cli("index", "--quiet").code).toBe(0);
  }, HOOK_TIMEOUT);

  test("README's example re-embeds it, and every search afterwards works", () => {
    const reembed = cli("index", "fresh", "--embeddings-only", "--model", minilm, "--json");
    expect(reembed.code).toBe(0);
    // No fragment is written: the summary says what the index holds and what was embedded (it said "1 fragments written").
    const summary = JSON.parse(reembed.stdout);
    expect(summary).toMatchObject({ model: minilm, embedded: 1, fragments: 0, fragments_total: 1, documents_total: 1 });
    expect(summary).not.toHaveProperty("documents");

    const all = cli("search", "whale", "--json");
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);
    const response = JSON.parse(all.stdout);
    expect(response.skipped).toEqual([]);
    expect(response.repositories).toEqual(["fresh", "old"]);
    for (const mode of ["vector", "hybrid"]) {
      const one = cli("search", "whale", "--repo", "fresh", "--mode", mode, "--json");
      expect({ mode, code: one.code, stderr: one.stderr }).toEqual({ mode, code: 0, stderr: "" });
      expect(JSON.parse(one.stdout).results[0].path).toBe("y.md");
    }
    const status = JSON.parse(cli("status", "--json").stdout) as { name: string; model: string }[];
    expect(status.map((s) => [s.name, s.model])).toEqual([
      ["fresh", minilm],
      ["old", GLOVE],
    ]);
  }, 60_000);

  test("a later index run embeds new text with the repository's model, not the configured one", () => {
    writeTree(fresh, { "z.md": "# More\n\nMore whales.\n" });
    const run = cli("index", "fresh", "--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ model: minilm, embedded: 1, embeddings_pending: 0 });
  }, 60_000);

  test("a model mismatch names the command that re-embeds, and that command works", () => {
    const mismatch = cli("search", "whale", "--repo", "old", "--model", minilm);
    expect(mismatch.code).toBe(1);
    const command = /^hint: .*`(researcher index [^`]+)`/m.exec(mismatch.stderr)?.[1];
    expect(command).toBe(`researcher index --embeddings-only old --model ${minilm}`);
    expect(cli(...command!.split(" ").slice(1)).code).toBe(0);
    const after = cli("search", "whale", "--repo", "old", "--mode", "vector", "--json");
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout).results[0].path).toBe("x.md");
  }, 60_000);
});

describeShared("a model folder replaced under a running server", () => {
  test("the server's next search loads the folder's new model once the repository is re-embedded (s12 review #5)", async () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# Cars\n\nThe automobile and its engine.\n", "b.md": "# Food\n\nBread and cheese.\n" });
    const folder = join(tempDir(), "model");
    cpSync(GLOVE, folder, { recursive: true });
    const repo = registerRepository(home, { name: "w8", path: docs, embedding: { model: folder } });
    await indexRepository(home, repo);
    const context = new SearchContext();
    try {
      const hybrid = () => search(home, { query: "car", repositories: ["w8"], mode: "hybrid" }, context);
      expect((await hybrid()).mode).toBe("hybrid");
      // Another model copied into the same folder, the repository re-embedded with it (the hint's own command).
      rmSync(folder, { recursive: true });
      const models = tempDir();
      expect(Bun.spawnSync(["bash", join(SHARED, "models/unpack-minilm.sh"), models]).exitCode).toBe(0);
      cpSync(join(models, "minilm-l6-arch-random"), folder, { recursive: true });
      await indexRepository(home, getRepository(home, "w8"), { embeddingsOnly: true });
      // It failed MODEL_MISMATCH on every search until the server restarted; the CLI searched fine meanwhile.
      const after = await hybrid();
      expect(after.mode).toBe("hybrid");
      expect(after.results.length).toBe(2);
    } finally {
      await context.close();
    }
  }, 60_000);
});

describeShared("a repository made BM25-only after it was embedded (s21 scripts #0)", () => {
  test("`embed false` in config.yaml: the next run drops its vectors, searches are BM25's and verify is clean after an edit", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# Strings\n\nStrings hold text.\n", "b.md": "# Maps\n\nMaps hold pairs.\n" });
    const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
    expect(cli("model", "set", GLOVE).code).toBe(0);
    expect(cli("repo", "add", "ef", docs).code).toBe(0);
    expect(JSON.parse(cli("index", "ef", "--json").stdout)).toMatchObject({ embedded: 2, model: GLOVE });
    expect(cli("config", "set", "repositories.ef.embed", "false").code).toBe(0);
    // Its vectors stayed, searches stayed hybrid, and an edit left a fragment without a vector no run embedded.
    expect(JSON.parse(cli("index", "ef", "--json").stdout)).toMatchObject({ embedded: 0, model: null });
    expect(JSON.parse(cli("status", "ef", "--json").stdout)).toMatchObject({ model: null, vectors: 0 });
    expect(JSON.parse(cli("search", "strings", "--json").stdout).mode).toBe("bm25");
    writeTree(docs, { "a.md": "# Strings\n\nStrings hold text, and more.\n" });
    expect(cli("index", "ef", "--quiet").code).toBe(0);
    const verify = cli("verify", "ef", "--json");
    expect({ code: verify.code, problems: JSON.parse(verify.stdout).problems }).toEqual({ code: 0, problems: [] });
    // A one-run --no-embed of an embedded repository keeps its vectors, as before.
    expect(cli("config", "set", "repositories.ef.embed", "true").code).toBe(0);
    expect(JSON.parse(cli("index", "ef", "--json").stdout)).toMatchObject({ embedded: 2, model: GLOVE });
    expect(JSON.parse(cli("index", "ef", "--no-embed", "--rebuild", "--json").stdout)).toMatchObject({ embedded: 0, model: GLOVE });
  }, 60_000);
});

describeShared("a model folder named through a link (s27b retest N4)", () => {
  test("a rebuild with the model through a link keeps the vectors the folder made", () => {
    // Its fingerprint named the link, not the folder: the rebuild re-embedded everything with the same model.
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# Strings\n\nStrings hold text.\n", "b.md": "# Maps\n\nMaps hold pairs.\n" });
    const link = join(tempDir(), "glovelink");
    symlinkSync(GLOVE, link);
    const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
    expect(cli("repo", "add", "lk", docs).code).toBe(0);
    expect(JSON.parse(cli("index", "lk", "--model", GLOVE, "--json").stdout)).toMatchObject({ embedded: 2 });
    expect(JSON.parse(cli("index", "lk", "--rebuild", "--model", link, "--json").stdout)).toMatchObject({ embedded: 0 });
  }, 60_000);
});

describeShared("a model folder through a link, embedded with the link (s28 code review #3)", () => {
  test("the folder it leads to is that model: model set says nothing, a rebuild re-embeds nothing", () => {
    // The link's fingerprint was not one the folder answered to: the note named the repository, and a rebuild
    // re-embedded every vector with the same model.
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# Strings\n\nStrings hold text.\n", "b.md": "# Maps\n\nMaps hold pairs.\n" });
    const link = join(tempDir(), "mylink");
    symlinkSync(GLOVE, link);
    const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
    expect(cli("repo", "add", "lk", docs).code).toBe(0);
    expect(cli("model", "set", link).code).toBe(0);
    expect(JSON.parse(cli("index", "lk", "--json").stdout)).toMatchObject({ embedded: 2, model: link });
    expect(cli("model", "set", GLOVE)).toMatchObject({ code: 0, stdout: `embedding model: ${GLOVE}\n`, stderr: "" });
    expect(JSON.parse(cli("index", "lk", "--rebuild", "--json").stdout)).toMatchObject({ embedded: 0, model: link });
    expect(JSON.parse(cli("search", "strings", "--mode", "vector", "--json").stdout).results[0].path).toBe("a.md");
  }, 60_000);

  test("an index embedded before model folders were told by content keeps its vectors at the folder it was made with", () => {
    // Its record names the model by the link's name and the weights' size: through the link or at the folder it
    // leads to, an upgrade must not re-embed it; a copy elsewhere cannot be told from another model by that record.
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# Strings\n\nStrings hold text.\n", "b.md": "# Maps\n\nMaps hold pairs.\n" });
    const link = join(tempDir(), "mylink");
    symlinkSync(GLOVE, link);
    const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
    expect(cli("repo", "add", "old", docs).code).toBe(0);
    expect(cli("model", "set", link).code).toBe(0);
    expect(cli("index", "old", "--quiet").code).toBe(0);
    const store = Store.open(getRepository(home, "old").dir, { write: true });
    try {
      const model = store.embeddings.model()!;
      const weights = statSync(join(GLOVE, "onnx/model_quantized.onnx")).size;
      const { dtype, pooling, query_prefix, document_prefix } = model.settings!;
      const parts = [model.provider, basename(link), dtype, pooling, query_prefix, document_prefix, model.dims, weights];
      const fingerprint = new Bun.CryptoHasher("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);
      store.embeddings.setModel({ ...model, fingerprint });
    } finally {
      store.close();
    }
    expect(JSON.parse(cli("search", "strings", "--mode", "vector", "--json").stdout).results[0].path).toBe("a.md");
    expect(JSON.parse(cli("index", "old", "--rebuild", "--json").stdout)).toMatchObject({ embedded: 0 });
    expect(cli("model", "set", GLOVE)).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(cli("index", "old", "--rebuild", "--json").stdout)).toMatchObject({ embedded: 0 });
    const copy = join(tempDir(), "mylink");
    cpSync(GLOVE, copy, { recursive: true });
    expect(cli("model", "set", copy).stderr).toContain("1 repository keeps the model it was embedded with (old)");
    expect(JSON.parse(cli("index", "old", "--rebuild", "--json").stdout)).toMatchObject({ embedded: 2, model: copy });
  }, 60_000);
});

describeShared("two model folders of one name and one weights' size (s28 code review #1)", () => {
  test("are two models: model set names the repository, and a rebuild moves it to the one set", () => {
    // The fingerprint was the folder's name and the weights' size: a rebuild kept the other model's vectors.
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# Strings\n\nStrings hold text.\n", "b.md": "# Maps\n\nMaps hold pairs.\n" });
    const first = join(tempDir(), "model");
    cpSync(GLOVE, first, { recursive: true });
    const second = otherGlove("model"); // GloVe's weights under another tokenizer
    const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
    expect(cli("repo", "add", "d", docs).code).toBe(0);
    expect(cli("model", "set", first).code).toBe(0);
    expect(JSON.parse(cli("index", "d", "--json").stdout)).toMatchObject({ embedded: 2, model: first });
    expect(cli("model", "set", second)).toMatchObject({
      code: 0,
      stderr:
        "note: 1 repository keeps the model it was embedded with (d): `researcher index --embeddings-only d` moves it to this model\n",
    });
    expect(JSON.parse(cli("index", "d", "--rebuild", "--json").stdout)).toMatchObject({ embedded: 2, model: second });
    // A copy of it under another name is that model: nothing to say, nothing to re-embed.
    const copy = join(tempDir(), "model-copy");
    cpSync(second, copy, { recursive: true, dereference: true });
    expect(cli("model", "set", copy)).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(cli("index", "d", "--rebuild", "--json").stdout)).toMatchObject({ embedded: 0, model: second });
  }, 60_000);
});

describeShared("model set's note on the repositories that keep their model (s28 code review #4)", () => {
  test("leaves out one whose own settings name its model, and the command it gives moves the others", () => {
    // The pinned repository was named, and the advice (`<name>`) re-embedded it with its own model.
    const home = tempDir();
    const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
    for (const name of ["pinned", "loose", "free"]) {
      const docs = tempDir();
      writeTree(docs, { "a.md": `# Strings\n\nStrings hold text in ${name}.\n` });
      expect(cli("repo", "add", name, docs).code).toBe(0);
    }
    expect(cli("config", "set", "repositories.pinned.embedding.model", GLOVE).code).toBe(0);
    expect(cli("model", "set", GLOVE).code).toBe(0);
    expect(cli("index", "--quiet").code).toBe(0);
    const other = otherGlove("other-model");
    const set = cli("model", "set", other);
    expect(set).toMatchObject({
      code: 0,
      stderr:
        "note: 2 repositories keep the models they were embedded with (free, loose): `researcher index --embeddings-only free loose` moves them to this model\n",
    });
    const command = /`researcher ([^`]+)`/.exec(set.stderr)![1]!.split(" ");
    expect(cli(...command).code).toBe(0);
    const models = JSON.parse(cli("status", "--json").stdout).map((r: { name: string; model: string }) => [r.name, r.model]);
    expect(Object.fromEntries(models)).toEqual({ pinned: GLOVE, loose: other, free: other });
    expect(cli("model", "set", other)).toMatchObject({ code: 0, stderr: "" });
  }, 60_000);
});

describeShared("model set with an index it cannot read", () => {
  test("leaves that repository out of its note and still sets the model (s28 code review #9: only bugs are thrown)", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# Strings\n\nStrings hold text.\n" });
    const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
    expect(cli("repo", "add", "broken", docs).code).toBe(0);
    expect(cli("model", "set", GLOVE).code).toBe(0);
    expect(cli("index", "--quiet").code).toBe(0);
    const db = new Database(Store.dbPath(getRepository(home, "broken").dir));
    db.run("DROP TABLE meta"); // SQLite's own error, not a ResearcherError: a damaged index, not a bug
    db.close();
    const other = otherGlove("other-model");
    expect(cli("model", "set", other)).toMatchObject({ code: 0, stdout: `embedding model: ${other}\n`, stderr: "" });
  }, 60_000);
});
