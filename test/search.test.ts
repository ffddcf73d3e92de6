import { beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { indexFiles, indexRepository } from "../src/index/indexer.ts";
import { acquireWriterLock } from "../src/lock.ts";
import { setConfigValue } from "../src/config.ts";
import { registerRepository, getRepository } from "../src/repos.ts";
import { parseFilter } from "../src/search/filters.ts";
import { MAX_EXCLUDED } from "../src/search/query.ts";
import { MAX_QUERY_CHARS } from "../src/search/bounds.ts";
import { BM25_WEIGHTS, search, type DocumentHit, type FragmentHit } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { describeShared, GLOVE, HOOK_TIMEOUT, SHARED, tempDir, writeTree } from "./helpers.ts";

const NASTY = [
  '"unterminated',
  "AND",
  "OR NOT",
  "NOT",
  "(a:b)",
  "*",
  "-",
  "--",
  "a*b*",
  "title:x",
  "NEAR(a b, 3)",
  'foo" AND "bar',
  "^start",
  "{col}",
  "a + b",
  "'",
  "\\",
  "🎉 emoji 🚀",
  "東京",
  "ＣＪＫ",
  "x".repeat(5000),
  "\u0000",
  '-""',
];

describe("search", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "guide.md": "# Setup Guide\n\n## Install\n\nRun the installer and restart the shell.\n\n## Caching\n\nThe cache keeps results warm.\n",
    "notes/cache.md": "# Random notes\n\nCaching strategies: write-through and write-back caches.\n",
    "jp.md": "# 旅行\n\n東京タワーは東京の観光名所です。京都にも行きました。\n",
    "body.md": "# Misc\n\nThe word install appears here only in the body, installing things.\n",
  });
  const repo = registerRepository(home, { name: "docs", path: docs, description: "test docs", embed: false });
  beforeAll(() => indexRepository(home, repo), HOOK_TIMEOUT);

  test("a mode or minimum score no interface would send is a usage error, not a search in another mode", async () => {
    await expect(search(home, { query: "cache", mode: "fuzzy" as never })).rejects.toMatchObject({
      code: "USAGE",
      message: "mode must be auto, bm25, vector, hybrid (got 'fuzzy')",
    });
    await expect(search(home, { query: "cache", minScore: Number.NaN })).rejects.toMatchObject({ code: "USAGE" });
  });

  test("finds fragments with location, docid, heading, highlighted snippet and context", async () => {
    const response = await search(home, { query: "restart shell" });
    const hit = response.results[0] as FragmentHit;
    expect(hit).toMatchObject({
      rank: 1,
      path: "guide.md",
      location: "guide.md:5",
      title: "Setup Guide",
      heading: "Install",
      context: "test docs",
    });
    expect(hit.docid).toMatch(/^#[0-9a-f]{6}$/);
    expect(hit.snippet).toContain("restart the shell");
    const words = hit.highlights.map(([s, e]) => hit.snippet.slice(s, e));
    expect(words).toEqual(["restart", "shell"]);
    expect(response.total).toBe(1);
  });

  test("titles and headings weigh more than body text", async () => {
    const order = (await search(home, { query: "install" })).results.map((r) => r.path);
    expect(order[0]).toBe("guide.md");
    expect(order).toContain("body.md");
  });

  test("stemming matches word forms", async () => {
    expect((await search(home, { query: "caches" })).results.map((r) => r.path).sort()).toEqual(["guide.md", "notes/cache.md"]);
  });

  test("phrases, exclusions and prefixes", async () => {
    expect((await search(home, { query: '"write-through"' })).results.map((r) => r.path)).toEqual(["notes/cache.md"]);
    expect((await search(home, { query: "cache -strategies" })).results.map((r) => r.path)).toEqual(["guide.md"]);
    expect((await search(home, { query: "instal*" })).results.length).toBe(2);
  });

  test("beside a quoted phrase, plain words rank and require nothing: a phrase with a word no result holds still finds it (s24 agent A4)", async () => {
    const found = async (query: string) => (await search(home, { query, mode: "bm25" })).results.map((r) => r.path);
    expect(await found('"write-through" serialization')).toEqual(["notes/cache.md"]);
    // A word it holds ranks it over one holding the phrase alone.
    expect(await found('"the shell" restart')).toEqual(["guide.md"]);
    const both = await search(home, { query: '"write-through" caches install', mode: "bm25" });
    expect(both.results.map((r) => r.path)).toEqual(["notes/cache.md"]);
    expect(both.words_found).toBe(true);
  });

  test("CJK words of two characters are found, not substrings across words", async () => {
    expect((await search(home, { query: "東京" })).results.map((r) => r.path)).toEqual(["jp.md"]);
    expect((await search(home, { query: "京都" })).results.map((r) => r.path)).toEqual(["jp.md"]);
    expect((await search(home, { query: "大阪" })).results).toEqual([]);
    const hit = (await search(home, { query: "東京" })).results[0] as FragmentHit;
    expect(hit.highlights.map(([s, e]) => hit.snippet.slice(s, e)).join("")).toContain("東京");
  });

  test("no query text can surface an FTS5 syntax error", async () => {
    for (const query of NASTY) expect((await search(home, { query })).query).toBe(query);
  });

  test("hundreds of exclusions or words never reach FTS5's limits; too many exclusions is a clear error", async () => {
    const exclusions = (n: number) => Array.from({ length: n }, (_, i) => `-nothing${i}`).join(" ");
    expect((await search(home, { query: `restart ${exclusions(MAX_EXCLUDED)}` })).results.map((r) => r.path)).toEqual(["guide.md"]);
    const tooMany = await search(home, { query: `restart ${exclusions(300)}` }).catch((e) => e);
    // A usage error, as a query too long is (it exited 1: s18 hostile #8e).
    expect(tooMany).toMatchObject({ code: "USAGE", message: expect.stringContaining(`at most ${MAX_EXCLUDED}`) });
    const words = Array.from({ length: 1000 }, (_, i) => `word${i}`).join(" ");
    expect((await search(home, { query: `restart ${words}` })).results.map((r) => r.path)).toEqual(["guide.md"]);
    // Past MAX_QUERY_CHARS a query is refused, the same on every interface (MCP's schema takes the same bound).
    expect(await search(home, { query: "x ".repeat(MAX_QUERY_CHARS) }).catch((e) => e)).toMatchObject({
      code: "USAGE",
      message: `a query holds at most ${MAX_QUERY_CHARS} characters (this one has ${2 * MAX_QUERY_CHARS})`,
    });
    const phrases = Array.from({ length: 300 }, (_, i) => `"phrase${i}"`).join(" ");
    expect(await search(home, { query: phrases }).catch((e) => e)).toMatchObject({ code: "USAGE" });
  });

  test("an FTS5 error from SQLite is INVALID_INPUT, never unexpected", () => {
    const store = Store.open(repo.dir);
    try {
      expect(() => store.fullText.search('"unterminated', BM25_WEIGHTS, 5)).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
      expect(() => store.fullText.countMatches("a NOT NOT b")).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    } finally {
      store.close();
    }
  });

  test("pagination, min-score and documents grouping", async () => {
    const all = (await search(home, { query: "cache install", limit: 10 })).results;
    const page = (await search(home, { query: "cache install", limit: 1, offset: 1 })).results;
    expect(page.map((r) => r.rank)).toEqual([2]);
    expect(page[0]!.location).toBe(all[1]!.location);
    const strict = await search(home, { query: "cache install", minScore: all[0]!.score });
    expect(strict.results.length).toBe(1);
    const grouped = await search(home, { query: "cache install", documents: true });
    const guide = grouped.results.find((r) => r.path === "guide.md") as DocumentHit;
    expect(guide.fragments.length).toBe(2);
    expect(new Set(grouped.results.map((r) => r.path)).size).toBe(grouped.results.length);
  });

  test("the default limit comes from search.limit in config.yaml", async () => {
    const other = tempDir();
    setConfigValue(other, "search.limit", "1");
    registerRepository(other, { name: "docs", path: docs, embed: false });
    await indexRepository(other, getRepository(other, "docs"));
    expect((await search(other, { query: "cache install" })).results).toHaveLength(1);
    expect((await search(other, { query: "cache install", limit: 3 })).results.length).toBeGreaterThan(1);
  });

  test("bad pagination values are clear errors", async () => {
    expect(search(home, { query: "x", limit: 0 })).rejects.toThrow(/limit/);
    expect(search(home, { query: "x", offset: -1 })).rejects.toThrow(/offset/);
    // Past SQLite's integers (2^63) a number failed inside it, an internal error; the library's bounds come first.
    for (const [options, words] of [
      [{ offset: 2 ** 63 }, "offset must be a whole number from 0 to 100000"],
      [{ limit: 1e20 }, "limit must be a whole number from 1 to 100000"],
    ] as const) {
      const error = await search(home, { query: "x", ...options }).catch((e) => e);
      expect({ code: error.code, message: error.message }).toMatchObject({ code: "USAGE", message: expect.stringContaining(words) });
    }
  });
});

