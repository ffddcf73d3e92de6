/**
 * The text a PDF page draws, read from pdf.js's operator list rather than its text content. pdf.js's
 * `getTextContent` leaves out every glyph outside the page's crop box (its `compareWithLastPosition` tests each
 * glyph against `Page.view`, and no option widens it); pdftotext keeps them. A page whose text all lies outside its
 * crop box (a cropped-down page) is read here instead. Each text-showing operator becomes one text item, placed as
 * pdf.js places glyphs: the text matrix within the transformation matrix, advanced by the glyph widths, spacing and
 * kerning. Horizontal text only.
 */

type Matrix = number[];

/** A positioned run of text, in the shape of pdf.js's text content items. */
export interface DrawnItem {
  str: string;
  dir: "ltr";
  hasEOL: false;
  transform: Matrix;
  width: number;
  height: number;
}

interface Glyph {
  unicode?: string;
  width?: number;
  isSpace?: boolean;
}

export interface OperatorList {
  fnArray: number[];
  argsArray: unknown[][];
}

/** What is used of pdf.js: its operator numbers and its matrix product (`Util.transform`). */
export interface PdfJsDrawing {
  OPS: Record<string, number>;
  Util: { transform(m1: Matrix, m2: Matrix): Matrix };
}

/** A kerning adjustment wider than this share of the font size reads as a space between words (pdf.js's own
 * threshold in its text content, `SPACE_IN_FLOW_MIN_FACTOR`; TeX's word spaces are a quarter of an em). */
const WORD_GAP = 0.102;

/**
 * Text items of the page's drawn text, in drawing order. `fontMatrix` gives a loaded font's matrix (glyph units to
 * text space; 1/1000 when unknown).
 */
export function drawnItems(list: OperatorList, pdfjs: PdfJsDrawing, fontMatrix: (font: string) => Matrix | undefined): DrawnItem[] {
  const page = new PageDrawing(pdfjs, fontMatrix);
  list.fnArray.forEach((op, i) => {
    page.apply(op, list.argsArray[i] ?? []);
  });
  return page.items;
}

const identity = (): Matrix => [1, 0, 0, 1, 0, 0];

/** The text state of the PDF graphics state: the text and line matrices, font size and spacing. */
interface TextState {
  matrix: Matrix;
  line: Matrix;
  size: number;
  /** The font's glyph units to text space (its font matrix's first entry). */
  scale: number;
  charSpacing: number;
  wordSpacing: number;
  hScale: number;
  leading: number;
  rise: number;
}

/** One page's operators applied in order: the graphics and text state they set, the text items they draw. */
class PageDrawing {
  readonly items: DrawnItem[] = [];
  private ctm = identity();
  private text: TextState = {
    matrix: identity(),
    line: identity(),
    size: 0,
    scale: 0.001,
    charSpacing: 0,
    wordSpacing: 0,
    hScale: 1,
    leading: 0,
    rise: 0,
  };
  // The text state's parameters (font, spacing) are part of the graphics state, saved and restored with it.
  private readonly stack: { ctm: Matrix; text: TextState }[] = [];
  private annotation = 0; // annotations' appearances are drawn too; their text is read from the annotations

  constructor(
    private readonly pdfjs: PdfJsDrawing,
    private readonly fontMatrix: (font: string) => Matrix | undefined,
  ) {}

  apply(op: number, args: unknown[]): void {
    const { OPS } = this.pdfjs;
    if (op === OPS.beginAnnotation) this.annotation++;
    if (op === OPS.endAnnotation) this.annotation--;
    if (op === OPS.save || op === OPS.paintFormXObjectBegin) this.stack.push({ ctm: this.ctm, text: { ...this.text } });
    if (op === OPS.restore || op === OPS.paintFormXObjectEnd) this.restore();
    else if (op === OPS.transform) this.ctm = this.pdfjs.Util.transform(this.ctm, args as Matrix);
    else if (op === OPS.paintFormXObjectBegin && args[0])
      this.ctm = this.pdfjs.Util.transform(this.ctm, Array.from(args[0] as ArrayLike<number>));
    else if (op === OPS.showText) {
      if (!this.annotation) this.show(args[0] as (Glyph | number)[]);
    } else this.setText(op, args);
  }

  private restore(): void {
    const saved = this.stack.pop();
    if (!saved) return;
    this.ctm = saved.ctm;
    this.text = { ...saved.text, matrix: this.text.matrix, line: this.text.line }; // the text matrices are not graphics state
  }

  /** The text-state operators (others are ignored). */
  private setText(op: number, args: unknown[]): void {
    const { OPS } = this.pdfjs;
    const text = this.text;
    if (op === OPS.beginText) text.matrix = text.line = identity();
    else if (op === OPS.setTextMatrix) text.matrix = text.line = Array.from(args[0] as ArrayLike<number>);
    else if (op === OPS.moveText) this.moveLine(args[0] as number, args[1] as number);
    else if (op === OPS.setLeadingMoveText) {
      text.leading = -(args[1] as number);
      this.moveLine(args[0] as number, args[1] as number);
    } else if (op === OPS.nextLine) this.moveLine(0, -text.leading);
    else if (op === OPS.setFont) {
      text.size = args[1] as number;
      text.scale = this.fontMatrix(args[0] as string)?.[0] ?? 0.001;
    } else if (op === OPS.setCharSpacing) text.charSpacing = args[0] as number;
    else if (op === OPS.setWordSpacing) text.wordSpacing = args[0] as number;
    else if (op === OPS.setHScale) text.hScale = (args[0] as number) / 100;
    else if (op === OPS.setLeading) text.leading = args[0] as number;
    else if (op === OPS.setTextRise) text.rise = args[0] as number;
  }

  private moveLine(x: number, y: number): void {
    this.text.line = this.pdfjs.Util.transform(this.text.line, [1, 0, 0, 1, x, y]);
    this.text.matrix = this.text.line.slice();
  }

  /**
   * A text-showing operator: one item of its glyphs' text, placed and sized as drawn; the text matrix moves past it.
   */
  private show(glyphs: (Glyph | number)[]): void {
    const { Util } = this.pdfjs;
    const { ctm, text } = this;
    const drawn = Util.transform(ctm, Util.transform(text.matrix, [text.size * text.hScale, 0, 0, text.size, 0, text.rise]));
    const start = Util.transform(ctm, text.matrix);
    let str = "";
    let advance = 0; // in text space
    for (const glyph of glyphs) {
      const step =
        typeof glyph === "number"
          ? (-glyph / 1000) * text.size
          : (glyph.width ?? 0) * text.scale * text.size + text.charSpacing + (glyph.isSpace ? text.wordSpacing : 0);
      if (typeof glyph === "number") {
        if (-glyph / 1000 > WORD_GAP && str && !str.endsWith(" ")) str += " ";
      } else str += glyph.unicode ?? "";
      advance += step * text.hScale;
    }
    text.matrix = Util.transform(text.matrix, [1, 0, 0, 1, advance, 0]);
    const end = Util.transform(ctm, text.matrix);
    const size = Math.hypot(drawn[2]!, drawn[3]!);
    const width = Math.hypot(end[4]! - start[4]!, end[5]! - start[5]!);
    if (str) this.items.push({ str, dir: "ltr", hasEOL: false, transform: [size, 0, 0, size, drawn[4]!, drawn[5]!], width, height: size });
  }
}
