/**
 * One ranking however the results are asked for (issue 22): pages of any size cut from one list, a filter that
 * restricts that list without rescoring it, and repos-for ordered by calibrated evidence. Real indexes, real GloVe.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseFilter } from "../src/search/filters.ts";
import { RARE_FIRST } from "../src/search/bm25.ts";
import { FUSION_DEPTH } from "../src/search/fusion.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { repositoriesFor } from "../src/search/results.ts";
import {
  search,
  SearchContext,
  type DocumentHit,
  type FragmentHit,
  type SearchOptions,
  type SearchResponse,
} from "../src/search/search.ts";
import { seeded } from "../src/random.ts";
import { cpSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describeShared, GLOVE, HOOK_TIMEOUT, runCli, SHARED, tempDir, testShared, writeTree } from "./helpers.ts";

const WORDS = [
  "river",
  "mountain",
  "forest",
  "garden",
  "harbor",
  "bridge",
  "castle",
  "valley",
  "meadow",
  "island",
  "engine",
  "signal",
  "market",
  "winter",
  "summer",
  "lantern",
  "compass",
  "orchard",
  "canyon",
  "glacier",
];

function text(next: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]).join(" ");
}

/** What identifies a result and its place: compared between pages. */
const key = (response: SearchResponse) =>
  response.results.map((hit) => {
    const fragments =
      "fragments" in hit ? (hit as DocumentHit).fragments.map((f) => `${f.id}:${f.score}`).join(",") : (hit as FragmentHit).fragment.id;
    return `${hit.rank} ${hit.path} ${hit.score} ${fragments}`;
  });

describeShared("paging cuts every page from one ranked list", () => {
  const home = tempDir();
  const docs = tempDir();
  const next = seeded(7);
  // 160 documents of two sections each: more matches than any fixed depth of 100 fragments, in every list.
  writeTree(
    docs,
    Object.fromEntries(
      Array.from({ length: 160 }, (_, i) => [
        `d${String(i).padStart(3, "0")}.md`,
        `# Note ${i}\n\n## First\n\n${text(next, 12 + (i % 9) * 4)}\n\n## Second\n\n${text(next, 8 + (i % 5) * 6)}\n`,
      ]),
    ),
  );
  const context = new SearchContext();
  beforeAll(async () => {
    await indexRepository(home, registerRepository(home, { name: "notes", path: docs, embedding: { model: GLOVE } }));
  }, HOOK_TIMEOUT);
  afterAll(() => context.close());

  // Vectors come from the GloVe model in ../shared: without it the repository is indexed for BM25 only.
  const modeTest = (mode: string) => (mode === "bm25" ? test : testShared);
  for (const mode of ["bm25", "vector", "hybrid"] as const) {
    for (const documents of [false, true]) {
      const label = `${mode}${documents ? " --documents" : ""}`;
      modeTest(mode)(`${label}: -n 10 is the first 10 of -n 100, and pages of 10 concatenate to -n 50`, async () => {
        const ask = (o: Partial<SearchOptions>) => search(home, { query: "river garden lantern", mode, documents, ...o }, context);
        const big = await ask({ limit: 100 });
        expect(big.results.length).toBeGreaterThanOrEqual(50);
        expect(key(await ask({ limit: 10 }))).toEqual(key(big).slice(0, 10));
        const pages = [];
        const totals = new Set([big.total]);
        for (let offset = 0; offset < 50; offset += 10) {
          const page = await ask({ limit: 10, offset });
          pages.push(...key(page));
          totals.add(page.total);
        }
        expect(pages).toEqual(key(await ask({ limit: 50 })));
        expect(pages).toEqual(key(big).slice(0, 50));
        // `total` does not depend on the page, and is what the whole list holds: paging until it ends at the end.
        expect([...totals]).toEqual([big.total]);
        expect((await ask({ limit: 100_000 })).results.length).toBe(big.total);
      });
    }
  }

  for (const mode of ["bm25", "vector", "hybrid"] as const) {
    modeTest(mode)(`${mode}: past the fixed depth (deeper lists), pages of 100 still concatenate to -n 300`, async () => {
      const ask = (o: Partial<SearchOptions>) => search(home, { query: "river garden lantern", mode, ...o }, context);
      const whole = key(await ask({ limit: 300 }));
      expect(whole.length).toBeGreaterThan(250);
      const pages = [];
      for (let offset = 0; offset < 300; offset += 100) pages.push(...key(await ask({ limit: 100, offset })));
      expect(pages).toEqual(whole);
    });
  }
});

