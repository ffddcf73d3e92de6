/**
 * tree-sitter for code files: web-tree-sitter 0.24.7 (the runtime, `tree-sitter.wasm`) and the grammars of
 * tree-sitter-wasms 0.1.13 (web-tree-sitter 0.25+ cannot load those grammars; see docs/toolchain notes §9).
 *
 * Every .wasm is a `with { type: "file" }` import: under `bun run` it is the file's path in node_modules, in the
 * compiled executable a `/$bunfs/root/…` path; both are read with readFileSync and handed over as bytes, so
 * neither web-tree-sitter's own file lookup (`locateFile`, `__dirname`) nor node_modules is ever needed. The
 * imports only name the files: the runtime is read on the first parse and each grammar on the first file of its
 * language (~0.5–4.7 MB each), so an index of Markdown never pays for any of it.
 */
import { readFileSync } from "node:fs";
import type { CodeLanguage } from "./code-languages.ts";
import Parser from "web-tree-sitter";
import runtimeWasm from "web-tree-sitter/tree-sitter.wasm" with { type: "file" };
import bashWasm from "tree-sitter-wasms/out/tree-sitter-bash.wasm" with { type: "file" };
import cWasm from "tree-sitter-wasms/out/tree-sitter-c.wasm" with { type: "file" };
import cSharpWasm from "tree-sitter-wasms/out/tree-sitter-c_sharp.wasm" with { type: "file" };
import cppWasm from "tree-sitter-wasms/out/tree-sitter-cpp.wasm" with { type: "file" };
import goWasm from "tree-sitter-wasms/out/tree-sitter-go.wasm" with { type: "file" };
import javaWasm from "tree-sitter-wasms/out/tree-sitter-java.wasm" with { type: "file" };
import javascriptWasm from "tree-sitter-wasms/out/tree-sitter-javascript.wasm" with { type: "file" };
import phpWasm from "tree-sitter-wasms/out/tree-sitter-php.wasm" with { type: "file" };
import pythonWasm from "tree-sitter-wasms/out/tree-sitter-python.wasm" with { type: "file" };
import rubyWasm from "tree-sitter-wasms/out/tree-sitter-ruby.wasm" with { type: "file" };
import rustWasm from "tree-sitter-wasms/out/tree-sitter-rust.wasm" with { type: "file" };
import tsxWasm from "tree-sitter-wasms/out/tree-sitter-tsx.wasm" with { type: "file" };
import typescriptWasm from "tree-sitter-wasms/out/tree-sitter-typescript.wasm" with { type: "file" };

const GRAMMARS: Record<CodeLanguage, string> = {
  bash: bashWasm,
  c: cWasm,
  c_sharp: cSharpWasm,
  cpp: cppWasm,
  go: goWasm,
  java: javaWasm,
  javascript: javascriptWasm,
  php: phpWasm,
  python: pythonWasm,
  ruby: rubyWasm,
  rust: rustWasm,
  tsx: tsxWasm,
  typescript: typescriptWasm,
};

let compiledRuntimeModule: Promise<WebAssembly.Module> | undefined;
let runtime: Promise<void> | undefined;
const compiledGrammars = new Map<CodeLanguage, Promise<WebAssembly.Module>>();
const languages = new Map<CodeLanguage, Promise<Parser.Language>>();
const parsers = new Map<CodeLanguage, Promise<Parser>>();

/** The runtime and one language's grammar, compiled: what a thread needs to parse that language. */
export interface CompiledTreeSitter {
  runtime: WebAssembly.Module;
  language: CodeLanguage;
  grammar: WebAssembly.Module;
}

/**
 * The runtime and a grammar compiled, once per process: the conversion pool sends them to every worker that parses
 * code. The engine optimises a module's machine code as it runs, and shares that between the threads given the
 * same module; two workers compiling and warming their own copies cost nearly as much CPU as all the parsing (171
 * Python files), and most of a parse runs in the grammar's lexer.
 */
export async function compiledFor(language: CodeLanguage): Promise<CompiledTreeSitter> {
  const [runtime, grammar] = await Promise.all([compiledRuntime(), compiledGrammar(language)]);
  return { runtime, language, grammar };
}

/** The runtime alone, compiled once per process: the pool starts its workers' runtimes before any grammar is known. */
export function compiledRuntime(): Promise<WebAssembly.Module> {
  compiledRuntimeModule ??= WebAssembly.compile(wasmBytes(runtimeWasm));
  return compiledRuntimeModule;
}

function compiledGrammar(language: CodeLanguage): Promise<WebAssembly.Module> {
  let grammar = compiledGrammars.get(language);
  if (!grammar) {
    grammar = WebAssembly.compile(wasmBytes(GRAMMARS[language]));
    compiledGrammars.set(language, grammar);
  }
  return grammar;
}

