/** The CLI as users run it: the compiled executable in a subprocess, its own home folder, real files, real SQLite. */
import { beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { processStartTime } from "../../src/lock.ts";
import { join } from "node:path";
import {
  cliCommand,
  describeShared,
  executable,
  GLOVE,
  MODEL_ENV,
  HOOK_TIMEOUT,
  runCli,
  SYSTEM_PATH,
  tempDir,
  testShared,
  useCliCommand,
  writeTree,
} from "../helpers.ts";

beforeAll(async () => useCliCommand([await executable()]), HOOK_TIMEOUT);

describe("researcher CLI", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "alpha.md": "# Alpha\n\nThe quick brown fox jumps.\n",
    "beta.md": "# Beta\n\nLazy dogs sleep all day.\n",
    "sub/gamma.txt": "Turtles are slow but steady.\n",
    "skip/me.md": "# Hidden\n\nfox in an excluded folder\n",
  });
  const cli = (...args: string[]) => runCli(args, { home });

  test("repo add / list", () => {
    const added = cli("repo", "add", "notes", docs, "--exclude", "skip", "--description", "Test notes");
    expect(added.code).toBe(0);
    expect(added.stdout).toContain("added notes");
    const listed = JSON.parse(cli("repo", "list", "--json").stdout);
    expect(listed).toEqual([
      {
        name: "notes",
        path: expect.stringContaining(docs.split("/").at(-1)!),
        description: "Test notes",
        file_types: ["md", "markdown", "mdx", "txt", "pdf", "docx", "html", "htm", "xhtml", "epub"],
        exclude: ["skip"],
        embed: true,
        embedding: {},
        ignore_files: true,
      },
    ]);
    // The text says which repositories have no embeddings, as status does (s19 user).
    expect(cli("repo", "add", "plain", tempDir(), "--no-embed").code).toBe(0);
    const text = cli("repo", "list").stdout;
    expect(text).toMatch(/^notes {2}\S+ {2}Test notes$/m);
    expect(text).toMatch(/^plain {2}\S+ {2}\(BM25 only\)$/m);
    expect(cli("repo", "remove", "plain").code).toBe(0);
  });

  test("repo add refuses bad input with one clear line: exit 1, or 2 for a name no repository could have", () => {
    for (const [args, code] of [
      [["notes", docs], 1],
      [["other", docs], 1],
      [["bad name!", docs], 2],
      [["x", join(docs, "missing")], 1],
      [["y", join(docs, "alpha.md")], 1],
    ] as const) {
      const result = cli("repo", "add", ...args);
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(result.stderr).toMatch(/^error: .+\n/);
      expect(result.stderr).not.toContain("    at ");
    }
  });

  test("index → search → edit → index → delete → index", () => {
    const first = JSON.parse(cli("index", "notes", "--json").stdout);
    expect(first).toMatchObject({ repository: "notes", indexed: 3, skipped: 0, removed: 0, failed: 0 });
    expect(typeof first.seconds).toBe("number");

    expect(cli("search", "fox", "--files", "--mode", "bm25").stdout).toBe(`${join(docs, "alpha.md")}\n`);

    writeFileSync(join(docs, "alpha.md"), "# Alpha\n\nA slow green snail.\n");
    const second = JSON.parse(cli("index", "--json").stdout);
    expect(second).toEqual([expect.objectContaining({ indexed: 1, skipped: 2 })]);
    expect(cli("search", "fox", "--files", "--mode", "bm25").stdout).toBe("");
    expect(cli("search", "snail", "--files", "--mode", "bm25").stdout).toBe(`${join(docs, "alpha.md")}\n`);

    rmSync(join(docs, "beta.md"));
    expect(JSON.parse(cli("index", "notes", "--json").stdout)).toMatchObject({ removed: 1 });
    expect(cli("search", "dogs", "--files", "--mode", "bm25").stdout).toBe("");
  });

  testShared("search --json follows the documented contract", () => {
    const result = JSON.parse(cli("search", "turtles", "steady", "--json").stdout);
    expect(Object.keys(result)).toEqual(["query", "mode", "repositories", "offset", "total", "words_found", "skipped", "results"]);
    expect(result).toMatchObject({ query: "turtles steady", mode: "hybrid", repositories: ["notes"], offset: 0 });
    const hit = result.results[0];
    expect(Object.keys(hit)).toEqual([
      "rank",
      "score",
      "mode",
      "repository",
      "path",
      "location",
      "page",
      "docid",
      "title",
      "heading",
      "fragment",
      "snippet",
      "context",
      "metadata",
    ]);
    expect(hit).toMatchObject({
      rank: 1,
      repository: "notes",
      path: "sub/gamma.txt",
      location: "sub/gamma.txt:1",
      title: "gamma",
      heading: "",
      context: "Test notes",
    });
    expect(hit.fragment).toEqual({
      id: expect.any(Number),
      seq: 0,
      start_line: 1,
      end_line: 1,
      page: null,
      page_end: null,
      ref: "notes:sub/gamma.txt:1-1",
    });
    expect(hit.docid).toMatch(/^#[0-9a-f]{6}$/);
    expect(hit.snippet).toBe("Turtles are slow but steady.");
    expect(hit.metadata).toEqual({ format: "txt" });
    const bm25 = JSON.parse(cli("search", "turtles", "steady", "--json", "--mode", "bm25").stdout);
    expect(bm25).toMatchObject({ mode: "bm25", total: 1 });

    const filtered = JSON.parse(cli("search", "turtles", "--json", "--mode", "bm25", "--filter", "*.md").stdout);
    expect(filtered.results).toEqual([]);
    expect(JSON.parse(cli("search", "turtles", "--json", "--mode", "bm25", "--filter", "sub/**").stdout).results.length).toBe(1);
    const grouped = JSON.parse(cli("search", "turtles", "--documents", "--json").stdout);
    expect(Object.keys(grouped.results[0])).toContain("fragments");
    expect(Object.keys(grouped.results[0])).not.toContain("fragment");
  });

  test("human output: rank, location, heading, snippet; no colour when not a TTY", () => {
    const result = cli("search", "snail");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("notes:alpha.md:3");
    expect(result.stdout).toContain("A slow green snail.");
    expect(result.stdout).not.toContain("\x1b[");
    const colored = runCli(["search", "snail"], { home, env: { FORCE_COLOR: "1" } });
    expect(colored.stdout).toContain("\x1b[");
  });

  test("on a terminal: colours and a progress bar", () => {
    const env = { PATH: SYSTEM_PATH, HOME: home, RESEARCHER_HOME: home, ...MODEL_ENV, TERM: "xterm" };
    const onTerminal = (args: string) => {
      const proc = Bun.spawnSync(["script", "-qec", `${cliCommand.join(" ")} ${args}`, "/dev/null"], { env });
      return proc.stdout.toString();
    };
    expect(onTerminal("search snail")).toContain("\x1b[36mnotes:alpha.md:3");
    expect(onTerminal("index notes --rebuild")).toContain("\r\x1b[2Knotes");
  });

  test("nasty queries never fail", () => {
    for (const q of ['"unterminated', "AND OR NOT", "(a:b)", "*", "NEAR(x y)", "東京", "🎉", "a-b-c", "x:y:z"]) {
      const result = cli("search", "--json", "--", q);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).query).toBe(q);
    }
  });

  test("status and remove", () => {
    const status = JSON.parse(cli("status", "notes", "--json").stdout);
    expect(status).toMatchObject({ name: "notes", documents: 2, fragments: 2, description: "Test notes" });
    expect(status.bytes).toBeGreaterThan(0);
    expect(Date.parse(status.last_indexed)).toBeGreaterThan(0);
    expect(cli("status").stdout).toContain("2 documents");

    expect(cli("remove", "notes", "sub/gamma.txt").code).toBe(0);
    expect(cli("search", "turtles", "--files", "--mode", "bm25").stdout).toBe("");
    const missing = cli("remove", "notes", "nope.md");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("error: 'nope.md' is not indexed in 'notes'");
    // A slip of the path gets the indexed path it was meant to be, as `get` does.
    expect(cli("remove", "notes", "Alpha.md").stderr).toContain("hint: did you mean alpha.md?");
  });

  test("usage errors exit 2; every command has --help with an example", () => {
    for (const args of [["frobnicate"], ["search", "x", "--bogus"], ["repo", "list", "--nope"], ["repo", "explode"], ["index", "--fast"]]) {
      const result = cli(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^error: /);
    }
    for (const args of [
      ["search"],
      ["index"],
      ["status"],
      ["remove"],
      ["repo", "add"],
      ["repo", "remove"],
      ["repo", "list"],
      ["config", "set"],
      [], // the top level and each group's own help have examples too
      ["repo"],
      ["config"],
      ["model"],
      ["context"],
    ]) {
      const help = cli(...args, "--help");
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("Usage:");
      expect(help.stdout).toContain("Examples:");
    }
    // Help after a word that names no command (a typo) lists every command, as plain --help does.
    for (const args of [["--help"], ["serch", "--help"]])
      expect(cli(...args).stdout).toMatch(/Commands:[\s\S]*search \[\.\.\.query\][\s\S]*serve/);
  });

  test("config: show, path, set, and a bad file is one clear error", () => {
    expect(cli("config", "path").stdout.trim()).toBe(join(home, "config.yaml"));
    expect(cli("config", "set", "search.limit", "3").code).toBe(0);
    expect(JSON.parse(cli("config", "show", "--json").stdout).search.limit).toBe(3);
    const bad = cli("config", "set", "search.limit", "lots");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("search.limit");

    const brokenHome = tempDir();
    writeFileSync(join(brokenHome, "config.yaml"), "repositories:\n  notes:\n    path: 42\n");
    const broken = runCli(["repo", "list"], { home: brokenHome });
    expect(broken.code).toBe(1);
    expect(broken.stderr.split("\n")[0]).toMatch(/^error: .*repositories\.notes\.path/);
    expect(broken.stderr).not.toContain("    at ");
  });

  test("unknown repository is a clear error with a hint", () => {
    const result = cli("search", "x", "--repo", "ghost");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error: no repository named 'ghost'");
    expect(result.stderr).toContain("hint: known repositories: notes");
  });

  test("repo remove deletes the index unless --keep-data", () => {
    const result = cli("repo", "remove", "notes");
    expect(result.code).toBe(0);
    expect(JSON.parse(cli("repo", "list", "--json").stdout)).toEqual([]);
    expect(cli("status", "--json").stdout.trim()).toBe("[]");
  });
});

