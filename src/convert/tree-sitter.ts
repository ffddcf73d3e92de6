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

let compiled: Promise<WebAssembly.Module> | undefined;
let runtime: Promise<void> | undefined;
const languages = new Map<CodeLanguage, Promise<Parser.Language>>();

/**
 * The runtime compiled, once per process: the conversion pool sends it to every worker that parses code. The engine
 * optimises a module's machine code as it runs, and shares that between the threads given the same module; two
 * workers compiling and warming their own copies cost nearly as much CPU as all the parsing (171 Python files).
 */
export function compiledRuntime(): Promise<WebAssembly.Module> {
  compiled ??= WebAssembly.compile(wasmBytes(runtimeWasm));
  return compiled;
}

/** Run this thread's parsers on a runtime compiled in another thread (unless a parser has already started). */
export function shareRuntime(module: WebAssembly.Module): void {
  compiled ??= Promise.resolve(module);
}

/** The parser for a language: the runtime and the grammar are loaded once, on first use. */
export async function parserFor(language: CodeLanguage): Promise<Parser> {
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
  await runtime;
  let grammar = languages.get(language);
  if (!grammar) {
    grammar = Parser.Language.load(wasmBytes(GRAMMARS[language]));
    languages.set(language, grammar);
  }
  const parser = new Parser();
  parser.setLanguage(await grammar);
  return parser;
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
