/**
 * The one reader of markdown's block structure that titles and chunks share: which lines are headings and which
 * belong to code fences. A `# comment` inside a fence is code, never a heading, for the title as for the chunks.
 */

import { oneLine, trimRuns } from "../text.ts";

/** A line of markdown as the block structure sees it. */
export type MarkdownBlock =
  /**
   * A heading: `level` 1–6, `text` without the `#`s and a closing sequence. An ATX heading is one line (`end` is
   * `line`); a setext heading is its text's line and the underline below it (`end`).
   */
  | { kind: "heading"; line: number; end: number; level: number; text: string }
  /** A code fence from its opening line to its closing one (inclusive; the last line when it never closes). */
  | { kind: "fence"; line: number; end: number }
  /** Any other line; `blank` when it holds only white space. */
  | { kind: "line"; line: number; blank: boolean };

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/**
 * An ATX heading. `s`: a line (cut at "\n" alone) may hold U+2028, U+2029 or a lone "\r", which `.` takes for a
 * line's end: an H1 that held one was no heading (s30 hostile F6).
 */
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*)$/s;
/** A setext underline: `===` makes its line above an H1, `---` an H2 (a single `-` is a list item's start). */
const UNDERLINE = /^ {0,3}(?:(=+)|-{2,})[ \t]*$/;
/**
 * Lines that are no paragraph's first line, so no setext heading's text: a list item, a quote, a table row, HTML (a
 * comment, a page marker), a thematic break or underline, or code indented after a break.
 */
