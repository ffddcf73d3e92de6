/** PDFs written by pdf-lib for tests and benchmarks: known text at known places on known pages. */
import { readFileSync } from "node:fs";
import { encode as encodePng } from "fast-png";
import { join } from "node:path";
import {
  concatTransformationMatrix,
  drawObject,
  PDFDict,
  PDFDocument,
  PDFName,
  type PDFPage,
  PDFRawStream,
  type PDFRef,
  PDFString,
  popGraphicsState,
  pushGraphicsState,
  StandardFonts,
} from "pdf-lib";

export interface PdfLine {
  text: string;
  x?: number;
  /** Distance from the top of the page. */
  top: number;
  size?: number;
}

export interface PdfOptions {
  title?: string;
  author?: string;
  created?: Date;
  /** Pages with no text at all, only a drawn shape (what a scan without OCR looks like to a text extractor). */
  imageOnly?: boolean;
  /** Pages showing only a white page-sized image: a scan of an empty sheet, in which OCR finds no text. */
  blankScan?: boolean;
}

const HEIGHT = 792;

export async function writePdf(pages: PdfLine[][], options: PdfOptions = {}): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.TimesRoman);
  if (options.title) pdf.setTitle(options.title);
  if (options.author) pdf.setAuthor(options.author);
  if (options.created) pdf.setCreationDate(options.created);
  for (const lines of pages) {
    const page = pdf.addPage([612, HEIGHT]);
    if (options.imageOnly) page.drawRectangle({ x: 50, y: 50, width: 500, height: 600 });
    if (options.blankScan) drawBlankImage(pdf, page);
    for (const line of lines) page.drawText(line.text, { x: line.x ?? 72, y: HEIGHT - line.top, size: line.size ?? 11, font });
  }
  return pdf.save();
}

function drawBlankImage(pdf: PDFDocument, page: PDFPage): void {
  const side = 300;
  const image = pdf.context.flateStream(new Uint8Array(side * side).fill(255), {
    Type: "XObject",
    Subtype: "Image",
    Width: side,
    Height: side,
    ColorSpace: "DeviceGray",
    BitsPerComponent: 8,
  });
  page.node.setXObject(PDFName.of("Blank"), pdf.context.register(image));
  const { width, height } = page.getSize();
  page.pushOperators(pushGraphicsState(), concatTransformationMatrix(width, 0, 0, height, 0, 0), drawObject("Blank"), popGraphicsState());
}

/**
 * A reader's annotation over a band of a page, as a PDF reader saves a highlight, a shape or a drawing: `fields`
 * (pdf-lib values by key) add to or override its own, such as `Contents`, the comment typed on it. It carries the
 * geometry of every kind (quads, ink strokes, vertices, a line's ends): each subtype reads its own.
 */
export function annotation(pdf: PDFDocument, subtype: string, comment?: string, fields: Record<string, unknown> = {}): PDFRef {
  const [left, bottom, right, top] = [50, 600, 300, 620];
  const geometry = {
    Rect: [left, bottom, right, top],
    QuadPoints: [left, top, right, top, left, bottom, right, bottom],
    InkList: [[left, bottom, right, top]],
    Vertices: [left, bottom, right, bottom, right, top],
    L: [left, bottom, right, top],
  };
  const contents = comment === undefined ? {} : { Contents: PDFString.of(comment) };
  return pdf.context.register(pdf.context.obj({ Type: "Annot", Subtype: subtype, ...geometry, C: [1, 1, 0], ...contents, ...fields }));
}

/** Makes `annotations` the annotations of page `index`. */
export function setAnnotations(pdf: PDFDocument, index: number, annotations: PDFRef[]): void {
  pdf.getPage(index).node.set(PDFName.of("Annots"), pdf.context.obj(annotations));
}

/** Body text wrapped at `width` characters into lines 14 points apart, starting at `top`. */
export function paragraph(text: string, top: number, options: { x?: number; width?: number } = {}): PdfLine[] {
  const lines: PdfLine[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > (options.width ?? 80)) {
      lines.push({ text: line, x: options.x, top: top + lines.length * 14 });
      line = "";
    }
    line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push({ text: line, x: options.x, top: top + lines.length * 14 });
  return lines;
}

/** The shared corpus's scanned PDFs (150 dpi grey JPEG pages, slightly tilted), each with its true text beside it. */
export const SCANNED = "data/corpus/scanned";

/** One page of a scanned PDF as a PDF of its own (OCR costs seconds a page: tests read one). */
export function scannedPage(file: string, page: number): Promise<Uint8Array> {
  return scannedPages(file, [page]);
}

