/**
 * Source code → sections that follow the syntax tree, each of which the index makes a fragment of. A section is a
 * whole top-level unit (a function, a class with its members, a run of imports) when it fits the budget; small
 * neighbours are packed together; a longer unit is split at its inner units (methods, then statements), never inside
 * a line. Comments, doc comments, decorators and attributes directly above a unit stay with it (in C and C++ so
 * does a declaration's documentation written right below it, zlib.h's style). Every section carries
 * the symbol path of what it holds as its headings (`class Parser › def feed`) and its 1-based line range in the file.
 *
 * The walk is driven by the budget (a unit is opened only when it is too long), so the whole of it runs here, in the
 * conversion worker with the parse, and only the line ranges and paths cross to the indexer (index/code-chunk.ts).
 * Sections hold whole lines of the file, so `startLine + newlines before an offset` is that offset's line, as with
 * the text chunker; the lines between two units (blank lines) belong to neither.
 */
import type { CodeLanguage } from "./code-languages.ts";
import type { CodeSection } from "./document.ts";
import { FUNCTION_LABEL, LABEL_SEPARATOR, shortHeading } from "../text.ts";
import { appendAll } from "../lists.ts";
import { noFTL } from "bun:jsc";
import { parserFor, type SyntaxNode, type Tree } from "./tree-sitter.ts";

export interface CodeOutlineOptions {
  /** Token budget per section (tokens ≈ characters / 4, as estimateTokens counts them). */
  maxTokens: number;
  /**
   * Units smaller than this are packed with their small neighbours; larger ones get a section of their own, so a
   * function is found by its own words rather than diluted by its neighbours'. Default: a quarter of the budget.
   */
  packBelow?: number;
  /** Parse time limit; past it the file is left to the text chunker (null). Default 5 s. */
  timeoutMs?: number;
  /** Larger files (generated code, bundles) are left to the text chunker. Default 2 MB of text. */
  maxChars?: number;
}

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MAX_CHARS = 2_000_000;

/**
 * The sections of a source file, or null when the language is not one we parse, the file is too large, its lines
 * end in a lone CR, or its parse runs out of time or its walk out of stack (the caller then uses the text chunker).
 * Throws only if the grammar cannot be loaded.
 */
export async function codeSections(
  source: string,
  language: CodeLanguage | null,
  options: CodeOutlineOptions,
): Promise<CodeSection[] | null> {
  if (!language || brokenParsers || source.length > (options.maxChars ?? DEFAULT_MAX_CHARS)) return null;
  if (mostlyLongLines(source, options.maxTokens * CHARS_PER_CODE_TOKEN) || oldMacLineEnds(source)) return null;
  const parser = await parserFor(language);
  parser.setTimeoutMicros((options.timeoutMs ?? DEFAULT_TIMEOUT_MS) * 1000);
  let tree: Tree;
  try {
    tree = parser.parse(source);
  } catch (error) {
    // "Parsing failed": the time limit ran out (pathological or generated input); the parse is not to be resumed.
    // Anything else was thrown from inside the wasm (a scanner's failed assertion): this thread's parser state is
    // unknown, so its code goes to the text chunker from now on (a conversion pool lasts one index run).
    if (error instanceof Error && error.message === "Parsing failed") parser.reset();
    else brokenParsers = true;
    return null;
  }
  try {
    const lines = source.split(/\r?\n/);
    const chunker = new Chunker(lines, language, options.maxTokens, options.packBelow ?? Math.floor(options.maxTokens / 4));
    const last = lines.length - 1;
    const spans = chunker.container(chunker.units(tree.rootNode.children, 0, last), [], 0, last, 0);
    // The parts a split cut from one unit share its number; any other fragment is a unit (or a run of them) alone.
    const units = new Map<string, number>();
    let next = 0;
    const unitOf = (part: string | undefined) => {
      if (part === undefined) return next++;
      const key = unitPart(part);
      if (!units.has(key)) units.set(key, next++);
      return units.get(key)!;
    };
    return spans
      .filter((span) => span.start <= span.end)
      .map((span) => ({
        startLine: span.start + 1,
        endLine: span.end + 1,
        headings: withLabel(span.path, span.labels),
        defines: [...new Set(span.defines)],
        unit: unitOf(span.part),
      }));
  } catch (error) {
    // The walk descends at most MAX_DEPTH containers, far inside the stack; should a grammar's tree still take it
    // to the stack's end, the file goes to the text chunker as on a parse time-out, rather than failing whole.
    if (error instanceof RangeError) return null;
    throw error;
  } finally {
    tree.delete();
  }
}

/**
 * How many containers deep the walk splits at inner units (a class, a method, a block in it, …). A unit nested
 * deeper than this (generated code: thousands of nested blocks or functions) is cut at line boundaries, as a unit
 * with no inner units is: the walk recurses once per level, and a few thousand levels ran out of stack.
 */
const MAX_DEPTH = 64;

/** Code averages about four characters a token: a line longer than the budget's worth cannot be one fragment. */
const CHARS_PER_CODE_TOKEN = 4;

/**
 * Whether most of a file is lines longer than a fragment (minified code, a bundle, a data literal): no line
 * boundary splits them, so fragments would be megabytes and the parse of a one-line bundle costs hundreds of MB.
 * The text chunker cuts such lines instead; one long line among ordinary code stays a fragment of its own.
 */
function mostlyLongLines(source: string, longerThan: number): boolean {
  let long = 0;
  for (let start = 0; start < source.length; ) {
    const end = source.indexOf("\n", start);
    const stop = end === -1 ? source.length : end;
    if (stop - start > longerThan) long += stop - start;
    start = stop + 1;
  }
  return long > source.length / 2;
}

/**
 * Whether the file's lines end in a lone CR (classic Mac OS). tree-sitter counts rows at LF only, and `get`, search
 * locations and the text chunker count lines at LF or CRLF, so such a file is one line to all of them: its
 * definitions would all share that line, and the fragment named after the first one would hold the rest. It goes
 * to the text chunker, whose fragments make no claim of a symbol and cite the line `get` reads back. (Counting a lone
 * CR as a line end here alone would cite lines that `get` says are past the end; a CR inside an ordinary line, in a
 * string or a stray one, changes nothing.)
 */
function oldMacLineEnds(source: string): boolean {
  let lone = 0;
  for (let at = source.indexOf("\r"); at !== -1; at = source.indexOf("\r", at + 1)) if (source[at + 1] !== "\n") lone++;
  if (lone === 0) return false;
  let feeds = 0;
  for (let at = source.indexOf("\n"); at !== -1 && feeds < lone; at = source.indexOf("\n", at + 1)) feeds++;
  return lone > feeds;
}

/** Set when a parse threw from inside the wasm: see codeSections. */
let brokenParsers = false;

/** A range of whole lines (0-based rows, inclusive) that is kept together unless it is too long. */
interface Unit {
  start: number;
  end: number;
  /**
   * The syntax nodes whose inner units can split it: one, or several that share lines (`} catch (e) {` ends a
   * block and opens a clause). Comments and decorators above them are part of the range, not of the nodes.
   */
  nodes: SyntaxNode[];
  /** `class Parser`, `def feed`, `imports`; null for plain statements and comments. */
  label: string | null;
  /** Comments, decorators and attributes: they join the unit below them. */
  attachable: boolean;
  tokens: number;
}

