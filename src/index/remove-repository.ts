/**
 * `repo remove`: unregister a repository and delete its index. The writer lock is held throughout, so an index
 * run in progress refuses the removal (LOCKED) instead of having its files deleted under it, and a writer that
 * takes the lock after it finds the name unregistered and builds nothing (writeSession checks under the lock).
 * And `repo add` of a name whose index was kept (`--keep-data`) for another folder: that index is set aside.
 */
import { realpathSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { forgetRepository, getRepository, type Repository } from "../repos.ts";
import { acquireWriterLock } from "../lock.ts";
import { toResearcherError } from "../errors.ts";
import { Store } from "../store/store.ts";

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

/**
 * A repository just registered under a name whose index was kept (`repo remove --keep-data`) from another folder:
 * that index is moved aside (`<name>.kept-<time>`, beside it) and its folder returned, so the next run indexes the
 * new folder afresh. Kept, the other folder's text was searched under the new one's name until the next run.
 */
export function setAsideOtherFoldersIndex(repo: Repository): { folder: string; indexed: string } | undefined {
  if (!Store.exists(repo.dir)) return undefined;
  let indexed: string | undefined;
  try {
    const store = Store.open(repo.dir);
    try {
      indexed = store.recordedRoot()?.real;
    } finally {
      store.close();
    }
  } catch {
    return undefined; // an index that cannot be read: the next run says so and what to do
  }
  if (indexed === undefined || indexed === realpathSync(repo.path)) return undefined;
  const folder = `${repo.dir}.kept-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  // Under the writer lock (a watch over all repositories may take up the new name at once); the lock moves with
  // the folder, and is removed there.
  const release = acquireWriterLock(repo.dir, repo.name);
  try {
    renameSync(repo.dir, folder);
  } catch (error) {
    release();
    throw error;
  }
  rmSync(join(folder, "lock"), { force: true });
  return { folder, indexed };
}
