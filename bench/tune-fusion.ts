/**
 * Hybrid fusion on SciFact with models of several strengths: the weak GloVe-SIF model and stand-in embedding
 * servers (bench/standin.ts) whose vectors come from the qrels with more or less noise. Caches each query's BM25
 * and vector lists per model, then scores fusion variants without re-searching: tune on train, report test.
 * Usage: bun bench/tune-fusion.ts [--noise 0.8,1,1.2,1.5,2] [--write]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lexicalEvidence, vectorCalibration, vectorEvidence, type ListStrength } from "../src/search/calibration.ts";
import { chooseModel, EmbedderCache } from "../src/embed/embedder.ts";
import { fusionWeight, FUSION_DEPTH, fuseHybrid, type Ranked } from "../src/search/fusion.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { parseQuery } from "../src/search/query.ts";
import { addRepository } from "../src/repos.ts";
import { rankBm25, selectiveMatch } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { searchVectors } from "../src/search/vectors.ts";
import { table, writeSection } from "./report.ts";
import { fragmentDocIds, mean, ndcg, readQrels, readQueries, requireShared, SHARED, writeCorpus } from "./scifact.ts";
import { startStandIn } from "./standin.ts";

requireShared();
const args = process.argv.slice(2);
const noises = (args.includes("--noise") ? args[args.indexOf("--noise") + 1]! : "0.8,1,1.2,1.5,2").split(",").map(Number);
const root = mkdtempSync(join(tmpdir(), "researcher-fusion-"));
writeCorpus(join(root, "scifact"));
process.env.OPENAI_API_KEY ??= "sk-local";
const qrels = { train: readQrels("train"), test: readQrels("test") };

interface Case {
  split: "train" | "test";
  id: string;
  bm25: Ranked[];
  vector: Ranked[];
  /** Calibrated evidence of each list's first result (calibration.ts). */
  lexicalTop: number;
  vectorTop: number;
}
interface Model {
  name: string;
  cases: Case[];
  lists: ListStrength;
  doc: Map<number, string>;
}

async function collect(name: string, embedding: Record<string, string>): Promise<Model> {
  const home = join(root, name);
  const repo = addRepository(home, { name: "scifact", path: join(root, "scifact"), embedding: embedding as never });
  await indexRepository(home, repo);
  const store = Store.open(repo.dir);
  const doc = fragmentDocIds(repo.dir);
  const embedders = new EmbedderCache();
  const embedder = await embedders.get(home, chooseModel({}, embedding as never));
  const cases: Case[] = [];
  for (const split of ["train", "test"] as const) {
    const queries = readQueries(split);
    const vectors = await embedder.embed(
      queries.map((q) => q.text),
      "query",
    );
    for (const [i, q] of queries.entries()) {
      const parsed = parseQuery(q.text);
      // The product's BM25 path: common words pruned from the match in a large repository, its fast paths.
      const match = selectiveMatch(store, parsed);
      const bm25 = match ? rankBm25(store, parsed, match, FUSION_DEPTH).hits : [];
      const vector = (await searchVectors(store, repo.dir, vectors[i]!, FUSION_DEPTH)).hits;
      const lexicalTop = bm25[0] ? lexicalEvidence(store, parsed)(bm25[0].score) : 0;
      const vectorTop = vector[0] ? vectorEvidence(vectors[i]!, vectorCalibration(store)?.centroid)(vector[0].score) : 0;
      cases.push({ split, id: q.id, bm25, vector, lexicalTop, vectorTop });
    }
  }
  const lists = vectorCalibration(store)!.lists!;
  await embedders.dispose();
  store.close();
  console.log(name, "pseudo-query MRR", lists);
  return { name, cases, lists, doc };
}

const models: Model[] = [await collect("glove", { model: join(SHARED, "models/glove-6b-100d-sif") })];
for (const noise of noises) {
  const server = startStandIn(noise);
  models.push(await collect(`stand-in noise ${noise}`, { provider: "openai", model: `standin-${noise}`, openai_url: server.url }));
  server.stop();
}

type Fuse = (c: Case, m: Model) => { id: number }[];
function evaluate(m: Model, split: "train" | "test", fuse: Fuse, k = 10): number {
  const rankDocs = (list: { id: number }[]) => [...new Set(list.map((r) => m.doc.get(r.id)!))];
  return mean(m.cases.filter((c) => c.split === split).map((c) => ndcg(rankDocs(fuse(c, m)), qrels[split].get(c.id)!, k)));
}

const variants: [string, Fuse][] = [
  ["bm25", (c) => c.bm25],
  ["vector", (c) => c.vector],
  ...[0.3, 0.5, 0.7, 0.8, 0.9, 1].map((a): [string, Fuse] => [`fixed ${a}`, (c) => fuseHybrid(c.bm25, c.vector, a)]),
  ["per repository only", (c, m) => fuseHybrid(c.bm25, c.vector, fusionWeight(m.lists).lexical)],
  ...[0.5, 0.6].map((t): [string, Fuse] => [
    `per repository, -0.1 where the vector list's first has evidence > ${t}`,
    (c, m) => fuseHybrid(c.bm25, c.vector, fusionWeight(m.lists).lexical - (c.vectorTop > t ? 0.1 : 0)),
  ]),
  [
    "shipped: per repository, -0.1 where BM25's first has lexical evidence < 0.5 and the vector list has a share",
    (c, m) => fuseHybrid(c.bm25, c.vector, fusionWeight(m.lists, c.lexicalTop).lexical),
  ],
];
const scores = (fuse: Fuse, k: number) =>
  models.map((m) => `${evaluate(m, "train", fuse, k).toFixed(4)} / ${evaluate(m, "test", fuse, k).toFixed(4)}`);
const rows: string[][] = [];
for (const [name, fuse] of variants) {
  rows.push([name, ...scores(fuse, 10)]);
  console.log(rows.at(-1)!.join("  "));
}
const header = ["fusion", ...models.map((m) => `${m.name} (train / test)`)];
const result = table(header, rows);
// A page of 100 (`-n 100`): the shipped fusion against its two lists, past the first ten.
const deep = table(
  header,
  [variants[0]!, variants[1]!, variants.at(-1)!].map(([name, fuse]) => [name, ...scores(fuse, 100)]),
);
const strengths = table(
  ["model", "pseudo-query MRR: bm25", "vector", "BM25 weight"],
  models.map((m) => [m.name, m.lists.bm25.toFixed(3), m.lists.vector.toFixed(3), fusionWeight(m.lists).lexical.toFixed(2)]),
);
console.log(`${result}\n\n${deep}\n\n${strengths}`);
if (args.includes("--write")) {
  writeSection(
    "fusion",
    "Adaptive hybrid fusion on SciFact with models of several strengths",
    "bun bench/tune-fusion.ts --write",
    `${result}\n\nnDCG@10 of documents. Stand-in models: vectors from the SciFact qrels plus noise (\`bench/standin.ts\`). "fixed w": BM25 weight w for every query (1: BM25's order, the vector list only adds what BM25 did not find). nDCG@100 (a page of 100):\n\n${deep}\n\n${strengths}`,
  );
}
rmSync(root, { recursive: true, force: true });
