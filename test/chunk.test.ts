import { describe, expect, test } from "bun:test";
import { chunkDocument as chunkOnly, MAX_DOCUMENT_FRAGMENTS } from "../src/index/chunk.ts";
import { convertFile, convertMarkdown } from "../src/convert/convert.ts";
import { firstHeading, markdownBlocks, rendersNothing } from "../src/convert/markdown.ts";
import { seeded } from "../src/random.ts";

const md = (text: string) => convertMarkdown(text, "fallback");

/**
 * Every fragment any test here makes cites the lines its text is on: it ends on or after the line it starts on,
 * and its text has no more line breaks than its lines (a long line in a code fence made fragments `7-6`, whose
 * ref `get` refused: s24 review D13).
 */
function chunkDocument(...args: Parameters<typeof chunkOnly>): ReturnType<typeof chunkOnly> {
  const fragments = chunkOnly(...args);
  const wrong = fragments.filter((f) => f.startLine > f.endLine || lineBreaks(f.text) > f.endLine - f.startLine);
  expect(wrong.map((f) => ({ lines: `${f.startLine}-${f.endLine}`, text: f.text.slice(0, 40) }))).toEqual([]);
  return fragments;
}

function lineBreaks(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

describe("chunkDocument (markdown)", () => {
  test("fragments follow headings and carry the heading path without the title", () => {
    const doc = md("# Guide\n\nIntro text.\n\n## Install\n\nRun it.\n\n### Linux\n\nUse apt.\n");
    const fragments = chunkDocument(doc);
    expect(fragments.map((f) => f.headings)).toEqual([[], ["Install"], ["Install", "Linux"]]);
    expect(fragments.map((f) => f.text)).toEqual(["Intro text.", "Run it.", "Use apt."]);
    expect(fragments.map((f) => [f.startLine, f.endLine])).toEqual([
      [3, 3],
      [7, 7],
      [11, 11],
    ]);
  });

  test("a long heading is cut at a word boundary with an ellipsis, the path is bounded, and the heading line is body", () => {
    const long = (tag: string) => Array.from({ length: 60 }, (_, i) => `${tag}${i}`).join(" ");
    const source = `# Title\n\n## ${long("a")}\n\n### ${long("b")}\n\n#### ${long("c")}\n\nBody text.\n`;
    const fragments = chunkDocument(md(source));
    const last = fragments.at(-1)!;
    expect(last.headings).toHaveLength(3);
    expect(last.headings.join("").length).toBeLessThanOrEqual(240);
    for (const heading of last.headings) expect(heading).toMatch(/^\w+( \w+)*…$/);
    expect(last.headings[0]!.startsWith("a0 a1 a2")).toBe(true);
    expect(last.text).toBe(`#### ${long("c")}\n\nBody text.`);
    expect(last.startLine).toBe(7);
    // A short path is left whole.
    expect(chunkDocument(md("# T\n\n## Install\n\nRun it.\n"))[0]!.headings).toEqual(["Install"]);
  });

  test("a title is cut at 300 characters, a heading at 100; a title cut short is still no heading of its own section", async () => {
    const doc = await convertFile("/x/long.md", new TextEncoder().encode(`# ${"word ".repeat(100)}\n\nBody.\n`));
    expect(doc.title).toBe(`${"word ".repeat(59)}word…`);
    expect(chunkDocument(doc).map((f) => f.headings)).toEqual([[]]);
  });

  test("a `---` block that is no front matter (a rule, slides, a list, a sentence) stays body text (s12 hostile #12)", () => {
    for (const source of [
      "---\n- item one zetaword\n- item two\n---\nbody etaword\n",
      "---\njust a sentence between rules\n---\n\nText.\n",
      "---\nA sentence: then a list\n- item\n---\n\nText.\n",
    ]) {
      const doc = md(source);
      expect(doc).toMatchObject({ text: source, firstLine: 1, metadata: {} });
      expect(
        chunkDocument(doc)
          .map((f) => f.text)
          .join("\n"),
      ).toContain(source.split("\n")[1]!);
    }
    expect(md("---\n\n---\n# Empty front matter\n")).toMatchObject({ text: "# Empty front matter\n", firstLine: 4 });
  });

  test("`key: value` lines YAML refuses are front matter still; a block of comments alone is an empty one (s12 retest #2)", () => {
    // An unquoted colon in a value, as notes often have it: its text went into the body and the snippets.
    expect(md("---\ntitle: Rust: a tour\ntags: rust\n  async\n---\n# H\nbody\n")).toMatchObject({
      title: "Rust: a tour",
      metadata: { title: "Rust: a tour", tags: "rust async" },
      text: "# H\nbody\n",
      firstLine: 6,
      // …and said, with YAML's reason and the file's line, as Obsidian shows its properties invalid (s27 user U6).
      warnings: [
        "its front matter is not valid YAML (line 2: Nested mappings are not allowed in compact mappings): its values read as plain text",
      ],
    });
    expect(md("---\nNote: meeting at 10: gammaword\n---\n# H\ndeltaword\n").metadata).toEqual({ Note: "meeting at 10: gammaword" });
    // Valid YAML, a block that is no front matter, and one of comments alone warn of nothing.
    for (const source of ["---\ntitle: Fine\n---\nx\n", "---\njust a sentence: between rules\nand more\n---\nx\n", "---\n# c\n---\nx\n"])
      expect(md(source).warnings).toBeUndefined();
    // A comment is no heading: it does not become the title.
    expect(md("---\n# just a comment\n---\n# Real title\nbody\n")).toMatchObject({ title: "Real title", metadata: {}, firstLine: 4 });
  });

  test("YAML tags in front matter are read as the plain YAML they are written as, values kept (s19 hostile #5)", () => {
    // `!!binary` was stored as a Node Buffer's JSON, `!!set` and `!!omap` as {} (their values lost).
    const doc = md("---\na: !!binary aGVsbG8=\nb: !!set {x, y}\nc: !!omap [p: 1]\nd: 2024-01-01\n---\nBody.\n");
    expect(doc.metadata).toEqual({ a: "aGVsbG8=", b: { x: null, y: null }, c: [{ p: 1 }], d: "2024-01-01" });
  });

  test("front matter is metadata, not body, and line numbers still point into the file", () => {
    const doc = md("---\ntitle: Notes\ntags: [a, b]\n---\nFirst line.\n\nSecond para.\n");
    expect(doc.title).toBe("Notes");
    expect(doc.metadata).toEqual({ title: "Notes", tags: ["a", "b"] });
    const fragments = chunkDocument(doc);
    expect(fragments).toHaveLength(1);
    expect(fragments[0]!.text).not.toContain("tags");
    expect(fragments[0]!.startLine).toBe(5);
    expect(fragments[0]!.endLine).toBe(7);
  });

  test("TOML front matter between `+++` lines (Hugo, Zola) is metadata too; a `+++` block that is no TOML stays body", () => {
    const doc = md(
      '+++\ntitle = "Hugo page"\ndate = 2024-01-02\ntags = ["go", "web"]\nid = 9007199254740993\n[params]\nauthor = "Ann"\n+++\nFirst line.\n',
    );
    expect(doc).toMatchObject({ title: "Hugo page", firstLine: 9, text: "First line.\n" });
    // A date as its ISO text (as YAML's is kept), a large integer as its digits, tables as nested metadata.
    expect(doc.metadata).toEqual({
      title: "Hugo page",
      date: "2024-01-02",
      tags: ["go", "web"],
      id: "9007199254740993",
      params: { author: "Ann" },
    });
    expect(chunkDocument(doc).map((f) => [f.text, f.startLine])).toEqual([["First line.", 9]]);
    for (const source of ["+++\nnot toml at all zetaword\n+++\nbody\n", `+++\na = ${"[".repeat(40)}${"]".repeat(40)}\n+++\nx\n`]) {
      // Said, as the document's warning: a typo in a Hugo page dropped its title in silence (s21 retest R7).
      expect(md(source)).toMatchObject({
        text: source,
        firstLine: 1,
        metadata: {},
        warnings: ["its TOML front matter (between +++ lines) does not parse: indexed as text, not read as metadata"],
      });
    }
    // A table 100,000 keys deep is read, and kept to the depth metadata may have.
    const deep = md(`+++\n[${"a.".repeat(100_000)}b]\nx = 1\n+++\nbody\n`);
    expect(deep.text).toBe("body\n");
    expect(JSON.stringify(deep.metadata)).toBe(`${'{"a":'.repeat(31)}{}${"}".repeat(31)}`);
  });

  test("a heading with nothing under it that the next heading closes joins the text that follows; at the end, the text before", () => {
    const doc = "# Title\n\n## Zebracorp meeting\n\n## Notes\n\n### Okapi\n\nBody words.\n\n## Lemur plans\n\n### Later\n";
    const fragments = chunkDocument(md(doc));
    expect(fragments.map((f) => [f.startLine, f.endLine, f.headings])).toEqual([[3, 13, ["Notes", "Okapi"]]]);
    // Zebracorp's heading is closed by its sibling; Notes and Okapi are the path of the body; Lemur plans and Later
    // come after the last text. The text is the file's lines 3–13 as they are, as `get` shows them (tester: the
    // path's own heading lines came out blank).
    expect(fragments[0]!.text).toBe(doc.split("\n").slice(2, 13).join("\n"));
    const sibling = "# Alpha\n\n## Betaempty\n\n## Gammasection\n\nSome gamma text here.\n";
    expect(chunkDocument(md(sibling)).map((f) => [f.text, f.startLine, f.endLine])).toEqual([
      [sibling.split("\n").slice(2, 7).join("\n"), 3, 7],
    ]);
    // A child heading keeps its parent in the path: nothing is orphaned.
    expect(chunkDocument(md("# Doc\n\n## Parent\n\n### Child\n\nText.\n")).map((f) => [f.text, f.headings])).toEqual([
      ["Text.", ["Parent", "Child"]],
    ]);
  });

  test("a paragraph that shows nothing (comment, anchor, rule, a lone arrow) is in no fragment (s12 user #1)", () => {
    // mdBook chapters open with a comment and anchors kept for old links: as a fragment of their own they matched
    // the anchor id's words and, being the shortest, ranked first for the chapter's own topic.
    const mdBook =
      '<!-- Old headings. Do not remove or links may break. -->\n\n<a id="using-message-passing"></a>\n\n## Message Passing\n\nChannels send values.\n';
    expect(chunkDocument(md(mdBook)).map((f) => [f.startLine, f.text])).toEqual([[7, "Channels send values."]]);
    // A web page's "jump to top" arrows and a rule: no letter or digit to find.
    const page = "⇡\n\n## Procedures\n\nWe have now considered the elements.\n\n---\n\n⇣\n";
    expect(chunkDocument(md(page)).map((f) => [f.startLine, f.endLine, f.text])).toEqual([[5, 5, "We have now considered the elements."]]);
    // A heading whose only content shows nothing joins the text that follows, as an empty heading does.
    const empty = "# T\n\n## Lonely\n\n<!-- todo -->\n\n## Next\n\nBody words.\n";
    expect(chunkDocument(md(empty)).map((f) => [f.startLine, f.headings])).toEqual([[3, ["Next"]]]);
  });

  test("markup a reader sees stays: a caption or alt text, an autolink, a tag around words, a number", () => {
    const kept = [
      '<Listing number="8-1" caption="Creating a new, empty vector">',
      '<img alt="A diagram of the stack" src="img/trpl04-01.svg" class="center" />',
      "<https://example.com/docs>",
      "<b>Bold words</b>",
      "42",
    ];
    for (const paragraph of kept) expect(chunkDocument(md(`# T\n\n${paragraph}\n`)).map((f) => f.text)).toEqual([paragraph]);
    const silent = [
      '<img src="img/trpl04-01.svg" class="center" style="width: 50%;" />',
      '<span class="caption"></span>',
      "<!-- ignore -->",
    ];
    for (const paragraph of silent) expect(chunkDocument(md(`# T\n\n${paragraph}\n\nText.\n`)).map((f) => f.text)).toEqual(["Text."]);
  });

  test("in a paged document, a heading left without text stays on its page: no fragment spans pages", () => {
    const paged = (text: string) => ({ title: "T", format: "markdown" as const, text, firstLine: 1, metadata: {}, pages: 2 });
    const cut = (text: string) => chunkDocument(paged(text)).map((f) => [f.text, f.page, f.pageEnd]);
    // A divider page of a heading alone, then a chapter: the divider's heading is its own fragment, on page 1.
    expect(cut("<!-- page 1 -->\n# Part II\n<!-- page 2 -->\n# Methods\nWe measured things.")).toEqual([
      ["# Part II", 1, 1],
      ["We measured things.", 2, 2],
    ]);
    // A last heading on a later page than the last text.
    expect(cut("<!-- page 1 -->\n# Intro\nSome text here.\n<!-- page 2 -->\n# Appendix")).toEqual([
      ["Some text here.", 1, 1],
      ["# Appendix", 2, 2],
    ]);
    // Headings alone: one fragment per page.
    expect(cut("<!-- page 1 -->\n# A\n<!-- page 2 -->\n# B")).toEqual([
      ["# A", 1, 1],
      ["# B", 2, 2],
    ]);
  });

  test("a document of headings alone gets one fragment of its heading lines, on their lines", () => {
    const only = chunkDocument(md("# Meeting with Zebracorp about quarterly roadmap\n"));
    expect(only.map((f) => [f.text, f.startLine, f.endLine, f.headings])).toEqual([
      ["# Meeting with Zebracorp about quarterly roadmap", 1, 1, []],
    ]);
    const outline = chunkDocument(md("# Title\n\n## Okapiware section\n\n### Details\n"));
    expect(outline.map((f) => [f.text, f.startLine, f.endLine])).toEqual([["# Title\n\n## Okapiware section\n\n### Details", 1, 5]]);
    // After front matter, the lines still count from the top of the file.
    const after = chunkDocument(md("---\ntags: [a]\n---\n\n## Only heading\n"));
    expect(after.map((f) => [f.text, f.startLine, f.endLine])).toEqual([["## Only heading", 5, 5]]);
    // In a document with a body, headings with text under them stay in the path, not the text.
    expect(chunkDocument(md("# Title\n\n## Full\n\nBody.\n")).map((f) => [f.text, f.headings])).toEqual([["Body.", ["Full"]]]);
  });

  test("a document of front matter alone is one fragment of its title, on the front matter's lines", () => {
    const fragments = chunkDocument(md("---\ntitle: Giraffeco plans\ntags: [x]\n---\n"));
    expect(fragments.map((f) => [f.text, f.startLine, f.endLine, f.headings])).toEqual([["Giraffeco plans", 1, 4, []]]);
    // No title, or no front matter and no text at all: nothing to find it by, so no fragment.
    expect(chunkDocument(md("---\ntags: [x]\n---\n\n"))).toEqual([]);
    expect(chunkDocument(md(""))).toEqual([]);
    expect(chunkDocument(md("\n\n"))).toEqual([]);
  });

  test("a code fence within the budget is one piece, and its '#' lines are not headings", () => {
    const code = Array.from({ length: 8 }, (_, i) => `# not a heading ${i}`).join("\n");
    const doc = md(`# T\n\nBefore.\n\n\`\`\`sh\n${code}\n\`\`\`\n\nAfter.\n`);
    const fragments = chunkDocument(doc, { tokens: 100, overlap: 0.15 });
    const withFence = fragments.filter((f) => f.text.includes("```sh"));
    expect(withFence).toHaveLength(1);
    expect(withFence[0]!.text).toContain("not a heading 7\n```");
    expect(fragments.every((f) => f.headings.length === 0)).toBe(true);
  });

  test("a code fence longer than the budget, or never closed, is cut at line boundaries within the budget", () => {
    const code = Array.from({ length: 2000 }, (_, i) => `# not a heading ${i} with some padding text`).join("\n");
    for (const source of [`# T\n\n\`\`\`sh\n${code}\n\`\`\`\n\nAfter.\n`, `# T\n\n\`\`\`sh\n${code}\n`]) {
      const fragments = chunkDocument(md(source), { tokens: 100, overlap: 0.15 });
      expect(fragments.length).toBeGreaterThan(100);
      for (const f of fragments) expect(f.text.length).toBeLessThanOrEqual(100 * 4 + 60);
      expect(fragments.map((f) => f.text).join("\n")).toContain("not a heading 1999 with");
      expect(fragments.every((f) => f.headings.length === 0)).toBe(true);
      // line numbers stay those of the file: the fence opens on line 3
      expect(fragments[0]!.startLine).toBe(3);
      expect(
        fragments.at(-1)!.text.includes("heading 1999") ? fragments.at(-1)!.endLine : fragments.at(-2)!.endLine,
      ).toBeGreaterThanOrEqual(2002);
    }
  });

  test("a fence never closed ends on the file's last line, not on the line after its final line break (s30 hostile F5)", () => {
    for (const [source, lines] of [
      ["```\nfenceA\n", "1-2"],
      [`\`\`\`\n${Array.from({ length: 11 }, (_, i) => `fence line ${i}`).join("\n")}\n`, "1-12"],
      [`${"`".repeat(100_000)}\n`, "1-1"],
      ["```\nfenceA\n\n\n", "1-4"], // blank lines in it are the file's own
      ["```\nfenceA", "1-2"],
    ] as const) {
      const fragments = chunkDocument(md(source)); // the line of backticks is cut into many, each on line 1
      expect(`${fragments[0]!.startLine}-${Math.max(...fragments.map((f) => f.endLine))}`).toBe(lines);
    }
  });

  test("a line in a code fence longer than a fragment: its parts cite that line, as written (s24 review D13)", () => {
    const words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"];
    const long = `${Array.from({ length: 3000 }, (_, i) => `${words[i % 7]}${i}`).join(" ")} needleword`;
    const fragments = chunkDocument(md(`# Title\n\nintro text\n\n\`\`\`json\nshort line one\n${long}\nlast line\n\`\`\`\n`));
    // Line 7 is the long one: the fragments of its parts alone are 7-7 (they were 7-6), the last runs to the fence's end.
    expect(fragments.length).toBeGreaterThan(10);
    expect(fragments.map((f) => `${f.startLine}-${f.endLine}`)).toEqual(["3-6", ...fragments.slice(1, -1).map(() => "7-7"), "7-9"]);
    expect(fragments[0]!.text).toBe("intro text\n\n```json\nshort line one");
    expect(fragments.find((f) => f.text.includes("needleword"))).toMatchObject({ startLine: 7, endLine: 9 });
    // The parts, each on one line, are the line: no line break was put between two of them.
    const parts = fragments.slice(1, -1).map((f) => f.text);
    expect(parts.every((text) => !text.includes("\n"))).toBe(true);
    expect(long.startsWith(parts.join(" "))).toBe(true);
  });

  test("every fragment cites its lines, over random notes of fences, long lines and small budgets (s24 review D13)", () => {
    const random = seeded(24);
    const long = (word: string) => Array.from({ length: 50 + Math.floor(random() * 400) }, (_, i) => `${word}${i}`).join(" ");
    const kinds = [
      () => "```",
      () => "",
      () => "## H",
      () => "short words.",
      () => long("w"),
      () => "中文字".repeat(200),
      () => "x".repeat(900),
    ];
    for (let i = 0; i < 300; i++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 12) }, () => kinds[Math.floor(random() * kinds.length)]!()).join("\n");
      // The wrapper above checks each fragment's lines.
      expect(chunkDocument(md(`# T\n\n${text}\n`), { tokens: 32 + Math.floor(random() * 200), overlap: 0.15 }).length).toBeGreaterThan(0);
    }
  });

  test("long sections split within the budget, at paragraph boundaries, with overlap", () => {
    const paragraph = (i: number) => `Paragraph ${i} sentence one is here. Sentence two follows it. Sentence three ends it.`;
    const body = Array.from({ length: 30 }, (_, i) => paragraph(i)).join("\n\n");
    const fragments = chunkDocument(md(`# Long\n\n${body}\n`), { tokens: 120, overlap: 0.15 });
    expect(fragments.length).toBeGreaterThan(5);
    for (const f of fragments) expect(f.text.length / 4).toBeLessThanOrEqual(120 + 1);
    // every paragraph is somewhere, whole
    for (let i = 0; i < 30; i++) expect(fragments.some((f) => f.text.includes(paragraph(i)))).toBe(true);
    // consecutive fragments share some text (overlap)
    const shared = fragments
      .slice(1)
      .filter((f, i) => f.text.split(/(?<=\.)\s/)[0] && fragments[i]!.text.includes(f.text.split(/(?<=\.)\s/)[0]!));
    expect(shared.length).toBeGreaterThan(0);
    // line ranges are increasing and inside the file
    for (let i = 1; i < fragments.length; i++) expect(fragments[i]!.startLine).toBeGreaterThanOrEqual(fragments[i - 1]!.startLine);
  });

  test("a line keeps its spacing: a fragment's lines are the file's lines, however they split into sentences", () => {
    const source = "# T\n\n1.  item one.  Second sentence.\n2.\tTabbed: after colon\n\nPlain   text   here. Next.\n";
    const [fragment] = chunkDocument(md(source));
    expect(fragment!.text).toBe(source.split("\n").slice(2, 6).join("\n"));
    // A line cut for the budget: its parts, joined back, are the line (the space at each cut stays with its part).
    const long = Array.from({ length: 200 }, (_, i) => `word${i}.  `)
      .join("")
      .trimEnd();
    const parts = chunkDocument(md(`${long}\n`), { tokens: 50, overlap: 0 });
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.every((f) => f.text === f.text.trim())).toBe(true);
    expect(long.startsWith(parts[0]!.text)).toBe(true);
    expect(parts.map((f) => f.text).join("  ")).toBe(long);
  });

  test("runs of white space do not ride along: every fragment stays within the budget", () => {
    for (const line of [`a${" ".repeat(1_000_000)}b`, `x. ${" ".repeat(1_000_000)}y. z`, `one.${"\t".repeat(50_000)}two`]) {
      const fragments = chunkDocument(md(`${line}\n`), { tokens: 100, overlap: 0 });
      expect(fragments.every((f) => f.text.length <= 100 * 4 + 64)).toBe(true);
      expect(fragments.map((f) => f.text).join(" ")).toContain(line.at(-1)!);
    }
  });

  test("one huge line without spaces is hard-cut instead of making one giant fragment", () => {
    const fragments = chunkDocument(md(`${"x".repeat(10_000)}\n`), { tokens: 100, overlap: 0 });
    expect(fragments.length).toBeGreaterThanOrEqual(25);
    expect(fragments.every((f) => f.startLine === 1)).toBe(true);
  });

  test("CJK text is budgeted per character", () => {
    const fragments = chunkDocument(md(`${"東京は日本の首都です。".repeat(100)}\n`), { tokens: 100, overlap: 0 });
    expect(fragments.length).toBeGreaterThanOrEqual(10);
  });
});

