/**
 * What the ANN index finds against an exact scan, through the real indexer, SQLite and usearch, with vectors
 * designed by a local stand-in embedding server (OpenAI-compatible) so the hard cases are exactly the ones
 * reported: an isolated strong match among near-orthogonal fragments. (Vectors the graph cannot rank, like a
 * random-weight model's, are measured by bench/ann.ts: their build-time recall sends search to the exact scan.)
 */
import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository, type Repository } from "../src/repos.ts";
import { Store } from "../src/store/store.ts";
import { verifyRepository } from "../src/index/verify.ts";
import {
  annNeedsRebuilding,
  annPath,
  EXACT_SCAN_BELOW,
  MIN_RECALL,
  searchVectors,
  syncVectorIndex,
  VectorCache,
  vectorIndexState,
} from "../src/search/vectors.ts";
import { HOOK_TIMEOUT, ROOT, standInEmbeddingServer, tempDir, writeTree } from "./helpers.ts";

const DIMS = 100;
const FILLERS = 3000;

/** A seeded generator: the same text always gets the same vector. */
function random(seed: number): () => number {
  let state = Math.imul(seed + 1, 2654435761) >>> 0 || 1; // spread small seeds apart
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) + 0.5) / 2 ** 32;
  };
  for (let i = 0; i < 8; i++) next();
  return next;
}

function gaussian(next: () => number): number {
  return Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
}