/** Some pages of a scanned PDF, in this order, as a PDF of their own. */
export async function scannedPages(file: string, pages: number[]): Promise<Uint8Array> {
  const source = await PDFDocument.load(readFileSync(file));
  const pdf = await PDFDocument.create();
  for (const copy of await pdf.copyPages(
    source,
    pages.map((page) => page - 1),
  ))
    pdf.addPage(copy);
  return pdf.save();
}

/** The true text of page `page` of a scanned PDF (`<file>.gt`: pages separated by runs of form feeds). */
export function scannedTruth(file: string, page: number): string {
  return (
    readFileSync(`${file}.gt`, "utf8")
      .split(/\f+/)
      .filter((p) => p.trim())[page - 1] ?? ""
  );
}

/** The JPEG a scanned PDF's page `page` shows (the shared scans are one DCT-encoded image per page). */
export async function scannedJpeg(file: string, page: number): Promise<Uint8Array> {
  const pdf = await PDFDocument.load(readFileSync(file));
  const resources = pdf.getPage(page - 1).node.Resources();
  const xobjects = resources?.lookup(PDFName.of("XObject"), PDFDict);
  for (const [, ref] of xobjects?.entries() ?? []) {
    const stream = pdf.context.lookup(ref);
    if (stream instanceof PDFRawStream && String(stream.dict.get(PDFName.of("Filter"))) === "/DCTDecode") return stream.contents;
  }
  throw new Error(`${file} p${page} shows no JPEG`);
}

/** Page 1 of a scanned PDF as grey pixels, cut to its first `rows` rows (a title: OCR of a strip is quick). */
export async function scannedStrip(file: string, rows: number) {
  const { JpegImage } = await import("pdfjs-dist/image_decoders/pdf.image_decoders.mjs");
  const jpeg = new JpegImage();
  jpeg.parse(await scannedJpeg(file, 1));
  const rgb = jpeg.getData({ width: jpeg.width, height: jpeg.height, forceRGB: true });
  const height = Math.min(rows, jpeg.height);
  const gray = new Uint8Array(jpeg.width * height);
  for (let p = 0; p < gray.length; p++) gray[p] = rgb[p * 3]!;
  return { data: gray, width: jpeg.width, height };
}

/**
 * A scan of `count` pages, each its own JPEG image object as a scanner writes them (a near-empty 200 dpi page). Past
 * the first, each page carries a speck of its own (a 2×2 image, placed by its number), as a scanner's pages differ:
 * identical pages are recognised once (a repeated page image), and tests of a long conversion need every page read.
 * `first` numbers the first page's speck: scans numbered apart paint no page alike.
 */
export async function scanOfPages(count: number, first = 0): Promise<Uint8Array> {
  const jpeg = readFileSync(join(import.meta.dir, "fixtures/scan-page.jpg"));
  const pdf = await PDFDocument.create();
  const speck = await pdf.embedPng(encodePng({ width: 2, height: 2, data: new Uint8Array(4), channels: 1 }));
  for (let i = first; i < first + count; i++) {
    const image = await pdf.embedJpg(jpeg);
    const page = pdf.addPage([612, 792]);
    page.drawImage(image, { x: 0, y: 0, width: 612, height: 792 });
    if (i > 0) page.drawImage(speck, { x: 20 + (i % 50) * 11, y: 20 + Math.floor(i / 50) * 11, width: 4, height: 4 });
  }
  return pdf.save();
}

/**
 * A PDF of `n` pages with neither text nor images, written by hand: each page names the same empty content stream
 * and a font, as pages without text share them (pdf-lib's empty pages hold no resources at all).
 */
