/** A conversion worker thread: converts the files the pool sends it, one at a time. */
import { convertFile } from "./convert.ts";
import { describeError } from "./errors.ts";

declare const self: Worker;

// pdf.js and mammoth report what they cannot parse through the console; here a problem is a failure reason, and
// nothing a worker prints may land in the output of `--json`.
for (const method of ["log", "info", "warn", "error", "debug"] as const) console[method] = () => {};

self.onmessage = async (event: MessageEvent<{ id: number; path: string; bytes: Uint8Array }>) => {
  const { id, path, bytes } = event.data;
  try {
    self.postMessage({ id, document: await convertFile(path, bytes) });
  } catch (error) {
    self.postMessage({ id, error: describeError(error) });
  }
};
