/**
 * Reading one indexed document back, whole or a range of its lines or pages, and listing what the index holds (`ls`,
 * `get --meta`). Only documents the index holds are read: files that were never indexed (hidden, excluded, other
 * types) are refused. A converted format (PDF, DOCX, EPUB, HTML) reads back as the markdown indexing saw, through the
 * same converter; PDFs with page marker lines.
 */
import { isAbsolute, join } from "node:path";
import { loadConfig, REPO_NAME } from "../config.ts";
import { decodeText, formatOf, TEXT_FORMATS } from "../convert/convert.ts";
import { PAGE_MARKER } from "../convert/document.ts";
import { conversionLimits, conversionSettings, convertOnce } from "../convert/pool.ts";
import { describeError, notIndexedYet, ResearcherError, toResearcherError } from "../errors.ts";
import { missingRootHint, movedRoot, movedRootHint, readConfinedFile, rootRecord, type RootRecord, sha256 } from "../files.ts";
import { leadingRepository } from "../path-glob.ts";
import { attempt, getRepository, listRepositories, selectRepositories, settle, type Repository, type SkippedRepository } from "../repos.ts";
import { Store, type ListedDocument } from "../store/store.ts";
import { shellWord } from "../terminal.ts";
import { composed } from "../text.ts";
import { LISTED } from "./bounds.ts";
import { ConversionCache } from "./conversions.ts";
import { docidOf } from "./docid.ts";
import {
  badCount,
  badFirstLine,
  badPage,
  closePaths,
  type DocumentRef,
  type LeftOutRule,
  namedRepository,
  notIndexed,
  repositoryPrefix,
  type RefLookup,
  resolveDocumentRef,
} from "./document-refs.ts";
import { notReachedYet, unfinishedIndex } from "./first-run.ts";
import { documentsBelow, inSession, type ReadSession, withStore } from "./read-session.ts";

/** Who a document is: what every answer about it starts with. */
interface DocumentIdentity {
  repository: string;
  path: string;
  docid: string;
  title: string;
  format: string;
  metadata: Record<string, unknown>;
}

/** What the index knows about a document, without reading it: `ls` entries and `get --meta`. */
export interface DocumentInfo extends DocumentIdentity {
  size: number;
  /** The file's modification time when it was indexed (ISO 8601). */
  modified: string;
  fragments: number;
  /** The last page of a paged document (PDF), null for the rest. */
  pages: number | null;
}

export interface DocumentText extends DocumentIdentity {
  /** First and last line of `text` (1-based, inclusive); `to` is `from - 1` for an empty document. */
  from: number;
  to: number;
  /** The same as `from`/`to`, the names the first MCP contract used. */
  from_line: number;
  to_line: number;
  total_lines: number;
  /** The answer was cut short of what was asked for (by a byte budget): read on from `to + 1`. */
  truncated: boolean;
  /**
   * The file is not what was indexed (edited since, and no index run yet): the text is the file as it is now, so a
   * line range a search cited may have moved.
   */
  changed_since_index: boolean;
  /**
   * The pages of this read whose text reads as symbols, not words (the document's `garbled_pages`): said before the
   * text, as an agent quoted or tried to decode them (s26 agent F7). Absent when none.
   */
  garbled_pages?: number[];
  /**
   * The first and last page the lines read are on, in a paged document (PDF, a multi-page scan), named as a search
   * result's fragment names its pages; null for the rest. A script that read `:p2-3` knew its pages only by parsing
   * the text's page markers (s27 user U7).
   */
  page: number | null;
  page_end: number | null;
  text: string;
}

/**
 * Why a page's text reads as symbols, not words (a document's `garbled_pages` holds both): a text layer in fonts
 * without a character map (pdf.ts), or a scanned page or image OCR reads as gibberish every way it is turned (pdf.ts,
 * image.ts). Every warning about such pages names both, as the metadata does not tell them apart (s27 review F4).
 */
export const GARBLED_CAUSES = "fonts without a character map, or a scan OCR reads as gibberish";

export interface ReadOptions {
  /** First line (1-based); default: the ref's line, else 1. */
  fromLine?: number;
  /** How many lines; default: the ref's count, else to the end. */
  maxLines?: number;
  /** A server's converted documents, reused while a file's bytes and settings are unchanged. */
  conversions?: ConversionCache;
  /** The caller gave up (an MCP client cancelled): a conversion only this read waits for is stopped. */
  signal?: AbortSignal;
  /** Indexes and configuration shared with other reads of the same call. */
  session?: ReadSession;
  /** Why the repository's rules leave a path out, for a miss to name it (`leftOutOfIndex`, passed by the shells). */
  leftOut?: LeftOutRule;
}

