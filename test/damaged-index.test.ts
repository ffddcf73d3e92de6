/** Issue 22: an index.db damaged beneath SQLite (truncated, a page overwritten, a page zeroed) is recovered by the CLI. */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { registerRepository } from "../src/repos.ts";
import { Store } from "../src/store/store.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  AS_ROOT,
  cliAsNobody,
  cliCommand,
  executable,
  HOOK_TIMEOUT,
  MODEL_ENV,
  runCli,
  SHARED,
  startServe,
  SYSTEM_PATH,
  tempDir,
  testShared,
  writeTree,
} from "./helpers.ts";

/** Enough documents for an index.db of many pages. */
function corpus(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 60; i++) files[`doc${i}.md`] = `# Document ${i}\n\n${`word${i} alpha beta gamma delta `.repeat(80)}\n`;
  return files;
}

const PAGE = 4096;

/** `verify` of a sound index rebuilt beside the damaged one it moved aside: ok, and the copy named for the user. */
const OK_BESIDE_A_COPY =
  /^d: ok\n {2}kept aside: \/\S+\/index\.db\.damaged-[0-9TZ-]+ \([^)]+\), an index that could not be used; delete it once you no longer need it\n$/;
const damages: Record<string, (file: string) => void> = {
  truncated: (file) => truncateSync(file, Math.floor(statSync(file).size / 2 / PAGE) * PAGE),
  "a damaged page": (file) => overwrite(file, 6 * PAGE, Buffer.alloc(400, 0x5a)),
  "a zeroed page": (file) => overwrite(file, 2 * PAGE, Buffer.alloc(PAGE)),
  // FTS5 says so with SQLITE_ERROR, which no check took for damage: the rebuild itself failed on it (s17 hostile #3).
  "a damaged full-text config row": (file) => {
    const db = new Database(file);
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    // The row ('version', 4) of fragments_fts_config as stored: its header (3 bytes: text of 7, a one-byte integer).
    const bytes = readFileSync(file);
    const at = bytes.indexOf(Buffer.from("\x03\x1b\x01version\x04", "latin1"));
    expect(at).toBeGreaterThan(0);
    overwrite(file, at + 10, Buffer.from([0]));
  },
};

function overwrite(file: string, at: number, bytes: Buffer): void {
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}

describe("a damaged index.db", () => {
  for (const [name, damage] of Object.entries(damages)) {
    test(`${name}: verify says so with a hint that works; index --rebuild moves it aside and builds fresh`, () => {
      const home = tempDir();
      const docs = tempDir();
      writeTree(docs, corpus());
      const repo = registerRepository(home, { name: "d", path: docs, embed: false });
      expect(runCli(["index", "d"], { home }).code).toBe(0);
      const search = () => JSON.parse(runCli(["search", "word7", "--mode", "bm25", "--json"], { home }).stdout).total;
      const before = search();
      expect(before).toBeGreaterThan(0);
      damage(Store.dbPath(repo.dir));

      const searched = runCli(["search", "word7", "--mode", "bm25"], { home });
      expect(searched.code).toBe(1);
      expect(searched.stderr).not.toContain("unexpected");
      expect(searched.stderr).toMatch(/\nhint: .*`researcher (verify|index --rebuild d)`/);

      const verify = runCli(["verify", "d", "--json"], { home });
      expect(verify.code).toBe(1);
      const fixes = (JSON.parse(verify.stdout).problems as { fix: string }[]).map((p) => p.fix);
      expect(fixes).toContain("researcher index --rebuild d");
      const repair = runCli(["verify", "d", "--repair"], { home });
      expect(repair.code).toBe(1); // it cannot repair this itself, and says what can
      expect(repair.stdout + repair.stderr).toContain("researcher index --rebuild d");

      const rebuild = runCli(["index", "d", "--rebuild"], { home });
      expect(rebuild.stderr).not.toContain("error:");
      expect(rebuild.code).toBe(0);
      expect(rebuild.stdout + rebuild.stderr).toContain("moved aside");
      const aside = readdirSync(repo.dir).find((f) => f.startsWith("index.db.damaged-"));
      expect(aside).toBeDefined();
      // The copy is named, for the user to delete: it is no problem of the index (s26 hostile F2).
      const verified = runCli(["verify", "d"], { home });
      expect(verified.code).toBe(0);
      expect(verified.stdout).toStartWith(`d: ok\n  kept aside: ${join(repo.dir, aside!)} (`);
      expect(search()).toBe(before);
      expect(existsSync(Store.dbPath(repo.dir))).toBe(true);
    }, 60_000);
  }

  test("written by a newer researcher: the hint's --rebuild works (the index is moved aside)", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "alpha words\n" });
    const repo = registerRepository(home, { name: "n", path: docs, embed: false });
    expect(runCli(["index", "n"], { home }).code).toBe(0);
    const db = new Database(Store.dbPath(repo.dir));
    db.run("PRAGMA user_version = 99");
    db.close();
    const refused = runCli(["index", "n"], { home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("`researcher index --rebuild n`");
    const rebuilt = runCli(["index", "n", "--rebuild"], { home });
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stderr).toContain("moved aside");
    expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(1);
  }, 60_000);
});

