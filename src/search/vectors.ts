/**
 * `vectors.usearch`: the ANN index of one repository, derived from the vectors in SQLite. Writers (index runs,
 * `verify --repair`) rebuild it whenever its recorded generation differs from the store's, writing a temp file then
 * renaming it, so a reader sees either the old file or the new one. Searches only read: when the file cannot be
 * used (missing, stale or damaged), they scan the vectors in SQLite exactly and say that it needs rebuilding.
 *
 * Searches memory-map it (usearch's `view`): a cold search reads the graph's keys and the pages its walk touches,
 * not the whole file (1M × 384 f16 vectors are ~900 MB, most of it vectors a search never visits). But the file
 * is checked, not trusted, because a damaged file crashes usearch's native code (size and mtime do not tell).
 * It reaches native code only when one of two things holds:
 *  - read whole, it matches the xxHash3 checksum recorded in SQLite when it was written; or
 *  - its identity (device, inode, size, mtime and ctime to the nanosecond) is the one recorded in SQLite when it
 *    was last read whole and matched.
 * Every change made through the file system gives a new identity: writing or truncating the file changes its
 * ctime, copying or renaming another file over it changes the inode, and ctime cannot be set back from user
 * space (`touch -d` and utimes set mtime and atime, and themselves move ctime), so damage done by a program, a
 * restore or a user is read whole before use. File timestamps come from a clock that advances once per tick, so
 * a write in the same tick as the identity we saw would keep it: an identity is recorded only once its ctime is
 * a tick old (git's "racily clean" rule). Damage beneath the file system (bit rot on the medium, a faulty disk,
 * controller or memory) keeps every timestamp, so a file vouched for by its identity still has its structure
 * checked before it is mapped (`wellFormed`, ann-file.ts: the graph, not the vectors); damaged vectors only misrank,
 * and `researcher verify` reads the whole file every time and finds them. Not covered: bytes that change after a
 * long-running process mapped them, such as a file written in place (not replaced) while it searches; researcher
 * itself only ever replaces the file.
 */
import { readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { freeBytes } from "../files.ts";
import { basename, dirname, join } from "node:path";
import { env } from "../env.ts";
import { describeError } from "../errors.ts";
import { seeded } from "../random.ts";
import { annFileProblem, unreachableKeys } from "./ann-file.ts";
import { syncFile, syncFolder, tempPathFor } from "../atomic.ts";
import type { Store } from "../store/store.ts";

export interface VectorHit {
  id: number;
  /** Cosine similarity, 1 = same direction. */
  score: number;
}

const FILE = "vectors.usearch";

type UsearchModule = typeof import("usearch");
type UsearchIndex = InstanceType<UsearchModule["Index"]>;
type BatchMatches = InstanceType<UsearchModule["BatchMatches"]>;

let usearch: UsearchModule | undefined;
async function loadUsearch(): Promise<UsearchModule> {
  usearch ??= await import("usearch");
  return usearch;
}

/**
 * HNSW settings measured by `bun bench/ann.ts` on SciFact (7,710 fragments) against an exact scan. With int8 and
 * usearch's default search expansion (64), recall@10 was 0.91 with GloVe vectors, and an isolated strong match (cosine
 * 0.53 among fragments ≤ 0.08) could be missed: greedy graph search does not reach it from a far entry point. A wider
 * expansion reaches it (f16, expansion 512: recall@10 0.996, ~0.2 ms); a build that leaves it with no link to it (a few
 * nodes per thousand are) records it as unreachable, and searches score it exactly. f16 rather than int8: int8 needs
 * its candidates re-scored from the f32 vectors in SQLite to get there, which costs more than the file's extra bytes
 * (reading 200 vectors back takes ~2.5 ms); f16 scores are within ~0.001 of exact cosine. At 1M clustered 384-d vectors
 * (`bun bench/scale.ts vectors 1m`) expansion 512 finds 0.991 at a warm p50 of 3.6 ms (256: 0.978, 1.9 ms), far inside
 * issue 17's 20 ms, so one setting serves every size.
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
  const value = Number(env.exactScanBelow());
  return Number.isInteger(value) && value >= 0 ? value : EXACT_SCAN_BELOW;
}
/**
 * Some models' vectors defeat the graph whatever its settings: a random-weight model puts every vector within a
 * few degrees of one direction (|mean| 0.99) and HNSW's recall@10 stays below 0.92 even at expansion 1024. Each
 * build measures its own recall on pseudo-queries; an index below this is not used, and search scans exactly.
 */
export const MIN_RECALL = 0.99;
/**
 * The scan is the fallback only while it is affordable. It reads every vector from SQLite first (1.7 s for
 * 100,000 × 384 in a fresh process) and then costs ~2 ms per million components, so from this many components
 * on a graph measured at MIN_RECALL_AT_SCALE (issue 17's target at 1M) serves searches: a scan of 1M × 384
 * would take most of a second per query, and many seconds in a fresh process.
 */
const SCAN_IS_COSTLY_FROM = 10_000_000;
const MIN_RECALL_AT_SCALE = 0.95;
const PROBES = 64;

/** The recall a graph over this many vector components must have measured to be searched. */
function requiredRecall(components: number): number {
  return components < SCAN_IS_COSTLY_FROM ? MIN_RECALL : MIN_RECALL_AT_SCALE;
}

async function newIndex(dims: number): Promise<UsearchIndex> {
  const { Index, MetricKind, ScalarKind } = await loadUsearch();
  return new Index(dims, MetricKind.Cos, ScalarKind.F16, CONNECTIVITY, 0, EXPANSION_SEARCH);
}

export const annPath = (dir: string) => join(dir, FILE);

/**
 * What the file must be for the store's current vectors; null until one has been built for them (files built
 * before builds measured their recall count as not built: they used settings that recall less).
 */
function expected(store: Store): string | null {
  const checksum = store.meta.get("ann_checksum");
  const current = store.meta.get("ann_generation") === store.embeddings.generation() && store.meta.get("ann_recall") !== undefined;
  return checksum && current ? checksum : null;
}

/** Device, inode, size, mtime and ctime in nanoseconds (see the header); null when there is no such file. */
function identityOf(file: string): string | null {
  const stats = statSync(file, { bigint: true, throwIfNoEntry: false });
  return stats ? `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}` : null;
}

/**
 * How long after a change its ctime may still be shared by a later change: Linux stamps files from a clock that
 * advances once per tick (1–10 ms); file systems that keep whole seconds (their nanoseconds are 0) need 2 s.
 */
function tickMs(ctimeNs: bigint): number {
  return ctimeNs % 1_000_000_000n === 0n ? 2000 : 20;
}

interface Examined {
  /** xxHash3 of the whole file (900 MB are read and hashed in ~0.5 s from the page cache). */
  checksum: string;
  /** The file's identity, if it did not change while it was read and no later change can share its ctime. */
  identity: string | null;
}

/** Read and hash the whole file, once its ctime is a tick old; null when it cannot be read. */
function examine(file: string): Examined | null {
  const before = statSync(file, { bigint: true, throwIfNoEntry: false });
  if (!before?.isFile()) return null; // a FIFO in its place would block the read: index and verify hung on one
  const age = Date.now() - Number(before.ctimeNs / 1_000_000n);
  if (age >= 0 && age < tickMs(before.ctimeNs)) Bun.sleepSync(tickMs(before.ctimeNs) - age);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return null;
  }
  const identity = identityOf(file);
  const unchanged = identity === `${before.dev}:${before.ino}:${before.size}:${before.mtimeNs}:${before.ctimeNs}`;
  return { checksum: Bun.hash.xxHash3(bytes).toString(16), identity: unchanged && age >= 0 ? identity : null };
}

/**
 * The identity of the file on disk if it is the one built for the store's current vectors, else null. A recorded
 * identity says so without reading the file; otherwise it is read whole, and a writer (`record`, holding the writer
 * lock) records a match for next time. Searches never write: until an index run records it, they read it whole.
 */
function verifiedIdentity(store: Store, dir: string, dims: number, record: boolean): string | null {
  const checksum = expected(store);
  if (checksum === null) return null;
  const file = annPath(dir);
  const identity = identityOf(file);
  if (identity !== null && identity === store.meta.get("ann_identity") && wellFormed(file, dims)) return identity;
  const examined = examine(file);
  if (examined?.checksum !== checksum) return null;
  if (examined.identity && record) store.meta.set("ann_identity", examined.identity);
  // Without a settled identity, the one seen before the read: if the file changed meanwhile, the caller's check
  // after mapping it sees a different one.
  return examined.identity ?? identity;
}

