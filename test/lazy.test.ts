/** BM25 search, --help and --version must never pay for loading ONNX, usearch or the MCP SDK. */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers.ts";

const HEAVY = ["@huggingface/transformers", "onnxruntime-node", "usearch", "@modelcontextprotocol/sdk", "zod"];

test("heavy libraries are imported lazily (mcp.ts itself is only imported lazily)", () => {
  const offenders: string[] = [];
  for (const file of readdirSync(join(ROOT, "src")).filter((f) => f.endsWith(".ts"))) {
    const source = readFileSync(join(ROOT, "src", file), "utf8");
    for (const match of source.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gm)) {
      const target = match[1]!;
      if (file !== "mcp.ts" && HEAVY.some((heavy) => target === heavy || target.startsWith(`${heavy}/`))) offenders.push(`${file}: ${target}`);
      if (target === "./mcp.ts") offenders.push(`${file}: ./mcp.ts`);
    }
  }
  expect(offenders).toEqual([]);
});
