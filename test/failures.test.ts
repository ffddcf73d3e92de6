/**
 * Failed files and their stamps, through the real CLI: a file whose conversion failed is not converted again while
 * it, the conversion settings and the researcher version are unchanged; it is when one of them changes, on
 * `--rebuild` and `--retry-failed`, and every run when the failure was transient. Its failure stays listed meanwhile.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setConfigValue } from "../src/config.ts";
import { indexOneFile } from "../src/index/add-file.ts";
import { registerRepository, type Repository } from "../src/repos.ts";
import { readDocument } from "../src/search/read-document.ts";
import { Store } from "../src/store/store.ts";
import { VERSION } from "../src/version.ts";
import { runCli, SHARED, tempDir, testShared, writeTree } from "./helpers.ts";
import { paragraph, SCANNED, scannedPage, writePdf } from "./pdf-fixtures.ts";

const BROKEN = "not a readable PDF: Invalid PDF structure.";

/** A repository of one markdown file and one PDF that fails to convert, and the CLI over it. */
function brokenPdfRepository(): { home: string; docs: string; repo: Repository; cli: (...args: string[]) => ReturnType<typeof runCli> } {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "ok.md": "# Ok\n\nplain words\n", "bad.pdf": "%PDF-1.4 this is not a PDF body" });
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  return { home, docs, repo, cli: (...args) => runCli(args, { home }) };
}

/** `index --json` of the repository: the summary's counts of failed files. */
function indexRun(cli: (...args: string[]) => ReturnType<typeof runCli>, ...flags: string[]) {
  const run = cli("index", "d", "--json", ...flags);
  expect(run.code).toBe(0);
  const { failed, failed_unchanged, failures } = JSON.parse(run.stdout);
  return { failed, failed_unchanged, failures };
}

/** The failures table as stored: when each failure was recorded, and its stamp. */
function storedFailures(repo: Repository) {
  const db = new Database(Store.dbPath(repo.dir), { readonly: true });
  try {
    return db
      .query<{ path: string; at: string; size: number | null; settings: string | null }, []>(
        "SELECT path, at, size, settings FROM failures ORDER BY path",
      )
      .all();
  } finally {
    db.close();
  }
}

const listed = (cli: (...args: string[]) => ReturnType<typeof runCli>) => JSON.parse(cli("status", "d", "--json").stdout).failures;

/** Each test runs the CLI several times (a second or more each on a shared machine). */
const CLI_TESTS = 60_000;

