import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ResearcherError } from "../src/errors.ts";
import { acquireWriterLock, processStartTime } from "../src/lock.ts";
import { forgetRepository, registerRepository } from "../src/repos.ts";
import { PLAIN, statusText } from "../src/serve/render.ts";
import { repositoryStatus } from "../src/store/status.ts";
import { ROOT, runCli, tempDir, writeTree } from "./helpers.ts";

test("one writer at a time; the lock names its holder and goes away on release", () => {
  const dir = tempDir();
  const release = acquireWriterLock(dir, "notes", "index");
  expect(readFileSync(join(dir, "lock"), "utf8")).toStartWith(`${process.pid} `);
  let error: unknown;
  try {
    acquireWriterLock(dir, "notes", "index");
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ResearcherError);
  expect((error as ResearcherError).code).toBe("LOCKED");
  expect((error as ResearcherError).message).toContain(`process ${process.pid}`);
  release();
  expect(existsSync(join(dir, "lock"))).toBe(false);
  acquireWriterLock(dir, "notes", "index")();
});

test("a release removes the lock only while it is its own (one taken over meanwhile belongs to its new holder)", () => {
  const dir = tempDir();
  const release = acquireWriterLock(dir, "notes", "index");
  writeFileSync(join(dir, "lock"), "1 -\n"); // another holder's, as after a takeover
  release();
  expect(readFileSync(join(dir, "lock"), "utf8")).toBe("1 -\n");
});

test("a lock left by a dead process is taken over", () => {
  const dir = tempDir();
  const dead = Bun.spawnSync(["true"]).pid; // exited: its pid is free
  writeFileSync(join(dir, "lock"), `${dead} ${Date.now()}\n`);
  writeFileSync(join(dir, "lock.takeover"), `${dead} 1\n`); // it even died while taking over a lock
  const release = acquireWriterLock(dir, "notes", "index");
  expect(existsSync(join(dir, "lock.takeover"))).toBe(false);
  expect(readFileSync(join(dir, "lock"), "utf8")).toStartWith(`${process.pid} `);
  release();
});

/** A worker that takes the lock over and over, marks its time inside, and sometimes dies holding it. */
const WORKER = `
import { acquireWriterLock } from ${JSON.stringify(join(ROOT, "src/lock.ts"))};
import { appendFileSync, closeSync, existsSync, openSync, rmSync } from "node:fs";
const [dir, log, until] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();
while (Date.now() < Number(until) && !existsSync(dir + "/stop")) {
  let release;
  try {
    release = acquireWriterLock(dir, "race", "index");
  } catch (error) {
    if (error.code !== "LOCKED") throw error;
    Bun.sleepSync(Math.random());
    continue;
  }
  const start = now();
  let inside;
  try {
    inside = openSync(dir + "/inside", "wx");
  } catch {
    appendFileSync(log, "overlap\\n");
  }
  Bun.sleepSync(Math.random() * 2);
  if (inside !== undefined) {
    closeSync(inside);
    rmSync(dir + "/inside");
  }
  appendFileSync(log, process.pid + " " + start + " " + now() + "\\n");
  if (Math.random() < 0.15) process.exit(0); // dies holding the lock: the next writer must take it over
  release();
}
`;

test("20 processes racing for the lock, some dying while holding it, never hold it two at a time", async () => {
  const dir = tempDir();
  const script = join(dir, "worker.ts");
  const log = join(dir, "log");
  writeFileSync(script, WORKER);
  writeFileSync(log, "");
  writeFileSync(join(dir, "lock"), `${Bun.spawnSync(["true"]).pid} 1\n`); // stale from the start
  // The race runs until 40 holds are logged (a count, not a time: a loaded machine only makes it slower).
  const HOLDS = 40;
  const until = Date.now() + 25_000;
  const holds = () => readFileSync(log, "utf8").split("\n").length - 1;
  const running = new Set<Promise<unknown>>();
  const failures: string[] = [];
  const spawn = () => {
    const proc = Bun.spawn([process.execPath, script, dir, log, String(until)], { stderr: "pipe" });
    const done: Promise<unknown> = proc.exited.then(async (code) => {
      running.delete(done);
      if (code !== 0) failures.push(await new Response(proc.stderr).text());
    });
    running.add(done);
  };
  while (Date.now() < until && holds() < HOLDS) {
    while (running.size < 20) spawn();
    await Promise.race([...running, Bun.sleep(50)]);
  }
  writeFileSync(join(dir, "stop"), "");
  await Promise.all(running);
  expect(failures).toEqual([]);
  const lines = readFileSync(log, "utf8").trim().split("\n");
  expect(lines).not.toContain("overlap");
  const spans = lines.map((line) => line.split(" ").slice(1).map(Number) as [number, number]).sort((a, b) => a[0] - b[0]);
  expect(spans.length).toBeGreaterThanOrEqual(HOLDS);
  for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
}, 30_000);