/**
 * Whether the file's structure is what usearch's native code may follow (see ann-file.ts). A recorded identity
 * vouches for what was written through the file system, not for bytes changed beneath it (bit rot, a failing disk):
 * those would crash the process that maps them, so every mapping is preceded by this check. It reads the graph, not
 * the vectors: ~150 of the ~900 MB at 1M × 384 (see docs/design.md for the trade-off).
 */
function wellFormed(file: string, dims: number): boolean {
  return annFileProblem(file, { dims, connectivity: CONNECTIVITY }) === null;
}

/** A file there, built for older vectors. */
function isStale(store: Store, dir: string): boolean {
  return identityOf(annPath(dir)) !== null && expected(store) === null;
}

/** Why the ANN file cannot serve searches: absent, built for older vectors, or not the file built for them. */
export type AnnProblem = "missing" | "stale" | "damaged";

/** What each problem means, as `verify` and a search's note word it: "vectors.usearch <is missing>". */
export const ANN_PROBLEMS: Readonly<Record<AnnProblem, string>> = {
  missing: "is missing",
  stale: "was built for older vectors",
  damaged: "does not match its recorded checksum",
};

/**
 * The note for a repository whose ANN file could not be used (a search's --explain, `status`): searches never
 * rebuild it, index runs do.
 */
export function annNote(repository: string, problem: AnnProblem): string {
  return `vectors.usearch needs rebuilding (it ${ANN_PROBLEMS[problem]}; searches scan the vectors exactly meanwhile): run \`researcher index ${repository}\``;
}

/**
 * The ANN file against the store's vectors, read whole: the one built for them, absent, built for older vectors, or
 * damaged.
 */
export function vectorIndexState(store: Store, dir: string): "verified" | AnnProblem {
  if (identityOf(annPath(dir)) === null) return "missing";
  if (isStale(store, dir)) return "stale";
  return examine(annPath(dir))?.checksum === expected(store) ? "verified" : "damaged";
}

/**
 * Why searches of this repository scan for want of a usable ANN file (for `status`): null when they can use it or
 * do not need it (a small repository, or one left stale on purpose, see SCAN_WHILE_STALE_BELOW). A file damaged in
 * place is found by the check every search makes before mapping it (its graph read, or the whole file when no
 * identity vouches for it); damage to its vectors alone, which searches survive, is verify's to find.
 */
export function annNeedsRebuilding(store: Store, dir: string): AnnProblem | null {
  const dims = store.embeddings.model()?.dims;
  if (!dims || vectorCount(store) * dims < exactScanBelow()) return null;
  if (identityOf(annPath(dir)) === null) return "missing";
  if (isStale(store, dir)) return mayDeferRebuild(store, dims) ? null : "stale";
  return verifiedIdentity(store, dir, dims, false) === null ? "damaged" : null;
}

/**
 * How many vectors the store holds: recorded with the ANN file built for its current vectors, counted otherwise
 * (the count joins every fragment to its vector: 1.7 s for 100,000 × 384 in a fresh process). Files built before
 * the count was recorded are counted until their next rebuild.
 */
function vectorCount(store: Store): number {
  const recorded = store.meta.get("ann_count");
  return recorded !== undefined && expected(store) !== null ? Number(recorded) : store.embeddings.count();
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
  return vectorCount(store) * dims < SCAN_WHILE_STALE_BELOW;
}

/**
 * A repository made BM25-only (`embed: false`): its vectors, their model and the ANN file built from them go, under
 * the writer lock, so its searches are BM25's and `verify` expects no vectors.
 */
export function dropVectors(store: Store, dir: string): void {
  store.transaction(() => store.embeddings.clear());
  rmSync(annPath(dir), { force: true });
}

/**
 * Build the ANN file from SQLite unless the one on disk is verified (or, with `defer`, unless a stale one may stay
 * stale for now; with `force`, whatever the one on disk is: `verify --repair` found it damaged by its checksum);
 * returns whether it was (re)built.
 */
