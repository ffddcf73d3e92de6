/**
 * `repo remove`: unregister a repository and delete its index. The writer lock is held throughout, so an index
 * run in progress refuses the removal (LOCKED) instead of having its files deleted under it.
 */
import { rmSync } from "node:fs";
import { forgetRepository, getRepository, type Repository } from "../repos.ts";
import { acquireWriterLock } from "../lock.ts";

export function removeRepository(home: string, name: string, options: { keepData?: boolean } = {}): Repository {
  const repo = getRepository(home, name);
  const release = acquireWriterLock(repo.dir, repo.name);
  try {
    // The index goes first: on a full disk, deleting it is what makes room for writing the config.
    if (!options.keepData) rmSync(repo.dir, { recursive: true, force: true });
    forgetRepository(home, name);
  } finally {
    if (options.keepData) release(); // otherwise the lock went with the folder
  }
  return repo;
}
