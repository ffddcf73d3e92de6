/**
 * PDF → markdown with Mozilla's pdf.js, page by page. Each page opens with a page marker line so every fragment
 * knows its page; lines are rebuilt from positioned text items, paragraphs from vertical gaps, headings from text
 * noticeably larger than the page's body text. Words hyphenated at line ends are rejoined and ligatures folded
 * (NFKC). Reading order is pdf.js's content-stream order, which for typeset two-column papers is column by column.
 */
import {
  checkExpansion,
  hyphenatedAt,
  isHeading,
  joinLine,
  literalText,
  median,
  NO_TEXT_LAYER_OCR_OFF,
  pageMarker,
  resolveLineBreaks,
  resolveTitle,
  type ConvertedDocument,
  type ConvertOptions,
  type PageReading,
} from "./document.ts";
import { ResearcherError } from "../errors.ts";
import { ocrImages, pageImage, type PdfPage, poorScanWarning, recognise, type UnreadPage, unreadPages } from "./ocr.ts";
import { pageList } from "../text.ts";
import { readCMap, readWasm } from "./pdf-data.ts";
import { openedWithEmptyOwnerPassword } from "./pdf-password.ts";
import { drawnItems, type OperatorList } from "./pdf-drawn.ts";
import { glyphNameText } from "./pdf-glyphs.ts";
import { largest, smallest } from "../lists.ts";

type PdfJs = typeof import("pdfjs-dist/legacy/build/pdf.mjs");

interface TextItem {
  str: string;
  /** pdf.js gives each item's text in logical order, and says which way it reads. */
  dir: "ltr" | "rtl" | "ttb";
  hasEOL: boolean;
  transform: number[];
  width: number;
  height: number;
  fontName?: string;
}

/** What is read of a pdf.js page: its text items come with marked-content entries, which are skipped. */
interface TextPage {
  getTextContent(options?: { disableNormalization?: boolean }): Promise<{ items: object[]; styles: Record<string, FontStyle> }>;
  getOperatorList(options?: { annotationMode?: number }): Promise<OperatorList>;
  commonObjs: { has(id: string): boolean; get(id: string): unknown };
  cleanup(): void;
}

interface FontStyle {
  ascent?: number;
}

/** What pdf.js shares of a font (with getDocument's `fontExtraProperties`) once it has read a page's operators. */
interface PdfFont {
  name?: string;
  /** A font the PDF names without embedding it. */
  missingFile?: boolean;
  composite?: boolean;
  /** Character code → glyph name, as the PDF's font dictionary changes the font's encoding. */
  differences?: Map<number, string>;
  fontMatrix?: number[];
  /** Character code → the character pdf.js draws for it. */
  toFontChar?: Map<number, number>;
}

interface Line {
  text: string;
  /** Baseline y in PDF units (grows upwards). */
  y: number;
  size: number;
  /** The font all its letters are set in (pdf.js's id of the page's font), if one. */
  font?: string;
  /** The page's body font: the one most of its letters are set in. */
  bodyFont?: string;
  /** Where an upright left-to-right line's text starts and ends along x; none for turned or right-to-left lines. */
  extent?: { left: number; right: number };
}

export const NO_TEXT_LAYER = "no text layer, and OCR found no text in its pages";
export const NO_PAGE_IMAGES = "no text layer and no page images to recognise";

/** Fewer visible characters than this on a page and it is treated as a scan (page numbers, stray marks). */
const OCR_BELOW_CHARS = 16;

/**
 * Whether a page's text is no more than a stamp: a few lines of small type, as a library or a document supplier
 * prints on every page of a scan ("This content downloaded from … All use subject to …"), a fax header, a received
 * stamp. Such a page's images are recognised when they cover it (`pageImage`), and the stamp is kept after their text.
 * A stamp sits in the page's top or bottom margin: a caption under a figure, in the middle of a born-digital page,
 * sent that page to OCR, and what OCR made of the photograph led its text (s25b review F10).
 */
function onlyStamp(lines: Line[], view: number[]): boolean {
  const [bottom, top] = [view[1]!, view[3]!];
  const margin = (top - bottom) * STAMP_MARGIN;
  const inMargin = (line: Line) => line.y <= bottom + margin || line.y >= top - margin;
  return lines.length <= 3 && lines.every((line) => line.size <= 9 && inMargin(line));
}

/** The share of a page's height at its top and at its bottom where a stamp is printed. */
const STAMP_MARGIN = 0.12;

let loading: Promise<PdfJs> | undefined;

