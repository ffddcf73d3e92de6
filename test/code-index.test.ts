/**
 * Source code through the real CLI: `repo add --code`, fragments that follow the syntax, `language` and git
 * metadata filterable with `--where`, code results cited as `file:start-end`, `get` taking the range back, vendored
 * folders reported, and the git metadata refreshed when HEAD moves under unchanged files. Code is parsed in the
 * conversion workers (started and warmed up as a run begins): an index run stores exactly the syntax chunker's
 * fragments, and its own thread loads no grammar.
 */
import { DEFAULT_CODE_TOKENS } from "../src/config.ts";
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { languageOf } from "../src/convert/code-languages.ts";
import { codeSections } from "../src/convert/code-outline.ts";
import { ConvertPool } from "../src/convert/pool.ts";
import { indexFiles, indexRepository } from "../src/index/indexer.ts";
import { getRepository, registerRepository } from "../src/repos.ts";
import { HEADING_SEPARATOR, Store } from "../src/store/store.ts";
import { labelName, splitLabels } from "../src/text.ts";
import { S } from "./code-samples.ts";
import { chunkCode, ROOT, runCli, tempDir, writeTree } from "./helpers.ts";
import { paragraph, writePdf } from "./pdf-fixtures.ts";

function git(cwd: string, ...args: string[]): string {
  const run = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=trunk", ...args], { cwd });
  if (!run.success) throw new Error(run.stderr.toString());
  return run.stdout.toString().trim();
}

const PARSER = `"""Reading HTTP messages."""
import re


class Parser:
    """Parses a message, a line at a time."""

    def parse_header(self, line):
        """Split a header line into its name and its value."""
        name, _, value = line.partition(":")
        return name.strip().lower(), value.strip()
`;

const CLIENT = `import { Parser } from "./parser";

/** Opens a connection to the server and sends the greeting. */
export function openConnection(host: string): Socket {
  const socket = connect(host);
  socket.write("hello");
  return socket;
}
`;

describe("indexing code", () => {
  const home = tempDir();
  const root = tempDir();
  const folder = join(root, "webapp");
  writeTree(folder, {
    "parser.py": PARSER,
    "src/client.ts": CLIENT,
    "dist/bundle.js": "function openConnection(){}\n",
    "README.md": "# Web app\n\nA small client.\n",
  });
  git(folder, "init", "-q");
  git(folder, "add", ".");
  git(folder, "commit", "-qm", "first");
  const cli = (...args: string[]) => runCli(args, { home });

  test("repo add --code, index: code fragments, vendored folders reported", () => {
    expect(cli("repo", "add", "app", folder, "--code", "--no-embed").code).toBe(0);
    const run = cli("index", "app");
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("3 indexed");
    expect(run.stdout).toContain("not indexed as generated or vendored code: dist/ (1)");
  });

  test("small units pack into one fragment headed by their symbols, cited as file:start-end; get takes a range back", () => {
    const text = cli("search", "split a header line into name and value", "-n", "1", "--mode", "bm25");
    expect(text.stdout).toContain("app:parser.py:1-11");
    expect(text.stdout).toContain("parser › imports, class Parser");
    // The snippet keeps the code's lines, each under the heading's indent (one line of words before: s28 user 5).
    expect(text.stdout).toContain(
      '   def parse_header(self, line):\n       """Split a header line into its name and its value."""\n       name, _, value = line.partition(":")\n',
    );
    // As markdown, the whole fragment is fenced with its language (no info string before: s28 user 5).
    const md = cli("search", "split a header line into name and value", "-n", "1", "--mode", "bm25", "--format", "md", "--full");
    expect(md.stdout).toContain('```python\n"""Reading HTTP messages."""\n');
    const got = cli("get", "app:parser.py:8-11");
    expect(got.stdout.trimEnd()).toBe(PARSER.split("\n").slice(7, 11).join("\n"));
  });

  test("identifiers: 'open connection' finds openConnection, and openConnection finds it first", () => {
    for (const query of ["open connection", "openConnection"]) {
      const hits = JSON.parse(cli("search", query, "--json", "--mode", "bm25").stdout).results;
      expect(hits[0].path).toBe("src/client.ts");
    }
  });

  test("language and git metadata filter with --where; ls and status show languages", () => {
    const commit = git(folder, "rev-parse", "HEAD");
    const where = (filter: string) =>
      JSON.parse(cli("search", "the", "--json", "--mode", "bm25", "--documents", "--where", filter).stdout).results.map(
        (h: { path: string }) => h.path,
      );
    const python = JSON.parse(cli("search", "header", "--json", "--mode", "bm25", "--where", "language=python").stdout).results;
    expect(python.map((h: { path: string }) => h.path)).toEqual(["parser.py"]);
    expect(python[0].metadata).toMatchObject({ language: "python", git_project: "webapp", git_branch: "trunk", git_commit: commit });
    expect(where("language=typescript")).toEqual(["src/client.ts"]);
    const all = where(`git_commit=${commit}`);
    expect(all.length).toBeGreaterThan(0);
    // A short hash, as `git log --oneline` prints it, is the commits starting with it (s29 user F8), down to 4 digits
    // as git takes it (s29b retest P4); under 4 it is no hash, compared as the whole value.
    const short = git(folder, "log", "--oneline", "-1").split(" ")[0]!;
    expect(short).toBe(commit.slice(0, short.length));
    expect(where(`git_commit=${short}`)).toEqual(all);
    expect(where(`git_commit=${commit.slice(0, 12).toUpperCase()}`)).toEqual(all);
    expect(where(`git_commit in (${commit.slice(0, 39)}|abcdef0)`)).toEqual(all);
    expect(where(`git_commit!=${short}`)).toEqual(where("git_commit!=x").filter((path: string) => !all.includes(path)));
    expect(where(`git_commit=${commit.slice(0, 6)}`)).toEqual(all);
    expect(where(`git_commit=${commit.slice(0, 4)}`)).toEqual(all);
    expect(where(`git_commit=${commit.slice(0, 3)}`)).toEqual([]);
    expect(where(`git_commit=${commit.slice(1, 9)}`)).toEqual([]);
    // The format column is what `--where format=` takes, the language after it (s26 user F8: it said `typescript`).
    const listing = cli("ls", "app").stdout;
    expect(listing).toMatch(/^py python\s.*app:parser\.py$/m);
    expect(listing).toMatch(/^ts typescript\s.*app:src\/client\.ts$/m);
    expect(cli("status").stdout).toContain("code: 1 python, 1 typescript");
  });

  test("a new commit moves git_commit on unchanged files at the next run", () => {
    writeFileSync(join(folder, "NOTES.txt"), "later\n");
    git(folder, "add", ".");
    git(folder, "commit", "-qm", "second");
    git(folder, "checkout", "-q", "-b", "feature");
    expect(cli("index", "app").code).toBe(0);
    const hit = JSON.parse(cli("search", "header", "--json", "--mode", "bm25", "--where", "language=python").stdout).results[0];
    expect(hit.metadata).toMatchObject({ git_branch: "feature", git_commit: git(folder, "rev-parse", "HEAD") });
  });
});

