/** Standalone images read by OCR (issue 24): PNG, JPEG and TIFF decoded without native code. */
import { expect, spyOn, test } from "bun:test";
import { join } from "node:path";
import { encode as encodePng } from "fast-png";
import UTIF from "utif2";
import { convertFile, formatOf } from "../src/convert/convert.ts";
import { grayFromChannels } from "../src/convert/ocr.ts";
import { agreementScore } from "./agreement.ts";
import { conversionFailure, SHARED, testShared } from "./helpers.ts";
import { SCANNED, scannedJpeg, scannedStrip, scannedTruth } from "./pdf-fixtures.ts";

const SCAN = join(SHARED, SCANNED, "scan-01.pdf");
const OCR_TIMEOUT = 240_000;

test("image types fold their aliases", () => {
  expect([formatOf("a.JPEG"), formatOf("b.jpg"), formatOf("c.tiff"), formatOf("d.png")]).toEqual(["jpg", "jpg", "tif", "png"]);
});

testShared(
  "a JPEG scan is read by OCR",
  async () => {
    const doc = await convertFile("scan.jpg", await scannedJpeg(SCAN, 1));
    expect(doc.metadata).toEqual({ ocr_pages: 1 });
    expect(doc.text).toStartWith("## UNAWARENESS OF HYPOGLYCAEMIA");
    expect(agreementScore(doc.text, scannedTruth(SCAN, 1))).toBeGreaterThanOrEqual(0.9);
  },
  OCR_TIMEOUT,
);

testShared(
  "PNG and TIFF are read by OCR",
  async () => {
    const { data: gray, width, height } = await scannedStrip(SCAN, 260);
    const png = await convertFile("title.png", encodePng({ width, height, data: gray, channels: 1, depth: 8 }));
    expect(png.text).toContain("UNAWARENESS OF HYPOGLYCAEMIA");
    const rgba = new Uint8Array(width * height * 4).map((_, i) => (i % 4 === 3 ? 255 : gray[i >> 2]!));
    const tiff = await convertFile("title.tiff", new Uint8Array(UTIF.encodeImage(rgba, width, height)));
    expect(tiff).toMatchObject({ metadata: { ocr_pages: 1 } });
    expect(tiff.text).toContain("UNAWARENESS OF HYPOGLYCAEMIA");
  },
  OCR_TIMEOUT,
);

testShared(
  "an image upside down is read turned; one OCR reads as gibberish every way is kept, listed as garbled (s25 P5)",
  async () => {
    const { data, width, height } = await scannedStrip(SCAN, 260);
    const turned = await convertFile("turned.png", encodePng({ width, height, data: data.slice().reverse(), channels: 1, depth: 8 }));
    expect(turned.text).toContain("UNAWARENESS OF HYPOGLYCAEMIA");
    expect(turned.metadata).toEqual({ ocr_pages: 1 });
    // Mirrored (a transparency scanned from behind): no turn reads it.
    const mirrored = data.slice();
    for (let y = 0; y < height; y++) mirrored.subarray(y * width, (y + 1) * width).reverse();
    const doc = await convertFile("mirrored.png", encodePng({ width, height, data: mirrored, channels: 1, depth: 8 }));
    expect(doc.text.length).toBeGreaterThan(50);
    expect(doc.metadata).toEqual({ ocr_pages: 1, garbled_pages: [1] });
    expect(doc.warnings).toEqual([
      "1 scanned page reads as gibberish whichever way it is turned (OCR is unsure of its words: search will miss them): page 1",
    ]);
  },
  OCR_TIMEOUT,
);

testShared("an image with ocr: off, or one that is not an image, fails with a reason", async () => {
  const off = await conversionFailure(convertFile("scan.jpg", await scannedJpeg(SCAN, 1), { ocr: "off" }));
  expect(off.message).toBe("an image is read only by OCR, which is off for this repository");
  const broken = await conversionFailure(convertFile("x.png", new TextEncoder().encode("not a png")));
  expect(broken.message).toBe("not a PNG image: its first bytes are no PNG, JPEG or TIFF signature");
});

testShared(
  "an image is decoded by its content, whatever its extension says: a JPEG saved as .png, a PNG saved as .tif (s13 hostile #5)",
  async () => {
    const jpeg = await convertFile("scan.png", await scannedJpeg(SCAN, 1));
    expect(jpeg.text).toStartWith("## UNAWARENESS OF HYPOGLYCAEMIA");
    const { data, width, height } = await scannedStrip(SCAN, 260);
    const png = await convertFile("title.tif", encodePng({ width, height, data, channels: 1, depth: 8 }));
    expect(png.text).toContain("UNAWARENESS OF HYPOGLYCAEMIA");
  },
  OCR_TIMEOUT,
);

