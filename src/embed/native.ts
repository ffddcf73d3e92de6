/**
 * Native parts embedded in the compiled executable (onnxruntime, usearch, an optional model) are unpacked once
 * into a versioned folder under the home folder, beside each other, so a `.node` file finds the shared library
 * next to it through its `$ORIGIN` runpath. Safe when several processes start at once: each file is written to a
 * unique temp name and renamed into place; a file is reused only when its size matches.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { env } from "../env.ts";

export interface EmbeddedFile {
  /** Where the bundler put the bytes (a `/$bunfs/…` path inside the executable). */
  embedded: string;
  /** The file name it must have on disk. */
  name: string;
}

/** `~/.researcher` or `$RESEARCHER_HOME` (native parts are per machine, not per `--home`). */
function cacheRoot(): string {
  return join(env.home(), "native");
}

/** Copy embedded files into `<home>/native/<folder>/` unless already there; returns that folder. */
export function unpack(folder: string, files: EmbeddedFile[]): string {
  const dir = join(cacheRoot(), folder);
  mkdirSync(dir, { recursive: true });
  for (const file of files) {
    const target = join(dir, file.name);
    mkdirSync(dirname(target), { recursive: true });
    const size = statSync(file.embedded).size;
    if (existsSync(target) && statSync(target).size === size) continue;
    const temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      // copyFile cannot read Bun's virtual file system; read and write instead.
      writeFileSync(temp, readFileSync(file.embedded), { mode: 0o755 });
      if (statSync(temp).size !== size) throw new Error(`short write unpacking ${file.name} into ${dir}`);
      renameSync(temp, target);
    } finally {
      rmSync(temp, { force: true });
    }
  }
  return dir;
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
