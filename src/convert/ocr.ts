/**
 * OCR of scanned PDF pages, offline, in the calling thread.
 *
 * - `pageImage(page)` takes the page's painted images straight from pdf.js's operator list (pdf.js decodes JPEG,
 *   CCITT and Flate in JavaScript; JBIG2 and JPEG 2000 only with its own wasm, which `getDocument` must be given
 *   through `wasmUrl` and its BinaryDataFactory) and turns them into upright 8-bit grey pixels with their resolution:
 *   one page-sized image as it is, several (bands, tiles, a 1-bit mask over a background) composed where the page
 *   paints them. No page renderer is needed: a scan's page paints images only.
 * - `createOcrEngine()` runs Tesseract 5 compiled to WebAssembly (tesseract.js-core) directly, without tesseract.js's
 *   own worker thread: conversions already run in our worker pool, and calling the wasm API in this thread lets us
 *   hand it raw grey pixels (no PNG encoding) and needs no worker script on disk.
 * - Everything it needs (the wasm binary and the English model) is imported with `with { type: "file" }`, so
 *   `bun build --compile` embeds it and `bun run` reads it from node_modules. Nothing is unpacked to disk: the wasm
 *   is instantiated from bytes and the model is written into Tesseract's in-memory file system.
 */
import type { OcrImage } from "../ocr-reading.ts";
import { pageList } from "../text.ts";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describeError, ResearcherError } from "../errors.ts";
import { readRegularFile } from "../files.ts";
import { textSkew } from "./skew.ts";
import { type ConvertOptions, isHeading, joinLine, literalText, median, type OcrPage, type PageReading } from "./document.ts";
// The SIMD + LSTM-only build: Bun's JavaScriptCore runs wasm SIMD (the plain build is 3× slower), and the legacy
// (non-LSTM) engine is not used (the embedded model has no legacy data). Not the "relaxedsimd" build: its results
// may differ between CPUs, and it was no faster here (NOTES.md).
import coreWasmPath from "tesseract.js-core/tesseract-core-simd-lstm.wasm" with { type: "file" };
// English, "best_int": the LSTM-only integer model (3 MB gzipped; the package's 4.0.0/ model, 11 MB, also carries
// the legacy engine's data, which we do not use).
import englishModelPath from "@tesseract.js-data/eng/4.0.0_best_int/eng.traineddata.gz" with { type: "file" };

/** 8-bit grey pixels, row by row, no padding; `dpi` is the scan resolution when known. */
export interface GrayImage {
  gray: Uint8Array;
  width: number;
  height: number;
  dpi?: number;
}

/** What the engine read in a page image. */
export interface Recognised {
  /** The page's text: paragraphs separated by a blank line, lines joined, hyphenated line ends rejoined; lines
   * clearly taller than the page's usual line are `## ` headings. */
  text: string;
  /** Its words' mean confidence, 0–100, each word weighted by its letters (no words: 0), and how many there are. */
  confidence: number;
  words: number;
}

export interface OcrEngine {
  /** The page read upright, or, when that reads poorly, turned whichever quarter turn reads best (orientedBest). */
  recognize(image: GrayImage): Promise<Recognised>;
  /** Frees the Tesseract instance; the engine cannot be used afterwards. */
  close(): void;
}

export interface OcrOptions {
  /** Tesseract language codes, e.g. `["eng", "deu"]`; default `["eng"]` (the only embedded model). */
  languages?: string[];
  /** A folder with `<code>.traineddata` or `<code>.traineddata.gz` for languages other than the embedded English. */
  langPath?: string;
  /** Straighten pages whose lines are tilted (measured by skew.ts before Tesseract reads the page). Default true. */
  deskew?: boolean;
}

/** The parts of tesseract.js-core's Emscripten module that we call (WebIDL bindings of tesseract::TessBaseAPI). */
interface TessModule {
  FS: { writeFile(path: string, data: Uint8Array): void; unlink(path: string): void };
  TessBaseAPI: new () => TessApi;
  _malloc(size: number): number;
  _free(pointer: number): void;
}

interface TessApi {
  Init(dataPath: string | null, languages: string, oem: number): number;
  SetPageSegMode(mode: number): void;
  SetVariable(name: string, value: string): boolean;
  /**
   * tesseract.js-core's variant: the last two arguments are the EXIF orientation (1 = as is) and a rotation in radians.
   */
  SetImage(pixels: number, width: number, height: number, bytesPerPixel: number, bytesPerLine: number, exif?: number, angle?: number): void;
  SetSourceResolution(dpi: number): void;
  Recognize(monitor: null): number;
  /** The page as hOCR (HTML): paragraphs, lines with their boxes and text size, words (`page` 0 is the page set). */
  GetHOCRText(page: number): string;
  Clear(): void;
  End(): void;
}

type CoreFactory = (module: object) => Promise<TessModule>;

/** tesseract::OcrEngineMode and PageSegMode values (publictypes.h). The module's WebIDL enum properties are
 * undefined in this build, and an undefined argument silently means 0 (PSM_OSD_ONLY: no text at all). */
const OEM_LSTM_ONLY = 1;
const PSM_AUTO = 3;

/** Tilts smaller than this (radians, ~0.3°) are left alone: rotating costs time and slightly blurs the glyphs. */
const MIN_DESKEW = 0.005;
/** Tesseract's models are trained on ~300 dpi text; much finer scans only cost time, so they are scaled down. */
const MAX_DPI = 400;
/** When a PDF says nothing usable, scans are most often 300 dpi. */
const DEFAULT_DPI = 300;

/** The wasm memories of the engines not yet closed in this thread (the conversion worker reports their size). */
const liveMemories = new Set<() => WebAssembly.Memory>();

