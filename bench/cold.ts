/**
 * Cold CLI search against a bare Bun process running the same FTS5 query (team goal: within 1.3×). Both are
 * fresh processes per query on the same SciFact index, alternated so that the machine's swings hit both alike:
 *
 * - ours: the executable, `researcher search --mode bm25 -n 10 -- <query>` (text output to a pipe);
 * - bare: `bun bare.ts <index.db> <match>`: opens the index read-only and runs the FTS5 query our BM25 path runs
 *   (the MATCH our query parser makes, bm25() with our field weights, top 10), joined to each fragment's path and
 *   text, printed as JSON. It does no query parsing, snippets, configuration or command-line handling.
 *
 * Process start alone (`researcher --version`, `bun -e 0`) is timed the same way, to show what is left.
 * Usage: bun bench/cold.ts [--runs 40]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../build.ts";
import { BM25_WEIGHTS } from "../src/search/bm25.ts";
import { parseQuery } from "../src/search/query.ts";
import { table, writeSection } from "./report.ts";
import { percentile, readQueries, requireShared, writeCorpus } from "./scifact.ts";

requireShared();
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg < 0 ? 40 : Number(process.argv[runsArg + 1]);
const root = mkdtempSync(join(tmpdir(), "researcher-cold-"));
const home = join(root, "home");
const env = { PATH: "/usr/bin:/bin", RESEARCHER_HOME: home };

const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });
const cli = (args: string[]) => {
  const proc = Bun.spawnSync([exe, ...args], { env });
  if (!proc.success) throw new Error(`researcher ${args.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
};
writeCorpus(join(root, "scifact"));
cli(["repo", "add", "scifact", join(root, "scifact"), "--no-embed"]);
cli(["index", "scifact", "--no-embed"]);
const [indexDb] = [...new Bun.Glob("**/index.db").scanSync({ cwd: home, absolute: true })];
if (!indexDb) throw new Error(`no index.db under ${home}`);

const bare = join(root, "bare.ts");
const { title, heading, body } = BM25_WEIGHTS;
writeFileSync(
  bare,
  `import { Database } from "bun:sqlite";
const [path, match] = process.argv.slice(2);
const db = new Database(path, { readonly: true });
const rows = db.query(\`SELECT d.path, f.start_line AS line, f.text, -bm25(fragments_fts, ${title}, ${heading}, ${body}) AS score
  FROM fragments_fts JOIN fragments f ON f.id = fragments_fts.rowid JOIN documents d ON d.id = f.document_id
  WHERE fragments_fts MATCH ? ORDER BY score DESC LIMIT 10\`).all(match);
console.log(JSON.stringify(rows.map((r) => ({ ...r, text: r.text.slice(0, 200) }))));
`,
);

const timed = (argv: string[]) => {
  const start = performance.now();
  const proc = Bun.spawnSync(argv, { env });
  const ms = performance.now() - start;
  if (!proc.success) throw new Error(`${argv.join(" ")}: ${proc.stderr.toString()}`);
  return ms;
};
const queries = readQueries("test").slice(0, RUNS);
const times = { ours: [] as number[], bare: [] as number[], version: [] as number[], bun: [] as number[] };
for (const q of queries) timed([exe, "search", "--mode", "bm25", "-n", "10", "--", q.text]); // page cache warm-up
for (const q of queries) {
  const match = parseQuery(q.text).match!;
  times.ours.push(timed([exe, "search", "--mode", "bm25", "-n", "10", "--", q.text]));
  times.bare.push(timed([process.execPath, bare, indexDb, match]));
  times.version.push(timed([exe, "--version"]));
  times.bun.push(timed([process.execPath, "-e", "0"]));
}
rmSync(root, { recursive: true, force: true });

const p = (values: number[], q: number) => percentile(values, q).toFixed(1);
const rows = [
  ["`researcher search --mode bm25 -n 10`", p(times.ours, 50), p(times.ours, 95)],
  ["bare Bun: the same FTS5 query, top 10 with paths and text", p(times.bare, 50), p(times.bare, 95)],
  ["`researcher --version`", p(times.version, 50), p(times.version, 95)],
  ["`bun -e 0`", p(times.bun, 50), p(times.bun, 95)],
];
const ratio = percentile(times.ours, 50) / percentile(times.bare, 50);
const load = (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(", ");
const result = `${table(["fresh process per query (ms)", "p50", "p95"], rows)}

Ours / bare at p50: **${ratio.toFixed(2)}×** (team goal ≤ 1.3×). ${RUNS} SciFact test queries, each run once by every
command in turn (alternated, page cache warm). Load average at the end: ${load} (2 cores).`;
console.log(result);
writeSection("cold", "Cold CLI search beside a bare Bun process running the same FTS5 query", "bun bench/cold.ts", result);
