import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seeded } from "../src/random.ts";
import { impactSettings, RARE_FIRST, rankOneWord, rankPostings, rankRareFirst } from "../src/search/bm25.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { parseQuery } from "../src/search/query.ts";
import { registerRepository, type Repository } from "../src/repos.ts";
import { BM25_WEIGHTS, fts5Ranking, rankBm25, search, selectiveMatch } from "../src/search/search.ts";
import { parseFilter } from "../src/search/filters.ts";
import { Store } from "../src/store/store.ts";
import { HEADING_BOOST } from "../src/search/heading-boost.ts";
import { stem } from "../src/text.ts";
import type { SqlCondition } from "../src/store/filter-sql.ts";
import { HOOK_TIMEOUT, tempDir, writeTree } from "./helpers.ts";

// A Zipf-like vocabulary: a few words in most fragments, many in few, as in real text.
const VOCABULARY = Array.from({ length: 400 }, (_, i) => `w${i}x`);
const random = seeded(7);
const word = () => VOCABULARY[Math.floor(VOCABULARY.length ** random()) - 1]!; // P(rank i) ∝ 1/i
const words = (n: number) => Array.from({ length: n }, word).join(" ");
// "the" ends half the sections: a stopword in most fragments, as in English.
const file = () =>
  [`# ${words(4)}`, ...Array.from({ length: 10 }, () => `## ${words(2)}\n\n${words(12)}${random() < 0.5 ? " the" : ""}`)].join("\n\n");

const home = tempDir();
const docs = tempDir();
let repo: Repository;

const DEFAULT_SKIPPED = RARE_FIRST.minSkippedPostings;
// test files share modules
afterAll(() => {
  RARE_FIRST.minSkippedPostings = DEFAULT_SKIPPED;
});

beforeAll(async () => {
  RARE_FIRST.minSkippedPostings = 0; // this corpus is small: make every query of several words take the path
  // 21,000 fragments: enough for impact lists to be kept.
  writeTree(docs, Object.fromEntries(Array.from({ length: 2100 }, (_, i) => [`d${i}.md`, file()])));
  repo = registerRepository(home, { name: "zipf", path: docs, embed: false });
  await indexRepository(home, repo);
}, HOOK_TIMEOUT);

const QUERIES = ["w0x w5x w120x", "w1x w2x w3x w40x w300x", "w0x w350x", "w2x w7x w11x w13x w17x w19x w23x w29x w31x w37x"];

/** FTS5's own scores for every fragment the whole query matches. */
function fts5Scores(store: Store, query: string): Map<number, number> {
  return new Map(store.fullText.search(parseQuery(query).match!, BM25_WEIGHTS, 100_000).map((hit) => [hit.id, hit.score]));
}

test("from 20,000 fragments a word in more than a fifth of them is left out of the match when others remain", () => {
  const store = Store.open(repo.dir);
  try {
    const total = store.fragmentCount();
    expect(total).toBeGreaterThanOrEqual(20_000);
    const counts = store.fullText.termFrequencies(["w0x", "w350x"]);
    expect(counts.get("w0x")! / total).toBeGreaterThan(0.2);
    expect(counts.get("w350x")! / total).toBeLessThan(0.2);
    const match = selectiveMatch(store, parseQuery("w0x w350x"))!;
    expect(match).toContain("w350x");
    expect(match).not.toContain("w0x");
    expect(selectiveMatch(store, parseQuery("w0x"))).toContain("w0x"); // nothing else left: kept
  } finally {
    store.close();
  }
});

test("a query of one stopword is ranked from its impact list too (it was a full FTS5 pass: 440 ms at 1M fragments)", async () => {
  const store = Store.open(repo.dir);
  try {
    await expectListRanking(store, ["the"]);
  } finally {
    store.close();
  }
});

