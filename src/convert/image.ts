/**
 * Standalone images (PNG, JPEG, TIFF) → text by OCR, decoded in JavaScript so the executable needs nothing native:
 * fast-png for PNG, pdf.js's own JPEG decoder, utif2 for TIFF (each page of a multi-page TIFF is a page, cited as
 * in a PDF, and decoded only when OCR comes to it; JPEG-compressed strips and tiles by pdf.js's decoder). Alpha is
 * composited over white. Opt-in by file type: they are not among the default `file_types`.
 */
import { ResearcherError } from "../errors.ts";
import { IMAGE_OCR_OFF, pageMarker, resolveLineBreaks, type ConvertedDocument, type ConvertOptions, type PageReading } from "./document.ts";
import type UTIF from "utif2";
import { type GrayImage, grayFromChannels, ocrImages, poorScanWarning, recognise, type UnreadPage, unreadPages } from "./ocr.ts";

export async function convertImage(format: string, bytes: Uint8Array, title: string, options: ConvertOptions): Promise<ConvertedDocument> {
  if (options.ocr === "off") throw new ResearcherError("FILE_UNREADABLE", IMAGE_OCR_OFF);
  const pages = await decode(format, bytes);
  const texts: string[] = [];
  const unread: UnreadPage[] = [];
  const poor: number[] = []; // pages read as gibberish whichever way they were turned
  const readings = new Map<string, PageReading>(); // a fax's repeated pages (a blank, a cover) are read once
  for (const [i, page] of pages.entries()) {
    // Each page is decoded only when OCR gets to it, and its pixels are garbage once it is read (the worker collects
    // a large heap between OCR pages): a long fax is never held decoded all at once.
    const read = await recognise(
      (found) => {
        found(); // an image's page is an image: decoding it is OCR's work, on the page's clock
        return page();
      },
      options,
      { page: i + 1, pages: pages.length },
      readings,
    );
    texts.push(read.text ?? "");
    if (read.failure) unread.push({ page: i + 1, reason: read.failure });
    if (read.poor) poor.push(i + 1);
  }
  if (!texts.some((text) => text.trim())) {
    const first = unread[0] && (pages.length > 1 ? `page ${unread[0].page}: ${unread[0].reason}` : unread[0].reason);
    throw new ResearcherError("FILE_UNREADABLE", first ? `OCR failed on the image: ${first}` : "OCR found no text in the image");
  }
  const ocrPages = texts.filter(Boolean).length;
  const images = readings.size ? { ocrImages: ocrImages(readings) } : {};
  // Listed as a PDF's are, so that status names them (pdf.ts).
  const garbled = poor.length ? { garbled_pages: poor } : {};
  const poorWarnings = poor.length ? [poorScanWarning(poor)] : [];
  if (pages.length === 1) {
    const metadata = { ocr_pages: ocrPages, ...garbled };
    const text = resolveLineBreaks(texts[0]!);
    return { title, format: "markdown", text, firstLine: 1, metadata, ...(poor.length ? { warnings: poorWarnings } : {}), ...images };
  }
  const text = resolveLineBreaks(texts.map((page, i) => `${pageMarker(i + 1)}\n\n${page}\n`).join("\n"));
  const { metadata, warnings = [] } = unreadPages(unread);
  warnings.push(...poorWarnings);
  return {
    title,
    format: "markdown",
    text,
    firstLine: 1,
    metadata: { pages: pages.length, ocr_pages: ocrPages, ...metadata, ...garbled },
    pages: pages.length,
    ...(warnings.length ? { warnings } : {}),
    ...images,
  };
}

/** One page of an image file: its pixels, decoded when called (null when they cannot be made grey). */
type Page = () => Promise<GrayImage | null>;

/**
 * The file's pages. A PNG or JPEG is decoded here, so that a broken one fails before OCR starts; a TIFF's directories
 * are read here and each page decoded by its `Page`, whose failure fails the file with the same reason.
 */
