/** A file's bytes → text the chunker understands (markdown or plain text) plus metadata. */
import { basename, extname } from "node:path";
import { ResearcherError } from "./errors.ts";
import { parseYaml } from "./yaml.ts";

export type TextFormat = "markdown" | "text";

export interface ConvertedDocument {
  title: string;
  format: TextFormat;
  /** The body, without front matter. */
  text: string;
  /** 1-based line in the original file where `text` starts (front matter shifts it). */
  firstLine: number;
  metadata: Record<string, unknown>;
}

const MARKDOWN_TYPES = new Set(["md", "markdown", "mdx"]);

export function convertFile(path: string, bytes: Uint8Array): ConvertedDocument {
  const type = extname(path).slice(1).toLowerCase();
  const raw = decodeText(bytes);
  const fallbackTitle = basename(path, extname(path));
  if (MARKDOWN_TYPES.has(type)) return convertMarkdown(raw, fallbackTitle);
  return { title: fallbackTitle, format: "text", text: raw, firstLine: 1, metadata: {} };
}

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
    const parsed = parseYaml(source);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {}; // malformed front matter is metadata we cannot use, not a reason to drop the document
  }
}

/** The first H1, or a heading of any level that opens the document (mdBook chapters start with `##`). */
function firstHeading(text: string): string | undefined {
  const h1 = /^#[ \t]+(.+?)[ \t#]*$/m.exec(text);
  const opening = /^\s*#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(text.slice(0, text.search(/\S/) + 200));
  const found = h1 ?? (opening && opening.index === 0 ? opening : null);
  return found?.[1]?.trim() || undefined;
}

function stringValue(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
  return count;
}
