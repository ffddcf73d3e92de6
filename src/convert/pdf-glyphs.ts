/**
 * The text of a PDF glyph name, for the names pdf.js leaves unmapped: a variant with a suffix (`zero.os`, `a.sc`,
 * `T_h.swash`). By the Adobe Glyph List rules a name's text is that of its part before the first period, and a name
 * joined by underscores is its parts' texts in a row. The base names known here are the letters, the digits, ASCII
 * punctuation (the names of Adobe's standard encoding) and accented letters (a letter and an accent's name, as in
 * `eacute`), which are what such variants are drawn for; pdf.js keeps its full glyph list to itself.
 */

const DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];

const PUNCTUATION: Record<string, string> = {
  space: " ",
  exclam: "!",
  quotedbl: '"',
  numbersign: "#",
  dollar: "$",
  percent: "%",
  ampersand: "&",
  quotesingle: "'",
  quoteright: "\u2019",
  quoteleft: "\u2018",
  quotedblleft: "\u201c",
  quotedblright: "\u201d",
  parenleft: "(",
  parenright: ")",
  asterisk: "*",
  plus: "+",
  comma: ",",
  hyphen: "-",
  period: ".",
  slash: "/",
  colon: ":",
  semicolon: ";",
  less: "<",
  equal: "=",
  greater: ">",
  question: "?",
  at: "@",
  bracketleft: "[",
  backslash: "\\",
  bracketright: "]",
  asciicircum: "^",
  underscore: "_",
  braceleft: "{",
  bar: "|",
  braceright: "}",
  asciitilde: "~",
  endash: "\u2013",
  emdash: "\u2014",
  bullet: "\u2022",
  germandbls: "ß",
  ae: "æ",
  AE: "Æ",
  oe: "œ",
  OE: "Œ",
  oslash: "ø",
  Oslash: "Ø",
  dotlessi: "ı",
};

/** Combining marks of the accents that glyph names spell out after their letter. */
const ACCENTS: Record<string, string> = {
  grave: "\u0300",
  acute: "\u0301",
  circumflex: "\u0302",
  tilde: "\u0303",
  macron: "\u0304",
  breve: "\u0306",
  dotaccent: "\u0307",
  dieresis: "\u0308",
  ring: "\u030a",
  hungarumlaut: "\u030b",
  caron: "\u030c",
  cedilla: "\u0327",
  ogonek: "\u0328",
};

/** The text a glyph name stands for, or undefined when it is not known here. */
export function glyphNameText(name: string): string | undefined {
  const parts = name.split(".", 1)[0]!.split("_");
  const texts = parts.map(componentText);
  return parts[0] && texts.every((text) => text !== undefined) ? texts.join("") : undefined;
}

function componentText(name: string): string | undefined {
  if (/^[A-Za-z]$/.test(name)) return name;
  const digit = DIGITS.indexOf(name);
  if (digit >= 0) return String(digit);
  if (Object.hasOwn(PUNCTUATION, name)) return PUNCTUATION[name];
  const uni = /^uni((?:[0-9A-F]{4})+)$/.exec(name);
  if (uni) return String.fromCharCode(...uni[1]!.match(/.{4}/g)!.map((hex) => parseInt(hex, 16)));
  const u = /^u([0-9A-F]{4,6})$/.exec(name);
  if (u) return codePoint(parseInt(u[1]!, 16));
  const accented = /^([A-Za-z])([a-z]+)$/.exec(name);
  if (accented && Object.hasOwn(ACCENTS, accented[2]!)) return (accented[1]! + ACCENTS[accented[2]!]).normalize("NFC");
  return undefined;
}

function codePoint(code: number): string | undefined {
  return code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : undefined;
}