/** pdf.js with its worker code run in this thread: the conversion pool already gives each file its own thread. */
function loadPdfJs(): Promise<PdfJs> {
  loading ??= (async () => {
    keepNavigator();
    // @ts-expect-error: the worker module ships no type declarations; only its presence matters.
    const worker = await import("pdfjs-dist/legacy/build/pdf.worker.mjs");
    (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker;
    return import("pdfjs-dist/legacy/build/pdf.mjs");
  })();
  return loading;
}

/**
 * pdf.js, loaded under Node or Bun, replaces `globalThis.navigator` with a stub of its own when the navigator has no
 * `language`, as Bun's has not. The stub has no `hardwareConcurrency`, from which Bun's `os.availableParallelism()`
 * reads: it then returns undefined, and a conversion pool sized by it later in the same process (an index run after a
 * PDF was converted in the main thread) got a size of NaN and ran no conversion at all. The language pdf.js wants is
 * given to the real navigator, so it is left alone.
 */
function keepNavigator(): void {
  const navigator = globalThis.navigator as { language?: string } | undefined;
  if (navigator && !navigator.language) Object.defineProperty(navigator, "language", { value: "en-US", configurable: true });
}

export async function convertPdf(bytes: Uint8Array, fallbackTitle: string, options: ConvertOptions = {}): Promise<ConvertedDocument> {
  const pdfjs = await loadPdfJs();
  const { task, doc } = await openPdf(pdfjs, bytes);
  try {
    const info = await pdfInfo(doc);
    const parts: string[] = [];
    let characters = 0;
    let length = 0; // of the text so far, against the file's size
    let ocrPages = 0;
    let imagePages = 0; // pages OCR read (whether it found text or not): none, and OCR never ran
    let prominent: string | undefined;
    const unread: UnreadPage[] = []; // pages the OCR engine failed on or was stopped on, and why
    const garbled: number[] = []; // pages whose text layer reads as symbols (garbledText)
    const poor: number[] = []; // pages OCR reads as gibberish whichever way they are turned (poorlyRead)
    const readings = new Map<string, PageReading>(); // what OCR read, by page pixels: a repeated image is read once
    const mode = options.ocr ?? "auto";
    for (let n = 1; n <= doc.numPages; n++) {
      const lines = await pageLines(doc, n);
      const notes = await pageAnnotations(doc, n);
      // Only the page's own text says whether it has a text layer: a sticky note or a form value on a scanned page
      // turned its OCR off, and the page's text left the index; so did a library's stamp (s25 P0).
      const layer = visibleChars(lines.map((line) => line.text).join(""));
      const wanted = mode === "always" || (mode === "auto" && (layer < OCR_BELOW_CHARS || onlyStamp(lines, (await doc.getPage(n)).view)));
      const read = wanted ? await recognisePage(doc, n, options, readings, () => imagePages++) : {};
      const recognised = read.text;
      if (read.failure) unread.push({ page: n, reason: read.failure });
      if (read.resumed) imagePages++; // its image was read before: it is not looked for again
      if (recognised) ocrPages++;
      if (n === 1) prominent = recognised ? ocrTitle(recognised) : largestLines(lines.slice(0, 12), median(lines.map((l) => l.size)));
      // A recognised page keeps what OCR could not see: its notes and form values, and the lines of its text layer
      // that are not in the image (a library's download stamp), as a text page gets its notes after its text (s25 P0b).
      const own = recognised ? pageMarkdown(linesNotRead(lines, recognised)) : pageMarkdown(lines);
      const text = [recognised, own, ...notes].filter(Boolean).join("\n\n");
      characters += visibleChars(text);
      if (read.poor) poor.push(n);
      else if (!recognised && garbledText(text)) garbled.push(n);
      parts.push(pageMarker(n), "", text, "");
      length += text.length;
      checkExpansion(length, bytes.length); // now, not after a page tree naming one page 5,000 times was read 5,000 times
      await cleanup(doc, n);
    }
    if (characters === 0 && doc.numPages > 0) {
      const why =
        mode === "off"
          ? NO_TEXT_LAYER_OCR_OFF
          : !imagePages
            ? NO_PAGE_IMAGES
            : unread[0]
              ? `no text layer, and OCR failed (page ${unread[0].page}: ${unread[0].reason})`
              : NO_TEXT_LAYER;
      throw new ResearcherError("FILE_UNREADABLE", why);
    }
    const found = prominent && prominent.length <= 200 && !isJunkTitle(prominent) ? prominent : undefined;
    const text = parts.join("\n").replace(/\n{3,}/g, "\n\n");
    const title = info.title ?? (found && resolveTitle(found, text)) ?? fallbackTitle;
    const { metadata, warnings = [] } = unreadPages(unread);
    if (garbled.length) warnings.push(garbledWarning(garbled));
    if (poor.length) warnings.push(poorScanWarning(poor));
    // Both are pages search misses until the file is replaced: status lists them together.
    const unsearchable = [...garbled, ...poor].sort((a, b) => a - b);
    return {
      title,
      format: "markdown",
      text: resolveLineBreaks(text),
      firstLine: 1,
      metadata: {
        ...info.metadata,
        pages: doc.numPages,
        ...(ocrPages ? { ocr_pages: ocrPages } : {}),
        ...metadata,
        ...(unsearchable.length ? { garbled_pages: unsearchable } : {}),
      },
      pages: doc.numPages,
      ...(warnings.length ? { warnings } : {}),
      ...(readings.size ? { ocrImages: ocrImages(readings) } : {}),
    };
  } finally {
    await task.destroy();
  }
}

/**
 * Opens the document; an AES-256 file whose owner password is empty (which pdf.js never tries, see pdf-password.ts)
 * is opened from a copy re-keyed for an empty user password.
 */
async function openPdf(pdfjs: PdfJs, bytes: Uint8Array) {
  try {
    return await loadPdf(pdfjs, bytes);
  } catch (error) {
    const unlocked = isPasswordNeeded(error) ? openedWithEmptyOwnerPassword(bytes) : undefined;
    if (!unlocked) throw new ResearcherError("FILE_UNREADABLE", pdfOpenReason(error));
    return await loadPdf(pdfjs, unlocked).catch((retried: unknown) => {
      throw new ResearcherError("FILE_UNREADABLE", pdfOpenReason(retried));
    });
  }
}

async function loadPdf(pdfjs: PdfJs, bytes: Uint8Array) {
  // pdf.js takes ownership of (detaches) the buffer it is given, and refuses Node Buffers: give it a plain copy.
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
    fontExtraProperties: true, // glyph names, to read what pdf.js could not map (unmappedGlyphs)
    cMapUrl: "cmaps/",
    cMapPacked: true,
    // JBIG2 and JPEG 2000 images (bilevel and archival scans) are decoded by pdf.js's own wasm, served by the factory.
    wasmUrl: "wasm/",
    BinaryDataFactory: PdfDataFactory,
  });
  try {
    return { task, doc: await task.promise };
  } catch (error) {
    await task.destroy();
    throw error;
  }
}

