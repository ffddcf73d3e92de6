/**
 * Embedding providers: local ONNX models through transformers.js (default), static-embedding models (a token table,
 * `static-embedder.ts`), Ollama and OpenAI-compatible HTTP. Heavy libraries load lazily so BM25-only commands never
 * pay for them. Every network call has a timeout.
 */
import { existsSync, readdirSync, realpathSync, rmSync, type Stats, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, isAbsolute, join, resolve } from "node:path";
import type { EmbeddingConfig } from "../config.ts";
import { describeError, ResearcherError, toResearcherError } from "../errors.ts";
import { serialized } from "../serial.ts";
import { env, expandHome } from "../env.ts";
import type { StoredModel } from "../store/store.ts";
import { EMBEDDED_MODEL } from "./embedded-model.ts";
import { modelContent } from "./model-content.ts";
import { unpack } from "./native.ts";
import {
  loadTokenizer,
  readModelJson,
  sumOfRows,
  model2vecWeights,
  readModel2vecTable,
  staticLayout,
  tokenTableOf,
  type StaticLayout,
  type TokenTable,
} from "./static-embedder.ts";
import { downloadModel, fetchWithTimeout, hubEndpoint } from "./hub.ts";
import { remoteCall, type RemoteProvider } from "./remote.ts";
import { own } from "../own.ts";
import { shellWord } from "../terminal.ts";
import { specialKind } from "../files.ts";

export type Provider = "local" | "ollama" | "openai";
export type EmbedKind = "query" | "document";

export interface KnownModel {
  /** A static-embedding (model2vec) model: a token table and a tokenizer, fetched as such from the hub. */
  static?: true;
  dims: number;
  pooling: "mean" | "cls";
  queryPrefix: string;
  documentPrefix: string;
  maxTokens: number;
  dtype: string;
}

const RETRIEVAL_PREFIX = "Represent this sentence for searching relevant passages: ";

/** Published retrieval models with transformers.js ONNX weights, and how each must be called. */
export const KNOWN_MODELS: Record<string, KnownModel> = {
  "Snowflake/snowflake-arctic-embed-xs": {
    dims: 384,
    pooling: "cls",
    queryPrefix: RETRIEVAL_PREFIX,
    documentPrefix: "",
    maxTokens: 512,
    dtype: "q8",
  },
  "Snowflake/snowflake-arctic-embed-s": {
    dims: 384,
    pooling: "cls",
    queryPrefix: RETRIEVAL_PREFIX,
    documentPrefix: "",
    maxTokens: 512,
    dtype: "q8",
  },
  "Xenova/bge-small-en-v1.5": { dims: 384, pooling: "cls", queryPrefix: RETRIEVAL_PREFIX, documentPrefix: "", maxTokens: 512, dtype: "q8" },
  "Xenova/bge-base-en-v1.5": { dims: 768, pooling: "cls", queryPrefix: RETRIEVAL_PREFIX, documentPrefix: "", maxTokens: 512, dtype: "q8" },
  "Xenova/all-MiniLM-L6-v2": { dims: 384, pooling: "mean", queryPrefix: "", documentPrefix: "", maxTokens: 256, dtype: "q8" },
  "nomic-ai/nomic-embed-text-v1.5": {
    dims: 768,
    pooling: "mean",
    queryPrefix: "search_query: ",
    documentPrefix: "search_document: ",
    maxTokens: 2048,
    dtype: "q8",
  },
  "minishlab/potion-base-8M": {
    static: true,
    dims: 256,
    pooling: "mean",
    queryPrefix: "",
    documentPrefix: "",
    maxTokens: 512,
    dtype: "n/a",
  },
  "minishlab/potion-retrieval-32M": {
    static: true,
    dims: 512,
    pooling: "mean",
    queryPrefix: "",
    documentPrefix: "",
    maxTokens: 512,
    dtype: "n/a",
  },
};

const DEFAULT_MODEL = "Snowflake/snowflake-arctic-embed-xs";

/** What to load, after flags, environment, repository and global settings are merged. */
export interface ModelChoice {
  provider: Provider;
  /** Hub id, provider model name, or absolute folder path. */
  model: string;
  pooling?: "mean" | "cls";
  queryPrefix?: string;
  documentPrefix?: string;
  dtype?: string;
  batchSize?: number;
  /** Remote providers: requests in flight at once. */
  parallel?: number;
  ollamaUrl?: string;
  openaiUrl?: string;
}

export interface ModelInfo {
  provider: Provider;
  id: string;
  /** "folder": a local path; "cache": downloaded earlier; "hub": not on disk yet; "embedded": inside the executable. */
  source: "folder" | "cache" | "hub" | "embedded" | "remote";
  /**
   * "transformer": an ONNX network; "static": a token table (model2vec or a layer-free ONNX model); "remote": a server.
   */
  kind: "transformer" | "static" | "remote";
  path: string | null;
  dims: number | null;
  pooling: "mean" | "cls";
  queryPrefix: string;
  documentPrefix: string;
  maxTokens: number;
  dtype: string;
}

export interface Embedder {
  info: ModelInfo;
  dims: number;
  /** Identifies the model and how it is called; vectors from different fingerprints never mix. */
  fingerprint: string;
  embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}

export const modelsDir = (home: string) => join(home, "models");

/** A hub id as the models folder stores it: `name` or `owner/name`, no `.` or `..` part, nothing absolute. */
const HUB_ID = /^(?!\.\.?(?:\/|$))[\w.-]+(?:\/(?!\.\.?$)[\w.-]+)?$/;

