import { describe, expect, test } from "bun:test";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { discoverFiles } from "../src/discover.ts";
import { tempDir, writeTree } from "./helpers.ts";

describe("discoverFiles", () => {
  test("file types, excludes, hidden folders and symlinks", () => {
    const root = tempDir();
    const outside = tempDir();
    writeTree(outside, { "secret.md": "outside" });
    writeTree(root, {
      "a.md": "a",
      "b.TXT": "b",
      "c.pdf": "c",
      "drafts/d.md": "d",
      "notes/drafts/e.md": "e",
      "notes/f.md": "f",
      ".obsidian/g.md": "g",
      "node_modules/h.md": "h",
      "keep/tmp.md": "k",
    });
    symlinkSync(join(outside, "secret.md"), join(root, "link-out.md"));
    symlinkSync(join(root, "a.md"), join(root, "link-in.md"));
    symlinkSync(root, join(root, "loop"));
    const files = discoverFiles(root, { fileTypes: ["md", "txt"], exclude: ["drafts", "*.tmp.md"] }).files;
    expect(files.map((f) => f.path)).toEqual(["a.md", "b.TXT", "keep/tmp.md", "link-in.md", "notes/f.md"]);
    expect(files[0]!.size).toBe(1);
  });

  test("anchored globs match from the root", () => {
    const root = tempDir();
    writeTree(root, { "x/y/z.md": "", "y/z.md": "" });
    expect(discoverFiles(root, { fileTypes: ["md"], exclude: ["x/**"] }).files.map((f) => f.path)).toEqual(["y/z.md"]);
  });
});
