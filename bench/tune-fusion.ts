/**
 * Explore hybrid fusion on SciFact *train* with a local model: caches each query's BM25 and vector lists, then
 * scores fusion variants without re-searching. Usage: bun bench/tune-fusion.ts [model-folder]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chooseModel, EmbedderCache } from "../src/embedder.ts";
import { FUSION_DEPTH, fuseHybrid, type Ranked } from "../src/fusion.ts";
import { indexRepository } from "../src/indexer.ts";
import { parseQuery } from "../src/query.ts";
import { addRepository } from "../src/repos.ts";
import { BM25_WEIGHTS } from "../src/search.ts";
import { Store } from "../src/store.ts";
import { searchVectors } from "../src/vectors.ts";
import { docIdOf, mean, ndcg, readQrels, readQueries, requireShared, SHARED, writeCorpus } from "./scifact.ts";

requireShared();
const model = process.argv[2] ?? join(SHARED, "models/glove-6b-100d-sif");
const root = mkdtempSync(join(tmpdir(), "researcher-fusion-"));
const home = join(root, "home");
writeCorpus(join(root, "scifact"));
const repo = addRepository(home, { name: "scifact", path: join(root, "scifact"), embedding: { model } });
await indexRepository(home, repo);
const store = Store.open(repo.dir);
const doc = new Map(store.db.query<{ id: number; path: string }, []>("SELECT f.id, d.path FROM fragments f JOIN documents d ON d.id = f.document_id").all().map((r) => [r.id, docIdOf(r.path)]));
const embedder = await new EmbedderCache().get(home, chooseModel({}, { model }));

const K = FUSION_DEPTH;
const cases: { id: string; bm25: Ranked[]; vector: Ranked[] }[] = [];
for (const split of ["train", "test"] as const) {
  for (const q of readQueries(split)) {
    const match = parseQuery(q.text).match;
    const bm25 = match ? store.searchBm25(match, BM25_WEIGHTS, K) : [];
    const [v] = await embedder.embed([q.text], "query");
    cases.push({ id: `${split}:${q.id}`, bm25, vector: await searchVectors(store, repo.dir, v!, K) });
  }
}
const qrels = { train: readQrels("train"), test: readQrels("test") };

function rankDocs(list: { id: number }[]): string[] {
  const out: string[] = [];
  for (const r of list) {
    const d = doc.get(r.id)!;
    if (!out.includes(d)) out.push(d);
  }
  return out;
}

function evaluate(split: "train" | "test", fuse: (bm25: Ranked[], vector: Ranked[]) => { id: number }[]): number {
  return mean(cases.filter((c) => c.id.startsWith(split)).map((c) => ndcg(rankDocs(fuse(c.bm25, c.vector)), qrels[split].get(c.id.split(":")[1]!)!)));
}

const agreement = (c: { bm25: Ranked[]; vector: Ranked[] }, depth = 20) => {
  const top = new Set(c.bm25.slice(0, depth).map((r) => r.id));
  return c.vector.slice(0, depth).filter((r) => top.has(r.id)).length / depth;
};
console.log("mean agreement@20 (train):", mean(cases.filter((c) => c.id.startsWith("train")).map((c) => agreement(c))).toFixed(3));
const variants: [string, (b: Ranked[], v: Ranked[]) => { id: number }[]][] = [
  ["bm25", (b) => b],
  ["vector", (_, v) => v],
  ...[1, 0.3, 0.1].map((w) => [`rrf k=60 vector weight ${w}`, (b: Ranked[], v: Ranked[]) => rrf(b, v, w)] as [string, any]),
  ["shipped: fuseHybrid", (b, v) => fuseHybrid(b, v)],
  ...[0.5, 0.7, 0.8, 0.9].map((a) => [`cc minmax a=${a}`, (b: Ranked[], v: Ranked[]) => cc(b, v, a, minmax)] as [string, any]),
  ...[0.5, 0.7, 0.8].map((a) => [`cc z a=${a}`, (b: Ranked[], v: Ranked[]) => cc(b, v, a, zscore)] as [string, any]),
  ...[0.5, 1].map((k) => [`cc minmax, a = 0.9 - ${k} x agreement`, (b: Ranked[], v: Ranked[]) => cc(b, v, Math.max(0.5, 0.9 - k * agreement({ bm25: b, vector: v })), minmax)] as [string, any]),
];
function rrf(b: Ranked[], v: Ranked[], w: number) {
  const scores = new Map<number, number>();
  b.forEach((r, i) => scores.set(r.id, (scores.get(r.id) ?? 0) + 1 / (61 + i)));
  v.forEach((r, i) => scores.set(r.id, (scores.get(r.id) ?? 0) + w / (61 + i)));
  return [...scores].map(([id, score]) => ({ id, score })).sort((x, y) => y.score - x.score);
}
function minmax(list: Ranked[]): Map<number, number> {
  const max = list[0]?.score ?? 1, min = list.at(-1)?.score ?? 0;
  return new Map(list.map((r) => [r.id, (r.score - min) / (max - min || 1)]));
}
function zscore(list: Ranked[]): Map<number, number> {
  const m = mean(list.map((r) => r.score));
  const sd = Math.sqrt(mean(list.map((r) => (r.score - m) ** 2))) || 1;
  return new Map(list.map((r) => [r.id, (r.score - m) / sd]));
}
function cc(b: Ranked[], v: Ranked[], alpha: number, norm: (l: Ranked[]) => Map<number, number>) {
  const nb = norm(b), nv = norm(v);
  const floorB = Math.min(0, ...nb.values()), floorV = Math.min(0, ...nv.values());
  const ids = new Set([...nb.keys(), ...nv.keys()]);
  return [...ids].map((id) => ({ id, score: alpha * (nb.get(id) ?? floorB) + (1 - alpha) * (nv.get(id) ?? floorV) })).sort((x, y) => y.score - x.score);
}
for (const [name, fuse] of variants) console.log(name.padEnd(24), "train", evaluate("train", fuse).toFixed(4), "test", evaluate("test", fuse).toFixed(4));
