/**
 * Converted text → fragments. Markdown fragments follow headings and carry their heading path; code fences are
 * never split; long sections break at paragraph boundaries when they can, at sentence boundaries when they must,
 * with a small overlap so a passage cut in two is still found whole in one of them.
 */
import { PAGE_MARKER, stringValue, type ConvertedDocument } from "../convert/document.ts";
import { markdownBlocks, showsNothing } from "../convert/markdown.ts";
import type { Fragment } from "../store/store.ts";
import { estimateTokens, graphemesBefore, hasCjk, shortHeading, wordBoundaryBefore } from "../text.ts";
import { appendAll } from "../lists.ts";
import { ResearcherError } from "../errors.ts";

export interface ChunkOptions {
  /** Token budget per fragment. */
  tokens: number;
  /** Share of the budget repeated from the end of the previous fragment of the same section. */
  overlap: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { tokens: 350, overlap: 0.15 };

/**
 * The version of the rule for documents without body text (headings alone, or front matter with a title; since 2,
 * a web page with a title alone; since 3, a Word file with a title alone). Before it (0) they got no fragment: an
 * index that recorded an older version chunks its documents without fragments again.
 */
export const BARE_DOCUMENT_VERSION = 3;

/**
 * The version of markdown's section rules: since 1 a heading with nothing under it joins the text that follows (it was
 * in no fragment before); since 2 with the headings between, as the file has them; since 3 a paragraph that shows
 * nothing (an HTML comment, an anchor, a rule) is in no fragment, and a `---` block that is no YAML mapping is body
 * text, not front matter (convert.ts); since 4 `tags` and `aliases` written as one string with commas are lists (as
 * Obsidian reads them); since 5 each fragment records the section it is part of (Fragment.unit); since 6 a note's tags
 * are Obsidian's (inline `#tags` outside code, nested tags, blank entries dropped), and a run of more than
 * MAX_BLANK_RUN blank lines ends a fragment; since 7 a run without spaces is never cut inside a character (a fragment
 * of emoji began and ended with half of one, stored as U+FFFD); since 8 a setext heading (a line underlined with `===`
 * or `---`) is a heading, a `# line` inside an HTML or `%%` comment is none, and a number as a front-matter title is
 * the title; since 9 TOML front matter between `+++` lines (Hugo, Zola) is metadata, not body, a setext heading right
 * after a comment's last line is a heading, and `%%` opens no comment in converted text; since 10 a Chinese or Japanese
 * sentence ends at its full stop with no space after it, and a run without spaces longer than a fragment is cut after
 * punctuation or between words, not inside one (s22 hostile F3); since 11 an `index.md` with no title of its own is
 * titled by its folder (convert.ts fallbackTitle); since 12 the characters a cut Chinese or Japanese run repeats are
 * whole graphemes (a repeat counted in UTF-16 units began inside 𠀋 or an emoji); since 13 no line of a block of link
 * definitions gives a tag (`[x]: #anchor` after another definition was one: s24 user U1); since 14 the parts of a long
 * line in a code fence cite that line (they read `7-6`, a range `get` refused: s24 review D13); since 15 an image's or
 * link's `data:` target is dropped, not read as base64 text (markdown.ts withoutDataUris); since 16 so is one wrapped
 * over lines or on the line after its opener, and `data:` without a URI's shape (`[3](data: see appendix)`) is text
 * (s27 hostile M2). An index that recorded another version chunks its markdown files again (converted formats keep
 * their fragments until their files change: reading them again can be slow).
 */
export const MARKDOWN_CHUNK_VERSION = 16;

/** A unit the packer never splits: a sentence, or a whole code fence. */
interface Piece {
  text: string;
  line: number;
  endLine: number;
  tokens: number;
  block: number;
  code: boolean;
  page: number | null;
  /** It begins with the last characters of the piece before it (a cut CJK run's repeat): it starts a fragment. */
  repeats?: boolean;
}

/** Lines `from` up to `to` (indexes into the document's Lines), the first of them line `first` of the file. */
interface Block {
  from: number;
  to: number;
  first: number;
  code: boolean;
  page: number | null;
}

interface Section {
  headings: string[];
  blocks: Iterable<Block>;
  /** Which heading's section it is (Fragment.unit): a page break goes on with the same unit. */
  unit?: number;
}

/**
 * A text's lines as `split(/\r?\n/)` cuts them, but for the empty one after a final line break, which ends the last
 * line and starts none (as `get` counts them: a fence never closed ran to that line, and cited a line past the file's
 * end, s30 hostile F5). Kept as offsets and read one at a time. Held as an array of strings,
 * with a block and a piece object per line, a text of millions of short lines cost about 250 bytes a line before a
 * fragment was made (a 27 MB log: 1.9 GB); the pipeline below holds ranges and streams its pieces instead.
 */
class Lines {
  private readonly text: string;
  /** Where each line starts, and one past the last line's end (as if a line break followed it). */
  private readonly starts: Uint32Array;

