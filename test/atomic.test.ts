/** Whole-file writes (config.yaml, convert -o, models' token tables) that respect what they write over. */
import { expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../src/atomic.ts";
import { cliCommand, runCli, tempDir } from "./helpers.ts";

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

test("an existing file keeps its mode exactly, 0644 too, under any umask (review s8 #7)", () => {
  const file = join(tempDir(), "config.yaml");
  writeFileSync(file, "old\n");
  chmodSync(file, 0o644);
  const umask = process.umask(0o077);
  try {
    writeFileAtomic(file, "new\n");
  } finally {
    process.umask(umask);
  }
  expect(statSync(file).mode & 0o777).toBe(0o644);
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

test("convert -o /dev/stdout writes to the caller's stdout at its place; a link to a folder is refused like a folder (review s8 #3)", () => {
  const dir = tempDir();
  const input = join(dir, "a.md");
  writeFileSync(input, "# Title\n\nprecious content\n");
  const log = join(dir, "log.txt");
  // The shell's own lines before and after stay: the log file is written through its descriptor, not replaced.
  const script = `echo before; "$0" "$@" convert "${input}" -o /dev/stdout; echo "after $?"`;
  const shell = Bun.spawnSync(["sh", "-c", `(${script}) > "${log}"`, ...cliCommand], { env: { ...process.env, RESEARCHER_HOME: dir } });
  expect(shell.exitCode).toBe(0);
  expect(readFileSync(log, "utf8")).toBe("before\n# Title\n\nprecious content\nafter 0\n");

  const folder = join(dir, "realdir");
  mkdirSync(folder);
  const link = join(dir, "dirlink");
  symlinkSync(folder, link);
  for (const output of [folder, link]) {
    const refused = runCli(["convert", input, "-o", output], { home: dir });
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining("a folder stands where a file is written") });
  }
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
});
