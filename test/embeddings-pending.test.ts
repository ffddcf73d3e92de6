/**
 * Embeddings that cannot be computed while indexing (a local model missing offline, an embedding server unreachable)
 * leave the text indexed, a warning, `embeddings_pending` and exit 0 — alike for every provider — and `verify` says
 * they are pending with the command that completes them.
 */
import { expect, test } from "bun:test";
import { cpSync, renameSync } from "node:fs";
import { join } from "node:path";
import { registerRepository } from "../src/repos.ts";
import { GLOVE, runCli, tempDir, testShared, writeTree } from "./helpers.ts";

/** Nothing leaves the machine: port 9 (discard) on loopback refuses, and so does the hub "mirror". */
const OFFLINE = { RESEARCHER_MODEL_PATH: "", HF_ENDPOINT: "http://127.0.0.1:9" };

function repository(embedding?: { provider: "ollama" | "openai"; model: string; ollama_url?: string; openai_url?: string }) {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "whale.md": "# Whales\n\nThe whale sings in the deep sea.\n" });
  registerRepository(home, { name: "d", path: docs, embedding });
  return (...args: string[]) => runCli(args, { home, env: { ...OFFLINE, OPENAI_API_KEY: "sk-local" } });
}

const unreachable = {
  ollama: { provider: "ollama" as const, model: "nomic-embed-text", ollama_url: "http://127.0.0.1:9" },
  "an OpenAI-compatible server": { provider: "openai" as const, model: "text-embedding-3-small", openai_url: "http://127.0.0.1:9" },
};

for (const [name, embedding] of Object.entries(unreachable)) {
  test(`${name} unreachable: the text is indexed, embeddings pending with a warning, exit 0; verify says so`, () => {
    const cli = repository(embedding);
    const run = cli("index", "d", "--json");
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ repository: "d", indexed: 1, embeddings_pending: 1, embedded: 0, model: null });
    expect(summary.warnings[0]).toContain("`researcher index d` embeds them");
    expect(run.stderr).toStartWith("warning: d: embeddings pending for 1 fragment texts (BM25 search works now)");
    expect(cli("index", "d").stdout).toContain("d: 0 indexed, 1 unchanged"); // the text summary too
    expect(JSON.parse(cli("search", "whale", "--json").stdout).results[0].path).toBe("whale.md");

    const verify = cli("verify", "d", "--json");
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout).problems).toEqual([
      expect.objectContaining({ check: "vectors", detail: expect.stringContaining("embeddings pending"), fix: "researcher index d" }),
    ]);
    // A search by meaning says they wait, not that it was indexed without embeddings and `researcher index d` embeds
    // them: that run alone embeds nothing while the model cannot be had (s25 scripts D3).
    const hybrid = JSON.parse(cli("search", "whale", "--mode", "hybrid", "--json").stdout);
    expect(hybrid.warnings).toEqual([
      {
        repository: "d",
        code: "NO_VECTORS",
        message: "searched with bm25: repository 'd' has no vectors yet for hybrid search: 1 fragment texts wait for embeddings",
        hint: "`researcher index d` embeds them once their model can be loaded (its warning says why it cannot)",
      },
    ]);
  }, 30_000);
}

testShared(
  "offline first run with the default model missing: verify says embeddings are pending, and its fix completes them",
  () => {
    const cli = repository();
    const run = cli("index", "d", "--json");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ embeddings_pending: 1, model: null });

    const verify = cli("verify", "d");
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain("embeddings pending: 1 fragment texts have no vector yet");
    expect(verify.stdout).toContain("→ researcher index d");

    expect(cli("model", "set", GLOVE).code).toBe(0); // the model becomes available
    expect(cli("index", "d").code).toBe(0);
    expect(cli("verify", "d")).toMatchObject({ code: 0, stdout: "d: ok\n" });
  },
  60_000,
);

testShared(
  "a model that cannot be loaded at search time (moved, cleared, a server down): auto mode searches with bm25 and warns",
  () => {
    // s11 review: a repository embedded with a model folder that later moved failed every default search (exit 1),
    // though its words were all there; indexing already degrades this way.
    const home = tempDir();
    const docs = tempDir();
    const model = join(tempDir(), "glove");
    cpSync(GLOVE, model, { recursive: true });
    writeTree(docs, { "whale.md": "# Whales\n\nThe whale sings in the deep sea.\n" });
    registerRepository(home, { name: "d", path: docs });
    const cli = (...args: string[]) => runCli(args, { home, env: OFFLINE });
    expect(cli("index", "d", "--model", model).code).toBe(0);
    expect(JSON.parse(cli("search", "whale", "--json").stdout).mode).toBe("hybrid");
    renameSync(model, `${model}-moved`);

    const found = cli("search", "whale", "--json");
    expect(found.code).toBe(0);
    const response = JSON.parse(found.stdout);
    expect(response).toMatchObject({ mode: "bm25", total: 1, results: [{ path: "whale.md", mode: "bm25" }] });
    expect(response.warnings).toEqual([
      {
        repository: "d",
        code: "MODEL_UNAVAILABLE",
        message: `searched with bm25: ${model} does not exist`,
        hint: expect.stringContaining("transformers.js layout"),
      },
    ]);
    expect(found.stderr).toStartWith(`warning: d: searched with bm25: ${model} does not exist\nhint: `);
    // Asked for by name, the mode stays an error, and its hint offers the words.
    const hybrid = cli("search", "whale", "--mode", "hybrid");
    expect(hybrid.code).toBe(1);
    expect(hybrid.stderr).toStartWith(`error: ${model} does not exist\nhint: `);
    expect(hybrid.stderr).toContain("or search in bm25 mode");
  },
  30_000,
);
