import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers.ts";

test("CI runs the README's test command verbatim", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const quickStart = readme.split("## Quick start")[1]!.split("```sh\n")[1]!.split("```")[0]!.trim().split("\n");
  expect(quickStart).toHaveLength(2);
  const ci = readFileSync(join(ROOT, ".ci/run"), "utf8");
  expect(ci).toContain(`\n${quickStart[1]} 2>&1 | tee`);
});
