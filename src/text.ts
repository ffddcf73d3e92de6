/** How researcher sees words: one definition shared by indexing, query parsing, snippets and token estimates. */
import { stemmer } from "stemmer";
import { identifierParts } from "./identifiers.ts";

/** Han, Hiragana, Katakana and Hangul: scripts written without spaces between words. */
const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/gu;
const CJK_TEST = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;

/**
 * Characters a word may hold that are invisible and no word break: the soft hyphen (U+00AD, where a word may break:
 * `Verwal&shy;tungs&shy;gericht`, common in German web pages and typeset EPUBs), and the zero-width space, word joiner
 * and zero-width no-break space (U+200B, U+2060, U+FEFF: a CMS's `&#8203;` in a long word, text pasted from a chat
 * tool). FTS5's unicode61 reads them all as separators, so the index (ftsText), queries and word folding (foldCase)
 * drop them. In Thai, Lao, Myanmar and Khmer, written without spaces, a zero-width space is the word break itself: it
 * stays there.
 */
const SPACELESS_RANGES = "\\u0e00-\\u0eff\\u1000-\\u109f\\u1780-\\u17ff";
const SPACELESS_SCRIPT = `[${SPACELESS_RANGES}]`;
const SPACELESS_TEST = new RegExp(SPACELESS_SCRIPT, "u");
const SPACELESS_RUN = new RegExp(`${SPACELESS_SCRIPT}+`, "gu");
const IN_WORD_INVISIBLE = `\\u00ad|(?<!${SPACELESS_SCRIPT})[\\u200b\\u2060\\ufeff](?!${SPACELESS_SCRIPT})`;
const INVISIBLES = new RegExp(IN_WORD_INVISIBLE, "gu");
/**
 * A word character as FTS5's tokenizer sees them (a letter, digit, private-use character or mark: fts.ts
 * FTS_TOKENIZE's categories), or an invisible one inside.
 */
const WORD_CHAR = "[\\p{L}\\p{N}\\p{Co}\\p{M}]";
export const WORD_INNER = `${WORD_CHAR}|${IN_WORD_INVISIBLE}`;

/** Words as FTS5's tokenizer sees them (letters, digits, marks), with the invisible characters inside. */
export const WORD = new RegExp(`${WORD_CHAR}(?:(?:${WORD_INNER})*${WORD_CHAR})?`, "gu");

/**
 * The points people do not type: Hebrew vowel points and cantillation marks (niqqud, te'amim) and Arabic short vowels
 * (harakat), the superscript alef, Quranic annotation signs, and the tatweel that stretches a word. A Bible, a Quran,
 * poetry and learners' texts are written with them and searched without: `בראשית` finds `בְּרֵאשִׁית`, `كتابا`
 * finds `كِتَابًا` (s26 review F1). Only these: a vowel sign of Devanagari, Bengali, Tamil or Thai is part of the
 * word's spelling (`कमल` lotus, `कमला` a name), as an accent is in Latin, which FTS5 folds itself.
 */
const OPTIONAL_POINTS =
  /[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a\u0640\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed]/gu;

/** `text` without its invisible in-word characters: what the index, queries, titles and metadata values hold. */
export function withoutInvisibles(text: string): string {
  return /[\u00ad\u200b\u2060\ufeff]/.test(text) ? text.replace(INVISIBLES, "") : text;
}

/**
 * `text` made one line: a line feed, a carriage return, or a line or paragraph separator (U+2028, U+2029) in it is a
 * space, as a renderer shows it. A title and a heading are one line, whatever they come from: a setext heading and a
 * front-matter title kept U+2028 where an ATX heading read a space (s30b N4).
 */
export function oneLine(text: string): string {
  return /[\r\n\u2028\u2029]/.test(text) ? text.replace(/[\r\n\u2028\u2029]/g, " ") : text;
}

/**
 * Text as words are searched: no invisible in-word characters (soft hyphens, zero-width spaces), and Unicode
 * compatibility forms folded (NFKC), as PDF text already is, and no optional points (OPTIONAL_POINTS).
 * A word stored decomposed (Korean from a Mac, `й` or `ά` as a letter and a mark) and the same word typed were
 * different terms, and so were `eﬃcient` pasted from a PDF into a note and `efficient` (s19 hostile #1). The index
 * (ftsText) and queries (parseQuery) go through it alike.
 */
