/** The passage of a fragment to show for a query: the window with the most matched terms, and where they are. */
import { SNAKE, splitIdentifier } from "../identifiers.ts";
import type { ParsedQuery } from "./query.ts";
import { arabicWithoutArticle, cutIndex, foldCase, hasCjk, hasSpaceless, spacelessWords, stem, WORD, WORD_INNER } from "../text.ts";

export interface Snippet {
  text: string;
  /** [start, end) character ranges of matched words within `text`. */
  highlights: [number, number][];
  /** Offset in the fragment text where the snippet starts (to compute its line). */
  offset: number;
}

const WINDOW = 240;
const TABLE_RULE = /^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+(?:[ \t]*:?-{3,}:?[ \t]*)?$/gm;
/** How far a snippet begins before its first matched word, for context. */
export const LEAD = 40;

/**
 * A matched word: [start, end) in the fragment text, and its folded form (to count distinct words); `also`, the
 * searched words an identifier stands for besides itself (`getLogger`: get, logger), so the window holding the
 * identifier the query names outweighs one holding a comment with one of its parts (s22 agent #3).
 */
interface Match {
  start: number;
  end: number;
  key: string;
  also?: string[];
}

/** A code snippet's lines at most, and the characters shown of each (past them, a line ends in "…"). */
const CODE_LINES = 4;
const CODE_LINE_CHARS = 160;

/**
 * The snippet of `text`, taken from its characters `from` to `to` only when given: the part of a fragment that a
 * neighbour on the same page does not already show (the chunks' overlap). Code keeps its lines (`code`).
 */
export function makeSnippet(
  text: string,
  highlight: ParsedQuery["highlight"],
  { from = 0, to = text.length, code = false }: { from?: number; to?: number; code?: boolean } = {},
): Snippet {
  const part = text.slice(from, to);
  const matches = findMatches(part, highlight);
  // Code shows a few lines, however short the fragment: those from its best window's, not its first four.
  const start = cutIndex(text, from + bestWindowStart(part, matches, code));
  if (code)
    return codeSnippet(
      text,
      start,
      to,
      matches.map((m) => ({ ...m, start: m.start + from, end: m.end + from })),
    );
  const end = Math.min(to, start + WINDOW);
  const cutEnd = end < to ? cutIndex(text, Math.max(text.lastIndexOf(" ", end), start + WINDOW / 2)) : end;
  // A table's rule line (`| --- | --- |`, from DOCX, HTML and markdown tables) says nothing in a snippet: blanked, so
  // offsets stay as they are.
  const slice = text.slice(start, cutEnd).replace(TABLE_RULE, (rule) => " ".repeat(rule.length));
  // Collapse whitespace but keep offsets of highlights valid by mapping through the same collapse.
  const { clean, map } = collapseWhitespace(slice);
  const prefix = start > 0 ? "…" : "";
  const suffix = cutEnd < text.length ? "…" : "";
  const highlights: [number, number][] = matches
    .map((m) => ({ start: m.start + from, end: m.end + from }))
    .filter((m) => m.start >= start && m.end <= cutEnd)
    .map((m) => [map[m.start - start]! + prefix.length, map[m.end - start]! + prefix.length]);
  // Its location is the line of the first character it shows: white space it begins with (blank lines where a
  // comment was, the end of a line a neighbour shows) is shown as nothing, and counted a line lower.
  return { text: prefix + clean + suffix, highlights, offset: start + leadingSpace(slice) };
}

function findMatches(text: string, highlight: ParsedQuery["highlight"]): Match[] {
  if (highlight.stems.size === 0 && highlight.prefixes.length === 0) return [];
  const found = hasCjk(text) ? findAnyMatches(text, highlight) : findPlainMatches(text, highlight);
  return withIdentifiers(text, found, highlight);
}

/**
 * Each matched camelCase word also counts as the searched words among its parts, and the first match inside a
 * snake_case identifier whose joined form is searched (`py_encode_basestring` → `pyencodebasestring`, as the index
 * holds it) as that identifier too.
 */
function withIdentifiers(text: string, found: Match[], highlight: ParsedQuery["highlight"]): Match[] {
  const searchedStem = (word: string) => highlight.stems.has(stem(word));
  for (const match of found) {
    // Keyed as every match is (folded): `état` of `getÉtat` and the word `état` are one word, not two.
    const parts = splitIdentifier(text.slice(match.start, match.end)).map(foldCase).filter(searchedStem);
    if (parts.length) match.also = parts;
  }
  if (!text.includes("_")) return found;
  for (const run of text.matchAll(SNAKE)) {
    const joined = foldCase(run[0].replaceAll("_", ""));
    if (!searchedStem(joined)) continue;
    const first = found.find((m) => m.start >= run.index && m.end <= run.index + run[0].length);
    if (first) first.also = [...(first.also ?? []), joined];
  }
  return found;
}

