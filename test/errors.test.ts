/** One error mapping (errors.ts): what SQLite and the runtime throw, as the codes every interface reports. */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../src/atomic.ts";
import { describeError, ERROR_CODES, isSqliteDamage, ResearcherError, toResearcherError } from "../src/errors.ts";
import { tempDir } from "./helpers.ts";

/** What a real SQLite call throws. */
function thrownBy(work: () => void): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("it did not throw");
}

test("a busy database is LOCKED, one that is not a database INDEX_CORRUPT, both with a hint", () => {
  const file = join(tempDir(), "busy.db");
  const writer = new Database(file);
  writer.run("PRAGMA journal_mode = WAL");
  writer.run("CREATE TABLE t (x)");
  writer.run("BEGIN IMMEDIATE");
  const other = new Database(file);
  other.run("PRAGMA busy_timeout = 0");
  const busy = toResearcherError(thrownBy(() => other.run("INSERT INTO t VALUES (1)")));
  expect(busy.code).toBe("LOCKED");
  expect(busy.hint).toContain("try again");
  writer.run("ROLLBACK");
  for (const db of [writer, other]) db.close();

  const junk = join(tempDir(), "junk.db");
  writeFileSync(junk, Buffer.alloc(8192, 0x5a));
  const damaged = toResearcherError(thrownBy(() => new Database(junk).query("SELECT * FROM sqlite_master").all()));
  expect(damaged.code).toBe("INDEX_CORRUPT");
  expect(damaged.message).toStartWith("an index is damaged: ");
  expect(damaged.hint).toContain("`researcher verify`");
});

test("a writer's failure names its repository: damage with the rebuild of that repository, a full disk with its folder", () => {
  const context = { repository: "notes", dir: "/home/u/.researcher/repositories/notes" };
  const junk = join(tempDir(), "junk.db");
  writeFileSync(junk, Buffer.alloc(8192, 0x5a));
  const damage = thrownBy(() => new Database(junk).query("SELECT * FROM sqlite_master").all());
  expect(toResearcherError(damage, context)).toMatchObject({
    code: "INDEX_CORRUPT",
    message: expect.stringMatching(/^the index of 'notes' is damaged: /),
    hint: "rebuild it with `researcher index --rebuild notes` (it moves the damaged index aside)",
    cause: damage,
  });
  // A database that may not grow past two pages is a full disk as SQLite reports one.
  const db = new Database(join(tempDir(), "small.db"));
  db.run("CREATE TABLE t (x)");
  db.run("PRAGMA max_page_count = 2");
  const full = thrownBy(() => db.run("INSERT INTO t VALUES (?)", ["x".repeat(100_000)]));
  db.close();
  expect(toResearcherError(full).message).toStartWith("the disk is full: ");
  expect(toResearcherError(full, context)).toMatchObject({
    code: "DISK_FULL",
    message: expect.stringMatching(/^the disk holding \/home\/u\/\.researcher\/repositories\/notes is full: /),
    hint: expect.stringContaining("none of it half-written"),
  });
});

test("malformed percent-encoding is INVALID_INPUT; anything unknown is INTERNAL with its message; ours pass through", () => {
  expect(toResearcherError(thrownBy(() => decodeURIComponent("%E0%A4%A"))).code).toBe("INVALID_INPUT");
  const bug = new TypeError("x is not a function");
  expect(toResearcherError(bug)).toMatchObject({ code: "INTERNAL", message: "x is not a function", cause: bug });
  expect(toResearcherError("a string").code).toBe("INTERNAL");
  const ours = new ResearcherError("REPO_NOT_FOUND", "no repository 'x'");
  expect(toResearcherError(ours)).toBe(ours);
});

test("a path that is missing or forbidden is PATH_NOT_FOUND, and a failed atomic write names the file asked for, not its temp file", () => {
  const missing = thrownBy(() => mkdirSync("/proc/researcher-nope/x", { recursive: true }));
  expect(toResearcherError(missing).code).toBe("PATH_NOT_FOUND");
  const target = join(tempDir(), "no/such/folder/out.md");
  const failed = toResearcherError(thrownBy(() => writeFileAtomic(target, "text")));
  expect(failed).toMatchObject({ code: "PATH_NOT_FOUND", message: `cannot write ${target}: the folder ${dirname(target)} does not exist` });
  // A folder in a file's place (an index file replaced by one) is named so, with what fixes it; never `unexpected:`.
  const folder = join(tempDir(), "vectors.usearch");
  mkdirSync(folder);
  const inPlace = toResearcherError(thrownBy(() => writeFileAtomic(folder, "x")));
  expect(inPlace).toMatchObject({
    code: "PATH_NOT_FOUND",
    message: `a folder stands where a file is written: cannot write ${folder}: a folder is in its place`,
    hint: "move that folder away and run the command again",
  });
});

