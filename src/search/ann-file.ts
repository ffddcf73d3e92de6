/**
 * The layout of a `vectors.usearch` file as usearch 2.x writes it, checked before its native code maps it.
 * usearch's `view` trusts the file: it checks the magic and the version, then follows counts, levels and neighbour
 * slots wherever they point, so a flipped bit there reads outside the mapping and kills the process. This reads
 * every number a search follows and checks it against what we built; a file that passes can still hold wrong
 * vectors or wrong links (wrong results, which `researcher verify` finds by checksum), but no walk leaves it.
 *
 * Layout (index_dense.hpp and index.hpp, `save_to_stream`), little-endian:
 *   u32 rows, u32 bytes per vector; rows × vector bytes;
 *   64-byte head: "usearch", u16 major/minor/patch, u8 metric/scalar/key/slot kinds, u64 present, deleted,
 *   dimensions, u8 multi;
 *   graph head: u64 size, connectivity, base connectivity, max level, entry slot; i16 level per node;
 *   per node: u64 key, i16 level, then for level 0 and each level above: u32 count and that level's slots (u32).
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { describeError } from "../errors.ts";

/** What the file must have been built as (see vectors.ts `newIndex`). */
export interface AnnShape {
  dims: number;
  connectivity: number;
}

const MAGIC = "usearch";
const VERSION_MAJOR = 2;
const KIND = { cos: "c".charCodeAt(0), f16: 12, u64: 14, u32: 15 };
const DENSE_HEAD = 64;
const GRAPH_HEAD = 40;
/** usearch draws a node's level from a geometric distribution: level 64 at connectivity 16 is past any index size. */
const MAX_LEVEL = 64;
/** Nodes are read this many bytes at a time: the check needs no more memory at 1M vectors than at 1,000. */
const CHUNK = 8 * 2 ** 20;

