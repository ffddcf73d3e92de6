/**
 * Property tests of the query path, from the reliability issue: whatever a user types, search answers with a
 * well-formed response or refuses with USAGE / INVALID_INPUT, in the library and in the compiled executable.
 * Queries come from a seeded PRNG; set PROPERTY_SEED to replay a failure (the seed and the query are printed).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { indexRepository } from "../src/index/indexer.ts";
import { parseQuery } from "../src/search/query.ts";
import { makeSnippet } from "../src/search/snippet.ts";
import { isResearcherError } from "../src/errors.ts";
import { registerRepository } from "../src/repos.ts";
import { search, SearchContext, type DocumentHit, type FragmentHit, type SearchResponse } from "../src/search/search.ts";
import { describeShared, executable, GLOVE, HOOK_TIMEOUT, SYSTEM_PATH, tempDir, writeTree } from "./helpers.ts";
import { seeded } from "../src/random.ts";

const SEED = Number(process.env.PROPERTY_SEED ?? 0x5eed2024);
const LIBRARY_QUERIES = 10_000;
const HYBRID_QUERIES = 500;
const CLI_QUERIES = 500;
const CLI_PARALLEL = 8;

const CORPUS: Record<string, string> = {
  "cars.md": "# Vehicles\n\nCars and trucks drive on the highway; the driver parks the car in the garage.\n",
  "bread.md": "---\ntitle: Baking bread\ntags: [food, oven]\n---\n# Baking\n\nKnead the dough, let it rise, then bake the loaf.\n",
  "space.md": "# Astronomy\n\n## Telescopes\n\nThe telescope observed a distant galaxy and planets orbiting a star.\n",
  "cjk.md": "# 東京の天気\n\n今日は晴れです。東京タワーから富士山が見える。한국어 문장도 있습니다。中文搜索测试。\n",
  "rtl.md": "# مرحبا\n\nهذا نص عربي للاختبار. שלום עולם, זהו טקסט בעברית.\n",
  "emoji.md": "# Party 🎉\n\nThe café served crème brûlée 🍮 and naïve coöperation; 👩‍👩‍👧 family emoji; ﬁnancial ligature.\n",
  "code.md":
    '# Code\n\n```ts\nconst x = a && b || !c; // NEAR(a b) "quoted" title:body *glob* ^caret {brace}\n```\n\nNOT AND OR are words here.\n',
  "notes/long.txt": Array.from({ length: 200 }, (_, i) => `Line ${i} mentions covid-19, e-mail, C++ and the number ${i * 7}.`).join("\n"),
  "notes/stop.md": "# The\n\nThe and of to in it is was for on are with as at be this have from or had by.\n",
  "notes/marks.md": "# Combining\n\nZ̷̢͎a̸̛͉l̵̡̛g̶̨̛o text, e\u0301te\u0301, Å, ﬀ, ① ② ③, ⅯⅯⅩⅩⅣ, ٣٤٥ digits.\n",
  // Runs without spaces of characters written as two UTF-16 units, longer than a snippet window and a fragment: every
  // cut falls inside them (s19 review T2).
  "notes/astral.md": `# Math 𝑥\n\na${"𝑥".repeat(300)} car ${"😀".repeat(2000)} galaxy b${"𝑦".repeat(301)} oven\n`,
};
const PATHS = new Set(Object.keys(CORPUS));

// ---- a seeded generator of hostile queries ----------------------------------------------------------------

type Random = () => number;

const int = (r: Random, min: number, max: number) => min + Math.floor(r() * (max - min + 1));
const pick = <T>(r: Random, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
const times = (n: number, make: () => string, sep = " ") => Array.from({ length: n }, make).join(sep);

const VOCABULARY = [
  "car",
  "cars",
  "driver",
  "garage",
  "highway",
  "dough",
  "bake",
  "loaf",
  "telescope",
  "galaxy",
  "star",
  "planets",
  "東京",
  "天気",
  "富士山",
  "한국어",
  "中文",
  "مرحبا",
  "عربي",
  "שלום",
  "café",
  "crème",
  "naïve",
  "coöperation",
  "ﬁnancial",
  "covid-19",
  "e-mail",
  "C++",
  "line",
  "mentions",
  "number",
  "zalgo",
  "été",
  "Å",
  "①",
  "ⅯⅯ",
  "٣٤٥",
  "🎉",
  "🍮",
];
const STOPWORDS = ["the", "a", "and", "of", "to", "in", "is", "it", "was", "for", "on", "with", "THE", "And", "not", "or"];
const OPERATORS = [
  "AND",
  "OR",
  "NOT",
  "NEAR",
  "NEAR(",
  "NEAR/3",
  "(",
  ")",
  '"',
  "*",
  "^",
  ":",
  "+",
  "-",
  "{",
  "}",
  ",",
  "''",
  "\\",
  "%",
  "_",
  "$",
  "@",
  "#",
];
const COLUMNS = ["title", "heading", "body", "path", "rowid", "fragments_fts", "rank", "{title body}", "{title", "-{body}", "^title", "*"];

/** Code points of every kind: scripts, marks, emoji sequences, controls, lone surrogates, NUL, non-characters. */
const CHARACTER_CLASSES: ((r: Random) => string)[] = [
  (r) => String.fromCharCode(int(r, 0x20, 0x7e)), // ASCII printable
  (r) => String.fromCharCode(int(r, 0x00, 0x1f)), // C0 controls, NUL included
  (r) => String.fromCharCode(int(r, 0x7f, 0x9f)), // DEL, C1 controls
  (r) => String.fromCharCode(int(r, 0x4e00, 0x9fff)), // CJK ideographs
  (r) => String.fromCharCode(int(r, 0x3040, 0x30ff)), // kana
  (r) => String.fromCharCode(int(r, 0xac00, 0xd7af)), // Hangul
  (r) => String.fromCharCode(int(r, 0x0590, 0x06ff)), // Hebrew, Arabic
  (r) => String.fromCharCode(pick(r, [0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2069])), // bidi controls
  (r) => String.fromCharCode(int(r, 0x0300, 0x036f)), // combining marks
  (r) => String.fromCodePoint(int(r, 0x1f300, 0x1faff)), // emoji
  () => "👩‍👩‍👧‍👦", // ZWJ sequence
  (r) => String.fromCodePoint(0x1f1e6 + int(r, 0, 25)) + String.fromCodePoint(0x1f1e6 + int(r, 0, 25)), // flags
  (r) => String.fromCharCode(pick(r, [0x200b, 0x200c, 0x200d, 0xfeff, 0x00a0, 0x2028, 0x2029, 0x3000, 0x00ad])), // invisible
  (r) => String.fromCharCode(int(r, 0xd800, 0xdfff)), // lone surrogate
  (r) => String.fromCharCode(pick(r, [0xfffe, 0xffff, 0xfffd, 0xfdd0])), // non-characters, replacement
  (r) => String.fromCodePoint(int(r, 0x1d400, 0x1d7ff)), // mathematical letters (astral \p{L})
  (r) => String.fromCodePoint(int(r, 0x10000, 0x10ffff)), // any astral code point
  (r) => String.fromCharCode(int(r, 0xfb00, 0xfb06)), // ligatures that fold to several letters
  (r) => String.fromCharCode(int(r, 0x2460, 0x24ff)), // enclosed alphanumerics
];