describe("a failed file", () => {
  test(
    "unchanged, it is not converted again and its failure stays listed; touched or edited, it is",
    () => {
      const { docs, repo, cli } = brokenPdfRepository();
      const failedOnce = { failed: 1, failed_unchanged: 0, failures: [{ path: "bad.pdf", reason: BROKEN }] };
      expect(indexRun(cli)).toEqual(failedOnce);
      const [recorded] = storedFailures(repo);
      expect(recorded).toMatchObject({ path: "bad.pdf", size: 31 });

      expect(indexRun(cli)).toEqual({ failed: 0, failed_unchanged: 1, failures: [] });
      expect(storedFailures(repo)).toEqual([recorded!]); // the same record: no run converted it again
      expect(listed(cli)).toEqual([{ path: "bad.pdf", reason: BROKEN }]);
      const text = cli("index", "d");
      expect(text.stdout).toContain("1 file that failed is unchanged: not tried again");

      utimesSync(join(docs, "bad.pdf"), new Date(), new Date(Date.now() + 5000)); // touched: its mtime moves
      expect(indexRun(cli)).toEqual(failedOnce);
      expect(storedFailures(repo)[0]!.at > recorded!.at).toBe(true);

      writeFileSync(join(docs, "bad.pdf"), "%PDF-1.4 still no PDF body, now longer");
      expect(indexRun(cli)).toEqual(failedOnce);
      expect(storedFailures(repo)[0]!.size).toBe(38);
    },
    CLI_TESTS,
  );

  test(
    "a file that now converts is indexed and its failure dropped",
    async () => {
      const { docs, cli } = brokenPdfRepository();
      indexRun(cli);
      writeFileSync(join(docs, "bad.pdf"), await writePdf([paragraph("Mended papers about harbour tides.", 72)]));
      const run = JSON.parse(cli("index", "d", "--json").stdout);
      expect(run).toMatchObject({ indexed: 1, failed: 0, failed_unchanged: 0 });
      expect(listed(cli)).toEqual([]);
      expect(JSON.parse(cli("search", "harbour tides", "--json").stdout).total).toBe(1);
    },
    CLI_TESTS,
  );

  test(
    "--rebuild and --retry-failed convert it again; a changed OCR setting or researcher version does too",
    () => {
      const { repo, cli } = brokenPdfRepository();
      indexRun(cli);
      const again = { failed: 1, failed_unchanged: 0, failures: [{ path: "bad.pdf", reason: BROKEN }] };
      expect(indexRun(cli, "--rebuild")).toEqual(again);
      expect(indexRun(cli, "--retry-failed")).toEqual(again);
      expect(indexRun(cli)).toEqual({ failed: 0, failed_unchanged: 1, failures: [] });

      expect(cli("config", "set", "repositories.d.ocr", "off").code).toBe(0);
      expect(indexRun(cli)).toEqual(again);
      expect(indexRun(cli)).toMatchObject({ failed_unchanged: 1 });

      // As an older researcher recorded it: a newer converter may read the file.
      const db = new Database(Store.dbPath(repo.dir));
      const older = db.query("UPDATE failures SET settings = replace(settings, ?, '0.0.1')").run(`"version":"${VERSION}"`);
      db.close();
      expect(older.changes).toBe(1);
      expect(indexRun(cli)).toEqual(again);
    },
    CLI_TESTS,
  );

  test(
    "a conversion a limit stopped stays listed and is left alone until the file or the limits change (or --retry-failed)",
    async () => {
      const home = tempDir();
      const docs = tempDir();
      const pages = Array.from({ length: 20 }, (_, i) => paragraph(`Page ${i} holds words about topic ${i}.`, 72));
      writeTree(docs, { "big.pdf": await writePdf(pages), "ok.md": "still indexed\n" });
      registerRepository(home, { name: "d", path: docs, embed: false });
      const cli = (...args: string[]) => runCli(args, { home });
      // Any worker's heap is past 1 MB, and its first report is checked before its result can arrive.
      expect(cli("config", "set", "index.convert_memory_mb", "1").code).toBe(0);
      const stopped = {
        failed: 1,
        failed_unchanged: 0,
        failures: [{ path: "big.pdf", reason: "conversion needed more memory than index.convert_memory_mb (1 MB)" }],
      };
      expect(indexRun(cli)).toEqual(stopped);
      // The same cap outside an index run: `convert` (and `get` of a changed file) must not take a server's memory.
      const converted = cli("convert", join(docs, "big.pdf"));
      expect(converted.code).toBe(1);
      expect(converted.stderr).toContain("conversion needed more memory than index.convert_memory_mb (1 MB)");
      expect(listed(cli)).toEqual(stopped.failures);
      // Not converted again while nothing changed (a file that takes the whole time limit would cost it every run).
      expect(indexRun(cli)).toEqual({ failed: 0, failed_unchanged: 1, failures: [] });
      expect(listed(cli)).toEqual(stopped.failures);
      expect(JSON.parse(cli("index", "d", "--retry-failed", "--json").stdout)).toMatchObject(stopped);
      expect(cli("config", "set", "index.convert_memory_mb", "1024").code).toBe(0);
      expect(JSON.parse(cli("index", "d", "--json").stdout)).toMatchObject({ indexed: 1, failed: 0 });
      // Reading it back once it changed converts it again, under the same cap: stopped by it, the reader says so
      // (CONVERSION_STOPPED, try again: HTTP 503), not that the file cannot be read.
      writeTree(docs, { "big.pdf": await writePdf([...pages, paragraph("One more page.", 72)]) });
      expect(cli("config", "set", "index.convert_memory_mb", "1").code).toBe(0);
      expect(readDocument(home, "d:big.pdf")).rejects.toMatchObject({
        code: "CONVERSION_STOPPED",
        message: "d:big.pdf: conversion needed more memory than index.convert_memory_mb (1 MB)",
      });
    },
    CLI_TESTS,
  );

  testShared(
    "a scan that failed for want of an OCR language is tried again once something lands in the OCR model folder",
    async () => {
      const home = tempDir();
      const docs = tempDir();
      const models = tempDir();
      writeTree(docs, { "scan.pdf": await scannedPage(join(SHARED, SCANNED, "scan-01.pdf"), 1), "ok.md": "plain words\n" });
      registerRepository(home, { name: "d", path: docs, embed: false });
      const cli = (...args: string[]) => runCli(args, { home });
      expect(cli("config", "set", "repositories.d.ocr_languages", "[eng, deu]").code).toBe(0);
      expect(cli("config", "set", "repositories.d.ocr_data", models).code).toBe(0);
      const missing = indexRun(cli);
      expect(missing).toMatchObject({ failed: 1, failed_unchanged: 0 });
      expect(missing.failures[0].reason).toContain('no OCR model for language "deu"');
      expect(indexRun(cli)).toMatchObject({ failed: 0, failed_unchanged: 1 });
      writeFileSync(join(models, "README"), "models go here\n"); // the folder changes: a model may have been installed
      utimesSync(models, new Date(), new Date(Date.now() + 5000));
      expect(indexRun(cli)).toMatchObject({ failed: 1, failed_unchanged: 0 });
    },
    CLI_TESTS,
  );

  testShared(
    "a language named twice in ocr_languages is read once: the scan is indexed (it failed with an empty reason; s12 hostile #6)",
    async () => {
      const home = tempDir();
      const docs = tempDir();
      writeTree(docs, { "scan.pdf": await scannedPage(join(SHARED, SCANNED, "scan-01.pdf"), 1) });
      registerRepository(home, { name: "d", path: docs, embed: false });
      const cli = (...args: string[]) => runCli(args, { home });
      expect(cli("config", "set", "repositories.d.ocr_languages", "[eng, eng]").code).toBe(0);
      const run = cli("index", "d", "--json");
      expect(JSON.parse(run.stdout)).toMatchObject({ indexed: 1, failed: 0, ocr_pages: 1 });
    },
    CLI_TESTS,
  );

  test(
    "verify agrees with the planner: an unchanged failed file is current, a changed one is not",
    () => {
      const { docs, cli } = brokenPdfRepository();
      indexRun(cli);
      expect(cli("verify", "d")).toMatchObject({ code: 0, stdout: "d: ok\n" });
      utimesSync(join(docs, "bad.pdf"), new Date(), new Date(Date.now() + 5000));
      const stale = cli("verify", "d");
      expect(stale.code).toBe(1);
      expect(stale.stdout).toContain("since the last run: 1 changed (bad.pdf)");
      indexRun(cli);
      expect(cli("verify", "d")).toMatchObject({ code: 0, stdout: "d: ok\n" });
    },
    CLI_TESTS,
  );

  test(
    "a failed file whose document was indexed before keeps that document, and is left alone while unchanged",
    async () => {
      const { docs, cli } = brokenPdfRepository();
      writeFileSync(join(docs, "bad.pdf"), await writePdf([paragraph("First edition about harbour tides.", 72)]));
      expect(JSON.parse(cli("index", "d", "--json").stdout)).toMatchObject({ indexed: 2, failed: 0 });
      writeFileSync(join(docs, "bad.pdf"), "%PDF-1.4 this is not a PDF body");
      expect(indexRun(cli)).toMatchObject({ failed: 1 });
      expect(indexRun(cli)).toEqual({ failed: 0, failed_unchanged: 1, failures: [] });
      expect(cli("verify", "d")).toMatchObject({ code: 0, stdout: "d: ok\n" });
      expect(JSON.parse(cli("search", "harbour tides", "--json").stdout).total).toBe(1);
    },
    CLI_TESTS,
  );

  test(
    "every file failed: the run fails again when its failures are only kept",
    () => {
      const home = tempDir();
      const docs = tempDir();
      writeTree(docs, { "bad.pdf": "%PDF-1.4 this is not a PDF body" });
      registerRepository(home, { name: "d", path: docs, embed: false });
      for (let run = 0; run < 2; run++) {
        const result = runCli(["index", "d"], { home });
        expect({ code: result.code, stderr: result.stderr }).toEqual({
          code: 1,
          stderr: "error: d: all 1 files failed and none was indexed\nhint: `researcher status d --json` lists them with their reasons\n",
        });
      }
      // With --json the summary says it too, as a failed repository's entry does.
      const json = runCli(["index", "d", "--json"], { home });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        repository: "d",
        failed_unchanged: 1,
        error: { code: "FILE_UNREADABLE", message: "all 1 files failed and none was indexed" },
      });
    },
    CLI_TESTS,
  );

  test(
    "a file whose new version fails while its earlier one stays indexed is a failure listed, not a failed run (s18 hostile #7)",
    () => {
      // The run said "all 1 files failed and none was indexed", exit 1, while the earlier a.md was still found.
      const home = tempDir();
      const docs = tempDir();
      writeTree(docs, { "a.md": "# a\n\nalpha words here\n" });
      registerRepository(home, { name: "d", path: docs, embed: false });
      expect(runCli(["index", "d"], { home }).code).toBe(0);
      expect(runCli(["config", "set", "index.max_file_bytes", "10"], { home }).code).toBe(0);
      writeTree(docs, { "a.md": "# a\n\nalpha words here and more\n" });
      const run = runCli(["index", "d"], { home });
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining("error:") });
      expect(run.stdout).toContain("1 failed");
      expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(1);
    },
    CLI_TESTS,
  );
});