/**
 * Where a downloaded model lives; refuses any id that would name a place outside the models folder. `clearing`:
 * asked by `model clear`, whose hint differs (`model set` and a search were told of `model clear`).
 */
function modelCachePath(home: string, id: string, clearing = false): string {
  if (!HUB_ID.test(id)) {
    const named = "a hub model is named `owner/name` (e.g. Xenova/bge-small-en-v1.5)";
    throw new ResearcherError("INVALID_INPUT", `'${id}' is no model id: ${named}`, {
      hint: clearing
        ? "`researcher model clear` alone removes every downloaded model"
        : "name a hub model as owner/name, or a model folder on this machine by its path (./my-model, /opt/models/x)",
    });
  }
  return join(modelsDir(home), id);
}

/** Delete one downloaded model, or every one when no id is given; returns what was removed. */
export function clearModels(home: string, id?: string): string {
  const target = id === undefined ? modelsDir(home) : modelCachePath(home, id, true);
  if (!existsSync(target)) {
    throw new ResearcherError("INVALID_INPUT", `no downloaded model at ${target}`, {
      hint: "`researcher model show` tells where the model in use is",
    });
  }
  rmSync(target, { recursive: true, force: true });
  return target;
}

/**
 * A model named by an empty string (`--model "$MODEL"` with MODEL unset): it chose the configured one without a word.
 */
export const emptyModelName = () => new ResearcherError("USAGE", "the model named is empty", { hint: "name a model id or a model folder" });

/**
 * Merge settings: explicit flag, then RESEARCHER_MODEL_PATH, RESEARCHER_MODEL, the repository's own settings; then a
 * repository keeps the model it was embedded with (`remembered`); then the global config, then the embedded or
 * default model. Indexing with an environment variable once, or a new default, must not break every later command.
 */
export function chooseModel(
  global: Partial<EmbeddingConfig>,
  repo: Partial<EmbeddingConfig> = {},
  flag?: string,
  remembered?: {
    id: string;
    provider: string;
    settings?: Partial<Record<"dtype" | "pooling" | "query_prefix" | "document_prefix", string>>;
  },
): ModelChoice {
  const merged = { ...global, ...repo };
  // An empty name (`--model "$MODEL"` with MODEL unset) names no model: it chose the configured one without a word.
  if (flag !== undefined && !flag.trim()) throw emptyModelName();
  const override = flag || env.model();
  // An index keeps the model it was embedded with until it is re-embedded: a default set since (`model set`) is for
  // repositories without vectors, and only the repository's own settings (or a flag) name another.
  const keeps = remembered !== undefined && !repo.model && !repo.provider;
  const fallback = EMBEDDED_MODEL ? `${EMBEDDED_PREFIX}${EMBEDDED_MODEL.name}` : DEFAULT_MODEL;
  const model = override || (keeps ? remembered.id : merged.model || fallback);
  const provider: Provider = override
    ? isPathLike(model)
      ? "local"
      : (merged.provider ?? "local")
    : keeps
      ? ((remembered.provider as Provider | undefined) ?? "local")
      : (merged.provider ?? "local");
  // The remembered model is called as it was (its dtype, pooling and prefixes are part of what it is), not as a
  // default set since for other models would call it, however it was named; the repository's own settings still
  // win. (Indexes from before the call was recorded take the merged settings, as they always did.)
  const remembers = remembered?.settings !== undefined && model === remembered.id && provider === remembered.provider;
  const called = remembers ? ({ ...remembered.settings, ...definedOnly(repo) } as Partial<EmbeddingConfig>) : merged;
  return {
    provider,
    model,
    pooling: called.pooling,
    queryPrefix: called.query_prefix,
    documentPrefix: called.document_prefix,
    dtype: called.dtype,
    batchSize: merged.batch_size,
    parallel: merged.parallel,
    ollamaUrl: merged.ollama_url,
    openaiUrl: merged.openai_url,
  };
}