export async function syncVectorIndex(
  store: Store,
  dir: string,
  dims: number,
  options: { defer?: boolean; force?: boolean } = {},
): Promise<boolean> {
  if (!options.force && verifiedIdentity(store, dir, dims, true) !== null) return false;
  if (options.defer && isStale(store, dir) && mayDeferRebuild(store, dims)) return false;
  const generation = store.embeddings.generation();
  const index = await newIndex(dims);
  const sources = new ProbeSources(dims);
  let count = 0;
  for (const { keys, matrix } of store.embeddings.batches(BUILD_BATCH)) {
    index.add(keys, matrix, 0); // 0: a thread per core
    sources.offer(matrix);
    count += keys.length;
  }
  const recall = await probeRecall(index, store, sources.probes(), count, dims);
  const file = annPath(dir);
  const temp = tempPathFor(file);
  try {
    saveIndex(index, temp, count, dims);
    syncFile(temp); // on disk before it replaces the old file: a crash leaves one whole file or the other
    renameSync(temp, file);
    syncFolder(dir);
  } finally {
    rmSync(temp, { force: true });
  }
  const written = examine(file); // its checksum as it lies on disk, and the identity that vouches for it
  const orphans = unreachableKeys(file, CONNECTIVITY);
  store.transaction(() => {
    store.meta.set("ann_orphans", JSON.stringify(orphans));
    store.meta.set("ann_generation", generation);
    store.meta.set("ann_checksum", written?.checksum ?? "");
    store.meta.set("ann_recall", String(recall));
    store.meta.set("ann_count", String(count));
    if (written?.identity) store.meta.set("ann_identity", written.identity);
    else store.meta.delete("ann_identity");
  });
  return true;
}

/**
 * usearch's save fails with "Failed to serialize into stream" and no system error: where the disk has less room than
 * the file takes (its vectors and their graph), it is a full disk, said as every other (DISK_FULL, what to do);
 * it was "unexpected" on every later run.
 */
function saveIndex(index: { save(path: string): void }, path: string, count: number, dims: number): void {
  try {
    index.save(path);
  } catch (error) {
    const needed = count * (dims * 2 + ANN_LINK_BYTES) + 2 ** 20; // half-precision vectors
    if (freeBytes(dirname(path)) < needed)
      throw Object.assign(new Error(`no room to save ${basename(path)} (${describeError(error)})`), { code: "ENOSPC" });
    throw error;
  }
}

/** About what usearch's graph adds to each vector in the saved file (its links on each level). */
const ANN_LINK_BYTES = 160;

type Row = { id: number; vector: Float32Array };

/**
 * What searches keep between calls, per repository folder (a SearchContext owns one, so it lives and dies with the
 * context): the ANN index memory-mapped, with the checksum and identity it was verified with (the identity is
 * compared before every search, so a file replaced or changed on disk is verified again); and per vectors
 * generation, how many vectors there are and, once scanned, the vectors themselves.
 */
export class VectorCache {
  /** Per repository folder: the mapped graph, and the vectors it cannot reach, scored beside it (`orphans`). */
  readonly opened = new Map<string, { checksum: string; identity: string; index: UsearchIndex; orphans: Row[] }>();
  /**
   * Per repository folder: the vectors of one index.db file at one generation (generations count from 1 in every
   * index.db), shared by every connection to it: a server opens a new one every half second under steady load.
   */
  readonly scannable = new Map<string, { file: string; generation: string; count: number; rows?: Row[] }>();

  /** Forget everything: the mappings go with their last reference. */
  clear(): void {
    this.opened.clear();
    this.scannable.clear();
  }

  /** Forget one repository's file and vectors (its index.db was replaced by another). */
  forget(dir: string): void {
    this.opened.delete(dir);
    this.scannable.delete(dir);
  }
}

export interface VectorSearch {
  hits: VectorHit[];
  /**
   * Set when the repository is large enough to need the ANN file and it could not be used: the hits are an exact scan.
   */
  annProblem?: AnnProblem;
}

/** Filters admitting at most this many fragments are searched exactly: reading and scoring a few thousand vectors
 * costs less than over-fetching the ANN index by the inverse of the filter's share, and misses nothing. */
const EXACT_SCAN_LIMIT = 5000;

/** Vectors are read from SQLite and added to the graph this many at a time (77 MB of f32 at 384 dimensions). */
const BUILD_BATCH = 50_000;

/**
 * Pseudo-queries for the recall probe: stored vectors chosen uniformly while they stream past (reservoir
 * sampling, seeded: the same vectors give the same verdict on every rebuild), each moved by a random direction of
 * its own length (cosine ~0.7 with it). Like a real query, such a point resembles no fragment exactly and may lie
 * outside the cone the vectors occupy, which is where graph search fails; midpoints of two stored vectors were too
 * easy (0.99 where real queries found 0.87 with the random-weight model).
 */
class ProbeSources {
  private readonly chosen: Float32Array[] = [];
  private seen = 0;
  private readonly next = seeded(PROBES);

