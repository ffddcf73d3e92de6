import { describe, expect, test } from "bun:test";
import { convertMarkdown } from "../src/convert/convert.ts";
import { boundedMetadata } from "../src/convert/document.ts";
import { shortHeading } from "../src/text.ts";
import { chunkDocument } from "../src/index/chunk.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search } from "../src/search/search.ts";
import { tempDir, writeTree } from "./helpers.ts";
import { parseQuery } from "../src/search/query.ts";
import { makeSnippet } from "../src/search/snippet.ts";

const marked = (text: string, query: string) => {
  const snippet = makeSnippet(text, parseQuery(query).highlight);
  return { ...snippet, words: snippet.highlights.map(([s, e]) => snippet.text.slice(s, e)) };
};

test("highlights word forms by stem, prefixes, and diacritic-folded words", () => {
  expect(marked("Caching helps; the cache is warm. Running runners ran.", "caches run").words).toEqual(["Caching", "cache", "Running"]);
  expect(marked("Prefetching and prefixes", "pref*").words).toEqual(["Prefetching", "prefixes"]);
  expect(marked("Un café au lait", "cafe").words).toEqual(["café"]);
});

test("text with punctuation that folds (…, ½) or words with other letters: every form is still found", () => {
  // Words whose folded form starts differently from their raw form (É → e, µ → μ) are found as well as the plain ones.
  expect(marked("École… ecoles, Écoles ½ and more", "ecole").words).toEqual(["École", "ecoles", "Écoles"]);
  expect(marked("Naïve… naive NAÏVE", "naive").words).toEqual(["Naïve", "naive", "NAÏVE"]);
  expect(marked("10 µm … μm", "μm").words).toEqual(["µm", "μm"]);
});

test("a long run of letters costs linear time (an unanchored word pattern made it quadratic: 2 s for 64 KB)", () => {
  const text = `${"q".repeat(200_000)} café cafe ${"é".repeat(200_000)}`;
  const started = performance.now();
  expect(marked(text, "cafe").words).toEqual(["café", "cafe"]);
  // Linear takes ~10 ms; the quadratic path took tens of seconds on this input. The limit only tells them apart.
  expect(performance.now() - started).toBeLessThan(3000);
});

test("words whose stem is shorter than three letters are highlighted, in plain and in accented text", () => {
  expect(marked("Tools used by us", "uses").words).toEqual(["used", "us"]);
  expect(marked("Outils déjà used by us", "uses").words).toEqual(["used", "us"]);
});

test("a long text is cut to the window with the most distinct matches, with ellipses and an offset", () => {
  const filler = "lorem ipsum dolor sit amet ".repeat(40);
  const text = `${filler}alpha beta gamma together here. ${filler}`;
  const snippet = marked(text, "alpha gamma");
  expect(snippet.text.startsWith("…")).toBe(true);
  expect(snippet.text.endsWith("…")).toBe(true);
  expect(snippet.words).toEqual(["alpha", "gamma"]);
  expect(text.slice(snippet.offset)).toContain("alpha beta gamma");
  expect(snippet.text.length).toBeLessThan(300);
});

test("whitespace collapses without shifting the highlights", () => {
  const snippet = marked("one\n\n   two\tthree", "three");
  expect(snippet.text).toBe("one two three");
  expect(snippet.words).toEqual(["three"]);
});

test("code keeps its lines: whole lines from the window's, blank ones out, the common indent removed (s28 user 5)", () => {
  // Run together as prose, a function read as one line of words and a comment ran into the code after it.
  const lead = Array.from({ length: 30 }, (_, i) => `    x${i} = compute(${i})  # filler line ${i}`).join("\n");
  const text = `def retry(fn, attempts=3):\n${lead}\n    for i in range(attempts):\n\n        try:\n            return fn()  # the backoff call\n        except OSError:\n            sleep(base * 2 ** i)\n`;
  const snippet = makeSnippet(text, parseQuery("backoff attempts").highlight, { code: true });
  expect(snippet.text).toBe("for i in range(attempts):\n    try:\n        return fn()  # the backoff call\n    except OSError:");
  // Indented by tabs (Go), the tabs go; mixed with spaces, only what every line shares.
  expect(makeSnippet("\tif ok {\n\t\treturn nil\n\t}", parseQuery("ok").highlight, { code: true }).text).toBe("if ok {\n\treturn nil\n}");
  expect(makeSnippet("\tif ok {\n  return nil", parseQuery("ok").highlight, { code: true }).text).toBe("\tif ok {\n  return nil");
  expect(snippet.highlights.map(([s, e]) => snippet.text.slice(s, e))).toEqual(["attempts", "backoff"]);
  expect(text.slice(snippet.offset)).toStartWith("for i in range(attempts):");
  // A long line is cut, marked with an ellipsis; a match past the cut is not marked.
  const long = makeSnippet(`call(${"a, ".repeat(100)}needle)`, parseQuery("needle call").highlight, { code: true });
  expect(long.text).toEndWith("…");
  expect(long.highlights.map(([s, e]) => long.text.slice(s, e))).toEqual(["call"]);
});

