/**
 * What a local model folder holds, as a hash of its content: the part of a model's fingerprint that tells two folders
 * apart, whatever their names and paths. A model's name and weights' size told them apart before, so two fine-tuned
 * checkpoints of one architecture in `exp1/model` and `exp2/model` were one model, and a rebuild kept the vectors of
 * the other (s28 code review #1).
 *
 * Hashed whole: the tokenizer's files (tokenizer.json, tokenizer_config.json), which decide the ids a text becomes,
 * as parsed JSON (how a file is formatted is no part of the model).
 * The weights (the ONNX file of the chosen dtype and its external data, or model2vec's table) are hashed by their
 * size, their first and last MiB (an ONNX file's graph and the first and last tensors; model2vec's header) and 16
 * samples of 64 KiB spread evenly between: a checkpoint trained on is another in nearly every weight, so each sample
 * tells it apart, and only two files of one size that differ nowhere in those 3 MiB pass as one. Reading the whole
 * weights (up to gigabytes) at every command that checks a model would cost more than the command. config.json is not
 * hashed: in an ONNX folder the graph is the network, and of the config's limits the one that changes vectors (the
 * token limit) is part of the fingerprint on its own; GloVe's config run as a table or through the ONNX runtime gives
 * the same vectors (static-embedder.ts).
 *
 * A folder's files are hashed once per process while their stamps (device, inode, size, change and modification
 * times) stay the same, so a long-lived server that checks its model at each search stats them only.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { systemCode } from "../errors.ts";
import { readModelJson } from "./static-embedder.ts";

/** The tokenizer's files transformers.js reads: what turns a text into the ids the weights are looked up by. */
const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"];
const END_BYTES = 2 ** 20;
const SAMPLES = 16;
const SAMPLE_BYTES = 64 * 2 ** 10;

const hashed = new Map<string, string>();

/** The content hash of the model in `folder` whose weights are `weights` (none: a model with no weights file yet). */
export function modelContent(folder: string, weights: string | null): string {
  const weightFiles = weights ? [weights, `${weights}_data`] : [];
  const files = [...TOKENIZER_FILES.map((name) => join(folder, name)), ...weightFiles];
  const key = JSON.stringify(files.map(stampOf));
  let content = hashed.get(key);
  if (content === undefined) {
    const hasher = new Bun.CryptoHasher("sha256");
    for (const name of TOKENIZER_FILES) hasher.update(`${name}\0${wholeFile(folder, name)}\0`);
    // Hashed by role, never by path: the content at any path is the same model.
    for (const [i, file] of weightFiles.entries()) hasher.update(`weights ${i}\0`).update(sampledFile(file));
    content = hasher.digest("hex");
    hashed.set(key, content);
  }
  return content;
}

/**
 * What changes when a file is written or replaced: its identity, size and times (the change time cannot be set). A
 * file that cannot be looked at (a loop of links) is stamped with why: thrown, it failed every index run as the
 * repository's error, where the model's load says what is wrong and leaves the embeddings pending (s28b hostile F1).
 */
function stampOf(file: string): string | null {
  try {
    const stats = statSync(file, { bigint: true, throwIfNoEntry: false });
    return stats ? `${file}:${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}` : null;
  } catch (error) {
    return `${file}:${systemCode(error) || "unreadable"}`;
  }
}

/**
 * A tokenizer file's JSON, written one way (no white space, one escaping): the same tokenizer saved again reformatted
 * was another model, and held every index run of its repositories (s28b hostile F2). tokenizer_config.json, a few KB
 * the Hub edits key by key, also has its keys sorted; sorting tokenizer.json's (a vocabulary of 30,000–400,000 keys)
 * cost 50–120 ms at every command that checks a model, and a tool that reorders it is rare. Text that is no JSON is
 * hashed as it is; a missing or unreadable file as such (the load says what is wrong).
 */
function wholeFile(folder: string, name: string): string {
  let text: string;
  try {
    text = readModelJson(folder, name);
  } catch {
    return "\0unreadable";
  }
  try {
    return JSON.stringify(JSON.parse(text), name === "tokenizer_config.json" ? sortedKeys : undefined);
  } catch {
    return text;
  }
}

/** JSON.stringify's replacer that writes an object's keys in sorted order (arrays keep theirs). */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A weights file's size and sampled bytes, read without blocking (a FIFO in its place must not hang the check). */
function sampledFile(file: string): Uint8Array | string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return "none\0";
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return "not a regular file\0";
    const chunks = [Buffer.from(`${stats.size}\0`), readAt(fd, 0, END_BYTES), readAt(fd, Math.max(0, stats.size - END_BYTES), END_BYTES)];
    for (let i = 1; i <= SAMPLES; i++) chunks.push(readAt(fd, Math.floor((stats.size * i) / (SAMPLES + 1)), SAMPLE_BYTES));
    return Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let read = 0;
  for (let n = -1; n !== 0 && read < length; read += n) n = readSync(fd, buffer, read, length - read, position + read);
  return buffer.subarray(0, read);
}
