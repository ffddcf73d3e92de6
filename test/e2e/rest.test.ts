/** REST under a slow read: a request that converts a long scan before it answers (issue 24's OCR meets Bun's server). */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliCommand, runCli, tempDir, writeTree } from "../helpers.ts";
import { scanOfPages } from "../pdf-fixtures.ts";

const OCR_TIMEOUT = 240_000;

test(
  "REST waits for a read that converts a long scan: the connection is not dropped after 10 s idle (s11 hostile #4b)",
  async () => {
    // Bun closes a connection idle for 10 s by default; a GET /documents of a scan changed since it was indexed
    // converts it (OCR) first, and the client got an empty reply.
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "scan.pdf": await scanOfPages(1) });
    expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "docs"], { home }).code).toBe(0);
    writeFileSync(join(docs, "scan.pdf"), await scanOfPages(60)); // edited: read as it is now, 60 pages of OCR
    const server = Bun.spawn([...cliCommand, "serve", "--port", "0"], {
      env: { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" },
      cwd: home,
      stdout: "ignore",
      stderr: "pipe",
    });
    try {
      const reader = (server.stderr as ReadableStream<Uint8Array>).getReader();
      let printed = "";
      while (!/listening on (\S+)\/mcp/.test(printed)) printed += new TextDecoder().decode((await reader.read()).value);
      reader.releaseLock();
      const url = /listening on (\S+)\/mcp/.exec(printed)![1]!;
      const started = performance.now();
      const response = await fetch(`${url}/documents/${encodeURIComponent("docs:scan.pdf:p60")}`);
      expect(performance.now() - started).toBeGreaterThan(10_000); // the case: longer than Bun's idle timeout
      expect(response.status).toBe(200);
      expect(((await response.json()) as { text: string }).text).toContain("hostile scan");
    } finally {
      server.kill();
    }
  },
  OCR_TIMEOUT,
);