test("--documents: a document's fragments do not change with the page, --all lists those a page lists (s23 contracts C1)", async () => {
  // 1,200 fragments hold the word twice; one note holds it six times in one section and once in nine long ones,
  // ranked below all the others: a page ranks 1,000 fragments, --all every one, and --all listed three of its.
  const home = tempDir();
  const docs = tempDir();
  const section = (i: number, words: string) => `## Part ${i}\n\n${words}\n`;
  const files: Record<string, string> = {};
  for (let d = 0; d < 120; d++)
    files[`d${String(d).padStart(3, "0")}.md`] = Array.from({ length: 10 }, (_, i) =>
      section(i, `lantern lantern ${"word ".repeat(20)}`),
    ).join("\n");
  files["x.md"] = [
    section(0, "lantern ".repeat(6)),
    ...Array.from({ length: 9 }, (_, i) => section(i + 1, `lantern ${"filler ".repeat(60)}`)),
  ].join("\n");
  writeTree(docs, files);
  await indexRepository(home, registerRepository(home, { name: "notes", path: docs, embed: false }));
  const context = new SearchContext();
  try {
    const ask = (limit: number) => search(home, { query: "lantern", mode: "bm25", documents: true, limit }, context);
    const page = key(await ask(10));
    expect(page[0]).toContain("x.md");
    expect(key(await ask(100_000)).slice(0, 10)).toEqual(page);
  } finally {
    context.close();
  }
});

/**
 * Headings and bodies of random words from one small vocabulary: near-equal BM25 scores, so a fragment whose own
 * heading holds the query's word rises from far down BM25's list, past where the first page's depth reaches.
 */
function headingsCorpus(): { docs: string; vocabulary: string[] } {
  const docs = tempDir();
  const next = seeded(11);
  const vocabulary = Array.from({ length: 40 }, (_, i) => `w${i}`);
  const words = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(" ");
  const section = () => `## ${words(2)}\n\n${words(15 + Math.floor(next() * 45))}.\n`;
  const files = Array.from({ length: 150 }, (_, d) => [
    `d${String(d).padStart(3, "0")}.md`,
    `# Doc ${d}\n\n${[1, 2, 3, 4].map(section).join("\n")}`,
  ]);
  writeTree(docs, Object.fromEntries(files));
  return { docs, vocabulary };
}

/** -n 100 then --offset 100 is -n 200, and pages of 100 are -n 400, for the corpus's first words. */
async function expectPagesConcatenate(home: string, vocabulary: string[], mode: "bm25" | "hybrid", context: SearchContext) {
  for (const word of vocabulary.slice(0, 12)) {
    const ask = (o: Partial<SearchOptions>) => search(home, { query: word, mode, ...o }, context);
    const whole = key(await ask({ limit: 400 }));
    const pages = [];
    for (let offset = 0; offset < 400; offset += 100) pages.push(...key(await ask({ limit: 100, offset })));
    expect(pages).toEqual(whole);
    expect(key(await ask({ limit: 200 }))).toEqual(whole.slice(0, 200));
  }
}

describe("pages concatenate where headings reorder BM25's list (s13 review #2)", () => {
  const home = tempDir();
  const { docs, vocabulary } = headingsCorpus();
  const context = new SearchContext();
  beforeAll(async () => {
    await indexRepository(home, registerRepository(home, { name: "pg", path: docs, embed: false }));
  }, HOOK_TIMEOUT);
  afterAll(() => context.close());
  test("bm25: -n 100 then --offset 100 is -n 200, and pages of 100 are -n 400, for every word", () =>
    expectPagesConcatenate(home, vocabulary, "bm25", context));
});

describeShared("hybrid pages concatenate where headings reorder BM25's list (s13 retest #1)", () => {
  // Hybrid fuses the boosted list by score: a block's fragment that outscored an earlier block's reached an earlier page.
  const home = tempDir();
  const { docs, vocabulary } = headingsCorpus();
  const context = new SearchContext();
  beforeAll(async () => {
    await indexRepository(home, registerRepository(home, { name: "pg", path: docs, embedding: { model: GLOVE } }));
  }, HOOK_TIMEOUT);
  afterAll(() => context.close());
  test("hybrid: -n 100 then --offset 100 is -n 200, and pages of 100 are -n 400, for every word", () =>
    expectPagesConcatenate(home, vocabulary, "hybrid", context));
});

