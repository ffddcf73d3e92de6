/** Output formats parsed back: CSV by an RFC 4180 reader, JSON Lines line by line, markdown, links. */
import { describe, expect, test } from "bun:test";
import {
  csvField,
  documentListText,
  hyperlinks,
  indexSummaryText,
  progressBar,
  renderSearch,
  repositoryLines,
  repositoryMatchesText,
  searchJson,
  statusText,
  styleFor,
} from "../src/serve/render.ts";
import type { IndexSummary } from "../src/index/indexer.ts";
import type { DocumentInfo } from "../src/search/read-document.ts";
import type { RepositoryStatus } from "../src/store/status.ts";
import type { FragmentHit, SearchResponse } from "../src/search/search.ts";
import { parseCsv } from "./helpers.ts";

function hit(rank: number, overrides: Partial<FragmentHit> = {}): FragmentHit {
  return {
    rank,
    score: 1.5 / rank,
    mode: "bm25",
    repository: "notes",
    path: `dir/file ${rank}.md`,
    absolutePath: `/data/notes/dir/file ${rank}.md`,
    location: `dir/file ${rank}.md:3`,
    page: null,
    docid: "#abcdef",
    title: "Title",
    heading: "A › B",
    fragment: { id: rank, seq: 0, start_line: 3, end_line: 5, page: null, page_end: null, ref: `notes:dir/file ${rank}.md:3-5` },
    snippet: "plain snippet",
    highlights: [[0, 5]],
    context: null,
    metadata: { format: "md" },
    ...overrides,
  };
}

const nasty = 'a "quoted", comma\nand a newline\r\nand CRLF, ünïcödé 東京';
const response: SearchResponse = {
  query: "q",
  mode: "bm25",
  repositories: ["notes"],
  offset: 0,
  total: 3,
  words_found: true,
  skipped: [],
  results: [hit(1, { snippet: nasty, title: "Comma, title" }), hit(2, { heading: 'say "hi"' }), hit(3, { snippet: "" })],
};

describe("renderSearch", () => {
  test("csv is RFC 4180: a real parse gives back every field", () => {
    const csv = renderSearch(response, "csv", styleFor({ isTTY: false }));
    expect(csv.endsWith("\r\n")).toBe(true);
    const [header, ...rows] = parseCsv(csv);
    expect(header).toEqual(["rank", "score", "repository", "path", "location", "page", "docid", "title", "heading", "snippet"]);
    expect(rows.length).toBe(3);
    expect(rows[0]).toEqual(["1", "1.5", "notes", "dir/file 1.md", "dir/file 1.md:3", "", "#abcdef", "Comma, title", "A › B", nasty]);
    expect(rows[1]![8]).toBe('say "hi"');
    expect(rows[2]![9]).toBe("");
    expect(csvField(null)).toBe("");
    expect(csvField("x,y")).toBe('"x,y"');
  });

  test("csv with --full adds a text column", () => {
    const full = { ...response, results: response.results.map((h) => ({ ...h, text: `whole, ${h.rank}\nsecond line` })) };
    const [header, first] = parseCsv(renderSearch(full, "csv", styleFor({ isTTY: false })));
    expect(header!.at(-1)).toBe("text");
    expect(first!.at(-1)).toBe("whole, 1\nsecond line");
  });

  test("text with --full: a fragment's long runs of blank lines render in linear time (s18 hostile #2b: 827 s over MCP)", () => {
    const text = `word0${"\n".repeat(60_000)}word1${"\n".repeat(60_000)}word2${"\n".repeat(60_000)}x\n\n`;
    const full = { ...response, results: response.results.slice(0, 1).map((h) => ({ ...h, text })) };
    const started = performance.now();
    const rendered = renderSearch(full, "text", styleFor({ isTTY: false }));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(rendered).toContain("  x\n");
  });

  test("jsonl: one JSON object per line, equal to the --json results", () => {
    const lines = renderSearch(response, "jsonl", styleFor({ isTTY: false })).split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.map((line) => JSON.parse(line))).toEqual((searchJson(response) as { results: unknown[] }).results);
  });

  test("json parses back to the contract; --full adds text after snippet", () => {
    const parsed = JSON.parse(renderSearch(response, "json", styleFor({ isTTY: false })));
    expect(parsed.results[0].snippet).toBe(nasty);
    const full = JSON.parse(
      renderSearch({ ...response, results: [{ ...hit(1), text: "all of it" } as FragmentHit] }, "json", styleFor({ isTTY: false })),
    );
    expect(Object.keys(full.results[0])).toEqual([
      "rank",
      "score",
      "mode",
      "repository",
      "path",
      "location",
      "page",
      "docid",
      "title",
      "heading",
      "fragment",
      "snippet",
      "text",
      "context",
      "metadata",
    ]);
  });

  test("md: a heading per result, snippets quoted, full text fenced longer than any fence inside", () => {
    const md = renderSearch(response, "md", styleFor({ isTTY: false }));
    expect(md).toContain("## 1. Comma, title › A › B\n");
    expect(md).toContain('\n\n## 2. Title › say "hi"\n');
    expect(md).toContain("`notes:dir/file 1.md:3`");
    expect(md).toContain('> a "quoted", comma\n> and a newline\n> and CRLF');
    const fenced = renderSearch(
      { ...response, results: [{ ...hit(1), text: "```js\ncode\n```\n" } as FragmentHit] },
      "md",
      styleFor({ isTTY: false }),
    );
    expect(fenced).toContain("````markdown\n```js\ncode\n```\n````");
  });

  test("files: absolute paths, once each", () => {
    const twice = { ...response, results: [hit(1), hit(1), hit(2)] };
    expect(renderSearch(twice, "files", styleFor({ isTTY: false }))).toBe("/data/notes/dir/file 1.md\n/data/notes/dir/file 2.md\n");
  });

  test("OSC 8 links only on terminals that support them, never piped or with NO_COLOR", () => {
    expect(hyperlinks({ isTTY: false }, { TERM_PROGRAM: "iTerm.app" })).toBe(false);
    expect(hyperlinks({ isTTY: true }, { TERM_PROGRAM: "iTerm.app" })).toBe(true);
    expect(hyperlinks({ isTTY: true }, { TERM_PROGRAM: "iTerm.app", NO_COLOR: "1" })).toBe(false);
    expect(hyperlinks({ isTTY: true }, { TERM: "xterm-256color" })).toBe(false);
    expect(hyperlinks({ isTTY: true }, { TERM: "xterm-256color", VTE_VERSION: "7200" })).toBe(true);
    expect(hyperlinks({ isTTY: false }, { FORCE_HYPERLINK: "1" })).toBe(true);
    const previous = process.env.FORCE_HYPERLINK;
    process.env.FORCE_HYPERLINK = "1";
    try {
      const text = renderSearch(response, "text", styleFor({ isTTY: false }));
      expect(text).toContain("\x1b]8;;file://");
      expect(text).toContain("/data/notes/dir/file%201.md\x1b\\notes:dir/file 1.md:3\x1b]8;;\x1b\\");
    } finally {
      if (previous === undefined) delete process.env.FORCE_HYPERLINK;
      else process.env.FORCE_HYPERLINK = previous;
    }
    expect(renderSearch(response, "text", styleFor({ isTTY: false }))).not.toContain("\x1b");
  });
});