testShared(
  "a damaged value inside the index (not JSON) is INDEX_CORRUPT with a rebuild that works, or recomputed: never 'unexpected' (s12 review #7)",
  () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "---\nauthor: ana\n---\n# A\n\nalpha words\n", "b.md": "# B\n\nbeta words\n" });
    const repo = registerRepository(home, { name: "d", path: docs });
    expect(runCli(["index", "d"], { home }).code).toBe(0);
    const damage = (sql: string) => {
      const db = new Database(Store.dbPath(repo.dir));
      db.run(sql);
      db.close();
    };
    const search = (...flags: string[]) => runCli(["search", "alpha", "--json", ...flags], { home });
    // A document's metadata: the row is served without it, as ls and get already did.
    damage("UPDATE documents SET metadata = 'not json' WHERE path = 'a.md'");
    expect(JSON.parse(search("--mode", "bm25").stdout).results[0]).toMatchObject({ path: "a.md", metadata: { format: "md" } });
    // What is computed from the index (chunking records, calibration, impact settings) is computed again.
    damage("UPDATE meta SET value = '{bad' WHERE key IN ('chunking', 'vector_calibration')");
    damage("INSERT OR REPLACE INTO meta(key, value) VALUES ('chunking_behind', '{}'), ('impacts', '[1,')");
    expect(runCli(["index", "d"], { home })).toMatchObject({ code: 0, stderr: "" });
    expect(search().code).toBe(0);
    // The record of which model made the vectors: nothing can tell, so the index is damaged, and a rebuild re-embeds.
    damage("UPDATE meta SET value = '{bad json' WHERE key = 'embedding_model'");
    for (const run of [search(), runCli(["status", "d"], { home }), runCli(["index", "d"], { home })]) {
      expect(run.stderr).not.toContain("unexpected");
      expect(run.stdout + run.stderr).toContain("researcher index --rebuild d");
    }
    expect(runCli(["index", "d", "--rebuild"], { home })).toMatchObject({ code: 0, stderr: "" });
    const rebuilt = JSON.parse(search().stdout);
    expect([rebuilt.mode, rebuilt.results[0].path]).toEqual(["hybrid", "a.md"]);
    expect(runCli(["verify", "d"], { home })).toMatchObject({ code: 0, stdout: "d: ok\n" });
  },
  60_000,
);

testShared(
  "an index of text hashes out of step with its table stops the embedding pass as INDEX_CORRUPT, not an endless loop filling the disk (s17 hostile #2)",
  () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`n${i}.md`, `# Note ${i}\n\nword${i} and more text ${i}\n`])));
    const repo = registerRepository(home, { name: "d", path: docs, embed: false });
    expect(runCli(["index", "d"], { home }).code).toBe(0);
    expect(runCli(["config", "set", "repositories.d.embed", "true"], { home }).code).toBe(0); // every text waits for a vector
    // One key of fragments_by_text_hash takes a byte no hash has, as bit rot left it: its row's text is then given
    // back by a key no vector is stored under, again and again.
    const file = Store.dbPath(repo.dir);
    const db = new Database(file);
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    const { rootpage } = db
      .query<{ rootpage: number }, []>("SELECT rootpage FROM sqlite_master WHERE name = 'fragments_by_text_hash'")
      .get()!;
    const hash = db
      .query<{ text_hash: string }, []>("SELECT text_hash FROM fragments ORDER BY text_hash LIMIT 1 OFFSET 30")
      .get()!.text_hash;
    db.close();
    const page = (rootpage - 1) * PAGE;
    const at = readFileSync(file)
      .subarray(page, page + PAGE)
      .indexOf(Buffer.from(hash));
    expect(at).toBeGreaterThan(0);
    overwrite(file, page + at + 20, Buffer.from([0xff]));
    // The first pass embeds the rest; the next one looped, its WAL growing by megabytes a second.
    runCli(["index", "d"], { home, timeoutMs: 30_000 });
    const looped = runCli(["index", "d"], { home, timeoutMs: 30_000 });
    expect({ code: looped.code, stderr: looped.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining("hint: rebuild it with `researcher index --rebuild d`"),
    });
    expect(runCli(["index", "d", "--rebuild"], { home })).toMatchObject({ code: 0 });
    expect(runCli(["verify", "d"], { home })).toMatchObject({ code: 0, stdout: expect.stringMatching(OK_BESIDE_A_COPY) });
  },
  90_000,
);