/** Bytes of wasm memory held by this thread's OCR engines. */
export function ocrMemory(): number {
  let bytes = 0;
  for (const memory of liveMemories) bytes += memory().buffer.byteLength;
  return bytes;
}

/** Load a fresh Tesseract wasm instance. Each instance owns its own memory (tens of MB, never shrinks). */
async function loadCore(): Promise<{ module: TessModule; memory: () => WebAssembly.Memory }> {
  // A literal import so the bundler embeds the Emscripten glue (CommonJS: its export is the default), loaded only
  // when OCR is first needed. Not createRequire: the bundler cannot see through it.
  const factory = (await import("tesseract.js-core/tesseract-core-simd-lstm.js")).default as CoreFactory;
  const wasm = readFileSync(coreWasmPath);
  let memory: WebAssembly.Memory | undefined;
  const module = await factory({
    // Instantiate from bytes we hold: the glue would otherwise read the .wasm from `__dirname`, which inside the
    // executable is a virtual folder without it. The instance's exported memory is where pixels are copied to.
    instantiateWasm(
      imports: Parameters<typeof WebAssembly.instantiate>[1],
      done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
    ) {
      WebAssembly.instantiate(wasm, imports).then(({ instance, module: compiled }) => {
        memory = Object.values(instance.exports).find((value) => value instanceof WebAssembly.Memory);
        done(instance, compiled);
      });
      return {};
    },
    // Tesseract's diagnostics ("Estimating resolution as …") are not ours to print.
    print: () => {},
    printErr: () => {},
  });
  if (!memory) throw new Error("tesseract.js-core exports no memory");
  // `memory.buffer` is replaced whenever the heap grows: always look it up after allocating.
  return { module, memory: () => memory! };
}

/** The largest model file read, gzipped or not (tessdata_best's largest are under 100 MB). */
const MAX_MODEL_BYTES = 512 * 2 ** 20;

/** A language model's bytes, un-gzipped, and where they came from (a file in `langPath` wins over the built-in). */
function readModel(code: string, langPath: string | undefined): { bytes: Uint8Array; source: string } {
  const candidates = langPath ? [join(langPath, `${code}.traineddata`), join(langPath, `${code}.traineddata.gz`)] : [];
  if (code === "eng") candidates.push(englishModelPath);
  for (const path of candidates) {
    // Only a regular file of a model's size: a FIFO hung the run (a read that never ends holds the writer lock with
    // no time limit on it), a link to /dev/zero grew the process past 4 GB.
    const read =
      path === englishModelPath ? { bytes: readFileSync(path) } : readRegularFile(path, MAX_MODEL_BYTES, "the largest OCR model");
    if ("reason" in read) {
      if (read.missing) continue;
      throw new Error(`cannot read the OCR model ${path}: ${read.reason}`);
    }
    const source = path === englishModelPath ? "built-in eng" : path;
    const { bytes } = read;
    if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return { bytes, source };
    try {
      return { bytes: gunzipSync(bytes, { maxOutputLength: MAX_MODEL_BYTES }), source };
    } catch (error) {
      throw new Error(`cannot un-gzip the OCR model ${path}: ${describeError(error)}`);
    }
  }
  throw new Error(`no OCR model for language "${code}"${langPath ? ` in ${langPath}` : " (only eng is built in)"}`);
}

async function createOcrEngine(options: OcrOptions = {}): Promise<OcrEngine> {
  const languages = options.languages?.length ? options.languages : ["eng"];
  const deskew = options.deskew ?? true;
  const models = languages.map((code) => ({ code, ...readModel(code, options.langPath) }));
  const { module, memory } = await loadCore();
  // Models go into the wasm's in-memory file system, where `Init(null, …)` looks (its working folder is `/`).
  for (const { code, bytes } of models) module.FS.writeFile(`/${code}.traineddata`, bytes);
  const api = new module.TessBaseAPI();
  if (api.Init(null, languages.join("+"), OEM_LSTM_ONLY) !== 0) {
    api.End();
    // Tesseract does not say which model it could not read.
    const sources = models.map((model) => model.source);
    throw new Error(`Tesseract could not load the OCR model${sources.length > 1 ? "s" : ""} ${sources.join(", ")}`);
  }
  for (const code of languages) module.FS.unlink(`/${code}.traineddata`); // loaded; free the copy
  // The library's default is one uniform block of text; the CLI's full layout analysis keeps columns apart.
  api.SetPageSegMode(PSM_AUTO);
  let closed = false;
  liveMemories.add(memory);

  /** The page as its pixels stand, straightened first if its lines are tilted. */
  const readUpright = (image: GrayImage): Recognised => {
    if (closed) throw new Error("the OCR engine is closed");
    const { gray, width, height } = image;
    if (gray.length !== width * height) throw new Error(`grey image is ${gray.length} bytes, expected ${width}×${height}`);
    const pointer = module._malloc(gray.length);
    if (!pointer) throw new Error("out of memory in the OCR engine");
    try {
      new Uint8Array(memory().buffer, pointer, gray.length).set(gray);
      // SetImage copies the pixels into a Leptonica image; ours stay allocated until the end because a page read
      // straightened may be set again as it stands.
      const dpi = Math.round(image.dpi ?? DEFAULT_DPI);
      const setImage = (angle: number) => {
        api.SetImage(pointer, width, height, 1, width, 1, angle);
        // Without it Tesseract guesses the resolution from character sizes, and warns.
        api.SetSourceResolution(dpi);
      };
      const measured = deskew ? textSkew(image, dpi) : 0;
      const angle = Math.abs(measured) >= MIN_DESKEW ? measured : 0;
      setImage(angle);
      const read = () => {
        if (api.Recognize(null) !== 0) throw new Error("Tesseract could not recognise the page");
        return readHocr(api.GetHOCRText(0));
      };
      const reading = read();
      if (reading.words || angle === 0) return reading;
      // Nothing found straightened: the tilt was misread (a sparse page of a few large lines can seem tilted), so
      // the page is read as it is.
      setImage(0);
      return read();
    } catch (error) {
      // A wasm abort leaves the instance in an unknown state: refuse further pages; the caller makes a new engine.
      closed = true;
      liveMemories.delete(memory);
      throw error;
    } finally {
      try {
        module._free(pointer);
        api.Clear(); // drop the page's image and results; the model stays loaded
      } catch {
        closed = true; // an aborted instance may fail here too; the first error is the one to report
        liveMemories.delete(memory);
      }
    }
  };

  return {
    async recognize(image: GrayImage): Promise<Recognised> {
      return orientedBest(image, readUpright);
    },
    close() {
      if (closed) return;
      closed = true;
      liveMemories.delete(memory);
      api.End();
    },
  };
}