export function blankPages(n: number): Uint8Array {
  const objects = new Map<number, string>([
    [1, "<</Type/Catalog/Pages 2 0 R>>"],
    [3, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"],
    [4, "<</Length 0>>stream\n\nendstream"],
  ]);
  const kids: string[] = [];
  for (let i = 0; i < n; i++) {
    objects.set(5 + i, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Resources<</Font<</F1 3 0 R>>>>/Contents 4 0 R>>");
    kids.push(`${5 + i} 0 R`);
  }
  objects.set(2, `<</Type/Pages/Count ${n}/Kids[${kids.join(" ")}]>>`);
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (const id of [...objects.keys()].sort((a, b) => a - b)) {
    offsets[id] = out.length;
    out += `${id} 0 obj\n${objects.get(id)}\nendobj\n`;
  }
  const size = objects.size + 1;
  const xref = out.length;
  out += `xref\n0 ${size}\n0000000000 65535 f \n`;
  for (let id = 1; id < size; id++) out += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  return new TextEncoder().encode(`${out}trailer\n<</Size ${size}/Root 1 0 R>>\nstartxref\n${xref}\n%%EOF\n`);
}

/**
 * Three pages showing the top of `scanOfPages`' page ("Page number 1 of the hostile scan", "uniqueword1 appears
 * here"), each painted otherwise than as one image: in 2×2 tiles; as a 1-bit image mask over a light background at
 * half the resolution (MRC, as archive.org and FineReader compress scanned books); inside a Form XObject whose
 * /Matrix scales its unit square to the page.
 */
export async function composedScanPages(): Promise<Uint8Array> {
  const { JpegImage } = await import("pdfjs-dist/image_decoders/pdf.image_decoders.mjs");
  const jpeg = new JpegImage();
  jpeg.parse(readFileSync(join(import.meta.dir, "fixtures/scan-page.jpg")));
  const rgb = jpeg.getData({ width: jpeg.width, height: jpeg.height, forceRGB: true });
  const [width, height] = [jpeg.width, 700]; // 200 dpi: 612 × 252 points
  const gray = new Uint8Array(width * height);
  for (let p = 0; p < gray.length; p++) gray[p] = rgb[p * 3]!;
  const pdf = await PDFDocument.create();
  const [pageWidth, pageHeight] = [(width * 72) / 200, (height * 72) / 200];
  const image = (pixels: Uint8Array, w: number, h: number, mask = false) =>
    pdf.context.register(
      pdf.context.flateStream(pixels, {
        Type: "XObject",
        Subtype: "Image",
        Width: w,
        Height: h,
        ...(mask ? { ImageMask: true, BitsPerComponent: 1 } : { ColorSpace: "DeviceGray", BitsPerComponent: 8 }),
      }),
    );
  const crop = (x: number, y: number, w: number, h: number) => {
    const out = new Uint8Array(w * h);
    for (let row = 0; row < h; row++) out.set(gray.subarray((y + row) * width + x, (y + row) * width + x + w), row * w);
    return out;
  };
  const paint = (page: PDFPage, name: string, ref: ReturnType<typeof image>, x: number, y: number, w: number, h: number) => {
    page.node.setXObject(PDFName.of(name), ref);
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(w, 0, 0, h, x, y), drawObject(name), popGraphicsState());
  };
  // Tiles: each a quarter of the page, none enough alone to count as a scan.
  const tiles = pdf.addPage([pageWidth, pageHeight]);
  const [halfWidth, halfHeight] = [width / 2, height / 2];
  for (const [column, row] of [
    [0, 0],
    [1, 0],
    [0, 1],
    [1, 1],
  ] as const) {
    const ref = image(crop(column * halfWidth, row * halfHeight, halfWidth, halfHeight), halfWidth, halfHeight);
    const [x, y] = [(column * pageWidth) / 2, row ? 0 : pageHeight / 2];
    paint(tiles, `T${column}${row}`, ref, x, y, pageWidth / 2, pageHeight / 2);
  }
  // MRC: a light background, then the text as a mask (a 0 bit is painted).
  const mrc = pdf.addPage([pageWidth, pageHeight]);
  paint(mrc, "Bg", image(new Uint8Array((width / 2) * (height / 2)).fill(235), width / 2, height / 2), 0, 0, pageWidth, pageHeight);
  const rowBytes = (width + 7) >> 3;
  const bits = new Uint8Array(rowBytes * height).fill(255);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) if (gray[y * width + x]! < 140) bits[y * rowBytes + (x >> 3)]! &= ~(0x80 >> (x & 7));
  }
  paint(mrc, "Fg", image(bits, width, height, true), 0, 0, pageWidth, pageHeight);
  // A form whose matrix places its 1 × 1 content on the page.
  const formPage = pdf.addPage([pageWidth, pageHeight]);
  const form = pdf.context.stream("/Im Do", {
    Type: "XObject",
    Subtype: "Form",
    BBox: [0, 0, 1, 1],
    Matrix: [pageWidth, 0, 0, pageHeight, 0, 0],
    Resources: { XObject: { Im: image(gray, width, height) } },
  });
  formPage.node.setXObject(PDFName.of("Fm"), pdf.context.register(form));
  formPage.pushOperators(pushGraphicsState(), drawObject("Fm"), popGraphicsState());
  return pdf.save();
}
