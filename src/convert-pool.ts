/**
 * Heavy conversions (PDF, DOCX, EPUB, HTML) run in a small pool of worker threads: one file can never take the run
 * down or hang it (a file that exceeds the timeout, or grows the process past its memory budget, costs its worker,
 * which is replaced), and an index run uses every core. Markdown and plain text are converted inline: a message
 * round trip would cost more than the conversion.
 */
import { availableParallelism } from "node:os";
import { convertFile, formatOf, TEXT_FORMATS, type ConvertedDocument } from "./convert.ts";
import { readRegularFile } from "./discover.ts";
import { ResearcherError } from "./errors.ts";

interface Job {
  id: number;
  path: string;
  bytes: Uint8Array;
  resolve: (document: ConvertedDocument) => void;
  reject: (error: ResearcherError) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: ReturnType<typeof setTimeout>;
  /** The process's resident memory when the job started. */
  rssAtStart?: number;
}

export interface ConvertPoolOptions {
  /** Worker threads (default: one per core). */
  size?: number;
  /** Per-file limit in milliseconds. */
  timeoutMs: number;
  /** The process's resident memory that conversions may not push it past, in bytes (0: no limit). */
  memoryBytes?: number;
}

/** How often the memory budget is checked while conversions run. */
const MEMORY_CHECK_MS = 50;

export class ConvertPool {
  readonly size: number;
  private readonly timeoutMs: number;
  private readonly memoryBytes: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private watchdog?: ReturnType<typeof setInterval>;

  constructor(options: ConvertPoolOptions) {
    this.size = Math.max(1, options.size ?? availableParallelism());
    this.timeoutMs = options.timeoutMs;
    this.memoryBytes = options.memoryBytes ?? 0;
  }

  /** Convert one file; rejects with a `FILE_UNREADABLE` error whose message is the one-line reason. */
  convert(path: string, bytes: Uint8Array): Promise<ConvertedDocument> {
    if (TEXT_FORMATS.has(formatOf(path))) return convertFile(path, bytes);
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, path, bytes, resolve, reject });
      this.dispatch();
    });
  }

  /** Stop every worker; pending conversions are rejected. */
  close(): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    for (const job of this.queue.splice(0)) job.reject(unreadable("indexing was stopped"));
    for (const slot of this.slots.splice(0)) this.retire(slot, "indexing was stopped");
  }

  /**
   * Over the memory budget, the conversion during which the process grew the most is the one that ballooned (a
   * file that blows up in its parser, e.g. mammoth on a DOCX with a 12 MB body): its worker is terminated, which
   * frees its heap, and the file is recorded with the reason. A conversion that started when memory was already
   * high (the allocator may keep freed pages for a while) did not cause it and is left alone.
   */
  private checkMemory(): void {
    const rss = process.memoryUsage.rss();
    if (rss <= this.memoryBytes) return;
    const busy = this.slots.filter((slot) => slot.job).sort((a, b) => a.rssAtStart! - b.rssAtStart!);
    const culprit = busy[0];
    if (culprit && rss - culprit.rssAtStart! > this.memoryBytes / 4) {
      this.replace(culprit, `conversion needed more memory than index.convert_memory_mb (${Math.round(this.memoryBytes / 2 ** 20)} MB)`);
    }
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => !s.job) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      if (!slot) return;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.rssAtStart = process.memoryUsage.rss();
      if (this.memoryBytes && !this.watchdog) this.watchdog = setInterval(() => this.checkMemory(), MEMORY_CHECK_MS).unref();
      slot.timer = setTimeout(() => this.replace(slot, `conversion took longer than ${this.timeoutMs / 1000} s (index.convert_timeout)`), this.timeoutMs);
      slot.worker.postMessage({ id: job.id, path: job.path, bytes: job.bytes });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(new URL("./convert-worker.ts", import.meta.url), { smol: true });
    const slot: Slot = { worker };
    worker.onmessage = (event: MessageEvent<{ id: number; document?: ConvertedDocument; error?: string }>) => {
      const job = slot.job;
      if (!job || job.id !== event.data.id) return;
      this.finish(slot);
      if (event.data.document) job.resolve(event.data.document);
      else job.reject(unreadable(event.data.error ?? "conversion failed"));
      this.dispatch();
    };
    // An uncaught error or a crash inside the worker (e.g. out of memory) costs that file, not the run.
    worker.onerror = (event) => this.replace(slot, `conversion crashed: ${event.message || "worker error"}`);
    worker.addEventListener("close", () => slot.job && this.replace(slot, "conversion worker exited"));
    this.slots.push(slot);
    return slot;
  }

  private finish(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
  }

  /** The worker is stuck or broken: fail its file, terminate it and let a fresh one take the queue. */
  private replace(slot: Slot, reason: string): void {
    const index = this.slots.indexOf(slot);
    if (index !== -1) this.slots.splice(index, 1);
    this.retire(slot, reason);
    this.dispatch();
  }

  private retire(slot: Slot, reason: string): void {
    const job = slot.job;
    this.finish(slot);
    slot.worker.onmessage = null;
    slot.worker.onerror = null;
    slot.worker.terminate();
    job?.reject(unreadable(reason));
  }
}

function unreadable(reason: string): ResearcherError {
  return new ResearcherError("FILE_UNREADABLE", reason);
}

/** Read and convert one file outside an index run, with the same limits: regular files only, size cap, timeout. */
export async function convertPath(absolute: string, limits: { maxBytes: number; timeoutMs: number }): Promise<ConvertedDocument> {
  const read = readRegularFile(absolute, limits.maxBytes);
  if ("reason" in read) throw unreadable(read.reason);
  return convertOnce(absolute, read.bytes, limits.timeoutMs);
}

/** Convert bytes already read outside an index run, in a worker of its own (the same timeout as a run's). */
export async function convertOnce(path: string, bytes: Uint8Array, timeoutMs: number): Promise<ConvertedDocument> {
  const pool = new ConvertPool({ size: 1, timeoutMs });
  try {
    return await pool.convert(path, bytes);
  } finally {
    pool.close();
  }
}