/** What is wrong with the file's structure, or null when every count, level and slot a search follows is in range. */
export function annFileProblem(file: string, shape: AnnShape): string | null {
  let fd: number | undefined;
  try {
    if (!statSync(file).isFile()) return "is not a regular file"; // opening a FIFO would block
    fd = openSync(file, "r");
    return structureProblem(new Reader(fd), shape);
  } catch (error) {
    return `cannot be read: ${describeError(error)}`;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function structureProblem(file: Reader, { dims, connectivity }: AnnShape): string | null {
  if (file.size < 8) return "shorter than its header";
  const matrix = file.read(0, 8);
  const rows = matrix.readUInt32LE(0);
  const vectorBytes = matrix.readUInt32LE(4);
  if (vectorBytes !== dims * 2) return `${vectorBytes} bytes per vector, not ${dims * 2}`;
  const denseAt = 8 + rows * vectorBytes;
  const levelsAt = denseAt + DENSE_HEAD + GRAPH_HEAD;
  if (file.size < levelsAt + 2 * rows) return `too short for ${rows} vectors`;

  const head = file.read(denseAt, DENSE_HEAD + GRAPH_HEAD);
  if (head.toString("latin1", 0, 7) !== MAGIC || head.readUInt16LE(7) !== VERSION_MAJOR) return "not a usearch 2 file";
  const kinds = [head[13], head[14], head[15], head[16]];
  if (kinds.join() !== [KIND.cos, KIND.f16, KIND.u64, KIND.u32].join()) return `metric and scalar kinds ${kinds.join(",")}`;
  const present = head.readBigUInt64LE(17);
  const deleted = head.readBigUInt64LE(25);
  if (present !== BigInt(rows) || deleted !== 0n || head.readBigUInt64LE(33) !== BigInt(dims) || head[41] !== 0) {
    return "its head does not match its vectors";
  }
  const graph = (i: number) => head.readBigUInt64LE(DENSE_HEAD + 8 * i);
  const [size, links, baseLinks, maxLevel, entry] = [0, 1, 2, 3, 4].map(graph);
  if (size !== BigInt(rows) || links !== BigInt(connectivity) || baseLinks !== BigInt(2 * connectivity)) {
    return "its graph head does not match its vectors";
  }
  if (rows === 0) return file.size === levelsAt ? null : "bytes after an empty graph";
  if (maxLevel! > BigInt(MAX_LEVEL) || entry! >= BigInt(rows)) return "its entry point is out of range";

  const levels = readLevels(file, levelsAt, rows);
  if (levels[Number(entry)] !== Number(maxLevel)) return "its entry point is not on the top level";
  const node = new NodeLayout(connectivity);
  let nodesBytes = 0;
  for (const level of levels) {
    if (level < 0 || level > Number(maxLevel)) return `a node on level ${level}`;
    nodesBytes += node.bytes(level);
  }
  if (file.size !== levelsAt + 2 * rows + nodesBytes) return `${file.size} bytes where its nodes need ${levelsAt + 2 * rows + nodesBytes}`;
  return nodesProblem(file, levels, levelsAt + 2 * rows, node);
}

/** Each node's level matches the levels table, and each neighbour list's count and slots are in range. */
function nodesProblem(file: Reader, levels: Int16Array, at: number, node: NodeLayout): string | null {
  let chunk: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  let chunkAt = at;
  for (let slot = 0; slot < levels.length; slot++) {
    const level = levels[slot]!;
    const bytes = node.bytes(level);
    if (at + bytes > chunkAt + chunk.byteLength) {
      chunkAt = at;
      const read = file.read(at, Math.max(bytes, Math.min(CHUNK, file.size - at)));
      chunk = new DataView(read.buffer, read.byteOffset, read.length);
    }
    let offset = at - chunkAt + 8;
    if (chunk.getInt16(offset, true) !== level) return `node ${slot} disagrees about its level`;
    offset += 2;
    for (let l = 0; l <= level; l++) {
      const count = chunk.getUint32(offset, true);
      if (count > node.capacity(l)) return `node ${slot} has ${count} neighbours on level ${l}`;
      for (let i = 0; i < count; i++) {
        const neighbour = chunk.getUint32(offset + 4 + 4 * i, true);
        if (neighbour >= levels.length || levels[neighbour]! < l) return `node ${slot} links to slot ${neighbour} on level ${l}`;
      }
      offset += 4 + 4 * node.capacity(l);
    }
    at += bytes;
  }
  return null;
}

/**
 * The keys of the nodes no search can reach: not linked on the base level from the entry point's side of the graph.
 * HNSW prunes links as it builds, and now and then a node keeps none pointing to it: no search returns it, not even
 * one made of its own text (3 to 27 of SciFact's 7,954 fragments per build with GloVe, s19 review F2; these are
 * exactly the vectors that a search for themselves misses). Read from a file this process just wrote; searches score
 * these exactly beside the graph (vectors.ts).
 */
export function unreachableKeys(file: string, connectivity: number): number[] {
  const fd = openSync(file, "r");
  try {
    const reader = new Reader(fd);
    const head = reader.read(0, 8);
    const [rows, vectorBytes] = [head.readUInt32LE(0), head.readUInt32LE(4)];
    if (rows === 0) return [];
    const denseAt = 8 + rows * vectorBytes;
    const entry = Number(reader.read(denseAt + DENSE_HEAD + 32, 8).readBigUInt64LE(0));
    const levelsAt = denseAt + DENSE_HEAD + GRAPH_HEAD;
    const levels = readLevels(reader, levelsAt, rows);
    const node = new NodeLayout(connectivity);
    const width = node.capacity(0);
    const links = new Uint32Array(rows * width);
    const counts = new Uint8Array(rows);
    const keys = new Float64Array(rows);
    let at = levelsAt + 2 * rows;
    for (let slot = 0; slot < rows; ) {
      const read = reader.read(at, Math.min(CHUNK, reader.size - at));
      const view = new DataView(read.buffer, read.byteOffset, read.length);
      let offset = 0;
      while (slot < rows && offset + node.bytes(levels[slot]!) <= read.length) {
        keys[slot] = Number(view.getBigUint64(offset, true));
        const count = Math.min(view.getUint32(offset + 10, true), width);
        counts[slot] = count;
        for (let i = 0; i < count; i++) links[slot * width + i] = view.getUint32(offset + 14 + 4 * i, true);
        offset += node.bytes(levels[slot]!);
        slot++;
      }
      at += offset;
    }
    const reached = new Uint8Array(rows);
    const stack = [entry];
    reached[entry] = 1;
    while (stack.length > 0) {
      const slot = stack.pop()!;
      for (let i = 0; i < counts[slot]!; i++) {
        const next = links[slot * width + i]!;
        if (next < rows && !reached[next]) {
          reached[next] = 1;
          stack.push(next);
        }
      }
    }
    const unreachable: number[] = [];
    for (let slot = 0; slot < rows; slot++) if (!reached[slot]) unreachable.push(keys[slot]!);
    return unreachable;
  } finally {
    closeSync(fd);
  }
}

/** Each node's level, as the table after the graph head holds them (little-endian, as on every platform we ship). */
function readLevels(file: Reader, at: number, rows: number): Int16Array {
  const bytes = file.read(at, 2 * rows);
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

class NodeLayout {
  constructor(private readonly connectivity: number) {}

  /** Neighbour slots on a level: twice as many on the base level. */
  capacity(level: number): number {
    return level === 0 ? 2 * this.connectivity : this.connectivity;
  }

  /** Key, level, and a count and full slot list per level. */
  bytes(level: number): number {
    return 8 + 2 + (4 + 4 * this.capacity(0)) + level * (4 + 4 * this.connectivity);
  }
}

/** Positioned reads of an open file; a short read is damage like any other. */
class Reader {
  readonly size: number;

  constructor(private readonly fd: number) {
    this.size = fstatSync(fd).size;
  }

  read(position: number, length: number): Buffer {
    const buffer = Buffer.allocUnsafeSlow(length); // every byte is read into
    const read = readSync(this.fd, buffer, 0, length, position);
    if (read !== length) throw new Error(`short read at ${position}`);
    return buffer;
  }
}
