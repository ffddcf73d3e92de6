/**
 * Retrieval quality of bm25 / vector / hybrid on SciFact with a local model folder (default: the GloVe-SIF model).
 * Usage: bun bench/quality.ts [model-folder] [--split test|train]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { indexRepository } from "../src/indexer.ts";
import { addRepository } from "../src/repos.ts";
import { search, SearchContext, type SearchMode } from "../src/search.ts";
import { table, writeSection } from "./report.ts";
import { docIdOf, mean, ndcg, readQrels, readQueries, recall, requireShared, SHARED, writeCorpus } from "./scifact.ts";

requireShared();
const args = process.argv.slice(2);
const split = (args.includes("--split") ? args[args.indexOf("--split") + 1] : "test") as "test" | "train";
const model = args.find((a) => !a.startsWith("--") && a !== split) ?? join(SHARED, "models/glove-6b-100d-sif");

const root = mkdtempSync(join(tmpdir(), "researcher-quality-"));
const home = join(root, "home");
writeCorpus(join(root, "scifact"));
process.env.RESEARCHER_MODEL_PATH = model;
const repo = addRepository(home, { name: "scifact", path: join(root, "scifact") });
const summary = await indexRepository(home, repo);
console.log(`indexed ${summary.documents_total} documents, embedded ${summary.embedded} fragments in ${summary.seconds} s`);

const queries = readQueries(split);
const qrels = readQrels(split);
const context = new SearchContext();
const rows: (string | number)[][] = [];
for (const mode of ["bm25", "vector", "hybrid"] as SearchMode[]) {
  const ndcgs: number[] = [];
  const recalls: number[] = [];
  for (const q of queries) {
    const response = await search(home, { query: q.text, mode, limit: 100, documents: true }, context);
    const ranked = response.results.map((r) => docIdOf(r.path));
    ndcgs.push(ndcg(ranked, qrels.get(q.id)!));
    recalls.push(recall(ranked, qrels.get(q.id)!));
  }
  rows.push([mode, mean(ndcgs).toFixed(4), mean(recalls).toFixed(4)]);
  console.log(mode, rows.at(-1));
}
await context.close();
const result = table(["mode", `nDCG@10 (${split})`, "Recall@100"], rows);
console.log(result);
if (split === "test") {
  writeSection(
    `quality-${basename(model)}`,
    `Retrieval quality on SciFact test with ${basename(model)}`,
    `bun bench/quality.ts ${model.startsWith(SHARED) ? `../shared/${model.slice(SHARED.length + 1)}` : model}`,
    `${result}\n\nDocuments ranked by their best fragment. Hybrid = RRF (k = 60) of the BM25 and vector lists, the vector list weighted by its agreement with BM25's top 20 (\`src/fusion.ts\`).`,
  );
}
rmSync(root, { recursive: true, force: true });