describeShared("pages of a search over several repositories concatenate (s19 review F5)", () => {
  // Merge evidence came from list places past the depth fusion counts: a result's vector evidence was there when a
  // page reached past 100 and absent when it did not, which moved it among the other repository's results (a
  // search of the Rust book and SICP: three first pages for -n 10, -n 101 and --all).
  const home = tempDir();
  const next = seeded(7);
  const vocabulary = (
    "river stone music garden winter engine market doctor forest ocean letter window bridge silver mountain village " +
    "castle harbor kitchen teacher soldier farmer painter island desert candle apple bread chair cloud dream field " +
    "flower glass horse house lake light money night paper plant queen road school ship sky snow song star storm"
  ).split(" ");
  const words = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(" ");
  const context = new SearchContext();
  beforeAll(async () => {
    for (const name of ["one", "two"]) {
      const docs = tempDir();
      const files = Array.from({ length: 300 }, (_, d) => [`d${d}.md`, `# ${words(2)}\n\n${words(8 + Math.floor(next() * 20))}.\n`]);
      writeTree(docs, Object.fromEntries(files));
      await indexRepository(home, registerRepository(home, { name, path: docs, embedding: { model: GLOVE } }));
    }
  }, HOOK_TIMEOUT);
  afterAll(() => context.close());

  test("a list place past the fusion depth adds no merge evidence, so -n 10 is the first ten of -n 101 and -n 400", async () => {
    let past = 0;
    // Words and pairs of words: a fragment holding one of two words holds part of the query (queryCoverage).
    for (const word of [...vocabulary.slice(0, 4), "river stone", "music garden winter"]) {
      const ask = (o: Partial<SearchOptions>) => search(home, { query: word, ...o }, context);
      const whole = await ask({ limit: 400, explain: true });
      for (const hit of whole.results) {
        const { bm25, vector, merge } = hit.explain!;
        if (vector && vector.rank > FUSION_DEPTH) {
          past++;
          expect(merge!.vector).toBeNull();
        }
        // Nor strength, the tie's key across repositories (s26 review F4: a deeper page ranked BM25 further and gave it one).
        if (bm25 && bm25.rank > FUSION_DEPTH) expect([merge!.lexical, merge!.strength]).toEqual([null, 0]);
      }
      expect(key(await ask({ limit: 10 }))).toEqual(key(whole).slice(0, 10));
      expect(key(await ask({ limit: 101 }))).toEqual(key(whole).slice(0, 101));
      // The query's share a fragment holds is measured for as many of each list as a page can show: pages still
      // concatenate, in bm25 mode too.
      const bm25 = key(await ask({ limit: 400, mode: "bm25" }));
      expect(key(await ask({ limit: 10, mode: "bm25" }))).toEqual(bm25.slice(0, 10));
      expect(key(await ask({ limit: 10, offset: 10, mode: "bm25" }))).toEqual(bm25.slice(10, 20));
    }
    expect(past).toBeGreaterThan(0); // the deep lists did reach past the depth
  });
});

describeShared("a page of documents is full whenever that many documents match", () => {
  const home = tempDir();
  const docs = tempDir();
  // One long document whose 1,500 sections each say "lantern" thrice (over the 10 fragments ranked per document asked
  // for, at every page size here) and 40 short ones that say it once, further down every list.
  const sections = Array.from({ length: 1500 }, (_, i) => `## Part ${i}\n\nlantern lantern lantern ${"filler words ".repeat(100)}\n`);
  writeTree(docs, {
    "book.md": `# Book\n\n${sections.join("\n")}`,
    ...Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`n${i}.md`, `# Note ${i}\n\nOne lantern among ${"other words ".repeat(60)}\n`]),
    ),
  });
  const context = new SearchContext();
  beforeAll(async () => {
    await indexRepository(home, registerRepository(home, { name: "lib", path: docs, embedding: { model: GLOVE } }));
  }, HOOK_TIMEOUT);
  afterAll(() => context.close());

  for (const mode of ["bm25", "hybrid"] as const) {
    (mode === "bm25" ? test : testShared)(`${mode}: -n 20 holds 20 documents, and pages of 10 reach every one`, async () => {
      const ask = (o: Partial<SearchOptions>) => search(home, { query: "lantern", mode, documents: true, ...o }, context);
      const first = await ask({ limit: 20 });
      expect(first.results).toHaveLength(20);
      expect(first.total).toBe(41);
      const pages = [];
      for (let offset = 0; offset < 41; offset += 10) pages.push(...key(await ask({ limit: 10, offset })));
      expect(pages).toHaveLength(41);
      expect(pages).toEqual(key(await ask({ limit: 100_000 })));
      expect(pages.slice(0, 20)).toEqual(key(first));
    });
  }
});

