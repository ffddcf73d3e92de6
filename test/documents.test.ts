/** Reading indexed documents back: every ref form, line ranges at the edges, refusals, suggestions, listings. */
import { beforeAll, describe, expect, spyOn, test } from "bun:test";
import { indexFiles, indexRepository } from "../src/index/indexer.ts";
import { acquireWriterLock } from "../src/lock.ts";
import { removeDocument } from "../src/index/remove.ts";
import { leftOutOfIndex } from "../src/index/discover.ts";
import { closePaths, resolveDocumentRef } from "../src/search/document-refs.ts";
import { editDistance } from "../src/similar.ts";
import {
  documentInfo,
  limitDocumentBytes,
  listDocuments,
  listDocumentsPage,
  readDocument,
  readPart,
  type SkippedDocument,
} from "../src/search/read-document.ts";
import { MAX_SKIPPED_LISTED, readDocuments } from "../src/search/multi-get.ts";
import { repositoriesFor } from "../src/search/results.ts";
import { ResearcherError } from "../src/errors.ts";
import { pathGlob } from "../src/path-glob.ts";
import { parseFilter } from "../src/search/filters.ts";
import { search, SearchContext, type SearchOptions } from "../src/search/search.ts";
import { agentHint } from "../src/serve/agent-hints.ts";
import { registerRepository, getRepository } from "../src/repos.ts";
import { Store } from "../src/store/store.ts";
import { realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encode as encodePng } from "fast-png";
import { canMount, HOOK_TIMEOUT, mountTmpfs, runCli, SHARED, tempDir, testShared, unmount, writeTree } from "./helpers.ts";
import { paragraph, SCANNED, scannedStrip, writePdf } from "./pdf-fixtures.ts";

const home = tempDir();
const one = tempDir();
const two = tempDir();
writeTree(one, {
  "guide.md": "# Guide\n\nline three\nline four\nline five\n",
  "same.md": "# Same\n\nidentical in both repositories\n",
  "shared/readme.md": "# One readme\n",
  "2024:01/log.md": "a folder whose name has a colon\nsecond\n",
  "empty.txt": "",
  "nolf.txt": "first\nsecond",
  ".hidden/secret.md": "# Hidden\n",
  ".dot.md": "# Dot file\n",
  "drafts/wip.md": "# Excluded\n",
  "data.csv": "a,b\n",
  ".gitignore": "ignored.md\nbuild/\n",
  "ignored.md": "# Ignored by .gitignore\n",
  "build/out.md": "# Built\n",
});
writeTree(two, { "same.md": "# Same\n\nidentical in both repositories\n", "shared/readme.md": "# Two readme\n", "only-two.md": "# Two\n" });

async function refusal(promise: Promise<unknown> | (() => unknown)): Promise<ResearcherError> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    expect(error).toBeInstanceOf(ResearcherError);
    return error as ResearcherError;
  }
  throw new Error("expected a refusal");
}

beforeAll(async () => {
  const a = registerRepository(home, { name: "one", path: one, embed: false, exclude: ["drafts"], fileTypes: ["md", "txt"] });
  const b = registerRepository(home, { name: "two", path: two, embed: false });
  await indexRepository(home, a);
  await indexRepository(home, b);
}, HOOK_TIMEOUT);

describe("refs", () => {
  test("a tail that is no line, range or page after an indexed path says so, not that the document is missing (s22 agent #6)", async () => {
    for (const [ref, options] of [
      ["one:guide.md:Guide", {}],
      ["guide.md:L3", { repository: "one" }],
      ["one:shared/readme.md:x.y", {}],
      // A place with a colon after it, as `one:guide.md:` has one: the tail is what is wrong (s23 review, minor).
      ["one:guide.md:", {}],
      ["one:guide.md:3:", {}],
      ["one:guide.md:3:2:", {}],
    ] as const) {
      const refused = await refusal(readDocument(home, ref, options));
      expect({ ref, code: refused.code, message: refused.message, hint: refused.hint }).toEqual({
        ref,
        code: "USAGE",
        message: expect.stringMatching(
          /^'(Guide|L3|x\.y||3:|3:2:)' after one:(guide|shared\/readme)\.md is not a line, a line range or a page$/,
        ),
        hint: expect.stringContaining("the ref a search result gives (`fragment.ref`)"),
      });
    }
    // A path that is no document, or a tail with a slash (a folder with a colon in its name), is still a miss.
    expect((await refusal(readDocument(home, "one:nope.md:Guide"))).code).toBe("DOCUMENT_NOT_FOUND");
    expect((await refusal(readDocument(home, "one:guide.md:a/b"))).code).toBe("DOCUMENT_NOT_FOUND");
  });

  test("repo:path, repo:path:line and repo:path:line:count", async () => {
    const whole = await readDocument(home, "one:guide.md");
    expect(whole).toMatchObject({
      repository: "one",
      path: "guide.md",
      title: "Guide",
      format: "md",
      from: 1,
      to: 5,
      total_lines: 5,
      truncated: false,
    });
    expect(whole.text).toBe("# Guide\n\nline three\nline four\nline five");
    expect(await readDocument(home, "one:guide.md:3")).toMatchObject({ from: 3, to: 5, text: "line three\nline four\nline five" });
    expect(await readDocument(home, "one:guide.md:3:2")).toMatchObject({ from: 3, to: 4, text: "line three\nline four", truncated: false });
    expect(await readDocument(home, "one:./guide.md:4:1")).toMatchObject({ text: "line four" });
  });

  test("colons inside the path", async () => {
    expect(resolveDocumentRef(home, "one:2024:01/log.md")).toEqual(expect.objectContaining({ path: "2024:01/log.md" }));
    expect(resolveDocumentRef(home, "one:2024:01/log.md").line).toBeUndefined();
    expect(await readDocument(home, "one:2024:01/log.md:2")).toMatchObject({ path: "2024:01/log.md", from: 2, text: "second" });
    expect(await readDocument(home, "2024:01/log.md:1:1")).toMatchObject({ repository: "one", text: "a folder whose name has a colon" });
  });

  test("#docid, unique or ambiguous across repositories", async () => {
    const guide = documentInfo(home, "one:guide.md");
    expect(await readDocument(home, guide.docid)).toMatchObject({ path: "guide.md", repository: "one" });
    const same = documentInfo(home, "one:same.md").docid;
    expect(documentInfo(home, "two:same.md").docid).toBe(same);
    const ambiguous = await refusal(() => resolveDocumentRef(home, same));
    expect(ambiguous.message).toContain("matches 2 documents: one:same.md, two:same.md");
    // Same content, same docid: more digits cannot tell them apart, and the hint does not say they would.
    expect(ambiguous.hint).toBe("these files have the same content, so the same docid: name one as repo:path");
    expect(resolveDocumentRef(home, same, { repository: "two" })).toMatchObject({ path: "same.md" });
    expect((await refusal(() => resolveDocumentRef(home, "#000000"))).code).toBe("DOCUMENT_NOT_FOUND");
    // A ref no document could have is malformed (exit 2), as a line 0 is.
    expect((await refusal(() => resolveDocumentRef(home, "#xyz"))).code).toBe("USAGE");
    expect((await refusal(() => resolveDocumentRef(home, " "))).code).toBe("USAGE");
  });

  test("a search result's bare location, found in whichever repository holds it", async () => {
    expect(await readDocument(home, "guide.md:3:1")).toMatchObject({ repository: "one", text: "line three" });
    expect(resolveDocumentRef(home, "only-two.md")).toMatchObject({ path: "only-two.md" });
    const ambiguous = await refusal(() => resolveDocumentRef(home, "shared/readme.md:1"));
    expect(ambiguous.message).toContain("is in 2 repositories: one:shared/readme.md, two:shared/readme.md");
    expect(resolveDocumentRef(home, "shared/readme.md:1", { repository: "two" }).repo.name).toBe("two");
    expect(resolveDocumentRef(home, "two:shared/readme.md", { repository: "two" }).path).toBe("shared/readme.md");
  });

  test("misses suggest close paths; unknown repositories name the known ones", async () => {
    const typo = await refusal(readDocument(home, "one:guid.md"));
    expect(typo.code).toBe("DOCUMENT_NOT_FOUND");
    expect(typo.hint).toContain("one:guide.md");
    const moved = await refusal(readDocument(home, "one:readme.md"));
    expect(moved.hint).toContain("one:shared/readme.md");
    const bare = await refusal(readDocument(home, "gide.md:3"));
    expect(bare.message).toContain("no repository holds gide.md:3");
    expect(bare.hint).toContain("one:guide.md");
    const nowhere = await refusal(readDocument(home, "one:zzzzzzzzzzzz.md"));
    expect(nowhere.hint).toContain("researcher ls one");
    const ghost = await refusal(readDocument(home, "ghost:guide.md"));
    expect(ghost.code).toBe("REPO_NOT_FOUND");
    expect(ghost.hint).toContain("one, two");
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("abc", "xyzxyzxyz", 2)).toBe(3);
    expect(closePaths(getRepository(home, "one"), "GUIDE.md")).toEqual(["one:guide.md"]);
    // A wiki link's note: its name without extension, a #heading after it (s14 user #6).
    expect(closePaths(getRepository(home, "one"), "Guide")).toEqual(["one:guide.md"]);
    expect(closePaths(getRepository(home, "one"), "shared/readme#Install steps")).toContain("one:shared/readme.md");
    expect(closePaths(getRepository(home, "one"), "shared/readme#Install/steps#2")).toEqual([]); // a `/` after it: no heading
    // A long run of `#` is read in linear time (s18 retest N9: 3.1 s for 100,000).
    const started = performance.now();
    closePaths(getRepository(home, "one"), `${"#".repeat(100_000)}/x`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await refusal(readDocument(home, "one:Readme"))).hint).toContain("one:shared/readme.md");
  });

  test("a docid without its #: the miss suggests it, quoted, with its place (s24 user U8)", async () => {
    const docid = documentInfo(home, "one:guide.md").docid.slice(1);
    const bare = await refusal(readDocument(home, docid));
    expect(bare.message).toBe(`no repository holds ${docid}`);
    expect(bare.hint).toBe(`did you mean the docid: \`researcher get '#${docid}'\`? (a docid begins with #)`);
    // An agent is given the tool and its ref, not shell quoting (s24 retest N9).
    expect(agentHint(bare.hint!)).toBe(`did you mean the docid: the get_document tool with ref "#${docid}"? (a docid begins with #)`);
    // …with its place too, and in any case.
    expect((await refusal(readDocument(home, `${docid.toUpperCase()}:3`))).hint).toContain(`'#${docid.toUpperCase()}:3'`);
    // Hex digits that are no docid are a miss like any other.
    expect((await refusal(readDocument(home, "abcdef123456"))).hint).not.toContain("docid");
  });

  test("`get #51481f` unquoted arrives as `get`: told to quote a docid, not only that an argument is missing (s24 user U8)", () => {
    const docid = documentInfo(home, "one:guide.md").docid.slice(1);
    // The shell drops `#51481f` and all after it: `get` is given nothing, and told to quote one.
    const none = runCli(["get"], { home });
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      "error: missing required args for command `get <ref>`\nhint: name a document, `researcher get notes:a.md`, or quote a docid: `researcher get '#51481f'` (a shell reads # and what follows as a comment)\n",
    );
    expect(runCli(["multi-get", "--json"], { home }).stderr).toContain("`researcher multi-get '#51481f,#9b0d44'`");
    expect(runCli(["get", `#${docid}`], { home })).toMatchObject({ code: 0, stdout: expect.stringContaining("line three") });
  });
});

