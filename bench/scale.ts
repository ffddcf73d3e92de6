/**
 * Scale benchmark (issue 17): a seeded synthetic repository of markdown files (10 sections × 150 words each,
 * words drawn from SciFact's word frequencies), indexed by the compiled executable (`--no-embed`), then BM25
 * latency warm (in-process, one SearchContext) and cold (CLI) on ~50 queries drawn from the same distribution.
 * `vectors` measures vector search (the ANN file) at the same sizes instead: see bench/scale-vectors.ts.
 *
 * Usage: bun bench/scale.ts [vectors] [100k|300k|1m] [--uniform] [--keep <dir>] [--before <file>]
 * With --keep, the generated files and index stay in <dir> and a later run with the same size reuses them
 * (no re-index; latency only). Each run saves its figures as `{ label, rows }` JSON in the temp folder (the path
 * is printed); `--before` with such a file from an earlier run (at other code) adds its figures as a column.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../build.ts";
import { search, SearchContext } from "../src/search/search.ts";
import { commit } from "../src/version.ts";
import { table, writeSection } from "./report.ts";
import { percentile, requireShared, SCIFACT } from "./scifact.ts";
import { seeded } from "../src/random.ts";

const SECTIONS = 10;
const WORDS_PER_SECTION = 150;
const FILES_PER_FOLDER = 1000;
const SIZES: Record<string, number> = { "100k": 100_000, "300k": 300_000, "1m": 1_000_000 };

export interface WordTable {
  words: string[];
  /** Cumulative counts, for sampling by binary search. */
  cumulative: Float64Array;
}

