/**
 * Native parts embedded in the compiled executable (onnxruntime, usearch, an optional model) are unpacked once
 * into a versioned folder under the home folder, beside each other, so a `.node` file finds the shared library
 * next to it through its `$ORIGIN` runpath. Safe when several processes start at once: each file is written to a
 * unique temp name and renamed into place. A file is reused only when it holds the very bytes embedded: a library
 * of the right size damaged on disk (bit rot, a restore cut short) crashed every run that loaded it.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { env } from "../env.ts";
import { describeError, systemCode } from "../errors.ts";

export interface EmbeddedFile {
  /** Where the bundler put the bytes (a `/$bunfs/…` path inside the executable). */
  embedded: string;
  /** The file name it must have on disk. */
  name: string;
  /** contentHash of its bytes, taken by build.ts. */
  hash: string;
}

/** A fast hash of bytes (wyhash, 2–3 ms for onnxruntime's 46 MB): a check against damage, not against an attacker. */
export function contentHash(bytes: Uint8Array): string {
  return Bun.hash(bytes).toString(16);
}

/**
 * `~/.researcher` or `$RESEARCHER_HOME` (native parts are per machine, not per `--home`), absolute: a relative home
 * made a relative path that `require` read as a package name, and no model loaded (s21 retest R4).
 */
function cacheRoot(): string {
  return resolve(env.home(), "native");
}

/** Copy embedded files into `<home>/native/<folder>/` unless already there; returns that folder. */
export function unpack(folder: string, files: EmbeddedFile[]): string {
  const dir = join(cacheRoot(), folder);
  mkdirSync(dir, { recursive: true });
  for (const file of files) {
    const target = join(dir, file.name);
    mkdirSync(dirname(target), { recursive: true });
    if (holds(target, file)) continue;
    const bytes = readFileSync(file.embedded); // copyFile cannot read Bun's virtual file system
    if (contentHash(bytes) !== file.hash)
      throw new Error(`the executable is damaged (its copy of ${file.name} differs from the build's): install it again`);
    const temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      writeFileSync(temp, bytes, { mode: 0o755 });
      if (!holds(temp, file)) throw new Error("short write");
      renameSync(temp, target);
    } catch (error) {
      throw unpackFailure(error, target, bytes.length);
    } finally {
      rmSync(temp, { force: true });
    }
  }
  return dir;
}

/**
 * A failed unpacking, naming the file and its size: a disk too full for onnxruntime's 44 MB library said only "the
 * disk is full" while a 13-byte note was indexed (s27 hostile U1). The system error's code stays, so a full disk is
 * still DISK_FULL.
 */
export function unpackFailure(error: unknown, target: string, bytes: number): Error {
  const failure = new Error(`cannot unpack ${target} (${Math.ceil(bytes / 2 ** 20)} MB): ${describeError(error)}`, { cause: error });
  const code = systemCode(error);
  return code ? Object.assign(failure, { code }) : failure;
}

/** Whether `path` is a file holding exactly the embedded bytes (read through a mapping: nothing is copied). */
function holds(path: string, file: EmbeddedFile): boolean {
  const stats = statSync(path, { throwIfNoEntry: false });
  if (!stats?.isFile()) return false;
  return contentHash(stats.size === 0 ? new Uint8Array() : Bun.mmap(path, { shared: false })) === file.hash;
}

/** Unpack a native addon with its libraries and load it. */
export function loadNativeAddon(folder: string, files: EmbeddedFile[], addon: string): unknown {
  const dir = unpack(folder, files);
  return createRequire(import.meta.url)(join(dir, addon));
}

/** Accepts what `require` of a file-loader module gives: the path string or a module with it as default. */
export function embeddedPath(module: unknown): string {
  return typeof module === "string" ? module : (module as { default: string }).default;
}