const RUST_BOOK = join(SHARED, "data/corpus/markdown/rust-book");

describeShared("the Rust book", async () => {
  test("indexes all 112 chapters and finds a known passage", async () => {
    const home = tempDir();
    const repo = registerRepository(home, { name: "rust-book", path: RUST_BOOK, embed: false });
    const summary = await indexRepository(home, repo);
    expect(summary.indexed).toBe(112);
    expect(summary.failed).toBe(0);
    const top = await search(home, {
      query: "at any given time you can have either one mutable reference or any number of immutable references",
      limit: 3,
    });
    expect(top.results.map((r) => r.path)).toContain("src/ch04-02-references-and-borrowing.md");
    const hit = top.results.find((r) => r.path === "src/ch04-02-references-and-borrowing.md")!;
    expect(hit.heading).toContain("Rules of References");
  });

  test("adjacent fragments on one page each show a passage of their own, not the text they share (s11 agent #3)", async () => {
    // The words sit in the overlap of a chapter's first two fragments: both ranked, at the same location, with the
    // same snippet. The second now shows the rest of its text; ranks and scores are untouched.
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "panic.md": readFileSync(join(RUST_BOOK, "src/ch09-01-unrecoverable-errors-with-panic.md"), "utf8") });
    await indexRepository(home, registerRepository(home, { name: "book", path: docs, embed: false }));
    const page = (await search(home, { query: "panic unwind abort", limit: 2 })).results as FragmentHit[];
    expect(page.map((r) => r.fragment.seq)).toEqual([0, 1]);
    expect(page[0]!.location).not.toBe(page[1]!.location);
    expect(page[0]!.snippet).not.toBe(page[1]!.snippet);
    expect(page[1]!.snippet.length).toBeGreaterThan(40);
    // Each is still the fragment's own text, and its line is inside it.
    const line = Number(page[1]!.location.split(":").at(-1));
    expect(line).toBeGreaterThanOrEqual(page[1]!.fragment.start_line);
    expect(line).toBeLessThanOrEqual(page[1]!.fragment.end_line);
    // Alone on its page (offset 1) it is the same result: the same passage and line, as the first result above it
    // on the page before decides them (it showed its best passage again, so paging cited another line: s19 user F3).
    const alone = (await search(home, { query: "panic unwind abort", limit: 1, offset: 1 })).results[0] as FragmentHit;
    expect([alone.location, alone.snippet]).toEqual([page[1]!.location, page[1]!.snippet]);
    // The same passage a line apart (s12 user #7): the second snippet began where the first one's text was.
    const apart = (await search(home, { query: "how to make panic abort instead of unwinding", limit: 2 })).results as FragmentHit[];
    expect(apart.map((r) => r.fragment.seq)).toEqual([0, 1]);
    const words = (snippet: string) => snippet.replace(/[…>]/g, " ").split(/\s+/).filter(Boolean);
    const first = words(apart[0]!.snippet).join(" ");
    const opening = words(apart[1]!.snippet).slice(0, 8).join(" ");
    expect(first).not.toContain(opening);
  });

  test("a neighbour ranked below shows a passage of its own though its snippet runs from its own text into the text they share", async () => {
    // Part 1 of a section showed "…its own words. A fused score is a function of…", part 2 above it "A fused score is
    // a function of…": only the snippet's opening was looked for (30 of 400 Rust-book heading queries, BM25).
    const home = tempDir();
    await indexRepository(home, registerRepository(home, { name: "rb", path: join(RUST_BOOK, "src"), embed: false }));
    const flat = (text: string) => text.replace(/^…/, "").replace(/…$/, "").replace(/\s+/g, " ").trim();
    const repeated: string[] = [];
    let pairs = 0;
    for (const query of ["Putting It All Together: Futures, Tasks, and Threads", "Generating a Secret Number", "The String Type"]) {
      const page = (await search(home, { query, limit: 10, mode: "bm25", full: true })).results as FragmentHit[];
      for (const [i, upper] of page.entries()) {
        for (const lower of page.slice(i + 1)) {
          if (lower.path !== upper.path || Math.abs(lower.fragment.seq - upper.fragment.seq) !== 1) continue;
          pairs++;
          if (flat(upper.text!).includes(flat(lower.snippet).slice(-80))) repeated.push(`${query}: ${lower.location}`);
        }
      }
    }
    expect(pairs).toBeGreaterThan(0); // neighbours on a page to check (s21 review T4: it passed with none)
    expect(repeated).toEqual([]);
  });

  test("a neighbour ranked below shows a passage of its own though its snippet would begin a word before the text they share (s20 review F3)", async () => {
    // Part 4 of a section showed "through the last time that reference is used…", and part 3 below it the same
    // passage one line up, "…continues through the last time…": only an opening from the snippet's start was looked for.
    const home = tempDir();
    const docs = tempDir();
    for (const chapter of readdirSync(join(RUST_BOOK, "src")).filter((name) => /^ch0[3-5]/.test(name)))
      writeTree(docs, { [chapter]: readFileSync(join(RUST_BOOK, "src", chapter), "utf8") });
    await indexRepository(home, registerRepository(home, { name: "rb", path: docs, embedding: { model: GLOVE } }));
    const page = (await search(home, { query: "mutable reference borrow", limit: 4 })).results as FragmentHit[];
    const words = (snippet: string) => snippet.replace(/[…>]/g, " ").split(/\s+/).filter(Boolean);
    const neighbours = page.filter((lower, j) =>
      page.slice(0, j).some((u) => u.path === lower.path && Math.abs(u.fragment.seq - lower.fragment.seq) === 1),
    );
    expect(neighbours.length).toBeGreaterThan(0); // neighbours on the page to check (s21 review T4)
    for (const [i, upper] of page.entries()) {
      for (const lower of page.slice(i + 1)) {
        if (lower.path !== upper.path || Math.abs(lower.fragment.seq - upper.fragment.seq) !== 1) continue;
        const opening = words(upper.snippet).slice(0, 8).join(" ");
        expect({ seq: lower.fragment.seq, snippet: words(lower.snippet).join(" ") }).not.toEqual({
          seq: lower.fragment.seq,
          snippet: expect.stringContaining(opening),
        });
      }
    }
  });
});