  constructor(private readonly dims: number) {}

  offer(matrix: Float32Array): void {
    for (let row = 0; row * this.dims < matrix.length; row++, this.seen++) {
      const slot = this.seen < PROBES ? this.seen : Math.floor(this.next() * (this.seen + 1));
      if (slot < PROBES) this.chosen[slot] = matrix.slice(row * this.dims, (row + 1) * this.dims);
    }
  }

  probes(): Float32Array {
    const probes = new Float32Array(this.chosen.length * this.dims);
    this.chosen.forEach((source, p) => {
      const direction = normalised(Float32Array.from({ length: this.dims }, () => gaussian(this.next)));
      probes.set(normalised(source.map((x, i) => x + direction[i]!)), p * this.dims);
    });
    return probes;
  }
}

/**
 * recall@10 of the graph against an exact scan on the probes. The scan is usearch's (native, every core: at 1M
 * vectors one in JavaScript would take a second per probe), batch by batch over the vectors streamed from SQLite
 * again, keeping each probe's best k.
 */
async function probeRecall(index: UsearchIndex, store: Store, probes: Float32Array, count: number, dims: number): Promise<number> {
  const queries = probes.length / dims;
  if (count === 0 || count * dims < exactScanBelow() || queries === 0) return 1; // never searched through the graph
  const { exactSearch, MetricKind } = await loadUsearch();
  const k = Math.min(10, count);
  const best = Array.from({ length: queries }, () => [] as { key: bigint; distance: number }[]);
  for (const { keys, matrix } of store.embeddings.batches(BUILD_BATCH)) {
    const batch = exactSearch(matrix, probes, dims, Math.min(k, keys.length), MetricKind.Cos); // keys are row numbers
    for (let p = 0; p < queries; p++) {
      const { keys: rows, distances } = matchesOf(batch, p);
      for (const [i, row] of rows.entries()) best[p]!.push({ key: keys[Number(row)]!, distance: distances[i]! });
      best[p] = best[p]!.sort((a, b) => a.distance - b.distance).slice(0, k);
    }
  }
  const found = index.search(probes, k, 0);
  let hits = 0;
  for (let p = 0; p < queries; p++) {
    const exact = new Set(best[p]!.map((hit) => hit.key));
    for (const key of matchesOf(found, p).keys) if (exact.has(key)) hits++;
  }
  return hits / (queries * k);
}

/** usearch answers several queries with BatchMatches and a single one with plain Matches. */
function matchesOf(result: unknown, query: number): { keys: BigUint64Array; distances: Float32Array } {
  return result instanceof Object && "get" in result
    ? (result as BatchMatches).get(query)
    : (result as { keys: BigUint64Array; distances: Float32Array });
}

function gaussian(next: () => number): number {
  return Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
}

/**
 * Nearest fragments to a normalised query vector, by cosine, among `within` when given (a filter's fragments) and
 * never one of `without` (fragments holding a query's -word). Small repositories, selective filters, and
 * repositories whose graph measured below MIN_RECALL are scanned exactly; the rest use the ANN file. A search only
 * reads: a missing, stale or damaged ANN file is scanned around and reported (`annProblem`), and rebuilt by the
 * next index run, never here.
 */
export async function searchVectors(
  store: Store,
  dir: string,
  query: Float32Array,
  k: number,
  options: { within?: Set<number>; without?: Set<number>; cache?: VectorCache } = {},
): Promise<VectorSearch> {
  const { within, without, cache = new VectorCache() } = options;
  if (meansNothing(query)) return { hits: [] };
  const admits = (id: number) => (!within || within.has(id)) && !without?.has(id);
  const candidates = () => {
    const rows = within ? store.embeddings.of([...within]) : rowsOf(cache, store, dir);
    return without ? rows.filter((row) => !without.has(row.id)) : rows;
  };
  if (within && within.size <= EXACT_SCAN_LIMIT) return { hits: scan(candidates(), query, k) };
  const components = vectorsOf(cache, store, dir).count * query.length;
  if (components < exactScanBelow()) return { hits: scan(candidates(), query, k) };
  const { index, orphans = [], problem } = await verifiedIndex(cache, store, dir, query.length);
  if (!index || Number(store.meta.get("ann_recall") ?? 0) < requiredRecall(components)) {
    return { hits: scan(candidates(), query, k), ...(problem ? { annProblem: problem } : {}) };
  }
  const size = index.size();
  if (size === 0) return { hits: [] };
  // The vectors the graph cannot reach are scored exactly beside it (unreachableKeys).
  const withOrphans = (hits: VectorHit[]) => {
    const reachable = orphans.filter((row) => admits(row.id));
    return reachable.length ? [...hits, ...scan(reachable, query, k)].sort((a, b) => b.score - a.score).slice(0, k) : hits;
  };
  if (!within && !without) return { hits: withOrphans(annSearch(index, query, Math.min(k, size))) };
  // Over-fetch by twice the inverse of the admitted share, doubling until k admitted hits (or the whole index).
  const admitted = Math.max(1, (within?.size ?? size) - (without?.size ?? 0));
  for (let fetch = Math.ceil((2 * k * size) / admitted); ; fetch *= 2) {
    const hits = annSearch(index, query, Math.min(fetch, size)).filter((hit) => admits(hit.id));
    if (hits.length >= k || fetch >= size) return { hits: withOrphans(hits.slice(0, k)) };
  }
}

