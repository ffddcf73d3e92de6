/**
 * Questions over documentation: natural questions a reader asks of the Rust book (markdown) and of SICP and
 * CoffeeScript's docs (HTML), each with the passages that answer it (bench/data/questions.json: file and line
 * range, lines of the converted text for HTML, as results cite them). Written by a tester before any search was
 * run: 40 "tuning" questions, on which ranking changes were chosen, and 14 "held-out" ones written afterwards and
 * used only to check them. A hit is a result in the answer's file whose fragment overlaps the answer's lines.
 * Usage: bun bench/questions.ts [model-folder] [--label <text>] [--no-write]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search, SearchContext, type FragmentHit, type SearchMode } from "../src/search/search.ts";
import { table, writeSection } from "./report.ts";
import { requireShared, SHARED } from "./scifact.ts";

interface Question {
  id: number;
  set: "tuning" | "held-out";
  repository: "rust-book" | "html";
  style: string;
  question: string;
  answers: { path: string; start: number; end: number }[];
}

requireShared();
const args = process.argv.slice(2);
const label = args.includes("--label") ? args[args.indexOf("--label") + 1]! : "this commit";
const model = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--label") ?? join(SHARED, "models/glove-6b-100d-sif");
const questions: Question[] = JSON.parse(readFileSync(join(import.meta.dir, "data/questions.json"), "utf8"));

const root = mkdtempSync(join(tmpdir(), "researcher-questions-"));
const home = join(root, "home");
process.env.RESEARCHER_MODEL_PATH = model;
for (const [name, path] of [
  ["rust-book", join(SHARED, "data/corpus/markdown/rust-book")],
  ["html", join(SHARED, "data/corpus/html")],
] as const) {
  const summary = await indexRepository(home, registerRepository(home, { name, path }));
  console.log(`${name}: ${summary.documents_total} documents, ${summary.fragments_total} fragments`);
}

const context = new SearchContext();
const hit = (result: FragmentHit, q: Question) =>
  q.answers.some((a) => result.path === a.path && result.fragment.start_line <= a.end && result.fragment.end_line >= a.start);
const rows: (string | number)[][] = [];
const ranks: string[] = [];
for (const mode of ["bm25", "vector", "hybrid"] as SearchMode[]) {
  const found = new Map<number, number>(); // question id → rank of the first hit (0: not in the top 10)
  for (const q of questions) {
    const response = await search(home, { query: q.question, mode, repositories: [q.repository], limit: 10 }, context);
    found.set(q.id, (response.results as FragmentHit[]).findIndex((r) => hit(r, q)) + 1);
  }
  for (const set of ["tuning", "held-out"] as const) {
    const of = questions.filter((q) => q.set === set).map((q) => found.get(q.id)!);
    const share = (ok: (rank: number) => boolean) => (of.filter(ok).length / of.length).toFixed(3);
    const mrr = (of.reduce((sum, rank) => sum + (rank ? 1 / rank : 0), 0) / of.length).toFixed(3);
    rows.push([label, mode, `${set} (${of.length})`, share((r) => r === 1), share((r) => r >= 1 && r <= 3), mrr]);
    console.log(rows.at(-1)!.join("  "));
  }
  if (mode === "bm25") ranks.push(...questions.map((q) => `${q.id}:${found.get(q.id) || "-"}`));
}
await context.close();
rmSync(root, { recursive: true, force: true });
console.log(`bm25 rank of the first hit per question: ${ranks.join(" ")}`);

if (!args.includes("--no-write")) {
  writeSection(
    "questions",
    "Questions over documentation (the Rust book, SICP and CoffeeScript's docs)",
    "bun bench/questions.ts",
    `${table(["code", "mode", "questions", "hit@1", "hit@3", "MRR@10"], rows)}

GloVe-SIF for vector and hybrid (its hybrid weight comes out 0 in both repositories: a model this weak gets no
share, so hybrid is BM25). A hit: a result in an answer's file whose fragment overlaps the answer's lines.
bm25 rank of the first hit per question (\`-\`: not in the top 10): ${ranks.join(" ")}.`,
  );
}
