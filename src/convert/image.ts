/**
 * Standalone images (PNG, JPEG, TIFF) → text by OCR, decoded in JavaScript so the executable needs nothing native:
 * fast-png for PNG, pdf.js's own JPEG decoder, utif2 for TIFF (each page of a multi-page TIFF is a page, cited as
 * in a PDF, and decoded only when OCR comes to it). Alpha is composited over white. Opt-in by file type: they are not among the default `file_types`.
 */
import { ResearcherError } from "../errors.ts";
import { pageMarker, type ConvertedDocument, type ConvertOptions } from "./document.ts";
import type UTIF from "utif2";
import { type GrayImage, grayFromChannels, recognise } from "./ocr.ts";

export async function convertImage(format: string, bytes: Uint8Array, title: string, options: ConvertOptions): Promise<ConvertedDocument> {
  if (options.ocr === "off") throw new ResearcherError("FILE_UNREADABLE", "an image is read only by OCR, which is off for this repository");
  const pages = await decode(format, bytes);
  const texts: string[] = [];
  let failure: string | undefined;
  for (const [i, page] of pages.entries()) {
    // Each page is decoded only when OCR gets to it, and its pixels are garbage once it is read (the worker collects
    // a large heap between OCR pages): a long fax is never held decoded all at once.
    const read = await recognise(page, options, { page: i + 1, pages: pages.length });
    texts.push(read.text ?? "");
    failure ??= read.failure && (pages.length > 1 ? `page ${i + 1}: ${read.failure}` : read.failure);
  }
  if (!texts.some((text) => text.trim()))
    throw new ResearcherError("FILE_UNREADABLE", failure ? `OCR failed on the image: ${failure}` : "OCR found no text in the image");
  const ocrPages = texts.filter(Boolean).length;
  if (pages.length === 1) return { title, format: "markdown", text: texts[0]!, firstLine: 1, metadata: { ocr_pages: ocrPages } };
  const text = texts.map((page, i) => `${pageMarker(i + 1)}\n\n${page}\n`).join("\n");
  return { title, format: "markdown", text, firstLine: 1, metadata: { pages: pages.length, ocr_pages: ocrPages }, pages: pages.length };
}

/** One page of an image file: its pixels, decoded when called (null when they cannot be made grey). */
type Page = () => Promise<GrayImage | null>;

/**
 * The file's pages. A PNG or JPEG is decoded here, so that a broken one fails before OCR starts; a TIFF's directories
 * are read here and each page decoded by its `Page`, whose failure fails the file with the same reason.
 */
async function decode(format: string, bytes: Uint8Array): Promise<Page[]> {
  const unreadable = (error: unknown, page = "") =>
    new ResearcherError("FILE_UNREADABLE", `not a readable ${format.toUpperCase()} image: ${page}${(error as Error).message}`);
  try {
    if (format === "tif") {
      return (await tiffPages(bytes)).map((page, i, pages) => async () => {
        try {
          return await page();
        } catch (error) {
          throw unreadable(error, pages.length > 1 ? `page ${i + 1}: ` : "");
        }
      });
    }
    const image = format === "png" ? await decodePng(bytes) : await decodeJpeg(bytes);
    return [async () => image];
  } catch (error) {
    throw unreadable(error);
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

/** A TIFF directory as utif2 reads it: tags by number (`t256`: width), values as arrays. */
type Ifd = UTIF.IFD & Record<`t${number}`, number[] | Uint8Array | undefined>;

/** The TIFF's images (directories with a width and height), each decoded when its page is read. */
async function tiffPages(bytes: Uint8Array): Promise<Page[]> {
  const UTIF = (await import("utif2")).default;
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const ifds = (UTIF.decode(buffer) as Ifd[]).filter((ifd) => ifd.t256 && ifd.t257); // the directory holds an image
  return ifds.map((ifd) => async () => {
    const page = { ...ifd }; // utif2 writes the pixels into the directory: a copy, garbage once the page is read
    UTIF.decodeImage(buffer, page);
    return gray(UTIF.toRGBA8(page), page.width, page.height, 4);
  });
}
