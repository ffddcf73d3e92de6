import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { removeDocument } from "../src/index/remove.ts";
import { registerRepository, type Repository } from "../src/repos.ts";
import { search } from "../src/search/search.ts";
import { vectorIndexState } from "../src/search/vectors.ts";
import { missingFromSchema, SCHEMA_VERSION } from "../src/store/schema.ts";
import { FULL_TEXT_VERSION } from "../src/store/fts.ts";
import { repositoryStatus } from "../src/store/status.ts";
import { Store } from "../src/store/store.ts";
import { cliCommand, GLOVE, ROOT, runCli, tempDir, testShared, writeTree } from "./helpers.ts";

/** What schema 5 wrote of failures: no stamps (v6 added them). */
/**
 * Back to schema 5: no failure stamps (v6), no document texts (v8), no fragment units (v9), no removed texts (v10),
 * no fragment definitions (v12).
 */
function dropFailureStamps(db: Database): void {
  for (const column of ["size", "mtime_ms", "settings"]) db.run(`ALTER TABLE failures DROP COLUMN ${column}`);
  db.run("DROP TRIGGER documents_keep_text");
  db.run("DROP TABLE removed_texts");
  db.run("DROP TABLE document_texts");
  db.run("ALTER TABLE fragments DROP COLUMN unit");
  db.run("ALTER TABLE fragments DROP COLUMN defines");
}

/**
 * An index as researcher wrote it at schema version 1: no owner index, no page_end, formats by name, no impact
 * lists, no failure stamps, no fragment units.
 */
