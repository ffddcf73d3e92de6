/** The CLI's own rules (argument checks, dispatch, exit codes) run as a real subprocess against a temp home. */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { indexFiles, indexRepository } from "../src/index/indexer.ts";
import { addRepository, removeRepository } from "../src/index/repositories.ts";
import { acquireWriterLock, processStartTime, withConfigLock } from "../src/lock.ts";
import { listRepositories, registerRepository } from "../src/repos.ts";
import { Store } from "../src/store/store.ts";
import { BUILT_IN_KEYS } from "../src/store/filter-sql.ts";
import { bm25Repository, cliCommand, GLOVE, runCli, tempDir, testShared, writeTree } from "./helpers.ts";

/** A home with a config, an index folder and one downloaded model: what a wrong command could destroy. */
function populatedHome(): string {
  const home = tempDir();
  writeFileSync(join(home, "config.yaml"), "search:\n  limit: 5\n");
  writeTree(home, {
    "repositories/notes/index.db": "stand-in",
    "models/Owner/model-a/config.json": "{}",
    "models/Owner/model-b/config.json": "{}",
  });
  return home;
}

describe("model clear", () => {
  test("a name that leaves the models folder is refused and nothing is removed", () => {
    const home = populatedHome();
    const outside = tempDir();
    mkdirSync(join(outside, "keep"));
    for (const id of ["..", "../..", "Owner/../..", "..", join(outside, "keep"), "Owner/model-a/../../../config.yaml", "."]) {
      const result = runCli(["model", "clear", id], { home });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: .*model/);
      expect(result.stderr).toContain("hint: ");
    }
    expect(existsSync(join(home, "config.yaml"))).toBe(true);
    expect(existsSync(join(home, "repositories/notes/index.db"))).toBe(true);
    expect(existsSync(join(home, "models/Owner/model-a/config.json"))).toBe(true);
    expect(existsSync(join(outside, "keep"))).toBe(true);
  });

  test("model set of a name that is no model id says what one is, not 'downloaded' with model clear's hint (s16 hostile #10)", () => {
    const home = tempDir();
    for (const id of ["http://evil/x", "a/b/c"]) {
      const result = runCli(["model", "set", id], { home });
      expect({ id, code: result.code }).toEqual({ id, code: 1 });
      expect(result.stderr).toBe(
        `error: '${id}' is no model id: a hub model is named \`owner/name\` (e.g. Xenova/bge-small-en-v1.5)\nhint: name a hub model as owner/name, or a model folder on this machine by its path (./my-model, /opt/models/x)\n`,
      );
    }
    // A folder path that does not exist is told so, not read as an id and told to name a path (s17 review #8).
    for (const path of ["./nonexistent-model", "../nonexistent-model"]) {
      const result = runCli(["model", "set", path], { home });
      expect({ path, code: result.code }).toEqual({ path, code: 1 });
      expect(result.stderr).toStartWith(`error: ${resolve(home, path)} does not exist\n`);
    }
  });

  test("a downloaded model id removes that model only; no id removes the models folder only", () => {
    const home = populatedHome();
    const one = runCli(["model", "clear", "Owner/model-a"], { home });
    expect(one.code).toBe(0);
    expect(existsSync(join(home, "models/Owner/model-a"))).toBe(false);
    expect(existsSync(join(home, "models/Owner/model-b"))).toBe(true);
    expect(runCli(["model", "clear"], { home }).code).toBe(0);
    expect(existsSync(join(home, "models"))).toBe(false);
    expect(existsSync(join(home, "config.yaml"))).toBe(true);
    expect(existsSync(join(home, "repositories/notes/index.db"))).toBe(true);
  });
});

testShared("model set refuses a folder without the weights its dtype needs; a real model folder is set (s9 new user #2)", () => {
  const home = tempDir();
  const empty = join(tempDir(), "no-weights");
  mkdirSync(join(empty, "onnx"), { recursive: true });
  writeFileSync(join(empty, "config.json"), JSON.stringify({ model_type: "bert", hidden_size: 8 }));
  writeFileSync(join(empty, "tokenizer.json"), "{}");
  const refused = runCli(["model", "set", empty], { home, env: { RESEARCHER_MODEL_PATH: "" } });
  expect(refused).toMatchObject({
    code: 1,
    stderr: expect.stringMatching(/^error: .*no-weights has no weights for dtype q8 .*model_quantized\.onnx is missing\)\nhint: /),
  });
  expect(existsSync(join(home, "config.yaml"))).toBe(false);
  expect(runCli(["model", "set", GLOVE], { home, env: { RESEARCHER_MODEL_PATH: "" } }).code).toBe(0);
  // A local folder is used where it is: pull says so (it said "ready in ~/.researcher/models").
  expect(runCli(["model", "pull", GLOVE], { home, env: { RESEARCHER_MODEL_PATH: "" } }).stdout).toBe(
    `${GLOVE}: 100 dims, ready at ${GLOVE}\n`,
  );
});

