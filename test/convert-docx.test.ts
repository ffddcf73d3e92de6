import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { strToU8, zipSync } from "fflate";
import { convertDocx } from "../src/convert/docx.ts";
import { chunkDocument } from "../src/index/chunk.ts";
import { isRevisionId, MAMMOTH_NAMES, PROPERTIES, readXml } from "../src/convert/docx-xml.ts";
import { readZip } from "../src/convert/zip.ts";
import { ResearcherError } from "../src/errors.ts";
import { shortened } from "../src/text.ts";
import { conversionFailure as failure, describeShared, ROOT, SHARED, testShared } from "./helpers.ts";
import { docx } from "./docx-fixtures.ts";
// @ts-expect-error mammoth's XML reader module has no types
import { readString as mammothReadString } from "mammoth/lib/xml/reader.js";

const DOCX = join(SHARED, "data/corpus/docx");
const corpusFile = (path: string) => readFileSync(join(DOCX, path));
const MAMMOTH_DOCX = join(ROOT, "node_modules/mammoth/lib/docx");

const paragraph = (text: string, style?: string) =>
  `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ""}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

describeShared("convertDocx: mammoth.js fixtures", () => {
  test("a table becomes a GFM table (with an empty header row: Word tables have none)", async () => {
    const doc = await convertDocx(corpusFile("mammoth.js/tables.docx"), "tables");
    expect(doc.text).toBe("Above\n\n|     |     |\n| --- | --- |\n| Top left | Top right |\n| Bottom left | Bottom right |\n\nBelow");
    expect(doc).toMatchObject({ title: "tables", format: "markdown", firstLine: 1 });
    expect(doc.pages).toBeUndefined();
  });

  test("footnotes and endnotes keep their text, as a numbered list after the body, without back-links", async () => {
    const expected = "Ouch[1].[2]\n\n1.  A tachyon walks into a bar.\n\n2.  Fin.";
    expect((await convertDocx(corpusFile("mammoth.js/footnotes.docx"), "footnotes")).text).toBe(expected);
    expect((await convertDocx(corpusFile("mammoth.js/endnotes.docx"), "endnotes")).text).toBe(expected);
  });

  test("a comment's author is kept as written, escaped nowhere in the text and cut to 100 characters; none, no author", async () => {
    const body = ["1", "2", "3"]
      .map((id) => `<w:p><w:r><w:t>Text ${id}</w:t></w:r><w:r><w:commentReference w:id="${id}"/></w:r></w:p>`)
      .join("");
    const comment = (id: string, author: string | undefined, text: string) =>
      `<w:comment w:id="${id}"${author === undefined ? "" : ` w:author="${author}"`} w:initials="X"><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:comment>`;
    const long = "Ann ".repeat(40);
    const doc = await convertDocx(
      docx(
        body,
        undefined,
        comment("1", "R&amp;D &lt;team&gt; &quot;Q&quot;", "first") + comment("2", long, "second") + comment("3", undefined, "third"),
      ),
      "c",
    );
    const labels = doc.text.split("\n").filter((line) => line.startsWith("Comment"));
    expect(labels).toEqual([`Comment [X1] by R&D <team> "Q"`, `Comment [X2] by ${shortened(long.trim(), 100)}`, "Comment [X3]"]);
  });

  test("a comment referenced many times is kept once, and a reference to no comment is passed over (s21 hostile #3, #6)", async () => {
    const reference = (id: string) => `<w:r><w:commentReference w:id="${id}"/></w:r>`;
    const comment = `<w:comment w:id="0" w:author="Ann" w:initials="AR"><w:p><w:r><w:t>${"lorem ipsum ".repeat(800)}</w:t></w:r></w:p></w:comment>`;
    // One 9.6 KB comment referenced 2,000 times: it was appended 2,000 times (20,000 took a 4 KB file to 4 GB).
    const many = await convertDocx(docx(`<w:p><w:r><w:t>body</w:t></w:r>${reference("0").repeat(2_000)}</w:p>`, undefined, comment), "c");
    expect(many.text.match(/Comment \[AR1\]/g)).toHaveLength(1);
    expect(many.text.length).toBeLessThan(12_000);
    expect(many.text).toStartWith("body\n");
    // A reference to a comment the document lacks, with and without a comments part: the text, not a TypeError.
    for (const comments of [undefined, comment]) {
      const orphan = await convertDocx(
        docx(`<w:p><w:r><w:t>orphan reference body</w:t></w:r>${reference("7")}</w:p>`, undefined, comments),
        "o",
      );
      expect(orphan.text).toStartWith("orphan reference body");
    }
  });

  testShared("a comment's paragraphs make no structure: a Heading style there is no heading of the document (s21 retest R9)", async () => {
    const doc = await convertDocx(corpusFile("python-docx/comments-rich-para.docx"), "c");
    expect(doc.text.split("\n").filter((line) => line.startsWith("#"))).toEqual([]);
    expect(doc.text).toContain("Paragraph with Heading 2 paragraph style.");
  });

  test("a comment that references another leaves no marker in the text: each comment once, after it (s21 retest R6)", async () => {
    const comments =
      '<w:comment w:id="0" w:initials="A"><w:p><w:r><w:t>outer</w:t></w:r><w:r><w:commentReference w:id="1"/></w:r></w:p></w:comment>' +
      '<w:comment w:id="1" w:initials="X"><w:p><w:r><w:t>inner</w:t></w:r></w:p></w:comment>';
    const body =
      '<w:p><w:r><w:t>nested body</w:t></w:r><w:r><w:commentReference w:id="0"/></w:r><w:r><w:commentReference w:id="1"/></w:r></w:p>';
    const doc = await convertDocx(docx(body, undefined, comments), "n");
    expect(doc.text.split("\n")[0]).toBe("nested body");
    expect(doc.text.match(/Comment \[/g)).toHaveLength(2);
  });

  test("a list whose style link names a style the document lacks is a plain paragraph, not a failed file (s21 hostile #6)", async () => {
    const numbering =
      '<w:abstractNum w:abstractNumId="0"><w:numStyleLink w:val="MissingListStyle"/></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>';
    const body =
      '<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>listed item text</w:t></w:r></w:p>';
    expect((await convertDocx(docx(body, undefined, undefined, numbering), "l")).text).toContain("listed item text");
  });

  test("a numbering instance without its abstract definition is a plain paragraph, not a failed file (s22 hostile F2)", async () => {
    const numbering = '<w:num w:numId="2"/>';
    const body = '<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="2"/></w:numPr></w:pPr><w:r><w:t>zqbody noabsid</w:t></w:r></w:p>';
    expect((await convertDocx(docx(body, undefined, undefined, numbering), "n")).text).toBe("zqbody noabsid");
  });

  test("a comment's marker goes whatever its id or initials: -1, a name, none, 100 letters (s22 hostile F2, retest N6)", async () => {
    const ids = ["-1", "abc", "", "7"];
    const comments = ids
      .map(
        (id, i) =>
          `<w:comment w:id="${id}" w:initials="${i === 3 ? "I".repeat(100) : "A"}"><w:p><w:r><w:t>note ${i}</w:t></w:r></w:p></w:comment>`,
      )
      .join("");
    const body = `<w:p><w:r><w:t>zqbody ids</w:t></w:r>${ids.map((id) => `<w:r><w:commentReference w:id="${id}"/></w:r>`).join("")}</w:p>`;
    expect((await convertDocx(docx(body, undefined, comments), "c")).text.split("\n")[0]).toBe("zqbody ids");
  });

  test("comments (margin notes) keep their text after the body, each under its label, without back-links (s20 user J)", async () => {
    const doc = await convertDocx(corpusFile("mammoth.js/comments.docx"), "comments");
    // Each under its label and its author: who wrote a margin note is what a reviewer looks for.
    expect(doc.text).toBe(
      "Ouch.\n\nComment [MW1] by Michael Williamson\n\nA tachyon walks into a bar.\n\nComment [MW2] by Michael Williamson\n\nFin.",
    );
    // The text reads as it did: a marker inside a phrase broke it ("this is a comment [s1]paragraph!": s20 retest R2).
    expect((await convertDocx(corpusFile("apache-poi/testComment.docx"), "c")).text).toStartWith("this is a comment paragraph!");
  });

  test("lists and strikethrough", async () => {
    expect((await convertDocx(corpusFile("mammoth.js/simple-list.docx"), "x")).text).toBe("-   Apple\n-   Banana");
    expect((await convertDocx(corpusFile("mammoth.js/strikethrough.docx"), "x")).text).toBe("~~Today's Special: Salmon~~ Sold out");
  });

  test("core properties: author and dates; an empty dc:title falls back to the file name", async () => {
    const doc = await convertDocx(corpusFile("mammoth.js/footnotes.docx"), "footnotes");
    expect(doc.title).toBe("footnotes");
    expect(doc.metadata).toEqual({ author: "Michael Williamson", created: "2014-06-10T11:09:00Z", modified: "2014-06-10T11:11:00Z" });
  });
});

describeShared("convertDocx: python-docx and Apache POI fixtures", () => {
  test("every core property researcher keeps", async () => {
    const doc = await convertDocx(corpusFile("python-docx/doc-coreprops.docx"), "doc-coreprops");
    expect(doc.title).toBe("Title");
    expect(doc.metadata).toEqual({
      author: "Steve Canny",
      description: "Description",
      subject: "Subject",
      keywords: "key; word; keyword",
      created: "2014-12-13T22:02:00Z",
      modified: "2014-12-13T22:06:00Z",
    });
  });

  test("Heading 1–3 styles become # to ###; the first heading is the title when dc:title is empty", async () => {
    const doc = await convertDocx(corpusFile("apache-poi/Styles.docx"), "Styles");
    expect(doc.text).toBe("# Heading1\n\n## Heading2\n\n### Heading3\n\nStandard");
    expect(doc.title).toBe("Heading1");
  });

  test("Word's Title style is a heading, and the title when dc:title is blank", async () => {
    const doc = await convertDocx(corpusFile("apache-poi/IllustrativeCases.docx"), "IllustrativeCases");
    expect(doc.title).toBe("(V) ILLUSTRATIVE CASES");
    expect(doc.text.startsWith("# (V) ILLUSTRATIVE CASES\n\nThese cases deal with the basic personal tax credit")).toBe(true);
  });

  test("non-Latin core properties", async () => {
    const doc = await convertDocx(corpusFile("apache-poi/MultipleBodyBug.docx"), "MultipleBodyBug");
    expect(doc.title).toBe("1,2-双(二苯基膦)乙烷");
  });
});

describe("convertDocx: generated", () => {
  test("a hyperlink whose relationship is missing keeps its text; the file is read (s20 hostile #2)", async () => {
    // It failed whole: "cannot read DOCX: undefined is not an object (evaluating 'value.replace')".
    const R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
    const body = `<w:p><w:r><w:t xml:space="preserve">before link </w:t></w:r><w:hyperlink ${R} r:id="rId9"><w:r><w:t>dangling link</w:t></w:r></w:hyperlink></w:p>`;
    expect((await convertDocx(docx(body), "d")).text).toBe("before link dangling link");
    // A link to an anchor in the document has no relationship either: its text is kept too.
    const anchored = `<w:p><w:hyperlink w:anchor="top"><w:r><w:t>to the top</w:t></w:r></w:hyperlink></w:p>`;
    expect((await convertDocx(docx(anchored), "d")).text).toBe("to the top");
    // A dangling relationship with an anchor, and a picture whose relationship is missing: "evaluating 'uri.indexOf'"
    // and "'uri.charAt'" (s20 retest P1).
    const both = `<w:p><w:hyperlink ${R} r:id="rId9" w:anchor="bm1"><w:r><w:t>anchored link</w:t></w:r></w:hyperlink></w:p>`;
    expect((await convertDocx(docx(both), "d")).text).toBe("anchored link");
    const A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"';
    const picture = `<w:p><w:r><w:t xml:space="preserve">a picture: </w:t></w:r><w:r><w:drawing><a:graphic ${A}><a:graphicData><a:blip ${R} r:embed="rId7"/></a:graphicData></a:graphic></w:drawing></w:r></w:p>`;
    expect((await convertDocx(docx(picture), "d")).text).toContain("a picture:");
  });

  test("headings, entities in core properties, a footnote-free body", async () => {
    const core = `<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"><dc:title>Fish &amp; Chips &#8212; a &lt;history&gt;</dc:title><dc:creator>J. Doe</dc:creator><dcterms:created>2020-01-02T03:04:05Z</dcterms:created></cp:coreProperties>`;
    const doc = await convertDocx(
      docx(paragraph("Origins", "Heading1") + paragraph("Batter", "Heading2") + paragraph("Flour and beer.")),
      "fallback",
    );
    expect(doc.text).toBe("# Origins\n\n## Batter\n\nFlour and beer.");
    expect(doc.title).toBe("Origins");
    const withCore = await convertDocx(docx(paragraph("Body"), core), "fallback");
    expect(withCore.title).toBe("Fish & Chips — a <history>");
    expect(withCore.metadata).toEqual({ author: "J. Doe", created: "2020-01-02T03:04:05Z" });
  });

  test("a title in core properties and no body: the title is its one heading, so it can be found (s9 new user #4)", async () => {
    const core = `<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Quarterly   plan</dc:title></cp:coreProperties>`;
    const doc = await convertDocx(docx("", core), "fallback");
    expect({ title: doc.title, text: doc.text }).toEqual({ title: "Quarterly plan", text: "# Quarterly plan\n" });
    expect(chunkDocument(doc).map((f) => f.text)).toEqual(["# Quarterly plan"]);
  });

  test("no heading, no core properties: the fallback title", async () => {
    const doc = await convertDocx(docx(paragraph("just text")), "fallback");
    expect(doc).toEqual({ title: "fallback", format: "markdown", text: "just text", firstLine: 1, metadata: {} });
  });
});