/**
 * Runs with a letter outside ASCII (`café`, `µm`, `naïve`) or an invisible character inside (`Verwal\u00adtung`,
 * `inter\u200bnational`): folding (NFKD, marks and invisible characters dropped) may change how they start, so the
 * start-of-stem pattern cannot find them; they are few, and each is folded and compared. Anchored at a word's start:
 * otherwise every position inside a long ASCII run would try the rest of it (quadratic). One class of characters
 * keeps the pattern simple and fast; a run with a zero-width space is cut into words as the index cuts them
 * (`wordsOf`: Thai words are apart there).
 */
const NON_ASCII_WORD =
  /(?<![\p{L}\p{N}\p{M}\u00ad\u200b\u2060\ufeff])[\p{L}\p{N}\p{M}\u00ad\u200b\u2060\ufeff]*(?:(?![\x00-\x7f])[\p{L}\p{N}\p{M}\u00ad\u200b\u2060\ufeff])[\p{L}\p{N}\p{M}\u00ad\u200b\u2060\ufeff]*/gu;

/**
 * The words of a run NON_ASCII_WORD found, each with its offset in the run: Thai (Lao, Khmer, Myanmar) cut at its
 * words as the index cuts it (spacelessWords).
 */
function* wordsOf(run: string): Generator<{ word: string; at: number }> {
  if (hasSpaceless(run)) yield* spacelessWords(run);
  else if (!/[\u200b\u2060\ufeff]/.test(run)) yield { word: run, at: 0 };
  else for (const m of run.matchAll(WORD)) yield { word: m[0], at: m.index };
}

/**
 * Text without CJK (the common case): the regex engine finds the ASCII words that start like a searched stem or
 * prefix and the words with other letters, and JavaScript looks at a handful of words instead of every one (which
 * was most of a cold CLI search). Any punctuation, such as `…` or `×`, no longer sends a text to the slow path.
 */
function findPlainMatches(text: string, highlight: ParsedQuery["highlight"]): Match[] {
  const found = new Map<number, Match>();
  const consider = (word: string, start: number) => {
    const folded = foldCase(word);
    if (!found.has(start) && searched(word, folded, highlight)) found.set(start, { start, end: start + word.length, key: folded });
  };
  for (const m of text.matchAll(candidatesOf(highlight))) consider(m[0], m.index);
  for (const m of text.matchAll(NON_ASCII_WORD)) for (const { word, at } of wordsOf(m[0])) consider(word, m.index + at);
  return [...found.values()].sort((a, b) => a.start - b.start);
}

/** Compiled once per query (a Unicode-aware pattern costs more to compile than to run over a fragment). */
const compiled = new WeakMap<ParsedQuery["highlight"], RegExp>();

function candidatesOf(highlight: ParsedQuery["highlight"]): RegExp {
  let pattern = compiled.get(highlight);
  if (!pattern) {
    // Folding (NFKD) can turn a word character into punctuation (`⑶` → `(3)`, `⒉` → `2.`): escape.
    const starts = [...new Set([...highlight.stems].map(stemHead)), ...highlight.prefixes].map(escapeRegExp);
    // The whole word, invisible characters inside it included (`inter\u200bnational` is one word, as indexed: its
    // `inter` was marked for the query `inter`), and none that begins inside one.
    pattern = new RegExp(`(?<![\\p{L}\\p{N}\\p{M}\\u00ad\\u200b\\u2060\\ufeff])(?:${starts.join("|")})(?:${WORD_INNER})*`, "giu");
    compiled.set(highlight, pattern);
  }
  return pattern;
}

/** Any script: every word is folded and compared; CJK runs are matched character by character, as indexed. */
function findAnyMatches(text: string, highlight: ParsedQuery["highlight"]): Match[] {
  const found: Match[] = [];
  for (const m of text.matchAll(WORD)) {
    const word = m[0];
    // Compared folded, as the query's characters are (`stem`): a Hangul syllable or a voiced kana decomposes, and
    // Korean and Japanese with dakuten were never marked. A word written decomposed (Korean from a Mac) or in
    // half-width katakana is matched as the index reads it (NFKC: searchForm), and marked whole.
    const composed = hasCjk(word) ? word : word.normalize("NFKC");
    if (composed !== word && hasCjk(composed)) {
      if ([...composed].some((ch) => highlight.stems.has(stem(ch))))
        found.push({ start: m.index, end: m.index + word.length, key: composed });
      continue;
    }
    if (hasCjk(word)) {
      let at = m.index;
      for (const ch of word) {
        if (highlight.stems.has(stem(ch))) found.push({ start: at, end: at + ch.length, key: ch });
        at += ch.length;
      }
      continue;
    }
    const folded = foldCase(word);
    if (searched(word, folded, highlight)) found.push({ start: m.index, end: m.index + word.length, key: folded });
  }
  return found;
}