/** A document's listing (`get --meta`, `ls`) by any ref; a refusal (with close paths) for anything not indexed. */
export function documentInfo(home: string, ref: string | DocumentRef, options: RefLookup = {}): DocumentInfo {
  const { repo, path } = typeof ref === "string" ? resolveDocumentRef(home, ref, options) : ref;
  return listedInfo(repo, indexedDocument(home, repo, path, options).listed);
}

/**
 * What the index holds about a document, and where its repository's folder led at the last run (read together: one
 * opening of the index per document read); a refusal (with close paths) for anything it does not hold.
 */
function indexedDocument(
  home: string,
  repo: Repository,
  path: string,
  { session, suggest, leftOut }: RefLookup,
): { listed: ListedDocument; root: RootRecord | undefined } {
  const found = withStore(repo, (store) => ({ listed: store.documentListing(path)[0], root: store.recordedRoot() }), session);
  // A repository never indexed holds no document yet: the fix is to index it, as `ls` says (its `ls` hint failed).
  if (found === undefined) throw notIndexedYet(repo.name);
  if (!found.listed) throw folderOrNotIndexed(home, repo, path, { session, suggest, leftOut });
  return { listed: found.listed, root: found.root };
}

/** A ref to no document: a folder of indexed documents is said to be one, with the commands that read and list it. */
function folderOrNotIndexed(home: string, repo: Repository, path: string, { session, suggest, leftOut }: RefLookup): ResearcherError {
  const folder = path.replace(/\/+$/, "");
  // In a session of its own when the caller has none (`get`, `get --meta`): one rule for what is below a folder.
  const below = inSession(home, session, (within) => documentsBelow(repo, folder, within).length);
  if (below === 0) {
    const suggestions = suggest === false ? [] : closePaths(repo, path, session);
    const ruled = leftOut?.(repo, path);
    if (ruled) return notIndexed(`${repo.name}:${path}`, suggestions, "", repo.name, { ...ruled, known: true });
    // A file the last run failed is no typo: its reason, as `status` lists it (a link out of the repository was "not
    // an indexed document (did you mean a:x.md?)": s30 hostile F6).
    const failed = withStore(repo, (store) => store.failureOf(path), session);
    if (failed !== undefined) {
      return notIndexed(`${repo.name}:${path}`, [], "", repo.name, { ...failedToIndex(repo, failed), known: true });
    }
    // A first run that may not have reached it yet says so, as search and `ls` say it (it read as a failed file: s28
    // hostile F3); a close path indexed so far comes after the wait (b.md not reached yet is no typo for a.md).
    const notYet = withStore(repo, (store) => notReachedYet(repo, store), session);
    if (notYet === undefined) return notIndexed(`${repo.name}:${path}`, suggestions, "", repo.name);
    const hint = suggestions.length ? `${notYet.hint}; or did you mean ${suggestions.slice(0, 5).join(", ")}?` : notYet.hint;
    return notIndexed(`${repo.name}:${path}`, [], "", repo.name, { why: notYet.why, hint });
  }
  const ref = shellWord(`${repo.name}:${folder}/`);
  // multi-get splits a list at its commas and reads glob syntax: a folder's own are escaped (`dir,1/` read as `dir` and
  // `1/`, `br[a]/` as `bra/` too: s23 hostile H8, retest N4).
  const part = shellWord(`${repo.name}:${folder.replace(/[\\,[\]{}*?]/g, "\\$&")}/`);
  return new ResearcherError(
    "DOCUMENT_NOT_FOUND",
    `${repo.name}:${path} is a folder of ${below === 1 ? "1 indexed document" : `${below} indexed documents`}, not a document`,
    {
      hint: `\`researcher multi-get ${part}\` reads them, \`researcher ls ${ref}\` lists them`,
    },
  );
}

/** Why a file the last run failed is not in the index, and what reads it again once it is fixed. */
function failedToIndex(repo: Repository, reason: string): { why: string; hint: string } {
  const name = shellWord(repo.name);
  return {
    why: `the last index run failed it: ${reason}`,
    hint: `once it is fixed, \`researcher index ${name} --retry-failed\` reads it again (\`researcher status ${name}\` lists the failures)`,
  };
}

