/**
 * Every output format: human text (coloured on a TTY, OSC 8 links where the terminal has them), the JSON
 * contracts, JSON Lines, CSV (RFC 4180), markdown, file lists, progress bars. Text formats print names (paths,
 * titles, reasons) through `escapeControls`: a file may be called anything, and a terminal obeys what it prints.
 * It sits with the servers, below the CLI: MCP and HTTP answer with the same JSON and text as the CLI prints.
 */
import { hostname } from "node:os";
import {
  type DocumentInfo,
  type DocumentText,
  GARBLED_CAUSES,
  readRef,
  type SkippedDocument,
  withLineNumbers,
} from "../search/read-document.ts";
import type { MultiGetResult } from "../search/multi-get.ts";
import type { FilterMiss } from "../search/filter-misses.ts";
import type { IndexProgress, IndexSummary } from "../index/indexer.ts";
import type { DocumentHit, FragmentHit, SearchResponse } from "../search/search.ts";
import type { RepositoryStatus } from "../store/status.ts";
import { citationOf, type RepositoryMatch } from "../search/results.ts";
import type { VerifyReport } from "../index/verify.ts";
import type { IndexDue } from "../index/chunking.ts";
import type { ModelHold } from "../embed/embedder.ts";
import type { Repository, RepositoryError, SkippedRepository } from "../repos.ts";
import { env } from "../env.ts";
import { CODE_LANGUAGES, indexesCode, isCodeFormat, scriptLanguages, UNREAD_DOCUMENT_TYPES } from "../file-types.ts";
import { escapeControls, escapeLine, type Terminal } from "../terminal.ts";
import { pageList, shortened, trimRuns } from "../text.ts";
import type { WatchBatch, WatchStatus } from "./watch.ts";
import { largest } from "../lists.ts";
import { GENERATED_FOLDER_NAMES } from "../index/discover.ts";

export interface Style {
  bold: (s: string) => string;
  dim: (s: string) => string;
  accent: (s: string) => string;
  match: (s: string) => string;
  warn: (s: string) => string;
  /** An OSC 8 hyperlink to a file on terminals that show them; the bare text elsewhere. */
  link: (text: string, absolutePath: string) => string;
}

const ansi = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
const plain = (s: string) => s;

const unlinked = (text: string) => text;

/** No colour, no links: for MCP text, logs and files. */
export const PLAIN: Style = { bold: plain, dim: plain, accent: plain, match: plain, warn: plain, link: unlinked };

/** Colour only on a terminal, never with NO_COLOR (https://no-color.org) or TERM=dumb; FORCE_COLOR forces it. */
export function styleFor(stream: { isTTY?: boolean }): Style {
  const vars = env.terminal();
  const on = vars.FORCE_COLOR ? vars.FORCE_COLOR !== "0" : Boolean(stream.isTTY) && !vars.NO_COLOR && vars.TERM !== "dumb";
  const link = hyperlinks(stream) ? osc8 : unlinked;
  if (!on) return { bold: plain, dim: plain, accent: plain, match: plain, warn: plain, link };
  return { bold: ansi(1, 22), dim: ansi(2, 22), accent: ansi(36, 39), match: ansi(33, 39), warn: ansi(31, 39), link };
}

/**
 * Whether a stream shows OSC 8 hyperlinks: a terminal known to support them (there is no way to ask), never when
 * piped, with NO_COLOR or TERM=dumb. FORCE_HYPERLINK=1 or 0 decides outright.
 */
export function hyperlinks(stream: { isTTY?: boolean }, vars: Readonly<Record<string, string | undefined>> = env.terminal()): boolean {
  if (vars.FORCE_HYPERLINK !== undefined) return vars.FORCE_HYPERLINK !== "0";
  if (!stream.isTTY || vars.NO_COLOR || vars.TERM === "dumb") return false;
  const program = vars.TERM_PROGRAM ?? "";
  if (["iTerm.app", "WezTerm", "vscode", "ghostty", "Hyper", "Tabby", "rio"].includes(program)) return true;
  if (vars.WT_SESSION || vars.KITTY_WINDOW_ID || vars.KONSOLE_VERSION || vars.DOMTERM) return true;
  if (/kitty|alacritty|foot|ghostty|wezterm/.test(vars.TERM ?? "")) return true;
  return Number(vars.VTE_VERSION ?? 0) >= 5000; // GNOME Terminal, Tilix and other VTE terminals
}

function osc8(text: string, absolutePath: string): string {
  const url = `file://${hostname()}${encodeURI(absolutePath).replace(/#/g, "%23").replace(/\?/g, "%3F")}`;
  return `\x1b]8;;${url}\x1b\\${text}\x1b]8;;\x1b\\`;
}

// ---- search ----------------------------------------------------------------------------------------------

export const SEARCH_FORMATS = ["text", "json", "jsonl", "csv", "md", "files"] as const;
export type SearchFormat = (typeof SEARCH_FORMATS)[number];

/** A hit as rendered: with `--full`, `text` holds the whole fragment (SearchOptions.full). */
type Hit = FragmentHit | DocumentHit;

/** A search response in one of the output formats; text's footer says what `asked` left out. */
export function renderSearch(response: SearchResponse, format: SearchFormat, style: Style, asked?: PageAsked): string {
  switch (format) {
    case "json":
      return `${JSON.stringify(searchJson(response), null, 2)}\n`;
    case "jsonl":
      return searchJsonLines(response);
    case "csv":
      return searchCsv(response);
    case "md":
      return searchMarkdown(response);
    case "files":
      return searchFiles(response);
    case "text":
      return searchText(response, style, asked);
  }
}

/** The public `--json` contract of `researcher search` (documented in README; change only additively). */
export function searchJson(response: SearchResponse): object {
  return {
    query: response.query,
    mode: response.mode,
    repositories: response.repositories,
    offset: response.offset,
    total: response.total,
    words_found: response.words_found,
    ...(response.notes ? { notes: response.notes } : {}),
    skipped: response.skipped,
    ...(response.unmatched ? { unmatched: response.unmatched } : {}),
    ...(response.warnings ? { warnings: response.warnings } : {}),
    results: response.results.map(resultJson),
  };
}

/**
 * Said after `remove` of a document whose file is still there: "removed" alone, and the next index run brought it
 * back without a word (s26 user F11).
 */
export function stillOnDiskNote(ref: string): string {
  return escapeControls(
    `${ref}'s file is still in its folder: the next index run reads it again (exclude or delete the file to keep it out)`,
  );
}

/**
 * What `remove` and remove_from_index say they dropped: the document, or, of a path no longer indexed, the OCR'd
 * text kept of it since it left the index (it answered "not indexed" and kept the text: s28 hostile F2).
 */
export function removalLine(ref: string, dropped: "document" | "kept_text"): string {
  return escapeControls(
    dropped === "document" ? `removed ${ref}` : `${ref} is no longer indexed: dropped the OCR'd text kept of it since it left the index`,
  );
}

/** How the CLI and MCP name the options a no-results line names. */
export const CLI_NAMES = { offset: "--offset", minScore: "--min-score" };
export const MCP_NAMES = { offset: "offset", minScore: "min_score" };