async function decode(extension: string, bytes: Uint8Array): Promise<Page[]> {
  // By content, not name: a JPEG saved as `.png` failed with a size read from the wrong header, a PNG saved as `.tif`
  // was "OCR found no text".
  const format = imageFormat(bytes);
  if (!format) {
    throw new ResearcherError(
      "FILE_UNREADABLE",
      `not a ${extension.toUpperCase()} image: its first bytes are no PNG, JPEG or TIFF signature`,
    );
  }
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

/** The image format its first bytes say (PNG's, JPEG's and TIFF's signatures), if any. */
function imageFormat(bytes: Uint8Array): "png" | "jpg" | "tif" | undefined {
  const starts = (...signature: number[]) => signature.every((byte, i) => bytes[i] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "png";
  if (starts(0xff, 0xd8, 0xff)) return "jpg";
  if (starts(0x49, 0x49, 0x2a, 0x00) || starts(0x4d, 0x4d, 0x00, 0x2a)) return "tif";
  return undefined;
}

function gray(data: ArrayLike<number>, width: number, height: number, channels: number, dpi?: number): GrayImage | null {
  const pixels = grayFromChannels(data, width * height, channels);
  return pixels && { gray: pixels, width, height, dpi };
}

/**
 * The most pixels a page may have: a header claims a size, and the decoders allocate it before reading a pixel (a
 * 19 KB TIFF claiming 60,000 × 60,000 took 4.7 GB in 1.6 s). A page scanned at 600 dpi on A3 is 70 Mpx.
 */
const MAX_PIXELS = 100_000_000;

/** Refuses a page larger than MAX_PIXELS, before anything is allocated for it. */
function checkPixels(width: number, height: number): void {
  if (width * height > MAX_PIXELS) {
    throw new Error(`the image claims ${width} × ${height} pixels, more than the ${MAX_PIXELS / 1e6} million a page may have`);
  }
}

/** A JPEG stream's size from its frame header (SOFn), or undefined when it has none before the scan. */
function jpegSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  for (let at = 2; at + 9 < bytes.length; ) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1]!;
    if (marker === 0xff || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += marker === 0xff ? 1 : 2; // fill bytes, and markers without a length
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (bytes[at + 5]! << 8) | bytes[at + 6]!, width: (bytes[at + 7]! << 8) | bytes[at + 8]! };
    }
    if (marker === 0xda) return undefined; // the scan, and no frame header before it
    at += 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!);
  }
  return undefined;
}

/** Parse a JPEG stream, refusing one whose frame claims more than MAX_PIXELS (parse allocates its blocks). */
function parseJpeg<T extends { parse(data: Uint8Array): void }>(jpeg: T, bytes: Uint8Array): T {
  const size = jpegSize(bytes);
  if (size) checkPixels(size.width, size.height);
  jpeg.parse(bytes);
  return jpeg;
}

async function decodePng(bytes: Uint8Array): Promise<GrayImage | null> {
  // IHDR comes first, after the 8-byte signature and its own length and type: width and height, big-endian.
  const header = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24) checkPixels(header.getUint32(16), header.getUint32(20));
  checkPngData(header);
  const png = await import("fast-png");
  let image = png.decode(withoutProfile(bytes));
  if (image.palette) image = { ...image, data: png.convertIndexedToRgb(image), channels: image.palette[0]?.length ?? 3, depth: 8 };
  let samples: ArrayLike<number> = image.data;
  if (image.depth === 16) samples = Uint8Array.from(image.data, (value) => value >> 8);
  else if (image.depth < 8) samples = unpackBits(image.data, image.width * image.channels, image.height, image.depth);
  // pHYs in pixels per metre → dots per inch.
  const dpi = image.resolution?.unit === 1 ? image.resolution.x * 0.0254 : undefined;
  return gray(samples, image.width, image.height, image.channels, dpi);
}

/** Samples per pixel of each PNG colour type: grey, RGB, palette, grey + alpha, RGBA. */
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * A PNG whose compressed pixel data (its IDAT chunks) is larger than its pixels could need, even stored without
 * compression: a decompression bomb (a 3 MB file claiming 1 × 1 pixels inflated for 10 s to 1.4 GB before the
 * memory budget stopped it). fast-png inflates it all, whatever the header says.
 */
