/**
 * A conversion worker thread: converts the files the pool sends it, one at a time, and reports its own memory (live
 * JavaScript heap and the buffers it holds) when a conversion starts and every `reportMs` while it runs, so the pool
 * can hold each conversion to the memory budget by what it uses itself: its growth over the start.
 */
import { readlinkSync } from "node:fs";
import { convertFile } from "./convert.ts";
import { ocrMemory } from "./ocr.ts";
import type { OcrPage, PageReading } from "./document.ts";
import type { WorkerOptions } from "./pool.ts";
import type { CompiledTreeSitter } from "./tree-sitter.ts";
import { describeError } from "../errors.ts";

declare const self: Worker;

// pdf.js and mammoth report what they cannot parse through the console; here a problem is a failure reason, and
// nothing a worker prints may land in the output of `--json`.
for (const method of ["log", "info", "warn", "error", "debug"] as const) console[method] = () => {};

/**
 * Live objects and external buffers, not the heap's capacity: that stays at an earlier conversion's peak; plus the
 * OCR engine's wasm memory, which the JavaScript heap does not count (it only grows: the engine is kept per thread).
 * `process.memoryUsage()` reads this thread's own heap counters; `heapStats()` of bun:jsc gives the same two figures
 * but also counts every object by type: 17 ms a call in a worker that has parsed some code, paid at each file's
 * start (about 3 s of CPU over the 171 files of Python's standard library, more than parsing them).
 */
function ownMemory(): number {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external + ocrMemory();
}

/** Past this much heap and buffers, what a conversion left may be garbage worth collecting before it is counted. */
const COLLECT_ABOVE = 128 * 2 ** 20;

/**
 * Collect garbage now if the heap holds much: between scanned pages, the page images already read, which a long
 * scan would otherwise pile up as its own growth; at a file's start only past half the memory budget (the pool
 * charges a file its growth over what the worker held as it began, and a collection at every start cost PDFs 7% more
 * CPU). A full collection of a small heap is not worth its milliseconds, hence the thresholds.
 */
function collectIfLarge(above = COLLECT_ABOVE): void {
  const { heapUsed, external } = process.memoryUsage();
  if (heapUsed + external > above) Bun.gc(true);
}

/** This thread's id (Linux), so the pool can read its page faults while it is too busy to report. */
function threadId(): string | undefined {
  try {
    return readlinkSync("/proc/thread-self").split("/").at(-1);
  } catch {
    return undefined;
  }
}

type Job = {
  id: number;
  path: string;
  bytes: Uint8Array;
  options: WorkerOptions;
  treeSitter?: CompiledTreeSitter;
  reportMs: number;
  /** Collect garbage before the file starts if the heap holds more than this (half the memory budget). */
  collectAbove?: number;
};

/** Sent before any file: load the parser's modules and instantiate its runtime, compiled in the pool's thread. */
type WarmUp = { warmRuntime: WebAssembly.Module };

self.onmessage = async (event: MessageEvent<Job | WarmUp>) => {
  if ("warmRuntime" in event.data) return warmUp(event.data.warmRuntime);
  const { id, path, bytes, options, treeSitter, reportMs, collectAbove } = event.data;
  if (treeSitter) (await import("./tree-sitter.ts")).shareCompiled(treeSitter);
  const report = () => self.postMessage({ id, memory: ownMemory() });
  if (collectAbove) collectIfLarge(collectAbove);
  self.postMessage({ id, memory: ownMemory(), start: true, thread: threadId() });
  const reporter = setInterval(report, reportMs);
  try {
    // Each recognised page runs on its own time limit in the pool, which also tells the index run which page it is,
    // and, as it ends, what it read (kept at once: a run cut short resumes after it).
    const onOcrPage = (phase: "start" | "end", page: OcrPage, reading?: PageReading) => {
      if (phase === "end") collectIfLarge();
      self.postMessage({ id, ocr: { phase, ...page, reading } });
    };
    const document = await convertFile(path, bytes, { ...options, onOcrPage });
    // A last report before the result, which the pool reads first: a conversion quicker than the report interval is
    // still held to the budget by what it grew to.
    report();
    self.postMessage({ id, document });
  } catch (error) {
    self.postMessage({ id, error: describeError(error) });
  } finally {
    clearInterval(reporter);
  }
};

/** A warm-up that fails is no file's failure: the first source file meets the same problem and reports it. */
async function warmUp(runtime: WebAssembly.Module): Promise<void> {
  try {
    await Promise.all([import("./tree-sitter.ts").then((treeSitter) => treeSitter.warmRuntime(runtime)), import("./code-outline.ts")]);
  } catch {}
}