async function schemaOneIndex(): Promise<{ home: string; repo: Repository }> {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n", "b.md": "# B\n\nbeta words\n" });
  const repo = registerRepository(home, { name: "old", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  dropFailureStamps(db); // first: ALTER TABLE checks the schema, whose impact trigger would lose its table below
  db.run("DROP INDEX fragments_owner");
  db.run("ALTER TABLE fragments DROP COLUMN page_end");
  db.run("UPDATE documents SET format = 'markdown'");
  db.run("DROP TABLE term_impacts");
  db.run("DROP TABLE term_bounds");
  db.run("PRAGMA user_version = 1");
  db.close();
  return { home, repo };
}

const schemaVersion = (repo: Repository) => {
  const db = new Database(Store.dbPath(repo.dir), { readonly: true });
  try {
    return db.query<{ user_version: number }, []>("PRAGMA user_version").get()!.user_version;
  } finally {
    db.close();
  }
};

test("readers of an older schema neither lock nor write it: one error line says to run index, which upgrades it", async () => {
  const { home, repo } = await schemaOneIndex();
  const before = readFileSync(Store.dbPath(repo.dir));
  const upgradeLine = "error: the index of 'old' was written by an older researcher (schema 1): run `researcher index old` to upgrade it\n";
  for (const args of [
    ["search", "words"],
    ["get", "old:a.md"],
    ["ls", "old"],
  ]) {
    const refused = runCli(args, { home });
    expect({ args, code: refused.code, stderr: refused.stderr }).toEqual({ args, code: 1, stderr: upgradeLine });
  }
  expect(readdirSync(repo.dir).sort()).toEqual(["index.db"]); // no lock file, no WAL left by a write
  expect(readFileSync(Store.dbPath(repo.dir))).toEqual(before);
  expect(schemaVersion(repo)).toBe(1);

  expect(runCli(["index", "old", "--quiet"], { home }).code).toBe(0);
  expect(schemaVersion(repo)).toBe(SCHEMA_VERSION);
  expect(JSON.parse(runCli(["search", "words", "--documents", "--json"], { home }).stdout).total).toBe(2);
  const upgraded = new Database(Store.dbPath(repo.dir), { readonly: true });
  expect(upgraded.query("SELECT name FROM sqlite_master WHERE name = 'fragments_owner'").get()).toBeTruthy();
  for (const name of ["term_impacts", "term_bounds", "term_impacts_delete"]) {
    expect(upgraded.query("SELECT name FROM sqlite_master WHERE name = ?").get(name)).toBeTruthy();
  }
  expect(upgraded.query("SELECT DISTINCT format FROM documents").all()).toEqual([{ format: "md" }]);
  expect(upgraded.query("SELECT page_end FROM fragments LIMIT 1").get()).toEqual({ page_end: null });
  // Every table and column a new index has: a rebuild would otherwise move an upgraded index aside as damaged.
  expect(missingFromSchema(upgraded)).toBeNull();
  upgraded.close();
}, 30_000);

test("writers holding the lock upgrade an older schema: verify, remove", async () => {
  const verified = await schemaOneIndex();
  expect(runCli(["verify", "old"], { home: verified.home })).toMatchObject({ code: 0, stdout: "old: ok\n" });
  expect(schemaVersion(verified.repo)).toBe(SCHEMA_VERSION);
  const removed = await schemaOneIndex();
  expect(runCli(["remove", "old", "a.md"], { home: removed.home })).toMatchObject({ code: 0, stdout: "removed old:a.md\n" });
  expect(schemaVersion(removed.repo)).toBe(SCHEMA_VERSION);
}, 30_000);

test("a schema 13 index (before kept OCR pages) is searched as it is, not refused as outdated; the next index run upgrades it (v14 to v16)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
  const repo = registerRepository(home, { name: "old", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  db.run("DROP TABLE ocr_readings");
  db.run("DROP TABLE ocr_images"); // v15's
  // v16's: the path of a removed text, and the trigger that fills it.
  db.run("DROP TRIGGER documents_keep_text; DROP INDEX removed_texts_path; ALTER TABLE removed_texts DROP COLUMN path");
  db.run(`CREATE TRIGGER documents_keep_text BEFORE DELETE ON documents BEGIN
    INSERT OR REPLACE INTO removed_texts(hash, settings, title, metadata, text, removed_at)
      SELECT old.hash, t.settings, old.title, old.metadata, t.text, julianday('now') FROM document_texts t WHERE t.document_id = old.id;
  END`);
  db.run("PRAGMA user_version = 13");
  db.close();
  const found = runCli(["search", "alpha", "--json"], { home });
  expect({ code: found.code, stderr: found.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(found.stdout).results.map((r: { path: string }) => r.path)).toEqual(["a.md"]);
  expect(schemaVersion(repo)).toBe(13); // a reader writes nothing
  expect(runCli(["index", "old", "--quiet"], { home }).code).toBe(0);
  expect(schemaVersion(repo)).toBe(SCHEMA_VERSION);
  const upgraded = new Database(Store.dbPath(repo.dir), { readonly: true });
  expect(missingFromSchema(upgraded)).toBeNull();
  const trigger = upgraded.query<{ sql: string }, []>("SELECT sql FROM sqlite_master WHERE name = 'documents_keep_text'").get();
  expect(trigger?.sql).toContain("old.path");
  upgraded.close();
}, 30_000);

test("a schema 16 index gets the page image of each kept OCR reading (v17): its earlier rows have none", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
  const repo = registerRepository(home, { name: "old", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  db.run("ALTER TABLE ocr_readings DROP COLUMN pixels");
  db.run("INSERT INTO ocr_readings(hash, settings, page, path, text, poor) VALUES ('h', 's', 1, 'scan.pdf', 'kept', 0)");
  db.run("PRAGMA user_version = 16");
  db.close();
  expect(runCli(["verify", "old"], { home })).toMatchObject({ code: 0, stdout: "old: ok\n" });
  expect(schemaVersion(repo)).toBe(SCHEMA_VERSION);
  const upgraded = new Database(Store.dbPath(repo.dir), { readonly: true });
  expect(missingFromSchema(upgraded)).toBeNull();
  expect(upgraded.query("SELECT page, text, pixels FROM ocr_readings").all()).toEqual([{ page: 1, text: "kept", pixels: null }]);
  upgraded.close();
}, 30_000);

test("a schema 17 index gets inode stamps (v18): read as none before, its first run hashes each file once and re-chunks only one that differs", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n", "x1.md": "one one\n", "x2.md": "two two\n", "bad.txt": "abc\0\0\0\0def\0\0\0\0\0\n" });
  const unpacked = new Date("2026-01-01T00:00:00Z");
  for (const name of ["a.md", "x1.md", "x2.md", "bad.txt"]) utimesSync(join(docs, name), unpacked, unpacked);
  const repo = registerRepository(home, { name: "old", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  db.run("ALTER TABLE documents DROP COLUMN ctime_ms; ALTER TABLE documents DROP COLUMN ino; ALTER TABLE failures DROP COLUMN ino");
  db.run("PRAGMA user_version = 17");
  const ids = () => db.query<{ path: string; id: number }, []>("SELECT path, id FROM documents ORDER BY path").all();
  const before = ids();
  db.close();
  // Swapped under the old researcher, which kept each file's old text (s28 hostile F1).
  renameSync(join(docs, "x1.md"), join(docs, "tmp.md"));
  renameSync(join(docs, "x2.md"), join(docs, "x1.md"));
  renameSync(join(docs, "tmp.md"), join(docs, "x2.md"));
  // A reader reads it as it is: its stamps have no inode change time nor number.
  const reader = Store.open(repo.dir);
  expect(reader.document("a.md")).toMatchObject({ ctimeMs: null, ino: null });
  reader.close();
  expect((await search(home, { query: "alpha" })).results.map((r) => r.path)).toEqual(["a.md"]);
  // A failed file is not tried again: its failure, recorded without an inode number, is taken as of the file there.
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 2, skipped: 1, failed_unchanged: 1 });
  expect(schemaVersion(repo)).toBe(SCHEMA_VERSION);
  const upgraded = new Database(Store.dbPath(repo.dir), { readonly: true });
  expect(missingFromSchema(upgraded)).toBeNull();
  // a.md, hashed and found the same, keeps its row (and fragments); its stamp is recorded.
  expect(upgraded.query("SELECT id, ino FROM documents WHERE path = 'a.md'").get()).toEqual({
    id: before[0]!.id,
    ino: statSync(join(docs, "a.md")).ino,
  });
  upgraded.close();
  expect((await search(home, { query: "one" })).results.map((r) => r.path)).toEqual(["x2.md"]);
  // The failure learnt its file's inode number then: a good file renamed over it with its size and mtime is read,
  // where a failure never given one kept it out for good (s28b retest 1).
  writeFileSync(join(docs, "good.txt"), "wallaby crossed\n");
  utimesSync(join(docs, "good.txt"), unpacked, unpacked);
  renameSync(join(docs, "good.txt"), join(docs, "bad.txt"));
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1, failed_unchanged: 0 });
  expect((await search(home, { query: "wallaby" })).results.map((r) => r.path)).toEqual(["bad.txt"]);
}, 30_000);

test("a schema 4 index (no identifier parts in its full-text index) gets its full text rebuilt by the next index run (v5)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\ncall parseHeader on each line\n" });
  const repo = registerRepository(home, { name: "old", path: docs, embed: false });
  await indexRepository(home, repo);
  // What schema 4 wrote: the fragment texts as they are, without the parts of compound words.
  const db = new Database(Store.dbPath(repo.dir));
  db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')");
  db.run(
    "INSERT INTO fragments_fts(rowid, title, heading, body) SELECT f.id, d.title, f.heading, f.text FROM fragments f JOIN documents d ON d.id = f.document_id",
  );
  dropFailureStamps(db);
  db.run("PRAGMA user_version = 4");
  db.close();

  await indexRepository(home, repo);
  const response = await search(home, { query: "header", mode: "bm25" });
  expect(response.results.map((hit) => hit.path)).toEqual(["a.md"]);
});