function isPasswordNeeded(error: unknown): boolean {
  return (error as { name?: string })?.name === "PasswordException";
}

/** Frees what pdf.js keeps of a page once it is read (its fonts, images and operator list). */
async function cleanup(doc: { getPage(n: number): Promise<{ cleanup(): void }> }, n: number): Promise<void> {
  (await doc.getPage(n).catch(() => undefined))?.cleanup();
}

/**
 * The first page's largest line among its first lines; when it is a heading (set larger than the page's `body`
 * text), with the lines that continue it, as `pageMarkdown` joins a heading wrapped over lines: a title set in
 * large type over two lines is the whole title, while lines of body text stay apart.
 */
function largestLines(lines: Line[], body: number): string | undefined {
  const start = lines.reduce<number>((a, l, i) => (a < 0 || l.size > lines[a]!.size ? i : a), -1);
  if (start < 0) return undefined;
  const heading = (line: Line) => isHeading(line.size, body, line.text);
  let end = start + 1;
  if (heading(lines[start]!)) while (end < lines.length && heading(lines[end]!) && continuesHeading(lines[end - 1]!, lines[end]!)) end++;
  return lines
    .slice(start, end)
    .map((line) => line.text)
    .reduce(joinLine, "");
}

/** `line` goes on with the heading on `previous`: the same size, the next line down (not after a gap). */
function continuesHeading(previous: Line, line: Line): boolean {
  return previous.size === line.size && Math.abs(previous.y - line.y) < line.size * 1.6;
}

/**
 * The title of a recognised first page: a heading among its first paragraphs (OCR makes a heading of a line
 * clearly taller than the page's usual line, as `pageMarkdown` does of larger text), as the first page's largest
 * line is for a text layer; else its first paragraph, which on a scanned article is its title when short enough to
 * be one (the caller's limit): typed in capitals at the size of the text, it stands apart only by its place.
 */
function ocrTitle(text: string): string | undefined {
  const blocks = text.split("\n\n");
  const first =
    blocks
      .slice(0, 3)
      .find((block) => block.startsWith("## "))
      ?.slice(3) ?? blocks[0];
  return first && /\p{L}/u.test(first) ? first : undefined;
}

/** Serves pdf.js's CMap and image-decoder wasm requests from `pdf-data.ts` (files on disk, or embedded). */
class PdfDataFactory {
  async fetch({ kind, filename }: { kind: string; filename: string }): Promise<Uint8Array> {
    if (kind === "cMapUrl") return readCMap(filename);
    if (kind === "wasmUrl") return readWasm(filename);
    throw new Error(`no ${kind} data is bundled`); // standard fonts only matter for rendering
  }
}

/**
 * The lines of a page's text layer that OCR did not read in its image: those with fewer than half their words in
 * `recognised`. A stamp or a caption drawn beside the scan stays; an OCR text layer laid over the scan (ocrmypdf, a
 * scanner's own), read again under `ocr: always`, is not doubled.
 */
function linesNotRead(lines: Line[], recognised: string): Line[] {
  const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const read = new Set(words(recognised));
  return lines.filter((line) => {
    const own = words(line.text);
    return own.filter((word) => read.has(word)).length < own.length / 2;
  });
}

function visibleChars(text: string): number {
  return text.replace(/\s/g, "").length;
}

/**
 * What OCR read of page `n`'s images (nothing when they cover too little of it); `onImage` is told when it has
 * some. pdf.js errors on a broken page cost only that page.
 */
function recognisePage(
  doc: { getPage(n: number): Promise<unknown>; numPages: number },
  n: number,
  options: ConvertOptions,
  readings: Map<string, PageReading>,
  onImage: () => void,
) {
  const image = async (found: () => void) => {
    const pixels = await scanImage(doc, n, found).catch(() => null);
    if (pixels) onImage();
    return pixels;
  };
  return recognise(image, options, { page: n, pages: doc.numPages }, readings);
}

async function scanImage(doc: { getPage(n: number): Promise<unknown> }, n: number, found: () => void) {
  const page = (await doc.getPage(n)) as PdfPage & { cleanup(): void };
  try {
    return await pageImage(page, undefined, found);
  } finally {
    page.cleanup();
  }
}

function pdfOpenReason(error: unknown): string {
  if (isPasswordNeeded(error)) return "encrypted PDF (a password is needed to read it)";
  const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
  return `not a readable PDF: ${message}`;
}

async function pdfInfo(doc: { getMetadata(): Promise<{ info: object }> }) {
  const info = ((await doc.getMetadata().catch(() => ({ info: {} }))).info ?? {}) as Record<string, unknown>;
  const text = (key: string) => {
    const value = info[key];
    return typeof value === "string" && value.trim() && !PROGRAM_VALUE.test(value.trim()) ? clean(value).trim() : undefined;
  };
  const metadata: Record<string, unknown> = {};
  for (const [key, field] of [
    ["author", "Author"],
    ["subject", "Subject"],
    ["keywords", "Keywords"],
  ] as const) {
    const value = text(field);
    if (value) metadata[key] = value;
  }
  for (const [key, field] of [
    ["created", "CreationDate"],
    ["modified", "ModDate"],
  ] as const) {
    const value = pdfDate(text(field));
    if (value) metadata[key] = value;
  }
  const title = text("Title")?.replace(/^Microsoft (Word|PowerPoint) - /, "");
  return { title: title && !isJunkTitle(title) && !isFileName(title) ? title : undefined, metadata };
}

/**
 * A text layer that reads as symbols, not words: fonts that map their glyphs to codes with no character behind them
 * (TAMReview.pdf: `! %3* 1 % % % ( -.45)&` on 21 of 23 pages, which pdftotext cannot read either). At least a tenth
 * of its characters are symbols prose and tables rarely hold, and under a fifth of its words look like words (half
 * or more do in prose; in the shared corpus only TAMReview's pages come near).
 */