/**
 * Whether a unit's parts, when it is split, are headed by its label. A conditional block is named by what it
 * defines when whole; split, its definitions name themselves.
 */
const namesItsParts = (unit: Unit) => unit.label !== null && !CONDITIONAL.has(unit.nodes[0]!.type);

/** A fragment in the making. */
interface Span {
  start: number;
  end: number;
  /** The enclosing units' labels, and the labels of the units the fragment holds. */
  path: string[];
  labels: (string | null)[];
  /**
   * The labels of every unit whose definition the fragment holds: its units' and their members' (a class kept whole
   * defines its methods), however many there are. A heading shows four (withLabel).
   */
  defines: string[];
  /**
   * Which unit a split cut it from, as the path of unit indexes down the containers (`3/0/`, `~` after the index of
   * a unit that names nothing): spans with the same path came from the same unit; none for a whole unit or a run of
   * small ones.
   */
  part?: string;
}

/**
 * The unit a part belongs to: a split of a unit that names nothing (a loop, a long docstring, an `if` in a function)
 * cuts parts of the unit around it, so its level (marked `~`) is dropped from the end of the path. `json.dump`'s
 * docstring and its code were two units, so neither part said the function went on (s17 user #1).
 */
function unitPart(part: string): string {
  const levels = part.split("/").filter(Boolean);
  while (levels.length > 1 && levels.at(-1)!.endsWith("~")) levels.pop();
  return levels.join("/");
}

/** Two neighbouring spans as one: under one container their units are listed, else the larger one names it. */
function join(a: Span, b: Span, aLarger: boolean): Span {
  const samePath = a.path.length === b.path.length && a.path.every((p, i) => p === b.path[i]);
  const named = samePath ? { path: a.path, labels: [...a.labels, ...b.labels] } : aLarger ? a : b;
  const defines = [...a.defines, ...b.defines];
  return { start: a.start, end: b.end, path: named.path, labels: named.labels, defines, part: (aLarger ? a : b).part };
}

class Chunker {
  static {
    for (const method of [
      Chunker.prototype.container,
      Chunker.prototype.absorbTiny,
      Chunker.prototype.split,
      Chunker.prototype.splitInside,
      Chunker.prototype.pack,
      Chunker.prototype.defined,
      Chunker.prototype.byLines,
      Chunker.prototype.units,
      Chunker.prototype.attaches,
      Chunker.prototype.trails,
      Chunker.prototype.openPrototype,
      Chunker.prototype.docCommentStart,
      Chunker.prototype.widen,
      Chunker.prototype.tokens,
    ])
      noFTL(method); // see WALK below
  }

  constructor(
    private readonly lines: string[],
    private readonly language: CodeLanguage,
    private readonly budget: number,
    private readonly packBelow: number,
  ) {
    this.offsets = new Int32Array(lines.length + 1);
    lines.forEach((line, i) => {
      this.offsets[i + 1] = this.offsets[i]! + line.length + 1;
    });
  }

  /** Characters before each row (with line breaks): any range's size in O(1). */
  private readonly offsets: Int32Array;

  /** Tokens of the lines `start..end`, with their line breaks, the way the fragment text will hold them. */
  private tokens(start: number, end: number): number {
    if (end < start) return 0;
    return Math.ceil((this.offsets[end + 1]! - this.offsets[start]! - 1) / 4);
  }

  /**
   * The fragments of a container's rows `from..to` (a file, a class body, a function body): its inner units (from
   * `units()`, read once: reading nodes is most of the walk's time), grouped, packed, and split further when too long.
   * `path` is the symbol path of the container.
   */
  container(units: Unit[], path: string[], from: number, to: number, depth: number): Span[] {
    if (units.length === 0) return this.lines.slice(from, to + 1).some((l) => l.trim()) ? this.byLines(from, to, path) : [];
    const spans: Span[] = [];
    // Rows of the container before its first inner unit (a class line, a signature, an opening brace) and after
    // its last (a closing brace) stay with the fragment next to them.
    const head = firstContent(this.lines, from, units[0]!.start - 1);
    if (head !== null) units[0] = this.widen(units[0]!, head, units[0]!.end);
    const last = units.length - 1;
    if (hasContent(this.lines, units[last]!.end + 1, to)) units[last] = this.widen(units[last]!, units[last]!.start, to);

    let run: Unit[] = [];
    const flushRun = () => {
      if (run.length) appendAll(spans, this.pack(run, path, depth));
      run = [];
    };
    const split = (unit: Unit, i: number) => {
      const level = namesItsParts(unit) ? `${i}/` : `${i}~/`; // see unitPart
      appendAll(
        spans,
        this.split(unit, path, depth).map((span) => ({ ...span, part: `${level}${span.part ?? ""}` })),
      );
    };
    units.forEach((unit, i) => {
      if (unit.label !== null && unit.tokens >= this.packBelow) {
        // A definition of some size is a fragment of its own: found by its own words, cited by its own lines.
        flushRun();
        if (unit.tokens <= this.budget)
          spans.push({ start: unit.start, end: unit.end, path, labels: [unit.label], defines: this.defined([unit], depth) });
        else split(unit, i);
      } else if (unit.tokens > this.budget) {
        flushRun();
        split(unit, i);
      } else {
        run.push(unit); // small definitions, statements and comments fill fragments up to the budget
      }
    });
    flushRun();
    return this.absorbTiny(spans);
  }

  /**
   * A fragment of a few lines left over by a split (an `if` line before its block, a section comment) joins the
   * fragment after it (or else the one before it) when the two fit the budget together. Across the bounds of a
   * split unit only what names nothing joins (a closing brace, a comment): the last line of a long method does not
   * start the next method's fragment, and a small function does not hide in the last part of a long one, whose
   * heading would not name it.
   */
  private absorbTiny(spans: Span[]): Span[] {
    const tiny = (s: Span) => this.tokens(s.start, s.end) < this.budget / 8;
    const crosses = (small: Span, a: Span, b: Span) => a.part !== b.part && (small.part !== undefined || small.labels.some(Boolean));
    // A tiny span may take its neighbour past the budget by an eighth: alone, a one-line tail of a split method
    // (`self._domain = domain`) is a fragment whose heading names the method and whose text says nothing, and it
    // outranked the method's own signature for the method's name. The neighbour may be past the budget already (it
    // took another tiny span): a lone `}` still joins it (s24 code user C4).
    const fits = (small: Span, a: Span, b: Span) => !crosses(small, a, b) && this.tokens(a.start, b.end) <= this.budget + this.budget / 8;
    const out: Span[] = [];
    for (let i = 0; i < spans.length; i++) {
      const span = spans[i]!;
      const next = spans[i + 1];
      if (tiny(span) && next && fits(span, span, next)) {
        spans[i + 1] = join(span, next, false);
        continue;
      }
      const previous = out.at(-1);
      if (tiny(span) && previous && fits(span, previous, span)) {
        out[out.length - 1] = join(previous, span, true);
        continue;
      }
      out.push(span);
    }
    return out;
  }