test("a write that fails on damage SQLite does not name (a path the UNIQUE index no longer holds) is INDEX_CORRUPT with the rebuild, not 'unexpected' (s17 hostile #3)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`note-${i}.md`, `# Note ${i}\n\nword${i}\n`])));
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  expect(runCli(["index", "d"], { home }).code).toBe(0);
  const file = Store.dbPath(repo.dir);
  const db = new Database(file);
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const { rootpage } = db.query<{ rootpage: number }, []>("SELECT rootpage FROM sqlite_master WHERE name = 'documents'").get()!;
  db.close();
  // In the table's row, note-1.md's path now reads note-2.md; its UNIQUE index still says note-1.md.
  const page = (rootpage - 1) * PAGE;
  const at = readFileSync(file)
    .subarray(page, page + PAGE)
    .indexOf(Buffer.from("note-1.md"));
  expect(at).toBeGreaterThan(0);
  overwrite(file, page + at + 5, Buffer.from("2"));
  writeFileSync(join(docs, "note-1.md"), "# Note 1\n\nword1 edited\n");
  const run = runCli(["index", "d"], { home });
  expect({ code: run.code, stderr: run.stderr }).toEqual({
    code: 1,
    stderr: expect.stringMatching(
      /^error: d: the index of 'd' is damaged: UNIQUE constraint failed: documents\.path \(.+\)\nhint: rebuild it with `researcher index --rebuild d`/,
    ),
  });
  expect(runCli(["index", "d", "--rebuild"], { home }).code).toBe(0);
  expect(runCli(["verify", "d"], { home })).toMatchObject({ code: 0, stdout: expect.stringMatching(OK_BESIDE_A_COPY) });
});

test("an index.db that is a folder or a FIFO is named so, and index --rebuild moves it aside (s18 hostile #4)", () => {
  // A folder read as a permission problem ("give yourself read and write access"), and the rebuild failed with it.
  for (const [kind, make, why] of [
    ["folder", (file: string) => mkdirSync(file), "it is a folder, not a database"],
    ["fifo", (file: string) => Bun.spawnSync(["mkfifo", file]), "it is no regular file (a FIFO or a device)"],
  ] as const) {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha words here\n" });
    const repo = registerRepository(home, { name: "d", path: docs, embed: false });
    expect(runCli(["index", "d"], { home }).code).toBe(0);
    rmSync(Store.dbPath(repo.dir));
    make(Store.dbPath(repo.dir));
    const searched = runCli(["search", "alpha"], { home });
    expect({ kind, code: searched.code, stderr: searched.stderr }).toEqual({
      kind,
      code: 1,
      stderr: `error: cannot open ${Store.dbPath(repo.dir)}: ${why}\nhint: rebuild it with \`researcher index --rebuild d\` (it moves the damaged index aside)\n`,
    });
    const rebuild = runCli(["index", "d", "--rebuild"], { home });
    expect({ kind, code: rebuild.code, stderr: rebuild.stderr }).toEqual({ kind, code: 0, stderr: expect.stringContaining("moved aside") });
    expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(1);
  }
});

test("an index.db that is a link to nothing (a disk not mounted) is named so, and only --rebuild replaces it (s18 retest N10)", () => {
  // It read as "not indexed yet", and every index run and the rebuild failed with ENOENT.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words here\n" });
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  expect(runCli(["index", "d"], { home }).code).toBe(0);
  const gone = join(tempDir(), "unmounted", "index.db");
  rmSync(Store.dbPath(repo.dir));
  symlinkSync(gone, Store.dbPath(repo.dir));
  for (const args of [
    ["search", "alpha"],
    ["index", "d"],
    ["verify", "d"],
  ]) {
    const run = runCli(args, { home });
    expect({ args, code: run.code, out: run.stdout + run.stderr }).toEqual({
      args,
      code: 1,
      out: expect.stringContaining(`is a link to ${gone}, which does not exist`),
    });
  }
  const rebuild = runCli(["index", "d", "--rebuild"], { home });
  expect({ code: rebuild.code, stderr: rebuild.stderr }).toEqual({ code: 0, stderr: expect.stringContaining("moved aside") });
  expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(1);
});