const unicodeSoup = (r: Random, length: number) => times(length, () => pick(r, CHARACTER_CLASSES)(r), "");
const word = (r: Random) => (r() < 0.7 ? pick(r, VOCABULARY) : unicodeSoup(r, int(r, 1, 6)));

/** Each generator yields one kind of hostile query; `query` mixes them. */
const GENERATORS: Record<string, (r: Random) => string> = {
  unicode: (r) => unicodeSoup(r, int(r, 0, 60)),
  operators: (r) => times(int(r, 1, 30), () => (r() < 0.6 ? pick(r, OPERATORS) : word(r)), pick(r, [" ", "", " "])),
  columns: (r) =>
    times(
      int(r, 1, 6),
      () => `${pick(r, ["", "-", '"', "+"])}${pick(r, COLUMNS)}${pick(r, [":", " : ", ":-", ':"'])}${word(r)}${pick(r, ["", "*", '"'])}`,
    ),
  near: (r) => `NEAR(${times(int(r, 0, 5), () => word(r))}${pick(r, ["", ", 2", ",", ", -1", ", 99999999999"])})`,
  phrases: (r) => times(int(r, 1, 8), () => `${pick(r, ["", "-"])}"${times(int(r, 0, 4), () => word(r))}${pick(r, ['"', ""])}`),
  prefixes: (r) => times(int(r, 1, 8), () => `${pick(r, ["", "-"])}${word(r)}${pick(r, ["*", "**", "*x", "^", ""])}`),
  exclusions: (r) => times(pick(r, [1, 50, 99, 100, 101, 150, 500, 600]), () => `-${pick(r, ["", '"'])}${word(r)}${int(r, 0, 9999)}`),
  requiredMany: (r) => times(pick(r, [100, 101, 300]), () => `"${word(r)} ${word(r)}"`),
  optionalMany: (r) => times(int(r, 150, 1500), () => word(r)),
  stopwords: (r) => times(int(r, 1, 12), () => pick(r, STOPWORDS)),
  punctuation: (r) =>
    times(
      int(r, 1, 40),
      () => pick(r, [...OPERATORS, "!", "?", ".", "…", "—", "«", "»", "/", "|", "~", "`", ";", "<", ">", "[", "]", "&&", "||"]),
      pick(r, ["", " "]),
    ),
  blank: (r) =>
    times(int(r, 0, 20), () => pick(r, ["", " ", "\t", "\n", "\r", "\0", "\u200b", "\u3000", "\ufeff", "\u202e", "-", '"', "*"]), ""),
  words: (r) => times(int(r, 1, 10), () => word(r)),
  long: (r) => (r() < 0.5 ? times(20_000, () => pick(r, VOCABULARY)).slice(0, 100_000) : unicodeSoup(r, 60_000).slice(0, 100_000)),
};
const KINDS = Object.keys(GENERATORS);

