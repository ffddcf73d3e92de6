/**
 * A writer lock per repository: one indexer at a time; readers never wait (SQLite WAL). And a lock on config.yaml,
 * so that edits made at once (`repo add` and `context add` in parallel) all land.
 *
 * The lock file holds `<pid> <start time> <task>` and appears with that content in one step (written to a temp file,
 * then hard-linked to `lock`, which fails if it exists), so no one ever reads a half-written lock. A lock is
 * stale when its process is gone or its pid now names another process (Linux: the start time in
 * /proc/<pid>/stat differs). Removing a stale lock is a compare-and-delete done while holding `lock.takeover`,
 * itself such a lock: two writers that both find the same stale lock cannot both remove what the other took.
 */
import { type Dirent, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEMP_FILE_NAME, tempPathFor } from "./atomic.ts";
import { linkToNothing, ResearcherError, readDenied, toResearcherError, writeDenied } from "./errors.ts";
import { danglingLink, readRegularFile } from "./files.ts";
import { shellWord } from "./terminal.ts";

interface Holder {
  pid: number;
  /** Clock ticks after boot when the process started (Linux), or null where that cannot be read. */
  start: number | null;
  /** What it holds the lock for: absent from config.yaml's lock, and from locks older versions made. */
  task?: WriterTask;
}

/** Enough rounds for stale locks and takeovers by others to settle; a live holder ends it at once. */
const ATTEMPTS = 100;

/**
 * What a writer holds a repository's lock for, recorded in the lock: the one refused names it truly (a second `repo
 * remove` was told the repository was being indexed, and to delete the lock: s30b N2).
 */
export type WriterTask = "index" | "verify" | "remove" | "rename" | "remove-document" | "set-aside";

/** How a refused writer hears of each task: `<repository> <what>` by process N, and what to do. */
const TASKS: Record<WriterTask, { what: string; hint: string }> = {
  index: { what: "is being indexed", hint: "wait for it to finish" },
  verify: { what: "is being verified", hint: "wait for it to finish" },
  remove: { what: "is being removed", hint: "wait for it to finish (then the repository is gone)" },
  rename: { what: "is being renamed", hint: "wait for it to finish (then it has its new name)" },
  "remove-document": { what: "is busy: a document is being removed from it", hint: "try again in a moment" },
  "set-aside": { what: "is busy: its index is being moved aside", hint: "try again in a moment" },
};

export function acquireWriterLock(dir: string, name: string, task: WriterTask): () => void {
  const file = join(dir, "lock");
  const release = tryLock(dir, file, `the writer lock in ${dir}`, task);
  if (typeof release === "function") return release;
  // A lock naming no task (made by an older version) is some writer's, whatever it does.
  const held = release.task ? TASKS[release.task] : { what: "is busy: its index is being written", hint: "wait for it to finish" };
  throw new ResearcherError("LOCKED", `repository '${name}' ${held.what} by process ${release.pid}`, {
    hint: `${held.hint}, or remove ${file} if that process is gone`,
  });
}

/** The live process holding a repository's writer lock (an index run, `verify`, a watch batch), or null. */
export function writerLockHolder(dir: string): number | null {
  try {
    const found = readLock(join(dir, "lock"));
    const holder = found === undefined ? null : parseHolder(found);
    return holder && isRunning(holder) ? holder.pid : null;
  } catch {
    return null; // a lock this user cannot read says nothing about a run
  }
}

/** How long a config.yaml edit waits for another one (each takes milliseconds). */
const CONFIG_WAIT_MS = 10_000;

/** Run `edit` holding `<home>/config.lock`: waits while another process edits config.yaml. */
export function withConfigLock<T>(home: string, edit: () => T): T {
  const file = join(home, "config.lock");
  const deadline = Date.now() + CONFIG_WAIT_MS;
  for (;;) {
    const release = tryLock(home, file, join(home, "config.yaml")); // a home it cannot write: config.yaml cannot be
    if (typeof release === "function") {
      try {
        return edit();
      } finally {
        release();
      }
    }
    if (Date.now() > deadline) {
      throw new ResearcherError("LOCKED", `config.yaml is being changed by process ${release.pid}`, {
        hint: `try again in a moment, or remove ${file} if that process is gone`,
      });
    }
    Bun.sleepSync(5 + Math.random() * 10);
  }
}

/**
 * Take the lock `file` (in `dir`) for `task`: its release, or the live process that holds it. `what` names what
 * cannot be written when `dir` cannot.
 */
function tryLock(dir: string, file: string, what: string, task?: WriterTask): (() => void) | Holder {
  const mine = contentFor(process.pid, task);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    // Released only while it is still ours: a lock taken over meanwhile (judged stale) belongs to its new holder.
    if (createIn(dir, file, mine, what)) return () => readLock(file) === mine && rmSync(file, { force: true });
    const found = readLock(file);
    if (found === undefined) continue; // released meanwhile
    const holder = parseHolder(found);
    // A live holder, this process included, keeps the lock: two writers in one process are no safer.
    if (holder && isRunning(holder)) return holder;
    removeIfStill(file, found);
    Bun.sleepSync(Math.random()); // let a concurrent takeover finish
  }
  throw new ResearcherError("LOCKED", `cannot take the lock ${file}`, { hint: "try again in a moment" });
}

