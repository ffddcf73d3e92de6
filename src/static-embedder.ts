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
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { readSafetensors, writeSafetensors } from "./safetensors.ts";

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

/** Which static layout a model folder has, or null for a transformer. */
export function staticLayout(folder: string, config: Record<string, unknown>): StaticLayout | null {
  if (!existsSync(join(folder, "tokenizer.json"))) return null;
  if (existsSync(join(folder, MODEL2VEC_FILE)) && (config.model_type === "model2vec" || !existsSync(join(folder, "onnx")))) return "model2vec";
  return config.num_hidden_layers === 0 ? "token-table" : null;
}

/** The weights file whose identity goes into a model2vec model's fingerprint. */
export const model2vecWeights = (folder: string) => join(folder, MODEL2VEC_FILE);

export function readModel2vecTable(folder: string): TokenTable {
  const tensors = readSafetensors(model2vecWeights(folder), ["embeddings", "weights", "mapping"]);
  const embeddings = tensors.get("embeddings");
  if (!embeddings || embeddings.shape.length !== 2 || !(embeddings.data instanceof Float32Array)) {
    throw new Error(`${model2vecWeights(folder)} has no 2-d floating-point 'embeddings' tensor`);
  }
  const weights = tensors.get("weights")?.data;
  const mapping = tensors.get("mapping")?.data;
  return {
    rows: embeddings.data,
    dims: embeddings.shape[1]!,
    weights: weights instanceof Float32Array ? weights : null,
    mapping: mapping instanceof Int32Array ? mapping : null,
  };
}

/** Sequences this long are run at once while reading a table out of a model (bounds the output buffer). */
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
  loadRunner: () => Promise<{ run: SequenceRunner; dispose: () => Promise<void> }>,
): Promise<TokenTable | null> {
  const cached = join(cacheDir, `${cacheKey(weightsFile)}.safetensors`);
  if (existsSync(cached)) {
    try {
      const rows = readSafetensors(cached, ["rows"]).get("rows");
      if (rows?.data instanceof Float32Array && rows.shape[0] === vocabSize) return { rows: rows.data, dims: rows.shape[1]!, weights: null, mapping: null };
    } catch {
      // a damaged cache file is read again from the model below, and replaced
    }
  }
  const { run, dispose } = await loadRunner();
  try {
    const table = await readTable(run, vocabSize);
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
  return new Bun.CryptoHasher("sha256").update(JSON.stringify([weightsFile, size, mtimeMs])).digest("hex").slice(0, 24);
}

async function readTable(run: SequenceRunner, vocabSize: number): Promise<TokenTable | null> {
  let rows = new Float32Array(0);
  let dims = 0;
  for (let start = 0; start < vocabSize; start += READ_CHUNK) {
    const ids = Array.from({ length: Math.min(READ_CHUNK, vocabSize - start) }, (_, i) => start + i);
    const out = await run(ids);
    if (start === 0) {
      dims = out.length / ids.length;
      rows = new Float32Array(vocabSize * dims);
    }
    rows.set(out, start * dims);
  }
  const probe = Array.from({ length: Math.min(CONTEXT_PROBE, vocabSize) }, (_, i) => i).reverse();
  const again = await run(probe);
  for (let j = 0; j < probe.length; j++) {
    for (let d = 0; d < dims; d++) {
      const a = again[j * dims + d]!;
      const b = rows[probe[j]! * dims + d]!;
      if (Math.abs(a - b) > 1e-6 * Math.max(1, Math.abs(b))) return null;
    }
  }
  return { rows, dims, weights: null, mapping: null };
}

/** Tokens that count for a text: a model2vec model skips special and unknown tokens; an ONNX table keeps all. */
export interface TokenRule {
  addSpecialTokens: boolean;
  /** Token id to drop, if any (model2vec: the unknown token). */
  dropId: number | null;
  maxTokens: number;
}

/** Mean of the tokens' rows (weighted when the table has weights), L2-normalised by the caller's `normalize`. */
export function meanOfRows(table: TokenTable, ids: number[], rule: TokenRule): Float32Array {
  const { rows, dims, weights, mapping } = table;
  const vector = new Float32Array(dims);
  let used = 0;
  for (const id of ids) {
    if (id === rule.dropId) continue;
    if (used++ === rule.maxTokens) break;
    const row = mapping ? mapping[id]! : id;
    const weight = weights ? weights[id]! : 1;
    const offset = row * dims;
    if (row < 0 || offset + dims > rows.length) continue;
    for (let d = 0; d < dims; d++) vector[d]! += weight * rows[offset + d]!;
  }
  return vector;
}

/** The tokenizer of a model folder, through the same library transformers.js uses internally. */
export async function loadTokenizer(folder: string) {
  const { Tokenizer } = await import("@huggingface/tokenizers");
  const json = (name: string) => (existsSync(join(folder, name)) ? JSON.parse(readFileSync(join(folder, name), "utf8")) : {});
  return new Tokenizer(json("tokenizer.json"), json("tokenizer_config.json"));
}
