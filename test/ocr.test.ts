/** OCR of scanned PDF pages (issue 24): the shared scans' `.gt` text is the truth. OCR costs seconds a page: one each. */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { convertImage } from "../src/convert/image.ts";
import { NO_TEXT_LAYER_OCR_OFF, resolveLineBreaks } from "../src/convert/document.ts";
import { convertPdf } from "../src/convert/pdf.ts";
import { pageImage, pageText, type PdfPage } from "../src/convert/ocr.ts";
import { ConvertPool } from "../src/convert/pool.ts";
import { agreementScore } from "./agreement.ts";
import { bm25Repository, conversionFailure, ROOT, runCli, SHARED, tempDir, testShared, writeTree } from "./helpers.ts";
import { indexRepository, type IndexProgress } from "../src/index/indexer.ts";
import { progressBar } from "../src/serve/render.ts";
import {
  annotation,
  composedScanPages,
  SCANNED,
  scanOfPages,
  setAnnotations,
  scannedPage,
  scannedPages,
  scannedStrip,
  scannedTruth,
} from "./pdf-fixtures.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { copyFileSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { encode as encodePng } from "fast-png";
import {
  concatTransformationMatrix,
  degrees,
  drawObject,
  PDFDocument,
  PDFName,
  popGraphicsState,
  pushGraphicsState,
  StandardFonts,
} from "pdf-lib";
import { getRepository } from "../src/repos.ts";
import { search } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { watchBatchJson, watchBatchText } from "../src/serve/render.ts";
import { type WatchBatch, watchRepositories } from "../src/serve/watch.ts";

const SCAN = join(SHARED, SCANNED, "scan-01.pdf");

const OCR_TIMEOUT = 240_000; // one page is ~3 CPU-s, but the machine is shared

/** The title and first lines of scan-04's page 1 (its top `rows` rows, 150 dpi grey pixels; mirrored when asked). */
async function agingStrip(rows: number, mirrored = false) {
  const strip = await scannedStrip(join(SHARED, SCANNED, "scan-04.pdf"), rows);
  if (mirrored) {
    for (let y = 0; y < strip.height; y++) strip.data.subarray(y * strip.width, (y + 1) * strip.width).reverse();
  }
  return strip;
}

/** A PDF whose pages all paint one grey image object (its size at 150 dpi), each page turned by its /Rotate. */
async function stripPages(strip: { data: Uint8Array; width: number; height: number }, rotations: number[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const image = pdf.context.register(
    pdf.context.flateStream(strip.data, {
      Type: "XObject",
      Subtype: "Image",
      Width: strip.width,
      Height: strip.height,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    }),
  );
  const [width, height] = [(strip.width * 72) / 150, (strip.height * 72) / 150];
  for (const rotation of rotations) {
    const page = pdf.addPage([width, height]);
    page.setRotation(degrees(rotation));
    page.node.setXObject(PDFName.of("Scan"), image);
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(width, 0, 0, height, 0, 0), drawObject("Scan"), popGraphicsState());
  }
  return pdf.save();
}