describe("a filter restricts the ranking without rescoring it", () => {
  const home = tempDir();
  const docs = tempDir();
  // 1,200 fragments (large enough that common words are pruned from FTS5's match); "harbor" is in 30% of them.
  const files: Record<string, string> = {};
  for (let i = 0; i < 1200; i++) {
    const folder = i % 2 ? "odd" : "even";
    const words = [
      `note ${i}`,
      i % 10 < 3 ? "harbor harbor" : "",
      i % 40 === 0 || i % 40 === 1 ? "zephyr" : "",
      "filler text".repeat(1 + (i % 4)),
    ];
    files[`${folder}/n${i}.md`] = `${words.filter(Boolean).join(" ")}\n`;
  }
  writeTree(docs, files);
  const skipped = RARE_FIRST.minSkippedPostings;
  beforeAll(async () => {
    // The rare-words-first ranking large repositories use, on this small one (as bench/scifact.ts does).
    RARE_FIRST.minSkippedPostings = 0;
    await indexRepository(home, registerRepository(home, { name: "big", path: docs, embed: false }));
  }, HOOK_TIMEOUT);
  afterAll(() => {
    RARE_FIRST.minSkippedPostings = skipped;
  });

  const scored = (response: SearchResponse) => response.results.map((hit) => `${hit.path} ${hit.score}`);

  const filters: [string, Partial<SearchOptions>][] = [
    ["--filter", { filter: "odd/**" }],
    ["--where", { where: [parseFilter("path=odd/**")] }],
  ];
  for (const [label, filter] of filters) {
    test(`${label}: the filtered results are the unfiltered ones restricted to the filter, with the same scores`, async () => {
      const all = await search(home, { query: "zephyr harbor", limit: 200 });
      expect(all.total).toBe(60);
      const filtered = await search(home, { query: "zephyr harbor", limit: 200, ...filter });
      expect(filtered.results.length).toBe(30);
      expect(scored(filtered)).toEqual(scored(all).filter((line) => line.startsWith("odd/")));
    });
  }
});

describe("--filter with a glob without a slash", () => {
  test("'*.md' (the --help example) matches base names at any depth, as .gitignore does; a slash anchors to the path", () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, {
      "top.md": "# Top\n\nThe lighthouse keeper.\n",
      "notes/deep/inner.md": "# Inner\n\nA lighthouse on the cliff.\n",
      "notes/plain.txt": "A lighthouse in plain text.\n",
    });
    registerRepository(home, { name: "docs", path: docs, embed: false });
    expect(runCli(["index"], { home }).code).toBe(0);
    const paths = (filter: string) =>
      (JSON.parse(runCli(["search", "lighthouse", "--filter", filter, "--json"], { home }).stdout).results as { path: string }[])
        .map((r) => r.path)
        .sort();
    expect(paths("*.md")).toEqual(["notes/deep/inner.md", "top.md"]);
    expect(paths("inner.*")).toEqual(["notes/deep/inner.md"]);
    expect(paths("notes/*.md")).toEqual([]); // a slash: matched against the whole path, and * stays within a folder
    expect(paths("notes/**/*.md")).toEqual(["notes/deep/inner.md"]);
  });
});

describe("repos-for", () => {
  test("ranks by calibrated evidence: a two-document repository holding the only answer comes first", async () => {
    const home = tempDir();
    const small = tempDir();
    const large = tempDir();
    writeTree(small, {
      "answer.md": "# Brewing\n\nZymurgy is the study of yeast fermentation.\n",
      "other.md": "# Other\n\nSomething else entirely.\n",
    });
    // Many documents, a few about yeast in bread: the query's one word they hold is rare there, so it scores high.
    writeTree(
      large,
      Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [
          `n${i}.md`,
          `# Note ${i}\n\n${i < 3 ? "Bread rises with yeast." : `Unrelated words ${i}.`}\n`,
        ]),
      ),
    );
    for (const [name, path] of [
      ["small", small],
      ["large", large],
    ] as const) {
      await indexRepository(home, registerRepository(home, { name, path, embed: false }));
    }
    const ranked = await repositoriesFor(home, "zymurgy yeast fermentation");
    expect(ranked.map((r) => r.repository)).toEqual(["small", "large"]);
    expect(ranked[0]!.bm25).toBeLessThan(ranked[1]!.bm25); // the raw BM25 that used to order them
    expect(ranked[0]!.score).toBeGreaterThan(0.8); // every word of the query, in a fragment a little longer than the average
    expect(ranked[1]!.score).toBeLessThan(0.5);
    const cli = JSON.parse(runCli(["repos-for", "zymurgy yeast fermentation", "--json"], { home }).stdout);
    expect(cli.map((r: { repository: string }) => r.repository)).toEqual(["small", "large"]);
    // A repository never indexed is listed last with the error that says how to index it, not left out.
    registerRepository(home, { name: "fresh", path: tempDir(), embed: false });
    const listed = await repositoriesFor(home, "zymurgy yeast fermentation");
    expect(listed.map((r) => r.repository)).toEqual(["small", "large", "fresh"]);
    expect(listed[2]).toMatchObject({ score: 0, matched: 0, error: { code: "NOT_INDEXED" } });
  });
});