test("a budget that whole lines fill less than half of is filled from inside the next line, never inside a character (s24 agent A6, retest N4)", async () => {
  const guide = await readDocument(home, "one:guide.md"); // # Guide, a blank, line three, line four, line five
  const cut = (doc: typeof guide, bytes: number, lineNumbers = false) => {
    const { to, truncated, text } = limitDocumentBytes(doc, bytes, { lineNumbers });
    return { to, truncated, text };
  };
  expect(cut(guide, 12)).toEqual({ to: 2, truncated: true, text: "# Guide\n" }); // 8 bytes: two-thirds of it
  expect(cut(guide, 20)).toEqual({ to: 3, truncated: true, text: "# Guide\n\nline three" }); // 19 bytes
  expect(cut(guide, 17)).toEqual({ to: 3, truncated: true, text: "# Guide\n\nline thr" }); // 8 bytes were not half
  expect(cut(guide, 1000)).toEqual({ to: 5, truncated: false, text: guide.text });
  // Numbered, each line's number counts; an empty first line is read whole when nothing fits (it threw).
  const long = { ...guide, text: `#\n${"x".repeat(100)}`, to: 2, total_lines: 2 };
  expect(cut(long, 40, true)).toEqual({ to: 2, truncated: true, text: `#\n${"x".repeat(24)}` }); // 8 + 1 + 7 + 24
  expect(cut(await readDocument(home, "one:guide.md:2"), 3, true)).toEqual({ to: 2, truncated: true, text: "" });
  // The last line, one character past the budget with its number: read whole, and nothing left to read on to (N4).
  const last = { ...guide, text: "b", from: 5, to: 5 };
  expect(cut(last, 7, true)).toEqual({ to: 5, truncated: false, text: "b" });
  const wide = { ...guide, text: "# É\n\nééé😀", to: 3, total_lines: 3 };
  expect(cut(wide, 14)).toEqual({ to: 3, truncated: true, text: "# É\n\nééé" }); // not half of 😀
});

test(
  "from_char counts characters (code points), and reading on by continue_with rebuilds astral text exactly (s29b retest F2)",
  async () => {
    const home = tempDir();
    const folder = tempDir();
    // Emoji (two UTF-16 units each), a family joined by ZWJs, CJK, and a long line cut inside it at small budgets.
    const family = "👩‍👩‍👧‍👦";
    const long = Array.from({ length: 40 }, (_, i) => `${i}😀日${family}é`).join("");
    const text = `# E\n\n😀😀日本語éa\n${long}\n${family}\nend\n`;
    writeTree(folder, { "emo.md": text });
    await indexRepository(home, registerRepository(home, { name: "emo", path: folder, embed: false }));
    const lineFrom = (fromLine: number) => readDocument(home, "emo:emo.md", { fromLine });
    const line3 = await lineFrom(3);
    // One character in is past the first emoji whole (it began with its lone low surrogate), two past both.
    expect(readPart(line3, 1, 1000).text).toStartWith("😀日本語éa\n");
    expect(readPart(line3, 2, 1000).text).toStartWith("日本語éa\n");
    expect(readPart(line3, 7, 1000).text).toStartWith("\n");
    const past = await refusal(() => readPart(line3, 8, 1000));
    expect(past.message).toBe("from_char 8 is past the end of line 3 (7 characters)"); // it said 9
    expect(past.hint).toBe("use a from_char between 0 and 7");
    for (const budget of [1, 5, 7, 50, 301]) {
      let next: { from_line: number; from_char?: number } | undefined = { from_line: 1 };
      let rebuilt = "";
      for (let calls = 0; next; calls++) {
        const part = readPart(await lineFrom(next.from_line), next.from_char ?? 0, budget);
        expect(part.text.isWellFormed()).toBe(true);
        // The next read starts where this one ended, counted in characters of its line.
        if (part.continue_with?.from_char !== undefined) {
          const lineText = text.split("\n")[part.continue_with.from_line - 1]!;
          const before = [...lineText].slice(0, part.continue_with.from_char).join("");
          expect(rebuilt + part.text).toEndWith(before);
        }
        rebuilt += part.text + (part.continue_with && part.continue_with.from_char === undefined ? "\n" : "");
        next = part.continue_with;
        expect(calls).toBeLessThan(30_000);
      }
      expect(rebuilt).toBe(text.slice(0, -1));
    }
  },
  HOOK_TIMEOUT,
);

describe("line ranges at the edges", () => {
  test("first line, last line, past the end, zero and negative", async () => {
    expect(await readDocument(home, "one:guide.md", { fromLine: 5 })).toMatchObject({
      from: 5,
      to: 5,
      text: "line five",
      truncated: false,
    });
    expect(await readDocument(home, "one:guide.md", { fromLine: 1, maxLines: 1 })).toMatchObject({
      from: 1,
      to: 1,
      text: "# Guide",
      truncated: false,
    });
    expect(await readDocument(home, "one:guide.md", { fromLine: 4, maxLines: 100 })).toMatchObject({ from: 4, to: 5, truncated: false });
    expect((await refusal(readDocument(home, "one:guide.md", { fromLine: 6 }))).message).toContain(
      "line 6 is past the end of one:guide.md (5 lines)",
    );
    expect((await refusal(readDocument(home, "one:guide.md:99"))).code).toBe("INVALID_INPUT");
    // A line number that can never be right is a usage error (exit 2), in a ref as in a flag (`--from 0`).
    expect((await refusal(readDocument(home, "one:guide.md", { fromLine: 0 }))).code).toBe("USAGE");
    expect((await refusal(readDocument(home, "one:guide.md", { maxLines: 0 }))).code).toBe("USAGE");
    expect((await refusal(readDocument(home, "one:guide.md:2:0"))).code).toBe("USAGE");
    // Whether or not the document exists: line 0 and page 0 are no place in any (they were "not indexed", exit 1).
    for (const ref of ["one:missing.md:0", "missing.md:0", "one:missing.pdf:p0", "missing.pdf:p0", "one:guide.md:0"]) {
      expect({ ref, code: (await refusal(readDocument(home, ref))).code }).toEqual({ ref, code: "USAGE" });
    }
    // Nor is one past what a number holds: it was read rounded, "line 100000000000000000000 is past the end".
    for (const ref of ["one:guide.md:99999999999999999999", "one:guide.md:1:99999999999999999999", "one:guide.md:p99999999999999999"]) {
      const refused = await refusal(readDocument(home, ref));
      expect({ ref, code: refused.code, message: refused.message }).toEqual({
        ref,
        code: "USAGE",
        message: "line and page numbers go up to 9007199254740991",
      });
    }
    // Options read inside the ref's own range (s11 agent #1: they read past it); a ref's line alone bounds nothing.
    expect(await readDocument(home, "one:guide.md:2:3", { fromLine: 3, maxLines: 5 })).toMatchObject({ from: 3, to: 4 });
    expect(await readDocument(home, "one:guide.md:2", { fromLine: 3, maxLines: 2 })).toMatchObject({ from: 3, to: 4 });
  });

  test("an empty document and one without a final newline", async () => {
    expect(await readDocument(home, "one:empty.txt")).toMatchObject({ from: 1, to: 0, total_lines: 0, text: "", truncated: false });
    expect(await readDocument(home, "one:nolf.txt")).toMatchObject({ total_lines: 2, text: "first\nsecond" });
    expect(await readDocument(home, "one:nolf.txt:2")).toMatchObject({ text: "second" });
  });
});

test("get of a file left out as generated code names the rule, and near paths: CLI get and get --meta, the library (s27 code F5)", async () => {
  const [own, root] = [tempDir(), tempDir()]; // a home of its own: the other tests count the repositories
  const common = "export function setup(env) {\n  return env;\n}\n";
  writeTree(root, { "debug/common.js": common, "dist/common.js": common, ".ignore": "!vendor/\n", "vendor/v.js": common });
  const repo = registerRepository(own, { name: "web", path: root, embed: false, fileTypes: ["js"] });
  await indexRepository(own, repo);
  const error = await refusal(readDocument(own, "web:dist/common.js", { leftOut: leftOutOfIndex }));
  expect({ code: error.code, message: error.message, hint: error.hint }).toEqual({
    code: "DOCUMENT_NOT_FOUND",
    message: "web:dist/common.js is not indexed: dist/ is generated or vendored code, left out",
    hint: "did you mean web:debug/common.js?",
  });
  for (const args of [
    ["get", "web:dist/common.js"],
    ["get", "web:dist/common.js", "--meta"],
  ]) {
    expect(runCli(args, { home: own }).stderr.split("\n")[0]).toBe(
      "error: web:dist/common.js is not indexed: dist/ is generated or vendored code, left out",
    );
  }
  // A path its rules leave in that the index does not hold is not indexed, for no rule: a typo, or not indexed yet.
  const typo = await refusal(readDocument(own, "web:debug/comon.js", { leftOut: leftOutOfIndex }));
  expect(typo.message).toBe("web:debug/comon.js is not an indexed document");
  // A folder's name is no type: the folder is not said to be left out for having none.
  expect((await refusal(readDocument(own, "web:dist", { leftOut: leftOutOfIndex }))).message).toBe("web:dist is not an indexed document");
  expect(await readDocument(own, "web:vendor/v.js")).toMatchObject({ text: common.trimEnd() });
});

describe("only indexed documents are read", () => {
  test("hidden, excluded, other-type and outside files are refused, with the rule that leaves each out (s27 code F5)", async () => {
    // Each with the way back its rule has: none for a hidden file, config for a setting, a `!` line for the rest
    // (the hint was config's for every rule: s27b retest N8).
    const hidden = "hidden files and folders (a name starting with '.') are never indexed";
    const settings = "`researcher config show` shows the repository's file_types and exclude; `config set` changes them, each set whole";
    const negation = "an ignore file's `!name/` line keeps a folder a default rule or an ignore file leaves out, `!name` a file";
    for (const [ref, why, hint] of [
      ["one:.hidden/secret.md", "it is hidden, or in a hidden folder", hidden],
      ["one:.dot.md", "it is hidden, or in a hidden folder", hidden],
      ["one:drafts/wip.md", "an exclude pattern leaves it out", settings],
      ["one:data.csv", "its type (.csv) is not one it indexes", settings],
      ["one:ignored.md", "an ignore file leaves it out", negation],
      ["one:build/out.md", "an ignore file leaves it out", negation],
      ["one:.gitignore", "it is hidden, or in a hidden folder", hidden],
    ]) {
      const error = await refusal(readDocument(home, ref!, { leftOut: leftOutOfIndex }));
      expect({ code: error.code, message: error.message, hint: error.hint }).toEqual({
        code: "DOCUMENT_NOT_FOUND",
        message: `${ref} is not indexed: ${why}`,
        hint,
      });
      // A caller that passes no rule (a library user's read) hears the document is not indexed, as before.
      expect((await refusal(readDocument(home, ref!))).message).toBe(`${ref} is not an indexed document`);
    }
    // A file that is not there is no rule's doing (`nofile` has no extension, no type it indexes: s27b agent F3).
    for (const ref of ["one:nofile", "one:missing.csv"]) {
      expect((await refusal(readDocument(home, ref, { leftOut: leftOutOfIndex }))).message).toBe(`${ref} is not an indexed document`);
    }
    for (const ref of ["one:../x.md", "one:/etc/passwd", "one:shared/../../x.md"]) {
      expect((await refusal(readDocument(home, ref))).code).toBe("PATH_OUTSIDE_REPO");
    }
    // A leading slash names the repository's root, as in `ls one:/shared` and path globs (s9 hostile).
    expect(await readDocument(home, "one:/guide.md")).toMatchObject({ repository: "one", path: "guide.md" });
    expect(await readDocument(home, "one:/guide.md:2:1")).toMatchObject({ path: "guide.md", from: 2, to: 2 });
    expect((await refusal(readDocument(home, "/etc/passwd"))).code).toBe("DOCUMENT_NOT_FOUND");
  });

  test("a repository added with ignoreFiles: false indexes and reads what .gitignore leaves out", async () => {
    const repo = registerRepository(home, { name: "all", path: tempDir(), embed: false, ignoreFiles: false });
    writeTree(repo.path, { ".gitignore": "*.md\n", "seen.md": "# Seen\n" });
    await indexRepository(home, repo);
    expect((await readDocument(home, "all:seen.md")).text).toBe("# Seen");
    expect(getRepository(home, "all").ignoreFiles).toBe(false);
  });
});