describe("command dispatch", () => {
  test("global options before a command group apply to it", () => {
    const home = tempDir();
    const other = tempDir();
    const docs = tempDir();
    expect(runCli(["--home", home, "repo", "add", "notes", docs], { home: other }).code).toBe(0);
    const listed = runCli(["--home", home, "repo", "list", "--json"], { home: other });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((r: { name: string }) => r.name)).toEqual(["notes"]);
    expect(JSON.parse(runCli([`--home=${home}`, "repo", "list", "--json"], { home: other }).stdout)).toHaveLength(1);
    expect(JSON.parse(runCli(["repo", "list", "--json"], { home: other }).stdout)).toEqual([]);
    const removed = runCli(["--verbose", "repo", "remove", "notes"], { home });
    expect(removed).toMatchObject({ code: 0, stdout: "removed notes\n" });
  });

  test("an unknown command is a usage error (exit 2), wherever it is", () => {
    const home = tempDir();
    for (const args of [
      ["nonsense"],
      ["repo", "nonsense"],
      ["--home", home, "nonsense"],
      ["--verbose", "model", "nonsense"],
      ["--bogus", "repo", "list"],
    ]) {
      const result = runCli(args, { home });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^error: /);
      expect(result.stderr).toContain("hint: ");
    }
  });

  test("--version with a word after it is a usage error, as any command's unused words are (s23 contracts C5)", () => {
    const home = tempDir();
    for (const word of ["--version", "-v", "version"])
      expect(runCli([word, "extra-arg"], { home })).toEqual({
        code: 2,
        stdout: "",
        stderr: `error: ${word} takes no arguments (got extra-arg)\nhint: run \`researcher ${word}\` alone\n`,
      });
    expect(runCli(["--version"], { home }).stdout).toMatch(/^researcher \d/);
  });

  test("serve --help names every HTTP route the server answers (s28 code 7)", () => {
    // It named /search and /documents/<ref> only, after the listing, /repositories and /status were added.
    const help = runCli(["serve", "--help"], { home: tempDir() }).stdout.replace(/\s+/g, " ");
    for (const route of [
      "POST /mcp",
      "GET /search",
      "GET /documents/<ref>",
      "GET /documents?repo=",
      "GET /repositories",
      "GET /status",
      "GET /health",
    ])
      expect(help).toContain(route);
  });

  test("a command group without its command is a usage error naming the commands; --help prints its help (s23 contracts C6)", () => {
    const home = tempDir();
    for (const [group, commands] of [
      ["repo", "add, remove, rename, list"],
      ["config", "show, path, set"],
      ["model", "show, pull, set, clear"],
      ["context", "add, remove, list"],
    ]) {
      expect(runCli([group!], { home })).toEqual({
        code: 2,
        stdout: "",
        stderr: `error: ${group} needs a command (${commands})\nhint: run \`researcher ${group} --help\` for what each does\n`,
      });
      const help = runCli([group!, "--help"], { home });
      expect(help).toMatchObject({ code: 0, stderr: "" });
      expect(help.stdout).toContain(`$ researcher ${group} <command>`);
    }
    expect(runCli([], { home })).toMatchObject({ code: 0, stderr: "" }); // `researcher` alone: its help
  });

  test("researcher --help lists each group's commands, rename among repo's (s28 user 6)", () => {
    const help = runCli(["--help"], { home: tempDir() }).stdout;
    for (const [group, commands] of [
      ["repo", "add, remove, rename, list"],
      ["config", "show, path, set"],
      ["model", "show, pull, set, clear"],
      ["context", "add, remove, list"],
    ])
      expect(help).toMatch(new RegExp(`\\n  ${group} \\[\\.\\.\\.args\\] +.*: ${commands}\\n`));
  });

  test("help names what a newcomer with the executable alone needs: --where's keys, get's ref forms, --version; no README pointer (s29 user F6)", () => {
    const home = tempDir();
    const help = (...args: string[]) => runCli([...args, "--help"], { home }).stdout.replace(/\s+/g, " ");
    const where = /--where <expr> (.*?) --home /.exec(help("search"))?.[1] ?? "";
    for (const key of [...Object.keys(BUILT_IN_KEYS), "language", "git_project", "git_branch", "git_commit", "front-matter"])
      expect(where).toContain(key);
    const get = help("get");
    for (const form of [".pdf:p7", ":p2-3", ":40-60", ":40:20", "'#3fa2c1'", "page_end", "changed_since_index"])
      expect(get).toContain(form);
    // The executable holds no README: a help text that sends there sends nowhere.
    const commands = ["index", "watch", "search", "get", "multi-get", "ls", "remove", "repos-for", "verify", "convert", "status", "serve"];
    for (const words of [[], ...commands.map((c) => [c]), ["repo", "add"], ["config", "set"], ["model", "set"], ["context", "add"]])
      expect({ words, readme: help(...words).includes("README") }).toEqual({ words, readme: false });
    expect(help()).toContain("-v, --version Print the version");
    expect(runCli(["--home", home, "--version"], { home }).stdout).toMatch(/^researcher \d/);
  });

  test("a mistyped command is told the commands near it; one near none is sent to --help (s28 user 4)", () => {
    const home = tempDir();
    const hint = (args: string[]) => {
      const result = runCli(args, { home });
      expect({ args, code: result.code, error: result.stderr.split("\n")[0] }).toEqual({
        args,
        code: 2,
        error: `error: unknown command '${args.at(-2) === "repo" ? args.at(-1) : args[0]}'`,
      });
      return result.stderr.split("\n")[1];
    };
    expect(hint(["serach", "borrow"])).toBe("hint: did you mean `researcher search`? (run `researcher --help` for the list)");
    expect(hint(["reop"])).toBe("hint: did you mean `researcher repo`? (run `researcher --help` for the list)");
    expect(hint(["repo", "lsit"])).toBe("hint: did you mean `researcher repo list`? (run `researcher repo --help` for the list)");
    expect(hint(["serch", "borrow"])).toStartWith("hint: did you mean `researcher search`");
    expect(hint(["nonsense"])).toBe("hint: run `researcher --help` for the list");
  });

  test("a flag value that does not parse is a usage error (exit 2), like an unknown flag or mode", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
    expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "notes", "--quiet"], { home }).code).toBe(0);
    for (const args of [
      ["search", "alpha", "-n", "abc"],
      ["search", "alpha", "--mode", "foo"],
      ["search", "alpha", "--offset", "x"],
      ["search", "alpha", "--min-score", "high"],
      ["search", "alpha", "--min-score=-5"], // as REST and MCP refuse it: scores are never negative
      ["search", "alpha", "--min-score", "0x10"],
      ["get", "notes:a.md", "--from", "one"],
    ]) {
      const result = runCli(args, { home });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(/^error: (-n\/)?--[a-z-]+ /);
      expect(result.stderr).toContain(`hint: run \`researcher ${args[0]} --help\``); // the command's own options
    }
    // The rule is said: a decimal number as people type one, not `1e1` (s25 scripts L7).
    expect(runCli(["search", "alpha", "--min-score", "1e1"], { home }).stderr).toStartWith(
      "error: --min-score must be a decimal number ≥ 0, such as 0.5 (got '1e1')",
    );
  }, 30_000);

  test("a count or offset out of range is a usage error naming the option and its range, never an internal error", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
    expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "notes", "--quiet"], { home }).code).toBe(0);
    const offset = "--offset must be a whole number from 0 to 100000";
    const limit = "-n/--limit must be a whole number from 1 to 100000";
    for (const [args, words] of [
      [["--offset", "99999999999999999999"], `${offset} (got 99999999999999999999)`],
      [["--offset", "9223372036854775807"], `${offset} (got 9223372036854775807)`],
      [["--all", "--offset", "1e20"], `${offset} (got 1e20)`],
      [["--offset", "100001"], `${offset} (got 100001)`],
      [["-n", "1e20"], `${limit} (got 1e20)`],
      [["-n", "0"], `${limit} (got 0)`],
      [["--limit", "0"], `${limit} (got 0)`],
      // Only decimal digits: Number() alone reads these as 16, 1000, 1 and 3.
      [["-n", "0x10"], `${limit} (got 0x10)`],
      [["-n", "1e3"], `${limit} (got 1e3)`],
      [["-n", "0b1"], `${limit} (got 0b1)`],
      [["--offset", "3.0"], `${offset} (got 3.0)`],
      [["--documents", "99999999999999999999"], "--documents must be a whole number from 1 to 100000 (got 99999999999999999999)"],
      [["--documents", "0"], "--documents must be a whole number from 1 to 100000 (got 0)"],
    ] as const) {
      const result = runCli(["search", "alpha", ...args], { home });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toBe(`error: ${words}\nhint: run \`researcher search --help\`\n`);
    }
    // `-n1`, as `head -n1` takes it (it was an unknown option: hostile s8 #10); after `--` it is query text.
    expect(runCli(["search", "alpha", "-n1", "--files"], { home })).toMatchObject({ code: 0, stdout: `${join(docs, "a.md")}\n` });
    // (as query text, `-n1` excludes the word n1 and asks for nothing: a usage error that says so)
    expect(runCli(["search", "--mode", "bm25", "--", "-n1"], { home }).stderr).toStartWith("error: a query of exclusions alone");
    // A phrase keeps its own quotes, shown in single ones (they were doubled: `""never seen""`).
    expect(runCli(["search", '"never seen"'], { home }).stderr).toBe(`no results for '"never seen"'\n`);
    // Nothing printed says why: no match, or matches all before --offset or below --min-score; an empty glob is no filter.
    expect(runCli(["search", "alpha", "--offset", "5"], { home }).stderr).toBe(
      'no results for "alpha" (1 fragment matches; all before --offset 5)\n',
    );
    expect(runCli(["search", "alpha", "--min-score", "1000", "--mode", "bm25"], { home }).stderr).toBe(
      'no results for "alpha" (1 fragment matches; none scoring --min-score 1000 or more)\n',
    );
    expect(runCli(["search", "alpha", "--filter", ""], { home })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("filter needs a path glob"),
    });
    // The bounds themselves are accepted.
    expect(runCli(["search", "alpha", "--offset", "100000"], { home }).code).toBe(0);
    expect(runCli(["search", "alpha", "-n", "100000", "--json"], { home })).toMatchObject({ code: 0 });
  }, 30_000);

  test("a switch with a hyphen in its name takes no value: the word after it stays an argument", () => {
    const home = tempDir();
    for (const name of ["a", "b"]) {
      const docs = tempDir();
      writeTree(docs, { [`${name}.md`]: `# ${name}\n\nwords\n` });
      expect(runCli(["repo", "add", name, docs, "--no-embed"], { home }).code).toBe(0);
    }
    // Each ran on every repository (the name was taken as the switch's value), or missed its required argument.
    for (const flag of ["--retry-failed", "--allow-empty", "--embeddings-only"]) {
      const run = runCli(["index", flag, "a", "--json"], { home });
      expect({ flag, code: run.code }).toEqual({ flag, code: 0 });
      const summaries = [JSON.parse(run.stdout)].flat();
      expect({ flag, repositories: summaries.map((s: { repository: string }) => s.repository) }).toEqual({ flag, repositories: ["a"] });
    }
    expect(runCli(["get", "--line-numbers", "a:a.md"], { home })).toMatchObject({
      code: 0,
      stdout: "     1\t# a\n     2\t\n     3\twords\n",
    });
    expect(runCli(["repo", "remove", "--keep-data", "b"], { home }).code).toBe(0);
    // After `--`, a word spelled like the switch is an argument.
    expect(runCli(["get", "--", "--line-numbers"], { home }).stderr).toContain("--line-numbers");
  }, 30_000);

  test("an option's value is kept as typed, not turned into a number ('' is not 0, '007' is not 7)", () => {
    const home = tempDir();
    const docs = tempDir();
    const empty = runCli(["repo", "add", "notes", docs, "--file-types", ""], { home });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("the file types need at least one extension");
    expect(runCli(["repo", "add", "notes", docs, "--description", "007", "--no-embed"], { home }).code).toBe(0);
    expect(JSON.parse(runCli(["repo", "list", "--json"], { home }).stdout)[0].description).toBe("007");
    expect(runCli(["index", "notes", "--quiet"], { home }).code).toBe(0);
    expect(runCli(["search", "x", "-n", "2", "--offset=0"], { home }).code).toBe(0); // numbers still parse
  });

  test("a negative number given to an option says so, rather than calling it an unknown option", () => {
    const home = tempDir();
    for (const [args, words] of [
      [["search", "x", "-n", "-1"], "-n takes no negative number (got -1)"],
      [["search", "x", "--offset", "-3"], "--offset takes no negative number (got -3)"],
      [["watch", "--debounce", "-5"], "--debounce takes no negative number (got -5)"],
    ] as const) {
      const result = runCli([...args], { home });
      expect(result.code).toBe(2);
      expect(result.stderr).toStartWith(`error: ${words}\n`);
    }
    expect(runCli(["search", "x", "--json", "-5"], { home }).stderr).toContain("unknown option '-5'"); // after a flag: a word
  });

  test("an empty --repo is a usage error, not every repository (a script's empty variable widened its search: s16 hostile #10)", () => {
    const home = tempDir();
    // Empty after splitting at commas too: `--repo "$A,$B"` with both empty (s17 review #4).
    for (const repo of ["", " ", ",", "a,", " , "]) {
      const result = runCli(["search", "anything", "--repo", repo], { home });
      expect({ repo, code: result.code }).toEqual({ repo, code: 2 });
      expect(result.stderr).toStartWith(`error: --repo holds an empty name in the list (got '${repo}')\n`);
    }
    // As REST's repo= says it (s23 contracts L9).
    expect(runCli(["search", "anything", "--repo", "book,,mixed"], { home }).stderr).toBe(
      "error: --repo holds an empty name in the list (got 'book,,mixed')\nhint: name each repository, or leave --repo out to search every one\n",
    );
  });

  test("options that contradict each other are a usage error, not one silently winning", () => {
    const home = tempDir();
    for (const [args, words] of [
      [["index", "--rebuild", "--embeddings-only"], "--rebuild and --embeddings-only do not go together"],
      [["index", "--embeddings-only", "--no-embed"], "--embeddings-only and --no-embed do not go together"],
    ] as const) {
      const result = runCli([...args], { home });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(words);
      expect(result.stderr).toContain("hint: run `researcher index --help`");
    }
  });

  test("a query starting with '-' is searched after --; an unknown option is a usage error, not help", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "q.md": "# Q\n\nthe -q flag of grep is quiet\n" });
    expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "notes", "--quiet"], { home }).code).toBe(0);
    for (const args of [
      ["search", "--json", "-q the"],
      ["search", "-q", "x"],
      ["search", "--bogus", "x"],
      ["repo", "list", "-x"],
    ]) {
      const result = runCli(args, { home });
      expect(result.code).toBe(2);
      // Asked for JSON, the error is JSON on stdout too (s21 scripts #3).
      expect(result.stdout).toBe(
        args.includes("--json")
          ? `${JSON.stringify({ error: { code: "USAGE", message: "unknown option '-q the'", hint: `to search for '-q the', quote it after -- (a bare -word there excludes the word): researcher search -- '"-q the"'` } })}\n`
          : "",
      );
      expect(result.stderr).toMatch(/^error: unknown option/);
    }
    // The hint's command searches the word: a bare `--release` after -- excludes `release` (s21 scripts #5).
    expect(runCli(["search", "--json", "-q the"], { home }).stderr).toContain(`researcher search -- '"-q the"'`);
    const dashed = runCli(["search", "--json", "--", "-q the"], { home });
    expect(dashed.code).toBe(0);
    expect(JSON.parse(dashed.stdout).query).toBe("-q the");
    const grep = runCli(["search", "--json", "--", "quiet", "-zzz"], { home });
    expect(JSON.parse(grep.stdout).results[0].path).toBe("q.md");
  });

  test("a mistyped option is told the option it is close to; search gives the search-for-it advice too for a single-dash word, and alone for words close to none (s26 user F2, s27 review F5)", () => {
    const home = tempDir();
    const hint = (args: string[]) => {
      const result = runCli(args, { home });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      return result.stderr.split("\n")[1];
    };
    for (const [args, meant] of [
      [["search", "borrow", "--repos", "vault"], "--repo"],
      [["search", "borrow", "--limt", "5"], "--limit"],
      [["search", "borrow", "--limt=5"], "--limit"],
      [["search", "borrow", "--jsn"], "--json"],
      [["search", "borrow", "--JSON"], "--json"],
      [["search", "borrow", "--mod", "bm25"], "--mode or --model"],
      [["search", "borrow", "--mdoe", "bm25"], "--mode"], // two letters swapped: one edit (s28 user 4)
      [["index", "--rebiuld"], "--rebuild"],
      [["index", "--no-embd"], "--no-embed"],
      [["ls", "--jsn"], "--json"],
    ] as const) {
      expect({ args, hint: hint([...args]) }).toEqual({ args, hint: `hint: did you mean ${meant}?` });
    }
    // One dash on search may be a query's exclusion as well as a mistyped option: both, the option first.
    const quote = (word: string) =>
      `to search for '${word}', quote it after -- (a bare -word there excludes the word): researcher search -- '"${word}"'`;
    for (const [args, meant] of [
      [["search", "borrow", "-r", "vault"], "--repo"], // one letter: the one long option that begins with it
      [["search", "borrow", "-limit", "5"], "--limit"], // one dash short
      [["search", "rust", "-mod"], "--mode or --model"],
    ] as const) {
      expect({ args, hint: hint([...args]) }).toEqual({ args, hint: `hint: did you mean ${meant}? Or, ${quote(args[2])}` });
    }
    // Close to none (or, one letter, the start of several or none): the advice there was.
    expect(hint(["search", "borrow", "--bogus"])).toBe(`hint: ${quote("--bogus")}`);
    expect(hint(["search", "borrow", "-m"])).toStartWith("hint: to search for '-m'"); // --min-score, --mode, --model
    expect(hint(["repo", "list", "-x"])).toBe("hint: run `researcher repo list --help` for the options");
    // A format named as an option of its own is --format's value (it was "search for it as a phrase": s28 user 4).
    for (const [option, format] of [
      ["--json-lines", "jsonl"],
      ["--csv", "csv"],
      ["--markdown", "md"],
    ])
      expect(hint(["search", "borrow", option!])).toBe(`hint: the format is an option's value: \`--format ${format}\``);
    expect(hint(["ls", "--csv"])).toBe("hint: run `researcher ls --help` for the options"); // ls has no --format
  });

  test("an empty model name is a usage error worded for every command that takes one, not only --model (s21 hostile #11)", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha\n" });
    expect(runCli(["repo", "add", "m", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "m"], { home }).code).toBe(0);
    for (const args of [
      ["search", "x", "--model", ""],
      ["model", "pull", " "],
    ]) {
      const run = runCli(args, { home });
      expect({ args, code: run.code, stderr: run.stderr.split("\n").slice(0, 2) }).toEqual({
        args,
        code: 2,
        stderr: ["error: the model named is empty", "hint: name a model id or a model folder"],
      });
    }
  });

  test("a flag that takes no value given one is a usage error: `--full=yes` searched the word `yes` too (s21 scripts)", () => {
    const home = tempDir();
    for (const flag of ["--full=yes", "--json=no", "--explain=1"]) {
      const run = runCli(["search", "ownership", flag], { home });
      expect({ flag, code: run.code, stderr: run.stderr.split("\n")[0] }).toEqual({
        flag,
        code: 2,
        stderr: `error: ${flag.split("=")[0]} takes no value (got ${flag})`,
      });
    }
  });

  test("every command takes its arguments after --, so a name starting with '-' needs no ./", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "-rf.md": "# Dash\n\ndashed name\n", "keep.md": "# Keep\n\nkept\n" });
    expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "notes", "--quiet"], { home }).code).toBe(0);
    const got = runCli(["get", "--json", "--", "notes:-rf.md"], { home });
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout).text).toContain("dashed name");
    expect(runCli(["convert", "--", join(docs, "-rf.md")], { home }).stdout).toContain("dashed name");
    // An empty name (an unset variable) is a usage error, not the current folder (s14 hostile #10).
    expect(runCli(["convert", ""], { home })).toMatchObject({
      code: 2,
      stderr: "error: convert needs a file name\nhint: researcher convert paper.pdf\n",
    });
    expect(runCli(["remove", "notes", "--", "-rf.md"], { home }).code).toBe(0);
    expect(runCli(["ls", "notes", "--json"], { home }).stdout).not.toContain("-rf.md");
  });

  test("help does not call a --no- option's default 'true' (it reads as if the option were on)", () => {
    for (const args of [
      ["index", "--help"],
      ["repo", "add", "--help"],
    ]) {
      const help = runCli(args, { home: tempDir() }).stdout;
      expect(help).toContain("--no-embed");
      expect(help).not.toContain("(default: true)");
    }
    // A command's own help says what it does (s9 new user: only the list of commands did).
    expect(runCli(["search", "--help"], { home: tempDir() }).stdout).toStartWith(
      "researcher\n\nSearch fragments by words and meaning\n\nUsage:",
    );
    expect(runCli(["repo", "add", "--help"], { home: tempDir() }).stdout).toContain("\nRegister a folder as a repository\n");
  });
});

