import { own } from "./own.ts";

/**
 * The file types researcher reads, by extension (lower case, no dot): what a repository indexes unless its
 * `file_types` say otherwise, and what `repo add --help` lists. Another type a user names is read as plain text.
 * A leaf, so that configuration can name the default without importing the converters.
 */
export const FILE_TYPES: readonly string[] = ["md", "markdown", "mdx", "txt", "pdf", "docx", "html", "htm", "xhtml", "epub"];

/**
 * Document formats of other programs that no converter here reads (old Word and Office files, OpenDocument, RTF, iWork,
 * e-book formats other than EPUB): named in file_types they are read as plain text, and fail as binary or index their
 * markup. The index summary says to save them in a format it reads rather than to name them (s26 user F14).
 */
export const UNREAD_DOCUMENT_TYPES: ReadonlySet<string> = new Set([
  "doc",
  "dot",
  "rtf",
  "odt",
  "ods",
  "odp",
  "ppt",
  "pptx",
  "xls",
  "xlsx",
  "pages",
  "key",
  "numbers",
  "mobi",
  "azw",
  "azw3",
  "djvu",
]);

/**
 * Extensions as config.yaml keeps them: lower case, without the dot, each once, blanks dropped (`.py`, `PY` → `py`).
 * The one rule of `repo add --file-types` and `config set repositories.<name>.file_types` (which stored `.py` as
 * typed, and the schema then refused it: s23).
 */
export function fileTypeNames(types: readonly string[]): string[] {
  return [...new Set(types.map(fileTypeName).filter(Boolean))];
}

/** One extension as config.yaml keeps it, and as a document's `format` is stored: `.PDF` → `pdf`. */
export function fileTypeName(type: string): string {
  return type.trim().toLowerCase().replace(/^\./, "");
}

/** The grammars researcher parses source code with. */
export type CodeLanguage =
  | "bash"
  | "c"
  | "c_sharp"
  | "cpp"
  | "go"
  | "java"
  | "javascript"
  | "php"
  | "python"
  | "ruby"
  | "rust"
  | "tsx"
  | "typescript";

/** File extension (lower case, no dot) → grammar. `.h` is read as C (C++ headers parse mostly fine as C too). */
export const CODE_LANGUAGES: Readonly<Record<string, CodeLanguage>> = {
  py: "python",
  pyi: "python",
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "tsx",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "javascript",
  go: "go",
  rs: "rust",
  java: "java",
  c: "c",
  h: "c",
  cpp: "cpp",
  cc: "cpp",
  cxx: "cpp",
  hpp: "cpp",
  hh: "cpp",
  hxx: "cpp",
  cs: "c_sharp",
  rb: "ruby",
  php: "php",
  sh: "bash",
  bash: "bash",
};

/** Source code's file types: a code file's `format` is its extension, one of these (a script's: its language's). */
export const CODE_EXTENSIONS: readonly string[] = Object.keys(CODE_LANGUAGES);

/**
 * Interpreter (the program a script's `#!` line runs, version digits dropped: `python3.11` → `python`) → grammar:
 * what a script without an extension (`bin/tool`, `libexec/pyenv-which`) is read as, in a repository that indexes a
 * type of that language (`sh` or `bash` admits `#!/bin/sh`, `py` admits `#!/usr/bin/env python3`). Perl, zsh and
 * the like have no grammar here.
 */
export const INTERPRETERS: Readonly<Record<string, CodeLanguage>> = {
  sh: "bash",
  bash: "bash",
  dash: "bash",
  ash: "bash",
  ksh: "bash",
  python: "python",
  pypy: "python",
  node: "javascript",
  nodejs: "javascript",
  ruby: "ruby",
  php: "php",
};

/** The format a script without an extension is stored with: its language's first extension above (`sh`, `py`),
 * so that it is source code wherever a format says so (cited by line range, counted by language). */
export function languageFormat(language: CodeLanguage): string {
  return CODE_EXTENSIONS.find((type) => CODE_LANGUAGES[type] === language)!;
}

/** Whether a repository of these file types indexes source code: then generated and vendored code is left out. */
export function indexesCode(types: Iterable<string>): boolean {
  for (const type of types) if (isCodeFormat(type)) return true;
  return false;
}

/**
 * The languages whose scripts without an extension a repository of these file types indexes: those of its code
 * types that a `#!` line can name (`sh` admits bash scripts, `py` Python ones; see INTERPRETERS). None: such files
 * are not even opened.
 */
export function scriptLanguages(types: Iterable<string>): Set<CodeLanguage> {
  const scripted = new Set(Object.values(INTERPRETERS));
  const languages = new Set<CodeLanguage>();
  for (const type of types) {
    const language = own(CODE_LANGUAGES, type);
    if (language && scripted.has(language)) languages.add(language);
  }
  return languages;
}

/**
 * Whether a document is source code, by its format: what cites it by line range and counts it as a code language.
 * Not by a `language` in its metadata: EPUB's and HTML's natural language (`en-US`) is one too.
 */
export function isCodeFormat(format: string): boolean {
  return Object.hasOwn(CODE_LANGUAGES, format);
}

/** Formats whose text researcher reads back as markdown: markdown itself, and what conversion or OCR turns into it. */
const MARKDOWN_TEXT = new Set([
  "md",
  "markdown",
  "mdx",
  "pdf",
  "docx",
  "html",
  "htm",
  "xhtml",
  "epub",
  "png",
  "jpg",
  "jpeg",
  "tif",
  "tiff",
]);

/** The media type of a document's text as it is read back: plain text and source code are not markdown (a host that
 * renders markdown makes a code comment a heading and collapses indentation). */
export function textMediaType(format: string): string {
  return MARKDOWN_TEXT.has(format) ? "text/markdown" : "text/plain";
}
