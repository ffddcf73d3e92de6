/**
 * A cold search pays only for what it uses: ONNX, usearch, the MCP SDK, YAML and valibot load on first use, and
 * Node's stream machinery (behind `process.stdout`, `process.stderr` and `node:tty`) is never touched by the CLI.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ROOT } from "./helpers.ts";

const HEAVY = [
  "@huggingface/transformers",
  "onnxruntime-node",
  "usearch",
  "@modelcontextprotocol/sdk",
  "zod",
  "yaml",
  "valibot",
  "node:tty",
];
/** Every module under src/, named by its file name (the rules below are about files, wherever they sit). */
const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((path) => ({ file: basename(path), source: readFileSync(join(ROOT, "src", path), "utf8") }));

/** The servers (and the tools, schemas and stdio transport only they use) load the MCP SDK statically; they
 * themselves are only ever imported lazily (by `serve`). */
const SERVERS = ["mcp.ts", "mcp-tools.ts", "mcp-schemas.ts", "http.ts", "stdio-transport.ts"];

test("heavy libraries are imported lazily (the server modules themselves are only imported lazily)", () => {
  const offenders: string[] = [];
  for (const { file, source } of sources) {
    for (const match of source.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gm)) {
      const target = match[1]!;
      const server = SERVERS.includes(file);
      if (!server && HEAVY.some((heavy) => target === heavy || target.startsWith(`${heavy}/`))) offenders.push(`${file}: ${target}`);
      if (!server && SERVERS.some((s) => basename(target) === s)) offenders.push(`${file}: ${target}`);
    }
  }
  expect(offenders).toEqual([]);
});

test("only the MCP server (and its stdio transport) and terminal.ts touch process.stdout / process.stderr", () => {
  const offenders = sources
    .filter(({ file, source }) => !["mcp.ts", "stdio-transport.ts", "terminal.ts"].includes(file) && /process\.std(out|err)/.test(source))
    .map(({ file }) => file);
  expect(offenders).toEqual([]);
});