test("a table's rule line is left out of a snippet; its cells and highlights stay (s15 student #6)", () => {
  const table =
    "| Variable | Definition |\n| --- | :---: |\n| Voluntariness | the extent to which use is voluntary |\n|---|---|\n| Image | status |";
  const snippet = marked(table, "voluntary image");
  expect(snippet.text).toBe("| Variable | Definition | | Voluntariness | the extent to which use is voluntary | | Image | status |");
  expect(snippet.words).toEqual(["Voluntariness", "voluntary", "Image"]);
  // A line of dashes in prose or code is not a table's rule.
  expect(marked("a -- b --- c\n----\nend", "end").text).toBe("a -- b --- c ---- end");
});

describe("cuts keep whole characters (s19 review F6)", () => {
  // Characters written as two UTF-16 units: `--json` printed a lone `\ud835` that jq and MCP clients refuse.
  const LONE = /[\uD800-\uDFFF]/u; // with the u flag, only a unit that is half of no pair
  const math = `${"𝑥".repeat(50)} needle ${"𝑥".repeat(300)}`;

  test("a snippet's window", () => {
    for (const text of [math, `a${math}`, `${"😀".repeat(400)} needle ${"😀".repeat(400)}`]) {
      const snippet = makeSnippet(text, parseQuery("needle").highlight).text;
      expect(snippet).toContain("needle");
      expect(LONE.test(snippet)).toBe(false);
    }
  });

  test("fragments cut where a run has no space, headings and metadata values cut short", () => {
    for (const text of [`zqx${"😀".repeat(5000)}`, `zq${"😀".repeat(5000)}`]) {
      const fragments = chunkDocument(convertMarkdown(text, "t"));
      expect(fragments.length).toBeGreaterThan(1);
      for (const f of fragments) expect(LONE.test(f.text)).toBe(false);
      expect(fragments.map((f) => f.text).join("")).toBe(text);
    }
    expect(LONE.test(shortHeading("😀".repeat(200)))).toBe(false);
    expect(LONE.test(shortHeading(`a${"😀".repeat(200)}`))).toBe(false);
    for (const value of ["😀".repeat(3000), `a${"😀".repeat(3000)}`])
      expect(LONE.test(String(boundedMetadata({ s: value }).s))).toBe(false);
  });
});

test("front matter holding half of a character (YAML's \\ud800 escape) is stored whole: U+FFFD, as HTML and DOCX give it (s19 hostile #6)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "f.md": '---\ntitle: "a\\ud800b"\ntags: ["\\ud83d"]\n"k\\udc00": 1\n---\n# t\n\nentword\n' });
  await indexRepository(home, registerRepository(home, { name: "e", path: docs, embed: false }));
  const [hit] = (await search(home, { query: "entword" })).results;
  const LONE = /[\uD800-\uDFFF]/u;
  expect(LONE.test(JSON.stringify({ title: hit!.title, metadata: hit!.metadata }))).toBe(false);
  expect(hit!.title).toBe("a\uFFFDb");
  expect(hit!.metadata.tags).toEqual(["\uFFFD"]);
});

