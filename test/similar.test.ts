/** Edit distance and the names a "did you mean" offers. */
import { expect, test } from "bun:test";
import { editDistance, similarNames } from "../src/similar.ts";

test("a swap of two neighbouring letters is one edit, as a slip of the fingers is (s28 user 4)", () => {
  expect(editDistance("mdoe", "mode")).toBe(1);
  expect(editDistance("langauge", "language")).toBe(1);
  expect(editDistance("ab", "ba")).toBe(1);
  // Optimal string alignment: a swapped pair is not edited again (`ca` → `abc` is three edits, not two).
  expect(editDistance("ca", "abc")).toBe(3);
  expect(editDistance("kitten", "sitting")).toBe(3);
  // Past the limit it gives up, with the limit + 1.
  expect(editDistance("abc", "xyzxyzxyz", 2)).toBe(3);
  expect(editDistance("abcdef", "badcfe", 2)).toBe(3);
  expect(editDistance("abcdef", "badcfe")).toBe(3);
});

test("similarNames offers the transposed name, as it does a misspelt one", () => {
  expect(similarNames("mdoe", ["mode", "model", "min-score"])).toEqual(["mode"]);
  expect(similarNames("serch", ["search", "serve", "status"])).toEqual(["search", "serve"]);
  expect(similarNames("rebiuld", ["rebuild", "embed"])).toEqual(["rebuild"]);
});