/**
 * Why a search shows nothing, then why its filters matched nothing: no match, or matches all before the offset or
 * below the minimum score, in every mode (over MCP and in hybrid a page past the end said "no results" though 1,488
 * matched: an agent reads that the query matches nothing; s26 agent F9).
 */
export function noResultsLines(
  response: SearchResponse,
  options: { minScore?: number; documents?: boolean },
  names: typeof CLI_NAMES,
): string[] {
  // A query with its own double quotes (a phrase) is shown in single ones: `no results for '"exact phrase"'`.
  const query = escapeControls(response.query);
  const none = `no results for ${query.includes('"') ? `'${query}'` : `"${query}"`}`;
  const past = response.offset > 0 && response.offset >= response.total;
  if (response.total === 0 || (options.minScore === undefined && !past)) return [none, ...unmatchedLines(response.unmatched)];
  const from = response.offset > 0 ? ` from ${names.offset} ${response.offset}` : "";
  const why =
    options.minScore !== undefined
      ? `none scoring ${names.minScore} ${options.minScore} or more${from}`
      : `all before ${names.offset} ${response.offset}`;
  const matched = `${count(response.total, options.documents ? "document" : "fragment")} ${response.total === 1 ? "matches" : "match"}`;
  return [`${none} (${matched}; ${why})`];
}

/** Why a filtered search found nothing: one line per filter value no document holds, with the values that exist. */
export function unmatchedLines(unmatched: readonly FilterMiss[] | undefined): string[] {
  return (unmatched ?? []).map(({ filter, key, known, similar_keys, repository }) => {
    const keys = similar_keys?.length ? ` (did you mean ${similar_keys.join(", ")}?)` : "";
    if (repository !== undefined) {
      return escapeControls(
        `no document has ${filter}: paths are inside a repository's folder; to search the repository ${repository}, name it as the repository and filter on the path inside it`,
      );
    }
    if (key === "path") return escapeControls(`no document matches ${filter}`);
    // A page miss is named only where no searched document has pages (filterMisses).
    if (key === "page")
      return escapeControls(
        `no document has ${filter}: none of those searched has pages (a PDF's or a scanned image's; EPUB, HTML, DOCX and text have none)`,
      );
    return escapeControls(
      known.length
        ? `no document has ${filter}; ${key} here: ${known.map(quotedIfSpaced).join(", ")}`
        : `no document has ${filter}: no field is named ${key}${keys}`, // no article: "a auther field" (s27 user U4)
    );
  });
}