test("a lock whose pid now belongs to another process (recycled) is stale; a live holder's is not", () => {
  const dir = tempDir();
  // The parent process is alive, but it started at another time than the recorded one: not the lock's writer.
  writeFileSync(join(dir, "lock"), `${process.ppid} 1\n`);
  acquireWriterLock(dir, "notes", "index")();
  writeFileSync(join(dir, "lock"), `${process.ppid} ${processStartTime(process.ppid)}\n`); // as older versions wrote it
  expect(() => acquireWriterLock(dir, "notes", "index")).toThrow(/is busy: its index is being written by process/);
});

test("a writer refused names what the lock's holder is doing: a second `repo remove` is not told of an index run (s30b N2)", () => {
  // "repository 'm' is being indexed by process N", with the lock file to delete, while another removal held it.
  const [home, docs] = [tempDir(), tempDir()];
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "m", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "m"], { home }).code).toBe(0);
  const dir = join(home, "repositories", "m");
  const refusedWhile = (task: "remove" | "rename" | "verify") => {
    const release = acquireWriterLock(dir, "m", task); // this live process stands in for that command
    try {
      const refused = runCli(["repo", "remove", "m"], { home });
      return [refused.code, refused.stderr.split("\n")[0]];
    } finally {
      release();
    }
  };
  expect(refusedWhile("remove")).toEqual([1, `error: repository 'm' is being removed by process ${process.pid}`]);
  expect(refusedWhile("rename")).toEqual([1, `error: repository 'm' is being renamed by process ${process.pid}`]);
  expect(refusedWhile("verify")).toEqual([1, `error: repository 'm' is being verified by process ${process.pid}`]);
  // A lock an older version made names no task: some writer's, not necessarily an index run.
  writeFileSync(join(dir, "lock"), `${process.pid} ${processStartTime(process.pid)}\n`);
  expect(runCli(["repo", "remove", "m"], { home }).stderr).toStartWith(
    `error: repository 'm' is busy: its index is being written by process ${process.pid}\n`,
  );
  rmSync(join(dir, "lock"));
  expect(runCli(["repo", "remove", "m"], { home })).toMatchObject({ code: 0, stdout: "removed m\n" });
});

test("a lock whose holder is a zombie (killed, not yet reaped by its parent) is stale", async () => {
  const dir = tempDir();
  // `sleep 0.1` in the background, then its shell becomes `sleep 30`, which never reaps it: a zombie once it exits.
  const parent = Bun.spawn(["sh", "-c", "sleep 0.1 & echo $!; exec sleep 30"], { stdout: "pipe" });
  try {
    const pid = Number(new TextDecoder().decode((await (parent.stdout as ReadableStream<Uint8Array>).getReader().read()).value).trim());
    const start = processStartTime(pid);
    await Bun.sleep(400);
    expect(readFileSync(`/proc/${pid}/stat`, "utf8")).toMatch(/\) Z /);
    writeFileSync(join(dir, "lock"), `${pid} ${start}\n`);
    acquireWriterLock(dir, "notes", "index")();
  } finally {
    parent.kill();
  }
});

