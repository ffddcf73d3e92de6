import { describe, expect, test } from "bun:test";
import { statSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  discoverFiles,
  IgnoreRules,
  isCandidate,
  isCandidateFolder,
  leftOutBecause,
  leftOutOfIndex,
  parseIgnoreLine,
  rulesIndexed,
  stampOf,
} from "../src/index/discover.ts";
import { seeded } from "../src/random.ts";
import { scriptLanguage } from "../src/convert/code-languages.ts";
import { indexFiles, indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { planChanges } from "../src/index/plan.ts";
import { verifyRepository } from "../src/index/verify.ts";
import { listDocuments, readDocument } from "../src/search/read-document.ts";
import { readDocuments } from "../src/search/multi-get.ts";
import { search } from "../src/search/search.ts";
import { tempDir, writeTree } from "./helpers.ts";

describe("discoverFiles", () => {
  test("file types, excludes, hidden folders and symlinks", () => {
    const root = tempDir();
    const outside = tempDir();
    writeTree(outside, { "secret.md": "outside" });
    writeTree(root, {
      "a.md": "a",
      "b.TXT": "b",
      "c.pdf": "c",
      "drafts/d.md": "d",
      "notes/drafts/e.md": "e",
      "notes/f.md": "f",
      ".obsidian/g.md": "g",
      "node_modules/h.md": "h",
      "keep/tmp.md": "k",
    });
    symlinkSync(join(outside, "secret.md"), join(root, "link-out.md"));
    symlinkSync(join(root, "a.md"), join(root, "link-in.md"));
    symlinkSync(root, join(root, "loop"));
    const files = discoverFiles(root, { fileTypes: ["md", "txt"], exclude: ["drafts", "*.tmp.md"] }).files;
    expect(files.map((f) => f.path)).toEqual(["a.md", "b.TXT", "keep/tmp.md", "link-in.md", "notes/f.md"]);
    expect(files[0]!.size).toBe(1);
  });

  test("links that lead nowhere are reported with their target, not left out silently", () => {
    const root = tempDir();
    writeTree(root, { "a.md": "a" });
    symlinkSync("missing.md", join(root, "dangling.md"));
    symlinkSync("loop-b.md", join(root, "loop-a.md"));
    symlinkSync("loop-a.md", join(root, "loop-b.md"));
    const found = discoverFiles(root, { fileTypes: ["md"], exclude: [] });
    expect(found.files.map((f) => f.path)).toEqual(["a.md"]);
    expect(found.problems).toEqual([
      { path: "dangling.md", reason: "a link to missing.md, which does not exist" },
      { path: "loop-a.md", reason: "a link to loop-b.md, which loops" },
      { path: "loop-b.md", reason: "a link to loop-a.md, which loops" },
    ]);
    // A chain past the system's 40 links is ELOOP too, but it does not loop (s15 hostile #8).
    const chain = tempDir();
    writeTree(chain, { "a.md": "a" });
    for (let i = 1; i <= 45; i++) symlinkSync(i === 1 ? "a.md" : `l${i - 1}.md`, join(chain, `l${i}.md`));
    const long = discoverFiles(chain, { fileTypes: ["md"], exclude: [] }).problems;
    expect(long).toContainEqual({ path: "l45.md", reason: "a link to l44.md: a chain of links too long to follow (over 40)" });
    expect(long.some((p) => p.reason.includes("loops"))).toBe(false);
  });

  test("generated and vendored code is skipped with its rule in repositories that index code; documents keep build/", () => {
    const root = tempDir();
    writeTree(root, {
      "src/app.ts": "",
      "src/app.min.js": "",
      "dist/app.js": "",
      "build/notes.md": "",
      "target/x.rs": "",
      "vendor/lib.go": "",
      "node_modules/p/index.js": "",
      "pkg/__pycache__/m.py": "",
    });
    const code = discoverFiles(root, { fileTypes: ["md", "ts", "js", "rs", "go", "py"], exclude: [] });
    expect(code.files.map((f) => f.path)).toEqual(["src/app.ts"]);
    expect(code.skippedGenerated).toEqual({
      "dist/": 1,
      "build/": 1,
      "target/": 1,
      "vendor/": 1,
      "node_modules/": 1,
      "__pycache__/": 1,
      "*.min.js": 1,
    });
    expect(isCandidate("dist/app.js", { fileTypes: ["js"], exclude: [] })).toBe(false);
    expect(isCandidate("src/app.min.js", { fileTypes: ["js"], exclude: [] })).toBe(false);
    const documents = discoverFiles(root, { fileTypes: ["md"], exclude: [] });
    expect(documents.files.map((f) => f.path)).toEqual(["build/notes.md"]);
    expect(isCandidate("build/notes.md", { fileTypes: ["md"], exclude: [] })).toBe(true);
  });

  test("third_party/ is vendored code, out/ and generated/ are not; a `!` line keeps it (s27 code F3)", () => {
    const root = tempDir();
    writeTree(root, {
      "src/node.js": "",
      "third_party/csv.py": "",
      "out/o.js": "", // tsc's outDir, but a source or notes folder as often: an ignore file's `out/` leaves it out
      "generated/gen.js": "", // the only code of its kind (protobuf stubs), no copy of the source
    });
    const code = { path: root, fileTypes: ["js", "py", "md"], exclude: [] };
    expect(discoverFiles(root, code).files.map((f) => f.path)).toEqual(["generated/gen.js", "out/o.js", "src/node.js"]);
    expect(discoverFiles(root, code).skippedGenerated).toEqual({ "third_party/": 1 });
    expect(leftOutBecause("third_party/csv.py", code)).toBe("third_party/ is generated or vendored code, left out");
    writeTree(root, { ".ignore": "!third_party/\n" });
    expect(discoverFiles(root, code).files.map((f) => f.path)).toContain("third_party/csv.py");
    expect(leftOutBecause("third_party/csv.py", code)).toBeNull();
  });

  test("coverage/ is left out when a coverage tool's files are in it, kept as prose or source otherwise (s27b retest N3)", () => {
    const root = tempDir();
    writeTree(root, {
      "src/node.js": "",
      "coverage/lcov-report/sorter.js": "", // Istanbul (Jest, nyc)
      "coverage/lcov-report/index.html": "",
      "web/coverage/jacoco.xml": "", // JaCoCo
      "web/coverage/index.html": "",
      "docs/coverage/policy.md": "# Coverage policy", // no report: the user's pages
      "lib/coverage/merge.js": "", // a source folder of that name
      "lib/coverage/lcov-report": "", // a file named as a report's folder marks nothing
      "tools/lcov-report/lcov.info": "", // a report's file marks a folder named coverage only
    });
    const code = { path: root, fileTypes: ["js", "html", "xml", "info", "md"], exclude: [] };
    const found = discoverFiles(root, code);
    expect(found.files.map((f) => f.path)).toEqual([
      "docs/coverage/policy.md",
      "lib/coverage/merge.js",
      "src/node.js",
      "tools/lcov-report/lcov.info",
    ]);
    expect(found.skippedGenerated).toEqual({ "coverage/ with lcov-report/": 1, "coverage/ with jacoco.xml": 1 });
    expect(leftOutBecause("coverage/lcov-report/sorter.js", code)).toBe(
      "coverage/ holds lcov-report/: generated or vendored code, left out",
    );
    expect(leftOutBecause("docs/coverage/policy.md", code)).toBeNull();
    // A repository of documents keeps a report too.
    expect(discoverFiles(root, { path: root, fileTypes: ["html"], exclude: [] }).files.map((f) => f.path)).toEqual([
      "coverage/lcov-report/index.html",
      "web/coverage/index.html",
    ]);
    writeTree(root, { ".ignore": "!coverage/\n" });
    expect(leftOutBecause("coverage/lcov-report/sorter.js", code)).toBeNull();
  });

  test("JavaScript minified under another name than *.min.js is told by its lines and spaces; a `!` line keeps it (s27 code F3)", async () => {
    const root = tempDir();
    const statement = (i: number) => `var a${i}=function(b){return b+${i}};`;
    const minified = `/*! bundle v1 | MIT */\n${Array.from({ length: 3 }, (_, line) => Array.from({ length: 400 }, (_, i) => statement(line * 400 + i)).join("")).join("\n")}\n`;
    const source = Array.from({ length: 300 }, (_, i) => `export function f${i}(b) {\n  return b + ${i};\n}\n`).join("\n");
    writeTree(root, {
      "public/js/app.bundle.js": minified,
      "lib/bundle.cjs": minified,
      "src/app.js": source,
      // A long line among ordinary code (an inlined asset) is no bundle, nor is a short file of one line.
      "src/icon.js": `${source}export const icon = "data:image/png;base64,${"A".repeat(20_000)}";\n`,
      "src/short.js": `module.exports = {${Array.from({ length: 100 }, (_, i) => `k${i}: ${i}`).join(", ")}};`,
      // Long lines of words, written: a table of strings keeps its spaces, a minifier takes them out (s27b retest N3).
      "src/strings.js": `export const S = {\n${Array.from({ length: 50 }, (_, i) => `  k${i}: "${"word ".repeat(100)}",\n`).join("")}};\n`,
      "notes/bundle.md": minified, // a document is never code, whatever its lines
    });
    const options = { path: root, fileTypes: ["js", "cjs", "md"], exclude: [] };
    // Its content decides, looked at as a run plans to read the file (new, or changed): not by the walk.
    const plan = planChanges(discoverFiles(root, options), new Map());
    expect(plan.added.map((f) => f.path)).toEqual(["notes/bundle.md", "src/app.js", "src/icon.js", "src/short.js", "src/strings.js"]);
    expect(plan.generated).toEqual({ "minified *.js": 2 });
    const why = "public/js/app.bundle.js is minified: its lines average over 400 characters, with few spaces (generated code, left out)";
    expect(leftOutBecause("public/js/app.bundle.js", options)).toBe(why);
    expect(leftOutBecause("src/icon.js", options)).toBeNull();
    expect(leftOutBecause("src/strings.js", options)).toBeNull();
    // Indexed, the summary counts it, and `get` of it names the rule.
    const home = tempDir();
    const repo = registerRepository(home, { name: "web", path: root, embed: false, fileTypes: ["js", "cjs", "md"] });
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 5, skipped_generated: { "minified *.js": 2 } });
    await expect(readDocument(home, "web:public/js/app.bundle.js", { leftOut: leftOutOfIndex })).rejects.toThrow(
      `web:public/js/app.bundle.js is not indexed: ${why}`,
    );
    writeTree(root, { "public/.ignore": "!app.bundle.js\n" });
    expect(planChanges(discoverFiles(root, options), new Map()).added.map((f) => f.path)).toContain("public/js/app.bundle.js");
    expect(leftOutBecause("public/js/app.bundle.js", options)).toBeNull();
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1, skipped_generated: { "minified *.js": 1 } });
  });

  test("an unchanged JavaScript file is not opened to tell whether it is minified: only a new or changed one is (s28 code F2)", async () => {
    // Every .js of 4 KiB or more was read on every run, unchanged or not: 3,000 files took the walk 2 s, not 40 ms.
    // An indexed file given minified bytes, with its stamp as the index holds it, shows whether the planner reads it.
    const root = tempDir();
    const source = Array.from({ length: 300 }, (_, i) => `export function f${i}(b) {\n  return b + ${i};\n}\n`).join("\n");
    const minified = `${Array.from({ length: 1000 }, (_, i) => `var a${i}=function(b){return b+${i}};`)
      .join("")
      .slice(0, source.length - 1)}\n`;
    expect(minified.length).toBe(source.length);
    writeTree(root, { "src/app.js": source });
    const file = join(root, "src/app.js");
    const old = new Date(Date.now() - 3_600_000); // no racy stamp: the one recorded is the file's
    utimesSync(file, old, old);
    const home = tempDir();
    const repo = registerRepository(home, { name: "code", path: root, embed: false, fileTypes: ["js"] });
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1 });
    writeFileSync(file, minified);
    utimesSync(file, old, old);
    const stored = new Map([["src/app.js", stampOf(statSync(file))]]);
    expect(planChanges(discoverFiles(root, { fileTypes: ["js"], exclude: [] }), stored)).toMatchObject({
      unchanged: 1,
      gone: [],
      generated: {},
    });
    // Changed (rewritten in place, its size and mtime put back: s28 hostile F1), it is read, and left out: its
    // document goes, and `verify` said so first.
    expect((await verifyRepository(repo)).problems.map((p) => p.detail)).toEqual(["since the last run: 1 gone (src/app.js)"]);
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0, removed: 1, skipped_generated: { "minified *.js": 1 } });
    expect((await verifyRepository(repo)).problems).toEqual([]);
  });

  test("a browser-saved page's <page>_files/ beside its <page>.html is left out and counted, in every repository; a `!` line keeps it (s26 user F5)", async () => {
    // "Save page as… complete": the page, and beside it its styles, scripts and iframes (an ad ranked first).
    const page =
      "<html><head><title>HashMap - Rust</title></head><body><main><h1>Struct HashMap</h1><p>By default uses SipHash 1-3, resistant to HashDoS attacks.</p></main></body></html>";
    const ad = "<html><head><title></title></head><body><div>Sponsored: Buy cheap SipHash hosting now!</div></body></html>";
    const root = tempDir();
    writeTree(root, {
      "Rust Docs.html": page,
      "Rust Docs_files/saved_resource.html": ad,
      "Rust Docs_files/rustdoc.css": "body{}",
      "old/Report.htm": "<p>An old report</p>",
      "old/Report_files/frame.html": ad,
      "upper/PAGE.HTML": "<p>An upper-case page</p>",
      "upper/PAGE_files/frame.html": ad,
      "x/Doc.xhtml": "<p>An XHTML page</p>",
      "x/Doc_files/frame.html": ad,
      // A folder of that name without its page beside it is the user's; so is one beside a page of another name.
      "exports_files/list.html": "<p>kept</p>",
      "Other_files/note.html": "<p>kept too</p>",
      "Others.html": "<p>another page</p>",
    });
    const options = { path: root, fileTypes: ["html", "htm", "xhtml"], exclude: [] };
    const found = discoverFiles(root, options);
    expect(found.files.map((f) => f.path)).toEqual([
      "Other_files/note.html",
      "Others.html",
      "Rust Docs.html",
      "exports_files/list.html",
      "old/Report.htm",
      "upper/PAGE.HTML",
      "x/Doc.xhtml",
    ]);
    expect(found.skippedGenerated).toEqual({ "<page>_files/ of a saved <page>.html": 4 });
    expect(found.skippedTypes).toEqual({}); // its .css is not counted as a type left out either
    // One path at a time (a watch event, add_to_index) is judged alike.
    expect(leftOutBecause("Rust Docs_files/saved_resource.html", options)).toBe(
      "Rust Docs_files/ holds the files of the web page saved beside it, left out",
    );
    expect(leftOutBecause("old/Report_files/frame.html", options)).toBe(
      "old/Report_files/ holds the files of the web page saved beside it, left out",
    );
    expect(leftOutBecause("exports_files/list.html", options)).toBeNull();
    expect(isCandidateFolder("Rust Docs_files", options)).toBe(false);
    expect(isCandidateFolder("exports_files", options)).toBe(true);
    // Indexed, the page alone answers, and the summary says why the folder is not in.
    const home = tempDir();
    const repo = registerRepository(home, { name: "web", path: root, embed: false, fileTypes: ["html", "htm", "xhtml"] });
    expect(await indexRepository(home, repo)).toMatchObject({
      indexed: 7,
      skipped_generated: { "<page>_files/ of a saved <page>.html": 4 },
    });
    expect((await search(home, { query: "siphash", limit: 10 })).results.map((r) => r.path)).toEqual(["Rust Docs.html"]);
    await expect(indexFiles(home, repo, ["Rust Docs_files/saved_resource.html"])).rejects.toThrow(
      "'Rust Docs_files/saved_resource.html' is not a file repository 'web' indexes: Rust Docs_files/ holds the files of the web page saved beside it, left out",
    );
    // An ignore file's `!` line naming the folder keeps it, as it keeps a `build/` of source.
    writeTree(root, { ".ignore": "!Rust Docs_files/\n" });
    expect(discoverFiles(root, options).files.map((f) => f.path)).toContain("Rust Docs_files/saved_resource.html");
    expect(leftOutBecause("Rust Docs_files/saved_resource.html", options)).toBeNull();
    expect(await indexRepository(home, repo)).toMatchObject({
      indexed: 1,
      skipped_generated: { "<page>_files/ of a saved <page>.html": 3 },
    });
  });

  test("a virtual environment is told by its pyvenv.cfg, not a folder's name; a `!` line keeps a generated name (s23 U1)", () => {
    const root = tempDir();
    writeTree(root, {
      "venv/__init__.py": "class EnvBuilder: pass", // the standard library's own venv package: source
      "env/pyvenv.cfg": "home = /usr/bin",
      "env/lib/site.py": "",
      "crate/cache/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n# a cache directory tag",
      "crate/cache/debug/build.rs": "",
      // A folder named as a marker, and a tag without the standard's signature, mark nothing (s24 hostile H7).
      "tools/CACHEDIR.TAG/readme.py": "",
      "tools/fake/CACHEDIR.TAG": "not a cache",
      "tools/fake/gen.py": "",
      "src/build/__init__.py": "def build_sdist(): pass", // pypa/build's package
      "dist/bundle.py": "",
      ".ignore": "!build/\n",
    });
    const options = { path: root, fileTypes: ["py", "rs"], exclude: [] };
    const found = discoverFiles(root, options);
    expect(found.files.map((f) => f.path)).toEqual([
      "src/build/__init__.py",
      "tools/CACHEDIR.TAG/readme.py",
      "tools/fake/gen.py",
      "venv/__init__.py",
    ]);
    expect(leftOutBecause("tools/fake/gen.py", options)).toBeNull();
    expect(found.skippedGenerated).toEqual({ "folders with pyvenv.cfg": 1, "folders with CACHEDIR.TAG": 1, "dist/": 1 });
    // One path at a time (a watch event, add_to_index) is judged alike, and so is a walk of one folder.
    expect(leftOutBecause("env/lib/site.py", options)).toBe("env/ holds pyvenv.cfg: generated or vendored code, left out");
    expect(leftOutBecause("src/build/__init__.py", options)).toBeNull();
    expect(leftOutBecause("venv/__init__.py", options)).toBeNull();
    expect(leftOutBecause("dist/bundle.py", options)).toBe("dist/ is generated or vendored code, left out");
    expect(discoverFiles(root, options, "src").files.map((f) => f.path)).toEqual(["src/build/__init__.py"]);
    expect(discoverFiles(root, options, "env").files).toEqual([]);
    expect(isCandidateFolder("src/build", options)).toBe(true); // a watch event there is looked at
    expect(isCandidateFolder("dist", options)).toBe(false);
    // A whitelist's `!*/` keeps every folder from being ignored, and names none: it brought them all back (s23 retest N1).
    const listed = tempDir();
    writeTree(listed, {
      ".gitignore": "*\n!*/\n!*.py\n",
      "app.py": "",
      "node_modules/m/index.py": "",
      "build/out.py": "",
      "env/pyvenv.cfg": "",
      "env/site.py": "",
    });
    const whitelist = { path: listed, fileTypes: ["py"], exclude: [] };
    expect(discoverFiles(listed, whitelist).files.map((f) => f.path)).toEqual(["app.py"]);
    expect(["node_modules/m/index.py", "build/out.py", "env/site.py"].map((path) => leftOutBecause(path, whitelist))).toEqual([
      "node_modules/ is generated or vendored code, left out",
      "build/ is generated or vendored code, left out",
      "env/ holds pyvenv.cfg: generated or vendored code, left out",
    ]);
    // `**/build/` is git's spelling of `build/` at any depth: its `!` line names the folder too (s24 hostile H7).
    const spelled = tempDir();
    writeTree(spelled, { ".gitignore": "!**/build/\n", "pkg/build/x.py": "", "build/y.py": "", "dist/z.py": "" });
    const git = { path: spelled, fileTypes: ["py"], exclude: [] };
    expect(discoverFiles(spelled, git).files.map((f) => f.path)).toEqual(["build/y.py", "pkg/build/x.py"]);
    expect(leftOutBecause("pkg/build/x.py", git)).toBeNull();
  });

  test("an exclude is matched by the rule --filter uses: a name with glob syntax is that name first (s19 review F4)", () => {
    const root = tempDir();
    writeTree(root, {
      "report [v2].md": "a",
      "report v.md": "b",
      "notes{1}/c.md": "c",
      "d.md": "d",
      "sub/d.md": "d",
      "keep.md": "k",
    });
    const found = discoverFiles(root, { fileTypes: ["md"], exclude: ["report [v2].md", "notes{1}", "//d.md"] });
    // It kept `report [v2].md` and `notes{1}/c.md`, and `//d.md` left out nothing. As for --filter, a pattern is
    // also the glob it spells (`[v2]` holds `v`): `report v.md` goes too, the safe side for an exclude.
    expect(found.files.map((f) => f.path)).toEqual(["keep.md", "sub/d.md"]);
  });

  test("env's options that take an argument are passed over with it, and -S's string names the program (s23 review R9)", () => {
    const language = (line: string) => scriptLanguage(new TextEncoder().encode(`${line}\n`));
    expect(language("#!/usr/bin/env -S -u PYTHONPATH python3")).toBe("python");
    expect(language("#!/usr/bin/env -C /opt node")).toBe("javascript");
    expect(language("#!/usr/bin/env --chdir /opt --unset HOME ruby")).toBe("ruby");
    expect(language('#!/usr/bin/env --split-string="python3 -u"')).toBe("python");
    expect(language("#!/usr/bin/env -Snode")).toBe("javascript");
    expect(language("#!/usr/bin/env -u PERL5LIB perl")).toBeNull();
  });

  test("a file without an extension is indexed as a script of a language the repository indexes, told by its #! line alone (s22 agent #4)", () => {
    const root = tempDir();
    const outside = tempDir();
    writeTree(outside, { tool: "#!/bin/sh\necho outside\n" });
    writeTree(root, {
      "libexec/pyenv-which":
        '#!/usr/bin/env bash\n#\n# Summary: Display the full path to an executable\nset -e\n[ -n "$PYENV_DEBUG" ] && set -x\n',
      "bin/install": "#!/bin/sh\nexec make install\n",
      "bin/ksh-tool": "#! /bin/ksh -p\nprint hi\n",
      "bin/release": "#!/usr/bin/env python3.11\nimport sys\n",
      "bin/serve": "#!/usr/bin/env -S node --no-warnings\nrequire('./server');\n",
      "bin/rake": "#!/usr/bin/env RUBYOPT=-W0 ruby\nputs 1\n",
      "bin/report": "#!/usr/bin/perl -w\nprint 1;\n",
      "bin/crlf": "#!/bin/bash\r\necho hi\r\n",
      "bin/long": `#!/usr/bin/${"x/".repeat(200)}bash\n`,
      LICENSE: "MIT License\n",
      Makefile: "all:\n\ttrue\n",
      "docs/notes.md": "# Notes\n",
    });
    symlinkSync("install", join(root, "bin/setup"));
    symlinkSync(join(outside, "tool"), join(root, "bin/outside"));
    const code = discoverFiles(root, { fileTypes: ["md", "sh", "bash", "py", "js", "rb"], exclude: [] });
    expect(code.files.map((f) => f.path)).toEqual([
      "bin/crlf",
      "bin/install",
      "bin/ksh-tool",
      "bin/rake",
      "bin/release",
      "bin/serve",
      "bin/setup",
      "docs/notes.md",
      "libexec/pyenv-which",
    ]);
    // Perl has no grammar, a line past what Linux reads of it names nothing, a license is no script; a link out of
    // the root is not followed to read one (and not counted: a link's name is no file of a type).
    expect(code.skippedTypes).toEqual({ "": 4 });
    expect(code.skippedScripts).toBe(0); // none of them a script a repository could be told to index
    expect(code.problems).toEqual([]);
    // A language's type admits its scripts, and no other's.
    const python = discoverFiles(root, { fileTypes: ["md", "py"], exclude: [] });
    expect(python.files.map((f) => f.path)).toEqual(["bin/release", "docs/notes.md"]);
    expect(python.skippedScripts).toBe(6); // the shell, node and ruby scripts, which `sh`, `js` or `rb` would let in
    // A repository of documents indexes no file without an extension; it reads their `#!` lines only to count the
    // scripts among them, which a summary tells how to let in (not LICENSE and Makefile: s24 user U5).
    const documents = discoverFiles(root, { fileTypes: ["md"], exclude: [] });
    expect(documents.files.map((f) => f.path)).toEqual(["docs/notes.md"]);
    expect(documents.skippedTypes).toEqual({ "": 11 });
    expect(documents.skippedScripts).toBe(7);
    // isCandidate (a watch's event, add_to_index) reads the same line; a deleted script may have been one.
    const options = { fileTypes: ["md", "sh"], exclude: [], path: root };
    expect(["libexec/pyenv-which", "bin/release", "LICENSE", "bin/gone"].map((path) => isCandidate(path, options))).toEqual([
      true,
      false,
      false,
      true,
    ]);
    expect(leftOutBecause("LICENSE", options)).toBe(
      "it has no extension, and its first line is no `#!` line of a language it indexes (bash)",
    );
    expect(leftOutBecause("LICENSE", { ...options, fileTypes: ["md"] })).toBe("its type (no extension) is not one it indexes");
    // A link out of the root is refused as that, not as a file without a `#!` line (s22 retest N6).
    expect(leftOutBecause("bin/outside", options)).toContain("outside");
  });

  test("anchored globs match from the root", () => {
    const root = tempDir();
    writeTree(root, { "x/y/z.md": "", "y/z.md": "" });
    expect(discoverFiles(root, { fileTypes: ["md"], exclude: ["x/**"] }).files.map((f) => f.path)).toEqual(["y/z.md"]);
  });
});