test("a TIFF whose list of pages loops back is refused at once, not followed until memory runs out (s11 hostile #2b)", async () => {
  // A 4 KB file whose one directory named itself as the next: utif2 listed pages forever and the process grew by
  // gigabytes before the memory budget stopped it.
  const bytes = new Uint8Array(UTIF.encodeImage(new Uint8Array(8 * 8 * 4).fill(255), 8, 8));
  const view = new DataView(bytes.buffer);
  const little = bytes[0] === 0x49;
  const first = view.getUint32(4, little);
  view.setUint32(first + 2 + view.getUint16(first, little) * 12, first, little); // the next page is this one
  const started = performance.now();
  const error = await conversionFailure(convertFile("loop.tif", bytes));
  expect(error.message).toBe("not a readable TIF image: its list of pages loops back to a page it already listed");
  expect(performance.now() - started).toBeLessThan(5_000);
});

test("a TIFF's sub-directories are never read: nested two per level 30 deep, or naming themselves (s30 hostile F2)", async () => {
  // utif2 follows SubIFD, EXIF and GPS pointers recursively: 30 levels of two made 2^30 directory reads (19 s and 3.4 GB
  // before the memory budget stopped it), and one naming itself overflowed the stack. Only the pages are needed, and
  // the page here is read (a flat grey square, so OCR finds no text in it). A spy stops utif2 early if it goes deeper.
  const utif = UTIF as unknown as { _readIFD: (...args: unknown[]) => unknown };
  const readDirectory = utif._readIFD;
  let reads = 0;
  const spy = spyOn(utif, "_readIFD").mockImplementation((...args) => {
    if (++reads > 1000) throw new Error("utif2 read more than 1,000 directories");
    return readDirectory.apply(utif, args);
  });
  try {
    for (const file of [
      nestedTiff(30, 2, 330),
      nestedTiff(1, 1, 330, true),
      nestedTiff(1, 1, 34665, true),
      nestedTiff(1, 2, 34853, true),
    ]) {
      reads = 0;
      const error = await conversionFailure(convertFile("nested.tif", file));
      expect(error.message).toBe("OCR found no text in the image");
      expect(reads).toBe(1);
    }
  } finally {
    spy.mockRestore();
  }
});

test("a TIFF tag claiming more values than the file holds, or directories claiming it again and again, is refused at once (s30 hostile F2)", async () => {
  // A tag claiming 2^31 values took utif2 3.8 s and 1.1 GB, reading them past the file's end.
  const file = nestedTiff(1, 1, 700, true);
  const view = new DataView(file.buffer);
  view.setUint16(8 + 2 + 12 * 9 + 2, 4, true); // the last entry: 2^20 LONGs
  view.setUint32(8 + 2 + 12 * 9 + 4, 2 ** 20, true);
  const error = await conversionFailure(convertFile("count.tif", file));
  expect(error.message).toBe(`not a readable TIF image: a tag (700) claims 1048576 values, more than the file's ${file.length} bytes hold`);
  // 2,000 directories 12 bytes apart, each of 2,000 entries that run over the next ones: 4 million entry reads in 48 KB.
  const overlapping = overlappingTiff(2000);
  const started = performance.now();
  const overlap = await conversionFailure(convertFile("overlap.tif", overlapping));
  expect(overlap.message).toMatch(
    /^not a readable TIF image: its directories claim \d+ bytes of entries and values, more than 2 times the file's size$/,
  );
  expect(performance.now() - started).toBeLessThan(2_000);
});

test("a PNG's colour profile is never inflated: its pixels are read whatever the profile holds (s30 hostile F6)", async () => {
  // fast-png inflated the iCCP profile, which OCR never uses: a 1.5 MB bomb in it (1.5 GB inflated) failed the whole
  // PNG on memory. Profiles it cannot inflate at all (a broken stream, an unknown method) show it is not inflated.
  const { zlibSync } = await import("fflate");
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, 8);
  new DataView(ihdr.buffer).setUint32(4, 8);
  ihdr[8] = 8; // 8 × 8 grey, 8 bits
  const pixels = zlibSync(new Uint8Array(8 * 9).map((_, i) => (i % 9 ? 128 : 0))); // each row: filter 0, then grey
  const name = [...new TextEncoder().encode("profile"), 0];
  for (const profile of [
    [...name, 0, ...zlibSync(new Uint8Array(2 ** 20)).subarray(0, 100)], // a deflate stream cut short
    [...name, 1, 1, 2, 3], // a compression method PNG does not define
  ]) {
    const chunks = [chunk("IHDR", ihdr), chunk("iCCP", new Uint8Array(profile)), chunk("IDAT", pixels), chunk("IEND", new Uint8Array())];
    const error = await conversionFailure(convertFile("profile.png", png(chunks)));
    expect(error.message).toBe("OCR found no text in the image");
  }
});