function normalised(v: number[]): number[] {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const QUERY = normalised(Array.from({ length: DIMS }, (_, i) => (i % 7) - 3));

/** A unit vector whose cosine with QUERY is exactly `cosine`, otherwise random. */
function withCosine(seed: number, cosine: number): number[] {
  const next = random(seed);
  const v = Array.from({ length: DIMS }, () => gaussian(next));
  const along = v.reduce((sum, x, i) => sum + x * QUERY[i]!, 0);
  const orthogonal = normalised(v.map((x, i) => x - along * QUERY[i]!));
  return orthogonal.map((x, i) => x * Math.sqrt(1 - cosine ** 2) + cosine * QUERY[i]!);
}

function vectorFor(text: string): number[] {
  if (text.includes("query")) return QUERY;
  if (text.includes("needle")) return withCosine(1, 0.527);
  const n = Number(/filler (\d+)/.exec(text)?.[1] ?? 0);
  return withCosine(n + 2, (random(n + 99)() - 0.5) * 0.16);
}

const serverUrl = standInEmbeddingServer(vectorFor);
const embedding = { provider: "openai" as const, model: "designed", openai_url: serverUrl };

async function indexed(
  name: string,
  files: Record<string, string>,
  home: string,
  docs: string,
): Promise<{ repo: Repository; store: Store }> {
  writeTree(docs, files);
  const repo = registerRepository(home, { name, path: docs, embedding });
  await indexRepository(home, repo);
  return { repo, store: Store.open(repo.dir) };
}

function fillers(count: number, word = ""): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}.md`, `filler ${i} ${word}\n`]));
}

describe("ANN recall", () => {
  const [home, bigDocs, smallDocs] = [tempDir(), tempDir(), tempDir()];
  let big: { repo: Repository; store: Store };
  beforeAll(async () => {
    big = await indexed("big", { ...fillers(FILLERS), "needle.md": "the needle\n" }, home, bigDocs);
  }, HOOK_TIMEOUT);

  test("an isolated strong match (cosine 0.527, the rest ≤ 0.08) is found in every rebuild, through the graph in most", async () => {
    expect(big.store.embeddings.count()).toBe(FILLERS + 1);
    const needle = big.store.fragmentIdsOfDocuments([big.store.documentByPath("needle.md")!.id])[0]!;
    const query = Float32Array.from(QUERY);
    // usearch builds the graph on a thread per core, so rebuilds differ, and on 3,000 near-orthogonal vectors the
    // measured recall sits near the gate: a build below it is served by the exact scan (by design), one above by
    // the graph. A build the scan serves must find the needle; the graph finds it in all but a rare build (one in
    // 54 builds over nine runs on a loaded machine left it unreachable: HNSW can leave a node no link reaches), so
    // at most one of six may miss it, and most builds must go through the graph.
    let throughGraph = 0;
    let missed = 0;
    for (let build = 0; build < 6; build++) {
      rmSync(annPath(big.repo.dir), { force: true });
      expect(await syncVectorIndex(big.store, big.repo.dir, DIMS)).toBe(true);
      const graph = Number(big.store.meta.get("ann_recall")) >= MIN_RECALL;
      if (graph) throughGraph++;
      const { hits } = await searchVectors(big.store, big.repo.dir, query, 10);
      if (hits[0]?.id !== needle && graph) {
        missed++;
        continue;
      }
      expect(hits[0]).toMatchObject({ id: needle });
      expect(hits[0]!.score).toBeCloseTo(0.527, 2);
      expect(hits[1]!.score).toBeLessThanOrEqual(0.081);
    }
    // A build that leaves it unreachable records it, and it is scored beside the graph (s19 review F2).
    expect(missed).toBe(0);
    expect(throughGraph).toBeGreaterThanOrEqual(3);
  }, 60_000);

  test("every stored vector no link reaches is found by a search for itself, in every build the graph serves (s19 review F2)", async () => {
    // HNSW leaves a node now and then that no link reaches: no search returned it, not even one for its own text.
    // Those are recorded and scored beside the graph: each must be found. A node links do reach may still be passed
    // by the greedy search now and then (a known, accepted limit: one in a few thousand), so a few others may miss.
    const rows = big.store.embeddings.all();
    let throughGraph = 0;
    for (let build = 0; build < 3; build++) {
      rmSync(annPath(big.repo.dir), { force: true });
      await syncVectorIndex(big.store, big.repo.dir, DIMS);
      if (Number(big.store.meta.get("ann_recall")) < MIN_RECALL) continue;
      throughGraph++;
      const cache = new VectorCache();
      const lost: number[] = [];
      for (const { id, vector } of rows) {
        const { hits } = await searchVectors(big.store, big.repo.dir, vector, 10, { cache });
        if (!hits.some((hit) => hit.id === id)) lost.push(id);
      }
      const unreachable = new Set<number>(JSON.parse(big.store.meta.get("ann_orphans") ?? "[]"));
      expect(lost.filter((id) => unreachable.has(id))).toEqual([]);
      expect(lost.length).toBeLessThanOrEqual(2);
    }
    expect(throughGraph).toBeGreaterThan(0);
  }, 120_000);

  /**
   * The top 10 by an exact scan of the vectors in SQLite. Past the needle, the fillers' cosines are a few
   * hundred-thousandths apart, closer than f16's rounding, so the graph's top 10 may differ in order or in its last
   * place or two: compare the needle and the share in common.
   */
  const exactTop10 = (store: Store, query: Float32Array) =>
    store.embeddings
      .all()
      .map(({ id, vector }) => ({ id, score: vector.reduce((sum, x, i) => sum + x * query[i]!, 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10)
      .map((h) => h.id);

  function expectSameTop10(ids: number[], exact: number[]): void {
    expect(ids[0]).toBe(exact[0]!);
    expect(ids.filter((id) => exact.includes(id)).length).toBeGreaterThanOrEqual(8);
  }

  /**
   * A search in a fresh process, as a CLI search is: its top 10 ids, and the bytes it read with read(2) while
   * searching (/proc/self/io's rchar; pages of a memory-mapped file are not counted).
   */
  function freshProcessSearch(dir: string): { ids: number[]; bytesRead: number; annProblem?: string } {
    const script = join(tempDir(), "search.ts");
    writeFileSync(
      script,
      `import { Store } from ${JSON.stringify(join(ROOT, "src/store/store.ts"))};
       import { searchVectors } from ${JSON.stringify(join(ROOT, "src/search/vectors.ts"))};
       await import("usearch");
       const rchar = () => Number(/rchar: (\\d+)/.exec(require("node:fs").readFileSync("/proc/self/io", "utf8"))[1]);
       const store = Store.open(${JSON.stringify(dir)});
       const query = Float32Array.from(${JSON.stringify(QUERY)});
       const before = rchar();
       const { hits, annProblem } = await searchVectors(store, ${JSON.stringify(dir)}, query, 10);
       const bytesRead = rchar() - before;
       console.log(JSON.stringify({ ids: hits.map((h) => h.id), bytesRead, annProblem }));`,
    );
    const child = Bun.spawnSync([process.execPath, script], { env: { ...process.env, RESEARCHER_EXACT_SCAN_BELOW: "0" } });
    expect(child.exitCode).toBe(0);
    return JSON.parse(child.stdout.toString().trim().split("\n").at(-1)!);
  }

  test("a fresh process maps the verified file: same top 10 as an exact scan, reading its graph but not its vectors", async () => {
    const dir = big.repo.dir;
    rmSync(annPath(dir), { force: true });
    await syncVectorIndex(big.store, dir, DIMS);
    const size = statSync(annPath(dir)).size;
    const exact = exactTop10(big.store, Float32Array.from(QUERY));
    const mapped = freshProcessSearch(dir);
    expectSameTop10(mapped.ids, exact);
    // The graph is read and checked (ann-file.ts), the vectors are not: SQLite pages and the graph only.
    const vectorBytes = big.store.embeddings.count() * DIMS * 2;
    expect(mapped.bytesRead).toBeLessThan(size - vectorBytes + size / 8);

    // Same bytes, same mtime, but ctime moved (as any change through the file system moves it): read whole once.
    const { atime, mtime } = statSync(annPath(dir));
    utimesSync(annPath(dir), atime, mtime);
    const reread = freshProcessSearch(dir);
    expectSameTop10(reread.ids, exact);
    expect(reread.bytesRead).toBeGreaterThanOrEqual(size);
    expect(reread.annProblem).toBeUndefined(); // the file is the one built: it is used
    expect(freshProcessSearch(dir).bytesRead).toBeGreaterThanOrEqual(size); // a search records nothing
    expect(await syncVectorIndex(big.store, dir, DIMS)).toBe(false); // a writer finds it whole and records its identity
    expect(freshProcessSearch(dir).bytesRead).toBeLessThan(size - vectorBytes + size / 8);
  }, 60_000);

  test("a mapped file corrupted in place (same size and mtime) is detected before the next search, scanned around and reported", async () => {
    const dir = big.repo.dir;
    const query = Float32Array.from(QUERY);
    const exact = exactTop10(big.store, query);
    const cache = new VectorCache();
    const first = await searchVectors(big.store, dir, query, 10, { cache }); // mapped and cached
    expectSameTop10(
      first.hits.map((h) => h.id),
      exact,
    );
    expect(first.annProblem).toBeUndefined();
    const file = annPath(dir);
    const { atimeMs, mtimeMs } = statSync(file);
    const corrupt = readFileSync(file);
    for (let i = 0; i < corrupt.length; i += 3) corrupt[i] = 0xff;
    writeFileSync(file, corrupt);
    utimesSync(file, atimeMs / 1000, mtimeMs / 1000);
    expect(statSync(file).mtimeMs).toBe(mtimeMs);
    expect(vectorIndexState(big.store, dir)).toBe("damaged");
    const second = await searchVectors(big.store, dir, query, 10, { cache });
    expectSameTop10(
      second.hits.map((h) => h.id),
      exact,
    );
    expect(second.annProblem).toBe("damaged");
    expect(readFileSync(file).equals(corrupt)).toBe(true); // a search never rebuilds it
    expect(await syncVectorIndex(big.store, dir, DIMS)).toBe(true); // an index run does
    expect(vectorIndexState(big.store, dir)).toBe("verified");
  }, 60_000);

  /**
   * Bit rot: bytes changed beneath the file system keep the file's identity (size, mtime, ctime). A test cannot
   * change bytes without moving ctime, so it damages the file and then records the damaged file's identity as the
   * one that vouches for it, which is where bit rot leaves things.
   */
  function rot(dir: string, damage: (bytes: Buffer, layout: { vectorsAt: number; nodesAt: number }) => void): Buffer {
    const file = annPath(dir);
    const bytes = readFileSync(file);
    const rows = bytes.readUInt32LE(0);
    const vectorsAt = 8;
    const nodesAt = 8 + rows * bytes.readUInt32LE(4) + 64 + 40 + 2 * rows;
    damage(bytes, { vectorsAt, nodesAt });
    writeFileSync(file, bytes);
    const s = statSync(file, { bigint: true });
    const store = Store.open(dir);
    store.meta.set("ann_identity", `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`);
    store.close();
    return bytes;
  }

  test("bit rot in the graph (identity unchanged): checked before mapping, the search scans and reports it, an index run rebuilds it", async () => {
    const dir = big.repo.dir;
    rmSync(annPath(dir), { force: true });
    await syncVectorIndex(big.store, dir, DIMS);
    const exact = exactTop10(big.store, Float32Array.from(QUERY));
    // Every neighbour count and slot of every node: usearch's own checks (magic, version, sizes) still pass.
    const damaged = rot(dir, (bytes, { nodesAt }) => bytes.fill(0xff, nodesAt));
    expect(annNeedsRebuilding(big.store, dir)).toBe("damaged"); // what `status` reports
    const searched = freshProcessSearch(dir);
    expectSameTop10(searched.ids, exact); // exit 0: no segfault
    expect(searched.annProblem).toBe("damaged");
    expect(readFileSync(annPath(dir)).equals(damaged)).toBe(true); // a search never rebuilds it
    expect(await syncVectorIndex(big.store, dir, DIMS)).toBe(true);
    expect(vectorIndexState(big.store, dir)).toBe("verified");
    expect(annNeedsRebuilding(big.store, dir)).toBeNull();
  }, 60_000);

  test("bit rot in the vectors (identity unchanged): verify finds it and --repair rebuilds the file", async () => {
    const dir = big.repo.dir;
    const damaged = rot(dir, (bytes, { vectorsAt }) => {
      bytes[vectorsAt + 7] = bytes[vectorsAt + 7]! ^ 0x40;
    });
    expect(vectorIndexState(big.store, dir)).toBe("damaged");
    const found = await verifyRepository(big.repo);
    expect(found.problems).toContainEqual(
      expect.objectContaining({ check: "ann", detail: "vectors.usearch does not match its recorded checksum", repaired: false }),
    );
    const repaired = await verifyRepository(big.repo, { repair: true });
    expect(repaired.problems).toContainEqual({
      check: "ann",
      detail: "vectors.usearch does not match its recorded checksum",
      fix: "rebuilt from index.db",
      repaired: true,
    });
    expect(readFileSync(annPath(dir)).equals(damaged)).toBe(false);
    expect(vectorIndexState(big.store, dir)).toBe("verified");
  }, 60_000);

  test("a small repository is scanned exactly, without the ANN file", async () => {
    const small = await indexed("small", { ...fillers(200), "needle.md": "the needle\n" }, home, smallDocs);
    expect(small.store.embeddings.count() * DIMS).toBeLessThan(EXACT_SCAN_BELOW);
    rmSync(annPath(small.repo.dir), { force: true });
    const { hits, annProblem } = await searchVectors(small.store, small.repo.dir, Float32Array.from(QUERY), 3);
    expect(annProblem).toBeUndefined(); // a small repository does not need the file
    expect(hits[0]!.score).toBeCloseTo(0.527, 4);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
  });

  test("connections to one index.db share its scanned vectors; a new generation or another file reads them again (s12 review #10)", async () => {
    const docs = tempDir();
    const shared = await indexed("shared", { ...fillers(50), "needle.md": "the needle\n" }, home, docs);
    const cache = new VectorCache();
    const rows = async (store: Store) => {
      await searchVectors(store, shared.repo.dir, Float32Array.from(QUERY), 3, { cache });
      return cache.scannable.get(shared.repo.dir)!.rows;
    };
    const first = await rows(shared.store);
    expect(first).toHaveLength(51);
    // A server's next connection (a fresh snapshot every half second under load) reads no vector again.
    const second = Store.open(shared.repo.dir);
    expect(await rows(second)).toBe(first);
    // An index run that writes vectors makes a new generation: read again.
    writeFileSync(join(docs, "more.md"), "filler 77\n");
    await indexRepository(home, shared.repo);
    const third = Store.open(shared.repo.dir);
    const after = await rows(third);
    expect(after).not.toBe(first);
    expect(after).toHaveLength(52);
    // Another index.db counts its generations from 1 again: what the old file held is not served for it. (A
    // connection still open to the old file, as a server's is, keeps its inode from being reused.)
    for (const store of [second, third]) store.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${Store.dbPath(shared.repo.dir)}${suffix}`, { force: true });
    rmSync(join(docs, "more.md"));
    writeFileSync(join(docs, "f0.md"), "filler 88\n");
    await indexRepository(home, shared.repo);
    const db = new Database(Store.dbPath(shared.repo.dir));
    db.run("UPDATE meta SET value = ? WHERE key = 'vectors_generation'", [cache.scannable.get(shared.repo.dir)!.generation]);
    db.close();
    const fresh = Store.open(shared.repo.dir);
    const rebuilt = await rows(fresh);
    expect(rebuilt).not.toBe(after);
    expect(rebuilt).toHaveLength(51);
    for (const store of [shared.store, fresh]) store.close();
  });
});
