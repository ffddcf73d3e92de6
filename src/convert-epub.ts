/**
 * EPUB → one markdown document per book: the OPF spine gives the chapters in reading order, each chapter goes
 * through the HTML converter, and a chapter that does not open with a heading gets its table-of-contents title as
 * one, so the chunker's heading path names the chapter. The package files (container, OPF, NCX) are small XML
 * documents with a fixed vocabulary, read with narrow patterns over their attributes; chapters and the EPUB 3
 * navigation document go through the HTML parser.
 */
import { unzipSync } from "fflate";
import { type ConvertedDocument } from "./convert.ts";
import { decodeEntities } from "./convert-docx.ts";
import { decodeHtml, documentToMarkdown, parseHtml } from "./convert-html.ts";
import { describeError, ResearcherError } from "./errors.ts";

/** A book's text is a few MB; a declared total far beyond that is a zip bomb, refused before inflating. */
const MAX_UNPACKED_BYTES = 512 * 2 ** 20;
const TEXT_FILE = /\.(xhtml|html|htm|xml|opf|ncx)$/i;

interface Manifest {
  items: Map<string, { href: string; mediaType: string; properties: string }>;
  spine: string[];
  metadata: Record<string, unknown>;
  title?: string;
  tocId?: string;
}

export async function convertEpub(bytes: Uint8Array, fallbackTitle: string): Promise<ConvertedDocument> {
  const files = unpack(bytes);
  const text = (name: string) => (files[name] ? decodeHtml(files[name]) : undefined);
  const container = text("META-INF/container.xml");
  const opfPath = container && attribute(/<rootfile\b[^>]*>/i.exec(container)?.[0] ?? "", "full-path");
  const opf = opfPath ? text(opfPath) : undefined;
  if (!opfPath || !opf) throw unreadable("no package document (META-INF/container.xml → .opf) in this EPUB");
  const base = opfPath.includes("/") ? opfPath.slice(0, opfPath.lastIndexOf("/") + 1) : "";
  const manifest = readManifest(opf);
  const titles = tocTitles(manifest, base, text);
  const chapters: string[] = [];
  for (const idref of manifest.spine) {
    const item = manifest.items.get(idref);
    if (!item || !/html/i.test(item.mediaType)) continue;
    const path = resolveHref(base, item.href);
    const source = text(path);
    if (!source) continue;
    const markdown = documentToMarkdown(parseHtml(source));
    const title = titles.get(path);
    chapters.push(title && !/^#{1,6} /.test(markdown) ? `# ${title}\n\n${markdown}` : markdown);
  }
  if (chapters.every((c) => !c.trim())) throw unreadable("no readable chapters in this EPUB's spine");
  return { title: manifest.title ?? fallbackTitle, format: "markdown", text: chapters.join("\n\n"), firstLine: 1, metadata: manifest.metadata };
}

function unreadable(reason: string): ResearcherError {
  return new ResearcherError("FILE_UNREADABLE", reason);
}

/** The text files of the package (images and fonts stay compressed), after a check of the declared sizes. */
function unpack(bytes: Uint8Array): Record<string, Uint8Array> {
  let total = 0;
  try {
    return unzipSync(bytes, {
      filter: (file) => {
        total += file.originalSize;
        if (total > MAX_UNPACKED_BYTES) throw unreadable(`EPUB unpacks to more than ${MAX_UNPACKED_BYTES / 2 ** 20} MB`);
        return TEXT_FILE.test(file.name);
      },
    });
  } catch (error) {
    if (error instanceof ResearcherError) throw error;
    throw unreadable(`not a valid EPUB (zip) file: ${describeError(error)}`);
  }
}

function readManifest(opf: string): Manifest {
  const items = new Map<string, { href: string; mediaType: string; properties: string }>();
  for (const [tag] of opf.matchAll(/<(?:\w+:)?item\b[^>]*>/gi)) {
    const id = attribute(tag, "id");
    const href = attribute(tag, "href");
    if (id && href) items.set(id, { href, mediaType: attribute(tag, "media-type") ?? "", properties: attribute(tag, "properties") ?? "" });
  }
  const spine = [...opf.matchAll(/<(?:\w+:)?itemref\b[^>]*>/gi)].map(([tag]) => attribute(tag, "idref")).filter((id): id is string => Boolean(id));
  const tocId = attribute(/<(?:\w+:)?spine\b[^>]*>/i.exec(opf)?.[0] ?? "", "toc");
  const dc = (name: string) => [...opf.matchAll(new RegExp(`<dc:${name}\\b[^>]*>([\\s\\S]*?)</dc:${name}>`, "gi"))].map((m) => clean(m[1]!)).filter(Boolean);
  const metadata: Record<string, unknown> = {};
  const authors = dc("creator");
  if (authors.length) metadata.author = authors.length === 1 ? authors[0] : authors;
  for (const name of ["language", "publisher", "date", "subject", "description"]) {
    const values = dc(name);
    if (values.length) metadata[name] = values.length === 1 ? values[0] : values;
  }
  return { items, spine, metadata, title: dc("title")[0], tocId };
}

/** Chapter path → title, from the EPUB 3 navigation document or else the EPUB 2 NCX. */
function tocTitles(manifest: Manifest, base: string, text: (name: string) => string | undefined): Map<string, string> {
  const titles = new Map<string, string>();
  const add = (href: string, title: string, from: string) => {
    const path = resolveHref(from, href.split("#")[0]!);
    if (title && !titles.has(path)) titles.set(path, title);
  };
  const items = [...manifest.items.values()];
  const nav = items.find((item) => /\bnav\b/.test(item.properties));
  const ncx = (manifest.tocId && manifest.items.get(manifest.tocId)) || items.find((item) => /ncx/.test(item.mediaType));
  if (nav) {
    const path = resolveHref(base, nav.href);
    const source = text(path);
    const folder = path.slice(0, path.lastIndexOf("/") + 1);
    if (source) for (const a of Array.from(parseHtml(source).querySelectorAll("nav a[href]"))) add(a.getAttribute("href")!, clean(a.textContent ?? ""), folder);
  } else if (ncx) {
    const path = resolveHref(base, ncx.href);
    const source = text(path) ?? "";
    const folder = path.slice(0, path.lastIndexOf("/") + 1);
    for (const [point] of source.matchAll(/<navPoint\b[\s\S]*?<content\b[^>]*>/gi)) {
      const label = /<text>([\s\S]*?)<\/text>/i.exec(point)?.[1];
      const src = attribute(/<content\b[^>]*>/i.exec(point)?.[0] ?? "", "src");
      if (label && src) add(src, clean(label), folder);
    }
  }
  return titles;
}

/** A manifest href (relative to the package folder, URL-encoded) → the path inside the zip. */
function resolveHref(base: string, href: string): string {
  let decoded = href;
  try {
    decoded = decodeURIComponent(href);
  } catch {
    // a stray % is a literal character
  }
  const parts: string[] = [];
  for (const part of `${base}${decoded}`.split("/")) {
    if (part === "..") parts.pop();
    else if (part && part !== ".") parts.push(part);
  }
  return parts.join("/");
}

function attribute(tag: string, name: string): string | undefined {
  const value = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, "i").exec(tag);
  return value ? decodeEntities(value[1] ?? value[2] ?? "") : undefined;
}

function clean(text: string): string {
  return decodeEntities(text.replace(/<[^>]+>/g, "")).replace(/\s+/g, " ").trim();
}