test("repo add of a name whose index was kept for another folder sets that index aside, so no search shows the other folder's text (s16 hostile #7)", () => {
  const home = tempDir();
  const [x, y] = [tempDir(), tempDir()];
  writeTree(x, { "same.md": "# X\n\nsecretx content in x\n" });
  writeTree(y, { "same.md": "# Y\n\nplain y content\n" });
  expect(runCli(["repo", "add", "a", x, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "a"], { home }).code).toBe(0);
  expect(runCli(["repo", "remove", "a", "--keep-data"], { home }).code).toBe(0);
  const added = runCli(["repo", "add", "a", y, "--no-embed"], { home });
  expect(added.code).toBe(0);
  expect(added.stderr).toMatch(
    /^warning: the index kept under 'a' was of .+: moved aside to .+\/repositories\/a\.kept-.+; `researcher index a` indexes /,
  );
  // x's text was found under a until the next run.
  expect(runCli(["search", "secretx", "--mode", "bm25"], { home }).stdout).not.toContain("secretx");
  expect(runCli(["index", "a"], { home }).code).toBe(0);
  expect(runCli(["search", "plain", "--mode", "bm25", "--files"], { home }).stdout).toBe(`${join(y, "same.md")}\n`);
  // The same folder added again keeps its index, as --keep-data means.
  expect(runCli(["repo", "remove", "a", "--keep-data"], { home }).code).toBe(0);
  const again = runCli(["repo", "add", "a", y, "--no-embed"], { home });
  expect(again.stderr).not.toContain("moved aside");
  expect(runCli(["search", "plain", "--mode", "bm25", "--files"], { home }).stdout).toBe(`${join(y, "same.md")}\n`);
});

test("the library's addRepository sets a kept index aside too, and a set-aside an index run refuses registers nothing (s17 review #5)", async () => {
  const home = tempDir();
  const [x, y] = [tempDir(), tempDir()];
  writeTree(x, { "same.md": "# X\n\nsecretx content in x\n" });
  writeTree(y, { "same.md": "# Y\n\nplain y content\n" });
  await indexRepository(home, addRepository(home, { name: "a", path: x, embed: false }));
  removeRepository(home, "a", { keepData: true });
  // A writer holds the kept index: the set-aside is refused, and the name is not registered (it was, serving x's text).
  writeFileSync(join(home, "repositories", "a", "lock"), `${process.ppid} ${processStartTime(process.ppid)} index\n`); // an index run's
  expect(() => addRepository(home, { name: "a", path: y, embed: false })).toThrow(/being indexed/);
  expect(listRepositories(home)).toEqual([]);
  rmSync(join(home, "repositories", "a", "lock"));
  // Through the library as through the CLI (it was the CLI's alone): x's text is not searched under a.
  const added = addRepository(home, { name: "a", path: y, embed: false });
  const folder = added.setAside?.folder ?? "";
  expect(folder).toMatch(/\/repositories\/a\.kept-/);
  expect(existsSync(join(folder, "index.db"))).toBe(true);
  expect(runCli(["search", "secretx", "--mode", "bm25"], { home }).stdout).not.toContain("secretx");
});