  constructor(text: string) {
    this.text = text.includes("\r\n") ? text.replaceAll("\r\n", "\n") : text;
    const end = this.text.endsWith("\n") ? this.text.length - 1 : this.text.length; // the last line's end
    let count = 1;
    for (let at = this.text.indexOf("\n"); at !== -1 && at < end; at = this.text.indexOf("\n", at + 1)) count++;
    this.starts = new Uint32Array(count + 1);
    let line = 1;
    for (let at = this.text.indexOf("\n"); at !== -1 && at < end; at = this.text.indexOf("\n", at + 1)) this.starts[line++] = at + 1;
    this.starts[count] = end + 1;
  }

  get length(): number {
    return this.starts.length - 1;
  }

  at(i: number): string {
    return this.text.slice(this.starts[i]!, this.starts[i + 1]! - 1);
  }

  /** Lines `from` up to `to`, joined by line breaks. */
  join(from: number, to: number): string {
    return this.text.slice(this.starts[from]!, this.starts[to]! - 1);
  }

  *entries(): Generator<[number, string]> {
    for (let i = 0; i < this.length; i++) yield [i, this.at(i)];
  }
}

/**
 * The most fragments one document is cut into: each is held, with its hash, until the document is written, and a
 * 48 MB note of 2.2 million two-line sections took an index run to 4.1 GB (s29b hostile F1). A 50 MB book (the
 * default index.max_file_bytes) of prose is about 40,000.
 */
export const MAX_DOCUMENT_FRAGMENTS = 100_000;

/** MAX_DOCUMENT_FRAGMENTS as the failures say it. */
const MOST = MAX_DOCUMENT_FRAGMENTS.toLocaleString("en-US");

/** The failure of a document that cuts into more than MAX_DOCUMENT_FRAGMENTS fragments. */
export function tooManyFragments(): ResearcherError {
  return new ResearcherError(
    "FILE_UNREADABLE",
    `it cuts into more than ${MOST} fragments, the most one document is cut into (a section every few words?)`,
  );
}

export function chunkDocument(doc: ConvertedDocument, options: ChunkOptions = DEFAULT_CHUNK_OPTIONS): Fragment[] {
  const lines = new Lines(doc.text);
  const paged = doc.pages !== undefined;
  const sections =
    doc.format === "markdown"
      ? splitMarkdown(lines, doc.firstLine, doc.title, paged, doc.written === true)
      : splitText(lines, doc.firstLine);
  const fragments: Fragment[] = [];
  for (const section of sections) {
    for (const pieces of packSection(piecesOf(section, lines, options.tokens), options)) {
      if (fragments.length === MAX_DOCUMENT_FRAGMENTS) throw tooManyFragments();
      fragments.push({
        seq: fragments.length,
        text: joinPieces(pieces),
        startLine: pieces[0]!.line,
        endLine: pieces.at(-1)!.endLine,
        headings: section.headings,
        page: pieces[0]!.page,
        pageEnd: pieces.at(-1)!.page,
        ...(section.unit === undefined ? {} : { unit: section.unit }),
      });
    }
  }
  if (fragments.length === 0 && doc.format === "markdown") {
    const title = frontMatterTitle(doc);
    if (title) fragments.push(title);
  }
  return fragments;
}

/**
 * A markdown document whose front matter holds a title and whose body is empty: one fragment of the title, on the
 * front matter's lines, so the document can be found by it (a fragment is what search reads).
 */
function frontMatterTitle(doc: ConvertedDocument): Fragment | undefined {
  const title = stringValue(doc.metadata.title);
  if (title === undefined || doc.firstLine <= 1) return undefined;
  return { seq: 0, text: title.replace(/\s+/g, " "), startLine: 1, endLine: doc.firstLine - 1, headings: [], page: null, pageEnd: null };
}

/**
 * Markdown → sections by heading, each as soon as it is whole (a note of a million headings is never a million
 * sections at once). In a paged document, page marker lines set the page and are not text.
 */
function* splitMarkdown(lines: Lines, firstLine: number, title: string, paged: boolean, written: boolean): Generator<Section> {
  const sections = new MarkdownSections(title, lines);
  for (const block of markdownBlocks(lines.entries(), { written })) {
    const i = block.line;
    const marker = paged && block.kind === "line" ? PAGE_MARKER.exec(lines.at(i)) : null;
    if (block.kind === "fence") sections.fence(i, block.end + 1, firstLine + i);
    else if (block.kind === "heading") sections.heading(i, block.end + 1, firstLine + i, block.level, block.text);
    else if (marker) sections.pageBreak(Number(marker[1]));
    else if (block.blank) sections.blank();
    else sections.text(i, firstLine + i);
    yield* sections.done();
  }
  yield* sections.finish();
}

/** The sections of a markdown document, built line by line in document order (splitMarkdown). */
class MarkdownSections {
  /** Sections made and not yet handed on; the last stays until the end, which may add headings to it (`finish`). */
  private readonly sections: MarkdownSection[] = [];
  private made = 0;
  /** The open headings' (shortened) texts by level. */
  private readonly stack: string[] = [];
  /**
   * Every heading line while no section is made, in case the document has no body: its headings are then all there
   * is to find it by.
   */
  private headingLines: Block[] = [];
  private current: MarkdownSection = { headings: [], blocks: [] };
  /**
   * Headings with nothing under them yet: text below puts them in its fragments' path. One that a sibling or a
   * higher heading closes first would be in no fragment: its line joins the text that comes next (`orphans`).
   */
  private pending: { block: Block; level: number }[] = [];
  private orphans: Block[] = [];
  private paragraph: Block | undefined;
  private page: number | null = null;
  /** Sections opened by a heading so far: the next one's unit. */
  private units = 0;