test("a PNG whose pixel data is more than its size needs (a decompression bomb) is refused before it is inflated (s13 review #8)", async () => {
  const { zlibSync } = await import("fflate");
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, 1);
  new DataView(ihdr.buffer).setUint32(4, 1);
  ihdr[8] = 8; // 1 × 1 grey, 8 bits
  const idat = zlibSync(new Uint8Array(64 * 2 ** 20), { level: 9 }); // 64 MB of zeros in ~64 KB
  const bytes = png([chunk("IHDR", ihdr), chunk("IDAT", idat), chunk("IEND", new Uint8Array())]);
  const started = performance.now();
  const error = await conversionFailure(convertFile("bomb.png", bytes));
  expect(error.message).toStartWith("not a readable PNG image: its pixel data (");
  expect(error.message).toEndWith("bytes) is more than 1 × 1 pixels need");
  expect(performance.now() - started).toBeLessThan(2_000);
});

test("alpha is composited over white: a transparent pixel is white, translucent black is grey", () => {
  // Grey + alpha: transparent black, opaque black, half-transparent black, opaque mid-grey.
  expect([...grayFromChannels([0, 0, 0, 255, 0, 128, 100, 255], 4, 2)!]).toEqual([255, 0, 127, 100]);
  // RGBA: transparent black (how editors store an empty background), opaque white, half-transparent black.
  expect([...grayFromChannels([0, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 128], 3, 4)!]).toEqual([255, 255, 127]);
  expect([...grayFromChannels([0, 0, 0, 90, 90, 90], 2, 3)!]).toEqual([0, 90]); // no alpha: as it was
});

testShared(
  "black text on a transparent background is read, in PNG (grey + alpha, RGBA) and TIFF",
  async () => {
    const { data: gray, width, height } = await scannedStrip(SCAN, 260);
    // Black ink whose darkness is its opacity; the background is (0, 0, 0, 0), as image editors store it.
    const rgba = new Uint8Array(width * height * 4).map((_, i) => (i % 4 === 3 ? 255 - gray[i >> 2]! : 0));
    const grayAlpha = new Uint8Array(width * height * 2).map((_, i) => (i % 2 === 1 ? 255 - gray[i >> 1]! : 0));
    const files: [string, Uint8Array][] = [
      ["rgba.png", encodePng({ width, height, data: rgba, channels: 4, depth: 8 })],
      ["gray-alpha.png", encodePng({ width, height, data: grayAlpha, channels: 2, depth: 8 })],
      ["rgba.tif", new Uint8Array(UTIF.encodeImage(rgba, width, height))],
    ];
    for (const [name, bytes] of files) expect((await convertFile(name, bytes)).text).toContain("UNAWARENESS OF HYPOGLYCAEMIA");
  },
  OCR_TIMEOUT,
);

testShared(
  "a multi-page TIFF is decoded a page at a time, as OCR comes to each page",
  async () => {
    const { data: gray, width, height } = await scannedStrip(SCAN, 260);
    const blank = { width: 300, height: 100, strip: new Uint8Array(300 * 100).fill(255), tags: {} };
    const title = { width, height, strip: gray, tags: {} };
    const events: string[] = [];
    const decodeImage = UTIF.decodeImage;
    const spy = spyOn(UTIF, "decodeImage").mockImplementation((...args) => {
      events.push("decode");
      return decodeImage(...args);
    });
    try {
      const onOcrPage = (phase: "start" | "end", { page }: { page: number }) => events.push(`${phase} ${page}`);
      const doc = await convertFile("fax.tif", tiff([title, blank, title]), { onOcrPage });
      expect(doc.metadata).toEqual({ pages: 3, ocr_pages: 2 });
      expect(doc.text.split("<!-- page 3 -->")[1]).toContain("UNAWARENESS OF HYPOGLYCAEMIA");
    } finally {
      spy.mockRestore();
    }
    // Before, every page was decoded (to RGBA and grey) before the first was read: memory grew with the page count.
    expect(events).toEqual(["start 1", "decode", "end 1", "start 2", "decode", "end 2", "start 3", "decode", "end 3"]);
  },
  OCR_TIMEOUT,
);

