/**
 * Static-embedding models: a token → vector table and a tokenizer, with no transformer pass. A text's vector is the
 * mean of its tokens' rows, so embedding costs one tokenisation and a few additions per token — hundreds of times
 * less than a transformer on a CPU — and the ONNX runtime is never loaded. Two layouts are read:
 * - **model2vec** (`model.safetensors` with an `embeddings` table, optional per-token `weights` and token → row
 *   `mapping`; `tokenizer.json`; `config.json`): tokens are read without special tokens and unknown tokens are
 *   dropped, as model2vec itself does.
 * - **a transformers.js folder whose model has no transformer layers** (`num_hidden_layers: 0`, i.e. an ONNX
 *   Gather over a table, such as GloVe-SIF): the table is read out of the model once, by running it over the whole
 *   vocabulary, checked to be free of context, and cached under `models/.tables/`. Its vectors are exactly those
 *   of the ONNX model, so the fingerprint stays the same and a repository embedded either way stays usable.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { readRegularFile } from "../files.ts";
import { readSafetensors, safetensorsEntries, writeSafetensors } from "./safetensors.ts";

export type StaticLayout = "model2vec" | "token-table";

/** A table: `dims` floats per row; `mapping` sends a token id to its row, `weights` scales a token's row. */
export interface TokenTable {
  rows: Float32Array;
  dims: number;
  weights: Float32Array | null;
  mapping: Int32Array | null;
}

/** Runs the model on one sequence of token ids and returns its per-token output, `ids.length × dims` floats. */
export type SequenceRunner = (ids: number[]) => Promise<Float32Array>;

const MODEL2VEC_FILE = "model.safetensors";

/**
 * Which static layout a model folder has, or null for a transformer. A model2vec folder says so in its config or
 * holds an `embeddings` table (a transformer's safetensors weights hold none: it is not mistaken for one).
 */
export function staticLayout(folder: string, config: Record<string, unknown>): StaticLayout | null {
  if (!existsSync(join(folder, "tokenizer.json"))) return null;
  if (config.model_type === "model2vec" || hasEmbeddingsTable(model2vecWeights(folder))) return "model2vec";
  return config.num_hidden_layers === 0 ? "token-table" : null;
}

function hasEmbeddingsTable(file: string): boolean {
  try {
    return safetensorsEntries(file).has("embeddings");
  } catch {
    return false;
  }
}

/** The weights file whose identity goes into a model2vec model's fingerprint. */
export const model2vecWeights = (folder: string) => join(folder, MODEL2VEC_FILE);

/**
 * A model2vec table, checked whole: a NaN or a row out of range would otherwise become a NaN vector in the index
 * without an error. `tokens` is the tokenizer's vocabulary size.
 */
export function readModel2vecTable(folder: string, tokens: number): TokenTable {
  const file = model2vecWeights(folder);
  const tensors = readSafetensors(file, ["embeddings", "weights", "mapping"]);
  const embeddings = tensors.get("embeddings");
  const fail = (why: string) => new Error(`${file}: ${why}`);
  if (embeddings?.shape.length !== 2 || !(embeddings.data instanceof Float32Array) || embeddings.shape[1]! < 1) {
    throw fail("no 2-d floating-point 'embeddings' table");
  }
  const [rows, dims] = embeddings.shape as [number, number];
  if (!embeddings.data.every(Number.isFinite)) throw fail("the 'embeddings' table holds NaN or infinite values");
  const weights = tensors.get("weights");
  if (weights && (!(weights.data instanceof Float32Array) || weights.data.length < tokens || !weights.data.every(Number.isFinite))) {
    throw fail(`'weights' must be ${tokens} finite floating-point values, one per token`);
  }
  const mapping = tensors.get("mapping");
  if (
    mapping &&
    (!(mapping.data instanceof Int32Array) || mapping.data.length < tokens || !mapping.data.every((row) => row >= 0 && row < rows))
  ) {
    throw fail(`'mapping' must be ${tokens} integer rows of the table, one per token`);
  }
  if (!mapping && rows < tokens) throw fail(`the table has ${rows} rows for ${tokens} tokens`);
  return { rows: embeddings.data, dims, weights: (weights?.data as Float32Array) ?? null, mapping: (mapping?.data as Int32Array) ?? null };
}

/** Sequences at most this long are run at once while reading a table out of a model (bounds the output buffer). */
const READ_CHUNK = 4096;
/** Ids whose rows are read a second time, in reverse order, to check that a token's vector ignores its context. */
const CONTEXT_PROBE = 256;

/**
 * The table of a context-free ONNX model, from the cache or read out of the model (then cached). Null when the
 * model turns out not to be context-free: its config promised no layers, but a token's output depends on its
 * neighbours or position, so it must run as a transformer.
 */