test("a library search without a context of its own leaves no database open behind it", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha words\n" });
  await indexRepository(home, registerRepository(home, { name: "r", path: docs, embed: false }));
  const openFiles = () => readdirSync("/proc/self/fd").length;
  await search(home, { query: "alpha" }); // the first search loads what stays loaded (modules, not databases)
  const before = openFiles();
  for (let i = 0; i < 30; i++) {
    await search(home, { query: "alpha" });
    await repositoriesFor(home, "alpha");
  }
  expect(openFiles()).toBeLessThanOrEqual(before + 2);
});

describeShared("in hybrid mode a filter restricts the fused ranking without rescoring it", () => {
  // A fused score normalises each list between its best and its 100th score. Normalised within the filter, the
  // filtered lists' own anchors gave other scores and another order (tester's F7): the anchors are the unfiltered ones.
  const fragments = (response: SearchResponse) => (response.results as FragmentHit[]).map((hit) => `${hit.location} ${hit.score}`);
  const positive = (lines: string[]) => lines.filter((line) => !line.endsWith(" 0"));
  const context = new SearchContext();
  afterAll(() => context.close());

  /** The filtered results against the unfiltered ones restricted to what the filter admits. */
  async function expectRestricted(home: string, query: string, filter: Partial<SearchOptions>, admits: (path: string) => boolean) {
    const ask = (o: Partial<SearchOptions>) => search(home, { query, mode: "hybrid", ...o }, context);
    const restricted = fragments(await ask({ limit: 1000 })).filter((line) => admits(line.split(":")[0]!));
    const filtered = fragments(await ask({ limit: 1000, ...filter }));
    expect(positive(restricted).length).toBeGreaterThanOrEqual(2);
    // Every fragment the unfiltered fusion scores above 0 keeps its score and its place; the rest (0: below both
    // lists' 100th score) follow.
    expect(positive(filtered)).toEqual(positive(restricted));
    expect(filtered.length).toBeGreaterThanOrEqual(restricted.length);
    const page = fragments(await ask({ limit: 4, ...filter }));
    expect(page).toEqual(filtered.slice(0, 4));
    expect(page).toHaveLength(Math.min(4, filtered.length));
  }

  test(
    "weighted lists (a repository too small to calibrate: 0.8 / 0.2)",
    async () => {
      const home = tempDir();
      const docs = tempDir();
      const next = seeded(11);
      writeTree(
        docs,
        Object.fromEntries(
          Array.from({ length: 14 }, (_, i) => [`${i % 2 ? "odd" : "even"}/d${i}.md`, `# Note ${i}\n\n${text(next, 10 + (i % 7) * 5)}\n`]),
        ),
      );
      await indexRepository(home, registerRepository(home, { name: "small", path: docs, embedding: { model: GLOVE } }));
      const explained = await search(home, { query: "river garden", mode: "hybrid", explain: true, limit: 1 }, context);
      expect(explained.results[0]!.explain!.weights).toEqual({ bm25: 0.8, vector: 0.2 });
      for (const query of ["river garden", "lantern compass winter", "summer"]) {
        await expectRestricted(home, query, { filter: "odd/*" }, (path) => path.startsWith("odd/"));
        await expectRestricted(home, query, { where: [parseFilter("path~even")] }, (path) => path.includes("even"));
      }
    },
    HOOK_TIMEOUT,
  );

  testShared(
    "the Rust book: --filter and --where give the unfiltered scores and order",
    async () => {
      const home = tempDir();
      const book = join(SHARED, "data/corpus/markdown/rust-book/src");
      await indexRepository(home, registerRepository(home, { name: "book", path: book, embedding: { model: GLOVE } }));
      const query = "the rust program uses a function";
      await expectRestricted(home, "read the elements of a vector", { filter: "ch08-01*" }, (path) => path.startsWith("ch08-01"));
      await expectRestricted(home, query, { where: [parseFilter("path~ch08")] }, (path) => path.includes("ch08"));
      await expectRestricted(home, "hash map insert", { where: [parseFilter("path~ch08")] }, (path) => path.includes("ch08"));
    },
    HOOK_TIMEOUT,
  );
});