test("a WAL side file that is a folder or a link to nothing is named so, and index --rebuild moves it aside (s18 retest N10)", () => {
  // "give yourself read and write access" (this runs as root), and the rebuild failed the same way.
  for (const [side, make] of [
    ["index.db-wal", (path: string) => mkdirSync(path)],
    ["index.db-wal", (path: string) => symlinkSync("/nonexistent/x", path)],
    ["index.db-shm", (path: string) => mkdirSync(path)],
  ] as const) {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha words here\n" });
    const repo = registerRepository(home, { name: "d", path: docs, embed: false });
    expect(runCli(["index", "d"], { home }).code).toBe(0);
    const path = join(repo.dir, side);
    rmSync(path, { force: true });
    make(path);
    for (const args of [
      ["search", "alpha"],
      ["index", "d"],
    ]) {
      const run = runCli(args, { home });
      expect({ side, args, code: run.code, stderr: run.stderr }).toEqual({
        side,
        args,
        code: 1,
        stderr: expect.stringMatching(new RegExp(`^error: .*${side} is .*\nhint: rebuild it with \`researcher index --rebuild d\``)),
      });
    }
    const rebuild = runCli(["index", "d", "--rebuild"], { home });
    expect({ side, code: rebuild.code, stderr: rebuild.stderr }).toEqual({ side, code: 0, stderr: expect.stringContaining("moved aside") });
    expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(1);
  }
});

test("a table or column dropped beneath the index is INDEX_CORRUPT everywhere, found by verify, and the rebuild its hint names works", () => {
  // Every command said `unexpected: no such column: d.title`, and `index --rebuild` failed the same way.
  const writes = [
    ["index", "d"],
    ["verify", "d", "--repair"],
  ];
  const cases: [string, string[][]][] = [
    // SQLite refuses to drop a column a trigger reads: the trigger goes first, as damage from below would take it.
    ["DROP TRIGGER documents_keep_text; ALTER TABLE documents DROP COLUMN title", [["search", "alpha"], ["get", "d:a.md"], ...writes]],
    ["DROP TABLE failures", writes], // searches do not read it
  ];
  for (const [damage, commands] of cases) {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "a.md": "# A\n\nalpha words here\n", "b.md": "# B\n\nalpha again\n" });
    const repo = registerRepository(home, { name: "d", path: docs, embed: false });
    expect(runCli(["index", "d"], { home }).code).toBe(0);
    const db = new Database(Store.dbPath(repo.dir));
    db.run(damage);
    db.close();
    for (const args of commands) {
      const run = runCli(args, { home });
      expect({ damage, args, code: run.code, out: run.stdout + run.stderr }).toEqual({
        damage,
        args,
        code: 1,
        out: expect.stringMatching(/researcher (verify|index --rebuild d)/),
      });
      expect({ damage, args, out: run.stdout + run.stderr }).not.toEqual({ damage, args, out: expect.stringContaining("unexpected") });
    }
    const rebuild = runCli(["index", "d", "--rebuild"], { home });
    expect({ damage, code: rebuild.code, stderr: rebuild.stderr }).toEqual({
      damage,
      code: 0,
      stderr: expect.stringContaining("moved aside"),
    });
    expect(runCli(["verify", "d"], { home })).toMatchObject({ code: 0, stdout: expect.stringMatching(OK_BESIDE_A_COPY) });
    expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(2);
  }
});