describe("chunkDocument (text)", () => {
  test("paragraphs are merged up to the budget", () => {
    const text = "alpha one.\n\nbeta two.\n\ngamma three.\n";
    const fragments = chunkDocument({ title: "t", format: "text", text, firstLine: 1, metadata: {} });
    expect(fragments).toHaveLength(1);
    expect(fragments[0]!.text).toBe("alpha one.\n\nbeta two.\n\ngamma three.");
    expect([fragments[0]!.startLine, fragments[0]!.endLine]).toEqual([1, 5]);
  });

  test("a long run of blank lines ends a fragment: two words 200,000 lines apart are not one fragment of their gap (s18 hostile #2b)", () => {
    for (const format of ["text", "markdown"] as const) {
      const text = `alpha one.${"\n".repeat(200_000)}beta two.\n\ngamma three.${"\n".repeat(101)}delta four.\n`;
      const fragments = chunkDocument({ title: "t", format, text, firstLine: 1, metadata: {} });
      expect({ format, fragments: fragments.map((f) => [f.text, f.startLine, f.endLine]) }).toEqual({
        format,
        fragments: [
          ["alpha one.", 1, 1],
          ["beta two.\n\ngamma three.", 200_001, 200_003],
          ["delta four.", 200_104, 200_104],
        ],
      });
    }
  });

  test("'#' lines in plain text are not headings", () => {
    const fragments = chunkDocument({ title: "t", format: "text", text: "# hello\nworld\n", firstLine: 1, metadata: {} });
    expect(fragments[0]!.headings).toEqual([]);
    expect(fragments[0]!.text).toContain("# hello");
  });
});

