/**
 * Heavy conversions (PDF, DOCX, EPUB, HTML, and source code parsed for the index) run in a small pool of worker
 * threads: one file can never take the run down or hang it (a file that exceeds the timeout, or whose conversion
 * needs more memory than its budget, costs its worker, which is replaced), and an index run uses every core.
 * Markdown and plain text are converted inline: a message round trip would cost more than the conversion.
 */
import { readFileSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { languageOf } from "./code-languages.ts";
import { convertFile, formatOf, TEXT_FORMATS } from "./convert.ts";
import type { ConvertedDocument, ConvertOptions, OcrPage, PageReading } from "./document.ts";
import type { CompiledTreeSitter } from "./tree-sitter.ts";
import { readRegularFile } from "../files.ts";
import { CANCELLED, ResearcherError } from "../errors.ts";
import type { Config } from "../config.ts";
import type { Repository } from "../repos.ts";
import { VERSION } from "../version.ts";

/**
 * The worker's entry point. From source it sits beside this module. In the executable, build.ts lists it as an entry
 * point and Bun keeps its place under src/ (`convert/worker.ts`), while this code runs from the root chunk.
 */
const WORKER_ENTRY = import.meta.url.includes("$bunfs") ? "./convert/worker.ts" : "./worker.ts";

interface Job {
  id: number;
  path: string;
  bytes: Uint8Array;
  options: WorkerOptions;
  /**
   * For source code to parse: the parser's runtime and grammar, compiled once in this thread and shared by the workers.
   */
  treeSitter?: CompiledTreeSitter;
  onOcrPage?: (page: OcrPage) => void;
  onOcrRead?: (page: OcrPage, reading: PageReading) => void;
  /** The pages read so far, by an earlier conversion (ConvertListeners.ocrKnown) or an attempt of this one. */
  known: Map<number, PageReading>;
  resolve: (document: ConvertedDocument) => void;
  reject: (error: ResearcherError) => void;
  /**
   * Why an earlier attempt at this file was stopped (an OCR page past its limit): its failure if this one fails too.
   */
  firstStop?: string;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: ReturnType<typeof setTimeout>;
  /** When the file's own time runs out (performance.now()); while a page is recognised, the time it had left. */
  deadline: number;
  left?: number;
  /** The worker's own memory as it last reported it, and when (performance.now()); and as the file began. */
  memory: number;
  memoryAtStart: number;
  reportedAt: number;
  /**
   * The worker's thread id, where /proc has one, and its page faults and the process's resident size at that report.
   */
  thread?: string;
  faultsAtReport: number;
  rssAtReport: number;
  /** It has parsed source code: its JIT is warm for the parser (see `slotFor`). */
  parses?: boolean;
  /** Told to stop, and not ended yet (counted in ConvertPool.stopping); ended. */
  stopping?: boolean;
  exited?: boolean;
}

type WorkerMessage = {
  id: number;
  memory?: number;
  /** The first report of a file: what the worker holds before converting it. */
  start?: boolean;
  thread?: string;
  /** The OCR of a page starts or ends; its end carries what the engine read (none when it failed). */
  ocr?: { phase: "start" | "end"; reading?: PageReading } & OcrPage;
  document?: ConvertedDocument;
  error?: string;
};

/** What a conversion is told: everything but the callback, which the worker adds. */
export type WorkerOptions = Omit<ConvertOptions, "onOcrPage">;

/**
 * What a caller hears of one conversion and gives it: each page as its OCR starts; each page's reading as it ends
 * (an index run keeps it at once); the pages an earlier conversion of these very bytes read before it was cut short
 * (ConvertOptions.ocrKnown), and the page images an earlier version of the file read (ConvertOptions.ocrImages), read
 * back rather than recognised again.
 */
export interface ConvertListeners {
  onOcrPage?: (page: OcrPage) => void;
  onOcrRead?: (page: OcrPage, reading: PageReading) => void;
  ocrKnown?: ReadonlyMap<number, PageReading>;
  ocrImages?: ReadonlyMap<string, PageReading>;
}

export interface ConvertPoolOptions {
  /** Worker threads (default: one per core). */
  size?: number;
  /** Per-file limit in milliseconds. */
  timeoutMs: number;
  /** The memory one conversion may use, in bytes (0: no limit). */
  memoryBytes?: number;
  /**
   * The limit for recognising one page (OCR), in milliseconds: a page's OCR does not count against the file's
   * `timeoutMs`, so a long scan is not cut short (default: the file's limit).
   */
  ocrPageTimeoutMs?: number;
  /** OCR settings for every file. */
  convert?: WorkerOptions;
}

/**
 * Pages of one file whose OCR may run past its limit before the file fails: each costs an attempt at the whole file
 * (the pages read before it are read back, not recognised again), so a scan whose every page is too slow fails
 * after a few.
 */
const MAX_STOPPED_OCR_PAGES = 3;

/** How often a worker reports its memory, and the pool checks the budget, while conversions run. */
const MEMORY_REPORT_MS = 50;
/**
 * A worker silent this long (five missed reports) is busy in synchronous code (a parser building a DOM) and is
 * charged the pages its thread has touched since. One waiting for a core touches none, so a short wait costs no
 * false alarm; at 1 s, a DOCX that touched 69 MB in a stretch of 0.9 s passed a 40 MB budget on a quiet machine and
 * failed it on a loaded one.
 */
const SILENT_MS = 250;

export class ConvertPool {
  readonly size: number;
  private readonly timeoutMs: number;
  private readonly memoryBytes: number;
  private readonly ocrPageTimeoutMs: number;
  private readonly options: WorkerOptions;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  /**
   * Workers told to stop that have not ended: one busy in code that cannot be interrupted (a regex) runs on until it
   * returns, and counts against the pool's size meanwhile, so a server asked again and again for such a file does
   * not start a worker beside each (s14 hostile #2 saw four at once, each burning a core).
   */
  private stopping = 0;
  private watchdog?: ReturnType<typeof setInterval>;
  /** Why the pool was closed, once it is: every conversion asked of it after is stopped for this reason. */
  private closedBecause?: string;

  constructor(options: ConvertPoolOptions) {
    this.size = Math.max(1, options.size ?? availableParallelism());
    this.timeoutMs = options.timeoutMs;
    this.memoryBytes = options.memoryBytes ?? 0;
    this.ocrPageTimeoutMs = options.ocrPageTimeoutMs ?? options.timeoutMs;
    this.options = options.convert ?? {};
  }

  /**
   * Convert one file; rejects with a `FILE_UNREADABLE` error (`CONVERSION_STOPPED` when a limit or the run stopped it)
   * whose message is the one-line reason. `onOcrPage` is told of each page as its OCR starts (a long scan is minutes of
   * work in one file), `onOcrRead` of what it read.
   */
  async convert(path: string, bytes: Uint8Array, listeners: ConvertListeners = {}): Promise<ConvertedDocument> {
    const { onOcrPage, onOcrRead, ocrKnown, ocrImages } = listeners;
    const language = this.options.codeTokens ? languageOf(path, bytes) : null;
    // Text formats convert in this thread, except source code to be parsed: the parse is the cost.
    if (TEXT_FORMATS.has(formatOf(path)) && !language) return convertFile(path, bytes);
    const treeSitter = language ? await (await import("./tree-sitter.ts")).compiledFor(language) : undefined;
    // Closed meanwhile (while the runtime compiled) or before: no worker may start now.
    if (this.closedBecause) throw stopped(this.closedBecause);
    return new Promise((resolve, reject) => {
      const known = new Map(ocrKnown);
      const options = ocrImages?.size ? { ...this.options, ocrImages } : this.options;
      this.queue.push({ id: this.nextId++, path, bytes, options, treeSitter, onOcrPage, onOcrRead, known, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Start a worker per core (at most the pool's size) now and instantiate the parser's runtime in each, before the
   * first source file comes: an index run that will parse code calls this as it starts, so that a worker's start (the
   * thread, its modules, the runtime: 0.2–0.4 s before it can parse, more on a busy machine) overlaps with opening the
   * store and walking the folder instead of holding up the first files. More start as files come, as for any format
   * (all of a pool of 2,000 started for one file took 134 s and 7.6 GB). Each grammar loads with its first file.
   */
  warmUp(): void {
    if (this.closedBecause || !this.options.codeTokens) return;
    while (this.slots.length < Math.min(this.size, availableParallelism())) this.spawn().parses = true;
    import("./tree-sitter.ts")
      .then((treeSitter) => treeSitter.compiledRuntime())
      .then(
        (runtime) => {
          for (const slot of this.slots) if (slot.parses) slot.worker.postMessage({ warmRuntime: runtime });
        },
        () => {}, // the first source file meets the same problem and reports it
      );
  }

  /** Stop every worker; pending conversions are rejected with `reason`. */
  close(reason = "indexing was stopped"): void {
    this.closedBecause ??= reason;
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    for (const job of this.queue.splice(0)) job.reject(stopped(reason));
    for (const slot of this.slots.splice(0)) this.retire(slot, reason);
  }

  /**
   * A conversion over the memory budget by its own use (a file that blows up in its parser, e.g. mammoth on a DOCX
   * with a 12 MB body) costs its worker, which is terminated, freeing its heap; the file is recorded with the reason.
   * Conversions running beside it are judged by their own use, so a large file that fits is never blamed for another.
   */
  private checkMemory(slots = this.slots): void {
    if (!this.memoryBytes) return;
    const now = performance.now();
    for (const slot of [...slots]) {
      if (slot.job && this.usage(slot, now) > this.memoryBytes) {
        this.replace(slot, `conversion needed more memory than index.convert_memory_mb (${Math.round(this.memoryBytes / 2 ** 20)} MB)`);
      }
    }
  }

  /**
   * A worker whose loop turns reports its own memory. One that is silent (a parser building a DOM in one synchronous
   * stretch; pdf.js, whose promise chains leave no turn for a timer; Tesseract recognising a page) is charged, on top
   * of its last report, with the pages its thread has touched since: the kernel counts page faults per thread, so
   * nothing another thread allocates is charged to it. A page touched again after it was freed faults again without
   * adding memory (a scan's page images, decoded and dropped page after page, faulted 1.1 GB in a process that never
   * held 0.4 GB), so the charge is at most what the whole process grew by meanwhile.
   */
  private usage(slot: Slot, now: number): number {
    // What the worker held when this file began (an earlier file's garbage, the OCR engine) is not this file's.
    const own = Math.max(0, slot.memory - slot.memoryAtStart);
    if (now - slot.reportedAt <= SILENT_MS || slot.thread === undefined) return own;
    const touched = (threadFaults(slot.thread) - slot.faultsAtReport) * PAGE_BYTES;
    return own + Math.min(touched, Math.max(0, process.memoryUsage.rss() - slot.rssAtReport));
  }

  private recordMemory(slot: Slot, { memory, thread, start }: WorkerMessage & { memory: number }): void {
    slot.thread ??= thread;
    if (start) slot.memoryAtStart = memory;
    Object.assign(slot, { memory }, this.baseline(slot));
    this.checkMemory([slot]);
  }

  /** What a worker's silence is measured from: now, the page faults of its thread so far, and the process's size. */
  private baseline(slot: Slot): Pick<Slot, "reportedAt" | "faultsAtReport" | "rssAtReport"> {
    return {
      reportedAt: performance.now(),
      faultsAtReport: slot.thread === undefined ? 0 : threadFaults(slot.thread),
      rssAtReport: process.memoryUsage.rss(),
    };
  }

  /** Queued files go to free workers in order (`slotFor`). */
  private dispatch(): void {
    for (let i = 0; i < this.queue.length; ) {
      const slot = this.slotFor(this.queue[i]!);
      if (!slot) {
        i++;
        continue;
      }
      const [job] = this.queue.splice(i, 1) as [Job];
      slot.job = job;
      // Nothing is this file's until the worker reports what it holds as the file begins.
      Object.assign(slot, { memoryAtStart: slot.memory }, this.baseline(slot));
      if (this.memoryBytes && !this.watchdog) this.watchdog = setInterval(() => this.checkMemory(), MEMORY_REPORT_MS).unref();
      slot.deadline = performance.now() + this.timeoutMs;
      this.startFileTimer(slot);
      const { id, path, bytes, treeSitter, known } = job;
      const options = known.size ? { ...job.options, ocrKnown: known } : job.options;
      // Garbage of half the budget left by an earlier file is collected before this one starts: its growth is
      // measured from there, and could otherwise take the place of that garbage, up to twice the budget in all.
      const collectAbove = this.memoryBytes / 2 || undefined;
      slot.worker.postMessage({ id, path, bytes, options, treeSitter, reportMs: MEMORY_REPORT_MS, collectAbove });
    }
  }

  /**
   * A free worker for this file, started if the pool has room, or undefined. Every worker may parse source code (one
   * per core: on two quiet cores two parsing workers indexed 668 Python files, 13 MB, in 1.94–1.98 s against
   * 2.30–2.39 s with one, for 8–10% more CPU; docs/benchmarks.md, "Code"), but each compiles and warms up the
   * parser's JavaScript for itself: source code goes first to a worker that has parsed, other formats to one that
   * has not.
   */
  private slotFor(job: Job): Slot | undefined {
    const parses = job.treeSitter !== undefined;
    const free = this.slots.filter((slot) => !slot.job);
    const slot = free.find((s) => Boolean(s.parses) === parses) ?? free[0] ?? this.spawnIfRoom();
    if (slot && parses) slot.parses = true;
    return slot;
  }

  private spawnIfRoom(): Slot | undefined {
    return this.slots.length + this.stopping < this.size ? this.spawn() : undefined;
  }

  private startFileTimer(slot: Slot): void {
    slot.timer = setTimeout(
      () => this.replace(slot, `conversion took longer than ${this.timeoutMs / 1000} s (index.convert_timeout)`),
      Math.max(0, slot.deadline - performance.now()),
    );
  }

  /**
   * While a page is recognised the file's clock stops and the page's own limit runs; then the file's clock resumes.
   * The job's listeners hear of each page as it starts, and of what it read as it ends: an attempt at the file made
   * again (a page stopped) reads it back too.
   */
  private ocrPage(slot: Slot, { phase, reading, ...page }: NonNullable<WorkerMessage["ocr"]>): void {
    clearTimeout(slot.timer);
    if (phase === "start") {
      slot.left = slot.deadline - performance.now();
      slot.timer = setTimeout(() => this.stopOcrPage(slot, page), this.ocrPageTimeoutMs);
      slot.job?.onOcrPage?.(page);
    } else {
      slot.deadline = performance.now() + (slot.left ?? 0);
      slot.left = undefined;
      this.startFileTimer(slot);
      if (reading && slot.job) {
        slot.job.known.set(page.page, reading);
        slot.job.onOcrRead?.(page, reading);
      }
    }
  }

  /**
   * A page whose OCR ran past its limit costs its worker (Tesseract's wasm cannot be interrupted), not its file: the
   * file is converted again from the start with that page left unread (a warning of the document), so one bad page
   * of a 300-page scan no longer left the other 299 out of the index. Past MAX_STOPPED_OCR_PAGES such pages the
   * file fails.
   */
  private stopOcrPage(slot: Slot, page: OcrPage): void {
    const limit = `took longer than ${this.ocrPageTimeoutMs / 1000} s (index.ocr_page_timeout)`;
    const job = slot.job;
    const earlier = job?.options.ocrStopped ?? [];
    const reason = `OCR of page ${page.page} of ${page.pages} ${limit}${earlier.length ? `, as did ${earlier.map((s) => `page ${s.page}`).join(", ")}` : ""}`;
    if (job && !this.closedBecause && earlier.length < MAX_STOPPED_OCR_PAGES) {
      slot.job = undefined; // retired below without failing: it goes again, first in the queue
      const ocrStopped = [...earlier, { page: page.page, reason: limit }];
      this.queue.unshift({ ...job, options: { ...job.options, ocrStopped }, firstStop: job.firstStop ?? reason });
    }
    this.replace(slot, reason);
  }

  private spawn(): Slot {
    const worker = new Worker(new URL(WORKER_ENTRY, import.meta.url), { smol: true });
    const slot: Slot = { worker, memory: 0, memoryAtStart: 0, reportedAt: 0, faultsAtReport: 0, rssAtReport: 0, deadline: 0 };
    worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
      const job = slot.job;
      if (!job || job.id !== event.data.id) return;
      if (event.data.memory !== undefined) return this.recordMemory(slot, { ...event.data, memory: event.data.memory });
      if (event.data.ocr) return this.ocrPage(slot, event.data.ocr);
      this.finish(slot);
      if (event.data.document) job.resolve(event.data.document);
      // A file that fails again after a page was stopped fails for that page: the cause, and a limit one can raise.
      else job.reject(job.firstStop ? stopped(job.firstStop) : unreadable(event.data.error || "conversion failed"));
      this.dispatch();
    };
    // An uncaught error or a crash inside the worker (e.g. out of memory) costs that file, not the run.
    worker.onerror = (event) => this.replace(slot, `conversion crashed: ${event.message || "worker error"}`);
    worker.addEventListener("close", () => {
      slot.exited = true;
      if (slot.stopping) {
        this.stopping--;
        this.dispatch(); // its place in the pool is free again
      } else if (slot.job) this.replace(slot, "conversion worker exited");
    });
    this.slots.push(slot);
    return slot;
  }

  private finish(slot: Slot): void {
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    slot.left = undefined;
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
    if (!slot.exited) {
      slot.stopping = true;
      this.stopping++;
    }
    slot.worker.terminate();
    job?.reject(stopped(reason));
  }
}

const PAGE_BYTES = 4096;

/** Minor page faults of one thread of this process so far (field 10 of its /proc stat line; 0 once it is gone). */
function threadFaults(thread: string): number {
  try {
    const stat = readFileSync(`/proc/self/task/${thread}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[7]);
  } catch {
    return 0;
  }
}

function unreadable(reason: string): ResearcherError {
  return new ResearcherError("FILE_UNREADABLE", reason);
}

/**
 * A conversion the pool stopped (a limit, a crash, the run ending). An index run stamps it as any failure (it is
 * tried again when the file or the limits change); a reader (`get`) tells its client to try again (HTTP 503).
 */
function stopped(reason: string): ResearcherError {
  return new ResearcherError("CONVERSION_STOPPED", reason);
}

/**
 * The time and memory limits and OCR settings a repository's conversions run with (`ocr` defaults to config's
 * defaults): in an index run and outside one alike (`convert`, `get` of a changed file), where a server must not
 * be driven to gigabytes by one request.
 */
export function conversionLimits(config: Config, ocr?: Repository["ocr"]): Omit<ConvertPoolOptions, "size"> {
  return {
    timeoutMs: config.index.convert_timeout * 1000,
    memoryBytes: config.index.convert_memory_mb * 2 ** 20,
    ocrPageTimeoutMs: config.index.ocr_page_timeout * 1000,
    convert: ocr ? { ocr: ocr.mode, ocrLanguages: ocr.languages, ocrData: ocr.data } : {},
  };
}

/**
 * Read and convert one file outside an index run, with the same limits: regular files only, size cap, timeout; and
 * its format, told from the bytes read as an index run tells it (a script by its first bytes: told from the converted
 * text, which has lost a byte order mark, one before `#!` made it a script: s23 review R5).
 */
export async function convertPath(
  absolute: string,
  limits: { maxBytes: number } & Omit<ConvertPoolOptions, "size">,
): Promise<{ converted: ConvertedDocument; format: string }> {
  const read = readRegularFile(absolute, limits.maxBytes);
  if ("reason" in read) throw unreadable(read.reason);
  return { converted: await convertOnce(absolute, read.bytes, limits), format: formatOf(absolute, read.bytes) };
}

/**
 * Convert bytes already read outside an index run, in a worker of its own (the same limits as a run's). `signal`:
 * the caller gave up (an MCP client cancelled its read), which stops the worker at once: a scan's OCR would run on
 * for minutes, holding a core and the server's exit.
 */
export async function convertOnce(
  path: string,
  bytes: Uint8Array,
  limits: Omit<ConvertPoolOptions, "size">,
  signal?: AbortSignal,
): Promise<ConvertedDocument> {
  const pool = new ConvertPool({ ...limits, size: 1 });
  const cancel = () => pool.close(CANCELLED);
  if (signal?.aborted) cancel();
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    return await pool.convert(path, bytes);
  } finally {
    signal?.removeEventListener("abort", cancel);
    pool.close();
  }
}

/** What the converters are told: OCR mode, languages and data, and the budget source code is parsed into. */
export function convertOptions(config: Config, repo: Repository) {
  return { ...conversionLimits(config, repo.ocr).convert, codeTokens: config.chunk.code_tokens };
}

/**
 * What a conversion's outcome depends on besides the file: the converters' options, the researcher version (a newer
 * converter may read the file) and when the OCR model folder last changed (a language model installed there may read
 * a scan that failed for want of it). A kept converted text (Store.convertedText) is used only under the same
 * settings; a failure is stamped with `failureSettings`.
 */
export function conversionSettings(config: Config, repo: Repository): string {
  return JSON.stringify(conversionState(config, repo));
}

function conversionState(config: Config, repo: Repository) {
  const options = convertOptions(config, repo);
  return { version: VERSION, ...options, ocrDataChanged: options.ocrData ? changedAt(options.ocrData) : null };
}

/**
 * What a failed conversion's outcome depends on besides the file: `conversionSettings` and the time and memory
 * limits. A failure recorded under other settings is tried again; so a file a limit stopped is left alone until the
 * limit changes (a 60 s conversion must not cost every run 60 s), and is tried again when it is raised.
 */
export function failureSettings(config: Config, repo: Repository): string {
  const { convert_timeout, convert_memory_mb, ocr_page_timeout, max_file_bytes } = config.index;
  return JSON.stringify({
    ...conversionState(config, repo),
    limits: [convert_timeout, convert_memory_mb, ocr_page_timeout, max_file_bytes],
  });
}

/** A folder's mtime (it moves when a file is added, removed or renamed in it), or null when it cannot be read. */
function changedAt(folder: string): number | null {
  try {
    return statSync(folder).mtimeMs;
  } catch {
    return null;
  }
}