test("a repo add refused after the kept index was set aside puts it back: nothing was changed (s18 review #4)", async () => {
  const home = tempDir();
  const [x, y] = [tempDir(), tempDir()];
  writeTree(x, { "same.md": "# X\n\nalpha content in x\n" });
  await indexRepository(home, addRepository(home, { name: "a", path: x, embed: false }));
  removeRepository(home, "a", { keepData: true });
  // Refused by the bound on a description: the kept index had moved to a.kept-…, and `repo add a x` lost it.
  const refused = runCli(["repo", "add", "a", y, "--no-embed", "--description", "x".repeat(3000)], { home });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("nothing was changed");
  expect(readdirSync(join(home, "repositories"))).toEqual(["a"]);
  expect(runCli(["repo", "add", "a", x, "--no-embed"], { home }).code).toBe(0);
  expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(1);
});

test("repo rename keeps the index, settings and contexts under the new name: nothing is read again (s20 user G)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nkeptword\n", "b.md": "# B\n\nother\n" });
  expect(runCli(["repo", "add", "k", docs, "--no-embed", "--description", "papers of mine"], { home }).code).toBe(0);
  expect(runCli(["context", "add", "k:a.md", "the first note"], { home }).code).toBe(0);
  expect(runCli(["index", "k"], { home }).code).toBe(0);
  const renamed = runCli(["repo", "rename", "k", "papers"], { home });
  expect({ code: renamed.code, stdout: renamed.stdout }).toEqual({ code: 0, stdout: "renamed k → papers\n" });
  const listed = JSON.parse(runCli(["repo", "list", "--json"], { home }).stdout);
  expect(listed.map((r: { name: string; description: string }) => [r.name, r.description])).toEqual([["papers", "papers of mine"]]);
  const hit = JSON.parse(runCli(["search", "keptword", "--json"], { home }).stdout).results[0];
  expect([hit.repository, hit.path, hit.context]).toEqual(["papers", "a.md", "the first note"]);
  // Nothing was read again: the next run finds every file current.
  expect(JSON.parse(runCli(["index", "papers", "--json"], { home }).stdout)).toMatchObject({ indexed: 0, skipped: 2 });
  expect(existsSync(join(home, "repositories/k"))).toBe(false);
  // Refused: a name in use, an invalid one, an unknown repository; each leaves things as they were.
  expect(runCli(["repo", "add", "other", tempDir(), "--no-embed"], { home }).code).toBe(0);
  for (const [args, code, message] of [
    [["papers", "other"], 1, "error: a repository named 'other' already exists"],
    [["papers", "no/slash"], 2, "error: invalid repository name 'no/slash'"],
    // Every hint naming it would be an unknown option: `researcher index -x` (s26 hostile F3).
    [["papers", "-x"], 2, "error: invalid repository name '-x'"],
    [["nosuch", "x"], 1, "error: no repository named 'nosuch'"],
  ] as const) {
    const refused = runCli(["repo", "rename", "--", ...args], { home });
    expect({ args, code: refused.code, stderr: refused.stderr.split("\n")[0] }).toEqual({ args, code, stderr: message });
  }
  // The hint names the repository in the way, so it never reads as removing the one being renamed.
  expect(runCli(["repo", "rename", "papers", "other"], { home }).stderr).toContain("`researcher repo remove other` first");
  // Its own name is no obstacle: nothing to do (it hinted to `repo remove` "the other one", itself: s21 review F4).
  expect(runCli(["repo", "rename", "papers", "papers"], { home })).toMatchObject({
    code: 0,
    stdout: "papers already has that name\n",
    stderr: "",
  });
  expect(JSON.parse(runCli(["search", "keptword", "--json"], { home }).stdout).results[0].repository).toBe("papers");
});

test("repo remove and repo rename of a name typed with blanks around it change its registration, as the lookup read it (s24 review D5)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "notes"], { home }).code).toBe(0);
  // The lookup trimmed ' notes'; the registry writer used it as typed, moved nothing and failed naming x.
  expect(runCli(["repo", "rename", " notes", "x"], { home })).toMatchObject({ code: 0, stdout: "renamed notes → x\n", stderr: "" });
  expect(JSON.parse(runCli(["repo", "list", "--json"], { home }).stdout).map((r: { name: string }) => r.name)).toEqual(["x"]);
  expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).results[0].repository).toBe("x");
  expect(runCli(["repo", "rename", "x ", "x"], { home })).toMatchObject({ code: 0, stdout: "x already has that name\n" });
  // It deleted the index and kept the registration, saying "removed".
  expect(runCli(["repo", "remove", " x "], { home })).toMatchObject({ code: 0, stdout: "removed x\n", stderr: "" });
  expect(runCli(["repo", "list", "--json"], { home }).stdout.trim()).toBe("[]");
  expect(readdirSync(join(home, "repositories"))).toEqual([]);
  // An empty name is refused by the one rule every lookup and writer reads a name by.
  for (const args of [
    ["repo", "remove", " "],
    ["repo", "rename", "", "y"],
  ]) {
    const refused = runCli(args, { home });
    expect({ args, code: refused.code, stderr: refused.stderr.split("\n")[0] }).toEqual({
      args,
      code: 2,
      stderr: `error: a repository name is empty (got '${args[2]}')`,
    });
  }
});

test("an index run that takes the old name's lock while a rename moves its folder builds nothing there (s21 hostile #2)", async () => {
  // Between moving the index folder and naming it anew in config.yaml, the old name's folder was free: a run that
  // took its lock then found the old registration and built a whole second index there, that no repository owned.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "a", path: docs, embed: false });
  await indexRepository(home, repo);
  const config = join(home, "config.yaml");
  let run: Promise<number | null> | undefined;
  // As `repo rename a b` does it, under config.yaml's lock: the folder moved, then (later) the registration.
  withConfigLock(home, () => {
    renameSync(repo.dir, join(home, "repositories", "b"));
    const index = Bun.spawn([...cliCommand, "index", "a", "--quiet"], {
      env: { ...process.env, HOME: home, RESEARCHER_HOME: home },
      stderr: "pipe",
    });
    run = index.exited;
    Bun.sleepSync(1_500); // the run has taken a/'s lock by now, and waits for config.yaml's
    writeFileSync(config, readFileSync(config, "utf8").replace(/^ {2}a:$/m, "  b:"));
  });
  expect(await run!).toBe(1); // the name is no longer registered: nothing built
  expect(readdirSync(join(home, "repositories"))).toEqual(["b"]);
}, 30_000);

/** A repository indexed, then something else put where its index folder was (the folder moved to a.bak). */
function indexFolderReplaced(put: (folder: string, home: string) => void): { home: string; folder: string } {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "a", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "a"], { home }).code).toBe(0);
  const folder = join(home, "repositories", "a");
  renameSync(folder, join(home, "a.bak"));
  put(folder, home);
  return { home, folder };
}

/** Each command fails naming what is in the index folder's place (verify on stdout, as the repository's problem). */
function expectNamedInItsPlace(home: string, commands: string[][], said: string): void {
  for (const args of commands) {
    const run = runCli(args, { home });
    const output = run.stderr + run.stdout; // verify reports it as the repository's problem, on stdout (s22 review F3)
    expect({ args, code: run.code, said: output.includes(said) }).toEqual({ args, code: 1, said: true });
    expect(output).not.toContain("not indexed yet");
    expect(output).not.toContain("unexpected");
  }
}

test("a file where an index folder should be is named by status and verify, not read as never indexed (s21 retest R8)", () => {
  const { home, folder } = indexFolderReplaced((folder) => writeFileSync(folder, "junk"));
  expectNamedInItsPlace(
    home,
    [
      ["status", "a"],
      ["verify", "a"],
      ["search", "alpha"],
    ],
    `${folder} is a file where a folder is needed`,
  );
});

test("get, multi-get and repos-for during a first index run, and after it was cut short, say so (s28 hostile F3)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "n.md": "# N\n\nscan words\n", "later.md": "# Later\n\nnot reached yet\n" });
  const repo = registerRepository(home, { name: "fr3", path: docs, embed: false });
  Store.open(repo.dir, { create: true }).close(); // a first run before its first batch
  await indexFiles(home, repo, ["n.md"]); // as its first batch
  const reads = () => ({
    get: runCli(["get", "fr3:later.md"], { home }),
    bare: runCli(["get", "later.md"], { home }),
    multiGet: runCli(["multi-get", "fr3:*", "--json"], { home }),
    reposFor: runCli(["repos-for", "scan"], { home }),
  });
  const release = acquireWriterLock(repo.dir, repo.name, "index"); // the run, as another process holds it
  let during: ReturnType<typeof reads>;
  try {
    during = reads();
  } finally {
    release();
  }
  const waiting = `hint: wait for it to finish (process ${process.pid}): \`researcher status fr3\` says when it has`;
  expect(during.get.stderr).toBe(
    `error: fr3:later.md is not indexed: the first index run of fr3 is under way and may not have reached it yet (1 file indexed so far)\n${waiting}\n`,
  );
  const underWay = (what: string) =>
    `warning: fr3: its first index run is under way: only the 1 file indexed so far is ${what}\n${waiting}\n`;
  // A bare path as multi-get's warning names the run: it said "no repository holds later.md" (s28b retest R4).
  expect(during.bare.stderr).toBe(
    `error: no repository holds later.md so far; fr3: ${underWay("looked in").slice("warning: fr3: ".length)}`,
  );
  expect(during.multiGet.stderr).toBe(underWay("read"));
  expect(JSON.parse(during.multiGet.stdout).warnings).toEqual([expect.objectContaining({ repository: "fr3", code: "NOT_INDEXED" })]);
  expect([during.reposFor.stdout, during.reposFor.stderr]).toEqual([expect.stringContaining("fr3"), underWay("searched")]);
  // Cut short (killed): the run to start.
  const after = reads();
  expect(after.get.stderr).toBe(
    "error: fr3:later.md is not indexed: fr3 is not indexed whole yet (1 file indexed so far, on its own or by a first run cut short)\n" +
      "hint: run `researcher index fr3`\n",
  );
  expect(after.bare.stderr).toBe(
    "error: no repository holds later.md so far; fr3: not indexed whole yet: only the 1 file indexed so far (on its own, or by a first run cut short) is looked in\n" +
      "hint: run `researcher index fr3`\n",
  );
  for (const run of [after.multiGet, after.reposFor]) {
    expect(run.stderr).toContain("warning: fr3: not indexed whole yet: only the 1 file indexed so far");
    expect(run.stderr).toEndWith("hint: run `researcher index fr3`\n");
  }
});