test("a heading that repeats the title, or the title cut short, is not part of the heading path", () => {
  const doc = (title: string, text: string) => ({ title, format: "markdown" as const, text, firstLine: 1, metadata: {} });
  const cut = chunkDocument(
    doc(
      "Trace-based Just-in-Time Type Specialization for Dynamic",
      "## Trace-based Just-in-Time Type Specialization for Dynamic Languages\n\nBody.\n\n## Results\n\nMore.\n",
    ),
  );
  expect(cut.map((f) => f.headings)).toEqual([[], ["Results"]]);
  const other = chunkDocument(doc("Trace", "## Trace-based Just-in-Time Type Specialization\n\nBody.\n"));
  expect(other.map((f) => f.headings)).toEqual([["Trace-based Just-in-Time Type Specialization"]]);
});

describe("titles and headings come from one markdown reader", () => {
  test("a `#` line inside a code fence is code, not the title (its first H1 outside the fence is)", () => {
    const doc = convertMarkdown("Setup:\n\n```sh\n# install the tools\nmake\n```\n\n# Real Title\n\nBody.\n", "fallback");
    expect(doc.title).toBe("Real Title");
    expect(chunkDocument(doc).map((f) => f.headings)).toEqual([[], []]);
  });

  test("a fence that opens the document hides its `#` lines from the title; without an H1 the file name is the title", () => {
    expect(convertMarkdown("~~~python\n# comment\n~~~\n\nText.\n", "notes").title).toBe("notes");
  });

  test("a heading of any level opens a document, and a closing `#` sequence is stripped but `C#` is kept", () => {
    expect(convertMarkdown("\n## Chapter 2 ##\n\ntext\n", "f").title).toBe("Chapter 2");
    expect(convertMarkdown("# Learn C#\n", "f").title).toBe("Learn C#");
    expect(convertMarkdown("text first\n\n## Later\n", "f").title).toBe("f");
  });

  test("an H1 holding U+2028 or U+2029 is a heading, the separator read as a space (s30 hostile F6)", () => {
    for (const separator of ["\u2028", "\u2029"]) {
      const doc = convertMarkdown(`# Heading with${separator}line sep\n\nforgeword\n\n## Sub${separator}part\n\nmore\n`, "ls");
      expect(doc.title).toBe("Heading with line sep");
      expect(chunkDocument(doc, { tokens: 100, overlap: 0 }).map((f) => [f.headings, f.text])).toEqual([
        [[], "forgeword"],
        [["Sub part"], "more"],
      ]);
    }
  });

  test("a setext heading (a line underlined with === or ---) is a heading: the title, the heading path, its section's lines (s20 review F1)", () => {
    expect(convertMarkdown("Setext Title\n============\n\nbody one\n", "f").title).toBe("Setext Title");
    expect(convertMarkdown("intro\n\nLevel Two\n---\n\nText.\n\nLevel One\r\n=\r\n", "f").title).toBe("Level One");
    const doc = convertMarkdown(
      "Intro para\n\nSection A\n---------\n\nalpha words here\n\nSection B\n---------\n\nbeta words here\n",
      "s2",
    );
    const fragments = chunkDocument(doc, { tokens: 12, overlap: 0 });
    expect(fragments.map((f) => [f.headings, f.startLine, f.text])).toEqual([
      [[], 1, "Intro para"],
      [["Section A"], 6, "alpha words here"],
      [["Section B"], 11, "beta words here"],
    ]);
    // The fast path a title takes sees the same headings as the chunker, a fence's and a list's lines apart.
    const fenced = "```\nNot a title\n===\n```\n\n# Real\n";
    expect(convertMarkdown(fenced, "f").title).toBe("Real");
    const fragments2 = chunkDocument(md(`${fenced}\ntext\n\nSub\n---\n\nmore\n`), { tokens: 12, overlap: 0 });
    expect(fragments2.map((f) => [f.headings, f.text])).toEqual([
      [[], "```\nNot a title\n===\n```"],
      [[], "text"],
      [["Sub"], "more"],
    ]);
  });

  test("a converted page's own line above --- is no setext heading: converters write # headings (s20 retest R6)", async () => {
    const html = await convertFile(
      "/x/p.html",
      new TextEncoder().encode("<html><body><p>Signed<br>---</p><p>Body text.</p></body></html>"),
    );
    expect(html.title).toBe("p");
    expect(chunkDocument(html).map((f) => f.headings)).toEqual([[]]);
    // The same text in a markdown file is a heading, as its author wrote it.
    expect(md("Signed\n---\n\nBody text.\n").title).toBe("Signed"); // an H2 that opens the note
    expect(chunkDocument(md("intro\n\nSigned\n---\n\nBody text.\n")).map((f) => f.headings)).toEqual([[], ["Signed"]]);
  });

  test("`%%` in a converted page is the page's own text, not an Obsidian comment: later headings stay (s21 review F9)", async () => {
    const page =
      "<html><body><h1>Matlab notes</h1><p>Run the cell:</p><p>%%</p><p>x = 1</p><h2>Results section</h2><p>zebra output</p></body></html>";
    const html = await convertFile("/x/m.html", new TextEncoder().encode(page));
    expect(chunkDocument(html).map((f) => f.headings)).toContainEqual(["Results section"]);
    // In a note a person wrote it is Obsidian's comment: what it hides is no heading.
    expect(chunkDocument(md("# Notes\n\nintro\n\n%%\n## Hidden\n%%\n\ntext\n")).map((f) => f.headings)).toEqual([[]]);
  });

  test("a setext heading right after a comment's last line is a heading: the comment is a block of its own (s21 review F2)", () => {
    for (const comment of ["<!-- toc -->", "<!--\nlicence\n-->", "%%\nprivate\n%%"]) {
      const doc = md(`${comment}\nSetext Title\n============\n\nbody one\n\nPart A\n------\n\nalpha words\n`);
      expect({ comment, title: doc.title }).toEqual({ comment, title: "Setext Title" });
      // (An Obsidian comment's text is kept, as a fragment before the title's section.)
      const headings = chunkDocument(doc).map((f) => f.headings);
      expect({ comment, headings: headings.slice(-2) }).toEqual({ comment, headings: [[], ["Part A"]] });
    }
  });

  test("the title's reading of a few lines and the chunker's of all agree, over random notes (s21 review F5)", () => {
    const vocabulary = [
      "Title",
      "text words",
      "",
      "===",
      "---",
      "- item",
      "# H1",
      "## H2",
      "```",
      "~~~",
      "<!-- c -->",
      "<!--",
      "-->",
      '<a id="x"></a>',
      "<div>",
    ];
    const more = ["%%", "%% x", "> q", "    code", "  ---", "=", "***", "Text -->", "Other", "--", "a %% b", "A --> B"];
    const words = [...vocabulary, ...more];
    const random = seeded(21);
    const pick = () => words[Math.floor(random() * words.length)]!;
    const lines = (text: string): [number, string][] => {
      let at = 0;
      return text.split("\n").map((line) => {
        const entry: [number, string] = [at, line];
        at += line.length + 1;
        return entry;
      });
    };
    // The same rule as firstHeading, over every line: the first H1, else a heading that opens the note (what renders
    // nothing is the product's own rule: a copy here held only for the vocabulary it was written for, s22 review T6).
    const reference = (text: string) => {
      let first = true;
      let opening: string | undefined;
      for (const block of markdownBlocks(lines(text), { written: true })) {
        if (block.kind === "heading") {
          if (block.level === 1 && block.text) return block.text;
          if (first && rendersNothing(text.slice(0, block.line))) opening = block.text || undefined;
        }
        if (block.kind !== "line") first = false;
      }
      return opening;
    };
    const differ: string[] = [];
    for (let i = 0; i < 50_000; i++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 7) }, pick).join("\n");
      if (firstHeading(text, { written: true }) !== reference(text)) differ.push(text);
    }
    expect(differ.slice(0, 5)).toEqual([]);
  });

  test("a --- below a paragraph's second line, a list item, a quote or a blank line is no underline: the text is no heading", () => {
    for (const text of [
      "first line\nsecond line\n---\n\nbody\n",
      "- item\n---\n\nbody\n",
      "> quoted\n===\n\nbody\n",
      "text\n\n---\n\nbody\n",
      "| a |\n---\n\nbody\n",
      "    indented code\n===\n\nbody\n",
    ]) {
      expect({ text, headings: chunkDocument(md(text)).map((f) => f.headings) }).toEqual({ text, headings: [[]] });
      expect({ text, title: md(text).title }).toEqual({ text, title: "fallback" });
    }
  });

  test("a `# line` inside an HTML or Obsidian comment is no heading, for the title as for the chunks (s20 user A)", () => {
    // The Rust book's ch17-01 keeps a shell session in a comment: its `# copy the output here` was the title.
    const regenerated =
      "## Futures\n\nIntro text about futures.\n\n<!-- manual-regeneration\ncargo run\n# copy the output here\n-->\n\n## Later section\n\nText about zebras.\n";
    expect(convertMarkdown(regenerated, "f").title).toBe("Futures");
    expect(chunkDocument(md(regenerated)).map((f) => [f.headings, f.text])).toEqual([
      [[], "Intro text about futures."], // the title is in no heading path
      [["Later section"], "Text about zebras."],
    ]);
    expect(convertMarkdown("<!--\n# commented title\n-->\n\n# Real Title\n\nBody about badgers.\n", "f").title).toBe("Real Title");
    expect(convertMarkdown("%%\n# hidden heading\n%%\n\nText.\n\n# Shown\n", "f").title).toBe("Shown");
    // A line that goes on after `%%` opens nothing: a LaTeX comment in math, a MATLAB cell (s20 retest R3).
    const latex = md("# Title L\n\n$$\n%% a latex comment\nx = 1\n$$\n\n## Section B\n\ntext beta here\n");
    expect(chunkDocument(latex).map((f) => f.headings)).toEqual([[], ["Section B"]]);
    const matlab = md("# Title M\n\n%% MATLAB cell\n\n## Section C\n\ntext gamma here\n");
    expect(chunkDocument(matlab).map((f) => f.headings)).toEqual([[], ["Section C"]]);
    // A comment closed on its own line leaves the lines after it markdown, and so does one closed where it opens.
    expect(convertMarkdown("<!-- note -->\n# After\n", "f").title).toBe("After");
    expect(convertMarkdown("<!--\nx\n-->\n# After\n", "f").title).toBe("After");
    // A fence's lines are code, even a comment's opening: the heading after the fence is one.
    expect(convertMarkdown("```html\n<!--\n```\n\n# After Fence\n", "f").title).toBe("After Fence");
  });

  test("a number or a boolean as a front-matter title is the title, as written (s20 review F1b)", () => {
    expect(convertMarkdown("---\ntitle: 1984\n---\n\n# Heading Here\n\nbody\n", "n").title).toBe("1984");
    expect(convertMarkdown("---\ntitle: true\n---\n\nbody\n", "n").title).toBe("true");
    expect(convertMarkdown("---\ntitle: [a, b]\n---\n\nbody\n", "n").title).toBe("n");
    // As written, not as the number reads (s21 review F3: 3.10 was "3.1", 007 "7", 1e3 "1000"); TOML's too.
    for (const written of ["3.10", "007", "1e3", "0x1F", "2.0"]) {
      expect(convertMarkdown(`---\ntitle: ${written}  # a version\n---\n\nbody\n`, "n").title).toBe(written);
      expect(convertMarkdown(`+++\ntitle = ${written === "007" ? "7" : written}\n+++\n\nbody\n`, "n").title).toBe(
        written === "007" ? "7" : written,
      );
    }
    expect(convertMarkdown("---\nparams:\n  title: 9.50\ntitle: 3.10\n---\nbody\n", "n").title).toBe("3.10");
    // A `title` line inside a multi-line string is not the key (s22 hostile F1).
    expect(convertMarkdown('+++\nnote = """\ntitle = 7.5 (draft)\n"""\ntitle = 3.10\n+++\nbody\n', "n").title).toBe("3.10");
  });

  test("a long line shaped like a title in front matter is read in linear time (s22 hostile F1: 35 s for 200 KB)", () => {
    const front = `+++\na = """\ntitle = 1${" ".repeat(200_000)}x\n"""\ntitle = 1\n+++\n# body\n`;
    const started = performance.now();
    expect(convertMarkdown(front, "n").title).toBe("1");
    expect(performance.now() - started).toBeLessThan(5_000); // a hang guard: quadratic took 24 s here, linear milliseconds
  });

  test("HTML that renders nothing (anchors, comments) before a `##` still lets it open the document", () => {
    expect(convertMarkdown('<a id="x"></a>\n\n## Anchored second level\n\nText.\n', "c").title).toBe("Anchored second level");
    const mdBook = '<!-- Old headings. Do not remove or links may break. -->\n\n<a id="old"></a>\n\n## The `match` Construct\n';
    expect(convertMarkdown(mdBook, "c").title).toBe("The `match` Construct");
    expect(convertMarkdown("<p>Visible text</p>\n\n## Later\n", "c").title).toBe("c");
    expect(convertMarkdown("<!-- never closed\n\n## Inside a comment\n", "c").title).toBe("c");
  });
});