  /**
   * A unit longer than the budget, in a container `depth` levels down: split at the units inside it, or at line
   * boundaries when it has none or is nested past MAX_DEPTH.
   */
  private split(unit: Unit, path: string[], depth: number): Span[] {
    const inner = namesItsParts(unit) ? [...path, unit.label!] : path;
    const parts = this.splitInside(unit, inner, depth);
    // A definition over the budget only with its doc comment is cut between the two: cut between its statements, a
    // 21-line method under a 31-line Javadoc lost its body's end to a fragment of its own, or its signature to the
    // doc's (s25 code user C16). Unless that split left it whole: a unit up to an eighth past the budget is one
    // fragment when its last part is tiny (absorbTiny). Whether it is depends on its last statements, not on its
    // size: pdf-lib's setText, just past the budget under a 38-line JSDoc, was cut after its third statement into two
    // parts of 43 and 14 lines (s27 code F2).
    const code = unit.nodes[0]!.startPosition.row;
    if (parts.length > 1 && unit.label !== null && code > unit.start && this.tokens(code, unit.end) <= this.budget) {
      const doc = this.byLines(unit.start, code - 1, inner);
      return [...doc, { start: code, end: unit.end, path: inner, labels: [], defines: this.defined([unit], depth) }];
    }
    // The part that opens a function with its signature is headed by the function: by a nested def it held, shutil's
    // `copystat` read as `def copystat › def _nop`, as if the part were `_nop` (s28 user #1). Its `defines` still name
    // the nested defs, for the exact-name rule. A class's first part is its first method's, as each later one is.
    const first = parts[0];
    if (
      first &&
      namesItsParts(unit) &&
      first.path.length === inner.length &&
      FUNCTION_LABEL.test(unit.label!) &&
      first.labels.some(Boolean)
    )
      parts[0] = { ...first, labels: [] };
    return parts;
  }

  /** A unit split at the units inside it, or at line boundaries. */
  private splitInside(unit: Unit, inner: string[], depth: number): Span[] {
    // One long line (minified code, a data literal) has no line to split at: its inner units would not help.
    if (unit.start < unit.end && depth < MAX_DEPTH) {
      const children = unit.nodes.flatMap((node) => bodyOf(node).children);
      const units = this.units(children, unit.start, unit.end);
      if (units.length > 0) return this.container(units, inner, unit.start, unit.end, depth + 1);
    }
    return this.byLines(unit.start, unit.end, inner);
  }

  /** Small units side by side, up to the budget. */
  private pack(run: Unit[], path: string[], depth: number): Span[] {
    const spans: Span[] = [];
    let group: Unit[] = [];
    const flush = () => {
      if (!group.length) return;
      const [start, end] = [group[0]!.start, group.at(-1)!.end];
      spans.push({ start, end, path, labels: group.map((u) => u.label), defines: this.defined(group, depth) });
      group = [];
    };
    for (const unit of run) {
      if (group.length && this.tokens(group[0]!.start, unit.end) > this.budget) flush();
      group.push(unit);
    }
    flush();
    return spans;
  }

  /**
   * The labels of the definitions in these whole units, `depth` containers down: each named unit's, and those
   * inside it (a class's methods, a method's nested helpers), to MAX_DEPTH. What the exact-name rule counts as
   * defined in their fragment (search/heading-boost.ts): read from the heading alone, the fifth and later units of
   * a packed fragment (`…`) and the methods of a class kept whole were not, and their names found callers first
   * (s25 code user C11).
   */
  private defined(units: Unit[], depth: number): string[] {
    const labels: string[] = [];
    for (const unit of units) {
      // A conditional in a function's body names no heading (C5), but what it defines is defined here: shutil's
      // `onerror` under `if onerror is None:` (s25b review F8).
      const conditional =
        unit.label === null && unit.nodes.some((node) => CONDITIONAL_PARTS.has(node.type) || BRACED_BLOCKS.has(node.type));
      if (unit.label === null && !conditional) continue;
      if (unit.label !== null) labels.push(unit.label);
      if (depth >= MAX_DEPTH || unit.start === unit.end) continue;
      const members = this.units(
        unit.nodes.flatMap((node) => bodyOf(node).children),
        unit.start,
        unit.end,
      );
      appendAll(labels, this.defined(members, depth + 1));
    }
    return labels;
  }

  /** Rows cut into fragments at line boundaries; a line longer than the budget is a fragment of its own. */
  private byLines(from: number, to: number, path: string[]): Span[] {
    const spans: Span[] = [];
    let start = -1;
    let used = 0;
    for (let row = from; row <= to; row++) {
      const cost = Math.ceil((this.lines[row]!.length + 1) / 4);
      if (start >= 0 && used + cost > this.budget) {
        spans.push({ start, end: lastContent(this.lines, start, row - 1), path, labels: [], defines: [] });
        start = -1;
      }
      if (start < 0) {
        if (this.lines[row]!.trim() === "") continue; // fragments never start with blank lines
        start = row;
        used = 0;
      }
      used += cost;
    }
    if (start >= 0) spans.push({ start, end: lastContent(this.lines, start, to), path, labels: [], defines: [] });
    return spans;
  }

  /**
   * The inner units within rows `from..to` of a container's children (a node's, or the blocks' of several nodes that
   * share lines): the children as line ranges, where children sharing a line become one unit, comments and decorators
   * join the unit right below them (no blank line between; a doc comment across blank lines) or, in C and C++, the
   * declaration above them (`trails`), and rows no child covers (stray punctuation) join the unit above.
   */
  units(children: SyntaxNode[], from: number, to: number): Unit[] {
    const units: Unit[] = [];
    for (const child of children) {
      // A child that starts on the container's first row (the `{` of a body, a class's name) belongs to the head.
      // (Each property of a node read below is a call into the parser's wasm: read once, only when needed.)
      const start = child.startPosition.row;
      if (start < from || start > to) continue;
      const end = Math.min(endRow(child), to);
      if (start === end && this.lines[start]!.trim() === "") continue;
      const type = child.type;
      const unit: Unit = {
        start,
        end,
        nodes: [child],
        label: headingLabel(child, type, this.language),
        attachable: isAttachable(type),
        tokens: 0,
      };
      const previous = units.at(-1);
      if (previous && (start <= previous.end || this.openPrototype(previous))) {
        // Two units on one line: one unit (`a = 1; b = 2`, a trailing comment, a closing brace). So are the lines of a
        // prototype the grammar broke off inside its parameters.
        units[units.length - 1] = merge(previous, unit);
      } else if (
        previous?.attachable &&
        !unit.attachable &&
        unit.label !== "imports" &&
        this.attaches(previous, start) &&
        !this.trails(units.at(-2), previous, false)
      ) {
        // (A file's header comment above its imports is about the file: it stays a unit of its own.)
        units[units.length - 1] = { ...unit, start: previous.start };
      } else if (previous?.attachable && unit.attachable && start === previous.end + 1) {
        units[units.length - 1] = { ...previous, end: unit.end };
      } else {
        units.push(unit);
      }
      // A TypeScript overload's signatures, with the comments above and between them, are the implementation's:
      // ajv's seven `validate(…): boolean` went to the method before it, and `validate()`'s own fragment held its
      // body alone (s25 code user C18).
      const [signed, last] = units.slice(-2);
      if (signed && last && overloads(signed, last))
        units.splice(-2, 2, { ...last, start: signed.start, nodes: [...signed.nodes, ...last.nodes] });
    }
    // A C declaration's documentation below it joins it (after the loop: a run of comments is whole only there).
    for (let i = units.length - 1; i > 0; i--)
      if (this.trails(units[i - 1], units[i]!, i === units.length - 1)) units.splice(i - 1, 2, { ...units[i - 1]!, end: units[i]!.end });
    // Non-blank rows between units (tokens no child covers) go with the unit above.
    for (let i = 0; i + 1 < units.length; i++) {
      const next = units[i + 1]!.start;
      const content = lastContent(this.lines, units[i]!.end + 1, next - 1);
      if (content > units[i]!.end) units[i] = { ...units[i]!, end: content };
    }
    for (const unit of units) unit.tokens = this.tokens(unit.start, unit.end);
    return units;
  }