test("Ctrl-C or SIGTERM during repo rename leaves it whole or not done: index folder and registration agree (s21 hostile #1)", async () => {
  // The index folder moved first and config.yaml was written after: a signal between left the index under the new
  // name and the registration under the old, which every command then read as never indexed.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "a", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "a"], { home }).code).toBe(0);
  const exe = await executable();
  const env = { PATH: SYSTEM_PATH, HOME: home, RESEARCHER_HOME: home };
  const registered = () => (JSON.parse(runCli(["repo", "list", "--json"], { home }).stdout) as { name: string }[]).map((r) => r.name);
  let name = "a";
  for (let attempt = 0; attempt < 120; attempt++) {
    const next = name === "a" ? "b" : "a";
    const rename = Bun.spawn([exe, "repo", "rename", name, next], { env, stdout: "ignore", stderr: "ignore" });
    await Bun.sleep((attempt % 16) * 1);
    rename.kill(attempt % 2 ? "SIGINT" : "SIGTERM");
    await rename.exited;
    const names = registered();
    const folders = readdirSync(join(home, "repositories"));
    expect({ attempt, names, folders }).toEqual({ attempt, names, folders: names });
    name = names[0]!;
  }
  expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(1);
}, 120_000);

test("Ctrl-C while repo rename waits for config.yaml's lock stops it: nothing renamed (s21 retest R5)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "a", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "a"], { home }).code).toBe(0);
  // Another process's edit of config.yaml, live: the rename waits for it (up to 10 s).
  const editor = Bun.spawn(["sleep", "30"]);
  writeFileSync(join(home, "config.lock"), `${editor.pid} ${processStartTime(editor.pid)}\n`);
  const exe = await executable();
  const rename = Bun.spawn([exe, "repo", "rename", "a", "b"], {
    env: { PATH: SYSTEM_PATH, HOME: home, RESEARCHER_HOME: home },
    stdout: "pipe",
  });
  await Bun.sleep(1_000);
  rename.kill("SIGINT");
  const exited = await Promise.race([rename.exited, Bun.sleep(3_000).then(() => "still waiting")]);
  editor.kill();
  rmSync(join(home, "config.lock"), { force: true });
  expect(exited).not.toBe("still waiting");
  expect(exited).not.toBe(0);
  expect((JSON.parse(runCli(["repo", "list", "--json"], { home }).stdout) as { name: string }[]).map((r) => r.name)).toEqual(["a"]);
}, 30_000);

describeShared("a home named by a relative RESEARCHER_HOME", () => {
  test("loads its embedding model: the native parts' folder is absolute (s21 retest R4)", () => {
    const parent = tempDir();
    writeTree(parent, { "d/a.md": "# A\n\nalpha words\n" });
    const cli = (...args: string[]) =>
      runCli(args, { home: join(parent, "rel"), cwd: parent, env: { RESEARCHER_HOME: "rel", RESEARCHER_MODEL_PATH: "" } });
    expect(cli("model", "set", GLOVE).code).toBe(0);
    expect(cli("repo", "add", "a", join(parent, "d")).code).toBe(0);
    const run = cli("index", "a", "--json");
    expect({ stderr: run.stderr, summary: JSON.parse(run.stdout) }).toMatchObject({
      stderr: "",
      summary: { embedded: 1, embeddings_pending: 0 },
    });
  }, 60_000);
});
