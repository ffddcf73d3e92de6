/**
 * DOCX → HTML with mammoth (headings from the Heading 1–6 styles, lists, tables, footnotes, endnotes and comments) →
 * markdown with the HTML converter. Title, author and dates come from the core properties (`docProps/core.xml`).
 */
import { strFromU8 } from "fflate";
import mammoth from "mammoth";
// @ts-expect-error mammoth's XML module has no types
import mammothXml from "mammoth/lib/xml/index.js";
// @ts-expect-error nor its relationships reader
import mammothRelationships from "mammoth/lib/docx/relationships-reader.js";
// @ts-expect-error nor its numbering reader
import mammothNumbering from "mammoth/lib/docx/numbering-xml.js";
import { bodyOrTitle, type ConvertedDocument } from "./document.ts";
import { firstHeading } from "./markdown.ts";
import { shortened } from "../text.ts";
import { htmlToMarkdown } from "./html.ts";
import { describeError, ResearcherError } from "../errors.ts";
import { readXml } from "./docx-xml.ts";
import { enclosed, xmlText } from "./xml.ts";
import { readZip } from "./zip.ts";

/**
 * Mammoth has no mapping for Word's Title style; as an `<h1>` it becomes the title when core properties lack one. A
 * comment's reference is marked as a note's is, and mammoth then appends the comments (a co-author's or supervisor's
 * margin notes, which people search for) after the text, as it does notes.
 */
const STYLE_MAP = ["p[style-name='Title'] => h1:fresh", "comment-reference => sup"];

/** Mammoth reads every XML part through this module's `readString`: `readXml` builds its tree without a DOM. */
mammothXml.readString = readXml;

/**
 * A relationship id that its part's relationships do not hold (a dangling link, a picture whose part is gone:
 * hand-edited XML, some report generators) has an empty target: mammoth took its target as a string and failed the
 * whole file ("undefined is not an object"). A link without a target keeps its text (withoutDanglingLinks).
 */
type Relationships = { findTargetByRelationshipId(id: string): string | undefined };
const withEmptyTargets = (read: Relationships) => ({
  ...read,
  findTargetByRelationshipId: (id: string) => read.findTargetByRelationshipId(id) ?? "",
});
const readRelationships = mammothRelationships.readRelationships;
mammothRelationships.readRelationships = (element: unknown) => withEmptyTargets(readRelationships(element));
// A part without a relationships file has these.
mammothRelationships.defaultValue = withEmptyTargets(mammothRelationships.defaultValue);

/**
 * A list whose style link names a style the document lacks (deleted, or lost in a copy between documents), or
 * whose document has no styles part, has no level: its paragraphs are plain paragraphs. Mammoth followed the link
 * into `undefined` and failed the whole file with a TypeError (s21 hostile #6).
 */
type Numbering = { findLevel(numId: string, level: string): unknown };
const readNumbering = mammothNumbering.readNumberingXml;
type XmlElement = { name?: string; children: XmlElement[]; first?: (name: string) => unknown };
mammothNumbering.readNumberingXml = (root: XmlElement, options: unknown): Numbering => {
  // A numbering instance without its abstract definition (`<w:num w:numId="2"/>`, a list whose definition was
  // stripped) numbers nothing: its paragraphs are plain. Mammoth read the missing child and failed the file (s22
  // hostile F2).
  root.children = root.children.filter((child) => child.name !== "w:num" || child.first?.("w:abstractNumId"));
  const numbering = readNumbering(root, options) as Numbering;
  return {
    ...numbering,
    findLevel: (numId, level) => {
      try {
        return numbering.findLevel(numId, level);
      } catch (error) {
        if (error instanceof TypeError) return null;
        throw error;
      }
    },
  };
};

/** Compound-file (OLE) signature: legacy `.doc`, and also any password-protected Office file. */
const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0];