describe("listing", () => {
  test("every indexed document with format, size, fragments, pages and modified", () => {
    const all = listDocuments(home, { repositories: ["one", "two"] }).documents;
    expect(all.map((d) => `${d.repository}:${d.path}`)).toEqual([
      "one:2024:01/log.md",
      "one:empty.txt",
      "one:guide.md",
      "one:nolf.txt",
      "one:same.md",
      "one:shared/readme.md",
      "two:only-two.md",
      "two:same.md",
      "two:shared/readme.md",
    ]);
    expect(all[2]).toMatchObject({ format: "md", size: 40, fragments: 1, pages: null, title: "Guide" });
    expect(Date.parse(all[2]!.modified)).toBeGreaterThan(0);
    expect(listDocuments(home, { repositories: ["one"], prefix: "shared/" }).documents.map((d) => d.path)).toEqual(["shared/readme.md"]);
    expect(listDocuments(home, { repositories: ["two"], prefix: "s" }).documents.map((d) => d.path)).toEqual([
      "same.md",
      "shared/readme.md",
    ]);
  });
});

describe("readDocuments (multi-get)", () => {
  test("an empty repository is the usage error it is for a search or a listing, not every repository (s29 agent P1)", async () => {
    const empty = { code: "USAGE", message: "a repository name is empty (got '')" };
    for (const ref of ["one:guide.md:3:1", "guide.md:3", `#${"0".repeat(6)}`])
      expect(await refusal(readDocument(home, ref, { repository: "" }))).toMatchObject(empty);
    for (const pattern of ["one:guide.md", "**/*.md", "guide.md, two:same.md"])
      expect(await refusal(readDocuments(home, pattern, { repository: "" }))).toMatchObject(empty);
    // An unknown one alike: the call's error, not a skipped entry for each part.
    expect(await refusal(readDocuments(home, "**/*.md", { repository: "nosuch" }))).toMatchObject({ code: "REPO_NOT_FOUND" });
  });

  test("a glob over paths or repo:path; refs separated by commas, with their ranges", async () => {
    expect((await readDocuments(home, "**/*.md", { repository: "two" })).documents.map((d) => d.path)).toEqual([
      "only-two.md",
      "same.md",
      "shared/readme.md",
    ]);
    expect((await readDocuments(home, "two:shared/*")).documents.map((d) => `${d.repository}:${d.path}`)).toEqual(["two:shared/readme.md"]);
    const listed = await readDocuments(home, "one:guide.md:3:1, two:only-two.md ,one:nope.md");
    expect(listed.documents.map((d) => d.text)).toEqual(["line three", "# Two"]);
    expect(listed.skipped).toEqual([{ repository: "", path: "one:nope.md", reason: "one:nope.md is not an indexed document" }]);
  });

  test("a missed part names close paths as get does, for the first 5 misses; a repository's name says how to read it", async () => {
    const misses = ["one:guid.md", "gide.md", "one:sme.md", "two:only-tw.md", "two:shared/readm.md", "one:guide.mdx"];
    const { skipped } = await readDocuments(home, misses.join(","));
    expect(skipped.map((s) => s.reason)).toEqual([
      "one:guid.md is not an indexed document (did you mean one:guide.md?)",
      "no repository holds gide.md (did you mean one:guide.md?)",
      "one:sme.md is not an indexed document (did you mean one:same.md?)",
      "two:only-tw.md is not an indexed document (did you mean two:only-two.md?)",
      "two:shared/readm.md is not an indexed document (did you mean two:shared/readme.md?)",
      "one:guide.mdx is not an indexed document", // past the first 5: each compares itself with every path
    ]);
    // `multi-get two` read as a path found none; two's documents are `two:*` (s28b hostile F6).
    expect((await readDocuments(home, "two")).skipped).toEqual([
      { repository: "", path: "two", reason: "no repository holds two (two is a repository: two:* names its documents)" },
    ]);
  });

  test("an absolute glob, folder or listing prefix inside one repository's folder is that repository's (s29 agent P5)", async () => {
    const paths = async (pattern: string) => (await readDocuments(home, pattern)).documents.map((d) => `${d.repository}:${d.path}`);
    // It matched nothing, where `get` of one such path read it.
    expect(await paths(join(two, "shared/*"))).toEqual(["two:shared/readme.md"]);
    expect(await paths(`${join(two, "shared")}/`)).toEqual(["two:shared/readme.md"]);
    expect(await paths(`${join(one, "guide.md")},${join(two, "*.md")}`)).toEqual(["one:guide.md", "two:only-two.md", "two:same.md"]);
    const listed = listDocumentsPage(home, { prefix: join(two, "shared") });
    expect(listed.documents.map((d) => `${d.repository}:${d.path}`)).toEqual(["two:shared/readme.md"]);
    // `ls` said "no repository named '/…/shared'".
    expect(runCli(["ls", join(two, "shared")], { home }).stdout).toContain("two:shared/readme.md");
    // Outside every repository's folder it is what it was: no match.
    expect(await paths("/nowhere/at/all/*.md")).toEqual([]);
  });

  test("absolute paths: nested repositories named both, folders without a slash, a folder added through a link, --filter (s29b retest)", async () => {
    const own = tempDir();
    const lib = tempDir();
    const real = tempDir();
    writeTree(lib, { "notes/t.md": "# T\n", "notes/book/b1.md": "# B1\n", "notes/inner/v.md": "# V\n" });
    writeTree(real, { "sub/k.md": "# K\n\nkiwi\n" });
    const link = join(tempDir(), "link");
    symlinkSync(real, link);
    await indexRepository(own, registerRepository(own, { name: "notes", path: join(lib, "notes"), embed: false }));
    await indexRepository(own, registerRepository(own, { name: "inner", path: join(lib, "notes/inner"), embed: false }));
    await indexRepository(own, registerRepository(own, { name: "s", path: realpathSync(real), embed: false }));
    const read = async (pattern: string) => {
      const found = await readDocuments(own, pattern);
      return { paths: found.documents.map((d) => `${d.repository}:${d.path}`), skipped: found.skipped.map((k) => k.reason) };
    };
    // Inside two repositories' folders: both named, as `get` names them (it listed nothing, or "no repository named").
    const both = `'${join(lib, "notes/inner")}/*.md' is in 2 repositories: inner:*.md, notes:inner/*.md`;
    expect(await read(`${join(lib, "notes/inner")}/*.md`)).toEqual({ paths: [], skipped: [both] });
    expect(runCli(["ls", join(lib, "notes/inner")], { home: own }).stderr).toContain("is in 2 repositories: inner, notes:inner");
    // Inside none: it was "no repository named '/etc'".
    expect(runCli(["ls", "/etc"], { home: own }).stderr).toStartWith(
      `error: no repository's folder holds /etc\nhint: known repositories: inner (`,
    );
    // A folder without its slash is the folder, as `notes:book` is; the repository's folder is all of it.
    expect((await read(join(lib, "notes/book"))).paths).toEqual(["notes:book/b1.md"]);
    expect((await read(join(lib, "notes"))).paths).toEqual(["notes:book/b1.md", "notes:inner/v.md", "notes:t.md"]);
    // A missed file is still said as a ref's miss, with its close paths.
    expect((await read(join(lib, "notes/book/b2.md"))).skipped).toEqual([
      "notes:book/b2.md is not an indexed document (did you mean notes:book/b1.md?)",
    ]);
    // Through the link the repository was added by: its folder is stored resolved.
    expect((await read(`${link}/sub/*.md`)).paths).toEqual(["s:sub/k.md"]);
    expect((await readDocument(own, join(link, "sub/k.md"))).text).toContain("kiwi");
    expect(listDocumentsPage(own, { prefix: join(link, "sub") }).documents.map((d) => d.path)).toEqual(["sub/k.md"]);
    // --filter, anchored at the repository's root; inside another repository than the one asked for, an error.
    const filtered = await search(own, { query: "kiwi", filter: `${link}/sub/*` }, new SearchContext());
    expect(filtered.results.map((r) => `${r.repository}:${r.path}`)).toEqual(["s:sub/k.md"]);
    const other = search(own, { query: "kiwi", filter: `${link}/sub/*`, repositories: ["notes"] }, new SearchContext());
    expect(await refusal(other)).toMatchObject({ code: "USAGE", message: `filter '${link}/sub/*' is inside repository 's', not 'notes'` });
  });

  test("a list reads each part: a name with glob syntax, two globs, a brace glob with a comma (s21 scripts #1)", async () => {
    const oddHome = tempDir();
    const odd = tempDir();
    writeTree(odd, { "plain.md": "# P\n", "report [v2].md": "# R\n", "bang!.md": "# B\n", "a.md": "# A\n", "b.md": "# B\n" });
    await indexRepository(oddHome, registerRepository(oddHome, { name: "odd", path: odd, embed: false }));
    const read = async (pattern: string) => {
      const found = await readDocuments(oddHome, pattern);
      return { paths: found.documents.map((d) => d.path), skipped: found.skipped.map((s) => s.path) };
    };
    // Search results' refs, joined: one name with glob syntax made the whole list a glob that matched nothing.
    expect(await read("odd:plain.md:1-1,odd:report [v2].md:1-1,odd:bang!.md")).toEqual({
      paths: ["plain.md", "report [v2].md", "bang!.md"],
      skipped: [],
    });
    expect(await read("odd:a*.md,odd:b*.md")).toEqual({ paths: ["a.md", "b.md", "bang!.md"], skipped: [] });
    expect(await read("odd:{a,plain}.md")).toEqual({ paths: ["a.md", "plain.md"], skipped: [] });
    // A character class with a comma is one glob too, as --filter reads it (s22 review N1); one never closed splits.
    expect(await read("odd:[a,p]*.md")).toEqual({ paths: ["a.md", "plain.md"], skipped: [] });
    expect((await read("odd:[plain.md,odd:a.md")).paths).toEqual(["a.md"]);
    // A brace never closed takes no part of the list with it (s21 retest R8).
    expect((await read("odd:{plain.md,odd:a.md")).paths).toEqual(["a.md"]);
    expect(await read("odd:a.md,odd:zz*.md")).toEqual({ paths: ["a.md"], skipped: ["odd:zz*.md"] });
    // Empty parts are no parts: `a,` read every document of every repository (s21 retest R1).
    for (const pattern of ["odd:a.md,", "odd:a.md,,", "odd:a.md, ", ",odd:a.md"]) {
      expect({ pattern, ...(await read(pattern)) }).toEqual({ pattern, paths: ["a.md"], skipped: [] });
    }
    // A folder's name without its slash is that folder in a list too, as alone (s21 retest R2).
    writeTree(odd, { "sub/deep.md": "# D\n" });
    await indexRepository(oddHome, getRepository(oddHome, "odd"));
    expect(await read("odd:sub,odd:a.md")).toEqual({ paths: ["sub/deep.md", "a.md"], skipped: [] });
  });

  test("a glob follows --filter's rule: without a slash it matches base names at any depth (tester F2)", async () => {
    const paths = async (pattern: string, repository?: string) =>
      (await readDocuments(home, pattern, { repository })).documents.map((d) => `${d.repository}:${d.path}`);
    expect(await paths("one:*.md")).toEqual(["one:2024:01/log.md", "one:guide.md", "one:same.md", "one:shared/readme.md"]);
    expect(await paths("*readme.md", "two")).toEqual(["two:shared/readme.md"]);
    expect(await paths("read*")).toEqual(["one:shared/readme.md", "two:shared/readme.md"]);
    // With a slash it matches from the repository's root, as --filter does: `shared/*` only directly in shared/.
    expect(await paths("one:shared/*")).toEqual(["one:shared/readme.md"]);
    expect(await paths("one:*/readme.md")).toEqual(["one:shared/readme.md"]);
    expect(await paths("one:2024:01/*")).toEqual(["one:2024:01/log.md"]);
    expect(await paths("2024:01/*")).toEqual(["one:2024:01/log.md"]); // a colon in a path, not a repository
    // A misspelt repository before a glob is said to be, as in a ref, not an empty match: REPO_NOT_FOUND, as `get` and
    // `ls` say it (it was listed with its reason, the command exiting 0: s30 hostile F6).
    const misnamed = async (pattern: string) => refusal(readDocuments(home, pattern));
    expect(await misnamed("noe:*.md")).toMatchObject({ code: "REPO_NOT_FOUND", message: "no repository named 'noe'" });
    // A path with a colon that matches nothing is an empty match, not "no repository named '2025'" (review s8 #10).
    expect(await paths("2025:01/*")).toEqual([]);
    // A name unlike any path's part before a colon is a repository's, though paths hold colons (s17 review #9).
    expect(await misnamed("nosuch:*")).toMatchObject({ code: "REPO_NOT_FOUND", message: "no repository named 'nosuch'" });
    // Anchored with a leading slash, or a whole folder with a trailing one (they matched nothing: hostile s8 #9).
    expect(await paths("one:/shared/*")).toEqual(["one:shared/readme.md"]);
    expect(await paths("one:shared/")).toEqual(["one:shared/readme.md"]);
    // A folder named alone, as --filter takes it, is that folder (it was a ref to no document: s20 user I).
    expect(await paths("one:shared")).toEqual(["one:shared/readme.md"]);
    expect(await paths("shared")).toEqual(["one:shared/readme.md", "two:shared/readme.md"]);
    expect((await readDocuments(home, "one:nosuch")).skipped.map((s) => s.path)).toEqual(["one:nosuch"]);
    // `get` and `get --meta` alike (each counts the folder's documents in a session of its own: s23 review R11).
    for (const [ref, read] of [
      ["one:shared", readDocument],
      ["one:shared/", readDocument],
      ["one:shared", documentInfo],
    ] as const) {
      const refused = await refusal(async () => read(home, ref));
      expect({ ref, message: refused.message, hint: refused.hint }).toEqual({
        ref,
        message: "one:shared is a folder of 1 indexed document, not a document",
        hint: "`researcher multi-get one:shared/` reads them, `researcher ls one:shared/` lists them",
      });
    }
    // In a list, each part is a ref, a glob or a folder (s21 scripts #1: a part with glob syntax made the whole list
    // one glob that matched nothing); a part that names nothing is listed with its reason.
    const refs = await readDocuments(home, "one:guide.md,one:shared/,one:nothing/,one:*.zz");
    expect(refs.documents.map((d) => d.path)).toEqual(["guide.md", "shared/readme.md"]);
    expect(refs.skipped.map((s) => [s.path, s.reason])).toEqual([
      ["one:nothing/", "no indexed document matches it"],
      ["one:*.zz", "no indexed document matches it"],
    ]);
    // The same documents as --filter admits, by one matcher.
    const listed = listDocuments(home, { repositories: ["one"] }).documents.map((d) => d.path);
    const matches = pathGlob("*.md");
    expect((await paths("one:*.md")).map((p) => p.slice(4))).toEqual(listed.filter(matches));
  });

  test("a name alone is every document of that name at any depth, as a pattern without a slash is; a ref stays one (s28 agent 3)", async () => {
    const own = tempDir();
    const [c2, c3] = [tempDir(), tempDir()];
    writeTree(c2, { "notes/ideas.md": "# Ideas two\n", "notes/deep/ideas.md": "# Ideas deeper\n" });
    writeTree(c3, { "ideas.md": "# Ideas three\n", "other.md": "# Other\n", "Smith, J.md": "# Root\n", "cv/Smith, J.md": "# Deep\n" });
    await indexRepository(own, registerRepository(own, { name: "c2", path: c2, embed: false }));
    await indexRepository(own, registerRepository(own, { name: "c3", path: c3, embed: false }));
    const read = async (pattern: string, repository?: string) => {
      const found = await readDocuments(own, pattern, { repository });
      return { read: found.documents.map((d) => `${d.repository}:${d.path}`), skipped: found.skipped.map((s) => [s.path, s.reason]) };
    };
    // It read c3:ideas.md alone, the one at a root, and said nothing of the others.
    const every = ["c2:notes/deep/ideas.md", "c2:notes/ideas.md", "c3:ideas.md"];
    expect(await read("ideas.md")).toEqual({ read: every, skipped: [] });
    expect(await read("idea?.md")).toEqual({ read: every, skipped: [] }); // as the glob reads them
    expect(await read("ideas.md", "c2")).toEqual({ read: ["c2:notes/deep/ideas.md", "c2:notes/ideas.md"], skipped: [] });
    expect(await read("other.md,ideas.md")).toEqual({ read: ["c3:other.md", ...every], skipped: [] });
    expect(await read("Smith, J.md")).toEqual({ read: ["c3:Smith, J.md", "c3:cv/Smith, J.md"], skipped: [] });
    // At two repositories' roots it read neither: "'ideas.md' is in 2 repositories".
    writeTree(c2, { "ideas.md": "# Ideas at the root\n" });
    await indexRepository(own, getRepository(own, "c2"));
    expect((await read("ideas.md")).read).toEqual(["c2:ideas.md", ...every]);
    // A ref is still the one document it names: with its repository, its path from the root, or its lines.
    expect(await read("c3:ideas.md")).toEqual({ read: ["c3:ideas.md"], skipped: [] });
    expect(await read("notes/ideas.md")).toEqual({ read: ["c2:notes/ideas.md"], skipped: [] });
    expect(await read("other.md:1:1")).toEqual({ read: ["c3:other.md"], skipped: [] });
    expect(await read("ideas.md:1-1")).toEqual({
      read: [],
      skipped: [["ideas.md:1-1", "'ideas.md:1-1' is in 2 repositories: c2:ideas.md, c3:ideas.md"]],
    });
    // A name no document has is still read as a ref (its error), or as the folders of that name.
    expect(await read("nope.md")).toEqual({ read: [], skipped: [["nope.md", expect.stringContaining("nope.md")]] });
    writeTree(c3, { "journal/a.md": "# J\n" });
    await indexRepository(own, getRepository(own, "c3"));
    expect(await read("journal")).toEqual({ read: ["c3:journal/a.md"], skipped: [] });
    // The CLI's multi-get alike, its --files too.
    const files = runCli(["multi-get", "ideas.md", "--files"], { home: own }).stdout.trim().split("\n");
    expect(files).toEqual([join(c2, "ideas.md"), join(c2, "notes/deep/ideas.md"), join(c2, "notes/ideas.md"), join(c3, "ideas.md")]);
  });

  test("a name holding a comma is one document, not a list of two refs that read another (s20 hostile #5)", async () => {
    const own = tempDir();
    const folder = tempDir();
    writeTree(folder, {
      "Meeting notes, 2024.md": "# M\n\nmeeting\n",
      "a,b.md": "# AB\n",
      "b.md": "# B\n",
      "journal/a.md": "# a\n",
      "sub/journal/d.md": "# d\n",
    });
    await indexRepository(own, registerRepository(own, { name: "fn", path: folder, embed: false }));
    const read = async (pattern: string) => (await readDocuments(own, pattern)).documents.map((d) => d.path);
    expect(await read("fn:Meeting notes, 2024.md")).toEqual(["Meeting notes, 2024.md"]);
    expect(await read("fn:a,b.md")).toEqual(["a,b.md"]);
    // A list is still a list: in one, a comma separates, but for one that cut a name (s24 agent A10, below).
    expect(await read("fn:b.md, fn:Meeting notes, 2024.md")).toEqual(["b.md", "Meeting notes, 2024.md"]);
    expect(await read("fn:Meeting*2024.md")).toEqual(["Meeting notes, 2024.md"]);
    // A folder's name alone is every folder of that name, as --filter takes it; with a slash, the one at that path
    // (it read only the top-level one: s20 retest R5).
    expect(await read("fn:journal")).toEqual(["journal/a.md", "sub/journal/d.md"]);
    expect(await read("fn:sub/journal")).toEqual(["sub/journal/d.md"]);
  });

  test("in a list, a ref whose name a comma cut is that document, not a part read from another repository (s24 agent A10)", async () => {
    const own = tempDir();
    const [book, fresh] = [tempDir(), tempDir()];
    writeTree(book, {
      "a,b.md": "# Comma\n\nwallabyquartz here\nmore\n",
      "Smith, John, Jr - CV.md": "# CV\n\nexperience\n",
      "c.md": "# C\n",
    });
    writeTree(fresh, { "b.md": "# Other\n\nunindexed zebrafish\n" });
    await indexRepository(own, registerRepository(own, { name: "book", path: book, embed: false }));
    await indexRepository(own, registerRepository(own, { name: "fresh", path: fresh, embed: false }));
    const read = async (pattern: string) => {
      const found = await readDocuments(own, pattern);
      return { read: found.documents.map((d) => [`${d.repository}:${d.path}`, d.text]), skipped: found.skipped.map((s) => s.path) };
    };
    // `book:a` and `b.md:3-4` read fresh:b.md's line 3: text the agent did not ask for.
    expect(await read("book:a,b.md:3-4,book:c.md")).toEqual({
      read: [
        ["book:a,b.md", "wallabyquartz here\nmore"],
        ["book:c.md", "# C"],
      ],
      skipped: [],
    });
    expect(await read("book:c.md, book:Smith, John, Jr - CV.md:3, fresh:b.md:3")).toEqual({
      read: [
        ["book:c.md", "# C"],
        ["book:Smith, John, Jr - CV.md", "experience"],
        ["fresh:b.md", "unindexed zebrafish"],
      ],
      skipped: [],
    });
    // A part that names nothing, with nothing after it that makes a name, is skipped as before.
    expect(await read("book:nope,b.md")).toEqual({ read: [["fresh:b.md", "# Other\n\nunindexed zebrafish"]], skipped: ["book:nope"] });
  });

  test("a glob or a ref in a repository never indexed is listed with its reason, alone as in a list; in one that does not exist it is REPO_NOT_FOUND (s16 user #5, s23 C2, s30 hostile F6)", async () => {
    // Both answered an empty match: a script's misspelt repository went unnoticed. A glob alone then failed the
    // command where a ref alone was listed, and a ref in a repository never indexed was "not an indexed document".
    const own = tempDir();
    const folder = tempDir();
    writeTree(folder, { "a.md": "# A\n" });
    await indexRepository(own, registerRepository(own, { name: "notes", path: folder, embed: false }));
    registerRepository(own, { name: "later", path: tempDir(), embed: false });
    const notYet = "repository 'later' has not been indexed yet (hint: run `researcher index later`)";
    // No indexed path holds a colon, so `nosuch:` can only be a repository's name.
    for (const pattern of ["nosuch:*", "nosuch:a.md"])
      expect(await refusal(readDocuments(own, pattern))).toMatchObject({ code: "REPO_NOT_FOUND", message: "no repository named 'nosuch'" });
    for (const [pattern, reason] of [
      ["later:*", notYet],
      ["later:a.md", notYet],
    ] as const) {
      expect({ pattern, ...(await readDocuments(own, pattern)) }).toEqual({
        pattern,
        documents: [],
        skipped: [{ repository: "", path: pattern, reason }],
        skipped_total: 1,
      });
    }
    // `get` and `get --meta` say what to run, not "not an indexed document" and `ls later`, which fails NOT_INDEXED.
    for (const read of [readDocument, documentInfo]) {
      expect(await refusal(async () => read(own, "later:a.md"))).toMatchObject({
        code: "NOT_INDEXED",
        hint: "run `researcher index later`",
      });
    }
    expect((await readDocuments(own, "notes:*")).documents.map((d) => d.path)).toEqual(["a.md"]);
    expect((await readDocuments(own, "*.md")).documents.map((d) => d.path)).toEqual(["a.md"]); // `later` holds nothing yet
    // In a list, such a glob is its part's skipped entry, as a ref part's error is: it failed the whole list, the
    // valid parts unread (s22 review F10).
    const listed = await readDocuments(own, "notes:a.md,later:*.md,nosuch:*.md,later:x.md");
    expect(listed.documents.map((d) => d.path)).toEqual(["a.md"]);
    expect(listed.skipped.map((s) => [s.path, s.reason])).toEqual([
      ["later:*.md", notYet],
      ["nosuch:*.md", "no repository named 'nosuch'"],
      ["later:x.md", notYet],
    ]);
    // Parts that are all empty name nothing, as an empty pattern does: a usage error, not an empty match.
    for (const pattern of ["", " ", ",", " , ,"]) {
      expect({ pattern, code: (await refusal(readDocuments(own, pattern))).code }).toEqual({ pattern, code: "USAGE" });
    }
    // An empty path after a repository's name (`notes:$DIR`, DIR unset) names no folder: the part is skipped with its
    // own error, as `get notes:` refuses it (it read every document of the repository: s23 review R2).
    const root = ["notes:", "'' is the folder of repository 'notes', not a file in it"];
    for (const [pattern, paths] of [
      ["notes:", []],
      ["notes:,notes:a.md", ["a.md"]],
    ] as const) {
      const read = await readDocuments(own, pattern);
      expect({ pattern, paths: read.documents.map((d) => d.path), skipped: read.skipped.map((s) => [s.path, s.reason]) }).toEqual({
        pattern,
        paths: [...paths],
        skipped: [root],
      });
    }
  });

  test("a list reads each repository's paths once, however many of its parts name nothing (s22 review F4)", async () => {
    const own = tempDir();
    const folder = tempDir();
    writeTree(folder, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`d${i % 4}/sub/n${i}.md`, `# N${i}\n`])));
    await indexRepository(own, registerRepository(own, { name: "big", path: folder, embed: false }));
    await indexRepository(own, registerRepository(own, { name: "small", path: tempDir(), embed: false }));
    // Stale refs, folders by path and by name, a glob, a docid's miss: each part that named nothing read every path of
    // every repository three to five times (suggestions it never showed, a folder count, a folder glob).
    const parts = [
      ...Array.from({ length: 30 }, (_, i) => `big:d1/sub/n${i}.md`),
      ...Array.from({ length: 5 }, (_, i) => `big:d1/sub/café${i}.md`), // a name to compose (NFC) before it is looked up
      ...["big:d2/", "big:d9/", "big:sub", "sub", "d3/sub", "big:**/sub/", "big:*/sub/n1*.md", "#abcdef99", "n5.md", "big:d0/sub/n0.md:1"],
    ];
    const alone = await Promise.all(parts.map((part) => readDocuments(own, part)));
    const reads = spyOn(Store.prototype, "documents");
    try {
      const listed = await readDocuments(own, parts.join(","), { maxBytes: 1_000_000 });
      expect(reads.mock.calls.length).toBeLessThanOrEqual(2);
      // Each part answers as it does alone (where a glob alone matches nothing, in a list it says so).
      const none = (path: string) => [{ repository: "", path, reason: "no indexed document matches it" }];
      expect(listed.documents).toEqual(alone.flatMap((a) => a.documents));
      // Close paths are named for the first 5 misses of a list only (each compares itself with every path).
      const unsuggested = (skipped: SkippedDocument[]) =>
        skipped.map((s) => ({ ...s, reason: s.reason.replace(/ \(did you mean .*\?\)$/, "") }));
      const expected = alone.flatMap((a, i) => (a.documents.length + a.skipped.length ? a.skipped : none(parts[i]!)));
      expect(unsuggested(listed.skipped)).toEqual(unsuggested(expected));
      expect(listed.skipped.filter((s) => s.reason.includes("did you mean"))).toHaveLength(5);
    } finally {
      reads.mockRestore();
    }
  });

  test("a file whose name holds glob syntax is reached by its own name, in multi-get and filters (s11 review)", async () => {
    // `[v2]` and `{1}` made the name a glob that did not match itself: ls showed the file, multi-get of that very ref
    // found nothing.
    const own = tempDir();
    const docs = tempDir();
    writeTree(docs, {
      "report [v2].md": "# R\n\nbracket words\n",
      "notes{1}.md": "# N\n\nbracket words too\n",
      "!x.md": "bracket\n",
      "dir{1}/in.md": "# In\n\nbracket inside\n",
    });
    await indexRepository(own, registerRepository(own, { name: "b", path: docs, embed: false }));
    const paths = async (pattern: string) => (await readDocuments(own, pattern)).documents.map((d) => d.path);
    expect(await paths("b:report [v2].md")).toEqual(["report [v2].md"]);
    expect(await paths("notes{1}.md")).toEqual(["notes{1}.md"]);
    expect(await paths("b:!x.md")).toEqual(["!x.md"]);
    expect(await paths("b:dir{1}/")).toEqual(["dir{1}/in.md"]); // a folder by its name too (s11 diff review #7)
    expect(await paths("b:report ?v2?.md")).toEqual(["report [v2].md"]); // still a glob when it names no file
    const found = async (options: Partial<SearchOptions>) =>
      (await search(own, { query: "bracket", mode: "bm25", ...options }, new SearchContext())).results.map((r) => r.path).sort();
    expect(await found({ filter: "report [v2].md" })).toEqual(["report [v2].md"]);
    expect(await found({ where: [parseFilter('path in ("report [v2].md"|"notes{1}.md")')] })).toEqual(["notes{1}.md", "report [v2].md"]);
    expect(await found({ where: [parseFilter('path="!x.md"')] })).toEqual(["!x.md"]);
  });

  test("per-document and per-answer caps list what they leave out", async () => {
    const capped = await readDocuments(home, "one:**", { maxBytesPerDocument: 20 });
    expect(capped.documents.map((d) => d.path)).toEqual(["empty.txt", "nolf.txt", "shared/readme.md"]);
    expect(capped.documents.every((d) => Buffer.byteLength(d.text) <= 20)).toBe(true);
    expect(capped.skipped.map((s) => s.path)).toContain("guide.md");
    // With the way on every other skip has (s29 agent P3: it alone had none).
    expect(capped.skipped.find((s) => s.path === "guide.md")!.reason).toMatch(
      /^larger than max_bytes per document \(\d+ > 20 bytes\): read it by itself with `researcher get one:guide\.md`, an answer at a time \(continue_with\)$/,
    );
    const budget = await readDocuments(home, "two:*", { maxBytes: 10 });
    expect(budget.documents.map((d) => d.path)).toEqual(["only-two.md"]);
    expect(budget.skipped).toEqual([
      {
        repository: "two",
        path: "same.md",
        // The way on: read by itself, a budget at a time (s24 agent A5: it said only the sizes).
        reason: expect.stringMatching(
          /^\d+ bytes, more than the \d+ left of max_bytes for the answer \(10 bytes\): read it by itself with `researcher get two:same\.md`, an answer at a time \(continue_with\)$/,
        ),
      },
      // larger on disk than what is left: not read, and said as the first is, by its size (s29 agent P3: "were left
      // after two:same.md did not fit" read as if it was never looked at)
      {
        repository: "two",
        path: "shared/readme.md",
        reason: expect.stringMatching(
          /^\d+ bytes, more than the \d+ left of max_bytes for the answer \(10 bytes\): read it by itself with `researcher get two:shared\/readme\.md`/,
        ),
      },
    ]);
  });

  test("one unreadable match is its own entry; the others are read", async () => {
    const dir = tempDir();
    writeTree(dir, { "a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n" });
    const repo = registerRepository(home, { name: "three", path: dir, embed: false });
    await indexRepository(home, repo);
    rmSync(join(dir, "b.md"));
    const found = await readDocuments(home, "three:*.md");
    expect(found.documents.map((d) => d.path)).toEqual(["a.md", "c.md"]);
    expect(found.skipped).toEqual([{ repository: "three", path: "b.md", reason: "three:b.md was deleted since it was indexed" }]);
  });

  test("once a document did not fit, the rest that need converting are skipped unread; text files that fit are read (issue 22: 184 PDFs were all converted; s14 user #7)", async () => {
    const dir = tempDir();
    const page = (title: string) => `<html><head><title>${title}</title></head><body><p>${title} page.</p></body></html>`;
    writeTree(dir, {
      "a.md": "# A\n\nshort\n",
      "b.md": `# B\n\n${"long ".repeat(100)}\n`,
      "c.html": page("C"),
      "d.html": page("D"),
      "e.md": "# E\n",
      "f.md": `# F\n\n${"more ".repeat(60)}\n`,
    });
    const repo = registerRepository(home, { name: "budget", path: dir, embed: false, fileTypes: ["md", "html"] });
    await indexRepository(home, repo);
    // Were c.html and d.html read, they would be skipped as unreadable, not as over the budget.
    rmSync(join(dir, "c.html"));
    rmSync(join(dir, "d.html"));
    // Nor is a text file larger than what is left (s15 review #3: 20,000 notes were all read after the answer was full).
    rmSync(join(dir, "f.md"));
    const found = await readDocuments(home, "budget:*", { maxBytes: 100 });
    expect(found.documents.map((d) => d.path)).toEqual(["a.md", "e.md"]);
    // Each says what happened: b.md did not fit what was left; c.html and d.html were not read (agent s8 #4: a
    // 406-byte file was "over max_bytes" of 8,000).
    // Each later one with the same way on as b.md's (s24 retest N8: "the answer stopped", though it went on).
    const stopped = (path: string) =>
      expect.stringMatching(
        new RegExp(
          `^not read: \\d+ bytes of max_bytes \\(100\\) were left after budget:b\\.md did not fit: read it by itself with \`researcher get budget:${path.replace(".", "\\.")}\``,
        ),
      );
    // A text file is judged by its size, and said to be (s29 agent P3).
    const larger = (path: string) =>
      expect.stringMatching(
        new RegExp(
          `^\\d+ bytes, more than the \\d+ left of max_bytes for the answer \\(100 bytes\\): read it by itself with \`researcher get budget:${path.replace(".", "\\.")}\``,
        ),
      );
    expect(found.skipped).toEqual([
      {
        repository: "budget",
        path: "b.md",
        reason: expect.stringMatching(/^\d+ bytes, more than the \d+ left of max_bytes for the answer \(100 bytes\): read it by itself/),
      },
      ...["c.html", "d.html"].map((path) => ({ repository: "budget", path, reason: stopped(path) })),
      { repository: "budget", path: "f.md", reason: larger("f.md") },
    ]);
  });

  test("once the answer is full, some lines of a large text file are still read: the ref is judged by what it names (s16 review #1)", async () => {
    const home = tempDir();
    const dir = tempDir();
    writeTree(dir, {
      "a-big.md": `# Big\n\n${"word ".repeat(2000)}\n`,
      "b-huge.md": `# Huge\n\nfirst line of huge\n${"filler text line\n".repeat(2000)}`,
      "c-small.md": "# Small\n\nsmall note\n",
    });
    await indexRepository(home, registerRepository(home, { name: "n", path: dir, embed: false }));
    // b-huge.md:1:3 is 26 bytes of answer; it was skipped unread for its whole file's 34 KB.
    const found = await readDocuments(home, "n:a-big.md,n:b-huge.md:1:3,n:c-small.md", { maxBytes: 2000 });
    expect(found.documents.map((d) => [d.path, d.text])).toEqual([
      ["b-huge.md", "# Huge\n\nfirst line of huge"],
      ["c-small.md", "# Small\n\nsmall note"],
    ]);
    expect(found.skipped.map((s) => s.path)).toEqual(["a-big.md"]);
  });
});

