/**
 * `vectors.usearch`: the ANN index of one repository, derived from the vectors in SQLite. It is rebuilt whenever
 * its recorded generation differs from the store's, and written to a temp file then renamed, so a reader sees
 * either the old file or the new one. When it cannot be used, search falls back to exact search over SQLite.
 */
import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { describeError } from "./errors.ts";
import { acquireWriterLock } from "./lock.ts";
import { tempPathFor } from "./atomic.ts";
import { logger } from "./log.ts";
import type { Store } from "./store.ts";

export interface VectorHit {
  id: number;
  /** Cosine similarity, 1 = same direction. */
  score: number;
}

const FILE = "vectors.usearch";

type UsearchModule = typeof import("usearch");
type UsearchIndex = InstanceType<UsearchModule["Index"]>;

let usearch: UsearchModule | undefined;
async function loadUsearch(): Promise<UsearchModule> {
  usearch ??= await import("usearch");
  return usearch;
}

/** Cosine over int8-quantised vectors: a quarter of f32's memory, same top results on normalised embeddings. */
async function newIndex(dims: number): Promise<UsearchIndex> {
  const { Index, MetricKind, ScalarKind } = await loadUsearch();
  return new Index(dims, MetricKind.Cos, ScalarKind.I8, 16);
}

export const annPath = (dir: string) => join(dir, FILE);

/** Is the file on disk the one built for the store's current vectors? */
function isFresh(store: Store, dir: string): boolean {
  const file = annPath(dir);
  if (!existsSync(file)) return false;
  const stats = statSync(file);
  return (
    store.getMeta("ann_generation") === store.vectorsGeneration() &&
    store.getMeta("ann_stamp") === `${stats.size}:${stats.mtimeMs}`
  );
}

/** Build the ANN file from SQLite when it is missing or stale; returns whether it was (re)built. */
export async function syncVectorIndex(store: Store, dir: string, dims: number): Promise<boolean> {
  if (isFresh(store, dir)) return false;
  const generation = store.vectorsGeneration();
  const index = await newIndex(dims);
  const rows = store.allVectors();
  if (rows.length > 0) {
    const keys = new BigUint64Array(rows.map((r) => BigInt(r.id)));
    const matrix = new Float32Array(rows.length * dims);
    rows.forEach((r, i) => matrix.set(r.vector, i * dims));
    index.add(keys, matrix);
  }
  const file = annPath(dir);
  const temp = tempPathFor(file);
  try {
    index.save(temp);
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
  const stats = statSync(file);
  store.transaction(() => {
    store.setMeta("ann_generation", generation);
    store.setMeta("ann_stamp", `${stats.size}:${stats.mtimeMs}`);
  });
  return true;
}

/** Opened ANN indexes, memory-mapped read-only, keyed by repository folder. */
const opened = new Map<string, { stamp: string; index: UsearchIndex }>();

/**
 * Nearest fragments to a normalised query vector. A missing, stale or unreadable ANN file is rebuilt from SQLite
 * first; while another process is writing the repository, the search is exact over SQLite instead.
 */
export async function searchVectors(store: Store, dir: string, query: Float32Array, k: number): Promise<VectorHit[]> {
  if (!isFresh(store, dir) && !(await rebuildForSearch(store, dir))) return exactSearch(store, query, k);
  const index = await openIndex(dir, store.getMeta("ann_stamp")!);
  const size = index.size();
  if (size === 0) return [];
  const matches = index.search(query, Math.min(k, size), 0);
  return Array.from(matches.keys, (key, i) => ({ id: Number(key), score: 1 - matches.distances[i]! }));
}

async function rebuildForSearch(store: Store, dir: string): Promise<boolean> {
  const dims = store.embeddingModel()?.dims;
  let release: (() => void) | undefined;
  try {
    release = acquireWriterLock(dir, basename(dir));
  } catch {
    logger.info(`${annPath(dir)} is being rebuilt by another process: searching exactly meanwhile`);
    return false;
  }
  try {
    if (!dims) return false;
    await syncVectorIndex(store, dir, dims);
    logger.info(`rebuilt ${annPath(dir)} from index.db (it was missing or stale)`);
    return true;
  } catch (error) {
    logger.warn(`cannot rebuild ${annPath(dir)}: ${describeError(error)}; searching exactly`);
    return false;
  } finally {
    release();
  }
}

async function openIndex(dir: string, stamp: string): Promise<UsearchIndex> {
  const cached = opened.get(dir);
  if (cached?.stamp === stamp) return cached.index;
  const index = await newIndex(1); // view() adopts the file's dimensions
  index.view(annPath(dir));
  opened.set(dir, { stamp, index });
  return index;
}

function exactSearch(store: Store, query: Float32Array, k: number): VectorHit[] {
  const hits: VectorHit[] = [];
  for (const { id, vector } of store.allVectors()) hits.push({ id, score: dot(query, vector) });
  return hits.sort((a, b) => b.score - a.score).slice(0, k);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
