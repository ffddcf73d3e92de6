/** What every command of the CLI shares: the flags type, output, global options, and option value parsing. */
import type { CAC } from "cac";
import { resolveHome } from "../config.ts";
import { finishRemovals } from "../index/repositories.ts";
import { FROM_ONE, type Range, wholeNumber } from "../search/bounds.ts";
import { listParts } from "../path-glob.ts";
import { stderr, stdout } from "../terminal.ts";

export type Flags = Record<string, unknown>;

export const out = (text: string) => stdout.write(text);
export const json = (value: unknown) => out(`${JSON.stringify(value, null, 2)}\n`);

/** Options every command accepts. */
export function globals(cli: CAC): CAC {
  cli.option("--home <dir>", "Home folder (default: $RESEARCHER_HOME or ~/.researcher)");
  cli.option("--verbose", "Show stack traces on errors");
  return cli;
}

/** The home a command works in, once what a `repo remove` killed midway left there is finished (finishRemovals). */
export function home(flags: Flags): string {
  const dir = resolveHome(flags.home as string | undefined);
  if (!opened.has(dir)) {
    opened.add(dir);
    finishRemovals(dir);
  }
  return dir;
}

/** Homes this process has opened: a command asks for its home several times, and one look is enough. */
const opened = new Set<string>();

/**
 * `--exclude a --exclude b` and `--exclude a,b` both give [a, b]: each value's items by listParts, the split `config
 * set` gives a list setting, so a glob's own commas (`{drafts,tmp}/**`) stay in it; empty items are dropped.
 */
export function list(value: unknown): string[] {
  return repeated(value).flatMap(listParts);
}

/** A repeatable flag's values, kept whole (a filter may contain commas). */
export function repeated(value: unknown): string[] {
  if (value === undefined || value === true) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

const ANY: Range = { min: Number.NEGATIVE_INFINITY, max: Number.POSITIVE_INFINITY };

/**
 * A flag value that does not parse, or is out of range, is a usage error (exit 2), as an unknown flag is. Whole
 * numbers follow search/bounds.ts, the rule REST and MCP check theirs by; `flag` is the option as typed (`--offset`,
 * `-n/--limit`).
 */
export function integer(value: unknown, flag: string, range: Range = ANY): number | undefined {
  return value === undefined ? undefined : wholeNumber(value, flag, range);
}

export function positive(value: unknown, flag: string): number | undefined {
  return integer(value, flag, FROM_ONE);
}

/** One stderr line per file being downloaded, redrawn on a terminal. */
export function downloadProgress(): (file: string, loaded: number, total: number) => void {
  let last = 0;
  return (file, loaded, total) => {
    const now = performance.now();
    if (!stderr.redraws || (now - last < 100 && loaded < total)) return;
    last = now;
    const percent = total ? Math.floor((loaded / total) * 100) : 0;
    stderr.write(`\r\x1b[2Kdownloading ${file} ${percent}%${loaded >= total ? "\n" : ""}`);
  };
}
