/**
 * A server keeps the documents it converted for reading: an agent paging through a PDF with get_document does not
 * wait for a conversion (or OCR) on every call, and an edited file is converted afresh. Observed without timing: a
 * conversion limit no conversion can meet is set between the reads, so only a kept conversion can answer.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { appendFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cliCommand, describeShared, GLOVE, HOOK_TIMEOUT, runCli, SHARED, tempDir, testShared } from "./helpers.ts";

const PDF = join(SHARED, "data/corpus/pdf/pdfjs-test-pdfs/tracemonkey.pdf");

interface ToolAnswer {
  content: { text: string }[];
  isError?: boolean;
}

describeShared("get_document in one server session", () => {
  const [home, docs] = [tempDir(), tempDir()];
  let client: Client;
  const page = async () => (await client.callTool({ name: "get_document", arguments: { ref: "docs:tracemonkey.pdf:p1" } })) as ToolAnswer;

  beforeAll(async () => {
    copyFileSync(PDF, join(docs, "tracemonkey.pdf"));
    expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "docs"], { home }).code).toBe(0);
    client = new Client({ name: "server-reads", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: cliCommand[0]!,
        args: [...cliCommand.slice(1), "serve"],
        env: { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, RESEARCHER_MODEL_PATH: GLOVE },
        cwd: home,
        stderr: "pipe",
      }),
    );
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    await client?.close();
  });

  testShared(
    "reads a converted PDF again without converting it; an edited file is converted afresh",
    async () => {
      const first = await page();
      expect(first.isError).toBeFalsy();
      expect(first.content[0]!.text).toContain("Trace-based Just-in-Time");
      // From here a conversion fails: tracemonkey.pdf takes over a second to convert.
      expect(runCli(["config", "set", "index.convert_timeout", "0.1"], { home }).code).toBe(0);
      const again = await page();
      expect(again.isError).toBeFalsy();
      expect(again.content[0]!.text).toBe(first.content[0]!.text);
      appendFileSync(join(docs, "tracemonkey.pdf"), "%edited\n"); // a comment after %%EOF: the same PDF, other bytes
      const edited = await page();
      expect(edited.isError).toBe(true);
      expect(edited.content[0]!.text).toContain("index.convert_timeout");
    },
    120_000,
  );
});
