/**
 * src/store/ owns every SQL statement: the stages above ask the store for rows and never talk to SQLite. Each
 * module outside src/store/ is parsed (the TypeScript compiler's parser, so comments and regular expressions are
 * not mistaken for strings) and searched for what talking to SQLite takes: importing bun:sqlite, calling a
 * statement method, or writing SQL in a string.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers.ts";

/** Methods of bun:sqlite's Database and Statement that take or run SQL. */
const STATEMENT_METHODS = new Set(["prepare", "query", "run"]);

/**
 * SQL as this code base writes it (keywords in capitals): statements, and the parts of a WHERE clause that FTS5's
 * query syntax (search/query.ts builds MATCH expressions: AND, OR, NOT and NEAR) never has.
 */
const SQL = new RegExp(
  [
    /\bSELECT\s/,
    /\bINSERT\s+(OR\s+\w+\s+)?INTO\b/,
    /\bUPDATE\s+\w+\s+SET\b/,
    /\bDELETE\s+FROM\b/,
    /\b(CREATE|DROP)\s+(TABLE|INDEX|VIRTUAL|TRIGGER|TEMP|UNIQUE)\b/,
    /\bALTER\s+TABLE\b/,
    /\bPRAGMA\s/,
    /\bBEGIN\s+(IMMEDIATE|EXCLUSIVE|DEFERRED)\b/,
    /^(BEGIN|COMMIT|ROLLBACK)$/,
    /\b(NOT|EXISTS|IN)\s*\(/,
    /\bIS\s+(NOT\s+)?NULL\b/,
    /\bMATCH\s+\?/,
  ]
    .map((pattern) => pattern.source)
    .join("|"),
);

/** Where SQLite is used outside src/store/, as `file:line: what`. */
function sqlOutsideStore(file: string, source: string): string[] {
  const found: string[] = [];
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const at = (node: ts.Node, what: string) =>
    found.push(`${file}:${parsed.getLineAndCharacterOfPosition(node.getStart(parsed)).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      const target = (node.moduleSpecifier as ts.StringLiteral).text;
      if (target === "bun:sqlite") at(node, "imports bun:sqlite");
      return; // a module path is no SQL
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const first = node.arguments[0];
      const literal = first && (ts.isStringLiteral(first) || ts.isTemplateLiteral(first));
      // RegExp has exec too: only a statement's text as the argument makes it SQLite's.
      if (STATEMENT_METHODS.has(method) || (method === "exec" && literal)) at(node, `calls .${method}(`);
    }
    const texts =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? [node.text]
        : ts.isTemplateExpression(node)
          ? [node.head.text, ...node.templateSpans.map((span) => span.literal.text)]
          : [];
    for (const text of texts) {
      const match = SQL.exec(text);
      if (match) at(node, `SQL in a string (${match[0].trim()}): ${JSON.stringify(text.slice(0, 60))}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(parsed);
  return found;
}

const outsideStore = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
  .filter((path) => path.endsWith(".ts") && !path.startsWith("store/"))
  .sort();

test("no SQL outside src/store/: no bun:sqlite import, statement call or SQL string", () => {
  const found = outsideStore.flatMap((path) => sqlOutsideStore(`src/${path}`, readFileSync(join(ROOT, "src", path), "utf8")));
  expect(found).toEqual([]);
});

test("the check finds each kind of SQL use it looks for, and not a regular expression's exec or an FTS5 query", () => {
  const source = [
    'import { Database } from "bun:sqlite";',
    'store.db.query("SELECT 1").get();',
    'db.run("BEGIN IMMEDIATE");',
    `const where = \`d.id IN (\${ids})\`;`,
    "const match = words.join(' OR ');",
    "/^(\\d+)$/.exec(text);",
    "// SELECT in a comment is prose",
    'const message = "select a repository";',
  ].join("\n");
  expect(sqlOutsideStore("example.ts", source)).toEqual([
    "example.ts:1: imports bun:sqlite",
    "example.ts:2: calls .query(",
    'example.ts:2: SQL in a string (SELECT): "SELECT 1"',
    "example.ts:3: calls .run(",
    'example.ts:3: SQL in a string (BEGIN IMMEDIATE): "BEGIN IMMEDIATE"',
    'example.ts:4: SQL in a string (IN (): "d.id IN ("',
  ]);
});
