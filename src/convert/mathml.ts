/**
 * MathML → one line of plain text that keeps the formula's meaning: `b^2`, `y_(n−2)`, `(1 + √5)/2`. Read as the
 * text of its leaves, as an HTML converter does with elements it does not know, a power and its base ran together
 * (b² came out `b 2`, y_{n−2} `y n − 2`, Simpson's rule lost its fractions): 1,370 formulas in SICP alone.
 */

/** The DOM a formula is read from (domino's nodes: element names as the document wrote them). */
export interface MathNode {
  nodeName: string;
  nodeType: number;
  textContent: string | null;
  childNodes: ArrayLike<MathNode>;
}

const ELEMENT = 1;
const TEXT = 3;

/** The formula as text, its tokens apart by single spaces. */
export function mathText(node: MathNode): string {
  return read(node).replace(/\s+/g, " ").trim();
}

function read(node: MathNode): string {
  if (node.nodeType === TEXT) return node.textContent ?? "";
  if (node.nodeType !== ELEMENT) return ""; // comments (MathJax writes each operator's name in one)
  const parts = Array.from(node.childNodes).filter((child) => child.nodeType === ELEMENT || (child.textContent ?? "").trim());
  // Each child read once: reading them again per form doubled the work at every level (a 1 KB formula nested 26
  // deep took a minute).
  const texts = parts.map(read);
  // A part a malformed formula lacks (`<msup>` without its exponent) is empty, and so is the operator that would
  // join it: not the word "undefined", nor a stray `^`.
  const [a = "", b = "", c = ""] = texts.map(group);
  const attach = (base: string, mark: string, part: string) => (part ? `${base}${mark}${part}` : base);
  switch (node.nodeName.toLowerCase().replace(/^[\w-]+:/, "")) {
    case "msup":
    case "mover":
      return attach(a, "^", b);
    case "msub":
    case "munder":
      return attach(a, "_", b);
    case "msubsup":
    case "munderover":
      return attach(attach(a, "_", b), "^", c);
    case "mfrac":
      return a && b ? ` ${a}/${b} ` : ` ${a}${b} `;
    case "msqrt":
      return attach("", "√", group(texts.join(" ")));
    case "mroot":
      return a ? `${b}√${a}` : "";
    case "mspace":
    case "annotation":
    case "annotation-xml":
      return " ";
    case "mtr":
      return `${texts.join(" ")}; `;
    default:
      return ` ${texts.join(" ")} `;
  }
}

/** One token as it is; several in parentheses, so that `^`, `_` and `/` bind what they should. */
function group(text: string): string {
  const trimmed = text.replace(/\s+/g, " ").trim();
  if (!/\s/.test(trimmed) || /^\(.*\)$/.test(trimmed)) return trimmed; // a token, or already in parentheses
  return `(${trimmed})`;
}