function checkPngData(view: DataView): void {
  if (view.byteLength < 33) return;
  const [width, height, depth, type, interlaced] = [
    view.getUint32(16),
    view.getUint32(20),
    view.getUint8(24),
    view.getUint8(25),
    view.getUint8(28),
  ];
  const rowBytes = Math.ceil((width * (PNG_CHANNELS[type] ?? 4) * depth) / 8) + 1; // each row starts with its filter
  const raw = height * rowBytes * (interlaced ? 2 : 1); // Adam7's passes add a filter byte and a partial byte per row
  let compressed = 0;
  for (let at = 8; at + 8 <= view.byteLength; ) {
    const length = view.getUint32(at);
    if (view.getUint32(at + 4) === 0x49444154) compressed += length; // "IDAT"
    at += 12 + length;
  }
  // Stored deflate blocks cost 5 bytes in 65,535, the zlib stream 6: a real image never needs more than that.
  if (compressed > raw + raw / 8192 + 4096)
    throw new Error(`its pixel data (${compressed} bytes) is more than ${width} × ${height} pixels need`);
}

/**
 * A PNG without its embedded colour profiles (iCCP chunks), which fast-png inflates whole though OCR never uses them:
 * a 1.5 MB profile that inflated to 1.5 GB failed a PNG whose pixels were fine (s30 hostile F6). A broken chain of
 * chunks is left as it is from there on, for fast-png to say what is wrong with it.
 */
function withoutProfile(bytes: Uint8Array): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kept: Uint8Array[] = [];
  let from = 0; // the start of the bytes kept since the last profile
  let at = 8;
  while (at + 8 <= bytes.length) {
    const end = at + 12 + view.getUint32(at);
    if (end > bytes.length) break;
    if (view.getUint32(at + 4) === 0x69434350) {
      kept.push(bytes.subarray(from, at)); // "iCCP"
      from = end;
    }
    at = end;
  }
  if (kept.length === 0) return bytes;
  kept.push(bytes.subarray(from));
  const out = new Uint8Array(kept.reduce((sum, part) => sum + part.length, 0));
  let put = 0;
  for (const part of kept) {
    out.set(part, put);
    put += part.length;
  }
  return out;
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
  const jpeg = parseJpeg(new JpegImage(), bytes);
  const data = jpeg.getData({ width: jpeg.width, height: jpeg.height, forceRGB: true });
  return gray(data, jpeg.width, jpeg.height, 3);
}

/** A TIFF directory as utif2 reads it: tags by number (`t256`: width), values as arrays. */
type Ifd = UTIF.IFD & Record<`t${number}`, number[] | Uint8Array | undefined>;

/** TIFF compression 7: each strip or tile is a JPEG stream (what scanners write). */
const JPEG_COMPRESSION = 7;

/** More pages than any scanner's TIFF holds: a directory chain this long is a crafted one. */
const MAX_TIFF_PAGES = 10_000;

/**
 * Tags whose values utif2 follows to more directories, recursively and without looking: SubIFDs (330), EXIF (34665),
 * GPS (34853), the MakerNote (37500, read as a directory, a Nikon one as a whole TIFF), DNG's private data (50740) and
 * Fuji's directory (61440). A 4 KB file whose 30 directories each named the next one twice as sub-images made 2^30
 * directory reads (19 s, 3.4 GB before the memory budget stopped it: s30 hostile F2); one naming itself overflowed
 * the stack. Pages are the main chain's directories alone, so these tags are renamed to UNREAD_TAG in the copy
 * utif2 reads: it then reads no directory but the pages'. (It follows no other tag: EXIF's interop 40965 neither.)
 */
const TIFF_POINTER_TAGS = new Set([330, 34665, 34853, 37500, 50740, 61440]);
/** A private tag number that utif2 gives no meaning. */
const UNREAD_TAG = 65_535;

