/**
 * A command over all repositories serves the healthy ones: a damaged, outdated or BM25-only repository is skipped and
 * reported (stderr warning with its hint; `skipped` / `error` in JSON), not the whole command's failure. Naming it,
 * or every repository failing, still fails the command.
 */
import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { registerRepository } from "../src/repos.ts";
import { Store } from "../src/store/store.ts";
import { cliCommand, describeShared, GLOVE, HOOK_TIMEOUT, runCli, startServe, tempDir, writeTree } from "./helpers.ts";

type Tool = { content: { text: string }[]; isError?: boolean; structuredContent?: Record<string, unknown> };

/** Two repositories, both indexed: "good" and "bad" (the test damages "bad"). */
function twoRepositories(options: { embed: boolean }) {
  const home = tempDir();
  const good = tempDir();
  const bad = tempDir();
  writeTree(good, { "whale.md": "# Whales\n\nThe whale sings in the deep sea.\n" });
  writeTree(bad, { "shark.md": "# Sharks\n\nA whale shark is a fish.\n" });
  registerRepository(home, { name: "good", path: good, embed: options.embed });
  const badRepo = registerRepository(home, { name: "bad", path: bad, embed: options.embed });
  expect(runCli(["index", "--quiet"], { home }).code).toBe(0);
  return { home, badDb: Store.dbPath(badRepo.dir) };
}

function mcpEnv(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, RESEARCHER_MODEL_PATH: GLOVE, NO_COLOR: "1" };
}

async function mcpClient(home: string): Promise<{ call: (name: string, args: object) => Promise<Tool>; close: () => Promise<void> }> {
  const client = new Client({ name: "broken", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: cliCommand[0]!, args: [...cliCommand.slice(1), "serve"], env: mcpEnv(home), cwd: home }),
  );
  return {
    call: async (name, args) => (await client.callTool({ name, arguments: args as Record<string, unknown> })) as Tool,
    close: () => client.close(),
  };
}

const damages: Record<string, (db: string) => void> = {
  "not a database": (db) => writeFileSync(db, "garbage\n"),
  "an older schema": (db) => {
    const database = new Database(db);
    database.run("PRAGMA user_version = 4");
    database.close();
  },
};

