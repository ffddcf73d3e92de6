/** Test fixtures: temp folders written by the test, the CLI run as a real subprocess, ../shared paths. */
import { chmodSync, existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CodeLanguage } from "../src/convert/code-languages.ts";
import type { CodeOutlineOptions } from "../src/convert/code-outline.ts";
import { ResearcherError } from "../src/errors.ts";
import { codeFragments } from "../src/index/code-chunk.ts";
import { registerRepository } from "../src/repos.ts";
import type { Fragment } from "../src/store/store.ts";
import { GLOVE, writeGloveThroughOnnx } from "./model-fixtures.ts";

export const ROOT = resolve(import.meta.dir, "..");
export const SHARED = resolve(ROOT, "../shared");
export { GLOVE } from "./model-fixtures.ts";

/** ../shared (corpora and models) beside the checkout. CI always has it; a bare clone may not. */
export const HAS_SHARED = existsSync(SHARED);
const NO_SHARED = `skipped: needs ${SHARED}`;
if (!HAS_SHARED) console.warn(`note: ${SHARED} is missing, so the tests that read its corpora or models are skipped`);

/**
 * `describe` for tests that read ../shared. Without it the block is one skipped test saying so, and its body never
 * runs: bodies read ../shared as they declare their tests (model folders, fixtures).
 */
export function describeShared(label: string, body: () => void): void {
  if (HAS_SHARED) describe(label, body);
  else describe.skip(label, () => test(NO_SHARED, () => {}));
}

/** `test` for a test that reads ../shared: skipped, its name saying why, only when ../shared is missing. */
export function testShared(...[label, fn, options]: Parameters<typeof test>): void {
  if (HAS_SHARED) test(label, fn, options);
  else test.skip(`${label} (${NO_SHARED})`, fn, options);
}

/** GloVe-SIF run through the ONNX runtime as a transformer (see model-fixtures.ts), in a temp folder. */
export const gloveThroughOnnx = () => writeGloveThroughOnnx(tempDir("researcher-onnx-"));

/**
 * Another model than GloVe-SIF in a folder named `name`: its files, each linked, but a tokenizer that gives four words
 * each other's ids, so their vectors differ. A model folder is its content, not its name: GloVe's files under another
 * name are GloVe (s28 code review #1).
 */
export function otherGlove(name: string): string {
  const folder = join(tempDir(), name);
  mkdirSync(folder);
  for (const file of readdirSync(GLOVE)) if (file !== "tokenizer.json") symlinkSync(join(GLOVE, file), join(folder, file));
  const tokenizer = JSON.parse(readFileSync(join(GLOVE, "tokenizer.json"), "utf8"));
  const vocab: Record<string, number> = tokenizer.model.vocab;
  const words = ["violin", "volcano", "saxophone", "glacier"];
  const ids = words.map((word) => vocab[word]!);
  words.forEach((word, i) => {
    vocab[word] = ids[(i + 1) % ids.length]!;
  });
  writeFileSync(join(folder, "tokenizer.json"), JSON.stringify(tokenizer));
  return folder;
}

/** A fresh temp folder, removed when the test file finishes. */
export function tempDir(prefix = "researcher-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Write `{ "a/b.md": "text" }` under `root`. */
export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** Hooks that compile the executable or index a corpus get this long (bun's default hook timeout is 5 s). */
export const HOOK_TIMEOUT = 180_000;

const builds = new Map<string, Promise<string>>();

/**
 * Builds left by test runs that are over: `bun test` does not always run exit handlers (a run cut short never
 * does), and each build is ~180 MB, so they filled /tmp run after run. Each build folder names its process.
 */
function removeStaleBuilds(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(/^researcher-exe-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || isRunning(pid)) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The compiled executable, built once per test run (per variant) into a temp folder outside the repository, so
 * it runs with node_modules unreachable, as on a user's machine. Any user may run it (a test runs it as `nobody`).
 */
export function executable(options: { embedModel?: string } = {}): Promise<string> {
  const key = options.embedModel ?? "";
  let build = builds.get(key);
  if (!build) {
    if (builds.size === 0) removeStaleBuilds();
    const dir = mkdtempSync(join(tmpdir(), `researcher-exe-${process.pid}-`));
    chmodSync(dir, 0o755);
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    build = import("../build.ts").then(({ buildExecutable }) => buildExecutable({ ...options, outfile: join(dir, "researcher") }));
    builds.set(key, build);
  }
  return build;
}

/** A PATH without node_modules/.bin or bun: only the system. */
export const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Only root can switch to `nobody`; tests of unreadable folders need it, since chmod 000 does not stop root. */
export const AS_ROOT = process.getuid?.() === 0;

/** A tmpfs of `size` (`8m`) mounted on `dir`: a disk that can be filled, or a mount that can go away. */
export const mountTmpfs = (dir: string, size = "1m") =>
  Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]).exitCode === 0;
/** Lazily: a process of the test may still hold a file open there. */
export const unmount = (dir: string) => Bun.spawnSync(["umount", "--lazy", dir]).exitCode === 0;

let mounting: boolean | undefined;

/**
 * Whether this process can mount a tmpfs (it needs root, and a container may refuse it to root as well), tried once
 * and only by the files that ask; when it cannot, their tests that mount are skipped, saying so.
 */
export function canMount(file: string, what: string): boolean {
  mounting ??=
    AS_ROOT &&
    (() => {
      const dir = tempDir();
      return mountTmpfs(dir) && unmount(dir);
    })();
  if (!mounting) console.warn(`note: skipping ${what} in ${file}: it needs to mount a tmpfs (root)`);
  return mounting;
}

/**
 * The CLI run as `nobody` (uid 65534) over `base`, a tree that user owns. It is the compiled executable, not
 * src/main.ts: `nobody` cannot reach a checkout in a private folder (as `mktemp -d` makes them).
 */
export async function cliAsNobody(base: string): Promise<(...args: string[]) => { code: number | null; stdout: string; stderr: string }> {
  const exe = await executable();
  return (...args) => {
    const proc = Bun.spawnSync(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe, ...args], {
      env: { HOME: base, RESEARCHER_HOME: join(base, "home"), PATH: SYSTEM_PATH },
    });
    return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
  };
}

