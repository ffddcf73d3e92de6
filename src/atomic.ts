/** Whole-file writes that never leave a half-written file: write a sibling temp file, fsync it, rename over. */
import {
  accessSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ResearcherError } from "./errors.ts";
import { writeAll } from "./terminal.ts";

export function tempPathFor(file: string): string {
  const unique = `${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
  return join(dirname(file), `.${basename(file)}.${unique}.tmp`);
}

/**
 * The names `tempPathFor` makes, `.<name>.<pid>.<time>.<random>.tmp`, with SQLite's `-wal`/`-shm` beside a
 * database built as one: group 1 is the file's name, group 2 the writer's pid.
 */
export const TEMP_FILE_NAME = /^\.(.+)\.(\d+)\.[0-9a-z]+\.[0-9a-z]+\.tmp(?:-wal|-shm)?$/;

/**
 * Write `file` whole or not at all. A link is written through (its target replaced, the link kept: a config.yaml
 * kept in a dotfiles folder stays there), an existing file keeps its permissions (a private file stays private),
 * and what is no regular file (a device, a FIFO) is refused rather than replaced by one.
 */
export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  const target = existingTarget(file);
  const temp = tempPathFor(target.path);
  try {
    const fd = openSync(temp, "w", target.mode);
    try {
      if (target.existed) fchmodSync(fd, target.mode); // exactly, whatever the umask
      writeWhole(fd, typeof data === "string" ? Buffer.from(data) : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target.path);
  } catch (error) {
    rmSync(temp, { force: true });
    // (The folder that is missing, through a link to nothing yet, is its target's, not the link's.)
    throw namedFor(target.path === file ? file : `${file} (a link to ${target.path})`, error, target.path);
  }
  syncFolder(dirname(target.path));
}

/**
 * All of `bytes` to `fd`. A write that runs out of space part-way returns a short count and no error (the error
 * comes with the next write): a single `writeSync` put a config.yaml cut at 4 KB in place, repositories gone, and
 * said it was saved (s19 review F1).
 */
export function writeWhole(fd: number, bytes: Uint8Array): void {
  for (let rest = bytes; rest.length > 0; ) rest = rest.subarray(writeSync(fd, rest));
}

/**
 * A command's `-o`: a regular file (or a new one) is written whole by writeFileAtomic; one of this process's own
 * open files named by descriptor (`/dev/stdout`, `/dev/fd/N`) is written to that descriptor, as `> file` would
 * have been, at its offset (replacing the file it leads to would cut off everything else written there); anything
 * else, a device such as /dev/null or a FIFO, is written into as a shell redirection would, never replaced.
 */
export function writeOutput(file: string, data: string): void {
  const fd = ownDescriptor(file);
  const stats = fd === undefined ? statSync(file, { throwIfNoEntry: false }) : undefined;
  const writtenInto = fd !== undefined || (stats !== undefined && !stats.isFile() && !stats.isDirectory());
  if (writtenInto) writeInto(file, fd, data);
  else writeFileAtomic(file, data);
}

/** Write into what is there, as a shell redirection would: a descriptor of this process, a device or a FIFO. */
function writeInto(file: string, fd: number | undefined, data: string): void {
  try {
    if (fd !== undefined) writeAll(checkedDescriptor(fd, file), data);
    else writeFileSync(file, data);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EPIPE") return; // the reader has gone (`| head`): as for a redirection, nothing more to write
    // No descriptor open for writing, or a device that is not there (/dev/tty without a terminal): the command's input.
    if (code === "EBADF") throw new ResearcherError("INVALID_INPUT", `cannot write ${file}: it is not open for writing`);
    if (code === "ENXIO") throw new ResearcherError("INVALID_INPUT", `cannot write ${file}: no such device`);
    throw error instanceof ResearcherError ? error : namedFor(file, error);
  }
}

/**
 * A descriptor this command was given to write to: a file, a pipe, a terminal or a socket. Any other (the runtime's
 * own event descriptors, which a number not passed in may name) is refused rather than written into.
 */
function checkedDescriptor(fd: number, file: string): number {
  const stats = fstatSync(fd);
  if (stats.isFile() || stats.isFIFO() || stats.isCharacterDevice() || stats.isSocket()) return fd;
  throw new ResearcherError("INVALID_INPUT", `cannot write ${file}: it is no file, pipe or terminal this command was given`);
}

/**
 * The descriptor a path names in this process: `/dev/stdout` 1, `/dev/stderr` 2, `/dev/fd/N` and `/proc/self/fd/N` N.
 */
function ownDescriptor(file: string): number | undefined {
  const named = { "/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2 }[file as "/dev/stdout"];
  if (named !== undefined) return named;
  const numbered = /^\/(?:dev|proc\/self)\/fd\/(\d+)$/.exec(file);
  return numbered ? Number(numbered[1]) : undefined;
}

const NEW_FILE_MODE = 0o644;

/**
 * Where a write of `file` lands (through links), the mode it keeps and whether it existed; an error for what is
 * not a regular file, a folder (or a link to one) included.
 */
function existingTarget(file: string): { path: string; mode: number; existed: boolean } {
  const stats = statSync(file, { throwIfNoEntry: false });
  // New: written in its place; a link to nothing yet (a dotfiles link made first) creates what it points to.
  if (!stats) return { path: danglingTarget(file) ?? file, mode: NEW_FILE_MODE, existed: false };
  if (stats.isDirectory()) throw namedFor(file, Object.assign(new Error("is a folder"), { code: "EISDIR" }));
  if (!stats.isFile()) {
    throw new ResearcherError("INVALID_INPUT", `cannot write ${file}: it is not a regular file (a device, a FIFO or a socket)`);
  }
  // A file this user may not write is not replaced because its folder allows a rename (as `cp` would refuse).
  try {
    accessSync(file, constants.W_OK);
  } catch (error) {
    throw namedFor(file, error);
  }
  return { path: realpathSync(file), mode: stats.mode & 0o7777, existed: true };
}

/** Where a link that points to nothing leads (followed through further links), or undefined for no link. */
function danglingTarget(file: string): string | undefined {
  let path = file;
  for (let hops = 0; hops < 40; hops++) {
    if (!lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) return path === file ? undefined : path;
    path = resolve(dirname(path), readlinkSync(path));
  }
  throw namedFor(file, Object.assign(new Error("too many links"), { code: "ELOOP" }));
}

/** A failed write told by the file the caller named, not the temp file beside it; the system's code is kept. */
function namedFor(file: string, error: unknown, path = file): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (!code) return error;
  const why =
    code === "ENOENT" || code === "ENOTDIR"
      ? `the folder ${dirname(path)} does not exist`
      : code === "EISDIR"
        ? "a folder is in its place"
        : code === "EACCES" || code === "EPERM"
          ? "permission denied (is it read-only?)"
          : code;
  return Object.assign(new Error(`cannot write ${file}: ${why}`), { code });
}

/** Flush a file another writer wrote (e.g. usearch's `save`) before it is renamed into place. */
export function syncFile(file: string): void {
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The rename is durable only once the folder's entry is on disk: after a crash, the file is new or old, not gone. */
export function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // some platforms and file systems cannot fsync a folder; the rename itself is still atomic
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
