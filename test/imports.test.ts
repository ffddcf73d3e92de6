/**
 * The import structure of src/: no circles between files, and folder edges only down the pipeline stages
 * (docs/design.md, "Modules"). Every import counts, static, dynamic and type-only: a type import still ties a
 * module to the stage it comes from.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers.ts";

const SRC = join(ROOT, "src");

/** Each stage folder and the stage folders it may import; every folder may import the leaves at src/. */
const STAGES: Record<string, string[]> = {
  cli: ["serve", "index", "search", "convert", "embed", "store"],
  serve: ["index", "search", "convert", "embed", "store"],
  index: ["search", "convert", "embed", "store"],
  search: ["convert", "embed", "store"],
  embed: ["store"],
  convert: [],
  store: [],
};

/** Files at src/ that are entry points, not leaves: they may import any stage, and nothing in src/ imports them. */
const ENTRY_POINTS = new Set(["index.ts", "main.ts"]);

/** Every .ts file under src/, relative to it. */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(SRC, path)] : [];
  });
}

/**
 * The files under src/ that `file` imports, by TypeScript's own scanner (comments and strings are not imports).
 * Packages and files outside src/ (package.json) are not part of the structure.
 */
export function importsOf(file: string, source: string): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  return importedFiles
    .map((ref) => ref.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => {
      const target = resolve(SRC, dirname(file), name);
      if (!existsSync(target)) throw new Error(`${file}: import of a missing file ${name}`);
      return relative(SRC, target);
    })
    .filter((target) => !target.startsWith(".."));
}

function importGraph(): Map<string, string[]> {
  return new Map(sourceFiles().map((file) => [file, importsOf(file, readFileSync(join(SRC, file), "utf8"))]));
}

/**
 * One circle per strongly connected group of files (Tarjan), as the shortest path that closes it, a → b → a, and
 * the group's files when it holds more circles.
 */
export function circles(graph: Map<string, string[]>): string[] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[] = [];
  const visit = (file: string) => {
    order.set(file, order.size);
    low.set(file, order.get(file)!);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(file, Math.min(low.get(file)!, order.get(next)!));
    }
    if (low.get(file) !== order.get(file)) return;
    const group = stack.splice(stack.indexOf(file));
    if (group.length < 2 && !graph.get(file)?.includes(file)) return;
    const path = closingPath(graph, new Set(group), file);
    found.push(group.length > path.split(" → ").length - 1 ? `${path} (circles among ${group.sort().join(", ")})` : path);
  };
  for (const file of graph.keys()) if (!order.has(file)) visit(file);
  return found;
}

/** A shortest path from `start` back to itself inside one group (breadth first). */
function closingPath(graph: Map<string, string[]>, group: Set<string>, start: string): string {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (const file of queue) {
    for (const next of graph.get(file) ?? []) {
      if (!group.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, file);
      if (next === start) queue.length = 0;
      else queue.push(next);
    }
  }
  const path: string[] = [];
  for (let at = cameFrom.get(start)!; at !== start; at = cameFrom.get(at)!) path.unshift(at);
  return [start, ...path, start].join(" → ");
}

/** Why an import from one file to another runs against the stages, or null when it runs down them. */
export function stageProblem(from: string, to: string): string | null {
  const [fromFolder, toFolder] = [from, to].map((file) => (file.includes("/") ? file.split("/")[0]! : null));
  if (ENTRY_POINTS.has(to)) return `${to} is an entry point: nothing in src/ imports it`;
  if (fromFolder === toFolder || ENTRY_POINTS.has(from)) return null;
  for (const folder of [fromFolder, toFolder]) if (folder && !STAGES[folder]) return `${folder}/ is not a stage folder`;
  if (!toFolder) return null; // every stage may import the leaves
  if (!fromFolder) return `a leaf imports the ${toFolder} stage`;
  return STAGES[fromFolder]!.includes(toFolder) ? null : `${fromFolder} may not import ${toFolder}`;
}

describe("imports in src/", () => {
  const graph = importGraph();

  test("no file imports itself back through others", () => {
    expect(circles(graph)).toEqual([]);
  });

  test("folder edges run down the stages: cli → serve → index → search → convert, embed → store → leaves", () => {
    const problems: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of new Set(targets)) {
        const problem = stageProblem(from, to);
        if (problem) problems.push(`${from} → ${to}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("the checks see what they check: every import form, and a circle and an upward edge when there is one", () => {
    const source = [
      'import { a } from "./a.ts";',
      'import type { B } from "../store/b.ts";',
      'export * from "./c.ts";',
      'const d = await import("./d.ts");',
      '// import { e } from "./e.ts";',
      "const f = \"import { f } from './f.ts'\";",
    ].join("\n");
    const missing = () => importsOf("search/x.ts", source);
    expect(missing).toThrow("import of a missing file ./a.ts");
    const scanned = ts.preProcessFile(source, true, true).importedFiles.map((ref) => ref.fileName);
    expect(scanned).toEqual(["./a.ts", "../store/b.ts", "./c.ts", "./d.ts"]);

    const circle = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
    ]);
    expect(circles(circle)).toEqual(["a.ts → b.ts → c.ts → a.ts"]);
    expect(stageProblem("search/read-document.ts", "index/discover.ts")).toBe("search may not import index");
    expect(stageProblem("log.ts", "cli/terminal.ts")).toBe("a leaf imports the cli stage");
    expect(stageProblem("cli/cli.ts", "main.ts")).toBe("main.ts is an entry point: nothing in src/ imports it");
    expect(stageProblem("index/indexer.ts", "search/vectors.ts")).toBeNull();
    expect(stageProblem("embed/hub.ts", "store/store.ts")).toBeNull();
  });
});
