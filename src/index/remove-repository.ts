/**
 * `repo remove`: unregister a repository and delete its index. The writer lock is held throughout, so an index
 * run in progress refuses the removal (LOCKED) instead of having its files deleted under it, and a writer that
 * takes the lock after it finds the name unregistered and builds nothing (writeSession checks under the lock).
 */
import { rmSync } from "node:fs";
import { forgetRepository, getRepository, type Repository } from "../repos.ts";
import { acquireWriterLock } from "../lock.ts";
import { toResearcherError } from "../errors.ts";

export function removeRepository(home: string, name: string, options: { keepData?: boolean } = {}): Repository {
  const repo = getRepository(home, name);
  const release = acquireWriterLock(repo.dir, repo.name);
  const deleteIndex = () => rmSync(repo.dir, { recursive: true, force: true }); // the lock goes with the folder
  try {
    try {
      forgetRepository(home, name);
    } catch (error) {
      // On a full disk, deleting the index is what makes room for writing the config.
      if (options.keepData || toResearcherError(error).code !== "DISK_FULL") throw error;
      deleteIndex();
      forgetRepository(home, name);
    }
  } catch (error) {
    release();
    throw error;
  }
  if (options.keepData) release();
  else deleteIndex();
  return repo;
}
