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