/** The settings that are set (a partial config's undefined keys must not hide a recorded value). */
function definedOnly<T extends object>(settings: T): Partial<T> {
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/**
 * Whether a model name is a folder on this machine (`/models/x`, `~/x`, `../x`, `./x`) rather than a hub or provider
 * id. `./typo` was read as an id, and told to name a folder "by its path (./my-model, …)" (s17 review #8).
 */
export function isPathLike(model: string): boolean {
  return isAbsolute(model) || /^\.{1,2}(?:\/|$)/.test(model) || model.startsWith("~/");
}

/** Where a model comes from and how it is called, without loading it. */
export function describeModel(home: string, choice: ModelChoice): ModelInfo {
  if (choice.provider !== "local") {
    return {
      provider: choice.provider,
      id: choice.model,
      source: "remote",
      kind: "remote",
      path: null,
      dims: null,
      pooling: "mean",
      queryPrefix: choice.queryPrefix ?? "",
      documentPrefix: choice.documentPrefix ?? "",
      maxTokens: 8192,
      dtype: "n/a",
    };
  }
  const folder = localFolder(home, choice.model);
  const known = own(KNOWN_MODELS, choice.model) ?? own(KNOWN_MODELS, basename(folder ?? choice.model));
  const config = folder ? readModelConfig(folder) : {};
  const layout = folder ? staticLayout(folder, config) : null;
  return {
    provider: "local",
    id: choice.model,
    source: choice.model.startsWith(EMBEDDED_PREFIX)
      ? "embedded"
      : folder
        ? folder === resolve(choice.model)
          ? "folder"
          : "cache"
        : "hub",
    kind: layout || (!folder && known?.static) ? "static" : "transformer",
    path: folder,
    dims:
      known?.dims ??
      (typeof config.hidden_size === "number" ? config.hidden_size : typeof config.hidden_dim === "number" ? config.hidden_dim : null),
    pooling: choice.pooling ?? known?.pooling ?? "mean",
    queryPrefix: choice.queryPrefix ?? known?.queryPrefix ?? "",
    documentPrefix: choice.documentPrefix ?? known?.documentPrefix ?? "",
    maxTokens: known?.maxTokens ?? Math.min(512, Number(config.max_position_embeddings) || 512),
    // A model2vec table has one precision: a dtype setting would only change the fingerprint, not the vectors.
    dtype: layout === "model2vec" ? "n/a" : (choice.dtype ?? known?.dtype ?? "q8"),
  };
}

/** A model baked into the executable is named `embedded:<folder name>`. */
const EMBEDDED_PREFIX = "embedded:";

/** A folder holding the model's files, if it is on disk: an explicit path, the embedded model or the cache. */
function localFolder(home: string, model: string): string | null {
  if (model.startsWith(EMBEDDED_PREFIX)) {
    if (!EMBEDDED_MODEL || model !== `${EMBEDDED_PREFIX}${EMBEDDED_MODEL.name}`) {
      throw new ResearcherError("MODEL_UNAVAILABLE", `${model} is not embedded in this executable`);
    }
    return unpack(`model-${EMBEDDED_MODEL.name}`, EMBEDDED_MODEL.files);
  }
  const path = resolve(expandHome(model));
  if ((isPathLike(model) || existsSync(path)) && existsSync(join(path, "config.json"))) return path;
  if (isPathLike(model)) {
    const what = existsSync(path) ? "is not a model folder (no config.json)" : "does not exist";
    throw new ResearcherError("MODEL_UNAVAILABLE", `${path} ${what}`, {
      hint: "point at a folder in transformers.js layout: config.json, tokenizer.json, onnx/model*.onnx",
    });
  }
  const cached = modelCachePath(home, model);
  return existsSync(join(cached, "config.json")) ? cached : null;
}

function readModelConfig(folder: string): Record<string, unknown> {
  try {
    return JSON.parse(readModelJson(folder, "config.json"));
  } catch {
    return {}; // the load that follows says what is wrong with it (checkModelFiles)
  }
}

/** The files a model's load reads: its JSON, vocabularies, ONNX graphs and weights. */
const MODEL_FILE = /\.(?:json|txt|model|onnx|onnx_data|safetensors)$/;

/**
 * Every file a model's load would read is a regular file: transformers.js and onnxruntime read them whole and
 * blocking, so a FIFO in a model folder hung `index` (holding the writer lock), every default search and an MCP
 * server's event loop, and a link to /dev/zero filled the memory.
 */
function checkModelFiles(folder: string, source: ModelInfo["source"]): void {
  // A downloaded model is fetched again by `model pull`; a folder of the user's own is theirs to copy again.
  const again = source === "cache" || source === "hub" ? "`researcher model pull` it again" : "copy the folder again";
  for (const dir of [folder, join(folder, "onnx")]) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue; // no onnx/ folder: the load says what it misses
    }
    for (const name of names.filter((n) => MODEL_FILE.test(n))) {
      const stats = modelFileStats(join(dir, name), again);
      if (stats && !stats.isFile() && !stats.isDirectory()) {
        throw new ResearcherError("MODEL_UNAVAILABLE", `${join(dir, name)} is not a regular file (${specialKind(stats)})`, {
          hint: `put the model's own file there (${again})`,
        });
      }
    }
  }
}

/**
 * A model file's stats, undefined when missing. One that cannot be looked at (a loop of links) is the model's error,
 * which leaves the embeddings pending: thrown as it came, it was the repository's, and failed every index run
 * (s28b hostile F1).
 */
function modelFileStats(file: string, again: string): Stats | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch (error) {
    throw new ResearcherError("MODEL_UNAVAILABLE", `${file} cannot be read: ${describeError(error)}`, {
      hint: `put the model's own file there (${again})`,
    });
  }
}

const DTYPE_FILES: Record<string, string> = {
  fp32: "model.onnx",
  fp16: "model_fp16.onnx",
  q8: "model_quantized.onnx",
  int8: "model_int8.onnx",
  uint8: "model_uint8.onnx",
  q4: "model_q4.onnx",
};

/** The file that holds a local model's weights: model2vec's table, or the ONNX file of the chosen dtype. */
function weightsFile(info: ModelInfo): string | null {
  if (!info.path) return null;
  if (layoutOf(info) === "model2vec") return model2vecWeights(info.path);
  return join(info.path, "onnx", DTYPE_FILES[info.dtype] ?? "model.onnx");
}

/**
 * A local model folder must hold the weights its settings pick (the ONNX file of its dtype, or model2vec's table):
 * one without them is refused where it is named (`model set`), not at every later search.
 */
export function requireWeights(info: ModelInfo): void {
  const weights = weightsFile(info);
  if (weights === null || existsSync(weights)) return;
  throw new ResearcherError("MODEL_UNAVAILABLE", `${info.path} has no weights for dtype ${info.dtype} (${weights} is missing)`, {
    hint: "point at a folder holding the model's ONNX file, or choose the dtype it has: `researcher config set embedding.dtype fp32`",
  });
}

