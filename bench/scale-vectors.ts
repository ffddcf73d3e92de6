/**
 * Vector search at scale (issue 17), run by `bun bench/scale.ts vectors [100k|300k|1m] [--uniform] [--keep <dir>]`.
 *
 * A repository of `fragments` synthetic fragments is written into a real index.db through the Store (documents of
 * 10 fragments, their FTS rows and one 384-d vector each), bypassing only discovery, conversion, chunking and
 * embedding: the vectors come from a seeded generator instead of a model. Then, through src/search/vectors.ts:
 * `syncVectorIndex` (build time, file bytes), `searchVectors` warm (p50/p95, recall@10 against an exact scan of
 * the f32 vectors), and the compiled executable's `search --mode vector` in a fresh process per query, whose
 * query vectors come from a stand-in OpenAI-compatible server in this process.
 *
 * Vectors: real embeddings have a low intrinsic dimension, so by default they are a mixture of 1,000 Gaussian
 * clusters in a random 48-d subspace of R^384, plus isotropic noise, normalised; queries are fresh points of the
 * same mixture with a little more noise (held out: never indexed). `--uniform` draws every vector and query
 * uniformly from the sphere instead, the case with no structure at all that no graph handles well.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../build.ts";
import { chooseModel, EmbedderCache } from "../src/embed/embedder.ts";
import { registerRepository } from "../src/repos.ts";
import { Store } from "../src/store/store.ts";
import { annPath, searchVectors, syncVectorIndex } from "../src/search/vectors.ts";
import { table, writeSection } from "./report.ts";
import { seeded } from "../src/random.ts";
import { runExe } from "./scale.ts";
import { percentile } from "./scifact.ts";

const DIMS = 384;
/** Held-out queries, and fresh processes per cold variant; fewer where a search takes seconds (an exact scan). */
const QUERIES = Number(process.env.SCALE_QUERIES ?? 300);
const COLD_RUNS = Number(process.env.SCALE_COLD_RUNS ?? 10);
const FRAGMENTS_PER_DOCUMENT = 10;
const MIXTURE = { rank: 48, clusters: 1000, spread: 1.0, noise: 0.8, queryNoise: 0.9 };