/**
 * Below this mean word confidence a page is read again turned (orientedBest). The shared scans' 17 upright pages read
 * at 91–95; scan-04's first page upside down, or turned a quarter turn left, reads as gibberish at 23 (no
 * orientation model is embedded: osd.traineddata is another 10 MB; a quarter turn right Tesseract reads as vertical
 * lines, at 95) (s25 P5).
 */
const LOW_CONFIDENCE = 60;
/** Fewer words than this say too little of a page (a page number, a stamp) to turn it for. */
const MIN_WORDS = 8;

/**
 * The page read as it stands; when that reads poorly, read again turned a half turn and both quarter turns, and the
 * turn whose words Tesseract is surest of kept (among those reading a page's worth of words: a turn that finds three
 * words in specks is no reading of it). An upright page costs one reading, as before; a turned one up to four.
 */
function orientedBest(image: GrayImage, read: (image: GrayImage) => Recognised): Recognised {
  let best = read(image);
  if (!poorlyRead(best)) return best;
  for (const quarter of [2, 1, 3]) {
    const turned = read(rotateQuarter(image, quarter));
    if (turned.words >= MIN_WORDS && turned.confidence > best.confidence) best = turned;
    if (!poorlyRead(best)) break;
  }
  return best;
}

/** Enough words read with too little confidence: gibberish, as a page scanned upside down or sideways reads. */
function poorlyRead(reading: Recognised): boolean {
  return reading.words >= MIN_WORDS && reading.confidence < LOW_CONFIDENCE;
}

/** One engine per conversion thread and language set, made on first need (~0.5 s + the wasm's first-page warm-up). */
let shared: { key: string; engine: Promise<OcrEngine> } | undefined;

function sharedEngine(options: ConvertOptions): Promise<OcrEngine> {
  const languages = options.ocrLanguages?.length ? options.ocrLanguages : ["eng"];
  const key = JSON.stringify([languages, options.ocrData]);
  if (shared?.key !== key) {
    shared?.engine.then((engine) => engine.close()).catch(() => {});
    const engine = createOcrEngine({ languages, langPath: options.ocrData });
    shared = { key, engine };
    // A missing model is reported for this file, and looked for again by the next.
    engine.catch(() => {
      if (shared?.engine === engine) shared = undefined;
    });
  }
  return shared.engine;
}

/** A page OCR was asked to read and could not (its engine failed, or it ran past its time limit), and why. */
export interface UnreadPage {
  page: number;
  reason: string;
}

/**
 * What a document says of its pages OCR could not read while others were read: their numbers as `ocr_failed_pages`
 * (`get --meta`, `--where`), and one warning for the index run's summary naming the first few and why.
 */
export function unreadPages(unread: UnreadPage[]): { metadata: Record<string, unknown>; warnings?: string[] } {
  if (unread.length === 0) return { metadata: {} };
  const named = unread.slice(0, 3).map((u) => `page ${u.page}: ${u.reason}`);
  const more = unread.length > named.length ? `; ${unread.length - named.length} more` : "";
  const pages = unread.length === 1 ? "1 page" : `${unread.length} pages`;
  return {
    metadata: { ocr_failed_pages: unread.map((u) => u.page) },
    warnings: [`OCR could not read ${pages}, left out (${named.join("; ")}${more})`],
  };
}

/** The warning for pages OCR read as gibberish whichever way they were turned (PageReading.poor), listed in the
 * document's `garbled_pages` as pages whose text layer reads as symbols are. */
export function poorScanWarning(pages: number[]): string {
  const count = pages.length === 1 ? "1 scanned page reads" : `${pages.length} scanned pages read`;
  const turned = pages.length === 1 ? "it is" : "they are";
  return `${count} as gibberish whichever way ${turned} turned (OCR is unsure of its words: search will miss them): ${pageList(pages)}`;
}

/**
 * The text OCR reads in one page image (`image(found)` gives it, or null when there is none, and calls `found` once it
 * knows there is one, before decoding it); `options.onOcrPage` is told when its OCR starts and ends, and which `page`
 * it is. Looking for an image is the file's own work, on the file's clock: 10,000 pages without text or images were
 * each an OCR page, whose end collected garbage, and took minutes past `convert_timeout` (s15 hostile #1). A missing
 * language model fails the file with its reason; an engine abort costs only this page (the engine is replaced), and is
 * reported as the page's `failure`, so that a file with no text says the engine failed rather than that it found
 * nothing. `readings` holds what the file's pages read so far, by their pixels: a page painting the same pixels as one
 * read before is not read again (5,000 pages painting one image were 75 minutes of OCR: s25 hostile F4), nor is one
 * painting the pixels of a page an earlier version of the file read (`options.ocrImages`: one highlight added to a
 * scanned book made every page of it recognised again, s26 F13); it joins `readings`, for the index to keep with the
 * new version. A page an earlier conversion of these very bytes read (`options.ocrKnown`) is read back, its image not
 * even looked for (the image's key, kept with it, joins `readings`); a page the engine reads, or an earlier version's
 * reading, is told with its end (`onOcrPage`), for an index run to keep or count.
 */
