import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fusionWeight, fuseHybrid } from "../src/search/fusion.ts";
import { collect, evaluate as score, type Fuse, type Model } from "./fusion-cases.ts";
import { table, writeSection } from "./report.ts";
import { readQrels, readQueries, requireShared, SHARED, writeCorpus } from "./scifact.ts";
import { startStandIn } from "./standin.ts";

requireShared();
const args = process.argv.slice(2);
const noises = (args.includes("--noise") ? args[args.indexOf("--noise") + 1]! : "0.8,1,1.2,1.5,2").split(",").map(Number);
const root = mkdtempSync(join(tmpdir(), "researcher-fusion-"));
const corpus = join(root, "scifact");
writeCorpus(corpus);
process.env.OPENAI_API_KEY ??= "sk-local";
const qrels = { train: readQrels("train"), test: readQrels("test") };
const queries = { train: readQueries("train"), test: readQueries("test") };

async function model(name: string, embedding: Record<string, string>): Promise<Model> {
  const collected = await collect(name, join(root, name), corpus, embedding, queries);
  console.log(name, "pseudo-query MRR", collected.lists);
  return collected;
}

const models: Model[] = [await model("glove", { model: join(SHARED, "models/glove-6b-100d-sif") })];
for (const noise of noises) {
  const server = startStandIn(noise);
  models.push(await model(`stand-in noise ${noise}`, { provider: "openai", model: `standin-${noise}`, openai_url: server.url }));
  server.stop();
}

const evaluate = (m: Model, split: "train" | "test", fuse: Fuse, k = 10) => score(m, split, fuse, qrels[split], k);

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
    (c, m) => fuseHybrid(c.bm25, c.vector, fusionWeight(m.lists, c.lexicalTop, m.fragments).lexical),
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
  models.map((m) => [
    m.name,
    m.lists.bm25.toFixed(3),
    m.lists.vector.toFixed(3),
    fusionWeight(m.lists, undefined, m.fragments).lexical.toFixed(2),
  ]),
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
