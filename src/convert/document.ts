/**
 * What every converter returns, and what the formats share to make it: page markers for paged documents and the
 * title taken from a first heading or a metadata field.
 */

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

/** The line that opens page `n` in a paged document's text. */
export function pageMarker(n: number): string {
  return `<!-- page ${n} -->`;
}

export const PAGE_MARKER = /^<!-- page (\d+) -->$/;

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
 * Join a line onto a paragraph, rejoining a word hyphenated across the break (`experi-` + `ment`) only when both
 * parts are lower-case letters: the usual sign of typesetting rather than a compound. Text PDFs and OCR share it.
 */
export function joinLine(paragraph: string, line: string): string {
  if (!paragraph) return line;
  if (/\p{Ll}-$/u.test(paragraph) && /^\p{Ll}/u.test(line)) return paragraph.slice(0, -1) + line;
  return `${paragraph} ${line}`;
}

export function stringValue(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
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