describe("refs as search results print them (page and line range)", () => {
  const pages = tempDir();
  const pagesHome = tempDir();

  beforeAll(async () => {
    const bytes = await writePdf([
      paragraph("The first page speaks of harbours and tides.", 72),
      paragraph("The second page speaks of glaciers and moraines.", 72),
      paragraph("The third page speaks of deserts and dunes.", 72),
    ]);
    writeFileSync(join(pages, "atlas.pdf"), bytes);
    writeTree(pages, {
      "code.md": "one\ntwo\nthree\nfour\nfive\n",
      // An excerpt `convert -o` wrote: page-marker comments in a note, from page 5 on.
      "excerpt.md": "# Excerpt\n\n<!-- page 5 -->\n\nfive text\n\n<!-- page 6 -->\n\nsix text\n",
    });
    await indexRepository(pagesHome, registerRepository(pagesHome, { name: "atlas", path: pages, embed: false, fileTypes: ["pdf", "md"] }));
  }, HOOK_TIMEOUT);

  test("repo:path:pN reads that page, from its marker to the next", async () => {
    const page = await readDocument(pagesHome, "atlas:atlas.pdf:p2");
    expect(page.text).toContain("glaciers");
    expect(page.text).not.toContain("harbours");
    expect(page.text).not.toContain("deserts");
    expect((await readDocument(pagesHome, "atlas.pdf:p3")).text).toContain("deserts");
    // As PDF viewers and links write a page (s12 hostile #14: "did you mean atlas:atlas.pdf?").
    for (const ref of ["atlas:atlas.pdf#p3", "atlas:atlas.pdf#page=3"])
      expect((await readDocument(pagesHome, ref)).text).toContain("deserts");
    const missing = await refusal(readDocument(pagesHome, "atlas:atlas.pdf:p9"));
    expect(missing.message).toBe("atlas:atlas.pdf has no page 9 (3 pages)");
    expect(missing.hint).toBe("read a page between p1 and p3");
    expect((await refusal(readDocument(pagesHome, "atlas:atlas.pdf:p0"))).code).toBe("USAGE");
  });

  test("a note's page-marker comments make no pages: it is read by line, as search cites it (s20 review F6)", async () => {
    // The first marker was read as page 1: `:p1` printed page 5 and `:p5` was an error.
    for (const ref of ["atlas:excerpt.md:p1", "atlas:excerpt.md:p5"]) {
      const refused = await refusal(readDocument(pagesHome, ref));
      expect({ ref, message: refused.message, hint: refused.hint }).toEqual({
        ref,
        message: "atlas:excerpt.md has no pages",
        hint: "read it by line, e.g. `researcher get atlas:excerpt.md:1-40`",
      });
    }
    const found = await search(pagesHome, { query: "six text", mode: "bm25" });
    expect([found.results[0]!.path, found.results[0]!.page]).toEqual(["excerpt.md", null]);
    expect((await readDocument(pagesHome, "atlas:excerpt.md:9:1")).text).toBe("six text");
  });

  test("a page range and a docid with a place read those pages (s15 student #4)", async () => {
    const pages = await readDocument(pagesHome, "atlas:atlas.pdf:p2-3");
    expect(pages.text).toContain("glaciers");
    expect(pages.text).toContain("deserts");
    expect(pages.text).not.toContain("harbours");
    expect((await readDocument(pagesHome, "atlas:atlas.pdf:p2-p3")).text).toBe(pages.text);
    expect((await readDocument(pagesHome, "atlas:atlas.pdf:p1-1")).text).toBe((await readDocument(pagesHome, "atlas:atlas.pdf:p1")).text);
    const docid = (await readDocument(pagesHome, "atlas:atlas.pdf")).docid;
    expect((await readDocument(pagesHome, `${docid}:p2-3`)).text).toBe(pages.text);
    expect((await readDocument(pagesHome, `${docid}:p2`)).text).toBe((await readDocument(pagesHome, "atlas:atlas.pdf:p2")).text);
    expect((await readDocument(pagesHome, `${docid.slice(0, 8)}:2-2`)).text).toBe(
      (await readDocument(pagesHome, "atlas:atlas.pdf:2-2")).text,
    );
    const reversed = await refusal(readDocument(pagesHome, "atlas:atlas.pdf:p3-2"));
    expect([reversed.code, reversed.message, reversed.hint]).toEqual([
      "USAGE",
      "the page range p3-2 ends before it starts",
      "name the first page first: atlas:atlas.pdf:p2-3",
    ]);
    const past = await refusal(readDocument(pagesHome, "atlas:atlas.pdf:p2-9"));
    expect(past.message).toBe("atlas:atlas.pdf has no page 9 (3 pages)");
    expect((await refusal(readDocument(pagesHome, "atlas:atlas.pdf:p0-2"))).code).toBe("USAGE");
  });

  test("a read names the pages its lines are on, as a search result's fragment does; get --json too (s27 user U7)", async () => {
    const pages = async (ref: string, options = {}) => {
      const read = await readDocument(pagesHome, ref, options);
      return [read.page, read.page_end];
    };
    expect(await pages("atlas:atlas.pdf:p2")).toEqual([2, 2]);
    expect(await pages("atlas:atlas.pdf:p2-3")).toEqual([2, 3]);
    expect(await pages("atlas:atlas.pdf")).toEqual([1, 3]);
    const second = await readDocument(pagesHome, "atlas:atlas.pdf:p2");
    expect(await pages("atlas:atlas.pdf", { fromLine: second.from + 1 })).toEqual([2, 3]);
    expect(await pages("atlas:atlas.pdf", { fromLine: second.from, maxLines: 2 })).toEqual([2, 2]);
    // A note's marker comments make no pages, as its refs have none.
    expect(await pages("atlas:excerpt.md")).toEqual([null, null]);
    expect(await pages("atlas:code.md:2-4")).toEqual([null, null]);
    // A read a byte budget cuts ends on the page its last line is on.
    const whole = await readDocument(pagesHome, "atlas:atlas.pdf");
    const first = await readDocument(pagesHome, "atlas:atlas.pdf:p1");
    const throughMarker = `${first.text}\n${second.text.split("\n")[0]}`; // page 1, then page 2's marker line
    const cut = limitDocumentBytes(whole, Buffer.byteLength(throughMarker));
    expect([cut.truncated, cut.text, cut.page, cut.page_end]).toEqual([true, throughMarker, 1, 2]);
    expect(limitDocumentBytes(whole, Buffer.byteLength(first.text) - 2)).toMatchObject({ truncated: true, page: 1, page_end: 1 });
    const json = JSON.parse(runCli(["get", "atlas:atlas.pdf:p2-3", "--json"], { home: pagesHome }).stdout);
    expect(json).toMatchObject({ from: second.from, page: 2, page_end: 3 });
    expect(JSON.parse(runCli(["get", "atlas:code.md", "--json"], { home: pagesHome }).stdout)).toMatchObject({
      page: null,
      page_end: null,
    });
  });

  test("multi-get's text heads a part of a PDF with its pages, though no page marker is among its lines (s28 agent 1)", async () => {
    const second = await readDocument(pagesHome, "atlas:atlas.pdf:p2");
    const line = second.from + 2; // the page's text: its marker and a blank line before it
    const heading = (pattern: string) => runCli(["multi-get", pattern], { home: pagesHome }).stdout.split("\n")[0];
    expect(heading(`atlas:atlas.pdf:${line}-${line}`)).toBe(`==> atlas:atlas.pdf:${line}-${line} (p2) <==`);
    expect(heading(`atlas:atlas.pdf:${line - 4}-${line}`)).toBe(`==> atlas:atlas.pdf:${line - 4}-${line} (p1-2) <==`);
    expect(heading("atlas:atlas.pdf:p3")).toMatch(/^==> atlas:atlas\.pdf:\d+-\d+ \(p3\) <==$/);
    // A document read whole names no pages; one without pages, none.
    expect(heading("atlas:atlas.pdf")).toBe("==> atlas:atlas.pdf <==");
    expect(heading("atlas:code.md:2-4")).toBe("==> atlas:code.md:2-4 <==");
  });

  test("repo:path:from-to reads that line range", async () => {
    const range = await readDocument(pagesHome, "atlas:code.md:2-4");
    expect([range.from, range.to, range.text]).toEqual([2, 4, "two\nthree\nfour"]);
  });

  test("a page or range in the ref is what is read: a first line and a line count read inside it (s11 agent #1)", async () => {
    // Continuing a cut page with from_line read on past the page, to the end of the document.
    const page = await readDocument(pagesHome, "atlas:atlas.pdf:p2");
    const inside = await readDocument(pagesHome, "atlas:atlas.pdf:p2", { fromLine: page.from + 1 });
    expect([inside.from, inside.to, inside.truncated]).toEqual([page.from + 1, page.to, false]);
    expect(inside.text).not.toContain("deserts");
    const range = await readDocument(pagesHome, "atlas:code.md:2-4", { fromLine: 3 });
    expect([range.from, range.to, range.text]).toEqual([3, 4, "three\nfour"]);
    expect((await readDocument(pagesHome, "atlas:code.md:2-4", { maxLines: 10 })).to).toBe(4);
    expect((await readDocument(pagesHome, "atlas:code.md:2:3", { fromLine: 4 })).text).toBe("four");
    const outside = await refusal(readDocument(pagesHome, "atlas:code.md:2-4", { fromLine: 5 }));
    expect([outside.code, outside.message]).toEqual(["INVALID_INPUT", "line 5 is outside atlas:code.md:2-4 (lines 2–4)"]);
    expect(outside.hint).toBe("read from a line between 2 and 4, or read atlas:code.md:5 for the lines from there on");
    // Past the document's end, reading on from there is no way out (s25 scripts L5).
    const lines = (await readDocument(pagesHome, "atlas:code.md")).to;
    const past = await refusal(readDocument(pagesHome, "atlas:code.md:2-4", { fromLine: lines + 10 }));
    expect(past.hint).toBe(`read from a line between 2 and 4 (the document has ${lines} lines)`);
    // A read returns all it was asked for: `truncated` is only ever a cut by a byte budget (MCP's max_bytes).
    expect(page.truncated).toBe(false);
  });
});