/** A value as a filter would need it: quoted when it holds a comma or a space, so a list of them reads as one. */
function quotedIfSpaced(value: string): string {
  return /[\s,"]/.test(value) ? JSON.stringify(value) : value;
}

function resultJson(hit: Hit): object {
  const common = {
    rank: hit.rank,
    score: hit.score,
    mode: hit.mode,
    repository: hit.repository,
    path: hit.path,
    location: hit.location,
    page: hit.page,
    docid: hit.docid,
    title: hit.title,
    heading: hit.heading,
  };
  const tail = {
    snippet: hit.snippet,
    ...(hit.text !== undefined ? { text: hit.text } : {}),
    context: hit.context,
    metadata: hit.metadata,
    ...(hit.explain
      ? {
          explain: {
            bm25: hit.explain.bm25,
            vector: hit.explain.vector,
            fused: hit.explain.fused,
            ...(hit.explain.weights ? { weights: hit.explain.weights } : {}),
            merge: hit.explain.merge,
          },
        }
      : {}),
  };
  if ("fragments" in hit) return { ...common, fragments: hit.fragments, ...tail };
  return { ...common, fragment: hit.fragment, ...tail };
}

/** One result per line, each the same object as in `--json`'s `results`. */
function searchJsonLines(response: SearchResponse): string {
  return response.results.map((hit) => `${JSON.stringify(resultJson(hit))}\n`).join("");
}

const CSV_COLUMNS = ["rank", "score", "repository", "path", "location", "page", "docid", "title", "heading", "snippet"] as const;

/** RFC 4180: a header row, CRLF line ends, fields with commas, quotes or line breaks quoted, quotes doubled. */
function searchCsv(response: SearchResponse): string {
  const full = response.results.some((hit: Hit) => hit.text !== undefined);
  const header = full ? [...CSV_COLUMNS, "text"] : [...CSV_COLUMNS];
  const rows = response.results.map((hit: Hit) => {
    const values: unknown[] = CSV_COLUMNS.map((column) => hit[column]);
    if (full) values.push(hit.text ?? "");
    return values;
  });
  return [header, ...rows].map((row) => `${row.map(csvField).join(",")}\r\n`).join("");
}

export function csvField(value: unknown): string {
  const text = value === null || value === undefined ? "" : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Markdown for notes and chat: a heading per result, the snippet quoted or the whole fragment fenced; the lines its
 * fragment spans (code: the matched line) named as the text format names them (s29b retest P8).
 */
function searchMarkdown(response: SearchResponse): string {
  const blocks = response.results.map((hit: Hit) => {
    const where = escapeControls(`${hit.repository}:${citationOf(hit)}`);
    const range = fragmentRange(hit);
    const lines = [
      `## ${hit.rank}. ${markdownInline(escapeControls(breadcrumb(hit)))}`,
      "",
      `\`${where}\` · ${hit.docid}${range ? ` · ${range}` : ""} · score ${hit.score}${hit.pathContext && hit.context ? ` · context: ${markdownInline(escapeControls(hit.context))}` : ""}`,
      "",
    ];
    if (hit.text !== undefined) {
      const fence = "`".repeat(Math.max(3, ...[...hit.text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
      // Control characters escaped as in the text format (tabs kept): markdown is read on a terminal too.
      const text = hit.text.replace(/\n$/, "").split("\n").map(escapeLine).join("\n");
      lines.push(`${fence}${fenceLanguage(hit.path, String(hit.metadata.format))}`, text, fence);
    } else {
      lines.push(...hit.snippet.split(/\r?\n/).map((line) => `> ${escapeLine(line)}`.trimEnd()));
    }
    return lines.join("\n");
  });
  const found = response.results.length
    ? `${response.offset + 1}–${response.offset + response.results.length} of ${response.total} · ${response.mode}`
    : ["no results", ...unmatchedLines(response.unmatched).map(markdownInline)].join("\n\n");
  const head = `# Search: ${markdownInline(escapeControls(response.query))}\n\n${found}\n`;
  return `${[head, ...blocks].join("\n\n")}\n`;
}

function markdownInline(text: string): string {
  return text.replace(/[\\`*_[\]<>#|]/g, (c) => `\\${c}`);
}

/** A fence's info string: markdown for what is read as markdown, a code file's language (s28 user 5), else none. */
function fenceLanguage(path: string, format: string): string {
  if (isCodeFormat(format)) return CODE_LANGUAGES[format] === "c_sharp" ? "csharp" : CODE_LANGUAGES[format]!;
  return /\.(md|markdown|mdx|pdf|docx|epub|html?|xhtml)$/i.test(path) ? "markdown" : "";
}

function searchFiles(response: SearchResponse): string {
  return fileLines(resultFiles(response));
}

/** The files a search's results are in, each once, in rank order. */
export function resultFiles(response: SearchResponse): string[] {
  return [...new Set(response.results.map((hit) => hit.absolutePath))];
}

/** Paths one per line, control characters escaped for a terminal; with `nul`, each ended by NUL as it is (xargs -0). */
export function fileLines(paths: string[], nul = false): string {
  return paths.map((path) => (nul ? `${path}\0` : `${escapeControls(path)}\n`)).join("");
}

export function searchText(response: SearchResponse, style: Style, asked?: PageAsked): string {
  const notes = (response.notes ?? []).map((n) => style.dim(n));
  // With no results, `--explain`'s notes alone: how each repository weighed its lists is why nothing came (a vector
  // list of weight 0 lists word matches alone), and it was lost with the results (s28b retest R3).
  if (response.results.length === 0) return notes.map((n) => `${n}\n`).join("");
  const width = String(response.results.at(-1)!.rank).length;
  const blocks = response.results.map((hit: Hit) => {
    const rank = String(hit.rank).padStart(width);
    const range = fragmentRange(hit);
    const where = `${style.accent(style.link(escapeControls(`${hit.repository}:${citationOf(hit)}`), hit.absolutePath))}  ${style.dim(`${hit.docid}${range ? `  ${range}` : ""}`)}`;
    const head = `${style.bold(rank)}  ${style.dim(hit.score.toFixed(2))}  ${where}`;
    const pad = " ".repeat(width + 2);
    const body =
      hit.text !== undefined
        ? trimRuns(hit.text, "\n")
            .split("\n")
            .map((line) => (line ? `${pad}${escapeLine(line)}` : "")) // among other results: escaped as snippets are
        : highlightLines(hit.snippet, hit.highlights, style).map((line) => `${pad}${line}`);
    const lines = [head, `${pad}${style.bold(escapeControls(breadcrumb(hit)))}`, ...contextLine(hit, pad, style), ...body];
    if (hit.explain) lines.push(`${pad}${style.dim(explainLine(hit.explain))}`);
    if ("fragments" in hit && hit.fragments.length > 1) {
      const paged = hit.page !== null;
      // Code: each other fragment's lines and symbol (`40-61 (def feed)`), the way its first is cited.
      const code = !paged && isCodeFormat(String(hit.metadata.format));
      const symbol = (f: (typeof hit.fragments)[number]) => (f.heading ? ` (${escapeControls(f.heading)})` : "");
      const where = (f: (typeof hit.fragments)[number]) =>
        paged ? `p${f.page}` : code ? `${f.start_line}-${f.end_line}${symbol(f)}` : f.location.split(":").at(-1);
      // Two of a document's best fragments may share a page (or a line): each place once, and not the first's again.
      const more = [...new Set(hit.fragments.map(where))].slice(1);
      // A page names itself (`also p7, p9`); "pages p7" said it twice (s27 user U4).
      if (more.length) lines.push(`${pad}${style.dim(`also ${paged ? "" : "lines "}${more.join(", ")}`)}`);
    }
    return lines.join("\n");
  });
  return `${blocks.join("\n\n")}\n\n${style.dim(searchFooter(response, asked))}${notes.map((n) => `\n${n}`).join("")}\n`;
}

/** The page a search asked for, for its text footer: its size and minimum score, in the caller's names. */
export interface PageAsked {
  limit: number;
  minScore?: number;
  names: typeof CLI_NAMES;
}

/**
 * A search's last line: which results of how many, and the mode. A page a minimum score cut short says that none after
 * it scores enough, and where a next page would begin (offset + limit): "1–3 of 171" read as 168 more to page through
 * from offset 3 (s28 agent 8).
 */
function searchFooter(response: SearchResponse, asked: PageAsked | undefined): string {
  const end = response.offset + response.results.length;
  const shown = `${response.offset + 1}–${end} of ${response.total}`;
  const short = asked?.minScore !== undefined && response.results.length < asked.limit && end < response.total;
  const rest = short
    ? ` · the rest score below ${asked.names.minScore} ${asked.minScore}: a next page (${asked.names.offset} ${response.offset + asked.limit}) holds none`
    : "";
  const meaning = response.words_found ? "" : " · no fragment holds the query's words: matched by meaning alone";
  return `${shown} · ${response.mode}${rest}${meaning}`;
}

/**
 * What `context add` said the documents under a result's path are, dim under its heading path: it reached JSON and
 * agents alone, and a person saw no effect of the command (s27 user U7). A repository's description is left to them.
 */
function contextLine(hit: Hit, pad: string, style: Style): string[] {
  return hit.pathContext && hit.context ? [`${pad}${style.dim(escapeControls(`context: ${hit.context}`))}`] : [];
}

/**
 * The lines the fragment spans, where the citation does not (prose: it names the snippet's line; a PDF: the page):
 * the range to read it whole with `get` (an agent that reads from the cited line alone reads to the end of the
 * document). A part of a longer unit or section also says which part, and the lines of the whole. Code, cited by its
 * range, names the snippet's line where it is further in: in a fragment of several small functions, the one that
 * matched (`manifest.py:1-33` alone never led to `def hash_file` at line 7: s29 user 5).
 */
function fragmentRange(hit: FragmentHit | DocumentHit): string | undefined {
  const fragment = "fragment" in hit ? hit.fragment : hit.fragments[0];
  if (!fragment) return undefined;
  const { section } = fragment;
  const whole = section && `part ${section.part} of ${section.parts}, lines ${section.start_line}-${section.end_line} in all`;
  if (isCodeFormat(String(hit.metadata.format))) {
    const line = Number(hit.location.slice(hit.location.lastIndexOf(":") + 1));
    const at = line > fragment.start_line && line <= fragment.end_line ? `line ${line}` : undefined;
    return [at, whole].filter(Boolean).join(", ") || undefined;
  }
  const own =
    fragment.start_line === fragment.end_line ? `line ${fragment.start_line}` : `lines ${fragment.start_line}-${fragment.end_line}`;
  return whole ? `${own}, ${whole}` : own;
}

function explainLine(explain: NonNullable<FragmentHit["explain"]>): string {
  const part = (name: string, c: { rank: number; score: number } | null) => (c ? `${name} #${c.rank} (${c.score})` : `${name} –`);
  const weights = explain.weights ? ` (weights ${explain.weights.bm25} / ${explain.weights.vector})` : "";
  const parts =
    explain.mode === "hybrid"
      ? [part("bm25", explain.bm25), part("vector", explain.vector), `fused ${explain.fused}${weights}`]
      : [part(explain.mode, explain.bm25 ?? explain.vector)];
  const { lexical, vector, score } = explain.merge;
  const evidence = [lexical !== null ? `lexical ${lexical}` : "", vector !== null ? `vector ${vector}` : ""].filter(Boolean).join(", ");
  return [...parts, `merge ${score}${evidence ? ` (${evidence})` : ""}`].join(" · ");
}

function breadcrumb(hit: FragmentHit | DocumentHit): string {
  return hit.heading ? `${hit.title} › ${hit.heading}` : hit.title;
}

/**
 * The snippet's lines (a code snippet keeps its own: hits.ts) with their matches marked; escaped piece by piece, as
 * the ranges count the text unescaped. Tabs stay, as in code they indent.
 */
function highlightLines(text: string, ranges: [number, number][], style: Style): string[] {
  let lineStart = 0;
  return text.split("\n").map((line) => {
    const at = lineStart;
    lineStart += line.length + 1;
    let out = "";
    let done = 0;
    for (const [start, end] of ranges) {
      if (start < at + done || end > at + line.length) continue;
      out += escapeLine(line.slice(done, start - at)) + style.match(style.bold(escapeLine(line.slice(start - at, end - at))));
      done = end - at;
    }
    return out + escapeLine(line.slice(done));
  });
}

// ---- documents -------------------------------------------------------------------------------------------

/** The public `get --json` contract (README): the document's identity and the lines read. */
export function documentJson(doc: DocumentText): object {
  const { repository, path, docid, title, format, metadata, from, to, page, page_end, total_lines, changed_since_index, text } = doc;
  // The pages read whose text reads as symbols, when there are any, as README promises every read carries them.
  const garbled = doc.garbled_pages?.length ? { garbled_pages: doc.garbled_pages } : {};
  return { repository, path, docid, title, format, metadata, from, to, page, page_end, total_lines, changed_since_index, ...garbled, text };
}

/**
 * The warning for a document read as its file is now, not as it was indexed; `catchUp` names what brings the index
 * up to date where the reader is (an MCP agent has add_to_index).
 */
export function changedSinceIndexLine(doc: DocumentText, catchUp = `\`researcher index ${doc.repository}\``): string {
  const changed = doc.changed_since_index
    ? `warning: ${escapeControls(`${doc.repository}:${doc.path}`)} changed since it was indexed: lines may have moved (${catchUp} catches up)\n`
    : "";
  return changed + garbledPagesLine(doc);
}

/**
 * Said before a read that shows pages whose text reads as symbols: their words are missing, not encoded (s26 agent F7).
 */
function garbledPagesLine(doc: DocumentText): string {
  if (!doc.garbled_pages?.length) return "";
  const pages = pageList(doc.garbled_pages);
  return `warning: ${escapeControls(`${doc.repository}:${doc.path}`)}: the text of ${pages} reads as symbols, not words (${GARBLED_CAUSES}): its words are missing\n`;
}

/**
 * A read as it was asked for: with line numbers, its `text` numbered like `cat -n` (the document's own numbers), in
 * every output that carries it, the CLI's text and JSON and MCP's text and structured content alike: one request
 * gives one `text` on every interface (the CLI's JSON was left unnumbered: s23 contracts C5). An agent citing line 27
 * of a range that starts at 1639 counted the lines itself (s22 agent #5).
 */
export function numberedRead<T extends DocumentText>(doc: T, lineNumbers: boolean | undefined): T {
  return lineNumbers ? { ...doc, text: withLineNumbers(doc) } : doc;
}

/**
 * A document's lines as read (numbered by numberedRead when they were asked so), as `get` prints them; for a terminal
 * (`forTerminal`), each line's control characters escaped but tab and a CRLF's CR, as every other output escapes them:
 * a page's escape sequences cleared the screen or set the window's title when read with `get` (s29b hostile F4). A pipe
 * or a file gets the text as it is.
 */
export function documentText(doc: DocumentText, forTerminal = false): string {
  if (doc.text === "" && doc.to < doc.from) return "";
  return `${forTerminal ? terminalText(doc.text) : doc.text}\n`;
}

function terminalText(text: string): string {
  return text
    .split("\n")
    .map((line) => (line.endsWith("\r") ? `${escapeLine(line.slice(0, -1))}\r` : escapeLine(line)))
    .join("\n");
}

/**
 * A read's pages as a search cites them (`p7`, `p6-7`), when it is a part of a paged document: a line range inside a
 * page holds no page marker, and a text answer's header named no page to cite (s28 agent 1). Undefined for a
 * document read whole, or one without pages.
 */
function readPages(doc: DocumentText): string | undefined {
  if (doc.page === null || (doc.from <= 1 && doc.to >= doc.total_lines)) return undefined;
  const last = doc.page_end ?? doc.page;
  return last === doc.page ? `p${doc.page}` : `p${doc.page}-${last}`;
}

/** A read's document as get_document's text names it, with its pages as a search cites them (`paper.pdf:p7`). */
export function documentCitation(doc: DocumentText): string {
  const pages = readPages(doc);
  return `${doc.repository}:${doc.path}${pages ? `:${pages}` : ""}`;
}

/** A read as multi-get's text heads it: the ref that reads it again, and its pages (`paper.pdf:355-360 (p7)`). */
export function readHeading(doc: DocumentText): string {
  const pages = readPages(doc);
  return `${readRef(doc)}${pages ? ` (${pages})` : ""}`;
}

/**
 * `multi-get`: each document under a `==> repo:path <==` line, as `head` does, with the lines read when they are a
 * part (`==> repo:path:13-20 <==`, a ref that reads them again) and their pages in a paged document
 * (`==> repo:paper.pdf:355-360 (p7) <==`); skipped ones listed with why.
 */
export function multiGetText(found: MultiGetResult, forTerminal = false): string {
  const blocks = found.documents.map((doc) => `==> ${escapeControls(readHeading(doc))} <==\n${documentText(doc, forTerminal)}`);
  const skipped = found.skipped.map(
    (s) => `==> ${escapeControls(`${s.repository ? `${s.repository}:` : ""}${s.path}`)} <== skipped: ${escapeControls(s.reason)}\n`,
  );
  const unlisted = found.skipped_total - found.skipped.length;
  if (unlisted > 0) skipped.push(`==> and ${unlisted} more skipped, not listed: narrow the pattern <==\n`);
  return [...blocks, ...skipped].join("\n");
}

/** `get --meta`: one `key: value` line each, metadata keys indented under it. */
export function documentInfoText(info: DocumentInfo): string {
  const rows: [string, unknown][] = [
    ["repository", info.repository],
    ["path", info.path],
    ["docid", info.docid],
    ["title", info.title],
    ["format", info.format],
    ["size", formatBytes(info.size)],
    ["modified", info.modified],
    ["fragments", info.fragments],
    ["pages", info.pages ?? "-"],
  ];
  const lines = rows.map(([key, value]) => `${`${key}:`.padEnd(12)}${escapeControls(String(value))}`);
  const meta = Object.entries(info.metadata);
  if (meta.length)
    lines.push(
      "metadata:",
      ...meta.map(([key, value]) => escapeControls(`  ${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)),
    );
  return `${lines.join("\n")}\n`;
}

/**
 * `ls`: one document a line with format, size, fragments, pages and modification date. The format is the value
 * `--where format=` takes; a code file's language follows it where it says more (`ts typescript`, not `py`
 * alone as `python`: s26 user F8).
 */
export function documentListText(documents: DocumentInfo[], style: Style, absolutePath: (doc: DocumentInfo) => string): string {
  if (documents.length === 0) return "";
  const rows = documents.map((d) => ({
    format: escapeControls(formatWithLanguage(d)),
    size: formatBytes(d.size),
    fragments: `${d.fragments} fr`,
    pages: d.pages === null ? "" : `${d.pages} p`,
    modified: d.modified.slice(0, 10),
    name: escapeControls(`${d.repository}:${d.path}`),
    doc: d,
  }));
  const width = (key: "format" | "size" | "fragments" | "pages") => largest(rows.map((r) => r[key].length));
  const [f, s, n, p] = [width("format"), width("size"), width("fragments"), width("pages")];
  return rows
    .map((r) =>
      [
        r.format.padEnd(f),
        r.size.padStart(s),
        r.fragments.padStart(n),
        ...(p ? [r.pages.padStart(p)] : []),
        style.dim(r.modified),
        style.accent(style.link(r.name, absolutePath(r.doc))),
      ].join("  "),
    )
    .join("\n")
    .concat("\n");
}

/** A document's format, and a code file's language after it when that is not the format's own name. */
function formatWithLanguage(doc: DocumentInfo): string {
  const language = doc.metadata.language;
  return isCodeFormat(doc.format) && typeof language === "string" && language !== doc.format ? `${doc.format} ${language}` : doc.format;
}

/** `1 fragment`, `3 fragments`: a count with its noun, singular for one. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * `repos-for`: score, repository, matching fragments and the best one's place as a ref to read (a page for a paged
 * document, as a search cites it), the description below; failed ones left out.
 */
export function repositoryMatchesText(matches: RepositoryMatch[]): string {
  return matches
    .filter((m) => !m.error)
    .map((m) => {
      const fragments = count(m.matched, "fragment");
      const best = m.best ? `  best: ${escapeControls(`${m.repository}:${m.best.citation}`)}` : "";
      const description = m.description ? `\n        ${escapeControls(m.description)}` : "";
      return `${m.score.toFixed(2).padStart(6)}  ${m.repository}  ${fragments}${best}${description}\n`;
    })
    .join("");
}

/** The most of a listing's prefix an answer repeats. */
const SHOWN_PREFIX_CHARS = 120;

/**
 * What `ls` (and list_documents) says when it lists nothing: the repository a prefix began with (it named a folder
 * inside one), paths that hold a prefix that starts none, or files that failed (they are not documents, but they
 * are why some are missing).
 */
export function emptyListingText(
  failures: SkippedDocument[],
  prefix = "",
  containing: string[] = [],
  meant?: { repository: string; prefix: string },
): string {
  // The prefix as typed, shortened: one of 80,000 characters came back whole (s23 review).
  const typed = escapeControls(shortened(prefix, SHOWN_PREFIX_CHARS));
  if (meant) {
    const ref = escapeControls(`${meant.repository}:${shortened(meant.prefix, SHOWN_PREFIX_CHARS)}`);
    return `no indexed path starts with '${typed}': paths are inside a repository's folder; to list the repository ${escapeControls(meant.repository)}, write ${ref}\n`;
  }
  if (containing.length) {
    const shown = containing.slice(0, 5).map(escapeControls).join(", ");
    const more = containing.length > 5 ? `, and ${containing.length - 5} more` : "";
    return `no indexed path starts with '${typed}'; ${count(containing.length, "path")} ${containing.length === 1 ? "contains" : "contain"} it: ${shown}${more}\n`;
  }
  // Under a prefix, the repository may hold documents elsewhere: "no indexed documents" read as an empty repository.
  const none = `no indexed documents${prefix ? ` under '${typed}'` : ""}`;
  if (failures.length === 0) return `${none}\n`;
  const repositories = [...new Set(failures.map((f) => f.repository))];
  const status = `researcher status ${repositories.length === 1 ? `${escapeControls(repositories[0]!)} ` : ""}--json`;
  const files = count(failures.length, "file");
  return `${none}; ${files} failed (\`${status}\` lists them with their reasons)\n`;
}

// ---- index, status, repositories ---------------------------------------------------------------------

/** What follows "N indexed" when some pages were read by OCR: ` (3 pages read by OCR)`. */
export function ocrNote(pages: number): string {
  return pages ? ` (${count(pages, "page")} read by OCR)` : "";
}

/** Failures a text names one by one (s19 hostile #7). */
const FAILURES_LISTED = 20;

/**
 * Failed files, the first ones by name and the rest counted, for an index run's text and `status`: 100,000 files
 * with unreadable names printed 8 MB.
 */
function failureLines(failures: readonly { path: string; reason: string }[], repository: string, style: Style): string[] {
  const lines = failures
    .slice(0, FAILURES_LISTED)
    .map((failure) => `  ${style.warn("failed")} ${escapeControls(`${failure.path}: ${failure.reason}`)}`);
  if (failures.length > FAILURES_LISTED) {
    const more = failures.length - FAILURES_LISTED;
    lines.push(`  ${style.warn(`… and ${more} more failed`)} (\`researcher status ${repository} --json\` lists them)`);
  }
  return lines;
}

/** Types an index run's summary names; the rest are counted (python-build's definitions, `3.11.7`, `2.7.18`, made
 * 149 "extensions" on one line, printed again by every run: s22 agent #4). `--json` has them all. */
const SKIPPED_TYPES_LISTED = 10;

/**
 * The types a run left out, most first, and what would let them in: `file_types` for an extension; for files without
 * one, no value of it does (only a `#!` script of a code language the repository indexes is read, and `--code` is
 * named only to a repository that indexes none: s23 R8), and that is said only when `scripts` of them have a `#!`
 * line naming a code language (a `LICENSE` in a folder of documents got it: s24 user U5). Source code left out of a
 * repository that indexes none (a code folder added without `--code`: s23 U2) gets the command that lets it in.
 */
function skippedTypesLines(repository: string, skipped: Record<string, number>, scripts: number, fileTypes: readonly string[]): string[] {
  const types = Object.entries(skipped).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (types.length === 0) return [];
  const listed = types
    .slice(0, SKIPPED_TYPES_LISTED)
    .map(([type, n]) => `${n} ${type ? `.${escapeControls(type)}` : "without an extension"}`);
  if (types.length > SKIPPED_TYPES_LISTED) listed.push(`and ${types.length - SKIPPED_TYPES_LISTED} more types (\`--json\` lists them)`);
  const code = indexesCode(fileTypes) ? [] : types.map(([type]) => type).filter(isCodeFormat);
  const unread = types.map(([type]) => type).filter((type) => UNREAD_DOCUMENT_TYPES.has(type));
  const hints = [
    ...(types.some(([type]) => type !== "" && !code.includes(type) && !unread.includes(type))
      ? ["an extension is indexed when file_types in `researcher config show` names it"]
      : []),
    ...(unread.length
      ? [`no converter reads ${unread.map((type) => `.${type}`).join(", ")}: save such files as .docx, .pdf or .epub`]
      : []),
    ...(Object.hasOwn(skipped, "") && scripts > 0 ? [withoutExtensionHint(fileTypes)] : []),
  ];
  // (a repository's name and types are letters, digits, '-' and '_': nothing to quote)
  const command = `researcher config set repositories.${repository}.file_types ${[...fileTypes, ...code].join(",")}`;
  return [
    `not indexed by type: ${listed.join(", ")}${hints.length ? ` (${hints.join("; ")})` : ""}`,
    // What the run then leaves out is said too: a repository that indexes code skips build output (s24 review D10).
    ...(code.length
      ? [
          `to index the source code too, run \`${command}\` and index again (folders named ${GENERATED_FOLDER_NAMES.slice(0, -1).join(", ")} or ${GENERATED_FOLDER_NAMES.at(-1)} are then left out as generated code; an ignore file's \`!build/\` line keeps one)`,
        ]
      : []),
  ];
}

/** Which files without an extension a repository of these types indexes: scripts of its code languages, if any. */
function withoutExtensionHint(fileTypes: readonly string[]): string {
  const languages = [...scriptLanguages(fileTypes)];
  const rule = "a file without an extension is indexed only as a script whose `#!` line names a code language the repository indexes";
  return languages.length ? `${rule}: ${languages.join(", ")}` : `${rule}, and it indexes none: a repository added with \`--code\` does`;
}

/**
 * An index run's summary for a person; `fileTypes` are the repository's, which its hints are about. JSON's `skipped`
 * (files unchanged since the last run) reads "unchanged" here: "skipped" read as left out, beside the files left out
 * by type or as generated (s24 user U7).
 */
export function indexSummaryText(summary: IndexSummary, style: Style, fileTypes: readonly string[]): string {
  const counts = `${summary.indexed} indexed${ocrNote(summary.ocr_pages)}, ${summary.skipped} unchanged, ${summary.removed} removed, ${summary.failed} failed`;
  const embedded = summary.embedded ? ` · ${summary.embedded} embedded` : "";
  const lines = [
    `${style.bold(summary.repository)}: ${counts} · ${count(summary.fragments, "fragment")} written${embedded} · ${summary.seconds.toFixed(2)} s`,
  ];
  lines.push(...failureLines(summary.failures, summary.repository, style));
  if (summary.failed_unchanged) {
    const files = summary.failed_unchanged === 1 ? "1 file that failed is" : `${summary.failed_unchanged} files that failed are`;
    lines.push(`  ${style.dim(`${files} unchanged: not tried again (\`status\` lists them; \`index --retry-failed\` tries them)`)}`);
  }
  for (const line of skippedTypesLines(summary.repository, summary.skipped_types ?? {}, summary.skipped_scripts ?? 0, fileTypes))
    lines.push(`  ${style.dim(line)}`);
  const generated = Object.entries(summary.skipped_generated ?? {}).sort((a, b) => b[1] - a[1]);
  if (generated.length) {
    const list = generated.map(([rule, n]) => `${escapeControls(rule)} (${n})`).join(", "); // "folders with pyvenv.cfg (1)"
    lines.push(
      `  ${style.dim(`not indexed as generated or vendored code: ${list} (an ignore file's \`!name/\` line keeps one, \`!name\` a file)`)}`,
    );
  }
  const links = summary.skipped_links ?? [];
  if (links.length) {
    const list = links.map(escapeControls).join(", ");
    lines.push(`  ${style.dim(`not indexed: ${count(links.length, "link")} to a folder, never followed: ${list}`)}`);
  }
  return `${lines.join("\n")}\n`;
}

export function verifyText(reports: VerifyReport[], style: Style): string {
  return reports
    .map((report) => {
      const open = report.problems.filter((p) => !p.repaired).length;
      const head = `${style.bold(escapeControls(report.repository))}: ${report.problems.length === 0 ? "ok" : open === 0 ? "repaired" : `${open} problem${open === 1 ? "" : "s"}`}`;
      // A problem names paths (the repository folder, a document, a temp file): shown escaped, as every text format
      // shows names.
      const lines = report.problems.map((p) => {
        const [detail, fix] = [escapeControls(p.detail), escapeControls(p.fix)];
        return p.repaired ? `  ${style.dim(`repaired ${p.check}: ${detail} (${fix})`)}` : `  ${style.warn(p.check)}: ${detail} → ${fix}`;
      });
      return [head, ...lines, ...report.moved_aside.map((copy) => `  ${style.dim(movedAsideLine(copy))}`)].join("\n");
    })
    .join("\n")
    .concat("\n");
}

/**
 * A problem as the CLI prints it on stderr, the one form every command uses: `<label>: <message>`, then
 * `hint: <fix>` when there is one, each one line with control characters escaped.
 */
export function problemLines(label: string, message: string, hint?: string | null): string {
  return `${escapeControls(`${label}: ${message}`)}\n${hint ? `${escapeControls(`hint: ${hint}`)}\n` : ""}`;
}

/** A problem in one line, for an agent or a listing: `error: <message> (hint: <fix>)`, escaped. */
export function problemLine(message: string, hint?: string | null): string {
  return escapeControls(`error: ${message}${hint ? ` (hint: ${hint})` : ""}`);
}

/** Repositories a command over all of them left out (stderr): a warning each, with the command that fixes it. */
export function skippedText(skipped: SkippedRepository[]): string {
  return skipped.map((s) => problemLines(`warning: skipped ${s.repository}`, s.message, s.hint)).join("");
}

/** Repositories a search answered in another mode than it would have (their model could not be had): a warning each. */
export function searchWarningsText(warnings: SkippedRepository[] = []): string {
  // One line for the repositories a warning is the same for: a query GloVe knows no word of printed six like pairs.
  const grouped = new Map<string, { repositories: string[]; warning: SkippedRepository }>();
  for (const warning of warnings) {
    const key = JSON.stringify([warning.code, warning.message, warning.hint]);
    const group = grouped.get(key);
    if (group) group.repositories.push(warning.repository);
    else grouped.set(key, { repositories: [warning.repository], warning });
  }
  return [...grouped.values()]
    .map(({ repositories, warning }) => problemLines(`warning: ${repositories.join(", ")}`, warning.message, warning.hint))
    .join("");
}

// ---- the MCP tools' short texts (one line per repository, for a model to read; the JSON is the contract) -----

/** What `status`, `repo list` and the MCP tools that list repositories say of a home with none, and the way on. */
export const NO_REPOSITORIES = "no repositories yet: add one with `researcher repo add <name> <path>`";

type ListedStatus = RepositoryStatus & { ann?: string | null; error?: RepositoryError };

/** list_repositories: each repository with what it holds, or why it cannot say; nothing for none (NO_REPOSITORIES). */
export function repositoryLines(
  statuses: (Pick<RepositoryStatus, "name" | "description" | "documents"> & { error?: RepositoryError })[],
): string {
  const line = (r: (typeof statuses)[number]) =>
    `${escapeControls(r.description ? `${r.name}: ${r.description}` : r.name)} (${r.error ? problemLine(r.error.message, r.error.hint) : count(r.documents, "document")})`;
  return statuses.map(line).join("\n");
}

/** get_index_status: each repository's counts, last run and what its searches need rebuilt. */
export function statusLines(statuses: ListedStatus[]): string {
  const line = (r: ListedStatus) =>
    r.error
      ? `${r.name}: ${problemLine(r.error.message, r.error.hint)}`
      : `${r.name}: ${count(r.documents, "document")}, ${count(r.fragments, "fragment")}, indexed ${r.last_indexed ?? "never"}${r.ann ? `; ${r.ann}` : ""}`;
  return statuses.map(line).join("\n");
}

/**
 * repositories_for: each repository's evidence and best passage, best first, as a ref get_document reads (s26 agent
 * F2).
 */
export function repositoryMatchLines(matches: RepositoryMatch[]): string {
  const line = (m: RepositoryMatch) =>
    m.error
      ? `${m.repository}: ${problemLine(m.error.message, m.error.hint)}`
      : `${m.repository}: score ${m.score.toFixed(2)}, ${count(m.matched, "fragment")}${m.best ? `, best ${escapeControls(m.best.ref)}` : ""}`;
  return matches.map(line).join("\n") || "no indexed repositories";
}

/**
 * A repository never indexed whole, as `status` and get_index_status say it: nothing yet, or the documents a first run
 * cut short (or add_to_index) wrote, which searches find meanwhile (it said "not indexed yet" of 31 searched: s27b
 * retest N6).
 */
export function notIndexedWholeLine(s: { name: string; documents: number }): string {
  const run = `run \`researcher index ${s.name}\``;
  if (s.documents === 0) return `  not indexed yet: ${run}`;
  return `  not indexed whole yet: ${count(s.documents, "document")} indexed so far, searched meanwhile (a first run cut short, or files indexed on their own): ${run}`;
}

/** An index run writing a repository's index now, as `status` and get_index_status say it: its first, or one more. */
export function indexingNote(s: { indexing: number | null; last_indexed: string | null }): string | undefined {
  if (!s.indexing) return undefined;
  return s.last_indexed ? `being indexed now (process ${s.indexing})` : `being indexed now, for the first time (process ${s.indexing})`;
}

/** The code languages of a repository's documents (`  code: 120 python, 3 bash`), or "" for none. */
export function languagesLine(languages: Record<string, number>): string {
  const counts = Object.entries(languages).map(([language, n]) => `${n} ${escapeControls(language)}`);
  return counts.length ? `  code: ${counts.join(", ")}` : "";
}

/**
 * `  index run due: 12 documents read differently now (pdf converter): run …`, or "" when none: between an upgrade (or
 * a chunk setting's change) and the next run, a PDF's citations read the new conversion (s24 retest M6).
 */
export function indexDueLine(s: { name: string; index_due?: IndexDue | null }, style: Style): string {
  if (!s.index_due) return "";
  const { documents, because } = s.index_due;
  return `  ${style.warn(`index run due: ${count(documents, "document")} read differently now (${because.join(", ")})`)}: run \`researcher index ${s.name}\``;
}

/**
 * `  index runs refused, no change is taken in: the files of <model> changed since …: re-embed with `<command>``, or
 * "": every index run stops before taking in any change, and status said nothing of it (s28b retest R2).
 */
export function indexHeldLine(s: { index_held?: ModelHold | null }, style: Style): string {
  if (!s.index_held) return "";
  const { because, fix } = s.index_held;
  return `  ${style.warn(`index runs refused, no change is taken in: ${escapeControls(because)}`)}: re-embed with \`${escapeControls(fix)}\``;
}

/**
 * A repository's vectors as `status` and get_index_status say them: how many, of which model, and the fragment texts
 * that wait for embeddings (BM25 finds them meanwhile).
 */
export function vectorsPart(s: Pick<RepositoryStatus, "name" | "model" | "vectors" | "embeddings_pending">): string {
  const vectors = s.model
    ? `${count(s.vectors, "vector")} (${escapeControls(s.model)})`
    : s.embeddings_pending
      ? "no vectors yet"
      : "BM25 only";
  const pending = s.embeddings_pending
    ? ` · ${s.embeddings_pending} fragment texts waiting for embeddings (\`researcher index ${s.name}\` with a model)`
    : "";
  return vectors + pending;
}

export function statusText(
  statuses: (RepositoryStatus & {
    ann?: string | null;
    index_due?: IndexDue | null;
    index_held?: ModelHold | null;
    error?: RepositoryError;
  })[],
  style: Style,
): string {
  if (statuses.length === 0) return `${NO_REPOSITORIES}\n`;
  return statuses
    .map((s) => {
      const rows = [
        `${style.bold(s.name)}  ${escapeControls(s.path)}`,
        s.description ? `  ${style.dim(escapeControls(s.description))}` : "",
        s.error
          ? `  ${style.warn(`error: ${escapeControls(s.error.message)}`)}${s.error.hint ? `\n  hint: ${escapeControls(s.error.hint)}` : ""}`
          : s.last_indexed
            ? `  ${count(s.documents, "document")}${s.ocr_pages ? ` (${count(s.ocr_pages, "page")} by OCR)` : ""} · ${count(s.fragments, "fragment")} · ${vectorsPart(s)} · ${formatBytes(s.bytes)} · indexed ${s.last_indexed}`
            : s.indexing
              ? `  ${indexingNote(s)}`
              : notIndexedWholeLine(s),
        s.indexing && s.last_indexed ? `  ${style.dim(indexingNote(s)!)}` : "",
        languagesLine(s.languages),
        s.failures.length ? `  ${style.warn(`${count(s.failures.length, "file")} failed:`)}` : "",
        ...failureLines(s.failures, s.name, style),
        ...pageProblemLines(s, style),
        indexDueLine(s, style),
        indexHeldLine(s, style),
        s.ann ? `  ${style.warn(s.ann)}` : "",
        ...s.moved_aside.map((copy) => `  ${style.dim(movedAsideLine(copy))}`),
        keptTextsLine(s),
      ];
      return rows.filter(Boolean).join("\n");
    })
    .join("\n\n")
    .concat("\n");
}

/**
 * `  kept 30 days: the OCR'd text of 2 documents no longer indexed (a.pdf, b.pdf): …`, or "": the text of a scan
 * deleted or ignored stayed in index.db without a word (s28 hostile F2).
 */
function keptTextsLine(s: Pick<RepositoryStatus, "name" | "kept_texts">): string {
  if (s.kept_texts.length === 0) return "";
  const paths = s.kept_texts.flatMap((kept) => (kept.path === null ? [] : [kept.path]));
  const named = paths.length ? ` (${escapeControls(paths.slice(0, 3).join(", "))}${paths.length > 3 ? ", …" : ""})` : "";
  const drop = paths.length
    ? `\`researcher remove ${s.name}:<path>\` drops one, \`researcher index ${s.name} --rebuild\` all`
    : `\`researcher index ${s.name} --rebuild\` drops them`;
  return `  kept 30 days, read back if they return: the OCR'd text of ${count(s.kept_texts.length, "document")} no longer indexed${named}; ${drop}`;
}

/** An index moved aside, as `status` and `verify` name it: what it is and that it is the user's to delete. */
function movedAsideLine(copy: { path: string; bytes: number }): string {
  return `kept aside: ${escapeControls(copy.path)} (${formatBytes(copy.bytes)}), an index that could not be used; delete it once you no longer need it`;
}

export function repositoryJson(repo: Repository): object {
  return {
    name: repo.name,
    path: repo.path,
    description: repo.description,
    file_types: repo.fileTypes,
    exclude: repo.exclude,
    embed: repo.embed,
    embedding: repo.embedding,
    ignore_files: repo.ignoreFiles,
  };
}

export function repositoryListText(repos: Repository[], style: Style): string {
  if (repos.length === 0) return `${NO_REPOSITORIES}\n`;
  const width = largest(repos.map((r) => r.name.length));
  return repos
    .map(
      (r) =>
        `${style.bold(r.name.padEnd(width))}  ${escapeControls(r.path)}${r.embed ? "" : `  ${style.dim("(BM25 only)")}`}${r.description ? `  ${style.dim(escapeControls(r.description))}` : ""}`,
    )
    .join("\n")
    .concat("\n");
}

/**
 * What status (and get_index_status) says of pages search misses, each with what to do: pages OCR left out (a
 * retry reads them again) and pages whose text reads as symbols (only another copy of the file helps).
 */
export function pageProblemLines(s: Pick<RepositoryStatus, "name" | "ocr_left_out" | "garbled">, style: Style): string[] {
  return [
    s.ocr_left_out.length
      ? `  ${style.warn(pagesLine(s.ocr_left_out, "OCR left out"))} (\`researcher index ${s.name} --retry-failed\` reads them again)`
      : "",
    s.garbled.length
      ? `  ${style.warn(pagesLine(s.garbled, "read as symbols, not words"))} (${GARBLED_CAUSES}: search misses their words; replace the file with a copy whose text reads, e.g. one OCR software made)`
      : "",
  ].filter(Boolean);
}

/** `2 pages OCR left out (scan.pdf p3, p7)`: the first few documents by name, and the first few pages of each. */
function pagesLine(documents: { path: string; pages: number[] }[], what: string): string {
  const pages = documents.reduce((sum, doc) => sum + doc.pages.length, 0);
  const named = documents
    .slice(0, 3)
    .map(
      (doc) =>
        `${escapeControls(doc.path)} ${[...doc.pages.slice(0, 8).map((page) => `p${page}`), ...(doc.pages.length > 8 ? ["…"] : [])].join(", ")}`,
    )
    .join("; ");
  return `${count(pages, "page")} ${what} (${named}${documents.length > 3 ? "; …" : ""})`;
}

function formatBytes(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

// ---- progress ----------------------------------------------------------------------------------------

/** `researcher watch --json`: one line per applied batch (the contract in README). */
export function watchBatchJson(batch: WatchBatch): string {
  const { repository, indexed, ocr_pages, removed, failed, paths, seconds, scan } = batch;
  return `${JSON.stringify({ repository, indexed, ocr_pages, removed, failed, paths, seconds, scan })}\n`;
}

/** One line per applied batch, for a log file or a pipe. */
export function watchBatchText(batch: WatchBatch): string {
  const what = batch.scan ? "scan" : batch.paths.length === 1 ? escapeControls(batch.paths[0]!) : `${batch.paths.length} paths`;
  return `${clock()} ${batch.repository}: ${what}: ${batch.indexed} indexed${ocrNote(batch.ocr_pages)}, ${batch.removed} removed, ${batch.failed} failed (${batch.seconds} s)\n`;
}

/** A watched repository's folder gone missing, or back (WatchOptions.onFolder). */
export function folderNote(present: boolean, path: string): string {
  return present ? `folder ${path} is back: looking for changes` : `folder ${path} is missing: waiting for it (its documents stay indexed)`;
}

/** The time of day a watch's lines start with. */
export const clock = () => new Date().toTimeString().slice(0, 8);

/**
 * The one-line live status of `researcher watch` on a terminal: what each repository is doing and the last batch.
 * Redrawn at most every 100 ms (a burst of events would otherwise redraw it thousands of times).
 */
export function watchStatusLine(stream: Terminal): {
  status: (status: WatchStatus) => void;
  batch: (batch: WatchBatch) => void;
  /** Print a line above the status line. */
  note: (text: string) => void;
  clear: () => void;
} {
  const states = new Map<string, WatchStatus>();
  let last = "";
  let drawn = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const draw = () => {
    timer = undefined;
    drawn = performance.now();
    const busy = [...states.values()].filter((s) => s.state !== "watching");
    const doing = busy
      .map(
        (s) => `${s.repository} ${s.state === "waiting" ? "waiting for its folder" : s.state}${s.pending ? ` (${s.pending} pending)` : ""}`,
      )
      .join(", ");
    const text = `watching ${count(states.size, "repository", "repositories")}${doing ? ` · ${doing}` : ""}${last ? ` · last: ${last}` : ""}`;
    stream.write(`\r\x1b[2K${text.slice(0, stream.columns() - 1)}`);
  };
  const redraw = () => {
    if (!stream.redraws || timer) return;
    const wait = 100 - (performance.now() - drawn);
    if (wait <= 0) draw();
    else timer = setTimeout(draw, wait);
  };
  return {
    status(status) {
      states.set(status.repository, status);
      redraw();
    },
    batch(batch) {
      last = watchBatchText(batch).trim();
      redraw();
    },
    note(text) {
      if (stream.redraws) stream.write("\r\x1b[2K");
      stream.write(text.endsWith("\n") ? text : `${text}\n`);
      if (stream.redraws) draw();
    },
    clear() {
      clearTimeout(timer);
      if (stream.redraws) stream.write("\r\x1b[2K");
    },
  };
}

/**
 * The one-line progress bar of an index run, redrawn on a terminal that can (a no-op elsewhere, so logs, pipes and
 * TERM=dumb stay clean): the phase, a bar over files (or merge pages, or texts to embed) and the file at hand; while a
 * page is read by OCR, which page of how many (`scan.pdf: OCR page 3 of 12`).
 */
export function progressBar(stream: Terminal, label: string): { update: (p: IndexProgress) => void; done: () => void } {
  if (!stream.redraws) return { update: () => {}, done: () => {} };
  let last = 0;
  return {
    update(p) {
      const now = performance.now();
      // An OCR page is seconds of work: its line is always drawn, or it could be skipped for the whole page.
      if (now - last < 80 && p.done < p.total && !p.ocr) return;
      last = now;
      const width = 24;
      // Clamped: a count past its total (an estimate) must not fail the run that draws it.
      const filled = p.total ? Math.min(width, Math.max(0, Math.round((p.done / p.total) * width))) : 0;
      const bar = `[${"█".repeat(filled)}${"░".repeat(width - filled)}]`;
      const text = `${label} ${p.phase} ${bar} ${p.done}/${p.total} ${progressPlace(p)}`;
      stream.write(`\r\x1b[2K${text.slice(0, stream.columns() - 1)}`);
    },
    done() {
      stream.write("\r\x1b[2K");
    },
  };
}

/** The file an index run is at, and the page OCR is reading in it (`scan.pdf: OCR page 3 of 12`), escaped. */
export function progressPlace(p: IndexProgress): string {
  const path = escapeControls(p.path ?? ""); // a file name may hold escape sequences
  return p.ocr ? `${path}: OCR page ${p.ocr.page} of ${p.ocr.pages}` : path;
}