export async function convertDocx(bytes: Uint8Array, fallbackTitle: string): Promise<ConvertedDocument> {
  if (OLE_MAGIC.every((byte, i) => bytes[i] === byte)) {
    const reason = hasOleEntry(bytes, "EncryptionInfo")
      ? "encrypted DOCX (a password is needed to read it)"
      : "encrypted or legacy .doc format (not supported)";
    throw new ResearcherError("FILE_UNREADABLE", reason);
  }
  const core = readZip(bytes, (name) => name === "docProps/core.xml", "DOCX")["docProps/core.xml"];
  const properties = core ? coreProperties(strFromU8(core)) : {};
  const { html, authors } = await docxToHtml(bytes);
  const text = htmlToMarkdown(withCommentAuthors(dropNoteLinks(html), authors));
  const { title, ...metadata } = properties;
  return {
    title: title ?? firstHeading(text) ?? fallbackTitle,
    format: "markdown",
    text: bodyOrTitle(text, title),
    firstLine: 1,
    metadata,
  };
}

/**
 * Whether a compound file has a stream or storage named `name`: a password-protected DOCX is one holding the
 * `EncryptionInfo` and `EncryptedPackage` streams. Its directory is made of 128-byte entries, each starting at a
 * multiple of 128 bytes in the file with its UTF-16LE name, the name's byte length (with its NUL) at offset 64: a
 * match there, not the name anywhere in the file, as a legacy .doc's text could hold it.
 */
function hasOleEntry(bytes: Uint8Array, name: string): boolean {
  const wanted = new Uint8Array(name.length * 2 + 2);
  for (let i = 0; i < name.length; i++) wanted[i * 2] = name.charCodeAt(i);
  for (let at = 512; at + 128 <= bytes.length; at += 128) {
    if (bytes[at + 64] === wanted.length && bytes[at + 65] === 0 && wanted.every((byte, i) => bytes[at + i] === byte)) return true;
  }
  return false;
}

/** A node of mammoth's document tree, as far as a transform needs it. */
interface DocumentNode {
  type?: string;
  href?: string;
  anchor?: string;
  /** A comment reference's comment. */
  commentId?: string;
  children?: DocumentNode[];
  /** The document's comments (the root node's). */
  comments?: { commentId: string; authorName?: string | null; body?: DocumentNode[] }[];
  /** A paragraph's style (a Heading style makes a heading). */
  styleId?: string | null;
  styleName?: string | null;
}

/** The longest comment author's name kept: a name is a label, not a text. */
const AUTHOR_MAX_CHARS = 100;

/** Each comment's author, by comment id, as the document's tree names them. */
function commentAuthors(document: DocumentNode): Map<string, string> {
  const authors = (document.comments ?? []).filter((comment) => comment.authorName?.trim());
  return new Map(authors.map((comment) => [String(comment.commentId), shortened(comment.authorName!.trim(), AUTHOR_MAX_CHARS)]));
}

/**
 * A comment's label with its author, `Comment [MW1] by Mary Wood`: mammoth labels it by initials only, and who
 * wrote a margin note is what a reviewer looks for.
 */
function withCommentAuthors(html: string, authors: Map<string, string>): string {
  if (authors.size === 0) return html;
  return html.replace(/(<dt id="comment-([^"]*)">Comment [^<]*)<\/dt>/g, (whole, label: string, id: string) => {
    const author = authors.get(unescapeHtml(id));
    return author === undefined ? whole : `${label} by ${escapeHtml(author)}</dt>`;
  });
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/**
 * Each comment referenced once, where it is first referenced: mammoth appends a comment once per reference (one 96 KB
 * comment referenced 20,000 times took a 4 KB file to 4 GB), and a reference to no comment (what removing comments
 * by hand leaves) failed the whole file with a TypeError (s21 hostile #3, #6).
 */
function withCommentsOnce(document: DocumentNode): DocumentNode {
  const unseen = new Set((document.comments ?? []).map((comment) => String(comment.commentId)));
  const keep = (node: DocumentNode): DocumentNode[] => {
    if (node.type === "commentReference") return unseen.delete(String(node.commentId)) ? [node] : [];
    if (Array.isArray(node.children)) node.children = node.children.flatMap(keep);
    return [node];
  };
  keep(document);
  for (const comment of document.comments ?? []) comment.body = comment.body?.map(asCommentText);
  return document;
}

/**
 * A comment's content as text of the comment: a paragraph in a Heading style there made a heading of the document
 * (its title, when it had no core title: s21 retest R9), and a reference to another comment left its marker in the
 * body (R6). Comments follow the text, each under its label; they make no structure of their own.
 */