/** Whether a word is one the query searched: a prefix, a stem, or an Arabic word's stem without its article. */
function searched(word: string, folded: string, highlight: ParsedQuery["highlight"]): boolean {
  if (highlight.prefixes.some((p) => folded.startsWith(p)) || highlight.stems.has(stem(word))) return true;
  // `سرطان` finds `بالسرطان` (the index holds it bare too): marked there, the snippet shows it (s27b retest N2).
  const bare = arabicWithoutArticle(folded);
  return bare !== undefined && highlight.stems.has(stem(bare));
}

/**
 * Start of the window covering the most distinct matched words, backed up a little for context; 0 when all of
 * `text` fits one window, unless `always`.
 */
function bestWindowStart(text: string, matches: Match[], always = false): number {
  if (matches.length === 0 || (text.length <= WINDOW && !always)) return 0;
  let best = 0;
  let bestScore = -1;
  // Slide a window over the matches, counting each word once however often it occurs inside.
  const inWindow = new Map<string, number>();
  let next = 0;
  for (const [i, first] of matches.entries()) {
    while (next <= i || (next < matches.length && matches[next]!.end <= first.start + WINDOW - LEAD)) {
      for (const key of keysOf(matches[next++]!)) inWindow.set(key, (inWindow.get(key) ?? 0) + 1);
    }
    if (inWindow.size > bestScore) {
      bestScore = inWindow.size;
      best = first.start;
    }
    for (const key of keysOf(first)) {
      const left = inWindow.get(key)! - 1;
      if (left === 0) inWindow.delete(key);
      else inWindow.set(key, left);
    }
  }
  const start = Math.max(0, best - LEAD);
  // The lead stays on the matched word's line: a snippet's location is its first line, and a lead reaching back into
  // the line above (a table's last cell, a heading) cited a line the match is not on.
  const lineStart = text.lastIndexOf("\n", best - 1) + 1;
  if (lineStart >= start) return lineStart;
  const space = text.indexOf(" ", start);
  return space !== -1 && space < best ? space + 1 : start;
}

/**
 * Code's snippet: whole lines from the window's first, up to CODE_LINES of them, blank ones left out and the white
 * space all of them begin with removed. Run together as prose is, a function read as one line of words and its comments
 * ran into its code (s28 user 5).
 */
function codeSnippet(text: string, start: number, to: number, matches: Match[]): Snippet {
  const shown: { from: number; to: number; cut: boolean }[] = [];
  for (let at = text.lastIndexOf("\n", start - 1) + 1; at < to && shown.length < CODE_LINES; ) {
    const newline = text.indexOf("\n", at);
    const end = newline === -1 || newline > to ? to : newline;
    if (text.slice(at, end).trim()) shown.push({ from: at, to: end, cut: false });
    at = end + 1;
  }
  const indent = commonIndent(shown.map((line) => text.slice(line.from, line.to)));
  let out = "";
  const highlights: [number, number][] = [];
  for (const line of shown) {
    const from = line.from + indent;
    const end = Math.min(line.to, cutIndex(text, from + CODE_LINE_CHARS));
    const base = out.length + (out ? 1 : 0) - from;
    for (const m of matches) if (m.start >= from && m.end <= end) highlights.push([m.start + base, m.end + base]);
    out += `${out ? "\n" : ""}${text.slice(from, end).trimEnd()}${end < line.to ? "…" : ""}`;
  }
  return { text: out, highlights, offset: shown.length ? shown[0]!.from + indent : start };
}

/** The length of the white space every line begins with, the same characters in each (tabs are no spaces). */
function commonIndent(lines: string[]): number {
  let common = /^[ \t]*/.exec(lines[0] ?? "")![0];
  for (const line of lines) while (!line.startsWith(common)) common = common.slice(0, -1);
  return common.length;
}

function keysOf(match: Match): string[] {
  return match.also ? [match.key, ...match.also] : [match.key];
}

function leadingSpace(slice: string): number {
  const first = slice.search(/[^ \t\r\n]/);
  return first === -1 ? 0 : first;
}

function collapseWhitespace(slice: string): { clean: string; map: number[] } {
  let clean = "";
  const map: number[] = [];
  let inSpace = false;
  for (let i = 0; i < slice.length; i++) {
    map.push(clean.length);
    const ch = slice[i]!;
    if (ch === " " || ch === "\n" || ch === "\t" || ch === "\r") {
      if (!inSpace) clean += " ";
      inSpace = true;
    } else {
      clean += ch;
      inSpace = false;
    }
  }
  map.push(clean.length);
  return { clean: clean.trimEnd(), map };
}

const escapeRegExp = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

/** Porter stemming rewrites only a word's ending, so a word and its stem share their first three letters. */
const stemHead = (s: string) => s.slice(0, 3);
