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

/**
 * HNSW settings measured by `bun bench/ann.ts` on SciFact (7,710 fragments) against an exact scan. With int8 and
 * usearch's default search expansion (64), recall@10 was 0.91 with GloVe vectors, and an isolated strong match
 * (cosine 0.53 among fragments ≤ 0.08) could be missed: greedy graph search does not reach it from a far entry
 * point. A wider expansion reaches it (f16, expansion 512: recall@10 0.996, ~0.2 ms). f16 rather than int8: int8
 * needs its candidates re-scored from the f32 vectors in SQLite to get there, which costs more than the file's
 * extra bytes (reading 200 vectors back takes ~2.5 ms); f16 scores are within ~0.001 of exact cosine.
 */
const CONNECTIVITY = 16;
const EXPANSION_SEARCH = 512;
/**
 * A repository with fewer vector components than this (vectors × dimensions) is scanned in memory: exact by
 * construction, and about as fast as the graph (bench/ann.ts: a scan costs ~0.2 ms per 100,000 components, the
 * graph ~0.2 ms per query), so small repositories never see an ANN miss.
 */
export const EXACT_SCAN_BELOW = 150_000;
/** RESEARCHER_EXACT_SCAN_BELOW=0 sends even a small repository through the graph (tests of the ANN file use it). */
function exactScanBelow(): number {
  const value = Number(process.env.RESEARCHER_EXACT_SCAN_BELOW);
  return Number.isInteger(value) && value >= 0 ? value : EXACT_SCAN_BELOW;
}
/**
 * Some models' vectors defeat the graph whatever its settings: a random-weight model puts every vector within a
 * few degrees of one direction (|mean| 0.99) and HNSW's recall@10 stays below 0.92 even at expansion 1024. Each
 * build measures its own recall on pseudo-queries; an index below this is not used, and search scans exactly.
 */
export const MIN_RECALL = 0.99;
const PROBES = 64;