testShared("a reference to an entity XML does not define stays as text: the document is read, the entity never fetched", async () => {
  // ExternalEntityInText.docx declares `<!ENTITY testent SYSTEM "http://poi.apache.org/">` and uses `&testent;`.
  const doc = await convertDocx(corpusFile("apache-poi/ExternalEntityInText.docx"), "x");
  expect(doc.text).toBe('Here should not be the POI web site: "&testent;"');
});

describe("convertDocx: unreadable files", () => {
  testShared("password-protected: an OLE compound file holding an EncryptionInfo stream", async () => {
    const error = await failure(convertDocx(corpusFile("apache-poi/bug53475-password-is-pass.docx"), "x"));
    expect(error.message).toBe("encrypted DOCX (a password is needed to read it)");
  });

  test("an OLE compound file without an EncryptionInfo stream is a legacy .doc", async () => {
    const ole = (entry: string) => {
      const bytes = new Uint8Array(2048);
      bytes.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
      const name = `${entry}\0`;
      for (let i = 0; i < name.length; i++) bytes[1024 + i * 2] = name.charCodeAt(i); // a directory entry (UTF-16LE)
      bytes[1024 + 64] = name.length * 2;
      return bytes;
    };
    expect((await failure(convertDocx(ole("WordDocument"), "x"))).message).toBe("encrypted or legacy .doc format (not supported)");
    expect((await failure(convertDocx(ole("EncryptionInfo"), "x"))).message).toBe("encrypted DOCX (a password is needed to read it)");
  });

  testShared("truncated zip", async () => {
    const error = await failure(convertDocx(corpusFile("apache-poi/truncated62886.docx"), "x"));
    expect(error.message).toBe("not a valid DOCX (zip) file: invalid zip data");
  });

  test("an entry that unpacks to more than its header declares is damage, named as such (not JSZip's 'Bug :')", async () => {
    const bytes = docx(`<w:p><w:r><w:t>${"words ".repeat(2000)}</w:t></w:r></w:p>`);
    // Declare 1,000 bytes for word/document.xml, in its local header (size at +22) and central entry (+24).
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // The name's length is at +26 of a local header (the name at +30), at +28 of a central entry (the name at +46).
    const named = (at: number, lengthAt: number, nameAt: number) =>
      new TextDecoder().decode(bytes.subarray(at + nameAt, at + nameAt + view.getUint16(at + lengthAt, true))) === "word/document.xml";
    let patched = 0;
    for (let at = 0; at + 46 < bytes.length; at++) {
      const signature = view.getUint32(at, true);
      const sizeAt = signature === 0x04034b50 && named(at, 26, 30) ? 22 : signature === 0x02014b50 && named(at, 28, 46) ? 24 : 0;
      if (sizeAt) {
        view.setUint32(at + sizeAt, 1000, true);
        patched++;
      }
    }
    expect(patched).toBe(2);
    const error = await failure(convertDocx(bytes, "x"));
    expect(error.message).toBe("not a valid DOCX (zip) file: uncompressed data size mismatch");
  });

  test("not a zip at all", async () => {
    const error = await failure(convertDocx(new TextEncoder().encode("plain text, renamed"), "x"));
    expect(error.message).toBe("not a valid DOCX (zip) file: invalid zip data");
  });

  test("a zip without a Word document", async () => {
    const error = await failure(convertDocx(zipSync({ "hello.txt": strToU8("hi") }), "x"));
    expect(error.message.startsWith("cannot read DOCX: Could not find main document part")).toBe(true);
  });

  test("tables nested thousands deep are refused as nested too deep, not with mammoth's stack overflow (s12 retest)", async () => {
    for (const depth of [300, 3_000, 20_000]) {
      const cell = "<w:tbl><w:tr><w:tc>";
      const body = `${cell.repeat(depth)}<w:p><w:r><w:t>deep</w:t></w:r></w:p>${"</w:tc></w:tr></w:tbl>".repeat(depth)}`;
      expect((await failure(convertDocx(docx(body), "x"))).message).toBe("elements nested more than 1000 levels deep");
    }
  });

  testShared("a zip declaring gigabytes (zip bomb) is refused before inflating", async () => {
    const error = await failure(
      convertDocx(corpusFile("apache-poi/clusterfuzz-testcase-minimized-POIXWPFFuzzer-6442791109263360.docx"), "x"),
    );
    expect(error.message).toBe("DOCX declares 3474 MB uncompressed (over the 512 MB limit)");
  });

  test("readZip keeps only the wanted entries", () => {
    const entries = readZip(zipSync({ "a.txt": strToU8("a"), "b/c.txt": strToU8("c") }), (name) => name === "b/c.txt", "TEST");
    expect(Object.keys(entries)).toEqual(["b/c.txt"]);
  });
});

