/**
 * Static-embedding models: the GloVe-SIF folder (an ONNX Gather over a table) read as a token table, a model2vec
 * folder written here, and a model2vec download from a stand-in hub on 127.0.0.1.
 */
import { expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeModel, loadEmbedder, type Embedder } from "../src/embed/embedder.ts";
import { readSafetensors, writeSafetensors } from "../src/embed/safetensors.ts";
import { loadTokenizer } from "../src/embed/static-embedder.ts";
import { describeShared, GLOVE, gloveThroughOnnx, SHARED, tempDir } from "./helpers.ts";
import { standInHub } from "./model-fixtures.ts";

const TEXTS = [
  "How do I reset my password?",
  "the",
  "",
  "zzqx qqvb", // only unknown words
  "A text about cars, driving and the maintenance of an automobile. ".repeat(200), // past the 512-token limit
  "naïve café — Automobile!!",
];

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describeShared("a layer-free ONNX model (GloVe-SIF) as a token table", () => {
  const home = tempDir();
  const onnxFolder = gloveThroughOnnx();

  for (const dtype of ["fp32", "q8"]) {
    test(`${dtype}: the same vectors and fingerprint as running the ONNX model`, async () => {
      const fast = await loadEmbedder(home, { provider: "local", model: GLOVE, dtype });
      const onnx = await loadEmbedder(home, { provider: "local", model: onnxFolder, dtype });
      expect(fast.info.kind).toBe("static");
      expect(onnx.info.kind).toBe("transformer");
      expect(fast.fingerprint).toBe(onnx.fingerprint);
      const [a, b] = [await fast.embed(TEXTS, "document"), await onnx.embed(TEXTS, "document")];
      for (let i = 0; i < TEXTS.length; i++) expect(dot(a[i]!, b[i]!)).toBeGreaterThan(0.99999);
      await onnx.dispose();
    });
  }

  test("a query with no word the model knows has no direction (zero); a document of such words keeps the model's vector", async () => {
    const embedder = await loadEmbedder(home, { provider: "local", model: GLOVE });
    const [unknown, mixed] = await embedder.embed(["zzqx qqvb", "zzqx test"], "query");
    expect(unknown!.every((x) => x === 0)).toBe(true);
    expect(dot(mixed!, mixed!)).toBeCloseTo(1, 5);
    const [document] = await embedder.embed(["zzqx qqvb"], "document");
    expect(dot(document!, document!)).toBeCloseTo(1, 5);
  });

  test("the table is cached once, and a damaged cache file is read again from the model", async () => {
    const tables = join(home, "models/.tables");
    const files = readdirSync(tables);
    expect(files.length).toBe(2); // one per dtype, from the test above
    for (const file of files) writeFileSync(join(tables, file), "not a table");
    for (const dtype of ["fp32", "q8"]) {
      const embedder = await loadEmbedder(home, { provider: "local", model: GLOVE, dtype });
      const [cars, garage, bread] = await embedder.embed(["cars and driving", "automobile garage", "baking bread"], "query");
      expect(dot(cars!, garage!)).toBeGreaterThan(dot(cars!, bread!));
    }
    expect(readdirSync(tables).sort()).toEqual(files.sort());
    for (const file of files) expect(readSafetensors(join(tables, file)).get("rows")?.shape).toEqual([25004, 100]);
  });
});

describeShared("a config that promises no layers, over a model that reads context", () => {
  const root = tempDir();

  test("runs as the transformer it is (the probe sees a token's vector change with its neighbours)", async () => {
    const unpack = Bun.spawnSync(["bash", join(SHARED, "models/unpack-minilm.sh"), root]);
    expect(unpack.exitCode).toBe(0);
    const folder = join(root, "minilm-l6-arch-random");
    const config = JSON.parse(readFileSync(join(folder, "config.json"), "utf8"));
    writeFileSync(join(folder, "config.json"), JSON.stringify({ ...config, num_hidden_layers: 0 }));
    expect(describeModel(root, { provider: "local", model: folder }).kind).toBe("static");
    const embedder = await loadEmbedder(root, { provider: "local", model: folder });
    expect(embedder.info.kind).toBe("transformer");
    expect(embedder.dims).toBe(384);
    expect(existsSync(join(root, "models/.tables"))).toBe(false);
    await embedder.dispose();
  }, 60_000);
});

