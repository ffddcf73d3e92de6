/**
 * Code retrieval bench (issue 25): for ~300 documented functions of 5–60 lines in real code nobody here wrote
 * (TS/JS from node_modules, Python from the system's standard library), the query is the first sentence of the
 * function's doc comment or docstring; a hit is a fragment holding the whole function, with its doc, in the BM25
 * top 3. The text chunker (index/chunk.ts) against the syntax chunker (convert/code-outline.ts), at the default budget
 * and at 512 tokens; the share of fragments that start at a unit boundary; chunking speed of both on the same
 * files; identifier queries ("parse header" and "parseHeader" for `parseHeader`). FTS5 in memory, the product's
 * tokenizer, `ftsText`, `parseQuery` and BM25 weights. Writes the `code` section of docs/benchmarks.md.
 *
 *   bun bench/code.ts [--functions 300]
 */
import { Database } from "bun:sqlite";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join, resolve } from "node:path";
import { type CodeLanguage, languageOf } from "../src/convert/code-languages.ts";
import { DEFAULT_CODE_TOKENS } from "../src/config.ts";
import { chunkDocument, DEFAULT_CHUNK_OPTIONS } from "../src/index/chunk.ts";
import { parserFor, type SyntaxNode } from "../src/convert/tree-sitter.ts";
import { splitIdentifier } from "../src/identifiers.ts";
import { BM25_WEIGHTS } from "../src/search/bm25.ts";
import { parseQuery } from "../src/search/query.ts";
import { FTS_TOKENIZE } from "../src/store/fts.ts";
import { ftsText } from "../src/text.ts";
import { chunkCode } from "../test/helpers.ts";
import { table, writeSection } from "./report.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const WANT = arg("--functions", 300);
const FILES_PER_SIDE = arg("--files", 120);
const JS_FILES = arg("--js-files", 200);

// ---- corpus --------------------------------------------------------------------------------------------------
const NM = resolve(import.meta.dir, "../node_modules");
const JS_DIRS = [
  "zod/src/v4/core",
  "zod/src/v3",
  "@huggingface/transformers/src",
  "pdf-lib/src",
  "underscore/modules",
  "jszip/lib",
  "protobufjs/src",
  "@mixmark-io/domino/lib",
  "yaml/dist",
  "semver",
  "ajv/lib",
  "hono/dist/middleware",
  "mammoth/lib",
  "@modelcontextprotocol/sdk/dist/esm",
];

function walk(dir: string, out: string[], exts: RegExp) {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && e.name !== "tests" && e.name !== "test") walk(p, out, exts);
    } else if (exts.test(e.name) && !/\.d\.ts$|\.min\./.test(e.name)) {
      const size = statSync(p).size;
      if (size > 1500 && size < 120_000) out.push(p);
    }
  }
}

function pick<T>(items: T[], n: number, seed = 7): T[] {
  // Deterministic spread: every k-th item.
  if (items.length <= n) return items;
  const step = items.length / n;
  return Array.from({ length: n }, (_, i) => items[Math.floor(i * step + (seed % Math.max(1, Math.floor(step))))]!).filter(Boolean);
}