test("rare words first: every hit has the score FTS5's bm25() gives it over the whole query", () => {
  const store = Store.open(repo.dir);
  try {
    expect(store.fragmentCount()).toBeGreaterThanOrEqual(20_000);
    for (const query of QUERIES) {
      const ranking = rankRareFirst(store, parseQuery(query), BM25_WEIGHTS, 20)!;
      expect(ranking).not.toBeNull();
      const expected = fts5Scores(store, query);
      for (const hit of ranking.hits) expect(hit.score).toBeCloseTo(expected.get(hit.id)!, 9);
      // When it says no other fragment could enter (all but the ten-word query here), the top k is FTS5's.
      if (ranking.exact || query.split(" ").length < 10) {
        const top = [...expected.values()].sort((a, b) => b - a).slice(0, 20);
        expect(ranking.hits.map((h) => h.score)).toEqual(top.map((s) => expect.closeTo(s, 9)));
      }
    }
  } finally {
    store.close();
  }
});

test("phrases, exclusions and prefixes keep FTS5's own ranking", () => {
  const store = Store.open(repo.dir);
  try {
    for (const query of ['"w0x w1x" w5x', "w0x w5x -w7x", "w0x w5*"]) {
      expect(rankRareFirst(store, parseQuery(query), BM25_WEIGHTS, 20)).toBeNull();
    }
  } finally {
    store.close();
  }
});

test("after an incremental change the scores follow the new totals, and search() gives FTS5's ranking, headings weighed in, and count", async () => {
  writeFileSync(join(docs, "d0.md"), `# w120x w120x\n\n## w5x\n\n${words(40)} w120x w300x`);
  writeFileSync(join(docs, "new.md"), `# w300x\n\n${words(30)}`);
  await indexRepository(home, repo);
  const store = Store.open(repo.dir);
  try {
    for (const query of QUERIES) {
      const ranking = rankRareFirst(store, parseQuery(query), BM25_WEIGHTS, 20)!;
      const expected = fts5Scores(store, query);
      for (const hit of ranking.hits) expect(hit.score).toBeCloseTo(expected.get(hit.id)!, 9);
      // search() ranks this large repository's queries from the posting lists: FTS5's ranking of its match.
      const match = selectiveMatch(store, parseQuery(query))!;
      const response = await search(home, { query, limit: 5, mode: "bm25" });
      expect(response.total).toBe(store.fullText.countMatches(match));
      expect(response.results.map((r) => r.score)).toEqual(
        headingsWeighed(store, query, match, 5).map((score) => expect.closeTo(score, 3)),
      );
    }
  } finally {
    store.close();
  }
});

/**
 * The best `limit` scores of all FTS5's matches, each multiplied by 1 + HEADING_BOOST × the IDF share of the query's
 * words in its own heading (the document's title, for a fragment under no heading), a short fragment matching only
 * through its title and parent headings first scored at average length (heading-boost.ts), computed here from the rows
 * themselves, as heading-boost.ts must give them (exact wherever BM25's scores fall off by the largest boost within
 * twice the depth ranked, as here).
 */
function headingsWeighed(store: Store, query: string, match: string, limit: number, where?: SqlCondition): number[] {
  const parsed = parseQuery(query);
  const stems = parsed.optional.flatMap((t) => (t.stem ? [t.stem] : []));
  const n = store.fragmentCount();
  const idf = new Map(
    [...store.fullText.termFrequencies(stems)].map(([t, df]) => [t, Math.max(1e-6, Math.log((n - df + 0.5) / (df + 0.5)))]),
  );
  const mass = [...idf.values()].reduce((a, b) => a + b, 0);
  const share = (text: string) => {
    const words = new Set((text.match(/[\p{L}\p{N}]+/gu) ?? []).map(stem));
    return [...idf].reduce((sum, [t, w]) => sum + (words.has(t) ? w : 0), 0) / mass;
  };
  const stemsOf = (text: string) => (text.match(/[\p{L}\p{N}]+/gu) ?? []).map(stem);
  const count = (text: string, term: string) => stemsOf(text).filter((s) => s === term).length;
  // A short fragment with none of the words in its own heading or text scores as one of average length would.
  const shared = (row: { title: string; heading: string; text: string }, own: string) => {
    if (row.text.length > 600 || stemsOf(`${own} ${row.text}`).some((s) => idf.has(s))) return Number.POSITIVE_INFINITY;
    return [...idf].reduce((sum, [t, w]) => {
      const tf = BM25_WEIGHTS.title * count(row.title, t) + BM25_WEIGHTS.heading * count(row.heading, t);
      return sum + (w * tf * 2.2) / (tf + 1.2);
    }, 0);
  };
  const all = store.fullText.search(match, BM25_WEIGHTS, store.fragmentCount(), where);
  const rows = store.fragmentsByIds(all.map((hit) => hit.id));
  return all
    .map((hit) => {
      const row = rows.get(hit.id)!;
      const own = row.heading.split(" › ").at(-1)!;
      return Math.min(hit.score, shared(row, own)) * (1 + HEADING_BOOST * share(own || row.title));
    })
    .sort((a, b) => b - a)
    .slice(0, limit);
}