  constructor(
    private readonly title: string,
    private readonly lines: Lines,
  ) {}

  fence(from: number, to: number, first: number): void {
    this.closeParagraph();
    this.content();
    this.current.blocks.push({ from, to, first, code: true, page: this.page });
  }

  /** A heading on lines `line` up to `to` (a setext heading's underline is its second line). */
  heading(line: number, to: number, first: number, level: number, text: string): void {
    this.closeParagraph();
    const heading = { from: line, to, first, code: false, page: this.page };
    if (this.made === 0) this.headingLines.push(heading);
    this.closeSection();
    appendAll(
      this.orphans,
      this.pending.filter((p) => p.level >= level).map((p) => p.block),
    );
    this.pending = this.pending.filter((p) => p.level < level);
    // Headings with no text under them are held until text comes, or the end: 5 million of them in a row took 1.3 GB
    // to pack into 47,000 fragments (s29c retest 1).
    if (Math.max(this.headingLines.length, this.orphans.length) > MAX_DOCUMENT_FRAGMENTS) {
      throw new ResearcherError("FILE_UNREADABLE", `more than ${MOST} headings in a row with no text under them`);
    }
    this.stack.length = level - 1;
    this.stack[level - 1] = shortHeading(text);
    this.current = { headings: headingPath(this.stack, this.title), blocks: [], unit: ++this.units };
    // A heading cut short in the path is also body text of its section, so none of its words go unindexed.
    if (this.stack[level - 1] !== text) {
      this.content();
      this.current.blocks.push(heading);
    } else this.pending.push({ block: heading, level });
  }