test("repo rename is refused while an index run holds the repository, and leaves it as it was", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nkeptword\n" });
  const repo = registerRepository(home, { name: "k", path: docs, embed: false });
  expect(runCli(["index", "k"], { home }).code).toBe(0);
  const release = acquireWriterLock(repo.dir, "k", "index");
  try {
    const refused = runCli(["repo", "rename", "k", "papers"], { home });
    expect([refused.code, refused.stderr.split("\n")[0]]).toEqual([1, `error: repository 'k' is being indexed by process ${process.pid}`]);
  } finally {
    release();
  }
  expect(JSON.parse(runCli(["search", "keptword", "--json"], { home }).stdout).results[0].repository).toBe("k");
});

test("a link to a folder is named in the run's summary as not followed, not passed over without a word (s18 user #12)", () => {
  const home = tempDir();
  const vault = tempDir();
  const elsewhere = tempDir();
  writeTree(vault, { "n.md": "# Note\n\nhello\n" });
  writeTree(elsewhere, { "z.md": "# Linked\n\nText about zebras.\n" });
  symlinkSync(elsewhere, join(vault, "linked"));
  // One the .gitignore leaves out is no news (s18 retest N9).
  symlinkSync(elsewhere, join(vault, "ignored"));
  writeFileSync(join(vault, ".gitignore"), "ignored/\n");
  expect(runCli(["repo", "add", "v", vault, "--no-embed"], { home }).code).toBe(0);
  const run = runCli(["index", "v"], { home });
  expect(run.stdout).toContain("not indexed: 1 link to a folder, never followed: linked/");
  expect(JSON.parse(runCli(["index", "v", "--json"], { home }).stdout)).toMatchObject({
    indexed: 0,
    skipped: 1,
    skipped_links: ["linked/"],
  });
});

test("multi-get of an empty pattern is a usage error, as get of an empty ref is (it said no documents match, exit 0: s18 retest N9)", () => {
  const home = tempDir();
  for (const pattern of ["", " "]) {
    const run = runCli(["multi-get", pattern], { home });
    expect({ pattern, code: run.code, stderr: run.stderr.split("\n")[0] }).toEqual({
      pattern,
      code: 2,
      stderr: "error: an empty pattern of documents",
    });
  }
});

test("multi-get that matches nothing says so on stderr in every format: --json and --files answered in silence (s21 scripts #1)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "t", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "t"], { home }).code).toBe(0);
  for (const format of [[], ["--json"], ["--files"]]) {
    const run = runCli(["multi-get", "t:zz*.md", ...format], { home });
    expect({ format, code: run.code, stderr: run.stderr }).toEqual({ format, code: 0, stderr: "no indexed documents match t:zz*.md\n" });
  }
  expect(JSON.parse(runCli(["multi-get", "t:zz*.md", "--json"], { home }).stdout)).toEqual({
    documents: [],
    skipped: [],
    skipped_total: 0,
  });
  // Two parts of one file are one file to --files, as search's are (s21 scripts).
  expect(runCli(["multi-get", "t:a.md:1-1,t:a.md:3-3", "--files"], { home }).stdout).toBe(`${join(realpathSync(docs), "a.md")}\n`);
});

test("a command asked for JSON that fails prints its error's code as JSON on stdout too: a script tells LOCKED from damage (s21 scripts #3)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "k", path: docs, embed: false });
  expect(runCli(["index", "k"], { home }).code).toBe(0);
  const missing = runCli(["search", "alpha", "--repo", "nosuch", "--json"], { home });
  expect(missing.code).toBe(1);
  expect(missing.stderr.split("\n")[0]).toStartWith("error: no repository named 'nosuch'");
  expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: "REPO_NOT_FOUND", message: expect.stringContaining("nosuch") } });
  // An error without a hint has `hint: null`, as every other error object: a typed client needs the field (s25 scripts L3).
  const absent = runCli(["convert", join(docs, "nosuch.pdf"), "--json"], { home });
  expect(JSON.parse(absent.stdout)).toEqual({
    error: { code: "PATH_NOT_FOUND", message: `${join(docs, "nosuch.pdf")} does not exist`, hint: null },
  });
  const release = acquireWriterLock(repo.dir, "k", "index");
  try {
    for (const args of [
      ["verify", "k", "--json"],
      ["search", "alpha", "--format", "jsonl", "--repo", "k", "--mode", "nope"],
    ]) {
      const failed = runCli(args, { home });
      const code = args[0] === "verify" ? "LOCKED" : "USAGE";
      expect({ args, error: JSON.parse(failed.stdout).error.code, exit: failed.code }).toEqual({
        args,
        error: code,
        exit: code === "USAGE" ? 2 : 1,
      });
    }
  } finally {
    release();
  }
  // Text output prints nothing on stdout; a command that printed its JSON (index's array) adds nothing to it.
  expect(runCli(["search", "alpha", "--repo", "nosuch"], { home }).stdout).toBe("");
  const other = tempDir();
  writeTree(other, { "b.md": "# B\n\nbeta\n" });
  expect(runCli(["repo", "add", "other", other, "--no-embed"], { home }).code).toBe(0);
  rmSync(docs, { recursive: true });
  const index = runCli(["index", "--json"], { home });
  expect(index.code).toBe(1);
  const summaries = JSON.parse(index.stdout) as { repository: string; error?: { code: string } }[];
  expect(summaries.map((s) => [s.repository, s.error?.code ?? null]).sort()).toEqual([
    ["k", "PATH_NOT_FOUND"],
    ["other", null],
  ]);
});

test("ls of an empty name is a usage error, as for every command, not every repository's listing (s18 review #13)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "t", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "t"], { home }).code).toBe(0);
  for (const where of ["", ":a"]) {
    const listed = runCli(["ls", where], { home });
    expect({ where, code: listed.code, stdout: listed.stdout, stderr: listed.stderr.split("\n")[0] }).toEqual({
      where,
      code: 2,
      stdout: "",
      stderr: "error: a repository name is empty (got '')",
    });
  }
  expect(runCli(["ls", "t"], { home }).stdout).toContain("t:a.md");
});

test("an empty home (RESEARCHER_HOME set but empty, --home '') is a usage error, not the user's real home (s18 retest N13)", () => {
  const home = tempDir();
  const real = tempDir();
  const fromEnv = runCli(["repo", "list"], { home, env: { RESEARCHER_HOME: "", HOME: real } });
  expect({ code: fromEnv.code, stderr: fromEnv.stderr.split("\n")[0] }).toEqual({
    code: 2,
    stderr: "error: RESEARCHER_HOME is set but empty",
  });
  const fromFlag = runCli(["--home", "", "repo", "list"], { home, env: { HOME: real } });
  expect({ code: fromFlag.code, stderr: fromFlag.stderr.split("\n")[0] }).toEqual({
    code: 2,
    stderr: "error: --home needs a folder (got an empty one)",
  });
  expect(existsSync(join(real, ".researcher"))).toBe(false);
});

test('repo add of the file system\'s root ("$UNSET/") is refused: a run would walk every mounted disk (s18 retest N13)', () => {
  const home = tempDir();
  const added = runCli(["repo", "add", "notes", "/", "--no-embed"], { home });
  expect({ code: added.code, stderr: added.stderr.split("\n")[0] }).toEqual({
    code: 2,
    stderr: "error: / is the file system's root, not a folder of documents",
  });
  expect(runCli(["repo", "list", "--json"], { home }).stdout).toBe("[]\n");
});

test("repo add <path> <name>, its arguments swapped: the hint gives the command with the name first (s27 user U7)", () => {
  const home = tempDir();
  const cwd = tempDir();
  writeTree(cwd, { "my papers/a.md": "# A\n" });
  const folder = join(cwd, "my papers");
  for (const typed of [folder, "./my papers"]) {
    const swapped = runCli(["repo", "add", typed, "papers3", "--no-embed"], { home, cwd });
    expect({ code: swapped.code, stderr: swapped.stderr }).toEqual({
      code: 2,
      stderr: `error: invalid repository name '${typed}'\nhint: the name comes first: \`researcher repo add papers3 '${typed}'\`\n`,
    });
  }
  // Not a folder, or the other argument no name either: the naming rules, as before.
  for (const args of [
    [join(cwd, "nowhere"), "papers3"],
    [folder, "bad name"],
  ]) {
    expect(runCli(["repo", "add", ...args, "--no-embed"], { home, cwd }).stderr).toContain("hint: use letters, digits");
  }
  expect(runCli(["repo", "list", "--json"], { home }).stdout).toBe("[]\n");
});

