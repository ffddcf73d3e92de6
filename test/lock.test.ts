import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ResearcherError } from "../src/errors.ts";
import { acquireWriterLock } from "../src/lock.ts";
import { tempDir } from "./helpers.ts";

test("one writer at a time; the lock names its holder and goes away on release", () => {
  const dir = tempDir();
  const release = acquireWriterLock(dir, "notes");
  expect(readFileSync(join(dir, "lock"), "utf8")).toStartWith(`${process.pid} `);
  let error: unknown;
  try {
    acquireWriterLock(dir, "notes");
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ResearcherError);
  expect((error as ResearcherError).code).toBe("LOCKED");
  expect((error as ResearcherError).message).toContain(`process ${process.pid}`);
  release();
  expect(existsSync(join(dir, "lock"))).toBe(false);
  acquireWriterLock(dir, "notes")();
});

test("a lock left by a dead process is taken over", () => {
  const dir = tempDir();
  const dead = Bun.spawnSync(["true"]).pid; // exited: its pid is free
  writeFileSync(join(dir, "lock"), `${dead} ${Date.now()}\n`);
  const release = acquireWriterLock(dir, "notes");
  expect(readFileSync(join(dir, "lock"), "utf8")).toStartWith(`${process.pid} `);
  release();
});