const layoutOf = (info: ModelInfo): StaticLayout | null =>
  info.path && info.kind === "static" ? staticLayout(info.path, readModelConfig(info.path)) : null;

/**
 * Whether `stored` (a repository's vectors) was made by the model `info` describes, called the same way: the same
 * fingerprint, which names a model folder by its content (model-content.ts), so the folder at any path, through a
 * link of any name or copied, is that model, and another with the same name and size is not (s28 code review #1).
 * Indexes embedded before the content was hashed name the folder by its name and weights' size (legacyFingerprint):
 * such a record still matches the folder it was made with, by its real path (a link to it either way: s28 code
 * review #3), so an upgrade re-embeds nothing. A copy of it elsewhere cannot be told by that record: another model.
 */
function madeBy(info: ModelInfo, dims: number, stored: StoredModel): boolean {
  if (fingerprintOf(info, dims) === stored.fingerprint) return true;
  if (!info.path || stored.provider !== info.provider) return false;
  // A hub id names the same cache folder in the same home; a path names the folder it resolves to.
  const named = isPathLike(stored.id) ? resolve(expandHome(stored.id)) : stored.id === info.id ? info.path : null;
  const real = named && realFolder(named);
  return !!real && real === realFolder(info.path) && legacyFingerprint({ ...info, path: named }, dims) === stored.fingerprint;
}

