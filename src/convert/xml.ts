/** The text inside machine-written XML (DOCX core properties, EPUB package and navigation files), without a parser. */
import { own } from "../own.ts";

/** An element's text: markup stripped, the five XML entities and character references decoded, spaces collapsed. */
export function xmlText(xml: string): string {
  const unwrapped = replaceEnclosed(xml, /<!\[CDATA\[/g, /\]\]>/g, (element) => element.inner);
  return decodeXmlEntities(unwrapped.replace(/<[^<>]*>/g, ""))
    .replace(/\s+/g, " ")
    .trim();
}

/** A stretch from an opening to its close: the opening's match, what lies between, and where it starts and ends. */
export interface Enclosed {
  open: RegExpExecArray;
  inner: string;
  start: number;
  end: number;
}

/**
 * Each stretch of `text` from a match of `open` to the first match of `close` after it, in order: what the pattern
 * `open[\s\S]*?close` matches, in linear time. The lazy pattern searched to the text's end again from every opening
 * without a close (`<!--<!--…`, `<nav><nav>…`: a few KB zipped held a conversion worker for an hour, beyond its time
 * limit's reach); a close missing after one opening is missing after every later one, so here the search ends. Both
 * patterns need the `g` flag, and `open` must not itself scan past the next `<` (`[^<>]*`, not `[^>]*`).
 */
export function* enclosed(text: string, open: RegExp, close: RegExp): Generator<Enclosed> {
  open.lastIndex = 0;
  for (let match = open.exec(text); match; match = open.exec(text)) {
    const innerStart = match.index + match[0].length;
    close.lastIndex = innerStart;
    const closing = close.exec(text);
    if (!closing) return;
    const end = closing.index + closing[0].length;
    yield { open: match, inner: text.slice(innerStart, closing.index), start: match.index, end };
    open.lastIndex = end;
  }
}

/** `text` with each enclosed stretch (see `enclosed`) replaced. */
export function replaceEnclosed(text: string, open: RegExp, close: RegExp, replace: (element: Enclosed) => string): string {
  let out = "";
  let at = 0;
  for (const element of enclosed(text, open, close)) {
    out += text.slice(at, element.start) + replace(element);
    at = element.end;
  }
  return out + text.slice(at);
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

export function decodeXmlEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (entity, name: string) => {
    if (name[0] !== "#") return own(ENTITIES, name) ?? entity;
    const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  });
}

/**
 * `&name;` references to entities XML does not define escaped, so each reads as its own text (`&testent;`): an
 * entity declared in a document's DTD is never expanded (an external one is never fetched), and a parser that
 * stops at the first unknown entity loses the whole document for one word.
 */
export function escapeUndefinedEntities(xml: string): string {
  return xml.replace(/&([\p{L}_][\p{L}\p{N}_.-]*);/gu, (reference, name: string) =>
    Object.hasOwn(ENTITIES, name) ? reference : `&amp;${name};`,
  );
}
