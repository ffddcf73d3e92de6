import { expect, test } from "bun:test";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexRepository } from "../src/indexer.ts";
import { addRepository } from "../src/repos.ts";
import { Store } from "../src/store.ts";
import { annPath } from "../src/vectors.ts";
import { verifyRepository } from "../src/verify.ts";
import { describeShared, GLOVE, runCli, tempDir, writeTree } from "./helpers.ts";

describeShared("verify", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "cars.md": "# Cars\n\nThe driver parks the car.\n", "bread.md": "# Bread\n\nKnead the dough.\n" });
  const repo = addRepository(home, { name: "v", path: docs, embedding: { model: GLOVE } });

  test("a fresh index is ok; the CLI exits 0", async () => {
    await indexRepository(home, repo);
    expect(await verifyRepository(repo)).toEqual({ repository: "v", ok: true, problems: [] });
    const cli = runCli(["verify", "v"], { home });
    expect(cli).toMatchObject({ code: 0, stdout: "v: ok\n" });
  });

  test("damage to derived parts is found, exit 1, and --repair rebuilds them and says so", async () => {
    const store = Store.open(repo.dir);
    store.db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')"); // the full-text index lost
    store.db.run("INSERT INTO embeddings(text_hash, vector) VALUES ('orphan', x'00000000')");
    store.close();
    const ann = readFileSync(annPath(repo.dir));
    ann[ann.length - 5]! ^= 0xff;
    writeFileSync(annPath(repo.dir), ann);
    writeFileSync(join(repo.dir, ".index.db.999999.abc.tmp"), "left by a killed writer"); // pid 999999 is not running
    writeFileSync(join(docs, "new.md"), "new words\n");
    utimesSync(join(docs, "cars.md"), new Date(), new Date(Date.now() + 10_000));

    const found = await verifyRepository(repo);
    expect(found.ok).toBe(false);
    expect(found.problems.map((p) => [p.check, p.detail, p.repaired])).toEqual([
      ["full-text", "0 rows for 2 fragments", false],
      ["vectors", "1 vectors belong to no fragment", false],
      ["ann", "vectors.usearch does not match its recorded checksum", false],
      ["files", "since the last run: 1 new, 1 changed", false],
      ["leftovers", ".index.db.999999.abc.tmp: a temp file of an interrupted write", false],
    ]);
    const cli = runCli(["verify", "v", "--json"], { home });
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout).problems).toHaveLength(5);

    const repaired = await verifyRepository(repo, { repair: true });
    expect(repaired.problems.filter((p) => !p.repaired).map((p) => p.fix)).toEqual(["researcher index v"]); // the files
    expect(JSON.parse(runCli(["search", "driver", "--mode", "bm25", "--json"], { home }).stdout).total).toBe(1);
    await indexRepository(home, repo);
    expect(await verifyRepository(repo)).toMatchObject({ ok: true, problems: [] });
  });

  test("a repository never indexed is reported with the command that indexes it", async () => {
    const other = addRepository(home, { name: "w", path: tempDir(), embed: false });
    expect(await verifyRepository(other)).toEqual({
      repository: "w",
      ok: false,
      problems: [{ check: "database", detail: "not indexed yet", fix: "researcher index w", repaired: false }],
    });
  });
});
