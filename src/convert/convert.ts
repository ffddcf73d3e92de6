/**
 * A file's bytes → markdown (or plain text) the chunker understands, plus a title and metadata. One sibling module
 * per format (`pdf.ts`, `docx.ts`, `html.ts`, `epub.ts`) does the work with a well-kept library; this module
 * dispatches by file type and owns the text formats. The formats import what they share from `document.ts`, `zip.ts`
 * and `xml.ts`, never from here. The chunker, store and search never see the original format.
 */
import { basename, dirname, extname } from "node:path";
import { CODE_EXTENSIONS, languageFormat } from "../file-types.ts";
import { languageOf, type CodeLanguage } from "./code-languages.ts";
import { ResearcherError } from "../errors.ts";
import { parseYaml, yamlError } from "../yaml.ts";
import type * as Toml from "smol-toml";
import {
  boundedMetadata,
  METADATA_LIMITS,
  checkExpansion,
  stringValue,
  type ConvertedDocument,
  type ConvertOptions,
  utf8OrWindows1252,
  decodeWide,
  withoutControls,
  withoutNuls,
} from "./document.ts";
import { firstHeading, inlineTags, tagName, withoutDataUris } from "./markdown.ts";
import { own } from "../own.ts";
import { oneLine, shortHeading, TITLE_MAX_CHARS, withoutInvisibles } from "../text.ts";

const MARKDOWN_TYPES = new Set(["md", "markdown", "mdx"]);
const HTML_TYPES = new Set(["html", "htm", "xhtml"]);
/** Aliases of the image types (read by OCR): `jpeg` → `jpg`, `tiff` → `tif`. */
const IMAGE_ALIASES: Record<string, string> = { jpeg: "jpg", tiff: "tif" };

/**
 * The stored `format` of a document: its file type, with aliases folded (`markdown`, `mdx` → `md`; `htm` → `html`;
 * `jpeg` → `jpg`; `tiff` → `tif`). A script without an extension, told by the `#!` line in `head` (its first bytes),
 * is its language's (`sh`, `py`): source code; as a file to read, without them, it is text.
 */
export function formatOf(path: string, head?: Uint8Array): string {
  const type = fileType(path);
  const script = type === "" && head ? languageOf(path, head) : null;
  if (script) return languageFormat(script);
  if (MARKDOWN_TYPES.has(type)) return "md";
  if (HTML_TYPES.has(type)) return "html";
  return own(IMAGE_ALIASES, type) ?? (type || "txt");
}

/**
 * Formats read as text, and read back as the file itself (line numbers are the file's). Source code is one of them:
 * for the index it is also parsed into sections by its syntax (code-outline.ts), in a conversion worker.
 */
export const TEXT_FORMATS: ReadonlySet<string> = new Set(["md", "txt", ...CODE_EXTENSIONS]);

export function fileType(path: string): string {
  return extname(path).slice(1).toLowerCase();
}

/**
 * File names that stand for the folder holding them: a package's `__init__.py`, a module's `index.ts` or `mod.rs`,
 * a site's `index.md`. Titled by their own name, every package's code read `__init__ › def loads` (s23 user U4).
 */
const FOLDER_STANDINS = new Set(["__init__", "index", "mod"]);

/**
 * A document's title when it names none itself: its file's name, or, for a stand-in (FOLDER_STANDINS), the name of
 * the folder its path names (an index's paths are relative to the repository: one at its root keeps its own name).
 */
export function fallbackTitle(path: string): string {
  const stem = basename(path, extname(path));
  const folder = basename(dirname(path));
  return FOLDER_STANDINS.has(stem) && folder && folder !== "." ? folder : stem;
}

/**
 * The version of the converter each converted format's text comes from (HTML's for EPUB and DOCX too, which go
 * through it). A change that moves a document's lines or words takes a new version, and an index run converts the
 * documents of that format again, once: `get` converts a PDF as it is read, so an index keeping an older
 * conversion cited lines that read as other text (s24 retest N1). Since 1: PDF paragraphs end at a line cut short
 * and TeX accents sit on their letters; HTML footnote marks stand apart from their words (`snarf[235]`). Since pdf 2:
 * an accent is put on a letter only when it is drawn over it (a typed `´`, `don´t`, stays apart; a Symbol font's U+F8E8
 * ® is a character, no accent), and one overfull line (a URL in the margin) no longer splits its paragraph into one
 * paragraph a line; a form value's or note's line breaks part its words, a placeholder title (`Document1`) gives way to
 * the first large line, and a page's notes and form values, and a small stamp, no longer keep its scan from OCR (s25
 * papers P0, P1, P4). Since pdf 3: the comment on a highlight, a shape or a drawing follows its page's text, as a
 * note's does (s26 user F12). OCR'd text is kept and read back as indexed, so a scan is not recognised again.
 */