function query(r: Random): string {
  const roll = r();
  // A 100 KB query costs ~100× a short one: about one in 300.
  if (roll < 0.003) return GENERATORS.long!(r);
  if (roll < 0.25)
    return times(
      int(r, 2, 4),
      () =>
        GENERATORS[
          pick(
            r,
            KINDS.filter((k) => k !== "long"),
          )
        ]!(r),
      pick(r, [" ", ""]),
    );
  return GENERATORS[
    pick(
      r,
      KINDS.filter((k) => k !== "long"),
    )
  ]!(r);
}

// ---- the property -------------------------------------------------------------------------------------

const shown = (q: string) => JSON.stringify(q.length > 300 ? `${q.slice(0, 300)}… (${q.length} chars)` : q);

function checkResponse(response: SearchResponse, text: string, mode: string): void {
  expect(response.query).toBe(text);
  expect(response.mode).toBe(mode as SearchResponse["mode"]);
  expect(response.offset).toBe(0);
  expect(Number.isInteger(response.total) && response.total >= response.results.length).toBe(true);
  expect(Array.isArray(response.results)).toBe(true);
  response.results.forEach((hit, i) => {
    expect(hit.rank).toBe(i + 1);
    expect(Number.isFinite(hit.score)).toBe(true);
    expect(PATHS.has(hit.path)).toBe(true);
    expect(hit.location).toMatch(/:\d+$/);
    expect(typeof hit.snippet).toBe("string");
    // Whole characters only: half of one is a lone surrogate, which jq and strict JSON readers refuse.
    if (/[\uD800-\uDFFF]/u.test(hit.snippet)) throw new Error(`half of a character in the snippet of ${hit.path}`);
    for (const [start, end] of hit.highlights) {
      if (!(0 <= start && start < end && end <= hit.snippet.length))
        throw new Error(`highlight [${start}, ${end}) outside the snippet ${JSON.stringify(hit.snippet)} of ${hit.path}`);
    }
    const fragments = "fragments" in hit ? (hit as DocumentHit).fragments : [(hit as FragmentHit).fragment];
    for (const f of fragments) expect(Number.isInteger(f.start_line) && f.start_line <= f.end_line).toBe(true);
  });
  JSON.stringify(response); // every field serialises
}

type Outcome = "found" | "empty" | "refused";

/** Runs one query; a failure names the seed, the query's number and the query. */
async function holds(home: string, r: Random, n: number, mode: "bm25" | "hybrid", context: SearchContext): Promise<Outcome | string> {
  const text = query(r);
  const documents = r() < 0.1;
  const limit = pick(r, [1, 10, 50]);
  try {
    const response = await search(home, { query: text, mode, documents, limit }, context);
    checkResponse(response, text, mode);
    return response.results.length ? "found" : "empty";
  } catch (error) {
    if (isResearcherError(error) && (error.code === "USAGE" || error.code === "INVALID_INPUT")) {
      if (error.message.includes("\n"))
        return `seed ${SEED}, ${mode} query #${n} ${shown(text)}: multi-line error ${JSON.stringify(error.message)}`;
      return "refused";
    }
    const detail =
      error instanceof Error
        ? `${error.name}${isResearcherError(error) ? ` ${error.code}` : ""}: ${error.message}\n${error.stack}`
        : String(error);
    return `seed ${SEED}, ${mode} query #${n} ${shown(text)}: ${detail}`;
  }
}

function corpusRepository(embed: boolean) {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, CORPUS);
  const repo = registerRepository(home, { name: "docs", path: docs, embed, ...(embed ? { embedding: { model: GLOVE } } : {}) });
  return { home, repo };
}

