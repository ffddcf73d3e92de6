/**
 * What every converter returns, and what the formats share to make it: page markers for paged documents and the
 * title taken from a first heading or a metadata field.
 */
import type { OcrImage, OcrReading } from "../ocr-reading.ts";
import { ResearcherError } from "../errors.ts";
import { composed, shortened, shortHeading, withoutInvisibles } from "../text.ts";

export type TextFormat = "markdown" | "text";

export interface ConvertedDocument {
  title: string;
  /** How the chunker reads `text`: every converted format is markdown. */
  format: TextFormat;
  /** The body, without front matter. */
  text: string;
  /** 1-based line in the converted text where `text` starts (front matter shifts it). */
  firstLine: number;
  metadata: Record<string, unknown>;
  /**
   * Paged formats (PDF): the page count. `text` then holds a page marker line (`pageMarker(n)`) before each page,
   * which the chunker reads as a page boundary and never indexes.
   */
  pages?: number;
  /**
   * Source code converted for the index (`ConvertOptions.codeTokens`): the file cut along its syntax tree into
   * sections of whole lines, in order; the index makes one fragment of each. Absent when the file is not code or the
   * parser gave up on it (too large, too slow): then the text chunker reads it like any text.
   */
  codeSections?: CodeSection[];
  /** What the conversion left out without failing (a scanned page OCR could not read), one line each. */
  warnings?: string[];
  /** Markdown a person wrote (a `.md` file): its setext headings are headings (markdownBlocks). */
  written?: true;
  /**
   * Scanned pages: what OCR read of each distinct page image in the file, by the image's pixels (ocr.ts pixelsKey),
   * recognised now or read back (ConvertOptions.ocrImages). An index keeps it with the document, so that the file's
   * next version (a highlight added, bytes a reader appended) recognises only the pages whose images changed.
   */
  ocrImages?: OcrImage[];
}

/** A stretch of a source file kept together: 1-based lines, inclusive, and the symbol path of what it holds. */
export interface CodeSection {
  startLine: number;
  endLine: number;
  /** `["class Parser", "def feed"]`; empty for statements at the top of a file. */
  headings: string[];
  /** The unit it is part of (Fragment.unit): the parts a split cut from one function or class share it. */
  unit?: number;
  /** The labels of every unit it defines (Fragment.defines): its heading shows at most four, and no class's members. */
  defines?: string[];
}

/**
 * The most text a file of `bytes` may convert to: 64 times its size, and at least 1 MiB. Real files stay far below
 * (2× at most in the shared corpus: an EPUB's compressed XHTML); a 29 KB EPUB whose 5,000 chapters were one file,
 * or a PDF whose page tree names one page 5,000 times, expanded a thousandfold into tens of megabytes of fragments.
 */
export function textBudget(bytes: number): number {
  return Math.max(LEAST_TEXT_BUDGET, TEXT_GROWTH * bytes);
}

const LEAST_TEXT_BUDGET = 2 ** 20;
const TEXT_GROWTH = 64;

/** Throws when converted text has outgrown its file's `textBudget`, saying which of its two bounds that is. */
export function checkExpansion(chars: number, bytes: number): void {
  const budget = textBudget(bytes);
  if (chars <= budget) return;
  const bound =
    budget > LEAST_TEXT_BUDGET
      ? `${TEXT_GROWTH} times the file's ${(bytes / 1024).toFixed(1)} KB`
      : `the most a file of under ${LEAST_TEXT_BUDGET / TEXT_GROWTH / 1024} KB converts to`;
  throw new ResearcherError(
    "FILE_UNREADABLE",
    `its text grows past ${(budget / 2 ** 20).toFixed(1)} MB, ${bound} (a page or chapter listed over and over?)`,
  );
}

/** The line that opens page `n` in a paged document's text. */
export function pageMarker(n: number): string {
  return `<!-- page ${n} -->`;
}

export const PAGE_MARKER = /^<!-- page (\d+) -->$/;

/**
 * Text as markdown that reads as that text: a heading marker, a code fence or a comment (a page marker) at its start
 * escaped with a backslash (`\# apt-get install`). Only what changes how the chunker reads a line: escaping `*`, `_`
 * or `[` would put backslashes into snippets (and into `snake_case` words). A PDF's `# apt-get …` line became the
 * heading of every fragment after it, a literal `<!-- page 7 -->` moved citations to page 7, and a lone ``` took the
 * next page into a code fence. Text PDFs, OCR and the HTML converter (DOCX, EPUB) share it.
 */