test("every code has an exit status, an HTTP status and a JSON-RPC error; only usage exits 2", () => {
  for (const [code, { exit, http, rpc }] of Object.entries(ERROR_CODES)) {
    expect(exit).toBe(code === "USAGE" ? 2 : 1);
    expect(http).toBeGreaterThanOrEqual(400);
    expect([-32602, -32002, -32603]).toContain(rpc);
    // Bad input and not found are the same to an MCP resource read as to REST (PATH_OUTSIDE_REPO was -32002: s28
    // hostile F8).
    if (http === 400) expect([code, rpc]).toEqual([code, -32602]);
    if (http === 404) expect([code, rpc]).toEqual([code, -32002]);
  }
  expect(ERROR_CODES.FILE_UNREADABLE.http).toBe(422); // a refused or undecodable file is not the server failing
  expect(ERROR_CODES.LOCKED.http).toBe(409);
});

test("a database this user may not write is PERMISSION_DENIED; one moved aside under its connection is LOCKED (run again)", () => {
  const dir = tempDir();
  const file = join(dir, "index.db");
  const created = new Database(file);
  created.run("CREATE TABLE t (x)");
  created.close();
  const reader = new Database(file, { readonly: true });
  const context = { repository: "r", dir };
  const readOnly = toResearcherError(
    thrownBy(() => reader.run("INSERT INTO t VALUES (1)")),
    context,
  );
  expect(readOnly).toMatchObject({ code: "PERMISSION_DENIED" });
  expect(readOnly.hint).toContain(`ls -la ${dir}`);
  reader.close();

  const open = new Database(file); // (a rollback journal: in WAL mode SQLite goes on writing to the moved file)
  open.run("INSERT INTO t VALUES (0)");
  renameSync(file, `${file}.damaged`);
  const moved = thrownBy(() => open.run("INSERT INTO t VALUES (1)"));
  expect((moved as { code?: string }).code).toBe("SQLITE_READONLY_DBMOVED");
  expect(toResearcherError(moved, context)).toMatchObject({ code: "LOCKED", hint: expect.stringContaining("try again") });
  open.close();
});

test("a reason is never empty: an error without a message is named by its code or kind (s12 hostile #6)", () => {
  // Emscripten's ErrnoError (the OCR engine's file system) is no Error and has no message.
  class ErrnoError {
    name = "ErrnoError";
  }
  expect(describeError(new ErrnoError())).toBe("ErrnoError");
  expect(describeError(Object.assign(new Error(""), { code: "ENOENT" }))).toBe("ENOENT");
  expect(describeError(new TypeError(""))).toBe("TypeError");
  expect(describeError("")).toBe("an error without a message");
  expect(describeError(new Error("first line\nsecond"))).toBe("first line");
});

test("SQLite's words for a table or column gone from the index are damage; a search's scratch table missing is not", () => {
  const sqlite = (message: string) => Object.assign(new Error(message), { code: "SQLITE_ERROR" });
  for (const message of [
    "no such column: d.title",
    "table documents has no column named title",
    "no such table: main.failures",
    "no such table: failures",
  ])
    expect({ message, damage: isSqliteDamage(sqlite(message)) }).toEqual({ message, damage: true });
  // A bug that lost a temp table must not send users to rebuild a sound index.
  expect(isSqliteDamage(sqlite("no such table: temp.scoring_terms"))).toBe(false);
  expect(isSqliteDamage(sqlite('near "x": syntax error'))).toBe(false);
});

test("a file where a folder is needed is named, with the move that fixes it: no 'unexpected: EEXIST', no bare ENOTDIR (s21 hostile #10)", () => {
  const home = tempDir();
  const file = join(home, "repositories", "a");
  mkdirSync(join(home, "repositories"));
  writeFileSync(file, "junk");
  const hint = `move it away, e.g. \`mv '${file}' '${file}.bak'\`, and run the command again`;
  for (const thrown of [thrownBy(() => mkdirSync(file, { recursive: true })), thrownBy(() => statSync(join(file, "index.db")))]) {
    const error = toResearcherError(thrown);
    expect(error).toMatchObject({ code: "PATH_NOT_FOUND", hint });
    expect(error.message).toStartWith(`${file} is a file where a folder is needed (`);
  }
  // A path that is simply missing stays what it was.
  expect(toResearcherError(thrownBy(() => statSync(join(home, "nothing", "x")))).hint).toBeUndefined();
});