describe("words common in a repository", () => {
  test("under 20,000 fragments every word is searched: a topic's common words are not left out (s14 questions #1)", async () => {
    const home = tempDir();
    const docs = tempDir();
    const files: Record<string, string> = {};
    for (let i = 0; i < 1200; i++) files[`doc${i}.md`] = `common words in document ${i}${i % 400 === 0 ? " with a rare zephyr" : ""}\n`;
    writeTree(docs, files);
    const repo = registerRepository(home, { name: "big", path: docs, embed: false });
    await indexRepository(home, repo);
    const store = Store.open(repo.dir);
    expect(store.fragmentCount()).toBe(1200);
    expect(store.fullText.termFrequencies(["common", "zephyr", "absent"])).toEqual(
      new Map([
        ["common", 1200],
        ["zephyr", 3],
        ["absent", 0],
      ]),
    );
    store.close();
    const both = await search(home, { query: "common zephyr", mode: "bm25" });
    expect(both.total).toBe(1200); // "common" was left out of the match, and with it every fragment holding it alone
    expect(
      both.results
        .slice(0, 3)
        .map((r) => r.path)
        .sort(),
    ).toEqual(["doc0.md", "doc400.md", "doc800.md"]);
    // Beside a phrase, a word only ranks (s24 agent A4): every fragment holds the phrase; the rare word's first.
    const phrased = await search(home, { query: '"common words" zephyr', mode: "bm25" });
    expect(phrased.total).toBe(1200);
    expect(
      phrased.results
        .slice(0, 3)
        .map((r) => r.path)
        .sort(),
    ).toEqual(["doc0.md", "doc400.md", "doc800.md"]);
  });
});