describeShared("a query's phrases and -words hold in every mode, vector lists included", () => {
  const home = tempDir();
  const docs = tempDir();
  const context = new SearchContext();
  const next = seeded(5);
  writeTree(docs, {
    "a.md": "# Kangaroo\n\nThe kangaroo jumps across the dry outback at dawn.\n",
    "b.md": "# Marsupials\n\nThe kangaroo and other marsupials carry their young in pouches.\n",
    "c.md": "# Pouches\n\nMarsupials such as the wombat raise young in a pouch.\n",
    "d.md": "# Desert\n\nA red kangaroo rests in the shade of the outback.\n",
    ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`n${i}.md`, `# Note ${i}\n\n${text(next, 12)}\n`])),
  });
  beforeAll(async () => {
    await indexRepository(home, registerRepository(home, { name: "zoo", path: docs, embedding: { model: GLOVE } }));
  }, HOOK_TIMEOUT);
  afterAll(() => context.close());
  const texts = async (query: string, mode: "vector" | "hybrid") =>
    ((await search(home, { query, mode, full: true, limit: 50 }, context)).results as FragmentHit[]).map((hit) => hit.text!);

  for (const mode of ["vector", "hybrid"] as const) {
    test(`${mode}: no result holds a -word`, async () => {
      const found = await texts("kangaroo -marsupials", mode);
      expect(found.length).toBeGreaterThan(0);
      expect(found.filter((text) => /marsupials/i.test(text))).toEqual([]);
      expect(found.some((text) => text.includes("kangaroo jumps"))).toBe(true);
    });

    test(`${mode}: every result holds each "quoted phrase"`, async () => {
      const found = await texts('"kangaroo jumps" outback', mode);
      expect(found).toHaveLength(1);
      expect(found[0]).toContain("kangaroo jumps");
    });
  }
});

test("the order repositories are named in does not change the order of results (ties interleave by name)", async () => {
  const home = tempDir();
  for (const name of ["code", "docs"]) {
    const folder = tempDir();
    writeTree(folder, { "a.md": "# A\n\nborrow error words\n", "b.md": "# B\n\nanother borrow error here\n" });
    await indexRepository(home, registerRepository(home, { name, path: folder, embed: false }));
  }
  const order = async (repositories: string[]) =>
    (await search(home, { query: "borrow error", repositories, mode: "bm25" })).results.map((hit) => `${hit.repository}:${hit.path}`);
  expect(await order(["docs", "code"])).toEqual(await order(["code", "docs"]));
  expect(await order(["docs", "code"])).toEqual(await order([]));
});

test("a word with a digit holds the query as the index stems it: a full match of `1990s` or `toUTF8Array` is a full match (s25 code user C20)", async () => {
  // FTS5's porter stems `1990s` to `1990` and `toUTF8Array` to `toutf8arrai`; the query side left words with a digit
  // as written, found no fragment holding them and gave a full match merge evidence ~0.35, the lexical evidence of
  // another repository's fragment holding only `music`.
  const home = tempDir();
  const a = tempDir();
  const b = tempDir();
  writeTree(a, {
    "grunge.md": "# Grunge\n\nSeattle bands of the 1990s shaped alternative music for a decade.\n",
    "util.ts": "export function toUTF8Array(text: string): Uint8Array {\n  return new TextEncoder().encode(text);\n}\n",
    ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`n${i}.md`, `# Note ${i}\n\nGardening notes about tomatoes, ${i}.\n`])),
  });
  writeTree(b, {
    "playlist.md": "# Playlist\n\nMusic, music, music: jazz music and blues music for the road.\n",
    ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`r${i}.md`, `# Recipe ${i}\n\nBread baking with flour, ${i}.\n`])),
  });
  await indexRepository(home, registerRepository(home, { name: "a", path: a, embed: false, fileTypes: ["md", "ts"] }));
  await indexRepository(home, registerRepository(home, { name: "b", path: b, embed: false }));
  const lexical = async (query: string) =>
    Object.fromEntries(
      (await search(home, { query, mode: "bm25", explain: true })).results.map((hit) => [hit.path, hit.explain!.merge!.lexical]),
    );
  const decade = await lexical("1990s music");
  expect(decade["grunge.md"]).toBeGreaterThan(0.8);
  expect(decade["playlist.md"]).toBeLessThan(0.5);
  for (const query of ["toUTF8Array", "Uint8Array"]) expect((await lexical(query))["util.ts"]).toBeGreaterThan(0.8);
});

testShared("in vector mode, total counts only fragments with a vector: what --all returns, with embeddings pending too", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`t${i}.md`, `# T${i}\n\nkangaroo text number ${i}\n`])));
  const repo = registerRepository(home, { name: "pv", path: docs, embedding: { model: GLOVE } });
  await indexRepository(home, repo);
  writeTree(docs, Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`p${i}.md`, `# P${i}\n\nkangaroo pending ${i}\n`])));
  await indexRepository(home, repo, { noEmbed: true });
  const response = await search(home, { query: "kangaroo", mode: "vector", limit: 100 });
  expect(response.results).toHaveLength(5);
  expect(response.total).toBe(5);
});

