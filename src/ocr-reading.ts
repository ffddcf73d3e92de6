/**
 * What OCR read of a page, as conversion returns it and an index keeps it: one definition for the two stages, which
 * may not import each other (test/imports.test.ts), so that they cannot drift apart (s27 review D4).
 */

/** What OCR read of a page: its text (none when nothing was read), and the page image it was read from. */
export interface OcrReading {
  text?: string;
  /** The text reads as gibberish whichever way the page is turned (poorlyRead): kept, but search will miss it. */
  poor?: boolean;
  /**
   * The key of the page image it was read from (ocr.ts pixelsKey): kept with a page read in a conversion cut short,
   * so that the page read back is still among the document's page images (ConvertedDocument.ocrImages).
   */
  pixels?: string;
}

/** What OCR read of one page image, by its pixels, as an index keeps it across versions of a file. */
export interface OcrImage extends OcrReading {
  pixels: string;
}
