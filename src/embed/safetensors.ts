/**
 * The safetensors container (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length, a
 * JSON header naming each tensor's dtype, shape and byte range, then the raw little-endian bytes. Static-embedding
 * models ship their token table in it. The format is this small on purpose, so it is read here rather than through
 * a dependency; every offset is checked against the file before a byte is used.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { writeFileAtomic } from "../atomic.ts";

export interface Tensor {
  shape: number[];
  /** Floating-point tensors widen to f32; integer tensors (e.g. a token → row mapping) become i32. */
  data: Float32Array | Int32Array;
}

/** A header larger than this is not a model's: refuse it before parsing. */
const MAX_HEADER_BYTES = 100 * 2 ** 20;

type Decoder = (bytes: Uint8Array, count: number) => Float32Array | Int32Array;

/** Copies (not views) of the bytes, because a tensor's offset need not be aligned for a typed-array view. */
const DECODERS: Record<string, { size: number; decode: Decoder }> = {
  F32: { size: 4, decode: (b, n) => new Float32Array(copy(b).buffer, 0, n) },
  F16: { size: 2, decode: (b, n) => Float32Array.from(new Float16Array(copy(b).buffer, 0, n)) },
  BF16: { size: 2, decode: (b, n) => bf16(new Uint16Array(copy(b).buffer, 0, n)) },
  F64: { size: 8, decode: (b, n) => Float32Array.from(new Float64Array(copy(b).buffer, 0, n)) },
  I8: { size: 1, decode: (b, n) => Int32Array.from(new Int8Array(copy(b).buffer, 0, n)) },
  I32: { size: 4, decode: (b, n) => new Int32Array(copy(b).buffer, 0, n) },
  I64: { size: 8, decode: (b, n) => Int32Array.from(new BigInt64Array(copy(b).buffer, 0, n), Number) },
};

/** `new Uint8Array(bytes)` copies; `slice()` would not on a Node Buffer, whose slice is a view into the file. */
const copy = (bytes: Uint8Array) => new Uint8Array(bytes);

function bf16(halves: Uint16Array): Float32Array {
  const bits = new Uint32Array(halves.length);
  for (let i = 0; i < halves.length; i++) bits[i] = halves[i]! << 16;
  return new Float32Array(bits.buffer);
}

interface Entry {
  dtype: string;
  shape: number[];
  offsets: [number, number];
}

/** The tensors a file declares, read from its header alone (a few bytes, not the tensors). */
export function safetensorsEntries(path: string): Map<string, Entry> {
  // Opened only when it is a regular file: a FIFO in its place blocked the open, and every vector search with it.
  if (!statSync(path).isFile()) throw new Error(`${path}: not a regular file`);
  const fd = openSync(path, "r");
  try {
    const prefix = Buffer.alloc(8);
    const size = fstatSync(fd).size;
    if (readSync(fd, prefix, 0, 8, 0) < 8) throw new Error(`${path}: too short for a safetensors file`);
    const length = Number(prefix.readBigUInt64LE(0));
    if (length > MAX_HEADER_BYTES || 8 + length > size) throw new Error(`${path}: header length ${length} does not fit the file`);
    const header = Buffer.alloc(length);
    readSync(fd, header, 0, length, 8);
    return parseHeader(path, header.toString("utf8"), size - 8 - length);
  } finally {
    closeSync(fd);
  }
}

/** Every entry checked: a known dtype, a shape of whole numbers, a byte range inside the body that fits the shape. */
function parseHeader(path: string, json: string, bodyBytes: number): Map<string, Entry> {
  let header: unknown;
  try {
    header = JSON.parse(json);
  } catch {
    throw new Error(`${path}: the header is not JSON`);
  }
  if (!header || typeof header !== "object" || Array.isArray(header)) throw new Error(`${path}: the header is not an object`);
  const entries = new Map<string, Entry>();
  for (const [name, value] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const { dtype, shape, data_offsets: offsets } = (value ?? {}) as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const decoder = typeof dtype === "string" ? DECODERS[dtype] : undefined;
    const wholeNumbers = (list: unknown): list is number[] => Array.isArray(list) && list.every((n) => Number.isSafeInteger(n) && n >= 0);
    if (!decoder || !wholeNumbers(shape) || !wholeNumbers(offsets) || offsets.length !== 2) {
      throw new Error(`${path}: tensor '${name}' has an unusable header entry ${JSON.stringify(value).slice(0, 200)}`);
    }
    const [begin, end] = offsets as [number, number];
    const count = shape.reduce((a, b) => a * b, 1);
    if (end > bodyBytes || end - begin !== count * decoder.size) {
      throw new Error(`${path}: tensor '${name}' (${dtype} ${JSON.stringify(shape)}) does not match its byte range`);
    }
    entries.set(name, { dtype: dtype as string, shape, offsets: [begin, end] });
  }
  return entries;
}

/** The named tensors of a safetensors file (all of them when `names` is not given). Throws on any inconsistency. */
export function readSafetensors(path: string, names?: string[]): Map<string, Tensor> {
  const entries = safetensorsEntries(path);
  const file = readFileSync(path);
  const body = file.subarray(8 + Number(file.readBigUInt64LE(0)));
  const tensors = new Map<string, Tensor>();
  for (const name of names ?? entries.keys()) {
    const entry = entries.get(name);
    if (!entry) continue;
    const [begin, end] = entry.offsets;
    tensors.set(name, {
      shape: entry.shape,
      data: DECODERS[entry.dtype]!.decode(
        body.subarray(begin, end),
        entry.shape.reduce((a, b) => a * b, 1),
      ),
    });
  }
  return tensors;
}

/** Write f32 tensors as one safetensors file, atomically (temp file, then rename). */
export function writeSafetensors(
  path: string,
  tensors: Record<string, { shape: number[]; data: Float32Array }>,
  metadata: Record<string, string> = {},
): void {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const [name, tensor] of Object.entries(tensors)) {
    header[name] = { dtype: "F32", shape: tensor.shape, data_offsets: [offset, offset + tensor.data.byteLength] };
    offset += tensor.data.byteLength;
  }
  // The header is padded with spaces to a multiple of 8 so the data that follows is aligned, as the format advises.
  const unpadded = new TextEncoder().encode(JSON.stringify(header));
  const json = new Uint8Array(Math.ceil(unpadded.length / 8) * 8).fill(0x20);
  json.set(unpadded);
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let at = 8 + json.length;
  for (const tensor of Object.values(tensors)) {
    out.set(new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength), at);
    at += tensor.data.byteLength;
  }
  writeFileAtomic(path, out);
}
