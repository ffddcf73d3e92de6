/**
 * Symbol queries over code (what an agent asks most: "where is X defined"): the query is a class's or function's
 * bare name, defined once in a corpus of real code nobody here wrote (Python's standard library, TypeScript from
 * node_modules), indexed with `--code` by the product's indexer and searched by its BM25 path, headings weighed in.
 * A hit is a result whose fragment holds the definition's line. Writes the `symbols` section of docs/benchmarks.md.
 *
 *   bun bench/symbols.ts [--per-kind 150] [--misses] [--no-write]
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { CODE_EXTENSIONS, FILE_TYPES } from "../src/file-types.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { type FragmentHit, search, SearchContext } from "../src/search/search.ts";
import { table, writeSection } from "./report.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const PER_KIND = arg("--per-kind", 150);

const PYTHON = "/usr/lib/python3.11";
const PY_DIRS = [".", "json", "email", "http", "urllib", "logging", "asyncio", "collections", "importlib", "xml/dom", "concurrent/futures"];
const NM = resolve(import.meta.dir, "../node_modules");
const TS_DIRS = ["zod/src/v4/core", "zod/src/v3", "pdf-lib/src/core", "pdf-lib/src/api", "@huggingface/transformers/src"];

interface Definition {
  kind: string;
  name: string;
  path: string;
  line: number;
  /** Indented: a method, a nested function, or a function's local (a `const` then, which is no query). */
  indented: boolean;
}

/**
 * Definitions: classes, functions and a module's constants (`export const Schema = z.object(…)`, Python's
 * `DEFAULTSECT = "DEFAULT"`) are the queries; the other declarations only make a name ambiguous.
 */
const DEFINES: Record<string, RegExp> = {
  py: /^\s*(?:async\s+)?(class|def)\s+([A-Za-z_]\w{5,})\b/,
  ts: /^\s*(?:export\s+)?(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(class|function|interface|type|const|let|var|enum)\s+([A-Za-z_$][\w$]{5,})\b/,
};
const QUERIED = new Set(["class", "def", "function", "const"]);
/**
 * A Python module's assignment to a name (`MAX_INTERPOLATION_DEPTH = 10`, `choice = _inst.choice`): a definition of
 * it, as a TypeScript module's `const` is. An UPPER_CASE name is a constant, queried; the others (an alias, a
 * global) only make a name ambiguous, and so do dunders (`__all__`), which name no unit.
 */
const PY_ASSIGNMENT = /^(?!__\w+__\b)([A-Za-z_]\w{5,})\s*(?::[^=]*)?=(?!=)/;
/**
 * A TypeScript class's method (`  drawEllipse(options: …): void {`): a definition of its name too, counted so that a
 * name a method shares is no name defined once (a method and a function of one name are both its definitions).
 */
const TS_METHOD =
  /^\s+(?:(?:public|private|protected|static|async|override|abstract|readonly)\s+)*(?:get\s+|set\s+)?([A-Za-z_$][\w$]{5,})\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::[^;=]*)?\{\s*$/;
/** A method written as a class field holding an arrow function (`  static fromText = (value: string) => {`). */
const TS_FIELD_METHOD =
  /^\s+(?:(?:public|private|protected|static|readonly|override)\s+)*([A-Za-z_$][\w$]{5,})\s*(?::[^=]*)?=\s*(?:async\s+)?(?:<[^>]*>)?\([^)]*\)?.*=>/;

function filesOf(dir: string, ext: RegExp, deep: boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return deep && entry.name !== "test" && entry.name !== "tests" ? filesOf(path, ext, deep) : [];
      return ext.test(entry.name) && !entry.name.endsWith(".d.ts") && statSync(path).size < 200_000 ? [path] : [];
    });
}

/** Copy the corpus into `root` (python/…, ts/…) and list every definition in it. */
function corpus(root: string): Definition[] {
  const sources = [
    ...PY_DIRS.flatMap((dir) => filesOf(join(PYTHON, dir), /\.py$/, false).map((file) => ({ file, base: PYTHON, side: "python" }))),
    ...TS_DIRS.flatMap((dir) => filesOf(join(NM, dir), /\.ts$/, true).map((file) => ({ file, base: NM, side: "ts" }))),
  ];
  const definitions: Definition[] = [];
  for (const { file, base, side } of sources) {
    const path = join(side, relative(base, file));
    mkdirSync(join(root, path, ".."), { recursive: true });
    cpSync(file, join(root, path));
    const pattern = DEFINES[side === "python" ? "py" : "ts"]!;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((text, i) => {
        const m = pattern.exec(text);
        const method = !m && side === "ts" ? (TS_METHOD.exec(text) ?? TS_FIELD_METHOD.exec(text)) : null;
        const assigned = !m && side === "python" ? PY_ASSIGNMENT.exec(text) : null;
        const kind = m
          ? `${side === "python" ? "Python" : "TypeScript"} ${m[1]}`
          : method
            ? "TypeScript method"
            : `Python ${/^[A-Z][A-Z0-9_]*$/.test(assigned?.[1] ?? "") ? "const" : "binding"}`;
        if (m || method || assigned)
          definitions.push({ kind, name: (m?.[2] ?? method?.[1] ?? assigned?.[1])!, path, line: i + 1, indented: /^\s/.test(text) });
      });
  }
  return definitions;
}