test("the index progress line shows a file name's control characters escaped, not run (hostile s8 #3)", () => {
  const written: string[] = [];
  const bar = progressBar({ isTTY: true, redraws: true, written: false, write: (text) => written.push(text), columns: () => 200 }, "docs");
  bar.update({ phase: "index", done: 2, total: 2, path: "evil\x1b[2J\x07.md" }); // a finished count is always drawn
  bar.update({ phase: "index", done: 1, total: 2, path: "scan\x1b]0;title\x07.pdf", ocr: { page: 1, pages: 3 } });
  // The line's own codes (carriage return, clear line) and nothing else.
  for (const line of written) expect(line.replace("\r\x1b[2K", "")).not.toMatch(/[\x00-\x1f\x7f]/);
  expect(written.join("")).toContain("evil");
});

test("counts of one read as one: the index summary and status say `1 fragment`, as the MCP texts do (review s8 #8)", () => {
  const plain = styleFor({ isTTY: false });
  const summary = {
    repository: "notes",
    indexed: 1,
    ocr_pages: 0,
    skipped: 0,
    removed: 0,
    failed: 0,
    fragments: 1,
    embedded: 0,
    seconds: 0.01,
    failures: [],
  };
  expect(indexSummaryText(summary as unknown as IndexSummary, plain, ["md"])).toStartWith(
    "notes: 1 indexed, 0 unchanged, 0 removed, 0 failed · 1 fragment written · ",
  );
  const status = {
    name: "notes",
    path: "/n",
    description: null,
    documents: 1,
    fragments: 1,
    ocr_pages: 1,
    last_indexed: "2026-11-26",
    bytes: 1,
    model: null,
    vectors: 0,
    embeddings_pending: 0,
    indexing: null,
    languages: {},
    failures: [],
    ocr_left_out: [],
    garbled: [],
    moved_aside: [],
    kept_texts: [],
  };
  expect(statusText([status as RepositoryStatus], plain)).toContain("  1 document (1 page by OCR) · 1 fragment · BM25 only");
});