test("a schema 12 index (marks cut words apart in its full-text index) is refused by readers and made again by the next writer (v13, s26 review F1)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "lotus.md": "# Lotus\n\nकमल एक फूल है।\n", "kamala.md": "# Sister\n\nकमला मेरी बहन है।\n" });
  const repo = registerRepository(home, { name: "old", path: docs, embed: false });
  await indexRepository(home, repo);
  // What schema 12 wrote: unicode61's default word characters (no marks), text with its points, lists built from it.
  const db = new Database(Store.dbPath(repo.dir));
  db.run("DROP TABLE ocr_readings"); // v14's
  db.run("DROP TABLE ocr_images"); // v15's
  db.run("DROP TABLE fragments_fts");
  db.run(
    "CREATE VIRTUAL TABLE fragments_fts USING fts5(title, heading, body, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')",
  );
  db.run(
    "INSERT INTO fragments_fts(rowid, title, heading, body) SELECT f.id, d.title, f.heading, f.text FROM fragments f JOIN documents d ON d.id = f.document_id",
  );
  db.run("INSERT INTO term_impacts VALUES ('क', 1, 1, 1, 1); INSERT INTO term_postings VALUES ('क', x'00')");
  db.run("UPDATE meta SET value = '4' WHERE key = 'full_text_version'");
  db.run("PRAGMA user_version = 12");
  db.close();
  // Searched as it is, कमला would find कमल as well: the reader says what to do instead.
  expect(runCli(["search", "कमला"], { home })).toMatchObject({
    code: 1,
    stderr: "error: the index of 'old' was written by an older researcher (schema 12): run `researcher index old` to upgrade it\n",
  });
  // Any writer upgrades it (verify reads no file): the full text is written again, the lists from the old one dropped.
  expect(runCli(["verify", "old"], { home })).toMatchObject({ code: 0, stdout: "old: ok\n" });
  const upgraded = new Database(Store.dbPath(repo.dir), { readonly: true });
  expect(upgraded.query("SELECT count(*) AS n FROM term_impacts").get()).toEqual({ n: 0 });
  expect(upgraded.query("SELECT count(*) AS n FROM term_postings").get()).toEqual({ n: 0 });
  expect(upgraded.query("SELECT value FROM meta WHERE key = 'full_text_version'").get()).toEqual({ value: String(FULL_TEXT_VERSION) });
  upgraded.close();
  expect(schemaVersion(repo)).toBe(SCHEMA_VERSION);
  expect((await search(home, { query: "कमला", mode: "bm25" })).results.map((hit) => hit.path)).toEqual(["kamala.md"]);
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0 });
  expect((await search(home, { query: "कमल", mode: "bm25" })).results.map((hit) => hit.path)).toEqual(["lotus.md"]);
}, 30_000);

test("an index from a newer researcher is refused with a clear error", () => {
  const dir = tempDir();
  Store.open(dir, { create: true }).close();
  const db = new Database(Store.dbPath(dir));
  db.run("PRAGMA user_version = 99");
  db.close();
  expect(() => Store.open(dir)).toThrow(/newer researcher/);
});

test("hints that name a command name the repository, ready to run", () => {
  const home = tempDir();
  const repo = registerRepository(home, { name: "papers", path: tempDir(), embed: false });
  mkdirSync(repo.dir, { recursive: true });
  writeFileSync(Store.dbPath(repo.dir), "garbage that is not SQLite, long enough for a header ........................");
  const corrupt = runCli(["search", "anything"], { home });
  expect(corrupt.code).toBe(1);
  expect(corrupt.stderr).toContain("hint: rebuild it with `researcher index --rebuild papers`");
  Store.open(repo.dir, { create: true }).close();
  const db = new Database(Store.dbPath(repo.dir));
  db.run("PRAGMA user_version = 99");
  db.close();
  const newer = runCli(["status", "papers"], { home });
  expect(newer.stderr).toContain("`researcher index --rebuild papers`");
  expect(`${corrupt.stderr}${newer.stderr}`).not.toMatch(/<name>/);
});

describe("a missing, empty or foreign index.db", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
  const repo = registerRepository(home, { name: "notes", path: docs, embed: false });
  const file = Store.dbPath(repo.dir);
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => new Error("expected an error"),
      (e) => e,
    );

  test("search on a repository whose index.db is gone says it is not indexed", async () => {
    await indexRepository(home, repo);
    rmSync(file);
    for (const repositories of [[], ["notes"]]) {
      const error = await failure(search(home, { query: "alpha", repositories }));
      expect(error).toMatchObject({ code: "NOT_INDEXED", hint: "run `researcher index notes`" });
    }
    const cli = runCli(["search", "alpha"], { home });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain("researcher index notes");
  });

  test("a zero-byte or non-SQLite index.db is INDEX_CORRUPT, left as it is, and --rebuild repairs it", async () => {
    for (const content of ["", "this is not a database, just some text that is long enough to have a header"]) {
      mkdirSync(repo.dir, { recursive: true });
      writeFileSync(file, content);
      const error = await failure(search(home, { query: "alpha" }));
      expect(error).toMatchObject({ code: "INDEX_CORRUPT", hint: expect.stringContaining("researcher index --rebuild notes") });
      expect(readFileSync(file, "utf8")).toBe(content); // a reader never writes
      expect(repositoryStatusOrError(repo)).toMatchObject({ code: "INDEX_CORRUPT" });
      await indexRepository(home, repo, { rebuild: true });
      expect((await search(home, { query: "alpha" })).total).toBe(1);
    }
  });
});

function repositoryStatusOrError(repo: Repository): unknown {
  try {
    return repositoryStatus(repo);
  } catch (error) {
    return error;
  }
}

/** Opens the store in a loop: a writer (as `index` does) once, a reader until it sees an index. */
const OPENER = `
import { Store } from ${JSON.stringify(join(ROOT, "src/store/store.ts"))};
const [dir, role, until] = process.argv.slice(2);
const seen = new Set();
if (role === "writer") Bun.sleepSync(Math.random() * 30);
while (Date.now() < Number(until)) {
  try {
    const store = Store.open(dir, { create: role === "writer" });
    store.counts();
    store.close();
    seen.add("ok");
    break;
  } catch (error) {
    seen.add(error.code ?? error.message);
    if (error.code !== "NOT_INDEXED") break;
  }
}
console.log(JSON.stringify([...seen]));
`;

test("the first writer racing readers and other writers: readers see no index or a whole one, never create it", async () => {
  const root = tempDir();
  writeFileSync(join(root, "opener.ts"), OPENER);
  for (let round = 0; round < 4; round++) {
    const dir = join(root, `repo${round}`);
    const until = String(Date.now() + 5000);
    const roles = [...Array(6).fill("writer"), ...Array(10).fill("reader")] as string[];
    const outputs = await Promise.all(
      roles.map(async (role) => {
        const proc = Bun.spawn([process.execPath, join(root, "opener.ts"), dir, role, until], { stdout: "pipe" });
        return { role, seen: JSON.parse((await new Response(proc.stdout).text()) || "[]") as string[] };
      }),
    );
    for (const { role, seen } of outputs) {
      if (role === "writer") expect(seen).toEqual(["ok"]);
      else expect(seen.filter((s) => s !== "NOT_INDEXED")).toEqual(["ok"]);
    }
  }
}, 60_000);

