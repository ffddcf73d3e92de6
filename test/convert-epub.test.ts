import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { strToU8, zipSync } from "fflate";
import { convertEpub } from "../src/convert/epub.ts";
import { ResearcherError } from "../src/errors.ts";
import { conversionFailure as failure, describeShared, SHARED } from "./helpers.ts";

const EPUB = join(SHARED, "data/corpus/epub");
const corpusFile = (path: string) => readFileSync(join(EPUB, path));
const headings = (text: string) => text.split("\n").filter((line) => /^#{1,6} /.test(line));

const CONTAINER = `<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`;

const xhtml = (body: string, encoding = "utf-8") =>
  `<?xml version="1.0" encoding="${encoding}"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title/></head><body>${body}</body></html>`;

/**
 * A small EPUB: the OPF in a folder, chapters in a sibling folder with a space in a name (percent-encoded in hrefs),
 * a spine order unlike the manifest's, a nav document in yet another folder, and a windows-1252 chapter.
 */
function book(options: { toc: "nav" | "ncx"; extra?: Record<string, Uint8Array>; junk?: string }): Uint8Array {
  const junk = options.junk ?? "";
  const nav = xhtml(
    `<nav epub:type="landmarks"><ol><li><a href="../text/ch%201.xhtml">Landmark, not a title</a></li></ol></nav>` +
      `<nav epub:type="toc"><ol><li><a href="../text/ch%201.xhtml#start">The &amp; Beginning</a></li><li><a href="../text/ch2.xhtml">Second <b>Part</b></a></li><li><a href="../text/ch3.xhtml">Third</a></li></ol></nav>${junk}`,
  );
  const ncx = `<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap><navPoint id="p1" playOrder="1"><navLabel><text>The &amp; Beginning</text></navLabel><content src="../OEBPS/text/ch%201.xhtml"/></navPoint><navPoint id="p2" playOrder="2"><navLabel><text>Second Part</text></navLabel><content src="text/ch2.xhtml"/><navPoint id="p2a"><navLabel><text>Inner</text></navLabel><content src="text/ch2.xhtml#inner"/></navPoint></navPoint></navMap>${junk}</ncx>`;
  const opf = `<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:title>A Test &amp; Its Book</dc:title><dc:title>The subtitle</dc:title>
    <dc:creator id="a1">First Author</dc:creator>
    <dc:creator>Second Author</dc:creator>
    <dc:language>en</dc:language><dc:publisher>Tests Ltd</dc:publisher><dc:date>2024-05-01</dc:date>
  </metadata>
  <manifest>
    <!-- <item id="ghost" href="ghost.xhtml" media-type="application/xhtml+xml"/> -->
    <item id="c1" href="text/ch%201.xhtml" media-type="application/xhtml+xml"/>
    <item id="c3" href="text/ch3.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>
    <item id="img" href="images/pic.png" media-type="image/png"/>
    ${options.toc === "nav" ? `<item id="nav" href="nav/toc.xhtml" properties="nav" media-type="application/xhtml+xml"/>` : `<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>`}
  </manifest>
  <spine${options.toc === "ncx" ? ` toc="ncx"` : ""}>
    ${options.toc === "nav" ? `<itemref idref="nav" linear="no"/>` : ""}
    <itemref idref="c1"/><itemref idref="c2"/><itemref idref="img"/><itemref idref="c3"/>
  </spine>
</package>${junk}`;
  const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
  return zipSync({
    mimetype: strToU8("application/epub+zip"),
    "META-INF/container.xml": strToU8(CONTAINER),
    "OEBPS/content.opf": strToU8(opf),
    "OEBPS/text/ch 1.xhtml": strToU8(xhtml(`<p id="start">It begins here.</p>`)),
    "OEBPS/text/ch2.xhtml": latin1(
      xhtml(`<p>Caf\u00e9 cr\u00e8me opens the second part, before any heading.</p><h2 id="inner">Inner</h2><p>More.</p>`, "windows-1252"),
    ),
    "OEBPS/text/ch3.xhtml": strToU8(xhtml(`<h1>Third, its own heading</h1><p>The end.</p>`)),
    "OEBPS/images/pic.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47]),
    ...(options.toc === "nav" ? { "OEBPS/nav/toc.xhtml": strToU8(nav) } : { "OEBPS/toc.ncx": strToU8(ncx) }),
    ...options.extra,
  });
}

const BOOK_TEXT = `# The & Beginning

It begins here.

# Second Part

Café crème opens the second part, before any heading.

## Inner

More.

# Third, its own heading

The end.`;

describe("convertEpub: generated books", () => {
  test("spine order, hrefs resolved and decoded, per-chapter charset, EPUB 3 nav titles for chapters without one", async () => {
    const doc = await convertEpub(book({ toc: "nav" }), "fallback");
    expect(doc).toEqual({
      title: "A Test & Its Book",
      format: "markdown",
      text: BOOK_TEXT,
      firstLine: 1,
      metadata: { author: ["First Author", "Second Author"], language: "en", publisher: "Tests Ltd", date: "2024-05-01" },
    });
  });

  test("the EPUB 2 NCX gives the same titles", async () => {
    expect((await convertEpub(book({ toc: "ncx" }), "fallback")).text).toBe(BOOK_TEXT);
  });

  test("openings without their ends (<!--, <nav>, <a, <navLabel>, <dc:title>, CDATA) read in linear time (s18 hostile #5)", async () => {
    // Each was searched to the end of its file from every opening: a few KB zipped held a worker for an hour, past
    // the conversion's time limit, which cannot stop a regex.
    const junk = ["<!--", "<nav><a href='x'>", "<navLabel><text>", "<dc:title>", "<![CDATA[", "<item ", "<<"]
      .map((opening) => opening.repeat(40_000))
      .join("")
      .concat(`<item ${"a".repeat(200_000)}/>`); // an attribute name that never meets its `=` (s18 retest N1)
    for (const toc of ["nav", "ncx"] as const) {
      const started = performance.now();
      const doc = await convertEpub(book({ toc, junk }), "fallback");
      expect(performance.now() - started).toBeLessThan(5000);
      expect(doc.text).toBe(BOOK_TEXT);
      expect(doc.title).toBe("A Test & Its Book");
    }
  }, 120_000);

  test("a `# comment` in a code block that opens a chapter is code: the chapter still gets its table-of-contents title", async () => {
    const chapter = strToU8(xhtml(`<pre><code># install it first\nmake install</code></pre><p>It begins here.</p>`));
    const text = (await convertEpub(book({ toc: "nav", extra: { "OEBPS/text/ch 1.xhtml": chapter } }), "fallback")).text;
    expect(text).toStartWith("# The & Beginning\n\n```\n# install it first\nmake install\n```");
  });

  test("DRM-encrypted chapters are refused", async () => {
    const encryption = `<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:CipherData><enc:CipherReference URI="OEBPS/text/ch2.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>`;
    const error = await failure(convertEpub(book({ toc: "nav", extra: { "META-INF/encryption.xml": strToU8(encryption) } }), "x"));
    expect(error.message).toBe("encrypted (DRM-protected) EPUB");
  });

  test("not a zip; a zip that is not an EPUB", async () => {
    expect((await failure(convertEpub(strToU8("just text"), "x"))).message).toBe("not a valid EPUB (zip) file: invalid zip data");
    expect((await failure(convertEpub(zipSync({ "a.txt": strToU8("a") }), "x"))).message).toBe("not an EPUB: no META-INF/container.xml");
  });

  test("a zip declaring gigabytes uncompressed is refused before inflating anything", async () => {
    const bytes = book({ toc: "nav" });
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // the uncompressed size (offset 24) of the first central-directory header, set to ~3.75 GB
    let entry = 0;
    while (view.getUint32(entry, true) !== 0x02014b50) entry++;
    view.setUint32(entry + 24, 0xf0000000, true);
    const error = await failure(convertEpub(bytes, "x"));
    expect(error.message).toBe("EPUB declares 3840 MB uncompressed (over the 512 MB limit)");
  });
});

describeShared("convertEpub: corpus", () => {
  test("alice.epub: title, author, chapters in spine order with their own headings", async () => {
    const doc = await convertEpub(corpusFile("epub.js/alice.epub"), "alice");
    expect(doc.title).toBe("Alice's Adventures in Wonderland");
    expect(doc.metadata).toEqual({ author: "Lewis Carroll", language: "en-US" });
    expect(headings(doc.text).slice(0, 6)).toEqual([
      "# Alice's Adventures In Wonderland",
      "#### Copyright, 1916, By Sam'l Gabriel Sons & Company New York",
      "## Down The Rabbit-Hole",
      "## The Pool Of Tears",
      "## A Caucus-Race And A Long Tale",
      "## The Rabbit Sends In A Little Bill",
    ]);
    expect(doc.text).toContain("Alice was beginning to get very tired of sitting by her sister on the bank");
    expect(doc.text).not.toContain("Contents"); // the nav document is the table of contents, not content
  });

  test("endnotes in <aside>s and chapter headings in <header>s are content", async () => {
    const georgia = await convertEpub(corpusFile("idpf-epub3-samples/georgia-cfi.epub"), "x");
    expect(georgia.text).toContain("1 According to the usual nomenclature, the branch flowing S.W. is called the Chattooga");
    const moby = await convertEpub(corpusFile("idpf-epub3-samples/moby-dick.epub"), "x");
    expect(moby.text).toContain("These have been corrected in this EPUB3 edition.");
    expect(headings(moby.text)).toContain("# Chapter 100. Leg and Arm.");
  });

  test("The Waste Land: sections in spine order", async () => {
    const doc = await convertEpub(corpusFile("idpf-epub3-samples/wasteland.epub"), "wasteland");
    expect(doc.title).toBe("The Waste Land");
    expect(headings(doc.text).slice(0, 7)).toEqual([
      "# The Waste Land",
      "## I. THE BURIAL OF THE DEAD",
      "## II. A GAME OF CHESS",
      "## III. THE FIRE SERMON",
      "## IV. DEATH BY WATER",
      "## V. WHAT THE THUNDER SAID",
      '## NOTES ON "THE WASTE LAND"',
    ]);
    expect(doc.text).toContain("April is the cruellest month");
  });

  test("several dc:creator elements become an array; publisher and date", async () => {
    const doc = await convertEpub(corpusFile("idpf-epub3-samples/regime-anticancer-arabic.epub"), "x");
    expect(doc.title).toBe("Le Vrai Régime anti-cancer");
    expect(doc.metadata).toEqual({
      author: ["Pr David Khayat", "Nathalie Hutter-Lardeau", "Marina Khalil Fayad"],
      language: "ar",
      publisher: "Hachette Antoine",
      date: "2012",
    });
  });

  test("every EPUB converts (or fails with a one-line FILE_UNREADABLE reason), in bounded time", async () => {
    const started = performance.now();
    const failures: Record<string, string> = {};
    let converted = 0;
    for (const path of new Glob("**/*.epub").scanSync(EPUB)) {
      try {
        const doc = await convertEpub(corpusFile(path), path);
        expect(doc.text.length).toBeGreaterThan(0);
        converted++;
      } catch (error) {
        expect(error).toBeInstanceOf(ResearcherError);
        expect((error as ResearcherError).message).not.toContain("\n");
        failures[path] = (error as ResearcherError).message;
      }
    }
    expect(failures).toEqual({});
    expect(converted).toBe(16);
    expect(performance.now() - started).toBeLessThan(30_000);
  }, 60_000);
});

test("a chapter the spine lists many times is read once (a 15 KB book must not convert to gigabytes)", async () => {
  // by one id 20,000 times, or by 5,000 ids that all name the same file
  const items = (n: number) => Array.from({ length: n }, (_, i) => `<item id="c${i}" href="c1.xhtml" media-type="application/xhtml+xml"/>`);
  const refs = (n: number) => Array.from({ length: n }, (_, i) => `<itemref idref="c${i}"/>`);
  for (const { manifest, spine } of [
    { manifest: items(1), spine: Array(20_000).fill('<itemref idref="c0"/>') },
    { manifest: items(5_000), spine: refs(5_000) },
  ]) {
    const opf = `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Loop</dc:title></metadata><manifest>${manifest.join("")}</manifest><spine>${spine.join("")}</spine></package>`;
    const bytes = zipSync({
      mimetype: strToU8("application/epub+zip"),
      "META-INF/container.xml": strToU8(CONTAINER),
      "OEBPS/content.opf": strToU8(opf),
      "OEBPS/c1.xhtml": strToU8(xhtml(`<p>${"once only. ".repeat(500)}</p>`)),
    });
    const { text } = await convertEpub(bytes, "x");
    expect(text.split("once only.").length - 1).toBe(500);
  }
});
