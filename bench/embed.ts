/**
 * Embedding throughput: researcher's embedder against a bare onnxruntime session on the same tokenized batches,
 * with the MiniLM-architecture model (random weights: speed only). Usage: bun bench/embed.ts
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { chooseModel, loadEmbedder } from "../src/embed/embedder.ts";
import { chunkDocument } from "../src/index/chunk.ts";
import { convertMarkdown } from "../src/convert/convert.ts";
import { embeddingText } from "../src/index/embed-pass.ts";
import { HEADING_SEPARATOR } from "../src/store/store.ts";
import { table, writeSection } from "./report.ts";
import { requireShared, SCIFACT, unpackRandomModel } from "./scifact.ts";

requireShared();
const root = mkdtempSync(join(tmpdir(), "researcher-embed-"));
const model = unpackRandomModel(root);

// The first 512 SciFact fragments, exactly as the indexer would embed them.
const texts: string[] = [];
for (const line of readFileSync(join(SCIFACT, "corpus.jsonl"), "utf8").split("\n")) {
  if (!line || texts.length >= 512) break;
  const doc = JSON.parse(line) as { title: string; text: string };
  const converted = convertMarkdown(`# ${doc.title}\n\n${doc.text}\n`, "x");
  for (const f of chunkDocument(converted)) texts.push(embeddingText(converted.title, f.headings.join(HEADING_SEPARATOR), f.text));
}
const texts512 = texts.slice(0, 512);
const BATCH = 16;

const { AutoTokenizer } = await import("@huggingface/transformers");
const ort = await import("onnxruntime-node");
const tokenizer = await AutoTokenizer.from_pretrained(model);
const order = texts512.map((_, i) => i).sort((a, b) => texts512[a]!.length - texts512[b]!.length);
const batches = [];
for (let i = 0; i < order.length; i += BATCH) {
  const slice = order.slice(i, i + BATCH).map((j) => texts512[j]!);
  batches.push(tokenizer(slice, { padding: true, truncation: true, max_length: 512 }));
}
const tokens = batches.reduce(
  (sum, b) => sum + Number((b.attention_mask.data as BigInt64Array).reduce((a: bigint, v: bigint) => a + v, 0n)),
  0,
);

const rows: (string | number)[][] = [];
for (const dtype of ["q8", "fp32"]) {
  const file = join(model, "onnx", dtype === "q8" ? "model_quantized.onnx" : "model.onnx");
  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: availableParallelism(), interOpNumThreads: 1 });
  const feeds = batches.map((b) => {
    const feed: Record<string, InstanceType<typeof ort.Tensor>> = {};
    for (const name of session.inputNames) {
      const t = (b as unknown as Record<string, { data: BigInt64Array; dims: number[] }>)[name]!;
      feed[name] = new ort.Tensor("int64", t.data, t.dims);
    }
    return feed;
  });
  await session.run(feeds[0]!); // warm-up
  let start = performance.now();
  for (const feed of feeds) await session.run(feed);
  const bare = (performance.now() - start) / 1000;
  await session.release();

  const embedder = await loadEmbedder(root, chooseModel({ dtype: dtype as "q8", batch_size: BATCH }, {}, model));
  await embedder.embed(texts512.slice(0, BATCH), "document"); // warm-up
  start = performance.now();
  await embedder.embed(texts512, "document");
  const ours = (performance.now() - start) / 1000;
  await embedder.dispose();
  const rate = (s: number) => `${Math.round(texts512.length / s)} fragments/s, ${Math.round(tokens / s)} tokens/s`;
  rows.push([dtype, rate(ours), rate(bare), `${Math.round((bare / ours) * 100)}%`]);
  console.log(rows.at(-1));
}
const result = table(["dtype", "researcher embedder", "bare onnxruntime session", "researcher / bare"], rows);
console.log(result);
writeSection(
  "embed",
  "Embedding throughput (MiniLM-L6 architecture, random weights)",
  "bun bench/embed.ts",
  `${result}\n\n${texts512.length} SciFact fragments (${tokens} tokens), batches of ${BATCH} sorted by length, ${availableParallelism()} threads. The bare figure times only \`session.run\` on the same tokenized batches; researcher's figure includes tokenization, pooling and normalisation. Target: ≥ 90%.`,
);
rmSync(root, { recursive: true, force: true });