export function literalText(text: string): string {
  return text.replace(/^(\s*)(#{1,6}(?=\s|$)|`{3,}|~{3,}|<!--)/, "$1\\$2");
}

/**
 * A line of a page set clearly larger than its body text (`size` and `body` in any one unit: points, pixels) and
 * short, with letters: a heading. Text PDFs and OCR share it.
 */
export function isHeading(size: number, body: number, text: string): boolean {
  return size >= body * 1.25 && text.length <= 120 && /\p{L}/u.test(text);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * Join a line onto a paragraph. A word broken after a hyphen at the line's end (`experi-` + `ment`, `Trace-` +
 * `Monkey`) is joined with a soft hyphen where the hyphen was: whether it was typesetting or part of the word is told
 * by the whole document (resolveLineBreaks). Text PDFs and OCR share it.
 */
export function joinLine(paragraph: string, line: string): string {
  if (!paragraph) return line;
  if (hyphenatedAt(paragraph, line)) return `${paragraph.slice(0, -1)}${SOFT_HYPHEN}${line}`;
  return `${paragraph} ${line}`;
}

/** Whether a line ends inside a word broken after a hyphen (`experi-` + `ment`). */
export function hyphenatedAt(line: string, next: string): boolean {
  return /\p{L}-$/u.test(line) && /^\p{L}/u.test(next);
}

const SOFT_HYPHEN = "\u00ad";
/** A word, hyphenated compounds whole (`state-of-the-art`). */
const WORD = /[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*/gu;
/** A word broken at one or more line ends (`inter­nation­alization`): every break, not only its first. */
const BROKEN = /[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*(?:\u00ad[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*)+/gu;
/** Past this many breaks in one word its spellings are not tried one by one (2^n): each break goes by case. */
const MAX_SPELLED_BREAKS = 6;

/**
 * A document's words broken at a line's end, each joined as the document writes it elsewhere: `TraceMonkey` where
 * the paper says TraceMonkey twenty times (as `Trace-Monkey` the word and the phrase missed it), `self-contained`
 * where it says that. A word the document writes no other way joins without the hyphen where both parts are lower
 * case (the usual sign of typesetting: `experi-ment`), with it otherwise (`non-English`), as pdftotext joins them.
 * Soft hyphens a text layer holds itself are resolved the same way.
 */
export function resolveLineBreaks(text: string): string {
  if (!text.includes(SOFT_HYPHEN)) return text;
  const written = new Set(Array.from(text.matchAll(WORD), ([word]) => word.toLowerCase()));
  return text.replace(BROKEN, (broken) => {
    const parts = broken.split(SOFT_HYPHEN);
    const spellings = parts.length <= MAX_SPELLED_BREAKS + 1 ? spellingsOf(parts).filter((w) => written.has(w.toLowerCase())) : [];
    if (spellings.length === 1) return spellings[0]!;
    // Typesetting breaks a plain word; a compound broken at a line's end broke at one of its own hyphens (TeX does
    // not hyphenate a word that has one), which it keeps: `state-of-the-` + `art`. Each break is judged by its own
    // two parts, not by the hyphens earlier breaks put in (`Trace-Mon-key` for `Trace­Mon­key`).
    return parts.slice(1).reduce((word, right, i) => {
      const left = parts[i]!;
      return /\p{Ll}$/u.test(left) && /^\p{Ll}/u.test(right) && !left.includes("-") ? word + right : `${word}-${right}`;
    }, parts[0]!);
  });
}

/**
 * A title taken from a document's lines, its words broken at a line's end joined as the document (`text`) writes them.
 */
export function resolveTitle(title: string, text: string): string {
  return title.includes(SOFT_HYPHEN) ? resolveLineBreaks(`${title}\n${text}`).split("\n", 1)[0]! : title;
}

/** Every way of writing a word broken into `parts`: each break joined or hyphenated. */
function spellingsOf(parts: string[]): string[] {
  return parts.slice(1).reduce((words, part) => words.flatMap((word) => [word + part, `${word}-${part}`]), [parts[0]!]);
}

/**
 * A metadata value as a text, or undefined when it holds none: a YAML number or boolean is its text (`title: 1984`
 * is a title), a list or mapping is not one.
 */
export function stringValue(value: unknown): string | undefined {
  if ((typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean") return String(value);
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/** The page OCR is reading: its number, 1-based, and the document's page count. */
export interface OcrPage {
  page: number;
  pages: number;
}

/** What OCR made of one page: what it read, or why the engine failed on it. */
export interface PageReading extends OcrReading {
  failure?: string;
  /** Read back (ConvertOptions.ocrKnown or ocrImages), not recognised now. */
  resumed?: true;
}

/** When scanned pages are recognised (OCR): `auto` pages whose text layer is (almost) empty or a stamp, `always`
 * every page whose images cover a third of it, `off` never. */
export type OcrMode = "auto" | "off" | "always";

export interface ConvertOptions {
  ocr?: OcrMode;
  /** Tesseract languages (default `["eng"]`, built in) and the folder with the others' `.traineddata` files. */
  ocrLanguages?: string[];
  ocrData?: string;
  /**
   * Told when the OCR of one page starts and ends: the pool gives each recognised page its own time limit, and an
   * index run shows which page it is reading. The end of a page the engine read carries its reading (never a
   * failure, which is tried again): an index run keeps it at once, so a run cut short resumes after it (ocrKnown).
   * The end of a page whose image an earlier version of the file read (ocrImages) carries that reading, `resumed`.
   */
  onOcrPage?: (phase: "start" | "end", page: OcrPage, reading?: PageReading) => void;
  /**
   * Pages whose OCR ran past its time limit in an earlier attempt at this file (the pool stopped it): not recognised
   * again, each failing with its reason, so the file's other pages are read.
   */
  ocrStopped?: { page: number; reason: string }[];
  /**
   * Pages of this very file (the same bytes, under the same OCR settings) an earlier conversion read and was cut
   * short after (killed, stopped by a limit), by page number: read back, not recognised again.
   */
  ocrKnown?: ReadonlyMap<number, PageReading>;
  /**
   * What OCR read of the page images of an earlier version of this file (ConvertedDocument.ocrImages, under the same
   * OCR settings), by their pixels: a page whose image is one of them, pixel for pixel, takes its reading and is not
   * recognised again. An annotation added to a scanned book changes its bytes, not its page images.
   */
  ocrImages?: ReadonlyMap<string, PageReading>;
  /**
   * Parse source code into `codeSections` of at most this many tokens (the index's chunk budget). The parse is the
   * costly part of indexing code, so it runs where conversions run: in the pool's workers, in parallel.
   */
  codeTokens?: number;
}

/** A PDF without text whose scanned pages were not read because OCR is off (the CLI's convert hints its --ocr). */
export const NO_TEXT_LAYER_OCR_OFF = "no text layer (scanned? OCR is off: set the repository's ocr setting to auto)";
/** An image, which only OCR reads, while OCR is off. */
export const IMAGE_OCR_OFF = "an image is read only by OCR, which is off for this repository";

/** Whether a conversion failed only because OCR is off (a reason, as runs record it). */
export function failedForOcrOff(reason: string): boolean {
  return reason === NO_TEXT_LAYER_OCR_OFF || reason === IMAGE_OCR_OFF;
}

/**
 * A document with a title and no body text (a stub page, an empty Word file with its title set) is found by its
 * title: it becomes the document's one heading, as a note of headings alone is (chunk.ts).
 */
export function bodyOrTitle(text: string, title: string | undefined): string {
  return text.trim() === "" && title ? `# ${shortHeading(title.replace(/\s+/g, " "))}\n` : text;
}

/**
 * What a document's metadata may hold, whichever converter read it (front matter, DOCX and EPUB properties, PDF
 * info): every search result carries it, so an EPUB listing 50,000 authors made one search take 1.2 GB, and YAML's
 * aliases made an 11 MB note's front matter a value SQLite refuses, which failed every index run of its repository.
 * Nesting is kept to `depth` levels (SQLite's JSON functions refuse 1,000); a string is cut at `valueChars` with an
 * ellipsis; past `values` values or `chars` characters in all (keys and strings), the rest is left out.
 */
export const METADATA_LIMITS = { depth: 32, values: 10_000, chars: 64 * 1024, valueChars: 4096 };

/**
 * `value` as a tree within METADATA_LIMITS. YAML's aliases share a value rather than copy it, and the library
 * refuses only sharing that multiplies (a "billion laughs"), not a value that holds itself: `a: &x [*x, *x]` copied
 * out 32 levels deep is 2^32 values (an index run grew past 20 GB before it was killed). A value that holds itself is
 * left out where it recurs.
 */
export function boundedMetadata(metadata: Record<string, unknown>, limits = METADATA_LIMITS): Record<string, unknown> {
  let values = limits.values;
  let chars = limits.chars;
  const open = new Set<object>();
  const copy = (item: unknown, depth: number): unknown => {
    if (--values < 0 || chars <= 0) return undefined;
    // A YAML integer (read as BigInt): a number while exact, else its digits as text.
    if (typeof item === "bigint") return Number.isSafeInteger(Number(item)) ? Number(item) : String(item);
    if (typeof item === "string") {
      // A soft hyphen is no part of a value (`Kranken&shy;haus`): kept, `tags=Krankenhaus` missed it. Half of a
      // character (YAML's `"a\ud800b"`) is U+FFFD, as HTML and DOCX give it: `--json` printed it as a lone `\ud800`
      // that jq and strict MCP clients refuse (s19 hostile #6). Composed (NFC), as filter values are: `tags=café`
      // missed a tag written decomposed.
      const text = composed(withoutInvisibles(item).toWellFormed());
      const kept = shortened(text, limits.valueChars);
      chars -= kept.length;
      return chars >= 0 ? kept : undefined;
    }
    if (item instanceof Date) return Number.isNaN(item.getTime()) ? undefined : item.toISOString(); // TOML's dates as ISO text (milliseconds added; a local date or time stays local)
    // A record is plain with or without a prototype (TOML's tables have none).
    const record = item !== null && typeof item === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(item));
    const plain = Array.isArray(item) || record;
    if (!plain) return item;
    if (depth <= 0 || open.has(item as object)) return undefined;
    open.add(item as object);
    const kept: [string | number, unknown][] = [];
    for (const [key, child] of Array.isArray(item) ? item.entries() : Object.entries(item as object)) {
      if (typeof key === "string") chars -= key.length;
      const bounded = copy(child, depth - 1);
      if (bounded !== undefined) kept.push([typeof key === "string" ? key.toWellFormed() : key, bounded]);
    }
    open.delete(item as object);
    return Array.isArray(item) ? kept.map(([, child]) => child) : Object.fromEntries(kept);
  };
  return copy(metadata, limits.depth) as Record<string, unknown>;
}

/**
 * Bytes that declare no encoding and are not all UTF-8: windows-1252 when more of their non-ASCII bytes fail to read
 * as UTF-8 than read as it (a Western page or file saved before UTF-8 was usual: `caf\xe9` read as `caf�`); else
 * UTF-8. Either way the minority is what is lost: a UTF-8 file cut inside a character loses that character, and a
 * windows-1252 page with one pasted UTF-8 `é` that one (every other accent was `�`). HTML and text files share it.
 */
export function utf8OrWindows1252(bytes: Uint8Array): string {
  const text = new TextDecoder("utf-8").decode(bytes);
  if (!text.includes("\ufffd")) return text; // all UTF-8 (a 9.7 MB page: counted, it took 0.5 s and 177 MB)
  let invalid = 0;
  let valid = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0xfffd) invalid++;
    else if (c >= 0x80 && (c < 0xdc00 || c > 0xdfff)) valid++; // a character past ASCII, counted once (not its low surrogate)
  }
  return invalid > valid ? new TextDecoder("windows-1252").decode(bytes) : text;
}

/**
 * A text without NULs, which text does not hold: padding at its end (a crashed write, a sync tool) is dropped, and so
 * are a few strays. More, anywhere in the file, is binary: a shell installer with a payload after 12 KB of script was
 * indexed as 1,898 fragments.
 */
export function withoutNuls(text: string, kind = "a text file"): string {
  if (!text.includes("\0")) return text;
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0) end--;
  const content = text.slice(0, end);
  let nuls = 0;
  for (let i = 0; i < content.length; i++) if (content.charCodeAt(i) === 0) nuls++;
  if (nuls > MAX_STRAY_NULS || nuls > content.length / 1000) {
    throw new ResearcherError("FILE_UNREADABLE", `binary content (NUL bytes) in ${kind}`);
  }
  return nuls ? content.replaceAll("\0", "") : content;
}

const MAX_STRAY_NULS = 16;

/** A text read by a decoder that takes nearly any bytes, refused as binary when more than 1 % is no text. */
export function withoutControls(text: string, kind = "a text file"): string {
  if (controlCount(text) > text.length / 100) throw new ResearcherError("FILE_UNREADABLE", `binary content (control bytes) in ${kind}`);
  return text;
}

/**
 * Characters text does not hold (C0 controls but tab, line ends and escape; C1 controls; unpaired surrogates, which
 * only UTF-16 brings): the sign of binary.
 */
function controlCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x01 && c <= 0x08) || (c >= 0x0e && c <= 0x1a) || (c >= 0x1c && c <= 0x1f) || (c >= 0x80 && c <= 0x9f)) count++;
    else if (c >= 0xd800 && c <= 0xdfff) {
      const low = text.charCodeAt(i + 1);
      if (c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) i++;
      else count++;
    }
  }
  return count;
}