function asCommentText(node: DocumentNode): DocumentNode {
  if (node.type === "paragraph") Object.assign(node, { styleId: null, styleName: null });
  if (Array.isArray(node.children)) node.children = node.children.filter((child) => child.type !== "commentReference").map(asCommentText);
  return node;
}

/** A hyperlink whose relationship is missing (its target is empty) keeps its text, as plain text. */
function withoutDanglingLinks(node: DocumentNode): DocumentNode {
  if (Array.isArray(node.children)) {
    node.children = node.children.flatMap((child) => {
      const kept = withoutDanglingLinks(child);
      return kept.type === "hyperlink" && !kept.href && kept.anchor === undefined ? (kept.children ?? []) : [kept];
    });
  }
  return node;
}

async function docxToHtml(bytes: Uint8Array): Promise<{ html: string; authors: Map<string, string> }> {
  let authors = new Map<string, string>();
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      // an empty src: pictures are not indexed, and mammoth then never base64-encodes their bytes
      {
        styleMap: STYLE_MAP,
        convertImage: mammoth.images.imgElement(async () => ({ src: "" })),
        transformDocument: (document: DocumentNode) => {
          authors = commentAuthors(document);
          return withoutDanglingLinks(withCommentsOnce(document));
        },
      },
    );
    return { html: result.value, authors };
  } catch (error) {
    if (error instanceof ResearcherError) throw error; // a reason of ours (nesting), already worded
    // JSZip calls an entry whose size or checksum differs from its header a "Bug : …": it is damage (or a bomb).
    // xmldom words its own: "error: [xmldom error]\tinvalid doc source", the prefix doubling ours.
    const reason = describeError(error)
      .replace(/^Bug : /, "")
      .replace(/^(?:(?:error|warning):\s*)?\[xmldom (?:error|warning)\]\s*/i, "XML: ")
      .replace(/: Error: /, ": ");
    const zip = /zip|central dir|size mismatch|crc32/i.test(reason);
    throw new ResearcherError("FILE_UNREADABLE", `${zip ? "not a valid DOCX (zip) file" : "cannot read DOCX"}: ${reason}`);
  }
}

/**
 * Mammoth ends each note with a "↑" link back to its reference: an arrow in every snippet, never a search term (and
 * marks a comment's place in the text: COMMENT_MARKER). The
 * space before it goes too, a few characters at most: an unbounded `\s*` tried the rest of a long run of spaces from
 * each of its positions (a 12 KB DOCX of 600,000 spaces took 108 s).
 */
function dropNoteLinks(html: string): string {
  return html.replace(/\s{0,8}<a href="#(?:footnote|endnote|comment)-ref-[^"]*">↑<\/a>/g, "").replace(COMMENT_MARKER, "");
}

/**
 * A comment's marker in the text (`[AR1]`): Word anchors it where the commented range ends, often inside a word or
 * between two of a sentence, so kept it split `inter[AR1]national` and broke phrases; the comment itself follows the
 * text under its label. Markers side by side share one `<sup>` (`[A1][X2]` stayed in the text: s21 retest R6). A
 * comment's id is any integer (`-1`), or anything a generator wrote, and its initials any length (s22 hostile F2).
 */
const COMMENT_MARKER = /<sup>(?:<a href="#comment-[^"]{0,64}" id="comment-ref-[^"]{0,64}">[^<]{0,256}<\/a>){1,64}<\/sup>/g;

const CORE_FIELDS = {
  title: "dc:title",
  author: "dc:creator",
  description: "dc:description",
  subject: "dc:subject",
  keywords: "cp:keywords",
  created: "dcterms:created",
  modified: "dcterms:modified",
} as const;

type CoreProperties = Partial<Record<keyof typeof CORE_FIELDS, string>>;

/** A handful of known, flat elements: a regex per tag is enough, and an XML parser would be a dependency. */
function coreProperties(xml: string): CoreProperties {
  const properties: CoreProperties = {};
  for (const [key, tag] of Object.entries(CORE_FIELDS) as [keyof CoreProperties, string][]) {
    const [element] = enclosed(xml, new RegExp(`<${tag}(?:\\s[^<>]*)?>`, "g"), new RegExp(`</${tag}>`, "g"));
    const value = xmlText(element?.inner ?? "");
    if (value) properties[key] = value;
  }
  return properties;
}