test("bytes in the heading of the fragment before a code result are INDEX_CORRUPT, not unexpected (s23 review)", () => {
  // The heading weigher reads the previous fragment's heading to tell what a code fragment defines: bytes there
  // were split as text (`previous.split is not a function`).
  const home = tempDir();
  const docs = tempDir();
  const body = (name: string, word: string) => `def ${name}():\n${`    x = "${word} filler line"\n`.repeat(30)}    return x\n`;
  writeTree(docs, { "m.py": `${body("first", "beta")}\n\n${body("second", "alpha")}` });
  const repo = registerRepository(home, { name: "d", path: docs, embed: false, fileTypes: ["py"] });
  expect(runCli(["index", "d"], { home }).code).toBe(0);
  const db = new Database(Store.dbPath(repo.dir));
  expect(db.query("SELECT count(*) AS n FROM fragments").get()).toEqual({ n: 2 });
  db.run("UPDATE fragments SET heading = x'41' WHERE seq = 0");
  db.close();
  expect(runCli(["search", "alpha"], { home })).toMatchObject({
    code: 1,
    stderr: expect.stringMatching(/^error: .*damaged: a result's heading holds a value of the wrong type\n/),
  });
});

test("a text column holding bytes is INDEX_CORRUPT in search, found by verify, and gone after the rebuild its hint names (s17 hostile #3)", () => {
  // `unexpected: text.matchAll is not a function` (bytes where a fragment's text belongs); verify said ok.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\n## Part\n\nalpha words here\n", "b.md": "# B\n\n## Part\n\nalpha again\n" });
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  expect(runCli(["index", "d"], { home }).code).toBe(0);
  for (const damage of [
    // A fragment without a heading is boosted by its title's words: bytes there failed that, before any snippet.
    "UPDATE fragments SET heading = '' WHERE seq = 0; UPDATE documents SET title = x'00'",
    "UPDATE fragments SET text = x'616c706861'",
    "UPDATE fragments SET heading = x'41'",
    "UPDATE documents SET title = x'00'",
  ]) {
    const db = new Database(Store.dbPath(repo.dir));
    for (const statement of damage.split("; ")) db.run(statement);
    db.close();
    for (const args of [
      ["search", "alpha"],
      ["search", "alpha", "--repo", "d"],
    ]) {
      const searched = runCli(args, { home });
      expect({ damage, args, code: searched.code, stderr: searched.stderr }).toEqual({
        damage,
        args,
        code: 1,
        stderr: expect.stringMatching(
          /^error: .*damaged: a result's (fragment|heading) holds a value of the wrong type\nhint: .*researcher (verify|index --rebuild d)/,
        ),
      });
    }
    const verify = runCli(["verify", "d"], { home });
    expect({ damage, code: verify.code, stdout: verify.stdout }).toEqual({
      damage,
      code: 1,
      stdout: expect.stringContaining("rows hold a value of the wrong type where text belongs → researcher index --rebuild d"),
    });
    expect(runCli(["index", "d", "--rebuild"], { home }).code).toBe(0);
    expect(runCli(["verify", "d"], { home })).toMatchObject({ code: 0, stdout: "d: ok\n" });
    expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(2);
  }
});

test("a document whose stored metadata is not a JSON object is read as none everywhere, reported by verify and read again by the next index run (s12 retest #5)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "a.md": "---\nauthor: ana\n---\n# A\n\nalpha words\n",
    "b.md": "---\nauthor: bo\n---\n# B\n\nalpha beta\n",
    "c.md": "---\nauthor: cy\n---\n# C\n\nalpha gamma\n",
  });
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  expect(runCli(["index", "d"], { home }).code).toBe(0);
  const db = new Database(Store.dbPath(repo.dir));
  db.run("UPDATE documents SET metadata = 'not json' WHERE path = 'a.md'");
  db.run("UPDATE documents SET metadata = '[1, 2]' WHERE path = 'b.md'");
  // Bytes, not text: every search reaching c.md failed as damaged, and no index run read it again (s18 review #3).
  db.run("UPDATE documents SET metadata = x'7b7d' WHERE path = 'c.md'");
  db.close();
  expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).total).toBe(3);
  const where = (filter: string) => runCli(["search", "alpha", "--json", "--where", filter], { home });
  // Read as no metadata: filtered search, status (languages, OCR pages) and the metadata listings answer.
  expect(where("author=ana")).toMatchObject({ code: 0, stderr: "" });
  expect(JSON.parse(where("author=ana").stdout).total).toBe(0);
  expect(runCli(["status", "d"], { home })).toMatchObject({ code: 0, stderr: "" });
  const verified = runCli(["verify", "d"], { home });
  expect(verified.code).toBe(1);
  expect(verified.stdout).toContain("3 documents' metadata is damaged");
  expect(verified.stdout).toContain("researcher index d");
  // The next run reads the two files again: their metadata is back, and verify finds nothing.
  expect(runCli(["index", "d"], { home })).toMatchObject({ code: 0, stderr: "" });
  expect(JSON.parse(where("author=ana").stdout).results.map((r: { path: string }) => r.path)).toEqual(["a.md"]);
  expect(JSON.parse(where("author=bo").stdout).results.map((r: { path: string }) => r.path)).toEqual(["b.md"]);
  expect(JSON.parse(where("author=cy").stdout).results.map((r: { path: string }) => r.path)).toEqual(["c.md"]);
  expect(runCli(["verify", "d"], { home })).toMatchObject({ code: 0, stdout: "d: ok\n" });
}, 60_000);

test("damaged pages reach REST and MCP as INDEX_CORRUPT with the hint, as on the command line, not as an internal error", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, corpus());
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  expect(runCli(["index", "d"], { home }).code).toBe(0);
  damages["a damaged page"]!(Store.dbPath(repo.dir));
  expect(runCli(["search", "word7", "--mode", "bm25"], { home }).stderr).toStartWith("error: an index is damaged");

  const env = { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, ...MODEL_ENV, NO_COLOR: "1" };
  const { url, proc: server } = await startServe(cliCommand, [], { env, cwd: home });
  const client = new Client({ name: "damage", version: "1.0.0" });
  try {
    const rest = await fetch(`${url}/search?q=word7&mode=bm25`);
    const { error } = (await rest.json()) as { error: { code: string; message: string; hint?: string } };
    expect({ status: rest.status, code: error.code }).toEqual({ status: 500, code: "INDEX_CORRUPT" });
    expect(error.hint).toContain("`researcher verify`");

    await client.connect(new StdioClientTransport({ command: cliCommand[0]!, args: [...cliCommand.slice(1), "serve"], env, cwd: home }));
    const tool = (await client.callTool({ name: "search_fragments", arguments: { query: "word7", mode: "bm25" } })) as {
      content: { text: string }[];
      isError?: boolean;
    };
    expect(tool.isError).toBe(true);
    expect(tool.content[0]!.text).toStartWith("error: an index is damaged");
    expect(tool.content[0]!.text).toContain("(hint: `researcher verify`");
  } finally {
    await client.close();
    server.kill();
  }
}, 60_000);