function garbledText(text: string): boolean {
  const visible = text.replace(/\s+/g, "");
  if (visible.length < 100) return false;
  const symbols = visible.match(/[%&!?*@+$#^~|\\<>{}]/g)?.length ?? 0;
  const words = text.split(/\s+/).filter(Boolean);
  const wordLike = words.filter((word) => /^[("'“‘]?\p{L}\p{Ll}+[.,;:!?)"'”’]*$/u.test(word)).length;
  return symbols >= visible.length / 10 && wordLike < words.length / 5;
}

function garbledWarning(pages: number[]): string {
  const count = pages.length === 1 ? "1 page's text reads" : `${pages.length} pages' text reads`;
  return `${count} as symbols, not words (fonts without a character map: search will miss them): ${pageList(pages)}`;
}

/**
 * A value a program printed in place of the field's own (a Perl reference, `ARRAY(0x2c7cf020)`, as author: s15
 * student #7), or a placeholder: no author wrote it.
 */
const PROGRAM_VALUE = /^(?:(?:ARRAY|HASH|SCALAR|CODE|GLOB|REF)\(0x[0-9a-f]+\)|\[object \w+\]|undefined|null|None|NaN)$/i;

/**
 * A title no author chose: a placeholder (`Untitled`, `Untitled-1`, `Untitled document`, and the name an application
 * gives a new file: Word's `Document1`, Excel's `Book1`, PowerPoint's `PowerPoint Presentation`, `Presentation1` or
 * `Slide 1`, InDesign's `Layout 1`: s25 P4), a bare DOI, or no title at all: no letter or digit, or a noncharacter or
 * control (`\uffff\uffff`, from a broken text string or a font without a text map; such a first line is no title
 * either).
 */
function isJunkTitle(title: string): boolean {
  return PLACEHOLDER_TITLE.test(title) || !/[\p{L}\p{N}]/u.test(title) || /[\p{Cc}\p{Cs}\p{Co}\p{Cn}]/u.test(title);
}

const PLACEHOLDER_TITLE =
  /^(?:untitled(?:[\s_-]*\d*|\s+document)|(?:document|book|presentation|slide|layout)\s*\d+|powerpoint presentation|(?:doi:\s*)?10\.\d{4,9}\/\S+)$/i;

/**
 * A title that is the name or path of the file the PDF was made from (`pxfontsdoc.dvi`, `Scorecard2.xls`,
 * `C:\work\draft.doc`, a URL): left by the tool that made the PDF, not chosen by the author. Titles weigh in
 * ranking, so the first large line is taken instead.
 */
export function isFileName(title: string): boolean {
  const extension = /\.(?:dvi|pdf|e?ps|tex|docx?|odt|rtf|txt|md|html?|xlsx?|ods|pptx?|odp|indd|qxd|graffle)$/i;
  const path = /^(?:[a-z]:\\|\\\\|~?\/|[a-z][a-z+.-]*:\/\/)|^\S*[\\/]\S*\.\w{1,5}$/i;
  return extension.test(title) || path.test(title);
}

/** `D:20100316021332-01'00'` → `2010-03-16T02:13:32-01:00`; anything unparseable is dropped. */
export function pdfDate(value: string | undefined): string | undefined {
  const m = value && /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?/.exec(value);
  if (!m) return undefined;
  const [, y, mo = "01", d = "01", h = "00", mi = "00", s = "00", sign, oh, om = "00"] = m;
  const zone = sign && sign !== "Z" && sign !== "z" && oh ? `${sign}${oh}:${om}` : "Z";
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}${zone}`;
  return Number.isNaN(Date.parse(iso)) ? undefined : iso;
}

/** Positioned text items → lines in content order; a new line starts at an end-of-line mark or a baseline jump. */
async function pageLines(doc: { getPage(n: number): Promise<TextPage> }, n: number): Promise<Line[]> {
  let items: TextItem[];
  try {
    const page = await doc.getPage(n);
    // pdf.js's own normalisation runs before it reverses right-to-left text, so a ligature of two Arabic letters
    // came out with the two swapped; clean() folds compatibility forms (NFKC) after the reversal instead.
    const content = await page.getTextContent({ disableNormalization: true });
    items = content.items.filter((item: object): item is TextItem => "str" in item);
    await unmappedGlyphs(page, items, content.styles).catch(() => {}); // the text stays as pdf.js gave it
    if (visibleChars(items.map((item) => item.str).join("")) < OCR_BELOW_CHARS) {
      items = await drawnText(page, items).catch(() => items);
    }
  } catch {
    return []; // one broken page must not cost the rest of the document
  }
  // `left`: where the line's leftmost run starts, kept as runs are added (a line of 60,000 items was quadratic).
  const lines: (Line & { runs: Run[]; left: number; turned: boolean })[] = [];
  let current: (typeof lines)[number] | undefined;
  let last: { y: number; end: number; eol: boolean; turned: boolean; rtl: boolean } | undefined;
  for (const item of items) {
    const size = Math.hypot(item.transform[2]!, item.transform[3]!) || item.height || 1;
    const x = item.transform[4]!;
    const y = item.transform[5]!;
    const { text, accent } = runText(item.str);
    if (text || accent) {
      // Text turned past 45° (a margin's vertical "Form" beside a large "1040") runs along y: its width says nothing
      // of where it ends on the line, so it never shares a line with upright text (a scan's tilt is a few degrees).
      const turned = !(item.transform[0]! > Math.abs(item.transform[1]!));
      const rtl = item.dir === "rtl";
      // A baseline jump from the item before starts a line, and so does pdf.js's end-of-line mark, unless the item
      // goes on along the same baseline to the right: a scan's text layer (ocrmypdf, Tesseract) places every word
      // on its own, along a slightly tilted baseline, and pdf.js marked each one a line (a page read 864 lines).
      const jump = last !== undefined && Math.abs(y - last.y) > size * 0.5;
      const goesOn = last !== undefined && x >= last.end - size;
      // Left-to-right text that starts back before the line began is another column's line on the same baseline
      // ("…in this space." then "U.S. Individual…" read "space.U.S."); an accent or a formula's bar drawn back
      // over what the line holds starts within it.
      const back = current !== undefined && !rtl && !last?.rtl && x < current.left - size;
      if (current && (jump || back || turned !== last?.turned || (last?.eol && !goesOn))) current = undefined;
      if (!current) {
        current = { text: "", y, size, runs: [], left: x, turned };
        lines.push(current);
      }
      current.left = Math.min(current.left, x);
      const dir = /^\s+$/.test(text) ? undefined : item.dir;
      current.runs.push({ text, accent, x, end: x + item.width, size, dir, font: item.fontName });
      current.size = Math.max(current.size, size);
      last = { y, end: x + item.width, eol: false, turned, rtl };
    }
    if (item.hasEOL && last) last.eol = true;
  }
  const bodyFont = mostLetters(lines.flatMap((line) => line.runs));
  return lines
    .map((line) => ({
      text: lineText(placeAccents(line.runs)).replace(/\s+/g, " ").trim(),
      y: line.y,
      size: line.size,
      font: oneFont(line.runs),
      bodyFont,
      extent:
        line.turned || line.runs.some((run) => run.dir === "rtl")
          ? undefined
          : { left: line.left, right: largest(line.runs.map((run) => run.end)) },
    }))
    .filter((line) => line.text);
}

/** The font most letters of these runs are set in. */
function mostLetters(runs: Run[]): string | undefined {
  const letters = new Map<string, number>();
  for (const run of runs) if (run.font) letters.set(run.font, (letters.get(run.font) ?? 0) + run.text.replace(/\s/g, "").length);
  return [...letters].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/** The font of all of a line's letters, if they share one. */
function oneFont(runs: Run[]): string | undefined {
  const fonts = new Set(runs.filter((run) => run.text.trim()).map((run) => run.font));
  return fonts.size === 1 ? [...fonts][0] : undefined;
}

/**
 * A character code pdf.js finds no Unicode for comes through as itself: a control character (as `\x81` for a
 * `one.os`, an old-style figure), or for the non-embedded ZapfDingbats, whose glyph names (`a20`) pdf.js maps only
 * for drawing, an ASCII letter where pdftotext reads a dingbat (`4` for ✔). Both are mapped here from the page's
 * fonts: a variant glyph name through its base name (`glyphNameText`), a dingbat to the character pdf.js draws.
 */
const UNMAPPED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const UNMAPPED_ALL = new RegExp(UNMAPPED.source, "g");

async function unmappedGlyphs(page: TextPage, items: TextItem[], styles: Record<string, FontStyle>): Promise<void> {
  // pdf.js has no metrics, so no ascent, for a non-embedded symbol font such as ZapfDingbats.
  const suspect = (item: TextItem) => UNMAPPED.test(item.str) || !Number.isFinite(styles[item.fontName ?? ""]?.ascent);
  if (!items.some(suspect)) return;
  // Fonts reach commonObjs only when the page's operators are read (its text extraction never sends them), which
  // costs about as much as reading its text: only pages that show a sign of an unmapped font pay it.
  const { AnnotationMode } = await loadPdfJs();
  await page.getOperatorList({ annotationMode: AnnotationMode.DISABLE });
  const font = (id = "") => (page.commonObjs.has(id) ? (page.commonObjs.get(id) as PdfFont) : undefined);
  const simple = Object.keys(styles)
    .map((id) => font(id))
    .filter((f) => f && !f.composite);
  for (const item of items.filter(suspect)) {
    const own = font(item.fontName);
    if (own?.missingFile && /Dingbats/i.test(own.name ?? "")) {
      item.str = [...item.str].map((c) => String.fromCodePoint(own.toFontChar?.get(c.charCodeAt(0)) ?? c.charCodeAt(0))).join("");
    } else {
      // An item runs on across a change of font, keeping its first font's name: the code is looked up in that
      // font first, then in the page's others.
      item.str = item.str.replace(UNMAPPED_ALL, (c) => variantText(c.charCodeAt(0), [own, ...simple]) ?? c);
    }
  }
}

/** The text of a code by the first of the fonts whose Differences name its glyph (pdf.js exports no other names). */
function variantText(code: number, fonts: (PdfFont | undefined)[]): string | undefined {
  for (const font of fonts) {
    const name = font?.differences?.get(code);
    const text = name && glyphNameText(name);
    if (text) return text;
  }
  return undefined;
}

/**
 * A page with (almost) no text content may draw its text outside its crop box, which pdf.js's text content leaves
 * out and pdftotext keeps: its drawn text (pdf-drawn.ts) is taken when it has more. Scans draw none.
 */
async function drawnText(page: TextPage, items: TextItem[]): Promise<TextItem[]> {
  const pdfjs = await loadPdfJs();
  // The same request as OCR's (ocr.ts pageImage), which pdf.js answers from its cache until the page is cleaned up.
  const list = await page.getOperatorList();
  const fontMatrix = (id: string) => (page.commonObjs.has(id) ? (page.commonObjs.get(id) as PdfFont).fontMatrix : undefined);
  const drawn = drawnItems(list, pdfjs, fontMatrix);
  // Format characters count for nothing: pdf.js's text content leaves out soft hyphens, which are drawn.
  const chars = (of: { str: string }[]) => visibleChars(of.map((item) => item.str.replace(/\p{Cf}/gu, "")).join(""));
  return chars(drawn) > chars(items) ? drawn : items;
}

/** A text item on a line: where it starts and ends, and its direction (none for white space). */
interface Run {
  text: string;
  /** A spacing accent the item ends in, kept out of `text` until it is placed (placeAccents). */
  accent?: string;
  x: number;
  end: number;
  size: number;
  dir?: string;
  font?: string;
}

/**
 * A line's items in reading order, with a space wherever they stand apart. Items come in drawing order, which for
 * right-to-left scripts is usually left to right on the page: a stretch of right-to-left items reads from its
 * rightmost item, and on a line mostly right-to-left the stretches too go from right to left.
 */
function lineText(runs: Run[]): string {
  const stretches: Run[][] = [];
  for (const run of runs) {
    const last = stretches.at(-1);
    const direction = last?.find((r) => r.dir)?.dir;
    if (last && (!run.dir || !direction || direction === run.dir)) last.push(run);
    else stretches.push([run]);
  }
  const rightToLeft = (stretch: Run[]) => stretch.some((run) => run.dir === "rtl");
  const letters = (rtl: boolean) => runs.filter((run) => (run.dir === "rtl") === rtl).reduce((sum, run) => sum + run.text.length, 0);
  const leftmost = (stretch: Run[]) => smallest(stretch.map((run) => run.x));
  if (letters(true) > letters(false)) stretches.sort((a, b) => leftmost(b) - leftmost(a));
  let text = "";
  let previous: Run | undefined;
  for (const run of stretches.flatMap((stretch) => (rightToLeft(stretch) ? [...stretch].sort((a, b) => b.x - a.x) : stretch))) {
    // Within left-to-right text the gap is measured forwards only, so an item drawn back over the last (an accent,
    // an arrow over a vector) never gets a space; next to right-to-left text, in either direction.
    const rtl = run.dir === "rtl" || previous?.dir === "rtl";
    const gap = !previous ? 0 : rtl ? Math.max(run.x - previous.end, previous.x - run.end) : run.x - previous.end;
    if (text && gap > run.size * 0.15 && !/\s$/.test(text) && !/^\s/.test(run.text)) text += " ";
    text += run.text;
    previous = run;
  }
  return text;
}

/** What `page.getAnnotations()` gives that can hold text (pdf.js's annotation data, reduced to those fields). */
interface Annotation {
  subtype?: string;
  fieldType?: string;
  fieldValue?: unknown;
  options?: { exportValue: string; displayValue: string }[];
  hidden?: boolean;
  contentsObj?: { str?: string };
  richText?: { str?: string };
  /** "Group" when the annotation is one of a group whose first member holds the comment (pdf.js copies it in). */
  replyType?: string;
}

/**
 * The markup annotations (PDF 32000-1, 12.5.6.2): those whose /Contents is what a reader typed as the comment shown
 * in their pop-up: a sticky note's or a free-text box's text, and the comment on a highlight, an underline, a shape
 * or a drawing, which is where a researcher's notes on a paper live (s26 user F12). A Link's or a Widget's /Contents
 * is an alternate description, and a Popup only shows its parent's.
 */
const MARKUP_ANNOTATIONS = new Set([
  "Text",
  "FreeText",
  "Line",
  "Square",
  "Circle",
  "Polygon",
  "PolyLine",
  "Highlight",
  "Underline",
  "Squiggly",
  "StrikeOut",
  "Stamp",
  "Caret",
  "Ink",
  "FileAttachment",
  "Sound",
  "Redact",
]);

/**
 * Text held by the page's annotations rather than its content: filled-in form fields (text fields, and the shown
 * value of a list or combo box) and the comments of markup annotations, one paragraph each, in the page's annotation
 * order. Check boxes and radio buttons (only a state such as `Off`) and hidden fields are left out, as pdftotext leaves
 * them out; so are hidden annotations, pop-ups and the later members of a group (copies of the comment of the
 * annotation they belong to, which is kept).
 */
async function pageAnnotations(
  doc: { getPage(n: number): Promise<{ getAnnotations(o: object): Promise<Annotation[]> }> },
  n: number,
): Promise<string[]> {
  let annotations: Annotation[];
  try {
    annotations = await (await doc.getPage(n)).getAnnotations({ intent: "display" });
  } catch {
    return [];
  }
  // A multi-line value or note breaks its lines with CR, which clean() drops as a control character: it is made white
  // space first, or the words at each break fused ("coverage affordedby": s25 P1).
  return annotations
    .map(annotationText)
    .map((text) => literalText(clean(text.replace(/\r\n?/g, "\n")).replace(/\s+/g, " ").trim()))
    .filter(Boolean);
}

function annotationText(annotation: Annotation): string {
  if (annotation.hidden || annotation.replyType === "Group") return "";
  if (MARKUP_ANNOTATIONS.has(annotation.subtype ?? "")) return annotation.contentsObj?.str || annotation.richText?.str || "";
  if (annotation.subtype !== "Widget") return "";
  const value = annotation.fieldValue;
  if (annotation.fieldType === "Tx" && typeof value === "string") return value;
  if (annotation.fieldType === "Ch") {
    const chosen = Array.isArray(value) ? value : [value];
    const shown = (v: unknown) => annotation.options?.find((o) => o.exportValue === v)?.displayValue ?? v;
    return chosen
      .map(shown)
      .filter((v) => typeof v === "string")
      .join(", ");
  }
  return "";
}

/**
 * Lines → paragraphs (split at gaps wider than the usual line spacing, and after a line cut short: paragraphsOf) and
 * headings (clearly larger text).
 */
function pageMarkdown(lines: Line[]): string {
  if (lines.length === 0) return "";
  const body = median(lines.map((l) => l.size));
  const spacing =
    median(
      lines
        .slice(1)
        .map((l, i) => Math.abs(lines[i]!.y - l.y))
        .filter((d) => d > 0),
    ) || body * 1.2;
  const blocks: string[] = [];
  let paragraph: Line[] = [];
  const close = () => {
    for (const part of paragraphsOf(paragraph)) blocks.push(literalText(part.reduce((text, line) => joinLine(text, line.text), "")));
    paragraph = [];
  };
  lines.forEach((line, i) => {
    const previous = lines[i - 1];
    const numbered = sectionHeading(line, body);
    const heading = numbered !== undefined || isHeading(line.size, body, line.text);
    const gap = previous ? Math.abs(previous.y - line.y) : 0;
    if (heading && previous && continuesHeading(previous, line) && blocks.at(-1)?.startsWith("## ") && paragraph.length === 0) {
      blocks[blocks.length - 1] = joinLine(blocks.at(-1)!, line.text); // a heading wrapped over two lines
      return;
    }
    if (heading) {
      close();
      blocks.push(`${numbered ?? "##"} ${line.text}`);
      return;
    }
    if (previous && (gap > spacing * 1.45 || previous.y < line.y - spacing * 0.5)) close();
    paragraph.push(line);
  });
  close();
  return blocks.join("\n\n");
}

/** A list item's bullet at the start of a line. */
const BULLET = /^[•◦▪▫▸‣●○■□∙]\s/u;

/**
 * A block of lines as the paragraphs its writer made: a page that puts no space between paragraphs (or between a
 * definition's term and its text, or a list's items) still ends each one on a line cut short, and a bullet starts one.
 * A line is cut short when the next line's first word would have fitted on it, measured against the block's right edge
 * (columnEdge: its widest line's end, unless that one sticks out alone): a typesetter wraps only a word that does not
 * fit, so ragged and justified text alike read on (pdf.js's own test PDF read four pages as four lines of 2,000
 * characters). One line cut short alone, mid-sentence before a lower-case word, was broken by hand (`If you want to
 * test` / `performance, …`) and reads on; a run of them is a listing's lines (a paper's code figure ran into one line:
 * s24 retest2 M2).
 */
function paragraphsOf(lines: Line[]): Line[][] {
  const right = columnEdge(lines);
  const short = lines.map((line, i) => i + 1 < lines.length && cutShort(line, lines[i + 1]!, right));
  const parts: Line[][] = [];
  lines.forEach((line, i) => {
    const previous = lines[i - 1];
    const alone = !short[i - 2] && !short[i];
    const broken =
      previous &&
      (BULLET.test(line.text) ||
        firstLineIndent(previous, line, lines[i + 1]) ||
        (short[i - 1] && !(alone && runsOn(previous, line)) && !hangs(previous, line)));
    if (previous && !broken) parts.at(-1)!.push(line);
    else parts.push([line]);
  });
  return parts;
}

/**
 * Where a block's lines end at the right: its widest line's end, unless that line is overfull. A word too long to
 * wrap (a URL, a path, a long identifier) runs into the margin, by tens of points in TeX's overfull lines, and
 * measured against it every full line read as cut short: a paragraph came out one per line (s25 review R7). A line
 * is overfull when it ends in such a word (OVERFULL_WORD), starting before the other lines' edge, and sticks out more
 * than 2 em past it; up to a quarter of the lines may (more, and they are the column: a list of links). A listing's or
 * a table's one long line is no overfull line: it ends in no such word, and stays the edge its short lines are cut
 * short against.
 */
function columnEdge(lines: Line[]): number {
  const right = (line: Line) => line.extent?.right ?? Number.NEGATIVE_INFINITY;
  const others = largest(lines.filter((line) => !OVERFULL_WORD.test(line.text)).map(right));
  const overfull = (line: Line) => {
    if (!line.extent || right(line) <= others + line.size * 2) return false;
    const word = OVERFULL_WORD.exec(line.text)?.[0];
    const charWidth = (line.extent.right - line.extent.left) / line.text.length;
    return word !== undefined && line.extent.right - word.length * charWidth < others;
  };
  const kept = lines.filter((line) => !overfull(line));
  return lines.length - kept.length <= lines.length / 4 ? largest(kept.map(right)) : largest(lines.map(right));
}

/** A line's last word when no prose word is as long (15 characters or more, no space): a URL, a path, an identifier. */
const OVERFULL_WORD = /\S{15,}$/u;

/**
 * Whether `line` is a paragraph's first line set in from the column's edge, as TeX, Word and most books mark one with
 * no space above it: after a line that ends a sentence, it starts an em or a few right of that line, and the line
 * after it starts back where that one did (a reference list's hanging indent continues a sentence). A paper's
 * paragraph that followed a full line ran into it (about one in seven: s24 retest2 M3).
 */
function firstLineIndent(previous: Line, line: Line, next: Line | undefined): boolean {
  if (!previous.extent || !next?.extent || !SENTENCE_END.test(previous.text) || !indented(previous, line)) return false;
  return Math.abs(next.extent.left - previous.extent.left) < line.size * 0.5;
}

/** Whether `line` goes on from a line that ends no sentence, set in from it: a reference list's hanging indent. */
function hangs(previous: Line, line: Line): boolean {
  return indented(previous, line) && !SENTENCE_END.test(previous.text);
}

/** Whether `line` starts an em or a few right of `previous`: an indent, not a column or a run of its own. */
function indented(previous: Line, line: Line): boolean {
  if (!previous.extent || !line.extent) return false;
  const indent = line.extent.left - previous.extent.left;
  return indent >= line.size * 0.5 && indent <= line.size * 4;
}

/** Whether a sentence runs on from `line` into `next`: no sentence's end before a lower-case word. */
function runsOn(line: Line, next: Line): boolean {
  return !SENTENCE_END.test(line.text) && /^\p{Ll}/u.test(next.text);
}

const SENTENCE_END = /[.:;!?]["')\]]*$/u;

/**
 * Whether `line` ended with room for `next`'s first word (and a space) before `right`, with an em to spare; never
 * where it ends inside a word, at a hyphen (`mech-` + `anism`): that is wrapping, whatever its room. Nor where
 * `next` goes on along the same line (a superscript or subscript, read as a line of its own: `O(n` then `k`).
 */
function cutShort(line: Line, next: Line, right: number): boolean {
  if (!line.extent || !next.extent || hyphenatedAt(line.text, next.text)) return false;
  // On (about) the same baseline: a run of its own, not the next line (a paragraph's indented first line after a
  // short last one starts right of its end too).
  if (next.extent.left >= line.extent.right - line.size / 2 && Math.abs(next.y - line.y) < line.size * 0.6) return false;
  const charWidth = (next.extent.right - next.extent.left) / next.text.length;
  const firstWord = next.text.split(" ", 1)[0]!.length;
  return line.extent.right + (firstWord + 1) * charWidth < right - line.size;
}

/**
 * `3.3 Blacklisting`, `4 Evaluation`, `A.2 Proofs`, `2. Overview: Example Tracing Run`: a section number and a short
 * title starting with a capital, with a word of three letters or more, no sentence punctuation but a colon before a
 * capital (a list item's `1. Note: run it` is no title), not ending in a page number (a table of contents'
 * `1 Introduction 1`).
 */
const NUMBERED_SECTION = /^(?:\d{1,2}|[A-Z])((?:\.\d{1,2}){0,3})\.?\s+(?=.*\p{L}{3})\p{Lu}(?:[^.:;,]|:(?=\s+\p{Lu})){0,70}(?<!\s\d+)$/u;

/**
 * The markdown heading marker (`##` for a top section, one more `#` per level: `3.3` → `###`) of a line that is a
 * numbered section title set in a font other than the page's body text (bold, at the body's size, so no larger:
 * papers number their sections so), or undefined. Such a line was a paragraph of its own, so a paper's fragments had
 * no heading and its sections weighed nothing in ranking. Smaller type is a footnote or a running footer (`2 Work done
 * while …`, `14 Transactions on …`), never a section.
 */
function sectionHeading(line: Line, body: number): string | undefined {
  if (!line.font || !line.bodyFont || line.font === line.bodyFont || line.size < body * 0.95) return undefined;
  const match = NUMBERED_SECTION.exec(line.text);
  if (!match) return undefined;
  return "#".repeat(Math.min(6, 2 + (match[1]!.match(/\./g)?.length ?? 0)));
}

/**
 * TeX sets an accent as a glyph of its own drawn over its letter (`na¨` then `ıve`, the `i` dotless), and NFKC
 * makes a spacing accent a space and a combining mark: `na ̈ıve` was two words, neither "naive". A spacing accent
 * that ends a text item is kept apart from its text (runText), and put on the next item's first letter where that
 * letter is drawn under it (placeAccents). The same characters are typed too (`don´t`: U+00B4 is many writers'
 * apostrophe), so only the geometry tells an accent; and it is carried beside the text, not marked in it: any mark
 * can be a PDF's own character (private-use U+F8E0 + i marked one, and pdf.js reads Adobe Symbol's `registersans`
 * as U+F8E8: `Acme®Widget` read `AcmeW̋idget`; s25 review R3, R4).
 */
const SPACING_ACCENTS: Record<string, string> = {
  "\u00a8": "\u0308", // diaeresis
  "\u00b4": "\u0301", // acute
  "\u02c6": "\u0302", // circumflex
  "\u02dc": "\u0303", // tilde
  "\u00af": "\u0304", // macron
  "\u02d8": "\u0306", // breve
  "\u02d9": "\u0307", // dot above
  "\u02da": "\u030a", // ring above
  "\u02dd": "\u030b", // double acute
  "\u02c7": "\u030c", // caron
};

/**
 * A text item's text, cleaned, and the spacing accent it ends in, kept apart (NFKC would make it a space and a mark).
 */
function runText(str: string): { text: string; accent?: string } {
  const last = str.at(-1);
  return last && Object.hasOwn(SPACING_ACCENTS, last) ? { text: clean(str.slice(0, -1)), accent: last } : { text: clean(str) };
}

/**
 * Each run's accent as a combining mark on the next run's first letter (a dotless `ı` regains its dot) where that
 * letter is drawn under it: TeX moves back over the accent to draw its letter, so the next run starts within the
 * accent, left of its end (tracemonkey.pdf's `na¨` + `ıve`: by 0.3 em; pdf.js starts a new item at any move back
 * of 0.2 em or more). A typed accent advances like any glyph, and stays as NFKC gives it.
 */
function placeAccents(runs: Run[]): Run[] {
  const placed = runs.map((run) => ({ ...run }));
  placed.forEach((run, i) => {
    if (!run.accent) return;
    const next = placed[i + 1];
    const letter = next && drawnUnder(run, next) ? /^\p{L}/u.exec(next.text)?.[0] : undefined;
    if (next && letter) {
      const base = letter.replace("\u0131", "i").replace("\u0237", "j");
      next.text = `${`${base}${SPACING_ACCENTS[run.accent]}`.normalize("NFC")}${next.text.slice(letter.length)}`;
    } else run.text += run.accent.normalize("NFKC");
  });
  return placed;
}

/**
 * Whether `next` starts under the end of `run`: left of its end by more than a kerning's nudge, and by less than an
 * accent and half a letter (a run drawn further back is something else drawn over the line: a formula's bar).
 */
function drawnUnder(run: Run, next: Run): boolean {
  const back = run.end - next.x;
  return back > run.size * 0.05 && back < run.size * 1.5;
}

/** Ligatures and compatibility forms folded (NFKC); control characters from fonts without a text map dropped. */
function clean(text: string): string {
  return text.normalize("NFKC").replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffd]/g, "");
}