test("a name decomposed (NFD) on disk is read and removed by its composed (NFC) spelling, as typed (s14 hostile #1)", async () => {
  const home = tempDir();
  const dir = tempDir();
  const decomposed = "résumé notes.md".normalize("NFD");
  writeTree(dir, { [decomposed]: "# Résumé\n\nresumeword here\n", [`${"Café".normalize("NFD")}/menu.md`]: "# Menu\n\nmenuword\n" });
  const repo = registerRepository(home, { name: "nd", path: dir, embed: false });
  await indexRepository(home, repo);
  const typed = "résumé notes.md".normalize("NFC");
  expect(typed).not.toBe(decomposed);
  const read = await readDocument(home, `nd:${typed}`);
  expect(read.path).toBe(decomposed);
  expect(read.text).toContain("resumeword");
  expect((await readDocument(home, `nd:${"Café".normalize("NFC")}/menu.md:3`)).text).toBe("menuword");
  await removeDocument(repo, typed);
  expect(await refusal(readDocument(home, `nd:${decomposed}`))).toMatchObject({ code: "DOCUMENT_NOT_FOUND" });
});

test("a name with control characters is read by the escaped form ls and text results print (s14 hostile #9)", async () => {
  const home = tempDir();
  const dir = tempDir();
  writeTree(dir, {
    "two\nlines.md": "# Two\n\nnewlineword\n",
    "bell\u0007.md": "# Bell\n\nbellword\n",
    "plain\\n.md": "# Plain\n\nbackslashword\n",
  });
  await indexRepository(home, registerRepository(home, { name: "cc", path: dir, embed: false }));
  expect((await readDocument(home, "cc:two\\nlines.md")).path).toBe("two\nlines.md");
  expect((await readDocument(home, "cc:bell\\x07.md")).text).toContain("bellword");
  expect((await readDocument(home, "cc:plain\\n.md")).text).toContain("backslashword"); // a name's own backslash first
});