export async function recognise(
  image: (found: () => void) => Promise<GrayImage | null>,
  options: ConvertOptions,
  page: OcrPage,
  readings?: Map<string, PageReading>,
): Promise<PageReading> {
  const stopped = options.ocrStopped?.find((s) => s.page === page.page);
  if (stopped) return { failure: stopped.reason };
  const known = options.ocrKnown?.get(page.page);
  if (known) {
    const readBack: PageReading = { ...known, resumed: true };
    // One of the file's page images, though not looked at now: a later page painting it is read back too, and told
    // so (it was counted as recognised in this run: s27 review D5).
    if (known.pixels) readings?.set(known.pixels, readBack);
    return readBack;
  }
  let started = false;
  let reading: PageReading | undefined; // what the engine read: a failure is not told, so it is tried again
  const start = () => {
    if (!started) options.onOcrPage?.("start", page);
    started = true;
  };
  let current: Promise<OcrEngine> | undefined;
  try {
    const pixels = await image(start);
    if (!pixels) return {};
    const key = readings && pixelsKey(pixels);
    const repeated = key && readings.get(key);
    if (repeated) {
      if (repeated.resumed) reading = repeated; // told as read back, as the page that read it first was
      return repeated;
    }
    const earlier = key && options.ocrImages?.get(key);
    if (earlier) {
      reading = { ...earlier, resumed: true, pixels: key };
      readings.set(key, reading);
      return reading;
    }
    start(); // making the engine (loading the wasm and model) is part of the first page's OCR
    current = sharedEngine(options);
    const engine = await current.catch((error: Error) => {
      throw new ResearcherError("FILE_UNREADABLE", error.message);
    });
    const recognised = await engine.recognize(pixels);
    reading = { text: recognised.text || undefined, ...(poorlyRead(recognised) ? { poor: true } : {}), ...(key ? { pixels: key } : {}) };
    if (key) readings.set(key, reading); // not a failure: the engine may read the same pixels another time
    return reading;
  } catch (error) {
    if (error instanceof ResearcherError) throw error;
    if (current && shared?.engine === current) shared = undefined; // the engine refuses further pages after an abort
    return { failure: describeError(error) };
  } finally {
    if (started) options.onOcrPage?.("end", page, reading);
  }
}

/** What `recognise` read in a file's page images (its `readings`), for ConvertedDocument.ocrImages. */
export function ocrImages(readings: Map<string, PageReading>): OcrImage[] {
  return [...readings].map(([pixels, { text, poor }]) => ({ pixels, ...(text === undefined ? {} : { text }), ...(poor ? { poor } : {}) }));
}

/** What makes two page images read alike: their pixels and the resolution Tesseract is told. */
export function pixelsKey(image: GrayImage): string {
  return createHash("sha256")
    .update(`${image.width}×${image.height}@${image.dpi ?? ""}:`)
    .update(image.gray)
    .digest("hex");
}

/**
 * Tesseract's hOCR → the page's text: its paragraphs, each line joined onto the last (a word hyphenated over a line
 * end rejoined, `experi-` + `ment`), a blank line between them. A line clearly taller than the page's usual line is a
 * `## ` heading, a heading wrapped over lines one heading, as larger text is in a text layer (pdf.ts): the title of
 * a scan is taken from it. So is a short paragraph all in capitals (capitalsTitle).
 */
export function pageText(hocr: string): string {
  const lines = hocrLines(hocr);
  const body = median(lines.map((line) => line.height));
  const blocks: string[] = [];
  let paragraph = "";
  let previous: { paragraph: string; heading: boolean } | undefined;
  const close = () => {
    if (paragraph) blocks.push(capitalsTitle(paragraph) ? `## ${paragraph}` : paragraph);
    paragraph = "";
  };
  for (const line of lines) {
    const heading = isHeading(line.height, body, line.text);
    if (previous?.paragraph !== line.paragraph || previous.heading !== heading) close();
    if (!heading) paragraph = paragraph ? joinLine(paragraph, line.text) : literalText(line.text);
    else paragraph = paragraph ? `${paragraph} ${line.text}` : `## ${line.text}`;
    previous = { paragraph: line.paragraph, heading };
  }
  close();
  return blocks.join("\n\n");
}

/**
 * A short paragraph all in capitals (`INCIDENCE AND TRENDS OF SEPSIS IN US HOSPITALS …`): a title as journals set an
 * abstract's, at the body's size, so that only its case tells it. Without it a scan of several abstracts had every
 * passage under the first one's title (s23 user). Two words at least, and eight letters, all of them capitals; not a
 * sentence (`KEEP REFRIGERATED.`, a licence's disclaimer: s24 retest N5), which a title does not end as.
 */
