/** A scanned page's tilt, measured from its pixels before OCR (skew.ts), on the shared scans' real pages. */
import { describe, expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type GrayImage, pageImage, type PdfPage } from "../src/convert/ocr.ts";
import { textSkew } from "../src/convert/skew.ts";
import { SHARED, testShared } from "./helpers.ts";
import { SCANNED } from "./pdf-fixtures.ts";

/** Page `n` of a shared scan as the grey pixels OCR is given. */
async function scanImage(file: string, n: number): Promise<GrayImage> {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const task = pdfjs.getDocument({ data: new Uint8Array(readFileSync(join(SHARED, SCANNED, file))), verbosity: 0 });
  try {
    const image = await pageImage((await (await task.promise).getPage(n)) as unknown as PdfPage);
    if (!image) throw new Error(`${file} page ${n} paints no image`);
    return image;
  } finally {
    await task.destroy();
  }
}

/** The image turned about its centre so that levelling it takes `angle` radians more (nearest pixel; what falls
 * outside is white paper). */
function turned({ gray, width, height, dpi }: GrayImage, angle: number): GrayImage {
  const out = new Uint8Array(width * height).fill(255);
  const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
  const [cx, cy] = [width / 2, height / 2];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sx = Math.round(cx + (x - cx) * cos - (y - cy) * sin);
      const sy = Math.round(cy + (x - cx) * sin + (y - cy) * cos);
      if (sx >= 0 && sx < width && sy >= 0 && sy < height) out[y * width + x] = gray[sy * width + sx]!;
    }
  }
  return { gray: out, width, height, dpi };
}

const DEGREE = Math.PI / 180;

describe("textSkew", () => {
  testShared("measures a scan's tilt as Tesseract's layout analysis did (FindLines, GetGradient), within 0.05°", async () => {
    // Tesseract 5's gradients for these pages (tesseract.js-core 7.0.0, the angle its SetImage was given before).
    for (const [file, page, tesseract] of [
      ["scan-00.pdf", 1, 0.014673],
      ["scan-01.pdf", 1, -0.011074],
      ["scan-03.pdf", 1, -0.014787],
      ["scan-05.pdf", 1, 0.01466],
    ] as const) {
      const image = await scanImage(file, page);
      expect(Math.abs(textSkew(image, image.dpi ?? 300) - tesseract) / DEGREE).toBeLessThan(0.05);
    }
  });

  testShared("a page turned 3° or 12° further either way measures that much more, and a blank page nothing", async () => {
    // Up to 15° either way: a page photographed askew. The search stopped at 5° and a page turned 7° read its last
    // line out of order, one turned 12° a third of its words (s30b N7).
    const image = await scanImage("scan-02.pdf", 1);
    const dpi = image.dpi ?? 300;
    const level = textSkew(image, dpi);
    for (const extra of [3 * DEGREE, -3 * DEGREE, 12 * DEGREE, -12 * DEGREE]) {
      const measured = textSkew(turned(image, extra), dpi);
      expect(Math.abs(measured - (level + extra)) / DEGREE).toBeLessThan(0.1);
    }
    expect(textSkew({ gray: new Uint8Array(1000 * 1400).fill(250), width: 1000, height: 1400 }, 150)).toBe(0);
  });
});
