import { availableParallelism } from "node:os";
import { cancelled } from "../errors.ts";

/**
 * Converted documents a long-lived server has read, kept for its next reads: an agent pages through a PDF with
 * one get_document call per page, and converting it again for each (OCR of a scan takes seconds a page) would make
 * every call as slow as the first. An entry is found only by the file's exact bytes and the conversion settings
 * that shape its text, so an edited file, or a changed OCR setting, is converted afresh. Bounded in characters; the
 * least recently read goes first.
 *
 * Conversions go through here too (`convert`): reads of a file already being converted wait for that conversion,
 * and at most `concurrency` run at once, each in its worker with its memory budget; the others queue. Each read
 * converted on its own before: 8 parallel reads of one 6 MB page took a server to 4.5 GB, 6 of one scan cost 8.6×
 * the CPU.
 */
export class ConversionCache {
  private readonly entries = new Map<string, string>();
  private size = 0;
  private readonly running = new Map<string, Running>();
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly maxChars = 64 * 2 ** 20,
    private readonly concurrency = availableParallelism(),
  ) {}

  /**
   * The text kept under `key`, or the one `work` converts, shared with every read of the key meanwhile. A read that
   * gives up (`signal`: its client cancelled) stops waiting; the conversion is stopped (`work`'s signal) once no read
   * waits for it, never while another does.
   */
  convert(key: string, work: (signal: AbortSignal) => Promise<string>, signal?: AbortSignal): Promise<string> {
    const kept = this.get(key);
    if (kept !== undefined) return Promise.resolve(kept);
    let run = this.running.get(key);
    if (!run) {
      const controller = new AbortController();
      // A stopped conversion is forgotten at once: a read that comes after starts its own.
      const forget = () => this.running.get(key) === started && this.running.delete(key);
      const text = this.inTurn(() => work(controller.signal))
        .then((converted) => {
          this.set(key, converted);
          return converted;
        })
        .finally(forget);
      const stop = () => {
        forget();
        controller.abort();
      };
      const started: Running = { text, readers: 0, stop };
      this.running.set(key, started);
      run = started;
    }
    return follow(run, signal);
  }

  /** `work` once fewer than `concurrency` conversions run. */
  private async inTurn<T>(work: () => Promise<T>): Promise<T> {
    while (this.active >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await work();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  /** The key of a file's conversion: where it is, its bytes (hashed) and the settings its text depends on. */
  static key(file: string, bytes: Uint8Array, settings: unknown): string {
    return `${file}\0${bytes.length}\0${Bun.hash(bytes)}\0${JSON.stringify(settings)}`;
  }

  get(key: string): string | undefined {
    const text = this.entries.get(key);
    if (text !== undefined) {
      this.entries.delete(key); // re-inserted: the Map's order is the order of use
      this.entries.set(key, text);
    }
    return text;
  }

  set(key: string, text: string): void {
    if (text.length > this.maxChars) return;
    this.delete(key);
    this.entries.set(key, text);
    this.size += text.length;
    for (const [oldest, old] of this.entries) {
      if (this.size <= this.maxChars) break;
      this.entries.delete(oldest);
      this.size -= old.length;
    }
  }

  private delete(key: string): void {
    const text = this.entries.get(key);
    if (text === undefined) return;
    this.entries.delete(key);
    this.size -= text.length;
  }
}

/** A conversion under way: its text, how many reads that may give up still wait for it, and what stops it. */
interface Running {
  text: Promise<string>;
  readers: number;
  stop: () => void;
}

/** The conversion's text for one read; one with no `signal` never gives up, and so keeps the conversion going. */
function follow(run: Running, signal?: AbortSignal): Promise<string> {
  if (!signal) {
    run.readers = Number.POSITIVE_INFINITY;
    return run.text;
  }
  run.readers++;
  return new Promise((resolve, reject) => {
    const giveUp = () => {
      if (--run.readers === 0) run.stop();
      reject(cancelled());
    };
    // Attached first: a stopped conversion's failure is this read's to handle, never an unhandled rejection.
    run.text.then(resolve, reject).finally(() => signal.removeEventListener("abort", giveUp));
    if (signal.aborted) giveUp();
    else signal.addEventListener("abort", giveUp, { once: true });
  });
}