describe("the researcher home inside a repository folder", () => {
  // A home that is not hidden (RESEARCHER_HOME=~/notes/researcher) indexed its own config.yaml and failed its own
  // index.db; a watch then looped, every batch's write an event for the next (s18 hostile #8b).
  test("its settings and indexes are never documents, whatever the file types", async () => {
    const root = tempDir();
    writeTree(root, { "note.md": "# Note\n\nzebra\n", "settings.yaml": "mine: true\n" });
    const home = join(root, "researcher");
    const repo = registerRepository(home, { name: "self", path: root, embed: false, fileTypes: ["md", "yaml", "db", "txt"] });
    const run = await indexRepository(home, repo);
    expect(run).toMatchObject({ indexed: 2, failed: 0 });
    expect(discoverFiles(repo.path, repo).files.map((f) => f.path)).toEqual(["note.md", "settings.yaml"]);
    expect(isCandidate("researcher/config.yaml", repo)).toBe(false);
    expect(isCandidate("researcher/repositories/self/index.db", repo)).toBe(false);
    // Its name alone is no rule: a folder of that name elsewhere, or in another repository, is the user's.
    expect(isCandidate("sub/researcher/config.yaml", repo)).toBe(true);
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0, failed: 0, skipped: 2, skipped_types: {} });
  });
});