export function searchForm(text: string): string {
  const plain = withoutInvisibles(text);
  return ASCII.test(plain) ? plain : plain.normalize("NFKC").replace(OPTIONAL_POINTS, "");
}

/**
 * `text` composed (NFC), as names and values are compared: a name copied from a Mac, or a front-matter value, may be
 * stored decomposed (`é` as `e` and a mark) and is typed composed.
 */
export function composed(text: string): string {
  return ASCII.test(text) ? text : text.normalize("NFC");
}

const ASCII = /^[\x00-\x7f]*$/;

export function hasCjk(text: string): boolean {
  return CJK_TEST.test(text);
}

/**
 * Text as stored in FTS5: every CJK character becomes its own token, so a CJK query (searched as a phrase of
 * characters) finds words of any length, including the two-character words a trigram index would miss. The parts
 * of compound words (`parseHeader` → `parse header`) and Arabic words without their article (`بالسرطان` → `سرطان`)
 * follow on a line of their own, so "parse header" finds the identifier and `سرطان` every form; the stored fragment
 * text is unchanged (FTS5 is contentless). Every FTS5 write and the scratch
 * scoring table go through here, so they agree.
 */
export function ftsText(stored: string): string {
  const text = searchForm(stored);
  const spaced = wordsApart(text);
  const parts = [identifierParts(text), withoutArabicArticles(text)].filter(Boolean).join(" ");
  return parts ? `${spaced}\n${parts}` : spaced;
}

/**
 * An Arabic word written with the article and a preposition or conjunction joined to it (`السرطان`, `بالسرطان`,
 * `وبالسرطان`, `للسرطان`): the word after the prefix, of three letters or more. Unicode has no word break there, so
 * `سرطان` (cancer) found 1 of its 33 places in a book about it (s27 user U1). A light stemmer's rule (Larkey's
 * light10 prefixes, the article's forms only: a lone `و` or `ب` also begins words of their own); two letters left
 * made other common words (`الذي` → `ذي`, `الله` → `له`), and a word with a Persian letter is not Arabic (`الگو`:
 * s27b retest N1).
 */
const ARABIC_PREFIX = "(?:[وف]?[بك]?ال|[وف]?لل)";
const ARABIC_REST = "((?:(?=\\p{L})(?![پچژگکی])\\p{Script=Arabic}){3,})";
const ARABIC_ARTICLE = new RegExp(`(?<![\\p{L}\\p{N}\\p{M}])${ARABIC_PREFIX}${ARABIC_REST}(?![\\p{L}\\p{N}\\p{M}])`, "gu");
const ARABIC_WORD = new RegExp(`^${ARABIC_PREFIX}${ARABIC_REST}$`, "u");
const ARABIC_TEST = /[\u0621-\u064a]/;

/** An Arabic word written with the article (ARABIC_ARTICLE) without it, as the index also holds it; else undefined. */
export function arabicWithoutArticle(word: string): string | undefined {
  return ARABIC_TEST.test(word) ? ARABIC_WORD.exec(word)?.[1] : undefined;
}

/** The words of a text's Arabic words written with the article (ARABIC_ARTICLE) without it, each once. */
function withoutArabicArticles(text: string): string {
  if (!ARABIC_TEST.test(text)) return "";
  return [...new Set(Array.from(text.matchAll(ARABIC_ARTICLE), (m) => m[1]!))].join(" ");
}

/**
 * Words of scripts written without spaces set apart as the index holds them: every CJK character its own token, and
 * Thai, Lao, Khmer and Myanmar cut at their words (ICU's dictionaries, through Intl.Segmenter): a run of Thai between
 * spaces is a phrase, and `ภาษา` in `เป็นภาษาที่สวยงาม` was found by no search (s21 hostile #7).
 */
function wordsApart(text: string): string {
  const cjk = hasCjk(text) ? text.replace(CJK_CHAR, " $& ") : text;
  return SPACELESS_TEST.test(cjk)
    ? cjk.replace(SPACELESS_RUN, (run) =>
        spacelessWords(run)
          .map((w) => w.word)
          .join(" "),
      )
    : cjk;
}

