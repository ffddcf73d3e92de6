/**
 * SciFact with the MiniLM-architecture model (random weights: speed, not quality): total index time with
 * embeddings, vector/hybrid latency in-process and from a cold executable, and warm search latency through a real
 * MCP client over stdio with the idle server's memory. Usage: bun bench/minilm.ts   (~8 minutes on 2 cores)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { buildExecutable } from "../build.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search, SearchContext, type SearchMode } from "../src/search/search.ts";
import { table, writeSection } from "./report.ts";
import { percentile, readQueries, requireShared, unpackRandomModel, writeCorpus } from "./scifact.ts";

requireShared();
const root = mkdtempSync(join(tmpdir(), "researcher-minilm-"));
const home = join(root, "home");
const model = unpackRandomModel(root);
process.env.RESEARCHER_MODEL_PATH = model;
writeCorpus(join(root, "scifact"));
const repo = registerRepository(home, { name: "scifact", path: join(root, "scifact") });
const summary = await indexRepository(home, repo, {
  onProgress: (p) => p.phase === "embed" && p.done % 1024 === 0 && console.log(`embedded ${p.done}/${p.total}`),
});
console.log(`indexed ${summary.documents_total} documents, ${summary.embedded} fragments embedded in ${summary.seconds} s`);

const queries = readQueries("test");
const ms = (v: number) => `${v.toFixed(1)} ms`;
const p50p95 = (values: number[]) => `${ms(percentile(values, 50))} / ${ms(percentile(values, 95))}`;

// Warm, in-process.
const context = new SearchContext();
const warm: Record<string, number[]> = {};
for (const mode of ["bm25", "vector", "hybrid"] as SearchMode[]) {
  await search(home, { query: "warm up", mode }, context);
  warm[mode] = [];
  for (const q of queries) {
    const start = performance.now();
    await search(home, { query: q.text, mode, limit: 10 }, context);
    warm[mode]!.push(performance.now() - start);
  }
}
await context.close();

// Cold: a fresh executable process per query (model load included for vector and hybrid).
const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });
const env = { PATH: "/usr/bin:/bin", RESEARCHER_HOME: home, RESEARCHER_MODEL_PATH: model };
const cold: Record<string, number[]> = {};
for (const mode of ["bm25", "hybrid"]) {
  cold[mode] = queries.slice(0, 20).map((q) => {
    const start = performance.now();
    const proc = Bun.spawnSync([exe, "search", "--json", "--mode", mode, "--", q.text], { env });
    if (!proc.success) throw new Error(proc.stderr.toString());
    return performance.now() - start;
  });
}

// MCP over stdio through the SDK client.
const transport = new StdioClientTransport({ command: exe, args: ["serve"], env, stderr: "ignore" });
const client = new Client({ name: "bench", version: "1" });
await client.connect(transport);
const pid = transport.pid!;
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
await Bun.sleep(500);
const idle = rss();
const viaMcp: Record<string, number[]> = {};
for (const mode of ["bm25", "hybrid"]) {
  await client.callTool({ name: "search_fragments", arguments: { query: "warm up", mode } });
  viaMcp[mode] = [];
  for (const q of queries) {
    const start = performance.now();
    await client.callTool({ name: "search_fragments", arguments: { query: q.text, mode, n_results: 10 } });
    viaMcp[mode]!.push(performance.now() - start);
  }
}
const afterSearches = rss();
await client.close();

const rows = [
  [
    "index SciFact with embeddings (fresh)",
    `${summary.seconds} s (${summary.embedded} fragments embedded, q8, ${Math.round(summary.embedded / summary.seconds)} fragments/s overall)`,
    "",
  ],
  ["bm25 warm in-process p50 / p95", p50p95(warm.bm25!), ""],
  ["vector warm in-process p50 / p95", p50p95(warm.vector!), ""],
  ["hybrid warm in-process p50 / p95", p50p95(warm.hybrid!), "p50 ≤ 20 ms"],
  ["bm25 cold executable p50 / p95", p50p95(cold.bm25!), "≤ 120 ms"],
  ["hybrid cold executable p50 / p95 (model load included)", p50p95(cold.hybrid!), "≤ 500 ms"],
  ["MCP stdio `search_fragments` bm25 p50 / p95", p50p95(viaMcp.bm25!), ""],
  ["MCP stdio `search_fragments` hybrid p50 / p95", p50p95(viaMcp.hybrid!), "p50 ≤ 30 ms"],
  ["MCP server memory: idle / after 600 searches", `${Math.round(idle)} MiB / ${Math.round(afterSearches)} MiB RSS`, ""],
];
const result = table(["measure", "result", "target"], rows);
console.log(result);
writeSection(
  "minilm",
  "Vector, hybrid and MCP latency with the MiniLM-architecture model",
  "bun bench/minilm.ts",
  `${result}\n\nSciFact test queries (300), 10 results. The model has random weights, so only speed is meaningful here. Warm = one process, databases and model kept open; cold = a fresh \`researcher search\` process per query; MCP = the executable under \`researcher serve\` driven by the official SDK client.`,
);
rmSync(root, { recursive: true, force: true });
