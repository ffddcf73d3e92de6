/** The one seeded generator (src/random.ts): what calibration, the ANN recall probe, tests and benchmarks draw from. */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { drawn, seeded } from "../src/random.ts";
import { ROOT } from "./helpers.ts";

const draws = (seed: number, n: number) => {
  const next = seeded(seed);
  return Array.from({ length: n }, next);
};

describe("drawn", () => {
  test("draws different items, all of them when asked for more, the same for the same seed", () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    for (const [count, length] of [
      [48, 48],
      [1000, 1000],
      [5000, 1000],
      [0, 0],
    ] as const) {
      const picked = drawn(items, count, seeded(7));
      expect({ count, length: picked.length, distinct: new Set(picked).size }).toEqual({ count, length, distinct: length });
    }
    expect(drawn(items, 48, seeded(7))).toEqual(drawn(items, 48, seeded(7)));
    expect(drawn(items, 48, seeded(8))).not.toEqual(drawn(items, 48, seeded(7)));
    expect(drawn(items, 1000, seeded(7)).sort((a, b) => a - b)).toEqual(items);
  });
});

describe("seeded", () => {
  test("the same seed gives the same numbers, other seeds others, all strictly between 0 and 1", () => {
    expect(draws(42, 100)).toEqual(draws(42, 100));
    expect(draws(43, 100)).not.toEqual(draws(42, 100));
    // Strictly above 0: callers take the logarithm (Box-Muller in the recall probe and in test vectors).
    for (const seed of [0, 1, 2 ** 31 - 2, 2 ** 31 - 1, 2 ** 32 + 5]) {
      for (const x of draws(seed, 10_000)) expect(x > 0 && x < 1).toBe(true);
    }
  });

  test("is defined once: nothing under src/, test/ or bench/ keeps a copy", () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
      );
    const copies = ["src", "test", "bench"]
      .flatMap((dir) => files(join(ROOT, dir)))
      .filter((file) => /function seeded\(\w+: number\)/.test(readFileSync(file, "utf8")))
      .map((file) => relative(ROOT, file));
    expect(copies).toEqual(["src/random.ts"]);
  });
});