describe("chunkDocument memory", () => {
  test("100,000 headings with no text under them, then text, are chunked: no spread past the argument limit (s21 hostile #8)", () => {
    // A million are more than a document holds in a row (MAX_DOCUMENT_FRAGMENTS): a reason, not a crash.
    const outline = (n: number) => Array.from({ length: n }, (_, i) => `## item ${i}\n`).join("");
    for (const text of [
      `# Outline\n${outline(MAX_DOCUMENT_FRAGMENTS - 1)}zqtail the end\n`,
      `# Notes\nintro\n${outline(MAX_DOCUMENT_FRAGMENTS)}`,
    ]) {
      const fragments = chunkDocument(md(text));
      expect(fragments.length).toBeGreaterThan(0);
    }
    expect(() => chunkOnly(md(`# Outline\n${outline(1_000_000)}zqtail the end\n`))).toThrow("headings in a row with no text under them");
  }, 60_000);

  // A 25 MB log of short lines cost about 250 bytes a line before its fragments were made: an array of line
  // strings, a block and a piece object per line, all at once (a whole index run of 27 MB peaked at 1.9 GB).
  // Measured in a process of its own: how much its peak grows while chunking 5,000,000 lines.
  test.each(["text", "markdown"])(
    "5,000,000 short lines of %s are chunked in a few hundred MB, not GBs",
    (format) => {
      const script = `
      import { chunkDocument } from ${JSON.stringify(`${import.meta.dir}/../src/index/chunk.ts`)};
      const text = "word\\n".repeat(5_000_000);
      const before = process.resourceUsage().maxRSS;
      const fragments = chunkDocument({ text, format: ${JSON.stringify(format)}, title: "t", firstLine: 1, metadata: {} });
      console.log(JSON.stringify({ fragments: fragments.length, grew: (process.resourceUsage().maxRSS - before) * 1024 }));
    `;
      const run = Bun.spawnSync([process.execPath, "-e", script], { stderr: "pipe" });
      expect(run.stderr.toString()).toBe("");
      const { fragments, grew } = JSON.parse(run.stdout.toString());
      expect(fragments).toBeGreaterThan(10_000);
      expect(grew).toBeLessThan(400 * 1024 * 1024); // 1.2 GB before
    },
    60_000,
  );
});