testShared(
  "a JPEG-compressed TIFF (compression 7, as scanners write it; grey, tables apart) is read by OCR",
  async () => {
    const { width, height, tables, strip } = splitJpeg(await scannedJpeg(SCAN, 1));
    const doc = await convertFile("scan.tif", tiff([{ width, height, strip, tags: { 259: [7], 347: tables } }]));
    expect(doc.metadata).toEqual({ ocr_pages: 1 });
    expect(doc.text).toStartWith("## UNAWARENESS OF HYPOGLYCAEMIA");
    expect(agreementScore(doc.text, scannedTruth(SCAN, 1))).toBeGreaterThanOrEqual(0.9);
  },
  OCR_TIMEOUT,
);

/** A PNG chunk; its CRC left 0, which fast-png does not check. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  new DataView(out.buffer).setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  return out;
}

/** A PNG of these chunks. */
function png(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(8 + chunks.reduce((sum, part) => sum + part.length, 0));
  out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let at = 8;
  for (const part of chunks) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * A little-endian TIFF of one 8 × 8 grey page whose directory's last entry, `tag` (LONG), names `fanOut` directories
 * like it, each naming as many of the next level's, `levels` deep (all of them itself when `self`).
 */
function nestedTiff(levels: number, fanOut: number, tag: number, self = false): Uint8Array {
  const entries = 10;
  const size = 2 + 12 * entries + 4;
  const stride = size + 4 * fanOut; // a directory, then the offsets its last entry names
  const strip = 8 + levels * stride;
  const bytes = new Uint8Array(strip + 64).fill(128, strip);
  const view = new DataView(bytes.buffer);
  bytes.set([0x49, 0x49, 42, 0]);
  view.setUint32(4, 8, true);
  for (let level = 0; level < levels; level++) {
    const at = 8 + level * stride;
    const last = self || level < levels - 1 ? [tag, 4, fanOut, at + size] : [305, 2, 4, 0x786f62]; // Software: "box"
    const tags = [
      [256, 4, 1, 8],
      [257, 4, 1, 8],
      [258, 3, 1, 8],
      [259, 3, 1, 1],
      [262, 3, 1, 1],
      [273, 4, 1, strip],
      [277, 3, 1, 1],
      [278, 4, 1, 8],
      [279, 4, 1, 64],
      last,
    ];
    view.setUint16(at, entries, true);
    for (const [k, [t, type, count, value]] of tags.entries()) {
      view.setUint16(at + 2 + 12 * k, t!, true);
      view.setUint16(at + 4 + 12 * k, type!, true);
      view.setUint32(at + 6 + 12 * k, count!, true);
      view.setUint32(at + 10 + 12 * k, value!, true);
    }
    for (let k = 0; k < fanOut; k++) view.setUint32(at + size + 4 * k, self ? at : at + stride, true);
  }
  return bytes;
}

/**
 * A TIFF of `n` page directories 12 bytes apart, each of `n` entries (a SHORT of tag 700 each) that run over the
 * directories after it: each directory's count is the end of the entry before, and its link to the next lies past
 * them all.
 */
function overlappingTiff(n: number): Uint8Array {
  const bytes = new Uint8Array(8 + 12 * n + 4 * n + 12 * n);
  const view = new DataView(bytes.buffer);
  bytes.set([0x49, 0x49, 42, 0]);
  view.setUint32(4, 8, true);
  for (let i = 0; i < 2 * n; i++) {
    const at = 8 + 12 * i;
    view.setUint16(at, n, true); // a directory's count, or the end of an entry's value
    view.setUint16(at + 2, 700, true);
    view.setUint16(at + 4, 3, true);
    view.setUint32(at + 6, 1, true);
  }
  for (let i = 0; i < n; i++) view.setUint32(8 + 12 * i + 2 + 12 * n, i < n - 1 ? 8 + 12 * (i + 1) : 0, true);
  return bytes;
}

/**
 * A little-endian TIFF, one strip a page: 8-bit grey (black is zero) and uncompressed unless `tags` (tag number →
 * values; bytes for an UNDEFINED tag such as JPEGTables) say otherwise.
 */
function tiff(pages: { width: number; height: number; strip: Uint8Array; tags: Record<number, number[] | Uint8Array> }[]): Uint8Array {
  const bytes: number[] = [0x49, 0x49, 42, 0, 0, 0, 0, 0];
  const put = (at: number, value: number, size: number) => {
    for (let k = 0; k < size; k++) bytes[at + k] = (value >>> (8 * k)) & 255;
  };
  let link = 4; // where the offset of the next directory goes
  for (const { width, height, strip, tags } of pages) {
    const stripAt = bytes.length;
    for (const byte of strip) bytes.push(byte);
    const entries = new Map<number, number[] | Uint8Array>([
      [256, [width]],
      [257, [height]],
      [258, [8]],
      [259, [1]],
      [262, [1]],
      [273, [stripAt]],
      [277, [1]],
      [278, [height]],
      [279, [strip.length]],
    ]);
    for (const [tag, values] of Object.entries(tags)) entries.set(Number(tag), values);
    const sorted = [...entries].sort(([a], [b]) => a - b);
    const values = sorted.map(([tag, value]) => {
      const type = value instanceof Uint8Array ? 7 : tag === 273 || tag === 279 ? 4 : 3;
      const size = type === 7 ? 1 : type === 4 ? 4 : 2;
      let at = -1; // values of more than 4 bytes go before the directory
      if (value.length * size > 4) {
        if (bytes.length % 2) bytes.push(0);
        at = bytes.length;
        for (const v of value) put(bytes.length, v, size);
      }
      return { tag, type, size, value, at };
    });
    if (bytes.length % 2) bytes.push(0);
    put(link, bytes.length, 4);
    const directory = bytes.length;
    put(directory, sorted.length, 2);
    values.forEach(({ tag, type, size, value, at }, i) => {
      const entry = directory + 2 + 12 * i;
      put(entry, tag, 2);
      put(entry + 2, type, 2);
      put(entry + 4, value.length, 4);
      if (at >= 0) put(entry + 8, at, 4);
      else
        value.forEach((v, k) => {
          put(entry + 8 + k * size, v, size);
        });
      put(entry + 8 + value.length * size, 0, Math.max(0, 4 - value.length * size));
    });
    link = directory + 2 + 12 * sorted.length;
    put(link, 0, 4);
  }
  return Uint8Array.from(bytes);
}

/** A JPEG as a TIFF writer stores it: its quantisation and Huffman tables apart (JPEGTables, a stream of their own),
 * and the rest as the strip; with the frame's size. */
function splitJpeg(jpeg: Uint8Array) {
  const tables = [0xff, 0xd8];
  const strip = [0xff, 0xd8];
  let width = 0;
  let height = 0;
  let at = 2;
  while (jpeg[at + 1] !== 0xda) {
    const marker = jpeg[at + 1]!;
    const segment = jpeg.subarray(at, at + 2 + ((jpeg[at + 2]! << 8) | jpeg[at + 3]!));
    if (marker >= 0xc0 && marker <= 0xc2) [height, width] = [(segment[5]! << 8) | segment[6]!, (segment[7]! << 8) | segment[8]!];
    (marker === 0xdb || marker === 0xc4 ? tables : strip).push(...segment);
    at += segment.length;
  }
  tables.push(0xff, 0xd9);
  for (const byte of jpeg.subarray(at)) strip.push(byte);
  return { width, height, tables: Uint8Array.from(tables), strip: Uint8Array.from(strip) };
}

testShared(
  "an image whose header claims 60,000 × 60,000 pixels is refused before anything is allocated for it (s12 hostile #11)",
  async () => {
    // A 19 KB JPEG-compressed TIFF claiming that took the process to 4.7 GB in 1.6 s: the decoders allocate the
    // claimed size before reading a pixel.
    const claimed = "claims 60000 × 60000 pixels, more than the 100 million a page may have";
    const jpeg = await scannedJpeg(SCAN, 1);
    const { tables, strip } = splitJpeg(jpeg);
    const big = new Uint8Array(jpeg);
    const sof = big.findIndex((byte, i) => byte === 0xff && big[i + 1] === 0xc0);
    new DataView(big.buffer).setUint16(sof + 5, 60000); // height, then width
    new DataView(big.buffer).setUint16(sof + 7, 60000);
    const png = encodePng({ width: 8, height: 8, data: new Uint8Array(64).fill(255), channels: 1, depth: 8 });
    new DataView(png.buffer, png.byteOffset).setUint32(16, 60000);
    new DataView(png.buffer, png.byteOffset).setUint32(20, 60000);
    const rssBefore = process.memoryUsage.rss();
    for (const [name, bytes] of [
      ["huge.jpg", big],
      ["huge.png", png],
      ["huge.tif", tiff([{ width: 60000, height: 60000, strip: new Uint8Array(64), tags: {} }])],
      ["jpeg.tif", tiff([{ width: 60000, height: 60000, strip, tags: { 259: [7], 347: tables } }])],
      ["strip.tif", tiff([{ width: 64, height: 64, strip: splitJpeg(big).strip, tags: { 259: [7], 347: splitJpeg(big).tables } }])],
    ] as const) {
      const error = await conversionFailure(convertFile(name, bytes));
      expect(error.message).toContain(claimed);
    }
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(500 * 2 ** 20);
  },
);
