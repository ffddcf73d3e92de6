/**
 * AES-256 PDFs (standard security handler, revisions 5 and 6) whose owner password is empty. Anyone may open such a
 * file: poppler, qpdf and MuPDF try the empty password as the owner password too. pdf.js tries it only as the user
 * password, on purpose (its `#createEncryptionKey20` checks the owner password only when one is given: mozilla/pdf.js
 * PR 6531, whose `pr6531_2.pdf` is such a file and is expected to ask for a password), and it takes a password, never
 * a file key. So the file key is unwrapped here with the empty owner password and wrapped again for an empty user
 * password: the encryption dictionary's `/U` and `/UE` are rewritten in place, at the same byte offsets (every
 * cross-reference offset stays true), and pdf.js opens the copy with no password.
 */
import { createCipheriv, createDecipheriv, createHash } from "node:crypto";

interface PdfString {
  bytes: Uint8Array;
  start: number;
  /** Past the string and the whitespace after it: the room a replacement may take. */
  end: number;
}

type Value = PdfString | number;

const ZERO_IV = new Uint8Array(16);
const EMPTY = new Uint8Array(0);
/** How many salts are tried before giving up, when a literal string leaves too little room for the new value. */
const SALT_TRIES = 64;

/**
 * A copy of `bytes` that pdf.js opens with no password, when the file is AES-256 encrypted and its owner password is
 * empty; otherwise undefined.
 */
export function openedWithEmptyOwnerPassword(bytes: Uint8Array): Uint8Array | undefined {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  const start = encryptDictionary(text);
  const entries = start === undefined ? undefined : dictionaryEntries(text, start);
  const [v, r, o, u, oe, ue] = ["V", "R", "O", "U", "OE", "UE"].map((key) => entries?.get(key));
  if (v !== 5 || (r !== 5 && r !== 6) || !isString(o) || !isString(u) || !isString(oe) || !isString(ue)) return undefined;
  if (o.bytes.length < 48 || u.bytes.length < 48 || oe.bytes.length !== 32) return undefined;
  const userBytes = u.bytes.subarray(0, 48);
  const ownerHash = passwordHash(r, EMPTY, o.bytes.subarray(32, 40), userBytes);
  if (!equal(ownerHash, o.bytes.subarray(0, 32))) return undefined; // the owner password is not empty
  const fileKey = aes256(false, passwordHash(r, EMPTY, o.bytes.subarray(40, 48), userBytes), oe.bytes);
  const copy = new Uint8Array(bytes);
  for (let attempt = 0; attempt < SALT_TRIES; attempt++) {
    const keySalt = salt("key", attempt);
    const validationSalt = salt("validation", attempt);
    const newUe = aes256(true, passwordHash(r, EMPTY, keySalt, EMPTY), fileKey);
    const newU = concat(passwordHash(r, EMPTY, validationSalt, EMPTY), validationSalt, keySalt);
    if (writeString(copy, ue, newUe) && writeString(copy, u, newU)) return copy;
  }
  return undefined;
}

/** Where the trailer's encryption dictionary opens (`<<`): the last trailer names it, by reference or inline. */
function encryptDictionary(text: string): number | undefined {
  const named = [...text.matchAll(/\/Encrypt\s*(?:(\d+)\s+(\d+)\s+R|<<)/g)].at(-1);
  if (!named) return undefined;
  if (named[1] === undefined) return named.index + named[0].length - 2;
  // The encryption dictionary is never in an object stream (ISO 32000-1, 7.5.7); the last definition is current.
  const object = [...text.matchAll(new RegExp(`(?<![0-9])${named[1]}\\s+${named[2]}\\s+obj\\s*<<`, "g"))].at(-1);
  return object ? object.index + object[0].length - 2 : undefined;
}

/** The numbers and strings of the dictionary opening at `start`, by key (nested dictionaries and arrays skipped). */
function dictionaryEntries(text: string, start: number): Map<string, Value> {
  const entries = new Map<string, Value>();
  let depth = 0;
  let key: string | undefined;
  let i = start;
  const set = (value: Value | undefined) => {
    if (depth === 1 && key !== undefined && value !== undefined) entries.set(key, value);
    key = undefined;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (isSpace(c)) i++;
    else if (c === "%") i = lineEnd(text, i);
    else if (text.startsWith("<<", i) || c === "[") {
      if (depth === 1) key = undefined;
      depth++;
      i += c === "[" ? 1 : 2;
    } else if (text.startsWith(">>", i) || c === "]") {
      depth--;
      i += c === "]" ? 1 : 2;
      if (depth === 0) break;
    } else if (c === "<" || c === "(") {
      const string = c === "<" ? hexString(text, i) : literalString(text, i);
      set(string);
      i = string.end;
    } else {
      const end = tokenEnd(text, i + 1);
      const token = text.slice(i, end);
      if (c === "/" && depth === 1 && key === undefined) key = token.slice(1);
      else set(/^[+-]?\d+$/.test(token) ? Number(token) : undefined);
      i = end;
    }
  }
  return entries;
}

