/**
 * Where pdf.js finds its data: character maps (CMaps, needed to read text in CJK fonts) and the wasm decoders for
 * JBIG2 and JPEG 2000 images (bilevel and archival scans, for OCR), from the installed package's `cmaps` and `wasm`
 * folders. `build.ts` replaces this module in the executable with the same files embedded.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const root = () => dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));

export function readCMap(name: string): Uint8Array {
  return readFileSync(join(root(), "cmaps", name));
}

export function readWasm(name: string): Uint8Array {
  return readFileSync(join(root(), "wasm", name));
}