describe("readXml: mammoth's XML tree without a DOM", () => {
  // mammoth's own reader (xmldom's DOM, then copied), which convertDocx no longer calls: the tree must be the same,
  // but for the property children and revision ids mammoth never reads, here taken out of its tree afterwards.
  const namespaces = { "http://schemas.openxmlformats.org/wordprocessingml/2006/main": "w" };
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  type Tree = { name?: string; attributes?: Record<string, string>; children?: Tree[] };
  const unread = (tree: Tree): Tree => {
    if (!tree.children) return tree;
    const attributes = Object.fromEntries(Object.entries(tree.attributes ?? {}).filter(([name]) => !isRevisionId(name)));
    const kept = PROPERTIES.has(tree.name ?? "") ? tree.children.filter((child) => MAMMOTH_NAMES.has(child.name ?? "")) : tree.children;
    return { ...tree, attributes, children: kept.map(unread) };
  };
  const outcome = (read: Promise<unknown>, prune = (tree: Tree) => tree) =>
    read.then(
      (tree) => prune(JSON.parse(JSON.stringify(tree)) as Tree),
      (error: Error) => ({ error: error.message }),
    );
  const same = async (xml: string) =>
    expect(await outcome(readXml(xml, namespaces))).toEqual(await outcome(mammothReadString(xml, namespaces), unread));

  test("inside property elements only what mammoth's readers name is kept: the list is mammoth's own", () => {
    const source = readdirSync(MAMMOTH_DOCX)
      .filter((name) => name.endsWith(".js"))
      .map((name) => readFileSync(join(MAMMOTH_DOCX, name), "utf8"))
      .join("\n");
    const named = new Set(source.match(/"w:[A-Za-z]+"/g)?.map((name) => name.slice(1, -1)));
    expect([...named].sort()).toEqual([...MAMMOTH_NAMES].sort());
    expect(source).toContain('"w:" + noteType'); // the one name built at run time: w:footnote, w:endnote, never properties
    expect(source).not.toContain("rsid");
  });

  test("namespaces mapped or braced, attributes, entities, CDATA, comments, instructions and line ends as mammoth's reader", async () => {
    await same(
      `<?xml version="1.0"?>\r\n<w:document ${W} xmlns:x="urn:other" xmlns="urn:default"><w:body a="1" x:b="2" xml:lang="ru">` +
        `<w:t xml:space="preserve"> one &amp; two &#x41;&#66;</w:t><plain>text<![CDATA[dropped]]>after<!-- c -->end<?pi data?>last</plain>` +
        `<x:other>a\r\nb\rc</x:other><w:p/>tail</w:body></w:document>`,
    );
    // Property children mammoth never reads, however deep, and revision ids are left out; what follows them is not.
    await same(
      `<w:document ${W}><w:body><w:p w:rsidR="00AB12" w:rsidRDefault="00CD34"><w:pPr><w:pBdr><w:top w:val="single">` +
        `<w:x>text</w:x></w:top></w:pBdr><w:jc w:val="center"/><w:rPr><w:b/><w:szCs w:val="28"/></w:rPr></w:pPr>` +
        `<w:r><w:rPr><w:color w:val="FF0000"/><w:i/></w:rPr><w:t>kept</w:t></w:r></w:p></w:body></w:document>`,
    );
  });

  test("a part that does not parse fails with mammoth's message; an undefined entity stays text", async () => {
    await same(`<w:document ${W}><w:body><w:p></w:body></w:document>`);
    await same(`<w:document ${W}><w:body><w:p a="1" a="2"/></w:body></w:document>`);
    await same("");
    expect(JSON.stringify(await readXml(`<w:t ${W}>x &undefined; y</w:t>`, namespaces))).toContain("x &undefined; y");
  });

  testShared("every XML part of mammoth's own fixtures and of Word documents with comments and drawings", async () => {
    const fixtures = readdirSync(join(DOCX, "mammoth.js")).filter((name) => name.endsWith(".docx"));
    for (const path of [...fixtures.map((name) => `mammoth.js/${name}`), "apache-poi/testComment.docx", "apache-poi/drawing.docx"]) {
      const parts = readZip(corpusFile(path), (name) => name.endsWith(".xml") || name.endsWith(".rels"), "DOCX");
      for (const [name, bytes] of Object.entries(parts)) {
        expect({ name, same: await same(new TextDecoder().decode(bytes)).then(() => true) }).toEqual({ name, same: true });
      }
    }
  });
});

