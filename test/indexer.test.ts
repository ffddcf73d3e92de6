import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import {
  chmodSync,
  linkSync,
  readdirSync,
  rmdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { indexFiles, indexRepository, WRITE_BATCHES } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { setConfigValue } from "../src/config.ts";
import type { ResearcherError } from "../src/errors.ts";
import { repositoryStatus } from "../src/store/status.ts";
import { PLAIN, statusText } from "../src/serve/render.ts";
import { search } from "../src/search/search.ts";
import { FULL_TEXT_MERGE, Store } from "../src/store/store.ts";
import { docx } from "./docx-fixtures.ts";
import { bm25Repository, tempDir, writeTree } from "./helpers.ts";

const paths = async (home: string, query: string) => (await search(home, { query, limit: 50 })).results.map((r) => r.path);

describe("indexRepository", () => {
  test("indexes, skips unchanged files, re-indexes edits, removes deleted files", async () => {
    const { home, docs, repo } = bm25Repository({
      "alpha.md": "# Alpha\n\nThe quick brown fox.\n",
      "beta.md": "# Beta\n\nLazy dogs sleep.\n",
      "gamma.txt": "Plain text about turtles.\n",
    });
    const first = await indexRepository(home, repo);
    expect(first).toMatchObject({ indexed: 3, skipped: 0, removed: 0, failed: 0, documents_total: 3 });

    const second = await indexRepository(home, repo);
    expect(second).toMatchObject({ indexed: 0, skipped: 3, fragments: 0 });

    writeFileSync(join(docs, "alpha.md"), "# Alpha\n\nA slow green snail.\n");
    const third = await indexRepository(home, repo);
    expect(third).toMatchObject({ indexed: 1, skipped: 2 });
    expect(await paths(home, "fox")).toEqual([]);
    expect(await paths(home, "snail")).toEqual(["alpha.md"]);

    // touched but identical content: hashed, not re-indexed
    utimesSync(join(docs, "beta.md"), new Date(), new Date(Date.now() + 5000));
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0, skipped: 3 });

    rmSync(join(docs, "gamma.txt"));
    expect(await indexRepository(home, repo)).toMatchObject({ removed: 1, documents_total: 2 });
    expect(await paths(home, "turtles")).toEqual([]);
  });

  test("unreadable files are recorded with a reason and the run goes on", async () => {
    const { home, repo } = bm25Repository({
      "good.md": "fine words here\n",
      "binary.md": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]),
      "controls.txt": new Uint8Array([0x63, 0x01, 0x02, 0x03, 0x80, 0x81, 0xff]),
    });
    const summary = await indexRepository(home, repo);
    expect(summary.indexed).toBe(1);
    expect(summary.failures).toEqual([
      { path: "binary.md", reason: "binary content (NUL bytes) in a text file" },
      { path: "controls.txt", reason: "binary content (control bytes) in a text file" },
    ]);
    const store = Store.open(repo.dir);
    expect(store.failures().map((f) => f.path)).toEqual(["binary.md", "controls.txt"]);
    store.close();
  });

  test("a link out of the folder, unchanged, is an unchanged failure at the next run, not a new one (s23 U3)", async () => {
    const outside = tempDir();
    writeFileSync(join(outside, "secret.md"), "outside words\n");
    const { home, docs, repo } = bm25Repository({ "good.md": "fine words here\n" });
    symlinkSync(join(outside, "secret.md"), join(docs, "link.md"));
    const first = await indexRepository(home, repo);
    expect(first.failures.map((f) => f.path)).toEqual(["link.md"]);
    const second = await indexRepository(home, repo);
    expect([second.failures, second.failed_unchanged]).toEqual([[], 1]);
    const store = Store.open(repo.dir);
    expect(store.failures().map((f) => f.path)).toEqual(["link.md"]); // still listed by status
    store.close();
    expect((await indexRepository(home, repo, { retryFailed: true })).failures.map((f) => f.path)).toEqual(["link.md"]);
  });

  test("a file over index.max_file_bytes, unchanged, is an unchanged failure at the next run; a new limit tries it again (s23 retest N7)", async () => {
    const { home, repo } = bm25Repository({ "small.md": "fine words\n", "big.md": `# Big\n\n${"many words ".repeat(200)}\n` });
    setConfigValue(home, "index.max_file_bytes", "1000");
    expect((await indexRepository(home, repo)).failures.map((f) => f.path)).toEqual(["big.md"]);
    expect(await indexRepository(home, repo)).toMatchObject({ failures: [], failed_unchanged: 1 });
    setConfigValue(home, "index.max_file_bytes", "100000");
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1, failures: [], failed_unchanged: 0 });
  });

  test("a note's pasted image as a data: URI is dropped, its alt text kept: one fragment, not hundreds of base64 (s26 user F15)", async () => {
    const base64 = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251)).toString("base64");
    const note = [
      "# Lab photo",
      "",
      "The centrifuge rotor cracked during the run.",
      "",
      `![microscope photo](data:image/png;base64,${base64}) and a [saved table](<data:text/csv;base64,${base64}>)`,
      "",
      `<img src="data:image/jpeg;base64,${base64}" alt="second photo">`,
      "",
      "After the image: replace the rotor seal. See [clip].",
      "",
      `[clip]: data:image/png;base64,${base64}`,
      "",
    ].join("\n");
    // Code shows data URIs as written: in a fence, and in a code span (s26b review F13).
    const code =
      '# Embedding\n\n```html\n<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">\n```\n\nInline, `![img](data:image/png;base64,QUJDREVG)` works too.\n';
    const { home, repo } = bm25Repository({ "lab-photo.md": note, "embedding.md": code });
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 2, fragments: 2 });
    const db = new Database(Store.dbPath(repo.dir), { readonly: true });
    const fragments = db
      .query<{ path: string; start_line: number; end_line: number; text: string }, []>(
        "SELECT d.path, f.start_line, f.end_line, f.text FROM fragments f JOIN documents d ON d.id = f.document_id ORDER BY d.path",
      )
      .all();
    db.close();
    const photo = fragments.find((f) => f.path === "lab-photo.md")!;
    expect(photo).toMatchObject({ start_line: 3, end_line: 11 }); // the lines under the title, where the file has them
    expect(photo.text).toContain("The centrifuge rotor cracked during the run.");
    expect(photo.text).toContain("![microscope photo]() and a [saved table]()");
    expect(photo.text).toContain("After the image: replace the rotor seal.");
    expect(photo.text).not.toContain(base64.slice(0, 40));
    // An image's source in a code fence is code, kept as written.
    const embedding = fragments.find((f) => f.path === "embedding.md")!.text;
    expect(embedding).toContain('src="data:image/gif;base64,R0lGODlhAQABAAAAACw="');
    expect(embedding).toContain("`![img](data:image/png;base64,QUJDREVG)`");
    expect(await paths(home, "base64")).toEqual(["embedding.md"]);
    expect(await paths(home, "microscope")).toEqual(["lab-photo.md"]);
  });

  test("a data: URI wrapped over lines, or a target on the line after its opener, is dropped; `data:` with no URI's shape is text (s27 hostile M2)", async () => {
    const base64 = Buffer.from(Array.from({ length: 3_000 }, (_, i) => (i * 7919) % 251)).toString("base64");
    const wrapped = base64.match(/.{1,76}/g)!; // as mail and Word exports write it
    const note = [
      "# Report",
      "",
      "Table [3](data: see appendix) shows things.",
      "",
      '<img alt="wrapped photo"',
      ` src="data:image/png;base64,${wrapped.join("\n")}">`,
      "",
      "Below the photo.",
      "",
      "[Ref2]:",
      `  data:image/png;base64,${base64}`,
      "",
      "A [link](",
      `<data:text/plain;base64,${base64}>) on two lines.`,
      "",
    ].join("\n");
    const { home, repo } = bm25Repository({ "report.md": note });
    expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1, fragments: 1 });
    const db = new Database(Store.dbPath(repo.dir), { readonly: true });
    const fragment = db.query<{ start_line: number; end_line: number; text: string }, []>("SELECT * FROM fragments").get()!;
    db.close();
    expect(fragment).toMatchObject({ start_line: 3, end_line: note.split("\n").length - 1 }); // every line where it was
    expect(fragment.text).toContain("Table [3](data: see appendix) shows things.");
    expect(fragment.text).toContain("Below the photo.");
    expect(fragment.text).toContain("[Ref2]:\n  <>");
    expect(fragment.text).toContain("A [link](\n<>) on two lines.");
    for (const line of wrapped) expect(fragment.text).not.toContain(line);
    expect(fragment.text).not.toContain(base64.slice(0, 40));
  });

  test("a failure reason is one line in the summary and the store, whatever whitespace the converter's message has", async () => {
    // xmldom words it "[xmldom warning]\tunclosed xml attribute", which the reason rewords in one line.
    const { home, repo } = bm25Repository({ "broken.docx": docx("<w:p><w:r><w:t>unclosed</w:r></w:p>") });
    const summary = await indexRepository(home, repo);
    expect(summary.failures).toEqual([{ path: "broken.docx", reason: expect.stringContaining("cannot read DOCX: XML: unclosed") }]);
    const store = Store.open(repo.dir);
    const stored = store.failures();
    store.close();
    expect(stored).toEqual(summary.failures);
    expect(stored[0]!.reason).not.toMatch(/[\t\n\r]|\s{2}/);
  });

  test("a failed write rolls back and leaves the previous index intact", async () => {
    const { home, docs, repo } = bm25Repository({ "a.md": "original words\n" });
    await indexRepository(home, repo);
    writeFileSync(join(docs, "a.md"), "replacement words\n");
    // Another connection holds the write lock past the busy timeout's reach: make the store read-only instead.
    const db = new Database(Store.dbPath(repo.dir));
    db.run("CREATE TRIGGER refuse BEFORE INSERT ON documents BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    db.close();
    expect(indexRepository(home, repo)).rejects.toThrow(/disk says no/);
    expect(await paths(home, "original")).toEqual(["a.md"]);
    expect(await paths(home, "replacement")).toEqual([]);
  });

  test("UTF-16 files with a BOM are decoded", async () => {
    const utf16 = new Uint8Array([0xff, 0xfe, ...new Uint8Array(Buffer.from("wide text", "utf16le"))]);
    const { home, repo } = bm25Repository({ "wide.txt": utf16 });
    await indexRepository(home, repo);
    expect(await paths(home, "wide")).toEqual(["wide.txt"]);
  });

  test("UTF-32 files with a BOM are decoded, both byte orders (s26 hostile F3: read as UTF-16, a NUL after every letter)", async () => {
    const utf32 = (text: string, little: boolean) => {
      const view = new DataView(new ArrayBuffer(4 * (text.length + 1)));
      const codes = [0xfeff, ...[...text].map((c) => c.codePointAt(0)!)];
      for (const [i, code] of codes.entries()) view.setUint32(4 * i, code, little);
      return new Uint8Array(view.buffer);
    };
    const { home, repo } = bm25Repository({
      "le.md": utf32("# T\n\nquokka here\n", true),
      "be.md": utf32("# T\n\nquokka there 𝄞\n", false),
    });
    await indexRepository(home, repo);
    expect(await paths(home, "quokka")).toEqual(["be.md", "le.md"]);
    // UTF-16LE whose first character is U+0000 begins as UTF-32LE's mark does: it is still read as UTF-16 (s26b review F4),
    // the NUL a stray in a text long enough to hold one (s27 hostile E1: a UTF-16 text's NULs are counted as UTF-8's).
    const nul = new Uint8Array([0xff, 0xfe, 0, 0, ...new Uint8Array(Buffer.from("wallaby here\n".repeat(100), "utf16le"))]);
    const second = bm25Repository({ "nul.txt": nul });
    await indexRepository(second.home, second.repo);
    expect(await paths(second.home, "wallaby")).toEqual(["nul.txt"]);
  });

  test("--rebuild drops and recreates every document", async () => {
    const { home, repo } = bm25Repository({ "a.md": "words\n", "b.md": "more words\n" });
    await indexRepository(home, repo);
    expect(await indexRepository(home, repo, { rebuild: true })).toMatchObject({ indexed: 2, skipped: 0 });
  });

  test("a large run leaves the full-text index merged into one segment", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 2500; i++) files[`doc${i}.md`] = `document number ${i}\n`; // three write batches
    const { home, repo } = bm25Repository(files);
    await indexRepository(home, repo);
    const db = new Database(Store.dbPath(repo.dir), { readonly: true });
    const segments = db.query<{ n: number }, []>("SELECT count(DISTINCT segid) AS n FROM fragments_fts_idx").get()!.n;
    db.close();
    expect(segments).toBe(1);
    expect((await search(home, { query: "document", limit: 1 })).total).toBe(2500);
  });
});

