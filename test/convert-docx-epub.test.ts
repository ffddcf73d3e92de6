import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { zipSync } from "fflate";
import { convertDocx } from "../src/convert-docx.ts";
import { convertEpub } from "../src/convert-epub.ts";
import { ResearcherError } from "../src/errors.ts";
import { SHARED } from "./helpers.ts";

const CORPUS = join(SHARED, "data/corpus");
const mammothFixture = (name: string) => readFileSync(join(CORPUS, "docx/mammoth.js", name));

describe("convertDocx", () => {
  test("a table keeps its cells in rows; title falls back to the file name, author from the core properties", async () => {
    const doc = await convertDocx(mammothFixture("tables.docx"), "tables");
    expect(doc.text).toBe("Above\n\n| Top left | Top right |\n| Bottom left | Bottom right |\n\nBelow");
    expect(doc).toMatchObject({ title: "tables", metadata: { author: "Michael Williamson", created: "2014-07-05T18:21:00Z" } });
  });

  test("footnotes are kept as a closing list", async () => {
    const doc = await convertDocx(mammothFixture("footnotes.docx"), "footnotes");
    expect(doc.text).toContain("Ouch");
    expect(doc.text).toContain("1.  A tachyon walks into a bar.");
    expect(doc.text).toContain("2.  Fin.");
  });

  test("Heading styles become markdown headings (the chunker's heading path); lists stay lists", async () => {
    // heading123.docx (Apache POI): three paragraphs in the styles Heading 1, 2 and 3.
    const doc = await convertDocx(readFileSync(join(CORPUS, "docx/apache-poi/heading123.docx")), "heading123");
    expect(doc.text.match(/^#{1,6} .+$/gm)).toEqual(["# First paragraph", "## Second paragraph", "### Third paragraph"]);
    expect(doc.title).toBe("First paragraph"); // no core title: the first heading
    expect((await convertDocx(mammothFixture("simple-list.docx"), "l")).text).toMatch(/^- +Apple\n- +Banana/);
  });

  test("encrypted, corrupt and non-zip files fail with their own one-line reasons", async () => {
    const poi = join(CORPUS, "docx/apache-poi");
    // bug53475-password-is-pass.docx: a password-protected package (an OLE compound file, not a zip).
    expect(convertDocx(readFileSync(join(poi, "bug53475-password-is-pass.docx")), "x")).rejects.toThrow("encrypted DOCX or legacy .doc format (not supported)");
    expect(convertDocx(readFileSync(join(poi, "truncated62886.docx")), "x")).rejects.toThrow(/^not a valid DOCX \(zip\) file: /);
    expect(convertDocx(new TextEncoder().encode("plain text"), "x")).rejects.toThrow(/^not a valid DOCX \(zip\) file: /);
  });

  test("every DOCX of the shared corpus under 200 KB converts or fails with a ResearcherError (bench/formats.ts runs them all)", async () => {
    const all = ["apache-poi", "mammoth.js", "python-docx"].flatMap((d) => readdirSync(join(CORPUS, "docx", d)).filter((f) => f.endsWith(".docx")).map((f) => join(CORPUS, "docx", d, f)));
    expect(all.length).toBe(179);
    const files = all.filter((f) => statSync(f).size < 200_000);
    let failed = 0;
    for (const file of files) {
      const started = performance.now();
      try {
        await convertDocx(readFileSync(file), "x");
      } catch (error) {
        expect(error).toBeInstanceOf(ResearcherError);
        expect((error as Error).message).not.toContain("\n");
        failed++;
      }
      expect(performance.now() - started).toBeLessThan(10_000);
    }
    expect(failed).toBe(15); // 13 corrupt POI fixtures, 2 password-protected ones
  }, 60_000);
});

describe("convertEpub", () => {
  test("chapters in spine order with their titles as headings; dc metadata", async () => {
    const doc = await convertEpub(readFileSync(join(CORPUS, "epub/epub.js/alice.epub")), "alice");
    expect(doc.title).toBe("Alice's Adventures in Wonderland");
    expect(doc.metadata).toMatchObject({ author: "Lewis Carroll", language: "en-US" });
    const chapters = doc.text.match(/^## .+$/gm)!.slice(0, 4);
    expect(chapters).toEqual(["## Down The Rabbit-Hole", "## The Pool Of Tears", "## A Caucus-Race And A Long Tale", "## The Rabbit Sends In A Little Bill"]);
  });

  test("a chapter without a heading takes its title from the navigation document; spine order, not file order", async () => {
    const xhtml = (body: string) => `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>${body}</body></html>`;
    const epub = zipSync({
      mimetype: new TextEncoder().encode("application/epub+zip"),
      "META-INF/container.xml": new TextEncoder().encode(`<container><rootfiles><rootfile full-path="OEBPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`),
      "OEBPS/book.opf": new TextEncoder().encode(`<package><metadata><dc:title>Two Chapters</dc:title><dc:creator>Ann</dc:creator><dc:creator>Bo</dc:creator></metadata>
        <manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
        <item id="a" href="text/a%20one.xhtml" media-type="application/xhtml+xml"/><item id="b" href="text/b.xhtml" media-type="application/xhtml+xml"/></manifest>
        <spine><itemref idref="b"/><itemref idref="a"/></spine></package>`),
      "OEBPS/nav.xhtml": new TextEncoder().encode(xhtml(`<nav epub:type="toc"><ol><li><a href="text/a%20one.xhtml">Chapter A</a></li><li><a href="text/b.xhtml#start">Chapter B</a></li></ol></nav>`)),
      "OEBPS/text/a one.xhtml": new TextEncoder().encode(xhtml("<p>Alpha text.</p>")),
      "OEBPS/text/b.xhtml": new TextEncoder().encode(xhtml("<h2>Bee</h2><p>Beta text.</p>")),
    });
    const doc = await convertEpub(epub, "x");
    expect(doc).toMatchObject({ title: "Two Chapters", metadata: { author: ["Ann", "Bo"] } });
    expect(doc.text).toBe("## Bee\n\nBeta text.\n\n# Chapter A\n\nAlpha text.");
  });

  test("every EPUB of the shared corpus converts; a non-zip and a zip without a package fail with reasons", async () => {
    const files = ["epub.js", "idpf-epub3-samples"].flatMap((d) => readdirSync(join(CORPUS, "epub", d)).filter((f) => f.endsWith(".epub")).map((f) => join(CORPUS, "epub", d, f)));
    expect(files.length).toBe(16);
    for (const file of files) expect((await convertEpub(readFileSync(file), "x")).text.length).toBeGreaterThan(100);
    expect(convertEpub(new TextEncoder().encode("nope"), "x")).rejects.toThrow(/^not a valid EPUB \(zip\) file/);
    expect(convertEpub(zipSync({ "a.txt": new Uint8Array(1) }), "x")).rejects.toThrow("no package document (META-INF/container.xml → .opf) in this EPUB");
  });
});