function listedInfo(repo: Repository, doc: ListedDocument): DocumentInfo {
  return {
    repository: repo.name,
    path: doc.path,
    docid: docidOf(doc.hash),
    title: doc.title,
    format: doc.format,
    metadata: doc.metadata,
    size: doc.size,
    modified: isoTime(doc.mtimeMs),
    fragments: doc.fragments,
    pages: doc.pages,
  };
}

/** The latest and earliest times a Date can hold (±100,000,000 days), in ms from 1970. */
const DATE_LIMIT = 8.64e15;

/**
 * A file's mtime as ISO text, held within what a Date can write: a 64-bit file system (tmpfs, btrfs, ZFS) or a tar
 * archive may give a time past year 275,760, and one such file made its whole repository unlistable ("Invalid Date").
 */
function isoTime(ms: number): string {
  return new Date(Math.max(-DATE_LIMIT, Math.min(DATE_LIMIT, Number.isFinite(ms) ? ms : 0))).toISOString();
}

/**
 * The lines of pages `page` to `last` (the first one's marker line to the line before the marker after the last)
 * in a paged document's text.
 */
function pageLines(lines: string[], page: number, name: string, last = page): { from: number; count: number } {
  if (page < 1) throw badPage(page);
  const markers = lines.flatMap((line, i) => (PAGE_MARKER.test(line) ? [i] : []));
  if (markers.length === 0) throw noPages(name);
  const start = markers[page - 1];
  const missing = start === undefined ? page : last > markers.length ? last : undefined;
  if (missing !== undefined) {
    throw new ResearcherError("INVALID_INPUT", `${name} has no page ${missing} (${markers.length} pages)`, {
      hint: `read a page between p1 and p${markers.length}`,
    });
  }
  return { from: start! + 1, count: (markers[last] ?? lines.length) - start! };
}

const noPages = (name: string) =>
  new ResearcherError("INVALID_INPUT", `${name} has no pages`, {
    hint: `read it by line, e.g. \`researcher get ${shellWord(`${name}:1-40`)}\``,
  });

/**
 * The page or line range a ref names (`:p3`, `:20-40`, `:20:5`), if any. Only a document indexed with pages (a PDF,
 * a multi-page scan) has them: a note holding page-marker comments (`convert paper.pdf -o paper.md` writes them) is
 * cited by line, as search cites it, and its markers' numbers need not start at 1.
 */
function askedRange(ref: DocumentRef, lines: string[], paged: boolean): { from: number; count: number } | undefined {
  const name = `${ref.repo.name}:${ref.path}`;
  if (ref.page !== undefined && !paged) throw noPages(name);
  if (ref.page !== undefined) return pageLines(lines, ref.page, name, ref.lastPage);
  return ref.line !== undefined && ref.count !== undefined ? { from: ref.line, count: ref.count } : undefined;
}

/** A first line to read from inside the page or range a ref names; one outside it is an error that says where. */
function checkInside(ref: DocumentRef, range: { from: number; count: number }, from: number, lines: number): void {
  const [first, last] = [range.from, range.from + range.count - 1];
  if (from >= first && from <= last) return;
  const name = `${ref.repo.name}:${ref.path}`;
  const pages = ref.lastPage === undefined ? `p${ref.page}` : `p${ref.page}-${ref.lastPage}`;
  const asked = ref.page !== undefined ? `${name}:${pages}` : `${name}:${first}-${last}`;
  // Reading on from that line is offered only where the document has it: past its end, that read failed too (s25
  // scripts L5).
  const on = from <= lines ? `, or read ${name}:${from} for the lines from there on` : ` (the document has ${lines} lines)`;
  throw new ResearcherError("INVALID_INPUT", `line ${from} is outside ${asked} (lines ${first}–${last})`, {
    hint: `read from a line between ${first} and ${last}${on}`,
  });
}

