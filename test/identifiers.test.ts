import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { expandQueryWord, identifierParts, splitIdentifier } from "../src/identifiers.ts";
import { ftsText } from "../src/text.ts";

test("splitIdentifier: camel, Pascal, snake, kebab, acronyms, digits", () => {
  for (const word of ["parseHeader", "parse_header", "ParseHeader", "parse-header", "PARSE_HEADER"])
    expect(splitIdentifier(word)).toEqual(["parse", "header"]);
  expect(splitIdentifier("HTTPServer")).toEqual(["http", "server"]);
  expect(splitIdentifier("XMLHttpRequest")).toEqual(["xml", "http", "request"]);
  expect(splitIdentifier("parseHTTPHeaders")).toEqual(["parse", "http", "headers"]);
  expect(splitIdentifier("utf8Decode")).toEqual(["utf8", "decode"]);
  expect(splitIdentifier("__init__")).toEqual([]);
  expect(splitIdentifier("simple")).toEqual([]);
});

test("identifierParts: each distinct compound word once, one-letter parts dropped", () => {
  expect(identifierParts("x = parseHeader(h); parseHeader(g); getX(); class HTTPServer extends Base {}")).toBe("parse header http server");
  expect(identifierParts("plain prose, snake_case and kebab-case")).toBe("");
  expect(ftsText("no compounds")).toBe("no compounds");
});

test("expandQueryWord keeps the word and adds its parts", () => {
  expect(expandQueryWord("parseHeader")).toEqual(["parseHeader", "parse", "Header"]);
  expect(expandQueryWord("parse")).toEqual(["parse"]);
});

test("FTS5: 'parse header' and 'parseHeader' both find parseHeader; parse_header is found by both too", () => {
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE f USING fts5(body, content='', tokenize='porter unicode61 remove_diacritics 2')");
  const docs = [
    "function parseHeader(line) { return line.split(':'); }",
    "def parse_header(line):\n    return line",
    "function other() {}",
  ];
  docs.forEach((d, i) => {
    db.query("INSERT INTO f(rowid, body) VALUES (?, ?)").run(i, ftsText(d));
  });
  const ids = (match: string) =>
    db
      .query<{ id: number }, [string]>("SELECT rowid AS id FROM f WHERE f MATCH ? ORDER BY rank")
      .all(match)
      .map((r) => r.id);
  expect(ids('"parse" AND "header"')).toEqual(expect.arrayContaining([0, 1]));
  expect(ids('"parse header"')).toEqual(expect.arrayContaining([0, 1])); // as a phrase too
  expect(ids('"parseHeader"')).toEqual([0]);
  // The query side: parseHeader also searches its parts (OR), so the snake_case one is found, ranked after.
  const expanded = expandQueryWord("parseHeader")
    .map((w) => `"${w}"`)
    .join(" OR ");
  expect(ids(expanded)).toEqual([0, 1]);
});
