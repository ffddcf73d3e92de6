/** Whole-file writes that never leave a half-written file: write a sibling temp file, fsync it, rename over. */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export function tempPathFor(file: string): string {
  const unique = `${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
  return join(dirname(file), `.${basename(file)}.${unique}.tmp`);
}

/**
 * The names `tempPathFor` makes, `.<name>.<pid>.<time>.<random>.tmp`, with SQLite's `-wal`/`-shm` beside a
 * database built as one: group 1 is the file's name, group 2 the writer's pid.
 */
export const TEMP_FILE_NAME = /^\.(.+)\.(\d+)\.[0-9a-z]+\.[0-9a-z]+\.tmp(?:-wal|-shm)?$/;

export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  const temp = tempPathFor(file);
  try {
    const fd = openSync(temp, "w", 0o644);
    try {
      writeSync(fd, typeof data === "string" ? Buffer.from(data) : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw namedFor(file, error);
  }
  syncFolder(dirname(file));
}

/** A failed write told by the file the caller named, not the temp file beside it; the system's code is kept. */
function namedFor(file: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (!code) return error;
  const why =
    code === "ENOENT" || code === "ENOTDIR"
      ? `the folder ${dirname(file)} does not exist`
      : code === "EISDIR"
        ? "a folder is in its place"
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