describe("disk while indexing", () => {
  const defaults = { batches: { ...WRITE_BATCHES }, merge: { ...FULL_TEXT_MERGE } };
  afterEach(() => {
    Object.assign(WRITE_BATCHES, defaults.batches); // test files share modules
    Object.assign(FULL_TEXT_MERGE, defaults.merge);
  });

  test("a run commits what it has converted every WRITE_BATCHES.seconds too, not only every 1,000 documents: a kill keeps it (s13 hostile #8)", async () => {
    WRITE_BATCHES.seconds = 0; // every document its own commit: as a slow run (OCR, large books) past 30 s
    const files = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`n${i}.md`, `# N${i}\n\nnote ${i}\n`]));
    const { home, repo } = bm25Repository(files);
    let committed = 0;
    const cut = indexRepository(home, repo, {
      onProgress: (progress) => {
        if (progress.phase !== "index" || progress.done < 128) return; // progress comes every 64 documents
        // What a kill -9 now would leave: what another connection reads as committed.
        const reader = Store.open(repo.dir);
        committed = reader.counts().documents;
        reader.close();
        throw new Error("killed");
      },
    });
    expect(cut).rejects.toThrow("killed");
    await cut.catch(() => {});
    expect(committed).toBeGreaterThanOrEqual(100);
    expect(await indexRepository(home, repo)).toMatchObject({ documents_total: 200, failed: 0 });
  });

  test("a long run keeps the WAL bounded: checkpoints between write batches and between full-text merge steps", async () => {
    WRITE_BATCHES.documents = 100;
    WRITE_BATCHES.walLimit = 512 * 1024;
    FULL_TEXT_MERGE.stepPages = 16;
    const files: Record<string, string> = {};
    for (let i = 0; i < 2400; i++) {
      files[`doc${i}.md`] = `# Document ${i}\n\n${Array.from({ length: 80 }, (_, j) => `w${(i * 7919 + j * 104729) % 6000}`).join(" ")}\n`;
    }
    const { home, repo } = bm25Repository(files);
    const size = (file: string) => statSync(join(repo.dir, file), { throwIfNoEntry: false })?.size ?? 0;
    const largestWal = { index: 0, merge: 0 };
    let steps = 0;
    await indexRepository(home, repo, {
      onProgress: ({ phase }) => {
        if (phase === "index" || phase === "merge") largestWal[phase] = Math.max(largestWal[phase], size("index.db-wal"));
        if (phase === "merge") steps++;
      },
    });
    // Between batches the WAL is checkpointed once past the limit: it holds at most the limit and one batch.
    expect(largestWal.index).toBeGreaterThan(WRITE_BATCHES.walLimit / 2); // the samples saw it grow
    expect(largestWal.index).toBeLessThan(2 * WRITE_BATCHES.walLimit);
    // The merge (seen before each step's checkpoint) adds one step's pages and the b-tree pages around them to what
    // the batches left, not the whole full-text index (~270 pages here) as a single 'optimize' did.
    expect(largestWal.merge).toBeLessThan(WRITE_BATCHES.walLimit + 4 * FULL_TEXT_MERGE.stepPages * 4096);
    expect(steps).toBeGreaterThan(3);
    expect(size("index.db-wal")).toBe(0);
    expect((await search(home, { query: "w17", limit: 1 })).total).toBeGreaterThan(0);
  });

  test("the WAL limit follows the database's size: a small index is not doubled by a fixed 64 MB allowance", async () => {
    WRITE_BATCHES.documents = 100;
    WRITE_BATCHES.walFloor = 64 * 1024; // the fixed limit stays at 64 MB, far above this whole index
    const files: Record<string, string> = {};
    for (let i = 0; i < 2400; i++) {
      files[`doc${i}.md`] = `# Document ${i}\n\n${Array.from({ length: 80 }, (_, j) => `w${(i * 7919 + j * 104729) % 6000}`).join(" ")}\n`;
    }
    const { home, repo } = bm25Repository(files);
    const size = (file: string) => statSync(join(repo.dir, file), { throwIfNoEntry: false })?.size ?? 0;
    let peak = 0;
    await indexRepository(home, repo, {
      onProgress: ({ phase }) => {
        if (phase === "index") peak = Math.max(peak, size("index.db") + size("index.db-wal"));
      },
    });
    expect(peak).toBeLessThan(1.3 * size("index.db"));
  });
});

