/**
 * Soak test of the compiled executable (not in CI): SIGKILLs at random moments of fresh, incremental, --rebuild and
 * --embeddings-only runs, each followed by a normal run and compared with a clean index of the same files; two
 * writers racing; searches during index runs; a run on a full disk. Usage: bun bench/soak.ts [kills=30] [races=50]
 */
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../build.ts";
import { table, writeSection } from "./report.ts";
import { requireShared, SCIFACT, SHARED } from "./scifact.ts";

requireShared();
const KILLS = Number(process.argv[2] ?? 30);
const RACES = Number(process.argv[3] ?? 50);
const GLOVE = join(SHARED, "models/glove-6b-100d-sif");
const root = mkdtempSync(join(tmpdir(), "researcher-soak-"));
const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });
const docs = join(root, "docs");
mkdirSync(docs);
const abstracts = readFileSync(join(SCIFACT, "corpus.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .slice(0, 2000)
  .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
let edition = 0;
const write = (a: (typeof abstracts)[number], extra = "") =>
  writeFileSync(join(docs, `${a._id}.md`), `# ${a.title}\n\n${a.text}${extra}\n`);
for (const a of abstracts) write(a);

const env = (home: string) => ({ PATH: "/usr/bin:/bin", RESEARCHER_HOME: home, HOME: home });
const run = (home: string, args: string[]) => {
  const proc = Bun.spawnSync([exe, ...args], { env: env(home) });
  return { code: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
};
const home = join(root, "home");
const referenceHome = join(root, "reference");
for (const h of [home, referenceHome]) run(h, ["repo", "add", "soak", docs, "--embedding-model", GLOVE]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What an index holds, as comparable text: every document's path and hash, every fragment's text hash and vector. */
function snapshot(h: string): string {
  const db = new Database(join(h, "repositories/soak/index.db"), { readonly: true });
  try {
    const docs = db.query<{ path: string; hash: string }, []>("SELECT path, hash FROM documents ORDER BY path").all();
    const fragments = db.query<{ n: number }, []>("SELECT count(*) AS n FROM fragments").get()!.n;
    const vectors = db.query<{ n: number }, []>("SELECT count(*) AS n FROM fragments f JOIN embeddings e USING (text_hash)").get()!.n;
    return JSON.stringify({ docs, fragments, vectors });
  } finally {
    db.close();
  }
}

/** A clean index of the files as they are now (rebuilt only when they changed). */
let reference = { edition: -1, snapshot: "" };
function referenceSnapshot(): string {
  if (reference.edition === edition) return reference.snapshot;
  rmSync(join(referenceHome, "repositories/soak"), { recursive: true, force: true });
  run(referenceHome, ["index", "soak", "--quiet"]);
  reference = { edition, snapshot: snapshot(referenceHome) };
  return reference.snapshot;
}

// ---- kills ---------------------------------------------------------------------------------------------------
const operations = ["fresh", "incremental", "rebuild", "embeddings-only"] as const;
const killRows = new Map<string, { kills: number; losses: number; verifyFailures: number }>(
  operations.map((o) => [o, { kills: 0, losses: 0, verifyFailures: 0 }]),
);
run(home, ["index", "soak", "--quiet"]);
for (let i = 0; i < KILLS; i++) {
  const operation = operations[i % operations.length]!;
  if (operation === "fresh") rmSync(join(home, "repositories/soak"), { recursive: true, force: true });
  if (operation === "incremental") {
    edition++;
    for (const a of abstracts.filter((_, j) => j % 40 === i % 40)) write(a, `\n\nEdition ${edition}.`);
  }
  const args = [
    "index",
    "soak",
    "--quiet",
    ...(operation === "rebuild" ? ["--rebuild"] : operation === "embeddings-only" ? ["--embeddings-only"] : []),
  ];
  const proc = Bun.spawn([exe, ...args], { env: env(home), stdout: "ignore", stderr: "ignore" });
  await sleep(50 + Math.random() * (operation === "incremental" ? 600 : 2500));
  proc.kill("SIGKILL");
  await proc.exited;
  const row = killRows.get(operation)!;
  row.kills++;
  run(home, ["index", "soak", "--quiet"]); // the next normal run recovers
  if (snapshot(home) !== referenceSnapshot()) row.losses++;
  if (run(home, ["verify", "soak"]).code !== 0) row.verifyFailures++;
  console.log(`kill ${i + 1}/${KILLS} during ${operation}: ${row.losses ? "MISMATCH" : "ok"}`);
}

// ---- two writers racing ------------------------------------------------------------------------------------
let doubleLocks = 0;
let raceErrors = 0;
for (let i = 0; i < RACES; i++) {
  edition++;
  const touched = abstracts.filter((_, j) => j % 100 === i % 100);
  for (const a of touched) write(a, `\n\nRace ${edition}.`);
  const racers = [0, 1].map(() =>
    Bun.spawn([exe, "index", "soak", "--json", "--no-embed"], { env: env(home), stdout: "pipe", stderr: "pipe" }),
  );
  const results = await Promise.all(
    racers.map(async (p) => ({ code: await p.exited, out: await new Response(p.stdout).text(), err: await new Response(p.stderr).text() })),
  );
  let indexed = 0;
  for (const r of results) {
    if (r.code === 0) indexed += JSON.parse(r.out).indexed;
    else if (!r.err.includes("is being indexed by process")) raceErrors++;
  }
  if (indexed > touched.length) doubleLocks++; // both wrote the same changes: both held the lock
}
run(home, ["index", "soak", "--quiet"]);

// ---- searches during index runs ----------------------------------------------------------------------------
let searches = 0;
let shortPages = 0;
let searchErrors = 0;
for (const args of [["--rebuild", "--no-embed"], ["--no-embed"], ["--rebuild", "--no-embed"]]) {
  edition++;
  for (const a of abstracts.filter((_, j) => j % 10 === edition % 10)) write(a, `\n\nDuring ${edition}.`);
  const indexer = Bun.spawn([exe, "index", "soak", "--quiet", ...args], { env: env(home) });
  let running = true;
  void indexer.exited.then(() => (running = false));
  while (running) {
    // Spawned asynchronously: the loop must yield for the indexer's exit to be seen.
    const search = Bun.spawn([exe, "search", "cells", "--mode", "bm25", "-n", "10", "--json"], {
      env: env(home),
      stdout: "pipe",
      stderr: "ignore",
    });
    const [code, stdout] = await Promise.all([search.exited, new Response(search.stdout).text()]);
    searches++;
    if (code !== 0) searchErrors++;
    else if (JSON.parse(stdout).results.length < 10) shortPages++;
  }
}

// ---- a full disk -------------------------------------------------------------------------------------------
const mnt = join(root, "tmpfs");
mkdirSync(mnt);
let diskFull = "not run (mount failed)";
if (Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", mnt]).exitCode === 0) {
  const small = join(root, "small");
  mkdirSync(small);
  writeFileSync(join(small, "a.md"), "intact words\n");
  const tiny = join(mnt, "home");
  run(tiny, ["repo", "add", "intact", small, "--no-embed"]);
  run(tiny, ["index", "intact"]);
  run(tiny, ["repo", "add", "soak", docs, "--no-embed"]);
  const full = run(tiny, ["index", "soak"]);
  const intact = JSON.parse(run(tiny, ["search", "intact", "--json"]).stdout).total === 1;
  const removed = run(tiny, ["repo", "remove", "soak"]).code === 0;
  diskFull = `exit ${full.code}, \`${full.stderr.split("\n")[0]}\`; the other repository ${intact ? "still answers" : "FAILS"}; \`repo remove\` ${removed ? "works" : "FAILS"}`;
  Bun.spawnSync(["umount", "--lazy", mnt]);
}

const losses = [...killRows.values()].reduce((s, r) => s + r.losses, 0);
writeSection(
  "soak",
  "Soak: kills, racing writers, searches during index runs, a full disk",
  `bun bench/soak.ts ${KILLS} ${RACES}`,
  `The executable over 2,000 SciFact abstracts with the GloVe model. After each SIGKILL (at a random moment: 50 ms to
2.5 s into the run, 0.6 s for incremental runs) a normal \`index\` runs, and the index is compared with a clean index
of the same files (every document's path and hash, fragment count, fragments with vectors); \`verify\` must pass.

${table(
  ["killed during", "kills", "index differs from a clean one", "verify fails"],
  [...killRows].map(([op, r]) => [op, r.kills, r.losses, r.verifyFailures]),
)}

- Two writers racing, ${RACES} times (each after editing 20 files): runs where both wrote the same changes (two holders
  of the lock): ${doubleLocks}; errors other than "being indexed": ${raceErrors}.
- Searches during index runs (two \`--rebuild\`, one incremental): ${searches} searches, ${searchErrors} errors, ${shortPages}
  pages shorter than \`-n 10\`.
- Full disk (home on a 6 MB tmpfs, 2,000 abstracts): ${diskFull}.

Totals: ${losses} losses, ${doubleLocks} double locks, ${searchErrors + shortPages} failed searches.`,
);
rmSync(root, { recursive: true, force: true });
