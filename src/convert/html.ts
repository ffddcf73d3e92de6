/**
 * HTML (and XHTML) → markdown with turndown. Also the HTML half of the DOCX and EPUB converters: mammoth emits HTML,
 * EPUB chapters are XHTML, and all three should read the same way to the chunker and to search.
 *
 * What is kept: ATX headings (the chunker's heading path), paragraphs, lists, GFM tables, fenced code. What is
 * dropped: page furniture and non-content (scripts, styles, navigation, forms…), link targets and image sources
 * (URLs are noise in search terms and snippets; the link text stays), and markdown escapes the chunker does not need.
 * MathML becomes a line of text that keeps its powers, indices and fractions (mathml.ts).
 */
// @ts-expect-error -- turndown ships no type declarations; `Turndown` below types the part used here
import TurndownService from "turndown";
// @ts-expect-error -- no type declarations either
import { strikethrough, taskListItems } from "@joplin/turndown-plugin-gfm";
// @ts-expect-error -- turndown's own DOM (its node build parses with it); its .d.ts is not a module
import domino from "@mixmark-io/domino";
import {
  bodyOrTitle,
  type ConvertedDocument,
  literalText,
  utf8OrWindows1252,
  decodeWide,
  withoutControls,
  withoutNuls,
} from "./document.ts";
import { mathText } from "./mathml.ts";
import { ResearcherError } from "../errors.ts";
import { trimRuns } from "../text.ts";
import { largest } from "../lists.ts";

/** The slice of the DOM (domino's) this module touches. Domino's `querySelector` misses with `undefined`, not null. */
export interface HtmlElement {
  nodeName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): HtmlElement | null | undefined;
  querySelectorAll(selector: string): ArrayLike<HtmlElement>;
  remove(): void;
  firstChild: HtmlElement | null;
  firstElementChild: HtmlElement | null;
  parentNode: HtmlElement | null;
  children: ArrayLike<HtmlElement>;
  /** Text nodes too: `nodeType` 3 is text, 1 an element. */
  childNodes: ArrayLike<HtmlElement>;
  nodeType: number;
  nextElementSibling: HtmlElement | null;
  insertBefore(node: HtmlElement, before: HtmlElement): void;
}

export interface HtmlDocument {
  documentElement: HtmlElement;
  body: HtmlElement | null;
  querySelector(selector: string): HtmlElement | null | undefined;
  querySelectorAll(selector: string): ArrayLike<HtmlElement>;
}

interface TurndownRule {
  filter: string | string[] | ((node: HtmlElement) => boolean);
  replacement: (content: string, node: HtmlElement) => string;
}

interface Turndown {
  use(plugin: unknown): Turndown;
  addRule(key: string, rule: TurndownRule): Turndown;
  escape: (text: string) => string;
  turndown(input: HtmlElement): string;
}

/**
 * Elements whose text is not the document's content: it must not be searchable. A form's controls, not the form:
 * ASP.NET WebForms and SharePoint pages wrap their whole body in one `<form>`.
 */
const DROPPED = ["script", "style", "nav", "noscript", "template", "iframe", "svg", "button", "textarea", "select"];

/**
 * A web page's banner, footer and sidebars, dropped where they are the site's chrome: outside its content (`main`,
 * `article`, `section`). Inside it, a header holds the article's title, a footer its notes, an aside its examples.
 * An EPUB chapter or a DOCX has no chrome: there they are always content (a book's endnotes are asides).
 */
const CHROME = ["header", "footer", "aside"];
const CONTENT = new Set(["MAIN", "ARTICLE", "SECTION"]);

function insideContent(element: HtmlElement): boolean {
  for (let node = element.parentNode; node; node = node.parentNode) {
    if (CONTENT.has(node.nodeName.toUpperCase()) || node.getAttribute?.("role") === "main") return true;
  }
  return false;
}