  /** A page starts a new section under the same headings: fragments never span pages, so a citation is exact. */
  pageBreak(page: number): void {
    this.closeParagraph();
    this.closeSection();
    this.current = { headings: this.current.headings, blocks: [], unit: this.current.unit };
    this.page = page;
  }

  blank(): void {
    this.closeParagraph();
  }

  /** Line `line` is text: a paragraph's lines follow each other, as anything else between closes it. */
  text(line: number, first: number): void {
    if (this.paragraph) this.paragraph.to = line + 1;
    else this.paragraph = { from: line, to: line + 1, first, code: false, page: this.page };
  }

  /** The sections that nothing more can change, in order. */
  *done(): Generator<Section> {
    while (this.sections.length > 1) yield this.sections.shift()!;
  }

  *finish(): Generator<Section> {
    this.closeParagraph();
    this.closeSection();
    // Headings reach the index only in the path of the fragments below them, so a document of headings alone (a
    // stub note, an outline) would have no fragment and be found by nothing: its heading lines become its section
    // (one per page).
    if (this.made === 0) {
      yield* byPage(this.headingLines);
      return;
    }
    // Headings at the end with nothing under them join the last text when they are on its page.
    const tail = [...this.orphans, ...this.pending.map((p) => p.block)];
    const last = this.sections.at(-1)!;
    const lastPage = last.blocks.at(-1)!.page;
    appendAll(
      last.blocks,
      tail.filter((block) => block.page === lastPage),
    );
    this.push(byPage(tail.filter((block) => block.page !== lastPage)));
    yield* this.sections.splice(0);
  }

  private push(sections: MarkdownSection[]): void {
    appendAll(this.sections, sections);
    this.made += sections.length;
    if (this.made > 0) this.headingLines = [];
  }

  /** A paragraph that shows nothing (an HTML comment, an anchor, a rule) is in no fragment: see `showsNothing`. */
  private closeParagraph(): void {
    const paragraph = this.paragraph;
    this.paragraph = undefined;
    if (!paragraph || showsNothing(this.lines.join(paragraph.from, paragraph.to))) return;
    this.content();
    this.current.blocks.push(paragraph);
  }

  private closeSection(): void {
    if (this.current.blocks.length) this.push([this.current]);
  }