test("repo add of an empty path (an unset variable) is a usage error, not the current folder (s18 hostile #6)", () => {
  const home = tempDir();
  const cwd = tempDir();
  const added = runCli(["repo", "add", "notes", "", "--no-embed"], { home, cwd });
  expect({ code: added.code, stderr: added.stderr }).toEqual({
    code: 2,
    stderr: "error: a repository needs a folder (got an empty path)\nhint: e.g. ~/notes, or . for this folder\n",
  });
  expect(runCli(["repo", "list", "--json"], { home }).stdout).toBe("[]\n");
  expect(runCli(["repo", "add", "notes", ".", "--no-embed"], { home, cwd }).code).toBe(0);
});

test("config set of a repository's path refuses an empty path and the root as repo add does: the index is kept (s20 review F2)", () => {
  const home = tempDir();
  const docs = tempDir();
  const cwd = tempDir();
  writeTree(docs, { "a.md": "# A\n\nkeptword\n" });
  writeTree(cwd, { "other.md": "# Other\n" });
  expect(runCli(["repo", "add", "n", docs, "--no-embed"], { home }).code).toBe(0);
  const before = readFileSync(join(home, "config.yaml"), "utf8");
  for (const [path, message] of [
    ["", "error: a repository needs a folder (got an empty path)"],
    ["/", "error: / is the file system's root, not a folder of documents"],
  ] as const) {
    const set = runCli(["config", "set", "repositories.n.path", path], { home, cwd });
    expect({ path, code: set.code, stderr: set.stderr.split("\n")[0] }).toEqual({ path, code: 2, stderr: message });
  }
  expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(before);
  // A relative path is the folder it names, written absolute.
  expect(runCli(["config", "set", "repositories.n.path", "."], { home, cwd }).code).toBe(0);
  expect(runCli(["repo", "list", "--json"], { home }).stdout).toContain(JSON.stringify(realpathSync(cwd)));
});

test("repo add warns of a folder inside another repository's, or holding one: its documents would be found twice (s11 new user #5)", () => {
  const home = tempDir();
  const top = tempDir();
  writeTree(top, { "notes/a.md": "# A\n", "b.md": "# B\n" });
  const add = (name: string, path: string) => runCli(["repo", "add", name, path, "--no-embed"], { home });
  expect(add("notes", join(top, "notes"))).toMatchObject({ code: 0, stderr: "" });
  const outer = add("all", top);
  expect(outer.code).toBe(0);
  expect(outer.stderr).toBe(
    `warning: ${top} holds repository 'notes' (${join(top, "notes")}): its documents will be found in both\n` +
      "hint: `researcher config set repositories.all.exclude notes/` leaves them to 'notes' alone\n",
  );
  mkdirSync(join(top, "notes/deep"));
  const inner = add("deep", join(top, "notes/deep"));
  const warnings = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("warning: "));
  expect(warnings(inner.stderr)).toEqual([
    `warning: ${join(top, "notes/deep")} is inside repository 'all' (${top}): its documents will be found in both`,
    `warning: ${join(top, "notes/deep")} is inside repository 'notes' (${join(top, "notes")}): its documents will be found in both`,
  ]);
  // A sibling whose name starts the same is not inside it (the hint for 'all' names every repository inside it).
  mkdirSync(join(top, "notes2"));
  expect(warnings(add("notes2", join(top, "notes2")).stderr).join("\n")).not.toContain("'notes'");
  expect(add("elsewhere", tempDir())).toMatchObject({ code: 0, stderr: "" });
});

test("repo add warns of no overlap the outer repository's excludes or ignore files prevent, and its hint's command ends a real one (s29 user F3)", () => {
  const home = tempDir();
  const top = tempDir();
  writeTree(top, { "notes/a.md": "# A\n", "papers/p.md": "# P\n", "books/b.md": "# B\n", "web/w.md": "# W\n", "b.md": "# B\n" });
  const add = (name: string, path: string, ...flags: string[]) => runCli(["repo", "add", name, path, "--no-embed", ...flags], { home });
  expect(add("notes", join(top, "notes"))).toMatchObject({ code: 0, stderr: "" });
  // Its own excludes keep notes out, and papers, added after it.
  expect(add("library", top, "--exclude", "notes", "--exclude", "papers")).toMatchObject({ code: 0, stderr: "" });
  expect(add("papers", join(top, "papers"))).toMatchObject({ code: 0, stderr: "" });
  // An exclude set afterwards, and a folder's contents (`web/*`), are the outer repository's rules too.
  const set = (value: string) => runCli(["config", "set", "repositories.library.exclude", value], { home });
  expect(set("[notes, papers, books, 'web/*']")).toMatchObject({ code: 0, stderr: "" });
  expect(add("books", join(top, "books"))).toMatchObject({ code: 0, stderr: "" });
  expect(add("web", join(top, "web"))).toMatchObject({ code: 0, stderr: "" });
  // So are its ignore files.
  writeFileSync(join(top, ".gitignore"), "books/\n");
  const real = set("notes,papers,web/*");
  expect(real.stderr).toBe("");
  writeFileSync(join(top, ".gitignore"), "");
  // A real overlap says so, with the command that ends it, which does.
  const again = set("notes,papers,web/*");
  expect(again.stderr).toBe(
    `warning: ${top} holds repository 'books' (${join(top, "books")}): its documents will be found in both\n` +
      "hint: `researcher config set repositories.library.exclude 'notes,papers,web/*,books/'` leaves them to 'books' alone\n",
  );
  expect(set("notes,papers,web/*,books/").stderr).toBe("");
});

test("one exclude that leaves several nested repositories in is one hint that excludes them all: run in turn, each hint's list undid the last's (s29b retest P1)", () => {
  const home = tempDir();
  const top = tempDir();
  writeTree(top, { "notes/a.md": "# A\n", "papers/p.md": "# P\n", "books/b.md": "# B\n", "sub/inner/i.md": "# I\n" });
  const add = (name: string, path: string) => runCli(["repo", "add", name, path, "--no-embed"], { home });
  for (const name of ["books", "papers"]) expect(add(name, join(top, name)).code).toBe(0);
  expect(add("inner", join(top, "sub/inner")).code).toBe(0);
  expect(add("library", top).code).toBe(0);
  const set = (value: string) => runCli(["config", "set", "repositories.library.exclude", value], { home });
  const hints = set("[notes]")
    .stderr.split("\n")
    .filter((line) => line.startsWith("hint: "));
  expect(hints).toEqual([
    "hint: `researcher config set repositories.library.exclude 'notes,books/,sub/inner/,papers/'` leaves them to 'books', 'inner' and 'papers' alone",
  ]);
  // The one command does what it says: no overlap is left.
  expect(set("notes,books/,sub/inner/,papers/").stderr).toBe("");
});

test("repo add of a second repository inside one whose excludes leave the first in hints both: one hint a list (s29c retest Q2)", () => {
  const home = tempDir();
  const top = tempDir();
  writeTree(top, { "inner/i.md": "# I\n", "papers/p.md": "# P\n", "top.md": "# T\n" });
  const add = (name: string, path: string) => runCli(["repo", "add", name, path, "--no-embed"], { home });
  expect(add("library", top).code).toBe(0);
  expect(add("inner", join(top, "inner")).stderr).toContain("hint: `researcher config set repositories.library.exclude inner/`");
  // It hinted `papers/` alone: run in turn, the second hint's list undid the first's.
  const papers = add("papers", join(top, "papers"));
  expect(papers.stderr).toContain(
    "hint: `researcher config set repositories.library.exclude 'inner/,papers/'` leaves them to 'inner' and 'papers' alone",
  );
  expect(runCli(["config", "set", "repositories.library.exclude", "inner/,papers/"], { home }).stderr).toBe("");
});