function capitalsTitle(text: string): boolean {
  if (text.startsWith("## ") || text.length > 200 || !/\S\s+\S/.test(text) || /[.!?]["')\]]*$/u.test(text)) return false;
  const cased = (text.match(/\p{L}/gu) ?? []).filter((letter) => letter.toLowerCase() !== letter.toUpperCase());
  return cased.length >= 8 && cased.every((letter) => letter === letter.toUpperCase());
}

/**
 * hOCR → the page's lines in reading order: their words, paragraph and text size (`x_size`, Tesseract's estimate of
 * the line's letter height in pixels; a line's box is no measure, as descenders and accents stretch it).
 */
function hocrLines(hocr: string): { text: string; paragraph: string; height: number }[] {
  const lines: { words: string[]; paragraph: string; height: number }[] = [];
  let paragraph = "";
  for (const [, kind, id = "", title = "", quoted = "", words] of hocr.matchAll(HOCR_ELEMENT)) {
    if (kind === "ocr_par") paragraph = id;
    else if (kind !== "ocrx_word") lines.push({ words: [], paragraph, height: Number(/x_size ([\d.]+)/.exec(title + quoted)?.[1] ?? 0) });
    else {
      const word = decodeEntities((words ?? "").replace(/<[^>]*>/g, "")).trim();
      if (word) lines.at(-1)?.words.push(word);
    }
  }
  return lines.map((line) => ({ text: line.words.join(" "), paragraph: line.paragraph, height: line.height })).filter((line) => line.text);
}

/** Tesseract's hOCR → the page's text (pageText), and how sure Tesseract is of its words. */
function readHocr(hocr: string): Recognised {
  let letters = 0;
  let weighted = 0;
  let words = 0;
  for (const [, kind, , title = "", quoted = "", word = ""] of hocr.matchAll(HOCR_ELEMENT)) {
    const confidence = kind === "ocrx_word" ? /x_wconf (\d+)/.exec(title + quoted) : null;
    const length = word.replace(/<[^>]*>/g, "").trim().length;
    if (!confidence || !length) continue;
    // Weighted by letters: a page's many one-letter marks (bullets, specks read as `.`) say little either way.
    words++;
    letters += length;
    weighted += length * Number(confidence[1]);
  }
  return { text: pageText(hocr), confidence: letters ? weighted / letters : 0, words };
}

/** An hOCR paragraph, line or word: its class, id, title (box, text size) and, for a word, its text. */
const HOCR_ELEMENT =
  /<(?:p|span) class='(ocr_par|ocr_line|ocr_caption|ocr_header|ocr_textfloat|ocrx_word)' id='([^']*)'[^>]*?title=(?:"([^"]*)"|'([^']*)')[^>]*>(?:((?:[^<]|<\/?(?:strong|em)>)*)<\/span>)?/g;

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[\da-f]+|#\d+|\w+);/gi, (entity, name: string) =>
    name[0] === "#" ? String.fromCodePoint(Number(name[1] === "x" ? `0${name.slice(1)}` : name.slice(1))) : (ENTITIES[name] ?? entity),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Page images from pdf.js

/** The part of a pdf.js `PDFPageProxy` used here. */
export interface PdfPage {
  view: number[];
  rotate: number;
  getOperatorList(): Promise<{ fnArray: number[]; argsArray: unknown[][] }>;
  objs: { get(id: string, callback: (data: unknown) => void): void };
  commonObjs: { get(id: string, callback: (data: unknown) => void): void };
}

/** What pdf.js hands over for a decoded image XObject (`ImageKind`: 1 = 1 bit grey, 2 = RGB, 3 = RGBA). */
interface PdfImage {
  width: number;
  height: number;
  kind?: number;
  data?: Uint8Array | Uint8ClampedArray;
  bitmap?: unknown;
}

type Matrix = [number, number, number, number, number, number];

/** pdf.js's operator numbers; stable across versions (they index its OPS table). Checked against pdf.js at load. */
const OP = {
  save: 10,
  restore: 11,
  transform: 12,
  paintFormXObjectBegin: 74,
  paintFormXObjectEnd: 75,
  paintImageMaskXObject: 83,
  paintImageXObject: 85,
  paintInlineImageXObject: 86,
} as const;

/** A scan covers most of its page; smaller images on a page without text (a logo, a figure) are not OCRed. */
const MIN_PAGE_COVERAGE = 0.3;

/** The most pixels a page composed of several images may have (a 400 dpi A3 page has 31 million). */
const MAX_COMPOSED_PIXELS = 64_000_000;

/** An image painted on the page: its pdf.js object (or id), where the unit square lands (`ctm`), and its area there. */
interface Placement {
  source: string | PdfImage;
  ctm: Matrix;
  area: number;
  /** A 1-bit image mask (`/ImageMask true`): its 0 bits are painted (in the fill colour), its 1 bits are not. */
  mask: boolean;
}

/**
 * What the page paints as upright grey pixels, with its resolution, or null if its images cover less than
 * `minCoverage` of the page. Call it for pages whose text layer is empty. A scan is most often one page-sized image,
 * taken as it is; a page painted as several images (bands or tiles, as some scanners and PDF tools write a page, a
 * light background under a 1-bit mask holding the text, as MRC compression does) is composed onto one page canvas
 * where each image is painted: its largest image alone lost half a page silently, or all of it (s25 P6). pdf.js
 * errors (broken content streams) are thrown, as from `getTextContent`.
 */
export async function pageImage(page: PdfPage, minCoverage = MIN_PAGE_COVERAGE, found?: () => void): Promise<GrayImage | null> {
  await checkOps();
  const placed = placements(await page.getOperatorList());
  const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = page.view;
  // Overlapping images count twice: a page whose images add up to a third of it is worth reading.
  if (placed.reduce((sum, p) => sum + p.area, 0) < minCoverage * Math.abs((x1 - x0) * (y1 - y0))) return null;
  found?.(); // decoding them is OCR's work (a JBIG2 scan page), on the page's own clock
  if (placed.length === 1 && !placed[0]!.mask) {
    const [only] = placed as [Placement];
    const image = await decoded(page, only.source);
    const gray = image && toGray(image);
    if (!image || !gray) return null;
    return orient({ gray, width: image.width, height: image.height }, only.ctm, page);
  }
  return compose(page, placed);
}

/** The images the page's operators paint, with where they land: forms' matrices applied (a scan drawn in a form). */
function placements(list: { fnArray: number[]; argsArray: unknown[][] }): Placement[] {
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const stack: Matrix[] = [];
  const placed: Placement[] = [];
  for (let i = 0; i < list.fnArray.length; i++) {
    const op = list.fnArray[i];
    const args = list.argsArray[i]!;
    if (op === OP.save) stack.push(ctm);
    else if (op === OP.restore) ctm = stack.pop() ?? ctm;
    else if (op === OP.transform) ctm = multiply(args as Matrix, ctm);
    else if (op === OP.paintFormXObjectBegin) {
      stack.push(ctm); // pdf.js brackets a form's operators with begin and end, its /Matrix (a Float32Array) first
      const matrix = args[0] as ArrayLike<number> | null;
      if (matrix?.length === 6) ctm = multiply(Array.from(matrix) as Matrix, ctm);
    } else if (op === OP.paintFormXObjectEnd) ctm = stack.pop() ?? ctm;
    else if (op === OP.paintImageXObject || op === OP.paintInlineImageXObject || op === OP.paintImageMaskXObject) {
      const mask = op === OP.paintImageMaskXObject;
      // An image comes as its object's id, or inline as the image; a mask as { data: its object's id, width, height }.
      const arg = args[0] as string | (PdfImage & { data?: unknown }) | undefined;
      const source = mask && typeof arg === "object" && typeof arg.data === "string" ? arg.data : arg;
      const area = Math.abs(ctm[0] * ctm[3] - ctm[1] * ctm[2]); // the unit square's area on the page
      if (source && area > 0) placed.push({ source: source as string | PdfImage, ctm, area, mask });
    }
  }
  return placed;
}

/** An image's decoded data: pdf.js's object for an id, or the image itself (inline). */
async function decoded(page: PdfPage, source: string | PdfImage): Promise<PdfImage | null> {
  return typeof source === "string" ? await pdfObject(page, source) : source;
}

/**
 * The page's images painted in order onto one white canvas of the displayed page (its /Rotate applied), at the finest
 * resolution among its larger images, each pixel of the canvas sampled from the image painted over it last (nearest
 * pixel): bands and tiles join up, a mask paints its text over its background, an image with transparency (a soft
 * mask) shows what is beneath it. A mask is painted black, the colour MRC text layers have. The canvas spans the
 * images, within the page.
 */
async function compose(page: PdfPage, placed: Placement[]): Promise<GrayImage | null> {
  const display = displayMatrix(page);
  const images: Painted[] = [];
  // One image painted many times (a tiled background, a logo per band) is made grey once: a copy for each placement
  // took a page that painted one large image 40 times past the memory limit (s25b review F2).
  const greys = new Map<string | PdfImage, ReturnType<typeof layered>>();
  for (const p of placed) {
    const image = await decoded(page, p.source);
    if (!image?.data || !(image.width > 0 && image.height > 0)) continue;
    // The mask's bits are read as they are (toGray would make 0 bits black, which here means "paint").
    if (!p.mask && !greys.has(p.source)) greys.set(p.source, layered(image));
    const pixels = p.mask ? { gray: null } : greys.get(p.source);
    if (pixels) images.push({ image, ...pixels, toPage: multiply(p.ctm, display), mask: p.mask, area: p.area });
  }
  if (!images.length) return null;
  // The canvas: the images' extent on the displayed page (in points), within the page.
  const [, , pageWidth, pageHeight] = displayBox(page);
  let [left, top, right, bottom] = [pageWidth, pageHeight, 0, 0];
  for (const { toPage } of images) {
    for (const [u, v] of [
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
    ] as const) {
      const [x, y] = apply(toPage, u, v);
      [left, top, right, bottom] = [Math.min(left, x), Math.min(top, y), Math.max(right, x), Math.max(bottom, y)];
    }
  }
  [left, top, right, bottom] = [Math.max(0, left), Math.max(0, top), Math.min(pageWidth, right), Math.min(pageHeight, bottom)];
  if (!(right > left && bottom > top)) return null;
  // Pixels per point: the finest among images a tenth the largest's area or more (not a small logo's), at most
  // MAX_DPI, and at most MAX_COMPOSED_PIXELS in all.
  const largestArea = Math.max(...images.map((i) => i.area));
  const fineness = images
    .filter((i) => i.area >= largestArea / 10)
    .map(({ image, toPage }) => image.width / Math.hypot(toPage[0], toPage[1]));
  let scale = Math.min(Math.max(...fineness), MAX_DPI / 72);
  scale = Math.min(scale, Math.sqrt(MAX_COMPOSED_PIXELS / ((right - left) * (bottom - top))));
  const width = Math.max(1, Math.round((right - left) * scale));
  const height = Math.max(1, Math.round((bottom - top) * scale));
  const canvas = new Uint8Array(width * height).fill(255);
  for (const item of images) paint(canvas, width, height, item, left, top, scale);
  return scaleDown({ gray: canvas, width, height, dpi: scale * 72 });
}

/** An image to paint: its grey pixels (none for a mask), their opacity if it has any transparency, where it lands. */
interface Painted {
  image: PdfImage;
  gray: Uint8Array | null;
  alpha?: Uint8Array;
  toPage: Matrix;
  mask: boolean;
  area: number;
}

/** An RGBA image's grey and opacity apart, to lay over what is beneath it; any other image's grey (toGray). */
function layered(image: PdfImage): { gray: Uint8Array; alpha?: Uint8Array } | null {
  const { width, height, kind, data } = image;
  const pixels = width * height;
  if (kind !== 3) {
    const gray = toGray(image);
    return gray && { gray };
  }
  if (!data || data.length < pixels * 4) return null;
  const gray = new Uint8Array(pixels);
  const alpha = new Uint8Array(pixels);
  for (let p = 0, q = 0; p < pixels; p++, q += 4) {
    gray[p] = (data[q]! * 77 + data[q + 1]! * 150 + data[q + 2]! * 29) >> 8;
    alpha[p] = data[q + 3]!;
  }
  return { gray, alpha };
}

/**
 * Paints one image onto the canvas (pixel (cx, cy) is page point (left + (cx + ½) / scale, top + (cy + ½) / scale)).
 */
function paint(canvas: Uint8Array, width: number, height: number, item: Painted, left: number, top: number, scale: number): void {
  const { image, gray, alpha, toPage, mask } = item;
  const inverse = invert(toPage);
  if (!inverse) return;
  // The canvas rows and columns the image covers.
  const corners = (
    [
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
    ] as const
  ).map(([u, v]) => apply(toPage, u, v));
  const clamp = (value: number, max: number) => Math.min(max, Math.max(0, value));
  const fromX = clamp(Math.floor((Math.min(...corners.map((c) => c[0])) - left) * scale), width);
  const toX = clamp(Math.ceil((Math.max(...corners.map((c) => c[0])) - left) * scale), width);
  const fromY = clamp(Math.floor((Math.min(...corners.map((c) => c[1])) - top) * scale), height);
  const toY = clamp(Math.ceil((Math.max(...corners.map((c) => c[1])) - top) * scale), height);
  const { width: w, height: h, data } = image;
  const rowBytes = (w + 7) >> 3;
  for (let cy = fromY; cy < toY; cy++) {
    const py = top + (cy + 0.5) / scale;
    for (let cx = fromX; cx < toX; cx++) {
      const px = left + (cx + 0.5) / scale;
      const u = inverse[0] * px + inverse[2] * py + inverse[4];
      const v = inverse[1] * px + inverse[3] * py + inverse[5];
      if (!(u >= 0 && u < 1 && v >= 0 && v < 1)) continue;
      // The unit square's y runs up the image; its rows run down.
      const col = Math.floor(u * w);
      const row = Math.floor((1 - v) * h);
      if (row < 0 || row >= h) continue;
      if (mask) {
        if (!((data![row * rowBytes + (col >> 3)]! >> (7 - (col & 7))) & 1)) canvas[cy * width + cx] = 0;
      } else {
        const value = gray![row * w + col]!;
        const a = alpha ? alpha[row * w + col]! : 255;
        const at = cy * width + cx;
        canvas[at] = a === 255 ? value : Math.round((value * a + canvas[at]! * (255 - a)) / 255);
      }
    }
  }
}

/** PDF user space → the page as displayed, in points from its top left (its /Rotate applied, y down). */
function displayMatrix(page: PdfPage): Matrix {
  const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = page.view;
  const [width, height] = [x1 - x0, y1 - y0];
  const turns = ((((page.rotate ?? 0) / 90) % 4) + 4) % 4;
  // Unrotated: x → x − x0, y → y1 − y; each clockwise quarter turn then maps (x, y) → (H − y, x) in the turned box.
  let m: Matrix = [1, 0, 0, -1, -x0, y1];
  let [w, h] = [width, height];
  for (let t = 0; t < turns; t++) {
    m = multiply(m, [0, 1, -1, 0, h, 0]);
    [w, h] = [h, w];
  }
  return m;
}

/** The displayed page's box, in points: [0, 0, width, height] (width and height swapped by a quarter turn). */
function displayBox(page: PdfPage): [number, number, number, number] {
  const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = page.view;
  const turned = ((((page.rotate ?? 0) / 90) % 4) + 4) % 2 === 1;
  const [w, h] = [Math.abs(x1 - x0), Math.abs(y1 - y0)];
  return turned ? [0, 0, h, w] : [0, 0, w, h];
}

function apply(m: Matrix, x: number, y: number): [number, number] {
  return [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
}

function invert(m: Matrix): Matrix | null {
  const det = m[0] * m[3] - m[1] * m[2];
  if (!det) return null;
  return [m[3] / det, -m[1] / det, -m[2] / det, m[0] / det, (m[2] * m[5] - m[3] * m[4]) / det, (m[1] * m[4] - m[0] * m[5]) / det];
}

let opsChecked: Promise<void> | undefined;

/** Fail loudly if a pdf.js upgrade renumbered its operators (we would silently find no images). */
function checkOps(): Promise<void> {
  opsChecked ??= import("pdfjs-dist/legacy/build/pdf.mjs").then(({ OPS }) => {
    for (const [name, value] of Object.entries(OP)) {
      if ((OPS as Record<string, number>)[name] !== value) throw new Error(`pdf.js renumbered OPS.${name}`);
    }
  });
  return opsChecked;
}

/** Image XObjects are decoded asynchronously; `get` with a callback waits for the data. Images used on several
 * pages live in `commonObjs` (ids starting with `g_`). */
function pdfObject(page: PdfPage, id: string): Promise<PdfImage | null> {
  const store = id.startsWith("g_") ? page.commonObjs : page.objs;
  return new Promise((resolve) => {
    try {
      store.get(id, (data) => resolve((data as PdfImage) ?? null));
    } catch {
      resolve(null);
    }
  });
}

/** pdf.js image data → one grey byte per pixel (ITU-R 601 luma). */
function toGray(image: PdfImage): Uint8Array | null {
  const { width, height, kind, data } = image;
  if (!data || !(width > 0 && height > 0)) return null; // e.g. an ImageBitmap (only where OffscreenCanvas exists)
  if (kind === 1) {
    const gray = new Uint8Array(width * height);
    // 1 bit per pixel, rows padded to whole bytes, 1 = white (pdf.js has already applied /Decode).
    const rowBytes = (width + 7) >> 3;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        gray[y * width + x] = (data[y * rowBytes + (x >> 3)]! >> (7 - (x & 7))) & 1 ? 255 : 0;
      }
    }
    return gray;
  }
  const channels = kind === 2 ? 3 : kind === 3 ? 4 : 0;
  return channels ? grayFromChannels(data, width * height, channels) : null;
}