for (const [name, damage] of Object.entries(damages)) {
  describe(`one repository's index is ${name}`, () => {
    const { home, badDb } = twoRepositories({ embed: false });
    beforeAll(() => damage(badDb));
    const cli = (...args: string[]) => runCli(args, { home });

    test("search, repos-for and ls serve the healthy repository and warn about the other, with its hint", () => {
      for (const args of [["search", "whale"], ["repos-for", "whale"], ["ls"]]) {
        const run = cli(...args);
        expect({ args, code: run.code }).toEqual({ args, code: 0 });
        expect(run.stdout).toContain("whale.md");
        expect(run.stdout).not.toContain("shark.md");
        // The fix is in the hint, or in the message itself (an outdated index: "run `researcher index bad`").
        expect(run.stderr).toMatch(/^warning: skipped bad: .+(\nhint: .*)?`researcher [^`]+`/m);
        expect(run.stderr).not.toContain("error:");
      }
    });

    test("search --json and repos-for --json report it; status lists it with its error", () => {
      const searched = JSON.parse(cli("search", "whale", "--json").stdout);
      expect(searched.repositories).toEqual(["good"]);
      expect(searched.skipped.map((s: { repository: string }) => s.repository)).toEqual(["bad"]);
      expect(Object.keys(searched.skipped[0]).sort()).toEqual(["code", "hint", "message", "repository"]);
      const [{ message, hint }] = searched.skipped;
      expect(`${message} ${hint}`).toMatch(/`researcher (index|verify)/);
      expect(searched.results.map((r: { repository: string }) => r.repository)).toEqual(["good"]);

      const where = JSON.parse(cli("repos-for", "whale", "--json").stdout);
      expect(where.map((m: { repository: string }) => m.repository)).toEqual(["good", "bad"]);
      expect(where[1]).toMatchObject({ score: 0, matched: 0, best: null, error: { code: searched.skipped[0].code } });

      const status = cli("status", "--json");
      expect(status.code).toBe(0);
      const [bad, good] = JSON.parse(status.stdout);
      expect(good.error).toBeUndefined();
      expect(good.documents).toBe(1);
      expect(bad).toMatchObject({ name: "bad", error: { code: searched.skipped[0].code, message, hint } });
      const text = cli("status");
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^bad .*\n {2}error: [\s\S]*`researcher /m);
    });

    test("get by docid or bare path, and multi-get's glob, look in the healthy repository", () => {
      const docid = JSON.parse(cli("search", "whale", "--json").stdout).results[0].docid;
      for (const ref of [docid, "whale.md"]) {
        const got = cli("get", ref);
        expect({ ref, code: got.code, stderr: got.stderr }).toEqual({ ref, code: 0, stderr: "" });
        expect(got.stdout).toContain("The whale sings");
      }
      const miss = cli("get", "#abcdef");
      expect(miss.code).toBe(1);
      expect(miss.stderr).toMatch(/^error: no document with docid #abcdef \(bad could not be read\)\nhint: .*`researcher status`/);
      const many = cli("multi-get", "*.md", "--json");
      expect(many.code).toBe(0);
      const found = JSON.parse(many.stdout);
      expect(found.documents.map((d: { path: string }) => d.path)).toEqual(["whale.md"]);
      expect(found.skipped).toEqual([{ repository: "bad", path: "*.md", reason: expect.stringContaining("its index cannot be read") }]);
    });

    test("naming the broken repository still fails, as does every repository failing", () => {
      for (const args of [
        ["search", "whale", "--repo", "bad"],
        ["status", "bad"],
        ["ls", "bad"],
      ]) {
        const run = cli(...args);
        expect({ args, code: run.code }).toEqual({ args, code: 1 });
        expect(run.stderr).toMatch(/^error: [\s\S]*`researcher /);
      }
    });

    test("MCP: list_repositories, get_index_status and search_fragments answer with the healthy one", async () => {
      const mcp = await mcpClient(home);
      try {
        const listed = await mcp.call("list_repositories", {});
        expect(listed.isError).toBeFalsy();
        const repositories = listed.structuredContent!.repositories as { name: string; error?: { code: string } }[];
        expect(repositories.map((r) => [r.name, Boolean(r.error)])).toEqual([
          ["bad", true],
          ["good", false],
        ]);
        const status = await mcp.call("get_index_status", {});
        expect(status.isError).toBeFalsy();
        expect(status.content[0]!.text).toMatch(/^bad: error: /m);
        const searched = await mcp.call("search_fragments", { query: "whale" });
        expect(searched.isError).toBeFalsy();
        expect(searched.structuredContent).toMatchObject({ repositories: ["good"], skipped: [{ repository: "bad" }] });
        expect(searched.content[0]!.text).toContain("warning: skipped bad");
        const named = await mcp.call("search_fragments", { query: "whale", repository: "bad" });
        expect(named.isError).toBe(true);
      } finally {
        await mcp.close();
      }
    }, 30_000);
  });
}

test("every repository broken: search, status, ls and repos-for fail with each one's error", () => {
  const { home, badDb } = twoRepositories({ embed: false });
  writeFileSync(badDb, "garbage\n");
  writeFileSync(badDb.replace("/bad/", "/good/"), "garbage\n");
  for (const args of [["search", "whale"], ["status"], ["ls"], ["repos-for", "whale"]]) {
    const run = runCli(args, { home });
    expect({ args, code: run.code }).toEqual({ args, code: 1 });
  }
  expect(runCli(["search", "whale"], { home }).stderr).toMatch(/^error: no repository could answer: bad: .+; good: /);
  const status = runCli(["status"], { home });
  expect(status.stdout).toMatch(/^bad .*\n {2}error: /m); // each still listed with its error
  expect(status.stderr).toMatch(/^error: no repository could answer: bad: .+; good: .+\nhint: /);
});