test.skipIf(!canMount("documents.test.ts", "the far-future mtime test"))(
  "a file whose mtime is past what a Date can hold is listed and read, its time held at the limit (s15 hostile #3)",
  async () => {
    // ext4 clamps times at 2446; tmpfs keeps 64 bits, as btrfs and ZFS do and tar archives may ask for.
    const dir = tempDir();
    expect(mountTmpfs(dir)).toBe(true);
    try {
      writeTree(dir, { "a.md": "# A\n\nfarword\n", "far.md": "# Far\n\nfarword\n" });
      expect(Bun.spawnSync(["touch", "-d", "@9000000000000", join(dir, "far.md")]).exitCode).toBe(0);
      const home = tempDir();
      await indexRepository(home, registerRepository(home, { name: "far", path: dir, embed: false }));
      const listed = listDocuments(home, { repositories: ["far"] }).documents;
      expect(listed.map((d) => [d.path, d.modified])).toEqual([
        ["a.md", expect.stringMatching(/^20\d\d-/)],
        ["far.md", "+275760-09-13T00:00:00.000Z"],
      ]);
      expect((await readDocument(home, "far:far.md")).text).toContain("farword");
    } finally {
      unmount(dir);
    }
  },
);

test("a multi-get that skips many documents lists the first 100 and counts the rest, in text and JSON (s19 hostile #2)", async () => {
  // A glob over 200,000 notes with max_bytes 1000 answered 51 MB of "skipped" lines.
  const home = tempDir();
  const docs = tempDir();
  writeTree(
    docs,
    Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`n${String(i).padStart(3, "0")}.md`, `# N${i}\n\nnote ${i}\n`])),
  );
  await indexRepository(home, registerRepository(home, { name: "m", path: docs, embed: false }));
  const found = await readDocuments(home, "m:*.md", { maxBytesPerDocument: 5 });
  expect(found.documents.length + found.skipped_total).toBe(250);
  expect(found.skipped).toHaveLength(MAX_SKIPPED_LISTED);
  expect(found.skipped_total).toBe(250);
  const cli = runCli(["multi-get", "m:*.md", "--max-bytes", "5"], { home });
  expect(cli.code).toBe(0);
  expect(cli.stdout.match(/ skipped: /g)).toHaveLength(MAX_SKIPPED_LISTED);
  expect(cli.stdout).toContain(`==> and ${found.skipped_total - MAX_SKIPPED_LISTED} more skipped, not listed: narrow the pattern <==`);
  const json = JSON.parse(runCli(["multi-get", "m:*.md", "--max-bytes", "5", "--json"], { home }).stdout);
  expect([json.skipped.length, json.skipped_total]).toEqual([MAX_SKIPPED_LISTED, found.skipped_total]);
});