function realFolder(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/**
 * How a model is called and what it is: provider, dtype, pooling, prefixes, dimensions and, for a model on disk, its
 * content and token limit (a model from a server is its id). Vectors of different fingerprints never mix.
 */
function fingerprintOf(info: ModelInfo, dims: number): string {
  if (!info.path) return legacyFingerprint(info, dims);
  const content = modelContent(info.path, weightsFile(info));
  const parts = ["content", info.provider, content, info.maxTokens, info.dtype, info.pooling, info.queryPrefix, info.documentPrefix, dims];
  return new Bun.CryptoHasher("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);
}

/** The fingerprint before a model folder's content was hashed (still a remote model's): name and weights' size. */
function legacyFingerprint(info: ModelInfo, dims: number): string {
  const weights = weightsFile(info);
  const size = weights && existsSync(weights) ? statSync(weights).size : 0;
  const parts = [
    info.provider,
    info.path ? basename(info.path) : info.id,
    info.dtype,
    info.pooling,
    info.queryPrefix,
    info.documentPrefix,
    dims,
    size,
  ];
  return new Bun.CryptoHasher("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);
}

export interface LoadOptions {
  /** Allow downloading from the Hugging Face hub (first use, `model pull`). */
  allowDownload?: boolean;
  onProgress?: (file: string, loaded: number, total: number) => void;
}

export async function loadEmbedder(home: string, choice: ModelChoice, options: LoadOptions = {}): Promise<Embedder> {
  try {
    const info = describeModel(home, choice);
    if (info.provider === "local") return await loadLocal(home, info, choice.batchSize ?? 16, options);
    return await loadRemote(info, info.provider, choice);
  } catch (error) {
    throw noRoomToLoad(choice, error);
  }
}

/**
 * A model whose load finds no room in the home folder for what it writes there (onnxruntime's 44 MB library, or a
 * model embedded in the executable, unpacked) cannot be had now, as one offline cannot: an index run indexes the text
 * and leaves the vectors pending, a search uses BM25. A run that indexed a 13-byte note failed whole as DISK_FULL
 * (s27 hostile U1). The message says what did not fit, the hint is a full disk's.
 */
function noRoomToLoad(choice: ModelChoice, error: unknown): unknown {
  const failure = toResearcherError(error);
  if (failure.code !== "DISK_FULL") return error;
  return new ResearcherError("MODEL_UNAVAILABLE", `cannot load model ${choice.model}: ${failure.message}`, {
    hint: failure.hint,
    cause: error,
  });
}

/** Loaded models by choice, so a server or a multi-repository command loads each model once. */
export class EmbedderCache {
  private readonly loaded = new Map<string, Promise<Embedder>>();
  /** Models let go because their folder changed: disposed with the rest, as a search may still be using one. */
  private readonly retired: Embedder[] = [];

  constructor(private readonly options: LoadOptions = { allowDownload: true }) {}

  async get(home: string, choice: ModelChoice): Promise<Embedder> {
    const key = JSON.stringify([home, choice]);
    const cached = this.loaded.get(key);
    if (cached) {
      const embedder = await cached.catch(() => undefined);
      // A model folder changed under a long-lived server (a newer model pulled in place, another one copied there,
      // and the repository re-embedded with it): loaded again, as a new process would. Until then every search of
      // the repository failed MODEL_MISMATCH.
      if (!embedder || !changedOnDisk(home, choice, embedder)) return cached;
      if (this.loaded.get(key) === cached) {
        this.loaded.delete(key);
        this.retired.push(embedder);
      }
    }
    let loading = this.loaded.get(key);
    if (!loading) {
      loading = loadEmbedder(home, choice, this.options);
      loading.catch(() => this.loaded.delete(key));
      this.loaded.set(key, loading);
    }
    return loading;
  }

  async dispose(): Promise<void> {
    const all = await Promise.allSettled(this.loaded.values());
    this.loaded.clear();
    for (const result of all) if (result.status === "fulfilled") await result.value.dispose();
    for (const embedder of this.retired.splice(0)) await embedder.dispose();
  }
}

/**
 * Whether the model `choice` names now is another than the loaded `embedder` (its fingerprint: stats, while its files
 * are the ones hashed before).
 */
function changedOnDisk(home: string, choice: ModelChoice, embedder: Embedder): boolean {
  if (choice.provider !== "local") return false;
  try {
    return fingerprintOf(describeModel(home, choice), embedder.dims) !== embedder.fingerprint;
  } catch {
    return false; // not describable now (a folder half copied): the loaded model serves until it is
  }
}

/**
 * onnxruntime starts a telemetry system when it is first loaded: it parses /proc/self/cmdline recursively, so a
 * long command line (a 30 KB query as an argument) overflows the stack and kills the process; it also writes
 * /tmp/mat-debug-<pid>.log and sends usage data, which a local-first tool should not. It reads the switch with
 * getenv(), and Bun's process.env is not the C environment, so the variable is set through libc.
 */
async function disableOnnxTelemetry(): Promise<void> {
  process.env.ORT_DISABLE_TELEMETRY = "1";
  if (process.platform === "win32") return;
  try {
    const { dlopen, FFIType } = await import("bun:ffi");
    const libc = dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", {
      setenv: { args: [FFIType.cstring, FFIType.cstring, FFIType.i32], returns: FFIType.i32 },
    });
    libc.symbols.setenv(Buffer.from("ORT_DISABLE_TELEMETRY\0"), Buffer.from("1\0"), 1);
    libc.close();
  } catch {
    // no libc to reach: onnxruntime keeps its telemetry, and only very long command lines are at risk
  }
}

async function loadLocal(home: string, info: ModelInfo, batchSize: number, options: LoadOptions): Promise<Embedder> {
  if (!info.path && !options.allowDownload) {
    throw new ResearcherError("MODEL_UNAVAILABLE", `model ${info.id} is not on this machine`, {
      hint: `run \`researcher model pull ${info.id}\`, or point at a local folder with \`researcher model set /path/to/model\` or RESEARCHER_MODEL_PATH`,
    });
  }
  if (info.path) checkModelFiles(info.path, info.source);
  if (info.kind === "static") {
    const local = info.path ? info : { ...info, source: "cache" as const, path: await pullStatic(home, info, options) };
    const embedder = await loadStatic(home, local, options);
    // A folder whose config promised no transformer layers but whose model reads context runs as a transformer.
    if (embedder) return embedder;
    return loadTransformer(home, { ...local, kind: "transformer" }, batchSize, options);
  }
  return loadTransformer(home, info, batchSize, options);
}

async function loadTransformer(home: string, hubInfo: ModelInfo, batchSize: number, options: LoadOptions): Promise<Embedder> {
  const { tokenizer, model } = await loadOnnx(home, hubInfo, options);
  // A model just downloaded is described as the cache folder it now is, as every later run describes it (what the
  // choice fixed stays): its fingerprint (its files' content), length limit and dimensions must not change
  // between the run that pulled it and the next.
  const { id, pooling, queryPrefix, documentPrefix, dtype } = hubInfo;
  const info = hubInfo.path ? hubInfo : describeModel(home, { provider: "local", model: id, pooling, queryPrefix, documentPrefix, dtype });
  const embedBatch = async (texts: string[]): Promise<Float32Array[]> => {
    const inputs = tokenizer(texts, { padding: true, truncation: true, max_length: info.maxTokens });
    const output = await model(inputs);
    const hidden = (output.last_hidden_state ?? output.token_embeddings ?? Object.values(output)[0]) as {
      data: Float32Array;
      dims: number[];
    };
    return pool(hidden.data, hidden.dims, inputs.attention_mask.data as BigInt64Array, info.pooling);
  };
  return withProbe(info, embedBatch, batchSize, async () => {
    await model.dispose();
  });
}

/**
 * transformers.js keeps its settings (`env`: folders, whether it may download) in one global, read while a load
 * runs: loads run one after the other, so a search's load never runs with a watcher's permission to download, or
 * another home's folders.
 */
const onnxLoads = serialized();

/** A transformers.js model and tokenizer, from a folder, the cache or (when allowed) the hub. */
function loadOnnx(home: string, info: ModelInfo, options: LoadOptions) {
  return onnxLoads(() => loadOnnxAlone(home, info, options));
}

async function loadOnnxAlone(home: string, info: ModelInfo, options: LoadOptions) {
  await disableOnnxTelemetry();
  const transformers = await import("@huggingface/transformers");
  const { env, AutoModel, AutoTokenizer } = transformers;
  env.allowLocalModels = true;
  env.localModelPath = modelsDir(home);
  env.cacheDir = modelsDir(home);
  env.allowRemoteModels = Boolean(options.allowDownload) && !info.path;
  env.remoteHost = `${hubEndpoint()}/`;
  env.fetch = fetchWithTimeout as typeof fetch;
  // Only when someone draws progress: with a callback, transformers.js reads even local model files through a
  // chunked stream; without one, with a single readFile.
  const onProgress = options.onProgress;
  const progress = onProgress && {
    progress_callback: (data: { status: string; file?: string; loaded?: number; total?: number }) => {
      if (data.status === "progress" && data.file) onProgress(data.file, data.loaded ?? 0, data.total ?? 0);
    },
  };
  const target = info.path ?? info.id;
  try {
    const tokenizer = await AutoTokenizer.from_pretrained(target, { ...progress });
    const model = await AutoModel.from_pretrained(target, {
      dtype: info.dtype as "q8",
      ...progress,
      session_options: { intraOpNumThreads: availableParallelism(), interOpNumThreads: 1 },
    });
    return { tokenizer, model, Tensor: transformers.Tensor };
  } catch (error) {
    throw new ResearcherError("MODEL_UNAVAILABLE", `cannot load model ${info.id}: ${describeError(error)}`, {
      hint: info.path
        ? `check that ${info.path}/onnx/${DTYPE_FILES[info.dtype] ?? "model.onnx"} exists (or set embedding.dtype)`
        : `check your network, or download elsewhere and use \`researcher model set /path/to/folder\``,
      cause: error,
    });
  }
}

/** The files of a model2vec model on the hub. */
const MODEL2VEC_FILES = [
  { name: "config.json" },
  { name: "tokenizer.json" },
  { name: "model.safetensors" },
  { name: "tokenizer_config.json", optional: true },
];

/** Download a static model named in the model table into the models folder; returns its folder. */
async function pullStatic(home: string, info: ModelInfo, options: LoadOptions): Promise<string> {
  const folder = modelCachePath(home, info.id);
  try {
    await downloadModel(info.id, MODEL2VEC_FILES, folder, options.onProgress);
  } catch (error) {
    throw new ResearcherError("MODEL_UNAVAILABLE", `cannot download model ${info.id}: ${describeError(error)}`, {
      hint: "check your network (or HF_ENDPOINT), or download the folder elsewhere and use `researcher model set /path/to/folder`",
      cause: error,
    });
  }
  return folder;
}

/** A static-embedding model (see static-embedder.ts); null when its ONNX model turns out to read context. */
async function loadStatic(home: string, info: ModelInfo, options: LoadOptions): Promise<Embedder | null> {
  const folder = info.path!;
  const model2vec = layoutOf(info) === "model2vec";
  let tokenizer: Awaited<ReturnType<typeof loadTokenizer>>;
  let table: TokenTable | null;
  try {
    tokenizer = await loadTokenizer(folder);
    const config = readModelConfig(folder);
    const tokens = vocabularySize(tokenizer);
    table = model2vec
      ? readModel2vecTable(folder, tokens)
      : await tokenTableOf(
          join(modelsDir(home), ".tables"),
          weightsFile(info)!,
          Math.min(tokens, Number(config.vocab_size) || tokens),
          Number(config.max_position_embeddings) || Infinity,
          () => onnxRunner(home, info, options),
        );
  } catch (error) {
    if (error instanceof ResearcherError) throw error;
    // Unpacking the runtime into RESEARCHER_HOME can fill the disk: not the model's fault (noRoomToLoad says so).
    if (toResearcherError(error).code === "DISK_FULL") throw error;
    throw new ResearcherError("MODEL_UNAVAILABLE", `cannot load static model ${info.id}: ${describeError(error)}`, {
      hint: `check ${folder}: tokenizer.json and ${model2vec ? "model.safetensors" : "the onnx folder"} must be readable`,
      cause: error,
    });
  }
  if (!table) return null;
  const rows = table; // a const for the closure below
  const unknown = (tokenizer.model as { unk_token?: string } | null)?.unk_token;
  const rule = model2vec
    ? {
        addSpecialTokens: false,
        dropId: unknown === undefined ? null : (tokenizer.token_to_id(unknown) ?? null),
        maxTokens: info.maxTokens,
      }
    : { addSpecialTokens: true, dropId: null, maxTokens: info.maxTokens };
  const embedBatch = async (texts: string[]) =>
    texts.map((text) => normalize(sumOfRows(rows, tokenizer.encode(text, { add_special_tokens: rule.addSpecialTokens }).ids, rule)));
  const embedder = await withProbe(info, embedBatch, STATIC_BATCH, async () => {});
  if (model2vec || unknown === undefined) return embedder;
  const unknownId = tokenizer.token_to_id(unknown);
  return withUnknownQueriesEmpty(embedder, (text) =>
    tokenizer.encode(text, { add_special_tokens: false }).ids.some((id) => id !== unknownId),
  );
}

/**
 * A token table keeps every token, as the ONNX model it was read from does, so a text of words the model does not
 * know embeds as `[CLS] [UNK]… [SEP]`: "restic backups", "A100" and every fragment of an Arabic PDF point the same
 * way, at cosine 1, and such fragments came first for any query of rare words (s19 user F2). A query with no word
 * the model knows means nothing to it: its vector is zero, which vector search reads as near nothing (as a
 * model2vec model, which drops unknown tokens, makes it). Documents keep the model's own vectors.
 */
function withUnknownQueriesEmpty(embedder: Embedder, knowsAWord: (text: string) => boolean): Embedder {
  return {
    ...embedder,
    async embed(texts, kind) {
      const vectors = await embedder.embed(texts, kind);
      return kind === "query" ? vectors.map((vector, i) => (knowsAWord(texts[i]!) ? vector : new Float32Array(vector.length))) : vectors;
    },
  };
}

/** Static embedding is a loop over tokens: batches only bound how much text is tokenised at once. */
const STATIC_BATCH = 256;

function vocabularySize(tokenizer: { get_vocab(withAdded?: boolean): Map<string, number> }): number {
  let max = -1;
  for (const id of tokenizer.get_vocab(true).values()) max = Math.max(max, id);
  return max + 1;
}

/** Runs a layer-free ONNX model on one sequence, to read its token table out of it. */
async function onnxRunner(home: string, info: ModelInfo, options: LoadOptions) {
  const { model, Tensor } = await loadOnnx(home, info, options);
  const run = async (ids: number[]) => {
    const shape = [1, ids.length];
    const output = await model({
      input_ids: new Tensor("int64", BigInt64Array.from(ids, BigInt), shape),
      attention_mask: new Tensor("int64", new BigInt64Array(ids.length).fill(1n), shape),
    });
    return ((output.last_hidden_state ?? Object.values(output)[0]) as { data: Float32Array }).data;
  };
  return { run, dispose: async () => void (await model.dispose()) };
}

/** Finish an embedder: one probe text tells the dimensions, which become part of the fingerprint. */
async function withProbe(
  info: ModelInfo,
  embedBatch: (texts: string[]) => Promise<Float32Array[]>,
  batchSize: number,
  dispose: () => Promise<void>,
  parallel = 1,
): Promise<Embedder> {
  const dims = (await embedBatch(["dimension probe"]))[0]?.length ?? 0;
  if (dims === 0) throw checkFailure(info, "no vector, or an empty one, for its first text");
  const checked = checkedBatches(info, embedBatch, dims);
  return {
    info: { ...info, dims },
    dims,
    fingerprint: fingerprintOf(info, dims),
    embed(texts, kind) {
      const prefix = kind === "query" ? info.queryPrefix : info.documentPrefix;
      return embedSorted(
        texts.map((t) => prefix + clip(t, info.maxTokens)),
        batchSize,
        checked,
        parallel,
      );
    },
    dispose,
  };
}

/**
 * A batch call that answers with one vector per text, each of the probe's dimensions, or fails: a server that
 * sends fewer vectors or other dimensions (another model behind the same name, a proxy cutting the answer) would
 * otherwise have them stored, and a repository's vectors must all come from one model.
 */
function checkedBatches(
  info: ModelInfo,
  embedBatch: (texts: string[]) => Promise<Float32Array[]>,
  dims: number,
): (texts: string[]) => Promise<Float32Array[]> {
  const failed = (problem: string) => checkFailure(info, problem);
  return async (texts) => {
    const vectors = await embedBatch(texts);
    if (vectors.length !== texts.length) throw failed(`${vectors.length} vectors for ${texts.length} texts`);
    const other = vectors.find((vector) => vector.length !== dims);
    if (other) throw failed(`a vector of ${other.length} dimensions, not ${dims} as before`);
    // NaN or infinite values would rank as NaN (a score of null in JSON) and stay in the index.
    if (vectors.some((vector) => !vector.every(Number.isFinite))) throw failed("a vector with values that are not finite numbers");
    return vectors;
  };
}

function checkFailure(info: ModelInfo, problem: string): ResearcherError {
  const hint =
    info.provider === "local" ? "the model's files may be damaged: fetch or copy them again" : "check the server and the model it serves";
  return new ResearcherError("PROVIDER_FAILED", `${info.id} answered ${problem}`, { hint });
}

/**
 * A model reads at most `maxTokens` tokens; the rest is cut by the tokenizer (or refused by a remote API) after
 * all of it was tokenised or sent. Few tokens span more than 6 characters, so text past 6 per token is dropped
 * first: a 100 KB query costs what a page does.
 */
const CHARS_PER_TOKEN = 6;

function clip(text: string, maxTokens: number): string {
  return text.length > maxTokens * CHARS_PER_TOKEN ? text.slice(0, maxTokens * CHARS_PER_TOKEN) : text;
}

/**
 * Batches of similar length waste less work on padding; results come back in input order. Up to `parallel`
 * batches are in flight at once: a remote server with its own hardware embeds several while we wait.
 */
async function embedSorted(
  texts: string[],
  batchSize: number,
  embedBatch: (texts: string[]) => Promise<Float32Array[]>,
  parallel = 1,
): Promise<Float32Array[]> {
  const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
  const result = new Array<Float32Array>(texts.length);
  let next = 0;
  const lane = async () => {
    while (next < order.length) {
      const slice = order.slice(next, next + batchSize);
      next += batchSize;
      const vectors = await embedBatch(slice.map((i) => texts[i]!));
      for (const [j, index] of slice.entries()) result[index] = vectors[j]!;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, Math.ceil(order.length / batchSize))) }, lane));
  return result;
}