/** pyenv's `libexec/pyenv-which`, trimmed: a bash script without an extension, as most of pyenv is. */
const PYENV_WHICH = `#!/usr/bin/env bash
#
# Summary: Display the full path to an executable
#
# Usage: pyenv which <command> [--nosystem] [--skip-advice]

set -e
[ -n "$PYENV_DEBUG" ] && set -x

system="system"
PYENV_COMMAND="$1"

remove_from_path() {
  local -a paths_to_remove
  IFS=: paths_to_remove=($1)
  local path_to_remove path_before
  local result=":\${PATH//\\~/$HOME}:"
  for path_to_remove in "\${paths_to_remove[@]}"; do
    while true; do
      path_before="$result"
      result="\${result//:$path_to_remove:/:}"
      if [[ \${#path_before} == "\${#result}" ]]; then break; fi
    done
  done
  result="\${result:1:\${#result}-2}"
  echo "$result"
}

if [ -z "$PYENV_COMMAND" ]; then
  pyenv-help --usage which >&2
  exit 1
fi
`;

describe("scripts without an extension, told by their #! line (s22 agent #4)", () => {
  const home = tempDir();
  const folder = tempDir();
  writeTree(folder, {
    "libexec/pyenv-which": PYENV_WHICH,
    "bin/release":
      "#!/usr/bin/env python3\n\n\ndef bump_version(version):\n    major, minor = version.split('.')\n    return f'{major}.{int(minor) + 1}'\n",
    LICENSE: "The MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n",
    "README.md": "# Tool\n\nWhich python runs.\n",
  });
  const cli = (...args: string[]) => runCli(args, { home });
  const json = (...args: string[]) => JSON.parse(cli(...args, "--json").stdout);

  test("repo add --code indexes them as their language: syntax fragments, language, cited by line range", () => {
    expect(cli("repo", "add", "tool", folder, "--code", "--no-embed").code).toBe(0);
    const run = json("index", "tool");
    expect(run).toMatchObject({ indexed: 3, skipped_types: { "": 1 } }); // the license
    const hit = json("search", "remove from path", "--repo", "tool", "--mode", "bm25", "-n", "1").results[0];
    expect(hit).toMatchObject({ path: "libexec/pyenv-which", metadata: { language: "bash", format: "sh" } });
    expect(hit.heading).toContain("function remove_from_path");
    expect(cli("search", "remove from path", "--repo", "tool", "--mode", "bm25", "-n", "1").stdout).toContain(
      `tool:libexec/pyenv-which:${hit.fragment.start_line}-${hit.fragment.end_line}`,
    );
    const python = json("search", "bump version", "--repo", "tool", "--mode", "bm25", "--where", "language=python").results;
    expect(python.map((h: { path: string }) => h.path)).toEqual(["bin/release"]);
    expect(cli("status", "tool").stdout).toContain("code: 1 bash, 1 python");
  });

  test("an index run parses them in the workers as this thread's chunker does", async () => {
    const sections = await codeSections(PYENV_WHICH, "bash", { maxTokens: DEFAULT_CODE_TOKENS });
    const db = new Database(join(getRepository(home, "tool").dir, "index.db"), { readonly: true });
    const stored = db
      .query<{ start_line: number; end_line: number }, []>(
        "SELECT f.start_line, f.end_line FROM fragments f JOIN documents d ON d.id = f.document_id WHERE d.path = 'libexec/pyenv-which' ORDER BY f.seq",
      )
      .all();
    db.close();
    expect(stored).toEqual(sections!.map((s) => ({ start_line: s.startLine, end_line: s.endLine })));
  });

  test("a new code outline re-chunks them with the code files", async () => {
    const repo = getRepository(home, "tool");
    const store = Store.open(repo.dir, { write: true });
    store.meta.set("chunking", JSON.stringify({ ...JSON.parse(store.meta.get("chunking")!), code_outline: 1 }));
    store.close();
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 2, skipped: 1 }); // the scripts; README.md not
  });

  test("a script's #! line changed to a language the repository does not index, or the script deleted: its document goes", async () => {
    writeFileSync(join(folder, "bin/release"), "#!/usr/bin/perl\nprint 1;\n");
    expect(json("index", "tool")).toMatchObject({ removed: 1, skipped_types: { "": 2 } });
    // A watch, or add_to_index, names the deleted file: nothing says what it was, and its document goes.
    rmSync(join(folder, "libexec/pyenv-which"));
    expect(await indexFiles(home, getRepository(home, "tool"), ["libexec/pyenv-which"])).toMatchObject({ removed: 1, failed: 0 });
  });
});

test("the summary's hint for a file without an extension names --code only to a repository that indexes no script language (s23 R8)", () => {
  const home = tempDir();
  const cli = (...args: string[]) => runCli(args, { home });
  const json = (name: string) => JSON.parse(cli("index", name, "--json").stdout);
  const line = (name: string) =>
    cli("index", name)
      .stdout.split("\n")
      .find((l) => l.includes("not indexed by type")) ?? "";
  // A Perl script: no grammar here, so no `#!` line a repository could be told to index.
  const files = { LICENSE: "The MIT License\n", "a.py": "x = 1\n", "notes.md": "# Notes\n\nwords\n", tool: "#!/usr/bin/perl\n" };
  const code = tempDir();
  writeTree(code, { ...files, "bin/run": "#!/usr/bin/env ruby\nputs 1\n" });
  expect(cli("repo", "add", "code", code, "--no-embed").code).toBe(0);
  expect(cli("config", "set", "repositories.code.file_types", "md,py").code).toBe(0);
  // A repository that indexes Python is told which scripts it reads (it was told to pass `--code`, in a clause without
  // a verb, though added with it); its Ruby script is why it is told at all.
  expect(line("code")).toBe(
    "  not indexed by type: 3 without an extension (a file without an extension is indexed only as a script whose `#!` line names a code language the repository indexes: python)",
  );
  expect(json("code")).toMatchObject({ skipped_types: { "": 3 }, skipped_scripts: 1 });
  const prose = tempDir();
  writeTree(prose, { LICENSE: files.LICENSE, "notes.md": files["notes.md"], "bin/run": "#!/bin/sh\necho 1\n" });
  expect(cli("repo", "add", "prose", prose, "--no-embed").code).toBe(0);
  expect(line("prose")).toEndWith("the repository indexes, and it indexes none: a repository added with `--code` does)");
  // A LICENSE and a Perl script in a folder of documents: counted, with no word of `#!` or `--code`, which would let
  // neither in (s24 user U5: a DOCX folder's LICENSE got that paragraph).
  const office = tempDir();
  writeTree(office, { LICENSE: files.LICENSE, tool: files.tool, "notes.md": files["notes.md"] });
  expect(cli("repo", "add", "office", office, "--no-embed").code).toBe(0);
  expect(line("office")).toBe("  not indexed by type: 2 without an extension");
  expect(json("office")).toMatchObject({ skipped_types: { "": 2 }, skipped_scripts: 0 });
});

