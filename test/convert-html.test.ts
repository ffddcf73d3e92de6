import { describe, expect, test } from "bun:test";
import { chunkDocument } from "../src/index/chunk.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { convertHtml, decodeHtml, htmlToMarkdown } from "../src/convert/html.ts";
import { ResearcherError } from "../src/errors.ts";
import { describeShared, SHARED, testShared } from "./helpers.ts";

const HTML = join(SHARED, "data/corpus/html");
const utf8 = (text: string) => new TextEncoder().encode(text);
/** windows-1252 bytes of a string (every character used here is in latin-1, where the two agree). */
const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

const PAGE = `<!DOCTYPE html>
<html lang="en-GB"><head><title> The  Guide </title>
<meta name="author" content="Ada Lovelace"><meta name="description" content="How engines work">
<meta name="keywords" content="engines, notes"><style>.secretStyle { color: red }</style>
<script>var secretScript = 1;</script></head>
<body>
<header>SecretHeader</header><nav><a href="/">SecretNav</a></nav>
<h1>Analytical Engine</h1>
<p>The <a href="https://example.com/mill">mill</a> does the <em>arithmetic</em>, see <code>snake_case</code>.</p>
<img src="a.png" alt="Illo1"><img src="b.png" alt="Diagram of the mill">
<h2>Parts</h2>
<ul><li>Mill</li><li>Store<ul><li>Columns</li></ul></li></ul>
<ol><li>First</li><li>Second</li></ol>
<h3>Table of operations</h3>
<table><thead><tr><th>Op</th><th>Cards</th></tr></thead><tbody><tr><td>Add</td><td>2</td></tr><tr><td>Multiply</td><td>3</td></tr></tbody></table>
<pre><code class="language-python">def f(x):


    return x * 2
</code></pre>
<pre># not a heading</pre>
<p># also not a heading</p>
<h2>Notes<br>continued</h2>
<aside>SecretAside</aside><noscript>SecretNoscript</noscript><template><p>SecretTemplate</p></template>
<iframe src="x">SecretIframe</iframe><svg><text>SecretSvg</text></svg>
<form><select><option>SecretForm</option></select><input name=q></form><button>SecretButton</button>
<footer>SecretFooter</footer>
</body></html>`;

const PAGE_MARKDOWN = `# Analytical Engine

The mill does the _arithmetic_, see \`snake_case\`.

Diagram of the mill

## Parts

-   Mill
-   Store
    -   Columns

1.  First
2.  Second

### Table of operations

| Op | Cards |
| --- | --- |
| Add | 2 |
| Multiply | 3 |

\`\`\`python
def f(x):


    return x * 2
\`\`\`

\`\`\`
# not a heading
\`\`\`

\\# also not a heading

## Notes continued`;