/** Mean (masked) or CLS pooling, then L2 normalisation, straight over the output buffer. */
export function pool(data: Float32Array, dims: number[], mask: BigInt64Array | Int32Array, pooling: "mean" | "cls"): Float32Array[] {
  const [batch, seq, hidden] = dims as [number, number, number];
  const vectors: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const vector = new Float32Array(hidden);
    if (pooling === "cls") {
      vector.set(data.subarray(b * seq * hidden, b * seq * hidden + hidden));
    } else {
      let count = 0;
      for (let s = 0; s < seq; s++) {
        if (!Number(mask[b * seq + s])) continue;
        count++;
        const offset = (b * seq + s) * hidden;
        for (let h = 0; h < hidden; h++) vector[h]! += data[offset + h]!;
      }
      for (let h = 0; h < hidden; h++) vector[h]! /= Math.max(1, count);
    }
    vectors.push(normalize(vector));
  }
  return vectors;
}

export function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/**
 * Whether `choice` may be another model than the one `stored` describes, told without loading it: the fingerprint
 * it would have at the stored dimensions (its files' content, hashed once a process). Equal is the same model called
 * the same way; an index made before contents were hashed matches at the folder it was made with (madeBy).
 */
function mayDifferFrom(home: string, choice: ModelChoice, stored: StoredModel): boolean {
  return described(home, choice, stored)?.same !== true; // not even describable: loading it says why
}