  /**
   * Whether comments and decorators join the unit starting at row `start`: right above it, or a doc comment (`/**`,
   * `///`) with only blank lines between (13% of JSDoc blocks in node_modules stand apart so; their docs went to the
   * function above). A plain comment after a blank line is a section's, not the unit's.
   */
  private attaches(above: Unit, start: number): boolean {
    if (start === above.end + 1) return true;
    const last = this.lines[above.end]!.trim();
    const doc = last.startsWith("///") || (last.endsWith("*/") && this.docCommentStart(above) !== undefined);
    return doc && this.lines.slice(above.end + 1, start).every((line) => line.trim() === "");
  }

  /**
   * Whether `comments` document the C or C++ declaration above them (a prototype, a `#define`, a typedef, a struct):
   * they start on the row after it ends, and a blank line or the container's end (`atEnd`) comes after them. zlib.h
   * and many headers write `ZEXTERN int ZEXPORT deflate OF((…));` and below it the block comment `deflate compresses
   * …`, as Python's docstring is inside its function. Left to the declaration below, or alone, 26 of zlib.h's 64
   * fragments had no heading and the one headed `deflate()` was deflateInit's documentation (s26 agent F6). A comment
   * right above the next declaration stays its own, as before.
   */
  private trails(owner: Unit | undefined, comments: Unit, atEnd: boolean): boolean {
    if ((this.language !== "c" && this.language !== "cpp") || !owner || owner.label === null) return false;
    if (comments.start !== owner.end + 1 || !comments.nodes.every((node) => COMMENT.test(node.type))) return false;
    // (The declaration's own node: a comment may share its first line, its `;` its last.)
    const declaration = owner.nodes.find((node) => !COMMENT.test(node.type));
    if (!declaration || !TRAILING_DOC_OWNERS.has(declaration.type) || isIncludeGuard(declaration)) return false;
    return atEnd || this.lines[comments.end + 1]!.trim() === "";
  }

  /**
   * Whether a unit is a C prototype named by brokenPrototypeName whose parameter list goes on below it: the grammar
   * ended its error node at the line's end (`OF((z_streamp strm,`), and the parameters on the lines after were units
   * of their own, with no name, and its documentation theirs.
   */
  private openPrototype(unit: Unit): boolean {
    if ((this.language !== "c" && this.language !== "cpp") || unit.label === null || unit.nodes.at(-1)!.type !== "ERROR") return false;
    let depth = 0;
    for (let row = unit.start; row <= unit.end; row++)
      for (const char of this.lines[row]!) depth += char === "(" ? 1 : char === ")" ? -1 : 0;
    return depth > 0;
  }

  /** The row where the unit's last comment opens as a doc comment (`/**`), if it does. */
  private docCommentStart(unit: Unit): number | undefined {
    for (let row = unit.end; row >= unit.start; row--) {
      const line = this.lines[row]!.trim();
      if (line.startsWith("/*")) return line.startsWith("/**") && !line.startsWith("/**/") ? row : undefined;
    }
    return undefined;
  }

  private widen(unit: Unit, start: number, end: number): Unit {
    return {
      ...unit,
      start: Math.min(start, unit.start),
      end: Math.max(end, unit.end),
      tokens: this.tokens(Math.min(start, unit.start), Math.max(end, unit.end)),
    };
  }
}

/** Whether `previous` is overload signatures of the function or method `unit` defines (or signs again). */
function overloads(previous: Unit, unit: Unit): boolean {
  return previous.label !== null && previous.label === unit.label && previous.nodes.every((node) => SIGNATURES.has(declared(node).type));
}

const SIGNATURES = new Set(["function_signature", "method_signature", "abstract_method_signature"]);

/** The declaration an `export` statement makes, or the node itself. */
function declared(node: SyntaxNode): SyntaxNode {
  return node.type === "export_statement" ? (node.childForFieldName("declaration") ?? node) : node;
}

function merge(a: Unit, b: Unit): Unit {
  // A definition wins over the comment or statement it shares a line with.
  const main = a.label ? a : b.label ? b : a;
  return {
    ...main,
    nodes: [...a.nodes, ...b.nodes],
    start: a.start,
    end: Math.max(a.end, b.end),
    label: a.label ?? b.label,
    attachable: a.attachable && b.attachable,
  };
}

/** The last row of a node's text: a node that ends at the start of a line ends on the line before. */
function endRow(node: SyntaxNode): number {
  const { row, column } = node.endPosition;
  return column === 0 && row > node.startPosition.row ? row - 1 : row;
}

function hasContent(lines: string[], from: number, to: number): boolean {
  for (let row = from; row <= to; row++) if (lines[row]!.trim() !== "") return true;
  return false;
}

function firstContent(lines: string[], from: number, to: number): number | null {
  for (let row = from; row <= to; row++) if (lines[row]!.trim() !== "") return row;
  return null;
}

/** The last non-blank row in `from..to`, or `from - 1` when all are blank. */
function lastContent(lines: string[], from: number, to: number): number {
  for (let row = to; row >= from; row--) if (lines[row]!.trim() !== "") return row;
  return from - 1;
}

/** The path for a fragment holding units with these labels: one label extends the path; several are listed. */
function withLabel(path: string[], labels: (string | null)[]): string[] {
  const named = [...new Set(labels.filter((l): l is string => l !== null))];
  const shown = named.length > 4 ? [...mostTelling(named, 4), "…"] : named;
  const full = named.length === 0 ? path : [...path, shown.join(LABEL_SEPARATOR)];
  // Definitions nested dozens deep (generated code) would make a heading of a screenful: its outer and inner ends
  // say where the fragment is.
  return full.length > MAX_HEADINGS ? [...full.slice(0, 3), "…", ...full.slice(-(MAX_HEADINGS - 4))] : full;
}

/**
 * `n` of a fragment's labels, in their order, where there are more: functions, classes and types before a module's
 * bindings and imports. A run of constants packed with the functions that use them (`const dateRegex, …, function
 * datetimeRegex`) showed only constants, and the function's name lost the weight of its heading. (A label of bare
 * names is a Python module's assignment, or a C# property: data too.)
 */
function mostTelling(labels: string[], n: number): string[] {
  const binding = (label: string) => label === "imports" || /^(?:const|let|var) /.test(label) || /^\w+(?:, \w+)*$/.test(label);
  const kept = new Set([...labels.filter((l) => !binding(l)), ...labels.filter(binding)].slice(0, n));
  return labels.filter((l) => kept.has(l));
}

/** Headings in a fragment's symbol path at most, `…` included. */
const MAX_HEADINGS = 12;

// ---- what a node is, per grammar ----------------------------------------------------------------------------

const COMMENT = /comment/;
const ATTACHABLE = new Set(["decorator", "attribute_item", "annotation", "marker_annotation", "attribute_list"]);