describe("convertHtml", () => {
  test("keeps headings, lists, tables and code; links and images become plain text", async () => {
    const doc = await convertHtml(utf8(PAGE), "fallback");
    expect(doc).toEqual({
      title: "The Guide",
      format: "markdown",
      text: PAGE_MARKDOWN,
      firstLine: 1,
      metadata: { author: "Ada Lovelace", description: "How engines work", keywords: "engines, notes", language: "en-GB" },
    });
  });

  test("a footnote's mark stands apart from the word it follows, in brackets; other superscripts stay (s24 user U4: `snarf235`)", () => {
    const html =
      '<p>The designer can snarf<a class="footnote_link" href="#f1"><sup>235</sup></a> features, ' +
      'as a<sup><a href="#n2">[2]</a></sup> note and an <a epub:type="noteref" href="#n3">3</a> say: x<sup>2</sup> on the 1<sup>st</sup>.</p>';
    expect(htmlToMarkdown(html)).toBe("The designer can snarf[235] features, as a[2] note and an [3] say: x2 on the 1st.");
  });

  test("page furniture and non-content elements leave no searchable text", async () => {
    const { text } = await convertHtml(utf8(PAGE), "fallback");
    for (const secret of [
      "Style",
      "Script",
      "Header",
      "Nav",
      "Aside",
      "Noscript",
      "Template",
      "Iframe",
      "Svg",
      "Form",
      "Button",
      "Footer",
    ]) {
      expect(text).not.toContain(`Secret${secret}`);
      expect(text).not.toContain(`secret${secret}`);
    }
    expect(text).not.toContain("example.com");
    expect(text).not.toContain("Illo1");
  });

  test("a stray `<` in a tag (`<b</body>`, `<a<b>`) reads the page, not a DOM error for the whole file (s12 hostile #9)", async () => {
    const text = async (html: string) => (await convertHtml(utf8(html), "f")).text;
    expect(await text("<html><body><p>hello world</p><b</body></html>")).toBe("hello world");
    expect(await text("<html><body><p>hello world</p><a<b>x</b></body></html>")).toBe("hello world\n\nx");
    expect(await text('<html><body><p a"b>q</p><div<span>z</div></body></html>')).toBe("q\n\nz");
  });

  test("a form's controls are dropped, not its content: an ASP.NET page wraps its whole body in one <form> (s12 hostile #8)", async () => {
    const page =
      '<!DOCTYPE html><html><head><title>Annual report</title></head><body><form method="post" action="./Default.aspx" id="form1">' +
      '<div class="aspNetHidden"><input type="hidden" name="__VIEWSTATE" value="abc"></div><h1>Annual report 2025</h1>' +
      "<p>Revenue grew by twelve percent thanks to the widget business.</p><select><option>SecretOption</option></select>" +
      "<button>SecretButton</button></form></body></html>";
    const { text } = await convertHtml(utf8(page), "fallback");
    expect(text).toContain("Revenue grew by twelve percent");
    expect(text).not.toContain("Secret");
    expect(text).not.toContain("VIEWSTATE");
  });

  test("an XHTML DOCTYPE's internal subset is no text, and its entities are not expanded (s14 hostile #10)", async () => {
    const xhtml = `<?xml version="1.0"?>\n<!DOCTYPE html [\n<!ENTITY lol "lol">\n<!ENTITY lol2 "&lol;&lol;">\n]>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Entities</title></head><body><p>dtdword &lol2; here</p></body></html>`;
    const doc = await convertHtml(new TextEncoder().encode(xhtml), "x");
    expect(doc.title).toBe("Entities");
    expect(doc.text).toBe("dtdword &lol2; here");
  });

  test("title: <title>, else the first <h1>, else the fallback", async () => {
    expect((await convertHtml(utf8("<h2>Second</h2><h1>First  one</h1>"), "fb")).title).toBe("First one");
    expect((await convertHtml(utf8("<p>no heading</p>"), "fb")).title).toBe("fb");
    expect((await convertHtml(utf8("<title>   </title><p>x</p>"), "fb")).title).toBe("fb");
  });

  test("no metadata keys for absent fields, no pages", async () => {
    const doc = await convertHtml(utf8("<p>plain</p>"), "fb");
    expect(doc.metadata).toEqual({});
    expect(doc.pages).toBeUndefined();
    expect(doc.text).toBe("plain");
  });

  test("runs of blank lines collapse outside code", () => {
    expect(htmlToMarkdown("<p>a</p><div><br><br><br><br></div><p>b</p>")).toBe("a\n\nb");
  });

  test("a section number in its own element is set apart from the title (SICP's secnum/sectitle spans)", () => {
    const html = [
      '<h3 class="section"><a id="5_002e4"></a><span class="secnum">5.4</span><span class="sectitle">The Explicit-Control Evaluator</span></h3>',
      '<h4><span class="secnum">5.4.1</span><span class="sectitle">The Core</span></h4>',
      '<h4><span class="secnum">A.2.</span><em>appendix</em></h4>',
      "<h2><b>Bold</b><i>faced</i></h2>",
      '<h2><span class="section-number">1.2. </span>Already spaced</h2>',
      "<h2><span>2024</span></h2>",
    ].join("\n");
    expect(htmlToMarkdown(html).split("\n\n")).toEqual([
      "### 5.4 The Explicit-Control Evaluator",
      "#### 5.4.1 The Core",
      "#### A.2. _appendix_",
      "## **Bold**_faced_",
      "## 1.2. Already spaced",
      "## 2024",
    ]);
  });

  test("a table holding a list stays a table of text, not raw HTML; a headless table gets an empty header", () => {
    const markdown = htmlToMarkdown("<table><tr><td>Tools</td><td><ul><li>hammer</li><li>saw</li></ul></td></tr></table>");
    expect(markdown).toBe("|     |     |\n| --- | --- |\n| Tools | - hammer - saw |");
  });

  test("tables: caption, a heading row of <th>, colspan, escaped pipes", () => {
    const html = `<table><caption>Prices</caption><tr><th>Item</th><th>Cost</th></tr><tr><td colspan="2">a|b</td></tr><tr><td>tea</td><td>2</td></tr></table>`;
    expect(htmlToMarkdown(html)).toBe("Prices\n\n| Item | Cost |\n| --- | --- |\n| a\\|b |   |\n| tea | 2 |");
  });

  test("a layout table (one holding another table) becomes paragraphs around the inner table", () => {
    const html = `<table><tr><td>Menu</td><td><p>Intro</p><table><tr><th>k</th><th>v</th></tr><tr><td>x</td><td>1</td></tr></table></td></tr></table>`;
    expect(htmlToMarkdown(html)).toBe("Menu\n\nIntro\n\n| k | v |\n| --- | --- |\n| x | 1 |");
  });

  test("a page of 200,000 unclosed tags (<a <a <a …) converts in linear time (s18 hostile #5: minutes, past the time limit)", async () => {
    const started = performance.now();
    const doc = await convertHtml(new TextEncoder().encode(`<html><body><p>Body words.</p>${"<a ".repeat(200_000)}`), "tags");
    expect(performance.now() - started).toBeLessThan(5000);
    expect(doc.text).toContain("Body words.");
    // One tag whose name never ends (s18 retest N1: 24 s for 200 KB).
    const named = performance.now();
    const long = await convertHtml(new TextEncoder().encode(`<html><body><p>Body words.</p><${"a".repeat(200_000)}`), "name");
    expect(performance.now() - named).toBeLessThan(5000);
    expect(long.text).toContain("Body words.");
  }, 120_000);

  test("a 2,000-row table converts in well under a second or two (no quadratic row lookups)", () => {
    const html = `<table>${"<tr><td><p>a</p></td><td>b</td></tr>".repeat(2_000)}</table>`;
    const started = performance.now();
    expect(htmlToMarkdown(html).split("\n").length).toBe(2_002);
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

describe("character sets", () => {
  test("<meta charset=windows-1252>", async () => {
    const page = latin1(
      `<html><head><meta charset="windows-1252"><title>Caf\u00e9</title></head><body><p>cr\u00e8me br\u00fbl\u00e9e \u00e0 la fa\u00e7on</p></body></html>`,
    );
    const doc = await convertHtml(page, "fb");
    expect(doc.title).toBe("Café");
    expect(doc.text).toBe("crème brûlée à la façon");
  });

  test("http-equiv content-type charset=iso-8859-1, and windows-1252's extra characters", async () => {
    const page = new Uint8Array([
      ...latin1(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"></head><body><p>na\u00efve `),
      0x93,
      0x71,
      0x94,
      0x20,
      0x80, // “q” € : iso-8859-1 is decoded as windows-1252, as browsers do
      ...latin1("</p></body></html>"),
    ]);
    expect((await convertHtml(page, "fb")).text).toBe("naïve “q” €");
  });

  test("the XML prolog's encoding, for XHTML", async () => {
    const page = latin1(
      `<?xml version="1.0" encoding="ISO-8859-1"?><html xmlns="http://www.w3.org/1999/xhtml"><body><p>\u00c9t\u00e9</p></body></html>`,
    );
    expect((await convertHtml(page, "fb")).text).toBe("Été");
  });

  test("UTF-8 by default; a BOM wins over the declaration", async () => {
    expect((await convertHtml(utf8("<p>Grüße</p>"), "fb")).text).toBe("Grüße");
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(`<meta charset="windows-1252"><p>Grüße</p>`)]);
    expect((await convertHtml(bom, "fb")).text).toBe("Grüße");
  });

  test("a page that declares nothing and is no valid UTF-8 is read as windows-1252, as browsers do (s12 hostile #14)", async () => {
    expect((await convertHtml(latin1("<html><body><p>caf\u00e9 cr\u00e8me</p></body></html>"), "fb")).text).toBe("café crème");
    expect((await convertHtml(utf8("<html><body><p>café crème</p></body></html>"), "fb")).text).toBe("café crème");
    // UTF-8 with one bad byte (a download cut inside a character) stays UTF-8: only that character is lost.
    const cut = new Uint8Array([
      ...utf8("<html><head><title>Über uns</title></head><body><p>Köln 東京 "),
      0xe6,
      0x9d,
      ...utf8("</p></body></html>"),
    ]);
    const doc = await convertHtml(cut, "fb");
    expect([doc.title, doc.text]).toEqual(["Über uns", "Köln 東京 \ufffd"]);
    // windows-1252 with one pasted UTF-8 character stays windows-1252: only that character is lost (s13 hostile #10).
    const mixed = new Uint8Array([...latin1(`<html><body><p>${"caf\u00e9 ".repeat(20)}`), ...utf8("é mixword</p></body></html>")]);
    expect((await convertHtml(mixed, "fb")).text).toStartWith("café café café");
  });

  test("an unknown charset label falls back to UTF-8", () => {
    expect(decodeHtml(utf8(`<meta charset="no-such-charset"><p>Grüße</p>`))).toContain("Grüße");
  });
});

describe("XHTML", () => {
  test("self-closing non-void elements do not swallow what follows", () => {
    const xhtml = `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title/></head><body><h1><a id="top"/>Start</h1><p>after<span class="x"/> the span</p></body></html>`;
    expect(htmlToMarkdown(xhtml)).toBe("# Start\n\nafter the span");
  });

  test("a site's header, footer and sidebar are dropped; an article's header, notes and asides are content", async () => {
    const page = `<html><body><header><h1>SiteBanner</h1></header><aside>SiteSidebar</aside>
<main><article><header><h1>Rivers of Georgia</h1><p>By A. Writer</p></header>
<p>The Savannah rises in the mountains.</p><aside><pre><code>flow = 42</code></pre></aside>
<section><header><h2>Sources</h2></header><p>Three branches.</p></section>
<footer><p>1 The Chattooga joins the Tallulah.</p></footer></article></main>
<footer>SiteFooter</footer></body></html>`;
    const doc = await convertHtml(utf8(page), "x");
    expect(doc.text).toBe(
      "# Rivers of Georgia\n\nBy A. Writer\n\nThe Savannah rises in the mountains.\n\n```\nflow = 42\n```\n\n## Sources\n\nThree branches.\n\n1 The Chattooga joins the Tallulah.",
    );
  });
});

describe("limits", () => {
  test("markup nested thousands of levels deep is refused fast, with a reason", async () => {
    for (const html of [`${"<div>".repeat(100_000)}deep`, "<div><p><b><i>x".repeat(2_000)]) {
      const started = performance.now();
      const error = await convertHtml(utf8(html), "fb").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ResearcherError);
      expect((error as ResearcherError).code).toBe("FILE_UNREADABLE");
      expect((error as ResearcherError).message).toBe("elements nested more than 1000 levels deep");
      expect(performance.now() - started).toBeLessThan(5_000);
    }
  });

  testShared(
    "a 5 MB page converts whole (its speed is bench/formats.ts's to measure)",
    async () => {
      const chapter = readFileSync(join(HTML, "sicp/html/3_002e3.xhtml"), "utf8").replace(/^[\s\S]*?<body>|<\/body>[\s\S]*$/g, "");
      const copies = Math.ceil(5_000_000 / chapter.length);
      const doc = await convertHtml(utf8(`<html><body>${chapter.repeat(copies)}</body></html>`), "big");
      expect(doc.text.split("### 3.3 Modeling with Mutable Data").length - 1).toBe(copies);
    },
    60_000,
  );
});

describeShared("corpus", () => {
  test("SICP (XHTML): title, language, heading hierarchy, code as fences, footnotes kept, scripts gone", async () => {
    const doc = await convertHtml(readFileSync(join(HTML, "sicp/html/1_002e1.xhtml")), "1_002e1");
    expect(doc.title).toBe("Structure and Interpretation of Computer Programs, 2e: 1.1");
    expect(doc.metadata.language).toBe("en");
    const headings = doc.text.split("\n").filter((line) => line.startsWith("#"));
    expect(headings.slice(0, 3)).toEqual([
      "### 1.1 The Elements of Programming",
      "#### 1.1.1 Expressions",
      "#### 1.1.2 Naming and the Environment",
    ]);
    expect(doc.text).toContain("```\n(+ 137 349)\n486\n\n(- 1000 334)\n666\n");
    expect(doc.text).toContain("[26] The concept of consistent renaming is actually subtle");
    expect(doc.text).not.toContain("jquery");
  });

  test("CoffeeScript docs (HTML): title and sections", async () => {
    const doc = await convertHtml(readFileSync(join(HTML, "coffeescript-docs/docs/v2/index.html")), "index");
    expect(doc.title).toBe("CoffeeScript");
    expect(doc.text.startsWith("**CoffeeScript is a little language that compiles into JavaScript.**")).toBe(true);
    expect(doc.text).toContain("\n## Overview\n");
    expect(doc.text).toContain("\n### What’s New In CoffeeScript 2?\n");
    // Its 164 code examples, most in <aside>s inside <main>, the others in block quotes.
    expect(doc.text.match(/^(> )*```/gm)).toHaveLength(2 * 164);
    expect(doc.text).toContain("# Array comprehensions:\ncubes = (math.cube num for num in list)\n```");
    expect(doc.text).not.toContain("# Array comprehensions: cubes"); // the editor's <textarea> copy of the example
  });
});

test("the declared charset is found as a browser's prescan finds it: not in a comment or another meta's text, and behind a large inline style (s13 hostile #4)", async () => {
  const text = "Grüße café 日本語 naïve";
  const page = (head: string, body: string) => new TextEncoder().encode(`<html><head>${head}</head><body><p>${body}</p></body></html>`);
  const read = async (bytes: Uint8Array) => (await convertHtml(bytes, "f")).text;
  expect(await read(page('<!-- old: <meta charset="iso-8859-1"> --><meta charset="utf-8">', text))).toBe(text);
  expect(await read(page('<!-- <meta charset="iso-8859-1"> -->', text))).toBe(text);
  expect(await read(page('<meta name="description" content="How to declare charset=shift_jis"><meta charset="utf-8">', text))).toBe(text);
  expect(await read(page('<meta http-equiv="Content-Type" content="text/html; charset=utf-8">', text))).toBe(text);
  const css = `<style>${"/* padding */ body{color:red}\n".repeat(200)}</style>`;
  // windows-1251's letters А–я are 0xC0–0xFF.
  const cp1251 = (s: string) => Uint8Array.from(s, (ch) => (ch >= "А" && ch <= "я" ? ch.charCodeAt(0) - 0x410 + 0xc0 : ch.charCodeAt(0)));
  expect(await read(cp1251(`<html><head>${css}<meta charset="windows-1251"></head><body><p>Привет мир</p></body></html>`))).toBe(
    "Привет мир",
  );
});

test("a heading inside a note box or aside is its bold label, not a section: the text after the box stays under its section (s13 questions #5)", async () => {
  const page = `<html><body><section><h2>Talk to Me: Media Overlays</h2><p>Overlays read aloud.</p>
<aside class="note"><h3>Note</h3><p>See the reading order.</p></aside>
<div class="note"><h3>note</h3><p>A spec note.</p></div>
<p>The order of the instructions defines the reading order.</p></section></body></html>`;
  const doc = await convertHtml(utf8(page), "f");
  expect(doc.text).toContain("**Note**\n\nSee the reading order.");
  expect(doc.text).not.toContain("### ");
  const fragments = chunkDocument(doc, { tokens: 30, overlap: 0 });
  expect(fragments.find((f) => f.text.includes("instructions"))!.headings).toEqual(["Talk to Me: Media Overlays"]);
  // A wrapper of the page's content whose class merely mentions one (has-sidebar, release-notes) is no box (retest).
  for (const wrapper of ['<div class="has-sidebar">', '<div class="release-notes">', '<div class="sidebar">']) {
    const site = `<html><body><main>${wrapper}<h2>Install</h2><p>Run it.</p><h2>Usage</h2><p>Call it.</p></div></main></body></html>`;
    expect((await convertHtml(utf8(site), "f")).text).toBe("## Install\n\nRun it.\n\n## Usage\n\nCall it.");
  }
});

describe("MathML", () => {
  test("powers, indices, fractions and roots keep their meaning as one line of text (s12 user #2)", async () => {
    const math = (body: string, display = "") => `<math xmlns="http://www.w3.org/1998/Math/MathML"${display}>${body}</math>`;
    const page = `<html><body><p>We compute ${math("<msup><mi>b</mi><mi>n</mi></msup>")} fast.</p>${math(
      "<mi>φ<!-- φ --></mi><mo>=</mo><mfrac><mrow><mn>1</mn><mo>+</mo><msqrt><mn>5</mn></msqrt></mrow><mn>2</mn></mfrac>",
      ' display="block"',
    )}<p>${math("<msub><mi>y</mi><mrow><mi>n</mi><mo>−</mo><mn>2</mn></mrow></msub>")} and ${math(
      "<mroot><mi>x</mi><mn>3</mn></mroot>",
    )} and ${math("<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup>")}</p></body></html>`;
    expect((await convertHtml(utf8(page), "f")).text).toBe("We compute b^n fast.\n\nφ = (1 + √5)/2\n\ny_(n − 2) and 3√x and x_i^2");
  });

  test("a formula nested hundreds of levels deep converts in linear time; a prefixed <m:math> (XHTML, EPUB) is read too (s13 review #1, #5)", async () => {
    const deep = `<math display="block">${"<mrow><mi>a</mi><mo>+</mo>".repeat(200)}<mn>1</mn>${"</mrow>".repeat(200)}</math>`;
    const started = performance.now();
    const text = (await convertHtml(utf8(`<html><body><h1>F</h1>${deep}<p>end</p></body></html>`), "f")).text;
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(text).toContain("a + a + a");
    const prefixed = '<m:math xmlns:m="http://www.w3.org/1998/Math/MathML"><m:msup><m:mi>b</m:mi><m:mn>2</m:mn></m:msup></m:math>';
    expect((await convertHtml(utf8(`<html><body><p>Area ${prefixed} here</p></body></html>`), "f")).text).toBe("Area b^2 here");
  });

  test("a formula missing a part writes nothing in its place: no 'undefined', no stray operator (s13 hostile #6)", async () => {
    const math = "<math><mfrac></mfrac><msup><mi>x</mi></msup><msubsup></msubsup><mroot/><munderover><mo>∑</mo></munderover></math>";
    expect((await convertHtml(utf8(`<html><body><p>before</p>${math}<p>after</p></body></html>`), "f")).text).toBe(
      "before\n\nx ∑\n\nafter",
    );
  });

  testShared("SICP's formulas read as written (they read `b 2 = b ⋅ b`, `y n − 2`)", async () => {
    const text = async (page: string) =>
      (await convertHtml(new Uint8Array(readFileSync(join(SHARED, "data/corpus/html/sicp/html", page))), "f")).text;
    const powers = await text("1_002e2.xhtml");
    expect(powers).toContain("b^2 = b ⋅ b , ; b^4 = b^2 ⋅ b^2");
    expect(powers).toContain("φ = (1 + √5)/2 ≈ 1.6180");
    expect(await text("1_002e3.xhtml")).toContain("h/3 ( y_0 + 4 y_1 + 2 y_2 + 4 y_3 + 2 y_4 + ⋯ + 2 y_(n − 2) + 4 y_(n − 1) + y_n )");
  });
});

test("a list whose items hold headings is a page of sections (docco's annotated source): its headings and code fences stay (s14 questions #3)", async () => {
  const item = (title: string, code: string) =>
    `<li><div class="annotation"><h2>${title}</h2><p>About ${title.toLowerCase()}.</p></div><div class="content"><pre><code>${code}</code></pre></div></li>`;
  const page = `<html><body><ul class="sections">${item("Base64 VLQ Encoding", "encodeVlq = (value) -&gt;")}${item("Line Map", "class LineMap")}</ul>
    <ul><li>a plain point</li><li>another point</li></ul></body></html>`;
  const doc = await convertHtml(new TextEncoder().encode(page), "docco");
  expect(doc.text).toStartWith("## Base64 VLQ Encoding\n");
  expect(doc.text).toContain("\n```\nclass LineMap\n```\n");
  expect(doc.text).toContain("-   a plain point"); // a list of points stays a list
  const fragments = chunkDocument(doc, { tokens: 30, overlap: 0 });
  expect(fragments.find((f) => f.text.includes("class LineMap"))!.headings).toEqual(["Line Map"]);
});