/** Bytes per value of each TIFF field type (1 BYTE … 13 IFD) that utif2 reads: none of 6 (SBYTE) nor past 13. */
const TIFF_TYPE_BYTES = [0, 1, 1, 2, 4, 8, 0, 1, 2, 4, 8, 4, 8, 4];
/** BYTE, ASCII and UNDEFINED, which utif2 cuts at the file's end; it reads every value other types claim. */
const CLIPPED_TYPES = new Set([1, 2, 7]);
/**
 * The bytes of entries and values a TIFF's page directories may claim, as a multiple of its size: a file holds each
 * once (pages may share a value), but directories that overlap each other made utif2 read one file's bytes again and
 * again. The floor keeps a small or truncated file from being refused for an entry count past its end.
 */
const TIFF_CLAIM_RATIO = 2;
const MIN_TIFF_CLAIM = 2 ** 20;

/**
 * Refuse a TIFF that utif2 would read for far longer than its size says, and hide from utif2 the directories it
 * would follow beyond the pages (TIFF_POINTER_TAGS), in `data`, the copy it reads. Refused: a chain of page
 * directories that loops back or never ends (a 4 KB file whose one directory named itself as the next grew the
 * process by gigabytes), a tag claiming more values than the file holds (utif2 reads each one: 2^31 of them took 3.8 s
 * and 1.1 GB), and directories claiming more than TIFF_CLAIM_RATIO times the file in all.
 */
function prepareTiff(data: Uint8Array): void {
  const little = data[0] === 0x49; // "II"
  // As utif2 reads them: a byte past the file's end is 0.
  const u16 = (at: number) => (little ? data[at]! | (data[at + 1]! << 8) : (data[at]! << 8) | data[at + 1]!);
  const u32 = (at: number) => (little ? u16(at) + u16(at + 2) * 65_536 : u16(at) * 65_536 + u16(at + 2));
  const most = Math.max(MIN_TIFF_CLAIM, TIFF_CLAIM_RATIO * data.length);
  let claimed = 0;
  for (const directory of tiffChain(data.length, u16, u32)) {
    const entries = u16(directory);
    claimed += 12 * entries; // read even past the file's end
    for (let i = 0, entry = directory + 2; i < entries && entry < data.length; i++, entry += 12) {
      const [tag, type, count] = [u16(entry), u16(entry + 2), u32(entry + 4)];
      if (TIFF_POINTER_TAGS.has(tag)) {
        data[entry] = UNREAD_TAG & 255;
        data[entry + 1] = UNREAD_TAG >> 8;
      }
      const bytes = count * (TIFF_TYPE_BYTES[type] ?? 0);
      if (bytes > data.length && !CLIPPED_TYPES.has(type)) {
        throw new Error(`a tag (${tag}) claims ${count} values, more than the file's ${data.length} bytes hold`);
      }
      if (bytes > 4) claimed += Math.min(bytes, data.length);
    }
    if (claimed > most) {
      throw new Error(`its directories claim ${claimed} bytes of entries and values, more than ${TIFF_CLAIM_RATIO} times the file's size`);
    }
  }
}

/**
 * The offsets of a TIFF's page directories, its main chain as utif2 reads it (a 2-byte entry count at each
 * directory, the next one's offset after its 12-byte entries; it stops at a directory whose first entry has no known
 * type; one past the file's end reads as empty), refusing a chain that loops back or never ends.
 */
function tiffChain(size: number, u16: (at: number) => number, u32: (at: number) => number): number[] {
  if (size < 8) return []; // utif2 says what is wrong with it
  const seen = new Set<number>();
  for (let offset = u32(4); offset !== 0; ) {
    if (seen.has(offset)) throw new Error("its list of pages loops back to a page it already listed");
    if (seen.size >= MAX_TIFF_PAGES) throw new Error(`it lists more than ${MAX_TIFF_PAGES} pages`);
    const entries = u16(offset);
    const type = u16(offset + 4);
    if (entries !== 0 && (type < 1 || type > 13)) break;
    seen.add(offset);
    offset = u32(offset + 2 + entries * 12);
  }
  return [...seen];
}