  /**
   * Text is coming into the current section: headings left without text on its page go first, and the pending are
   * its path. Those left on an earlier page are fragments of their own there: a fragment never spans pages.
   */
  private content(): void {
    const page = this.page;
    this.push(byPage(this.orphans.filter((block) => block.page !== page)));
    const here = this.orphans.filter((block) => block.page === page);
    // The headings between them and the text are in the fragment's lines too: its text shows them, as `get` does.
    const between = here.length ? this.pending.map((p) => p.block).filter((block) => block.first > here[0]!.first) : [];
    appendAll(
      this.current.blocks,
      appendAll([...here], between).sort((a, b) => a.first - b.first),
    );
    this.orphans = [];
    this.pending = [];
  }
}

/** A markdown section: its blocks are an array, which the end of the document may add to. */
interface MarkdownSection extends Section {
  blocks: Block[];
}

/** Heading lines with no text to go with, as sections of their own, one per page. */
function byPage(blocks: Block[]): MarkdownSection[] {
  const sections: MarkdownSection[] = [];
  for (const block of blocks) {
    const last = sections.at(-1);
    if (last && last.blocks[0]!.page === block.page) last.blocks.push(block);
    else sections.push({ headings: [], blocks: [block] });
  }
  return sections;
}

/** Longest heading path, in characters: six headings of HEADING_MAX_CHARS would still add 600 to every fragment. */
const PATH_MAX_CHARS = 240;

/**
 * The heading path without gaps and without a leading title heading (the title has its own field), each heading
 * cut to an equal share of PATH_MAX_CHARS when the path would be longer.
 */
function headingPath(stack: string[], title: string): string[] {
  const all = stack.filter((h) => h !== undefined && h !== "");
  const path = all[0] !== undefined && sameTitle(all[0], title) ? all.slice(1) : all;
  if (path.reduce((sum, h) => sum + h.length, 0) <= PATH_MAX_CHARS) return path;
  const share = Math.floor(PATH_MAX_CHARS / path.length);
  return path.map((h) => shortHeading(h, share));
}

/**
 * A heading that repeats the title: equal, or one the other cut short (a PDF's document info often holds a
 * truncated title, or the first page's large line wraps the info title onto a subtitle); a heading is cut at fewer
 * characters than a title (shortHeading), so it is compared with the title cut as it would be.
 */
function sameTitle(heading: string, title: string): boolean {
  const fold = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();
  const a = fold(heading);
  return [title, shortHeading(title)].some((form) => {
    const b = fold(form);
    const [short, long] = a.length <= b.length ? [a, b] : [b, a];
    return short.length > 0 && long.startsWith(short) && short.length >= long.length * 0.6;
  });
}

/** Plain text: one section, its paragraphs (runs of lines that are not blank) read as they come. */
function splitText(lines: Lines, firstLine: number): Section[] {
  return [{ headings: [], blocks: paragraphs(lines, firstLine) }];
}

function* paragraphs(lines: Lines, firstLine: number): Generator<Block> {
  let block: Block | undefined;
  for (let i = 0; i < lines.length; i++) {
    if (lines.at(i).trim() === "") {
      if (block) yield block;
      block = undefined;
    } else if (block) block.to = i + 1;
    else block = { from: i, to: i + 1, first: firstLine + i, code: false, page: null };
  }
  if (block) yield block;
}

/** A sentence's end and the white space after it. */
const SENTENCE_END = /[.!?;:]\s+|[。！？]\s*/g; // Chinese and Japanese write no space after a sentence

/**
 * A line cut after each sentence's end and the white space that follows it: the space stays with the sentence, so
 * the sentences joined back are the line as written (`1.  item` keeps both spaces). One pass: a lookbehind over
 * the spaces took quadratic time on a line of long runs of spaces. Made as the packer takes them: a 45 MB line of
 * 15 million sentences, made at once with a part each, took an index run to 4.3 GB (s29b hostile F1).
 */
function* sentencesOf(line: string): Generator<string> {
  let start = 0;
  for (const end of line.matchAll(SENTENCE_END)) {
    const cut = end.index + end[0].length;
    if (cut < line.length) {
      yield line.slice(start, cut);
      start = cut;
    }
  }
  yield line.slice(start);
}

/** A section's pieces, in order, made as the packer asks for them. */
function* piecesOf(section: Section, lines: Lines, budget: number): Generator<Piece> {
  let b = 0;
  for (const block of section.blocks) {
    if (block.code) {
      for (const part of splitCode(block, lines, budget)) yield { ...part, block: b, code: true, page: block.page };
    } else {
      for (let i = block.from; i < block.to; i++) {
        const n = block.first + i - block.from;
        for (const { text, repeats } of splitLongText(sentencesOf(lines.at(i)), budget))
          yield { text, line: n, endLine: n, tokens: sentenceTokens(text), block: b, code: false, page: block.page, repeats };
      }
    }
    b++;
  }
}

/**
 * A code block is one piece while it fits the budget; a longer one (or a fence never closed, which runs to the end
 * of the file) is cut at line boundaries, so no fragment outgrows the budget.
 */
function splitCode(block: Block, lines: Lines, budget: number): Omit<Piece, "block" | "code" | "page">[] {
  const text = lines.join(block.from, block.to);
  const tokens = estimateTokens(text);
  if (tokens <= budget) return [{ text, line: block.first, endLine: block.first + block.to - block.from - 1, tokens }];
  const parts: Omit<Piece, "block" | "code" | "page">[] = [];
  // The piece being filled: its text, its cost, and the lines its text is on. A line cut into parts ends a piece
  // on that line, not on the line before (a piece of a long line's parts read lines `7-6`: s24 review D13).
  let piece: { text: string; line: number; endLine: number; tokens: number } | undefined;
  for (let i = block.from; i < block.to; i++) {
    const n = block.first + i - block.from;
    for (const { text, repeats } of splitLongText([lines.at(i)], budget)) {
      const cost = estimateTokens(text) + 1;
      if (piece && (repeats || piece.tokens + cost > budget)) {
        parts.push(piece);
        piece = undefined;
      }
      // Parts of one line join as they were written (each keeps its spaces): a line break between them made the
      // text's lines disagree with the file's.
      if (piece) {
        piece.text += (piece.endLine === n ? "" : "\n") + text;
        piece.endLine = n;
        piece.tokens += cost;
      } else piece = { text, line: n, endLine: n, tokens: cost };
    }
  }
  if (piece) parts.push(piece);
  return parts;
}

/**
 * Sentences longer than the budget (minified text, tables) are cut at spaces, or hard-cut when they have none; made
 * as they are asked for (sentencesOf).
 */
function* splitLongText(sentences: Iterable<string>, budget: number): Generator<{ text: string; repeats: boolean }> {
  const maxChars = budget * 4;
  for (const sentence of sentences) {
    if (sentenceTokens(sentence) <= budget && sentence.length <= maxChars) {
      yield { text: sentence, repeats: false };
      continue;
    }
    let repeats = false;
    let rest = sentence;
    while (rest.length > 0) {
      // Latin text: ~4 characters per token; CJK text: ~1 character per token.
      const window = estimateTokens(rest.slice(0, maxChars)) <= budget ? maxChars : budget;
      let cut = rest.length <= window ? rest.length : rest.lastIndexOf(" ", window);
      let next: number | undefined;
      if (cut <= 0) {
        cut = Math.max(1, wordBoundaryBefore(rest, Math.min(window, rest.length)));
        // Chinese and Japanese are indexed a character at a time, and ICU's words are not always the reader's (图书馆
        // is 图书|馆 to it): the next part repeats the last few characters, so a word across the cut is whole there.
        if (cut < rest.length && hasCjk(rest.slice(Math.max(0, cut - 2), cut + 2))) next = graphemesBefore(rest, cut, CJK_OVERLAP);
      }
      // The spaces at a cut stay with the part they end, a few of them: a longer run is not kept (as it was not).
      const end = cut + (/^\s*/.exec(rest.slice(cut, cut + KEPT_SPACES))?.[0].length ?? 0);
      yield { text: rest.slice(0, end), repeats };
      // Every turn moves on by one character at least (end >= cut >= 1), whatever the repeat: one that began at the
      // part's start cut the same part for ever (s24 review D11). The next part repeats only when text is repeated.
      const advance = next !== undefined && next > 0 && next < end ? next : end;
      repeats = advance < end;
      rest = rest.slice(advance).trimStart();
    }
  }
}

/**
 * A sentence's cost against the budget. The space it carries to the next sentence is free, as when sentences were
 * joined with one (so fragments are cut where they were), up to KEPT_SPACES; a longer run is not (a line of a
 * million spaces must not ride along in one fragment).
 */
function sentenceTokens(sentence: string): number {
  const text = sentence.trimEnd();
  return estimateTokens(text) + Math.floor(Math.max(0, sentence.length - text.length - KEPT_SPACES) / 4);
}

/** Characters a part cut from a Chinese or Japanese run repeats from the one before: longer than most words. */
const CJK_OVERLAP = 8;

/** White space at a sentence's end that costs nothing, and that a part cut for the budget keeps. */
const KEPT_SPACES = 64;

/** The most blank lines a fragment holds in one run. */
const MAX_BLANK_RUN = 100;

/** A section's pieces packed into fragments, made as they are read: only the fragment being filled is held. */
function* packSection(source: Iterator<Piece>, options: ChunkOptions): Generator<Piece[]> {
  const budget = options.tokens;
  const overlapBudget = Math.floor(budget * options.overlap);
  const pieces = new Lookahead(source);
  let current: Piece[] = [];
  let used = 0;
  let fresh = 0; // pieces in `current` that are not overlap carried from the previous fragment
  let previous: Piece | undefined;

  for (let piece = pieces.next(); piece; previous = piece, piece = pieces.next()) {
    // A piece that repeats the end of the one before starts a fragment of its own, without an overlap: packed after
    // it, the repeat stood in the middle of one fragment (s23 retest N8).
    if (piece.repeats) {
      if (fresh > 0) yield current;
      [current, used, fresh] = [[], 0, 0];
    }
    // A fragment keeps the file's blank lines (its line arithmetic counts them): a long run of them ends it, and no
    // overlap carries across, or two words 5,000,000 lines apart were one fragment of 5 MB.
    if (current.length > 0 && piece.line - current.at(-1)!.endLine > MAX_BLANK_RUN) {
      if (fresh > 0) yield current;
      [current, used, fresh] = [[], 0, 0];
    }
    const startsBlock = previous === undefined || previous.block !== piece.block;
    // End a well-filled fragment before a paragraph that would not fit whole; otherwise fill up to the budget.
    const full =
      fresh > 0 && ((startsBlock && used >= budget / 2 && pieces.blockExceeds(piece, budget - used)) || used + piece.tokens > budget);
    if (full) {
      yield current;
      current = overlapTail(current, overlapBudget);
      used = current.reduce((sum, p) => sum + p.tokens, 0);
      fresh = 0;
    }
    if (fresh === 0 && used + piece.tokens > budget) {
      current = []; // the overlap and this piece together would exceed the budget: drop the overlap
      used = 0;
    }
    current.push(piece);
    used += piece.tokens;
    fresh++;
  }
  if (fresh > 0) yield current;
}

/** Pieces one at a time, with a look ahead at the rest of a paragraph as far as a question needs. */
class Lookahead {
  private ahead: Piece[] = [];
  private head = 0;