test("files indexed one by one before a whole run leave the repository 'not indexed yet', with the command (s12 review #6)", async () => {
  const { home, repo } = bm25Repository({ "n1.md": "# N1\n\napples\n", "n2.md": "# N2\n\napples\n", "n3.md": "# N3\n\napples\n" });
  expect(await indexFiles(home, repo, ["n1.md"])).toMatchObject({ indexed: 1 });
  expect(repositoryStatus(repo)).toMatchObject({ documents: 1, last_indexed: null });
  // Said with what is searched meanwhile (it said "not indexed yet" of documents search found: s27b retest N6).
  expect(statusText([repositoryStatus(repo)], PLAIN)).toContain(
    "  not indexed whole yet: 1 document indexed so far, searched meanwhile (a first run cut short, or files indexed on their own): run `researcher index docs`",
  );
  // Search answers from the one file, and says the rest of the folder is not searched (s12 retest #6).
  const partial = await search(home, { query: "apples", mode: "bm25" });
  expect(partial.results.map((r) => r.path)).toEqual(["n1.md"]);
  expect(partial.warnings).toEqual([
    {
      repository: "docs",
      code: "NOT_INDEXED",
      message: "not indexed whole yet: only the 1 file indexed so far (on its own, or by a first run cut short) is searched",
      hint: "run `researcher index docs`",
    },
  ]);
  await indexRepository(home, repo);
  expect((await search(home, { query: "apples", mode: "bm25" })).warnings).toBeUndefined();
  const indexed = repositoryStatus(repo).last_indexed;
  expect(indexed).not.toBeNull();
  // Once indexed, a file indexed on its own (a watch batch) is the latest indexing.
  writeFileSync(join(repo.path, "n2.md"), "# N2\n\npears\n");
  await Bun.sleep(5);
  await indexFiles(home, repo, ["n2.md"]);
  expect(repositoryStatus(repo).last_indexed! > indexed!).toBe(true);
});