/**
 * UTF-32 or UTF-16 after its byte order mark, or null without one. UTF-32's marks are looked at first: little-endian's
 * begins as UTF-16LE's does, and read so the text was a NUL after every character, "indexed" with no word searchable
 * (s26 hostile F3).
 */
export function decodeWide(bytes: Uint8Array): string | null {
  const utf32 =
    bytes[2] === 0 && bytes[3] === 0 && bytes[0] === 0xff && bytes[1] === 0xfe
      ? "le"
      : bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 0xfe && bytes[3] === 0xff
        ? "be"
        : null;
  // (A UTF-16LE text whose first character is U+0000 begins so too: read as UTF-32 it is no text, and is read as
  // UTF-16.)
  const text = utf32 ? decodeUtf32(bytes.subarray(4), utf32 === "le") : null;
  if (text !== null) return text;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeUtf16(bytes.subarray(2), true);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeUtf16(bytes.subarray(2), false);
  return null;
}

/**
 * UTF-32 (which TextDecoder does not read), or null when the bytes are no UTF-32: a unit that is no code point (past
 * U+10FFFF, a surrogate). A tail of 1–3 bytes past the last whole unit (a newline a UTF-8 tool appended, a cut copy)
 * is dropped: the length alone sent such a file to UTF-16, a NUL after every letter again (s27 hostile E1).
 */
