/** A writer lock per repository: one indexer at a time; readers never wait (SQLite WAL). */
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ResearcherError } from "./errors.ts";

export function acquireWriterLock(dir: string, name: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, `${process.pid} ${Date.now()}\n`);
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number.parseInt(readLock(file), 10);
      // A live holder, this process included, keeps the lock: two writers in one process are no safer.
      if (Number.isFinite(holder) && isAlive(holder)) {
        throw new ResearcherError("LOCKED", `repository '${name}' is being indexed by process ${holder}`, {
          hint: `wait for it to finish, or remove ${file} if that process is gone`,
        });
      }
      rmSync(file, { force: true }); // stale: its writer died
    }
  }
  throw new ResearcherError("LOCKED", `cannot take the writer lock ${file}`);
}

function readLock(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
