/**
 * EPUB → one markdown document: the spine's XHTML documents in reading order, each through the HTML converter, a
 * chapter without an opening heading given its table-of-contents title. Title, authors, language, publisher and date
 * come from the package document (OPF).
 *
 * The container, OPF, NCX and nav documents are read with small regexes over tags and attributes rather than an XML
 * parser: they are flat, machine-written files whose few elements we need are well specified, there is no XML parser
 * among the dependencies, and domino (an HTML parser) would mis-nest their self-closing elements.
 */
import { posix } from "node:path";
import { strFromU8 } from "fflate";
import { type ConvertedDocument, stringValue } from "./document.ts";
import { markdownBlocks } from "./markdown.ts";
import { decodeXmlEntities, enclosed, replaceEnclosed, xmlText } from "./xml.ts";
import { readZip } from "./zip.ts";
import { decodeHtml, htmlToMarkdown } from "./html.ts";
import { ResearcherError } from "../errors.ts";

interface ManifestItem {
  /** Path inside the zip. */
  path: string;
  mediaType: string;
  properties: string[];
}

interface Package {
  manifest: Map<string, ManifestItem>;
  /** Manifest ids in reading order. */
  spine: string[];
  /** The spine's `toc` attribute: the NCX's manifest id (EPUB 2). */
  ncx?: string;
  opf: string;
}

const CONTAINER = "META-INF/container.xml";
const ENCRYPTION = "META-INF/encryption.xml";
const HTML_TYPES = new Set(["application/xhtml+xml", "text/html"]);

export async function convertEpub(bytes: Uint8Array, fallbackTitle: string): Promise<ConvertedDocument> {
  // Each pass lists the zip directory and inflates only what it needs: the container, the package, then the
  // documents the spine and the table of contents name (never images, fonts or media).
  const meta = readZip(bytes, (name) => name === CONTAINER || name === ENCRYPTION, "EPUB");
  const opfPath = packagePath(meta);
  const book = readPackage(
    readZip(bytes, (name) => name === opfPath, "EPUB"),
    opfPath,
  );
  refuseEncrypted(meta, book);
  const wanted = new Set([...book.spine.map((id) => book.manifest.get(id)?.path), ...tocItems(book).map((item) => item.path)]);
  const files = readZip(bytes, (name) => wanted.has(name), "EPUB");
  const titles = tocTitles(files, book);
  const chapters = spineItems(book).flatMap((item) => chapterMarkdown(files, item, titles) ?? []);
  const { title, ...metadata } = packageMetadata(book.opf);
  return { title: stringValue(title) ?? fallbackTitle, format: "markdown", text: chapters.join("\n\n"), firstLine: 1, metadata };
}

/**
 * The spine's documents in reading order, each file once: the spine lists each manifest id once already, but 5,000
 * ids may name one file (29 KB of zip became 25,000 fragments of one chapter).
 */
function spineItems(book: Package): ManifestItem[] {
  const byPath = new Map<string, ManifestItem>();
  for (const id of book.spine) {
    const item = book.manifest.get(id);
    if (item && !byPath.has(item.path)) byPath.set(item.path, item);
  }
  return [...byPath.values()];
}

function packagePath(files: Record<string, Uint8Array>): string {
  const container = files[CONTAINER];
  if (!container) throw unreadable(`not an EPUB: no ${CONTAINER}`);
  const rootfiles = tags(strFromU8(container), "rootfile");
  const rootfile = rootfiles.find((r) => r["media-type"] === "application/oebps-package+xml") ?? rootfiles[0];
  const path = rootfile?.["full-path"];
  if (!path) throw unreadable(`${CONTAINER} names no package document`);
  return path;
}