test(
  "an index from before failure stamps (schema 5) keeps its failures, which are tried once more, then stamped",
  () => {
    const { repo, cli } = brokenPdfRepository();
    indexRun(cli);
    const db = new Database(Store.dbPath(repo.dir));
    for (const column of ["size", "mtime_ms", "settings"]) db.run(`ALTER TABLE failures DROP COLUMN ${column}`);
    db.run("DROP TRIGGER documents_keep_text");
    db.run("DROP TABLE removed_texts");
    db.run("DROP TABLE document_texts");
    db.run("ALTER TABLE fragments DROP COLUMN unit");
    db.run("ALTER TABLE fragments DROP COLUMN defines");
    db.run("PRAGMA user_version = 5");
    db.close();
    const outdated = cli("status", "d", "--json");
    expect(outdated.code).toBe(1);
    expect(outdated.stderr).toContain("was written by an older researcher (schema 5): run `researcher index d` to upgrade it");
    expect(indexRun(cli)).toEqual({ failed: 1, failed_unchanged: 0, failures: [{ path: "bad.pdf", reason: BROKEN }] });
    expect(indexRun(cli)).toEqual({ failed: 0, failed_unchanged: 1, failures: [] });
    expect(listed(cli)).toEqual([{ path: "bad.pdf", reason: BROKEN }]);
  },
  CLI_TESTS,
);