test("Korean and voiced kana are marked in a snippet, composed or written decomposed, and the window goes to them (s19 retest)", () => {
  // The query's characters are compared folded (NFKD), the text's as written: a Hangul syllable or が never matched,
  // so the snippet started at the fragment's top and cited a line without the word.
  const before = "앞 문장 ".repeat(80);
  for (const [text, query, marked] of [
    [`${before}\n한국어 검색 엔진`, "한국어", ["한", "국", "어"]],
    [`${before}\n${"한국어 검색 엔진".normalize("NFD")}`, "한국어", ["한국어".normalize("NFD")]],
    [`${before}\nがっこうへ行く`, "がっこう", ["が", "っ", "こ", "う"]],
    [`${before}\n𠀋がっこう`, "がっこう", ["が", "っ", "こ", "う"]],
    [`${before}\nｶﾀｶﾅ テスト`, "カタカナ", ["ｶﾀｶﾅ"]],
  ] as const) {
    const snippet = makeSnippet(text, parseQuery(query).highlight);
    expect(snippet.highlights.map(([start, end]) => snippet.text.slice(start, end))).toEqual([...marked]);
  }
});

describe("a snippet's offset is the first character it shows, on its match's line (s21 MCP #1)", () => {
  const lineOf = (text: string, offset: number) => text.slice(0, offset).split("\n").length;
  const filler = "Some words that come before the passage and make the fragment longer than one window of text. ".repeat(4);

  test("the lead stays on the matched word's line: a table row above is no part of it", () => {
    const text = `${filler}\n| i16 | u16 |\n| i32 | u32 |\nInteger types default to i32 in Rust.\n${filler}`;
    const snippet = marked(text, "default");
    expect(lineOf(text, snippet.offset)).toBe(4);
    expect(snippet.text).toStartWith("…Integer types default");
  });

  test("blank lines where a comment was, before the window, are not its first line", () => {
    const text = `${filler}\nRun it again:\n\n\n\n\n\n\n\n\`\`\`console $ cargo publish\n${filler}`;
    const snippet = marked(text, "publish");
    expect(lineOf(text, snippet.offset)).toBe(text.split("\n").findIndex((line) => line.includes("cargo publish")) + 1);
  });

  test("a snippet of a part that begins with white space (the rest a neighbour does not show) starts below it", () => {
    const text = "TITLE OF THE PAPER IN CAPITALS\n\nNeutrophils rapidly undergo polarization.";
    const from = text.indexOf("\n");
    const snippet = makeSnippet(text, parseQuery("title").highlight, { from, to: text.length });
    expect(lineOf(text, snippet.offset)).toBe(3);
    expect(snippet.text).toBe("… Neutrophils rapidly undergo polarization.");
  });
});

test("a word joined by an invisible character is one word for marking, as for the index (s21 review N9)", () => {
  // `inter` of `inter\u200bnational` was marked for the query `inter`, though the index reads `international`.
  expect(marked("The inter\u200bnational deal and the inter team.", "inter").words).toEqual(["inter"]);
  expect(marked("The inter\u200bnational deal and the national team.", "national").words).toEqual(["national"]);
  expect(marked("Das Verwal\u00adtungs\u00adgericht und die Verwaltung.", "verwal").words).toEqual([]);
  expect(marked("inter\u200bnational", "international").words).toEqual(["inter\u200bnational"]);
});

test("an identifier query shows the identifier, not a passage with one of its parts (s22 agent #3)", () => {
  const filler = "    x = compute(value, other)\n".repeat(12);
  const camel = `    # Basically delegate everything to the root logger.\n${filler}def getLogger(name=None):\n    return root\n`;
  expect(marked(camel, "getLogger").text).toContain("def getLogger(name=None)");
  const snake = `try:\n    from _json import encode_basestring as c_encode_basestring  # else the py one\nexcept ImportError:\n    c_encode_basestring = None\n${filler}def py_encode_basestring(s):\n    return s\n`;
  expect(marked(snake, "py_encode_basestring").text).toContain("def py_encode_basestring(s)");
  // An identifier with a letter outside ASCII: its parts count as the words they fold to (s23 review R6).
  const accented = `def getÉtat(name=None):\n    return root\n${filler}    # the état: y = getÉtat(x)\n${filler}`;
  expect(marked(accented, "getÉtat").text).toContain("def getÉtat(name=None)");
  // Words of prose still go by how many of the query's words a window holds.
  const prose = `A logger writes records. ${"Filler words about nothing much. ".repeat(10)}To get a logger, ask the manager to get one by name.`;
  expect(marked(prose, "get logger").text).toContain("To get a logger");
});