test("`repo remove` is refused while an index run holds the lock: the index and the registration stay", () => {
  const [home, docs] = [tempDir(), tempDir()];
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  const dir = join(home, "repositories", "docs");
  const release = acquireWriterLock(dir, "docs", "index"); // this live process stands in for a running indexer
  try {
    const refused = runCli(["repo", "remove", "docs"], { home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is being indexed by process");
    expect(existsSync(join(dir, "index.db"))).toBe(true);
    expect(runCli(["search", "alpha", "--files"], { home }).stdout).toContain("a.md");
  } finally {
    release();
  }
  expect(runCli(["repo", "remove", "docs"], { home }).code).toBe(0);
  expect(existsSync(dir)).toBe(false);
  expect(runCli(["repo", "list", "--json"], { home }).stdout.trim()).toBe("[]");
});

test("a `repo remove` killed between its steps leaves the repository whole or gone once the next command runs (s30 hostile F3)", () => {
  // Its steps: the index folder marked, config.yaml written, the folder deleted. Killed after the write, the whole
  // index stayed on disk, no repository's: no command showed or deleted it, and `repo remove` said there was none.
  const [home, docs] = [tempDir(), tempDir()];
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  const dir = join(home, "repositories", "docs");
  const mark = join(dir, "removing");

  // Killed before config.yaml was written: the repository stays, whole, and its mark goes.
  writeFileSync(mark, "docs\n");
  expect(runCli(["search", "alpha", "--files"], { home }).stdout).toContain("a.md");
  expect(existsSync(mark)).toBe(false);
  expect(existsSync(join(dir, "index.db"))).toBe(true);

  // Killed after it: the next command deletes the index the user asked to delete.
  writeFileSync(mark, "docs\n");
  forgetRepository(home, "docs");
  // A removal still running (its writer lock held) is left to it.
  const release = acquireWriterLock(dir, "docs", "remove");
  try {
    expect(runCli(["status"], { home }).code).toBe(0);
    expect(existsSync(join(dir, "index.db"))).toBe(true);
  } finally {
    release();
  }
  expect(runCli(["status"], { home }).code).toBe(0);
  expect(existsSync(dir)).toBe(false);
  expect(readdirSync(join(home, "repositories"))).toEqual([]);
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home })).toMatchObject({ code: 0, stderr: "" });
});

test("a removal killed while deleting is finished by the next command; a folder the user marked with a file of that name is no removal (s30b N1, N6)", () => {
  const home = tempDir();
  writeTree(home, { "config.yaml": "repositories: {}\n" });
  // What a kill midway through the deletion leaves since the mark goes last: the mark and part of the index.
  const killed = join(home, "repositories", "gone");
  writeTree(killed, { removing: "gone\n", "vectors.usearch": "x" });
  // A folder of the user's holding a file named `removing`: `status` deleted it, and everything in it (N6).
  const mine = join(home, "repositories", "mine");
  writeTree(mine, { removing: "a note of mine\n", "plans.md": "# Plans\n" });
  expect(runCli(["status"], { home }).code).toBe(0);
  expect(existsSync(killed)).toBe(false);
  expect(readFileSync(join(mine, "plans.md"), "utf8")).toBe("# Plans\n");
});

test("`--keep-data` keeps the index unmarked; `repo remove` of the name then names the kept index and its removal", () => {
  const [home, docs] = [tempDir(), tempDir()];
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  const dir = join(home, "repositories", "docs");
  expect(runCli(["repo", "remove", "docs", "--keep-data"], { home }).code).toBe(0);
  expect(runCli(["status"], { home }).code).toBe(0);
  expect(readdirSync(dir).sort()).toEqual(["index.db"]);
  // It said "no repository named 'docs'" alone, as of a name never used (s30 hostile F3).
  expect(runCli(["repo", "remove", "docs"], { home })).toEqual({
    code: 1,
    stdout: "",
    stderr: `error: no repository named 'docs', but an index is kept in ${dir}\nhint: \`rm -r ${dir}\` deletes it; \`researcher repo add docs <folder>\` of its folder takes it up again\n`,
  });
  expect(existsSync(join(dir, "index.db"))).toBe(true);
});