let segmenter: Intl.Segmenter | undefined;

/** The words of a run of a script written without spaces, each with its offset in the run. */
export function spacelessWords(run: string): { word: string; at: number }[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "word" });
  return [...segmenter.segment(run)].filter((s) => s.isWordLike).map((s) => ({ word: s.segment, at: s.index }));
}

/**
 * Where a run without spaces (Chinese, Japanese, Thai, …) may be cut at or before `index`: after the last punctuation
 * within `reach` characters before it, else at the last word boundary there (ICU's dictionaries, through
 * Intl.Segmenter), else at `index` itself, never inside a surrogate pair. A cut at a character count split the word
 * across it, which then no search found, and began the next fragment with half a word or a lone Thai vowel sign.
 */
export function wordBoundaryBefore(text: string, index: number, reach = 32): number {
  const from = Math.max(0, index - reach);
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "word" });
  let word: number | undefined;
  let punctuation: number | undefined;
  for (const { segment, index: at, isWordLike } of segmenter.segment(text.slice(from, Math.min(text.length, index + reach)))) {
    const [start, end] = [from + at, from + at + segment.length];
    if (at > 0 && start <= index) word = start;
    if (!isWordLike && end <= index && /[\p{P}\s]/u.test(segment)) punctuation = end;
  }
  return punctuation ?? word ?? cutIndex(text, index);
}

let graphemes: Intl.Segmenter | undefined;

/**
 * Where the last `count` characters as a reader sees them (graphemes: a surrogate pair, an emoji with its modifiers
 * and joiners) before `index` begin, when more than `count` precede it; else undefined. A repeat counted in UTF-16
 * units began inside 𠀋 or 👩‍👩‍👧 (s23 hostile H4); one of all the characters before `index` (0) is no repeat but
 * the whole part again, and the chunker cutting after it never advanced (s24 review D11).
 */
export function graphemesBefore(text: string, index: number, count: number): number | undefined {
  graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  // A cluster is rarely longer than a few units; the window's first, perhaps cut, cluster is not one of the last.
  const from = Math.max(0, index - count * 16);
  const starts = [...graphemes.segment(text.slice(from, index))].map((segment) => from + segment.index);
  return starts.length > count ? starts[starts.length - count] : undefined;
}

export function hasSpaceless(text: string): boolean {
  return SPACELESS_TEST.test(text);
}

/** A query word as the index holds it: CJK characters apart, a Thai (Lao, Khmer, Myanmar) run cut into its words. */
export function splitWords(word: string): string[] {
  return hasCjk(word) || hasSpaceless(word) ? (wordsApart(word).match(WORD) ?? []) : [word];
}

/**
 * Lower case without diacritics, as FTS5 folds a word in the search form (searchForm) with `unicode61
 * remove_diacritics 2`: a Latin letter loses its marks (`café` is `cafe`), a lone mark of the few unicode61 calls
 * diacritics is dropped (`замо́к` is `замок`), and every other letter and mark stays as it is, lowered one by one as
 * FTS5 lowers them (`ΣΑΣ` and `ήλιος` end in `σ`). Stripping every mark outside Cyrillic and Greek made `हिन्दी` and
 * `สวัสดี` words no fragment held (their lexical evidence 0), and decomposing Hangul syllables `한` a term the index
 * never holds (s25b review F4, s26 review F1). test/query.test.ts compares it with FTS5 script by script.
 */
export function foldCase(word: string): string {
  if (ASCII.test(word)) return word.toLowerCase();
  let folded = "";
  for (const ch of searchForm(word)) {
    folded += DROPPED_DIACRITIC.test(ch)
      ? ""
      : LATIN_LETTER.test(ch)
        ? ch.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase()
        : ch.toLowerCase();
  }
  return folded.replace(/[\u00ad\u200b\u2060\ufeff]/g, "").replaceAll("ς", "σ"); // final sigma: folded as FTS5 folds it
}