describeShared("vector and hybrid search beside a BM25-only repository", () => {
  const home = tempDir();
  const vectors = tempDir();
  const plain = tempDir();
  writeTree(vectors, { "whale.md": "# Whales\n\nThe whale sings in the deep sea.\n" });
  writeTree(plain, { "churn.md": "# Churn\n\nCustomers leave; the whale account stayed.\n" });
  beforeAll(() => {
    registerRepository(home, { name: "ocean", path: vectors });
    registerRepository(home, { name: "churn", path: plain, embed: false });
    expect(runCli(["index", "--quiet"], { home }).code).toBe(0);
  }, HOOK_TIMEOUT);
  const cli = (...args: string[]) => runCli(args, { home });

  test("over all repositories, vector search skips the ones without vectors and hybrid searches them with bm25, each saying so", () => {
    const vector = cli("search", "whale", "--mode", "vector", "--json");
    expect(vector.code).toBe(0);
    const skipped = JSON.parse(vector.stdout);
    expect(skipped.repositories).toEqual(["ocean"]);
    expect(skipped.skipped).toMatchObject([{ repository: "churn", code: "NO_VECTORS" }]);
    expect(vector.stderr).toContain("warning: skipped churn");
    const hybrid = cli("search", "whale", "--mode", "hybrid", "--json");
    expect(hybrid.code).toBe(0);
    const both = JSON.parse(hybrid.stdout);
    expect(both.repositories.sort()).toEqual(["churn", "ocean"]);
    expect(both.skipped).toEqual([]);
    expect(both.warnings).toMatchObject([{ repository: "churn", code: "NO_VECTORS" }]);
    expect(hybrid.stderr).toContain("warning: churn: searched with bm25: repository 'churn' was indexed without embeddings");
  });

  test("`config set search.mode vector` does the same", () => {
    const run = cli;
    expect(run("config", "set", "search.mode", "vector").code).toBe(0);
    try {
      const searched = run("search", "whale", "--json");
      expect(searched.code).toBe(0);
      expect(JSON.parse(searched.stdout).skipped).toMatchObject([{ repository: "churn" }]);
    } finally {
      expect(run("config", "set", "search.mode", "auto").code).toBe(0);
    }
  });

  test("MCP search_fragments and REST /search in vector mode answer too", async () => {
    const mcp = await mcpClient(home);
    try {
      const searched = await mcp.call("search_fragments", { query: "whale", mode: "vector" });
      expect(searched.isError).toBeFalsy();
      expect(searched.structuredContent).toMatchObject({ repositories: ["ocean"], skipped: [{ repository: "churn" }] });
    } finally {
      await mcp.close();
    }
    const { url, proc: server } = await startServe(cliCommand, [], { env: mcpEnv(home), cwd: home });
    try {
      const rest = await fetch(`${url}/search?q=whale&mode=vector`);
      expect(rest.status).toBe(200);
      expect(await rest.json()).toMatchObject({ repositories: ["ocean"], skipped: [{ repository: "churn" }] });
    } finally {
      server.kill();
    }
  }, 30_000);

  test("by default each repository is searched in its own mode, and each result says which (their scores are on two scales)", () => {
    const response = JSON.parse(cli("search", "whale", "--json").stdout);
    expect(response.mode).toBe("hybrid");
    const modes = Object.fromEntries(response.results.map((r: { repository: string; mode: string }) => [r.repository, r.mode]));
    expect(modes).toEqual({ ocean: "hybrid", churn: "bm25" });
  });

  test("naming the BM25-only repository fails with a hint that works", () => {
    const named = cli("search", "whale", "--mode", "vector", "--repo", "churn");
    expect(named.code).toBe(1);
    const hint = /^hint: embed it with `([^`]+)`/m.exec(named.stderr)?.[1];
    expect(hint).toBe("researcher config set repositories.churn.embed true && researcher index churn");
    for (const command of hint!.split(" && ")) expect(cli(...command.split(" ").slice(1)).code).toBe(0);
    const after = cli("search", "whale", "--mode", "vector", "--repo", "churn", "--json");
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout).results[0].path).toBe("churn.md");
  });
});

test("a repository never indexed: ls of all of them lists the others and says why it is left out (search and repos-for do too)", () => {
  const { home } = twoRepositories({ embed: false });
  const fresh = tempDir();
  writeTree(fresh, { "new.md": "# New\n\nwhale news\n" });
  registerRepository(home, { name: "fresh", path: fresh, embed: false });
  for (const args of [["ls"], ["search", "whale"]]) {
    const run = runCli(args, { home });
    expect({ args, code: run.code }).toEqual({ args, code: 0 });
    expect(run.stdout).toContain("whale.md");
    expect(run.stderr).toMatch(
      /^warning: skipped fresh: repository 'fresh' has not been indexed yet.*\nhint: run `researcher index fresh`/m,
    );
  }
  // Named, it is an error that says how to index it, as `search --repo fresh` and `status fresh` are.
  expect(runCli(["ls", "fresh"], { home })).toMatchObject({
    code: 1,
    stdout: "",
    stderr: "error: repository 'fresh' has not been indexed yet\nhint: run `researcher index fresh`\n",
  });
});