test("a file whose name is not UTF-8, handed to a batch as a watch event names it, is a failure as a run records it (s14 hostile #8)", async () => {
  const { home, repo } = bm25Repository({ "a.md": "# A\n\napples\n" });
  await indexRepository(home, repo);
  writeFileSync(Buffer.concat([Buffer.from(`${repo.path}/new`), Buffer.from([0xfe]), Buffer.from(".md")]), "# N\n\nnewbad\n");
  const [name] = readdirSync(repo.path).filter((entry) => entry.includes("\ufffd")); // as fs.watch decodes it
  const reason = "file name is not valid UTF-8 (rename the file to index it)";
  expect((await indexFiles(home, repo, [name!])).failures).toEqual([{ path: name!, reason }]);
  // A run finds it so too: the same failure, unchanged (tried again, the same again).
  expect(await indexRepository(home, repo)).toMatchObject({ failures: [], failed_unchanged: 1 });
  expect((await indexRepository(home, repo, { retryFailed: true })).failures).toEqual([{ path: name!, reason }]);
  // Renamed as the failure says: the batch of the rename (both names) leaves no failure behind (s15 review #6).
  renameSync(Buffer.concat([Buffer.from(`${repo.path}/new`), Buffer.from([0xfe]), Buffer.from(".md")]), join(repo.path, "new.md"));
  expect(await indexFiles(home, repo, [name!, "new.md"])).toMatchObject({ indexed: 1, failed: 0, failures: [] });
  expect(repositoryStatus(repo).failures).toEqual([]);
});

