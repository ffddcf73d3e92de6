/**
 * Where pdf.js finds its character maps (CMaps, needed to read text in CJK fonts): the installed package's `cmaps`
 * folder. `build.ts` replaces this module in the executable with the same files embedded.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export function readCMap(name: string): Uint8Array {
  const root = dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
  return readFileSync(join(root, "cmaps", name));
}