export async function convertHtml(bytes: Uint8Array, fallbackTitle: string): Promise<ConvertedDocument> {
  // Binary saved as a page (an image or a PDF a browser stored as .html) is refused as text files refuse it: it was
  // indexed as noise, or failed as markup nested too deep (s29b hostile F2).
  const doc = parseHtml(withoutControls(withoutNuls(decodeHtml(bytes), HTML_FILE), HTML_FILE));
  const metadata = htmlMetadata(doc);
  const found = htmlTitle(doc);
  const text = documentToMarkdown(doc, { webPage: true });
  return { title: found ?? fallbackTitle, format: "markdown", text: bodyOrTitle(text, found), firstLine: 1, metadata };
}

const HTML_FILE = "an HTML file";

/** Markdown of HTML that is not a web page (an EPUB chapter, mammoth's DOCX output): it has no site chrome. */
export function htmlToMarkdown(html: string): string {
  return documentToMarkdown(parseHtml(html), { webPage: false });
}

/**
 * XHTML without its DOCTYPE's internal subset (`<!DOCTYPE html [<!ENTITY …>]>`): an HTML parser ends the DOCTYPE at
 * the first `>` and the rest (`]>`) became the first line of text. Entities it declares are not expanded either way.
 */
function withoutInternalSubset(xml: string): string {
  const open = /<!DOCTYPE[^[>]*\[/i.exec(xml.slice(0, 4096));
  if (!open) return xml;
  const close = /\]\s*>/g;
  close.lastIndex = open.index + open[0].length;
  const end = close.exec(xml);
  return end ? `${xml.slice(0, open.index + open[0].length - 1)}>${xml.slice(end.index + end[0].length)}` : xml;
}

/** Throws `FILE_UNREADABLE` for markup nested so deep that parsing and converting it would take minutes. */
function parseHtml(html: string): HtmlDocument {
  const source = looksLikeXml(html) ? expandSelfClosing(withoutInternalSubset(html)) : html;
  if (tagDepth(source) > MAX_DEPTH) throw tooDeep();
  const doc = domino.createDocument(source) as HtmlDocument;
  unwrapMisnamed(doc.documentElement);
  return doc;
}

/**
 * A stray `<` in a tag (`<b</body>`, `<a<b>`: a slip, a page cut short) makes an element named `b<`, which browsers
 * show and domino parses, but refuses to copy (turndown copies the body): the page failed whole with
 * "INVALID_CHARACTER_ERR". Such an element gives way to what it holds.
 */
function unwrapMisnamed(root: HtmlElement): void {
  for (const element of Array.from(root.querySelectorAll("*"))) {
    if (VALID_NAME.test(element.nodeName)) continue;
    const parent = element.parentNode;
    while (parent && element.firstChild) parent.insertBefore(element.firstChild, element);
    element.remove();
  }
}

/** A name an element may have. */
const VALID_NAME = /^[A-Za-z][A-Za-z0-9_.:-]*$/;

/**
 * Real pages nest a few dozen levels. Both the parser and turndown slow down with the square of the depth (100,000
 * unclosed `<div>`s take domino 40 s), and turndown recurses per level until the stack overflows.
 */
export const MAX_DEPTH = 1000;

export function tooDeep(): ResearcherError {
  return new ResearcherError("FILE_UNREADABLE", `elements nested more than ${MAX_DEPTH} levels deep`);
}

/** Tags the parser closes implicitly (`<p>`, `<li>`…) would make an unclosed-tag count grow on valid pages. */
const IMPLIED_END = new Set([
  "p",
  "li",
  "dt",
  "dd",
  "tr",
  "td",
  "th",
  "thead",
  "tbody",
  "tfoot",
  "option",
  "optgroup",
  "rb",
  "rt",
  "rp",
  "colgroup",
  "caption",
  "html",
  "head",
  "body",
]);

/** An estimate of the deepest nesting from the tags alone, cheap enough to run before parsing. */
function tagDepth(html: string): number {
  let depth = 0;
  let deepest = 0;
  // Linear on markup never closed: `[^<>]`, not `[^>]` (a run of `<a <a <a …` was searched to the end from each),
  // and a name that ends where its characters do (`<aaaa…` gave its letters back one by one, each a scan to the end).
  for (const match of html.matchAll(/<(\/?)([a-zA-Z][\w:-]*)(?![\w:-])[^<>]*?(\/?)>/g)) {
    const name = match[2]!.toLowerCase();
    if (match[3] || VOID.has(name) || IMPLIED_END.has(name)) continue;
    depth = match[1] ? Math.max(0, depth - 1) : depth + 1;
    if (depth > deepest) deepest = depth;
  }
  return deepest;
}

/** The DOM's real depth, measured without recursion. */
function domDepth(root: HtmlElement): number {
  let deepest = 0;
  const stack: [HtmlElement, number][] = [[root, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest) deepest = depth;
    for (let child = node.firstElementChild; child; child = child.nextElementSibling) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * Markdown of the body, without the dropped elements nor, in a web page, its chrome. Throws `FILE_UNREADABLE` when
 * the DOM is too deep to convert.
 */
function documentToMarkdown(doc: HtmlDocument, { webPage }: { webPage: boolean }): string {
  const root = doc.body ?? doc.documentElement;
  for (const element of Array.from(root.querySelectorAll(DROPPED.join(",")))) element.remove();
  if (webPage) {
    for (const element of Array.from(root.querySelectorAll(CHROME.join(",")))) if (!insideContent(element)) element.remove();
  }
  // misnested formatting tags (`<b><i><div>` unclosed, repeated) nest deeper in the DOM than the tag count shows
  if (domDepth(root) > MAX_DEPTH) throw tooDeep();
  for (const pre of Array.from(root.querySelectorAll("pre"))) capWhitespaceRuns(pre);
  return tidyMarkdown(turndown().turndown(root));
}

/** `<title>`, else the first `<h1>`. */
function htmlTitle(doc: HtmlDocument): string | undefined {
  return textOf(doc.querySelector("title")) ?? textOf(doc.querySelector("h1"));
}

function htmlMetadata(doc: HtmlDocument): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  for (const name of ["author", "description", "keywords"]) {
    const content = doc.querySelector(`meta[name="${name}" i]`)?.getAttribute("content")?.trim();
    if (content) metadata[name] = content;
  }
  const html = doc.documentElement;
  const language = (html.getAttribute("lang") ?? html.getAttribute("xml:lang"))?.trim();
  if (language) metadata.language = language;
  return metadata;
}

function textOf(element: HtmlElement | null | undefined): string | undefined {
  const text = element?.textContent?.replace(/\s+/g, " ").trim();
  return text || undefined;
}

/**
 * The declared encoding wins over the UTF-8 default, and a BOM over any declaration (as browsers do). Only the
 * first bytes are scanned: declarations must appear early, and a huge page is not decoded twice.
 */
export function decodeHtml(bytes: Uint8Array): string {
  // UTF-32 after its byte order mark, which the decoders here do not read (HTML forbids it, yet such pages exist), or
  // UTF-16 after its own, as text files are read.
  const wide = decodeWide(bytes);
  if (wide !== null) return wide.toWellFormed();
  const label = bomEncoding(bytes) ?? declaredEncoding(bytes);
  if (label === undefined) return utf8OrWindows1252(bytes);
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label as "utf-8"); // a declared label is any string; an unknown one throws
  } catch {
    decoder = new TextDecoder("utf-8"); // an unknown label is a typo far more often than a real legacy encoding
  }
  // the BOM is dropped by the decoder; replacement characters beat refusing a page over one bad byte
  return decoder.decode(bytes);
}