function minimum(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/**
 * Read an indexed document, whole or a range of lines. Lines count as `get`, search locations and editors count
 * them: a final newline ends the last line rather than starting another.
 */
export async function readDocument(
  home: string,
  ref: string | DocumentRef,
  options: ReadOptions & { repository?: string } = {},
): Promise<DocumentText> {
  const resolved = typeof ref === "string" ? resolveDocumentRef(home, ref, options) : ref;
  const { repo, path } = resolved;
  const { listed: indexed, root } = indexedDocument(home, repo, path, options);
  const info = listedInfo(repo, indexed);
  const { text, hash } = await documentText(home, repo, path, root, options);
  const lines = text === "" ? [] : text.replace(/\r?\n$/, "").split(/\r?\n/);
  // A line number in a ref is the caller's to get right, as a flag's is: a usage error (exit 2), as `--from 0` is.
  for (const count of [resolved.count, options.maxLines]) {
    if (count !== undefined && (!Number.isInteger(count) || count < 1)) throw badCount(count);
  }
  // A page or a line range in the ref is what was asked for: a first line (reading on after a cut answer) and a line
  // count read inside it, never past it.
  const range = askedRange(resolved, lines, info.pages !== null);
  const from = options.fromLine ?? range?.from ?? resolved.line ?? 1;
  if (!Number.isInteger(from) || from < 1) throw badFirstLine(from);
  if (range) checkInside(resolved, range, from, lines.length);
  const count = minimum(options.maxLines, range && range.from + range.count - from);
  if (from > Math.max(1, lines.length)) {
    const size = lines.length === 1 ? "1 line" : `${lines.length} lines`;
    // A line a search cited can be past the end because the file changed since: that is the fix to name.
    const hint =
      hash !== indexed.hash
        ? `it changed since it was indexed: \`researcher index ${repo.name}\` catches up`
        : `read from a line between 1 and ${lines.length}`;
    throw new ResearcherError("INVALID_INPUT", `line ${from} is past the end of ${repo.name}:${path} (${size})`, { hint });
  }
  const slice = lines.slice(from - 1, count === undefined ? undefined : from - 1 + count);
  const to = from + slice.length - 1;
  const page = info.pages === null ? null : pageOfLine(lines, from);
  const pages = { page, page_end: page === null ? null : lastPageIn(slice, page) };
  return {
    repository: repo.name,
    path,
    docid: info.docid,
    title: info.title,
    format: info.format,
    metadata: info.metadata,
    from,
    to,
    from_line: from,
    to_line: to,
    total_lines: lines.length,
    truncated: false, // all that was asked for: only a byte budget cuts an answer short (limitDocumentBytes)
    changed_since_index: hash !== indexed.hash,
    ...garbledPagesRead(info.metadata, pages),
    ...pages,
    text: slice.join("\n"),
  };
}

/**
 * The document's garbled pages among those a read is on: a one-page image (image.ts) has no page marker but can be
 * all garbled (s27 review F4), and its read is on page 1.
 */
function garbledPagesRead(metadata: Record<string, unknown>, read: Pick<DocumentText, "page" | "page_end">): { garbled_pages?: number[] } {
  const garbled = Array.isArray(metadata.garbled_pages) ? metadata.garbled_pages.filter((n) => typeof n === "number") : [];
  const [first, last] = read.page === null || read.page_end === null ? [1, 1] : [read.page, read.page_end];
  const pages = garbled.filter((n) => n >= first && n <= last);
  return pages.length ? { garbled_pages: pages } : {};
}

/**
 * The page a line (1-based) of a paged document's text is on: a page runs from its marker line to the next one; a
 * line before the first marker is on the first page.
 */
function pageOfLine(lines: string[], line: number): number {
  let page: number | undefined;
  for (let i = 0; i < lines.length && (i < line || page === undefined); i++) {
    const marker = PAGE_MARKER.exec(lines[i]!);
    if (marker) page = Number(marker[1]);
  }
  return page ?? 1;
}

/** The last page a read's lines are on, which begin on page `first`: that of the last marker line among them. */
function lastPageIn(lines: string[], first: number): number {
  for (let i = lines.length - 1; i > 0; i--) {
    const marker = PAGE_MARKER.exec(lines[i]!);
    if (marker) return Number(marker[1]);
  }
  return first;
}

/** What a read holds, as a ref that reads it again: `repo:path`, or `repo:path:13-20` for some of its lines. */
export function readRef(doc: { repository: string; path: string; from: number; to: number; total_lines: number }): string {
  const part = doc.from > 1 || doc.to < doc.total_lines ? `:${doc.from}-${doc.to}` : "";
  return `${doc.repository}:${doc.path}${part}`;
}

/**
 * The document's lines, each after its own line number and a tab as `cat -n` prints them (`get --line-numbers`, MCP
 * `line_numbers`); no newline after the last. The numbers are as wide as the last one needs, 6 at least.
 */
export function withLineNumbers(doc: DocumentText): string {
  if (doc.text === "" && doc.to < doc.from) return "";
  const width = Math.max(6, String(doc.to).length);
  return doc.text
    .split("\n")
    .map((line, i) => `${String(doc.from + i).padStart(width)}\t${line}`)
    .join("\n");
}

/** What each line's number and tab add to its text in withLineNumbers (0 without numbers). */
function numberBytes(doc: DocumentText, lineNumbers: boolean): number {
  return lineNumbers ? Math.max(6, String(doc.to).length) + 1 : 0;
}

/** The document's text in UTF-8 bytes as it is sent: with its line numbers when they are asked for. */
export function sentBytes(doc: DocumentText, lineNumbers: boolean): number {
  return Buffer.byteLength(doc.text) + Math.max(0, doc.to - doc.from + 1) * numberBytes(doc, lineNumbers);
}

/**
 * The document cut to at most `maxBytes` of UTF-8 text as it is sent (numbered by withLineNumbers when `lineNumbers`:
 * numbering after the cut sent 4.5 MiB under a 1 MiB cap, s23 review R4), at a line end where whole lines fill half
 * the budget at least; else the budget is filled from inside the next line (never inside a character); `to` and
 * `truncated` say where it stopped: the next read starts at `to + 1`, or inside line `to` when the text ends short
 * of it. The text is returned unnumbered.
 */
export function limitDocumentBytes(doc: DocumentText, maxBytes: number, { lineNumbers = false } = {}): DocumentText {
  if (sentBytes(doc, lineNumbers) <= maxBytes) return doc;
  // The width of the uncut text's last number: a cut can only make it narrower, so the answer stays within budget.
  const perLine = numberBytes(doc, lineNumbers);
  const lines = doc.text.split("\n");
  const cost = (i: number) => Buffer.byteLength(lines[i]!) + perLine + (i ? 1 : 0);
  let used = 0;
  let kept = 0;
  while (kept < lines.length && used + cost(kept) <= maxBytes) {
    used += cost(kept);
    kept++;
  }
  // Whole lines filling less than half the budget are (almost) no answer: a page's marker before its one paragraph
  // of 1,481 bytes answered 16 of 600, a title before a body of one long line 7 of 131,072 (s24 agent A6).
  const part = used * 2 < maxBytes ? partOfLine(lines[kept]!, maxBytes - used - perLine - (kept ? 1 : 0), kept === 0) : "";
  const whole = part === "" && kept > 0;
  const to = doc.from + kept - (whole ? 1 : 0);
  const text = whole ? lines.slice(0, kept).join("\n") : [...lines.slice(0, kept), part].join("\n");
  // All of it, a line past the budget whole (its first character must go): nothing is left to read on to (s24 retest
  // N4).
  if (text === doc.text) return doc;
  // A cut read ends on the page its last line is on, and carries the garbled pages it still shows: a document
  // without page markers (a one-page image) is all page 1, as garbledPagesRead reads it.
  const page_end = doc.page === null ? null : lastPageIn(text.split("\n"), doc.page);
  const garbled = doc.garbled_pages?.filter((n) => n <= (page_end ?? 1));
  return { ...doc, to, to_line: to, page_end, garbled_pages: garbled?.length ? garbled : undefined, truncated: true, text };
}

/** Where a read cut by its byte budget goes on: the next line, or further into the line it stopped inside. */
export interface Continuation {
  from_line: number;
  from_char?: number;
}

/**
 * A document read from character `fromChar` of its first line (a line can be megabytes long) and cut to `maxBytes`
 * as it is sent (with its line numbers when `lineNumbers`), with where to read on when it was cut: inside its last
 * line, the same line further on; else the next line. Characters are code points, as Python, Rust and Go count them:
 * UTF-16 units started a client's own offset inside an emoji, on a lone surrogate (s29b retest F2).
 */
export function readPart(
  doc: DocumentText,
  fromChar: number,
  maxBytes: number,
  lineNumbers = false,
): DocumentText & { continue_with?: Continuation } {
  const lineEnd = doc.text.indexOf("\n");
  const firstLine = lineEnd < 0 ? doc.text.length : lineEnd;
  const start = unitsInto(doc.text, fromChar, firstLine);
  if (start === undefined) {
    const chars = charCount(doc.text, 0, firstLine);
    throw new ResearcherError("INVALID_INPUT", `from_char ${fromChar} is past the end of line ${doc.from} (${chars} characters)`, {
      hint: `use a from_char between 0 and ${chars}`,
    });
  }
  const rest = doc.text.slice(start);
  const cut = limitDocumentBytes({ ...doc, text: rest }, maxBytes, { lineNumbers });
  if (!cut.truncated) return cut;
  // The cut text begins `rest`: it stopped inside its last line unless a line end (or the end) follows it.
  const end = cut.text.length;
  if (end === rest.length || rest[end] === "\n") return { ...cut, continue_with: { from_line: cut.to + 1 } };
  const lineStart = cut.to === cut.from ? fromChar : 0;
  const inLine = charCount(cut.text, cut.text.lastIndexOf("\n") + 1, end);
  return { ...cut, continue_with: { from_line: cut.to, from_char: lineStart + inLine } };
}

/** Whether the UTF-16 unit at `i` of `text` begins a surrogate pair: one character in two units. */
function pairAt(text: string, i: number): boolean {
  const unit = text.charCodeAt(i);
  const next = text.charCodeAt(i + 1);
  return unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
}

/** The characters (code points) of `text` from UTF-16 unit `from` to `to`. */
function charCount(text: string, from: number, to: number): number {
  let chars = 0;
  for (let i = from; i < to; i += pairAt(text, i) ? 2 : 1) chars++;
  return chars;
}

/** The UTF-16 unit `chars` characters into `text`, if that is at or before unit `end`. */
function unitsInto(text: string, chars: number, end: number): number | undefined {
  let i = 0;
  for (let n = 0; n < chars; n++) {
    if (i >= end) return undefined;
    i += pairAt(text, i) ? 2 : 1;
  }
  return i;
}

/**
 * The start of `line` in at most `bytes` of UTF-8, never inside a character; for the first line of an answer at
 * least its first character, past the budget if it must be: an empty answer would continue where it began.
 */
function partOfLine(line: string, bytes: number, first: boolean): string {
  const cut = new TextDecoder().decode(Buffer.from(line).subarray(0, Math.max(0, bytes))).replace(/\uFFFD$/, "");
  return cut || (first && line !== "" ? String.fromCodePoint(line.codePointAt(0)!) : cut);
}

/**
 * Every indexed document of the named repositories (all when none), optionally under a path prefix, and the
 * repositories a listing of all of them left out because their index cannot be read.
 */
export function listDocuments(home: string, options: ListingOptions = {}): Listing {
  const { repos, prefix } = listing(home, options);
  const named = Boolean(options.repositories?.length);
  const warnings: SkippedRepository[] = [];
  const { answers, skipped } = settle(
    repos.map((repo) =>
      attempt(repo, (r) => {
        // A repository never indexed is an error when named (as search --repo and status are); a listing of all of
        // them says why it is left out. One whose first run is under way is too, or listed with a warning, as search
        // says it.
        if (!Store.exists(r.dir)) throw notIndexedYet(r.name);
        return (
          withStore(r, (store) => {
            const unfinished = unfinishedIndex(r, store, "listed");
            if (unfinished) warnings.push(unfinished);
            return store.documentListing();
          }) ?? []
        );
      }),
    ),
    named,
  );
  const wanted = composed(prefix); // names from a Mac are stored decomposed, and typed composed
  const documents = answers.flatMap(({ repo, value }) =>
    value.filter((doc) => composed(doc.path).startsWith(wanted)).map((doc) => listedInfo(repo, doc)),
  );
  // A prefix that starts no path is often the inside of one (`ch04` for `src/ch04-…`): the paths that contain it.
  const lowered = prefix.toLowerCase();
  const containing =
    documents.length || !prefix
      ? []
      : answers.flatMap(({ repo, value }) =>
          value.filter((doc) => doc.path.toLowerCase().includes(lowered)).map((doc) => `${repo.name}:${doc.path}`),
        );
  // A prefix that begins with a repository's name (`py/json`) names a folder `py` inside one: the listing it meant.
  const names = () => new Set(listRepositories(home).map((repo) => repo.name));
  const meant = documents.length ? undefined : leadingRepository(prefix, names(), { colon: false });
  return {
    documents,
    skipped,
    warnings,
    containing,
    ...(meant ? { meant: { repository: meant.repository, prefix: meant.inside } } : {}),
  };
}

export interface Listing {
  documents: DocumentInfo[];
  skipped: SkippedRepository[];
  /** Repositories no index run has finished yet, listed as far as they are (unfinishedIndex). */
  warnings: SkippedRepository[];
  /** When nothing is listed: the paths that hold the prefix (`ch04` for `src/ch04-…`). */
  containing: string[];
  /**
   * When nothing is listed and the prefix begins with a repository's name (`py/json`): that repository and the prefix
   * inside it.
   */
  meant?: { repository: string; prefix: string };
}

/**
 * A page of the listing as the servers answer it (MCP's list_documents, REST's GET /documents): the documents of
 * `repository` (all when none) under `prefix`, `limit` of them (LISTED.max when none) from `offset`, with how many
 * there are in all; and the fields only some answers carry, each only when it has something to say.
 */
export function listDocumentsPage(home: string, options: ListingPageOptions): ListingPage {
  const { repository, prefix } = listingOf(home, options.repository, options.prefix);
  const all = listDocuments(home, { repositories: repository !== undefined ? [repository] : [], prefix });
  // A prefix `nore:x/` that lists nothing, its name no repository's, is a misspelt repository, as `ls nore:x/` and a
  // read of `nore:x/a.md` say it (naming the known ones): it listed nothing in silence (s27b agent F1).
  const { name } = repositoryPrefix(prefix ?? "");
  if (all.documents.length === 0 && repository === undefined && REPO_NAME.test(name)) getRepository(home, name);
  const offset = options.offset ?? 0;
  const documents = all.documents.slice(offset, offset + (options.limit ?? LISTED.max));
  return {
    total: all.documents.length,
    offset,
    documents,
    skipped: all.skipped,
    ...(all.warnings.length ? { warnings: all.warnings } : {}),
    // What MCP's text says of an empty listing, for a program too (s27b agent F2); bounded as a page is.
    ...(all.containing.length ? { containing: all.containing.slice(0, LISTED.max) } : {}),
    ...(all.meant ? { meant: all.meant } : {}),
  };
}

/** A listing's page, as the servers send it. */
export interface ListingPage {
  /** How many documents the listing holds in all. */
  total: number;
  offset: number;
  documents: DocumentInfo[];
  skipped: SkippedRepository[];
  /** Only when a repository no index run has finished yet is listed as far as it is. */
  warnings?: SkippedRepository[];
  /** Only when nothing is listed: the paths (repo:path, the first LISTED.max) that hold the prefix. */
  containing?: string[];
  /** Only when nothing is listed and the prefix begins with a repository's name: the listing it meant. */
  meant?: { repository: string; prefix: string };
}

export interface ListingPageOptions {
  /** This repository (all when none). */
  repository?: string;
  /** Only paths under this prefix; `notes:meetings/` also names the repository, as in refs. */
  prefix?: string;
  offset?: number;
  limit?: number;
}

/**
 * A listing's repository and prefix: a prefix `notes:meetings/` names the repository as a ref does (and `ls` takes
 * it), when a registered one has that name (it found nothing: s21 MCP #2), or it is the repository given (as
 * get_document reads `notes:ref` with repository notes; it listed nothing: s22 review F1).
 */
function listingOf(home: string, repository: string | undefined, prefix: string | undefined): { repository?: string; prefix?: string } {
  if (repository !== undefined && prefix !== undefined) getRepository(home, repository);
  // A prefix naming another repository than `repository` is refused, as a ref is: it listed nothing in silence.
  const named = prefix === undefined ? undefined : namedRepository(home, prefix, repository !== undefined ? [repository] : [], PREFIX);
  // An absolute path inside no repository's folder is said to be, as `ls /etc` says it: it listed nothing in silence.
  if (!named && prefix !== undefined && isAbsolute(prefix)) getRepository(home, prefix);
  return named ? { repository: named.repository, prefix: named.inside } : { repository, prefix };
}

const PREFIX = { what: "prefix", verb: "list" };

/** The files that failed to index (as the last runs recorded them) where `listDocuments` lists documents. */
export function listFailures(home: string, options: ListingOptions = {}): SkippedDocument[] {
  const { repos, prefix } = listing(home, options);
  const { answers } = settle(
    repos.map((repo) => attempt(repo, (r) => withStore(r, (store) => store.failures()) ?? [])),
    Boolean(options.repositories?.length),
  );
  return answers.flatMap(({ repo, value }) =>
    value.filter((failure) => failure.path.startsWith(prefix)).map((failure) => ({ repository: repo.name, ...failure })),
  );
}

export interface ListingOptions {
  /** These repositories (all when none). */
  repositories?: string[];
  /** Only paths under this prefix. */
  prefix?: string;
}

function listing(home: string, options: ListingOptions): { repos: Repository[]; prefix: string } {
  const repos = selectRepositories(home, options.repositories);
  return { repos, prefix: options.prefix?.replace(/^\.?\//, "") ?? "" };
}

/**
 * A document's text as its line numbers count, read as its file is now: the file itself for markdown and text
 * (front matter included), the converted markdown for every other format; and the hash of those bytes (the
 * index's hash, if the file is unchanged).
 */
async function documentText(
  home: string,
  repo: Repository,
  path: string,
  root: RootRecord | undefined,
  { conversions, signal, session }: Pick<ReadOptions, "conversions" | "signal" | "session">,
): Promise<{ text: string; hash: string }> {
  const config = session?.config ?? loadConfig(home);
  // The read is confined to the folder this check accepted: one replaced by a link just after it reads nothing.
  const now = rootRecord(repo.path);
  const moved = movedRoot(repo.path, root, now);
  if (moved !== undefined) {
    throw new ResearcherError("FILE_UNREADABLE", `${repo.name}:${path}: the repository folder ${repo.path} now resolves to ${moved}`, {
      hint: movedRootHint(repo.name, moved),
    });
  }
  const read = readConfinedFile(repo.path, path, config.index.max_file_bytes, now?.real);
  // The repository's folder itself gone: an index run cannot help, it refuses a folder that is not there.
  const hint = now
    ? `if the file changed since it was indexed, \`researcher index ${repo.name}\` brings the index up to date`
    : missingRootHint(repo.name);
  // Deleted since it was indexed (a watch drops it a moment later): no document now, not a file failing to read,
  // and no server's path in the message (it was FILE_UNREADABLE with the raw ENOENT: s27b agent F4).
  if ("reason" in read && read.missing && now) {
    throw new ResearcherError("DOCUMENT_NOT_FOUND", `${repo.name}:${path} was deleted since it was indexed`, {
      hint: `search again for where its text went; \`researcher index ${repo.name}\` drops it from the index`,
    });
  }
  if ("reason" in read) {
    // A FIFO or a device where the document was: no index run takes that in (it keeps the document).
    const remove = `\`researcher remove ${repo.name} ${shellWord(path)}\``;
    const gone = `put the document back, or drop it from the index with ${remove}`;
    // Grown past the limit: the index keeps the version it read before, and no index run reads this one (it fails
    // as too large, then is left alone while unchanged): `index` was no way on (s29 hostile F3). The limit offered has
    // room: the file's own size failed a growing log again at the next run (s29b retest P10).
    const grown = `the index holds an earlier version of it; \`researcher config set index.max_file_bytes ${roomFor(read.size ?? 0)}\` and \`researcher index ${repo.name}\` take in this one, or ${remove} drops it`;
    throw new ResearcherError("FILE_UNREADABLE", `${repo.name}:${path}: ${read.reason}`, {
      hint: read.special ? gone : read.tooLarge ? grown : hint,
    });
  }
  const hash = sha256(read.bytes);
  try {
    if (TEXT_FORMATS.has(formatOf(path))) return { text: decodeText(read.bytes), hash };
    const limits = conversionLimits(config, repo.ocr);
    const key = ConversionCache.key(join(repo.path, path), read.bytes, limits.convert);
    const kept = conversions?.get(key) ?? keptText(repo, path, hash, conversionSettings(config, repo), session);
    if (kept !== undefined) return { text: kept, hash };
    const convert = async (stop?: AbortSignal) => (await convertOnce(path, read.bytes, limits, stop)).text;
    return { text: await (conversions ? conversions.convert(key, convert, signal) : convert(signal)), hash };
  } catch (error) {
    // The conversion's own code stays (a time limit is CONVERSION_STOPPED: try again; HTTP 503); a converter's
    // refusal or a bug says the file cannot be read as it is now.
    const failure = toResearcherError(error);
    const code = failure.code === "INTERNAL" ? "FILE_UNREADABLE" : failure.code;
    throw new ResearcherError(code, `${repo.name}:${path}: ${failure.code === "INTERNAL" ? describeError(error) : failure.message}`, {
      hint: failure.hint ?? hint,
      cause: error,
    });
  }
}

/** A round limit above `size` bytes with room to grow: the next power of two past it. */
function roomFor(size: number): number {
  return 2 ** Math.floor(Math.log2(size) + 1);
}

/**
 * The converted text the index kept for these very bytes under these settings (OCR'd documents), if any. A shortcut
 * only: an index that cannot be read now (busy, damaged) leaves the file to be converted.
 */
function keptText(repo: Repository, path: string, hash: string, settings: string, session?: ReadSession): string | undefined {
  try {
    const kept = withStore(repo, (store) => store.convertedText(path), session);
    return kept && kept.settings === settings && kept.hash === hash ? kept.text : undefined;
  } catch {
    return undefined;
  }
}

export interface SkippedDocument {
  /** The repository, or "" when a ref named none that could be found. */
  repository: string;
  /** The path, or the ref as given when it resolved to nothing. */
  path: string;
  reason: string;
}