test("a repository whose first index run did not finish is 'not indexed yet', not 'no results' (s12 hostile #5)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "k", path: docs, embed: false });
  Store.open(repo.dir, { create: true }).close(); // as a first run killed before its first batch leaves it
  const other = registerRepository(home, { name: "other", path: tempDir(), embed: false });
  await indexRepository(home, other);
  await expect(search(home, { query: "alpha", repositories: ["k"] })).rejects.toMatchObject({
    code: "NOT_INDEXED",
    message: "repository 'k' has not been indexed yet (its first index run did not finish)",
    hint: "run `researcher index k`",
  });
  expect((await search(home, { query: "alpha" })).skipped).toEqual([expect.objectContaining({ repository: "k", code: "NOT_INDEXED" })]);
  await indexRepository(home, repo);
  expect((await search(home, { query: "alpha", repositories: ["k"] })).results).toHaveLength(1);
});

test("during a first index run, search says to wait for it, not to run the index it would refuse (s27 user U5)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n", "b.md": "# B\n\nalpha beta\n" });
  const repo = registerRepository(home, { name: "k", path: docs, embed: false });
  Store.open(repo.dir, { create: true }).close(); // a first run before its first batch
  const waiting = `wait for it to finish (process ${process.pid}): \`researcher status k\` says when it has`;
  const running = async (check: () => Promise<void>) => {
    const release = acquireWriterLock(repo.dir, repo.name, "index"); // the run, as another process would hold it
    try {
      await check();
    } finally {
      release();
    }
  };
  await running(async () => {
    await expect(search(home, { query: "alpha", repositories: ["k"] })).rejects.toMatchObject({
      code: "NOT_INDEXED",
      message: "repository 'k' has not been indexed yet (its first index run is under way)",
      hint: waiting,
    });
  });
  await indexFiles(home, repo, ["a.md"]); // as its first batch
  await running(async () => {
    const partial = await search(home, { query: "alpha", repositories: ["k"] });
    expect(partial.results.map((r) => r.path)).toEqual(["a.md"]);
    expect(partial.warnings).toEqual([
      expect.objectContaining({ message: "its first index run is under way: only the 1 file indexed so far is searched", hint: waiting }),
    ]);
  });
});

