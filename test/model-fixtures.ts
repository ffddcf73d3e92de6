/** Model folders built from the shared models, for tests and benchmarks (no test-runner imports here). */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

/** The real, weak GloVe-SIF model: meaningful similarities, fast enough for every test. */
export const GLOVE = resolve(import.meta.dir, "../../shared/models/glove-6b-100d-sif");

/**
 * GloVe-SIF's own files under a config that claims one transformer layer, so it runs through the ONNX runtime like
 * any transformer instead of as a static token table. Same folder name, so the same fingerprint: the vectors of
 * the two paths must agree exactly. Written into `parent`; returns the model folder.
 */
export function writeGloveThroughOnnx(parent: string): string {
  const folder = join(parent, basename(GLOVE));
  mkdirSync(join(folder, "onnx"), { recursive: true });
  for (const name of readdirSync(GLOVE)) if (name !== "onnx" && name !== "config.json") symlinkSync(join(GLOVE, name), join(folder, name));
  for (const name of readdirSync(join(GLOVE, "onnx"))) symlinkSync(join(GLOVE, "onnx", name), join(folder, "onnx", name));
  const config = JSON.parse(readFileSync(join(GLOVE, "config.json"), "utf8"));
  writeFileSync(join(folder, "config.json"), JSON.stringify({ ...config, num_hidden_layers: 1 }));
  return folder;
}