const NOT_HEADING_TEXT = /^(?: {4}| {0,3}(?:\t|[>|<]|(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|([-*_=])(?:[ \t]*\1)*[ \t]*$))/;

/**
 * A comment that opens a line: an HTML comment (CommonMark's HTML block: raw text to its first `-->`, never
 * markdown) or, in markdown a person wrote, Obsidian's `%%` alone on its line (hidden in its reading view; a line
 * that goes on after `%%` is as often a MATLAB cell or a LaTeX comment in math, which closes nothing; in converted
 * text `%%` is the page's own, a MATLAB cell written as a paragraph). A `# line` inside is no heading; the line after
 * the one that closes it opens a block of its own, as after any HTML block.
 */
const HTML_COMMENT_OPEN = /^ {0,3}<!--/;
const OBSIDIAN_COMMENT_OPEN = /^ {0,3}%%[ \t]*$/;

/**
 * The blocks of `lines`, each line given with its key (its index, for the chunker). Only a line that starts with
 * `#`, a backtick, `~` or a comment, holds a comment's end, or is a setext underline, can open a fence or make a
 * heading, and whether a line opens a paragraph depends on the line above it alone: so a caller that wants only
 * headings (a title) may pass just those lines, each with the line above it and an underline with the two above:
 * the blocks it gets are the same (blockLines; a seeded differential test holds them to it).
 *
 * A setext heading's text is one line that opens a paragraph (CommonMark also lets a paragraph of several lines
 * above `===` be one heading: a long paragraph is no heading path, and a `---` meant as a rule would make one). Only
 * markdown a person wrote (`written`) has them, and Obsidian's `%%` comments: converted formats write `#` headings,
 * and a page's own `Signed` above `---` is no heading of it.
 */
export function* markdownBlocks(lines: Iterable<readonly [number, string]>, { written = false } = {}): Generator<MarkdownBlock> {
  let last = -1;
  let fence: { start: number; close: RegExp } | undefined;
  /** A paragraph's first line, held until the next line says whether it is a setext heading's text. */
  let held: { key: number; text: string } | undefined;
  let afterText = false; // whether the line before is a paragraph's
  let comment: string | undefined; // the end of the comment the lines are in
  for (const [key, line] of lines) {
    last = key;
    if (fence) {
      if (fence.close.test(line)) {
        yield { kind: "fence", line: fence.start, end: key };
        fence = undefined;
      }
      continue;
    }
    if (comment) {
      if (line.includes(comment)) comment = undefined;
      yield { kind: "line", line: key, blank: line.trim() === "" };
      afterText = false; // within a comment it says nothing; after it, the next line opens a block
      continue;
    }
    if (held) {
      const underline = UNDERLINE.exec(line);
      const text = oneLine(held.text).trim();
      const heading =
        underline && text ? { kind: "heading" as const, line: held.key, end: key, level: underline[1] ? 1 : 2, text } : undefined;
      if (!heading) yield { kind: "line", line: held.key, blank: false };
      held = undefined;
      if (heading) {
        yield heading;
        afterText = false;
        continue;
      }
    }
    const start = firstCharacter(line);
    const close =
      start === 60
        ? commentClose(line, HTML_COMMENT_OPEN, "-->")
        : written && start === 37
          ? commentClose(line, OBSIDIAN_COMMENT_OPEN, "%%")
          : undefined; // `<`, `%`
    if (close !== undefined) {
      if (close) comment = close;
      yield { kind: "line", line: key, blank: false };
      afterText = false;
      continue;
    }
    const candidate = start === 35 || start === 96 || start === 126; // `#`, a backtick, `~`
    const open = candidate ? FENCE.exec(line) : null;
    if (open) {
      fence = { start: key, close: new RegExp(`^ {0,3}${open[1]![0]}{${open[1]!.length},}\\s*$`) };
      afterText = false;
      continue;
    }
    const heading = candidate ? HEADING.exec(line) : null;
    const blank = !heading && line.trim() === "";
    if (heading) yield { kind: "heading", line: key, end: key, level: heading[1]!.length, text: headingText(heading[2]!) };
    else if (written && !blank && !afterText && !NOT_HEADING_TEXT.test(line)) held = { key, text: line };
    else yield { kind: "line", line: key, blank };
    afterText = !heading && !blank;
  }
  if (held) yield { kind: "line", line: held.key, blank: false };
  if (fence) yield { kind: "fence", line: fence.start, end: last }; // never closed: it runs to the end
}

/**
 * For a line that opens a comment by `open`: the `close` it waits for, or "" when it closes on the line itself;
 * undefined when the line opens none.
 */
function commentClose(line: string, open: RegExp, close: string): string | undefined {
  const opening = open.exec(line);
  if (!opening) return undefined;
  return line.includes(close, opening[0].length) ? "" : close;
}

/** The code of a line's first character after at most three spaces (what may open a block). */
function firstCharacter(line: string): number {
  let k = 0;
  while (k < 3 && line.charCodeAt(k) === 32) k++;
  return line.charCodeAt(k);
}

/**
 * The lines of a text that could open a fence or make a heading, keyed by where they start (most lines are text): a
 * line starting with `#`, a backtick, `~` or a comment, or holding a comment's end, each with the line above it
 * (which says whether it opens a paragraph: `a --> b` can be a setext heading's text), and a setext underline with
 * the two lines above it (its text, and what says whether that text opens a paragraph).
 */
function* blockLines(text: string): Generator<[number, string]> {
  // A search for "\n" and a marker is fast; `^` with the m flag is slower (and also starts a line after \r, U+2028
  // and U+2029, where the chunker does not); a search for the marker alone stops at every `#` inside a line.
  let next = 0; // where the first line not yet given starts
  const line = (start: number): [number, string] => {
    const end = text.indexOf("\n", start);
    next = end < 0 ? text.length + 1 : end + 1;
    return [start, text.slice(start, end < 0 ? undefined : end).replace(/\r$/, "")];
  };
  /** Where the line above the one starting at `start` starts; -1 above the first. */
  const lineAbove = (start: number) => (start <= 0 ? -1 : start === 1 ? 0 : text.lastIndexOf("\n", start - 2) + 1);
  const first = /^(?: {0,3}(?:[#`~]|<!--|%%)|[^\n]*?(?:-->|%%))/.exec(text);
  if (first) yield line(0);
  for (const match of text.matchAll(/\n( {0,3}(?:[#`~]|<!--|%%|=+[ \t]*\r?(?=\n|$)|-{2,}[ \t]*\r?(?=\n|$))|[^\n]*?(?:-->|%%))/g)) {
    const start = match.index + 1;
    if (start < next) continue;
    const above = lineAbove(start);
    if (/^ {0,3}[-=]/.test(match[1]!) && !/-->|%%/.test(match[1]!)) {
      const before = lineAbove(above);
      if (before >= next) yield line(before);
    }
    if (above >= next) yield line(above);
    yield line(start);
  }
}

/**
 * A heading's text without its closing `#` sequence, stripped here rather than by the regex: the lazy
 * `(.*?)(?:[ \t]+#+)?[ \t]*$` backtracked quadratically on long runs of spaces (a 1 MB heading line never ended).
 * A line or paragraph separator or a lone carriage return in it is a space (oneLine).
 */
function headingText(line: string): string {
  const raw = oneLine(line);
  let end = raw.length;
  while (end > 0 && (raw[end - 1] === " " || raw[end - 1] === "\t")) end--;
  let hashes = end;
  while (hashes > 0 && raw[hashes - 1] === "#") hashes--;
  if (hashes < end && hashes > 0 && (raw[hashes - 1] === " " || raw[hashes - 1] === "\t")) end = hashes;
  return raw.slice(0, end).trim();
}

/** At most this many inline tags are kept per note (a generated note of a million `#x` is no list of tags). */
const MAX_INLINE_TAGS = 256;
/**
 * `#tag`, `#nested/tag`, `#tag-2` after white space or at a line's start; a heading's `# ` is none. Marks belong to
 * their letters: `#हिंदी`, `#שָׁלוֹם` and a decomposed `#résumé` were cut at the first one (s19 retest).
 */
const INLINE_TAG = /(?<!\S)#([\p{L}\p{N}\p{M}_/-]+)/gu;

/** A list item's first line: `- `, `* `, `+ `, `1. `, `1) `. */
const LIST_ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)/;
/** A thematic break (`***`, `- - -`, `___`) or a setext underline (`===`, `---`). */
const BLOCK_END = /^ {0,3}(?:([-*_])(?:[ \t]*\1){2,}|=+)[ \t]*$/;
/** A link reference definition, `[label]: target`: nothing a reader sees. A footnote's, `[^1]: …`, is prose. */
const LINK_DEFINITION = /^ {0,3}\[(?!\^)[^\]]+\]:/;
/** The `>` markers that open a line of a block quote (`> > `), each with the one space it may take. */
const QUOTE_MARKERS = /^(?: {0,3}> ?)+/;
/** Indented four columns or more: code after a blank line, unless it continues a list item. */
const INDENTED = /^(?: {4}| {0,3}\t)/;

/**
 * A tag as Obsidian names it: without the `#` it is typed with (`#papers/jit` is the tag `papers/jit`), in a note's
 * front matter (`tags: ["#idea"]`) and in a filter (`--where tags=#idea`) alike.
 */
export function tagName(name: string): string {
  return name.replace(/^#/, "");
}

/**
 * A note's inline tags as Obsidian reads them: `#word` in its text, outside code (fences, indented blocks, spans),
 * holding at least one character that is not a digit (`#1` is an issue number), each once, in order of first use.
 */
export function inlineTags(text: string): string[] {
  if (!/(?<!\S)#[\p{L}\p{N}_/-]/u.test(text)) return [];
  const tags = new Map<string, string>();
  const lines = text.split("\n");
  // What the last line was, and whether a list is open: an indented line after a blank one is code outside a list.
  let previous: "blank" | "text" | "code" = "blank";
  let inList = false;
  for (const block of markdownBlocks(lines.entries(), { written: true })) {
    if (block.kind !== "line") {
      // A heading or a fence is no paragraph: an indented line right after one is code, as after a blank line.
      [previous, inList] = ["blank", false];
      continue;
    }
    const line = lines[block.line]!.replace(QUOTE_MARKERS, ""); // a quote's content follows the same rules
    if (block.blank || line.trim() === "") {
      if (previous !== "code") previous = "blank"; // a blank line inside indented code goes on with it
      continue;
    }
    const indented = INDENTED.test(line);
    // A thematic break (`***`) or a setext heading's underline (`===`) ends a paragraph as a heading does: an
    // indented line after it is code.
    if (!indented && BLOCK_END.test(line)) {
      [previous, inList] = ["blank", false];
      continue;
    }
    if (indented && !inList && previous !== "text") {
      previous = "code";
      continue;
    }
    if (LIST_ITEM.test(line)) inList = true;
    else if (!indented && previous === "blank") inList = false;
    // `[access]: #accessing-values`: a link's target, not text; one cannot interrupt a paragraph, where it is text.
    // A definition is no paragraph either: the line after it starts afresh, so each line of a block of them is one
    // (only the first was left out: mdBook's second `[access]: #…` of a block became a tag, s24 user U1).
    if (previous !== "text" && LINK_DEFINITION.test(line)) continue;
    previous = "text";
    const prose = line.replace(/`+[^`]*`+/g, " ");
    for (const [, tag] of prose.matchAll(INLINE_TAG)) {
      const name = trimRuns(tag!, "/");
      if (!/[^\p{N}/_-]/u.test(name) || tags.has(name.toLowerCase())) continue;
      tags.set(name.toLowerCase(), name);
      if (tags.size === MAX_INLINE_TAGS) return [...tags.values()];
    }
  }
  return [...tags.values()];
}

/**
 * The first H1 outside code fences, or a heading of any level that opens the document (mdBook chapters start with `##`,
 * some after an anchor or comment kept for old links: markup that renders nothing does not stop a heading opening it).
 */
export function firstHeading(text: string, { written = false } = {}): string | undefined {
  let opening: string | undefined;
  let first = true; // no heading or fence yet: only the first of them may open the document
  for (const block of markdownBlocks(blockLines(text), { written })) {
    if (block.kind === "heading") {
      if (block.level === 1 && block.text) return block.text;
      if (first && rendersNothing(text.slice(0, block.line))) opening = block.text || undefined;
    }
    if (block.kind !== "line") first = false;
  }
  return opening;
}

/**
 * Whether `text` is only white space, HTML comments and tags (`<a id="x"></a>`, `<img src="x.png">`): nothing a reader
 * sees. A tag with text meant for a reader (`alt`, `title`, `caption`, `label`) shows something; an autolink
 * (`<https://…>`) is a link, not a tag.
 */
export function rendersNothing(text: string): boolean {
  let at = 0;
  while (at < text.length) {
    if (text[at]!.trim() === "") at++;
    else if (text.startsWith("<!--", at)) {
      const end = text.indexOf("-->", at + 4);
      if (end < 0) return false;
      at = end + 3;
    } else {
      const tag = SILENT_TAG.exec(text.slice(at, at + MAX_TAG_CHARS));
      if (!tag || READER_ATTRIBUTE.test(tag[1] ?? "")) return false;
      at += tag[0].length;
    }
  }
  return true;
}

/** An opening, closing or empty tag (`<a id="x">`, `</a>`, `<br/>`, `<!DOCTYPE html>`); group 1: its attributes. */
const SILENT_TAG = /^<(?:\/?[A-Za-z][\w-]*|!DOCTYPE)(\s[^<>]*)?\/?>/i;
const MAX_TAG_CHARS = 4096;
/** Attributes a renderer shows (or reads out) to a reader. */
const READER_ATTRIBUTE = /(?:^|\s)(?:alt|title|caption|label|aria-label)\s*=\s*(?:"[^"]*\S|'[^']*\S|[^\s"'>])/i;

/**
 * Whether a paragraph of markdown shows a reader nothing to search for: markup that renders nothing, or no letter or
 * digit at all (a rule `---`, a "jump to top" arrow `⇡`). The chunker makes no fragment of it: such a fragment
 * matched no word, or only the words of an anchor's id, and was the shortest (so the best-scoring) of its document.
 */
export function showsNothing(text: string): boolean {
  return !/[\p{L}\p{N}]/u.test(text) || rendersNothing(text);
}

/**
 * A `data:` URI's head, `data:[<mediatype>][;base64],` (RFC 2397; a parameter without a value, as in
 * `;utf8,<svg…`, too): `[3](data: see appendix)` is no URI, and its word `data:` was dropped as one (s27 hostile M2).
 */
const DATA_URI = String.raw`data:(?:[\w.+-]+\/[\w.+-]+)?(?:;[\w.+-]+(?:=[^;,\s"'<>()]*)?)*,`;
/** A link's or image's target that is a `data:` URI (written bare or in `<>`), after the `](` that opens it. */
const INLINE_DATA_URI = new RegExp(String.raw`(\]\([ \t]*)(?:<${DATA_URI}[^<>\n]*>|${DATA_URI}[^\s)]*)`, "gi");
/** A link reference definition whose target is a `data:` URI: `[img]: data:image/png;base64,…`. */
const DEFINED_DATA_URI = new RegExp(String.raw`^( {0,3}\[(?!\^)[^\]]+\]:[ \t]*)(?:<${DATA_URI}[^<>\n]*>|${DATA_URI}\S*)`, "i");
/** An HTML image's or link's source that is a `data:` URI, as an editor pastes `<img src="data:…">` into a note. */
const ATTRIBUTE_DATA_URI = new RegExp(String.raw`(\b(?:src|href)[ \t]*=[ \t]*)(["'])${DATA_URI}[^"'\n]*\2`, "gi");
/**
 * A line that ends in what opens a target (a definition's `[img]:`, a link's `](`): CommonMark lets the target
 * follow on the next line, where a `data:` URI at the start (LEADING_DATA_URI) is the target's.
 */
const TARGET_OPENS = /(?:^ {0,3}\[(?!\^)[^\]]+\]:|\]\()[ \t]*$/;
const LEADING_DATA_URI = new RegExp(String.raw`^([ \t]*)(?:<${DATA_URI}[^<>\n]*>|${DATA_URI}[^\s)]*)`, "i");
/**
 * An HTML source whose `data:` URI runs past the line's end: mail and Word exports wrap base64 at 76 columns. No
 * backtick in it, so no code span holds any of it.
 */
const WRAPPED_ATTRIBUTE_DATA_URI = new RegExp(String.raw`(\b(?:src|href)[ \t]*=[ \t]*)(["'])${DATA_URI}[^\s"'\x60]*[ \t]*$`, "i");
/** A line of a wrapped URI: its characters alone (a blank line or a word with a space ends it). */
const WRAPPED_LINE = /^[ \t]*[^\s"'`<>]+[ \t]*$/;
/** The last line of a wrapped URI: its characters up to the quote that closes it. */
const WRAPPED_END = { '"': /^[ \t]*[^\s"'`<>]*(?=")/, "'": /^[ \t]*[^\s"'`<>]*(?=')/ };

/**
 * A note without the `data:` URIs it embeds as an image's or a link's target (a web clipper's or an editor's pasted
 * image, `![photo](data:image/png;base64,…)`): the picture's bytes in base64, no words, made a 300 KB photo 289
 * fragments of noise (s26 user F15), as the HTML converter drops image sources and link targets. The alt or link text
 * stays, each target is left empty (`![photo]()`, `[img]: <>`) and every line stays where it was, so a fragment's
 * lines are the file's (the lines of a wrapped URI are left blank). A code fence is code, kept as written.
 */
export function withoutDataUris(text: string): string {
  if (!/data:/i.test(text)) return text;
  const lines = text.split("\n");
  for (const block of markdownBlocks(lines.entries(), { written: true })) {
    if (block.kind === "fence") continue;
    const line = lines[block.line]!;
    if (!/data:/i.test(line)) continue;
    const opened = block.line > 0 && TARGET_OPENS.test(lines[block.line - 1]!);
    lines[block.line] = outsideCodeSpans(opened ? line.replace(LEADING_DATA_URI, "$1<>") : line, (part) =>
      part.replace(INLINE_DATA_URI, "$1").replace(DEFINED_DATA_URI, "$1<>").replace(ATTRIBUTE_DATA_URI, "$1$2$2"),
    );
    withoutWrappedDataUri(lines, block.line);
  }
  return lines.join("\n");
}

/**
 * Drops the `data:` URI of an HTML source that line `at` opens and a later line's quote closes, each line between
 * holding the URI's characters alone: `src="` is kept on the first line and the closing quote on the last, the lines
 * between left blank. A quote that never closes so is no such URI, and nothing is dropped.
 */
function withoutWrappedDataUri(lines: string[], at: number): void {
  const open = WRAPPED_ATTRIBUTE_DATA_URI.exec(lines[at]!);
  if (!open) return;
  const quote = open[2] as keyof typeof WRAPPED_END;
  let last = at + 1;
  while (last < lines.length && !WRAPPED_END[quote].test(lines[last]!) && WRAPPED_LINE.test(lines[last]!)) last++;
  const end = WRAPPED_END[quote].exec(lines[last] ?? "");
  if (!end) return;
  lines[at] = lines[at]!.slice(0, open.index) + open[1] + quote;
  for (let between = at + 1; between < last; between++) lines[between] = "";
  lines[last] = lines[last]!.slice(end[0].length);
}

/** `line` with `edit` applied to what lies outside its code spans: code, kept as written (s26b review F13). */
function outsideCodeSpans(line: string, edit: (part: string) => string): string {
  let out = "";
  let at = 0;
  for (const [start, end] of codeSpans(line)) {
    out += edit(line.slice(at, start)) + line.slice(start, end);
    at = end;
  }
  return out + edit(line.slice(at));
}

/**
 * The code spans of a line, as [start, end) offsets, in one pass over its backtick runs (CommonMark's rule): a run
 * of n backticks opens a span that the next run of exactly n closes; a run no such run follows is text. Each length
 * keeps a cursor into its own runs that only moves forward, so the line costs linear time, where a regex's lazy
 * search from every unclosed run to the line's end cost 17 s on a 5 MB line (s27 review F3).
 */
function codeSpans(line: string): [number, number][] {
  const runs = Array.from(line.matchAll(/`+/g), (run) => ({ start: run.index, length: run[0].length }));
  const ofLength = new Map<number, number[]>(); // run length → the indexes in `runs` of the runs that long
  for (const [i, run] of runs.entries()) {
    const list = ofLength.get(run.length);
    if (list) list.push(i);
    else ofLength.set(run.length, [i]);
  }
  const cursor = new Map<number, number>(); // run length → position in its list of the first run not yet passed
  const spans: [number, number][] = [];
  for (let i = 0; i < runs.length; i++) {
    const { start, length } = runs[i]!;
    const list = ofLength.get(length)!;
    let next = cursor.get(length) ?? 0;
    while (next < list.length && list[next]! <= i) next++;
    cursor.set(length, next);
    if (next === list.length) continue; // no closer: these backticks are text
    const closer = list[next]!;
    spans.push([start, runs[closer]!.start + length]);
    i = closer;
  }
  return spans;
}
