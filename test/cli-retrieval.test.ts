/** The retrieval surface from the command line (a real subprocess): search output flags, get, multi-get, ls. */
import { beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { cliCommand, HOOK_TIMEOUT, parseCsv, runCli, tempDir, writeTree } from "./helpers.ts";

const home = tempDir();
const docs = tempDir();
const cli = (...args: string[]) => runCli(args, { home });
const ok = (...args: string[]) => {
  const result = cli(...args);
  if (result.code !== 0) throw new Error(`${args.join(" ")} → ${result.code}: ${result.stderr}`);
  return result.stdout;
};

// Distinct term counts give distinct BM25 scores, so page order is stable.
const files: Record<string, string> = {};
for (let i = 1; i <= 12; i++) {
  files[`d${String(i).padStart(2, "0")}.md`] =
    `# Doc ${i}\n\n${"borrow ".repeat(i)}words here.\n\n## Part two\n\n${"borrow ".repeat(i)} 3 times more, "quoted", commas.\n`;
}
writeTree(docs, files);

beforeAll(() => {
  ok("repo", "add", "notes", docs, "--no-embed");
  ok("index", "notes", "--quiet");
}, HOOK_TIMEOUT);

describe("search output flags", () => {
  test("--documents N and --fragments N are counts, never query words", () => {
    const grouped = JSON.parse(ok("search", "borrow", "--documents", "3", "--json"));
    expect(grouped.query).toBe("borrow");
    expect(grouped.results.length).toBe(3);
    expect(grouped.results[0].fragments).toBeDefined();
    const fragments = JSON.parse(ok("search", "borrow", "--fragments", "5", "--json"));
    expect(fragments.query).toBe("borrow");
    expect(fragments.results.length).toBe(5);
    expect(fragments.results[0].fragment).toBeDefined();
    // A bare flag before the query leaves the query alone.
    expect(JSON.parse(ok("search", "--documents", "borrow", "--json")).query).toBe("borrow");
    expect(JSON.parse(ok("search", "--fragments", "borrow", "words", "--json")).query).toBe("borrow words");
    // After `--` everything is query text.
    expect(JSON.parse(ok("search", "--json", "--", "--documents", "3")).query).toBe("--documents 3");
  });

  test("conflicting counts and formats are usage errors", () => {
    for (const args of [
      ["borrow", "--documents", "3", "-n", "4"],
      ["borrow", "--documents", "--fragments"],
      ["borrow", "--documents=x"],
      ["borrow", "--all", "-n", "3"],
      ["borrow", "--json", "--files"],
      ["borrow", "--format", "xml"],
      ["borrow", "--json", "--format", "csv"],
    ]) {
      const result = cli("search", ...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^error: /);
    }
    expect(cli("search", "borrow", "--json", "--format", "json").code).toBe(0);
  });

  test("a flag the format has no place for is a usage error with a hint, not silently ignored (s23 contracts C5)", () => {
    for (const [args, hint] of [
      [["--files", "--full"], "leave --full out"],
      [["--format", "files", "--full"], "leave --full out"],
      [["--files", "--explain"], "leave --explain out"],
      [["--format", "csv", "--explain"], "leave --explain out, or use --format text, json or jsonl"],
      [["--format", "md", "--explain"], "leave --explain out"],
    ] as const) {
      const result = cli("search", "borrow", ...args);
      expect(result).toMatchObject({ code: 2, stdout: "" });
      expect(result.stderr).toMatch(/^error: --\w+ does nothing with .*\nhint: /);
      expect(result.stderr).toContain(hint);
    }
    // The formats that show them still take them.
    for (const args of [["--format", "csv", "--full"], ["--format", "md", "--full"], ["--format", "jsonl", "--explain"], ["--explain"]])
      expect(cli("search", "borrow", "-n", "1", ...args).code).toBe(0);
  });

  test("-n counts files with --files", () => {
    expect(ok("search", "borrow", "--files", "-n", "5").trim().split("\n").length).toBe(5);
    expect(ok("search", "borrow", "--format", "files", "-n", "2").trim().split("\n").length).toBe(2);
  });

  test("--all gives every result; --offset pages concatenate to it without duplicates", () => {
    const all = JSON.parse(ok("search", "borrow", "--all", "--json", "--mode", "bm25"));
    expect(all.results.length).toBe(24);
    expect(all.total).toBe(24);
    const pages = [];
    for (let offset = 0; offset < 24; offset += 5) {
      pages.push(...JSON.parse(ok("search", "borrow", "--json", "--mode", "bm25", "-n", "5", "--offset", String(offset))).results);
    }
    const ids = pages.map((r: { fragment: { id: number } }) => r.fragment.id);
    expect(new Set(ids).size).toBe(24);
    expect(ids).toEqual(all.results.map((r: { fragment: { id: number } }) => r.fragment.id));
    expect(pages.map((r: { rank: number }) => r.rank)).toEqual(all.results.map((r: { rank: number }) => r.rank));
    const above = JSON.parse(ok("search", "borrow", "--all", "--json", "--mode", "bm25", "--min-score", String(all.results[9].score)));
    expect(above.results.length).toBeGreaterThanOrEqual(10);
    expect(above.results.every((r: { score: number }) => r.score >= all.results[9].score)).toBe(true);
    expect(JSON.parse(ok("search", "borrow", "--all", "--documents", "--json")).results.length).toBe(12);
  });

  test("a page --min-score cut short says in its footer that none after it scores enough, and where a next page begins (s28 agent 8)", () => {
    // Every note holds "lock", which scores nothing; four hold "mutex" too, each a different number of times.
    const own = tempDir();
    const notes = tempDir();
    const fillers = ["apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "heath", "inlet", "jetty", "knoll", "larch"];
    writeTree(
      notes,
      Object.fromEntries(fillers.map((word, i) => [`${word}.md`, `# ${word}\n\n${"mutex ".repeat(i < 4 ? i + 1 : 0)}${word} lock\n`])),
    );
    const run = (...args: string[]) => runCli(args, { home: own });
    expect(run("repo", "add", "m", notes, "--no-embed").code).toBe(0);
    expect(run("index", "--quiet").code).toBe(0);
    const footer = (...args: string[]) =>
      run("search", "mutex lock", "--mode", "bm25", ...args)
        .stdout.trimEnd()
        .split("\n")
        .at(-1);
    const scores = JSON.parse(run("search", "mutex lock", "--mode", "bm25", "--json").stdout).results.map(
      (r: { score: number }) => r.score,
    );
    expect(scores.filter((score: number) => score > 0)).toHaveLength(4);
    const min = String(scores[3]);
    expect(footer("-n", "5", "--min-score", min)).toBe(
      `1–4 of 12 · bm25 · the rest score below --min-score ${min}: a next page (--offset 5) holds none`,
    );
    expect(footer("-n", "5", "--offset", "2", "--min-score", min)).toBe(
      `3–4 of 12 · bm25 · the rest score below --min-score ${min}: a next page (--offset 7) holds none`,
    );
    expect(run("search", "mutex lock", "--mode", "bm25", "-n", "5", "--offset", "7", "--min-score", min).stdout).toBe(""); // as said
    // search.limit (10) when -n is not given; a full page goes on where it ends, as every page does.
    expect(footer("--min-score", min)).toBe(
      `1–4 of 12 · bm25 · the rest score below --min-score ${min}: a next page (--offset 10) holds none`,
    );
    expect(footer("-n", "2", "--min-score", min)).toBe("1–2 of 12 · bm25");
    expect(footer("-n", "5")).toBe("1–5 of 12 · bm25");
  });

  test("--full prints whole fragments; every format parses back", () => {
    const full = JSON.parse(ok("search", "borrow", "-n", "1", "--full", "--json"));
    expect(full.results[0].text).toBe(`${"borrow ".repeat(12)}words here.`);
    expect(ok("search", "borrow", "-n", "1", "--full")).toContain(`   ${"borrow ".repeat(12)}words here.\n`);

    const csv = parseCsv(ok("search", "quoted", "commas", "--format", "csv", "--full", "-n", "3"));
    expect(csv[0]).toEqual(["rank", "score", "repository", "path", "location", "page", "docid", "title", "heading", "snippet", "text"]);
    expect(csv.length).toBe(4);
    expect(csv.map((row) => row[10]).join("\n")).toContain('"quoted", commas.');
    const jsonl = ok("search", "borrow", "--format", "jsonl", "-n", "4")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(jsonl.map((r) => r.rank)).toEqual([1, 2, 3, 4]);
    expect(jsonl).toEqual(JSON.parse(ok("search", "borrow", "--json", "-n", "4")).results);
    const md = ok("search", "borrow", "--format", "md", "-n", "2");
    expect(md).toMatch(/^# Search: borrow\n/);
    expect(md.match(/^## \d+\. /gm)?.length).toBe(2);
    expect(ok("search", "nothingmatches", "--format", "csv")).toBe(
      "rank,score,repository,path,location,page,docid,title,heading,snippet\r\n",
    );
    expect(ok("search", "nothingmatches", "--format", "jsonl")).toBe("");
  });

  test("links: none when piped or with NO_COLOR, OSC 8 when forced", () => {
    expect(ok("search", "borrow", "-n", "1")).not.toContain("\x1b]8;");
    const forced = runCli(["search", "borrow", "-n", "1"], { home, env: { FORCE_HYPERLINK: "1" } });
    expect(forced.stdout).toContain(`\x1b]8;;file://`);
  });
});

describe("get", () => {
  test("whole, ranges, line numbers, JSON and metadata", () => {
    expect(ok("get", "notes:d01.md")).toBe(files["d01.md"]!);
    expect(ok("get", "notes:d01.md:3:1")).toBe("borrow words here.\n");
    expect(ok("get", "notes:d01.md", "--from", "5", "--lines", "1")).toBe("## Part two\n");
    expect(ok("get", "notes:d01.md:5", "--lines", "2", "--line-numbers")).toBe("     5\t## Part two\n     6\t\n");
    const doc = JSON.parse(ok("get", "notes:d02.md:3:1", "--json"));
    expect(Object.keys(doc)).toEqual([
      "repository",
      "path",
      "docid",
      "title",
      "format",
      "metadata",
      "from",
      "to",
      "page",
      "page_end",
      "total_lines",
      "changed_since_index",
      "text",
    ]);
    expect(doc).toMatchObject({
      repository: "notes",
      path: "d02.md",
      title: "Doc 2",
      format: "md",
      metadata: {},
      from: 3,
      to: 3,
      total_lines: 7,
    });
    expect(ok("get", doc.docid)).toBe(files["d02.md"]!);
    const meta = JSON.parse(ok("get", doc.docid, "--meta", "--json"));
    expect(meta).toMatchObject({ repository: "notes", path: "d02.md", docid: doc.docid, fragments: 2, pages: null });
    expect(ok("get", "notes:d02.md", "--meta")).toContain("fragments:  2");
  });

  test("--meta with --from, --lines or --line-numbers is a usage error: it prints no lines (s23 contracts C5)", () => {
    for (const args of [["--lines", "3"], ["--from", "2"], ["--line-numbers"]]) {
      const result = cli("get", "notes:d01.md", "--meta", ...args);
      expect(result).toMatchObject({ code: 2, stdout: "" });
      expect(result.stderr).toMatch(/^error: --meta and --[a-z-]+ do not go together: .*\nhint: leave --meta out to read lines\n$/);
    }
  });

  test("--json --line-numbers numbers the JSON text as the text output and MCP's line_numbers do (s23 contracts C5)", () => {
    const doc = JSON.parse(ok("get", "notes:d01.md:5:2", "--json", "--line-numbers"));
    expect(doc).toMatchObject({ from: 5, to: 6, text: "     5\t## Part two\n     6\t" });
    expect(`${doc.text}\n`).toBe(ok("get", "notes:d01.md:5:2", "--line-numbers"));
    const found = JSON.parse(ok("multi-get", "notes:d01.md:5:2,notes:d02.md:3:1", "--json", "--line-numbers"));
    expect(found.documents.map((d: { text: string }) => d.text)).toEqual([
      "     5\t## Part two\n     6\t",
      "     3\tborrow borrow words here.",
    ]);
  });

  test("a search result's location reads back where the snippet is", () => {
    const hit = JSON.parse(ok("search", "quoted", "--json", "-n", "1")).results[0];
    expect(ok("get", hit.location, "--lines", "1")).toContain('"quoted", commas.');
    expect(ok("get", `${hit.repository}:${hit.location}`, "--lines", "1")).toContain('"quoted", commas.');
  });

  test("a location round-trips for any file name: one holding a newline and a colon", () => {
    const home = tempDir();
    const folder = tempDir();
    const name = "odd\nname:12.md";
    writeTree(folder, { [name]: "# Odd\n\nfirst line\n\nharbour tides here\n" });
    const run = (...args: string[]) => runCli(args, { home });
    expect(run("repo", "add", "odd", folder, "--no-embed").code).toBe(0);
    expect(run("index", "odd", "--quiet").code).toBe(0);
    const hit = JSON.parse(run("search", "harbour tides", "--json").stdout).results[0];
    expect(hit).toMatchObject({ path: name, location: `${name}:3` });
    for (const ref of [`${hit.repository}:${hit.location}`, hit.location]) {
      const got = run("get", ref, "--lines", "1", "--json");
      expect({ ref, code: got.code, stderr: got.stderr }).toEqual({ ref, code: 0, stderr: "" });
      expect(JSON.parse(got.stdout)).toMatchObject({ path: name, from: 3, text: "first line" });
    }
    expect(run("get", `odd:${name}:3-5`).stdout).toBe("first line\n\nharbour tides here\n");
    // A name that begins with whitespace: its bare location is read as given, a pasted ref's stray spaces trimmed.
    writeTree(folder, { "\n lead.md": "# Lead\n\nspaced name words\n" });
    expect(run("index", "odd", "--quiet").code).toBe(0);
    const lead = JSON.parse(run("search", "spaced name", "--json").stdout).results[0];
    expect(lead.location).toBe("\n lead.md:3");
    for (const ref of [lead.location, `odd:${lead.location}`, `  odd:${name}:3  `]) {
      const got = run("get", ref, "--lines", "1");
      expect({ ref, code: got.code, stderr: got.stderr }).toEqual({ ref, code: 0, stderr: "" });
    }
  });

  test("misses are one error line with close paths; bad ranges are errors", () => {
    const miss = cli("get", "notes:d1.md");
    expect(miss.code).toBe(1);
    expect(miss.stderr).toContain("error: notes:d1.md is not an indexed document");
    expect(miss.stderr).toMatch(/hint: did you mean notes:d01\.md/);
    expect(cli("get", "notes:d01.md:99").stderr).toContain("past the end");
    expect(cli("get", "notes:d01.md:99").code).toBe(1); // a range the document refuses
    expect(cli("get", "notes:d01.md", "--from", "0").code).toBe(2); // a flag value out of its range: usage
    expect(cli("get", "notes:d01.md", "--lines", "x").code).toBe(2);
  });

  test("a reversed line range is refused like a zero count, not read from its first line", () => {
    const zero = cli("get", "notes:d01.md:5:0");
    const reversed = cli("get", "notes:d01.md:5-3");
    expect(reversed.stdout).toBe("");
    expect(reversed.code).toBe(zero.code);
    expect(reversed.stderr).toMatch(/^error: the line range 5-3 ends before it starts\nhint: .*notes:d01\.md:3-5/);
    expect(zero.code).toBe(2); // a usage error, as `--lines 0` is
    // The hint is a ref that works: a range ending at line 0 starts at line 1.
    expect(cli("get", "notes:d01.md:1-0").stderr).toContain("name the first line first: notes:d01.md:1-1");
    expect(ok("get", "notes:d01.md:3-3")).toBe("borrow words here.\n");
  });

  test("a document whose file became a folder since it was indexed: the error says how to catch up", () => {
    const home = tempDir();
    const folder = tempDir();
    writeTree(folder, { "v.md": "victim words\n", "a.md": "other words\n" });
    const run = (...args: string[]) => runCli(args, { home });
    expect(run("repo", "add", "w", folder, "--no-embed").code).toBe(0);
    expect(run("index", "w").code).toBe(0);
    rmSync(join(folder, "v.md"));
    mkdirSync(join(folder, "v.md"));
    const read = run("get", "w:v.md");
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(
      /^error: w:v\.md: .*\nhint: if the file changed since it was indexed, `researcher index w` brings the index up to date\n$/,
    );
  });

  test("a file edited since it was indexed is read as it is now, with a warning and changed_since_index (hostile s8 #6)", () => {
    const home = tempDir();
    const folder = tempDir();
    writeTree(folder, { "code.py": "def first():\n    return 1\n", "same.py": "x = 1\n" });
    const run = (...args: string[]) => runCli(args, { home });
    expect(run("repo", "add", "c", folder, "--code", "--no-embed").code).toBe(0);
    expect(run("index", "c").code).toBe(0);
    const before = run("get", "c:code.py:1-2", "--json");
    expect(before.stderr).toBe("");
    expect(JSON.parse(before.stdout).changed_since_index).toBe(false);
    writeTree(folder, { "code.py": "# a comment pushes every line down\ndef first():\n    return 1\n" });
    const warning = "warning: c:code.py changed since it was indexed: lines may have moved (`researcher index c` catches up)\n";
    const after = run("get", "c:code.py:1-2");
    expect(after).toMatchObject({ code: 0, stdout: "# a comment pushes every line down\ndef first():\n", stderr: warning });
    expect(JSON.parse(run("get", "c:code.py", "--json").stdout).changed_since_index).toBe(true);
    expect(run("multi-get", "c:*.py").stderr).toBe(warning);
    writeTree(folder, { "code.py": "x = 1\n" }); // shorter now: a cited line is past its end, and the hint says why
    expect(run("get", "c:code.py:2")).toMatchObject({
      code: 1,
      stderr:
        "error: line 2 is past the end of c:code.py (1 line)\nhint: it changed since it was indexed: `researcher index c` catches up\n",
    });
    expect(run("index", "c").code).toBe(0);
    expect(run("get", "c:code.py").stderr).toBe("");
  });
});

describe("ls", () => {
  test("every indexed document, a repository's, or under a prefix; JSON parses back", () => {
    const all = JSON.parse(ok("ls", "--json"));
    expect(all.length).toBe(12);
    expect(Object.keys(all[0])).toEqual([
      "repository",
      "path",
      "docid",
      "title",
      "format",
      "metadata",
      "size",
      "modified",
      "fragments",
      "pages",
    ]);
    expect(all[0]).toMatchObject({
      repository: "notes",
      path: "d01.md",
      format: "md",
      fragments: 2,
      pages: null,
      size: files["d01.md"]!.length,
    });
    expect(JSON.parse(ok("ls", "notes:d1", "--json")).map((d: { path: string }) => d.path)).toEqual(["d10.md", "d11.md", "d12.md"]);
    const text = ok("ls", "notes");
    expect(text.trim().split("\n").length).toBe(12);
    expect(text).toMatch(/^md {2}\s*\d+ B {2}2 fr {2}\d{4}-\d\d-\d\d {2}notes:d01\.md$/m);
    const ghost = cli("ls", "ghost");
    expect(ghost.code).toBe(1);
    expect(ghost.stderr).toContain("no repository named 'ghost'");
  });
});

describe("multi-get", () => {
  test("--files with --line-numbers or --max-bytes is a usage error: it reads no document (s23 contracts C5)", () => {
    for (const args of [["--line-numbers"], ["--max-bytes", "10"]]) {
      const result = cli("multi-get", "notes:d0*", "--files", ...args);
      expect(result).toMatchObject({ code: 2, stdout: "" });
      expect(result.stderr).toMatch(/^error: --files and --[a-z-]+ do not go together: .*\nhint: leave --files out/);
    }
  });

  test("glob or refs; text, --json, --files; --max-bytes lists oversized documents", () => {
    const text = ok("multi-get", "notes:d0[12].md");
    expect(text).toBe(`==> notes:d01.md <==\n${files["d01.md"]}\n==> notes:d02.md <==\n${files["d02.md"]}`);
    // A part is headed by the lines read, a ref that reads them again; two parts of one document differ (s19 user F4).
    expect(ok("multi-get", "notes:d01.md:3:1,notes:d01.md:1-2")).toBe(
      `==> notes:d01.md:3-3 <==\nborrow words here.\n\n==> notes:d01.md:1-2 <==\n${files["d01.md"]!.split("\n").slice(0, 2).join("\n")}\n`,
    );
    const found = JSON.parse(ok("multi-get", "notes:d01.md:3:1,notes:d1.md,d02.md", "--json"));
    expect(found.documents.map((d: { path: string; text: string }) => [d.path, d.text])).toEqual([
      ["d01.md", "borrow words here."],
      ["d02.md", files["d02.md"]!.trimEnd()],
    ]);
    expect(Object.keys(found.documents[0])).toEqual([
      "repository",
      "path",
      "docid",
      "title",
      "format",
      "metadata",
      "from",
      "to",
      "page",
      "page_end",
      "total_lines",
      "changed_since_index",
      "text",
    ]);
    expect(found.skipped).toEqual([
      {
        repository: "",
        path: "notes:d1.md",
        reason:
          "notes:d1.md is not an indexed document (did you mean notes:d01.md, notes:d10.md, notes:d11.md, notes:d12.md, notes:d02.md?)",
      },
    ]);
    expect(ok("multi-get", "*.md", "--files").trim().split("\n").length).toBe(12);
    const capped = JSON.parse(ok("multi-get", "*.md", "--json", "--max-bytes", String(files["d05.md"]!.length)));
    expect(capped.documents.map((d: { path: string }) => d.path)).toEqual(["d01.md", "d02.md", "d03.md", "d04.md", "d05.md"]);
    expect(capped.skipped.length).toBe(7);
    expect(capped.skipped[0].reason).toMatch(/^larger than max_bytes per document/);
    expect(ok("multi-get", "d12.md", "--max-bytes", "10")).toMatch(/^==> notes:d12\.md <== skipped: larger than/);
  });

  test("a glob or a ref that names nothing is listed, exit 0, and said on stderr whatever the format (s23 C2); in no repository, REPO_NOT_FOUND (s30 hostile F6)", () => {
    // A glob alone in a repository never indexed failed the command (exit 1) where a ref alone was listed; a ref that
    // named nothing said nothing on stderr, as a glob that matches nothing does.
    ok("repo", "add", "unindexed", tempDir(), "--no-embed"); // the last test of the file: no other sees it
    const notYet = "repository 'unindexed' has not been indexed yet (hint: run `researcher index unindexed`)";
    for (const [pattern, reason] of [
      ["unindexed:*", notYet],
      ["unindexed:a.md", notYet],
      ["notes:zz.md", "notes:zz.md is not an indexed document"],
    ] as const) {
      const json = cli("multi-get", pattern, "--json");
      expect({ pattern, code: json.code, stderr: json.stderr, out: JSON.parse(json.stdout) }).toEqual({
        pattern,
        code: 0,
        stderr: `no indexed documents match ${pattern}\n`,
        out: { documents: [], skipped: [{ repository: "", path: pattern, reason }], skipped_total: 1 },
      });
      const text = cli("multi-get", pattern);
      expect({ pattern, code: text.code, stderr: text.stderr, stdout: text.stdout }).toEqual({
        pattern,
        code: 0,
        stderr: `no indexed documents match ${pattern}\n`,
        stdout: `==> ${pattern} <== skipped: ${reason}\n`,
      });
      const paths = cli("multi-get", pattern, "--files");
      expect({ pattern, code: paths.code, stderr: paths.stderr }).toEqual({
        pattern,
        code: 0,
        stderr: `skipped ${pattern}: ${reason}\nno indexed documents match ${pattern}\n`,
      });
    }
    // A repository that does not exist is REPO_NOT_FOUND, as `ls ghost` and `get ghost:a.md` say it: it was an empty
    // match, exit 0 (s30 hostile F6). So is a list of such parts alone; one with a part that reads is not.
    const missing = "error: no repository named 'ghost'\nhint: known repositories: notes, unindexed\n";
    for (const pattern of ["ghost:*", "ghost:a.md", "ghost:*,ghost:b.md"]) {
      expect({ pattern, ...cli("multi-get", pattern) }).toEqual({ pattern, code: 1, stdout: "", stderr: missing });
      expect({ pattern, ...cli("multi-get", pattern, "--files") }).toEqual({ pattern, code: 1, stdout: "", stderr: missing });
    }
    expect(JSON.parse(cli("multi-get", "ghost:*", "--json").stdout)).toMatchObject({ error: { code: "REPO_NOT_FOUND" } });
    expect(cli("ls", "ghost")).toMatchObject({ code: 1, stderr: missing });
    // A list that read something is not said to match nothing; `get` of a ref in a repository never indexed names the run.
    const partly = cli("multi-get", "notes:d01.md,ghost:*", "--json");
    expect({ code: partly.code, stderr: partly.stderr, skipped: JSON.parse(partly.stdout).skipped }).toEqual({
      code: 0,
      stderr: "",
      skipped: [{ repository: "", path: "ghost:*", reason: "no repository named 'ghost'" }],
    });
    const never = cli("get", "unindexed:a.md");
    expect({ code: never.code, stderr: never.stderr }).toEqual({
      code: 1,
      stderr: "error: repository 'unindexed' has not been indexed yet\nhint: run `researcher index unindexed`\n",
    });
  });
});

test("a file's absolute path, as --files prints it, is a ref with any tail; one in no repository is refused (s25 scripts L9)", () => {
  const [path] = ok("search", "borrow", "--files", "-n", "1").trim().split("\n");
  expect(path).toStartWith(docs);
  expect(ok("get", `${path}:1-1`)).toMatch(/^# Doc \d+\n$/);
  expect(JSON.parse(ok("multi-get", `${path},${join(docs, "d01.md")}`, "--json")).documents).toHaveLength(2);
  const outside = cli("get", "/etc/passwd");
  expect([outside.code, outside.stderr]).toEqual([1, expect.stringContaining("no repository holds /etc/passwd")]);
});

test("a path relative to the working folder, as tab completion gives it, names the file there, with any tail (s27 user U7)", () => {
  const home = tempDir();
  const parent = tempDir();
  writeTree(parent, {
    "lib/notes/sub/a.md": "# Sub A\n\nalpha words\n",
    "lib/notes/a.md": "# Root A\n\nroot words\n",
    "outside.md": "# Outside\n",
    "lib/notes/.secret.md": "# Hidden\n",
  });
  const get = (cwd: string, ...args: string[]) => runCli(["get", ...args], { home, cwd });
  expect(runCli(["repo", "add", "n", join(parent, "lib/notes"), "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "n"], { home }).code).toBe(0);
  // It was "no repository holds ./lib/notes/sub/a.md", while the absolute path was read.
  expect(get(parent, "./lib/notes/sub/a.md")).toMatchObject({ code: 0, stdout: "# Sub A\n\nalpha words\n" });
  expect(get(parent, "lib/notes/sub/a.md:3").stdout).toBe("alpha words\n");
  expect(JSON.parse(get(parent, "./lib/notes/sub/a.md", "--meta", "--json").stdout)).toMatchObject({ repository: "n", path: "sub/a.md" });
  // Inside the repository's folder, the file in the working folder is the one meant…
  expect(get(join(parent, "lib/notes/sub"), "a.md").stdout).toStartWith("# Sub A\n");
  // …and where there is none, a search result's location names the document from the repository's folder, as before.
  expect(get(parent, "a.md").stdout).toStartWith("# Root A\n");
  // A file in no repository, or none at all, is refused as before.
  expect(get(parent, "./outside.md")).toMatchObject({ code: 1, stderr: expect.stringContaining("no repository holds ./outside.md") });
  expect(get(parent, "./nope.md")).toMatchObject({ code: 1, stderr: expect.stringContaining("no repository holds ./nope.md") });
  // A file the repository's rules leave out is named with its rule, by any path, as by `repo:path` (s28 code 6).
  const hidden = "error: n:.secret.md is not indexed: it is hidden";
  expect(get(parent, "n:.secret.md")).toMatchObject({ code: 1, stderr: expect.stringContaining(hidden) });
  expect(get(parent, "./lib/notes/.secret.md")).toMatchObject({ code: 1, stderr: expect.stringContaining(hidden) });
  expect(get("/", join(parent, "lib/notes/.secret.md"))).toMatchObject({ code: 1, stderr: expect.stringContaining(hidden) });
});

test("get of a document grown past index.max_file_bytes names the fixes that work, not an index run (s29 hostile F3)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "grow.md": "line one\nline two\n" });
  expect(runCli(["config", "set", "index.max_file_bytes", "100"], { home }).code).toBe(0);
  expect(runCli(["repo", "add", "r", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "r"], { home }).code).toBe(0);
  appendFileSync(join(docs, "grow.md"), "more text here\n".repeat(20)); // 318 bytes: the run fails it, the index keeps it
  expect(runCli(["index", "r"], { home }).stdout).toContain("failed grow.md: larger than index.max_file_bytes");
  const read = runCli(["get", "r:grow.md"], { home });
  // It said `researcher index r` brings the index up to date: that run leaves the failed file alone while unchanged.
  expect(read).toMatchObject({
    code: 1,
    stderr:
      "error: r:grow.md: larger than index.max_file_bytes (318 > 100 bytes)\n" +
      "hint: the index holds an earlier version of it; `researcher config set index.max_file_bytes 512` and `researcher index r` take in this one, or `researcher remove r grow.md` drops it\n",
  });
  // Each fix does what it says, and the limit offered has room: the file's own size (318) failed it again as it grew
  // (s29b retest P10).
  expect(runCli(["config", "set", "index.max_file_bytes", "512"], { home }).code).toBe(0);
  expect(runCli(["index", "r"], { home }).stdout).toContain("r: 1 indexed");
  expect(runCli(["get", "r:grow.md", "--lines", "1"], { home }).stdout).toBe("line one\n");
  appendFileSync(join(docs, "grow.md"), "more\n");
  expect(runCli(["index", "r"], { home }).stdout).toContain("r: 1 indexed");
});

test("get and multi-get escape a document's control characters on a terminal, as every other output does (s29b hostile F4)", () => {
  const home = tempDir();
  const docs = tempDir();
  // A page's escape sequences cleared the screen and set the window's title when read with `get` on a terminal.
  writeTree(docs, { "t.md": "# Head\x1b[31mred\n\nescword\x1b]0;PWNED\x07 text\ttab\r\nnext line\n" });
  expect(runCli(["repo", "add", "r", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "r"], { home }).code).toBe(0);
  // `script` gives the command a terminal; its typescript is /dev/null, what it printed comes on its stdout.
  const onTerminal = (args: string[]) => {
    const command = [...cliCommand, ...args].map((word) => `'${word}'`).join(" ");
    const env = { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" };
    return Bun.spawnSync(["script", "-q", "-e", "-c", command, "/dev/null"], { env, cwd: home }).stdout.toString();
  };
  for (const args of [
    ["get", "r:t.md"],
    ["multi-get", "r:t.md"],
  ]) {
    const shown = onTerminal(args);
    expect(shown).toContain("# Head\\x1b[31mred");
    expect(shown).toContain("escword\\x1b]0;PWNED\\x07 text\ttab");
    expect(shown).not.toContain("\x1b");
  }
  // A pipe gets the text as it is.
  expect(runCli(["get", "r:t.md"], { home }).stdout).toContain("\x1b]0;PWNED\x07");
});

test("get and multi-get of a file the last run failed name its recorded reason, not a typo's close paths, and fail as get does (s30 hostile F6, s30b N3)", () => {
  // multi-get said "a:pw.md is not an indexed document (did you mean a:x.md?)", and get the same with its hint.
  const home = tempDir();
  const folder = tempDir();
  writeTree(folder, { "x.md": "x words\n" });
  symlinkSync("/etc/passwd", join(folder, "pw.md"));
  expect(runCli(["repo", "add", "a", folder, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "a"], { home }).stdout).toContain("failed pw.md: resolves to /etc/passwd, outside the repository");
  const why = "a:pw.md is not indexed: the last index run failed it: resolves to /etc/passwd, outside the repository";
  const hint = "once it is fixed, `researcher index a --retry-failed` reads it again (`researcher status a` lists the failures)";
  expect(runCli(["get", "a:pw.md"], { home })).toEqual({ code: 1, stdout: "", stderr: `error: ${why}\nhint: ${hint}\n` });
  // multi-get of such files alone fails as `get` does: it exited 0, "no indexed documents match", where a list of
  // repositories that do not exist exits 1 (s30b N3). A list that reads something lists them as skipped.
  symlinkSync("/etc/hostname", join(folder, "host.md"));
  expect(runCli(["index", "a"], { home }).code).toBe(0);
  for (const pattern of ["a:pw.md", join(folder, "pw.md"), "a:pw.md,a:host.md", `a:pw.md,${join(folder, "host.md")}`]) {
    expect({ pattern, ...runCli(["multi-get", pattern], { home }) }).toEqual({
      pattern,
      code: 1,
      stdout: "",
      stderr: `error: ${why}\nhint: ${hint}\n`,
    });
    expect({ pattern, ...runCli(["multi-get", pattern, "--files"], { home }) }).toMatchObject({ pattern, code: 1, stdout: "" });
    const json = runCli(["multi-get", pattern, "--json"], { home });
    expect({ pattern, code: json.code, error: JSON.parse(json.stdout).error }).toEqual({
      pattern,
      code: 1,
      error: { code: "DOCUMENT_NOT_FOUND", message: why, hint },
    });
  }
  const partly = runCli(["multi-get", "a:pw.md,a:x.md", "--json"], { home });
  expect({ code: partly.code, skipped: JSON.parse(partly.stdout).skipped }).toEqual({
    code: 0,
    skipped: [{ repository: "", path: "a:pw.md", reason: why }],
  });
  expect(runCli(["multi-get", "a:pw.md,a:x.md"], { home }).stdout).toEndWith(`==> a:pw.md <== skipped: ${why}\n`);
  // A part that names nothing is still an empty match beside one: no document is there to fail.
  expect(runCli(["multi-get", "a:pw.md,a:nope.md"], { home })).toMatchObject({
    code: 0,
    stderr: "no indexed documents match a:pw.md,a:nope.md\n",
  });
});