/** Seeded vectors: `count` points, then `QUERIES` held-out queries, from the mixture or uniform on the sphere. */
function generator(uniform: boolean): (noiseExtra?: number) => Float32Array {
  const random = seeded(20261123);
  const gaussian = () => Math.sqrt(-2 * Math.log(random() || Number.MIN_VALUE)) * Math.cos(2 * Math.PI * random());
  const { rank, clusters, spread, noise } = MIXTURE;
  const basis = Float32Array.from({ length: rank * DIMS }, () => gaussian() / Math.sqrt(rank));
  const centres = Float32Array.from({ length: clusters * rank }, gaussian);
  const z = new Float32Array(rank);
  return (noiseLevel = noise) => {
    const v = new Float32Array(DIMS);
    if (uniform) for (let d = 0; d < DIMS; d++) v[d] = gaussian();
    else {
      const c = Math.floor(random() * clusters);
      for (let r = 0; r < rank; r++) z[r] = centres[c * rank + r]! + spread * gaussian();
      for (let d = 0; d < DIMS; d++) {
        let sum = noiseLevel * gaussian();
        for (let r = 0; r < rank; r++) sum += z[r]! * basis[r * DIMS + d]!;
        v[d] = sum;
      }
    }
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
}

/** Fragment i (id i + 1 in a fresh index.db) has vector i of the generator. */
function fillStore(dir: string, matrix: Float32Array, count: number, model: { id: string; provider: string; fingerprint: string }): void {
  const store = Store.open(dir, { create: true });
  const batch = 10_000;
  for (let start = 0; start < count; start += batch) {
    store.transaction(() => {
      for (
        let doc = start / FRAGMENTS_PER_DOCUMENT;
        doc < (start + batch) / FRAGMENTS_PER_DOCUMENT && doc * FRAGMENTS_PER_DOCUMENT < count;
        doc++
      ) {
        const first = doc * FRAGMENTS_PER_DOCUMENT;
        const fragments = Array.from({ length: FRAGMENTS_PER_DOCUMENT }, (_, seq) => ({
          seq,
          text: `fragment ${first + seq}`,
          startLine: seq + 1,
          endLine: seq + 1,
          headings: [],
          page: null,
          pageEnd: null,
        }));
        const path = `${String(Math.floor(doc / 1000)).padStart(4, "0")}/${doc}.md`;
        store.replaceDocument(
          { path, hash: `h${doc}`, size: 1, mtimeMs: 0, ctimeMs: null, ino: null, title: `document ${doc}`, format: "md", metadata: {} },
          fragments,
          fragments.map((_, seq) => `v${first + seq}`),
          false,
        );
      }
      const end = Math.min(start + batch, count);
      store.embeddings.insert(
        Array.from({ length: end - start }, (_, i) => ({
          textHash: `v${start + i}`,
          vector: matrix.subarray((start + i) * DIMS, (start + i + 1) * DIMS),
        })),
      );
    });
    if ((start + batch) % 100_000 === 0) console.log(`stored ${start + batch} fragments`);
  }
  store.transaction(() => {
    store.embeddings.setModel({ ...model, dims: DIMS });
    store.embeddings.bumpGeneration();
  });
  store.close();
}

const ms = (v: number) => `${v.toFixed(2)} ms`;
const p50p95 = (values: number[]) => `p50 ${ms(percentile(values, 50))}, p95 ${ms(percentile(values, 95))}`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

export async function vectorScale(size: string, count: number, uniform: boolean, keepAt: string | undefined): Promise<void> {
  const root = keepAt ?? mkdtempSync(join(tmpdir(), "researcher-scale-vectors-"));
  const kind = uniform ? "uniform" : "mixture";
  const home = join(root, `home-vectors-${kind}-${size}`);
  const docs = join(root, "empty");
  mkdirSync(docs, { recursive: true });

  let started = performance.now();
  const next = generator(uniform);
  const matrix = new Float32Array(count * DIMS);
  for (let i = 0; i < count; i++) matrix.set(next(), i * DIMS);
  const queries = Array.from({ length: QUERIES }, () => next(MIXTURE.queryNoise));
  console.log(`generated ${count} + ${QUERIES} ${kind} vectors in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // The stand-in embedding server: "query <n>" is held-out query n (any other text, e.g. the probe, gets query 0).
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const { input } = (await request.json()) as { input: string[] };
      return Response.json({
        data: input.map((text, index) => ({ index, embedding: Array.from(queries[Number(/query (\d+)/.exec(text)?.[1] ?? 0)]!) })),
      });
    },
  });
  const env = { OPENAI_API_KEY: "sk-local" };
  process.env.OPENAI_API_KEY = env.OPENAI_API_KEY;
  const embedding = { provider: "openai" as const, model: `synthetic-${kind}`, openai_url: `http://127.0.0.1:${server.port}` };

  const repoFile = join(root, `repo-vectors-${kind}-${size}.json`);
  if (!existsSync(repoFile)) {
    rmSync(home, { recursive: true, force: true });
    const repo = registerRepository(home, { name: "vectors", path: docs, embedding });
    const embedder = await new EmbedderCache().get(home, chooseModel({}, { ...embedding }));
    started = performance.now();
    fillStore(repo.dir, matrix, count, { id: embedder.info.id, provider: embedder.info.provider, fingerprint: embedder.fingerprint });
    await embedder.dispose();
    const written = [
      "index.db written through the Store (documents, fragments, FTS, vectors)",
      `${((performance.now() - started) / 1000).toFixed(0)} s, ${mib(statSync(join(repo.dir, "index.db")).size)}`,
    ];
    writeFileSync(repoFile, JSON.stringify({ dir: repo.dir, rows: [written] }));
  } else {
    console.log(`reusing the index.db in ${home}`);
  }
  const saved = JSON.parse(readFileSync(repoFile, "utf8")) as { dir: string; rows: (string | number)[][] };
  const rows = [...saved.rows];
  const dir = saved.dir;
  // The server's port changes from run to run: point the repository at this run's.
  const repoConfig = join(home, "config.yaml");
  writeFileSync(repoConfig, readFileSync(repoConfig, "utf8").replace(/http:\/\/127\.0\.0\.1:\d+/g, embedding.openai_url));

  const store = Store.open(dir);
  // The build's own memory: this process's peak RSS is reset (Linux: clear_refs 5) and read back after the build,
  // less what the process held before it (the benchmark's own copy of every vector, for the truth below).
  const rssBefore = memoryKb("VmRSS");
  writeFileSync("/proc/self/clear_refs", "5");
  started = performance.now();
  const built = await syncVectorIndex(store, dir, DIMS);
  const buildSeconds = (performance.now() - started) / 1000;
  const buildPeak = memoryKb("VmHWM");
  const fileBytes = statSync(annPath(dir)).size;
  rows.push(
    [
      built
        ? "syncVectorIndex: read vectors, build HNSW, probe recall, save, checksum"
        : "syncVectorIndex (file already verified: not rebuilt)",
      `${buildSeconds.toFixed(1)} s`,
    ],
    [
      "process RSS before the build / peak during it (the difference is the build's)",
      `${mib(rssBefore * 1024)} / ${mib(buildPeak * 1024)} (+${mib((buildPeak - rssBefore) * 1024)})`,
    ],
    ["vectors.usearch", `${mib(fileBytes)} (${fileBytes} bytes); build-time probe recall@10 ${store.meta.get("ann_recall")}`],
  );
  console.log(table(["measure", "result"], rows));

  // Truth: an exact scan of the f32 vectors (usearch's brute force, native).
  const { exactSearch, MetricKind } = await import("usearch");
  const flatQueries = new Float32Array(QUERIES * DIMS);
  for (const [i, q] of queries.entries()) flatQueries.set(q, i * DIMS);
  const exact = exactSearch(matrix, flatQueries, DIMS, 10, MetricKind.Cos) as unknown as { keys: BigUint64Array };
  const truth = queries.map((_, q) => new Set(Array.from(exact.keys.subarray(q * 10, q * 10 + 10), (key) => Number(key) + 1)));
  const recall = (hits: { id: number }[][]) =>
    hits.reduce((sum, h, q) => sum + h.slice(0, 10).filter((x) => truth[q]!.has(x.id)).length, 0) / (10 * hits.length);

  const warm = async (k: number) => {
    const times: number[] = [];
    const hits: { id: number }[][] = [];
    for (const q of queries) await searchVectors(store, dir, q, k); // warm-up: mapping, page cache
    for (const q of queries) {
      const t = performance.now();
      hits.push((await searchVectors(store, dir, q, k)).hits);
      times.push(performance.now() - t);
    }
    return { times, recall: recall(hits) };
  };
  const at10 = await warm(10);
  const at100 = await warm(100);
  rows.push(
    [`searchVectors warm, k = 10 (${QUERIES} held-out queries)`, `${p50p95(at10.times)}; recall@10 ${at10.recall.toFixed(3)}`],
    ["searchVectors warm, k = 100 (hybrid's depth)", `${p50p95(at100.times)}; recall@10 of its top 10 ${at100.recall.toFixed(3)}`],
  );
  store.close();
  // The same file searched at other expansions (usearch reads it from the constructor, not the file).
  const { Index, ScalarKind } = await import("usearch");
  for (const expansion of [64, 128, 256, 512, 1024]) {
    const index = new Index(DIMS, MetricKind.Cos, ScalarKind.F16, 16, 0, expansion);
    index.view(annPath(dir));
    const times: number[] = [];
    const hits = queries.map((q) => {
      const t = performance.now();
      const found = Array.from(index.search(q, 10, 1).keys, (key) => ({ id: Number(key) }));
      times.push(performance.now() - t);
      return found;
    });
    rows.push([`usearch alone, search expansion ${expansion}, k = 10`, `${p50p95(times)}; recall@10 ${recall(hits).toFixed(3)}`]);
  }
  console.log(table(["measure", "result"], rows));

  // A fresh process per query: the compiled executable, page cache warm, then with the ANN file and index.db
  // dropped from the page cache first (dd iflag=nocache), which is what a search after a reboot would pay.
  const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });
  const cli = (q: number) => runExe(exe, home, ["search", "--json", "--mode", "vector", "-n", "10", "--", `query ${q}`], undefined, env);
  await cli(0);
  const cached = [];
  for (let q = 0; q < COLD_RUNS; q++) cached.push(await cli(q));
  const evicted = [];
  for (let q = 0; q < COLD_RUNS; q++) {
    for (const file of [annPath(dir), join(dir, "index.db")])
      Bun.spawnSync(["dd", `if=${file}`, "iflag=nocache", "count=0", "status=none"]);
    evicted.push(await cli(q));
  }
  const agree = JSON.parse(cached[0]!.stdout).results.length === 10;
  rows.push(
    [
      `cold CLI search --mode vector, page cache warm (${COLD_RUNS} queries)`,
      `${p50p95(cached.map((r) => r.ms))}; peak RSS ${mib(Math.max(...cached.map((r) => r.rssKb)) * 1024)}${agree ? "" : " (FEWER THAN 10 RESULTS)"}`,
    ],
    [
      "cold CLI search, ANN file and index.db evicted from the page cache",
      `${p50p95(evicted.map((r) => r.ms))}; peak RSS ${mib(Math.max(...evicted.map((r) => r.rssKb)) * 1024)}`,
    ],
  );
  server.stop(true);

  const report = table(["measure", "result"], rows);
  console.log(report);
  const data = uniform
    ? "vectors and queries drawn uniformly from the unit sphere in R^384 (no structure: the hardest case, unlike any real model's)"
    : `a mixture of ${MIXTURE.clusters} Gaussian clusters (centres N(0, 1), spread ${MIXTURE.spread}) in a random ${MIXTURE.rank}-d subspace of R^384 plus isotropic noise ${MIXTURE.noise} per dimension, normalised; queries are ${QUERIES} fresh points of the mixture with noise ${MIXTURE.queryNoise} (never indexed)`;
  writeSection(
    `scale-vectors-${kind}-${size}`,
    `Scale: ${size} vectors of 384 dimensions (${kind}), ANN`,
    `${process.env.SCALE_QUERIES ? `SCALE_QUERIES=${QUERIES} SCALE_COLD_RUNS=${COLD_RUNS} ` : ""}bun bench/scale.ts vectors ${size}${uniform ? " --uniform" : ""}`,
    `${report}\n\nVectors: ${data}. The index.db is written through the Store (only discovery, conversion, chunking and embedding are bypassed); the ANN file is built and searched by src/search/vectors.ts; recall@10 is against an exact f32 cosine scan. The cold CLI embeds its query through a stand-in OpenAI-compatible server in the benchmark process (~1 ms). Load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(", ")} (2 cores, shared with other jobs).`,
  );
  if (!keepAt) rmSync(root, { recursive: true, force: true });
}

/** A field of /proc/self/status, in KiB (VmRSS now, VmHWM the peak since the last reset). */
function memoryKb(field: "VmRSS" | "VmHWM"): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);
}