describe(".gitignore and .ignore", () => {
  const tree = {
    ".gitignore": "# a comment\n*.log.md\nbuild/\n/top.md\n!keep.log.md\n\\#hash.md\nspaced.md\\ \ndocs/**/gen-*.md\n",
    "a.md": "",
    "x.log.md": "",
    "keep.log.md": "",
    "top.md": "",
    "sub/top.md": "",
    "#hash.md": "",
    "spaced.md ": "",
    "build/out.md": "",
    "sub/build/out.md": "",
    "build.md": "",
    "docs/gen-1.md": "",
    "docs/deep/gen-2.md": "",
    "docs/real.md": "",
    "nested/.gitignore": "*.md\n!important.md\n",
    "nested/a.md": "",
    "nested/important.md": "",
    "nested/deeper/b.md": "",
    "over/.gitignore": "x.md\n",
    "over/.ignore": "!x.md\n",
    "over/x.md": "",
    "dironly/.gitignore": "file/\n",
    "dironly/file": "",
    "dironly/file.md": "",
    "reinc/.gitignore": "inner/\n!inner/z.md\n",
    "reinc/inner/z.md": "",
  };
  const expected = ["a.md", "build.md", "docs/real.md", "dironly/file.md", "keep.log.md", "nested/important.md", "over/x.md", "sub/top.md"];

  test("negation, anchoring, folder-only, **, comments, escapes, nested files, .ignore over .gitignore", () => {
    const root = tempDir();
    writeTree(root, tree);
    const files = discoverFiles(root, { fileTypes: ["md", ""], exclude: [] }).files.map((f) => f.path);
    expect(files).toEqual([...expected.slice(0, 4), "dironly/file", ...expected.slice(4)].sort());
  });

  test("isCandidate agrees with the walk, file by file", () => {
    const root = tempDir();
    writeTree(root, tree);
    const options = { fileTypes: ["md"], exclude: [], path: root };
    const walked = new Set(discoverFiles(root, options).files.map((f) => f.path));
    for (const path of Object.keys(tree).filter((p) => p.endsWith(".md"))) {
      expect([path, isCandidate(path, options)]).toEqual([path, walked.has(path)]);
    }
  });

  test("ignoreFiles: false indexes what ignore files leave out", () => {
    const root = tempDir();
    writeTree(root, tree);
    const files = discoverFiles(root, { fileTypes: ["md"], exclude: [], ignoreFiles: false }).files.map((f) => f.path);
    expect(files).toContain("x.log.md");
    expect(files).toContain("nested/deeper/b.md");
    expect(isCandidate("build/out.md", { fileTypes: ["md"], exclude: [], path: root, ignoreFiles: false })).toBe(true);
  });

  test("rules are looked up, not tried one by one, and decide as git does: the last that matches (s20 hostile)", () => {
    // A 200,000-rule .gitignore tried every rule on every path: a run that changed nothing took 55 s. The index of
    // literal rules must decide as the plain loop over all rules did: compared on random rules and paths.
    const next = seeded(20);
    const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
    const names = ["a", "b", "c.md", "d.log", "build", "x"];
    const line = () => {
      const path = Array.from({ length: 1 + Math.floor(next() * 2) }, () => pick([...names, "*", "*.md", "[ab]", "**"])).join("/");
      return `${pick(["", "", "!"])}${pick(["", "/"])}${path}${pick(["", "", "/"])}`;
    };
    const root = tempDir();
    // Three levels, the deepest with both files: each level is looked up on its own (s21 F6), and a `!` below must
    // still re-include what a rule above ignores, as the last matching rule over all levels decides.
    const files = {
      ".gitignore": Array.from({ length: 60 }, line).join("\n"),
      "sub/.gitignore": Array.from({ length: 30 }, line).join("\n"),
      "sub/x/.gitignore": Array.from({ length: 30 }, line).join("\n"),
      "sub/x/.ignore": Array.from({ length: 10 }, line).join("\n"),
    };
    writeTree(root, files);
    const rules = IgnoreRules.EMPTY.enter(root, "").enter(join(root, "sub"), "sub").enter(join(root, "sub/x"), "sub/x");
    const plain = Object.entries(files)
      .flatMap(([file, text]) =>
        text.split("\n").map((l) => parseIgnoreLine(l, file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "")),
      )
      .filter((rule) => rule !== undefined);
    const plainIgnores = (path: string, isDir: boolean) => {
      let ignored = false;
      for (const rule of plain) {
        if ((rule.dirOnly && !isDir) || (rule.base && !path.startsWith(`${rule.base}/`))) continue;
        const rel = rule.base ? path.slice(rule.base.length + 1) : path;
        if (rule.glob.match(rule.anchored ? rel : rel.slice(rel.lastIndexOf("/") + 1))) ignored = !rule.negate;
      }
      return ignored;
    };
    let differ = 0;
    for (let i = 0; i < 3000; i++) {
      const path = [pick(["", "sub/", "sub/x/"]), ...Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(names))]
        .join("/")
        .replace(/^\//, "");
      const isDir = next() < 0.3;
      if (rules.ignores(path, isDir) !== plainIgnores(path, isDir)) differ++;
    }
    expect(differ).toBe(0);
    expect(plain.some((rule) => rule.literal !== undefined) && plain.some((rule) => rule.literal === undefined)).toBe(true);
  });

  test("a folder's own ignore file indexes its own rules, not again all it inherits (s21 F6)", () => {
    // A 200,000-rule root .gitignore and a .gitignore in each of 500 folders: every folder indexed the root's rules
    // again, and a run that changed nothing took 15 s rather than 0.5 s.
    const root = tempDir();
    const tree: Record<string, string> = {
      ".gitignore": Array.from({ length: 2000 }, (_, i) => `gen_${i}.md`).join("\n"),
    };
    for (let i = 0; i < 40; i++) {
      tree[`f${i}/.gitignore`] = `local_${i}.md\n`;
      tree[`f${i}/n.md`] = "note";
      tree[`f${i}/local_${i}.md`] = "left out";
      tree[`f${i}/gen_${i}.md`] = "left out";
    }
    writeTree(root, tree);
    const before = rulesIndexed();
    const found = discoverFiles(root, { fileTypes: ["md"], exclude: [] }).files.map((f) => f.path);
    expect(found).toHaveLength(40);
    expect(found.every((path) => path.endsWith("/n.md"))).toBe(true);
    expect(rulesIndexed() - before).toBe(2000 + 40);
  });

  test("rule parsing", () => {
    expect(parseIgnoreLine("# comment")).toBeUndefined();
    expect(parseIgnoreLine("   ")).toBeUndefined();
    expect(parseIgnoreLine("!/a/b/")).toMatchObject({ negate: true, anchored: true, dirOnly: true });
    expect(parseIgnoreLine("\\!bang")).toMatchObject({ negate: false, anchored: false });
    expect(parseIgnoreLine("*.md  ")!.glob.match("x.md")).toBe(true);
  });

  test("git's syntax, not the glob engine's: `\\!name` is a file named !name, braces are characters", () => {
    // Read as Bun.Glob reads them, `\!12.md` matched every path but one and `{a,b}` the folders a and b.
    const matches = (line: string, path: string) => parseIgnoreLine(line)!.glob.match(path);
    expect([matches("\\!12.md", "!12.md"), matches("\\!12.md", "a.md"), matches("\\!12.md", "12.md")]).toEqual([true, false, false]);
    expect([matches("{a,b}", "{a,b}"), matches("{a,b}", "a"), matches("!!x.md", "!x.md"), matches("!!x.md", "y.md")]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    const root = tempDir();
    writeTree(root, { ".gitignore": "\\!12.md\n{a,b}\n", "!12.md": "x", "keep.md": "x", "a/in.md": "x", "{a,b}/gone.md": "x" });
    const found = discoverFiles(root, { fileTypes: ["md"], exclude: [] }).files.map((f) => f.path);
    expect(found).toEqual(["a/in.md", "keep.md"]);
  });

  test("an ignore file that cannot be read fails closed: its folder stays as indexed, nothing it may hide comes in", async () => {
    const home = tempDir();
    const root = tempDir();
    writeTree(root, { ".gitignore": "secret.md\n", "a.md": "# A\n\nalpha\n", "secret.md": "# S\n\nsecretword\n" });
    const repo = registerRepository(home, { name: "r", path: root, embed: false });
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1 });
    // Grown past what is read (a generated list), or unreadable: read as empty, it let secret.md in.
    truncateSync(join(root, ".gitignore"), 17 * 2 ** 20);
    writeTree(root, { "new.md": "# New\n\nnewword\n" });
    const run = await indexRepository(home, repo);
    expect(run).toMatchObject({ indexed: 0, removed: 0, documents_total: 1 });
    expect(run.failures).toEqual([
      { path: ".gitignore", reason: "cannot read it (larger than 16 MiB): its folder is left as it was indexed" },
    ]);
    expect(isCandidate("secret.md", { ...repo, path: root })).toBe(false);
    // A file named (MCP add_to_index, watch) under it fails, with why, and what is indexed there stays.
    expect(await indexFiles(home, repo, ["a.md"])).toMatchObject({
      removed: 0,
      failures: [{ path: "a.md", reason: "under an ignore file that cannot be read: left as it was indexed" }],
      documents_total: 1,
    });
  });

  test("--exclude '!name' leaves out what is named !name, not everything else", () => {
    const root = tempDir();
    writeTree(root, { "!private/s.md": "x", "private/t.md": "x", "notes/n.md": "x" });
    const found = discoverFiles(root, { fileTypes: ["md"], exclude: ["!private"] }).files.map((f) => f.path);
    expect(found).toEqual(["notes/n.md", "private/t.md"]);
  });
});

test("a file name stored decomposed (from a Mac) is matched by a glob, an exclude, ls and multi-get typed composed (s19 retest)", async () => {
  const home = tempDir();
  const root = tempDir();
  const nfd = "é.md".normalize("NFD");
  writeTree(root, { [nfd]: "# e\n\nword\n", [`sub/${nfd}`]: "# e\n\nword\n", "other.md": "# o\n\nword\n" });
  const repo = registerRepository(home, { name: "t", path: root, embed: false });
  await indexRepository(home, repo);
  const found = async (filter: string) =>
    (await search(home, { query: "word", mode: "bm25", filter })).results.map((r) => r.path.normalize("NFC")).sort();
  expect(await found("é.md")).toEqual(["sub/é.md", "é.md"]);
  expect(await found("é*")).toEqual(["sub/é.md", "é.md"]);
  expect(discoverFiles(root, { fileTypes: ["md"], exclude: ["é.md"] }).files.map((f) => f.path)).toEqual(["other.md"]);
  expect(listDocuments(home, { repositories: ["t"], prefix: "é" }).documents).toHaveLength(1);
  expect((await readDocuments(home, "t:é*")).documents).toHaveLength(2); // a name at any depth
});
