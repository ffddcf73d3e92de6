/**
 * Watch mode: from save to searchable, for one file and for a burst of 1,000 new files, with the default debounce
 * (config `watch.debounce_ms`, 300 ms), over a 2,000-document repository, BM25 only and with GloVe vectors; then
 * the CPU a `researcher watch` process uses over 60 s when nothing changes (utime + stime from /proc/<pid>/stat).
 * Usage: bun bench/watch.ts [--idle-seconds 60] [--write]   (--write updates its section of docs/benchmarks.md)
 */
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository, type Repository } from "../src/repos.ts";
import { search, SearchContext } from "../src/search/search.ts";
import { watchRepositories, type WatchBatch } from "../src/serve/watch.ts";
import { table, writeSection } from "./report.ts";

const ROOT = resolve(import.meta.dir, "..");
const GLOVE = resolve(ROOT, "../shared/models/glove-6b-100d-sif");
const DEBOUNCE_MS = 300;
const CORPUS_DOCS = 2000;
const SAVES = 30;
const BURSTS = 5;
const BURST_FILES = 1000;
const argv = process.argv.slice(2);
const idleSeconds = Number(argv[argv.indexOf("--idle-seconds") + 1] ?? 60) || 60;

const root = mkdtempSync(join(tmpdir(), "researcher-bench-watch-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

const WORDS = "river stone harbor lantern meadow copper violet orchard thunder canyon ember glacier willow saddle quartz".split(" ");
const text = (i: number, marker = "") =>
  `# Note ${i}\n\n${Array.from({ length: 120 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(" ")} ${marker}\n`;

function corpus(name: string): string {
  const dir = join(root, name);
  for (let i = 0; i < CORPUS_DOCS; i++) {
    mkdirSync(join(dir, `d${i % 20}`), { recursive: true });
    writeFileSync(join(dir, `d${i % 20}/note-${i}.md`), text(i));
  }
  return dir;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (value: number) => `${Math.round(value)} ms`;

/** Resolves when every path has been applied by some batch. */
function tracker() {
  const seen = new Set<string>();
  let wake: (() => void) | undefined;
  return {
    onBatch(batch: WatchBatch) {
      for (const path of batch.paths) seen.add(path);
      wake?.();
    },
    async until(paths: string[]) {
      const deadline = Date.now() + 120_000;
      while (!paths.every((p) => seen.has(p))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${paths.length} paths`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 1000);
        });
      }
    },
  };
}

async function searchable(home: string, word: string, context: SearchContext): Promise<void> {
  const found = await search(home, { query: word, mode: "bm25", limit: 1 }, context);
  if (found.results.length === 0) throw new Error(`'${word}' is not searchable after its batch`);
}

async function measure(label: string, embedding: Repository["embedding"] | undefined): Promise<(string | number)[][]> {
  const home = join(root, `home-${label}`);
  const docs = corpus(`docs-${label}`);
  const repo = registerRepository(home, { name: "notes", path: docs, embed: Boolean(embedding), embedding });
  const first = await indexRepository(home, repo);
  console.log(`${label}: ${CORPUS_DOCS} documents indexed in ${first.seconds} s`);
  const track = tracker();
  const errors: unknown[] = [];
  const handle = watchRepositories(home, [repo], { debounceMs: DEBOUNCE_MS, onBatch: track.onBatch, onError: (e) => errors.push(e) });
  const context = new SearchContext();
  try {
    await handle.ready;
    const single: number[] = [];
    for (let i = 0; i < SAVES; i++) {
      const path = `d${i % 20}/note-${i}.md`;
      const word = `singlemarker${i}x`;
      const started = performance.now();
      // What editors do: write a temp file beside it, rename it over the document.
      writeFileSync(join(docs, `d${i % 20}/.note-${i}.md.tmp`), text(i, word));
      renameSync(join(docs, `d${i % 20}/.note-${i}.md.tmp`), join(docs, path));
      await track.until([path]);
      await searchable(home, word, context);
      single.push(performance.now() - started);
    }
    const bursts: number[] = [];
    for (let b = 0; b < BURSTS; b++) {
      const paths = Array.from({ length: BURST_FILES }, (_, i) => `burst-${b}/${i % 10}/new-${i}.md`);
      const started = performance.now();
      for (let i = 0; i < BURST_FILES; i++) {
        mkdirSync(join(docs, `burst-${b}/${i % 10}`), { recursive: true });
        writeFileSync(join(docs, paths[i]!), text(i, i === BURST_FILES - 1 ? `burstmarker${b}x` : ""));
      }
      await track.until(paths);
      await searchable(home, `burstmarker${b}x`, context);
      bursts.push(performance.now() - started);
    }
    if (errors.length) throw errors[0];
    console.log(
      `${label}: single file p50 ${ms(percentile(single, 50))} p95 ${ms(percentile(single, 95))}; burst of ${BURST_FILES} p50 ${ms(percentile(bursts, 50))} p95 ${ms(percentile(bursts, 95))}`,
    );
    return [
      [label, `one file (atomic save), ${SAVES} saves`, ms(percentile(single, 50)), ms(percentile(single, 95))],
      [label, `${BURST_FILES} new files at once, ${BURSTS} bursts`, ms(percentile(bursts, 50)), ms(percentile(bursts, 95))],
    ];
  } finally {
    await handle.close();
    await context.close();
  }
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (fields 14 and 15, in clock ticks). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // CLK_TCK is 100 on Linux
}

async function idleCpu(): Promise<string> {
  const home = join(root, "home-idle");
  const docs = corpus("docs-idle");
  registerRepository(home, { name: "notes", path: docs, embed: false });
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "watch", "--json"], {
    env: { ...process.env, RESEARCHER_HOME: home },
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const reader = proc.stdout.getReader();
    await reader.read(); // the first line: the initial scan is done
    const before = cpuSeconds(proc.pid);
    await Bun.sleep(idleSeconds * 1000);
    const used = cpuSeconds(proc.pid) - before;
    const percent = (used / idleSeconds) * 100;
    console.log(
      `idle: ${used.toFixed(2)} CPU s over ${idleSeconds} s (${percent.toFixed(3)} %) watching ${CORPUS_DOCS} files in 20 folders`,
    );
    return `Idle \`researcher watch\` (${CORPUS_DOCS} files in 20 folders, nothing changing): ${used.toFixed(2)} CPU s over ${idleSeconds} s = ${percent.toFixed(3)} % of one core.`;
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

const rows = [...(await measure("bm25", undefined)), ...(await measure("glove", { model: GLOVE }))];
const idle = await idleCpu();
const body = [
  `Save to searchable with the default debounce (${DEBOUNCE_MS} ms, included), a ${CORPUS_DOCS}-document repository, the watcher in process.`,
  "",
  table(["vectors", "change", "p50", "p95"], rows),
  "",
  idle,
].join("\n");
console.log(`\n${body}`);
if (argv.includes("--write")) writeSection("watch", "Watch mode", "bun bench/watch.ts --write", body);