/** A model2vec folder: GloVe-SIF's tokenizer (WordPiece, [UNK]) and a seeded random f16 table of `dims` columns. */
function writeModel2vec(folder: string, dims: number, options: { weights?: boolean } = {}) {
  mkdirSync(folder, { recursive: true });
  copyFileSync(join(GLOVE, "tokenizer.json"), join(folder, "tokenizer.json"));
  writeFileSync(join(folder, "config.json"), JSON.stringify({ model_type: "model2vec", hidden_dim: dims, normalize: true }));
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return (seed / 2 ** 31) * 2 - 1;
  };
  const rows = Float32Array.from({ length: 25004 * dims }, random);
  const weights = options.weights ? Float32Array.from({ length: 25004 }, (_, i) => 1 + (i % 3)) : undefined;
  writeSafetensors(join(folder, "model.safetensors"), {
    embeddings: { shape: [25004, dims], data: rows },
    ...(weights && { weights: { shape: [25004], data: weights } }),
  });
  return { rows, weights };
}

/** What model2vec computes: the (weighted) mean of the rows of the text's tokens, without special and unknown tokens. */
async function expected(folder: string, text: string, table: { rows: Float32Array; weights?: Float32Array }, dims: number) {
  const tokenizer = await loadTokenizer(folder);
  const ids = tokenizer.encode(text, { add_special_tokens: false }).ids.filter((id) => id !== tokenizer.token_to_id("[UNK]"));
  const sum = new Float32Array(dims);
  for (const id of ids) for (let d = 0; d < dims; d++) sum[d]! += (table.weights?.[id] ?? 1) * table.rows[id * dims + d]!;
  const norm = Math.hypot(...sum);
  return sum.map((x) => x / norm);
}