test("an index locked by another program past the busy timeout is busy, not damaged: no hint to rebuild, and --rebuild moves nothing aside", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  expect(runCli(["index", "d"], { home }).code).toBe(0);
  // A backup tool or an sqlite3 shell holding the whole file, as another process.
  const hold =
    "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA locking_mode=EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); time.sleep(30)";
  const holder = Bun.spawn(["python3", "-c", hold, Store.dbPath(repo.dir)], { stdout: "pipe" });
  try {
    await new Response(holder.stdout).body!.getReader().read(); // "held"
    for (const args of [
      ["search", "alpha", "--repo", "d"],
      ["index", "d", "--rebuild"],
    ]) {
      const run = runCli(args, { home });
      expect({ args, code: run.code }).toEqual({ args, code: 1 });
      expect(run.stderr).toStartWith("error: ");
      expect(run.stderr).toContain("busy");
      expect(run.stderr).not.toContain("--rebuild");
    }
    // verify named it damage and prescribed a rebuild (s19 review F7): a problem whose fix is the error's own.
    const verify = runCli(["verify", "d"], { home });
    expect(verify.code).toBe(1);
    expect(verify.stdout + verify.stderr).toContain("busy");
    expect(verify.stdout + verify.stderr).not.toContain("--rebuild");
    expect(readdirSync(repo.dir).filter((name) => name.includes("damaged"))).toEqual([]);
  } finally {
    holder.kill();
    await holder.exited;
  }
  expect(runCli(["search", "alpha", "--repo", "d"], { home }).code).toBe(0);
}, 60_000);

/** A repository `d` of one note, registered and indexed by `nobody` in a folder it owns: its CLI, and the folder. */
async function indexedAsNobody() {
  const base = tempDir();
  chmodSync(base, 0o755);
  writeTree(base, { "docs/n.md": "# N\n\nnobodyword\n" });
  for (const path of [base, join(base, "docs"), join(base, "docs/n.md")]) chownSync(path, 65534, 65534);
  const cli = await cliAsNobody(base);
  expect(cli("repo", "add", "d", join(base, "docs"), "--no-embed").code).toBe(0);
  expect(cli("index", "d").code).toBe(0);
  return { base, cli };
}

test.skipIf(!AS_ROOT)(
  "a search of a read-only index.db leaves side files a later writer of the same user makes writable again (hostile s8 #8, as nobody)",
  async () => {
    const { base, cli } = await indexedAsNobody();
    const db = join(base, "home/repositories/d/index.db");
    chmodSync(db, 0o444);
    expect(cli("search", "nobodyword").code).toBe(0);
    chmodSync(db, 0o644); // the user gives it back its write access
    writeTree(base, { "docs/m.md": "# M\n\nmore words\n" });
    chownSync(join(base, "docs/m.md"), 65534, 65534);
    const index = cli("index", "d");
    expect({ code: index.code, stderr: index.stderr }).toEqual({ code: 0, stderr: "" });
    expect(cli("verify", "d", "--repair").code).toBe(0);
  },
  HOOK_TIMEOUT,
);