/** Run this thread's parsers on modules compiled in another thread (unless this thread has already loaded them). */
export function shareCompiled({ runtime, language, grammar }: CompiledTreeSitter): void {
  compiledRuntimeModule ??= Promise.resolve(runtime);
  if (!compiledGrammars.has(language)) compiledGrammars.set(language, Promise.resolve(grammar));
}

/**
 * Instantiate the runtime in this thread now, from a module compiled in another, so that the first file of any
 * language waits only for its grammar (the conversion pool warms its workers up this way while a run starts).
 */
export function warmRuntime(module: WebAssembly.Module): Promise<void> {
  compiledRuntimeModule ??= Promise.resolve(module);
  return loadRuntime();
}

/**
 * The parser for a language, one per language and thread: the runtime and the grammar are loaded on first use.
 * A parse that ran out of time must be `reset()` before the next one, or that one would resume it.
 */
export function parserFor(language: CodeLanguage): Promise<Parser> {
  let parser = parsers.get(language);
  if (!parser) {
    parser = languageFor(language).then((grammar) => {
      const created = new Parser();
      created.setLanguage(grammar);
      return created;
    });
    parsers.set(language, parser);
  }
  return parser;
}

function languageFor(language: CodeLanguage): Promise<Parser.Language> {
  let grammar = languages.get(language);
  if (!grammar) {
    grammar = loadRuntime().then(() => loadGrammar(language));
    languages.set(language, grammar);
  }
  return grammar;
}

function loadRuntime(): Promise<void> {
  runtime ??= compiledRuntime().then((module) =>
    Parser.init({
      // Emscripten's hook for a module compiled elsewhere; `{}` says the instance comes later (an instance of a
      // valid compiled module with emscripten's own imports does not fail to come).
      instantiateWasm: (
        imports: ConstructorParameters<typeof WebAssembly.Instance>[1],
        receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => unknown,
      ) => {
        WebAssembly.instantiate(module, imports).then((instance) => receive(instance, module));
        return {};
      },
    }),
  );
  return runtime;
}

/**
 * A grammar instantiated from its compiled module. `Language.load` of web-tree-sitter 0.24 takes only bytes (it
 * reads their dylink section, then compiles them with `WebAssembly.instantiate`); for the duration of the load,
 * that instantiation of these very bytes is answered with the compiled module instead, so the threads share its
 * machine code (the grammar's own emscripten loader accepts a module; only `load` does not pass one through).
 */
async function loadGrammar(language: CodeLanguage): Promise<Parser.Language> {
  const module = await compiledGrammar(language);
  const bytes = wasmBytes(GRAMMARS[language]);
  const instantiate = WebAssembly.instantiate;
  type Imports = ConstructorParameters<typeof WebAssembly.Instance>[1];
  const fromModule = (source: Uint8Array, imports: Imports) =>
    source === bytes
      ? instantiate(module, withLibc(imports)).then((instance) => ({ module, instance }))
      : instantiate(source, withLibc(imports));
  WebAssembly.instantiate = fromModule as typeof WebAssembly.instantiate;
  try {
    return await Parser.Language.load(bytes);
  } finally {
    WebAssembly.instantiate = instantiate;
  }
}

/**
 * The C library functions some grammars' scanners import and web-tree-sitter 0.24's runtime does not export
 * (`WebAssembly.Module.imports` against the runtime's exports): bash's scanner calls `isalpha` on every `case`
 * pattern, and several call `__assert_fail` when an assertion fails. Unresolved, emscripten's stub throws "resolved
 * is not a function" mid-parse, which leaves the thread's parser state broken (every later parse failed).
 */
const LIBC: Record<string, (...args: number[]) => number> = {
  isalpha: (c) => Number((c >= 65 && c <= 90) || (c >= 97 && c <= 122)), // the C locale's letters
  __assert_fail: () => {
    throw new Error("a grammar's scanner failed an assertion");
  },
};

function withLibc(imports: ConstructorParameters<typeof WebAssembly.Instance>[1]) {
  if (!imports?.env) return imports;
  const env = new Proxy(imports.env, { get: (target, name) => (typeof name === "string" && LIBC[name]) || Reflect.get(target, name) });
  return { ...imports, env };
}

/** A .wasm file's bytes; the executable may hold it gzipped (build.ts does: 21 MB of grammars become 2 MB). */
function wasmBytes(path: string): Uint8Array {
  const bytes = new Uint8Array(readFileSync(path));
  return bytes[0] === 0x1f && bytes[1] === 0x8b ? Bun.gunzipSync(bytes) : bytes;
}

/** Grammars loaded so far (tests check that loading is lazy). */
export function loadedLanguages(): CodeLanguage[] {
  return [...languages.keys()];
}

export type SyntaxNode = Parser.SyntaxNode;
export type Tree = Parser.Tree;
export type { CodeLanguage };
