/** Model folders built from the shared models, for tests and benchmarks (no test-runner imports here). */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

/** The real, weak GloVe-SIF model: meaningful similarities, fast enough for every test. */
export const GLOVE = resolve(import.meta.dir, "../../shared/models/glove-6b-100d-sif");

/**
 * GloVe-SIF's own files under a config that claims one transformer layer, so it runs through the ONNX runtime like
 * any transformer instead of as a static token table. The same tokenizer and weights, so the same fingerprint: the
 * vectors of the two paths must agree exactly. Written into `parent`; returns the model folder.
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

/**
 * A stand-in hub on 127.0.0.1 that serves the folder `source` under /<id>/resolve/main/ (a raw socket: an HTTP
 * server library would correct the headers). "truncate": the connection closes after the first 1,000 bytes of
 * model.safetensors, under a Content-Length that promised all of it. "gzip": every file compressed, whatever the
 * request accepts, as a misconfigured mirror might. Point HF_ENDPOINT at `http://127.0.0.1:<port>`.
 */
export function standInHub(source: string, mode: "whole" | "truncate" | "gzip" = "whole") {
  return Bun.listen<undefined>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async data(socket, request) {
        const name = /GET \S*\/resolve\/main\/(\S+) /.exec(request.toString())?.[1] ?? "";
        const file = Bun.file(join(source, name));
        if (!name || !(await file.exists())) {
          socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
          return;
        }
        const raw = new Uint8Array(await file.arrayBuffer());
        const bytes = mode === "gzip" ? Bun.gzipSync(raw) : raw;
        const sent = mode === "truncate" && name === "model.safetensors" ? bytes.subarray(0, 1000) : bytes;
        const encoding = mode === "gzip" ? "content-encoding: gzip\r\n" : "";
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${bytes.length}\r\n${encoding}connection: close\r\n\r\n`);
        socket.write(sent);
        socket.end();
      },
    },
  });
}