/** The combining marks unicode61 drops on their own (`sqlite3Fts5UnicodeIsdiacritic`). */
const DROPPED_DIACRITIC = /^[\u0300-\u0304\u0306-\u030c\u030f\u0311\u031b\u0323-\u0328\u032d\u032e\u0330\u0331]$/u;
/** Latin letters, whose marks unicode61 drops: all but ǡ ǣ ǯ ǽ ǿ (and their capitals), which its table lacks. */
const LATIN_LETTER = /^(?![\u01e0-\u01e3\u01ee\u01ef\u01fc-\u01ff])\p{Script=Latin}$/u;

const stems = new Map<string, string>();

/**
 * The Porter stem FTS5's `porter` tokenizer would index for this word (memoised: snippets stem the same words often).
 */
export function stem(word: string): string {
  let result = stems.get(word);
  if (result === undefined) {
    result = porterAsFts5(foldCase(word));
    if (stems.size >= 50_000) stems.clear(); // a long-running server sees unbounded vocabularies
    stems.set(word, result);
  }
  return result;
}

/**
 * Porter's stem of a folded token as FTS5's `porter` tokenizer makes it: of every token of 3 to 64 UTF-8 bytes,
 * digits and other letters too, each byte that is no vowel a consonant. Stemming letters alone left `Uint8Array`,
 * `1990s` and `cœurs` as written while the index holds `uint8arrai`, `1990`, `cœur`, so query coverage counted
 * them as held by no fragment and a full match had half its evidence (s25 code user C20).
 */
function porterAsFts5(folded: string): string {
  const bytes = new TextEncoder().encode(folded);
  if (bytes.length > 64) return folded; // FTS5_PORTER_MAX_TOKEN: passed through (the stemmer skips those under 3)
  if (bytes.length === folded.length) return stemmer(folded);
  // One private-use character a byte past ASCII: a consonant to the stemmer, as to FTS5, and untouched by its
  // lower-casing (Latin-1 characters would be), so its suffix rules see the bytes FTS5's see.
  const stemmed = stemmer(String.fromCharCode(...Array.from(bytes, (b) => (b < 0x80 ? b : PRIVATE_BYTES + b))));
  return new TextDecoder().decode(Uint8Array.from(stemmed, (ch) => ch.charCodeAt(0) & 0xff));
}

const PRIVATE_BYTES = 0xe000; // U+E000 + byte

/** A tokenizer-free estimate: ~4 characters per word piece in Latin text, ~1 token per CJK character. */
export function estimateTokens(text: string): number {
  const cjk = text.match(CJK_CHAR)?.length ?? 0;
  return Math.ceil((text.length - cjk) / 4) + cjk;
}

/**
 * `text` without the run of `chars` (any of them) at its end (at its start too with `both`): sliced, not matched. A
 * pattern like `\n+$` or `\/+$` scans every inner run of the character to its end and fails there: quadratic in the
 * run's length (a note's `#a////…/b`, a fragment's blank lines, minutes for a few hundred KB).
 */
export function trimRuns(text: string, chars: string, ends: "end" | "both" = "end"): string {
  let [start, end] = [0, text.length];
  while (end > 0 && chars.includes(text[end - 1]!)) end--;
  if (ends === "both") while (start < end && chars.includes(text[start]!)) start++;
  return text.slice(start, end);
}

/**
 * `index` moved back by one where it would cut a character written as two UTF-16 units (an emoji, a math letter
 * pdf.js gives for LaTeX): half of one is no text, and `--json` printed it as a lone `\ud835` that jq and MCP
 * clients refuse, while SQLite stored U+FFFD (s19 review F6). Every cut of text at a count of units goes through it.
 */
export function cutIndex(text: string, index: number): number {
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return index > 0 && before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff ? index - 1 : index;
}