test("a fragment whose own heading holds the query's words ranks by BM25 × (1 + 0.25 × their IDF share), one score filtered or not", () => {
  const store = Store.open(repo.dir);
  try {
    for (const query of [...QUERIES, "w5x", "w40x w120x"]) {
      const parsed = parseQuery(query);
      const match = selectiveMatch(store, parsed)!;
      const scores: Map<number, number>[] = [];
      for (const condition of [undefined, store.compileFilter(parseFilter("path=d1*"), "zipf")]) {
        const ranked = store.transaction(() => rankBm25(store, parsed, match, 20, condition));
        const expected = headingsWeighed(store, query, match, 20, condition);
        expect(ranked.hits.map((hit) => hit.score)).toEqual(expected.map((score) => expect.closeTo(score, 9)));
        scores.push(new Map(ranked.hits.map((hit) => [hit.id, hit.score])));
      }
      // A fragment in both lists has one score: the filter restricts, it does not rescore.
      for (const [id, score] of scores[1]!) if (scores[0]!.has(id)) expect(score).toBeCloseTo(scores[0]!.get(id)!, 9);
    }
  } finally {
    store.close();
  }
});

const COMMON = ["w0x", "w1x", "w2x"];

/** The one-word ranking from the impact list equals FTS5's: same scores, best first, and the same total. */
async function expectListRanking(store: Store, words = COMMON): Promise<void> {
  for (const query of words) {
    const ranking = rankOneWord(store, parseQuery(query), BM25_WEIGHTS, 20)!;
    expect(ranking).not.toBeNull();
    const expected = store.fullText.search(parseQuery(query).match!, BM25_WEIGHTS, 20).map((hit) => hit.score);
    expect(ranking.hits.map((h) => h.score)).toEqual(expected.map((score) => expect.closeTo(score, 9)));
    expect((await search(home, { query, limit: 5, mode: "bm25" })).total).toBe(store.fullText.countMatches(parseQuery(query).match!));
  }
}

test("a common word is ranked from its impact list, exactly as FTS5 ranks it", async () => {
  const store = Store.open(repo.dir);
  try {
    expect(impactSettings(store)).toBeDefined();
    await expectListRanking(store);
    expect(rankOneWord(store, parseQuery("w350x"), BM25_WEIGHTS, 20)).toBeNull(); // a rare word has no list
  } finally {
    store.close();
  }
});

test("impact lists follow incremental changes: a new fragment where the word weighs most joins, a deleted one leaves", async () => {
  writeFileSync(join(docs, "heavy.md"), "# w2x w2x\n\n## w2x\n\nw2x w2x w2x\n");
  await indexRepository(home, repo);
  let store = Store.open(repo.dir);
  try {
    const heavy = store.fragmentIdsOfDocuments([store.documentByPath("heavy.md")!.id])[0]!;
    expect(rankOneWord(store, parseQuery("w2x"), BM25_WEIGHTS, 20)!.hits[0]!.id).toBe(heavy);
    await expectListRanking(store);
  } finally {
    store.close();
  }
  rmSync(join(docs, "heavy.md"));
  await indexRepository(home, repo);
  store = Store.open(repo.dir);
  try {
    const db = new Database(Store.dbPath(repo.dir), { readonly: true });
    expect(db.query("SELECT count(*) AS n FROM term_impacts WHERE fragment_id NOT IN (SELECT id FROM fragments)").get()).toEqual({ n: 0 });
    db.close();
    await expectListRanking(store);
  } finally {
    store.close();
  }
});