test("a code folder added without --code: the summary prints the command that indexes its code, and it works (s23 U2)", () => {
  const home = tempDir();
  const folder = tempDir();
  writeTree(folder, {
    "a.py": "def alpha():\n    return 1\n",
    "b.py": "def beta():\n    return 2\n",
    "run.sh": "echo hi\n",
    "notes.md": "# N\n\nx\n",
  });
  const cli = (...args: string[]) => runCli(args, { home });
  expect(cli("repo", "add", "code", folder, "--no-embed").code).toBe(0);
  const lines = cli("index", "code").stdout.split("\n");
  // It sent the user to file_types in `config show`, and `config set … file_types py` was refused.
  expect(lines).toContain("  not indexed by type: 2 .py, 1 .sh");
  const hint = lines.find((line) => line.includes("to index the source code too"));
  expect(hint).toBe(
    "  to index the source code too, run `researcher config set repositories.code.file_types md,markdown,mdx,txt,pdf,docx,html,htm,xhtml,epub,py,sh` and index again (folders named dist, build, target, vendor or third_party are then left out as generated code; an ignore file's `!build/` line keeps one)",
  );
  const command = /`researcher ([^`]*)`/.exec(hint!)![1]!.split(" ");
  expect(cli(...command).code).toBe(0);
  expect(JSON.parse(cli("index", "code", "--json").stdout)).toMatchObject({ indexed: 3, skipped_types: {} });
  // A repository that indexes code is given no such command for a code type it leaves out.
  writeFileSync(join(folder, "c.rs"), "fn main() {}\n");
  expect(cli("index", "code").stdout).toContain(
    "  not indexed by type: 1 .rs (an extension is indexed when file_types in `researcher config show` names it)\n",
  );
});

/** One file per language (the samples) and a long Python file that is split inside its classes and functions. */
function codeFiles(): Record<string, string> {
  const extension: Record<string, string> = { c_sharp: "cs", bash: "sh", cpp: "cpp", c: "c", go: "go", java: "java" };
  const files: Record<string, string> = {};
  for (const [language, source] of Object.entries(S)) {
    const ext =
      extension[language] ??
      { javascript: "js", typescript: "ts", tsx: "tsx", python: "py", ruby: "rb", rust: "rs", php: "php" }[language]!;
    files[`sample.${ext}`] = source;
  }
  const method = (i: number) =>
    `    def method_${i}(self, value):\n        """Step ${i}."""\n${"        value = value * 2 + 1\n".repeat(12)}        return value\n`;
  files["long.py"] =
    `import os\n\n\nclass Big:\n${Array.from({ length: 40 }, (_, i) => method(i)).join("\n")}\r\n\ndef tail():\n    return 1\n`;
  return files;
}

describe("code is parsed in the conversion workers", () => {
  test("an index run stores exactly the fragments the syntax chunker makes in this thread", async () => {
    const home = tempDir();
    const folder = tempDir();
    const files = codeFiles();
    writeTree(folder, files);
    const repo = registerRepository(home, {
      name: "code",
      path: folder,
      embed: false,
      fileTypes: ["py", "ts", "tsx", "js", "go", "rs", "java", "c", "cpp", "cs", "rb", "php", "sh"],
    });
    const summary = await indexRepository(home, repo);
    expect(summary).toMatchObject({ indexed: Object.keys(files).length, failed: 0 });
    const db = new Database(join(repo.dir, "index.db"), { readonly: true });
    try {
      for (const [path, source] of Object.entries(files)) {
        const stored = db
          .query(
            "SELECT f.seq, f.start_line, f.end_line, f.heading, f.text FROM fragments f JOIN documents d ON d.id = f.document_id WHERE d.path = ? ORDER BY f.seq",
          )
          .all(path);
        const expected = (await chunkCode(source, languageOf(path), { maxTokens: DEFAULT_CODE_TOKENS }))!.map((f) => ({
          seq: f.seq,
          start_line: f.startLine,
          end_line: f.endLine,
          heading: f.headings.join(HEADING_SEPARATOR),
          text: f.text,
        }));
        expect([path, stored]).toEqual([path, expected]);
      }
    } finally {
      db.close();
    }
  }, 60_000); // two workers load the grammars: seconds on a shared machine

  test("workers warmed up before the first file parse as cold ones do; a pool closed while they warm up just stops", async () => {
    const source = codeFiles()["long.py"]!;
    const expected = await codeSections(source, "python", { maxTokens: DEFAULT_CODE_TOKENS });
    const pool = new ConvertPool({ size: 2, timeoutMs: 30_000, convert: { codeTokens: DEFAULT_CODE_TOKENS } });
    try {
      pool.warmUp();
      const converted = await pool.convert("long.py", new TextEncoder().encode(source));
      expect(converted.codeSections).toEqual(expected!);
    } finally {
      pool.close();
    }
    const closed = new ConvertPool({ size: 2, timeoutMs: 30_000, convert: { codeTokens: DEFAULT_CODE_TOKENS } });
    closed.warmUp();
    closed.close();
    await Bun.sleep(300); // the runtime compiles after close: nothing may be sent to the stopped workers
    await expect(closed.convert("long.py", new TextEncoder().encode(source))).rejects.toThrow("indexing was stopped");
  }, 60_000);

  test("source files wait for the parsing workers while other formats take any free one: all come back", async () => {
    const source = codeFiles()["long.py"]!;
    const expected = await codeSections(source, "python", { maxTokens: DEFAULT_CODE_TOKENS });
    const html = new TextEncoder().encode("<html><head><title>Notes</title></head><body><p>plain words</p></body></html>");
    for (const size of [1, 2, 3]) {
      const pool = new ConvertPool({ size, timeoutMs: 30_000, convert: { codeTokens: DEFAULT_CODE_TOKENS } });
      try {
        const files = ["a.py", "b.html", "c.py", "d.html", "e.py", "f.html"];
        const converted = await Promise.all(
          files.map((path) => pool.convert(path, path.endsWith(".py") ? new TextEncoder().encode(source) : html)),
        );
        for (const [i, path] of files.entries()) {
          if (path.endsWith(".py")) expect(converted[i]!.codeSections).toEqual(expected!);
          else expect(converted[i]!.text).toContain("plain words");
        }
      } finally {
        pool.close();
      }
    }
  }, 60_000);

  test("the indexing thread loads no grammar: the parse happens in the workers", () => {
    const folder = tempDir();
    writeTree(folder, { "a.py": S.python!, "b.ts": S.typescript! });
    const script = `import { indexRepository } from "${ROOT}/src/index/indexer.ts"; import { registerRepository } from "${ROOT}/src/repos.ts";
      import { loadedLanguages } from "${ROOT}/src/convert/tree-sitter.ts";
      const home = "${tempDir()}";
      const repo = registerRepository(home, { name: "c", path: "${folder}", embed: false, fileTypes: ["py", "ts"] });
      const summary = await indexRepository(home, repo);
      console.log(summary.indexed, summary.fragments > 0, JSON.stringify(loadedLanguages()));`;
    const run = Bun.spawnSync([process.execPath, "-e", script]);
    expect(run.stdout.toString().trim()).toBe("2 true []");
  }, 60_000);
});

test("a result that is one part of a split function says which part, and the lines of the whole (s13 user #4)", () => {
  const home = tempDir();
  const folder = tempDir();
  const body = Array.from({ length: 120 }, (_, i) => `    total += compute_step(${i}, "argument text for the step")`).join("\n");
  writeTree(folder, { "long.py": `import sys\n\n\ndef accumulate_everything(values):\n    total = 0\n${body}\n    return total\n` });
  expect(runCli(["repo", "add", "code", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  const found = JSON.parse(runCli(["search", "compute_step", "--json", "-n", "3"], { home }).stdout);
  const parts = found.results.filter((r: { heading: string }) => r.heading === "def accumulate_everything");
  expect(parts.length).toBeGreaterThan(1);
  for (const { fragment } of parts) {
    expect(fragment.section).toMatchObject({ start_line: 4, end_line: 126 });
    expect(fragment.section.parts).toBeGreaterThan(1);
  }
  const text = runCli(["search", "compute_step", "-n", "1"], { home }).stdout;
  expect(text).toMatch(/part \d+ of \d+, lines 4-126 in all/);
  // A fragment that is its unit whole carries no section.
  const imports = JSON.parse(runCli(["search", "sys", "--json", "-n", "1"], { home }).stdout).results[0];
  expect(imports.fragment.section).toBeUndefined();
});

test("a function split around a nested function is one run: its head and tail carry the lines of the whole (s14 user #1)", () => {
  const home = tempDir();
  const folder = tempDir();
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join("\n");
  const head = lines(30, (i) => `    setup_value_${i} = prepare_input(${i}, "text for the setup step")`);
  const inner = lines(50, (i) => `        acc += transform_piece(piece, ${i}, "argument for the inner step")`);
  const tail = lines(30, (i) => `    finish_value_${i} = complete_output(${i}, "text for the final step")`);
  const python = `import sys\n\n\ndef tokenize_everything(source):\n    """Tokenize the source."""\n${head}\n\n    def consume_pieces(piece):\n        acc = 0\n${inner}\n        return acc\n\n${tail}\n    return consume_pieces(source)\n`;
  // A markdown section's subsections end it: its one fragment before them is no part of a run.
  const markdown = `# Okapi guide\n\n## Overview\n\nA short introduction.\n\n### Okapi details\n\n${lines(80, (i) => `Okapi detail sentence ${i} runs on.`)}\n`;
  writeTree(folder, { "lexer.py": python, "guide.md": markdown });
  expect(runCli(["repo", "add", "code", folder, "--file-types", "py,md", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  const found = JSON.parse(runCli(["search", "tokenize everything", "--json", "-n", "10"], { home }).stdout);
  const own = found.results.filter((r: { heading: string }) => r.heading === "def tokenize_everything");
  const nested = found.results.filter((r: { heading: string }) => r.heading === "def tokenize_everything › def consume_pieces");
  expect(own.length).toBe(2); // the head and the tail, the nested function's two parts between them
  expect(nested.length).toBe(2);
  for (const { fragment } of own)
    expect(fragment.section).toMatchObject({ parts: 4, start_line: 4, end_line: 121, ref: "code:lexer.py:4-121" });
  // Each result carries the ref that reads its passage, and only it (a bare location reads on to the end of the file).
  const first = own.find((r: { fragment: { seq: number } }) => r.fragment.seq === 1);
  expect(first.fragment.ref).toBe(`code:lexer.py:${first.fragment.start_line}-${first.fragment.end_line}`);
  const read = runCli(["get", first.fragment.ref], { home }).stdout;
  expect(read.split("\n")[0]).toBe("def tokenize_everything(source):");
  expect(read.trimEnd().split("\n")).toHaveLength(first.fragment.end_line - first.fragment.start_line + 1);
  // --documents: each of a document's fragments has its heading; text output cites code fragments by lines and symbol.
  const documents = JSON.parse(runCli(["search", "tokenize everything", "--json", "--documents"], { home }).stdout).results;
  expect(documents[0].fragments.map((f: { heading: string }) => f.heading)).toContain("def tokenize_everything › def consume_pieces");
  expect(runCli(["search", "tokenize everything", "--documents"], { home }).stdout).toMatch(/also lines \d+-\d+ \(def tokenize_everything/);
  for (const { fragment } of nested) expect(fragment.section).toMatchObject({ parts: 2, start_line: 37, end_line: 89 });
  const intro = JSON.parse(runCli(["search", "short introduction", "--json", "-n", "1"], { home }).stdout).results[0];
  expect(intro).toMatchObject({ path: "guide.md", heading: "Overview" });
  expect(intro.fragment.section).toBeUndefined();
});

test("a function split inside a loop or a long docstring is one run: every part carries the whole function (s17 user #1)", () => {
  const home = tempDir();
  const folder = tempDir();
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join("\n");
  const head = lines(12, (i) => `    setup_${i} = prepare_input(${i}, "text for the setup step")`);
  const loop = lines(60, (i) => `        total += weigh_item(item, ${i}, "argument for the loop step")`);
  const tail = lines(12, (i) => `    finish_${i} = complete_output(${i}, "text for the final step")`);
  const docs = lines(60, (i) => `    Sentence ${i} of a long docstring that says what the function does.`);
  writeTree(folder, {
    // As the tester's: a head, a loop longer than the budget, a tail.
    "loop.py": `def long_function(items):\n${head}\n    total = 0\n    for item in items:\n${loop}\n${tail}\n    return total\n`,
    // As json.dump: a docstring longer than the budget, then the code.
    "doc.py": `def serialize_stream(obj, fp):\n    """Serialize obj as a stream.\n\n${docs}\n    """\n${tail}\n    fp.write(obj)\n`,
  });
  expect(runCli(["repo", "add", "code", folder, "--file-types", "py", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  type Hit = { path: string; fragment: { seq: number; section?: { part: number; parts: number; start_line: number; end_line: number } } };
  const hits: Hit[] = JSON.parse(runCli(["search", "step docstring", "--json", "--all"], { home }).stdout).results;
  for (const [path, end] of [
    ["loop.py", 88],
    ["doc.py", 77],
  ] as const) {
    const parts = hits.filter((h) => h.path === path).sort((a, b) => a.fragment.seq - b.fragment.seq);
    expect(parts.length).toBeGreaterThan(1);
    // The head and the tail had no section, and the loop's parts only the loop's lines.
    for (const [i, { fragment }] of parts.entries())
      expect({ path, section: fragment.section }).toEqual({
        path,
        section: expect.objectContaining({ part: i + 1, parts: parts.length, start_line: 1, end_line: end }),
      });
  }
});

test("a function whose first part holds a local import, or whose last part is a nested def, is one run too (s17 retest #1)", () => {
  const home = tempDir();
  const folder = tempDir();
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join("\n");
  const body = lines(60, (i) => `    step_${i} = compute_value(${i}, "text for the middle step")`);
  const inner = lines(40, (i) => `        acc += format_piece(node, ${i}, "argument for the nested step")`);
  writeTree(folder, {
    // As difflib._mdiff: the head starts with `import re`; it was headed `def mdiff › imports`, and had no section.
    "imports.py": `def mdiff(lines):\n    """Marked differences."""\n    import re\n${body}\n    return step_0\n`,
    // As ast.dump: the tail is a nested def; the head (signature and docstring) had no section.
    "nested.py": `def dump(node):\n    """Dump the tree."""\n${lines(30, (i) => `    option_${i} = prepare_step(${i})`)}\n    def _format(node):\n        acc = 0\n${inner}\n        return acc\n    return _format(node)\n`,
    // A class's own statements and then its methods: the methods are units of their own, not parts of the class's run.
    "klass.py": `class Unparser:\n    """Unparse a tree."""\n${lines(30, (i) => `    option_${i} = prepare_step(${i})`)}\n    def visit_if(self, node):\n        acc = 0\n${inner}\n        return acc\n`,
  });
  expect(runCli(["repo", "add", "code", folder, "--file-types", "py", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  type Hit = { path: string; heading: string; fragment: { seq: number; section?: { start_line: number; end_line: number } } };
  const hits: Hit[] = JSON.parse(runCli(["search", "step", "--json", "--all"], { home }).stdout).results;
  for (const [path, heading, end] of [
    ["imports.py", "def mdiff", 64],
    ["nested.py", "def dump", 76],
  ] as const) {
    const parts = hits.filter((h) => h.path === path);
    expect({ path, headings: [...new Set(parts.map((h) => h.heading))].sort() }).toEqual({
      path,
      headings: path === "imports.py" ? [heading] : [heading, `${heading} › def _format`],
    });
    for (const { fragment } of parts.filter((h) => h.heading === heading))
      expect({ path, section: fragment.section }).toEqual({ path, section: expect.objectContaining({ start_line: 1, end_line: end }) });
  }
  // The class's own fragment went on over its method's: "part 1 of 3, lines 1-75" (s18 review #8).
  const klass = hits.filter((h) => h.path === "klass.py" && h.heading === "class Unparser");
  expect(klass.length).toBe(1);
  expect(klass[0]!.fragment.section).toBeUndefined();
});

test("a function's part that holds a nested def is found by its unit: head and tail carry the whole, the head is headed by the function (s28 user #1)", () => {
  const home = tempDir();
  const folder = tempDir();
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join("\n");
  const doc = lines(8, (i) => `    Sentence ${i} of the docstring says which metadata is copied and when links are followed.`);
  const stamps = lines(40, (i) => `    stamp_${i} = lookup("utime")(dst, times_${i}, follow_symlinks=follow)`);
  const modes = lines(30, (i) => `    mode_${i} = lookup("chmod")(dst, mode_${i}, follow_symlinks=follow)`);
  const sources = {
    // As shutil.copystat: the first part holds the signature, the docstring and the nested `_nop` and `lookup`; it was
    // headed `def copystat › def _nop` and, found by that heading, had no section.
    "meta.py": `import os\n\n\ndef copy_metadata(src, dst, *, follow_symlinks=True):\n    """Copy file metadata from src to dst.\n\n${doc}\n    """\n    def _nop(*args, ns=None, follow_symlinks=None):\n        pass\n\n    follow = follow_symlinks or not (os.path.islink(src) and os.path.islink(dst))\n    if follow:\n        def lookup(name):\n            return getattr(os, name, _nop)\n    else:\n        def lookup(name):\n            return getattr(os, "l" + name, _nop)\n${stamps}\n    return follow\n`,
    // The mirror: the last part holds a small nested def (`def copy_modes › def _finish`), and had no section.
    // A closure-style module: parts packed with nested functions kept whole, headed by them.
    "parse.js": `function parse(tokens) {\n  let pos = 0;\n${lines(30, (i) => `  function expect${i}(token) {\n    if (tokens[pos] !== token) throw new Error("expected " + token + " at " + pos + " in the lookup text");\n    pos += ${i} + 1;\n    return tokens[pos - 1];\n  }\n`)}\n  return expect0("(") && follow;\n}\n`,
    "modes.py": `def copy_modes(src, dst, *, follow=True):\n    """Copy the mode bits from src to dst."""\n${modes}\n\n    def _finish(result):\n        return result or None\n\n${modes.replaceAll("mode_", "bits_")}\n    return _finish(follow)\n`,
  };
  writeTree(folder, sources);
  expect(runCli(["repo", "add", "code", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  type Section = { part: number; parts: number; start_line: number; end_line: number; ref: string };
  type Hit = { path: string; heading: string; fragment: { seq: number; section?: Section } };
  const hits: Hit[] = JSON.parse(runCli(["search", "lookup follow", "--json", "--all"], { home }).stdout).results;
  const parts = (path: string) => hits.filter((h) => h.path === path).sort((a, b) => a.fragment.seq - b.fragment.seq);
  for (const [path, start, count] of [
    ["meta.py", 4, 2],
    ["modes.py", 1, 2],
    ["parse.js", 1, 3],
  ] as const) {
    const end = sources[path].trimEnd().split("\n").length;
    expect(parts(path).length).toBe(count);
    for (const [i, { fragment }] of parts(path).entries())
      expect({ path, section: fragment.section }).toEqual({
        path,
        section: { part: i + 1, parts: count, start_line: start, end_line: end, ref: `code:${path}:${start}-${end}` },
      });
  }
  // The part that opens with the signature is the function's; the nested defs it holds are still what it defines.
  expect(parts("meta.py").map((h) => h.heading)).toEqual(["def copy_metadata", "def copy_metadata"]);
  expect(JSON.parse(runCli(["search", "_nop", "--json", "-n", "1"], { home }).stdout).results[0]).toMatchObject({ path: "meta.py" });
  // The text output tells the first part too, as the tester expected of copystat.
  expect(runCli(["search", "copy_metadata", "-n", "1"], { home }).stdout).toContain("part 1 of 2, lines 4-66 in all");
});

test("a run of parts is one unit: same-named siblings are not its parts, and a run longer than 64 parts is counted whole (s14 review #1)", () => {
  const home = tempDir();
  const folder = tempDir();
  const lines = (n: number, line: (i: number) => string, join = "\n") => Array.from({ length: n }, (_, i) => line(i)).join(join);
  const growth = lines(90, (i) => `        self.value_${i} = compute_okapi_growth(amount, ${i}, "long argument text")`);
  writeTree(folder, {
    // Two overloads of one name: the long one split in parts, the short one a unit of its own after it.
    "shapes.py": `class Shape:\n    def grow(self, amount):\n${growth}\n\n    def grow(self, amount, factor):\n        return okapi_grow(amount * factor)\n`,
    // Two sibling sections of one name, a fragment each.
    "guide.md":
      "# Guide\n\n## Usage\n\n### Example\n\nRun the okapi tool with one flag.\n\n### Example\n\nRun the okapi tool with two flags.\n",
    // One section of about 100 fragments.
    "long.md": `# Long\n\n## Part\n\n${lines(1500, (i) => `Paragraph ${i} of the long okapi section, with words to fill it.`, "\n\n")}\n`,
  });
  expect(runCli(["repo", "add", "m", folder, "--file-types", "py,md", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "m"], { home }).code).toBe(0);
  type Hit = {
    path: string;
    fragment: {
      seq: number;
      start_line: number;
      end_line: number;
      section?: { parts: number; part: number; start_line: number; end_line: number };
    };
  };
  const hits: Hit[] = JSON.parse(runCli(["search", "okapi", "--json", "--all"], { home }).stdout).results;
  const shapes = hits.filter((h) => h.path === "shapes.py").sort((a, b) => a.fragment.seq - b.fragment.seq);
  const overload = shapes.at(-1)!;
  expect(overload.fragment.section).toBeUndefined();
  for (const part of shapes.slice(0, -1))
    expect(part.fragment.section).toMatchObject({ start_line: 1, end_line: overload.fragment.start_line - 2 });
  for (const example of hits.filter((h) => h.path === "guide.md")) expect(example.fragment.section).toBeUndefined();
  const long = hits.filter((h) => h.path === "long.md").sort((a, b) => a.fragment.seq - b.fragment.seq);
  expect(long.length).toBeGreaterThan(64 * 1.3);
  for (const [i, h] of long.entries()) expect(h.fragment.section).toMatchObject({ part: i + 1, parts: long.length, start_line: 5 });
});

test("a unit's parts are told by the unit the chunker records: a section across pages, blank lines or comments, and a function that calls itself, are one run (s15 review #1, #4)", async () => {
  const home = tempDir();
  const folder = tempDir();
  const lines = (n: number, line: (i: number) => string, join = "\n") => Array.from({ length: n }, (_, i) => line(i)).join(join);
  const paragraphs = (n: number, gap: string) =>
    lines(n, (i) => `Paragraph ${i} of the irrigation section, about drip lines and okapi.`.repeat(4), gap);
  const recursion = lines(120, (i) => `    total += walk_okapi(node.child_${i}, depth + ${i}) * weight_factor_${i}`);
  writeTree(folder, {
    "blank.md": `# Garden\n\n## Irrigation\n\n${paragraphs(40, "\n\n\n")}\n`,
    "comments.md": `# Garden\n\n## Irrigation\n\n${paragraphs(40, "\n\n<!-- note -->\n\n")}\n`,
    "tree.py": `def walk_okapi(node, depth=0):\n    total = 0\n${recursion}\n    return total\n`,
  });
  const page = (n: number) =>
    paragraph(`Page ${n} of the okapi chapter goes on with the irrigation story and its drip lines.`.repeat(3), 120);
  writeFileSync(
    join(folder, "book.pdf"),
    await writePdf([[{ text: "Okapi Irrigation", top: 72, size: 20 }, ...page(1)], page(2), page(3)], { title: "A Garden Book" }),
  );
  expect(runCli(["repo", "add", "m", folder, "--file-types", "py,md,pdf", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "m"], { home }).code).toBe(0);
  type Hit = { path: string; heading: string; fragment: { section?: { parts: number; start_line: number; end_line: number } } };
  const hits: Hit[] = JSON.parse(runCli(["search", "okapi", "--json", "--all"], { home }).stdout).results;
  for (const path of ["blank.md", "comments.md", "tree.py", "book.pdf"]) {
    const parts = hits.filter((h) => h.path === path && h.heading !== "");
    expect(parts.length).toBeGreaterThan(2);
    const whole = (h: Hit) =>
      h.fragment.section ? `${h.fragment.section.parts} parts, ${h.fragment.section.start_line}-${h.fragment.section.end_line}` : "none";
    expect({ path, sections: [...new Set(parts.map(whole))] }).toEqual({ path, sections: [whole(parts[0]!)] });
    expect(parts[0]!.fragment.section?.parts).toBe(parts.length);
  }
});

test("a package's __init__.py, a module's index.ts and mod.rs, and a folder's index.md are titled by their folder (s23 user U4)", () => {
  const home = tempDir();
  const folder = tempDir();
  writeTree(folder, {
    "json/__init__.py": "def loads(s):\n    return s\n",
    "src/parser/index.ts": "export function parse(text: string): string {\n  return text;\n}\n",
    "src/net/mod.rs": "pub fn connect() {}\n",
    "docs/guide/index.md": "Run make with the flux capacitor enabled.\n",
    "index.md": "The root page.\n", // at the root: the repository's folder is no name its documents carry
    "json/decoder.py": "def decode(s):\n    return s\n",
  });
  expect(runCli(["repo", "add", "code", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  const title = (path: string) => JSON.parse(runCli(["get", `code:${path}`, "--json"], { home }).stdout).title;
  expect(
    ["json/__init__.py", "src/parser/index.ts", "src/net/mod.rs", "docs/guide/index.md", "index.md", "json/decoder.py"].map(title),
  ).toEqual(["json", "parser", "net", "guide", "index", "decoder"]);
});

test("a class's name finds the fragment that defines it, above its short methods headed with its name (s22 agent #1)", () => {
  const home = tempDir();
  const folder = tempDir();
  const init = Array.from({ length: 40 }, (_, i) => `        self.option_${i} = options.get("option_${i}", default_value(${i}))`).join(
    "\n",
  );
  const methods = Array.from(
    { length: 8 },
    (_, i) => `    def step_${i}(self):\n        """Advance by ${i}."""\n        return self.position + ${i}\n`,
  ).join("\n");
  const python = `class Tokenizer:\n    """Splits a text into tokens."""\n\n    def __init__(self, text, options):\n        self.text = text\n${init}\n\n${methods}`;
  const typescript = `export class Scanner {\n  private readonly settings: Record<string, number>;\n\n  constructor(private text: string) {\n${Array.from({ length: 40 }, (_, i) => `    this.settings["key${i}"] = compute(${i}, text.length);`).join("\n")}\n  }\n\n${Array.from({ length: 8 }, (_, i) => `  step${i}(): number {\n    return this.text.length + ${i};\n  }\n`).join("\n")}}\n`;
  writeTree(folder, { "tokenizer.py": python, "scanner.ts": typescript, "other.py": "def helper():\n    return 1\n" });
  expect(runCli(["repo", "add", "code", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  for (const [query, line] of [
    ["Tokenizer", "class Tokenizer:"],
    ["Scanner", "export class Scanner {"],
  ]) {
    const [first] = JSON.parse(runCli(["search", query!, "--json", "-n", "1", "--full"], { home }).stdout).results;
    expect(first.text).toContain(line);
  }
});

test("a method in a class split across fragments is defined by its own fragment: its name finds it above its call sites (s22 retest N2)", () => {
  const home = tempDir();
  const folder = tempDir();
  const body = (name: string) =>
    Array.from(
      { length: 9 },
      (_, i) =>
        `        value_${i} = self.table.lookup('${name}', ${i})\n        if value_${i} is None:\n            raise KeyError('missing entry ${i}')\n`,
    ).join("");
  const methods = ["__init__", "open_store", "sync_store", "fetch_record", "close_store", "drop_store"]
    .map((m) => `    def ${m}(self, key):\n        """The ${m} step."""\n${body(m)}        return key\n`)
    .join("\n");
  const files: Record<string, string> = { "registry.py": `class Registry:\n    """A registry of things."""\n\n${methods}` };
  for (let k = 0; k < 6; k++)
    files[`user${k}.py`] =
      `def use_${k}(reg):\n    # calls fetch_record on the registry, then other work ${k}\n    return reg.fetch_record(${k}) or reg.fetch_record(${k + 1})\n`;
  for (let k = 0; k < 20; k++) files[`other${k}.py`] = `def other_${k}(x):\n    return x + ${k}\n`;
  writeTree(folder, files);
  expect(runCli(["repo", "add", "m", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "m"], { home }).code).toBe(0);
  const [first] = JSON.parse(runCli(["search", "fetch_record", "--json", "-n", "1"], { home }).stdout).results;
  expect([first.path, first.heading]).toEqual(["registry.py", "class Registry › def fetch_record"]);
});

test("one identifier as the query finds the unit of exactly that name before helpers named with it (s22 A/B: rmtree 10th)", () => {
  const home = tempDir();
  const folder = tempDir();
  const body = Array.from({ length: 25 }, (_, i) => `        step_${i} = handle(path, entry, ${i})`).join("\n");
  const helpers = ["isdir", "unsafe", "safe_fd", "islink"]
    .map((name) => `def _rmtree_${name}(entry):\n    """Part of rmtree: ${name}."""\n    return rmtree_check(entry)\n`)
    .join("\n");
  writeTree(folder, {
    "shutil.py": `${helpers}\n\ndef rmtree(path, ignore_errors=False, onerror=None):\n    """Recursively delete a directory tree."""\n    for entry in scan(path):\n${body}\n    return None\n`,
    "user.py": "def clean(path):\n    # rmtree removes the tree; rmtree again if it failed\n    return rmtree(path) or rmtree(path)\n",
  });
  expect(runCli(["repo", "add", "code", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  const first = (query: string) => JSON.parse(runCli(["search", query, "--json", "-n", "1"], { home }).stdout).results[0].heading;
  expect(first("rmtree")).toBe("def rmtree");
  // And in the frame of a question, as agents ask it (s24 agent A1: "where is X defined" lost it).
  for (const question of ["where is rmtree defined?", "the `rmtree` function", "how does rmtree work", "shutil.rmtree"]) {
    expect({ question, heading: first(question) }).toEqual({ question, heading: "def rmtree" });
  }
});

test("over several repositories, one identifier's definition comes before lines that mention it elsewhere (s24 code user C1)", () => {
  // Each repository's best match of one word reached full evidence (1), and repositories' names settled the tie: an
  // Apache config of git's that named addHandler came before logging's `def addHandler`.
  const home = tempDir();
  const [code, other] = [tempDir(), tempDir()];
  const body = Array.from({ length: 12 }, (_, i) => `        step_${i} = self.handlers[${i}]`).join("\n");
  writeTree(code, {
    "logging.py": `class Logger:\n    def addHandler(self, hdlr):\n        """Add the specified handler to this logger."""\n${body}\n        return hdlr\n`,
  });
  writeTree(other, { "conf.sh": "# call addHandler in the config\nrun addHandler now\n", "notes.md": "# Notes\n\nSee addHandler.\n" });
  expect(runCli(["repo", "add", "py", code, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["repo", "add", "a-misc", other, "--code", "--no-embed"], { home }).code).toBe(0); // named first
  expect(runCli(["index"], { home }).code).toBe(0);
  const [first] = JSON.parse(runCli(["search", "addHandler", "--json", "-n", "3"], { home }).stdout).results;
  expect({ repository: first.repository, heading: first.heading }).toEqual({ repository: "py", heading: "class Logger" });
  // Where to look says the same: equal evidence went by match count, and the repository naming it twice came first.
  const places = JSON.parse(runCli(["repos-for", "addHandler", "--json"], { home }).stdout);
  expect(places.map((p: { repository: string; score: number }) => [p.repository, p.score])).toEqual([
    ["py", 1],
    ["a-misc", 1],
  ]);
});

test("the exact name is the name as written, underscores and all, and a split function's tail after a closure defines nothing (s22 retest2 A2, A3)", () => {
  const home = tempDir();
  const folder = tempDir();
  const body = (n: number, name: string) => Array.from({ length: n }, (_, i) => `    step_${i} = handle(${name}, ${i})`).join("\n");
  writeTree(folder, {
    "io.py": `def _open(path):\n    """Open quickly."""\n    return raw(path)\n\n\ndef open(path, mode="r"):\n    """Open a file for reading or writing."""\n${body(90, "path")}\n    return wrap(path)\n`,
    "tree.py": `def rmtree(path):\n    """Remove a tree."""\n${body(90, "path")}\n    def onerror(func, p, info):\n        """Report one failure."""\n${body(90, "p").replace(/^/gm, "    ")}\n        return None\n${body(12, "path")}\n    return rmtree_done(path)\n`,
  });
  expect(runCli(["repo", "add", "code", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "code"], { home }).code).toBe(0);
  const first = (query: string) => JSON.parse(runCli(["search", query, "--json", "-n", "1"], { home }).stdout).results[0];
  expect(first("open").heading).toBe("def open");
  const rmtree = first("rmtree");
  expect([rmtree.heading, rmtree.fragment.start_line]).toEqual(["def rmtree", 1]);
});

test("every unit a fragment defines counts as its exact name: a packed fragment's fifth and later, and a whole class's methods (s25 code user C11)", () => {
  // The heading lists four units then `…`, and a class kept whole by its name alone; the exact-name rule read the
  // defined names from the heading, so `zeta_value` and `ensure_capacity` found their callers first.
  const home = tempDir();
  const folder = tempDir();
  const helpers = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"].map((n) => `def ${n}_value(x):\n    return x + 1\n`).join("\n");
  const store = `class Store:\n    """A small store."""\n\n${["open_store", "ensure_capacity", "close_store"]
    .map((m) => `    def ${m}(self, n):\n        return self.size + n\n`)
    .join("\n")}`;
  const caller = (name: string) =>
    `from helpers import ${name}\n\ndef compute(items):\n    total = 0\n    for item in items:\n        total += ${name}(item) + ${name}(item + 1)\n    return total\n`;
  writeTree(folder, {
    "helpers.py": helpers,
    "store.py": store,
    "use.py": caller("zeta_value"),
    "grow.py": caller("ensure_capacity"),
    ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`filler${i}.py`, `def filler_${i}(y):\n    return y * ${i}\n`])),
  });
  expect(runCli(["repo", "add", "pk", folder, "--code", "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "pk"], { home }).code).toBe(0);
  const first = (query: string) => JSON.parse(runCli(["search", query, "--json", "-n", "1"], { home }).stdout).results[0];
  const packed = first("zeta_value");
  expect([packed.path, packed.heading]).toEqual(["helpers.py", "def alpha_value, def beta_value, def gamma_value, def delta_value, …"]);
  const member = first("ensure_capacity");
  expect([member.path, member.heading]).toEqual(["store.py", "class Store"]);
});

describe("a method or a C-family function is its exact name, as a Python def is (s26 review F2)", () => {
  // Their labels read as calls (`parseHeader()`, `Foo::bar()`), and the exact-name rule compared `parseheader()` with
  // the query: a Java definition ranked below three callers where the same Python file ranked first.
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i + 1)).join("\n");
  const trees: Record<string, { definition: string; files: Record<string, string> }> = {
    java: {
      definition: "Parser.java",
      files: {
        "Parser.java": `public class Parser {\n  public String parseHeader(String line, int offset) {\n${lines(25, (i) => `    int v${i} = line.length() * ${i} + offset;`)}\n    return line.trim();\n  }\n}\n`,
        ...Object.fromEntries(
          [1, 2, 3].map((i) => [
            `User${i}.java`,
            `public class User${i} {\n  public String run(Parser p, String q, int shift) {\n${lines(10, (j) => `    int w${j} = q.size() * ${j} + shift;`)}\n    return p.parseHeader("a", ${i});\n  }\n}\n`,
          ]),
        ),
      },
    },
    typescript: {
      definition: "parser.ts",
      files: {
        "parser.ts": `export class Parser {\n  parseHeader(line: string, offset: number): string {\n${lines(25, (i) => `    const v${i} = line.length * ${i} + offset;`)}\n    return line.trim();\n  }\n}\n`,
        ...Object.fromEntries(
          [1, 2, 3].map((i) => [
            `user${i}.ts`,
            `export function run${i}(p: Parser, q: string, shift: number): string {\n${lines(10, (j) => `  const w${j} = q.length * ${j} + shift;`)}\n  return p.parseHeader("a", ${i});\n}\n`,
          ]),
        ),
      },
    },
  };
  for (const [language, { definition, files }] of Object.entries(trees)) {
    test(`${language}: the definition comes first`, () => {
      const home = tempDir();
      const folder = tempDir();
      const filler = Object.fromEntries(
        Array.from({ length: 25 }, (_, i) => [`notes${i}.md`, `# Note ${i}\n\nabout logging and retry policy\n`]),
      );
      writeTree(folder, { ...files, ...filler });
      expect(runCli(["repo", "add", "code", folder, "--code", "--no-embed"], { home }).code).toBe(0);
      expect(runCli(["index", "code"], { home }).code).toBe(0);
      const results = JSON.parse(runCli(["search", "parseHeader", "--json", "-n", "4"], { home }).stdout).results;
      expect(results[0].path).toBe(definition);
    });
  }
});

test("a unit's name is its label's last word without a call's parentheses, generic arguments or qualifiers (s26 review F2)", () => {
  const names = (labels: string) => splitLabels(labels).map(labelName);
  expect(names("def feed, class Parser")).toEqual(["feed", "Parser"]);
  expect(names("parseHeader(), Foo::bar(), Table<K, V>::get()")).toEqual(["parseHeader", "bar", "get"]);
  expect(names("impl Cache<K, V>, impl Display for Cache<HashMap<K, V>>")).toEqual(["Cache", "Cache"]);
  expect(names("func (*Pair) Swap, def self.create, package org.demo, const A, B")).toEqual(["Swap", "create", "demo", "A", "B"]);
  // An operator is no bracket: every label after it was read as one (s26b review F3).
  expect(names("struct Version, operator<(), operator<<(), operator<=(), compareTo(), render()")).toEqual([
    "Version",
    "operator<",
    "operator<<",
    "operator<=",
    "compareTo",
    "render",
  ]);
  expect(names("class Queue, def <<, def size, def each, fn call(), Box<dyn Fn() -> T>::new()")).toEqual([
    "Queue",
    "<<",
    "size",
    "each",
    "call",
    "new",
  ]);
});