describe("index exit status", () => {
  test("index --embeddings-only of a repository added with --no-embed says it did nothing for it (s16 hostile #10)", () => {
    const home = tempDir();
    expect(runCli(["repo", "add", "m", tempDir(), "--no-embed"], { home }).code).toBe(0);
    const result = runCli(["index", "--embeddings-only", "m", "--model", "/"], { home });
    expect(result).toMatchObject({
      code: 0,
      stderr: expect.stringContaining(
        "warning: m: it keeps no embeddings (added with --no-embed), so --embeddings-only did nothing for it\nhint: give it embeddings with `researcher config set repositories.m.embed true`\n",
      ),
    });
  });

  test("a repository whose run fails is in the JSON with its error, every failure is on stderr, and the command fails", () => {
    const home = tempDir();
    const [good, gone, moved] = [tempDir(), tempDir(), tempDir()];
    writeTree(good, { "a.md": "# A\n\nalpha\n" });
    writeTree(gone, { "b.md": "# B\n\nbeta\n" });
    writeTree(moved, { "c.md": "# C\n\ngamma\n" });
    for (const [name, path] of [
      ["good", good],
      ["gone", gone],
      ["moved", moved],
    ] as const)
      expect(runCli(["repo", "add", name, path, "--no-embed"], { home }).code).toBe(0);
    rmSync(gone, { recursive: true });
    rmSync(moved, { recursive: true });
    const all = runCli(["index", "--json"], { home });
    expect(all.code).toBe(1);
    const entries = JSON.parse(all.stdout) as { repository: string; indexed?: number; error?: { code: string; message: string } }[];
    expect(entries.map((e) => e.repository).sort()).toEqual(["gone", "good", "moved"]);
    expect(entries.find((e) => e.repository === "good")).toMatchObject({ indexed: 1 });
    for (const name of ["gone", "moved"]) {
      expect(entries.find((e) => e.repository === name)?.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
      expect(all.stderr).toContain(name);
    }
    expect(all.stderr.split("\n").filter((line) => line.startsWith("error: "))).toHaveLength(2);
    const one = runCli(["index", "gone", "--json"], { home });
    expect(one.code).toBe(1);
    expect(JSON.parse(one.stdout)).toMatchObject({ error: { code: "PATH_NOT_FOUND" } }); // its error, as JSON (s21 scripts #3)
    expect(one.stderr).toStartWith("error: ");
    // A first run that failed made no index: the repository is still never indexed.
    expect(existsSync(join(home, "repositories", "gone", "index.db"))).toBe(false);
    expect(runCli(["search", "beta", "--repo", "gone"], { home }).stderr).toContain("has not been indexed yet");
  });

  test("every repository that failed is named on stderr: one whose every file failed beside one that could not run (s21 scripts #9)", () => {
    const home = tempDir();
    const [bad, worse, gone] = [tempDir(), tempDir(), tempDir()];
    writeTree(bad, { "bad.pdf": "not a pdf at all" });
    writeTree(worse, { "worse.pdf": "nor this" });
    writeTree(gone, { "a.md": "# A\n\nalpha\n" });
    for (const [name, path] of [
      ["bad", bad],
      ["worse", worse],
      ["gone", gone],
    ] as const) {
      expect(runCli(["repo", "add", name, path, "--no-embed"], { home }).code).toBe(0);
    }
    expect(runCli(["index", "gone"], { home }).code).toBe(0);
    rmSync(gone, { recursive: true });
    const run = runCli(["index"], { home });
    expect(run.code).toBe(1);
    const errors = run.stderr.split("\n").filter((line) => line.startsWith("error: "));
    expect(errors.map((line) => line.split(":")[1]!.trim()).sort()).toEqual(["bad", "gone", "worse"]);
  });

  test("a run where every file failed exits 1 with one error line and a hint that lists them; any success exits 0", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "bad.pdf": "not a pdf at all", "worse.pdf": "nor this" });
    expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
    const failed = runCli(["index", "notes", "--json"], { home });
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ indexed: 0, failed: 2 });
    const errors = failed.stderr.split("\n").filter((line) => line.startsWith("error: "));
    expect(errors).toEqual(["error: notes: all 2 files failed and none was indexed"]);
    const hint = failed.stderr.match(/^hint: .*`(researcher [^`]+)`/m);
    expect(hint).not.toBeNull();
    const listed = runCli(hint![1]!.split(" ").slice(1), { home });
    expect(listed.code).toBe(0);
    expect(
      JSON.parse(listed.stdout)
        .failures.map((f: { path: string }) => f.path)
        .sort(),
    ).toEqual(["bad.pdf", "worse.pdf"]);
    writeTree(docs, { "good.md": "# Good\n\nfine words\n" });
    const some = runCli(["index", "notes"], { home });
    expect(some.code).toBe(0);
    // The failed files are unchanged: not converted again, their failures kept and said so.
    expect(some.stdout).toContain("1 indexed, 0 unchanged, 0 removed, 0 failed");
    expect(some.stdout).toContain("2 files that failed are unchanged: not tried again");
    expect(some.stderr).not.toContain("error:");
    // Unchanged files count as good ones: the kept failures alone do not fail the run.
    expect(runCli(["index", "notes", "--quiet"], { home }).code).toBe(0);
  }, 60_000);
});

describe("ls", () => {
  test("a repository with only failures says how many failed and how to see them", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "bad.pdf": "not a pdf at all", "worse.pdf": "nor this" });
    expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
    runCli(["index", "notes", "--quiet"], { home }); // fails: every file does
    const listed = runCli(["ls", "notes"], { home });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe("");
    expect(listed.stderr).toBe("no indexed documents; 2 files failed (`researcher status notes --json` lists them with their reasons)\n");
    expect(JSON.parse(runCli(["status", "notes", "--json"], { home }).stdout).failures).toHaveLength(2);
    expect(runCli(["ls", "notes:sub/"], { home }).stderr).toBe("no indexed documents under 'sub/'\n");
  }, 60_000);

  test("a very long prefix that matches nothing is shortened in the message, not echoed whole (s23 review, minor)", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha\n" });
    expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "notes"], { home }).code).toBe(0);
    const listed = runCli(["ls", `notes:x${"/".repeat(80_000)}y`], { home });
    expect(listed.code).toBe(0);
    expect(listed.stderr).toStartWith("no indexed documents under 'x///");
    expect(listed.stderr.length).toBeLessThan(200);
  });

  test("a prefix that starts no path names the paths that hold it (s12 user #8)", async () => {
    const { home, repo } = bm25Repository({ "src/ch04-01-ownership.md": "# Own\n\nText.\n", "src/ch04-02-borrowing.md": "# B\n\nText.\n" });
    await indexRepository(home, repo);
    const listed = runCli(["ls", "docs:ch04"], { home });
    expect(listed.code).toBe(0);
    expect(listed.stderr).toBe(
      "no indexed path starts with 'ch04'; 2 paths contain it: docs:src/ch04-01-ownership.md, docs:src/ch04-02-borrowing.md\n",
    );
    expect(runCli(["ls", "docs:src/ch04"], { home }).stdout).toContain("ch04-02-borrowing.md");
  }, 60_000);
});

describe("documents with a natural language are not code", () => {
  test("an HTML page's `lang` is kept as metadata, but it is cited, listed and counted as HTML, not code", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, {
      "page.html": '<html lang="en-US"><head><title>Lanterns</title></head><body><h1>Lanterns</h1><p>A lantern glows.</p></body></html>',
      "notes.md": "# Notes\n\nA lantern in the notes.\n",
      "tool.py": 'def lantern():\n    """Light the lantern."""\n    return 1\n',
    });
    expect(runCli(["repo", "add", "notes", docs, "--code", "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "notes", "--quiet"], { home }).code).toBe(0);
    const found = runCli(["search", "lantern", "--mode", "bm25"], { home }).stdout;
    expect(found).toContain("page.html");
    expect(found).not.toMatch(/page\.html:\d+-\d+/);
    expect(found).toMatch(/tool\.py:1-3/);
    expect(runCli(["ls", "notes"], { home }).stdout).toMatch(/^html\s.*page\.html/m);
    expect(JSON.parse(runCli(["status", "notes", "--json"], { home }).stdout).languages).toEqual({ python: 1 });
    expect(runCli(["status", "notes"], { home }).stdout).not.toContain("en-US");
    const english = JSON.parse(runCli(["search", "lantern", "--json", "--mode", "bm25", "--where", "language=en-US"], { home }).stdout);
    expect(english.results.map((h: { path: string }) => h.path)).toEqual(["page.html"]);
  }, 60_000);
});

testShared(
  "--files, jsonl, csv and md say on stderr when no result holds the query's words (s12 user #6)",
  () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, {
      "cars.md": "# Cars\n\nThe driver parks the car in the garage.\n",
      "bread.md": "# Bread\n\nFlour, water and salt.\n",
    });
    expect(runCli(["repo", "add", "notes", docs], { home }).code).toBe(0);
    expect(runCli(["index", "notes", "--quiet"], { home }).code).toBe(0);
    const note = "note: no fragment holds the query's words: these matched by meaning alone\n";
    // A word the model knows and no document holds ("xyzzyq", which it does not know, now finds nothing by meaning).
    for (const format of [["--files"], ["--format", "jsonl"], ["--format", "csv"], ["--format", "md"]]) {
      const filler = runCli(["search", "automobile", "-n", "1", ...format], { home });
      expect(filler).toMatchObject({ code: 0, stderr: note });
      expect(filler.stdout).not.toBe("");
      expect(runCli(["search", "garage", "-n", "1", ...format], { home }).stderr).toBe("");
    }
    expect(runCli(["search", "automobile", "-n", "1", "--json"], { home }).stderr).toBe("");
    expect(runCli(["search", "xyzzyq", "-n", "1", "--files"], { home })).toMatchObject({ code: 0, stdout: "" });
  },
  60_000,
);

test("convert --json names a script without an extension by its #! line's language, as an index run stores it (s22 agent #4)", () => {
  const home = tempDir();
  const folder = tempDir();
  // A `#!` line after a UTF-8 byte order mark is none (the kernel runs no such script, an index run leaves it out); the
  // converted text has lost the mark, and told from it `convert` said sh (s23 review R5).
  writeTree(folder, { deploy: "#!/usr/bin/env bash\necho deploying\n", notes: "plain words\n", marked: "\uFEFF#!/bin/sh\necho marked\n" });
  const format = (name: string) => JSON.parse(runCli(["convert", join(folder, name), "--json"], { home }).stdout).format;
  expect([format("deploy"), format("notes"), format("marked")]).toEqual(["sh", "txt", "txt"]);
  expect(runCli(["repo", "add", "c", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "c"], { home }).code).toBe(0);
  const indexed = JSON.parse(runCli(["ls", "c", "--json"], { home }).stdout) as { path: string; format: string }[];
  expect(indexed.map((d) => [d.path, d.format])).toEqual([["deploy", "sh"]]);
});