test("the scratch tables survive a rolled-back transaction that created them (a long-lived store keeps scoring)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# Alpha\n\nharbour tides and harbour walls\n", "b.md": "# Beta\n\nglaciers and moraines\n" });
  const repo = registerRepository(home, { name: "scratch", path: docs, embed: false });
  await indexRepository(home, repo);
  const store = Store.open(repo.dir);
  try {
    const ids = store.fragmentIdsOfDocuments([...store.documents().values()].map((d) => d.id));
    // The first use creates the temp tables inside a transaction that then fails: SQLite drops them on rollback.
    expect(() =>
      store.transaction(() => {
        store.fullText.termCounts(ids, ["harbour"]);
        store.fullText.termFrequencies(["harbour"]);
        throw new Error("a failed batch");
      }),
    ).toThrow("a failed batch");
    const counts = store.fullText.termCounts(ids, ["harbour"]);
    expect([...counts.values()].some((terms) => terms.get("harbour")?.[2] === 2)).toBe(true);
    expect(store.fullText.termFrequencies(["harbour"]).get("harbour")).toBe(1);
  } finally {
    store.close();
  }
});

test("removed documents' OCR'd texts are kept 30 days and 64 Mi characters at most, the newest first (s20 user E)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "r", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  const add = db.query(
    "INSERT INTO removed_texts(hash, settings, title, metadata, text, removed_at) VALUES (?, 's', 't', '{}', ?, julianday('now') - ?)",
  );
  for (const [hash, chars, days] of [
    ["old", 10, 31],
    ["recent", 10, 5],
    ["large-new", 40_000_000, 1],
    ["large-older", 40_000_000, 10],
    ["newest", 10, 0],
  ] as const)
    add.run(hash, "x".repeat(chars), days);
  db.close();
  const store = Store.open(repo.dir);
  try {
    store.transaction(() => store.pruneRemovedTexts({ bySize: true }));
    expect(["old", "recent", "large-new", "large-older", "newest"].map((hash) => store.keptConversion(hash, "s") !== undefined)).toEqual([
      false,
      true,
      true,
      false,
      true,
    ]);
  } finally {
    store.close();
  }
});

test("status while a writer's temp files come and go counts what it finds: a file gone since listed is no error (s21 scripts #2)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "st", path: docs, embed: false });
  await indexRepository(home, repo);
  // A writer's temp files, made and removed as fast as a shell can: status listed one, then stat failed (ENOENT).
  const churn = Bun.spawn([
    "sh",
    "-c",
    `cd '${repo.dir}' && while :; do for i in 1 2 3 4 5 6 7 8; do : > .w$i.tmp; done; rm -f .w*.tmp; done`,
  ]);
  try {
    for (let i = 0; i < 1_000; i++) expect(repositoryStatus(repo).documents).toBe(1);
  } finally {
    churn.kill();
    await churn.exited;
  }
}, 60_000);

/**
 * A repository of two notes whose documents hold a kept converted text each, as OCR'd ones do (settings "s"), and
 * a third, removed earlier, whose text is kept `days` ago: the removed-texts rules without a page of OCR.
 */
async function keptTexts(days: number): Promise<{ home: string; docs: string; repo: Repository; hashes: Record<string, string> }> {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n" });
  const repo = registerRepository(home, { name: "r", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  const hashes: Record<string, string> = {};
  for (const path of ["a.md", "b.md"]) {
    const { id, hash } = db.query<{ id: number; hash: string }, [string]>("SELECT id, hash FROM documents WHERE path = ?").get(path)!;
    db.query("INSERT INTO document_texts(document_id, settings, text) VALUES (?, 's', 'recognised text')").run(id);
    hashes[path] = hash;
  }
  db.query(
    "INSERT INTO removed_texts(hash, settings, title, metadata, text, removed_at) VALUES ('old-bytes', 's', 't', '{}', 'x', julianday('now') - ?)",
  ).run(days);
  db.close();
  return { home, docs, repo, hashes };
}

function isKept(repo: Repository, hash: string): boolean {
  const store = Store.open(repo.dir);
  try {
    return store.keptConversion(hash, "s") !== undefined;
  } finally {
    store.close();
  }
}

test("`remove` leaves no kept text of the document; one that leaves its folder keeps it (s21 F10)", async () => {
  // `remove` is a user saying "drop this" (a confidential scan, before sharing an index): its whole OCR'd text stayed.
  const { home, docs, repo, hashes } = await keptTexts(0);
  await removeDocument(repo, "a.md");
  expect(isKept(repo, hashes["a.md"]!)).toBe(false);
  rmSync(join(docs, "b.md"));
  expect(await indexRepository(home, repo)).toMatchObject({ removed: 1 });
  expect(isKept(repo, hashes["b.md"]!)).toBe(true);
});

test("a file moved, or a path indexed again, is still indexed: status lists no text kept of it (s28b retest R5, hostile F5)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "moved.md": "# M\n\nmoved\n", "gone.md": "# G\n\ngone\n", "again.md": "# A\n\nfirst version\n" });
  const repo = registerRepository(home, { name: "r", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  for (const path of ["moved.md", "gone.md", "again.md"]) {
    const { id } = db.query<{ id: number }, [string]>("SELECT id FROM documents WHERE path = ?").get(path)!;
    db.query("INSERT INTO document_texts(document_id, settings, text) VALUES (?, 's', 'OCR text')").run(id);
  }
  db.close();
  mkdirSync(join(docs, "sub"));
  renameSync(join(docs, "moved.md"), join(docs, "sub/moved.md"));
  rmSync(join(docs, "gone.md"));
  // A path deleted, then indexed again with other bytes: its first version's text is its history, not a document gone.
  rmSync(join(docs, "again.md"));
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1, removed: 3 });
  writeTree(docs, { "again.md": "# A\n\nsecond version, longer\n" });
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1 });
  // It listed moved.md's text as kept of a document no longer indexed, while sub/moved.md holds the same bytes.
  expect(repositoryStatus(repo).kept_texts.map((kept) => kept.path)).toEqual(["gone.md"]);
});

