/**
 * A clone without ../shared beside it skips the tests that need its models and corpora, each saying so, instead of
 * failing them (README, "Development"). CI always has ../shared, so no run there would notice a test that forgot its
 * guard: this reads every test file and checks that a test or a describe block that uses ../shared (directly, or
 * through a function or value of its file that does) is declared with `testShared` or `describeShared`, or sits
 * inside one. What it cannot see: a test that needs vectors from the default model every CLI run is given
 * (`MODEL_ENV` in runCli) without naming it; those are guarded by hand, and a run of the suite in a clone without
 * ../shared (0 failures on 2026-11-26) is the check.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers.ts";

/** What the fixtures export that points into ../shared. */
const SHARED_NAMES = ["SHARED", "GLOVE", "gloveThroughOnnx", "writeGloveThroughOnnx", "SCANNED"];
const GUARDS = new Set(["describeShared", "testShared"]);
const TESTS = new Set(["test", "it"]);
/** Files that define the guards and fixtures themselves. */
const FIXTURE_FILES = new Set(["helpers.ts", "model-fixtures.ts", "pdf-fixtures.ts"]);

/** A node that opens a scope: names declared directly in it are seen only inside it. */
function isScope(node: ts.Node): boolean {
  return (
    ts.isSourceFile(node) ||
    ts.isBlock(node) ||
    ts.isFunctionLike(node) ||
    ts.isForStatement(node) ||
    ts.isForOfStatement(node) ||
    ts.isForInStatement(node) ||
    ts.isCatchClause(node) ||
    ts.isCaseBlock(node)
  );
}

/** Where each name is declared, by scope: variables (destructured ones too), functions, classes, parameters, imports. */
function declarations(file: ts.SourceFile): Map<ts.Node, Map<string, ts.Node>> {
  const scopes = new Map<ts.Node, Map<string, ts.Node>>();
  const scopeOf = (node: ts.Node): ts.Node => {
    let at = node.parent;
    // A function's own name belongs to the scope around it; its parameters to the function.
    if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && at) at = at.parent ?? at;
    while (at && !isScope(at)) at = at.parent;
    return at ?? file;
  };
  const declare = (name: ts.Node, declaration: ts.Node, scope: ts.Node) => {
    if (ts.isIdentifier(name)) {
      if (!scopes.has(scope)) scopes.set(scope, new Map());
      scopes.get(scope)!.set(name.text, declaration);
    } else if (ts.isObjectBindingPattern(name) || ts.isArrayBindingPattern(name)) {
      for (const element of name.elements) if (ts.isBindingElement(element)) declare(element.name, declaration, scope);
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) || ts.isParameter(node)) declare(node.name, node, scopeOf(node));
    else if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && node.name) declare(node.name, node, scopeOf(node.name));
    else if (ts.isImportSpecifier(node) || ts.isImportClause(node) || ts.isNamespaceImport(node)) {
      if (node.name) declare(node.name, node, file);
    }
    node.forEachChild(visit);
  };
  visit(file);
  return scopes;
}

/** The declaration an identifier refers to: the nearest scope around it that declares its name. */
function resolve(id: ts.Identifier, scopes: Map<ts.Node, Map<string, ts.Node>>): ts.Node | undefined {
  for (let at: ts.Node | undefined = id; at; at = at.parent) {
    const found = isScope(at) ? scopes.get(at)?.get(id.text) : undefined;
    if (found) return found;
  }
  return undefined;
}

function referencedDeclarations(node: ts.Node, scopes: Map<ts.Node, Map<string, ts.Node>>, found = new Set<ts.Node>()): Set<ts.Node> {
  if (ts.isIdentifier(node)) {
    const declaration = resolve(node, scopes);
    if (declaration) found.add(declaration);
  }
  node.forEachChild((child) => void referencedDeclarations(child, scopes, found));
  return found;
}

/** The declarations of a file that lead to ../shared: its imports of the fixtures' names, and what uses them, to a fixed point. */
function sharedDeclarations(scopes: Map<ts.Node, Map<string, ts.Node>>): Set<ts.Node> {
  const all = [...scopes.values()].flatMap((names) => [...names.values()]);
  const shared = new Set(
    all.filter((d) => (ts.isImportSpecifier(d) || ts.isImportClause(d)) && d.name && SHARED_NAMES.includes(d.name.text)),
  );
  for (let grew = true; grew; ) {
    grew = false;
    for (const declaration of all) {
      if (shared.has(declaration) || ts.isImportSpecifier(declaration) || ts.isImportClause(declaration)) continue;
      const refs = referencedDeclarations(declaration, scopes);
      refs.delete(declaration);
      if (![...refs].some((r) => shared.has(r))) continue;
      shared.add(declaration);
      grew = true;
    }
  }
  return shared;
}

