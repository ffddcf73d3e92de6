/**
 * What changed between a repository's files and its index: the one rule the index run, watch mode and `verify`
 * share. A file not in the index is new; an indexed file whose stamp differs (sameStamp: size, mtime, inode change
 * time, inode number) is changed (the per-document step then reads it and converts it only when its SHA-256
 * differs); the same stamp is unchanged, and the file is not opened. An indexed path discovery no longer finds is
 * gone, unless discovery could not look at it (a folder it could not list, a file it reported a problem with):
 * unreadable is not gone, and the index keeps it. A path that now leads out of the repository (a link out of the
 * root) is gone, though reported.
 * What a file holds can leave it out too (minified JavaScript: isMinified): the planner looks at the files it would
 * read, new and changed, and at those alone; one so left out is not read, and a document it had goes.
 * A file whose conversion failed, with the same stamp (but its inode change time: failedUnchanged) and under the same
 * conversion settings as then, is failed and unchanged: it is not tried again (it would fail again), and its failure
 * stays recorded.
 */
import { isMinified, isUnlisted, MINIFIED_LINES_RULE, type DiscoveredFile, type Discovery } from "./discover.ts";
import type { FailureStamp } from "../store/store.ts";

/**
 * What the index recorded about a file when it was last read. Size and mtime alone missed another file put in its
 * place with the same two (a `mv` swap of files unpacked from one archive, `cp -p` or `rsync -a` over it): its text
 * stayed indexed for good (s28 hostile F1). A rename or a write sets the inode change time (`ctimeMs`) to now, and
 * a file renamed in is another inode (`ino`): git's index compares both for the same reason. Null in a stamp
 * recorded before the index kept them (schema 18): it matches no file, so the next run hashes the file once.
 */
export interface Stamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number | null;
  ino: number | null;
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
  /** Indexed files whose stamp differs (every indexed file when forced). */
  changed: DiscoveredFile[];
  /** How many indexed files have the same stamp. */
  unchanged: number;
  /** Indexed paths that are no longer there. */
  gone: string[];
  /** Indexed paths discovery could not look at: kept in the index. */
  unreadable: string[];
  /** Files that failed and have not changed since, under the same conversion settings: not tried again. */
  failedUnchanged: string[];
  /**
   * The inode numbers of those whose failure was recorded without one (before schema 18), to record now: taken as of
   * the file there once, such a failure never learnt the number, and a file renamed over it later was never read.
   */
  failureInodes: Map<string, number>;
  /**
   * New and changed files their content leaves out as generated code, by rule (`{"minified *.js": 2}`), for a
   * summary's `skipped_generated` beside what discovery left out by name.
   */
  generated: Record<string, number>;
}

/**
 * Whether a file on disk still has the stamp the index recorded: then it is not read again. A time or inode that
 * changes while the bytes do not (`chmod`, a hard link, a file system whose inode numbers are not stable) costs one
 * read and hash of the file, which then only updates the stamp. On Windows, Bun (as Node, through libuv) reports
 * NTFS's change time as ctime (the creation time is `birthtime`) and the file ID as the inode number; a file system
 * that keeps neither reports a constant, and its files are told by size and mtime as before.
 */
export function sameStamp(stored: Stamp | undefined, file: Stamp): boolean {
  return (
    stored !== undefined &&
    stored.size === file.size &&
    stored.mtimeMs === file.mtimeMs &&
    stored.ctimeMs === file.ctimeMs &&
    stored.ino === file.ino
  );
}

/**
 * Whether a file failed to convert as it is now, under these settings: trying it again would fail again. Its inode
 * change time is left out: a `chmod` or a new link would convert it again, which for a file that hit a time limit
 * costs the limit (a document's costs a hash); another file renamed into its place is another inode. A failure
 * recorded before inode numbers were (schema 18) is taken as of this one: the first run after the upgrade tried
 * every failed file again, each up to its time limit (the shared corpus's 99 failures, OCR and 60 s PDFs among them).
 */
export function failedUnchanged(failed: Failed | undefined, path: string, file: Stamp): boolean {
  const stamp = failed?.stamps.get(path);
  if (!failed || !stamp) return false;
  const settings = failed.settings === undefined || stamp.settings === failed.settings;
  return settings && sameStamp({ ...stamp, ctimeMs: file.ctimeMs, ino: stamp.ino ?? file.ino }, file);
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
  const plan: ChangePlan = {
    added: [],
    changed: [],
    unchanged: 0,
    gone: [],
    unreadable: [],
    failedUnchanged: [],
    failureInodes: new Map(),
    generated: {},
  };
  for (const file of discovery.files) {
    const previous = stored.get(file.path);
    // Checked first: a file indexed once and failing since keeps its old document, which differs from it.
    if (failedUnchanged(options.failed, file.path, file)) {
      plan.failedUnchanged.push(file.path);
      if (options.failed?.stamps.get(file.path)?.ino === null && file.ino !== null) plan.failureInodes.set(file.path, file.ino);
    } else if (previous && !options.force?.(file.path) && sameStamp(previous, file)) plan.unchanged++;
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
 * How long a file system's time tick can be: FAT and exFAT keep mtimes in 2 s steps; HFS+ and ext2/3 (small inodes)
 * in 1 s; Linux stamps even ext4's nanosecond fields from a clock that moves a few milliseconds at a time.
 */
const MTIME_TICK_MS = 2000;

/**
 * The stamp a run records for a file it read at `readAt`. A file saved again within the tick of that read, at the
 * same size, shows the very stamp recorded, and was never read again: git's "racily clean" files (an edit on a USB
 * stick, or two saves a second apart under watch, lost until the next edit: s19 review F3); so does a file rewritten
 * in place with its old mtime put back (`cp -p`) within the tick of its inode change time. A time less than a tick
 * older than the read is recorded a millisecond early, which the file does not show: the next run reads it again
 * (its hash says whether it changed) and records its real time once that is a tick old.
 */
export function recordedStamp(file: Stamp, readAt: number): Stamp {
  const early = (time: number) => (readAt - time < MTIME_TICK_MS ? time - 1 : time);
  return { size: file.size, mtimeMs: early(file.mtimeMs), ctimeMs: file.ctimeMs === null ? null : early(file.ctimeMs), ino: file.ino };
}