test("status lists a text kept before paths were recorded (path null) while documents are indexed (s29 code A2)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "r", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  // A row of schema 15 and before: no path. SQL's `NULL NOT IN (…)` is never true, so it was left out.
  db.query(
    "INSERT INTO removed_texts(hash, settings, title, metadata, text, removed_at, path) VALUES ('h', 's', 't', '{}', 'x', julianday('now'), NULL)",
  ).run();
  db.close();
  expect(repositoryStatus(repo).kept_texts.map((kept) => kept.path)).toEqual([null]);
});

test("`remove` of a path no longer indexed drops the OCR'd text kept of it, says so, exits 0; status lists it (s28 hostile F2)", async () => {
  // A scan deleted or newly ignored keeps its text 30 days; `remove` of its path answered "not indexed", exited 1 and
  // kept it, and nothing but a rebuild cleared it.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "secret.md": "# Secret\n\nsecret\n", "gone.md": "# Gone\n\ngone\n", "b.md": "# B\n\nbeta\n", "moved.md": "# M\n" });
  const repo = registerRepository(home, { name: "r", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  for (const [path, text] of [
    ["secret.md", "OCR-SECRET-424242 "],
    ["gone.md", "OCR-GONE-737373 "],
    ["moved.md", "OCR-MOVED-111111 "],
  ] as const) {
    const { id } = db.query<{ id: number }, [string]>("SELECT id FROM documents WHERE path = ?").get(path)!;
    db.query("INSERT INTO document_texts(document_id, settings, text) VALUES (?, 's', ?)").run(id, text.repeat(200));
  }
  db.close();
  writeTree(docs, { ".gitignore": "secret.md\n" });
  rmSync(join(docs, "gone.md"));
  // A file moved is still indexed: its text is no text kept of a document gone (s28b retest R5).
  mkdirSync(join(docs, "sub"));
  renameSync(join(docs, "moved.md"), join(docs, "sub/moved.md"));
  expect(await indexRepository(home, repo)).toMatchObject({ removed: 3 });
  const bytes = () => indexBytes(repo.dir);
  expect(bytes()).toContain("OCR-SECRET-424242");
  const status = JSON.parse(runCli(["status", "r", "--json"], { home }).stdout);
  expect(status.kept_texts.map((kept: { path: string }) => kept.path).sort()).toEqual(["gone.md", "secret.md"]);
  expect(runCli(["status", "r"], { home }).stdout).toContain(
    "  kept 30 days, read back if they return: the OCR'd text of 2 documents no longer indexed (",
  );
  expect(runCli(["remove", "r:secret.md"], { home })).toMatchObject({
    code: 0,
    stdout: "r:secret.md is no longer indexed: dropped the OCR'd text kept of it since it left the index\n",
    stderr: "",
  });
  // moved.md's kept text took, for its last overflow page, one the run had freed of secret.md's row, whose bytes it
  // kept past the text's end: a live page, which no zeroing of free pages reaches (secure_delete FAST left them).
  expect(bytes()).not.toContain("OCR-SECRET-424242");
  expect(bytes()).toContain("OCR-GONE-737373");
  expect(JSON.parse(runCli(["remove", "r", "gone.md", "--json"], { home }).stdout)).toEqual({
    repository: "r",
    path: "gone.md",
    removed: true,
    dropped: "kept_text",
  });
  expect(bytes()).not.toContain("OCR-GONE-737373");
  expect(bytes()).toContain("OCR-MOVED-111111");
  expect(JSON.parse(runCli(["remove", "r:sub/moved.md", "--json"], { home }).stdout)).toMatchObject({ dropped: "document" });
  expect(bytes()).not.toContain("OCR-MOVED-111111"); // kept at moved.md, its bytes' text goes with the file moved
  expect(repositoryStatus(repo).kept_texts).toEqual([]);
  expect(runCli(["status", "r"], { home }).stdout).not.toContain("kept 30 days");
  // Nothing kept there now: the path is not indexed, as before.
  expect(runCli(["remove", "r:secret.md"], { home })).toMatchObject({ code: 1, stderr: expect.stringContaining("is not indexed") });
  expect(JSON.parse(runCli(["remove", "r:b.md", "--json"], { home }).stdout)).toMatchObject({ path: "b.md", dropped: "document" });
}, 60_000);

test("`remove` and a rebuild leave no bytes of what they drop in the index files (s22 review F9)", async () => {
  // Deleted rows stayed in free space and freed pages: `strings index.db` read a removed scan's OCR'd text.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "secret.md": "# Secret\n\nCONFIDENTIAL-XYZZY salary 123456\n", "b.md": "# B\n\nbeta\n" });
  const repo = registerRepository(home, { name: "r", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  const { id } = db.query<{ id: number }, []>("SELECT id FROM documents WHERE path = 'secret.md'").get()!;
  db.query("INSERT INTO document_texts(document_id, settings, text) VALUES (?, 's', ?)").run(id, "OCR-PASSPORT-998877 ".repeat(200));
  db.run(
    "INSERT INTO removed_texts(hash, settings, title, metadata, text, removed_at, path) VALUES ('gone', 's', 't', '{}', ?, julianday('now'), 'gone.pdf')",
    ["KEPT-SCAN-TEXT ".repeat(300)],
  );
  db.close();
  const bytes = () => indexBytes(repo.dir);
  expect(bytes()).toContain("OCR-PASSPORT-998877");
  await removeDocument(repo, "secret.md");
  expect(bytes()).not.toContain("OCR-PASSPORT-998877");
  expect(bytes()).not.toContain("CONFIDENTIAL-XYZZY salary");
  expect(bytes()).toContain("KEPT-SCAN-TEXT");
  await indexRepository(home, repo, { rebuild: true });
  expect(bytes()).not.toContain("KEPT-SCAN-TEXT");
});

test("a document deleted from its folder leaves no bytes of its text in the index files either (s22 retest)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`n${i}.md`, `# n${i}\n\nfiller words ${i}\n`])),
    "secret.md": "# Secret\n\nCONFIDENTIAL-XYZZY salary 123456\n",
  });
  const repo = registerRepository(home, { name: "r", path: docs, embed: false });
  await indexRepository(home, repo);
  rmSync(join(docs, "secret.md"));
  expect(await indexRepository(home, repo)).toMatchObject({ removed: 1 });
  const bytes = readdirSync(repo.dir)
    .filter((name) => name.startsWith("index.db"))
    .map((name) => readFileSync(join(repo.dir, name)).toString("latin1"))
    .join("");
  expect(bytes).not.toContain("CONFIDENTIAL-XYZZY salary");
});

/** Delete a document as a researcher before this one did, under secure_delete FAST: pages it frees whole keep their bytes. */
function deleteUnderFast(dir: string, path: string): void {
  const db = new Database(Store.dbPath(dir));
  try {
    db.run("PRAGMA secure_delete = FAST");
    db.run("PRAGMA foreign_keys = ON");
    db.query("DELETE FROM documents WHERE path = ?").run(path);
  } finally {
    db.close();
  }
}

test("remove and a rebuild zero the pages earlier runs freed: a long document deleted before leaves no text (s22 retest2 A1)", async () => {
  // Pages freed whole kept their bytes under secure_delete FAST, and neither `remove` nor a rebuild reached them. Runs
  // zero what they free now (secure_delete ON); an index a researcher before wrote may still hold such pages.
  const home = tempDir();
  const docs = tempDir();
  const long = Array.from({ length: 400 }, (_, i) => `LONGSECRET-${i} is a sentence of the confidential report.`).join(" ");
  writeTree(docs, { "long.md": `# Long\n\n${long}\n`, "a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n" });
  const repo = registerRepository(home, { name: "r", path: docs, embed: false });
  await indexRepository(home, repo);
  const bytes = () => indexBytes(repo.dir);
  rmSync(join(docs, "long.md"));
  await indexRepository(home, repo);
  expect(bytes()).not.toContain("LONGSECRET-"); // an ordinary run zeroes the pages it frees whole
  writeTree(docs, { "long.md": `# Long\n\n${long}\n` });
  await indexRepository(home, repo);
  deleteUnderFast(repo.dir, "long.md");
  rmSync(join(docs, "long.md"));
  expect(bytes()).toContain("LONGSECRET-"); // pages freed whole under FAST, as a researcher before left them
  const pages = () => statSync(Store.dbPath(repo.dir)).size;
  const before = pages();
  await removeDocument(repo, "a.md");
  expect(bytes()).not.toContain("LONGSECRET-");
  await removeDocument(repo, "b.md");
  expect(pages()).toBe(before); // the scrub covers the free pages, and no more: it grew the file (s23 review R7)
  // A remove killed after its removal committed, before its scrub, is what an ordinary run's removal leaves: the
  // remove its user runs again says the path is not indexed, and zeroes the pages (s24 hostile H2).
  writeTree(docs, { "long.md": `# Long\n\n${long}\n` });
  await indexRepository(home, repo);
  deleteUnderFast(repo.dir, "long.md");
  rmSync(join(docs, "long.md"));
  expect(bytes()).toContain("LONGSECRET-");
  await expect(removeDocument(repo, "long.md")).rejects.toMatchObject({ code: "DOCUMENT_NOT_FOUND" });
  expect(bytes()).not.toContain("LONGSECRET-");
  writeTree(docs, { "long.md": `# Long\n\n${long}\n` });
  await indexRepository(home, repo);
  deleteUnderFast(repo.dir, "long.md");
  rmSync(join(docs, "long.md"));
  await indexRepository(home, repo, { rebuild: true });
  expect(bytes()).not.toContain("LONGSECRET-");
  expect(runCli(["verify", "r"], { home }).code).toBe(0);
});

test("an index run prunes kept texts by age even when it changes nothing; a rebuild keeps none (s21 F10)", async () => {
  // Pruned only by runs that indexed or removed something, a text outlived its 30 days in a quiet folder; and
  // `--rebuild`, rewriting index.db in place, kept every removed document's text.
  const { home, docs, repo, hashes } = await keptTexts(31);
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0, removed: 0 });
  expect(isKept(repo, "old-bytes")).toBe(false);
  const db = new Database(Store.dbPath(repo.dir));
  db.run(
    "INSERT INTO removed_texts(hash, settings, title, metadata, text, removed_at) VALUES ('recent', 's', 't', '{}', 'x', julianday('now'))",
  );
  db.close();
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0, removed: 0 });
  expect(isKept(repo, "recent")).toBe(true);
  rmSync(join(docs, "b.md"));
  expect(await indexRepository(home, repo, { rebuild: true })).toMatchObject({ indexed: 1, removed: 1 });
  expect([isKept(repo, "recent"), isKept(repo, hashes["a.md"]!), isKept(repo, hashes["b.md"]!)]).toEqual([false, false, false]);
});

