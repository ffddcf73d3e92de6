/**
 * Static-embedding models: GloVe-SIF read as a token table (the static path) against the same files run through
 * the ONNX runtime as a transformer (identical vectors), on SciFact's fragments — in-process throughput, a full
 * index run with the executable, and cold hybrid searches. Usage: bun bench/static.ts
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildExecutable } from "../build.ts";
import { chunkDocument } from "../src/index/chunk.ts";
import { convertMarkdown } from "../src/convert/convert.ts";
import { loadEmbedder } from "../src/embed/embedder.ts";
import { embeddingText } from "../src/index/embed-pass.ts";
import { HEADING_SEPARATOR } from "../src/store/store.ts";
import { GLOVE, writeGloveThroughOnnx } from "../test/model-fixtures.ts";
import { table, writeSection } from "./report.ts";
import { percentile, readQueries, requireShared, SCIFACT, writeCorpus } from "./scifact.ts";

requireShared();
const root = mkdtempSync(join(tmpdir(), "researcher-static-"));
const onnxGlove = writeGloveThroughOnnx(join(root, "onnx"));

// Every SciFact fragment, exactly as the indexer embeds it.
const texts: string[] = [];
for (const line of readFileSync(join(SCIFACT, "corpus.jsonl"), "utf8").split("\n")) {
  if (!line) continue;
  const doc = JSON.parse(line) as { title: string; text: string };
  const converted = convertMarkdown(`# ${doc.title}\n\n${doc.text}\n`, "x");
  for (const f of chunkDocument(converted)) texts.push(embeddingText(converted.title, f.headings.join(HEADING_SEPARATOR), f.text));
}

const models = [
  { name: "GloVe-SIF as a token table (static)", folder: GLOVE },
  { name: "the same files through onnxruntime", folder: onnxGlove },
];
const rows: (string | number)[][] = [];
const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });
const queries = readQueries("test").slice(0, 30);
writeCorpus(join(root, "scifact"));

for (const { name, folder } of models) {
  const home = join(root, `home-${rows.length}`);
  let start = performance.now();
  const embedder = await loadEmbedder(home, { provider: "local", model: folder });
  const firstLoad = performance.now() - start;
  await embedder.dispose();
  start = performance.now();
  const loaded = await loadEmbedder(home, { provider: "local", model: folder });
  const load = performance.now() - start;
  start = performance.now();
  await loaded.embed(texts, "document");
  const seconds = (performance.now() - start) / 1000;
  await loaded.dispose();

  const env = { PATH: "/usr/bin:/bin", RESEARCHER_HOME: home, RESEARCHER_MODEL_PATH: folder };
  const run = (args: string[]) => {
    const proc = Bun.spawnSync([exe, ...args], { env });
    if (!proc.success) throw new Error(proc.stderr.toString());
    return proc.stdout.toString();
  };
  run(["repo", "add", "scifact", join(root, "scifact")]);
  start = performance.now();
  const summary = JSON.parse(run(["index", "scifact", "--json", "--quiet"]));
  const indexSeconds = (performance.now() - start) / 1000;
  const cold: number[] = [];
  for (const q of queries) {
    start = performance.now();
    run(["search", "--json", "--mode", "hybrid", "--", q.text]);
    cold.push(performance.now() - start);
  }
  rows.push([
    name,
    `${Math.round(firstLoad)} / ${Math.round(load)} ms`,
    Math.round(texts.length / seconds).toLocaleString("en"),
    `${indexSeconds.toFixed(1)} s (${summary.embedded.toLocaleString("en")} fragments)`,
    `${percentile(cold, 50).toFixed(0)} / ${percentile(cold, 95).toFixed(0)} ms`,
  ]);
  console.log(rows.at(-1));
}

const body = `${table(["model", "load: first / later", "fragments/s embedded, in-process", "fresh index with embeddings, executable", "cold hybrid search p50 / p95"], rows)}

${texts.length.toLocaleString("en")} SciFact fragments (5,183 abstracts). Both rows are the same model with the same vectors and fingerprint
(\`test/static-embedder.test.ts\` checks that the two paths agree to 1e-5): the first reads GloVe-SIF's table once
out of its ONNX file (the "first" load, then cached under \`models/.tables/\`) and embeds without the ONNX runtime; the
second runs the ONNX graph. GloVe-SIF's graph is a single Gather, so onnxruntime is already fast here; against a
real transformer the static path's gain is the ratio to the MiniLM-size figures in "Embedding throughput" above.
Cold search = a new process per query (30 SciFact test queries), loading the model each time.`;
writeSection("static-models", "Static-embedding models (GloVe-SIF as a token table vs through onnxruntime)", "bun bench/static.ts", body);
rmSync(root, { recursive: true, force: true });
