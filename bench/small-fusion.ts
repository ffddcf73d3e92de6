/**
 * Hybrid fusion in small repositories (a notes vault of a few dozen to a thousand passages): SciFact subsets of
 * `--sizes` documents, each holding the relevant documents of randomly chosen queries (`--queries`, test by default)
 * and random others, searched by those queries, with GloVe-SIF, the random-weight MiniLM and stand-in models of
 * several strengths (bench/standin.ts). The index-time calibration sees only the subset, as it would see a small vault.
 * The size rule's constants were chosen on the test queries: `--queries train` checks them on queries they never saw.
 * Usage: bun bench/small-fusion.ts [--sizes 60,150,400,1000] [--seeds 3] [--queries test|train] [--write]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seeded } from "../src/random.ts";
import { fusionWeight, fuseHybrid } from "../src/search/fusion.ts";
import { collect, evaluate, type Fuse, type Model } from "./fusion-cases.ts";
import { table, writeSection } from "./report.ts";
import { type Query, readQrels, readQueries, requireShared, SCIFACT, SHARED, unpackRandomModel } from "./scifact.ts";
import { startStandIn } from "./standin.ts";

requireShared();
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const sizes = option("--sizes", "60,150,400,1000").split(",").map(Number);
const seeds = Number(option("--seeds", "3"));
const split = option("--queries", "test");
if (split !== "test" && split !== "train") throw new Error(`--queries is test or train, not ${split}`);
const noises = [0.8, 1.2, 1.5, 2];
const root = mkdtempSync(join(tmpdir(), "researcher-small-fusion-"));
process.env.OPENAI_API_KEY ??= "sk-local";
const qrels = readQrels(split);
const allQueries = readQueries(split);
const corpus = readFileSync(join(SCIFACT, "corpus.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => JSON.parse(line) as { _id: string; title: string; text: string });

/** A subset of `size` documents: the relevant ones of queries drawn at random until they fill half, then others. */
function subset(size: number, seed: number): { dir: string; queries: Query[] } {
  const next = seeded(size * 1000 + seed);
  const shuffled = <T>(items: T[]) =>
    items
      .map((item) => ({ item, key: next() }))
      .sort((a, b) => a.key - b.key)
      .map((x) => x.item);
  const docs = new Set<string>();
  const queries: Query[] = [];
  for (const query of shuffled(allQueries)) {
    const relevant = [...qrels.get(query.id)!.keys()];
    if (docs.size + relevant.length > size / 2) continue;
    for (const doc of relevant) docs.add(doc);
    queries.push(query);
  }
  for (const doc of shuffled(corpus)) {
    if (docs.size >= size) break;
    docs.add(doc._id);
  }
  const dir = join(root, `corpus-${size}-${seed}`);
  mkdirSync(dir, { recursive: true });
  for (const doc of corpus) if (docs.has(doc._id)) writeFileSync(join(dir, `${doc._id}.md`), `# ${doc.title}\n\n${doc.text}\n`);
  return { dir, queries };
}

const embeddings: [string, () => { embedding: Record<string, string>; stop?: () => void }][] = [
  ["glove", () => ({ embedding: { model: join(SHARED, "models/glove-6b-100d-sif") } })],
  ["random MiniLM", () => ({ embedding: { model: unpackRandomModel(root) } })],
  ...noises.map((noise): [string, () => { embedding: Record<string, string>; stop: () => void }] => [
    `stand-in ${noise}`,
    () => {
      const server = startStandIn(noise);
      return { embedding: { provider: "openai", model: `standin-${noise}`, openai_url: server.url }, stop: server.stop };
    },
  ]),
];

const variants: [string, Fuse][] = [
  ["bm25", (c) => c.bm25],
  ["vector", (c) => c.vector],
  ["fixed 0.5", (c) => fuseHybrid(c.bm25, c.vector, 0.5)],
  ["fixed 0.8", (c) => fuseHybrid(c.bm25, c.vector, 0.8)],
  ["weighed as in all SciFact (before)", (c, m) => fuseHybrid(c.bm25, c.vector, fusionWeight(m.lists, c.lexicalTop).lexical)],
  ["shipped", (c, m) => fuseHybrid(c.bm25, c.vector, fusionWeight(m.lists, c.lexicalTop, m.fragments).lexical)],
];

/** Per size and model: the mean over seeds of each variant's nDCG@10, and of the calibration's figures. */
const rows: string[][] = [];
for (const size of sizes) {
  const subsets = Array.from({ length: seeds }, (_, seed) => subset(size, seed));
  for (const [name, start] of embeddings) {
    const models: Model[] = [];
    for (const [seed, { dir, queries }] of subsets.entries()) {
      const { embedding, stop } = start();
      models.push(await collect(name, join(root, `home-${size}-${seed}-${name}`), dir, embedding, { train: [], test: queries }));
      stop?.();
    }
    const mean = (f: (m: Model) => number) => models.reduce((sum, m) => sum + f(m), 0) / models.length;
    const scores = variants.map(([, fuse]) => mean((m) => evaluate(m, "test", fuse, qrels)));
    const row = [
      String(size),
      name,
      String(Math.round(mean((m) => m.cases.length))),
      ...scores.map((x) => x.toFixed(4)),
      `${mean((m) => m.lists.bm25).toFixed(2)} / ${mean((m) => m.lists.vector).toFixed(2)}`,
      mean((m) => fusionWeight(m.lists, undefined, m.fragments).lexical).toFixed(2),
    ];
    rows.push(row);
    console.log(row.join("  "));
  }
}
const result = table(
  ["documents", "model", "queries", ...variants.map(([name]) => name), "pseudo-query MRR bm25 / vector", "BM25 weight"],
  rows,
);
console.log(result);
if (args.includes("--write")) {
  writeSection(
    split === "test" ? "small-fusion" : "small-fusion-train",
    `Hybrid fusion in small repositories (SciFact subsets, ${split} queries)`,
    `bun bench/small-fusion.ts --sizes ${sizes.join(",")} --seeds ${seeds} --queries ${split} --write`,
    `${result}\n\nnDCG@10 of documents, the mean over ${seeds} random subsets per size; each subset holds the relevant documents of its ${split} queries (half the subset) and random others. "fixed w": BM25 weight w for every query; "shipped": the weight the index-time calibration chose, per query, its anchors moved up for the repository's size; "before": the same without that.`,
  );
}
rmSync(root, { recursive: true, force: true });