/**
 * Interleaved 8-bit samples (grey, grey + alpha, RGB or RGBA) → one grey byte per pixel (ITU-R 601 luma), or null
 * when `data` is too short. Alpha (the last of 2 or 4 channels) is composited over white, as a viewer shows the image
 * on a page: a transparent pixel is stored as (0, 0, 0, 0), and without it black text on a transparent background
 * would be black on black.
 */
export function grayFromChannels(data: ArrayLike<number>, pixels: number, channels: number): Uint8Array | null {
  if (channels < 1 || channels > 4 || data.length < pixels * channels) return null;
  const gray = new Uint8Array(pixels);
  const alpha = channels === 2 || channels === 4;
  for (let p = 0, q = 0; p < pixels; p++, q += channels) {
    const value = channels < 3 ? data[q]! : (data[q]! * 77 + data[q + 1]! * 150 + data[q + 2]! * 29) >> 8;
    const a = alpha ? data[q + channels - 1]! : 255;
    gray[p] = a === 255 ? value : 255 - Math.round(((255 - value) * a) / 255); // value·a/255 + 255·(1 − a/255)
  }
  return gray;
}

/**
 * Turn the pixels so that text is upright as the page is displayed (the image's placement on the page and the
 * page's /Rotate, in quarter turns; Tesseract has no orientation model loaded), and compute the resolution.
 */
