/**
 * Side by side with Xapian (Debian's python3-xapian, run as /usr/bin/python3 bench/xapian-side.py): the scale
 * benchmark's index (bench/scale.ts, same size, kept with --keep) is read back fragment by fragment through the
 * Store and indexed by Xapian, one document per fragment (title, heading and text as FTS5 got them), then both
 * answer the scale benchmark's queries warm, top 10, in the same run: ours in-process through `search()` (one
 * SearchContext: ranking, total, snippets), Xapian's Enquire.get_mset(0, 10) in its own process (ranking only).
 *
 * Usage: bun bench/xapian.ts [100k|300k|1m] --keep <dir>   (after `bun bench/scale.ts <size> --keep <dir>`)
 * The Xapian database stays in <dir>/xapian-<size> and is reused by later runs (latency only). Xapian's build is
 * the slow part (Python, one document at a time, positions kept): 250 s at 100k and 500 s at 300k on 2 shared cores.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { BM25_WEIGHTS, rankPostings } from "../src/search/bm25.ts";
import { FUSION_DEPTH } from "../src/search/fusion.ts";
import { parseQuery } from "../src/search/query.ts";
import { search, SearchContext, selectiveMatch, selectiveTerms } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { table, writeSection } from "./report.ts";
import { scaleQueries, scifactWords } from "./scale.ts";
import { percentile, requireShared } from "./scifact.ts";

const PYTHON = "/usr/bin/python3"; // Debian's: python3-xapian installs there, not into other pythons on PATH
const SCRIPT = join(import.meta.dir, "xapian-side.py");
const PASSES = 3; // timed, after one warm-up pass each
const BATCH = 5000;

const ms = (v: number) => `${v.toFixed(1)} ms`;
const p50p95 = (values: number[]) => `p50 ${ms(percentile(values, 50))}, p95 ${ms(percentile(values, 95))}`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function python(args: string[]) {
  return Bun.spawn([PYTHON, SCRIPT, ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    env: { PATH: "/usr/bin:/bin", XAPIAN_FLUSH_THRESHOLD: "100000" },
  });
}

async function finish(proc: ReturnType<typeof python>): Promise<string> {
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0) throw new Error(`xapian-side.py failed (${code})`);
  return out;
}

/** Every fragment of the index, as FTS5 indexed it (document title, heading, text), into Xapian. */
async function buildXapian(indexDir: string, db: string): Promise<{ seconds: number; documents: number }> {
  rmSync(db, { recursive: true, force: true });
  const started = performance.now();
  const proc = python(["build", db]);
  const store = Store.open(indexDir);
  try {
    const total = store.counts().fragments;
    let sent = 0;
    for (let first = 1; sent < total; first += BATCH) {
      const ids = Array.from({ length: BATCH }, (_, i) => first + i);
      const lines = [...store.fragmentsByIds(ids).values()].map((f) =>
        JSON.stringify({ id: f.id, title: f.title, heading: f.heading, text: f.text }),
      );
      sent += lines.length;
      if (lines.length) proc.stdin.write(`${lines.join("\n")}\n`);
      await proc.stdin.flush();
    }
  } finally {
    store.close();
  }
  await proc.stdin.end();
  const { documents } = JSON.parse(await finish(proc)) as { documents: number };
  return { seconds: (performance.now() - started) / 1000, documents };
}

/** The words ours searches (its parser drops stopwords), as Xapian's query: an OR of them. */
function searchedWords(query: string): string {
  return parseQuery(query)
    .optional.map((term) => term.fts.replaceAll('"', ""))
    .join(" ");
}