test("a query of exclusions alone is a usage error that says to add a word, not 'no results' (s12 hostile #14)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  await indexRepository(home, registerRepository(home, { name: "k", path: docs, embed: false }));
  for (const query of ["-zzqq", '-"borrow checker"', "-a -b"]) {
    await expect(search(home, { query, mode: "bm25" })).rejects.toMatchObject({
      code: "USAGE",
      message: "a query of exclusions alone (-word) has nothing to search for",
    });
  }
  expect((await search(home, { query: "alpha -zzqq", mode: "bm25" })).results).toHaveLength(1);
});

test("a word written with soft hyphens (&shy;) is found by its own spelling, and its snippet marks it (s18 review #14)", async () => {
  // HTML, EPUB and markdown kept U+00AD, which the index reads as a word break: only a syllable found the word.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "a.html": "<html><head><title>T</title></head><body><p>Die Verwal&shy;tungs&shy;gerichts&shy;barkeit ist wichtig.</p></body></html>",
    "b.md": "Die Verwal\u00adtungs\u00adgerichts\u00adbarkeit im Text.\n",
  });
  const repo = registerRepository(home, { name: "h", path: docs, embed: false });
  await indexRepository(home, repo);
  for (const query of ["Verwaltungsgerichtsbarkeit", "verwal\u00adtungsgerichtsbarkeit"]) {
    const found = await search(home, { query, mode: "bm25" });
    expect({ query, paths: found.results.map((r) => r.path).sort() }).toEqual({ query, paths: ["a.html", "b.md"] });
    for (const hit of found.results as FragmentHit[])
      expect(hit.highlights.map(([s, e]) => hit.snippet.slice(s, e))).toEqual(["Verwal\u00adtungs\u00adgerichts\u00adbarkeit"]);
  }
  expect((await search(home, { query: "Verwal", mode: "bm25" })).total).toBe(0);
});