describe("a section whose own heading states the query's topic", () => {
  testShared("ranks first in its chapter: 'the difference between macros and functions' (s12 questions #1: it was 10th)", async () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, {
      "ch20-05-macros.md": readFileSync(join(SHARED, "data/corpus/markdown/rust-book/src/ch20-05-macros.md"), "utf8"),
    });
    await indexRepository(home, registerRepository(home, { name: "book", path: docs, embed: false }));
    const top = (await search(home, { query: "what is the difference between macros and functions", mode: "bm25" })).results[0]!;
    expect(top.heading).toEndWith("The Difference Between Macros and Functions");
  });

  test("a fragment under no heading stands for its document's title, so a one-heading chapter is not outranked by another's subsection (s12 retest #3)", async () => {
    const home = tempDir();
    const docs = tempDir();
    const filler = Object.fromEntries(WORDS.map((word) => [`other/${word}.md`, `# ${word}\n\nNotes on the ${word} and its ways.\n`]));
    const body = "They travel between the river and the forest, and the calves stay hidden for weeks.";
    writeTree(docs, {
      ...filler,
      // A chapter whose one heading is its title (its fragments have no heading path)…
      "okapi.md": `# Okapi migration\n\n${body} Okapi migration follows the rains.\n`,
      // …and another chapter's subsection on the same topic, under a heading of its own.
      "forest.md": `# Forest animals\n\n## Okapi migration\n\n${body} Okapi migration follows the rains.\n`,
    });
    await indexRepository(home, registerRepository(home, { name: "notes", path: docs, embed: false }));
    const results = (await search(home, { query: "okapi migration", mode: "bm25" })).results as FragmentHit[];
    // The title stands for the chapter's heading: it comes first, as its title and text say (it came second, below
    // the subsection its own heading lifted: 5.13 against 5.67).
    expect(results.map((r) => r.path).slice(0, 2)).toEqual(["okapi.md", "forest.md"]);
  });
});

describe("a short fragment that matches only through its title or parent headings (s22 user F2)", () => {
  testShared("does not lead a book's own chapter: `Moby Dick` finds chapter 41, not the cover", async () => {
    const home = tempDir();
    const docs = tempDir();
    cpSync(join(SHARED, "data/corpus/epub/idpf-epub3-samples/moby-dick.epub"), join(docs, "moby-dick.epub"));
    await indexRepository(home, registerRepository(home, { name: "books", path: docs, embed: false }));
    const results = (await search(home, { query: "Moby Dick", mode: "bm25", limit: 3, full: true })).results as FragmentHit[];
    // "Cover Image" and the title page (a line each, the title their only match) came first and second.
    for (const result of results) expect(`${result.heading} ${result.text}`).toMatch(/Chapter 41|Moby Dick/i);
    expect(results[0]!.heading).toContain("Chapter 41");
  });

  test("scores as one of average length would: a page header below the abstract that holds the words", async () => {
    const home = tempDir();
    const docs = tempDir();
    const filler = Object.fromEntries(
      WORDS.map((word) => [
        `other/${word}.md`,
        `# ${word}\n\n## Notes\n\n${`The ${word} changes with the seasons and the light. `.repeat(6)}\n`,
      ]),
    );
    const abstract =
      "User acceptance of technology has been studied for two decades. The technology acceptance model has captured " +
      "the attention of the information systems community. This paper gives an overview of the model, its origins, " +
      "developments, extensions and criticisms, written by Mohammad Chuttur of Indiana University.";
    writeTree(docs, {
      ...filler,
      "tam.md": `---\ntitle: Overview of the Technology Acceptance Model\n---\n\nWorking Papers on Information Systems ISSN 1535-6078\n\n## Abstract\n\n${abstract}\n`,
    });
    await indexRepository(home, registerRepository(home, { name: "papers", path: docs, embed: false }));
    const query = "who wrote the overview of the technology acceptance model";
    const results = (await search(home, { query, mode: "bm25", limit: 2, full: true })).results as FragmentHit[];
    expect(results.map((r) => r.text!.slice(0, 20))).toEqual(["User acceptance of t", "Working Papers on In"]);
    // A query with a phrase keeps FTS5's scores (a phrase has no one word to look for in a fragment's own text): the
    // short header leads, as FTS5 ranks it. Asked as a phrase alone, no word is weighed at all (s23 review R12).
    const phrase = (await search(home, { query: '"acceptance model" overview', mode: "bm25", limit: 2, full: true }))
      .results as FragmentHit[];
    expect(phrase.map((r) => r.text!.slice(0, 20))).toEqual(["Working Papers on In", "User acceptance of t"]);
  });
});

