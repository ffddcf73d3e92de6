/** SciFact as a folder of markdown files, its queries and qrels, and the retrieval metrics we report. */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Store } from "../src/store/store.ts";

export const SHARED = resolve(import.meta.dir, "../../shared");
export const SCIFACT = join(SHARED, "data/scifact");

export interface Query {
  id: string;
  text: string;
}

function readJsonl<T>(file: string): T[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}

/** Writes one `<id>.md` per abstract (`# title` + text) into `dir`; returns the number of files. */
export function writeCorpus(dir: string): number {
  mkdirSync(dir, { recursive: true });
  const docs = readJsonl<{ _id: string; title: string; text: string }>(join(SCIFACT, "corpus.jsonl"));
  for (const doc of docs) writeFileSync(join(dir, `${doc._id}.md`), `# ${doc.title}\n\n${doc.text}\n`);
  return docs.length;
}

/** qrels of one split: query id → relevant document id → grade. */
export function readQrels(split: "train" | "test"): Map<string, Map<string, number>> {
  const qrels = new Map<string, Map<string, number>>();
  const lines = readFileSync(join(SCIFACT, "qrels", `${split}.tsv`), "utf8")
    .split("\n")
    .slice(1);
  for (const line of lines) {
    const [query, doc, grade] = line.split("\t");
    if (!query || !doc) continue;
    if (!qrels.has(query)) qrels.set(query, new Map());
    qrels.get(query)!.set(doc, Number(grade));
  }
  return qrels;
}

export function readQueries(split: "train" | "test"): Query[] {
  const qrels = readQrels(split);
  return readJsonl<{ _id: string; text: string }>(join(SCIFACT, "queries.jsonl"))
    .filter((q) => qrels.has(q._id))
    .map((q) => ({ id: q._id, text: q.text }));
}

/** nDCG@k with graded relevance (BEIR's definition). */
export function ndcg(ranked: string[], relevant: Map<string, number>, k = 10): number {
  const dcg = ranked.slice(0, k).reduce((sum, doc, i) => sum + (relevant.get(doc) ?? 0) / Math.log2(i + 2), 0);
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((sum, grade, i) => sum + grade / Math.log2(i + 2), 0);
  return idcg ? dcg / idcg : 0;
}

export function recall(ranked: string[], relevant: Map<string, number>, k = 100): number {
  const top = new Set(ranked.slice(0, k));
  const hits = [...relevant.keys()].filter((doc) => top.has(doc)).length;
  return relevant.size ? hits / relevant.size : 0;
}

export function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** `12345.md` → `12345`. */
export const docIdOf = (path: string) => path.replace(/\.md$/, "");

/** Each fragment's SciFact document id, read from the repository's index.db (in `dir`) by a connection of its own. */
export function fragmentDocIds(dir: string): Map<number, string> {
  const db = new Database(Store.dbPath(dir), { readonly: true });
  try {
    const rows = db
      .query<{ id: number; path: string }, []>("SELECT f.id, d.path FROM fragments f JOIN documents d ON d.id = f.document_id")
      .all();
    return new Map(rows.map((r) => [r.id, docIdOf(r.path)]));
  } finally {
    db.close();
  }
}

export function requireShared(): void {
  if (!existsSync(SCIFACT)) {
    console.error(`error: ${SCIFACT} not found; benchmarks need ../shared beside the project`);
    process.exit(1);
  }
}

/** The random-weight MiniLM, unpacked into `dir` once (its ONNX files are stored gzipped in ../shared). */
export function unpackRandomModel(dir: string): string {
  const folder = join(dir, "minilm-l6-arch-random");
  if (!existsSync(folder)) {
    const unpack = Bun.spawnSync(["bash", join(SHARED, "models/unpack-minilm.sh"), dir]);
    if (!unpack.success) throw new Error(unpack.stderr.toString());
  }
  return folder;
}