test("a named pipe handed to a batch (watch, add_to_index) is a failure with its reason, as a run records it, not silence (s13 hostile #10)", async () => {
  const { home, repo } = bm25Repository({ "a.md": "# A\n\napples\n" });
  await indexRepository(home, repo);
  expect(Bun.spawnSync(["mkfifo", join(repo.path, "pipe.md")]).success).toBe(true);
  const batch = await indexFiles(home, repo, ["pipe.md"]);
  expect(batch.failures).toEqual([{ path: "pipe.md", reason: "not a regular file (named pipe)" }]);
  expect(await indexRepository(home, repo)).toMatchObject({ failures: [], failed_unchanged: 1 });
  expect((await indexRepository(home, repo, { retryFailed: true })).failures).toEqual(batch.failures);
});

test("an edit of the same size within the mtime tick of the run that read the file is indexed by the next run (s19 review F3)", async () => {
  // FAT and exFAT keep mtimes in 2 s steps, HFS+ and ext2/3 in 1 s: a file saved again within that tick shows the
  // stamp the run recorded, and was never read again. Written here with the same mtime by hand, as such a disk would.
  const home = tempDir();
  const docs = tempDir();
  const repo = registerRepository(home, { name: "tick", path: docs, embed: false });
  const file = join(docs, "a.md");
  const tick = new Date(Math.floor(Date.now() / 1000) * 1000);
  writeFileSync(file, "# A\n\nalpha\n");
  utimesSync(file, tick, tick);
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1 });
  writeFileSync(file, "# A\n\nbravo\n");
  utimesSync(file, tick, tick);
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1 });
  expect((await search(home, { query: "bravo" })).results.map((r) => r.path)).toEqual(["a.md"]);
  // A stamp a tick older than its read is recorded as it is, and trusted from then on (the file is not read again).
  const stamp = () => {
    const store = Store.open(repo.dir);
    try {
      return store.documents().get("a.md")!.mtimeMs;
    } finally {
      store.close();
    }
  };
  expect(stamp()).toBe(statSync(file).mtimeMs - 1); // recorded early: the next run reads it again
  const old = new Date(Date.now() - 10_000);
  utimesSync(file, old, old);
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0 });
  expect(stamp()).toBe(statSync(file).mtimeMs);
});

