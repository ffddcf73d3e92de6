/**
 * Identifiers as words. FTS5's unicode61 tokenizer already splits `parse_header` and `parse-header` (`_` and `-`
 * are separators), but keeps `parseHeader`, `ParseHeader` and `HTTPServer` whole, so the query "parse header"
 * never finds them. The index therefore also receives the parts of every compound word of a text (appended after
 * it, once per distinct word; FTS5 is contentless, so nobody sees them), and a query word written as a compound
 * also searches its parts. The whole word is kept on both sides, so `parseHeader` still finds itself first. A
 * snake_case word is also indexed whole, joined (`parse_header` → `parseheader`, the token `parseHeader` is): the
 * identifier written either way finds both spellings before the words that merely contain its parts.
 */

/**
 * The version of what the index receives for identifiers. An index records it with its chunking settings, so a
 * release that adds words (version 2: snake_case joined) reads its code files again, as a new chunk size does.
 */
export const IDENTIFIER_VERSION = 2;

/** Where a word has a case change inside it: `parseH`, `HTTPServer` (before `Se`), `utf8Decode`. */
const CAMEL = /[\p{Ll}\p{N}]\p{Lu}|\p{Lu}\p{Lu}\p{Ll}/u;
const CASE_CHANGE = new RegExp(CAMEL.source, "gu");
/** A letter, digit or mark: what the index's tokenizer keeps inside one token (fts.ts FTS_TOKENIZE). */
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

/**
 * The words of an identifier, lower case: `parseHeader`, `parse_header`, `ParseHeader`, `parse-header` →
 * [parse, header]; `HTTPServer` → [http, server]; `XMLHttpRequest2` → [xml, http, request2]. Digits stay with the
 * letters before them (`utf8`, `sha256`, `int32`). A word that is not compound gives [].
 */
export function splitIdentifier(identifier: string): string[] {
  const parts = identifier
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .flatMap(splitCamel)
    .map((p) => p.toLowerCase())
    .filter(Boolean);
  return parts.length > 1 ? parts : [];
}

function splitCamel(word: string): string[] {
  if (!CAMEL.test(word)) return [word];
  return (
    word
      // lower or digit → Upper: parse|Header, utf8|Decode
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1\u0000$2")
      // Upper → Upper lower: HTTP|Server
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1\u0000$2")
      .split("\u0000")
  );
}

/**
 * The extra words the index holds for a text: the parts of each distinct compound word, space-separated (parts
 * of one letter are left out: they match nearly everything). Empty when the text has no compound word.
 */
export function identifierParts(text: string): string {
  const seen = new Set<string>();
  const out: string[] = [];
  // Found from their case changes, then widened to the whole word: a pass over every word of the text cost an
  // index run of prose (SciFact) as much as reading its files.
  let end = 0;
  for (const match of text.matchAll(CASE_CHANGE)) {
    if (match.index < end) continue; // another case change in a word already taken
    let start = match.index;
    while (start > 0 && WORD_CHAR.test(text[start - 1]!)) start--;
    end = match.index + match[0].length;
    while (end < text.length && WORD_CHAR.test(text[end]!)) end++;
    const word = text.slice(start, end);
    if (word.length < 4 || seen.has(word)) continue;
    seen.add(word);
    const parts = splitCamel(word).filter((p) => p.length > 1);
    if (parts.length > 1) out.push(parts.join(" ").toLowerCase());
  }
  if (text.includes("_")) out.push(...snakeWords(text));
  return out.join(" ");
}

/** A snake_case identifier: words of letters, digits and marks (`सूची_नाम`) joined by underscores. */
export const SNAKE = /[\p{L}\p{N}\p{M}]+(?:_[\p{L}\p{N}\p{M}]+)+/gu;

/**
 * The snake_case words of a text, each once, joined and lower case: `parse_header` → `parseheader`. A query word
 * searches these too.
 */
export function snakeWords(text: string): string[] {
  const joined = new Set<string>();
  for (const [word] of text.matchAll(SNAKE)) {
    const whole = word.replaceAll("_", "").toLowerCase();
    if (whole.length >= 4) joined.add(whole);
  }
  return [...joined];
}

/** A query word and what it also searches: `parseHeader` → [parseHeader, parse, header]; `parse` → [parse]. */
export function expandQueryWord(word: string): string[] {
  const parts = CAMEL.test(word) ? splitCamel(word).filter((p) => p.length > 1) : [];
  return parts.length > 1 ? [word, ...parts] : [word];
}
