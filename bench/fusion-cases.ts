/**
 * What fusion benchmarks score: each SciFact query's BM25 and vector lists from a repository indexed with one model
 * (the product's own paths and index-time calibration), kept so that fusion variants are scored without searching
 * again. Shared by bench/tune-fusion.ts (the whole corpus) and bench/small-fusion.ts (small subsets of it).
 */
import { chooseModel, EmbedderCache } from "../src/embed/embedder.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { lexicalEvidence, lexicalRatio, type ListStrength, vectorCalibration, vectorEvidence } from "../src/search/calibration.ts";
import { FUSION_DEPTH, type Ranked } from "../src/search/fusion.ts";
import { parseQuery } from "../src/search/query.ts";
import { rankBm25, selectiveMatch } from "../src/search/search.ts";
import { searchVectors } from "../src/search/vectors.ts";
import { Store } from "../src/store/store.ts";
import { fragmentDocIds, mean, ndcg, type Query } from "./scifact.ts";

export interface Case {
  split: "train" | "test";
  id: string;
  bm25: Ranked[];
  vector: Ranked[];
  /** Calibrated evidence of each list's first result (calibration.ts). */
  lexicalTop: number;
  vectorTop: number;
}

export interface Model {
  name: string;
  cases: Case[];
  lists: ListStrength;
  /** Each fragment's SciFact document id. */
  doc: Map<number, string>;
  /** How many vectors the calibration was measured among (the repository's size for fusionWeight). */
  fragments: number;
}

/** Index `corpus` in `home` with `embedding`, then search every query of `queries` both ways. */
export async function collect(
  name: string,
  home: string,
  corpus: string,
  embedding: Record<string, string>,
  queries: Record<"train" | "test", Query[]>,
): Promise<Model> {
  const repo = registerRepository(home, { name: "scifact", path: corpus, embedding: embedding as never });
  await indexRepository(home, repo);
  const store = Store.open(repo.dir);
  const doc = fragmentDocIds(repo.dir);
  const embedders = new EmbedderCache();
  const embedder = await embedders.get(home, chooseModel({}, embedding as never));
  const cases: Case[] = [];
  for (const split of ["train", "test"] as const) {
    const vectors = await embedder.embed(
      queries[split].map((q) => q.text),
      "query",
    );
    for (const [i, q] of queries[split].entries()) {
      const parsed = parseQuery(q.text);
      // The product's BM25 path: common words pruned from the match in a large repository, its fast paths.
      const match = selectiveMatch(store, parsed);
      const bm25 = match ? rankBm25(store, parsed, match, FUSION_DEPTH).hits : [];
      const vector = (await searchVectors(store, repo.dir, vectors[i]!, FUSION_DEPTH)).hits;
      const lexicalTop = bm25[0] ? lexicalEvidence(lexicalRatio(store, parsed)(bm25[0].score)) : 0;
      const vectorTop = vector[0] ? vectorEvidence(vectors[i]!, vectorCalibration(store)?.centroid)(vector[0].score) : 0;
      cases.push({ split, id: q.id, bm25, vector, lexicalTop, vectorTop });
    }
  }
  const calibration = vectorCalibration(store);
  const lists = calibration?.lists ?? { bm25: 0, vector: 0, queries: 0 };
  const fragments = calibration?.vectors ?? doc.size;
  await embedders.dispose();
  store.close();
  return { name, cases, lists, doc, fragments };
}

export type Fuse = (c: Case, m: Model) => { id: number }[];

/** Mean nDCG@k of the documents a fusion ranks, over one split's queries. */
export function evaluate(m: Model, split: "train" | "test", fuse: Fuse, qrels: Map<string, Map<string, number>>, k = 10): number {
  const rankDocs = (list: { id: number }[]) => [...new Set(list.map((r) => m.doc.get(r.id)!))];
  const cases = m.cases.filter((c) => c.split === split);
  return cases.length ? mean(cases.map((c) => ndcg(rankDocs(fuse(c, m)), qrels.get(c.id)!, k))) : Number.NaN;
}