function isAttachable(type: string): boolean {
  return COMMENT.test(type) || ATTACHABLE.has(type);
}

/**
 * An include guard's `#define API_H` (the name its `#ifndef` tests): the comment below it is the file's header (a
 * licence, what the file is for), not the guard's doc.
 */
function isIncludeGuard(node: SyntaxNode): boolean {
  const guard = node.parent?.type === "preproc_ifdef" ? node.parent.childForFieldName("name")?.text : undefined;
  return node.type === "preproc_def" && guard !== undefined && guard === node.childForFieldName("name")?.text;
}

/** The C and C++ declarations a comment right below documents (Chunker.trails); a function's body ends its own. */
const TRAILING_DOC_OWNERS = new Set([
  "declaration",
  "preproc_def",
  "preproc_function_def",
  "type_definition",
  "struct_specifier",
  "union_specifier",
  "enum_specifier",
  "class_specifier",
]);

const IMPORTS = new Set([
  "import_statement",
  "import_from_statement",
  "future_import_statement", // python, ts/js
  "import_declaration", // go, java
  "use_declaration",
  "extern_crate_declaration", // rust
  "preproc_include",
  "using_declaration",
  "using_directive", // c, c++, c#
  "namespace_use_declaration", // php
]);

/** Node type → the word a heading names it by; the name comes from the node's `name` field. */
const KEYWORDS: Record<string, string> = {
  class_definition: "class",
  class_declaration: "class",
  abstract_class_declaration: "class",
  class_specifier: "class",
  class: "class",
  struct_specifier: "struct",
  struct_item: "struct",
  struct_declaration: "struct",
  union_specifier: "union",
  union_item: "union",
  interface_declaration: "interface",
  trait_item: "trait",
  trait_declaration: "trait",
  enum_declaration: "enum",
  enum_specifier: "enum",
  enum_item: "enum",
  record_declaration: "record",
  type_alias_declaration: "type",
  type_item: "type",
  mod_item: "mod",
  module: "module",
  internal_module: "namespace",
  namespace_definition: "namespace",
  namespace_declaration: "namespace",
  file_scoped_namespace_declaration: "namespace",
  const_item: "const",
  static_item: "static",
  macro_definition: "macro_rules!",
  generator_function_declaration: "function*",
  preproc_def: "#define",
  preproc_function_def: "#define",
};

/**
 * Function-like nodes: named `def f`, `fn f`, `func f`, `function f` where the language has the keyword, else `f()`.
 */
const FUNCTIONS = new Set([
  "function_definition",
  "function_declaration",
  "function_item",
  "function_signature_item",
  "function_signature", // TypeScript: an overload, a `declare function`, what a .d.ts is made of
  "method_signature", // TypeScript: a method's overload, an interface's method
  "abstract_method_signature",
  "method_definition",
  "method_declaration",
  "constructor_declaration",
  "method",
  "singleton_method",
  "destructor_declaration",
  "operator_declaration",
  "local_function_statement",
]);

const FUNCTION_KEYWORD: Partial<Record<CodeLanguage, string>> = {
  python: "def",
  ruby: "def",
  rust: "fn",
  go: "func",
  php: "function",
  bash: "function",
};

/**
 * A definition's label as a heading: on one line and short (a name is node text, and a generic type or a C++
 * declarator can span lines and run long; headings are stored with every fragment).
 */
function headingLabel(node: SyntaxNode, type: string, language: CodeLanguage): string | null {
  const label = labelOf(node, language, type);
  return label === null ? null : shortHeading(label.replace(/\s+/g, " "), LABEL_MAX_CHARS);
}

const LABEL_MAX_CHARS = 80;