describe("text without spaces longer than a fragment (s22 hostile F3)", () => {
  const holding = (text: string, word: string) => chunkDocument(md(`# t\n\n${text}\n`)).filter((f) => f.text.includes(word)).length;

  test("a word across the cut is whole in some fragment: Chinese, Japanese and Thai, wherever the cut falls", () => {
    // The cut fell at a character count: 图书馆 and หนังสือ at it were in no fragment, so no search found them.
    for (let k = 330; k < 370; k++) {
      expect(holding(`${"人".repeat(k)}图书馆${"人".repeat(1500)}`, "图书馆")).toBeGreaterThan(0);
      expect(holding(`${"の".repeat(k)}図書館${"の".repeat(1500)}`, "図書館")).toBeGreaterThan(0);
    }
    for (let k = 680; k < 720; k++) expect(holding(`${"คน".repeat(k)}หนังสือ${"คน".repeat(1000)}`, "หนังสือ")).toBeGreaterThan(0);
  });

  test("the characters a part repeats are whole: no fragment begins inside a surrogate pair or an emoji (s23 hostile H4)", () => {
    // Counted in UTF-16 units, the repeat began inside 𠀋 (two units) and stored a lone half, shown as U+FFFD.
    const whole = (text: string) => text === text.toWellFormed() && !/^(?:[\u{1F3FB}-\u{1F3FF}]|\u200d|\u{FE0F})/u.test(text);
    const family = "\u{1F468}\u200d\u{1F469}\u200d\u{1F467}\u200d\u{1F466}";
    const mixed = `한국어ไทย𠀋${family}中文字符🇯🇵é́`.repeat(800);
    for (const run of ["𠀋人".repeat(900), `${"𠀋".repeat(5)}人`.repeat(300), "中👩‍👩‍👧‍👦文👍🏽".repeat(300), mixed]) {
      const fragments = chunkDocument(md(`# t\n\n${run}\n`));
      expect(fragments.length).toBeGreaterThan(1);
      for (const fragment of fragments)
        expect({ start: fragment.text.slice(0, 12), whole: whole(fragment.text) }).toMatchObject({ whole: true });
      // Each is a run of the document: a repeat packed after what it repeats stood inside one (s23 retest N8).
      for (const fragment of fragments.slice(1)) expect(run.includes(fragment.text.trim())).toBe(true);
    }
  });

  // Chunked in a process of its own, killed after a few seconds: the loop that never ended held the test's thread.
  test("a cut after as many characters as a repeat holds ends: chunking moves on, small budgets too (s24 review D11)", () => {
    // 7 characters of two units and a comma: the cut fell after exactly 8 graphemes (15 units), the repeat began at
    // the part's start, and the same part was cut again for ever (chunk.tokens 32 to ~160), in a code fence too.
    const lines = [
      `${"𠀋".repeat(7)}，${"中文字".repeat(100)}`,
      `${"\u{1F600}".repeat(7)}、${"中文字".repeat(100)}`,
      `${"\u{1F600}".repeat(8)}、${"中文字".repeat(100)}`,
      `${"𠮷".repeat(8)}${"中文字".repeat(100)}`,
    ];
    const cases = [32, 48, 64, 100, 160].flatMap((tokens) =>
      lines.flatMap((line) => [`# E\n\n${line}\n`, `# E\n\n\`\`\`\n${line}\n\`\`\`\n`].map((text) => ({ text, tokens, line }))),
    );
    const script = `
      import { chunkDocument } from ${JSON.stringify(`${import.meta.dir}/../src/index/chunk.ts`)};
      const cases = ${JSON.stringify(cases)};
      const chunk = ({ text, tokens }) => chunkDocument({ text, format: "markdown", title: "e", firstLine: 1, metadata: {} }, { tokens, overlap: 0.15 });
      console.log(JSON.stringify(cases.map((c) => chunk(c).map((f) => f.text))));
    `;
    const run = Bun.spawnSync([process.execPath, "-e", script], { stderr: "pipe", timeout: 10_000 });
    expect({ signal: run.signalCode ?? null, stderr: run.stderr.toString() }).toEqual({ signal: null, stderr: "" });
    const documents: string[][] = JSON.parse(run.stdout.toString());
    expect(documents).toHaveLength(cases.length);
    for (const [k, fragments] of documents.entries()) {
      // The line's start and its end are each in some fragment.
      const { line } = cases[k]!;
      expect(fragments.some((f) => f.includes(line.slice(0, 8)))).toBe(true);
      expect(fragments.some((f) => f.includes(line.slice(-12)))).toBe(true);
    }
  }, 15_000);

  test("a fragment never begins inside a Thai word, and a Chinese sentence ends at its full stop", () => {
    const thai = chunkDocument(md(`# t\n\n${"คนหนังสือภาษาไทยประเทศ".repeat(200)}\n`));
    expect(thai.length).toBeGreaterThan(1);
    for (const fragment of thai.slice(1)) expect(fragment.text).toMatch(/^(?:คน|หนังสือ|ภาษา|ไทย|ประเทศ)/);
    // Sentences of 6 characters: a fragment ends after a 。, not inside a sentence.
    const chinese = chunkDocument(md(`# t\n\n${"我们去学校。".repeat(200)}\n`));
    expect(chinese.length).toBeGreaterThan(1);
    for (const fragment of chinese) expect(fragment.text).toEndWith("。");
  });
});