interface Pass {
  ms: number[];
  /** CPU time per query (the process's, all threads): what a busy shared machine does not inflate. */
  cpu: number[];
  top: number[][];
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Xapian's query process: one pass over the queries each time it is asked. */
function xapianPasses(db: string, queries: string[]): { pass: () => Promise<Pass>; close: () => Promise<void> } {
  const proc = python(["query", db]);
  const reader = proc.stdout.getReader();
  let buffered = "";
  const line = async (): Promise<string> => {
    while (!buffered.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("xapian-side.py ended early");
      buffered += new TextDecoder().decode(value);
    }
    const [first, ...rest] = buffered.split("\n");
    buffered = rest.join("\n");
    return first!;
  };
  return {
    pass: async () => {
      proc.stdin.write(`${JSON.stringify(queries.map(searchedWords))}\n`);
      await proc.stdin.flush();
      return JSON.parse(await line()) as Pass;
    },
    close: async () => {
      await proc.stdin.end();
      if ((await proc.exited) !== 0) throw new Error("xapian-side.py query failed");
    },
  };
}

/** One pass of ours over the queries, in-process, warm. */
async function oursPass(home: string, queries: string[], context: SearchContext): Promise<Pass> {
  const ms: number[] = [];
  const cpu: number[] = [];
  const top: number[][] = [];
  for (const q of queries) {
    const [start, startCpu] = [performance.now(), cpuMs()];
    const response = await search(home, { query: q, limit: 10, mode: "bm25" }, context);
    ms.push(performance.now() - start);
    cpu.push(cpuMs() - startCpu);
    top.push(response.results.map((hit) => ("fragment" in hit ? hit.fragment.id : 0)));
  }
  return { ms, cpu, top };
}

/**
 * Of the queries of several words, how many are ranked from the posting lists (bm25.ts) at the depth search() asks
 * for, and how many of those top 10s are FTS5's own ranking of the same match, score for score (all, if exact).
 */
function listAgreement(indexDir: string, queries: string[]): { multiWord: number; ranked: number; same: number } {
  const store = Store.open(indexDir);
  const scores = (hits: { score: number }[]) => hits.map((h) => h.score.toFixed(6)).join();
  const counts = { multiWord: 0, ranked: 0, same: 0 };
  try {
    for (const query of queries) {
      const parsed = parseQuery(query);
      const match = selectiveMatch(store, parsed);
      if (!match || parsed.optional.length < 2) continue;
      counts.multiWord++;
      const ranking = store.transaction(() =>
        rankPostings(store, parsed, selectiveTerms(store, parsed), match, BM25_WEIGHTS, FUSION_DEPTH),
      );
      if (!ranking) continue;
      counts.ranked++;
      if (scores(ranking.hits.slice(0, 10)) === scores(store.fullText.search(match, BM25_WEIGHTS, 10))) counts.same++;
    }
  } finally {
    store.close();
  }
  return counts;
}

function directoryBytes(dir: string): number {
  const out = Bun.spawnSync(["du", "-sb", dir]).stdout.toString();
  return Number(out.split("\t")[0]);
}

/** How many of Xapian's top 10 are in ours, averaged over the queries (the two rank with slightly different BM25s). */
function overlap(ours: number[][], theirs: number[][]): number {
  const shares = ours.map((top, i) => {
    const mine = new Set(top);
    return theirs[i]!.filter((id) => mine.has(id)).length / Math.max(1, Math.min(10, theirs[i]!.length));
  });
  return shares.reduce((a, b) => a + b, 0) / shares.length;
}

async function main(): Promise<void> {
  requireShared();
  const size = (process.argv.slice(2).find((a, i, all) => !a.startsWith("--") && all[i - 1] !== "--keep") ?? "1m").toLowerCase();
  const keepAt = process.argv.indexOf("--keep");
  if (keepAt < 0) throw new Error("usage: bun bench/xapian.ts <size> --keep <dir> (the dir of `bun bench/scale.ts <size> --keep <dir>`)");
  const root = process.argv[keepAt + 1]!;
  const home = join(root, `home-${size}`);
  const indexDir = join(home, "repositories", "scale");
  if (!existsSync(join(indexDir, "index.db")))
    throw new Error(`no index in ${indexDir}: run bun bench/scale.ts ${size} --keep ${root} first`);
  const db = join(root, `xapian-${size}`);
  const built = join(root, `xapian-${size}.json`);
  if (!existsSync(built)) {
    const result = await buildXapian(indexDir, db);
    writeFileSync(built, JSON.stringify(result));
    console.log(`Xapian indexed ${result.documents} fragments in ${result.seconds.toFixed(1)} s`);
  }
  const build = JSON.parse(readFileSync(built, "utf8")) as { seconds: number; documents: number };
  const indexRows = JSON.parse(readFileSync(join(root, `index-${size}.json`), "utf8")) as string[][];
  const ourIndex = (measure: string) => indexRows.find(([m]) => m === measure)?.[1] ?? "—";

  const queries = scaleQueries(scifactWords());
  // Passes alternate, so a busy moment of the (shared) machine falls on both engines alike; the first is warm-up.
  const context = new SearchContext();
  const xapianProcess = xapianPasses(db, queries);
  const ours: Pass = { ms: [], cpu: [], top: [] };
  const xapian: Pass = { ms: [], cpu: [], top: [] };
  for (let pass = 0; pass <= PASSES; pass++) {
    const [mine, theirs] = [await oursPass(home, queries, context), await xapianProcess.pass()];
    if (pass === 0) [ours.top, xapian.top] = [mine.top, theirs.top];
    else {
      for (const [all, one] of [
        [ours, mine],
        [xapian, theirs],
      ] as const) {
        all.ms.push(...one.ms);
        all.cpu.push(...one.cpu);
      }
    }
  }
  await xapianProcess.close();
  await context.close();
  const agreement = listAgreement(indexDir, queries);
  const oneWord = (times: number[]) => times.filter((_, i) => !queries[i % queries.length]!.includes(" "));
  const severalWords = (times: number[]) => times.filter((_, i) => queries[i % queries.length]!.includes(" "));
  const rows = [
    ["fragments", ourIndex("corpus"), `${build.documents} documents`],
    ["fresh index", ourIndex("fresh index (executable)"), `${build.seconds.toFixed(1)} s (reading our index through the Store included)`],
    ["index bytes", ourIndex("final index bytes"), mib(directoryBytes(db))],
    [`warm top 10 (${PASSES} passes over the queries)`, p50p95(ours.ms), p50p95(xapian.ms)],
    ["warm top 10, one-word queries", p50p95(oneWord(ours.ms)), p50p95(oneWord(xapian.ms))],
    ["warm top 10, slowest query", ms(Math.max(...ours.ms)), ms(Math.max(...xapian.ms))],
    ["CPU time per query, warm top 10", p50p95(ours.cpu), p50p95(xapian.cpu)],
    ["CPU time per query, queries of several words", p50p95(severalWords(ours.cpu)), p50p95(severalWords(xapian.cpu))],
  ];
  const report = table(["measure", "researcher (bm25, `search()`)", "Xapian 1.4 (BM25Weight, get_mset)"], rows);
  console.log(report);
  console.log(`top-10 overlap: ${(overlap(ours.top, xapian.top) * 100).toFixed(0)}%`);
  writeSection(
    `xapian-${size}`,
    `Side by side with Xapian: ${size} synthetic fragments, BM25`,
    `bun bench/xapian.ts ${size} --keep <dir>`,
    `${report}

The scale benchmark's corpus and ${queries.length} queries (bench/scale.ts), both engines warm in one run, their passes
alternating (one warm-up pass each, then ${PASSES}). Xapian
(Debian python3-xapian ${xapianVersion()}) indexes one document per fragment: the document title, heading and text
FTS5 got, with our field weights as within-document frequency increments (title 4, heading 3, body 2: Xapian's are
integers, so ×2), the Porter stemmer FTS5 uses (every term stemmed, no stopwords), positions kept as FTS5 keeps them;
queries are an OR of the words ours searches (its parser drops stopwords), \`BM25Weight(k1 1.2, k2 0, k3 1, b 0.75, min_normlen 0)\` (FTS5's constants),
\`get_mset(0, 10)\`. Ours is the whole \`search()\` (ranking 100 deep as every BM25 list is, match count, snippets, result
rows); Xapian's is ranking only, timed in its own process. CPU time is each process's own (user + system, all its
threads) around each query: on a shared machine a query's wall time also holds its waits for a core. Their BM25s differ slightly (Xapian's document length counts the weighted
terms, FTS5's the tokens; FTS5's IDF floor; ours leaves words in more than a fifth of the fragments out of a
multi-word match when FTS5 ranks it): ${(overlap(ours.top, xapian.top) * 100).toFixed(0)}% of Xapian's top 10 are
in ours, on average. Ours ranked ${agreement.ranked} of the ${agreement.multiWord} queries of several words from its posting lists (bm25.ts);
${agreement.same} of those ${agreement.ranked} top 10s are FTS5's own ranking of the same match, score for score.
Load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(", ")} (2 cores, shared).`,
  );
}

function xapianVersion(): string {
  return Bun.spawnSync([PYTHON, "-c", "import xapian; print(xapian.version_string())"]).stdout.toString().trim();
}

if (import.meta.main) await main();