/** What Bun itself says when a descriptor limit stops it before our code runs: starting, or loading a module. */
const RUNTIME_OUT_OF_FILES = /bun ran out of file descriptors|error: Module not found|error: Cannot find (package|module)/;

test(
  "no file descriptor left (ulimit -n): the run stops with TOO_MANY_OPEN_FILES and its fix, and no file is failed or lost",
  () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`n${i}.md`, `# Note ${i}\n\nalpha ${i}\n`])));
    registerRepository(home, { name: "d", path: docs, embed: false });
    expect(runCli(["index", "d"], { home }).code).toBe(0);
    // Where the limit bites depends on how many descriptors the runtime takes itself, which varies with load and
    // with what the test process hands down: a range meets it somewhere. Below it Bun cannot start or load our
    // modules and says so in words of its own (CI once started the range there): the runtime's, not ours to test.
    // Every file had been failed as "moved or replaced while it was read", or index.db had a permissions hint.
    const stopped = [];
    for (let openFiles = 6; openFiles <= 18; openFiles++) {
      const run = runCli(["index", "d", "--rebuild"], { home, openFiles });
      if (RUNTIME_OUT_OF_FILES.test(run.stderr)) continue;
      const status = JSON.parse(runCli(["status", "d", "--json"], { home }).stdout);
      expect({ openFiles, failures: status.failures, documents: status.documents }).toEqual({ openFiles, failures: [], documents: 30 });
      if (run.code === 0) continue;
      expect({ openFiles, code: run.code, stderr: run.stderr }).toEqual({
        openFiles,
        code: 1,
        stderr: expect.stringMatching(/^error: .*too many open files.*\nhint: raise the limit on open files \(`ulimit -n 4096`\)/),
      });
      stopped.push(openFiles);
    }
    expect(stopped.length).toBeGreaterThan(0);
  },
  CLI_TESTS,
);

