/**
 * How far a scanned page's text lines are tilted, measured from its pixels before OCR reads it.
 *
 * Tesseract can measure the tilt itself (FindLines, then GetGradient), but only by analysing the page's layout, and
 * an image set again straightened is analysed again from the start: on the shared scans that first analysis was a
 * tenth of a page's OCR time. A projection profile measures the same angle in a few milliseconds: the page's dark
 * pixels are summed along rows sheared by each candidate slope, and the rows of text lines stand out sharpest (the
 * sum of squared row counts is largest) when the shear matches the lines' slope.
 */

/** A page's 8-bit grey pixels, row by row (ocr.ts GrayImage). */
interface Pixels {
  gray: Uint8Array;
  width: number;
  height: number;
}

/**
 * Tilts are looked for up to this far either way (radians, 15°): a page scanned crooked or photographed askew, not
 * one turned sideways (ocr.ts reads a page that reads poorly turned by quarter turns).
 */
const MAX_SKEW = 0.2618;
const DEGREE = Math.PI / 180;
/**
 * The search, coarse to fine: each stage looks on either side of the last one's best by its span in its steps.
 * The coarse stage looks at cells twice as large, whose profile changes more slowly with the angle (its peak is
 * about as wide as a text line's height over the page's width), so that its steps cannot step over it.
 */
const STAGES = [
  { span: MAX_SKEW, step: 0.5 * DEGREE, coarse: true },
  { span: 0.5 * DEGREE, step: 0.1 * DEGREE, coarse: false },
  { span: 0.1 * DEGREE, step: 0.02 * DEGREE, coarse: false },
];
/** The fine stages' cells are of about this resolution: finer costs time and measures no better. */
const CELL_DPI = 75;
/** Fewer dark cells than this (a blank page, a page number) show no lines to measure. */
const MIN_DARK_CELLS = 500;

/**
 * The angle (radians) to turn the page by to make its text lines level, in the sense of Tesseract's SetImage angle
 * (and of its GetGradient): 0 when the page shows too little to measure.
 */
export function textSkew(image: Pixels, dpi: number): number {
  const fine = cellGrid(image, Math.max(1, Math.round(dpi / CELL_DPI)));
  const fineCells = darkCells(fine);
  if (fineCells.count < MIN_DARK_CELLS) return 0;
  const coarseCells = darkCells(halved(fine));
  let best = 0;
  for (const { span, step, coarse } of STAGES) best = steepestProfile(coarse ? coarseCells : fineCells, best - span, best + span, step);
  // A line rising to the right (y falling as x grows, in image rows) is turned back the other way.
  return -best;
}

/** The page in cells, row by row: 1 where a cell is dark. */
interface CellGrid {
  dark: Uint8Array;
  width: number;
  height: number;
}

/** The dark cells' coordinates. */
interface DarkCells {
  xs: Int32Array;
  ys: Int32Array;
  count: number;
  width: number;
  height: number;
}

/** The page in cells of `factor`×`factor` pixels, a cell dark when any of its pixels is (thin strokes survive). */
function cellGrid({ gray, width, height }: Pixels, factor: number): CellGrid {
  const threshold = otsuThreshold(gray);
  const cellsWide = Math.ceil(width / factor);
  const dark = new Uint8Array(cellsWide * Math.ceil(height / factor));
  const column = new Int32Array(width);
  for (let x = 0; x < width; x++) column[x] = Math.floor(x / factor);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    const cellRow = Math.floor(y / factor) * cellsWide;
    for (let x = 0; x < width; x++) if (gray[row + x]! <= threshold) dark[cellRow + column[x]!] = 1;
  }
  return { dark, width: cellsWide, height: Math.ceil(height / factor) };
}

/** Cells twice as large each way, dark when any of the four is. */
function halved(grid: CellGrid): CellGrid {
  const width = Math.ceil(grid.width / 2);
  const dark = new Uint8Array(width * Math.ceil(grid.height / 2));
  for (let y = 0; y < grid.height; y++) {
    for (let x = 0; x < grid.width; x++) if (grid.dark[y * grid.width + x]) dark[(y >> 1) * width + (x >> 1)] = 1;
  }
  return { dark, width, height: Math.ceil(grid.height / 2) };
}

function darkCells({ dark, width, height }: CellGrid): DarkCells {
  let count = 0;
  for (const cell of dark) count += cell;
  const xs = new Int32Array(count);
  const ys = new Int32Array(count);
  let i = 0;
  for (let at = 0; at < dark.length; at++) {
    if (!dark[at]) continue;
    xs[i] = at % width;
    ys[i++] = Math.floor(at / width);
  }
  return { xs, ys, count, width, height };
}

/** The grey level that best splits the page into ink and paper (Otsu: the largest variance between the two). */
function otsuThreshold(gray: Uint8Array): number {
  const histogram = new Float64Array(256);
  for (const value of gray) histogram[value] = histogram[value]! + 1;
  let sum = 0;
  for (let level = 0; level < 256; level++) sum += level * histogram[level]!;
  let below = 0;
  let sumBelow = 0;
  let best = -1;
  let threshold = 127;
  for (let level = 0; level < 256; level++) {
    const share = histogram[level]!;
    below += share;
    const above = gray.length - below;
    if (!below) continue;
    if (!above) break;
    sumBelow += level * share;
    const between = below * above * (sumBelow / below - (sum - sumBelow) / above) ** 2;
    if (between > best) {
      best = between;
      threshold = level;
    }
  }
  return threshold;
}

/** The angle from `from` to `to` (by `step`) whose sheared row profile is sharpest. */
function steepestProfile(cells: DarkCells, from: number, to: number, step: number): number {
  // Rows sheared by any angle the stages try (up to a degree past MAX_SKEW) over the page's width all have a bin.
  const margin = Math.ceil(Math.tan(MAX_SKEW + DEGREE) * cells.width) + 1;
  const bins = new Float64Array(cells.height + 2 * margin + 1);
  let bestAngle = 0;
  let bestSharpness = -1;
  for (let i = 0; from + i * step <= to + step / 2; i++) {
    const angle = from + i * step;
    const sharpness = profileSharpness(cells, Math.tan(angle), bins, margin);
    if (sharpness > bestSharpness) {
      bestSharpness = sharpness;
      bestAngle = angle;
    }
  }
  return bestAngle;
}

/** The sum of squared counts of dark cells per row, rows sheared by `slope`. */
function profileSharpness({ xs, ys, count }: DarkCells, slope: number, bins: Float64Array, margin: number): number {
  bins.fill(0);
  for (let i = 0; i < count; i++) {
    const row = Math.floor(ys[i]! - slope * xs[i]!) + margin;
    bins[row] = bins[row]! + 1;
  }
  let sharpness = 0;
  for (const n of bins) sharpness += n * n;
  return sharpness;
}