describeShared("corpus", () => {
  test("every DOCX converts or fails with a one-line FILE_UNREADABLE reason", async () => {
    const failures: Record<string, string> = {};
    let converted = 0;
    for (const source of readdirSync(DOCX)) {
      for (const name of readdirSync(join(DOCX, source)).filter((file) => file.endsWith(".docx"))) {
        try {
          await convertDocx(corpusFile(join(source, name)), name);
          converted++;
        } catch (error) {
          expect(error).toBeInstanceOf(ResearcherError);
          expect((error as ResearcherError).code).toBe("FILE_UNREADABLE");
          expect((error as ResearcherError).message).not.toContain("\n");
          failures[name] = (error as ResearcherError).message;
        }
      }
    }
    expect(converted).toBe(165);
    const fuzz = (id: string) => `clusterfuzz-testcase-minimized-${id}.docx`;
    expect(failures).toEqual({
      "bug53475-password-is-pass.docx": "encrypted DOCX (a password is needed to read it)",
      "bug53475-password-is-solrcell.docx": "encrypted DOCX (a password is needed to read it)",
      "truncated62886.docx": "not a valid DOCX (zip) file: invalid zip data",
      "crash-517626e815e0afa9decd0ebb6d1dee63fb9907dd.docx": "not a valid DOCX (zip) file: invalid zip data",
      [fuzz("POIXWPFFuzzer-5569740188549120")]: "not a valid DOCX (zip) file: invalid zip data",
      [fuzz("POIXWPFFuzzer-5564805011079168")]: "not a valid DOCX (zip) file: invalid zip data",
      [fuzz("POIXWPFFuzzer-6061520554164224")]: "not a valid DOCX (zip) file: invalid zip data",
      [fuzz("POIXWPFFuzzer-5313273089884160")]: "not a valid DOCX (zip) file: invalid zip data",
      [fuzz("POIXWPFFuzzer-4959857092198400")]: "not a valid DOCX (zip) file: Corrupted zip: missing 8665 bytes.",
      [fuzz("POIFuzzer-6709287337197568")]: "not a valid DOCX (zip) file: Corrupted zip: missing 2558 bytes.",
      [fuzz("POIXWPFFuzzer-6120975439364096")]: "not a valid DOCX (zip) file: Corrupted zip: missing 4384 bytes.",
      [fuzz("POIXWPFFuzzer-4791943399604224")]: "not a valid DOCX (zip) file: Corrupted zip: missing 45122 bytes.",
      [fuzz("POIXWPFFuzzer-5166796835258368")]: "not a valid DOCX (zip) file: Corrupted zip: missing 2189 bytes.",
      [fuzz("POIXWPFFuzzer-6442791109263360")]: "DOCX declares 3474 MB uncompressed (over the 512 MB limit)",
    });
  }, 120_000);
});

test("a DOCX whose document part is not XML says so in one clean line (s14 hostile #10: 'error: [xmldom error]\\t…')", async () => {
  const valid = docx("<w:p><w:r><w:t>x</w:t></w:r></w:p>");
  const { unzipSync } = await import("fflate");
  const parts = unzipSync(valid);
  parts["word/document.xml"] = strToU8("");
  const error = await failure(convertDocx(zipSync(parts), "empty"));
  expect(error.message).toStartWith("cannot read DOCX: XML: ");
  expect(error.message).not.toMatch(/error:|\t|\[xmldom/);
  // XML cut short: xmldom's warning, worded the same way (s14 retest).
  parts["word/document.xml"] = strToU8(
    '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p w:rsidR="00',
  );
  const cut = await failure(convertDocx(zipSync(parts), "cut"));
  expect(cut.message).toStartWith("cannot read DOCX: XML: ");
  expect(cut.message).not.toMatch(/warning:|Error:|\t|\[xmldom/);
});