/** The TIFF's images (directories with a width and height), each decoded when its page is read. */
async function tiffPages(bytes: Uint8Array): Promise<Page[]> {
  const UTIF = (await import("utif2")).default;
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  prepareTiff(new Uint8Array(buffer));
  const ifds = (UTIF.decode(buffer) as Ifd[]).filter((ifd) => ifd.t256 && ifd.t257); // the directory holds an image
  if (ifds.length === 0) throw new Error("it holds no image");
  return ifds.map((ifd) => async () => {
    checkPixels(ifd.t256![0]!, ifd.t257![0]!);
    if (ifd.t259?.[0] === JPEG_COMPRESSION) return decodeJpegTiff(new Uint8Array(buffer), ifd);
    const page = { ...ifd }; // utif2 writes the pixels into the directory: a copy, garbage once the page is read
    UTIF.decodeImage(buffer, page);
    return gray(UTIF.toRGBA8(page), page.width, page.height, 4);
  });
}

/**
 * A JPEG-compressed TIFF page (compression 7), each strip or tile decoded by pdf.js's JPEG decoder: utif2's own
 * decoder writes a grey JPEG as RGB into a grey image (three times its size: a smear of the top third). The
 * directory's JPEGTables (tag 347), when there, hold the quantisation and Huffman tables the strips leave out.
 */
async function decodeJpegTiff(data: Uint8Array, ifd: Ifd): Promise<GrayImage | null> {
  const { JpegImage } = await import("pdfjs-dist/image_decoders/pdf.image_decoders.mjs");
  const width = ifd.t256![0]!;
  const height = ifd.t257![0]!;
  if (ifd.t284?.[0] === 2) throw new Error("JPEG-compressed TIFF with separate colour planes is not supported");
  const tiled = ifd.t322 !== undefined;
  const pieceWidth = tiled ? ifd.t322![0]! : width;
  const pieceHeight = tiled ? ifd.t323![0]! : Math.min(ifd.t278?.[0] || height, height);
  const offsets = (tiled ? ifd.t324 : ifd.t273) ?? [];
  const counts = (tiled ? ifd.t325 : ifd.t279) ?? [];
  const photometric = ifd.t262?.[0] ?? 1; // 0 white is zero, 1 black is zero, 2 RGB, 5 CMYK, 6 YCbCr
  const across = Math.ceil(width / pieceWidth);
  const gray = new Uint8Array(width * height).fill(255);
  for (let i = 0; i < offsets.length; i++) {
    const left = (i % across) * pieceWidth;
    const top = Math.floor(i / across) * pieceHeight;
    if (top >= height) break;
    // RGB stored as is, or converted to YCbCr (as the TIFF says, unless the stream's Adobe marker says otherwise).
    const jpeg = new JpegImage({ colorTransform: photometric === 2 ? 0 : photometric === 6 ? 1 : -1 });
    parseJpeg(jpeg, jpegStream(ifd.t347, data.subarray(offsets[i]!, offsets[i]! + counts[i]!)));
    const channels = jpeg.numComponents === 1 ? 1 : 3;
    const piece = grayFromChannels(
      jpeg.getData({ width: jpeg.width, height: jpeg.height, forceRGB: channels === 3 }),
      jpeg.width * jpeg.height,
      channels,
    );
    if (!piece) return null;
    const columns = Math.min(jpeg.width, pieceWidth, width - left);
    const rows = Math.min(jpeg.height, pieceHeight, height - top);
    for (let y = 0; y < rows; y++) gray.set(piece.subarray(y * jpeg.width, y * jpeg.width + columns), (top + y) * width + left);
  }
  if (photometric === 0) for (let p = 0; p < gray.length; p++) gray[p] = 255 - gray[p]!;
  return { gray, width, height };
}

/** A strip's JPEG stream, with the directory's shared tables put in front: the tables' stream without its end
 * marker (FF D9), then the strip's without its start marker (FF D8). */
function jpegStream(tables: ArrayLike<number> | undefined, strip: Uint8Array): Uint8Array {
  if (!tables || tables.length < 4) return strip;
  const head = tables[tables.length - 2] === 0xff && tables[tables.length - 1] === 0xd9 ? tables.length - 2 : tables.length;
  const body = strip[0] === 0xff && strip[1] === 0xd8 ? strip.subarray(2) : strip;
  const stream = new Uint8Array(head + body.length);
  for (let i = 0; i < head; i++) stream[i] = tables[i]!;
  stream.set(body, head);
  return stream;
}