/** `text` cut to at most `max` UTF-16 units, whole characters only, with an ellipsis when cut. */
export function shortened(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, cutIndex(text, max - 1))}…` : text;
}

/**
 * Longest heading (or title) kept whole, in characters. Every fragment of a section carries its title and heading
 * path, in the store and the full-text index: a 100 KB heading repeated over a section's fragments made a 3.85 MB
 * file a 2.4 GB index.
 */
export const HEADING_MAX_CHARS = 100;

/**
 * Longest title kept whole: a paper's title may run past a heading's 100 characters (124 for one of the shared scans;
 * 2,203 of SciFact's 5,183), and a word it ended with was found by no `--where title~…`. A fragment's full-text row
 * holds the title's first HEADING_MAX_CHARS only (fts.ts): on SciFact's train queries the whole title scored nDCG@10
 * 0.7053 against 0.7075 (test 0.6931 against 0.6929), the tail of a long title being mostly subtitle.
 */
export const TITLE_MAX_CHARS = 300;

/** A heading or title cut to `max` characters at a word boundary (hard-cut without one), with an ellipsis. */
export function shortHeading(text: string, max = HEADING_MAX_CHARS): string {
  if (text.length <= max) return text;
  const space = text.lastIndexOf(" ", max - 1);
  const cut = space > max / 2 ? space : cutIndex(text, max - 1);
  return `${text.slice(0, cut).trimEnd()}…`;
}

/**
 * Between the labels of the units a code fragment holds, in its heading's last label and in its stored `defines`: a
 * leaf's, as the chunker (convert), the store and the ranking (search) all read it.
 */
export const LABEL_SEPARATOR = ", ";

/**
 * A code heading's label for a function or method (the chunker's: `def f`, `fn f`, `func (T) f`, `function f`,
 * `f()`): the chunker heads a split function's first part by it, and the store finds the function's parts by it.
 */
export const FUNCTION_LABEL = /^(?:def|fn|func|function)\s|\)$/;

/**
 * The labels of a list joined by LABEL_SEPARATOR. A separator inside brackets is its label's own: a Rust impl's
 * generic arguments (`impl Cache<K, V>`) or a C++ template's were cut into two labels, neither naming the unit.
 */
export function splitLabels(labels: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < labels.length; i++) {
    const c = labels[i]!;
    if (c === "(" || c === "[" || (c === "<" && opensGenerics(labels, i))) depth++;
    else if ((c === ")" || c === "]" || (c === ">" && labels[i - 1] !== "-")) && depth > 0) depth--;
    else if (depth === 0 && labels.startsWith(LABEL_SEPARATOR, i)) {
      out.push(labels.slice(start, i));
      start = i + LABEL_SEPARATOR.length;
      i = start - 1;
    }
  }
  out.push(labels.slice(start));
  return out;
}

/**
 * Whether the `<` at `i` opens generic arguments (`Cache<K`, `Parser<'a`), not an operator's name: C++'s
 * `operator<()` and `operator<<()` and Ruby's `def <<` opened a bracket no `>` closed, and every label after them
 * was read as one (s26b review F3).
 */
function opensGenerics(labels: string, i: number): boolean {
  return /[\w>]/.test(labels[i - 1] ?? "") && /[\w'&*[ ]/.test(labels[i + 1] ?? "") && !/operator\s*$/.test(labels.slice(0, i));
}

/**
 * The name a unit's label gives it, as a definition of that name is asked for: `def feed` → feed, a method or a C
 * function labelled as a call (`parseHeader()`, `Foo::bar()`, `Table<K, V>::get()`) → parseHeader, bar, get,
 * `impl Display for Cache<T>` → Cache, `def self.create` → create. Keywords (`def`, `class`) would match the words of
 * any question about code; a call's parentheses, generic arguments and qualifiers kept every C, C++, C#, Java and
 * class method's name from ever being its exact name (s26 review F2).
 */
export function labelName(label: string): string {
  let bare = label;
  for (let before = ""; before !== bare; ) [before, bare] = [bare, bare.replace(/<[^<>]*>/g, "")];
  bare = bare.replace(/\(\)$/, "");
  const word = bare.slice(bare.lastIndexOf(" ") + 1);
  return word.split(/\.|::|#/).at(-1) ?? word;
}

/** `pages 2, 4, 7`: the first eight, as warnings name a document's pages. */
export function pageList(pages: number[]): string {
  return `page${pages.length === 1 ? "" : "s"} ${pages.slice(0, 8).join(", ")}${pages.length > 8 ? ", …" : ""}`;
}