export const CONVERTER_VERSIONS: Readonly<Record<string, number>> = { pdf: 3, html: 1 };

/** The converter (CONVERTER_VERSIONS' key) a stored format's text comes from, if a versioned one. */
export function converterOf(format: string): string | undefined {
  if (format === "pdf") return "pdf";
  return format === "html" || format === "epub" || format === "docx" ? "html" : undefined;
}

/**
 * The formats whose text OCR may read (a PDF's scanned pages, images): what an OCR setting's change reads again, and
 * whose recognised text an index keeps for the same bytes.
 */
export const OCR_FORMATS: ReadonlySet<string> = new Set(["pdf", "png", "jpg", "tif"]);

/** Convert one file. Throws `ResearcherError` (`FILE_UNREADABLE`) with a one-line reason when it cannot. */
export async function convertFile(path: string, bytes: Uint8Array, options: ConvertOptions = {}): Promise<ConvertedDocument> {
  const document = await convertByFormat(path, bytes, options);
  checkExpansion(document.text.length, bytes.length);
  // Every format's title, as written in front matter, a Word file's properties or an HTML <title>: one line.
  const title = shortHeading(oneLine(withoutInvisibles(document.title)), TITLE_MAX_CHARS);
  return { ...document, title, metadata: boundedMetadata(document.metadata) };
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
      // (OCR_FORMATS below: the formats these two converters read with OCR.)
      return (await import("./image.ts")).convertImage(formatOf(path), bytes, title, options);
    default: {
      const text = plainText(path, bytes);
      return convertText(text, title, headerLanguage(languageOf(path, bytes), fileType(path), text), options.codeTokens);
    }
  }
}

/**
 * C++ in a `.h` header (a namespace, a class, a template, a standard C++ header included: `#include <string>`, or
 * a qualified name outside a comment: `std::vector`, `Napi::Value`; C's own headers all end in `.h`, and C23's `::`
 * is in attributes, `[[gnu::unused]]`): read as C, a namespace was a function and `language=cpp` missed it, and a
 * Node-API header's structs were no units (s25 code user C12). A name ends where its characters do (`\w+(?!\w)`):
 * given back letter by letter to `[^;\n]*`, a line `class aaaa…` was scanned to its end from each (200 KB: 13 s,
 * past the conversion's time limit).
 */