function readPackage(files: Record<string, Uint8Array>, opfPath: string): Package {
  const bytes = files[opfPath];
  if (!bytes) throw unreadable(`package document ${opfPath} is missing`);
  const opf = withoutComments(strFromU8(bytes));
  const manifest = new Map<string, ManifestItem>();
  for (const item of tags(opf, "item")) {
    if (!item.id || !item.href) continue;
    const properties = (item.properties ?? "").split(/\s+/).filter(Boolean);
    manifest.set(item.id, { path: resolveHref(opfPath, item.href), mediaType: item["media-type"] ?? "", properties });
  }
  // Each item once: a spine that lists one chapter 20,000 times (15 KB of zip) would convert it 20,000 times.
  const spine = [...new Set(tags(opf, "itemref").flatMap((ref) => ref.idref ?? []))];
  if (!spine.length) throw unreadable(`package document ${opfPath} has an empty spine`);
  return { manifest, spine, ncx: tags(opf, "spine")[0]?.toc, opf };
}

/** DRM-encrypted content documents are noise once decoded; font obfuscation (fonts only) does not matter here. */
function refuseEncrypted(files: Record<string, Uint8Array>, book: Package): void {
  const encryption = files[ENCRYPTION];
  if (!encryption) return;
  // CipherReference URIs are relative to the container root, not to the OPF
  const encrypted = new Set(tags(strFromU8(encryption), "CipherReference").map((ref) => resolveHref("", ref.URI ?? "")));
  if (book.spine.some((id) => encrypted.has(book.manifest.get(id)?.path ?? ""))) {
    throw unreadable("encrypted (DRM-protected) EPUB");
  }
}

function chapterMarkdown(
  files: Record<string, Uint8Array>,
  item: ManifestItem | undefined,
  titles: Map<string, string>,
): string | undefined {
  if (!item || !HTML_TYPES.has(item.mediaType) || item.properties.includes("nav")) return undefined;
  const bytes = files[item.path];
  if (!bytes) return undefined; // a spine entry the zip lacks: readers skip it too
  let markdown: string;
  try {
    markdown = htmlToMarkdown(decodeHtml(bytes));
  } catch (error) {
    if (error instanceof ResearcherError) throw unreadable(`${item.path}: ${error.message}`);
    throw error;
  }
  if (!markdown) return undefined;
  const title = titles.get(item.path);
  return title && !opensWithHeading(markdown, title) ? `# ${title}\n\n${markdown}` : markdown;
}

/**
 * The chapter's own heading may come after a page number or a logo's alt text: a heading behind at most two short
 * lines counts as opening the chapter. So does the table-of-contents title itself as any heading of the chapter.
 */
function opensWithHeading(markdown: string, title: string): boolean {
  const lines = markdown.split("\n");
  const normal = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();
  let before = 0; // short lines ahead of the first heading
  let opening: boolean | undefined; // whether the first heading opens the chapter, once it is known
  for (const block of markdownBlocks(lines.entries())) {
    if (block.kind === "heading") {
      opening ??= before <= 2;
      if (opening || normal(block.text) === normal(title)) return true;
    } else if (opening === undefined && !(block.kind === "line" && block.blank)) {
      // Code (a fence, with its `# comments`) or a long line is the chapter's text begun: no heading opens it.
      if (block.kind === "fence" || lines[block.line]!.length > 40) opening = false;
      else before++;
    }
  }
  return false;
}

/** The EPUB 3 navigation document and the EPUB 2 NCX, whichever the book has. */
function tocItems(book: Package): ManifestItem[] {
  return [...book.manifest.entries()]
    .filter(([id, item]) => item.properties.includes("nav") || id === book.ncx || item.mediaType === "application/x-dtbncx+xml")
    .map(([, item]) => item);
}

/** Zip path → the title of the first table-of-contents entry that points into it. */
function tocTitles(files: Record<string, Uint8Array>, book: Package): Map<string, string> {
  const titles = new Map<string, string>();
  for (const item of tocItems(book)) {
    const bytes = files[item.path];
    if (!bytes) continue;
    const source = decodeHtml(bytes);
    const entries = item.properties.includes("nav") ? navEntries(source) : ncxEntries(source);
    for (const [href, title] of entries) {
      const path = resolveHref(item.path, href);
      if (title && !titles.has(path)) titles.set(path, title);
    }
  }
  return titles;
}