/**
 * A zero vector is a query the model knows no word of (withUnknownQueriesEmpty): near nothing, not equally near all.
 */
export function meansNothing(query: Float32Array): boolean {
  return query.every((x) => x === 0);
}

function annSearch(index: UsearchIndex, query: Float32Array, k: number): VectorHit[] {
  const matches = index.search(query, k, 1); // one query: threads would cost more than they save
  return Array.from(matches.keys, (key, i) => ({ id: Number(key), score: 1 - matches.distances[i]! }));
}

/** How many fragments have a vector: what an unfiltered vector list can rank (counted once per vectors generation). */
export function rankableVectors(store: Store, dir: string, cache: VectorCache): number {
  return vectorsOf(cache, store, dir).count;
}

function vectorsOf(cache: VectorCache, store: Store, dir: string): { generation: string; count: number; rows?: Row[] } {
  const generation = store.embeddings.generation();
  let state = cache.scannable.get(dir);
  if (!state || state.file !== store.file || state.generation !== generation) {
    state = { file: store.file, generation, count: vectorCount(store) };
    cache.scannable.set(dir, state);
  }
  return state;
}

function rowsOf(cache: VectorCache, store: Store, dir: string): Row[] {
  const state = vectorsOf(cache, store, dir);
  state.rows ??= store.embeddings.all();
  return state.rows;
}

/**
 * The ANN index for the store's current vectors, verified before mapping; otherwise why there is none to use (no
 * problem when it was left stale on purpose, see SCAN_WHILE_STALE_BELOW, or replaced while it was being checked).
 */
async function verifiedIndex(
  cache: VectorCache,
  store: Store,
  dir: string,
  dims: number,
): Promise<{ index?: UsearchIndex; orphans?: Row[]; problem?: AnnProblem }> {
  const file = annPath(dir);
  const cached = cache.opened.get(dir);
  // A file changed on disk since it was mapped is checked again.
  if (cached && cached.checksum === expected(store) && cached.identity === identityOf(file)) return cached;
  cache.opened.delete(dir);
  const identity = verifiedIdentity(store, dir, dims, false);
  if (identity === null) {
    if (identityOf(file) === null) return { problem: "missing" };
    if (!isStale(store, dir)) return { problem: "damaged" };
    return mayDeferRebuild(store, dims) ? {} : { problem: "stale" };
  }
  const index = await newIndex(1); // view() adopts the file's dimensions
  try {
    index.view(file);
  } catch (error) {
    // Changed while it was mapped (written in place: "Magic header mismatch"): this search scans, the next checks it.
    if (identityOf(file) !== identity) return {};
    throw error;
  }
  // Replaced by a writer between the check and the mapping: what was mapped is a whole file, but not the one
  // checked, so this search scans and the next one checks the new file.
  if (identityOf(file) !== identity) return {};
  const opened = { checksum: expected(store)!, identity, index, orphans: store.embeddings.of(orphanIds(store)) };
  cache.opened.set(dir, opened);
  return opened;
}

/** The fragments the current graph cannot reach, recorded when it was built (none for graphs built before). */
function orphanIds(store: Store): number[] {
  try {
    const ids = JSON.parse(store.meta.get("ann_orphans") ?? "[]");
    return Array.isArray(ids) ? ids.filter((id): id is number => Number.isInteger(id)) : [];
  } catch {
    return []; // a damaged record: the graph alone, as before orphans were recorded
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

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
