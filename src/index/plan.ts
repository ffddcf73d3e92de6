/**
 * What changed between a repository's files and its index: the one rule the index run, watch mode and `verify`
 * share. A file not in the index is new; an indexed file whose size or mtime differs is changed (the per-document
 * step then reads it and converts it only when its SHA-256 differs); the same size and mtime is unchanged, and the
 * file is not opened. An indexed path discovery no longer finds is gone, unless discovery could not look at it (a
 * folder it could not list, a file it reported a problem with): unreadable is not gone, and the index keeps it. A
 * path that now leads out of the repository (a link out of the root) is gone, though reported.
 * What a file holds can leave it out too (minified JavaScript: isMinified): the planner looks at the files it would
 * read, new and changed, and at those alone; one so left out is not read, and a document it had goes.
 * A file whose conversion failed, with the same size and mtime and under the same conversion settings as then, is
 * failed and unchanged: it is not tried again (it would fail again), and its failure stays recorded.
 */
import { isMinified, isUnlisted, MINIFIED_LINES_RULE, type DiscoveredFile, type Discovery } from "./discover.ts";
import type { FailureStamp } from "../store/store.ts";

/** What the index recorded about a file when it was last read. */
export interface Stamp {
  size: number;
  mtimeMs: number;
}

/**
 * The recorded failures' stamps (by path) and the conversion settings of this run; without settings (verify, which
 * judges the files alone, as it leaves chunking settings out) only the files' stamps count.
 */
export interface Failed {
  stamps: ReadonlyMap<string, FailureStamp>;
  settings?: string;
}

export interface ChangePlan {
  /** Files the index does not hold. */
  added: DiscoveredFile[];
  /** Indexed files whose size or mtime differ (every indexed file when forced). */
  changed: DiscoveredFile[];
  /** How many indexed files have the same size and mtime. */
  unchanged: number;
  /** Indexed paths that are no longer there. */
  gone: string[];
  /** Indexed paths discovery could not look at: kept in the index. */
  unreadable: string[];
  /** Files that failed and have not changed since, under the same conversion settings: not tried again. */
  failedUnchanged: string[];
  /**
   * New and changed files their content leaves out as generated code, by rule (`{"minified *.js": 2}`), for a
   * summary's `skipped_generated` beside what discovery left out by name.
   */
  generated: Record<string, number>;
}

/** Whether a file on disk still has the size and mtime the index recorded: then it is not read again. */
export function sameStamp(stored: Stamp | undefined, file: Stamp): boolean {
  return stored !== undefined && stored.size === file.size && stored.mtimeMs === file.mtimeMs;
}

/** Whether a file failed to convert as it is now, under these settings: trying it again would fail again. */
export function failedUnchanged(failed: Failed | undefined, path: string, file: Stamp): boolean {
  const stamp = failed?.stamps.get(path);
  if (!failed || !stamp) return false;
  return (failed.settings === undefined || stamp.settings === failed.settings) && sameStamp(stamp, file);
}

/**
 * Plan a run from what discovery found and what the index holds (path → stamp). `force` says which indexed files
 * to read again however unchanged (their chunking settings changed); `failed` the recorded failures to leave
 * alone while their files are unchanged (none: every failed file is tried again). `stored` may hold only part of the
 * index (a folder's documents): paths outside it are simply not planned.
 */
export function planChanges(
  discovery: Discovery,
  stored: ReadonlyMap<string, Stamp>,
  options: { force?: (path: string) => boolean; failed?: Failed } = {},
): ChangePlan {
  const plan: ChangePlan = { added: [], changed: [], unchanged: 0, gone: [], unreadable: [], failedUnchanged: [], generated: {} };
  for (const file of discovery.files) {
    const previous = stored.get(file.path);
    // Checked first: a file indexed once and failing since keeps its old document, which differs from it.
    if (failedUnchanged(options.failed, file.path, file)) plan.failedUnchanged.push(file.path);
    else if (previous && !options.force?.(file.path) && sameStamp(previous, file)) plan.unchanged++;
    else if (isMinified(file)) {
      plan.generated[MINIFIED_LINES_RULE] = (plan.generated[MINIFIED_LINES_RULE] ?? 0) + 1;
      if (previous) plan.gone.push(file.path);
    } else if (!previous) plan.added.push(file);
    else plan.changed.push(file);
  }
  const present = new Set(discovery.files.map((f) => f.path));
  // A reported path that holds no document any more (a link out of the root) is gone; one that cannot be read is kept.
  const reported = new Set(discovery.problems.filter((p) => !p.gone).map((p) => p.path));
  for (const path of stored.keys()) {
    if (present.has(path)) continue;
    if (reported.has(path) || isUnlisted(discovery, path)) plan.unreadable.push(path);
    else plan.gone.push(path);
  }
  return plan;
}

/**
 * How long a file system's mtime tick can be: FAT and exFAT keep mtimes in 2 s steps; HFS+ and ext2/3 (small inodes)
 * in 1 s.
 */
const MTIME_TICK_MS = 2000;

/**
 * The mtime a run records for a file it read at `readAt`. A file saved again within the tick of that read, at the
 * same size, shows the very stamp recorded, and was never read again: git's "racily clean" files (an edit on a USB
 * stick, or two saves a second apart under watch, lost until the next edit: s19 review F3). A stamp less than a tick
 * older than its read is recorded a millisecond early, which the file does not show: the next run reads it again
 * (its hash says whether it changed) and records its real mtime once that is a tick old.
 */
export function recordedMtime(mtimeMs: number, readAt: number): number {
  return readAt - mtimeMs < MTIME_TICK_MS ? mtimeMs - 1 : mtimeMs;
}