/** `choice` described and compared with `stored` without loading it; undefined when it cannot be described. */
function described(home: string, choice: ModelChoice, stored: StoredModel): { info: ModelInfo; same: boolean } | undefined {
  try {
    const info = describeModel(home, choice);
    return { info, same: madeBy(info, stored.dims, stored) };
  } catch {
    return undefined; // a path that is no model folder, a model not embedded in this executable
  }
}

/** Why index runs of a repository stop, and the command that lets them go on (verify's `fix`, status's line). */
export interface ModelHold {
  because: string;
  fix: string;
}

/**
 * Why an index run of `repository`, whose vectors `stored` describes, refuses `choice` before anything changes:
 * another model than its own, or its own whose files changed in place (a new revision, a rewritten tokenizer.json);
 * undefined when it is that model. Told without loading it (mayDifferFrom's fingerprint at the stored dimensions),
 * so `status` and `verify` say what the next run will refuse. A model that cannot even be described is no hold: the
 * run cannot load it either, and leaves its vectors pending (embedOrDefer).
 */
export function modelHold(home: string, repository: string, choice: ModelChoice, stored: StoredModel): ModelHold | undefined {
  const model = described(home, choice, stored);
  if (!model || model.same) return undefined;
  let fingerprint: string;
  try {
    fingerprint = fingerprintOf(model.info, stored.dims);
  } catch {
    return undefined; // its files cannot be read: neither can a load's
  }
  const now = { id: model.info.id, provider: model.info.provider, dims: model.info.dims ?? stored.dims, fingerprint };
  const { because, fix } = mismatch(repository, stored, now);
  return { because, fix };
}