/** SciFact's words (titles and abstracts, lower-cased) with their counts. */
export function scifactWords(): WordTable {
  const counts = new Map<string, number>();
  for (const line of readFileSync(join(SCIFACT, "corpus.jsonl"), "utf8").split("\n")) {
    if (!line) continue;
    const doc = JSON.parse(line) as { title: string; text: string };
    for (const word of `${doc.title} ${doc.text}`.toLowerCase().match(/\p{L}[\p{L}\p{N}]*/gu) ?? []) {
      counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  const entries = [...counts].sort((a, b) => b[1] - a[1]);
  const cumulative = new Float64Array(entries.length);
  let sum = 0;
  for (const [i, [, n]] of entries.entries()) {
    sum += n;
    cumulative[i] = sum;
  }
  return { words: entries.map(([w]) => w), cumulative };
}

export function sampler(table: WordTable, random: () => number): () => string {
  const total = table.cumulative[table.cumulative.length - 1]!;
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = table.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (table.cumulative[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return table.words[lo]!;
  };
}

const words = (draw: () => string, n: number) => Array.from({ length: n }, draw).join(" ");

/** `fragments / 10` markdown files in folders of 1,000; returns the bytes written. */
export function writeRepository(dir: string, fragments: number, table: WordTable): number {
  const draw = sampler(table, seeded(17));
  let bytes = 0;
  for (let file = 0; file < fragments / SECTIONS; file++) {
    const folder = join(dir, String(Math.floor(file / FILES_PER_FOLDER)).padStart(4, "0"));
    if (file % FILES_PER_FOLDER === 0) mkdirSync(folder, { recursive: true });
    const parts = [`# ${words(draw, 8)}\n`];
    for (let s = 0; s < SECTIONS; s++) parts.push(`## ${words(draw, 3)}\n\n${words(draw, WORDS_PER_SECTION)}\n`);
    const text = parts.join("\n");
    writeFileSync(join(folder, `${file}.md`), text);
    bytes += text.length;
  }
  return bytes;
}

/** ~50 queries of 1–12 words from the same distribution, starting with one-word queries of very common words. */
export function scaleQueries(table: WordTable): string[] {
  const common = ["cells", "patients", "study", "expression", "cell", "results", "protein", "treatment"];
  const draw = sampler(table, seeded(4242));
  const random = seeded(99);
  const drawn = Array.from({ length: 42 }, () => words(draw, 1 + Math.floor(random() * 12)));
  return [...common.filter((w) => table.words.includes(w)), ...drawn];
}

interface Run {
  ms: number;
  rssKb: number;
  peakDiskBytes: number;
  stdout: string;
}

/** Run the executable under /usr/bin/time, sampling the index's db + WAL size every 200 ms. */
export async function runExe(exe: string, home: string, args: string[], indexDir?: string, env: Record<string, string> = {}): Promise<Run> {
  const start = performance.now();
  const proc = Bun.spawn(["/usr/bin/time", "-f", "%M", exe, ...args], {
    env: { PATH: "/usr/bin:/bin", RESEARCHER_HOME: home, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let peakDiskBytes = 0;
  const sample = () => {
    if (!indexDir) return;
    const size = (f: string) => statSync(join(indexDir, f), { throwIfNoEntry: false })?.size ?? 0;
    peakDiskBytes = Math.max(peakDiskBytes, size("index.db") + size("index.db-wal"));
  };
  const timer = indexDir ? setInterval(sample, 200) : undefined;
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearInterval(timer);
  sample();
  if (code !== 0) throw new Error(`${args.join(" ")} failed (${code}): ${stderr}`);
  return { ms: performance.now() - start, rssKb: Number(stderr.trim().split("\n").at(-1)), peakDiskBytes, stdout };
}

/** Two runs' figures side by side, measure by measure. */
function comparison(before: { label: string; rows: (string | number)[][] }, now: { label: string; rows: (string | number)[][] }): string {
  const earlier = new Map(before.rows.map(([measure, result]) => [measure, result]));
  return table(
    ["measure", `before (${before.label})`, `now (${now.label})`],
    now.rows.map(([measure, result]) => [measure!, earlier.get(measure) ?? "—", result!]),
  );
}

const ms = (v: number) => `${v.toFixed(1)} ms`;
const p50p95 = (values: number[]) => `p50 ${ms(percentile(values, 50))}, p95 ${ms(percentile(values, 95))}`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const vectors = args[0] === "vectors";
  const positional = args.filter((a, i) => !a.startsWith("--") && !["--keep", "--before"].includes(args[i - 1]!) && a !== "vectors");
  const size = (positional[0] ?? "100k").toLowerCase();
  const fragments = SIZES[size];
  if (!fragments) throw new Error(`size must be one of ${Object.keys(SIZES).join(", ")}`);
  const keepAt = process.argv.indexOf("--keep");
  if (vectors) {
    const { vectorScale } = await import("./scale-vectors.ts");
    return vectorScale(size, fragments, args.includes("--uniform"), keepAt > 0 ? process.argv[keepAt + 1] : undefined);
  }
  requireShared();
  const root = keepAt > 0 ? process.argv[keepAt + 1]! : mkdtempSync(join(tmpdir(), "researcher-scale-"));
  const corpus = join(root, `corpus-${size}`);
  const home = join(root, `home-${size}`);
  const indexDir = join(home, "repositories", "scale");
  const wordTable = scifactWords();
  const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });

  const rows: (string | number)[][] = [];
  if (!existsSync(join(indexDir, "index.db"))) {
    rmSync(corpus, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
    const started = performance.now();
    const bytes = writeRepository(corpus, fragments, wordTable);
    console.log(`generated ${fragments / SECTIONS} files (${mib(bytes)}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await runExe(exe, home, ["repo", "add", "scale", corpus, "--no-embed"]);
    const fresh = await runExe(exe, home, ["index", "scale", "--no-embed", "--json", "--quiet"], indexDir);
    const again = await runExe(exe, home, ["index", "scale", "--no-embed", "--json", "--quiet"], indexDir);
    const summary = JSON.parse(fresh.stdout) as { fragments_total: number } | { fragments_total: number }[];
    const total = (Array.isArray(summary) ? summary[0]! : summary).fragments_total;
    const final = ["index.db", "index.db-wal"].reduce(
      (sum, f) => sum + (statSync(join(indexDir, f), { throwIfNoEntry: false })?.size ?? 0),
      0,
    );
    rows.push(
      ["corpus", `${fragments / SECTIONS} files, ${mib(bytes)}, ${total} fragments`],
      ["fresh index (executable)", `${(fresh.ms / 1000).toFixed(1)} s (${Math.round(total / (fresh.ms / 1000))} fragments/s)`],
      ["no-change re-index", `${(again.ms / 1000).toFixed(2)} s`],
      ["peak RSS, fresh index", mib(fresh.rssKb * 1024)],
      ["peak disk during the fresh index (db + WAL, sampled every 200 ms)", mib(fresh.peakDiskBytes)],
      ["final index bytes", `${mib(final)} (${Math.round(final / total)} bytes/fragment)`],
    );
    console.log(table(["measure", "result"], rows));
    writeFileSync(join(root, `index-${size}.json`), JSON.stringify(rows));
  } else {
    console.log(`reusing the index in ${indexDir}`);
    rows.push(...(JSON.parse(readFileSync(join(root, `index-${size}.json`), "utf8")) as string[][]));
  }

  const queries = scaleQueries(wordTable);
  const context = new SearchContext();
  const query = (text: string) => search(home, { query: text, limit: 10, mode: "bm25" }, context);
  for (const q of queries) await query(q); // warm-up: page cache, prepared statements, term statistics
  const warm: number[] = [];
  const oneWord: number[] = [];
  for (let pass = 0; pass < 3; pass++) {
    for (const q of queries) {
      const start = performance.now();
      await query(q);
      const elapsed = performance.now() - start;
      warm.push(elapsed);
      if (!q.includes(" ")) oneWord.push(elapsed);
    }
  }
  await context.close();
  const cold = [];
  for (const q of queries) cold.push(await runExe(exe, home, ["search", "--json", "--mode", "bm25", "-n", "10", "--", q]));
  const coldMs = cold.map((c) => c.ms);
  rows.push(
    ["BM25 warm (in-process, 3 passes over the queries)", p50p95(warm)],
    ["BM25 warm, slowest one-word query", ms(Math.max(...oneWord))],
    ["BM25 cold CLI (executable)", p50p95(coldMs)],
    ["peak RSS, cold CLI search", mib(Math.max(...cold.map((c) => c.rssKb)) * 1024)],
  );
  const label = `${commit()}, ${new Date().toISOString().slice(0, 10)}`;
  const saved = join(tmpdir(), `researcher-scale-${size}.json`);
  writeFileSync(saved, JSON.stringify({ label, rows }));
  console.log(`figures saved to ${saved} (for --before)`);
  const beforeAt = process.argv.indexOf("--before");
  const before =
    beforeAt > 0 ? (JSON.parse(readFileSync(process.argv[beforeAt + 1]!, "utf8")) as { label: string; rows: string[][] }) : undefined;
  const report = before ? comparison(before, { label, rows }) : table(["measure", "result"], rows);
  console.log(report);
  writeSection(
    `scale-${size}`,
    `Scale: ${size} synthetic fragments, BM25`,
    `bun bench/scale.ts ${size}`,
    `${report}\n\n${queries.length} queries of 1–12 words drawn from SciFact's word frequencies (${queries.filter((q) => !q.includes(" ")).length} of one word, 8 of them chosen among the most common words). Load average at the end: ${(
      await import("node:os")
    )
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(", ")} (2 cores, shared).`,
  );
  if (keepAt < 0) rmSync(root, { recursive: true, force: true });
}

if (import.meta.main) await main();
