/**
 * Merging repositories: SciFact searched together with an unrelated repository (the Rust book), GloVe-SIF. Reports
 * the calibrated evidence of each repository's first result (what VECTOR_FLOOR is set from: train queries) and
 * nDCG@10 on SciFact test of the merged list, interleaved by rank (the old merge) and by merge score.
 * Usage: bun bench/merge.ts [model-folder]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search, SearchContext, type DocumentHit, type SearchMode } from "../src/search/search.ts";
import { table, writeSection } from "./report.ts";
import { docIdOf, mean, ndcg, percentile, readQrels, readQueries, requireShared, SHARED, writeCorpus } from "./scifact.ts";

requireShared();
const model = process.argv[2] ?? join(SHARED, "models/glove-6b-100d-sif");
const root = mkdtempSync(join(tmpdir(), "researcher-merge-"));
const home = join(root, "home");
writeCorpus(join(root, "scifact"));
for (const [name, path] of [
  ["rust-book", join(SHARED, "data/corpus/markdown/rust-book")],
  ["scifact", join(root, "scifact")],
] as const) {
  await indexRepository(home, registerRepository(home, { name, path, embedding: { model } }));
}
const context = new SearchContext();
const find = (query: string, mode: SearchMode, repositories: string[]) =>
  search(home, { query, mode, repositories, limit: 10, documents: true, explain: true }, context).then((r) => r.results as DocumentHit[]);

const evidence: (string | number)[][] = [];
for (const mode of ["vector", "bm25"] as SearchMode[]) {
  const tops = { "rust-book": [] as number[], scifact: [] as number[] };
  for (const q of readQueries("train")) {
    for (const repo of ["rust-book", "scifact"] as const) {
      const merge = (await find(q.text, mode, [repo]))[0]?.explain?.merge;
      if (merge) tops[repo].push((mode === "vector" ? merge.vector : merge.lexical) ?? 0);
    }
  }
  for (const [repo, values] of Object.entries(tops)) {
    evidence.push([mode, repo, ...[10, 50, 90].map((p) => percentile(values, p).toFixed(3))]);
  }
}

const qrels = readQrels("test");
const rows: (string | number)[][] = [];
for (const mode of ["bm25", "vector", "hybrid"] as SearchMode[]) {
  const alone: number[] = [],
    byRank: number[] = [],
    merged: number[] = [];
  for (const q of readQueries("test")) {
    const relevant = qrels.get(q.id)!;
    const score = (hits: DocumentHit[]) =>
      ndcg(
        hits.map((h) => (h.repository === "scifact" ? docIdOf(h.path) : `rust:${h.path}`)),
        relevant,
      );
    const [own, other] = [await find(q.text, mode, ["scifact"]), await find(q.text, mode, ["rust-book"])];
    alone.push(score(own));
    byRank.push(score(own.flatMap((hit, i) => (other[i] ? [other[i]!, hit] : [hit])))); // the unrelated one listed first
    merged.push(score(await find(q.text, mode, ["rust-book", "scifact"])));
  }
  rows.push([mode, mean(alone).toFixed(4), mean(byRank).toFixed(4), mean(merged).toFixed(4)]);
  console.log(rows.at(-1));
}
await context.close();
const first = table(["mode", "first result of", "evidence p10", "p50", "p90"], evidence);
const quality = table(["mode", "SciFact alone", "+ Rust book, by rank", "+ Rust book, by merge score"], rows);
console.log(`${first}\n\n${quality}`);
writeSection(
  "merge",
  "Merging an unrelated repository (SciFact test + the Rust book, GloVe-SIF)",
  "bun bench/merge.ts",
  `${first}\n\nCalibrated evidence of each repository's first result for SciFact train queries (\`src/search/calibration.ts\`); vector evidence below 0.5 opens no merged list.\n\n${quality}\n\nnDCG@10 of documents on SciFact test; Rust-book results count as irrelevant.`,
);
rmSync(root, { recursive: true, force: true });