const CPP_HEADER =
  /^[ \t]*(?:namespace[ \t]+\w+(?!\w)[ \t]*\{|template[ \t]*<|class[ \t]+\w+(?!\w)[^;\n]*\{|(?:public|private|protected)[ \t]*:|#[ \t]*include[ \t]*<[\w/]+>)|^(?![ \t]*(?:\/\/|\/?\*))[^\n]*?\b(?!(?:gnu|clang|msvc)::)[A-Za-z_]\w*(?!\w)::[A-Za-z_~]/m;

function headerLanguage(language: CodeLanguage | null, type: string, text: string): CodeLanguage | null {
  return type === "h" && language === "c" && CPP_HEADER.test(text) ? "cpp" : language;
}

/**
 * A file of a type without a converter of its own, as text: one that is not text (`slides.pptx`, added with
 * `--file-types pptx`) says that this is why, beside what decoding found.
 */
function plainText(path: string, bytes: Uint8Array): string {
  try {
    return decodeText(bytes);
  } catch (error) {
    const type = fileType(path);
    if (type === "txt" || languageOf(path, bytes) !== null || !(error instanceof ResearcherError)) throw error;
    throw new ResearcherError(
      "FILE_UNREADABLE",
      `${error.message}: ${type ? `.${type}` : "a file without an extension"} has no converter here, so it is read as plain text`,
    );
  }
}

/** Text and source code. Code is text whose language is metadata (`--where language=python`), and for the index,
 * whose sections follow its syntax (`codeTokens`). */
async function convertText(text: string, title: string, language: CodeLanguage | null, codeTokens?: number): Promise<ConvertedDocument> {
  const document: ConvertedDocument = { title, format: "text", text, firstLine: 1, metadata: language ? { language } : {} };
  if (!language || !codeTokens) return document;
  const codeSections = await (await import("./code-outline.ts")).codeSections(text, language, { maxTokens: codeTokens });
  return codeSections ? { ...document, codeSections } : document;
}

/** How many of a converted document's pages were read by OCR (its `ocr_pages` metadata). */
export function ocrPagesOf(metadata: Record<string, unknown>): number {
  return typeof metadata.ocr_pages === "number" ? metadata.ocr_pages : 0;
}

/**
 * Text files are UTF-8 (with or without BOM), UTF-16 or UTF-32 with a BOM, or else 8-bit text read as windows-1252 (a
 * source file from before UTF-8 with a © in its licence header failed whole as "not valid UTF-8"); binary content (NUL
 * bytes, or control bytes that text does not hold) is refused with a reason.
 */
export function decodeText(bytes: Uint8Array): string {
  const wide = decodeWide(bytes);
  // Valid UTF-8 is itself the sign of text; windows-1252 and UTF-16/32 read nearly any bytes, so what they read must
  // also hold few characters text does not (a binary file that starts FF FE was indexed as CJK-looking noise).
  if (wide !== null) return withoutControls(withoutNuls(wide)).toWellFormed();
  let utf8: string;
  try {
    utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return withoutControls(withoutNuls(utf8OrWindows1252(bytes)));
  }
  return withoutNuls(utf8);
}

const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;
/** TOML front matter between `+++` lines, as Hugo and Zola write it. */
const TOML_FRONT_MATTER = /^\+\+\+[ \t]*\r?\n([\s\S]*?)\r?\n\+\+\+[ \t]*(?:\r?\n|$)/;
/** The TOML library, loaded on first use as YAML's is (yaml.ts): a search that reads no note never evaluates it. */
const toml = () => require("smol-toml") as typeof Toml;

/**
 * The largest front matter read as metadata, 16 times what metadata may keep (METADATA_LIMITS): the YAML library
 * builds a node per key first, and a 50 MB block of short keys took 6.2 GB in the indexing process.
 */
const MAX_FRONT_MATTER_CHARS = 1024 * 1024;

export function convertMarkdown(raw: string, fallbackTitle: string): ConvertedDocument {
  let metadata: Record<string, unknown> = {};
  let text = raw;
  let firstLine = 1;
  const toml = raw.startsWith("+++");
  const match = (toml ? TOML_FRONT_MATTER : FRONT_MATTER).exec(raw);
  // One past the bound stays body text, searchable as written: whether it is a mapping is not known unread.
  const oversized = match !== null && match[1]!.length > MAX_FRONT_MATTER_CHARS;
  const read = match && !oversized ? (toml ? parseTomlFrontMatter : parseFrontMatter)(match[1] ?? "") : undefined;
  const front = read?.metadata;
  // A block between `---` lines that is no YAML mapping is no front matter: a rule, slides, pasted text. It stays
  // the body it is (it was dropped from both the metadata and the index). So does a `+++` block that is no TOML.
  if (match && front) {
    metadata = listsOfNames(front);
    text = raw.slice(match[0].length);
    firstLine = 1 + countNewlines(match[0]);
  }
  text = withoutDataUris(text);
  metadata = withInlineTags(metadata, inlineTags(text));
  const title = writtenTitle(metadata.title, match?.[1]) ?? firstHeading(text, { written: true }) ?? fallbackTitle;
  // A `+++` block meant TOML: a typo there silently dropped the page's title, date and tags (s21 retest R7). A YAML
  // block is read leniently (keyValueLines), so one that is none is most likely a rule or a slide, not a typo; one
  // read so is said, with YAML's reason: `tags: [unclosed` became a tag "[unclosed" in silence, where Obsidian shows
  // its properties as invalid (s27 user U6).
  const problem = oversized
    ? `its front matter is over ${MAX_FRONT_MATTER_CHARS / 2 ** 20} MiB: indexed as text, not read as metadata`
    : toml && match && !front
      ? "its TOML front matter (between +++ lines) does not parse: indexed as text, not read as metadata"
      : front && read?.invalid
        ? `its front matter is not valid YAML (${read.invalid}): its values read as plain text`
        : undefined;
  const warnings = problem ? [problem] : undefined;
  return { title, format: "markdown", text, firstLine, metadata, written: true, ...(warnings && { warnings }) };
}

/** The start of a `title:` (YAML) or `title =` (TOML) line. */
const TITLE_KEY = /^title[ \t]*[:=]/;

/**
 * The front matter's title as its author wrote it: YAML reads `title: 3.10` as the number 3.1, `007` as 7 and `1e3`
 * as 1000 (so does TOML), and a version or a code is a title as typed. Taken from the first `title` line whose value
 * (without a `#` comment) reads as the parsed one: a line of that shape inside a multi-line string is not the key
 * (it named the document "7.5 (draft)"). Lines are cut, not matched by one pattern over the block: a lazy pattern was
 * quadratic in a long line, 35 s for a 200 KB note on the main thread (s22 hostile F1). The value as parsed when
 * no line is found.
 */
function writtenTitle(value: unknown, front: string | undefined): string | undefined {
  const typed = typeof value === "number" || typeof value === "bigint" || typeof value === "boolean";
  if (!typed || front === undefined) return stringValue(value);
  for (const line of front.split("\n")) {
    const key = TITLE_KEY.exec(line);
    if (!key) continue;
    const hash = line.indexOf("#");
    const written = line.slice(key[0].length, hash < 0 ? undefined : hash).trim();
    if (written && readsAs(written, value)) return written;
  }
  return stringValue(value);
}

/** Whether a scalar as written is the number or boolean YAML or TOML parsed (`3.10` is 3.1, `1_000` is 1000). */
function readsAs(written: string, value: number | bigint | boolean): boolean {
  if (typeof value === "boolean") return written.toLowerCase() === String(value);
  const plain = written.replaceAll("_", "");
  if (typeof value === "bigint") return /^[+-]?\d+$/.test(plain) && BigInt(plain) === value;
  return Number(plain) === value || (Number.isNaN(value) && /nan/i.test(plain)) || (!Number.isFinite(value) && /inf/i.test(plain));
}

/** Front-matter keys whose value is a list of names, which notes also write as one string: `tags: idea, zettel`. */
const NAME_LISTS = new Set(["tags", "tag", "aliases", "alias"]);

/**
 * `tags: idea, zettel` as the two tags Obsidian reads in it, not one tag "idea, zettel" (`tags=zettel` found nothing,
 * and the hint listed "idea, zettel" as if it were two). Other keys keep their commas.
 */
function listsOfNames(metadata: Record<string, unknown>): Record<string, unknown> {
  const split = Object.entries(metadata).map(([key, value]) =>
    NAME_LISTS.has(key) && typeof value === "string" && value.includes(",") ? [key, commaList(value)] : [key, value],
  );
  return Object.fromEntries(split);
}

/**
 * `tags` as Obsidian reads a note's tags: those its front matter names (`tags` and `tag`, a `#` before one dropped),
 * then those its text uses inline (`#idea`), each once. `tags=idea` found neither a `#idea` in the text, nor
 * `tags: ["#idea"]`, nor `tag: idea`.
 * A scalar that is no name (`tags: 2024`) is one entry still, kept as written; a mapping leaves `tags` as written.
 */
function withInlineTags(metadata: Record<string, unknown>, inline: string[]): Record<string, unknown> {
  const [plural, singular] = [tagEntries(metadata.tags), tagEntries(metadata.tag)];
  if (!plural) return metadata;
  // `tag:` is Obsidian's older spelling of `tags:`; it stays as written too.
  const names = [...plural, ...(singular ?? [])];
  const hashed = names.some((name) => typeof name === "string" && tagName(name) !== name);
  const blank = Array.isArray(metadata.tags) && metadata.tags.length !== plural.length;
  if (inline.length === 0 && !hashed && !blank && !singular?.length) return metadata; // as written
  const tags: unknown[] = [];
  const seen = new Set<string>();
  for (const tag of [...names.map((name) => (typeof name === "string" ? tagName(name) : name)), ...inline]) {
    const key = typeof tag === "string" ? tag.toLowerCase() : undefined;
    if (key !== undefined && seen.has(key)) continue;
    if (key !== undefined) seen.add(key);
    tags.push(tag);
  }
  return { ...metadata, tags };
}

/**
 * The entries of a `tags` value, or undefined for a mapping. An empty `tags:` (YAML's null), what Obsidian's property
 * editor and templates leave, names no tag, nor does a blank entry of a list (`- ` left by a template); a number or
 * a boolean is one entry (`tags: 2024` dropped the note's inline tags).
 */
function tagEntries(value: unknown): unknown[] | undefined {
  const blank = (entry: unknown) => entry === null || entry === undefined || (typeof entry === "string" && entry.trim() === "");
  if (Array.isArray(value)) return value.filter((entry) => !blank(entry));
  if (blank(value)) return [];
  return typeof value === "object" ? undefined : [value];
}

/** `alpha, "beta, gamma"` → `alpha`, `beta, gamma`: names split at commas outside double quotes. */
function commaList(value: string): string[] {
  return (value.match(/\s*"[^"]*"\s*|[^,]+/g) ?? []).map((name) => name.trim().replace(/^"(.*)"$/, "$1")).filter(Boolean);
}

/** Front matter read: its metadata (null when the block is none), and why YAML refused it when it did. */
interface FrontMatter {
  metadata: Record<string, unknown> | null;
  /** YAML's reason and the file's line (`line 3: …`), when the block was read as lines of `key: value` instead. */
  invalid?: string;
}

/**
 * Front matter as metadata, or null when the block is none: neither a YAML mapping nor lines of `key: value` (a list,
 * a sentence, slides). Lines of `key: value` that YAML refuses (`title: Rust: a tour`, its colon unquoted, as notes
 * often have it) are front matter still, each value its line's text, and YAML's reason comes with them; a block of
 * comments alone is an empty one.
 */
function parseFrontMatter(source: string): FrontMatter {
  const lines = source.split(/\r?\n/).filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"));
  if (lines.length === 0) return { metadata: {} };
  try {
    // Checking keys for uniqueness is quadratic in the library (578 KB of keys took seconds); the last one wins.
    // Integers as BigInt: one past 2^53 (a 19-digit id) is kept as its digits (boundedMetadata), not rounded. Tags
    // are not resolved into objects: `!!binary` was stored as a Node Buffer's JSON, `!!set` and `!!omap` as `{}`
    // (their values lost): each is read as the plain YAML it is written as (s19 hostile #5).
    const parsed = parseYaml(source, { uniqueKeys: false, intAsBigInt: true, schema: "core", resolveKnownTags: false });
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      // cycles, depth and size bounded before anything walks it
      return { metadata: boundedMetadata(parsed as Record<string, unknown>) };
    }
    return { metadata: null };
  } catch (error) {
    const { line, reason } = yamlError(error);
    // The block starts on the file's second line, after its opening `---`.
    return { metadata: keyValueLines(lines), invalid: line ? `line ${line + 1}: ${reason}` : reason };
  }
}

/** TOML front matter as metadata (dates as their ISO text), or null when the block is not TOML. */
function parseTomlFrontMatter(source: string): FrontMatter {
  try {
    const parsed = toml().parse(source, { integersAsBigInt: "asNeeded", maxDepth: METADATA_LIMITS.depth });
    return { metadata: boundedMetadata(parsed) };
  } catch {
    return { metadata: null }; // not TOML, or nested past what the parser's stack allows (a table header of 100,000 keys)
  }
}

/** `key: value` at the start of a line: a front-matter key as notes write them. */
const KEY_LINE = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$/;

/** Lines that are each `key: value` (or continue the one above, indented) as metadata; null when one is not. */
function keyValueLines(lines: string[]): Record<string, unknown> | null {
  // Each value's parts, joined once at the end: a string rebuilt per continuation line was quadratic (s18 hostile #1).
  const parts = new Map<string, string[]>();
  let last: string[] | undefined;
  for (const line of lines) {
    const match = KEY_LINE.exec(line);
    if (match) {
      last = [(match[2] ?? "").trim().replace(/^(["'])(.*)\1$/, "$2")];
      parts.set(match[1]!, last);
    } else if (last !== undefined && /^[ \t]/.test(line)) {
      last.push(line.trim());
    } else return null;
  }
  return Object.fromEntries([...parts].map(([key, values]) => [key, values.filter(Boolean).join(" ")]));
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
  return count;
}