test("a zero-width space, word joiner or U+FEFF inside a word is no word break, but a zero-width space between Thai words is (s20 review F5)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "z.md": "The inter\u200bnational agreement. Data\u2060base systems.\n",
    "w.html": "<html><body><p>foo&#8203;bar and Zero&#xFEFF;width</p></body></html>",
    // Thai is written without spaces: a zero-width space is where one word ends (ภาษา | ไทย).
    "th.md": "# t\n\nภาษา\u200bไทย\n",
  });
  const repo = registerRepository(home, { name: "z", path: docs, embed: false });
  await indexRepository(home, repo);
  for (const [query, path, marked] of [
    ["international", "z.md", "inter\u200bnational"],
    ["database", "z.md", "Data\u2060base"],
    ["foobar", "w.html", "foo\u200bbar"],
    ["zerowidth", "w.html", "Zero\ufeffwidth"],
    ["inter\u200bnational", "z.md", "inter\u200bnational"],
    ["ไทย", "th.md", "ไทย"],
  ] as const) {
    const found = await search(home, { query, mode: "bm25" });
    const hits = found.results as FragmentHit[];
    expect({ query, paths: hits.map((r) => r.path) }).toEqual({ query, paths: [path] });
    expect({ query, marks: hits[0]!.highlights.map(([s, e]) => hits[0]!.snippet.slice(s, e)) }).toEqual({ query, marks: [marked] });
  }
  expect((await search(home, { query: "national", mode: "bm25" })).total).toBe(0);
});

test("an index written before invisible characters were dropped is rewritten from its fragments by its next run", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "z.md": "# z\n\nThe inter\u200bnational agreement.\n" });
  const repo = registerRepository(home, { name: "z", path: docs, embed: false });
  await indexRepository(home, repo);
  // The full-text index as version 2 wrote it: the word split at the zero-width space.
  const db = new Database(Store.dbPath(repo.dir));
  db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')");
  db.run(
    "INSERT INTO fragments_fts(rowid, title, heading, body) SELECT f.id, 'z', f.heading, replace(f.text, char(8203), ' ') FROM fragments f",
  );
  db.run("UPDATE meta SET value = '2' WHERE key = 'full_text_version'");
  db.close();
  expect((await search(home, { query: "international", mode: "bm25" })).total).toBe(0);
  await indexRepository(home, repo);
  expect((await search(home, { query: "international", mode: "bm25" })).results.map((r) => r.path)).toEqual(["z.md"]);
});

test("Thai (Lao, Khmer, Myanmar) is searched by its words, found and marked inside a run written without spaces (s21 hostile #7)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# a\nเป็นภาษาที่สวยงาม\n", "c.md": "# c\nเป็นภาษา ที่สวยงาม\n", "lo.md": "# l\nພາສາລາວແມ່ນງາມ\n" });
  const repo = registerRepository(home, { name: "th", path: docs, embed: false });
  await indexRepository(home, repo);
  const found = async (query: string) => {
    const hits = (await search(home, { query, mode: "bm25" })).results;
    return hits.map((h) => `${h.path} ${h.highlights.map(([s, e]) => h.snippet.slice(s, e)).join("+")}`).sort();
  };
  // ภาษา ("language") and เป็น ("is") were found nowhere: a run between spaces was one token.
  expect(await found("ภาษา")).toEqual(["a.md ภาษา", "c.md ภาษา"]);
  expect(await found("เป็น")).toEqual(["a.md เป็น", "c.md เป็น"]);
  expect(await found("ภาษาที่")).toEqual(["a.md ภาษา+ที่", "c.md ภาษา+ที่"]); // a run of words: a phrase
  expect(await found("ລາວ")).toEqual(["lo.md ລາວ"]);
  // An index written as version 3 (runs whole) is written again by its next run.
  const db = new Database(Store.dbPath(repo.dir));
  db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')");
  db.run("INSERT INTO fragments_fts(rowid, title, heading, body) SELECT f.id, '', f.heading, f.text FROM fragments f");
  db.run("UPDATE meta SET value = '3' WHERE key = 'full_text_version'");
  db.close();
  expect(await found("ภาษา")).toEqual([]);
  await indexRepository(home, repo);
  expect(await found("ภาษา")).toEqual(["a.md ภาษา", "c.md ภาษา"]);
});

