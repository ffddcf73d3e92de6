/** The CLI's own rules (argument checks, dispatch, exit codes) run as a real subprocess against a temp home. */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempDir, writeTree } from "./helpers.ts";

/** A home with a config, an index folder and one downloaded model: what a wrong command could destroy. */
function populatedHome(): string {
  const home = tempDir();
  writeFileSync(join(home, "config.yaml"), "search:\n  limit: 5\n");
  writeTree(home, {
    "repositories/notes/index.db": "stand-in",
    "models/Owner/model-a/config.json": "{}",
    "models/Owner/model-b/config.json": "{}",
  });
  return home;
}

describe("model clear", () => {
  test("a name that leaves the models folder is refused and nothing is removed", () => {
    const home = populatedHome();
    const outside = tempDir();
    mkdirSync(join(outside, "keep"));
    for (const id of ["..", "../..", "Owner/../..", "./..", join(outside, "keep"), "Owner/model-a/../../../config.yaml", "."]) {
      const result = runCli(["model", "clear", id], { home });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: .*model/);
      expect(result.stderr).toContain("hint: ");
    }
    expect(existsSync(join(home, "config.yaml"))).toBe(true);
    expect(existsSync(join(home, "repositories/notes/index.db"))).toBe(true);
    expect(existsSync(join(home, "models/Owner/model-a/config.json"))).toBe(true);
    expect(existsSync(join(outside, "keep"))).toBe(true);
  });

  test("a downloaded model id removes that model only; no id removes the models folder only", () => {
    const home = populatedHome();
    const one = runCli(["model", "clear", "Owner/model-a"], { home });
    expect(one.code).toBe(0);
    expect(existsSync(join(home, "models/Owner/model-a"))).toBe(false);
    expect(existsSync(join(home, "models/Owner/model-b"))).toBe(true);
    expect(runCli(["model", "clear"], { home }).code).toBe(0);
    expect(existsSync(join(home, "models"))).toBe(false);
    expect(existsSync(join(home, "config.yaml"))).toBe(true);
    expect(existsSync(join(home, "repositories/notes/index.db"))).toBe(true);
  });
});