test("one file indexed by name through the library: a typo is PATH_NOT_FOUND and a failing file FILE_UNREADABLE, as over MCP (s18 review #12)", async () => {
  // The rule lived in the MCP tool: a library caller of indexFiles with a typo got an all-zero summary, no error.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n", "bad.pdf": "%PDF-1.4 not a PDF body" });
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  expect((await indexOneFile(home, repo, "a.md")).summary).toMatchObject({ indexed: 1 });
  expect(await indexOneFile(home, repo, "nope.md").catch((e) => e)).toMatchObject({
    code: "PATH_NOT_FOUND",
    message: "d:nope.md does not exist",
  });
  expect(await indexOneFile(home, repo, "bad.pdf").catch((e) => e)).toMatchObject({ code: "FILE_UNREADABLE" });
  // A new version that fails while the earlier one stays indexed says so (s18 retest: "was not indexed" alone read as gone).
  setConfigValue(home, "index.max_file_bytes", "10");
  writeTree(docs, { "a.md": "# A\n\nalpha and more\n" });
  expect(await indexOneFile(home, repo, "a.md").catch((e) => e)).toMatchObject({
    code: "FILE_UNREADABLE",
    message: expect.stringMatching(/^d:a\.md was not indexed: .+; its earlier version stays indexed$/),
  });
});

test("an index run's text names the first 20 failures and counts the rest, as status does (s19 hostile #7)", () => {
  // 100,000 files with unreadable names printed 8 MB of failure lines.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`broken-${String(i).padStart(2, "0")}.pdf`, "not a pdf"])));
  expect(runCli(["repo", "add", "b", docs, "--no-embed"], { home }).code).toBe(0);
  const run = runCli(["index", "b"], { home });
  expect(run.stdout.match(/^ {2}failed broken-\d\d\.pdf: /gm)).toHaveLength(20);
  expect(run.stdout).toContain("  … and 5 more failed (`researcher status b --json` lists them)");
  expect(JSON.parse(runCli(["status", "b", "--json"], { home }).stdout).failures).toHaveLength(25);
  // status lists them as the run does, as the next run's "`status` lists them" says (it said only "see --json": s20 user C).
  const again = runCli(["index", "b"], { home }).stdout;
  expect(again).toContain("25 files that failed are unchanged: not tried again (`status` lists them;");
  const status = runCli(["status", "b"], { home }).stdout;
  expect(status).toContain("  25 files failed:\n  failed broken-00.pdf: ");
  expect(status.match(/^ {2}failed broken-\d\d\.pdf: /gm)).toHaveLength(20);
  expect(status).toContain("  … and 5 more failed (`researcher status b --json` lists them)");
});
