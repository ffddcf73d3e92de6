/**
 * Grid search of BM25 field weights on SciFact *train* qrels (reported figures use test; see bench/bm25.ts).
 * Usage: bun bench/tune-bm25.ts
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { parseQuery } from "../src/search/query.ts";
import { registerRepository } from "../src/repos.ts";
import { setConfigValue } from "../src/config.ts";
import { Store } from "../src/store/store.ts";
import { fragmentDocIds, mean, ndcg, readQrels, readQueries, requireShared, writeCorpus } from "./scifact.ts";

requireShared();
const root = mkdtempSync(join(tmpdir(), "researcher-tune-"));
writeCorpus(join(root, "scifact"));
const home = join(root, "home");
if (process.env.CHUNK_TOKENS) setConfigValue(home, "chunk.tokens", process.env.CHUNK_TOKENS);
const repo = registerRepository(home, { name: "scifact", path: join(root, "scifact"), embed: false });
await indexRepository(home, repo);
const store = Store.open(repo.dir);
const paths = fragmentDocIds(repo.dir);

function evaluate(split: "train" | "test", weights: { title: number; heading: number; body: number }): number {
  const qrels = readQrels(split);
  return mean(
    readQueries(split).map((q) => {
      const match = parseQuery(q.text).match;
      if (!match) return 0;
      const ranked: string[] = [];
      for (const hit of store.fullText.search(match, weights, 200)) {
        const doc = paths.get(hit.id)!;
        if (!ranked.includes(doc)) ranked.push(doc);
      }
      return ndcg(ranked, qrels.get(q.id)!);
    }),
  );
}

const results: [string, number][] = [];
for (const title of [1, 2, 3]) {
  for (const heading of [1]) {
    const w = { title, heading, body: 1 };
    results.push([JSON.stringify(w), evaluate("train", w)]);
  }
}
results.sort((a, b) => b[1] - a[1]);
for (const [w, score] of results) console.log(score.toFixed(4), w);
const best = JSON.parse(results[0]![0]);
console.log(
  "test with best:",
  evaluate("test", best).toFixed(4),
  "test with title=1",
  evaluate("test", { title: 1, heading: 1, body: 1 }).toFixed(4),
);