/** `test`, `describe`, `test.skipIf(x)`, `describe.each(rows)`…: the runner function a call declares with. */
function runnerOf(call: ts.CallExpression): string | undefined {
  let callee: ts.Expression = call.expression;
  for (;;) {
    if (ts.isIdentifier(callee)) return callee.text;
    if (ts.isPropertyAccessExpression(callee)) callee = callee.expression;
    else if (ts.isCallExpression(callee)) callee = callee.expression;
    else return undefined;
  }
}

/** The tests and describe blocks of `source` that use ../shared without a guard, as `file:line label`. */
export function unguarded(name: string, source: string): string[] {
  const file = ts.createSourceFile(name, source, ts.ScriptTarget.Latest, true);
  const scopes = declarations(file);
  const shared = sharedDeclarations(scopes);
  const uses = (node: ts.Node) => [...referencedDeclarations(node, scopes)].some((d) => shared.has(d));
  const offenders: string[] = [];
  const report = (call: ts.CallExpression) => {
    const line = file.getLineAndCharacterOfPosition(call.getStart()).line + 1;
    const label = call.arguments[0] && ts.isStringLiteralLike(call.arguments[0]) ? call.arguments[0].text : "";
    offenders.push(`${name}:${line} ${label}`);
  };
  const visit = (node: ts.Node, guarded: boolean): void => {
    const runner = ts.isCallExpression(node) ? runnerOf(node) : undefined;
    if (runner && GUARDS.has(runner)) guarded = true;
    else if (!guarded && runner && ts.isCallExpression(node)) {
      // A test is checked whole; a describe block by its own statements (hooks, fixtures run for every test in it),
      // and then its tests one by one.
      const body = node.arguments.find((a) => ts.isArrowFunction(a) || ts.isFunctionExpression(a));
      const offends = (TESTS.has(runner) && uses(node)) || (runner === "describe" && body && collectOwn(body).some(uses));
      if (offends) {
        report(node);
        return;
      }
    }
    node.forEachChild((child) => visit(child, guarded));
  };
  visit(file, false);
  return offenders;
}

/** A describe callback's statements that are not themselves test or describe declarations. */
function collectOwn(body: ts.Node): ts.Node[] {
  const block = (ts.isArrowFunction(body) || ts.isFunctionExpression(body)) && ts.isBlock(body.body) ? body.body : undefined;
  return (block?.statements ?? []).filter((statement) => {
    const call = ts.isExpressionStatement(statement) && ts.isCallExpression(statement.expression) ? statement.expression : undefined;
    const runner = call && runnerOf(call);
    return !runner || !(TESTS.has(runner) || runner === "describe" || GUARDS.has(runner));
  });
}

function testFiles(dir = join(ROOT, "test")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".ts") && !FIXTURE_FILES.has(entry.name) ? [path] : [];
  });
}

test("every test that uses ../shared is declared with testShared or describeShared (or inside one)", () => {
  const offenders = testFiles().flatMap((path) => unguarded(relative(ROOT, path), readFileSync(path, "utf8")));
  expect(offenders).toEqual([]);
});

test("the check sees what it checks: a test using a model directly, through a helper or through its block's fixture", () => {
  const source = [
    'import { GLOVE } from "./helpers.ts";',
    "const modelEnv = () => ({ RESEARCHER_MODEL_PATH: GLOVE });",
    'test("direct", () => use(GLOVE));',
    'test("through a helper", () => use(modelEnv()));',
    'test.skipIf(false)("through skipIf", () => use(GLOVE));',
    'describe("a block", () => { const env = modelEnv(); test("inner", () => use(env)); });',
    'testShared("guarded", () => use(GLOVE));',
    'describeShared("guarded block", () => { test("inner", () => use(GLOVE)); });',
    'test("no model", () => use("words"));',
  ].join("\n");
  expect(unguarded("x.test.ts", source)).toEqual([
    "x.test.ts:3 direct",
    "x.test.ts:4 through a helper",
    "x.test.ts:5 through skipIf",
    "x.test.ts:6 a block",
  ]);
});