/** The heading label of a definition node, or null for statements, expressions and comments. */
function labelOf(node: SyntaxNode, language: CodeLanguage, type = node.type): string | null {
  // A file's imports are a unit worth naming; a function's own (`import re` in its body) are a statement of it, and
  // named they headed the function's first part `def f › imports`, which then had no section (s17 retest #1).
  if (IMPORTS.has(type)) return inFunctionBody(node) ? null : "imports";
  if (type === "package_clause" || type === "package_declaration") {
    // Go's `package main`, Java's `package org.demo;`: the name says what the file belongs to.
    const name = node.namedChildren.find((c) => !COMMENT.test(c.type))?.text;
    return name ? `package ${name}` : null;
  }
  if (type === "decorated_definition" || type === "template_declaration") {
    const inner = node.childForFieldName("definition") ?? node.namedChildren.at(-1);
    return inner ? labelOf(inner, language) : null;
  }
  if (type === "export_statement") {
    const inner = node.childForFieldName("declaration");
    return inner ? labelOf(inner, language) : null;
  }
  if (type === "ambient_declaration") {
    // TypeScript's `declare function f(…);`, `declare class C`, `declare namespace N {…}`, `declare module "m"`:
    // named as the declaration inside. A declared variable has no value to tell a function by, and is API: named.
    const inner = ambientInner(node);
    if (!inner) return null;
    const innerType = inner.type;
    if (innerType === "statement_block") return "declare global";
    if (innerType === "lexical_declaration" || innerType === "variable_declaration") return declaredVariables(inner);
    return labelOf(inner, language, innerType);
  }
  // In a function's body a conditional's definitions are its helpers: named, `def onerror` headed `def rmtree`'s first
  // part, as if that part were the helper (s24 code user C5).
  if (CONDITIONAL.has(type) && TOP_LEVEL.has(node.parent?.type ?? "") && !inFunctionBody(node)) return definedWithin(node, language);
  if (type === "declaration" && (language === "c" || language === "cpp")) {
    // A prototype (`int api_open(const char *path);`), what a header is made of: named as its function. In a
    // function's body the same syntax is a local made by a constructor (`std::lock_guard<std::mutex> lock(mu_);`):
    // named, it headed the function's first part `Run() › lock(), buffer()` and defined `lock` (s25 code user C13).
    if (inFunctionBody(node)) return null;
    let declarator = node.childForFieldName("declarator");
    while (declarator && /^(pointer|reference)_declarator$/.test(declarator.type)) declarator = declarator.childForFieldName("declarator");
    const name =
      declarator?.type === "function_declarator"
        ? (macroWrappedName(node, declarator) ?? declaratorName(declarator.childForFieldName("declarator")))
        : splitPrototypeName(node, declarator);
    return name ? `${name}()` : null;
  }
  if ((type === "ERROR" || type === "expression_statement") && (language === "c" || language === "cpp")) {
    const name = brokenPrototypeName(node, type);
    return name ? `${name}()` : null;
  }
  if (type === "impl_item") {
    const target = node.childForFieldName("type")?.text;
    const trait = node.childForFieldName("trait")?.text;
    return target ? `impl ${trait ? `${trait} for ` : ""}${target}` : "impl";
  }
  if (type === "lexical_declaration" || type === "variable_declaration") {
    // `const parse = (…) => …`: a function by another name.
    const declarators = node.namedChildren.filter((c) => c.type === "variable_declarator");
    const value = declarators[0]?.childForFieldName("value");
    const valueType = value?.type ?? "";
    const name = declarators[0]?.childForFieldName("name")?.text;
    if (name && /function|arrow_function|class/.test(valueType)) return `${/class/.test(valueType) ? "class" : "function"} ${name}`;
    if (!atModuleLevel(node)) return null; // a local, or a loop's variable
    if (declarators.every(isRequire)) return "imports"; // `const fs = require("fs")`
    // A module's binding is a definition whatever makes it: `export const CallToolRequestSchema =
    // RequestSchema.extend({…})`, zod's `export const $ZodError = $constructor(…)`. Unnamed, a bare name found its
    // uses before its definition (s24 code user C7). Destructured bindings name nothing of their own.
    const names = declarators.map((d) => d.childForFieldName("name")).filter((n) => n?.type === "identifier");
    return names.length ? `${declarationKeyword(node)} ${names.map((n) => n!.text).join(", ")}` : null;
  }
  if (type === "expression_statement" && JS_FAMILY.has(language)) {
    // `res.send = function (…) {…}`, `exports.parse = (…) => …`, `Parser.prototype.feed = function …`: CommonJS
    // and prototype code defines most of its functions this way.
    const first = node.namedChildren[0];
    // A top-level `namespace N {…}` parses as an expression statement.
    if (first?.type === "internal_module") return labelOf(first, language, "internal_module");
    const assignment = node.namedChildren.find((c) => c.type === "assignment_expression");
    const right = assignment?.childForFieldName("right");
    const value = right?.type ?? "";
    const name = assignment?.childForFieldName("left")?.text;
    if (name && /function|arrow_function|class/.test(value)) return `${/class/.test(value) ? "class" : "function"} ${name}`;
    if (name && right && returnsFunction(right)) return `function ${name}`;
    if (name && right && !inFunctionBody(node) && madeOfFunctions(right)) return name; // `Parser.prototype = { feed() {…}, … }`
    return null;
  }
  if (type === "expression_statement" && language === "python") {
    // `DEFAULTSECT = "DEFAULT"`, `OPTIONAL = '?'`, `MAX_DEPTH: int = 10`: a module's constant or global, named by its
    // target as a JavaScript module's binding is. Unnamed, a bare name found the functions that use it first
    // (s27 code F6). A class's or function's assignments are statements of it; a tuple or an item set names nothing,
    // and neither does the module's metadata (`__all__`, `__version__`), which headed the file's first fragment.
    const names = node.parent?.type === "module" ? assignedNames(node.namedChildren[0]) : [];
    return names.length && !names.some((name) => /^__\w+__$/.test(name)) ? names.join(LABEL_SEPARATOR) : null;
  }
  if (type === "pair" && JS_FAMILY.has(language)) {
    // A method of an object literal, `addRule: function (key, rule) {…}`: the pre-class way to write one, as in
    // `TurndownService.prototype = {…}` (s25 code user C15). Named as a method definition is.
    const value = node.childForFieldName("value")?.type ?? "";
    const key = node.childForFieldName("key")?.text;
    return key && FUNCTION_VALUES.test(value) ? `${key.replace(/^["']|["']$/g, "")}()` : null;
  }
  if ((type === "public_field_definition" || type === "field_definition") && JS_FAMILY.has(language)) {
    // A method written as a class field, `static fromText = (value) => {…}`, `handleChange = async () => {…}` (the
    // arrow keeps `this`): named as a method is. pdf-lib defines 96 so; unnamed, their fragments were headed by the
    // class or the method before them, and a bare name found the callers first (s27 code F1).
    const value = node.childForFieldName("value")?.type ?? "";
    const name = (node.childForFieldName("name") ?? node.childForFieldName("property"))?.text;
    return name && FUNCTION_VALUES.test(value) ? `${name}()` : null;
  }
  if (type === "type_declaration") {
    const spec = node.namedChildren.find((c) => c.type === "type_spec");
    const name = spec?.childForFieldName("name")?.text;
    return name ? `type ${name}` : null;
  }
  if (type === "type_definition") {
    const name = declaratorName(node.childForFieldName("declarator"));
    return name ? `typedef ${name}` : null;
  }
  if (type === "property_declaration" && language === "c_sharp") return node.childForFieldName("name")?.text ?? null;
  if (FUNCTIONS.has(type)) {
    const name = functionName(node, language);
    if (!name) return null;
    const keyword =
      FUNCTION_KEYWORD[language] ??
      (JS_FAMILY.has(language) && (type === "function_declaration" || type === "function_signature") ? "function" : null);
    if (type === "singleton_method") return `def self.${name}`;
    if (language === "go" && type === "method_declaration") {
      const receiver = node.childForFieldName("receiver")?.namedChildren[0]?.childForFieldName("type")?.text;
      return receiver ? `func (${receiver}) ${name}` : `func ${name}`;
    }
    return keyword ? `${keyword} ${name}` : `${name}()`;
  }
  const keyword = KEYWORDS[type];
  if (keyword) {
    const name = node.childForFieldName("name")?.text;
    return name ? `${keyword} ${name}` : null; // an anonymous struct or class expression gets no heading
  }
  return null;
}

/**
 * Whether a declaration is a module's own (at the top of the file, exported, or in a module wrapper's scope), not a
 * function's local or a top-level loop's or block's variable.
 */
function atModuleLevel(node: SyntaxNode): boolean {
  let up = node.parent;
  if (up?.type === "export_statement") up = up.parent;
  if (up?.type === "program") return true;
  const fn = up?.type === "statement_block" ? up.parent : null;
  return fn !== null && fn !== undefined && FUNCTION_NODES.test(fn.type) && isModuleScope(fn);
}

/** `x = require("m")`, `x = require("m").y`: CommonJS's import. */
function isRequire(declarator: SyntaxNode): boolean {
  let value = declarator.childForFieldName("value");
  while (value?.type === "member_expression") value = value.childForFieldName("object");
  return value?.type === "call_expression" && value.childForFieldName("function")?.text === "require";
}

/** Functions and methods in every language's grammar. */
const FUNCTION_NODES =
  /^(?:function_definition|function_declaration|function_item|method_declaration|method_definition|constructor_declaration|method|singleton_method|function_expression|generator_function|generator_function_declaration|function|arrow_function|lambda|func_literal)$/;

/**
 * Whether a statement is inside a function's body: there a value made by a call given a function is a local (`const
 * comparators = rangeList.map((c) => …)`), not a definition, and an import is one of its statements. Named, it headed
 * the function's parts in place of the function, and the split function's parts lost their run (s15 agent #1). A
 * function that is a module's scope is no such body.
 */
function inFunctionBody(node: SyntaxNode): boolean {
  for (let parent = node.parent; parent; parent = parent.parent)
    if (FUNCTION_NODES.test(parent.type) && !isModuleScope(parent)) return true;
  return false;
}

/**
 * A function that runs once as a module's scope: one called where it is written (`(function () { … })()`, `!function
 * () { … }()`, `(function () { … }).call(this)`), or a module factory given to such a function or to AMD's `define`
 * (UMD). Pre-ES-module libraries keep their definitions there; counted as a body, their `X.prototype = { … }` lost
 * its heading.
 */