function decodeUtf32(bytes: Uint8Array, little: boolean): string | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength - (bytes.byteLength % 4));
  const parts: string[] = [];
  for (let at = 0; at < view.byteLength; at += 4) {
    const code = view.getUint32(at, little);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return null;
    parts.push(String.fromCodePoint(code));
  }
  return parts.join("");
}

/**
 * UTF-16's units as they are, a stray last byte dropped as UTF-32's tail is, and so is a last high surrogate (a copy
 * cut inside an emoji: one such unit failed a short text whole as binary, where UTF-8 cut so is read, s27b retest N5).
 * Other unpaired surrogates are left for `withoutControls` to count (TextDecoder would make each a U+FFFD, which text
 * does hold).
 */
function decodeUtf16(bytes: Uint8Array, little: boolean): string {
  const whole = bytes.byteLength - (bytes.byteLength % 2);
  const last = whole >= 2 ? new DataView(bytes.buffer, bytes.byteOffset + whole - 2, 2).getUint16(0, little) : 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset, last >= 0xd800 && last <= 0xdbff ? whole - 2 : whole);
  const parts: string[] = [];
  const units = new Array<number>(UTF16_CHUNK);
  for (let at = 0; at < view.byteLength; at += 2 * UTF16_CHUNK) {
    const count = Math.min(UTF16_CHUNK, (view.byteLength - at) / 2);
    units.length = count;
    for (let i = 0; i < count; i++) units[i] = view.getUint16(at + 2 * i, little);
    parts.push(String.fromCharCode(...units));
  }
  return parts.join("");
}

/** Units per String.fromCharCode call: its arguments go on the stack. */
const UTF16_CHUNK = 8192;