describeShared("model2vec folders", () => {
  const root = tempDir();

  test("a text's vector is the mean of its known tokens' rows, weights applied", async () => {
    for (const weights of [false, true]) {
      const folder = join(root, `m2v-${weights}`);
      const table = writeModel2vec(folder, 16, { weights });
      const embedder = await loadEmbedder(root, { provider: "local", model: folder });
      expect(embedder.info).toMatchObject({ kind: "static", dims: 16 });
      const text = "How do I reset my zzqx password?";
      const [vector] = await embedder.embed([text], "query");
      const want = await expected(folder, text, table, 16);
      for (let d = 0; d < 16; d++) expect(vector![d]!).toBeCloseTo(want[d]!, 5);
    }
  });

  test("describeModel reads dims from config.hidden_dim without loading anything", () => {
    const folder = join(root, "m2v-false");
    expect(describeModel(root, { provider: "local", model: folder })).toMatchObject({ kind: "static", dims: 16, source: "folder" });
  });

  test("a table that would give NaN vectors or miss rows is refused with the reason", async () => {
    const cases: [string, Record<string, { shape: number[]; data: Float32Array }>, RegExp][] = [
      ["nan", { embeddings: { shape: [25004, 2], data: new Float32Array(50008).fill(Number.NaN) } }, /NaN or infinite/],
      [
        "short-weights",
        { embeddings: { shape: [25004, 2], data: new Float32Array(50008) }, weights: { shape: [10], data: new Float32Array(10) } },
        /'weights' must be 25004/,
      ],
      [
        "f32-mapping",
        { embeddings: { shape: [4, 2], data: new Float32Array(8) }, mapping: { shape: [25004], data: new Float32Array(25004) } },
        /'mapping' must be 25004 integer/,
      ],
      ["few-rows", { embeddings: { shape: [4, 2], data: new Float32Array(8) } }, /4 rows for 25004 tokens/],
      ["no-columns", { embeddings: { shape: [25004, 0], data: new Float32Array(0) } }, /no 2-d floating-point 'embeddings' table/],
    ];
    for (const [name, tensors, reason] of cases) {
      const folder = join(root, name);
      writeModel2vec(folder, 2);
      writeSafetensors(join(folder, "model.safetensors"), tensors);
      const error = await loadEmbedder(root, { provider: "local", model: folder }).catch((e) => e);
      expect(error).toMatchObject({ code: "MODEL_UNAVAILABLE" });
      expect(error.message).toMatch(reason);
    }
  });

  test("a transformer's safetensors weights are not taken for a model2vec table", () => {
    const folder = join(root, "pytorch");
    mkdirSync(folder, { recursive: true });
    copyFileSync(join(GLOVE, "tokenizer.json"), join(folder, "tokenizer.json"));
    writeFileSync(join(folder, "config.json"), JSON.stringify({ model_type: "bert", hidden_size: 2, num_hidden_layers: 2 }));
    writeSafetensors(join(folder, "model.safetensors"), {
      "embeddings.word_embeddings.weight": { shape: [2, 2], data: new Float32Array(4) },
    });
    expect(describeModel(root, { provider: "local", model: folder }).kind).toBe("transformer");
  });

  test("a damaged table is a clear model error, not a crash", async () => {
    const folder = join(root, "broken");
    writeModel2vec(folder, 4);
    writeFileSync(join(folder, "model.safetensors"), new Uint8Array([255, 255, 255, 255, 0, 0, 0, 0, 1, 2, 3]));
    const error = await loadEmbedder(root, { provider: "local", model: folder }).catch((e) => e);
    expect(error).toMatchObject({ code: "MODEL_UNAVAILABLE" });
    expect(error.message).toContain("header length");
  });
});

describeShared("pulling a model2vec model from the hub", () => {
  const root = tempDir();
  const source = join(root, "served");
  writeModel2vec(source, 8);

  async function pull(home: string, mode: "whole" | "truncate" | "gzip"): Promise<Embedder> {
    const server = standInHub(source, mode);
    const saved = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = `http://127.0.0.1:${server.port}`;
    try {
      return await loadEmbedder(home, { provider: "local", model: "minishlab/potion-base-8M" }, { allowDownload: true });
    } finally {
      if (saved === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved;
      server.stop(true);
    }
  }

  test("a model in the table is downloaded as a static model and used from the cache after", async () => {
    const home = join(root, "home-ok");
    expect(describeModel(home, { provider: "local", model: "minishlab/potion-base-8M" })).toMatchObject({ kind: "static", source: "hub" });
    const embedder = await pull(home, "whole");
    expect(embedder.info).toMatchObject({ kind: "static", source: "cache", dims: 8 });
    expect(existsSync(join(home, "models/minishlab/potion-base-8M/model.safetensors"))).toBe(true);
    const offline = await loadEmbedder(home, { provider: "local", model: "minishlab/potion-base-8M" }, { allowDownload: false });
    expect(offline.fingerprint).toBe(embedder.fingerprint);
  });

  test("a mirror that compresses anyway still gives the model (fetch inflates; the length is not compared)", async () => {
    const home = join(root, "home-gzip");
    const embedder = await pull(home, "gzip");
    expect(embedder.info).toMatchObject({ kind: "static", dims: 8 });
  });

  test("a download cut short fails clearly and leaves no model folder behind", async () => {
    const home = join(root, "home-cut");
    const error = await pull(home, "truncate").catch((e) => e);
    expect(error).toMatchObject({ code: "MODEL_UNAVAILABLE" });
    expect(error.message).toMatch(/potion-base-8M/);
    expect(existsSync(join(home, "models/minishlab/potion-base-8M"))).toBe(false);
    expect(readdirSync(join(home, "models/minishlab"))).toEqual([]);
  });
});
