/** ann-file.ts against real usearch files: a whole file passes, each kind of damage a search would follow is found. */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Index, MetricKind, ScalarKind } from "usearch";
import { seeded } from "../src/random.ts";
import { annFileProblem } from "../src/search/ann-file.ts";
import { tempDir } from "./helpers.ts";

const DIMS = 16;
const SHAPE = { dims: DIMS, connectivity: 16 };

/** A file as vectors.ts builds it (f16, cosine, connectivity 16), of `rows` seeded vectors. */
function built(rows: number): Buffer {
  const index = new Index(DIMS, MetricKind.Cos, ScalarKind.F16, 16, 0, 512);
  const random = seeded(6);
  const next = () => random() - 0.5;
  if (rows)
    index.add(
      BigUint64Array.from({ length: rows }, (_, i) => BigInt(i + 1)),
      Float32Array.from({ length: rows * DIMS }, next),
      0,
    );
  const file = join(tempDir(), "vectors.usearch");
  index.save(file);
  return readFileSync(file);
}

/** Where the graph's parts start, and the entry node's offset (levels before it decide it). */
function layout(bytes: Buffer) {
  const rows = bytes.readUInt32LE(0);
  const graphAt = 8 + rows * bytes.readUInt32LE(4) + 64;
  const levelsAt = graphAt + 40;
  const entry = Number(bytes.readBigUInt64LE(graphAt + 32));
  const nodeBytes = (level: number) => 8 + 2 + 4 + 4 * 32 + level * (4 + 4 * 16);
  let entryAt = levelsAt + 2 * rows;
  for (let slot = 0; slot < entry; slot++) entryAt += nodeBytes(bytes.readInt16LE(levelsAt + 2 * slot));
  return { rows, graphAt, levelsAt, entryAt };
}

function flip(bytes: Buffer, offset: number, mask: number): void {
  bytes[offset] = bytes[offset]! ^ mask;
}

function problemOf(bytes: Buffer): string | null {
  const file = join(tempDir(), "vectors.usearch");
  writeFileSync(file, bytes);
  return annFileProblem(file, SHAPE);
}

describe("annFileProblem", () => {
  const good = built(2000);
  const at = layout(good);

  test("whole files pass, of any size, empty included", () => {
    expect(problemOf(good)).toBeNull();
    expect(problemOf(built(1))).toBeNull();
    expect(problemOf(built(0))).toBeNull();
  });

  const damages: Record<string, (bytes: Buffer) => void> = {
    "one bit of the entry node's first neighbour slot": (b) => flip(b, at.entryAt + 8 + 2 + 4 + 3, 0x80),
    "one bit of the entry node's neighbour count": (b) => flip(b, at.entryAt + 8 + 2 + 1, 0x01),
    "a node's level in the levels table": (b) => flip(b, at.levelsAt + 2 * 5, 0x02),
    "the graph's entry slot": (b) => flip(b, at.graphAt + 32 + 3, 0x10),
    "the vector count in the head": (b) => flip(b, 8 + at.rows * DIMS * 2 + 17, 0x01),
    "the bytes per vector": (b) => flip(b, 4, 0x01),
  };
  for (const [name, damage] of Object.entries(damages)) {
    test(`finds a change to ${name}`, () => {
      const bytes = Buffer.from(good);
      damage(bytes);
      expect(problemOf(bytes)).toBeString();
    });
  }

  test("finds a truncated file and a file of another shape", () => {
    expect(problemOf(good.subarray(0, good.length - 100))).toBeString();
    expect(problemOf(good.subarray(0, 5))).toBeString();
    const file = join(tempDir(), "vectors.usearch");
    writeFileSync(file, good);
    expect(annFileProblem(file, { dims: DIMS * 2, connectivity: 16 })).toBeString();
    expect(annFileProblem(join(tempDir(), "absent.usearch"), SHAPE)).toMatch(/^cannot be read/);
  });
});
