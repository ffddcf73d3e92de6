/**
 * A repository whose model folder's files changed in place since it was embedded: every index run refuses (its
 * content fingerprint differs), and `status` (text, JSON, MCP get_index_status, REST /status) and `verify` say so,
 * with the command the index run's hint gives (s28b retest R2: they said all was well).
 */
import { beforeAll, expect, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cliCommand, describeShared, GLOVE, HOOK_TIMEOUT, runCli, startServe, tempDir, writeTree } from "./helpers.ts";

/** Two vocabulary entries swapped in the folder's own tokenizer.json, rewritten at the same path. */
function rotateTokenizerInPlace(folder: string): void {
  const file = join(folder, "tokenizer.json");
  const tokenizer = JSON.parse(readFileSync(file, "utf8"));
  const vocab: Record<string, number> = tokenizer.model.vocab;
  [vocab.violin, vocab.volcano] = [vocab.volcano!, vocab.violin!];
  writeFileSync(file, JSON.stringify(tokenizer));
}

describeShared("a model folder whose files changed in place since the repository was embedded", () => {
  const home = tempDir();
  const model = join(tempDir(), "inplace");
  const docs = tempDir();
  // No RESEARCHER_MODEL_PATH: the repository keeps the model it was embedded with, as for a user.
  const env = { RESEARCHER_MODEL_PATH: "" };
  const cli = (...args: string[]) => runCli(args, { home, env });
  let fix = "";
  beforeAll(() => {
    cpSync(GLOVE, model, { recursive: true });
    writeTree(docs, { "a.md": "# Loans\n\nBorrow money from the bank.\n", "b.md": "# Music\n\nA violin sings.\n" });
    expect(cli("repo", "add", "d", docs).code).toBe(0);
    expect(cli("model", "set", model).code).toBe(0);
    expect(cli("index", "d", "--quiet").code).toBe(0);
    rotateTokenizerInPlace(model);
    writeTree(docs, { "c.md": "# New\n\nA note written since.\n" });
    const refused = cli("index", "d");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`the files of ${model} changed since repository 'd' was embedded with it`);
    fix = /hint: re-embed it with .*?: `([^`]+)`/.exec(refused.stderr)![1]!;
    expect(fix).toBe(`researcher index --embeddings-only d --model ${model}`);
  }, HOOK_TIMEOUT);

  test("verify reports a model problem whose fix is the index error's command", () => {
    const text = cli("verify", "d");
    expect(text.code).not.toBe(0);
    expect(text.stdout).toContain(`model: the files of ${model} changed since repository 'd' was embedded with it`);
    const json = cli("verify", "d", "--json");
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({ check: "model", fix, repaired: false });
  });

  test("status says index runs are refused and why, in text and JSON", () => {
    const text = cli("status", "d");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`index runs refused, no change is taken in: the files of ${model} changed`);
    expect(text.stdout).toContain(`re-embed with \`${fix}\``);
    const [entry] = [JSON.parse(cli("status", "d", "--json").stdout)].flat();
    expect(entry.index_held).toEqual({ because: expect.stringContaining(`the files of ${model} changed`), fix });
  });

  test("MCP get_index_status and REST /status say it", async () => {
    const serveEnv = { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" };
    const client = new Client({ name: "held", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({ command: cliCommand[0]!, args: [...cliCommand.slice(1), "serve"], env: serveEnv, cwd: home }),
    );
    try {
      const status = (await client.callTool({ name: "get_index_status", arguments: {} })) as unknown as {
        content: { text: string }[];
        structuredContent: { repositories: { index_held: unknown }[] };
      };
      expect(status.content[0]!.text).toContain(`index runs refused, no change is taken in: the files of ${model} changed`);
      expect(status.structuredContent.repositories[0]!.index_held).toMatchObject({ fix });
    } finally {
      await client.close();
    }
    const { url, proc } = await startServe(cliCommand, [], { env: serveEnv, cwd: home });
    try {
      const rest = (await (await fetch(`${url}/status`)).json()) as { repositories: { index_held: unknown }[] };
      expect(rest.repositories[0]!.index_held).toMatchObject({ fix });
    } finally {
      proc.kill();
    }
  }, 30_000);

  test("the fix re-embeds it: index runs go on, and status and verify say nothing more", () => {
    expect(cli(...fix.split(" ").slice(1)).code).toBe(0);
    expect(cli("index", "d", "--quiet").code).toBe(0);
    expect(JSON.parse(cli("status", "d", "--json").stdout)).toMatchObject({ index_held: null, documents: 3 });
    expect(cli("status", "d").stdout).not.toContain("index runs refused");
    expect(cli("verify", "d").stdout).toBe("d: ok\n");
  }, 60_000);
});

describeShared("a model folder unchanged since the repository was embedded", () => {
  test("status holds nothing and verify is ok", () => {
    const home = tempDir();
    const docs = tempDir();
    const cli = (...args: string[]) => runCli(args, { home, env: { RESEARCHER_MODEL_PATH: "" } });
    writeTree(docs, { "a.md": "# Loans\n\nBorrow money from the bank.\n" });
    expect(cli("repo", "add", "d", docs).code).toBe(0);
    expect(cli("model", "set", GLOVE).code).toBe(0);
    expect(cli("index", "d", "--quiet").code).toBe(0);
    expect(JSON.parse(cli("status", "d", "--json").stdout)).toMatchObject({ index_held: null });
    expect(cli("verify", "d").stdout).toBe("d: ok\n");
  }, 60_000);
});
