/**
 * stdout and stderr as plain file descriptors. Touching `process.stdout` or `process.stderr` loads Node's stream
 * machinery, ~20 ms of a cold start in the compiled executable (more than a whole search), and `node:tty` another
 * ~5 ms; so the CLI writes with `writeSync` and asks `fstat` whether a descriptor is a terminal.
 */
import { fstatSync, writeSync } from "node:fs";
import { env } from "./env.ts";
import { describeError, ResearcherError } from "./errors.ts";

export interface Terminal {
  readonly isTTY: boolean;
  /**
   * Whether a line can be redrawn in place (`\r` and erase-line): a terminal, but not TERM=dumb (Emacs buffers, CI
   * viewers with a pty), which shows the escapes as text. Progress bars and live status lines draw only then; a
   * dumb terminal gets what a pipe gets.
   */
  readonly redraws: boolean;
  /** Whether anything has been written to it (a failed `--json` command that printed nothing prints its error). */
  readonly written: boolean;
  write(text: string): void;
  /** Width for one-line progress displays. */
  columns(): number;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** All of `text` to `fd`: a full non-blocking pipe waits for its reader, a reader gone (`| head`) ends the process. */
export function writeAll(fd: number, text: string): void {
  let bytes = Buffer.from(text);
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(fd, bytes));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN")
        Atomics.wait(pause, 0, 0, 1); // a non-blocking pipe is full: let the reader catch up
      else if (code === "EPIPE")
        process.exit(0); // the reader has gone (`| head`): nothing left to do
      // Not the index's disk (a full one is DISK_FULL, whose hint moves RESEARCHER_HOME): where the output goes.
      else throw new ResearcherError("OUTPUT_FAILED", `cannot write the output: ${describeError(error)}`, { cause: error });
    }
  }
}

function terminal(fd: 1 | 2): Terminal {
  let tty: boolean | undefined;
  let written = false;
  return {
    get written() {
      return written;
    },
    get isTTY() {
      // A character device: a terminal, or /dev/null where colours and progress bars harm nobody. Pipes and
      // files, what scripts and tests read, never are.
      tty ??= (() => {
        try {
          return fstatSync(fd).isCharacterDevice();
        } catch {
          return false; // closed
        }
      })();
      return tty;
    },
    get redraws() {
      return this.isTTY && env.terminal().TERM !== "dumb";
    },
    write: (text) => {
      written ||= text.length > 0;
      writeAll(fd, text);
    },
    columns: () => (fd === 1 ? process.stdout : process.stderr).columns || 80,
  };
}

export const stdout = terminal(1);
export const stderr = terminal(2);

/** Control characters (C0, DEL, C1) and the invisible ones that reorder text or break lines (bidi, U+2028/9). */
const CONTROLS = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * A name (file name, title, error message) as text output prints it: each control character as a visible escape
 * (`\n`, `\x1b`, `\u202e`), so a file name cannot recolour the screen, move the cursor or print as two lines. The
 * one escaping function of every text renderer; JSON output carries names exactly.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, escaped);
}

/**
 * A name as escapeControls printed it, back: `\n`, `\r`, `\t` and the `\x..`/`\u....` of control characters. A
 * name copied from `ls` or text results reads the document (a name may hold a backslash of its own: the caller tries
 * the name as given first).
 */
export function unescapeControls(text: string): string {
  return text.replace(/\\(?:([nrt])|x([0-9a-f]{2})|u([0-9a-f]{4}))/g, (written, named: string, byte: string, unit: string) => {
    if (named) return { n: "\n", r: "\r", t: "\t" }[named]!;
    const c = String.fromCharCode(Number.parseInt(byte ?? unit, 16));
    return c.replace(CONTROLS, "") === "" ? c : written; // only what escapeControls writes
  });
}

/** A line of a document's own text for the terminal: every control character escaped but the tab (code indents). */
export function escapeLine(line: string): string {
  return line.replace(CONTROLS, (c) => (c === "\t" ? c : escaped(c)));
}

function escaped(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`);
}

/**
 * A character as `$'…'` escapes of its UTF-8 bytes, which bash reads back in any locale (`\u202e` it reads only in
 * a UTF-8 one, and `\x85` is the one byte 0x85, where a name holds U+0085 as C2 85).
 */
function utf8Escaped(c: string): string {
  if (NAMED[c]) return NAMED[c];
  return [...Buffer.from(c)].map((byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join("");
}

/**
 * A path or id as one word of a shell command a hint suggests, quoted only when it must be. One holding control
 * characters is quoted as `$'…'`, whose escapes the shell undoes: inside '…' the `\n` a terminal is shown stays two
 * characters, and the command as printed named another path (s17 hostile #6).
 */
export function shellWord(text: string): string {
  if (/^[\w./:@~+-]+$/.test(text)) return text;
  if (text.search(CONTROLS) !== -1) return `$'${text.replace(/[\\']/g, "\\$&").replace(CONTROLS, utf8Escaped)}'`;
  return `'${text.replace(/'/g, "'\\''")}'`;
}