/** `<a href>` entries of the `<nav epub:type="toc">` element. */
function navEntries(xhtml: string): [string, string][] {
  const navs = [...enclosed(xhtml, /<nav\b([^<>]*)>/gi, /<\/nav>/gi)];
  const toc = navs.find((nav) => /\btype\s*=\s*["'][^"']*\btoc\b/i.test(nav.open[1] ?? "")) ?? navs[0];
  const links = toc ? [...enclosed(toc.inner, /<a\b([^<>]*)>/gi, /<\/a>/gi)] : [];
  return links.map((a) => [attributes(a.open[1] ?? "").href ?? "", xmlText(a.inner)]);
}

/** `navPoint` entries of an NCX: each label is followed by its `content src`. */
function ncxEntries(ncx: string): [string, string][] {
  const entries: [string, string][] = [];
  const content = /<content\b([^<>]*)>/gi;
  for (const label of enclosed(ncx, /<navLabel\b[^<>]*>\s*<text\b[^<>]*>/gi, /<\/text>/gi)) {
    content.lastIndex = label.end;
    const target = content.exec(ncx);
    if (!target) break; // none after this label, nor after any later one
    entries.push([attributes(target[1] ?? "").src ?? "", xmlText(label.inner)]);
  }
  return entries;
}

/** Dublin Core fields researcher keeps; several creators become an array. */
function packageMetadata(opf: string): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  const fields = { title: "title", author: "creator", language: "language", publisher: "publisher", date: "date" };
  for (const [key, element] of Object.entries(fields)) {
    const values = [...enclosed(opf, new RegExp(`<dc:${element}\\b[^<>]*>`, "gi"), new RegExp(`</dc:${element}>`, "gi"))]
      .map((match) => xmlText(match.inner))
      .filter(Boolean);
    if (!values.length) continue;
    metadata[key] = key === "author" && values.length > 1 ? values : values[0];
  }
  return metadata;
}

/** A zip path from an href relative to the file that holds it: fragment dropped, percent-escapes decoded. */
function resolveHref(fromPath: string, href: string): string {
  const target = href.split("#")[0] ?? "";
  let decoded = target;
  try {
    decoded = decodeURIComponent(target);
  } catch {
    // a stray `%` is a literal character in a file name
  }
  if (decoded.startsWith("/")) return posix.normalize(decoded.slice(1));
  return posix.normalize(posix.join(posix.dirname(fromPath), decoded)).replace(/^(\.\.\/)+/, "");
}

/** Attributes of every `<name …>` (with or without a namespace prefix), entity-decoded. */
function tags(xml: string, name: string): Record<string, string>[] {
  const pattern = new RegExp(`<(?:[\\w.-]+:)?${name}(?=[\\s/>])([^<>]*)>`, "g");
  return [...xml.matchAll(pattern)].map((match) => attributes(match[1] ?? ""));
}

function attributes(source: string): Record<string, string> {
  const result: Record<string, string> = {};
  // A name from its first character to its last (look-behind and look-ahead): `<item aaaa…/>` without a `=` was tried
  // from every letter, each try to the word's end (quadratic).
  for (const match of source.matchAll(/(?<![\w:.-])([\w:.-]+)(?![\w:.-])\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    result[(match[1] ?? "").replace(/^[\w.-]+:/, "")] = decodeXmlEntities(match[2] ?? match[3] ?? "");
  }
  return result;
}

function withoutComments(xml: string): string {
  return replaceEnclosed(xml, /<!--/g, /-->/g, () => "");
}

function unreadable(reason: string): ResearcherError {
  return new ResearcherError("FILE_UNREADABLE", reason);
}