describe("OCR", () => {
  testShared(
    "a scanned page is read, in reading order, as the page it is on",
    async () => {
      const doc = await convertPdf(await scannedPage(SCAN, 1), "scan");
      expect(doc.metadata).toMatchObject({ pages: 1, ocr_pages: 1 });
      expect(doc.text).toStartWith("<!-- page 1 -->\n\n## UNAWARENESS OF HYPOGLYCAEMIA"); // a title in capitals: a heading
      // Its title is that heading, set in capitals at the size of the text, not the file's name.
      expect(doc.title).toBe(
        "UNAWARENESS OF HYPOGLYCAEMIA AND INADEQUATE HYPOGLYCAEMIC COUNTERREGULATION: NO CAUSAL RELATION WITH DIABETIC AUTONOMIC NEUROPATHY",
      );
      expect(agreementScore(doc.text, scannedTruth(SCAN, 1))).toBeGreaterThanOrEqual(0.95);
    },
    OCR_TIMEOUT,
  );

  testShared(
    "a page scanned upside down or sideways is read turned the right way round (s25 P5)",
    async () => {
      // No orientation model is embedded: a page read with low confidence is read again turned, the best kept.
      const doc = await convertPdf(await stripPages(await agingStrip(420), [180, 270]), "turned");
      expect(doc.metadata).toMatchObject({ pages: 2, ocr_pages: 2 });
      expect(doc.metadata.garbled_pages).toBeUndefined();
      const pages = doc.text.split(/<!-- page \d+ -->/).slice(1);
      for (const page of pages) expect(page).toContain("UNDERSTANDING THE ODD SCIENCE OF AGING");
      expect(doc.warnings).toBeUndefined();
    },
    OCR_TIMEOUT,
  );

  testShared(
    "a scanned page OCR reads as gibberish whichever way it is turned keeps its text, listed as garbled (s25 P5)",
    async () => {
      // A scan mirrored (an overhead transparency scanned from behind): no turn reads it.
      const doc = await convertPdf(await stripPages(await agingStrip(420, true), [0]), "mirrored");
      expect(doc.text.length).toBeGreaterThan(100);
      expect(doc.metadata).toMatchObject({ ocr_pages: 1, garbled_pages: [1] });
      expect(doc.warnings).toEqual([
        "1 scanned page reads as gibberish whichever way it is turned (OCR is unsure of its words: search will miss them): page 1",
      ]);
    },
    OCR_TIMEOUT,
  );

  testShared(
    "a page image repeated on every page is recognised once per file (s25 hostile F4)",
    async () => {
      const strip = await agingStrip(300);
      await convertPdf(await stripPages(strip, [0]), "warm-up"); // the engine's start-up is not the page's
      let started = performance.now();
      const one = await convertPdf(await stripPages(strip, [0]), "one");
      const onePage = performance.now() - started;
      started = performance.now();
      const many = await convertPdf(await stripPages(strip, Array(20).fill(0)), "many");
      const manyPages = performance.now() - started;
      expect(many.metadata).toMatchObject({ pages: 20, ocr_pages: 20 });
      const pages = many.text.split(/<!-- page \d+ -->/).slice(1);
      expect(pages.map((page) => page.trim())).toEqual(Array(20).fill(one.text.replace("<!-- page 1 -->", "").trim()));
      // Read 20 times it took 20 pages' time; read once, that of one page and 19 decodings and hashes.
      expect(manyPages).toBeLessThan(onePage * 5);
    },
    OCR_TIMEOUT,
  );

  testShared(
    "a first run's note is searchable within seconds while the scan after it is still being read (s27 user U5)",
    async () => {
      // The note waited for the scan's OCR: a batch came due only when the next file was read.
      const { home, repo } = bm25Repository({ "a.md": "# Note\n\nzqmalaria note\n", "b.pdf": await scannedPages(SCAN, [1, 2]) });
      let finished = false;
      const run = indexRepository(home, repo).then(() => {
        finished = true;
      });
      const found = () =>
        search(home, { query: "zqmalaria", mode: "bm25" }).then(
          (answer) => answer.results.length > 0,
          () => false, // not indexed yet: nothing written
        );
      while (!finished && !(await found())) await Bun.sleep(100);
      expect(finished).toBe(false);
      await run;
    },
    OCR_TIMEOUT,
  );

  testShared("ocr: off leaves a scan unread, with a reason that says how to turn it on", async () => {
    const bytes = await scannedPage(SCAN, 1);
    expect((await conversionFailure(convertPdf(bytes, "scan", { ocr: "off" }))).message).toBe(NO_TEXT_LAYER_OCR_OFF);
    // convert --ocr off: the hint is the flag that turns it on (s9 new user: it named the repository's setting).
    const home = tempDir();
    const file = join(home, "scan.pdf");
    writeFileSync(file, bytes);
    const convert = runCli(["convert", file, "--ocr", "off"], { home });
    expect(convert).toMatchObject({
      code: 1,
      stderr: `error: ${NO_TEXT_LAYER_OCR_OFF}\nhint: \`researcher convert ${file} --ocr auto\` reads its scanned pages\n`,
    });
  });

  testShared("a language without a model fails the file naming the language and the folder", async () => {
    const bytes = await scannedPage(SCAN, 1);
    const folder = tempDir();
    const error = await conversionFailure(convertPdf(bytes, "scan", { ocrLanguages: ["eng", "deu"], ocrData: folder }));
    expect(error.message).toBe(`no OCR model for language "deu" in ${folder}`);
  });

  testShared("an eng model in ocr_data is used instead of the built-in one, and a bad one is named", async () => {
    // What the README offers for faster OCR (tessdata_fast's eng.traineddata in ocr_data) needs the folder's model to
    // win over the embedded one: a damaged one there must fail, naming the file, not be passed over silently.
    const bytes = await scannedPage(SCAN, 1);
    const folder = tempDir();
    const model = join(folder, "eng.traineddata");
    writeFileSync(model, "not a traineddata file");
    const error = await conversionFailure(convertPdf(bytes, "scan", { ocrData: folder }));
    expect(error.message).toBe(`Tesseract could not load the OCR model ${model}`);
  });

  testShared(
    "a model in ocr_data that is a FIFO, a device or a truncated .gz fails the file at once, naming the model (s12 hostile #3)",
    async () => {
      // The FIFO hung the index run with no time limit (and its writer lock held); /dev/zero grew it past 4 GB.
      const bytes = await scannedPage(SCAN, 1);
      const fifo = tempDir();
      Bun.spawnSync(["mkfifo", join(fifo, "eng.traineddata")]);
      const zero = tempDir();
      symlinkSync("/dev/zero", join(zero, "eng.traineddata"));
      const gz = tempDir();
      writeFileSync(join(gz, "eng.traineddata.gz"), gzipSync(new Uint8Array(100_000).fill(7)).subarray(0, 500));
      const reason = async (folder: string) => (await conversionFailure(convertPdf(bytes, "scan", { ocrData: folder }))).message;
      const started = performance.now();
      expect(await reason(fifo)).toBe(`cannot read the OCR model ${join(fifo, "eng.traineddata")}: not a regular file (named pipe)`);
      expect(await reason(zero)).toBe(`cannot read the OCR model ${join(zero, "eng.traineddata")}: not a regular file (character device)`);
      expect(await reason(gz)).toContain(`OCR model ${join(gz, "eng.traineddata.gz")}`); // not "unexpected end of file"
      expect(performance.now() - started).toBeLessThan(10_000);
    },
  );

  test(
    "a 40-page scan fits the memory budget: page images decoded and dropped page after page are not charged twice (s11 hostile #2)",
    async () => {
      // The budget charged a busy worker every page fault of its thread: a page freed and touched again faults again
      // without adding memory, and a 40-page scan whose process never held 0.4 GB failed the 900 MB budget.
      const pool = new ConvertPool({ size: 1, timeoutMs: 300_000, ocrPageTimeoutMs: 120_000, memoryBytes: 900 * 2 ** 20 });
      try {
        const doc = await pool.convert("scan40.pdf", await scanOfPages(40));
        expect(doc.metadata).toMatchObject({ pages: 40, ocr_pages: 40 });
        expect(doc.text).toContain("hostile scan");
      } finally {
        pool.close();
      }
    },
    OCR_TIMEOUT,
  );

  test(
    "a sparse page whose tilt is misread (four large lines measured at 10°) is read as it is, not lost",
    async () => {
      // ArabicCIDTrueType.pdf of pdf.js's tests rendered at 200 dpi (pdftoppm): straightened by the misread tilt,
      // Tesseract found nothing at all on it; upright, it reads lines (Latin guesses with the built-in English model).
      const bytes = readFileSync(join(ROOT, "test/fixtures/sparse-page.png"));
      const doc = await convertImage("png", bytes, "sparse", {});
      expect(doc.text.replace(/\s/g, "").length).toBeGreaterThan(20);
    },
    OCR_TIMEOUT,
  );

  test(
    "a sticky note on a scanned page leaves its OCR on, and the note, a highlight's comment and a stamp beside the scan are kept after the recognised text (s25 P0, P0b; s26 user F12)",
    async () => {
      // A note of 16+ characters counted as the page's text layer: OCR was skipped and the scan's text left the index;
      // and a page OCR read lost its notes and the short stamp its text layer holds outside the image.
      const pdf = await PDFDocument.load(await scanOfPages(1));
      const page = pdf.getPage(0);
      // and the comment on a highlight, which was not kept on any page (s26 user F12)
      setAnnotations(pdf, 0, [
        annotation(pdf, "Text", "Check this against the 2019 review"),
        annotation(pdf, "Highlight", "Quagga: the scanner misread this line"),
      ]);
      page.drawText("Downloaded 2022", { x: 20, y: 10, size: 7, font: await pdf.embedFont(StandardFonts.Helvetica) });
      const doc = await convertPdf(await pdf.save(), "scan");
      expect(doc.metadata).toMatchObject({ pages: 1, ocr_pages: 1 });
      expect(doc.text).toContain("hostile scan");
      expect(doc.text.indexOf("hostile scan")).toBeLessThan(doc.text.indexOf("Downloaded 2022"));
      expect(doc.text.indexOf("Downloaded 2022")).toBeLessThan(doc.text.indexOf("Check this against the 2019 review"));
      expect(doc.text).toEndWith("Check this against the 2019 review\n\nQuagga: the scanner misread this line\n");
    },
    OCR_TIMEOUT,
  );

  test(
    "a scanned page under a library's stamp of a line or two in small type is recognised, the stamp kept after it (s25 P0)",
    async () => {
      // 16 characters of text layer or more made the page a text page: its scan was never read.
      const pdf = await PDFDocument.load(await scanOfPages(1));
      const font = await pdf.embedFont(StandardFonts.Helvetica);
      const stamp = [
        "This content downloaded from 128.32.10.230 on Mon, 03 Jan 2022 12:00:00 UTC",
        "All use subject to https://about.jstor.org/terms",
      ];
      for (const [i, line] of stamp.entries()) pdf.getPage(0).drawText(line, { x: 20, y: 18 - i * 9, size: 7, font });
      const doc = await convertPdf(await pdf.save(), "scan");
      expect(doc.metadata).toMatchObject({ pages: 1, ocr_pages: 1 });
      expect(doc.text.indexOf("hostile scan")).toBeGreaterThan(0);
      expect(doc.text.indexOf("hostile scan")).toBeLessThan(doc.text.indexOf("about.jstor.org/terms"));
      // Lines of body text are a text page, read as such.
      const text = await PDFDocument.load(await scanOfPages(1));
      text.getPage(0).drawText("A line of body text set at the size of a text page.", {
        x: 20,
        y: 18,
        size: 11,
        font: await text.embedFont(StandardFonts.Helvetica),
      });
      expect((await convertPdf(await text.save(), "text")).metadata.ocr_pages).toBeUndefined();
      // Nor is a caption in small type under a figure, mid-page: a stamp is in the margin (s25b review F10).
      const figure = await PDFDocument.load(await scanOfPages(1));
      figure.getPage(0).drawText("Figure 3. Photograph of the archive reading room, 1962.", {
        x: 40,
        y: 380,
        size: 8,
        font: await figure.embedFont(StandardFonts.Helvetica),
      });
      expect((await convertPdf(await figure.save(), "figure")).metadata.ocr_pages).toBeUndefined();
    },
    OCR_TIMEOUT,
  );

  test(
    "a page painted as 2×2 tiles, as a 1-bit mask over a light background (MRC) or inside a scaled form is read whole (s25 P6)",
    async () => {
      // OCR took the page's largest image only: a quarter tile was too small to count ("no page images"), MRC's blank
      // background was read instead of its mask, and a form's /Matrix was not applied (the image measured 1 × 1 pt).
      const doc = await convertPdf(await composedScanPages(), "composed");
      expect(doc.metadata).toMatchObject({ pages: 3, ocr_pages: 3 });
      for (const page of doc.text.split(/<!-- page \d+ -->/).slice(1)) {
        expect(page).toContain("hostile scan");
        expect(page).toContain("appears here"); // "uniqueword1" reads "uniquewordl" from the mask
      }
    },
    OCR_TIMEOUT,
  );

  test("an image with transparency composed over another shows it where it is transparent, not white (s25 P6)", async () => {
    // A grey background page image under an RGBA one (a soft mask) whose right half is transparent.
    const pdf = await PDFDocument.create();
    const page = pdf.addPage([100, 100]);
    const grey = pdf.context.flateStream(new Uint8Array(50 * 50).fill(100), {
      Type: "XObject",
      Subtype: "Image",
      Width: 50,
      Height: 50,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    page.node.setXObject(PDFName.of("Bg"), pdf.context.register(grey));
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(100, 0, 0, 100, 0, 0), drawObject("Bg"), popGraphicsState());
    const rgba = new Uint8Array(50 * 50 * 4);
    for (let p = 0; p < 50 * 50; p++) rgba[p * 4 + 3] = p % 50 < 25 ? 255 : 0; // black left half, clear right half
    page.drawImage(await pdf.embedPng(encodePng({ width: 50, height: 50, data: rgba, channels: 4 })), {
      x: 0,
      y: 0,
      width: 100,
      height: 100,
    });
    const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
    const task = pdfjs.getDocument({ data: await pdf.save(), verbosity: 0 });
    const doc = await task.promise;
    try {
      const image = await pageImage((await doc.getPage(1)) as unknown as PdfPage);
      expect(image).not.toBeNull();
      const at = (x: number, y: number) => image!.gray[Math.floor(y * image!.height) * image!.width + Math.floor(x * image!.width)];
      expect([at(0.25, 0.5), at(0.75, 0.5)]).toEqual([0, 100]);
    } finally {
      await task.destroy();
    }
  });

  test("a page painting one large image many times makes it grey once (s25b review F2)", async () => {
    // A grey copy a placement: 40 paints of a 4000×4000 scan took the conversion past its memory limit (800 MB).
    const pdf = await PDFDocument.create();
    const page = pdf.addPage([612, 792]);
    const side = 4000;
    const pixels = new Uint8Array(side * side).fill(255);
    const image = pdf.context.flateStream(pixels, {
      Type: "XObject",
      Subtype: "Image",
      Width: side,
      Height: side,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    page.node.setXObject(PDFName.of("Im"), pdf.context.register(image));
    for (let i = 0; i < 40; i++)
      page.pushOperators(pushGraphicsState(), concatTransformationMatrix(612, 0, 0, 792, 0, 0), drawObject("Im"), popGraphicsState());
    const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
    const task = pdfjs.getDocument({ data: await pdf.save(), verbosity: 0 });
    const doc = await task.promise;
    try {
      Bun.gc(true);
      const before = process.memoryUsage().rss;
      let peak = before;
      const watch = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
      const composed = await pageImage((await doc.getPage(1)) as unknown as PdfPage);
      clearInterval(watch);
      peak = Math.max(peak, process.memoryUsage().rss);
      expect(composed).not.toBeNull();
      expect((peak - before) / 2 ** 20).toBeLessThan(300); // one grey copy is 16 MB; forty were 640
    } finally {
      await task.destroy();
    }
  });

  test("Tesseract's lines are joined into its paragraphs, hyphens rejoined, clearly taller lines and short paragraphs in capitals made headings", () => {
    // hOCR as Tesseract writes it: paragraphs, lines with their text size (x_size), words (entities escaped).
    const hocr = (paragraphs: [number, string][][]) =>
      paragraphs
        .map((lines, p) => {
          const spans = lines.map(([size, text], l) => {
            const words = text
              .split(" ")
              .map((word, w) => `<span class='ocrx_word' id='word_${p}_${l}_${w}' title='bbox 0 0 9 9; x_wconf 90'>${word}</span>`);
            return `<span class='ocr_line' id='line_${p}_${l}' title="bbox 0 0 9 9; baseline 0 -8; x_size ${size}; x_descenders 8; x_ascenders 10">\n ${words.join(" ")}\n</span>`;
          });
          return `<p class='ocr_par' id='par_1_${p}' lang='eng' title="bbox 0 0 9 9">\n${spans.join("\n")}\n</p>`;
        })
        .join("\n");
    const page = hocr([
      [
        [60, "A Study of"],
        [58, "<strong>Everything</strong>"],
      ],
      [
        [30, "The experi-"],
        [31, "ment worked &amp; well"],
        [30, "again."],
      ],
      [
        [30, "Second para-"],
        [32, "Graph here"],
      ],
      // An abstract's title set in capitals at the body's size (s23 user: a scan of several abstracts).
      [
        [31, "INCIDENCE AND TRENDS OF SEPSIS IN"],
        [30, "US HOSPITALS, 2009-2014"],
      ],
      [[30, "Importance Estimates from claims. USA."]],
      // A sentence in capitals is no title (s24 retest N5).
      [[30, "KEEP REFRIGERATED."]],
    ]);
    // A break at a hyphen is marked on the page and resolved over the whole document (resolveLineBreaks).
    expect(resolveLineBreaks(pageText(page))).toBe(
      "## A Study of Everything\n\nThe experiment worked & well again.\n\nSecond para-Graph here\n\n" +
        "## INCIDENCE AND TRENDS OF SEPSIS IN US HOSPITALS, 2009-2014\n\nImportance Estimates from claims. USA.\n\nKEEP REFRIGERATED.",
    );
  });

  testShared(
    "a page's OCR has its own time limit: the file's limit does not run meanwhile",
    async () => {
      const bytes = await scannedPage(SCAN, 1);
      // The file may take 10 s, the page's OCR far longer (tens of seconds on a shared machine): it is not cut short.
      const patient = new ConvertPool({ size: 1, timeoutMs: 10_000, ocrPageTimeoutMs: OCR_TIMEOUT });
      try {
        expect((await patient.convert("scan.pdf", bytes)).metadata).toMatchObject({ ocr_pages: 1 });
      } finally {
        patient.close();
      }
      const strict = new ConvertPool({ size: 1, timeoutMs: OCR_TIMEOUT, ocrPageTimeoutMs: 100 });
      try {
        const error = await conversionFailure(strict.convert("scan.pdf", bytes), "CONVERSION_STOPPED");
        // The page is named (s11 hostile #9: a 300-page scan said only "one page").
        expect(error.message).toBe("OCR of page 1 of 1 took longer than 0.1 s (index.ocr_page_timeout)");
      } finally {
        strict.close();
      }
    },
    OCR_TIMEOUT * 2,
  );

  testShared(
    "a page whose OCR runs past its limit is left out, not the file: its other pages are indexed, the run warns",
    async () => {
      // A scanned page, then a page with a text layer: the scan cannot be recognised within 0.1 s.
      const pdf = await PDFDocument.load(await scannedPage(SCAN, 1));
      const font = await pdf.embedFont(StandardFonts.Helvetica);
      pdf.addPage([612, 792]).drawText("A typed second page about lanterns and lighthouses.", { x: 72, y: 700, size: 12, font });
      const mixed = await pdf.save();
      const strict = new ConvertPool({ size: 1, timeoutMs: OCR_TIMEOUT, ocrPageTimeoutMs: 100 });
      try {
        const doc = await strict.convert("mixed.pdf", mixed);
        expect(doc.text).toContain("lanterns and lighthouses");
        expect(doc.metadata).toMatchObject({ pages: 2, ocr_failed_pages: [1] });
        expect(doc.metadata.ocr_pages).toBeUndefined();
        expect(doc.warnings).toEqual(["OCR could not read 1 page, left out (page 1: took longer than 0.1 s (index.ocr_page_timeout))"]);
        // Every page too slow: after three stopped pages the file fails, for the first one.
        const error = await conversionFailure(strict.convert("scan.pdf", await scannedPages(SCAN, [1, 1, 1, 1])), "CONVERSION_STOPPED");
        expect(error.message).toBe("OCR of page 4 of 4 took longer than 0.1 s (index.ocr_page_timeout), as did page 1, page 2, page 3");
      } finally {
        strict.close();
      }
      // An index run keeps the file and says what it left out.
      const home = tempDir();
      const docs = tempDir();
      writeTree(docs, { "mixed.pdf": mixed });
      const cli = (...args: string[]) => runCli(args, { home });
      expect(cli("repo", "add", "docs", docs).code).toBe(0);
      expect(cli("config", "set", "index.ocr_page_timeout", "0.1").code).toBe(0);
      const summary = JSON.parse(cli("index", "docs", "--no-embed", "--json").stdout);
      expect(summary).toMatchObject({ indexed: 1, failed: 0 });
      expect(summary.warnings).toEqual([
        "mixed.pdf: OCR could not read 1 page, left out (page 1: took longer than 0.1 s (index.ocr_page_timeout))",
      ]);
      expect(JSON.parse(cli("search", "lighthouses", "--json").stdout).results[0]).toMatchObject({ path: "mixed.pdf", page: 2 });
      // Status names the page; the next run leaves the file alone, a retry reads it again (s15 review #2: nothing but
      // a rebuild brought the page back, and status said nothing).
      expect(JSON.parse(cli("status", "docs", "--json").stdout).ocr_left_out).toEqual([{ path: "mixed.pdf", pages: [1] }]);
      expect(cli("status", "docs").stdout).toContain(
        "1 page OCR left out (mixed.pdf p1) (`researcher index docs --retry-failed` reads them again)",
      );
      expect(JSON.parse(cli("index", "docs", "--no-embed", "--json").stdout)).toMatchObject({ indexed: 0, skipped: 1 });
      expect(JSON.parse(cli("index", "docs", "--no-embed", "--retry-failed", "--json").stdout)).toMatchObject({
        indexed: 1,
        warnings: [expect.stringContaining("mixed.pdf: OCR could not read 1 page")],
      });
      // Another limit reads it again too, and now the page is in.
      expect(cli("config", "set", "index.ocr_page_timeout", String(OCR_TIMEOUT / 1000)).code).toBe(0);
      expect(JSON.parse(cli("index", "docs", "--no-embed", "--json").stdout)).toMatchObject({ indexed: 1, ocr_pages: 1 });
      const pages = JSON.parse(cli("search", "hypoglycaemic counterregulation", "--json").stdout).results.map(
        (r: { page: number }) => r.page,
      );
      expect(pages).toContain(1);
      expect(JSON.parse(cli("status", "docs", "--json").stdout).ocr_left_out).toEqual([]);
    },
    OCR_TIMEOUT * 2,
  );

  testShared(
    "a page past its limit restarts its file with the pages read before it read back, not recognised again",
    async () => {
      // Two quick scanned pages, then a mirrored one, a whole page of text, read four times (every turn of it is
      // tried): about 30 times a quick page's time on a quiet machine.
      const mirroredBytes = await stripPages(await agingStrip(1600, true), [0]);
      const pdf = await PDFDocument.load(await scanOfPages(2));
      const mirrored = await PDFDocument.load(mirroredBytes);
      pdf.addPage((await pdf.copyPages(mirrored, [0]))[0]!);
      const bytes = await pdf.save();
      // The limit is six times a quick page's time, measured here: a fixed 4 s stopped no page on a quiet machine,
      // and the geometric mean of the two times (about 2.4 each way) stopped a quick page under load.
      const probe = new ConvertPool({ size: 1, timeoutMs: OCR_TIMEOUT });
      let limit = 0;
      try {
        await probe.convert("warm-up.pdf", await scanOfPages(1));
        for (let i = 0; i < 2; i++) {
          const start = performance.now();
          await probe.convert("probe.pdf", await scanOfPages(1));
          limit = Math.max(limit, 6 * (performance.now() - start));
        }
      } finally {
        probe.close();
      }
      const pool = new ConvertPool({ size: 1, timeoutMs: OCR_TIMEOUT, ocrPageTimeoutMs: limit });
      try {
        await pool.convert("warm-up.pdf", await scanOfPages(1)); // the engine's start-up is no page's
        const started: number[] = [];
        const doc = await pool.convert("scan.pdf", bytes, { onOcrPage: (page) => started.push(page.page) });
        expect(started).toEqual([1, 2, 3]); // the second attempt recognised neither page 1 nor page 2 again
        expect(doc.metadata).toMatchObject({ pages: 3, ocr_pages: 2, ocr_failed_pages: [3] });
        expect(doc.text).toContain("hostile scan");
      } finally {
        pool.close();
      }
    },
    OCR_TIMEOUT,
  );

  testShared(
    "an index run recognises a scan once: search cites its page, the summary and status count its OCR pages",
    async () => {
      const home = tempDir();
      const docs = tempDir();
      writeTree(docs, { "scan.pdf": await scannedPage(SCAN, 1), "note.md": "# Note\n\nNothing scanned here.\n" });
      const cli = (...args: string[]) => runCli(args, { home });
      expect(cli("repo", "add", "docs", docs).code).toBe(0);
      expect(JSON.parse(cli("index", "docs", "--no-embed", "--json").stdout)).toMatchObject({ indexed: 2, ocr_pages: 1, failed: 0 });
      const found = JSON.parse(cli("search", "hypoglycaemic counterregulation", "--json", "-n", "1").stdout);
      expect(found.results[0]).toMatchObject({ path: "scan.pdf", page: 1 });
      expect(JSON.parse(cli("status", "docs", "--json").stdout)).toMatchObject({ documents: 2, ocr_pages: 1 });
      // The file is unchanged: the second run does not read it again.
      expect(JSON.parse(cli("index", "docs", "--no-embed", "--json").stdout)).toMatchObject({ indexed: 0, skipped: 2, ocr_pages: 0 });
      // `get` of the page reads the text the run recognised back from the index: no page can be recognised in
      // 0.1 s, so a get that ran OCR again would fail here.
      expect(cli("config", "set", "index.ocr_page_timeout", "0.1").code).toBe(0);
      const page = cli("get", "docs:scan.pdf:p1");
      expect(page.stderr).toBe("");
      expect(page.stdout).toContain("UNAWARENESS OF HYPOGLYCAEMIA");
      // A new chunk size re-chunks the scan from its kept text, and a copy under another name takes it too: no page
      // is recognised again (none could be, within 0.1 s).
      expect(cli("config", "set", "chunk.tokens", "120").code).toBe(0);
      copyFileSync(join(docs, "scan.pdf"), join(docs, "copy.pdf"));
      const rechunked = JSON.parse(cli("index", "docs", "--no-embed", "--json").stdout);
      expect(rechunked).toMatchObject({ indexed: 3, failed: 0, ocr_pages: 0 });
      const paths = JSON.parse(cli("search", "hypoglycaemic counterregulation", "--json", "--documents").stdout).results.map(
        (r: { path: string }) => r.path,
      );
      expect(paths.sort()).toEqual(["copy.pdf", "scan.pdf"]);
      // An edited file is the file as it is now: converted again (and here, past the OCR limit, not read).
      writeFileSync(join(docs, "scan.pdf"), await scannedPage(SCAN, 2));
      expect(cli("get", "docs:scan.pdf:p1").stderr).toContain("OCR of page 1 of 1 took longer than 0.1 s");
    },
    OCR_TIMEOUT,
  );

  test(
    "ocr: off takes a scan OCR read out of the index with its failure, and auto brings it back from its kept text (s25 P2)",
    async () => {
      // Turned off, the scan was reported failed while its OCR text stayed indexed, found and counted.
      const home = tempDir();
      const docs = tempDir();
      writeTree(docs, { "scan.pdf": await scanOfPages(1), "note.md": "# Note\n\nNothing scanned here.\n" });
      const cli = (...args: string[]) => runCli(args, { home });
      const run = () => JSON.parse(cli("index", "docs", "--json").stdout);
      const found = () => JSON.parse(cli("search", "hostile", "--json").stdout).results.length;
      expect(cli("repo", "add", "docs", docs, "--no-embed").code).toBe(0);
      expect(run()).toMatchObject({ indexed: 2, ocr_pages: 1 });
      expect(cli("config", "set", "repositories.docs.ocr", "off").code).toBe(0);
      expect(run()).toMatchObject({ removed: 1, failures: [{ path: "scan.pdf", reason: NO_TEXT_LAYER_OCR_OFF }] });
      expect(JSON.parse(cli("status", "docs", "--json").stdout)).toMatchObject({ documents: 1, ocr_pages: 0 });
      expect(found()).toBe(0);
      // Back on, its text is read back, not recognised again (no page could be, within 0.1 s).
      expect(cli("config", "set", "index.ocr_page_timeout", "0.1").code).toBe(0);
      expect(cli("config", "set", "repositories.docs.ocr", "auto").code).toBe(0);
      expect(run()).toMatchObject({ indexed: 1, ocr_pages: 0, failed: 0 });
      expect(found()).toBe(1);
    },
    OCR_TIMEOUT,
  );

  testShared(
    "a scan that leaves the index and comes back with the same bytes is read back, not recognised again (s20 user E)",
    async () => {
      // Excluded for a while, moved out and back: each was OCR'd again (~3 CPU-s a page).
      const home = tempDir();
      const docs = tempDir();
      const away = tempDir();
      writeTree(docs, { "scan.pdf": await scannedPage(SCAN, 1), "note.md": "# Note\n\nNothing scanned here.\n" });
      const cli = (...args: string[]) => runCli(args, { home });
      const run = () => JSON.parse(cli("index", "docs", "--json").stdout);
      expect(cli("repo", "add", "docs", docs, "--no-embed").code).toBe(0);
      expect(run()).toMatchObject({ indexed: 2, ocr_pages: 1 });
      // From here on no page can be recognised (0.1 s): a run that tried would leave the page out and say so.
      expect(cli("config", "set", "index.ocr_page_timeout", "0.1").code).toBe(0);
      const found = () => JSON.parse(cli("search", "hypoglycaemic counterregulation", "--json", "-n", "1").stdout).results[0];
      expect(cli("config", "set", "repositories.docs.exclude", "[scan.pdf]").code).toBe(0);
      expect(run()).toMatchObject({ removed: 1 });
      expect(cli("config", "set", "repositories.docs.exclude", "[]").code).toBe(0);
      expect(run()).toMatchObject({ indexed: 1, ocr_pages: 0, failed: 0, warnings: [] });
      expect(found()).toMatchObject({ path: "scan.pdf", page: 1 });
      renameSync(join(docs, "scan.pdf"), join(away, "scan.pdf"));
      expect(run()).toMatchObject({ removed: 1 });
      renameSync(join(away, "scan.pdf"), join(docs, "back.pdf"));
      expect(run()).toMatchObject({ indexed: 1, ocr_pages: 0, failed: 0, warnings: [] });
      expect(found()).toMatchObject({ path: "back.pdf", page: 1 });
      const readBack = () => {
        const listed = JSON.parse(cli("ls", "docs", "--json").stdout).find((d: { path: string }) => d.path === "back.pdf");
        return { pages: listed?.pages, p1: cli("get", "docs:back.pdf:p1").stdout.includes("UNAWARENESS OF HYPOGLYCAEMIA") };
      };
      expect(readBack()).toEqual({ pages: 1, p1: true });
      // A kept text whose metadata cell was damaged is not read back: it lost the pages, and the scan came back
      // with none (`get :p1` said it had no pages, s21 F8). It is recognised again, as a live one would be.
      const db = new Database(Store.dbPath(getRepository(home, "docs").dir));
      db.run("UPDATE documents SET metadata = '{damaged' WHERE path = 'back.pdf'");
      db.close();
      renameSync(join(docs, "back.pdf"), join(away, "scan.pdf"));
      expect(run()).toMatchObject({ removed: 1 });
      renameSync(join(away, "scan.pdf"), join(docs, "back.pdf"));
      expect(cli("config", "set", "index.ocr_page_timeout", String(OCR_TIMEOUT / 1000)).code).toBe(0);
      expect(run()).toMatchObject({ indexed: 1, ocr_pages: 1, failed: 0, warnings: [] });
      expect(readBack()).toEqual({ pages: 1, p1: true });
      // `remove` is "drop this": no text of it is kept, and indexed again it is recognised again (here past the
      // limit, so the file fails: s21 F10).
      expect(cli("config", "set", "index.ocr_page_timeout", "0.1").code).toBe(0);
      expect(cli("remove", "docs", "back.pdf").code).toBe(0);
      expect(run()).toMatchObject({
        indexed: 0,
        ocr_pages: 0,
        failures: [{ path: "back.pdf", reason: "OCR of page 1 of 1 took longer than 0.1 s (index.ocr_page_timeout)" }],
      });
    },
    OCR_TIMEOUT * 2,
  );

  testShared(
    "a scan added singly (MCP add_to_index, watch) reports its OCR pages as a full run does",
    async () => {
      const home = tempDir();
      const docs = tempDir();
      writeTree(docs, { "note.md": "# Note\n\nNothing scanned here.\n" });
      const cli = (...args: string[]) => runCli(args, { home });
      expect(cli("repo", "add", "docs", docs, "--no-embed").code).toBe(0);
      expect(cli("index", "docs", "--json").code).toBe(0);

      writeFileSync(join(docs, "scan.pdf"), await scannedPage(SCAN, 1));
      const env = { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home };
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [join(ROOT, "src/main.ts"), "serve"],
        env,
        cwd: home,
        stderr: "pipe",
      });
      const client = new Client({ name: "test", version: "1.0.0" });
      await client.connect(transport);
      try {
        const added = (await client.callTool({ name: "add_to_index", arguments: { repository: "docs", file_path: "scan.pdf" } })) as {
          content: { text: string }[];
          structuredContent: Record<string, unknown>;
        };
        expect(added.structuredContent).toMatchObject({ indexed: 1, ocr_pages: 1 });
        expect(added.content[0]!.text).toBe("docs:scan.pdf: indexed (1 page read by OCR)");
      } finally {
        await client.close();
      }
      expect(JSON.parse(cli("status", "docs", "--json").stdout)).toMatchObject({ documents: 2, ocr_pages: 1 });

      const batches: WatchBatch[] = [];
      const handle = watchRepositories(home, [getRepository(home, "docs")], { debounceMs: 50, onBatch: (b) => batches.push(b) });
      try {
        await handle.ready;
        writeFileSync(join(docs, "again.pdf"), await scannedPage(SCAN, 2));
        const deadline = Date.now() + OCR_TIMEOUT;
        while (!batches.some((b) => b.paths.includes("again.pdf")) && Date.now() < deadline) await Bun.sleep(100);
      } finally {
        await handle.close();
      }
      const batch = batches.find((b) => b.paths.includes("again.pdf"))!;
      expect(batch).toMatchObject({ indexed: 1, ocr_pages: 1, failed: 0 });
      expect(JSON.parse(watchBatchJson(batch))).toMatchObject({ paths: ["again.pdf"], indexed: 1, ocr_pages: 1 });
      expect(watchBatchText(batch)).toContain("docs: again.pdf: 1 indexed (1 page read by OCR), 0 removed, 0 failed");
      expect(JSON.parse(cli("status", "docs", "--json").stdout)).toMatchObject({ documents: 3, ocr_pages: 2 });
    },
    OCR_TIMEOUT * 2,
  );

  testShared(
    "an index run's progress names each page OCR reads, of the document's pages, and the progress line shows it",
    async () => {
      // Two scanned pages and a Markdown note: each page is announced as its OCR starts, with the page count.
      const { home, repo } = bm25Repository({ "scan.pdf": await scannedPages(SCAN, [1, 2]), "note.md": "# Note\n\nPlain.\n" });
      const events: IndexProgress[] = [];
      const summary = await indexRepository(home, repo, { onProgress: (p) => events.push(p) });
      expect(summary).toMatchObject({ indexed: 2, ocr_pages: 2, failed: 0 });
      const ocr = events.filter((p) => p.ocr);
      expect(ocr.map(({ phase, path, total, ocr }) => ({ phase, path, total, ocr }))).toEqual([
        { phase: "index", path: "scan.pdf", total: 2, ocr: { page: 1, pages: 2 } },
        { phase: "index", path: "scan.pdf", total: 2, ocr: { page: 2, pages: 2 } },
      ]);
      const written: string[] = [];
      const bar = progressBar(
        { isTTY: true, redraws: true, written: false, write: (text) => written.push(text), columns: () => 120 },
        "docs",
      );
      bar.update(ocr[1]!);
      expect(written.join("")).toEndWith("scan.pdf: OCR page 2 of 2");
    },
    OCR_TIMEOUT * 2,
  );
});