test("the index summary says `unchanged` for JSON's `skipped`: files left as indexed, not the files left out (s24 user U7)", () => {
  const summary = {
    repository: "vault",
    indexed: 0,
    ocr_pages: 0,
    skipped: 116,
    removed: 0,
    failed: 0,
    fragments: 0,
    embedded: 1219,
    seconds: 0.5,
    failures: [],
    skipped_types: { pptx: 2 },
  };
  const text = indexSummaryText(summary as unknown as IndexSummary, styleFor({ isTTY: false }), ["md"]);
  // "0 indexed, 116 skipped" read as nothing indexed, beside "not indexed by type: 2 .pptx".
  expect(text).toStartWith("vault: 0 indexed, 116 unchanged, 0 removed, 0 failed · 0 fragments written · 1219 embedded · ");
  expect(text).toContain("not indexed by type: 2 .pptx");
  expect(text).not.toContain("skipped");
});

test("a document's other best places are each named once: 'also p9', not 'p7, p7' (s8 agent #9), nor 'also pages p9' (s27 user U4)", () => {
  const { fragment, ...base } = hit(1, { page: 7, path: "paper.pdf", metadata: { format: "pdf" } });
  const part = (page: number, line: number) => ({
    ...fragment,
    page,
    page_end: page,
    score: 1,
    snippet: "s",
    location: `paper.pdf:${line}`,
  });
  const document = { ...base, fragments: [part(7, 10), part(7, 20), part(9, 40), part(7, 12)] };
  const response = {
    query: "q",
    mode: "bm25",
    repositories: ["notes"],
    offset: 0,
    total: 1,
    results: [document],
    skipped: [],
  } as unknown as SearchResponse;
  const text = renderSearch(response, "text", styleFor({ isTTY: false }));
  expect(text).toContain("also p9\n");
  expect(text).not.toContain("p7,");
});

test("a prose or PDF result names the lines its fragment spans, to read it whole; code cites its own (s12 user #5, s23 user: a page's part named only the section's lines)", () => {
  const text = (results: FragmentHit[]) =>
    renderSearch({ ...response, total: results.length, results }, "text", styleFor({ isTTY: false })).split("\n")[0]!;
  expect(text([hit(1)])).toBe("1  1.50  notes:dir/file 1.md:3  #abcdef  lines 3-5");
  const oneLine = { id: 1, seq: 0, start_line: 3, end_line: 3, page: null, page_end: null, ref: "notes:dir/file 1.md:3-3" };
  expect(text([hit(1, { fragment: oneLine })])).toEndWith("#abcdef  line 3");
  // Code names the snippet's line where it is further in than the fragment's first (s29 user 5).
  expect(text([hit(1, { path: "p.py", location: "p.py:4", metadata: { format: "py" } })])).toBe("1  1.50  notes:p.py:3-5  #abcdef  line 4");
  expect(text([hit(1, { path: "p.py", location: "p.py:3", metadata: { format: "py" } })])).toBe("1  1.50  notes:p.py:3-5  #abcdef");
  expect(text([hit(1, { path: "a.pdf", page: 2, metadata: { format: "pdf" } })])).toBe("1  1.50  notes:a.pdf:p2  #abcdef  lines 3-5");
  // Markdown names them alike: it gave code the fragment's range alone (s29b retest P8).
  const md = (results: FragmentHit[]) =>
    renderSearch({ ...response, total: results.length, results }, "md", styleFor({ isTTY: false }))
      .split("\n")
      .find((line) => line.startsWith("`"));
  expect(md([hit(1, { path: "p.py", location: "p.py:4", metadata: { format: "py" } })])).toBe(
    "`notes:p.py:3-5` · #abcdef · line 4 · score 1.5",
  );
  expect(md([hit(1, { path: "p.py", location: "p.py:3", metadata: { format: "py" } })])).toBe("`notes:p.py:3-5` · #abcdef · score 1.5");
  expect(md([hit(1)])).toBe("`notes:dir/file 1.md:3` · #abcdef · lines 3-5 · score 1.5");
});

test("repos-for cites its best passage as a ref to read: a PDF's page, as search cites it, with the repository (s18 user #8)", () => {
  const match = (best: { path: string; location: string; citation: string; page: number | null }) => ({
    repository: "papers",
    description: null,
    score: 0.5,
    bm25: 3,
    matched: 2,
    best: { ...best, ref: `papers:${best.path}:3-5`, title: "T", snippet: "s" },
  });
  // It printed `best: scans/scan-00.pdf:3`: a line of a PDF, and no repository.
  expect(
    repositoryMatchesText([
      match({ path: "scans/scan-00.pdf", location: "scans/scan-00.pdf:3", citation: "scans/scan-00.pdf:p1", page: 1 }),
    ]),
  ).toBe("  0.50  papers  2 fragments  best: papers:scans/scan-00.pdf:p1\n");
  expect(repositoryMatchesText([match({ path: "notes/a.md", location: "notes/a.md:12", citation: "notes/a.md:12", page: null })])).toBe(
    "  0.50  papers  2 fragments  best: papers:notes/a.md:12\n",
  );
});