test("whether titles weigh in follows the documents there now: a note with sections removed takes it away again (s13 review #6)", async () => {
  const home = tempDir();
  const docs = tempDir();
  const fillers = Object.fromEntries(
    Array.from({ length: 20 }, (_, i) => [`f${i}.md`, `# Filler ${i}\n\nplain words about other things\n`]),
  );
  writeTree(docs, {
    ...fillers,
    "a.md": "# Runtime configuration\n\nset it once: runtime\n",
    "b.md": "# Notes\n\nruntime runtime and more\n",
  });
  const repo = registerRepository(home, { name: "hf", path: docs, embed: false });
  const ranked = async () => (await search(home, { query: "runtime", mode: "bm25" })).results.map((r) => `${r.path} ${r.score}`);
  await indexRepository(home, repo);
  const plain = await ranked(); // one-heading notes only: BM25 as it ranks
  writeTree(docs, { "z.md": "# Unrelated\n\n## A subsection\n\nsomething else entirely\n" });
  await indexRepository(home, repo);
  const weighed = await ranked();
  expect(weighed[0]).toStartWith("a.md"); // titles weigh in: a's title is the query, its score rises
  expect(weighed).not.toEqual(plain);
  rmSync(join(docs, "z.md"));
  await indexRepository(home, repo);
  expect(await ranked()).toEqual(plain);
});

test("--documents over several repositories: pages concatenate to --all, no document twice or on no page (s25 scripts D1)", async () => {
  // A page of documents ranked each repository as deep as its end needed (1,000 fragments for a page ending by the
  // 100th), and deeper only until it had as many documents: repository a's short notes, found only past its long
  // documents' 1,200 fragments, ranked before repository b's weaker notes that the page had printed instead.
  const home = tempDir();
  const a = tempDir();
  const b = tempDir();
  const files: Record<string, string> = {};
  for (let d = 0; d < 4; d++)
    files[`long${d}.md`] = Array.from({ length: 300 }, (_, s) => `## Part ${s}\n\nlantern lantern lantern\n`).join("\n");
  for (let d = 0; d < 30; d++) files[`short${String(d).padStart(2, "0")}.md`] = `# Note\n\nlantern lantern ${"word ".repeat(10 + d)}\n`;
  writeTree(a, files);
  writeTree(
    b,
    Object.fromEntries(
      Array.from({ length: 60 }, (_, d) => [`b${String(d).padStart(2, "0")}.md`, `# B\n\nlantern ${"other ".repeat(20 + d)}\n`]),
    ),
  );
  await indexRepository(home, registerRepository(home, { name: "a", path: a, embed: false }));
  await indexRepository(home, registerRepository(home, { name: "b", path: b, embed: false }));
  const context = new SearchContext();
  try {
    const ask = (o: Partial<SearchOptions>) => search(home, { query: "lantern", mode: "bm25", documents: true, ...o }, context);
    const all = key(await ask({ limit: 100_000 }));
    expect(all.length).toBe(94);
    const pages: string[] = [];
    for (let offset = 0; offset < all.length; offset += 7) pages.push(...key(await ask({ limit: 7, offset })));
    expect(pages).toEqual(all);
  } finally {
    context.close();
  }
});

test("--documents past a few long documents ranks their best fragments, not all of them (s25b review F1)", async () => {
  // A page of documents ranked fragments until it held as many documents as it shows: past three long documents of
  // 600 matching sections each that was every one of their 1,800 fragments (13.7 s and 0.7 GB at 200,000). Past the
  // first page's depth (1,000 fragments) a list keeps at most ten fragments of a document.
  const home = tempDir();
  const docs = tempDir();
  const files: Record<string, string> = { "short.md": `# Note\n\nlantern ${"word ".repeat(40)}\n` };
  for (const name of ["a", "b", "c"])
    files[`${name}.md`] = Array.from({ length: 600 }, (_, s) => `## Part ${s}\n\nlantern lantern lantern\n`).join("\n");
  writeTree(docs, files);
  await indexRepository(home, registerRepository(home, { name: "notes", path: docs, embed: false }));
  const context = new SearchContext();
  try {
    const ask = (o: Partial<SearchOptions>) =>
      search(home, { query: "lantern", mode: "bm25", documents: true, explain: true, ...o }, context);
    const all = await ask({ limit: 10 });
    expect(all.results.map((hit) => hit.path)).toEqual(["a.md", "b.md", "c.md", "short.md"]);
    const short = all.results[3]!;
    expect(short.explain!.bm25!.rank).toBeLessThanOrEqual(1000 + 3 * 10 + 1); // 1,801 when every fragment was ranked
    const pages: string[] = [];
    for (let offset = 0; offset < 4; offset++) pages.push(...key(await ask({ limit: 1, offset })));
    expect(pages).toEqual(key(all));
  } finally {
    context.close();
  }
});