test("a file put in an indexed one's place with its size and mtime is read again: a `mv` swap, `cp -p` in place (s28 hostile F1)", async () => {
  // Files unpacked from one archive share whole-second mtimes: two of one size swapped by `mv` kept each other's text
  // for good, and so did a file rewritten in place with its mtime put back (`cp -p`, `rsync -a --inplace`).
  const home = tempDir();
  const docs = tempDir();
  const repo = registerRepository(home, { name: "swap", path: docs, embed: false });
  const unpacked = new Date("2026-01-01T00:00:00Z");
  const put = (path: string, text: string) => {
    writeFileSync(join(docs, path), text);
    utimesSync(join(docs, path), unpacked, unpacked);
  };
  put("x1.md", "alpha one\n");
  put("x2.md", "bravo two\n");
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 2 });
  renameSync(join(docs, "x1.md"), join(docs, "tmp.md"));
  renameSync(join(docs, "x2.md"), join(docs, "x1.md"));
  renameSync(join(docs, "tmp.md"), join(docs, "x2.md"));
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 2, skipped: 0 });
  expect(await paths(home, "alpha")).toEqual(["x2.md"]);
  expect(await paths(home, "bravo")).toEqual(["x1.md"]);
  // Once a change is a tick old, a run records the stamp as it is (recordedStamp): then the inode change time alone,
  // not the rule for stamps read within a tick, tells the rewrite below.
  await Bun.sleep(2100);
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0 });
  const ctime = () => {
    const store = Store.open(repo.dir);
    try {
      return store.document("x1.md")!.ctimeMs;
    } finally {
      store.close();
    }
  };
  expect(ctime()).toBe(statSync(join(docs, "x1.md")).ctimeMs);
  put("x1.md", "delta six\n"); // the same inode, size and mtime
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1 });
  expect(await paths(home, "delta")).toEqual(["x1.md"]);
  expect(await paths(home, "bravo")).toEqual([]);
}, 30_000);