test.skipIf(!AS_ROOT)(
  "an index whose folder and index.db this user may not write is searched all the same (s23 hostile H7, as nobody)",
  async () => {
    // SQLite's reader writes its shared-memory file beside index.db: where neither may be written, every search failed
    // with "attempt to write a readonly database" (a backup, another user's index, a read-only copy).
    const { base, cli } = await indexedAsNobody();
    const dir = join(base, "home/repositories/d");
    for (const side of readdirSync(dir).filter((name) => name.startsWith("index.db-"))) rmSync(join(dir, side));
    chmodSync(join(dir, "index.db"), 0o444);
    chmodSync(dir, 0o555);
    try {
      const searched = cli("search", "nobodyword", "--json");
      expect({ code: searched.code, stderr: searched.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(searched.stdout).results.map((r: { path: string }) => r.path)).toEqual(["n.md"]);
      expect(cli("get", "d:n.md").stdout).toContain("nobodyword");
    } finally {
      chmodSync(dir, 0o755);
    }
  },
  HOOK_TIMEOUT,
);

/** A repository `name` of `files`, registered and indexed by root (another user than `nobody`), all readable by all. */
function indexedByRoot(name: string, files: Record<string, string>): { base: string; home: string; docs: string } {
  const base = tempDir();
  const home = join(base, "home");
  const docs = join(base, "docs");
  mkdirSync(home);
  writeTree(docs, files);
  expect(runCli(["repo", "add", name, docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", name], { home }).code).toBe(0);
  Bun.spawnSync(["chmod", "-R", "a+rX", base]);
  return { base, home, docs };
}

test.skipIf(!AS_ROOT)(
  "a server reading another user's index sees its owner's later index runs, never 'damaged' (s24 review D3, as nobody)",
  async () => {
    // Opened immutable (nobody may write the index or its folder), the connection read the owner's rewrite of the file
    // with no change detection: "database disk image is malformed" on every request until the server restarted.
    const { base, home, docs } = indexedByRoot(
      "notes",
      Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`doc${i}.md`, `# Title ${i}\n\nalpha beta ${i}\n`])),
    );
    const nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", await executable()];
    const { url, proc } = await startServe(nobody, [], { env: { HOME: base, RESEARCHER_HOME: home, PATH: SYSTEM_PATH }, cwd: base });
    try {
      const paths = async (q: string) => {
        const answer = (await (await fetch(`${url}/search?q=${q}&n=3`)).json()) as { results?: { path: string }[]; error?: unknown };
        return answer.results?.map((r) => r.path) ?? answer.error;
      };
      expect(await paths("alpha")).toHaveLength(3);
      // The owner rewrites its notes and adds many more: index.db grows and its pages move.
      const more = Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [`new${i}.md`, `# T ${i}\n\nzeta filler ${i} ${"x".repeat(i * 7)}\n`]),
      );
      writeTree(docs, { ...more, "doc0.md": "# Title 0\n\nzeta omega\n" });
      expect(runCli(["index", "notes"], { home }).code).toBe(0);
      expect(await paths("omega")).toEqual(["doc0.md"]);
      expect(await paths("zeta")).toHaveLength(3);
    } finally {
      proc.kill();
    }
  },
  HOOK_TIMEOUT,
);