async function newIndex(dims: number): Promise<UsearchIndex> {
  const { Index, MetricKind, ScalarKind } = await loadUsearch();
  return new Index(dims, MetricKind.Cos, ScalarKind.F16, CONNECTIVITY, 0, EXPANSION_SEARCH);
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

/**
 * What the file must be for the store's current vectors; null until one has been built for them (files built
 * before builds measured their recall count as not built: they used settings that recall less).
 */
function expected(store: Store): string | null {
  const checksum = store.getMeta("ann_checksum");
  const current = store.getMeta("ann_generation") === store.vectorsGeneration() && store.getMeta("ann_recall") !== undefined;
  return checksum && current ? checksum : null;
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

/**
 * Below this many vector components, a single-file change (`indexFiles`: MCP add_to_index, watch mode) leaves the
 * ANN file stale instead of rebuilding it, and searches scan exactly until the next `index` run rebuilds it: a
 * scan of 2,000,000 components takes a few milliseconds, a rebuild (HNSW build and recall probe) costs most of a
 * second on every saved file.
 */
export const SCAN_WHILE_STALE_BELOW = 2_000_000;

/** Whether a stale ANN file may stay stale for now (see SCAN_WHILE_STALE_BELOW). */
export function mayDeferRebuild(store: Store, dims: number): boolean {
  return store.vectorCount() * dims < SCAN_WHILE_STALE_BELOW;
}

/**
 * Build the ANN file from SQLite unless the one on disk is verified (or, with `defer`, unless a stale one may stay
 * stale for now); returns whether it was (re)built.
 */
export async function syncVectorIndex(store: Store, dir: string, dims: number, options: { defer?: boolean } = {}): Promise<boolean> {
  if (isVerified(store, dir)) return false;
  if (options.defer && vectorIndexState(store, dir) === "stale" && mayDeferRebuild(store, dims)) return false;
  const generation = store.vectorsGeneration();
  const index = await newIndex(dims);
  const rows = store.allVectors();
  if (rows.length > 0) {
    const keys = new BigUint64Array(rows.map((r) => BigInt(r.id)));
    const matrix = new Float32Array(rows.length * dims);
    rows.forEach((r, i) => matrix.set(r.vector, i * dims));
    index.add(keys, matrix);
  }
  const recall = probeRecall(index, rows, dims);
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
    store.setMeta("ann_recall", String(recall));
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
 * recall@10 of the graph against an exact scan, on pseudo-queries: a stored vector moved by a random direction
 * of the same length (cosine ~0.7 with it). Like a real query, such a point resembles no fragment exactly and may
 * lie outside the cone the vectors occupy, which is where graph search fails; midpoints of two stored vectors
 * were too easy (0.99 where real queries found 0.87 with the random-weight model).
 */
function probeRecall(index: UsearchIndex, rows: Row[], dims: number): number {
  if (rows.length * dims < exactScanBelow()) return 1; // never searched through the graph
  const next = seeded(rows.length); // the same vectors give the same verdict on every rebuild
  let found = 0;
  for (let p = 0; p < PROBES; p++) {
    const source = rows[Math.floor(next() * rows.length)]!.vector;
    const direction = normalised(Float32Array.from({ length: dims }, () => gaussian(next)));
    const query = normalised(source.map((x, i) => x + direction[i]!));
    const truth = new Set(scan(rows, query, 10).map((h) => h.id));
    for (const key of index.search(query, 10, 0).keys) if (truth.has(Number(key))) found++;
  }
  return found / (PROBES * 10);
}

function seeded(seed: number): () => number {
  let state = (seed % 2147483646) + 1;
  return () => (state = (state * 48271) % 2147483647) / 2147483647;
}

function gaussian(next: () => number): number {
  return Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
}

/**
 * Nearest fragments to a normalised query vector, by cosine, among `within` when given (a filter's fragments).
 * Small repositories, selective filters, and repositories whose graph measured below MIN_RECALL are scanned
 * exactly; the rest use the ANN file. A missing, stale or damaged ANN file is rebuilt from SQLite first; while
 * another process is writing the repository, the search scans instead.
 */
export async function searchVectors(store: Store, dir: string, query: Float32Array, k: number, within?: Set<number>): Promise<VectorHit[]> {
  const candidates = () => (within ? store.vectorsOf([...within]) : rowsOf(store, dir));
  if (within && within.size <= EXACT_SCAN_LIMIT) return scan(candidates(), query, k);
  if (vectorsOf(store, dir).count * query.length < exactScanBelow()) return scan(candidates(), query, k);
  const index = await verifiedIndex(store, dir, query.length);
  if (!index || Number(store.getMeta("ann_recall") ?? 0) < MIN_RECALL) return scan(candidates(), query, k);
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

type Row = { id: number; vector: Float32Array };

/** Per repository folder and vectors generation: how many vectors, and (once scanned) the vectors themselves. */
const scannable = new Map<string, { generation: string; count: number; rows?: Row[] }>();

function vectorsOf(store: Store, dir: string): { generation: string; count: number; rows?: Row[] } {
  const generation = store.vectorsGeneration();
  let state = scannable.get(dir);
  if (!state || state.generation !== generation) {
    state = { generation, count: store.vectorCount() };
    scannable.set(dir, state);
  }
  return state;
}

function rowsOf(store: Store, dir: string): Row[] {
  const state = vectorsOf(store, dir);
  state.rows ??= store.allVectors();
  return state.rows;
}

/** The ANN index for the store's current vectors, verified before loading; undefined when there is none to use. */
async function verifiedIndex(store: Store, dir: string, dims: number): Promise<UsearchIndex | undefined> {
  const cached = opened.get(dir);
  // A file changed on disk since it was loaded is checked again (and rebuilt if it must be).
  if (cached && cached.checksum === expected(store) && cached.stamp === stampOf(annPath(dir))) return cached.index;
  if (!isVerified(store, dir)) {
    // Left stale by a single-file change: scanning is cheaper than rebuilding on the search path.
    if (vectorIndexState(store, dir) === "stale" && mayDeferRebuild(store, dims)) return undefined;
    if (!(await rebuildForSearch(store, dir))) return undefined;
  }
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

function scan(rows: Row[], query: Float32Array, k: number): VectorHit[] {
  const hits: VectorHit[] = rows.map(({ id, vector }) => ({ id, score: dot(query, vector) }));
  return hits.sort((a, b) => b.score - a.score).slice(0, k);
}

function normalised(v: Float32Array): Float32Array {
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