/** The command that runs the CLI; the e2e suite swaps in the compiled executable when it has one. */
export let cliCommand: string[] = [process.execPath, join(ROOT, "src/main.ts")];
export function useCliCommand(command: string[]): void {
  cliCommand = command;
}

/**
 * `serve --port 0 …` started with `command` (the CLI or the executable): its URL once it says it listens, what it
 * printed until then, and the process (to kill).
 */
export async function startServe(
  command: string[],
  flags: string[],
  options: { env: Record<string, string>; cwd: string },
): Promise<{ url: string; printed: string; proc: Bun.Subprocess }> {
  const proc = Bun.spawn([...command, "serve", "--port", "0", ...flags], { ...options, stdout: "ignore", stderr: "pipe" });
  const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
  let printed = "";
  while (!/listening on (\S+)\/mcp/.test(printed)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${printed}`);
    printed += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { url: /listening on (\S+)\/mcp/.exec(printed)![1]!, printed, proc };
}

/**
 * The default model of every CLI run in the tests: GloVe, from ../shared. Commands that embed nothing (BM25-only
 * repositories, reads, listings) run the same without it; a test that needs vectors uses GLOVE itself, guarded.
 */
export const MODEL_ENV = { RESEARCHER_MODEL_PATH: GLOVE };

/**
 * `openFiles`: the process's limit on open file descriptors (`ulimit -n`), set by a shell that then runs the CLI;
 * `timeoutMs`: killed past it (code -1), for a run that might hang.
 */
export function runCli(
  args: string[],
  options: { home: string; cwd?: string; env?: Record<string, string>; openFiles?: number; timeoutMs?: number },
): RunResult {
  const limited = options.openFiles === undefined ? [] : ["bash", "-c", `ulimit -n ${options.openFiles} && exec "$@"`, "--"];
  const proc = Bun.spawnSync([...limited, ...cliCommand, ...args], {
    cwd: options.cwd ?? options.home,
    env: {
      PATH: cliCommand[0] === process.execPath ? (process.env.PATH ?? "") : SYSTEM_PATH,
      HOME: options.home,
      RESEARCHER_HOME: options.home,
      ...MODEL_ENV,
      NO_COLOR: "1",
      ...options.env,
    },
    stdout: "pipe",
    stderr: "pipe",
    timeout: options.timeoutMs,
  });
  return { code: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

/** RFC 4180: fields split by commas, records by CRLF (or LF), quoted fields may hold both and doubled quotes. */
export function parseCsv(input: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    const endOfRecord = c === "\n" || (c === "\r" && input[i + 1] === "\n");
    if (quoted && c === '"' && input[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted && c === '"') quoted = false;
    else if (quoted) field += c;
    else if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (endOfRecord) {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      if (c === "\r") i++;
    } else if (c === '"') throw new Error(`stray quote at ${i}`);
    else field += c;
    i++;
  }
  if (quoted) throw new Error("unterminated quoted field");
  if (field !== "" || record.length) {
    record.push(field);
    records.push(record);
  }
  return records;
}

/**
 * A local OpenAI-compatible embedding server (`/v1/embeddings`) answering with designed vectors: a stand-in for a
 * remote model, so our own provider code runs. Sets OPENAI_API_KEY for the test file and restores it afterwards.
 * Returns the base URL for `embedding.openai_url`.
 */
export function standInEmbeddingServer(vectorFor: (text: string) => number[]): string {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const body = (await request.json()) as { input: string[] };
      return Response.json({ data: body.input.map((text, index) => ({ index, embedding: vectorFor(text) })) });
    },
  });
  const savedKey = process.env.OPENAI_API_KEY;
  beforeAll(() => {
    process.env.OPENAI_API_KEY = "sk-local";
  });
  afterAll(() => {
    server.stop(true);
    if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = savedKey;
  });
  return `http://127.0.0.1:${server.port}`;
}

/** A home folder with one BM25-only repository "docs" over a temp folder holding `files`. */
export function bm25Repository(files: Record<string, string | Uint8Array>) {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, files);
  const repo = registerRepository(home, { name: "docs", path: docs, embed: false });
  return { home, docs, repo };
}

/**
 * The error a conversion rejects with: a ResearcherError with code FILE_UNREADABLE (a reason the run records), or
 * CONVERSION_STOPPED for a conversion a limit stopped.
 */
export async function conversionFailure(
  promise: Promise<unknown>,
  code: "FILE_UNREADABLE" | "CONVERSION_STOPPED" = "FILE_UNREADABLE",
): Promise<ResearcherError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ResearcherError);
  expect((error as ResearcherError).code).toBe(code);
  return error as ResearcherError;
}

/**
 * Fragments of a source file in this thread, as an index run makes them from the sections a conversion worker
 * outlines (codeFragments over codeSections), or null when the file is left to the text chunker: for tests and
 * bench/code.ts (s26 review F8: no product path calls it). web-tree-sitter is loaded on the first call.
 */
export async function chunkCode(source: string, language: CodeLanguage | null, options: CodeOutlineOptions): Promise<Fragment[] | null> {
  const sections = await (await import("../src/convert/code-outline.ts")).codeSections(source, language, options);
  return sections && codeFragments(source, sections);
}
