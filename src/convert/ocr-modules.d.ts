// Files imported `with { type: "file" }` are their path (inside the executable: a /$bunfs/… path).
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.traineddata.gz" {
  const path: string;
  export default path;
}
// tesseract.js-core's Emscripten glue ships no types; ocr.ts declares the part it uses.
declare module "tesseract.js-core/tesseract-core-simd-lstm.js" {
  const factory: (module: object) => Promise<unknown>;
  export default factory;
}