test("a title or front-matter value written with soft hyphens is filtered by its own spelling (s18 retest N11)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "a.html": "<html><head><title>Verwal&shy;tungs&shy;recht</title></head><body><p>Die Kammer.</p></body></html>",
    "b.md": "---\ntitle: Kranken\u00adhaus\ntags: [Kranken\u00adhaus]\n---\n# Kapitel\n\nDie Kammer.\n",
  });
  const repo = registerRepository(home, { name: "h", path: docs, embed: false });
  await indexRepository(home, repo);
  const paths = async (where: string) =>
    (await search(home, { query: "Kammer", mode: "bm25", where: [parseFilter(where)] })).results.map((r) => r.path);
  expect(await paths("title~Verwaltungsrecht")).toEqual(["a.html"]);
  expect(await paths("title=Krankenhaus")).toEqual(["b.md"]);
  expect(await paths("tags=Krankenhaus")).toEqual(["b.md"]);
});

test("text and queries meet in one Unicode form: a word stored decomposed or as a compatibility form is found as typed (s19 hostile #1)", async () => {
  // Korean from a Mac (jamo), Cyrillic й and Greek ί as a letter and a mark, ligatures pasted from a PDF into a note,
  // full-width letters: each was another term than the word typed, and found by nothing a person would type.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "ko.md": `# k\n\n${"한국어 검색 엔진".normalize("NFD")}\n`,
    "ru.md": `# r\n\n${"Мой край ёлка".normalize("NFD")}\n`,
    "gr.md": `# g\n\n${"πολιτεία".normalize("NFD")}\n`,
    "lig.txt": "The algorithm is eﬃcient and the ﬁrst ﬂow was ﬁne.\n",
    "lig.html": "<html><body><p>A signiﬁcant eﬀect on the workﬂow, in Ｆｕｌｌｗｉｄｔｈ.</p></body></html>",
  });
  const repo = registerRepository(home, { name: "u", path: docs, embed: false });
  await indexRepository(home, repo);
  const found = async (query: string) => (await search(home, { query, mode: "bm25" })).results.map((r) => r.path);
  const expected = { 한국어: "ko.md", край: "ru.md", ёлка: "ru.md", πολιτεία: "gr.md", efficient: "lig.txt", first: "lig.txt" };
  for (const [query, path] of Object.entries({ ...expected, significant: "lig.html", workflow: "lig.html", fullwidth: "lig.html" }))
    expect({ query, paths: await found(query) }).toEqual({ query, paths: [path] });
  // Highlighted in the snippet as written.
  const [hit] = (await search(home, { query: "efficient", mode: "bm25" })).results;
  expect(hit!.snippet).toContain("eﬃcient");

  // An index written before (its full text in the old form) is written again by the next run, files unread.
  const db = new Database(Store.dbPath(repo.dir));
  db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')");
  const rows = db.query<{ id: number; title: string; heading: string; text: string }, []>(
    "SELECT f.id, d.title, f.heading, f.text FROM fragments f JOIN documents d ON d.id = f.document_id",
  );
  for (const row of rows.all())
    db.query("INSERT INTO fragments_fts(rowid, title, heading, body) VALUES (?, ?, ?, ?)").run(row.id, row.title, row.heading, row.text);
  db.run("DELETE FROM meta WHERE key = 'full_text_version'");
  db.close();
  expect(await found("efficient")).toEqual([]);
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 0 });
  expect(await found("efficient")).toEqual(["lig.txt"]);
});

