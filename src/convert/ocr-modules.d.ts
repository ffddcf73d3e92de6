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
// pdf.js's standalone image decoders ship no types; image.ts uses the JPEG decoder.
declare module "pdfjs-dist/image_decoders/pdf.image_decoders.mjs" {
  export class JpegImage {
    /** `colorTransform`: 1 when 3-component data is YCbCr, 0 when RGB, -1 (the default) to guess. */
    constructor(options?: { colorTransform?: number });
    width: number;
    height: number;
    /** Set by `parse`: 1 grey, 3 colour, 4 CMYK. */
    numComponents: number;
    parse(data: Uint8Array): void;
    getData(options: { width: number; height: number; forceRGB?: boolean }): Uint8ClampedArray;
  }
}