function isModuleScope(fn: SyntaxNode): boolean {
  const outside = (node: SyntaxNode) => {
    let up = node.parent;
    while (up && (up.type === "parenthesized_expression" || up.type === "unary_expression")) up = up.parent;
    return up;
  };
  const up = outside(fn);
  // Its callee (an argument's parent is `arguments`); one that returns a function makes that function, whose state
  // its variables are (returnsFunction): named, `var value` headed a part of protobufjs's `Reader.prototype.uint32`.
  if (up?.type === "call_expression") return !makesFunction(fn);
  if (up?.type === "member_expression" && calledAsThis(up)) return true;
  if (fn.parent?.type !== "arguments" || fn.parent.parent?.type !== "call_expression") return false;
  const callee = fn.parent.parent.childForFieldName("function");
  if (callee?.text === "define") return true;
  let inner = callee;
  while (inner?.type === "parenthesized_expression") inner = inner.namedChildren[0] ?? null;
  return Boolean(inner && /^(?:function_expression|function|arrow_function)$/.test(inner.type));
}

/**
 * `fn.call(…)`, `fn.apply(…)` or `fn.bind(…)()` where it is written: CoffeeScript's and underscore's module wrapper,
 * and the bound form of it.
 */
function calledAsThis(member: SyntaxNode): boolean {
  const property = member.childForFieldName("property")?.text;
  const call = member.parent;
  const calls = (outer: SyntaxNode | null, callee: SyntaxNode) =>
    outer?.type === "call_expression" && outer.childForFieldName("function")?.endIndex === callee.endIndex;
  if (!calls(call, member)) return false;
  return property === "call" || property === "apply" || (property === "bind" && calls(call!.parent, call!));
}

/**
 * A value that defines code rather than data: a call given a function (`forwardRef((props, ref) => …)`, `memo(…)`,
 * zod's `core.$constructor("$ZodURL", (inst, def) => {…})`, `createSlice({ reducers: {…} })` through its object), or an
 * object with methods (`Parser.prototype = { feed() {…} }`). React, Vue and Redux code and prototype-style libraries
 * define most of their units so; unnamed, 19 of zod's constructors were fragments without a heading.
 */
function madeOfFunctions(value: SyntaxNode, depth = 0): boolean {
  const type = value.type;
  if (FUNCTION_VALUES.test(type)) return true;
  if (depth >= 2) return false;
  if (type === "call_expression" || type === "new_expression") {
    const args = value.childForFieldName("arguments");
    return Boolean(args?.namedChildren.some((arg) => madeOfFunctions(arg, depth + 1)));
  }
  if (type === "object") {
    return value.namedChildren.some((member) => {
      const value = member.type === "pair" ? member.childForFieldName("value") : null;
      return member.type === "method_definition" || (value !== null && madeOfFunctions(value, depth + 1));
    });
  }
  return false;
}

/** The names a Python assignment binds: `a = 1` → a, `a = b = 1` → a, b; none for `a, b = …` or `x[k] = …`. */
function assignedNames(node: SyntaxNode | undefined): string[] {
  const names: string[] = [];
  for (let at = node; at?.type === "assignment"; at = at.childForFieldName("right") ?? undefined) {
    const target = at.childForFieldName("left");
    if (target?.type !== "identifier") return [];
    names.push(target.text);
  }
  return names;
}

/** A function as a value in the JavaScript grammars (`function` is the older grammars' function expression). */
const FUNCTION_VALUES = /^(?:function_expression|function|arrow_function|generator_function)$/;

const JS_FAMILY = new Set<CodeLanguage>(["javascript", "typescript", "tsx"]);

/**
 * A call of a function written in place that returns a function: `Reader.prototype.uint32 = (function setup() { var
 * value = …; return function read() {…}; })()`, protobufjs's way to give a method a variable of its own. Unnamed,
 * the reader's main method was in a fragment headed by the two methods after it (s27 code F1).
 */
function returnsFunction(value: SyntaxNode): boolean {
  if (value.type !== "call_expression") return false;
  let callee = value.childForFieldName("function");
  while (callee?.type === "parenthesized_expression") callee = callee.namedChildren[0] ?? null;
  return Boolean(callee && FUNCTION_VALUES.test(callee.type) && makesFunction(callee));
}

/** Whether a function's body returns a function written there (`return function read() {…}`, `() => () => …`). */
function makesFunction(fn: SyntaxNode): boolean {
  const body = fn.childForFieldName("body");
  if (!body || FUNCTION_VALUES.test(body.type)) return Boolean(body);
  return body.namedChildren.some(
    (statement) => statement.type === "return_statement" && FUNCTION_VALUES.test(statement.namedChildren[0]?.type ?? ""),
  );
}

const MACRO = /^[A-Z_][A-Z0-9_]*$/;

/**
 * A prototype whose name a portability macro wraps, which the C grammar cannot know: bzip2's
 * `BZ_API(BZ2_bzCompressInit)(…)` parses as a call of `BZ_API` whose one parameter is the name, and zlib's
 * K&R-compatible `zlibVersion OF((void))` as a function `OF` returning the type `zlibVersion`. Both were headed by
 * the macro (s15 agent #2).
 */
function macroWrappedName(node: SyntaxNode, declarator: SyntaxNode): string | null {
  const inner = declarator.childForFieldName("declarator");
  if (inner?.type === "function_declarator" && MACRO.test(inner.childForFieldName("declarator")?.text ?? "")) {
    const parameters = inner.childForFieldName("parameters")?.namedChildren ?? [];
    const only = parameters.length === 1 ? parameters[0]!.namedChildren : [];
    return only.length === 1 && only[0]!.type === "type_identifier" ? only[0]!.text : null;
  }
  const type = node.childForFieldName("type");
  const doubled = declarator.childForFieldName("parameters")?.text.replace(/\s+/g, "").startsWith("((");
  return MACRO.test(inner?.text ?? "") && doubled && type?.type === "type_identifier" ? type.text : null;
}

/**
 * The name of a K&R-compatible prototype that macros before it split in two (`ZEXTERN int ZEXPORT deflate
 * OF((z_streamp strm, int flush));` parses as `ZEXPORT deflate;` and `OF ((…));`): the second part, a macro and a
 * doubled parenthesis, takes the name the first part ends with.
 */
function splitPrototypeName(node: SyntaxNode, declarator: SyntaxNode | null): string | null {
  const type = node.childForFieldName("type");
  if (!MACRO.test(type?.text ?? "") || declarator?.type !== "parenthesized_declarator" || !declarator.text.startsWith("((")) return null;
  return nameBefore(node);
}

/**
 * The same, where the grammar read the second part otherwise: as an error node that opens with the macro and its
 * doubled parenthesis (`OF((z_streamp strm,` ending a line, `OF((gzFile file, int level, int strategy))`), or as a
 * call of the macro (`OF((Bytef *dest, uLongf *destLen,` and a line more). zlib.h's deflateTune, deflatePending,
 * gzsetparams, compress and a dozen more were prototypes without a name (s26 agent F6).
 */
function brokenPrototypeName(node: SyntaxNode, type: string): string | null {
  if (type === "ERROR") {
    const [macro, open, inner] = [node.child(0), node.child(1), node.child(2)];
    if (macro?.type !== "type_identifier" || !MACRO.test(macro.text) || open?.type !== "(" || inner?.type !== "(") return null;
    return nameBefore(node);
  }
  const call = node.namedChildren[0];
  if (call?.type !== "call_expression" || !MACRO.test(call.childForFieldName("function")?.text ?? "")) return null;
  return call.childForFieldName("arguments")?.text.startsWith("((") ? nameBefore(node) : null;
}