export async function tokenTableOf(
  cacheDir: string,
  weightsFile: string,
  vocabSize: number,
  /** The model's longest sequence (its position limit, if it has one). */
  maxSequence: number,
  loadRunner: () => Promise<{ run: SequenceRunner; dispose: () => Promise<void> }>,
): Promise<TokenTable | null> {
  const cached = join(cacheDir, `${cacheKey(weightsFile)}.safetensors`);
  if (existsSync(cached)) {
    try {
      const rows = readSafetensors(cached, ["rows"]).get("rows");
      if (rows?.data instanceof Float32Array && rows.shape[0] === vocabSize)
        return { rows: rows.data, dims: rows.shape[1]!, weights: null, mapping: null };
    } catch {
      // a damaged cache file is read again from the model below, and replaced
    }
  }
  const { run, dispose } = await loadRunner();
  try {
    const table = await readTable(run, vocabSize, Math.min(READ_CHUNK, maxSequence));
    if (!table) return null;
    try {
      mkdirSync(cacheDir, { recursive: true });
      writeSafetensors(cached, { rows: { shape: [vocabSize, table.dims], data: table.rows } }, { source: weightsFile });
    } catch {
      // a read-only models folder: the table is read from the model again next time
    }
    return table;
  } finally {
    await dispose();
  }
}

/** Files are identified by path, size and modification time: a replaced model file gets a new table. */
function cacheKey(weightsFile: string): string {
  const { size, mtimeMs } = statSync(weightsFile);
  return new Bun.CryptoHasher("sha256")
    .update(JSON.stringify([weightsFile, size, mtimeMs]))
    .digest("hex")
    .slice(0, 24);
}

/**
 * Run the model over the whole vocabulary, `chunk` ids at a time. First a probe: the first ids in order and
 * reversed must give the same rows, or a token's vector depends on its neighbours or position. A model that
 * fails to run on such input (a position limit, ids past its table) is not a token table either.
 */
async function readTable(run: SequenceRunner, vocabSize: number, chunk: number): Promise<TokenTable | null> {
  const ids = (start: number, length: number) =>
    Array.from({ length: Math.max(0, Math.min(length, vocabSize - start)) }, (_, i) => start + i);
  try {
    const probe = ids(0, Math.min(CONTEXT_PROBE, chunk));
    const [forward, backward] = [await run(probe), await run([...probe].reverse())];
    const dims = forward.length / probe.length;
    for (let j = 0; j < probe.length; j++) {
      for (let d = 0; d < dims; d++) {
        const a = forward[j * dims + d]!;
        const b = backward[(probe.length - 1 - j) * dims + d]!;
        if (Math.abs(a - b) > 1e-6 * Math.max(1, Math.abs(a))) return null;
      }
    }
    const rows = new Float32Array(vocabSize * dims);
    for (let start = 0; start < vocabSize; start += chunk) rows.set(await run(ids(start, chunk)), start * dims);
    return { rows, dims, weights: null, mapping: null };
  } catch {
    return null;
  }
}

/** Tokens that count for a text: a model2vec model skips special and unknown tokens; an ONNX table keeps all. */
export interface TokenRule {
  addSpecialTokens: boolean;
  /** Token id to drop, if any (model2vec: the unknown token). */
  dropId: number | null;
  maxTokens: number;
}

/**
 * Sum of the tokens' rows (weighted when the table has weights). Its direction is the mean's, which is all that
 * counts once the caller L2-normalises it.
 */
export function sumOfRows(table: TokenTable, ids: number[], rule: TokenRule): Float32Array {
  const { rows, dims, weights, mapping } = table;
  const vector = new Float32Array(dims);
  let used = 0;
  for (const id of ids) {
    if (id === rule.dropId) continue;
    if (used++ === rule.maxTokens) break;
    const row = mapping ? mapping[id] : id;
    const weight = weights ? weights[id] : 1;
    // An id past the table (a tokenizer with added tokens the table lacks) counts as unknown.
    if (row === undefined || weight === undefined || row < 0 || (row + 1) * dims > rows.length) continue;
    const offset = row * dims;
    for (let d = 0; d < dims; d++) vector[d]! += weight * rows[offset + d]!;
  }
  return vector;
}

/** The tokenizer of a model folder, through the same library transformers.js uses internally. */
export async function loadTokenizer(folder: string) {
  const { Tokenizer } = await import("@huggingface/tokenizers");
  const json = (name: string) => (existsSync(join(folder, name)) ? JSON.parse(readModelJson(folder, name)) : {});
  return new Tokenizer(json("tokenizer.json"), json("tokenizer_config.json"));
}

/** The largest JSON file of a model folder read (a tokenizer of a 250,000-word vocabulary is 17 MB). */
const MAX_MODEL_JSON_BYTES = 256 * 2 ** 20;

/**
 * A JSON file of a model folder as text, read only if it is a regular file of at most MAX_MODEL_JSON_BYTES: a FIFO in
 * its place hung the load (and `index`, holding the writer lock), a link to /dev/zero took 16.8 GB. Throws a reason.
 */
export function readModelJson(folder: string, name: string): string {
  const read = readRegularFile(join(folder, name), MAX_MODEL_JSON_BYTES, "the largest model JSON file read (256 MB)");
  if ("reason" in read) throw new Error(`${join(folder, name)}: ${read.reason}`);
  return new TextDecoder().decode(read.bytes);
}
