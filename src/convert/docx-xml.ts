/**
 * Mammoth's XML reading without a DOM. Mammoth parses each part of a DOCX into an xmldom DOM, copies that into its
 * own light tree of elements, and reads only the copy; the DOM is the bulk of its memory. A table-heavy document
 * with 12.4 MB of XML (`bug65649.docx`, 370,000 elements) built a DOM of ~330 MB that stayed reachable through the
 * whole conversion, beside the copy and the document model, and peaked at 0.9–1 GB. `readXml` is mammoth's
 * `readString` with xmldom's same parser (same namespaces, entities, line ends and errors) handing its events to a
 * builder of mammoth's tree: no DOM is built, and what mammoth never reads is left out of the tree.
 */
// The parser module itself, untyped: the package's types would load the whole DOM library into the project's types.
// @ts-expect-error xmldom's parser module has no types of its own
import { DOMParser } from "@xmldom/xmldom/lib/dom-parser.js";
// @ts-expect-error mammoth's XML tree module has no types
import mammothNodes from "mammoth/lib/xml/nodes.js";
import { MAX_DEPTH, tooDeep } from "./html.ts";
import { escapeUndefinedEntities } from "./xml.ts";

/** What xmldom's parser gives for each attribute of an element. */
interface Attributes {
  length: number;
  getURI(i: number): string | undefined;
  getLocalName(i: number): string;
  getValue(i: number): string;
}

interface MammothElement {
  name: string;
  attributes: Record<string, string>;
  children: MammothNode[];
}

type MammothNode = MammothElement | { type: "text"; value: string };

/**
 * Word's property elements (run, paragraph, cell, table and row properties) hold mostly formatting mammoth never
 * reads: complex-script sizes, borders, widths, shading, spacing. Their children are kept only when mammoth's readers
 * name them (test/convert-docx.test.ts holds this list to mammoth's source). With the revision ids below, this
 * leaves out 2 in 5 elements and 7 in 10 attributes of bug65649.docx's body.
 */
export const PROPERTIES = new Set(["w:rPr", "w:pPr", "w:tcPr", "w:tblPr", "w:trPr"]);
export const MAMMOTH_NAMES = new Set(
  (
    "abstractNum abstractNumId anchor annotationRef ascii author b body bookmarkEnd bookmarkStart br caps char checkBox " +
    "checked comment commentRangeEnd commentRangeStart commentReference customXml default del drawing end endnoteRef " +
    "endnoteReference ffData firstLine fldChar fldCharType font footnoteRef footnoteReference gridSpan hanging highlight " +
    "hyperlink i id ilvl ind initials ins instrText jc lastRenderedPageBreak left lvl moveFrom moveFromRangeEnd " +
    "moveFromRangeStart moveTo moveToRangeEnd moveToRangeStart name noBreakHyphen num numFmt numId numPr numStyleLink " +
    "object p pPr pStyle pict proofErr r rFonts rPr rStyle right sdt sdtContent sdtPr sectPr smallCaps smartTag " +
    "softHyphen start strike style styleId sym sz t tab tbl tblGrid tblHeader tblPr tblStyle tc tcPr tgtFrame tr trPr " +
    "txbxContent type u vMerge val vertAlign"
  )
    .split(" ")
    .map((name) => `w:${name}`),
);

/** Revision-session ids, on nearly every paragraph, run and row: mammoth reads none. */
export const isRevisionId = (name: string) => name.startsWith("w:rsid");

/**
 * An XML part as mammoth's tree, element and attribute names written `prefix:name` through `namespaces` (namespace
 * URI → prefix) or `{uri}name`, as mammoth's own reader writes them. Any message of the parser fails the part, as
 * in mammoth; references to entities XML does not define are kept as text first (`escapeUndefinedEntities`).
 */
export function readXml(xml: string, namespaces: Record<string, string> = {}): Promise<MammothElement> {
  let error: { level: string; message: string } | undefined;
  const builder = new TreeBuilder(namespaces);
  try {
    new DOMParser({
      domBuilder: builder,
      errorHandler: (level: string, message: string) => {
        error = { level, message };
      },
    }).parseFromString(escapeUndefinedEntities(xml));
  } catch (thrown) {
    return Promise.reject(thrown);
  }
  // Mammoth walks its tree recursively: tables nested 2,000 deep overflowed its stack.
  if (builder.tooDeep) return Promise.reject(tooDeep());
  if (error) return Promise.reject(new Error(`${error.level}: ${error.message}`));
  if (!builder.root) return Promise.reject(new Error("no root element"));
  return Promise.resolve(builder.root);
}

/** Receives xmldom's parser events (its DOM handler interface) and builds mammoth's elements and text nodes. */
class TreeBuilder {
  root: MammothElement | undefined;
  private readonly open: MammothElement[] = [];
  /** How deep inside an element left out of the tree the parser is (0: not inside one). */
  private skipped = 0;
  /** An element was nested past MAX_DEPTH (the HTML converter's own limit): left out, and the file refused. */
  tooDeep = false;
  /** Inside a CDATA section: a node of its own in a DOM, which mammoth drops. */
  private cdata = false;
  /** The parser adds stray text after the root element to the document it expects here; mammoth never reads it. */
  readonly doc = { createTextNode: () => ({}), appendChild: () => undefined };
  currentElement: unknown;

  constructor(private readonly namespaces: Record<string, string>) {}

  startElement(uri: string | undefined, localName: string, _qName: string, attributes: Attributes): void {
    const name = this.name(uri, localName);
    const parent = this.open.at(-1);
    if (this.open.length >= MAX_DEPTH) this.tooDeep = true;
    if (this.skipped || this.tooDeep || (parent && PROPERTIES.has(parent.name) && !MAMMOTH_NAMES.has(name))) {
      this.skipped++;
      return;
    }
    const named: Record<string, string> = Object.create(null);
    for (let i = 0; i < attributes.length; i++) {
      const attribute = this.name(attributes.getURI(i), attributes.getLocalName(i));
      if (!isRevisionId(attribute)) named[attribute] = attributes.getValue(i);
    }
    const element: MammothElement = new mammothNodes.Element(name, named, []);
    if (parent) parent.children.push(element);
    else this.root ??= element;
    this.open.push(element);
  }

  endElement(): void {
    if (this.skipped) this.skipped--;
    else this.open.pop();
  }

  characters(chars: string, start: number, length: number): void {
    const text = chars.substr(start, length);
    const parent = this.open.at(-1);
    // Text outside the root element is not mammoth's to read.
    if (text && parent && !this.cdata && !this.skipped) parent.children.push(mammothNodes.text(text));
  }

  startCDATA(): void {
    this.cdata = true;
  }

  endCDATA(): void {
    this.cdata = false;
  }

  // Comments, processing instructions and the document type: mammoth reads none of them.
  comment(): void {}
  processingInstruction(): void {}
  startDocument(): void {}
  endDocument(): void {}
  startPrefixMapping(): void {}
  endPrefixMapping(): void {}
  startDTD(): void {}
  endDTD(): void {}

  private name(uri: string | undefined, localName: string): string {
    if (!uri) return localName;
    const prefix = this.namespaces[uri];
    return prefix ? `${prefix}:${localName}` : `{${uri}}${localName}`;
  }
}
