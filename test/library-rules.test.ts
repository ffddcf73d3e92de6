/**
 * Two rules of the library (README, Architecture): it never prints, as CLI, MCP and HTTP are shells over functions
 * that return data; and it reads the environment in one module, `src/env.ts`. Each module is parsed (the TypeScript
 * compiler's parser, so comments and strings are not mistaken for code) and searched for what breaking them takes.
 * And one of its comments: a doc comment is right above what it describes.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers.ts";

/** What may print: the command line, the MCP stdio transport, and the terminal's file descriptors. */
const PRINTERS = [/^src\/cli\//, /^src\/serve\/stdio-transport\.ts$/, /^src\/terminal\.ts$/, /^src\/main\.ts$/];

/** Where the library prints or reads the environment, as `file:line: what`. */
function brokenRules(file: string, source: string): string[] {
  const found: string[] = [];
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const mayPrint = PRINTERS.some((pattern) => pattern.test(file));
  const at = (node: ts.Node, what: string) =>
    found.push(`${file}:${parsed.getLineAndCharacterOfPosition(node.getStart(parsed)).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const [object, property] = [node.expression.text, node.name.text];
      if (!mayPrint && object === "console") at(node, `prints (console.${property})`);
      if (!mayPrint && object === "process" && (property === "stdout" || property === "stderr")) at(node, `prints (process.${property})`);
      const environment = (object === "process" || object === "Bun") && property === "env";
      // Setting a variable for a native library to read (ORT_DISABLE_TELEMETRY) is no read.
      const written =
        ts.isPropertyAccessExpression(node.parent) &&
        ts.isBinaryExpression(node.parent.parent) &&
        node.parent.parent.left === node.parent &&
        node.parent.parent.operatorToken.kind === ts.SyntaxKind.EqualsToken;
      if (environment && file !== "src/env.ts" && !written) at(node, `reads the environment (${object}.env)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(parsed);
  return found;
}

const modules = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
  .filter((path) => path.endsWith(".ts"))
  .sort();

test("the library never prints, and reads the environment only in src/env.ts", () => {
  const found = modules.flatMap((path) => brokenRules(`src/${path}`, readFileSync(join(ROOT, "src", path), "utf8")));
  expect(found).toEqual([]);
});

test("the check finds printing and environment reads, and not comments, strings or a variable set for a native library", () => {
  const source = [
    'console.log("x");',
    "process.stderr.write(text);",
    "const token = process.env.TOKEN;",
    "const { HOME } = Bun.env;",
    'process.env.ORT_DISABLE_TELEMETRY = "1";',
    "// console.log in a comment",
    'const message = "process.env is read in env.ts";',
  ].join("\n");
  expect(brokenRules("src/search/example.ts", source)).toEqual([
    "src/search/example.ts:1: prints (console.log)",
    "src/search/example.ts:2: prints (process.stderr)",
    "src/search/example.ts:3: reads the environment (process.env)",
    "src/search/example.ts:4: reads the environment (Bun.env)",
  ]);
  expect(brokenRules("src/cli/commands.ts", 'console.log("x");')).toEqual([]);
});

/**
 * Doc comments directly followed by another, as `file:line`: editors and TypeScript show only the last one with the
 * declaration, and the first reads as if it described that (s24 review D6, s26 review F10).
 */
function detachedDocComments(file: string, source: string): string[] {
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found = new Set<string>();
  const isDoc = (comment: ts.CommentRange) => source.startsWith("/**", comment.pos) && comment.end - comment.pos > 4;
  const visit = (node: ts.Node): void => {
    const comments = ts.getLeadingCommentRanges(source, node.pos) ?? [];
    comments.forEach((comment, i) => {
      const next = comments[i + 1];
      // A blank line between them sets the first apart (a module's own comment above its first declaration's).
      if (next && isDoc(comment) && isDoc(next) && !/\n\s*\n/.test(source.slice(comment.end, next.pos)))
        found.add(`${file}:${parsed.getLineAndCharacterOfPosition(comment.pos).line + 1}`);
    });
    ts.forEachChild(node, visit);
  };
  visit(parsed);
  return [...found];
}

test("every doc comment is right above what it describes: none is directly followed by another", () => {
  const found = modules.flatMap((path) => detachedDocComments(`src/${path}`, readFileSync(join(ROOT, "src", path), "utf8")));
  expect(found).toEqual([]);
});

test("the check finds a doc comment followed by another, in a class too, and not one set apart or in a string", () => {
  const source = [
    "/** The module. */",
    "",
    "/** Detached. */",
    "/** Of MAX. */",
    "const MAX = 4;",
    "class A {",
    "  /** Detached too. */",
    "  /** Of run. */",
    "  run(): void {}",
    "}",
    'const text = "/** a */\\n/** b */";',
    "/* a plain comment */",
    "/** Of f. */",
    "function f(): void {}",
  ].join("\n");
  expect(detachedDocComments("src/example.ts", source)).toEqual(["src/example.ts:3", "src/example.ts:7"]);
});

/** The comment lines of a module past the 120 columns its code keeps (Biome wraps code, not comments), as `file:line`. */
function wideComments(file: string, source: string): string[] {
  return source.split("\n").flatMap((line, i) => (line.length > 120 && /^\s*(\/\/|\*|\/\*)/.test(line) ? [`${file}:${i + 1}`] : []));
}

test("comments keep to the 120 columns the code keeps (s27 review D7)", () => {
  const found = modules.flatMap((path) => wideComments(`src/${path}`, readFileSync(join(ROOT, "src", path), "utf8")));
  expect(found).toEqual([]);
  expect(wideComments("src/example.ts", [` * ${"word ".repeat(30)}`, ` * ${"word ".repeat(20)}`].join("\n"))).toEqual(["src/example.ts:1"]);
});