test("a vowel sign is part of its word and optional points are not: कमला is not कमल, בראשית finds pointed text, a Hindi match is lexical evidence (s26 review F1)", async () => {
  // FTS5's unicode61 cut words at every mark outside Latin: कमला (a name) and कमल (lotus) were one phrase of
  // consonants, unpointed Hebrew and Arabic found no pointed text, and a Hindi word's query stem no fragment held.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "lotus.md": "# Lotus\n\nकमल एक फूल है। lotus flower\n",
    "kamala.md": "# Sister\n\nकमला मेरी बहन है। my sister\n",
    "pointed.md": "# Torah\n\nבְּרֵאשִׁית בָּרָא אֱלֹהִים אֵת הַשָּׁמַיִם וְאֵת הָאָרֶץ\n",
    "arabic.md": "# Book\n\nقرأت كِتَابًا جَمِيلًا\n",
    "arabic-plain.md": "# Plain\n\nقرأت كتابا جميلا في المكتبة\n",
    "arabic-article.md": "# Care\n\nمصاب بالسرطان وعلاجه في المستشفى\n",
    "arabic-which.md": "# Which\n\nالكتاب الذي قرأته\n",
  });
  const hindi = tempDir();
  writeTree(hindi, {
    "hi.md": "# हिन्दी\n\nहिन्दी व्याकरण के नियम\n",
    ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`n${i}.md`, `# Note ${i}\n\nGardening notes ${i}\n`])),
  });
  await indexRepository(home, registerRepository(home, { name: "mk", path: docs, embed: false }));
  await indexRepository(home, registerRepository(home, { name: "hi", path: hindi, embed: false }));
  const found = async (query: string) => (await search(home, { query, mode: "bm25" })).results as FragmentHit[];
  expect((await found("कमला")).map((r) => r.path)).toEqual(["kamala.md"]);
  expect((await found("कमल")).map((r) => r.path)).toEqual(["lotus.md"]);
  const [torah] = await found("בראשית");
  expect(torah?.path).toBe("pointed.md");
  expect(torah!.highlights.map(([start, end]) => torah!.snippet.slice(start, end))).toEqual(["בְּרֵאשִׁית"]); // marked as written
  expect((await found("كتابا")).map((r) => r.path).sort()).toEqual(["arabic-plain.md", "arabic.md"]);
  // A word with the article and a preposition joined to it is found by the word alone, and as written (s27 user U1),
  // and marked in its snippet (s27b retest N2); two letters left are no word of their own (`الذي` is not `ذي`: N1).
  for (const query of ["سرطان", "بالسرطان"]) expect((await found(query)).map((r) => r.path)).toEqual(["arabic-article.md"]);
  const [care] = await found("سرطان");
  expect(care!.highlights.map(([start, end]) => care!.snippet.slice(start, end))).toEqual(["بالسرطان"]);
  expect(await found("ذي")).toEqual([]);
  expect((await found("مستشفى")).map((r) => r.path)).toEqual(["arabic-article.md"]);
  // An index written as version 5 (words as written only) is written again by its next run.
  const mk = getRepository(home, "mk");
  const db = new Database(Store.dbPath(mk.dir));
  db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')");
  db.run("INSERT INTO fragments_fts(rowid, title, heading, body) SELECT f.id, '', f.heading, f.text FROM fragments f");
  db.run("UPDATE meta SET value = '5' WHERE key = 'full_text_version'");
  db.close();
  expect(await found("سرطان")).toEqual([]);
  await indexRepository(home, mk);
  expect((await found("سرطان")).map((r) => r.path)).toEqual(["arabic-article.md"]);
  const [hi] = (await search(home, { query: "हिन्दी", mode: "bm25", explain: true })).results;
  expect(hi?.path).toBe("hi.md");
  expect(hi!.explain!.merge!.lexical).toBeGreaterThan(0.5);
  expect(hi!.score).toBeGreaterThan(0);
});

test("a query of invisible characters alone (a zero-width space, a soft hyphen) is no query: a usage error, as a blank one (s21 hostile #11)", async () => {
  const home = tempDir();
  for (const query of ["\u200b", "\u00ad\u2060", " \ufeff "]) {
    await expect(search(home, { query })).rejects.toMatchObject({ code: "USAGE", message: "search needs a query" });
  }
});
