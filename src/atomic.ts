/** Whole-file writes that never leave a half-written file: write a sibling temp file, then rename over. */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export function tempPathFor(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now().toString(36)}.tmp`);
}

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
    throw error;
  }
}
