/**
 * `vectors.usearch`: the ANN index of one repository, derived from the vectors in SQLite. It is rebuilt whenever
 * its recorded generation differs from the store's, and written to a temp file then renamed, so a reader sees
 * either the old file or the new one. It is checked, not trusted: the file's checksum is recorded in SQLite when
 * it is written and compared before usearch's native code reads it, because a damaged file crashes the process
 * (size and mtime do not tell). When it cannot be used, search falls back to exact search over SQLite.
 */
import { readFileSync, renameSync, rmSync, statSync } from "node:fs";
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

/** xxHash3 of the whole file (a 10 MB file is read and hashed in ~6 ms), or null when it cannot be read. */
function checksumOf(file: string): string | null {
  try {
    return Bun.hash.xxHash3(readFileSync(file)).toString(16);
  } catch {
    return null;
  }
}

/** What the file must be for the store's current vectors; null until one has been built for them. */
function expected(store: Store): string | null {
  const checksum = store.getMeta("ann_checksum");
  return checksum && store.getMeta("ann_generation") === store.vectorsGeneration() ? checksum : null;
}

/** Is the file on disk, byte for byte, the one built for the store's current vectors? */
function isVerified(store: Store, dir: string): boolean {
  const checksum = expected(store);
  return checksum !== null && checksum === checksumOf(annPath(dir));
}

/** The ANN file against the store's vectors: the one built for them, absent, built for older vectors, or damaged. */
export function vectorIndexState(store: Store, dir: string): "verified" | "missing" | "stale" | "damaged" {
  const actual = checksumOf(annPath(dir));
  if (actual === null) return "missing";
  const checksum = expected(store);
  if (checksum === null) return "stale";
  return checksum === actual ? "verified" : "damaged";
}

/** Build the ANN file from SQLite unless the one on disk is verified; returns whether it was (re)built. */
export async function syncVectorIndex(store: Store, dir: string, dims: number): Promise<boolean> {
  if (isVerified(store, dir)) return false;
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
  let checksum: string | null;
  try {
    index.save(temp);
    checksum = checksumOf(temp);
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
  store.transaction(() => {
    store.setMeta("ann_generation", generation);
    store.setMeta("ann_checksum", checksum!);
  });
  return true;
}

/**
 * ANN indexes read into memory, by repository folder, with the checksum they were verified against. Loaded,
 * not memory-mapped: a mapped file damaged later would reach native code unverified.
 */
const opened = new Map<string, { checksum: string; stamp: string; index: UsearchIndex }>();

/** Filters admitting at most this many fragments are searched exactly: reading and scoring a few thousand vectors
 * costs less than over-fetching the ANN index by the inverse of the filter's share, and misses nothing. */
const EXACT_SCAN_LIMIT = 5000;

/**
 * Nearest fragments to a normalised query vector, among `within` when given (a filter's fragments). A missing,
 * stale or damaged ANN file is rebuilt from SQLite first; while another process is writing the repository, the
 * search is exact over SQLite instead.
 */
export async function searchVectors(store: Store, dir: string, query: Float32Array, k: number, within?: Set<number>): Promise<VectorHit[]> {
  const candidates = () => (within ? store.vectorsOf([...within]) : store.allVectors());
  if (within && within.size <= EXACT_SCAN_LIMIT) return exactSearch(candidates(), query, k);
  const index = await verifiedIndex(store, dir);
  if (!index) return exactSearch(candidates(), query, k);
  const size = index.size();
  if (size === 0) return [];
  if (!within) return annSearch(index, query, Math.min(k, size));
  // Over-fetch by twice the inverse of the filter's share, doubling until k admitted hits (or the whole index).
  for (let fetch = Math.ceil((2 * k * size) / within.size); ; fetch *= 2) {
    const hits = annSearch(index, query, Math.min(fetch, size)).filter((hit) => within.has(hit.id));
    if (hits.length >= k || fetch >= size) return hits.slice(0, k);
  }
}

function annSearch(index: UsearchIndex, query: Float32Array, k: number): VectorHit[] {
  const matches = index.search(query, k, 0);
  return Array.from(matches.keys, (key, i) => ({ id: Number(key), score: 1 - matches.distances[i]! }));
}

/** The ANN index for the store's current vectors, verified before loading; undefined when there is none to use. */
async function verifiedIndex(store: Store, dir: string): Promise<UsearchIndex | undefined> {
  const cached = opened.get(dir);
  // A file changed on disk since it was loaded is checked again (and rebuilt if it must be).
  if (cached && cached.checksum === expected(store) && cached.stamp === stampOf(annPath(dir))) return cached.index;
  if (!isVerified(store, dir) && !(await rebuildForSearch(store, dir))) return undefined;
  const index = await newIndex(1); // load() adopts the file's dimensions
  index.load(annPath(dir));
  opened.set(dir, { checksum: expected(store)!, stamp: stampOf(annPath(dir)), index });
  return index;
}

function stampOf(file: string): string {
  const stats = statSync(file, { throwIfNoEntry: false });
  return stats ? `${stats.ino}:${stats.size}:${stats.mtimeMs}` : "absent";
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
    logger.info(`rebuilt ${annPath(dir)} from index.db (it was missing, stale or damaged)`);
    return true;
  } catch (error) {
    logger.warn(`cannot rebuild ${annPath(dir)}: ${describeError(error)}; searching exactly`);
    return false;
  } finally {
    release();
  }
}

function exactSearch(vectors: { id: number; vector: Float32Array }[], query: Float32Array, k: number): VectorHit[] {
  const hits: VectorHit[] = [];
  for (const { id, vector } of vectors) hits.push({ id, score: dot(query, vector) });
  return hits.sort((a, b) => b.score - a.score).slice(0, k);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