test("a folder whose name holds a comma: the multi-get that get's hint names reads it, its comma escaped (s23 hostile H8)", async () => {
  // The hint's `multi-get r:dir,1/` was a list of `r:dir` and `1/`, which read nothing.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "dir,1/a.md": "# A\n\nalpha\n", "br[a]/b.md": "# B\n\nbeta\n", "bra/c.md": "# C\n\ngamma\n" });
  await indexRepository(home, registerRepository(home, { name: "r", path: docs, embed: false }));
  const refused = await refusal(async () => readDocument(home, "r:dir,1"));
  expect(refused.hint).toBe("`researcher multi-get 'r:dir\\,1/'` reads them, `researcher ls 'r:dir,1/'` lists them");
  expect((await readDocuments(home, "r:dir\\,1/")).documents.map((d) => d.path)).toEqual(["dir,1/a.md"]);
  // Glob syntax too: `br[a]/` read bra/ as well (s23 retest N4).
  const glob = await refusal(async () => readDocument(home, "r:br[a]"));
  expect(glob.hint).toStartWith("`researcher multi-get 'r:br\\[a\\]/'` reads them");
  expect((await readDocuments(home, "r:br\\[a\\]/")).documents.map((d) => d.path)).toEqual(["br[a]/b.md"]);
});

test("a pattern of one part in a repository whose index is damaged fails as get does; in a list it is listed (s23 retest N2)", async () => {
  // Listed as skipped, it hid the INDEX_CORRUPT a script alerts on.
  const home = tempDir();
  const [a, b] = [tempDir(), tempDir()];
  writeTree(a, { "a.md": "# A\n\nalpha\n" });
  writeTree(b, { "b.md": "# B\n\nbeta\n" });
  await indexRepository(home, registerRepository(home, { name: "a", path: a, embed: false }));
  const damaged = registerRepository(home, { name: "b", path: b, embed: false });
  await indexRepository(home, damaged);
  writeFileSync(Store.dbPath(damaged.dir), "not a database at all, but long enough to be read as one: ".repeat(100));
  for (const pattern of ["b:*", "b:b.md"])
    expect({ pattern, code: (await refusal(readDocuments(home, pattern))).code }).toEqual({ pattern, code: "INDEX_CORRUPT" });
  const listed = await readDocuments(home, "a:*,b:*");
  expect([listed.documents.map((d) => d.path), listed.skipped.map((s) => s.path)]).toEqual([["a.md"], ["b:*"]]);
});

test("multi-get of two pages of one PDF reads the second when it fits, after the first did not; a skip names its page (s24 retest2 M1)", async () => {
  const home = tempDir();
  const dir = tempDir();
  const long = "The first page holds a long paragraph about trace trees and their compilation, line after line of it.";
  writeTree(dir, { "x.pdf": await writePdf([paragraph(`${long} ${long} ${long}`, 72), paragraph("Page two is short.", 72)]) });
  await indexRepository(home, registerRepository(home, { name: "p", path: dir, embed: false }));
  const found = await readDocuments(home, "p:x.pdf:p1,p:x.pdf:p2", { maxBytes: 200 });
  expect(found.documents.map((d) => [d.from, d.to, d.text.includes("Page two is short.")])).toEqual([[5, 7, true]]);
  expect(found.skipped).toEqual([
    { repository: "p", path: "x.pdf", reason: expect.stringContaining("read it by itself with `researcher get p:x.pdf:1-4`") },
  ]);
  // Another page left unread names that page, not the whole document.
  const three = await readDocuments(home, "p:x.pdf:p1,p:x.pdf:p2", { maxBytes: 10 });
  expect(three.skipped.map((s) => s.reason)).toEqual([
    expect.stringContaining("`researcher get p:x.pdf:1-4`"),
    expect.stringContaining("`researcher get p:x.pdf:5-7`"),
  ]);
});