test("a file whose inode change time alone changed (chmod, a hard link) is hashed: its stamp is updated, nothing re-chunked", async () => {
  const home = tempDir();
  const docs = tempDir();
  const repo = registerRepository(home, { name: "attrs", path: docs, embed: false });
  writeFileSync(join(docs, "a.md"), "# A\n\nalpha\n");
  const old = new Date(Date.now() - 60_000);
  utimesSync(join(docs, "a.md"), old, old);
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1 });
  const stored = () => {
    const store = Store.open(repo.dir);
    try {
      return { doc: store.document("a.md")!, fragments: store.documentListing("a.md")[0]!.fragments };
    } finally {
      store.close();
    }
  };
  const before = stored();
  chmodSync(join(docs, "a.md"), 0o600);
  linkSync(join(docs, "a.md"), join(tempDir(), "a.md")); // a second name, outside the repository
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0, skipped: 1, fragments: 0 });
  const after = stored();
  expect(after.doc.id).toBe(before.doc.id); // the same row: not deleted and written again
  expect(after.fragments).toBe(before.fragments);
  expect(after.doc.ctimeMs).not.toBe(before.doc.ctimeMs);
  expect(after.doc.ino).toBe(statSync(join(docs, "a.md")).ino);
});

test("a repository whose path changed meanwhile is said to name another folder, not to be unregistered (s19 hostile #7)", async () => {
  const home = tempDir();
  const [first, second] = [tempDir(), tempDir()];
  const before = registerRepository(home, { name: "g", path: first, embed: false });
  setConfigValue(home, "repositories.g.path", second);
  const error = await indexRepository(home, before).then(
    () => undefined,
    (caught: ResearcherError) => caught,
  );
  expect(error?.message).toBe(`repository 'g' now names another folder (${realpathSync(second)}, not ${before.path})`);
  expect(error?.hint).toContain("restart it");
});

test("a run that takes documents out because the settings no longer admit them says so (s26 user F10)", async () => {
  // `config set …file_types png` ("add png") took every PDF out with "3 removed" and nothing more.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n", "c.txt": "gamma\n", "gone.md": "# Gone\n\ndelta\n" });
  const repo = registerRepository(home, { name: "n", path: docs, embed: false });
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 4, warnings: [] });
  rmSync(join(docs, "gone.md")); // a file deleted is no settings' doing
  const summary = await indexRepository(home, { ...repo, fileTypes: ["txt"] });
  expect(summary.removed).toBe(3);
  expect(summary.warnings).toEqual([
    "2 documents whose files are still there left the index, as the repository's rules no longer admit them (a.md: its type (.md) is not one it indexes; b.md: its type (.md) is not one it indexes): `researcher config show` shows the repository's file_types and exclude; `config set` changes them, each set whole",
  ]);
});

test("documents whose folder became a link to a folder are not said to be left out by the rules (s29 hostile F2)", async () => {
  // A link to a folder is never followed: the run's "not indexed" line says so. The warning called their files
  // "still there", blamed the rules and advised a `!sub/` line, which changed nothing.
  const home = tempDir();
  const docs = tempDir();
  const elsewhere = tempDir();
  writeTree(docs, { "sub/a.md": "# A\n\nalpha\n", "sub/b.md": "# B\n\nbeta\n", "top.md": "# Top\n\ntop\n" });
  const repo = registerRepository(home, { name: "n", path: docs, embed: false });
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 3 });
  for (const name of ["a.md", "b.md"]) renameSync(join(docs, "sub", name), join(elsewhere, name));
  rmdirSync(join(docs, "sub"));
  symlinkSync(elsewhere, join(docs, "sub"));
  const summary = await indexRepository(home, repo);
  expect(summary).toMatchObject({ removed: 2, skipped_links: ["sub/"] });
  expect(summary.warnings).toEqual([]);
});

test("a document a default rule takes out (a saved page's files) is told the ignore file's `!` line, not config.yaml (s27 review D8)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "page_files/saved_resource.html": "<html><body><p>frame</p></body></html>", "top.md": "# Top\n\ntop\n" });
  const repo = registerRepository(home, { name: "p", path: docs, embed: false, fileTypes: ["md", "html"] });
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 2 });
  writeTree(docs, { "page.html": "<html><body><p>the page</p></body></html>" });
  const summary = await indexRepository(home, repo);
  expect(summary.warnings).toEqual([
    "1 document whose file is still there left the index, as the repository's rules no longer admit it (page_files/saved_resource.html: page_files/ holds the files of the web page saved beside it, left out): an ignore file's `!name/` line keeps a folder a default rule or an ignore file leaves out, `!name` a file",
  ]);
});
