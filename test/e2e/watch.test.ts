/** `researcher watch --json` in the compiled executable: JSON lines per batch, searchable at once, a clean SIGTERM. */
import { beforeAll, expect } from "bun:test";
import { copyFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { executable, GLOVE, HOOK_TIMEOUT, SHARED, SYSTEM_PATH, tempDir, testShared, writeTree } from "../helpers.ts";
import { SCANNED } from "../pdf-fixtures.ts";

let exe: string;
beforeAll(async () => {
  exe = await executable();
}, HOOK_TIMEOUT);

/** The JSON lines of a stream, one at a time. */
function lines(stream: ReadableStream<Uint8Array>): () => Promise<Record<string, unknown>> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return async () => {
    for (;;) {
      const end = buffered.indexOf("\n");
      if (end >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        return JSON.parse(line);
      }
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no JSON line within 20 s (got ${JSON.stringify(buffered)})`)), 20_000),
      );
      const { value, done } = await Promise.race([reader.read(), timeout]);
      if (done) throw new Error(`stdout ended (got ${JSON.stringify(buffered)})`);
      buffered += decoder.decode(value, { stream: true });
    }
  };
}

testShared(
  "researcher watch --json: a line per batch, the change searchable, SIGTERM exits 0",
  async () => {
    const home = tempDir();
    const docs = tempDir();
    writeTree(docs, { "bread.md": "# Baking\n\nKnead the dough, then bake the loaf.\n" });
    const env = { PATH: SYSTEM_PATH, HOME: home, RESEARCHER_HOME: home, RESEARCHER_MODEL_PATH: GLOVE, NO_COLOR: "1" };
    const run = (...args: string[]) => Bun.spawnSync([exe, ...args], { env, stdout: "pipe", stderr: "pipe" });
    expect(run("repo", "add", "docs", docs).exitCode).toBe(0);

    const watcher = Bun.spawn([exe, "watch", "--json", "--debounce", "50"], { env, stdout: "pipe", stderr: "pipe" });
    try {
      const next = lines(watcher.stdout);
      expect(await next()).toEqual({
        repository: "docs",
        indexed: 1,
        ocr_pages: 0,
        removed: 0,
        failed: 0,
        paths: [],
        seconds: expect.any(Number),
        scan: true,
      });

      writeFileSync(join(docs, ".space.md.tmp"), "# Astronomy\n\nThe telescope observed a distant galaxy.\n");
      renameSync(join(docs, ".space.md.tmp"), join(docs, "space.md"));
      expect(await next()).toMatchObject({ repository: "docs", indexed: 1, removed: 0, failed: 0, paths: ["space.md"], scan: false });
      const found = JSON.parse(run("search", "telescope", "--mode", "bm25", "--json").stdout.toString());
      expect(found.results.map((r: { path: string }) => r.path)).toEqual(["space.md"]);

      renameSync(join(docs, "bread.md"), join(docs, "baking.md"));
      expect(await next()).toMatchObject({ indexed: 1, removed: 1, paths: ["baking.md", "bread.md"] });
    } finally {
      watcher.kill("SIGTERM");
    }
    expect(await watcher.exited).toBe(0);
    expect(await new Response(watcher.stderr).text()).toBe("");
  },
  60_000,
);

testShared(
  "a signal ends watch and serve --watch within seconds while a batch recognises a scan, and the index stays whole (s25 hostile F1)",
  async () => {
    // A scan's OCR is minutes: the stop waited for the batch, and SIGTERM, a second one and Ctrl-C were all ignored.
    const home = tempDir();
    const docs = tempDir();
    const env = { PATH: SYSTEM_PATH, HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" };
    const run = (...args: string[]) => Bun.spawnSync([exe, ...args], { env, stdout: "pipe", stderr: "pipe" });
    expect(run("repo", "add", "docs", docs, "--no-embed").exitCode).toBe(0);
    writeTree(docs, { "a.md": "# A\n\nalpha\n" });
    expect(run("index", "docs").exitCode).toBe(0);
    const scans = join(SHARED, SCANNED);
    for (const file of ["scan-00.pdf", "scan-01.pdf", "scan-02.pdf", "scan-03.pdf"]) copyFileSync(join(scans, file), join(docs, file));
    for (const command of [
      ["watch", "--debounce", "50"],
      ["serve", "--watch", "--port", "0"],
    ]) {
      const proc = Bun.spawn([exe, ...command], { env, stdout: "pipe", stderr: "pipe" });
      await Bun.sleep(4000); // its first run is recognising the scans
      const signalled = Date.now();
      proc.kill("SIGTERM");
      expect({ command, code: await proc.exited }).toEqual({ command, code: 0 });
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(run("verify", "docs").stdout.toString()).not.toContain("database");
    }
  },
  90_000,
);