test("pruning removed texts by age reads an index, not every kept text (schema 11)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "age", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(join(repo.dir, "index.db"), { readonly: true });
  try {
    const plan = db
      .query<{ detail: string }, []>("EXPLAIN QUERY PLAN DELETE FROM removed_texts WHERE removed_at < julianday('now') - 30")
      .all();
    expect(plan.map((step) => step.detail).join("; ")).toContain("USING INDEX removed_texts_age");
  } finally {
    db.close();
  }
});

/** What index.db and its side files (WAL) hold, as text, in an index folder: a removed text must not be in it. */
function indexBytes(dir: string): string {
  return readdirSync(dir)
    .filter((name) => name.startsWith("index.db"))
    .map((name) => readFileSync(join(dir, name)).toString("latin1"))
    .join("");
}

/** `researcher remove` as a subprocess, polled every few milliseconds until `ready` or its end; then `signals` are sent. */
async function removeSignalled(home: string, args: string[], ready: (pid: number) => boolean, signals: NodeJS.Signals[]) {
  const env = { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" };
  const proc = Bun.spawn([...cliCommand, "remove", ...args], { env, cwd: home, stdout: "pipe", stderr: "pipe" });
  while (proc.exitCode === null && !ready(proc.pid)) await Bun.sleep(2);
  const running = proc.exitCode === null;
  for (const signal of signals) proc.kill(signal);
  const sent = performance.now();
  await proc.exited;
  return {
    running, // when the signals were sent: what `ready` waited for came before the command's end
    seconds: (performance.now() - sent) / 1000,
    code: proc.exitCode,
    signal: proc.signalCode,
    stdout: await new Response(proc.stdout).text(),
    stderr: await new Response(proc.stderr).text(),
  };
}

/** Whether a process catches SIGINT (Linux: the SigCgt mask of /proc/<pid>/status); false once it is gone. */
function catchesSigint(pid: number): boolean {
  try {
    const caught = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0";
    return ((BigInt(`0x${caught}`) >> BigInt(constants.signals.SIGINT - 1)) & 1n) === 1n;
  } catch {
    return false;
  }
}

const walBytes = (dir: string) => statSync(join(dir, "index.db-wal"), { throwIfNoEntry: false })?.size;

test("no signal a user sends but kill -9 comes between remove's removal and the zeroing of its pages; it ends the command after them (s24 hostile H2, retest N2; s25 review R8; s25b review F6)", async () => {
  // Ctrl-C, a service's stop, a closed terminal (SIGHUP) or Ctrl-\ (SIGQUIT) there left the text in index.db. Here
  // they come while the scrub writes a long free list (a document deleted under FAST, as runs before ON did) into the WAL.
  const home = tempDir();
  const docs = tempDir();
  const words = Array.from({ length: 300_000 }, (_, i) => `BIGSECRET${i} word${i % 997} of the report.`).join(" ");
  writeTree(docs, { "big.md": `# Big\n\n${words}\n`, "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "r", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "r"], { home }).code).toBe(0);
  rmSync(join(docs, "big.md"));
  const dir = join(home, "repositories", "r");
  deleteUnderFast(dir, "big.md");
  expect(indexBytes(dir)).toContain("BIGSECRET");
  // The removal of a.md writes a few pages; past a megabyte of WAL, the scrub is under way.
  const scrubbing = () => (walBytes(dir) ?? 0) > 2 ** 20;
  // SIGXCPU is what a CPU-time limit sends (`ulimit -t`, a batch job's): it too ended the process there (s25 hostile F1).
  const sent: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGXCPU", "SIGUSR2"];
  const run = await removeSignalled(home, ["r", "a.md"], scrubbing, sent);
  expect(indexBytes(dir)).not.toContain("BIGSECRET");
  // Held, not swallowed: once the pages are zeroed and the removal said, the first of them ends the command, as it
  // would have (the rebuild of vectors.usearch after it ran to its end: s25b review F6).
  expect(run).toMatchObject({ running: true, code: null, stdout: "removed r:a.md\n" });
  expect(sent).toContain(run.signal as NodeJS.Signals);
}, 60_000);

/** `files` Markdown files of `sections` short sections each, every section a fragment of its own words. */
function manySections(files: number, sections: number): Record<string, string> {
  const words =
    "river city music garden winter science market history ocean school mountain doctor energy film bread train letter forest island bridge".split(
      " ",
    );
  const section = (f: number, i: number) =>
    `## Part ${i}\n\n${Array.from({ length: 8 }, (_, j) => words[(f * 31 + i * 7 + j * 13) % words.length]).join(" ")} ${f * sections + i}.\n`;
  return Object.fromEntries(
    Array.from({ length: files }, (_, f) => [
      `part${f}.md`,
      `# Parts ${f}\n\n${Array.from({ length: sections }, (_, i) => section(f, i)).join("\n")}`,
    ]),
  );
}

testShared(
  "remove zeroes the pages it frees before it rebuilds vectors.usearch: a rebuild that fails leaves no text, and says the document was removed (s25 review R5)",
  () => {
    // The rebuild came between the removal and the zeroing: its failure (a folder where vectors.usearch goes) left
    // the earlier version's text in free pages, and its hint, "run the command again", then met "not indexed".
    const home = tempDir();
    const docs = tempDir();
    const long = Array.from({ length: 400 }, (_, i) => `OLDSECRET-${i} is a sentence of the confidential report.`).join(" ");
    writeTree(docs, { "old.md": `# Old\n\n${long}\n`, "secret.md": "# Secret\n\nthe report\n", "a.md": "# A\n\nalpha\n" });
    expect(runCli(["repo", "add", "r", docs, "--embedding-model", GLOVE], { home }).code).toBe(0);
    expect(runCli(["index", "r"], { home }).code).toBe(0);
    rmSync(join(docs, "old.md"));
    const dir = join(home, "repositories", "r");
    deleteUnderFast(dir, "old.md");
    expect(indexBytes(dir)).toContain("OLDSECRET-"); // pages freed whole under FAST, as runs before ON left them
    rmSync(join(dir, "vectors.usearch"));
    mkdirSync(join(dir, "vectors.usearch"));
    const run = runCli(["remove", "r", "secret.md"], { home });
    expect(indexBytes(dir)).not.toContain("OLDSECRET-");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "error: removed r:secret.md, but vectors.usearch was not rebuilt: a folder stands where a file is written",
    );
    expect(run.stderr).toContain("hint: move that folder away, then `researcher index r` rebuilds it");
    expect(runCli(["ls", "r"], { home }).stdout).not.toContain("secret.md");
    rmSync(join(dir, "vectors.usearch"), { recursive: true });
    rmSync(join(docs, "secret.md")); // or the index run takes it up again
    expect(runCli(["index", "r"], { home }).code).toBe(0); // and builds vectors.usearch
    expect(runCli(["verify", "r"], { home }).code).toBe(0);
  },
  60_000,
);

testShared(
  "Ctrl-C during remove's rebuild of vectors.usearch ends it at once, the removal committed and zeroed (s25 review R5)",
  async () => {
    // Signals were held through the rebuild (20 s at 50k vectors, minutes at 1M): Ctrl-C, a service's stop and a
    // closed terminal waited it out, the removed text in index.db all along.
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { ...manySections(8, 800), "secret.md": "# Secret\n\nZQXSECRETWORD lives here\n" });
    expect(runCli(["repo", "add", "r", docs, "--embedding-model", GLOVE], { home }).code).toBe(0);
    expect(runCli(["index", "r"], { home }).code).toBe(0);
    const dir = join(home, "repositories", "r");
    // In the rebuild (seconds for these 6,400 vectors): the checkpoint has carried the zeros into index.db and emptied
    // the WAL, and the signals held from the removal to there are let go (the checkpoint's end alone came a moment
    // before: a Ctrl-C sent then is rightly held).
    const rebuilding = (pid: number) =>
      walBytes(dir) === 0 && !catchesSigint(pid) && !readFileSync(join(dir, "index.db")).includes("ZQXSECRETWORD");
    const run = await removeSignalled(home, ["r", "secret.md"], rebuilding, ["SIGINT"]);
    // It says the document is removed before the rebuild: it ended without a word (s25b retest N1).
    expect(run).toMatchObject({ running: true, code: null, signal: "SIGINT", stdout: "removed r:secret.md\n" });
    expect(run.seconds).toBeLessThan(1);
    const store = Store.open(dir);
    expect(vectorIndexState(store, dir)).toBe("stale"); // stopped in the rebuild, not after it
    store.close();
    expect(indexBytes(dir)).not.toContain("ZQXSECRETWORD");
    expect(runCli(["ls", "r"], { home }).stdout).not.toContain("secret.md");
    rmSync(join(docs, "secret.md"));
    expect(runCli(["verify", "r"], { home }).code).toBe(0); // a stale vectors.usearch, which searches scan around
  },
  60_000,
);

describe("remove leaves no text of a moved scan's versions (s26b review F1, F2)", () => {
  const fragment = (text: string) => [{ seq: 0, text, startLine: 1, endLine: 1, headings: [], page: 1, pageEnd: 1 }];
  const put = (store: Store, path: string, hash: string, text: string) =>
    store.transaction(() =>
      store.replaceDocument(
        {
          path,
          hash,
          size: 1,
          mtimeMs: 1,
          ctimeMs: null,
          ino: null,
          title: "t",
          format: "pdf",
          metadata: {},
          convertedText: { text, settings: "s" },
        },
        fragment(text),
        [`th-${hash}`],
      ),
    );
  const bytesOf = (dir: string) =>
    readdirSync(dir)
      .filter((name) => name.startsWith("index.db"))
      .map((name) => readFileSync(join(dir, name)).toString("latin1"))
      .join("");

  test("an earlier version kept at the path it moved from goes with the document", () => {
    // Annotated at a.pdf (v1's text kept at a.pdf), moved to b.pdf (read back from v2's kept text), removed: v1 stayed.
    const dir = tempDir();
    const store = Store.open(dir, { write: true, create: true });
    put(store, "a.pdf", "h1", "SECRETVERSIONONE");
    put(store, "a.pdf", "h2", "SECRETVERSIONTWO");
    store.transaction(() => store.deleteDocument("a.pdf"));
    put(store, "b.pdf", "h2", "SECRETVERSIONTWO");
    expect(store.forgetDocument("b.pdf")).toBe(true);
    store.checkpoint();
    store.close();
    expect(bytesOf(dir)).not.toContain("SECRETVERSION");
  });

  test("a move in one run (the new path written before the old one is deleted) takes its earlier versions too (s27 review F1)", () => {
    // `mv a.pdf b.pdf; researcher index` writes b.pdf while a.pdf is still indexed, then deletes a.pdf: v1 stayed.
    const dir = tempDir();
    const store = Store.open(dir, { write: true, create: true });
    put(store, "a.pdf", "h1", "SECRETVERSIONONE");
    put(store, "a.pdf", "h2", "SECRETVERSIONTWO");
    put(store, "b.pdf", "h2", "SECRETVERSIONTWO");
    store.transaction(() => store.deleteDocument("a.pdf"));
    put(store, "c.pdf", "h3", "SECRETVERSIONTHREE"); // moved on again, over two runs
    store.transaction(() => store.deleteDocument("b.pdf"));
    put(store, "d.pdf", "h2", "SECRETVERSIONTWO");
    expect(store.forgetDocument("d.pdf")).toBe(true);
    expect(store.forgetDocument("c.pdf")).toBe(true);
    store.checkpoint();
    store.close();
    expect(bytesOf(dir)).not.toContain("SECRETVERSION");
  });

  test("a copy of an old version leaves the original's history to the original (s27 review F2)", () => {
    const dir = tempDir();
    const store = Store.open(dir, { write: true, create: true });
    put(store, "a.pdf", "h0", "SECRETVERSIONZERO");
    put(store, "a.pdf", "h1", "SECRETVERSIONONE");
    put(store, "a.pdf", "h2", "SECRETVERSIONTWO");
    put(store, "c.pdf", "h1", "SECRETVERSIONONE"); // v1 copied beside the original, which stays indexed
    expect(store.forgetDocument("a.pdf")).toBe(true);
    store.checkpoint();
    const kept = bytesOf(dir);
    expect(kept).not.toContain("SECRETVERSIONZERO");
    expect(kept).not.toContain("SECRETVERSIONTWO");
    expect(store.convertedText("c.pdf")?.text).toBe("SECRETVERSIONONE"); // the copy's own text stays
    store.close();
  });

  test("pages read before the file moved go with the path read after; a run that wants the new path keeps them", () => {
    const dir = tempDir();
    const store = Store.open(dir, { write: true, create: true });
    const pages = () => [...store.ocrReadings("h", "s").keys()].sort();
    const keep = (path: string, page: number) =>
      store.keepOcrReading({ hash: "h", settings: "s", path }, page, { text: `SECRET PAGE ${page}` });
    keep("a.pdf", 1);
    keep("a.pdf", 2);
    keep("b.pdf", 3);
    store.pruneOcrReadings((file) => file.path === "b.pdf"); // a complete run: the file is at b.pdf now
    expect(pages()).toEqual([1, 2, 3]); // the pages read at a.pdf are the same bytes': resumed at b.pdf
    expect(store.forgetDocument("b.pdf")).toBe(false); // not indexed: its first run never finished
    expect(pages()).toEqual([]);
    store.checkpoint();
    store.close();
    expect(bytesOf(dir)).not.toContain("SECRET PAGE");
  });
});