/**
 * The temp files of interrupted writes in `folder` (TEMP_FILE_NAME): those whose writer is gone. A write that is
 * still running keeps its own; a folder or link of such a name is no writer's (they leave files).
 */
export function leftoverTempFiles(folder: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const temp = entry.isFile() ? TEMP_FILE_NAME.exec(entry.name) : null;
    return temp !== null && processStartTime(Number(temp[2])) === null ? [entry.name] : [];
  });
}

/** The start time of a process (field 22 of /proc/<pid>/stat), null where there is no /proc. */
export function processStartTime(pid: number): number | null {
  return processStat(pid)?.start ?? null;
}

/** A process's state letter (`R`, `S`, `Z` for a zombie, …) and start time, from /proc; null where there is none. */
function processStat(pid: number): { state: string; start: number | null } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2 is the command name in parentheses and may contain spaces: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = Number(fields[19]);
    return { state: fields[0] ?? "", start: Number.isFinite(start) ? start : null };
  } catch {
    return null;
  }
}

function contentFor(pid: number, task?: WriterTask): string {
  return `${pid} ${processStartTime(pid) ?? "-"}${task ? ` ${task}` : ""}\n`;
}

/** The lock's folder and the lock in it; a folder this user may not write is named, with what fixes it. */
function createIn(dir: string, file: string, content: string, what: string): boolean {
  try {
    mkdirSync(dir, { recursive: true });
    return createWith(file, content);
  } catch (error) {
    // A link to nothing where the folder goes (an index folder kept on a disk not mounted now): mkdir's EEXIST.
    const target = danglingLink(dir);
    throw (target !== undefined ? linkToNothing(dir, target) : writeDenied(error, what, dir)) ?? error;
  }
}

/** Create `file` holding `content`, atomically; false if it already exists. */
function createWith(file: string, content: string): boolean {
  const temp = tempPathFor(file);
  try {
    writeFileSync(temp, content);
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Delete the stale lock `file` if it still holds `stale`. Only the holder of `<file>.takeover` compares and
 * deletes, so the lock cannot change between the two steps: a new lock cannot be created while `file`
 * exists, and the stale one's owner is dead. A takeover lock left by a writer that died mid-takeover is
 * itself stale and removed the same way.
 */
function removeIfStill(file: string, stale: string): void {
  const guard = `${file}.takeover`;
  if (!createWith(guard, contentFor(process.pid))) {
    const found = readLock(guard);
    const holder = found === undefined ? null : parseHolder(found);
    if (found !== undefined && !(holder && isRunning(holder))) removeIfStill(guard, found);
    return;
  }
  try {
    if (readLock(file) === stale) rmSync(file, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

/** A lock holds `<pid> <start>`: a few dozen bytes. */
const MAX_LOCK_BYTES = 4096;

/**
 * A lock's content, or undefined when there is none. Read only if it is a small regular file: a FIFO there hung
 * `status`, `index` and `config set`, and a link to /dev/zero took `status` to 8.4 GB (s17 hostile #5).
 */
function readLock(file: string): string | undefined {
  const read = readRegularFile(file, MAX_LOCK_BYTES, "a lock file");
  if ("bytes" in read) return new TextDecoder().decode(read.bytes);
  // A link to nothing is there all the same: no lock can be made beside it, and "try again" never helped.
  const dangling = read.missing && danglingLink(file) !== undefined;
  if (read.missing && !dangling) return undefined;
  const reason = dangling ? "a link to nothing" : read.reason;
  const failure = Object.assign(new Error(reason), { code: read.code });
  // A lock another user left, unreadable to this one: name it and what fixes it, not a bare EACCES.
  const denied = readDenied(failure, file);
  if (denied) throw denied;
  // A read that failed for the environment's sake (open files, I/O) says nothing of the file: a live holder's lock
  // must never be called no lock, with its removal as the fix.
  if (!dangling && read.code) throw toResearcherError(failure);
  // Not LOCKED, whose fix is to try again: what stands there stays until it is removed (a folder with rmdir).
  const remove = lstatSync(file, { throwIfNoEntry: false })?.isDirectory() ? "rmdir" : "rm";
  throw new ResearcherError("PATH_NOT_FOUND", `${file} is no lock (${reason})`, {
    hint: `remove it (\`${remove} ${shellWord(file)}\`) and run the command again`,
  });
}

/**
 * `<pid> <start> [<task>]`, or null when the content is not a lock (then it is stale); `-` for start: judged by pid
 * alone. A task this version does not know is left out: the lock is still held.
 */
function parseHolder(content: string): Holder | null {
  const [pid, start, task] = content.trim().split(/\s+/);
  const id = Number(pid);
  if (!Number.isSafeInteger(id) || id <= 0) return null;
  const ticks = Number(start);
  const holder: Holder = { pid: id, start: start !== undefined && start !== "-" && Number.isFinite(ticks) ? ticks : null };
  if (task !== undefined && Object.hasOwn(TASKS, task)) holder.task = task as WriterTask;
  return holder;
}

function isRunning(holder: Holder): boolean {
  if (!isAlive(holder.pid)) return false;
  const stat = processStat(holder.pid);
  // A zombie has ended (killed, and its parent has not collected it yet): it holds nothing any more.
  if (stat?.state === "Z" || stat?.state === "X") return false;
  const start = stat?.start ?? null;
  return holder.start === null || start === null || start === holder.start;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
