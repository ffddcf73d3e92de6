/** The text inside machine-written XML (DOCX core properties, EPUB package and navigation files), without a parser. */
import { own } from "../own.ts";

/** An element's text: markup stripped, the five XML entities and character references decoded, spaces collapsed. */
export function xmlText(xml: string): string {
  return decodeXmlEntities(xml.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, "$1").replace(/<[^>]*>/g, ""))
    .replace(/\s+/g, " ")
    .trim();
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