  constructor(private readonly source: Iterator<Piece>) {}

  next(): Piece | undefined {
    if (this.head < this.ahead.length) {
      const piece = this.ahead[this.head++]!;
      if (this.head === this.ahead.length) [this.ahead, this.head] = [[], 0];
      return piece;
    }
    const next = this.source.next();
    return next.done ? undefined : next.value;
  }

  /** Whether `piece` and the rest of its block hold more than `limit` tokens: read ahead until they do, or it ends. */
  blockExceeds(piece: Piece, limit: number): boolean {
    let total = piece.tokens;
    for (let k = this.head; total <= limit; k++) {
      if (k === this.ahead.length) {
        const next = this.source.next();
        if (next.done) return false;
        this.ahead.push(next.value);
      }
      if (this.ahead[k]!.block !== piece.block) return false;
      total += this.ahead[k]!.tokens;
    }
    return true;
  }
}

/** The trailing sentences (never code) of a fragment that fit in the overlap budget. */
function overlapTail(pieces: Piece[], budget: number): Piece[] {
  const tail: Piece[] = [];
  let used = 0;
  for (let i = pieces.length - 1; i >= 0; i--) {
    const piece = pieces[i]!;
    if (piece.code || used + piece.tokens > budget) break;
    tail.unshift(piece);
    used += piece.tokens;
  }
  return tail.length === pieces.length ? [] : tail;
}

function joinPieces(pieces: Piece[]): string {
  let text = "";
  pieces.forEach((piece, i) => {
    const previous = pieces[i - 1];
    // Keep the file's line breaks so `startLine + newlines before an offset` is that offset's line in the file.
    // Pieces of one line carry the spaces between them.
    if (previous && previous.line !== piece.line) text += "\n".repeat(Math.max(1, piece.line - previous.endLine));
    text += piece.text;
  });
  return text.trimEnd(); // a fragment may end inside a line, after a sentence and its space
}
