/**
 * The one reader of markdown's block structure that titles and chunks share: which lines are headings and which
 * belong to code fences. A `# comment` inside a fence is code, never a heading, for the title as for the chunks.
 */

/** A line of markdown as the block structure sees it. */
export type MarkdownBlock =
  /** An ATX heading: `level` 1–6, `text` without the `#`s and a closing sequence. */
  | { kind: "heading"; line: number; level: number; text: string }
  /** A code fence from its opening line to its closing one (inclusive; the last line when it never closes). */
  | { kind: "fence"; line: number; end: number }
  /** Any other line. */
  | { kind: "line"; line: number };

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*)$/;

/** The lines' blocks in order (indexes into `lines`). */
export function* markdownBlocks(lines: readonly string[]): Generator<MarkdownBlock> {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      const close = new RegExp(`^ {0,3}${fence[1]![0]}{${fence[1]!.length},}\\s*$`);
      const start = i;
      while (++i < lines.length && !close.test(lines[i]!));
      yield { kind: "fence", line: start, end: Math.min(i, lines.length - 1) };
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) yield { kind: "heading", line: i, level: heading[1]!.length, text: headingText(heading[2]!) };
    else yield { kind: "line", line: i };
  }
}

/**
 * A heading's text without its closing `#` sequence, stripped here rather than by the regex: the lazy
 * `(.*?)(?:[ \t]+#+)?[ \t]*$` backtracked quadratically on long runs of spaces (a 1 MB heading line never ended).
 */
function headingText(raw: string): string {
  let end = raw.length;
  while (end > 0 && (raw[end - 1] === " " || raw[end - 1] === "\t")) end--;
  let hashes = end;
  while (hashes > 0 && raw[hashes - 1] === "#") hashes--;
  if (hashes < end && hashes > 0 && (raw[hashes - 1] === " " || raw[hashes - 1] === "\t")) end = hashes;
  return raw.slice(0, end).trim();
}

/** The first H1 outside code fences, or a heading of any level that opens the document (mdBook chapters start with `##`). */
export function firstHeading(text: string): string | undefined {
  const lines = text.split(/\r?\n/);
  let opening: string | undefined;
  let first = true;
  for (const block of markdownBlocks(lines)) {
    if (block.kind === "line" && lines[block.line]!.trim() === "") continue;
    if (block.kind === "heading") {
      if (block.level === 1 && block.text) return block.text;
      if (first) opening = block.text || undefined;
    }
    first = false;
  }
  return opening;
}
