/** Whole-file writes (config.yaml, convert -o, models' token tables) that respect what they write over. */
import { expect, test } from "bun:test";
import { lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../src/atomic.ts";
import { runCli, tempDir } from "./helpers.ts";

/** A FIFO whose reader is waiting: what was written into it, once the writer closes it. */
function fifoWithReader(path: string): Promise<string> {
  Bun.spawnSync(["mkfifo", path]);
  const reader = Bun.spawn(["cat", path], { stdout: "pipe" });
  return new Response(reader.stdout).text();
}

test("a link is written through (the link stays, its target changes) and a file keeps its permissions", () => {
  const dir = tempDir();
  const target = join(dir, "dotfiles-config.yaml");
  writeFileSync(target, "old\n", { mode: 0o600 });
  const link = join(dir, "config.yaml");
  symlinkSync(target, link);
  writeFileAtomic(link, "new\n");
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  expect(readFileSync(target, "utf8")).toBe("new\n");
  expect(statSync(target).mode & 0o777).toBe(0o600);
});

test("what is no regular file is refused, never replaced by one", async () => {
  const fifo = join(tempDir(), "pipe");
  const read = fifoWithReader(fifo);
  expect(() => writeFileAtomic(fifo, "x")).toThrow("is not a regular file");
  expect(lstatSync(fifo).isFIFO()).toBe(true);
  writeFileSync(fifo, ""); // let the reader finish
  await read;
});

test("convert -o: never over its own input; into a FIFO as a redirection would; --json goes to the file too", async () => {
  const dir = tempDir();
  const input = join(dir, "a.md");
  writeFileSync(input, "# Title\n\nprecious content\n");
  const link = join(dir, "link.md");
  symlinkSync(input, link);
  for (const output of [input, link]) {
    const refused = runCli(["convert", input, "-o", output], { home: dir });
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("converting it would overwrite it") });
  }
  expect(readFileSync(input, "utf8")).toBe("# Title\n\nprecious content\n");

  const fifo = join(dir, "out");
  const read = fifoWithReader(fifo);
  expect(runCli(["convert", input, "-o", fifo], { home: dir }).code).toBe(0);
  expect(await read).toBe("# Title\n\nprecious content\n");
  expect(lstatSync(fifo).isFIFO()).toBe(true);

  const json = join(dir, "a.json");
  expect(runCli(["convert", input, "--json", "-o", json], { home: dir })).toMatchObject({ code: 0, stdout: "" });
  expect(JSON.parse(readFileSync(json, "utf8"))).toMatchObject({ title: "Title", format: "md" });
});