test.skipIf(!AS_ROOT)(
  "another user's search of an index in a shared folder makes no side files there, which its owner could not write (s24 hostile H3, as nobody)",
  async () => {
    // The reader may write the folder but not index.db: SQLite made `-wal` and `-shm` of the reader's there, and the
    // owner's next index run failed "cannot write index.db-wal: permission denied".
    const { base, home } = indexedByRoot("d", { "n.md": "# N\n\nsharedword\n" });
    const dir = join(home, "repositories/d");
    chmodSync(dir, 0o777); // a team's shared index folder
    const nobody = Bun.spawnSync(
      ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", await executable(), "search", "sharedword", "--json"],
      {
        env: { HOME: base, RESEARCHER_HOME: home, PATH: SYSTEM_PATH },
      },
    );
    expect({ code: nobody.exitCode, stderr: nobody.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(nobody.stdout.toString()).results).toHaveLength(1);
    const theirs = readdirSync(dir).filter((name) => statSync(join(dir, name)).uid === 65534);
    expect(theirs).toEqual([]);
  },
  HOOK_TIMEOUT,
);

test.skipIf(!AS_ROOT)(
  "an index on a full disk or a read-only file system is said to be so, not damaged (no hint to rebuild it)",
  () => {
    const base = tempDir();
    const disk = join(base, "disk");
    mkdirSync(disk);
    // A small disk of its own, as a full partition or a read-only mount would be (root may mount; CI runs as root).
    expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", disk]).exitCode).toBe(0);
    try {
      const home = join(disk, "home");
      const docs = join(base, "docs");
      writeTree(docs, { "a.md": "# A\n\nzebra words\n" });
      const cli = (...args: string[]) => runCli(args, { home, cwd: base });
      expect(cli("repo", "add", "d", docs, "--no-embed").code).toBe(0);
      expect(cli("index", "d").code).toBe(0);
      const searched = () => cli("search", "zebra", "--repo", "d");
      const fill = join(disk, "fill");
      try {
        writeFileSync(fill, Buffer.alloc(32 * 2 ** 20));
      } catch {
        // ENOSPC: the disk is full, which is the point
      }
      const full = searched();
      expect(full.code).toBe(1);
      expect(full.stderr).toContain("full");
      expect(full.stderr).not.toContain("--rebuild");
      rmSync(fill, { force: true });
      expect(searched().code).toBe(0);
      expect(Bun.spawnSync(["mount", "-o", "remount,ro", disk]).exitCode).toBe(0);
      const readOnly = searched();
      // SQLite reads a WAL index on a read-only mount only if its -shm is there: the search answers, or says why it
      // cannot; either way no damage is claimed.
      expect(readOnly.code === 0 ? "answered" : readOnly.stderr).toMatch(/^answered$|read-only file system/);
      expect(readOnly.stderr).not.toContain("--rebuild");
    } finally {
      Bun.spawnSync(["umount", "-l", disk]);
    }
  },
  60_000,
);

testShared(
  "index --rebuild writes the full-text index anew, never reading it: a damaged segment no check sees is gone after it (s26 hostile F1)",
  () => {
    // 48 bytes changed inside a full-text segment of the Rust book's index, in a valid page (the hostile tester's
    // damage: integrity checks pass it). The rebuild replaced rows in place, over the damaged segment: a search of
    // `see` still failed ("malformed") after it, and runs' merges failed, for ever.
    const home = tempDir();
    const book = join(tempDir(), "rb");
    cpSync(join(SHARED, "data/corpus/markdown/rust-book"), book, { recursive: true });
    const repo = registerRepository(home, { name: "rb", path: book, embed: false });
    expect(runCli(["index", "rb"], { home }).code).toBe(0);
    const bytes = "828565e07e5f7d784e9060a721ca807d7633ed123402f376e5bf1496773d19616326be5be5850336b36f13bcae481668";
    // By another program: bun:sqlite's connections refuse to write FTS5's own tables.
    const damage = `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
(block,) = c.execute("SELECT block FROM fragments_fts_data WHERE id = 137438953602").fetchone()
c.execute("UPDATE fragments_fts_data SET block = ? WHERE id = 137438953602", (block[:2146] + bytes.fromhex("${bytes}") + block[2194:],))
c.commit()`;
    expect(Bun.spawnSync(["python3", "-c", damage, Store.dbPath(repo.dir)]).exitCode).toBe(0);
    const see = () => runCli(["search", "see", "--mode", "bm25", "--json"], { home });
    // The damage as found (should the book's layout move, this says the damage missed, not that the rebuild works).
    expect({ verify: runCli(["verify", "rb"], { home }).stdout, search: see().stderr }).toEqual({
      verify: "rb: ok\n",
      search: expect.stringContaining("malformed"),
    });
    expect(runCli(["index", "rb", "--rebuild"], { home }).code).toBe(0);
    expect(JSON.parse(see().stdout).total).toBeGreaterThan(100);
    writeFileSync(join(book, "src/foreword.md"), "# Foreword\n\nsee again\n");
    expect(runCli(["index", "rb"], { home }).code).toBe(0); // and the runs after it merge no damaged segment
    expect(runCli(["verify", "rb"], { home })).toMatchObject({ code: 0, stdout: "rb: ok\n" });
  },
  60_000,
);

test("a rebuild that fails after moving an unusable index aside says where it went, not that nothing changed (s26 hostile F2)", () => {
  // A full disk or a folder not there refused the run after the move: "nothing was changed", and searches then said
  // the repository had never been indexed, with no word of the copy.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "d", path: docs, embed: false });
  expect(runCli(["index", "d"], { home }).code).toBe(0);
  const fd = openSync(Store.dbPath(repo.dir), "r+");
  writeSync(fd, Buffer.alloc(100, 0x41), 0, 100, 0); // its header: no SQLite database
  closeSync(fd);
  rmSync(docs, { recursive: true });
  const run = runCli(["index", "d", "--rebuild"], { home });
  expect(run.code).toBe(1);
  expect(run.stderr).not.toContain("nothing was changed");
  const aside = readdirSync(repo.dir).find((name) => name.startsWith("index.db.damaged-"));
  expect(run.stderr).toContain(`it is not an SQLite database) and was moved aside to ${join(repo.dir, aside!)}\n`);
  // status and verify name the copy, with its size, until the user deletes it.
  const copy = { path: join(repo.dir, aside!), bytes: statSync(join(repo.dir, aside!)).size };
  const status = JSON.parse(runCli(["status", "d", "--json"], { home }).stdout);
  expect(status.moved_aside).toEqual([copy]);
  expect(runCli(["status", "d"], { home }).stdout).toContain(`  kept aside: ${copy.path} (`);
  const verify = JSON.parse(runCli(["verify", "d", "--json"], { home }).stdout);
  expect(verify.moved_aside).toEqual([copy]);
  rmSync(copy.path);
  expect(JSON.parse(runCli(["status", "d", "--json"], { home }).stdout).moved_aside).toEqual([]);
});