function bomEncoding(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  return undefined;
}

const XML_ENCODING = /^\s*<\?xml[^>]*?\sencoding\s*=\s*["']([\w.:-]+)["']/i;
/** What a declaration is looked for in: the head, up to its end or this many bytes (a large inline style first). */
const HEAD_BYTES = 64 * 1024;
/** Comments, scripts and styles: text there that reads `<meta charset=…>` declares nothing. */
const NOT_MARKUP = /<!--[\s\S]*?(?:-->|$)|<(script|style)\b[\s\S]*?(?:<\/\1\s*>|$)/gi;
/**
 * A `<meta …>` tag and its attributes, read at most 2,000 characters on: a `<meta` that never closes made the
 * pattern scan the rest of the head, again from every later one (10,800 unclosed metas took a page 4–8 s).
 */
const META = /<meta\s((?:[^>"']|"[^"]{0,2000}"|'[^']{0,2000}'){0,2000})>/gi;
const ATTRIBUTE = /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
const CHARSET_IN_CONTENT = /charset\s*=\s*["']?\s*([\w.:-]+)/i;

/**
 * The encoding a page declares, as a browser's prescan finds it: an XML declaration, or the first `<meta>` of the
 * head with a `charset` attribute, or with `http-equiv="content-type"` and a charset in its `content`. A
 * `charset=` in a comment (an old declaration kept commented out) or in another meta's text (a description about
 * encodings) made a UTF-8 page mojibake, and a declaration behind 4 KB of inline CSS was never seen.
 */
function declaredEncoding(bytes: Uint8Array): string | undefined {
  const start = new TextDecoder("latin1").decode(bytes.subarray(0, HEAD_BYTES));
  const end = start.search(/<\/head\s*>|<body[\s>]/i);
  const head = (end < 0 ? start : start.slice(0, end)).replace(NOT_MARKUP, " ");
  const label = (XML_ENCODING.exec(start)?.[1] ?? metaCharset(head))?.toLowerCase();
  // a declaration readable as ASCII cannot be true about UTF-16 (the HTML standard's rule)
  return label?.startsWith("utf-16") ? "utf-8" : label;
}

function metaCharset(head: string): string | undefined {
  for (const [, attributes] of head.matchAll(META)) {
    const named = new Map<string, string>();
    for (const [, name, ...values] of (attributes ?? "").matchAll(ATTRIBUTE)) {
      const key = name!.toLowerCase();
      if (!named.has(key)) named.set(key, values.find((value) => value !== undefined) ?? "");
    }
    const charset = named.get("charset")?.trim();
    if (charset) return charset;
    if (named.get("http-equiv")?.toLowerCase() === "content-type") {
      const label = CHARSET_IN_CONTENT.exec(named.get("content") ?? "")?.[1];
      if (label) return label;
    }
  }
  return undefined;
}

function looksLikeXml(html: string): boolean {
  return /^\s*<\?xml/.test(html) || /<html[^>]+xmlns\s*=\s*["']http:\/\/www\.w3\.org\/1999\/xhtml/i.test(html.slice(0, 4096));
}

const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]);

/**
 * XHTML's `<a id="x"/>` or `<title/>` means an empty element, but an HTML parser reads an open tag that swallows
 * what follows (a whole chapter, for `<title/>`). Writing them out as open + close tags makes the HTML parser agree.
 */
function expandSelfClosing(xhtml: string): string {
  return xhtml.replace(
    /<([a-zA-Z][\w:.-]*)((?:\s+[^\s<>/="']+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s<>"']+))?)*)\s*\/>/g,
    (tag, name: string, attributes: string) => (VOID.has(name.toLowerCase()) ? tag : `<${name}${attributes}></${name}>`),
  );
}

let service: Turndown | undefined;

function turndown(): Turndown {
  if (service) return service;
  service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", br: "" }) as Turndown;
  // not the plugin's tables: see `tableRules`
  service.use([strikethrough, taskListItems]);
  // rules added later win, so these override turndown's own
  for (const [key, rule] of Object.entries(tableRules)) service.addRule(key, rule);
  service.addRule("plainLink", { filter: "a", replacement: (content) => content });
  service.addRule("noteReference", { filter: isNoteReference, replacement: noteReference });
  service.addRule("imageAlt", { filter: "img", replacement: (_, node) => imageAlt(node) });
  service.addRule("heading", { filter: ["h1", "h2", "h3", "h4", "h5", "h6"], replacement: heading });
  service.addRule("sectionItem", { filter: (node) => node.nodeName === "LI" && holdsSection(node), replacement: sectionItem });
  service.addRule("preformatted", { filter: "pre", replacement: (_, node) => fence(node) });
  service.addRule("math", {
    filter: (node) => /^(?:[\w-]+:)?math$/i.test(node.nodeName), // `<m:math>` in XHTML with a prefix
    replacement: (_, node) => (node.getAttribute("display") === "block" ? `\n\n${mathText(node)}\n\n` : mathText(node)),
  });
  service.escape = literalText; // not turndown's escaping of every `*`, `_` and `[`
  return service;
}

/**
 * A footnote's mark in the text: a superscript link (`snarf<a><sup>235</sup></a>`, SICP; mammoth's DOCX footnotes),
 * or a link an EPUB or ARIA calls a note reference. Run into the word before it, the mark made one word of both
 * (`snarf235`), and the word was found nowhere the note was marked. `x<sup>2</sup>` and `1<sup>st</sup>` stay.
 */
function isNoteReference(node: HtmlElement): boolean {
  if (node.nodeName === "SUP") return node.parentNode?.nodeName === "A" || Boolean(node.querySelector("a"));
  return node.nodeName === "A" && /\bnoteref\b/.test(`${node.getAttribute("epub:type") ?? ""} ${node.getAttribute("role") ?? ""}`);
}

/** A note's mark in brackets, as `[235]` (once: mammoth writes `[1]` itself). */
function noteReference(content: string): string {
  const mark = content.trim();
  return !mark || /^\[.*\]$/.test(mark) ? mark : `[${mark}]`;
}

/** Single-word alt texts are file names and placeholders ("Illo1", "logo"); a phrase describes the picture. */
function imageAlt(node: HtmlElement): string {
  const alt = node.getAttribute("alt")?.replace(/\s+/g, " ").trim() ?? "";
  return alt.includes(" ") ? alt : "";
}

/** One line, or none: a `<br>` inside a heading would cut the heading in two, an empty one makes an empty section. */
function heading(content: string, node: HtmlElement): string {
  const text = spaceAfterNumber(content.replace(/\s+/g, " ").trim(), node);
  if (!text) return "\n\n";
  if (inAside(node)) return `\n\n**${text}**\n\n`;
  return `\n\n${"#".repeat(Number(node.nodeName.charAt(1)))} ${text}\n\n`;
}

const HEADINGS = "h1, h2, h3, h4, h5, h6";

/**
 * A list item that holds a heading is a section the page lays out as a list (docco's annotated source: each item a
 * heading, prose and code), not a point of a list: its content unindented and without a bullet. Indented as an item,
 * its headings and code fences read as text (all 77 headings of a page were lost).
 */
function holdsSection(item: HtmlElement): boolean {
  return Array.from(item.querySelectorAll(HEADINGS)).some((heading) => !inAside(heading)); // a note's label is no section
}

function sectionItem(content: string): string {
  return `\n\n${trimRuns(content, "\n", "both")}\n\n`;
}

/** The classes of a box beside the text (a whole class name: `release-notes` or `has-sidebar` is none). */
const ASIDE_CLASSES = new Set(["note", "tip", "hint", "warning", "caution", "important", "sidebar", "callout", "admonition"]);

/**
 * Whether a heading is a box's label rather than a section's: in an `<aside>`, or a `<div>`/`<section>` of a box's
 * class, that holds no other heading (a wrapper of the page's content holds many). As a heading it became the
 * section's last heading, so the section's text after the box was filed under "Note" (the EPUB 3 spec has 53), and
 * the heading boost weighed "Note" rather than the section's title. It stays as a bold label.
 */
function inAside(node: HtmlElement): boolean {
  for (let parent = node.parentNode, depth = 0; parent && parent.nodeType === 1 && depth < 12; parent = parent.parentNode, depth++) {
    const name = parent.nodeName.toLowerCase();
    if (name === "body" || name === "article" || name === "main") return false;
    const box =
      name === "aside" ||
      ((name === "div" || name === "section") &&
        (parent.getAttribute("class") ?? "").split(/\s+/).some((c) => ASIDE_CLASSES.has(c.toLowerCase())));
    if (box) return holdsOneHeading(parent);
  }
  return false;
}

/**
 * Whether a box holds one heading, counted once per box: a box around a page of 4,000 headings counted them 4,000
 * times.
 */
const oneHeading = new WeakMap<HtmlElement, boolean>();

function holdsOneHeading(box: HtmlElement): boolean {
  let one = oneHeading.get(box);
  if (one === undefined) {
    one = box.querySelectorAll(HEADINGS).length === 1;
    oneHeading.set(box, one);
  }
  return one;
}

/** `5.4`, `1.2.3`, `A.2.`: a section number as books and manuals put it before a title. */
const SECTION_NUMBER = /^(?:\d+|[A-Z])(?:\.\d+)*\.?$/;

/**
 * Generated books (texinfo's HTML: SICP) put the section number and the title in adjacent elements,
 * `<span class="secnum">5.4</span><span class="sectitle">The …</span>`, and leave the gap to the stylesheet; their
 * text alone runs together ("5.4The"), and the title's first word is lost to search. A number in an element of its
 * own, touching the rest of the heading, gets its space back.
 */
function spaceAfterNumber(text: string, node: HtmlElement): string {
  const first = Array.from(node.childNodes).find((child) => child.textContent?.trim());
  if (first?.nodeType !== 1) return text;
  const number = first.textContent!.trim();
  if (!SECTION_NUMBER.test(number) || !text.startsWith(number) || !/^\S/.test(text.slice(number.length))) return text;
  return `${number} ${text.slice(number.length)}`;
}

/**
 * Runs of whitespace in preformatted text cut to WHITESPACE_RUN characters: turndown's reading of a text node's edge
 * whitespace is quadratic in the run, which preformatted text keeps whole (100,000 spaces in a `<pre>` took 7 s; as
 * many in a paragraph collapse to one). The code's text is kept, its `<code>` (and language) too.
 */
function capWhitespaceRuns(pre: HtmlElement): void {
  const text = pre.textContent ?? "";
  const capped = text.replace(LONG_WHITESPACE, (run) => run.slice(0, WHITESPACE_RUN));
  if (capped === text) return;
  const target = pre.firstChild?.nodeName === "CODE" && pre.childNodes.length === 1 ? pre.firstChild : pre;
  target.textContent = capped;
}

const WHITESPACE_RUN = 1000;
const LONG_WHITESPACE = new RegExp(`\\s{${WHITESPACE_RUN + 1},}`, "g");

/** Every `<pre>` is code, with or without an inner `<code>`; highlighting markup inside drops to its text. */
function fence(node: HtmlElement): string {
  const code = (node.textContent ?? "").replace(/\n$/, "");
  if (!code.trim()) return "\n\n";
  const longestRun = (code.match(/`{3,}/g) ?? []).reduce((longest, run) => Math.max(longest, run.length), 2);
  const marker = "`".repeat(longestRun + 1);
  return `\n\n${marker}${codeLanguage(node)}\n${code}\n${marker}\n\n`;
}

function codeLanguage(pre: HtmlElement): string {
  const classes = `${pre.getAttribute("class") ?? ""} ${pre.firstChild?.nodeName === "CODE" ? (pre.firstChild.getAttribute("class") ?? "") : ""}`;
  return /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(classes)?.[1] ?? "";
}

/**
 * GFM tables, one line per row. Not the GFM plugin's table rules: they read `table.rows` per row and column, which
 * domino rebuilds by walking the whole table each time (2,000 rows took 30 s), and they keep a table holding lists
 * or code as raw HTML, which would index tag names. Here a cell is its text on one line; a table holding another
 * table is page layout, not data, so its cells become paragraphs.
 */
const tableRules: Record<string, TurndownRule> = {
  tableCell: {
    filter: ["th", "td"],
    replacement: (content, node) => (isLayoutTable(closestTable(node)) ? `\n\n${content}\n\n` : tableCell(content, node)),
  },
  tableRow: {
    filter: "tr",
    replacement: (content, node) => (isLayoutTable(closestTable(node)) ? `\n\n${content}\n\n` : content ? `\n|${content}` : ""),
  },
  table: {
    filter: "table",
    replacement: (content, node) => (isLayoutTable(node) ? `\n\n${content}\n\n` : gfmTable(content, node)),
  },
  tableCaption: { filter: "caption", replacement: (content) => `\n${content.replace(/\s+/g, " ").trim()}\n` },
};

const layoutTables = new WeakMap<HtmlElement, boolean>();

function isLayoutTable(table: HtmlElement | null): boolean {
  if (!table) return true; // a stray cell outside any table: plain text
  let layout = layoutTables.get(table);
  if (layout === undefined) {
    layout = Boolean(table.querySelector("table"));
    layoutTables.set(table, layout);
  }
  return layout;
}

function closestTable(node: HtmlElement): HtmlElement | null {
  let parent = node.parentNode;
  while (parent && parent.nodeName !== "TABLE") parent = parent.parentNode;
  return parent;
}

function tableCell(content: string, node: HtmlElement): string {
  const text = content.replace(/\s+/g, " ").trim().replace(/\|/g, "\\|");
  const span = Math.min(Number(node.getAttribute("colspan")) || 1, 100);
  return ` ${text || " "} |${"   |".repeat(span - 1)}`;
}

/** Rows under a divider line; a table without a heading row gets an empty one, as GFM requires a header. */
function gfmTable(content: string, node: HtmlElement): string {
  const lines = content.split("\n");
  const rows = lines.filter((line) => line.startsWith("|"));
  const captions = lines.filter((line) => !line.startsWith("|") && line.trim());
  if (!rows.length) return `\n\n${captions.join("\n\n")}\n\n`;
  const columns = Math.max(0, largest(rows.map((row) => row.split(/(?<!\\)\|/).length - 2))); // a 100,000-row table: no spread
  const divider = `|${" --- |".repeat(columns)}`;
  const table = hasHeadingRow(node) ? [rows[0], divider, ...rows.slice(1)] : [`|${"     |".repeat(columns)}`, divider, ...rows];
  return `\n\n${[...captions, ""].join("\n\n")}${table.join("\n")}\n\n`;
}

function hasHeadingRow(table: HtmlElement): boolean {
  const first = table.querySelector("tr");
  if (!first) return false;
  if (first.parentNode?.nodeName === "THEAD") return true;
  const cells = Array.from(first.children);
  return cells.length > 0 && cells.every((cell) => cell.nodeName === "TH");
}

/** Collapse runs of blank lines outside code fences; drop trailing spaces. */
function tidyMarkdown(markdown: string): string {
  const out: string[] = [];
  let fenceMarker: string | undefined;
  let blanks = 0;
  for (const rawLine of markdown.split("\n")) {
    const line = fenceMarker ? rawLine : rawLine.trimEnd();
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fenceMarker || (marker.startsWith(fenceMarker) && line.trim() === marker))) {
      fenceMarker = fenceMarker ? undefined : marker;
    }
    blanks = !fenceMarker && line === "" ? blanks + 1 : 0;
    if (blanks < 2) out.push(line);
  }
  return out.join("\n").trim();
}