const jsFiles: string[] = [];
for (const d of JS_DIRS) {
  const files: string[] = [];
  walk(join(NM, d), files, /\.(ts|js|mjs)$/);
  jsFiles.push(...pick(files, Math.ceil(JS_FILES / JS_DIRS.length) + 4));
}
const pyFiles: string[] = [];
walk("/usr/lib/python3.11", pyFiles, /\.py$/);
const corpusFiles = [
  ...pick(jsFiles, JS_FILES),
  ...pick(
    pyFiles.filter((p) => !/\/(test|idlelib|lib2to3|tkinter)\//.test(p)),
    FILES_PER_SIDE,
  ),
];

interface Target {
  file: string;
  start: number;
  end: number;
  fnStart: number;
  summary: string;
  lang: string;
  name: string;
}

function summaryOf(doc: string): string {
  const body = doc
    .replace(/^\s*(\/\*\*|[rubRUB]*"""|[rubRUB]*''')/, "")
    .replace(/(\*\/|"""|''')\s*$/, "")
    .split("\n")
    .map((l) => l.replace(/^\s*\*\s?/, "").trim());
  const para: string[] = [];
  for (const l of body) {
    if (l.startsWith("@")) break;
    if (!l) {
      if (para.length) break;
      else continue;
    }
    para.push(l);
  }
  const text = para.join(" ");
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return sentence.replace(/\{@link\s+([^}]+)\}/g, "$1");
}

function functionsOf(root: SyntaxNode, language: CodeLanguage, file: string): Target[] {
  const out: Target[] = [];
  const visit = (node: SyntaxNode) => {
    for (const child of node.namedChildren) visit(child);
    const lines = node.endPosition.row - node.startPosition.row + 1;
    if (lines < 5 || lines > 60) return;
    if (language === "python" && node.type === "function_definition") {
      const first = node.childForFieldName("body")?.namedChildren[0];
      const str = first?.type === "expression_statement" ? first.namedChildren[0] : null;
      if (str?.type !== "string") return;
      const outer = node.parent?.type === "decorated_definition" ? node.parent : node;
      out.push({
        file,
        start: outer.startPosition.row + 1,
        end: node.endPosition.row + 1,
        fnStart: node.startPosition.row + 1,
        summary: summaryOf(str.text),
        lang: "py",
        name: node.childForFieldName("name")?.text ?? "",
      });
    } else if (language !== "python" && /^(function_declaration|method_definition|generator_function_declaration)$/.test(node.type)) {
      const outer = node.parent?.type === "export_statement" ? node.parent : node;
      const prev = outer.previousNamedSibling;
      if (prev?.type !== "comment" || !prev.text.startsWith("/**") || prev.endPosition.row !== outer.startPosition.row - 1) return;
      out.push({
        file,
        start: prev.startPosition.row + 1,
        end: node.endPosition.row + 1,
        fnStart: node.startPosition.row + 1,
        summary: summaryOf(prev.text),
        lang: "js",
        name: node.childForFieldName("name")?.text ?? "",
      });
    }
  };
  visit(root);
  return out;
}

const sources = new Map<string, string>();
const trees = new Map<string, SyntaxNode>();
let candidates: Target[] = [];
for (const file of corpusFiles) {
  const language = languageOf(file)!;
  const source = readFileSync(file, "utf8");
  sources.set(file, source);
  const parser = await parserFor(language);
  const tree = parser.parse(source);
  trees.set(file, tree.rootNode);
  candidates.push(...functionsOf(tree.rootNode, language, file));
}
const seenSummary = new Set<string>();
candidates = candidates.filter((t) => {
  const words = t.summary.split(/\s+/).filter((w) => /\w{2,}/.test(w)).length;
  if (words < 4 || words > 40 || seenSummary.has(t.summary)) return false;
  seenSummary.add(t.summary);
  return true;
});
const half = Math.floor(WANT / 2);
const targets = [
  ...pick(
    candidates.filter((t) => t.lang === "js"),
    half,
  ),
  ...pick(
    candidates.filter((t) => t.lang === "py"),
    WANT - half,
  ),
];
const corpus = `${corpusFiles.length} files (${pick(jsFiles, JS_FILES).length} TS/JS, ${corpusFiles.length - pick(jsFiles, JS_FILES).length} Python), ${(
  [...sources.values()].reduce((s, t) => s + t.length, 0) / 1e6
).toFixed(
  1,
)} MB; ${candidates.length} documented functions of 5–60 lines, ${targets.length} used (${targets.filter((t) => t.lang === "js").length} TS/JS, ${targets.filter((t) => t.lang === "py").length} Python)`;
console.log(`corpus: ${corpus}`);

// ---- chunkers --------------------------------------------------------------------------------------------------
interface Frag {
  file: string;
  startLine: number;
  endLine: number;
  heading: string;
  text: string;
}

async function chunkAll(kind: "text" | "code", tokens: number): Promise<{ frags: Frag[]; ms: number }> {
  const frags: Frag[] = [];
  const t0 = performance.now();
  for (const [file, source] of sources) {
    const fragments =
      kind === "text"
        ? chunkDocument(
            { title: basename(file), format: "text", text: source, firstLine: 1, metadata: {} },
            { ...DEFAULT_CHUNK_OPTIONS, tokens },
          )
        : (await chunkCode(source, languageOf(file), { maxTokens: tokens }))!;
    for (const f of fragments)
      frags.push({ file, startLine: f.startLine, endLine: f.endLine, heading: f.headings.join(" › "), text: f.text });
  }
  return { frags, ms: performance.now() - t0 };
}

/** An in-memory FTS5 table of fragments, written the way the index writes them (`ftsText`, or plain text). */
function ftsOf(frags: Frag[], prep: (text: string) => string) {
  const db = new Database(":memory:");
  db.run(`CREATE VIRTUAL TABLE f USING fts5(title, heading, body, content='', ${FTS_TOKENIZE})`);
  const insert = db.query("INSERT INTO f(rowid, title, heading, body) VALUES (?, ?, ?, ?)");
  db.transaction(() => {
    frags.forEach((fr, i) => {
      insert.run(i, prep(basename(fr.file, extname(fr.file))), prep(fr.heading), prep(fr.text));
    });
  })();
  const { title, heading, body } = BM25_WEIGHTS;
  const search = db.query<{ id: number }, [string]>(
    `SELECT rowid AS id FROM f WHERE f MATCH ? ORDER BY bm25(f, ${title}, ${heading}, ${body}) LIMIT 3`,
  );
  return { db, top3: (match: string) => search.all(match).map((r) => frags[r.id]!) };
}

interface Quality {
  whole: number;
  js: number;
  py: number;
  signature: number;
  mrr: number;
  fragments: number;
  avgTokens: number;
}

function evaluate(frags: Frag[]): Quality {
  const { db, top3 } = ftsOf(frags, ftsText);
  let whole = 0;
  let start = 0;
  let mrr = 0;
  const per: Record<string, [number, number]> = { js: [0, 0], py: [0, 0] };
  for (const t of targets) {
    const match = parseQuery(t.summary).match;
    const hits = match ? top3(match) : [];
    const w = hits.findIndex((h) => h.file === t.file && h.startLine <= t.start && h.endLine >= t.end);
    if (w >= 0) {
      whole++;
      mrr += 1 / (w + 1);
      per[t.lang]![0]++;
    }
    per[t.lang]![1]++;
    if (hits.some((h) => h.file === t.file && h.startLine <= t.fnStart && h.endLine >= t.fnStart)) start++;
  }
  db.close();
  const n = targets.length;
  const avgTokens = frags.reduce((s, f) => s + f.text.length, 0) / frags.length / 4;
  return {
    whole: whole / n,
    js: per.js![0] / per.js![1],
    py: per.py![0] / per.py![1],
    signature: start / n,
    mrr: mrr / n,
    fragments: frags.length,
    avgTokens,
  };
}

/** Share of fragments whose first line starts a unit: a statement or definition directly in a file, class or block. */
function boundaryShare(frags: Frag[]): number {
  const CONTAINER =
    /^(program|module|source_file|translation_unit|compilation_unit|block|statement_block|class_body|declaration_list|field_declaration_list|body_statement|compound_statement|switch_body|switch_case|switch_default|object|export_clause)$/;
  let ok = 0;
  for (const f of frags) {
    const line = sources.get(f.file)!.split("\n")[f.startLine - 1] ?? "";
    const column = line.length - line.trimStart().length;
    let node = trees.get(f.file)!.descendantForPosition({ row: f.startLine - 1, column });
    while (
      node.parent &&
      node.parent.startPosition.row === node.startPosition.row &&
      node.parent.startPosition.column === node.startPosition.column &&
      !CONTAINER.test(node.parent.type)
    )
      node = node.parent;
    const starts = node.startPosition.row === f.startLine - 1 && node.startPosition.column === column;
    if (starts && (node.parent === null || CONTAINER.test(node.parent.type) || /comment|decorat/.test(node.type))) ok++;
  }
  return ok / frags.length;
}

/** camelCase function names searched as separate words ("parse header") and as themselves: hit = signature in top 3. */
function identifierQueries(frags: Frag[], parts: boolean): { words: number; whole: number; names: number } {
  // Without parts: the text as FTS5 stored it before schema 5 (no CJK in this corpus); the query goes through parseQuery either way.
  const { db, top3 } = ftsOf(frags, parts ? ftsText : (t) => t);
  const seen = new Set<string>();
  const names = candidates.filter(
    (t) => /[a-z][A-Z]/.test(t.name) && splitIdentifier(t.name).length >= 2 && !seen.has(t.name) && seen.add(t.name),
  );
  const at3 = (query: string, t: Target) => {
    const match = parseQuery(query).match;
    return match ? top3(match).some((h) => h.file === t.file && h.startLine <= t.fnStart && h.endLine >= t.fnStart) : false;
  };
  const words = names.filter((t) => at3(splitIdentifier(t.name).join(" "), t)).length / names.length;
  const whole = names.filter((t) => at3(t.name, t)).length / names.length;
  db.close();
  return { words, whole, names: names.length };
}

const src = (t: Target) =>
  sources
    .get(t.file)!
    .split("\n")
    .slice(t.start - 1, t.end)
    .join("\n");
const bytes = [...sources.values()].reduce((s, t) => s + t.length, 0);
const rows: (string | number)[][] = [];
const f3 = (x: number) => x.toFixed(3);
let speed = "";
let boundaries = "";
let identifiers = "";
for (const tokens of [DEFAULT_CHUNK_OPTIONS.tokens, DEFAULT_CODE_TOKENS]) {
  const ceiling = targets.filter((t) => Math.ceil(src(t).length / 4) <= tokens).length / targets.length;
  const text = await chunkAll("text", tokens);
  await chunkAll("code", tokens); // warm-up: JIT (grammars were loaded above)
  const code = await chunkAll("code", tokens);
  const text2 = await chunkAll("text", tokens);
  for (const [name, run] of [
    ["text chunker", text],
    ["code chunker", code],
  ] as const) {
    const q = evaluate(run.frags);
    rows.push([
      tokens,
      name,
      f3(q.whole),
      f3(q.js),
      f3(q.py),
      f3(q.signature),
      f3(q.mrr),
      `${q.fragments} (${q.avgTokens.toFixed(0)})`,
      f3(ceiling),
    ]);
    console.log(rows.at(-1)!.join("  "));
  }
  if (tokens === DEFAULT_CHUNK_OPTIONS.tokens) {
    const textMs = Math.min(text.ms, text2.ms);
    const rate = (ms: number) => `${(bytes / 1e6 / (ms / 1000)).toFixed(1)} MB/s`;
    speed = `Chunking speed on the same ${(bytes / 1e6).toFixed(1)} MB: text chunker ${textMs.toFixed(0)} ms (${rate(textMs)}), code chunker (tree-sitter parse + chunk) ${code.ms.toFixed(0)} ms (${rate(code.ms)}): ${(code.ms / textMs).toFixed(1)}× the text path. Chunking is the step of an index run that differs between the two (both read the file as text); in an index run, code is parsed and cut into sections in the conversion workers, beside the indexing thread, while text is chunked on the indexing thread.`;
    boundaries = `Fragments that start at a unit boundary (a statement or definition directly in a file, class or block, or a comment or decorator above one): text chunker ${(boundaryShare(text.frags) * 100).toFixed(1)}%, code chunker ${(boundaryShare(code.frags) * 100).toFixed(1)}%; the rest are line cuts inside units longer than the budget (long docstrings, literals).`;
    const plain = identifierQueries(code.frags, false);
    const withParts = identifierQueries(code.frags, true);
    identifiers = `Identifier queries (${withParts.names} distinct camelCase function names; hit = the fragment with the signature in the top 3): "parse header" ${f3(plain.words)} with an index without identifier parts → ${f3(withParts.words)} with them; "parseHeader" ${f3(plain.whole)} → ${f3(withParts.whole)}.`;
  }
}

const codeRow = rows.find((row) => row[0] === DEFAULT_CODE_TOKENS && row[1] === "code chunker")!;
const [codeAtDefault, ceilingAtDefault] = [Number(codeRow[2]), Number(codeRow[8])];
const [, codeAtText] = rows.filter((row) => row[0] === DEFAULT_CHUNK_OPTIONS.tokens).map((row) => Number(row[2]));
const verdict = `Target (≥ 0.8 of functions whole in the top 3 at code's default budget, chunk.code_tokens = ${DEFAULT_CODE_TOKENS}): ${codeAtDefault >= 0.8 ? "met" : "missed"}, ${codeAtDefault} (ceiling ${ceilingAtDefault}). At the prose budget of ${DEFAULT_CHUNK_OPTIONS.tokens} tokens, which code used until code had its own, it finds ${codeAtText}: ${f3(1 - Number(rows[1]![8]))} of these functions do not fit ${DEFAULT_CHUNK_OPTIONS.tokens} tokens with their doc, so no chunker can return them whole.`;
const body = `Corpus: ${corpus}. Query: the first sentence of the doc comment or docstring, through \`parseQuery\`; BM25 over an in-memory FTS5 table written with \`ftsText\` (identifier parts included) and the index's weights. Hit: a top-3 fragment holds the doc and the whole function. *Ceiling*: share of targets that fit the budget whole at all.

${table(["tokens", "chunker", "whole function @3", "TS/JS", "Python", "signature @3", "MRR@3", "fragments (avg tokens)", "ceiling"], rows)}

${verdict}

${boundaries}

${speed} (Times are from a shared machine: compare the two paths, not the absolute rates.)

${identifiers}`;
console.log(body);
writeSection("code", "Code: whole functions found by their doc summary (syntax chunker vs text chunker)", "bun bench/code.ts", body);