describeShared(`random queries (seed ${SEED})`, () => {
  const bm25 = corpusRepository(false);
  const hybrid = corpusRepository(true);
  beforeAll(async () => {
    expect(await indexRepository(bm25.home, bm25.repo)).toMatchObject({ indexed: PATHS.size, failed: 0 });
    expect(await indexRepository(hybrid.home, hybrid.repo)).toMatchObject({
      indexed: PATHS.size,
      embedded: expect.any(Number),
      model: GLOVE,
    });
  }, HOOK_TIMEOUT);

  test(`${LIBRARY_QUERIES} bm25 queries through the library resolve or refuse with USAGE / INVALID_INPUT`, async () => {
    const r = seeded(SEED);
    const context = new SearchContext();
    const failures: string[] = [];
    const outcomes: Record<Outcome, number> = { found: 0, empty: 0, refused: 0 };
    for (let n = 0; n < LIBRARY_QUERIES && failures.length < 5; n++) {
      const outcome = await holds(bm25.home, r, n, "bm25", context);
      if (outcome in outcomes) outcomes[outcome as Outcome]++;
      else failures.push(outcome);
    }
    await context.close();
    expect(failures).toEqual([]);
    // The generator reaches every path: results, nothing found, and refusals (too many exclusions or phrases).
    for (const count of Object.values(outcomes)) expect(count).toBeGreaterThan(100);
  }, 90_000);

  test(`${HYBRID_QUERIES} hybrid queries with the GloVe model resolve or refuse with USAGE / INVALID_INPUT`, async () => {
    const r = seeded(SEED + 1);
    const context = new SearchContext();
    const failures: string[] = [];
    const outcomes: Record<Outcome, number> = { found: 0, empty: 0, refused: 0 };
    for (let n = 0; n < HYBRID_QUERIES && failures.length < 5; n++) {
      const outcome = await holds(hybrid.home, r, n, "hybrid", context);
      if (outcome in outcomes) outcomes[outcome as Outcome]++;
      else failures.push(outcome);
    }
    await context.close();
    expect(failures).toEqual([]);
    // The generator reaches every path: results, nothing found, and refusals (too many exclusions or phrases).
    for (const count of Object.values(outcomes)) expect(count).toBeGreaterThan(0);
  }, 60_000);

  test(`${CLI_QUERIES} queries through the compiled executable: JSON, or one error line; never a crash`, async () => {
    const exe = await executable();
    const r = seeded(SEED + 2);
    // argv cannot carry NUL, and one argument is at most 128 KiB.
    const queries = Array.from({ length: CLI_QUERIES }, () => query(r).replaceAll("\0", " ").slice(0, 30_000));
    const run = async (text: string, n: number): Promise<string | null> => {
      const proc = Bun.spawn([exe, "search", "--json", "--", text], {
        env: { PATH: SYSTEM_PATH, HOME: bm25.home, RESEARCHER_HOME: bm25.home, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      const where = `seed ${SEED + 2}, cli query #${n} ${shown(text)}: exit ${code} ${proc.signalCode ?? ""}\n${stderr.slice(0, 2000)}`;
      if (code === 0) {
        try {
          const parsed = JSON.parse(stdout);
          if (!Array.isArray(parsed.results) || typeof parsed.total !== "number") return `${where}\nmalformed JSON response`;
        } catch {
          return `${where}\nstdout is not JSON: ${stdout.slice(0, 200)}`;
        }
        return stderr === "" ? null : `${where}\nstderr on success`;
      }
      const lines = stderr.split("\n").filter(Boolean);
      const errorLines = lines.filter((line) => line.startsWith("error: "));
      const wellFormed =
        (code === 1 || code === 2) &&
        errorLines.length === 1 &&
        lines[0] === errorLines[0] &&
        lines.slice(1).every((line) => line.startsWith("hint: ")) &&
        !errorLines[0]!.startsWith("error: unexpected") &&
        !/\n\s+at /.test(stderr);
      return wellFormed ? null : where;
    };
    const failures: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CLI_PARALLEL }, async () => {
        while (next < queries.length) {
          const n = next++;
          const failure = await run(queries[n]!, n);
          if (failure) failures.push(failure);
        }
      }),
    );
    expect(failures.slice(0, 5)).toEqual([]);
  }, 120_000);
});

describe("what the random queries found", () => {
  test("a word that folds to punctuation (⑽ → (10), ⒉ → 2.) is escaped in the highlight pattern", () => {
    const snippet = makeSnippet("The driver parks the car.", parseQuery("⑽ ⒉ car").highlight);
    expect(snippet.highlights).toEqual([[21, 24]]);
  });

  test("a word of combining marks alone highlights nothing (it folded to an empty stem or prefix)", () => {
    for (const text of ["\u0369 car", "\u0301* car"]) {
      const { highlight } = parseQuery(text);
      expect([...highlight.stems, ...highlight.prefixes]).not.toContain("");
      expect(makeSnippet("Trucks; the car.", highlight).highlights).toEqual([[12, 15]]);
    }
  });
});
