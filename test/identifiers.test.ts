import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { expandQueryWord, identifierParts, splitIdentifier } from "../src/identifiers.ts";
import { ftsText } from "../src/text.ts";
import { FTS_TOKENIZE } from "../src/store/fts.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search } from "../src/search/search.ts";
import { tempDir, writeTree } from "./helpers.ts";

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
  // snake_case is split by the tokenizer already; its whole word is added, joined (kebab-case is prose as often).
  expect(identifierParts("plain prose, snake_case and kebab-case, x_y, parse_header and parse_header")).toBe("snakecase parseheader");
  // A word's marks are part of it, as in the index (s26 review F1): a Hindi snake_case name is joined whole.
  expect(identifierParts("सूची_नाम")).toBe("सूचीनाम");
  expect(ftsText("no compounds")).toBe("no compounds");
});

test("expandQueryWord keeps the word and adds its parts", () => {
  expect(expandQueryWord("parseHeader")).toEqual(["parseHeader", "parse", "Header"]);
  expect(expandQueryWord("parse")).toEqual(["parse"]);
});

test("FTS5: 'parse header' and 'parseHeader' both find parseHeader; parse_header is found by both too", () => {
  const db = new Database(":memory:");
  db.run(`CREATE VIRTUAL TABLE f USING fts5(body, content='', ${FTS_TOKENIZE})`);
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
  // The whole identifier finds it written either way: parse_header is indexed joined, as parseHeader is.
  expect(ids('"parseHeader"')).toEqual(expect.arrayContaining([0, 1]));
  const expanded = expandQueryWord("parseHeader")
    .map((w) => `"${w}"`)
    .join(" OR ");
  expect(ids(expanded)).toEqual(expect.arrayContaining([0, 1]));
});

test("a snake_case identifier finds itself before shorter text that merely holds its words (parseHttpHeaders, a comment)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    // The function sits among other code: its file is longer than the ones that only mention its words.
    "a.py": `import os\nimport sys\n\n${Array.from({ length: 12 }, (_, i) => `def step_${i}(value):\n    return value + ${i}\n`).join("\n")}\ndef parse_header(line):\n    name, value = line.split(":", 1)\n    return name.strip(), value.strip()\n`,
    "b.py": "def read(lines):\n    # parse each header\n    return [parse(h) for h in lines]\n",
    "c.php": "<?php function parseHttpHeaders($raw) { return parse($raw); }\n",
  });
  const repo = registerRepository(home, { name: "code", path: docs, embed: false, fileTypes: ["py", "php"] });
  await indexRepository(home, repo);
  const first = async (query: string) => (await search(home, { query, mode: "bm25" })).results[0]?.path;
  expect(await first("parse_header")).toBe("a.py");
  expect(await first("parseHeader")).toBe("a.py");
});