test("ls of a prefix that begins with the repository's own name says which path it meant, as MCP list_documents does (s22 agent #6)", () => {
  const home = tempDir();
  const folder = tempDir();
  writeTree(folder, { "json/a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "py", folder, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "py"], { home }).code).toBe(0);
  expect(runCli(["ls", "py:py/json"], { home }).stderr).toContain("to list the repository py, write py:json");
});

test("an option that takes one value given twice is a usage error, not the two joined by a comma (s22 retest N4)", () => {
  const home = tempDir();
  const given = (...args: string[]) => runCli(args, { home });
  // `--filter a/** --filter b/**` searched the glob `a/**,b/**`, which matches nothing, and said neither matched.
  expect(given("search", "beta", "--filter", "sub/**", "--filter", "doc/**")).toMatchObject({
    code: 2,
    stderr: expect.stringMatching(/^error: --filter is given 2 times: it takes one value\nhint: for several globs write one/),
  });
  expect(given("repo", "add", "r", tempDir(), "--description", "a", "--description", "b").stderr).toStartWith(
    "error: --description is given 2 times",
  );
  expect(given("search", "beta", "-n", "2", "-n", "3").stderr).toStartWith("error: -n/--limit is given 2 times");
  // By its two names too (s22 retest2 A4: the last one was taken).
  expect(given("search", "beta", "-n", "1", "--limit", "2").stderr).toStartWith("error: -n/--limit is given 2 times");
  // Repeatable options take each (all of them, as one list: s23 R12).
  expect(given("repo", "add", "r", tempDir(), "--file-types", "md", "--file-types", "txt", "--no-embed").code).toBe(0);
  expect(listRepositories(home)[0]?.fileTypes).toEqual(["md", "txt"]);
});

test("a repeatable option given twice keeps each value as typed: `--exclude 007` was the number 7 and indexed 007/ (s23 R1)", () => {
  const home = tempDir();
  const run = (...args: string[]) => runCli(args, { home });
  const folder = tempDir();
  writeTree(folder, { "007/a.md": "# A\n\nsecret\n", "keep/b.md": "# B\n\nsecret kept\n" });
  expect(run("repo", "add", "r", folder, "--exclude", "007", "--exclude", "tmp", "--no-embed").code).toBe(0);
  expect(listRepositories(home)[0]?.exclude).toEqual(["007", "tmp"]);
  expect(run("index", "r", "--quiet").code).toBe(0);
  expect(run("ls", "r").stdout).not.toContain("007/a.md");
  const other = tempDir();
  writeTree(other, { "c.md": "# C\n\nsecret\n" });
  expect(run("repo", "add", "007", other, "--no-embed").code).toBe(0);
  expect(run("index", "007", "--quiet").code).toBe(0);
  const both = run("search", "secret", "--repo", "007", "--repo", "r", "--json");
  expect(both.code).toBe(0);
  expect(new Set(JSON.parse(both.stdout).results.map((hit: { repository: string }) => hit.repository))).toEqual(new Set(["007", "r"]));
  // An empty --file-types beside another is refused as one alone is (it stored the extension "0").
  const empty = run("repo", "add", "q", tempDir(), "--file-types", "", "--file-types", "md");
  expect({ code: empty.code, stderr: empty.stderr.split("\n")[0] }).toEqual({
    code: 1,
    stderr: "error: the file types need at least one extension",
  });
  // A value-taking option given without one, at any of its uses, is refused (`--exclude --exclude x` excluded "true").
  expect(run("repo", "add", "q", tempDir(), "--exclude", "--exclude", "x").stderr).toStartWith(
    "error: option `--exclude <glob>` value is missing",
  );
  expect(listRepositories(home).map((repo) => repo.name)).toEqual(["007", "r"]);
  // `-n1e20` is `-n 1e20` (it was an unknown option), and `--repo=` an empty name, not the query word after it.
  expect(run("search", "secret", "-n1e20").stderr).toStartWith("error: -n/--limit must be a whole number from 1 to 100000 (got 1e20)");
  expect(run("search", "--repo=", "secret").stderr).toStartWith("error: --repo holds an empty name in the list (got '')");
  // A value that ends in `=` keeps it: `--filter=b.md=` filtered b.md, `--description=E=mc2=` was "unused args" (s24 D1).
  const filtered = (filter: string) => JSON.parse(run("search", "secret", filter, "--json").stdout).results.length;
  expect([filtered("--filter=b.md"), filtered("--filter=b.md="), filtered("--filter=b.md==")]).toEqual([1, 0, 0]);
  expect(run("repo", "add", "e", tempDir(), "--description=E=mc2=", "--no-embed").code).toBe(0);
  expect(listRepositories(home).find((repo) => repo.name === "e")?.description).toBe("E=mc2=");
}, 30_000);

test("a link to nothing where an index folder should be is named as such by status, verify, search and index (s22 retest N5)", () => {
  // An index kept on a disk not mounted now.
  const { home, folder } = indexFolderReplaced((folder, home) => symlinkSync(join(home, "unmounted", "disk"), folder));
  expectNamedInItsPlace(
    home,
    [
      ["status", "a"],
      ["verify", "a"],
      ["search", "alpha"],
      ["index", "a"],
    ],
    `${folder} is a link to ${join(home, "unmounted", "disk")}, which does not exist`,
  );
  // And the repository can be removed: the link goes, the folder it names (not there) is not looked for.
  expect(runCli(["repo", "remove", "a"], { home }).code).toBe(0);
  expect(existsSync(folder) || readdirSync(join(home, "repositories")).includes("a")).toBe(false);
});

test("on a terminal with TERM=dumb, index draws no progress bar: it gets what a pipe gets (s23 contracts C4)", () => {
  const { home } = bm25Repository({ "a.md": "# A\n\nText.\n", "b.md": "# B\n\nMore text.\n" });
  // `script` runs the command on a real pseudo-terminal and copies what it draws to stdout.
  const onTerminal = (term: string) =>
    Bun.spawnSync(["script", "-qec", `${cliCommand.join(" ")} index docs --rebuild`, "/dev/null"], {
      env: { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, TERM: term },
    }).stdout.toString();
  expect(onTerminal("xterm")).toContain("\r\x1b[2Kdocs");
  const dumb = onTerminal("dumb");
  expect(dumb).toContain("docs: 2 indexed");
  expect(dumb).not.toContain("\x1b");
});

test("remove takes the document as ls and search print it, repo:path, and says the path it removed (s23 hostile H9, retest N5)", () => {
  const home = tempDir();
  const docs = tempDir();
  const files = { "a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n", "c.md": "# C\n\ngamma\n", "d.md": "# D\n\ndelta\n" };
  writeTree(docs, { ...files, "drafts/old.md": "# O\n\nold\n" });
  expect(runCli(["repo", "add", "r", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "r"], { home }).code).toBe(0);
  // A file still there comes back at the next index run: said, as "removed" alone did not (s26 user F11).
  expect(runCli(["remove", "r", "r:a.md"], { home })).toMatchObject({
    code: 0,
    stdout: "removed r:a.md\n",
    stderr: "note: r:a.md's file is still in its folder: the next index run reads it again (exclude or delete the file to keep it out)\n",
  });
  rmSync(join(docs, "b.md"));
  expect(runCli(["remove", "r:b.md"], { home })).toMatchObject({ code: 0, stdout: "removed r:b.md\n", stderr: "" });
  // Nor one the settings leave out: it does not come back (s26b review F9).
  expect(runCli(["config", "set", "repositories.r.exclude", "d.md"], { home }).code).toBe(0);
  expect(runCli(["remove", "r", "d.md"], { home })).toMatchObject({ code: 0, stdout: "removed r:d.md\n", stderr: "" });
  // The repository's own name, as ls prints it: a name typed with a blank said `removed  r:c.md` (s24 review D7).
  expect(runCli(["remove", " r", "c.md"], { home })).toMatchObject({ code: 0, stdout: "removed r:c.md\n" });
  // A slip in the repo:path form gets the hint the bare path gets, naming the path (s24 review D12).
  expect(runCli(["remove", "r", "r:drafts/olt.md"], { home })).toMatchObject({
    code: 1,
    stderr: "error: 'drafts/olt.md' is not indexed in 'r'\nhint: did you mean drafts/old.md?\n",
  });
  expect(runCli(["remove", "r", "r:drafts/old.md"], { home })).toMatchObject({ code: 0, stdout: "removed r:drafts/old.md\n" });
  expect(runCli(["ls", "r", "--json"], { home }).stdout.trim()).toBe("[]");
  expect(runCli(["remove", "r"], { home })).toMatchObject({
    code: 2,
    stderr: expect.stringContaining("remove needs a repository and a document"),
  });
});

test("a repository folder moved on disk: get and index say how to point the repository at it (s26 user F9)", () => {
  // `get` said to run index, and index to check that the folder exists: round in a circle, never naming the fix.
  const home = tempDir();
  const parent = tempDir();
  const folder = join(parent, "word");
  writeTree(folder, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "word", folder, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "word"], { home }).code).toBe(0);
  renameSync(folder, join(parent, "word-moved"));
  const fix = "hint: moved it? `researcher config set repositories.word.path <its new folder>` points the repository there";
  for (const args of [
    ["get", "word:a.md"],
    ["index", "word"],
  ]) {
    const run = runCli(args, { home });
    expect({ args, code: run.code, hint: run.stderr.includes(fix) }).toEqual({ args, code: 1, hint: true });
  }
  expect(runCli(["config", "set", "repositories.word.path", join(parent, "word-moved")], { home }).code).toBe(0);
  expect(runCli(["index", "word"], { home }).stdout).toContain("0 indexed, 1 unchanged");
});

test("every example of search --help is a search that runs (s26 user F7)", () => {
  // Its example of a query starting with a dash was a query of an exclusion alone: a usage error.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "---\ntags: [rust]\n---\n# Borrow checker\n\nA mutable reference, caching and retry; ownership rules.\n" });
  expect(runCli(["repo", "add", "rust-book", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index"], { home }).code).toBe(0);
  const examples = runCli(["search", "--help"], { home })
    .stdout.split("\n")
    .filter((line) => line.trim().startsWith("researcher search "));
  expect(examples.length).toBeGreaterThan(3);
  const quoted = cliCommand.map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
  for (const example of examples) {
    const run = Bun.spawnSync(["bash", "-c", `researcher() { ${quoted} "$@"; }; ${example.trim()}`], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" },
      stderr: "pipe",
    });
    expect({ example, code: run.exitCode, error: run.stderr.toString().match(/error: .*/)?.[0] }).toEqual({
      example,
      code: 0,
      error: undefined,
    });
  }
});