/**
 * Whether the vectors `stored` describes must be replaced to embed with `choice`: another model, or the same one
 * called otherwise (a prefix, a dtype: its vectors would not compare). A hub or provider model is its id (two hub
 * models may share a folder name and size); a model folder is its files, told by its fingerprint (mayDifferFrom), so
 * the folder reached through a link either way, or a copy of it under any name, is the same model at whatever path,
 * and another folder of the same name and size is another. What an index run re-embeds for, and what `model set`
 * names as a repository keeping another model.
 */
export function isOtherModel(home: string, choice: ModelChoice, stored: StoredModel): boolean {
  const folders = choice.provider === "local" && stored.provider === "local" && isPathLike(choice.model) && isPathLike(stored.id);
  return (stored.id !== choice.model && !folders) || mayDifferFrom(home, choice, stored);
}

/** A repository never mixes vectors of two models. */
export function checkModel(repository: string, stored: StoredModel | undefined, embedder: Embedder): void {
  if (!stored || madeBy(embedder.info, embedder.dims, stored)) return;
  const now = { id: embedder.info.id, provider: embedder.info.provider, dims: embedder.dims, fingerprint: embedder.fingerprint };
  const { because, fix, filesChanged } = mismatch(repository, stored, now);
  // --model makes the new model the repository's own (config.yaml), so its searches and index runs agree after.
  const hint = `re-embed it with ${embedder.info.id}: \`${fix}\``;
  // A default search falls back to bm25 on changed files: its warning must say the index stopped following them.
  if (filesChanged) throw new ModelFilesChanged(because, `${hint} (until then, no index run takes in changes)`);
  throw new ResearcherError("MODEL_MISMATCH", because, { hint });
}

/** What the model `now` is, as a mismatch names it: id, provider, dimensions and fingerprint. */
type ModelNow = Pick<ModelInfo, "id" | "provider"> & { dims: number; fingerprint: string };

/** Why `now` is not the model a repository was embedded with, and the command that re-embeds it with `now`. */
function mismatch(repository: string, stored: StoredModel, now: ModelNow): ModelHold & { filesChanged: boolean } {
  // The same name, size and provider: the model's files changed since (a new revision, a quantised file swapped in).
  // The same name through another provider (local, then an Ollama server) is another model, said so: it was worded
  // as changed files (s21 hostile #11).
  const sameName = stored.id === now.id && stored.dims === now.dims;
  const filesChanged = sameName && stored.provider === now.provider;
  const short = (fingerprint: string) => fingerprint.slice(0, 12);
  const because = filesChanged
    ? `the files of ${stored.id} changed since repository '${repository}' was embedded with it (fingerprint ${short(stored.fingerprint)} → ${short(now.fingerprint)})`
    : sameName
      ? `repository '${repository}' was embedded with ${stored.id} through ${stored.provider}, not through ${now.provider}`
      : `repository '${repository}' was embedded with ${stored.id} (${stored.dims} dims), not ${now.id} (${now.dims} dims)`;
  return { because, fix: `researcher index --embeddings-only ${repository} --model ${shellWord(now.id)}`, filesChanged };
}

/**
 * MODEL_MISMATCH where the model is the repository's own and only its files changed (a new revision, a quantised
 * file swapped in): a default search can still answer with its words. Any other model is one somebody chose.
 */
export class ModelFilesChanged extends ResearcherError {
  constructor(message: string, hint: string) {
    super("MODEL_MISMATCH", message, { hint });
  }
}

/** Requests in flight to a remote embedding server unless `embedding.parallel` says otherwise. */
const REMOTE_PARALLEL = 4;

async function loadRemote(info: ModelInfo, provider: RemoteProvider, choice: ModelChoice): Promise<Embedder> {
  const call = remoteCall(provider, choice);
  const embedBatch = async (texts: string[]) => (await call(texts)).map(normalize);
  return withProbe(info, embedBatch, choice.batchSize ?? 64, async () => {}, choice.parallel ?? REMOTE_PARALLEL);
}
