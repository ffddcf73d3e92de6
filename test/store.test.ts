import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { indexRepository } from "../src/indexer.ts";
import { addRepository } from "../src/repos.ts";
import { search } from "../src/search.ts";
import { Store } from "../src/store.ts";
import { tempDir, writeTree } from "./helpers.ts";

test("an index written by schema version 1 is upgraded (v2: owner index; v3: page_end, formats as file types) in place when opened", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n", "b.md": "# B\n\nbeta words\n" });
  const repo = addRepository(home, { name: "old", path: docs, embed: false });
  await indexRepository(home, repo);
  const db = new Database(Store.dbPath(repo.dir));
  db.run("DROP INDEX fragments_owner");
  db.run("ALTER TABLE fragments DROP COLUMN page_end");
  db.run("UPDATE documents SET format = 'markdown'");
  db.run("PRAGMA user_version = 1");
  db.close();

  const response = await search(home, { query: "words", documents: true });
  expect(response.total).toBe(2);
  const store = Store.open(repo.dir);
  expect(store.db.query<{ user_version: number }, []>("PRAGMA user_version").get()!.user_version).toBe(3);
  expect(store.db.query("SELECT name FROM sqlite_master WHERE name = 'fragments_owner'").get()).toBeTruthy();
  expect(store.db.query("SELECT DISTINCT format FROM documents").all()).toEqual([{ format: "md" }]);
  expect(store.db.query("SELECT page_end FROM fragments LIMIT 1").get()).toEqual({ page_end: null });
  store.close();
});

test("an index from a newer researcher is refused with a clear error", () => {
  const dir = tempDir();
  Store.open(dir, { create: true }).close();
  const db = new Database(Store.dbPath(dir));
  db.run("PRAGMA user_version = 99");
  db.close();
  expect(() => Store.open(dir)).toThrow(/newer researcher/);
});