test(
  "--rebuild builds the impact lists again",
  async () => {
    await indexRepository(home, repo, { rebuild: true });
    const store = Store.open(repo.dir);
    try {
      expect(impactSettings(store)).toBeDefined();
      await expectListRanking(store);
    } finally {
      store.close();
    }
  },
  HOOK_TIMEOUT,
); // index runs of 21,000 fragments: seconds on a busy machine

// ---- posting lists (rankPostings): every multi-word query of plain words in a large repository -------------------

/** Words from in most fragments (w0x) to in none (w399x): lists, and FTS5's part for words without one, both. */
const POSTINGS_QUERIES = [
  "w5x w40x w120x",
  "w3x w350x w399x",
  "w1x w2x w3x w40x w300x",
  "w9x w10x",
  "w0x w5x w120x",
  "w60x",
  "w2x w7x w11x w13x w17x w19x w23x w29x w31x w37x",
];

/**
 * What search() ranks for the query (its match, common words left out) is FTS5's own ranking of that match, score for
 * score and in order, with its exact count; under a filter too; and only existing fragments are served.
 */
function expectFts5Ranking(store: Store, query: string, where = parseFilter("path=d1*")): void {
  const parsed = parseQuery(query);
  const match = selectiveMatch(store, parsed)!;
  for (const condition of [undefined, store.compileFilter(where, "zipf")]) {
    const ranked = store.transaction(() => fts5Ranking(store, parsed, match, 50, condition));
    const all = new Map(store.fullText.search(match, BM25_WEIGHTS, -1, condition).map((hit) => [hit.id, hit.score]));
    const top = [...all.values()].sort((a, b) => b - a).slice(0, 50);
    expect(ranked.hits.map((hit) => hit.score)).toEqual(top.map((score) => expect.closeTo(score, 9)));
    for (const hit of ranked.hits) expect(hit.score).toBeCloseTo(all.get(hit.id)!, 9);
    expect(ranked.total).toBe(all.size);
  }
}

test("posting lists: a multi-word query is FTS5's own ranking of its match, exactly, with its count, also under a filter", () => {
  const store = Store.open(repo.dir);
  try {
    expect(store.postings.built()).toBe(true);
    for (const query of POSTINGS_QUERIES) {
      const parsed = parseQuery(query);
      // Taken by every query here: the lists, not FTS5's pass, rank it.
      const taken = store.transaction(() => rankPostings(store, parsed, parsed.optional, parsed.match!, BM25_WEIGHTS, 50));
      expect(taken).not.toBeNull();
      expectFts5Ranking(store, query);
    }
  } finally {
    store.close();
  }
});

test(
  "posting lists follow incremental changes: changed, new and deleted documents, then a rebuild",
  async () => {
    writeFileSync(join(docs, "d1.md"), `# w120x w40x\n\n## w5x w5x\n\n${words(40)} w120x w350x w399x`);
    writeFileSync(join(docs, "d1-new.md"), `# w9x w10x\n\n## w60x w60x w60x\n\nw60x w60x w60x w60x w9x\n\n## w3x\n\n${words(60)}`);
    rmSync(join(docs, "d10.md"));
    rmSync(join(docs, "d11.md"));
    await indexRepository(home, repo);
    let store = Store.open(repo.dir);
    try {
      const added = store.fragmentIdsOfDocuments([store.documentByPath("d1-new.md")!.id]);
      for (const query of POSTINGS_QUERIES) expectFts5Ranking(store, query);
      // The new document's heavy fragment is found through the rows added since the lists were built.
      expect(store.transaction(() => fts5Ranking(store, parseQuery("w60x w9x"), parseQuery("w60x w9x").match!, 5)).hits[0]!.id).toBeOneOf(
        added,
      );
    } finally {
      store.close();
    }
    // Enough changes for the lists to be built again (a tenth of the fragments).
    for (let i = 100; i < 320; i++) writeFileSync(join(docs, `d${i}.md`), file());
    await indexRepository(home, repo);
    store = Store.open(repo.dir);
    try {
      expect(store.postings.changedSinceBuilt()).toBe(0);
      for (const query of POSTINGS_QUERIES) expectFts5Ranking(store, query);
    } finally {
      store.close();
    }
  },
  HOOK_TIMEOUT,
); // index runs of 21,000 fragments: seconds on a busy machine