function hexString(text: string, start: number): PdfString {
  const found = text.indexOf(">", start);
  const close = found < 0 ? text.length : found;
  const digits = text.slice(start + 1, close).replace(/[^0-9a-fA-F]/g, "");
  return { bytes: Buffer.from(digits.length % 2 ? `${digits}0` : digits, "hex"), start, end: spaceEnd(text, close + 1) };
}

const ESCAPES: Record<string, number> = { n: 10, r: 13, t: 9, b: 8, f: 12 };

function literalString(text: string, start: number): PdfString {
  const bytes: number[] = [];
  let depth = 0;
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ")" && depth === 0) break;
    if (c === "(") depth++;
    if (c === ")") depth--;
    if (c === "\\") {
      const next = text[i + 1] ?? "";
      const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4))?.[0];
      if (octal) {
        bytes.push(Number.parseInt(octal, 8) & 0xff);
        i += 1 + octal.length;
      } else if (next === "\r" || next === "\n") {
        i += next === "\r" && text[i + 2] === "\n" ? 3 : 2; // a line continuation
      } else {
        bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
        i += 2;
      }
      continue;
    }
    // An end of line in a string is a line feed, whichever it was.
    if (c === "\r") {
      bytes.push(10);
      i += text[i + 1] === "\n" ? 2 : 1;
      continue;
    }
    bytes.push(c.charCodeAt(0));
    i++;
  }
  return { bytes: Uint8Array.from(bytes), start, end: spaceEnd(text, i + 1) };
}

/** Writes `bytes` as a string over `at`, padded with spaces; false when it does not fit. */
function writeString(target: Uint8Array, at: PdfString, bytes: Uint8Array): boolean {
  const hex = `<${Buffer.from(bytes).toString("hex")}>`;
  const literal = `(${Buffer.from(bytes)
    .toString("latin1")
    .replace(/[()\\\r\n]/g, (c) => ({ "\r": "\\r", "\n": "\\n" })[c] ?? `\\${c}`)})`;
  const room = at.end - at.start;
  const written = hex.length <= room ? hex : literal.length <= room ? literal : undefined;
  if (written === undefined) return false;
  target.set(Buffer.from(written.padEnd(room, " "), "latin1"), at.start);
  return true;
}

/**
 * The password hash of revision 5 (SHA-256) or 6 (ISO 32000-2, algorithm 2.B: rounds of AES-128 and SHA-2 until
 * at least 64 rounds have run and the last byte of the round's output allows stopping).
 */
function passwordHash(revision: 5 | 6, password: Uint8Array, salt: Uint8Array, userBytes: Uint8Array): Uint8Array {
  let k: Uint8Array = createHash("sha256")
    .update(concat(password, salt, userBytes))
    .digest();
  if (revision === 5) return k;
  for (let round = 1; ; round++) {
    const block = concat(password, k, userBytes);
    const repeated = new Uint8Array(block.length * 64);
    for (let j = 0; j < 64; j++) repeated.set(block, j * block.length);
    const cipher = createCipheriv("aes-128-cbc", k.subarray(0, 16), k.subarray(16, 32)).setAutoPadding(false);
    const e = Buffer.concat([cipher.update(repeated), cipher.final()]);
    const sum = e.subarray(0, 16).reduce((a, b) => a + b, 0);
    k = createHash(["sha256", "sha384", "sha512"][sum % 3]!)
      .update(e)
      .digest();
    if (round >= 64 && e.at(-1)! <= round - 32) return k.subarray(0, 32);
  }
}

/** AES-256-CBC with a zero IV and no padding: how `/OE` and `/UE` wrap the file key. */
function aes256(encrypt: boolean, key: Uint8Array, data: Uint8Array): Uint8Array {
  const cipher = (encrypt ? createCipheriv : createDecipheriv)("aes-256-cbc", key, ZERO_IV).setAutoPadding(false);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

/** Eight bytes of salt; the same file always gets the same copy. */
function salt(purpose: string, attempt: number): Uint8Array {
  return createHash("sha256").update(`${purpose} ${attempt}`).digest().subarray(0, 8);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function isString(value: Value | undefined): value is PdfString {
  return typeof value === "object";
}

function isSpace(c: string): boolean {
  return c === " " || c === "\n" || c === "\r" || c === "\t" || c === "\f" || c === "\0";
}

function spaceEnd(text: string, i: number): number {
  while (i < text.length && isSpace(text[i]!)) i++;
  return i;
}

function lineEnd(text: string, i: number): number {
  while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++;
  return i;
}

/** The end of a name, number or keyword: the next whitespace or delimiter. */
function tokenEnd(text: string, i: number): number {
  while (i < text.length && !isSpace(text[i]!) && !"()<>[]{}/%".includes(text[i]!)) i++;
  return i;
}