function orient(image: GrayImage, ctm: Matrix, page: PdfPage): GrayImage {
  // Device space: y grows downwards, the page's /Rotate applied. The image's columns run along the unit square's
  // x axis; its rows run down, i.e. along the square's -y axis.
  const turns = ((((page.rotate ?? 0) / 90) % 4) + 4) % 4;
  const rotate = (x: number, y: number): [number, number] => {
    let [dx, dy] = [x, -y]; // PDF y up → device y down
    for (let t = 0; t < turns; t++) [dx, dy] = [-dy, dx]; // clockwise quarter turn on screen
    return [dx, dy];
  };
  const [cx, cy] = rotate(ctm[0], ctm[1]); // direction of increasing column
  const [rx, ry] = rotate(-ctm[2], -ctm[3]); // direction of increasing row
  const widthPt = Math.hypot(ctm[0], ctm[1]);
  const dpi = widthPt > 0 ? (image.width * 72) / widthPt : undefined;

  // Reproduce the image as it is displayed: the quarter turn that the column direction shows, then a mirror if
  // the row direction is the wrong way round for a plain rotation (a mirrored placement, rare but legal).
  const quarter = Math.abs(cx) >= Math.abs(cy) ? (cx >= 0 ? 0 : 2) : cy >= 0 ? 1 : 3;
  let result = rotateQuarter(image, quarter);
  if (cx * ry - cy * rx < 0) result = quarter % 2 === 0 ? flipRows(result) : flipColumns(result);
  return scaleDown({ ...result, dpi: dpi && dpi >= 50 && dpi <= 2400 ? dpi : undefined });
}

