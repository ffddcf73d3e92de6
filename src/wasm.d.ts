/**
 * `import path from "x.wasm" with { type: "file" }`: the file's path (in node_modules, or `/$bunfs/…` when compiled).
 */
declare module "*.wasm" {
  const path: string;
  export default path;
}

/** `import text from "x.md" with { type: "text" }`: the file's text, built into the executable. */
declare module "*.md" {
  const text: string;
  export default text;
}