/**
 * Names defined once in the whole corpus, as the index reads them (`$ZodString` and `ZodString` are one word to it),
 * up to PER_KIND of each kind, spread evenly.
 */
function targets(definitions: Definition[]): Definition[] {
  const key = (name: string) => name.replace(/[^A-Za-z0-9]/g, "").toLowerCase();
  const count = new Map<string, number>();
  for (const d of definitions) count.set(key(d.name), (count.get(key(d.name)) ?? 0) + 1);
  const queried = (d: Definition) => QUERIED.has(kindOf(d)) && !(kindOf(d) === "const" && d.indented);
  const once = definitions.filter((d) => count.get(key(d.name)) === 1 && queried(d));
  const kinds = [...new Set(once.map((d) => d.kind))].sort();
  return kinds.flatMap((kind) => {
    const all = once.filter((d) => d.kind === kind);
    const step = Math.max(1, all.length / PER_KIND);
    return Array.from({ length: Math.min(PER_KIND, all.length) }, (_, i) => all[Math.floor(i * step)]!);
  });
}

/** `class`, `def`, `function`, `const`, …: what the definition's line declares. */
const kindOf = (d: Definition) => d.kind.split(" ")[1]!;

/** The query for a definition: its bare name, or a question around it as an agent asks (s24 agent A1). */
const FORMS: Record<string, (d: Definition) => string> = {
  "`X`": (d) => d.name,
  "`where is X defined`": (d) => `where is ${d.name} defined`,
  "`X class` / `X function` / `X constant`": (d) => `${d.name} ${{ class: "class", const: "constant" }[kindOf(d)] ?? "function"}`,
  "`how does X work`": (d) => `how does ${d.name} work`,
};

const root = mkdtempSync(join(tmpdir(), "researcher-symbols-"));
try {
  const docs = join(root, "code");
  const definitions = corpus(docs);
  const home = join(root, "home");
  const repo = registerRepository(home, { name: "code", path: docs, embed: false, fileTypes: [...FILE_TYPES, ...CODE_EXTENSIONS] });
  const summary = await indexRepository(home, repo);
  console.log(`indexed ${summary.indexed} files`);
  const context = new SearchContext();
  const rows: (string | number)[][] = [];
  const chosen = targets(definitions);
  for (const [form, ask] of Object.entries(FORMS))
    for (const kind of [...new Set(chosen.map((d) => d.kind))]) {
      const ranks: number[] = [];
      for (const d of chosen.filter((t) => t.kind === kind)) {
        const results = (await search(home, { query: ask(d), mode: "bm25", limit: 10 }, context)).results as FragmentHit[];
        const rank = results.findIndex((r) => r.path === d.path && r.fragment.start_line <= d.line && d.line <= r.fragment.end_line);
        ranks.push(rank < 0 ? Number.POSITIVE_INFINITY : rank + 1);
        if (rank !== 0 && process.argv.includes("--misses")) {
          const top = results[0];
          console.log(`  miss ${d.name} (${d.path}:${d.line}) rank ${rank + 1 || "-"}; first ${top?.fragment.ref} ${top?.heading}`);
        }
      }
      const share = (n: number) => (ranks.filter((r) => r <= n).length / ranks.length).toFixed(3);
      rows.push([form, kind, ranks.length, share(1), share(3), share(10)]);
      console.log(rows.at(-1)!.join("  "));
    }
  if (!process.argv.includes("--no-write")) {
    writeSection(
      "symbols",
      "Code: definitions found by their name",
      "bun bench/symbols.ts",
      [
        `Corpus: Python's standard library (${PY_DIRS.length} folders) and TypeScript from node_modules (${TS_DIRS.join(", ")}), ${summary.indexed} files, indexed with the code file types. Query: the name of a class, a function or a module's constant (a TypeScript module's \`const\`, a Python module's UPPER_CASE assignment; 6 characters or more, defined once in the corpus as the index reads names: \`$ZodString\` and \`ZodString\` are one), bare or in a question as an agent asks it; BM25 with headings weighed in, as \`researcher search --mode bm25\` ranks. Hit: a result whose fragment holds the definition's line.`,
        "",
        table(["query", "definition", "queries", "hit@1", "hit@3", "hit@10"], rows),
      ].join("\n"),
    );
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
