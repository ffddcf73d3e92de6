/**
 * Retrieval quality of bm25 / vector / hybrid on SciFact with a local model folder (default: the GloVe-SIF model).
 * Usage: bun bench/quality.ts [model-folder] [--split test|train]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { buildExecutable } from "../build.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search, SearchContext, type SearchMode } from "../src/search/search.ts";
import { table, writeSection } from "./report.ts";
import { docIdOf, mean, ndcg, percentile, readQrels, readQueries, recall, requireShared, SHARED, writeCorpus } from "./scifact.ts";

requireShared();
const args = process.argv.slice(2);
const split = (args.includes("--split") ? args[args.indexOf("--split") + 1] : "test") as "test" | "train";
const model = args.find((a) => !a.startsWith("--") && a !== split) ?? join(SHARED, "models/glove-6b-100d-sif");

const root = mkdtempSync(join(tmpdir(), "researcher-quality-"));
const home = join(root, "home");
writeCorpus(join(root, "scifact"));
process.env.RESEARCHER_MODEL_PATH = model;
const repo = registerRepository(home, { name: "scifact", path: join(root, "scifact") });
const summary = await indexRepository(home, repo);
console.log(`indexed ${summary.documents_total} documents, embedded ${summary.embedded} fragments in ${summary.seconds} s`);

const queries = readQueries(split);
const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });
const qrels = readQrels(split);
const context = new SearchContext();
const rows: (string | number)[][] = [];
const ms = (v: number) => `${v.toFixed(1)} ms`;
for (const mode of ["bm25", "vector", "hybrid"] as SearchMode[]) {
  const ndcgs: number[] = [];
  const pageNdcgs: number[] = [];
  const recalls: number[] = [];
  const warm: number[] = [];
  let differ = 0;
  for (const q of queries) {
    const start = performance.now();
    await search(home, { query: q.text, mode, limit: 10 }, context);
    warm.push(performance.now() - start);
    const response = await search(home, { query: q.text, mode, limit: 100, documents: true }, context);
    const ranked = response.results.map((r) => docIdOf(r.path));
    ndcgs.push(ndcg(ranked, qrels.get(q.id)!));
    recalls.push(recall(ranked, qrels.get(q.id)!));
    // The default page (search.limit, 10), as a user sees it: it must be the first page of the list above.
    const page = (await search(home, { query: q.text, mode, documents: true }, context)).results.map((r) => docIdOf(r.path));
    pageNdcgs.push(ndcg(page, qrels.get(q.id)!));
    if (page.join() !== ranked.slice(0, page.length).join()) differ++;
  }
  const cold: number[] = [];
  for (const q of queries.slice(0, 20)) {
    const start = performance.now();
    const proc = Bun.spawnSync([exe, "search", "--json", "--mode", mode, "--", q.text], {
      env: { PATH: "/usr/bin:/bin", RESEARCHER_HOME: home, RESEARCHER_MODEL_PATH: model },
    });
    if (!proc.success) throw new Error(proc.stderr.toString());
    cold.push(performance.now() - start);
  }
  rows.push([
    mode,
    mean(pageNdcgs).toFixed(4),
    mean(ndcgs).toFixed(4),
    `${differ} of ${queries.length}`,
    mean(recalls).toFixed(4),
    `${ms(percentile(warm, 50))} / ${ms(percentile(warm, 95))}`,
    `${ms(percentile(cold, 50))} / ${ms(percentile(cold, 95))}`,
  ]);
  console.log(mode, rows.at(-1));
}
await context.close();
const result = table(
  [
    "mode",
    `nDCG@10 (${split}), default page`,
    `nDCG@10 (${split}), -n 100`,
    "queries whose default page differs from -n 100's first",
    "Recall@100",
    "warm p50 / p95",
    "cold executable p50 / p95",
  ],
  rows,
);
console.log(result);
if (split === "test") {
  writeSection(
    `quality-${basename(model)}`,
    `Retrieval quality on SciFact test with ${basename(model)}`,
    `bun bench/quality.ts ${model.startsWith(SHARED) ? `../shared/${model.slice(SHARED.length + 1)}` : model}`,
    `${result}\n\nDocuments ranked by their best fragment (\`--documents\`): the default page (10 documents) and the first 10 of \`-n 100\`, which are one list cut at two places. Hybrid = w × min-max BM25 + (1 − w) × min-max cosine over the top 100 of each list, w calibrated per repository and query (\`src/search/fusion.ts\` explains how, and why not plain RRF: it scores 0.42 here). Latency: 10 fragments, in-process after warm-up (query embedding included), and a fresh process per query. Load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(", ")} (2 cores, shared with other jobs: latencies are not comparable with quiet runs).`,
  );
}
rmSync(root, { recursive: true, force: true });
