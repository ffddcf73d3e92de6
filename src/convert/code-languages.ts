/**
 * Which files are parsed as code, by extension. Kept apart from the parser (no imports): discovery, conversion and
 * the CLI can ask without loading web-tree-sitter, which a conversion worker loads on the first code file of a run.
 */
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
const EXTENSIONS: Record<string, CodeLanguage> = {
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

export const CODE_EXTENSIONS: readonly string[] = Object.keys(EXTENSIONS);

/** The grammar for a file, by extension; null for anything else (the text chunker handles it). */
export function languageOf(path: string): CodeLanguage | null {
  const dot = path.lastIndexOf(".");
  if (dot < 0 || dot < path.lastIndexOf("/")) return null;
  return Object.hasOwn(EXTENSIONS, path.slice(dot + 1).toLowerCase()) ? EXTENSIONS[path.slice(dot + 1).toLowerCase()]! : null;
}