describe("bounds on what one document holds (s29b hostile F1)", () => {
  test("a document that cuts into more than MAX_DOCUMENT_FRAGMENTS fragments fails with its reason, at the bound", () => {
    // 2.2 million two-line sections of a 48 MB note took an index run to 4.1 GB: every fragment is held until written.
    const sections = (n: number) => Array.from({ length: n }, (_, i) => `# ${i}\n\ntext ${i}\n`).join("\n");
    expect(chunkDocument(md(sections(MAX_DOCUMENT_FRAGMENTS)))).toHaveLength(MAX_DOCUMENT_FRAGMENTS);
    expect(() => chunkOnly(md(sections(MAX_DOCUMENT_FRAGMENTS + 1)))).toThrow(
      "it cuts into more than 100,000 fragments, the most one document is cut into (a section every few words?)",
    );
  });

  test("headings with no text under them are held up to MAX_DOCUMENT_FRAGMENTS in a row (s29c retest 1)", () => {
    // 5 million headings alone took 1.3 GB to pack into 47,000 fragments: each is held until text comes.
    const headings = (n: number) => Array.from({ length: n }, (_, i) => `# ${i}\n`).join("");
    expect(chunkDocument(md(headings(MAX_DOCUMENT_FRAGMENTS))).length).toBeGreaterThan(0);
    expect(() => chunkOnly(md(headings(MAX_DOCUMENT_FRAGMENTS + 1)))).toThrow(
      "more than 100,000 headings in a row with no text under them",
    );
    // Text under them lets them go: as many again, in runs, is a document like any other.
    const runs = Array.from({ length: 3 }, () => `${headings(60_000)}text under them\n`).join("");
    expect(chunkDocument(md(runs)).length).toBeGreaterThan(0);
  });
});
