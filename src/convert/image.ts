/**
 * Standalone images (PNG, JPEG, TIFF) → text by OCR, decoded in JavaScript so the executable needs nothing native:
 * fast-png for PNG, pdf.js's own JPEG decoder, utif2 for TIFF (each page of a multi-page TIFF is a page, cited as
 * in a PDF). Opt-in by file type: they are not among the default `file_types`.
 */
import { ResearcherError } from "../errors.ts";
import { pageMarker, type ConvertedDocument, type ConvertOptions } from "./document.ts";
import { type GrayImage, grayFromChannels, recognise } from "./ocr.ts";

export async function convertImage(format: string, bytes: Uint8Array, title: string, options: ConvertOptions): Promise<ConvertedDocument> {
  if (options.ocr === "off") throw new ResearcherError("FILE_UNREADABLE", "an image is read only by OCR, which is off for this repository");
  const images = await decode(format, bytes);
  const texts: string[] = [];
  let failure: string | undefined;
  for (const [i, image] of images.entries()) {
    const read = await recognise(async () => image, options, { page: i + 1, pages: images.length });
    texts.push(read.text ?? "");
    failure ??= read.failure && (images.length > 1 ? `page ${i + 1}: ${read.failure}` : read.failure);
  }
  if (!texts.some((text) => text.trim()))
    throw new ResearcherError("FILE_UNREADABLE", failure ? `OCR failed on the image: ${failure}` : "OCR found no text in the image");
  const ocrPages = texts.filter(Boolean).length;
  if (images.length === 1) return { title, format: "markdown", text: texts[0]!, firstLine: 1, metadata: { ocr_pages: ocrPages } };
  const text = texts.map((page, i) => `${pageMarker(i + 1)}\n\n${page}\n`).join("\n");
  return { title, format: "markdown", text, firstLine: 1, metadata: { pages: images.length, ocr_pages: ocrPages }, pages: images.length };
}

async function decode(format: string, bytes: Uint8Array): Promise<GrayImage[]> {
  try {
    const images = format === "png" ? [await decodePng(bytes)] : format === "jpg" ? [await decodeJpeg(bytes)] : await decodeTiff(bytes);
    return images.filter((image): image is GrayImage => image !== null);
  } catch (error) {
    throw new ResearcherError("FILE_UNREADABLE", `not a readable ${format.toUpperCase()} image: ${(error as Error).message}`);
  }
}

function gray(data: ArrayLike<number>, width: number, height: number, channels: number, dpi?: number): GrayImage | null {
  const pixels = grayFromChannels(data, width * height, channels);
  return pixels && { gray: pixels, width, height, dpi };
}

async function decodePng(bytes: Uint8Array): Promise<GrayImage | null> {
  const png = await import("fast-png");
  let image = png.decode(bytes);
  if (image.palette) image = { ...image, data: png.convertIndexedToRgb(image), channels: image.palette[0]?.length ?? 3, depth: 8 };
  let samples: ArrayLike<number> = image.data;
  if (image.depth === 16) samples = Uint8Array.from(image.data, (value) => value >> 8);
  else if (image.depth < 8) samples = unpackBits(image.data, image.width * image.channels, image.height, image.depth);
  // pHYs in pixels per metre → dots per inch.
  const dpi = image.resolution?.unit === 1 ? image.resolution.x * 0.0254 : undefined;
  return gray(samples, image.width, image.height, image.channels, dpi);
}

/** Grey samples of 1, 2 or 4 bits, rows padded to whole bytes → one byte each, scaled to 0–255. */
function unpackBits(data: ArrayLike<number>, perRow: number, rows: number, depth: number): Uint8Array {
  const out = new Uint8Array(perRow * rows);
  const rowBytes = Math.ceil((perRow * depth) / 8);
  const max = (1 << depth) - 1;
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < perRow; x++) {
      const bit = x * depth;
      const value = (data[y * rowBytes + (bit >> 3)]! >> (8 - depth - (bit & 7))) & max;
      out[y * perRow + x] = Math.round((value * 255) / max);
    }
  }
  return out;
}

async function decodeJpeg(bytes: Uint8Array): Promise<GrayImage | null> {
  const { JpegImage } = await import("pdfjs-dist/image_decoders/pdf.image_decoders.mjs");
  const jpeg = new JpegImage();
  jpeg.parse(bytes);
  const data = jpeg.getData({ width: jpeg.width, height: jpeg.height, forceRGB: true });
  return gray(data, jpeg.width, jpeg.height, 3);
}

async function decodeTiff(bytes: Uint8Array): Promise<(GrayImage | null)[]> {
  const UTIF = (await import("utif2")).default;
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return UTIF.decode(buffer)
    .filter((ifd) => ifd.t256 && ifd.t257) // image width and height: the directory holds an image
    .map((ifd) => {
      UTIF.decodeImage(buffer, ifd);
      return gray(UTIF.toRGBA8(ifd), ifd.width, ifd.height, 4);
    });
}
