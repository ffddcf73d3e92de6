import { describe, expect, test } from "bun:test";
import { chmodSync, cpSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { checkModel, chooseModel, describeModel, loadEmbedder, pool, type Embedder } from "../src/embed/embedder.ts";
import { ResearcherError } from "../src/errors.ts";
import { unpackFailure } from "../src/embed/native.ts";
import { describeShared, GLOVE, gloveThroughOnnx, otherGlove, runCli, tempDir, writeTree } from "./helpers.ts";
import { modelContent } from "../src/embed/model-content.ts";
import { standInHub } from "./model-fixtures.ts";

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

describeShared("local embedder (GloVe-SIF model folder)", () => {
  let embedder: Embedder;
  test("loads a model folder and reads its dimensions", async () => {
    embedder = await loadEmbedder(tempDir(), chooseModel({}, {}, GLOVE));
    expect(embedder.dims).toBe(100);
    expect(embedder.info).toMatchObject({ provider: "local", source: "folder", path: GLOVE, pooling: "mean", dtype: "q8" });
    expect(embedder.fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });

  test("similar meaning scores higher, vectors are unit length, order is kept", async () => {
    const [car, auto, bread] = await embedder.embed(
      ["a text about cars and driving", "automobile", "a recipe for baking bread"],
      "document",
    );
    expect(dot(auto!, car!)).toBeGreaterThan(0.3);
    expect(dot(auto!, bread!)).toBeLessThan(0.1);
    expect(Math.abs(dot(car!, car!) - 1)).toBeLessThan(1e-4);
    const [again] = await embedder.embed(["automobile"], "document");
    expect(Array.from(again!)).toEqual(Array.from(auto!));
  });

  test("another dtype is another fingerprint", async () => {
    const fp32 = await loadEmbedder(tempDir(), chooseModel({ dtype: "fp32" }, {}, GLOVE));
    expect(fp32.fingerprint).not.toBe(embedder.fingerprint);
    await fp32.dispose();
    await embedder.dispose();
  });
});

describeShared("a transformer pulled from the hub", () => {
  test("keeps its fingerprint in the runs after, which find it in the cache (a mismatch otherwise)", async () => {
    const home = tempDir();
    const server = standInHub(gloveThroughOnnx());
    const saved = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = `http://127.0.0.1:${server.port}`;
    const choice = { provider: "local" as const, model: "researcher-test/glove-onnx" };
    try {
      expect(describeModel(home, choice)).toMatchObject({ kind: "transformer", source: "hub", path: null });
      const pulled = await loadEmbedder(home, choice, { allowDownload: true });
      const later = await loadEmbedder(home, choice);
      expect(later.info).toMatchObject({ kind: "transformer", source: "cache" });
      expect(pulled.info).toEqual(later.info);
      expect(pulled.fingerprint).toBe(later.fingerprint);
      await Promise.all([pulled.dispose(), later.dispose()]);
    } finally {
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
      server.stop(true);
    }
  });
});

describe("model resolution", () => {
  test("a hub model that is not on disk is a clear error, never a download attempt without permission", async () => {
    const error = await loadEmbedder(tempDir(), chooseModel({ model: "Snowflake/snowflake-arctic-embed-xs" })).catch((e) => e);
    expect(error).toBeInstanceOf(ResearcherError);
    expect(error.code).toBe("MODEL_UNAVAILABLE");
    expect(error.hint).toContain("researcher model pull");
  });

  test("a path that is not a model folder is refused", () => {
    const dir = tempDir();
    expect(() => describeModel(dir, { provider: "local", model: dir })).toThrow(/not a model folder/);
    expect(() => describeModel(dir, { provider: "local", model: join(dir, "missing") })).toThrow(`${join(dir, "missing")} does not exist`);
  });

  test("known models carry their pooling and query prefix", () => {
    const info = describeModel(tempDir(), chooseModel({ model: "Xenova/bge-small-en-v1.5" }));
    expect(info).toMatchObject({ source: "hub", dims: 384, pooling: "cls", dtype: "q8" });
    expect(info.queryPrefix).toContain("Represent this sentence");
  });

  test("flag beats RESEARCHER_MODEL_PATH beats repository beats global", () => {
    const saved = process.env.RESEARCHER_MODEL_PATH;
    delete process.env.RESEARCHER_MODEL_PATH;
    expect(chooseModel({ model: "global" }, { model: "repo" }).model).toBe("repo");
    process.env.RESEARCHER_MODEL_PATH = "/env/path";
    expect(chooseModel({ model: "global" }, { model: "repo" }).model).toBe("/env/path");
    expect(chooseModel({}, {}, "/flag").model).toBe("/flag");
    if (saved === undefined) delete process.env.RESEARCHER_MODEL_PATH;
    else process.env.RESEARCHER_MODEL_PATH = saved;
  });
});

describe("pool", () => {
  test("mean pooling ignores padding; CLS takes the first token; both normalise", () => {
    // batch 1, 3 tokens, 2 dims; last token is padding
    const data = new Float32Array([1, 0, 0, 1, 100, 100]);
    const mask = new BigInt64Array([1n, 1n, 0n]);
    const [mean] = pool(data, [1, 3, 2], mask, "mean");
    expect(Array.from(mean!)).toEqual([expect.closeTo(Math.SQRT1_2, 4), expect.closeTo(Math.SQRT1_2, 4)]);
    const [cls] = pool(data, [1, 3, 2], mask, "cls");
    expect(Array.from(cls!)).toEqual([1, 0]);
  });
});

describeShared("a model folder whose files are not regular files", () => {
  test("a FIFO or a link to a device in place of a model file is refused at once, naming it (s16 hostile #2)", () => {
    // It hung `index` (holding the writer lock), every default search and an MCP server; /dev/zero took 16.8 GB.
    for (const [file, make] of [
      ["config.json", (path: string) => Bun.spawnSync(["mkfifo", path])],
      ["tokenizer.json", (path: string) => Bun.spawnSync(["mkfifo", path])],
      ["onnx/model_quantized.onnx", (path: string) => Bun.spawnSync(["mkfifo", path])],
      ["tokenizer.json", (path: string) => symlinkSync("/dev/zero", path)],
    ] as const) {
      const home = tempDir();
      const model = join(tempDir(), "model");
      cpSync(GLOVE, model, { recursive: true });
      chmodSync(dirname(join(model, file)), 0o755);
      rmSync(join(model, file));
      make(join(model, file));
      const docs = tempDir();
      writeTree(docs, { "a.md": "# M\n\nmodelword text\n" });
      const env = { RESEARCHER_MODEL_PATH: model };
      expect(runCli(["repo", "add", "m", docs], { home, env }).code).toBe(0);
      const index = runCli(["index", "m"], { home, env, timeoutMs: 30_000 });
      expect({ file, code: index.code }).toEqual({ file, code: 0 }); // the text is indexed; its embeddings wait
      expect(index.stderr).toContain(`${join(model, file)} is not a regular file`);
      // A folder of the user's own is not `model pull`ed (s17 review #8: the hint offered it, and pull failed alike).
      expect(index.stderr).toContain("put the model's own file there (copy the folder again)");
      const search = runCli(["search", "modelword"], { home, env, timeoutMs: 30_000 });
      expect({ file, code: search.code, found: search.stdout.includes("m:a.md") }).toEqual({ file, code: 0, found: true });
    }
  }, 120_000);

  test("a loop of links in place of a model file leaves the embeddings pending, naming it; the run is not failed (s28b hostile F1)", () => {
    // The loop failed every index run as the repository's error (PATH_NOT_FOUND), with no summary, exit 1.
    for (const file of ["onnx/model_quantized.onnx", "tokenizer.json"]) {
      const home = tempDir();
      const model = join(tempDir(), "model");
      cpSync(GLOVE, model, { recursive: true });
      chmodSync(dirname(join(model, file)), 0o755);
      rmSync(join(model, file));
      symlinkSync(basename(file), join(model, file));
      const docs = tempDir();
      writeTree(docs, { "a.md": "# M\n\nmodelword text\n" });
      const env = { RESEARCHER_MODEL_PATH: model };
      expect(runCli(["repo", "add", "m", docs], { home, env }).code).toBe(0);
      const index = runCli(["index", "m"], { home, env, timeoutMs: 30_000 });
      expect({ file, code: index.code, out: index.stdout }).toEqual({ file, code: 0, out: expect.stringContaining("1 indexed") });
      expect(index.stderr).toContain("embeddings pending");
      expect(index.stderr).toContain(join(model, file));
    }
  }, 120_000);
});

describeShared("a repository's model against the one a search or run loads", () => {
  test("the same model name through another provider is said to be so, not changed files (s21 hostile #11)", async () => {
    const embedder = await loadEmbedder(tempDir(), chooseModel({}, {}, GLOVE));
    const stored = { id: embedder.info.id, dims: embedder.dims, fingerprint: "0123456789abcdef", provider: "ollama" };
    expect(() => checkModel("g", stored, embedder)).toThrow(`repository 'g' was embedded with ${GLOVE} through ollama, not through local`);
    // Through the same provider, another fingerprint is the model's files changed.
    expect(() => checkModel("g", { ...stored, provider: "local" }, embedder)).toThrow(`the files of ${GLOVE} changed since repository 'g'`);
    expect(() => checkModel("g", { ...stored, provider: "local", fingerprint: embedder.fingerprint }, embedder)).not.toThrow();
  });
});

test("a native file that cannot be unpacked is named with its size, its system error's code kept (s27 hostile U1)", () => {
  // The error said only "the disk is full", not that onnxruntime's 44 MB did not fit. A full disk needs root to make
  // (indexer-hostile.test.ts fills one under the executable); here a write that fails as any system error does.
  const file = join(tempDir(), "file");
  writeFileSync(file, "");
  let failed: unknown;
  try {
    writeFileSync(join(file, "libonnxruntime.so.1"), "");
  } catch (error) {
    failed = error;
  }
  const target = "/home/me/.researcher/native/onnxruntime-node-1-linux-x64/libonnxruntime.so.1";
  const error = unpackFailure(failed, target, 46_000_000);
  expect(error).toMatchObject({
    message: expect.stringMatching(/^cannot unpack \/home\/me\/\S+\/libonnxruntime\.so\.1 \(44 MB\): ENOTDIR/),
    code: "ENOTDIR",
  });
  expect(error.cause).toBe(failed);
});

describeShared("a model folder's content fingerprint", () => {
  test("a tokenizer saved again reformatted (its config's keys reordered too) is the same model; another vocabulary is not (s28b hostile F2)", () => {
    // Hashed as text, a reformatted tokenizer_config.json was another model, and held every index run of its repositories.
    const weights = (folder: string) => join(folder, "onnx/model.onnx");
    const copy = join(tempDir(), "glove");
    cpSync(GLOVE, copy, { recursive: true });
    const config = JSON.parse(readFileSync(join(copy, "tokenizer_config.json"), "utf8"));
    const reordered = Object.fromEntries(Object.entries(config).reverse());
    writeFileSync(join(copy, "tokenizer_config.json"), JSON.stringify(reordered, null, 4));
    writeFileSync(
      join(copy, "tokenizer.json"),
      `${JSON.stringify(JSON.parse(readFileSync(join(copy, "tokenizer.json"), "utf8")), null, 2)}\n`,
    );
    expect(modelContent(copy, weights(copy))).toBe(modelContent(GLOVE, weights(GLOVE)));
    const other = otherGlove("glove");
    expect(modelContent(other, weights(other))).not.toBe(modelContent(GLOVE, weights(GLOVE)));
  });
});
