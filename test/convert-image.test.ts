/** Standalone images read by OCR (issue 24): PNG, JPEG and TIFF decoded without native code. */
import { expect, test } from "bun:test";
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
    expect(doc.text).toStartWith("UNAWARENESS OF HYPOGLYCAEMIA");
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

testShared("an image with ocr: off, or one that is not an image, fails with a reason", async () => {
  const off = await conversionFailure(convertFile("scan.jpg", await scannedJpeg(SCAN, 1), { ocr: "off" }));
  expect(off.message).toBe("an image is read only by OCR, which is off for this repository");
  const broken = await conversionFailure(convertFile("x.png", new TextEncoder().encode("not a png")));
  expect(broken.message).toStartWith("not a readable PNG image: ");
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
