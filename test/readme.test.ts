import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers.ts";

test("CI runs the README's test command verbatim", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const quickStart = readme.split("## Quick start")[1]!.split("```sh\n")[1]!.split("```")[0]!.trim().split("\n");
  expect(quickStart).toHaveLength(2);
  const ci = readFileSync(join(ROOT, ".ci/run"), "utf8");
  expect(ci).toContain(`\n${quickStart[1]} 2>&1 | tee`);
});

test("every source and test file the docs name exists (a moved module leaves no stale path behind)", () => {
  const docs = ["README.md", "SKILL.md", "docs/design.md", "docs/benchmarks.md", "docs/scale-out.md"];
  const missing = docs.flatMap((doc) =>
    [...readFileSync(join(ROOT, doc), "utf8").matchAll(/\b(?:src|test|bench)\/[\w./-]+\.ts\b/g)]
      .map((match) => match[0])
      .filter((path) => !existsSync(join(ROOT, path)))
      .map((path) => `${doc}: ${path}`),
  );
  expect(missing).toEqual([]);
});