/** The image as displayed when its columns run right (0), down (1), left (2) or up (3) on the page. */
function rotateQuarter(image: GrayImage, quarter: number): GrayImage {
  if (quarter === 0) return image;
  const { gray, width, height } = image;
  const swap = quarter % 2 === 1;
  const w = swap ? height : width;
  const h = swap ? width : height;
  const out = new Uint8Array(gray.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // Where source pixel (x, y) appears: columns run down (1: rows run left), left (2: rows up), up (3: rows right).
      const [nx, ny] = quarter === 1 ? [height - 1 - y, x] : quarter === 2 ? [width - 1 - x, height - 1 - y] : [y, width - 1 - x];
      out[ny * w + nx] = gray[y * width + x]!;
    }
  }
  return { ...image, gray: out, width: w, height: h };
}

function flipColumns(image: GrayImage): GrayImage {
  const { gray, width, height } = image;
  const out = new Uint8Array(gray.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) out[y * width + x] = gray[y * width + width - 1 - x]!;
  }
  return { ...image, gray: out };
}

function flipRows(image: GrayImage): GrayImage {
  const { gray, width, height } = image;
  const out = new Uint8Array(gray.length);
  for (let y = 0; y < height; y++) out.set(gray.subarray(y * width, (y + 1) * width), (height - 1 - y) * width);
  return { ...image, gray: out };
}

/** Average whole blocks of pixels so that very fine scans come down to at most MAX_DPI. */
function scaleDown(image: GrayImage): GrayImage {
  const factor = image.dpi ? Math.floor(image.dpi / (MAX_DPI * 0.75)) : 1;
  if (factor < 2) return image;
  const width = Math.floor(image.width / factor);
  const height = Math.floor(image.height / factor);
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let j = 0; j < factor; j++) {
        const row = (y * factor + j) * image.width + x * factor;
        for (let i = 0; i < factor; i++) sum += image.gray[row + i]!;
      }
      out[y * width + x] = Math.round(sum / (factor * factor));
    }
  }
  return { gray: out, width, height, dpi: image.dpi! / factor };
}

function multiply(m: Matrix, n: Matrix): Matrix {
  // pdf.js's `transform` operator pre-multiplies: ctm' = m × ctm.
  return [
    m[0] * n[0] + m[1] * n[2],
    m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2],
    m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4],
    m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}
