/** `import path from "x.wasm" with { type: "file" }`: the file's path (in node_modules, or `/$bunfs/…` when compiled). */
declare module "*.wasm" {
  const path: string;
  export default path;
}
