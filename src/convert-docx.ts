/**
 * DOCX → markdown: mammoth turns the document into semantic HTML (Heading styles become <h1>…, lists, tables,
 * footnotes and endnotes as a closing list), then the HTML converter turns that into markdown. Title and author
 * come from the package's core properties.
 */
import { unzipSync } from "fflate";
import { firstHeading, type ConvertedDocument } from "./convert.ts";
import { htmlToMarkdown } from "./convert-html.ts";
import { describeError, ResearcherError } from "./errors.ts";

/** Legacy .doc files and password-protected .docx files are OLE compound files, not zip packages. */
const OLE_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0];

export async function convertDocx(bytes: Uint8Array, fallbackTitle: string): Promise<ConvertedDocument> {
  if (OLE_SIGNATURE.every((byte, i) => bytes[i] === byte)) {
    throw new ResearcherError("FILE_UNREADABLE", "encrypted DOCX or legacy .doc format (not supported)");
  }
  const core = coreProperties(bytes);
  const mammoth = await import("mammoth");
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })).value;
  } catch (error) {
    throw new ResearcherError("FILE_UNREADABLE", `not a readable DOCX: ${describeError(error)}`);
  }
  const text = htmlToMarkdown(html);
  const { title, ...metadata } = core;
  return { title: title ?? firstHeading(text) ?? fallbackTitle, format: "markdown", text, firstLine: 1, metadata };
}

/** `docProps/core.xml`: a handful of Dublin Core elements, read without a full XML parser. */
function coreProperties(bytes: Uint8Array): { title?: string } & Record<string, string> {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes, { filter: (file) => file.name === "docProps/core.xml" });
  } catch (error) {
    throw new ResearcherError("FILE_UNREADABLE", `not a valid DOCX (zip) file: ${describeError(error)}`);
  }
  const xml = files["docProps/core.xml"] ? new TextDecoder().decode(files["docProps/core.xml"]) : "";
  const found: Record<string, string> = {};
  for (const [key, tag] of [["title", "dc:title"], ["author", "dc:creator"], ["subject", "dc:subject"], ["keywords", "cp:keywords"], ["created", "dcterms:created"], ["modified", "dcterms:modified"]] as const) {
    const value = new RegExp(`<${tag}(?:\\s[^>]*)?>([^<]*)</${tag}>`).exec(xml)?.[1];
    if (value?.trim()) found[key] = decodeEntities(value.trim());
  }
  return found;
}

export function decodeEntities(text: string): string {
  return text.replace(/&(?:#(\d+)|#x([0-9a-f]+)|(amp|lt|gt|quot|apos));/gi, (_, dec, hex, name: string) => {
    if (dec) return String.fromCodePoint(Number(dec));
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    return { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }[name.toLowerCase() as "amp"];
  });
}