test("status says a repository is being indexed, and by which process, instead of telling to run the index that is running", () => {
  const home = tempDir();
  const repo = registerRepository(home, { name: "fresh", path: tempDir(), embed: false });
  mkdirSync(repo.dir, { recursive: true });
  expect(repositoryStatus(repo).indexing).toBeNull();
  const release = acquireWriterLock(repo.dir, repo.name, "index"); // as a first index run holds it
  try {
    const status = repositoryStatus(repo);
    expect(status.indexing).toBe(process.pid);
    expect(statusText([status], PLAIN)).toContain(`being indexed now, for the first time (process ${process.pid})`);
    expect(statusText([status], PLAIN)).not.toContain("run `researcher index fresh`");
  } finally {
    release();
  }
  expect(repositoryStatus(repo).indexing).toBeNull();
});

test("a lock path that is no lock file (a FIFO, a link to /dev/zero) is named with its fix; status reads past it (s17 hostile #5)", () => {
  // Each hung `status`, `index`, `verify` and `config set` with no word; /dev/zero took `status` to 8.4 GB.
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  const repo = registerRepository(home, { name: "c", path: docs, embed: false });
  expect(runCli(["index", "c"], { home }).code).toBe(0);
  const lock = join(repo.dir, "lock");
  for (const [kind, make] of [
    ["named pipe", () => Bun.spawnSync(["mkfifo", lock])],
    ["character device", () => symlinkSync("/dev/zero", lock)],
    // A link to nothing said "try again in a moment", each time (s17 retest #4).
    ["a link to nothing", () => symlinkSync(join(home, "nowhere"), lock)],
    // A folder's hint said `rm`, which fails on a folder (s18 retest N7).
    ["folder", () => mkdirSync(lock)],
  ] as const) {
    make();
    expect(runCli(["status", "c"], { home, timeoutMs: 20_000 }).code).toBe(0);
    // Not LOCKED, which tells agents to try again: retrying never removes it (s18 review #7).
    expect(() => acquireWriterLock(repo.dir, "c", "index")).toThrow(expect.objectContaining({ code: "PATH_NOT_FOUND" }));
    for (const command of [
      ["index", "c"],
      ["verify", "c"],
    ]) {
      const refused = runCli(command, { home, timeoutMs: 20_000 });
      expect({ kind, command, code: refused.code, stderr: refused.stderr }).toEqual({
        kind,
        command,
        code: 1,
        stderr: `error: ${command[0] === "index" ? "c: " : ""}${lock} is no lock (${kind.startsWith("a ") ? kind : `not a regular file (${kind})`})\nhint: remove it (\`${kind === "folder" ? "rmdir" : "rm"} ${lock}\`) and run the command again\n`,
      });
    }
    rmSync(lock, { recursive: true });
  }
  Bun.spawnSync(["mkfifo", join(home, "config.lock")]);
  const set = runCli(["config", "set", "search.limit", "20"], { home, timeoutMs: 20_000 });
  expect(set).toMatchObject({
    code: 1,
    stderr: expect.stringContaining(`${join(home, "config.lock")} is no lock (not a regular file (named pipe))`),
  });
});

test("`repo remove` of a repository whose index folder is a link deletes the index files there and the link, nothing else (s19 hostile #7)", () => {
  // It removed the link alone and said "removed": the index, and a fresh lock, stayed on the other disk.
  const [home, docs, other] = [tempDir(), tempDir(), tempDir()];
  writeTree(docs, { "a.md": "# A\n\nalpha\n" });
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  const dir = join(home, "repositories", "docs");
  const kept = join(other, "index");
  renameSync(dir, kept);
  symlinkSync(kept, dir);
  writeFileSync(join(kept, "notes.txt"), "the user's own file\n");
  // A folder of a temp file's shape is the user's, not a temp file (it was deleted with its contents: s20 hostile #5).
  mkdirSync(join(kept, ".drafts.tmp"));
  writeFileSync(join(kept, ".drafts.tmp", "x"), "precious\n");
  writeFileSync(join(kept, ".index.db.999999.abc.def.tmp"), "a writer's leftover\n");
  expect(runCli(["search", "alpha", "--files"], { home }).stdout).toContain("a.md");
  expect(runCli(["repo", "remove", "docs"], { home }).code).toBe(0);
  expect(existsSync(dir)).toBe(false);
  expect(readdirSync(kept).sort()).toEqual([".drafts.tmp", "notes.txt"]);
  expect(readFileSync(join(kept, ".drafts.tmp", "x"), "utf8")).toBe("precious\n");
});