test("a listing of a million documents is written: its column widths are no spread past the argument limit (s21 hostile #11)", () => {
  const doc = {
    repository: "r",
    docid: "#000000",
    title: "t",
    format: "md",
    metadata: {},
    size: 1,
    modified: "",
    fragments: 1,
    pages: null,
  };
  const documents = Array.from({ length: 1_000_000 }, (_, i) => ({ ...doc, path: `n${i}.md` })) as DocumentInfo[];
  const text = documentListText(documents, styleFor({ isTTY: false }), (d) => `/r/${d.path}`);
  expect(text.split("\n").length).toBeGreaterThan(1_000_000);
}, 60_000);

test("the types a run left out: the ten most, the rest counted; the hint for files without an extension is true (s22 agent #4)", () => {
  const plain = styleFor({ isTTY: false });
  const base = {
    repository: "py",
    indexed: 1,
    ocr_pages: 0,
    skipped: 0,
    removed: 0,
    failed: 0,
    fragments: 1,
    embedded: 0,
    seconds: 0.01,
    failures: [],
  };
  // python-build's definitions are named by version: `3.11.7`, `2.7.18`, … each an "extension".
  const skipped_types: Record<string, number> = { "": 61, json: 4 };
  for (let i = 0; i < 147; i++) skipped_types[String(i)] = 1 + (i % 3);
  const line = indexSummaryText({ ...base, skipped_types, skipped_scripts: 1 } as unknown as IndexSummary, plain, ["md", "py"]).split(
    "\n",
  )[1]!;
  expect(line).toStartWith("  not indexed by type: 61 without an extension, 4 .json, 3 .");
  expect(line.match(/\d+ (\.\w+|without an extension)/g)!.length).toBe(10);
  expect(line).toContain("and 139 more types (`--json` lists them)");
  expect(line).toContain(
    "a file without an extension is indexed only as a script whose `#!` line names a code language the repository indexes: python",
  );
  expect(line.length).toBeLessThan(400);
  const none = indexSummaryText({ ...base, skipped_types: { "": 2 }, skipped_scripts: 0 } as unknown as IndexSummary, plain, ["md", "py"]);
  expect(none).not.toContain("file_types");
  // Files without a `#!` line naming a code language (a LICENSE) are counted, no more: no word of `#!` or `--code`
  // helps them (s24 user U5).
  expect(none.split("\n")[1]).toBe("  not indexed by type: 2 without an extension");
  const prose = indexSummaryText({ ...base, skipped_types: { "": 1, pptx: 2 }, skipped_scripts: 0 } as unknown as IndexSummary, plain, [
    "md",
  ]);
  expect(prose).not.toContain("#!");
  expect(prose).not.toContain("--code");
  const org = indexSummaryText({ ...base, skipped_types: { org: 12 } } as unknown as IndexSummary, plain, ["md", "py"]);
  expect(org).toContain("not indexed by type: 12 .org (an extension is indexed when file_types in `researcher config show` names it)");
});

test("list_repositories' lines: a repository without a description is its name alone, no double space (s23 contracts L5)", () => {
  expect(
    repositoryLines([
      { name: "book", description: null, documents: 119 },
      { name: "notes", description: "Personal notes", documents: 1 },
    ]),
  ).toBe("book (119 documents)\nnotes: Personal notes (1 document)");
});

test("formats no converter reads are named as such in the summary, not as types file_types would let in (s26 user F14)", () => {
  // `.doc` named in file_types was read as plain text and failed as binary; `.rtf` indexed its control words.
  const summary = {
    repository: "word",
    indexed: 1,
    ocr_pages: 0,
    skipped: 0,
    removed: 0,
    failed: 0,
    fragments: 1,
    embedded: 0,
    seconds: 0.01,
    failures: [],
  };
  const line = (skipped_types: Record<string, number>) =>
    indexSummaryText({ ...summary, skipped_types } as unknown as IndexSummary, styleFor({ isTTY: false }), ["docx"])
      .split("\n")
      .find((l) => l.includes("not indexed by type"));
  expect(line({ doc: 1, rtf: 1 })).toBe(
    "  not indexed by type: 1 .doc, 1 .rtf (no converter reads .doc, .rtf: save such files as .docx, .pdf or .epub)",
  );
  expect(line({ org: 2, pptx: 1 })).toBe(
    "  not indexed by type: 2 .org, 1 .pptx (an extension is indexed when file_types in `researcher config show` names it; no converter reads .pptx: save such files as .docx, .pdf or .epub)",
  );
});