test("a read of a page whose text reads as symbols says so before the text, and only then (s26 agent F7)", async () => {
  // An agent reading the symbols of a font without a character map quoted them, or tried to decode them.
  const home = tempDir();
  const docs = tempDir();
  const junk = Array.from({ length: 8 }, (_, i) => ({ text: `! %3* 1 % % % ( -.45)& % ${i} & % 3* % %- 7 % -9 &`, top: 72 + i * 14 }));
  writeTree(docs, { "tam.pdf": await writePdf([paragraph("The technology acceptance model.", 72), junk]) });
  const repo = registerRepository(home, { name: "p", path: docs, embed: false });
  await indexRepository(home, repo);
  const warning =
    "warning: p:tam.pdf: the text of page 2 reads as symbols, not words (fonts without a character map, or a scan OCR reads as gibberish): its words are missing\n";
  expect((await readDocument(home, "p:tam.pdf:p2")).garbled_pages).toEqual([2]);
  expect((await readDocument(home, "p:tam.pdf:p1")).garbled_pages).toBeUndefined();
  expect(runCli(["get", "p:tam.pdf:p2"], { home }).stderr).toBe(warning);
  expect(runCli(["get", "p:tam.pdf:p1"], { home }).stderr).toBe("");
  // A read cut before page 2 by a byte budget (MCP max_bytes) shows none of it, and says none.
  const whole = await readDocument(home, "p:tam.pdf");
  expect(whole.garbled_pages).toEqual([2]);
  expect(limitDocumentBytes(whole, 40)).toMatchObject({ page_end: 1, garbled_pages: undefined });
  // In JSON too (`get --json` and REST left it out, though a read carries it).
  expect(JSON.parse(runCli(["get", "p:tam.pdf:p2", "--json"], { home }).stdout)).toMatchObject({
    page: 2,
    page_end: 2,
    garbled_pages: [2],
  });
  expect(JSON.parse(runCli(["get", "p:tam.pdf:p1", "--json"], { home }).stdout).garbled_pages).toBeUndefined();
  expect(runCli(["get", "p:tam.pdf"], { home }).stderr).toBe(warning);
});

testShared(
  "a one-page image OCR reads as gibberish has no page marker: its read is page 1's, warned of with the OCR cause named (s27 review F4)",
  async () => {
    // Mirrored (a transparency scanned from behind): no turn reads it, so garbled_pages is [1] (convert-image.test.ts).
    const { data, width, height } = await scannedStrip(join(SHARED, SCANNED, "scan-01.pdf"), 260);
    for (let y = 0; y < height; y++) data.subarray(y * width, (y + 1) * width).reverse();
    const home = tempDir();
    const docs = tempDir();
    writeFileSync(join(docs, "mirrored.png"), encodePng({ width, height, data, channels: 1, depth: 8 }));
    await indexRepository(home, registerRepository(home, { name: "i", path: docs, fileTypes: ["png"], embed: false }));
    expect((await readDocument(home, "i:mirrored.png")).garbled_pages).toEqual([1]);
    expect((await readDocument(home, "i:mirrored.png:2-3")).garbled_pages).toEqual([1]);
    // Cut by a byte budget (MCP max_bytes), exactly when the text is the gibberish, the warning stays (s28 code 5).
    expect(limitDocumentBytes(await readDocument(home, "i:mirrored.png"), 20)).toMatchObject({ truncated: true, garbled_pages: [1] });
    expect(runCli(["get", "i:mirrored.png"], { home }).stderr).toBe(
      "warning: i:mirrored.png: the text of page 1 reads as symbols, not words (fonts without a character map, or a scan OCR reads as gibberish): its words are missing\n",
    );
  },
  240_000,
);

test("a document deleted since it was indexed is no document to read, said without the server's path (s27b agent F4)", async () => {
  // It was FILE_UNREADABLE (REST 422) with the raw ENOENT and the absolute path, while a watch dropped it a moment later.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "gone.md": "# Gone\n\nbilby vanishing words\n", "kept.md": "# Kept\n\nstays\n" });
  const repo = registerRepository(home, { name: "notes", path: docs, embed: false });
  await indexRepository(home, repo);
  rmSync(join(docs, "gone.md"));
  const error = await refusal(readDocument(home, "notes:gone.md:3"));
  expect({ code: error.code, message: error.message, hint: error.hint }).toEqual({
    code: "DOCUMENT_NOT_FOUND",
    message: "notes:gone.md was deleted since it was indexed",
    hint: "search again for where its text went; `researcher index notes` drops it from the index",
  });
  expect(runCli(["get", "notes:gone.md"], { home })).toMatchObject({
    code: 1,
    stderr: expect.not.stringContaining(docs),
  });
});

test("a listing of a repository no index run has finished says so, as search does: the run to wait for, or to run (s27b agent F8)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n" });
  const repo = registerRepository(home, { name: "k", path: docs, embed: false });
  Store.open(repo.dir, { create: true }).close(); // a first run before its first batch
  await indexRepository(home, registerRepository(home, { name: "other", path: tempDir(), embed: false }));
  const waiting = `wait for it to finish (process ${process.pid}): \`researcher status k\` says when it has`;
  const running = (check: () => void) => {
    const release = acquireWriterLock(repo.dir, repo.name, "index"); // the run, as another process holds it
    try {
      check();
    } finally {
      release();
    }
  };
  running(() => {
    // Nothing in yet: an error when named, left out with why from a listing of all (it was an empty listing).
    expect(() => listDocuments(home, { repositories: ["k"] })).toThrow(
      expect.objectContaining({ code: "NOT_INDEXED", hint: waiting }) as unknown as Error,
    );
    expect(listDocuments(home).skipped).toEqual([expect.objectContaining({ repository: "k", code: "NOT_INDEXED", hint: waiting })]);
  });
  await indexFiles(home, repo, ["a.md"]); // as its first batch
  running(() => {
    const partial = listDocuments(home, { repositories: ["k"] });
    expect(partial.documents.map((d) => d.path)).toEqual(["a.md"]);
    expect(partial.warnings).toEqual([
      {
        repository: "k",
        code: "NOT_INDEXED",
        message: "its first index run is under way: only the 1 file indexed so far is listed",
        hint: waiting,
      },
    ]);
  });
  // The run gone without finishing: the files indexed are listed, with the run to start.
  expect(listDocuments(home, { repositories: ["k"] }).warnings).toEqual([
    expect.objectContaining({
      message: "not indexed whole yet: only the 1 file indexed so far (on its own, or by a first run cut short) is listed",
      hint: "run `researcher index k`",
    }),
  ]);
  await indexRepository(home, repo);
  expect(listDocuments(home, { repositories: ["k"] })).toMatchObject({ warnings: [], documents: [{ path: "a.md" }, { path: "b.md" }] });
});

test("get, multi-get and repos-for of a repository no index run has finished say so, as search and ls do (s28 hostile F3)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n", "b.md": "# B\n\nbeta words\n" });
  const repo = registerRepository(home, { name: "k", path: docs, embed: false });
  Store.open(repo.dir, { create: true }).close(); // a first run before its first batch
  const waiting = `wait for it to finish (process ${process.pid}): \`researcher status k\` says when it has`;
  const running = async (check: () => Promise<void>) => {
    const release = acquireWriterLock(repo.dir, repo.name, "index"); // the run, as another process holds it
    try {
      await check();
    } finally {
      release();
    }
  };
  const refusal = (read: Promise<unknown>) =>
    read.then(
      () => undefined,
      (error: ResearcherError) => error,
    );
  await running(async () => {
    // Nothing in yet: the read is refused as search and ls refuse the repository, not as a document that failed.
    expect(await refusal(readDocument(home, "k:b.md"))).toMatchObject({ code: "NOT_INDEXED", hint: waiting });
  });
  await indexFiles(home, repo, ["a.md"]); // as its first batch
  await running(async () => {
    const notYet = {
      code: "DOCUMENT_NOT_FOUND",
      message: "k:b.md is not indexed: the first index run of k is under way and may not have reached it yet (1 file indexed so far)",
      // The wait first: b.md not reached yet is no typo for a.md.
      hint: `${waiting}; or did you mean k:a.md?`,
    };
    expect(await refusal(readDocument(home, "k:b.md"))).toMatchObject(notYet);
    expect(() => documentInfo(home, "k:b.md")).toThrow(expect.objectContaining(notYet) as unknown as Error);
    // A bare path no repository holds names the run as multi-get warns of it: "no repository holds" read as not there.
    expect(await refusal(readDocument(home, "b.md"))).toMatchObject({
      code: "DOCUMENT_NOT_FOUND",
      message: "no repository holds b.md so far; k: its first index run is under way: only the 1 file indexed so far is looked in",
      hint: `${waiting}; or did you mean k:a.md?`,
    });
    const read = await readDocuments(home, "k:*");
    expect(read.documents.map((d) => d.path)).toEqual(["a.md"]);
    expect(read.warnings).toEqual([
      {
        repository: "k",
        code: "NOT_INDEXED",
        message: "its first index run is under way: only the 1 file indexed so far is read",
        hint: waiting,
      },
    ]);
    const [ranked] = await repositoriesFor(home, "words");
    expect(ranked).toMatchObject({
      repository: "k",
      matched: 1,
      warning: {
        code: "NOT_INDEXED",
        message: "its first index run is under way: only the 1 file indexed so far is searched",
        hint: waiting,
      },
    });
  });
  // The run cut short (killed): the run to start, said the same ways.
  const run = "run `researcher index k`";
  expect(await refusal(readDocument(home, "k:b.md"))).toMatchObject({
    message: "k:b.md is not indexed: k is not indexed whole yet (1 file indexed so far, on its own or by a first run cut short)",
    hint: `${run}; or did you mean k:a.md?`,
  });
  expect((await readDocuments(home, "k:b.md,k:a.md")).warnings).toEqual([expect.objectContaining({ repository: "k", hint: run })]);
  expect(await refusal(readDocument(home, "b.md"))).toMatchObject({
    message:
      "no repository holds b.md so far; k: not indexed whole yet: only the 1 file indexed so far (on its own, or by a first run cut short) is looked in",
    hint: `${run}; or did you mean k:a.md?`,
  });
  expect((await repositoriesFor(home, "words"))[0]?.warning).toMatchObject({ hint: run });
  await indexRepository(home, repo);
  expect((await readDocument(home, "k:b.md")).text).toContain("beta");
  expect(await refusal(readDocument(home, "k:c.md"))).toMatchObject({ message: "k:c.md is not an indexed document" });
  expect(await refusal(readDocument(home, "c.md"))).toMatchObject({ message: "no repository holds c.md" });
  expect((await readDocuments(home, "k:*")).warnings).toBeUndefined();
  expect((await repositoriesFor(home, "words"))[0]?.warning).toBeUndefined();
});

test("a title is one line whatever it comes from: U+2028 or U+2029 in a setext heading or a front-matter title is a space (s30b N4)", () => {
  // An ATX heading read it as a space (s30 hostile F6); a setext heading and a front-matter title kept it.
  const [home, docs] = [tempDir(), tempDir()];
  writeTree(docs, {
    "atx.md": "# Atx\u2028title\n\nforgeone\n",
    "st.md": "Setext\u2028title\n======\n\nforgethree\n",
    "st2.md": "Setext\u2029two\n---\n\nforgefour\n\nSub\u2028part\n---\n\nforgeseven\n",
    "fm.md": '---\ntitle: "FM\u2028title"\n---\nforgefive\n',
    "fm2.md": '---\ntitle: "FM\\nnewline\u2029two"\n---\nforgesix\n',
  });
  expect(runCli(["repo", "add", "t", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "t"], { home }).code).toBe(0);
  const title = (file: string) => JSON.parse(runCli(["get", `t:${file}`, "--json"], { home }).stdout).title;
  expect(["atx.md", "st.md", "st2.md", "fm.md", "fm2.md"].map(title)).toEqual([
    "Atx title",
    "Setext title",
    "Setext two",
    "FM title",
    "FM newline two",
  ]);
  // A setext heading heads its section as an ATX one does.
  expect(JSON.parse(runCli(["search", "forgeseven", "--json"], { home }).stdout).results[0].heading).toBe("Sub part");
});
