/**
 * What the ANN index finds against an exact scan, through the real indexer, SQLite and usearch, with vectors
 * designed by a local stand-in embedding server (OpenAI-compatible) so the hard cases are exactly the ones
 * reported: an isolated strong match among near-orthogonal fragments. (Vectors the graph cannot rank, like a
 * random-weight model's, are measured by bench/ann.ts: their build-time recall sends search to the exact scan.)
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { indexRepository } from "../src/indexer.ts";
import { addRepository, type Repository } from "../src/repos.ts";
import { Store } from "../src/store.ts";
import { annPath, EXACT_SCAN_BELOW, MIN_RECALL, searchVectors, syncVectorIndex } from "../src/vectors.ts";
import { HOOK_TIMEOUT, standInEmbeddingServer, tempDir, writeTree } from "./helpers.ts";

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

async function indexed(name: string, files: Record<string, string>, home: string, docs: string): Promise<{ repo: Repository; store: Store }> {
  writeTree(docs, files);
  const repo = addRepository(home, { name, path: docs, embedding });
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

  test("an isolated strong match (cosine 0.527, the rest ≤ 0.08) is found through the graph in every rebuild", async () => {
    expect(big.store.vectorCount()).toBe(FILLERS + 1);
    const needle = Number(big.store.db.query<{ id: number }, []>("SELECT f.id FROM fragments f JOIN documents d ON d.id = f.document_id WHERE d.path = 'needle.md'").get()!.id);
    const query = Float32Array.from(QUERY);
    for (let build = 0; build < 6; build++) {
      rmSync(annPath(big.repo.dir), { force: true });
      expect(await syncVectorIndex(big.store, big.repo.dir, DIMS)).toBe(true);
      expect(Number(big.store.getMeta("ann_recall"))).toBeGreaterThanOrEqual(MIN_RECALL); // the graph is used
      const hits = await searchVectors(big.store, big.repo.dir, query, 10);
      expect(hits[0]).toMatchObject({ id: needle });
      expect(hits[0]!.score).toBeCloseTo(0.527, 2);
      expect(hits[1]!.score).toBeLessThanOrEqual(0.081);
    }
  }, 60_000);

  test("a small repository is scanned exactly, without the ANN file", async () => {
    const small = await indexed("small", { ...fillers(200), "needle.md": "the needle\n" }, home, smallDocs);
    expect(small.store.vectorCount() * DIMS).toBeLessThan(EXACT_SCAN_BELOW);
    rmSync(annPath(small.repo.dir), { force: true });
    const hits = await searchVectors(small.store, small.repo.dir, Float32Array.from(QUERY), 3);
    expect(hits[0]!.score).toBeCloseTo(0.527, 4);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
  });

});