/** The name `ZEXPORT deflate;` ends with, when that part of a split prototype is right before `node` on its line. */
function nameBefore(node: SyntaxNode): string | null {
  const before = node.previousNamedSibling;
  const name =
    before?.type === "declaration" && before.endPosition.row === node.startPosition.row ? before.childForFieldName("declarator") : null;
  return name?.type === "identifier" ? name.text : null;
}

/**
 * Blocks at a file's top that only decide whether what they hold is defined: C's include guards and `#ifdef`s,
 * `extern "C" {…}`, Python's `if sys.platform …:` and `try: import … except ImportError:`. A header is one include
 * guard, so its prototypes went unnamed. Named by what they define (CONDITIONAL_PARTS are their inner blocks).
 */
const CONDITIONAL = new Set(["preproc_ifdef", "preproc_if", "linkage_specification", "if_statement", "try_statement"]);
const CONDITIONAL_PARTS = new Set([
  ...CONDITIONAL,
  "preproc_else",
  "preproc_elif",
  "declaration_list",
  "block",
  "else_clause",
  "elif_clause",
  "except_clause",
  "finally_clause",
]);
const TOP_LEVEL = new Set(["translation_unit", "module", ...CONDITIONAL_PARTS]);
/** The blocks of a conditional in the C-like grammars (`if (x) { … }`), whose definitions `defined` looks into too. */
const BRACED_BLOCKS = new Set(["statement_block", "compound_statement"]);

/** The labels of the definitions within a conditional block, each once (`def open_console` in both branches). */
function definedWithin(node: SyntaxNode, language: CodeLanguage, depth = 0): string | null {
  const labels = new Set<string>();
  for (const child of node.namedChildren) {
    const type = child.type;
    if (type === "preproc_def" && !child.childForFieldName("value")) continue; // the guard's own `#define API_H`
    const label = CONDITIONAL_PARTS.has(type)
      ? depth < 6
        ? definedWithin(child, language, depth + 1)
        : null
      : labelOf(child, language, type);
    if (label) labels.add(label);
  }
  return labels.size ? [...labels].join(", ") : null;
}

/** The declaration inside TypeScript's `declare …` (its only named child but comments; the grammar gives no field). */
function ambientInner(node: SyntaxNode): SyntaxNode | null {
  return node.namedChildren.find((c) => !COMMENT.test(c.type)) ?? null;
}

/** `declare const x: T`, `declare let a: A, b: B`: `const x`, `let a, b`; `function f` when typed as a function. */
function declaredVariables(node: SyntaxNode): string | null {
  const declarators = node.namedChildren.filter((c) => c.type === "variable_declarator");
  const names = declarators.map((d) => d.childForFieldName("name")?.text).filter((n): n is string => !!n);
  if (names.length === 0) return null;
  const typed = declarators[0]!.childForFieldName("type")?.namedChildren[0]?.type;
  if (names.length === 1 && typed === "function_type") return `function ${names[0]}`;
  return `${declarationKeyword(node)} ${names.join(", ")}`;
}

/** A declaration's own keyword, `const`, `let` or `var`: a heading that says `const out` for `var out = {…}` sends a
 * grep for the heading nowhere (s22 agent #2). */
function declarationKeyword(node: SyntaxNode): string {
  return node.child(0)?.text ?? "const";
}

function functionName(node: SyntaxNode, language: CodeLanguage): string | null {
  const name = node.childForFieldName("name");
  if (name) return name.text;
  if (language === "c" || language === "cpp") return declaratorName(node.childForFieldName("declarator"));
  return null;
}

/** C and C++ bury a function's name in nested declarators: `*f(int)`, `Foo::bar() const`. */
function declaratorName(node: SyntaxNode | null): string | null {
  let current = node;
  for (let depth = 0; current && depth < 8; depth++) {
    if (/identifier$|^qualified_identifier$|^operator_name$|^destructor_name$/.test(current.type)) return current.text;
    current = current.childForFieldName("declarator") ?? current.namedChildren.find((c) => /declarator|identifier/.test(c.type)) ?? null;
  }
  return null;
}

/**
 * The node whose children are a unit's inner units: its `body` (a class body, a function's block), the
 * definition inside a decorator or export, or the node itself (an `#ifdef` block, a Ruby class, a `try` with its
 * handlers).
 */
function bodyOf(node: SyntaxNode): SyntaxNode {
  let current = node;
  for (let depth = 0; depth < 4; depth++) {
    const type = current.type; // a call into the parser's wasm: read once
    const inner =
      type === "decorated_definition"
        ? current.childForFieldName("definition")
        : type === "export_statement"
          ? current.childForFieldName("declaration")
          : type === "template_declaration"
            ? (current.namedChildren.at(-1) ?? null)
            : type === "ambient_declaration"
              ? ambientInner(current)
              : type === "lexical_declaration" || type === "variable_declaration" || type === "expression_statement"
                ? (current.namedChildren.find((c) => c.type === "variable_declarator")?.childForFieldName("value") ??
                  current.namedChildren[0] ??
                  null)
                : type === "variable_declarator" || type === "public_field_definition" || type === "field_definition"
                  ? current.childForFieldName("value")
                  : type === "assignment_expression" // `Parser.prototype = { feed: function … }`: the object's members
                    ? current.childForFieldName("right")
                    : null;
    if (inner) {
      current = inner;
      continue;
    }
    break;
  }
  const body = current.childForFieldName("body");
  // A statement whose body is one clause of several (`try` with `except`/`else`, `for … else`) splits at its
  // clauses: the definitions are often in a later one (`try: import ssl … else: class FTP_TLS`).
  if (body && clausesAfter(current, body)) return current;
  if (body) return body.type === "body_statement" || body.namedChildCount > 0 ? body : current;
  // Arrow functions' and class expressions' bodies, Ruby classes (children directly), `#ifdef` blocks.
  return current;
}

/** Whether a named child follows `body` inside `node` (a handler, an `else`, a `finally`). */
function clausesAfter(node: SyntaxNode, body: SyntaxNode): boolean {
  return node.namedChildren.some((child) => child.startIndex >= body.endIndex && !COMMENT.test(child.type));
}

/**
 * The walk's functions stay below JavaScriptCore's top tier (FTL; with Chunker's methods, in its static block). A
 * conversion worker walks each tree once, a second or so of JavaScript in all per index run, and each of these
 * functions calls the parser's node accessors, which FTL inlines into it: compiling `labelOf` alone took it about a
 * second, and the walk's FTL compiles cost each worker more CPU than their code saved. The tiers below (DFG) compile
 * them in milliseconds. Measured on the 668 Python files of /usr/lib/python3.11 (docs/benchmarks.md, "Code").
 */
const WALK = [
  namesItsParts,
  unitPart,
  join,
  overloads,
  declared,
  merge,
  endRow,
  hasContent,
  firstContent,
  lastContent,
  withLabel,
  mostTelling,
  isAttachable,
  isIncludeGuard,
  headingLabel,
  labelOf,
  atModuleLevel,
  isRequire,
  inFunctionBody,
  isModuleScope,
  calledAsThis,
  madeOfFunctions,
  assignedNames,
  returnsFunction,
  makesFunction,
  macroWrappedName,
  splitPrototypeName,
  brokenPrototypeName,
  nameBefore,
  definedWithin,
  ambientInner,
  declaredVariables,
  declarationKeyword,
  functionName,
  declaratorName,
  bodyOf,
  clausesAfter,
];
for (const walk of WALK) noFTL(walk);
