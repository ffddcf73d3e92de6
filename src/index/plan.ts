/**
 * What changed between a repository's files and its index: the one rule the index run, watch mode and `verify`
 * share. A file not in the index is new; an indexed file whose size or mtime differs is changed (the per-document
 * step then reads it and converts it only when its SHA-256 differs); the same size and mtime is unchanged, and the
 * file is not opened. An indexed path discovery no longer finds is gone, unless discovery could not look at it (a
 * folder it could not list, a file it reported a problem with): unreadable is not gone, and the index keeps it.
 */
import { isUnlisted, type DiscoveredFile, type Discovery } from "./discover.ts";

/** What the index recorded about a file when it was last read. */
export interface Stamp {
  size: number;
  mtimeMs: number;
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
}

/** Whether a file on disk still has the size and mtime the index recorded: then it is not read again. */
export function sameStamp(stored: Stamp | undefined, file: Stamp): boolean {
  return stored !== undefined && stored.size === file.size && stored.mtimeMs === file.mtimeMs;
}

/**
 * Plan a run from what discovery found and what the index holds (path → stamp). `force` says which indexed files
 * to read again however unchanged (their chunking settings changed). `stored` may hold only part of the index (a folder's documents):
 * paths outside it are simply not planned.
 */
export function planChanges(
  discovery: Discovery,
  stored: ReadonlyMap<string, Stamp>,
  options: { force?: (path: string) => boolean } = {},
): ChangePlan {
  const plan: ChangePlan = { added: [], changed: [], unchanged: 0, gone: [], unreadable: [] };
  for (const file of discovery.files) {
    const previous = stored.get(file.path);
    if (!previous) plan.added.push(file);
    else if (options.force?.(file.path) || !sameStamp(previous, file)) plan.changed.push(file);
    else plan.unchanged++;
  }
  const present = new Set(discovery.files.map((f) => f.path));
  const reported = new Set(discovery.problems.map((p) => p.path));
  for (const path of stored.keys()) {
    if (present.has(path)) continue;
    if (reported.has(path) || isUnlisted(discovery, path)) plan.unreadable.push(path);
    else plan.gone.push(path);
  }
  return plan;
}
