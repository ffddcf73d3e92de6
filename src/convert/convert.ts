/**
 * A file's bytes → markdown (or plain text) the chunker understands, plus a title and metadata. One sibling module
 * per format (`convert-pdf.ts`, `convert-docx.ts`, `convert-html.ts`, `convert-epub.ts`) does the work with a
 * well-kept library; this module dispatches by file type and owns the text formats. The chunker, store and search
 * never see the original format.
 */
import { basename, extname } from "node:path";
import { ResearcherError } from "../errors.ts";
import { parseYaml } from "../yaml.ts";

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
}

/** When scanned pages are recognised (OCR): `auto` pages whose text layer is (almost) empty, `always` every page
 * with a page-sized image, `off` never. */
export type OcrMode = "auto" | "off" | "always";

export interface ConvertOptions {
  ocr?: OcrMode;
  /** Tesseract languages (default `["eng"]`, built in) and the folder with the others' `.traineddata` files. */
  ocrLanguages?: string[];
  ocrData?: string;
  /** Told when the OCR of one page starts and ends: the pool gives each recognised page its own time limit. */
  onOcrPage?: (phase: "start" | "end") => void;
}

/** The file types researcher can read, by extension (lower case, no dot). */
export const SUPPORTED_TYPES = [
  "md",
  "markdown",
  "mdx",
  "txt",
  "pdf",
  "docx",
  "html",
  "htm",
  "xhtml",
  "epub",
  "png",
  "jpg",
  "jpeg",
  "tif",
  "tiff",
] as const;

const MARKDOWN_TYPES = new Set(["md", "markdown", "mdx"]);
const HTML_TYPES = new Set(["html", "htm", "xhtml"]);
/** Aliases of the image types (read by OCR): `jpeg` → `jpg`, `tiff` → `tif`. */
const IMAGE_ALIASES: Record<string, string> = { jpeg: "jpg", tiff: "tif" };

/** The stored `format` of a document: its file type, with aliases folded (`markdown`, `mdx` → `md`; `htm` → `html`;
 * `jpeg` → `jpg`; `tiff` → `tif`). */
export function formatOf(path: string): string {
  const type = fileType(path);
  if (MARKDOWN_TYPES.has(type)) return "md";
  if (HTML_TYPES.has(type)) return "html";
  return IMAGE_ALIASES[type] ?? (type || "txt");
}

/** Formats read as text: converted inline, and read back as the file itself (line numbers are the file's). */
export const TEXT_FORMATS: ReadonlySet<string> = new Set(["md", "txt"]);

export function fileType(path: string): string {
  return extname(path).slice(1).toLowerCase();
}

export function fallbackTitle(path: string): string {
  return basename(path, extname(path));
}

/**
 * Longest heading (or title) kept whole, in characters. Every fragment of a section carries its title and heading
 * path, in the store and the full-text index: a 100 KB heading repeated over a section's fragments made a 3.85 MB
 * file a 2.4 GB index.
 */
export const HEADING_MAX_CHARS = 100;

/** A heading or title cut to `max` characters at a word boundary (hard-cut without one), with an ellipsis. */
export function shortHeading(text: string, max = HEADING_MAX_CHARS): string {
  if (text.length <= max) return text;
  const space = text.lastIndexOf(" ", max - 1);
  const cut = space > max / 2 ? space : max - 1;
  return `${text.slice(0, cut).trimEnd()}…`;
}

/** Convert one file. Throws `ResearcherError` (`FILE_UNREADABLE`) with a one-line reason when it cannot. */
export async function convertFile(path: string, bytes: Uint8Array, options: ConvertOptions = {}): Promise<ConvertedDocument> {
  const document = await convertByFormat(path, bytes, options);
  return { ...document, title: shortHeading(document.title) };
}

async function convertByFormat(path: string, bytes: Uint8Array, options: ConvertOptions): Promise<ConvertedDocument> {
  const title = fallbackTitle(path);
  switch (formatOf(path)) {
    case "md":
      return convertMarkdown(decodeText(bytes), title);
    case "pdf":
      return (await import("./pdf.ts")).convertPdf(bytes, title, options);
    case "docx":
      return (await import("./docx.ts")).convertDocx(bytes, title);
    case "html":
      return (await import("./html.ts")).convertHtml(bytes, title);
    case "epub":
      return (await import("./epub.ts")).convertEpub(bytes, title);
    case "png":
    case "jpg":
    case "tif":
      return (await import("./image.ts")).convertImage(formatOf(path), bytes, title, options);
    default:
      return { title, format: "text", text: decodeText(bytes), firstLine: 1, metadata: {} };
  }
}

/** How many of a converted document's pages were read by OCR (its `ocr_pages` metadata). */
export function ocrPagesOf(metadata: Record<string, unknown>): number {
  return typeof metadata.ocr_pages === "number" ? metadata.ocr_pages : 0;
}

/** The line that opens page `n` in a paged document's text. */
export function pageMarker(n: number): string {
  return `<!-- page ${n} -->`;
}

export const PAGE_MARKER = /^<!-- page (\d+) -->$/;

/** Text files are UTF-8 (with or without BOM) or UTF-16 with a BOM; anything else is refused with a reason. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2));
  if (bytes.subarray(0, 8192).includes(0)) {
    throw new ResearcherError("FILE_UNREADABLE", "binary content (NUL bytes) in a text file");
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ResearcherError("FILE_UNREADABLE", "not valid UTF-8 text");
  }
}

const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export function convertMarkdown(raw: string, fallbackTitle: string): ConvertedDocument {
  let metadata: Record<string, unknown> = {};
  let text = raw;
  let firstLine = 1;
  const match = FRONT_MATTER.exec(raw);
  if (match) {
    metadata = parseFrontMatter(match[1] ?? "");
    text = raw.slice(match[0].length);
    firstLine = 1 + countNewlines(match[0]);
  }
  const title = stringValue(metadata.title) ?? firstHeading(text) ?? fallbackTitle;
  return { title, format: "markdown", text, firstLine, metadata };
}

function parseFrontMatter(source: string): Record<string, unknown> {
  try {
    // Checking keys for uniqueness is quadratic in the library (578 KB of keys took seconds); the last one wins.
    const parsed = parseYaml(source, { uniqueKeys: false });
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {}; // malformed front matter is metadata we cannot use, not a reason to drop the document
  }
}

/** The first H1, or a heading of any level that opens the document (mdBook chapters start with `##`). */
export function firstHeading(text: string): string | undefined {
  // Trailing spaces and #s are stripped outside the regex: `(.+?)[ \t#]*$` backtracks quadratically on a long run.
  const h1 = /^#[ \t]+(.+)$/m.exec(text);
  const opening = /^\s*#{1,6}[ \t]+(.+)$/m.exec(text.slice(0, text.search(/\S/) + 200));
  const found = h1 ?? (opening && opening.index === 0 ? opening : null);
  return found ? stripClosing(found[1]!).trim() || undefined : undefined;
}

/** The heading text without trailing spaces and `#`s, keeping at least its first character. */
function stripClosing(text: string): string {
  let end = text.length;
  while (end > 1 && (text[end - 1] === " " || text[end - 1] === "\t" || text[end - 1] === "#")) end--;
  return text.slice(0, end);
}

export function stringValue(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
  return count;
}
