/**
 * A repository's registration with its index folder. `repo add` of a name whose index was kept (`--keep-data`) for
 * another folder sets that index aside first. `repo remove` unregisters a repository and deletes its index; the
 * writer lock is held throughout, so an index run in progress refuses the removal (LOCKED) instead of having its
 * files deleted under it, and a writer that takes the lock after it finds the name unregistered and builds nothing
 * (writeSession checks under the lock).
 */
import { existsSync, lstatSync, readdirSync, realpathSync, renameSync, rmSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import {
  type AddRepositoryInput,
  forgetRepository,
  getRepository,
  nestedRepositories,
  type Nesting,
  registerRepository,
  renameRegistration,
  type Repository,
  type RepositoryPlace,
} from "../repos.ts";
import { acquireWriterLock } from "../lock.ts";
import { TEMP_FILE_NAME } from "../atomic.ts";
import { ResearcherError, toResearcherError } from "../errors.ts";
import { danglingLink } from "../files.ts";
import { leavesOutFolder } from "./discover.ts";
import { Store } from "../store/store.ts";
import { MOVED_ASIDE } from "../store/schema.ts";

/** A repository just added, and the kept index of another folder its name held, if one was set aside. */
export interface AddedRepository extends Repository {
  setAside?: { folder: string; indexed: string };
}

/**
 * `repo add`: register a folder under a name. A kept index of another folder under that name is set aside before
 * the name is registered, under config.yaml's lock: a set-aside that fails (an index run holds it) registers
 * nothing, and no reader ever finds the other folder's text under the new repository.
 */
export function addRepository(home: string, input: AddRepositoryInput): AddedRepository {
  let setAside: AddedRepository["setAside"];
  let dir: string | undefined;
  try {
    const repo = registerRepository(home, input, (place) => {
      dir = place.dir;
      setAside = setAsideOtherFoldersIndex(place);
    });
    return setAside ? { ...repo, setAside } : repo;
  } catch (error) {
    // Refused after the set-aside (a bound on what it writes, a full disk): nothing was changed, so the kept index
    // goes back where `repo add` of its own folder takes it up again.
    if (setAside && dir) renameSync(setAside.folder, dir);
    throw error;
  }
}

/**
 * The repositories nested in `repo`'s folder, or holding it, whose common documents both index: allowed (a project
 * inside a library of notes is a choice), but worth a word when it is made. Not those the outer one's rules leave
 * out, as a run's walk does (exclude, ignore files, hidden and generated folders): `repo add library ~/lib --exclude
 * notes` warned that notes' documents would be found in both (s29 user F3).
 */
export function overlappingRepositories(home: string, repo: Repository): Nesting[] {
  return nestedRepositories(home, repo).filter(({ outer, folder }) => !leavesOutFolder(folder, outer));
}

export function removeRepository(home: string, name: string, options: { keepData?: boolean } = {}): Repository {
  const repo = getRepository(home, name);
  // An index folder that is a link to nothing (a disk not mounted) holds no index to lock or delete: the repository
  // goes, and so does the link unless kept (its lock could not be taken there: s22 retest2 A4).
  if (danglingLink(repo.dir) !== undefined) {
    forgetRepository(home, repo.name);
    if (!options.keepData) rmSync(repo.dir, { force: true });
    return repo;
  }
  const release = acquireWriterLock(repo.dir, repo.name);
  const deleteIndex = () => deleteIndexFolder(repo.dir); // the lock goes with it
  try {
    try {
      forgetRepository(home, repo.name);
    } catch (error) {
      // On a full disk, deleting the index is what makes room for writing the config.
      if (options.keepData || toResearcherError(error).code !== "DISK_FULL") throw error;
      deleteIndex();
      forgetRepository(home, repo.name);
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
 * `repo rename`: the repository keeps its index (nothing is read, recognised or embedded again) under its new name.
 * Its index folder moves under the writer lock, so an index run in progress refuses the rename (LOCKED); a config.yaml
 * that cannot be written moves it back.
 */
export async function renameRepository(home: string, from: string, to: string): Promise<Repository> {
  const repo = getRepository(home, from);
  if (to === repo.name) return repo; // already its name: nothing to do (its REPO_EXISTS hint said to remove it)
  const release = acquireWriterLock(repo.dir, repo.name);
  let moved: { from: string; to: string } | undefined;
  let signals: (() => Promise<void>) | undefined;
  try {
    return renameRegistration(home, repo.name, to, (dir, target) => {
      // On a file system that ignores case (macOS, Windows), `papers` → `Papers` finds the folder itself in the way.
      const [inTheWay, own] = [lstatOrNull(target), lstatOrNull(dir)];
      if (inTheWay && !(own && own.ino === inTheWay.ino && own.dev === inTheWay.dev)) {
        throw new ResearcherError("REPO_EXISTS", `${target} is in the way: an index folder a removed repository kept`, {
          hint: `move it away, or \`researcher repo add ${to} <folder>\` of its own folder takes it up again`,
        });
      }
      if (!own) return; // never indexed: nothing to move
      // From the move to config.yaml's write (under its lock, taken by now: waiting for it stays interruptible).
      signals = holdSignals();
      renameSync(dir, target);
      moved = { from: dir, to: target };
    });
  } catch (error) {
    if (moved) renameSync(moved.to, moved.from);
    throw error;
  } finally {
    // The lock moved with the folder: it is released where it is now.
    if (moved && existsSync(moved.to)) rmSync(join(moved.to, "lock"), { force: true });
    else release();
    await signals?.();
  }
}

/**
 * Signals that would end the process (HELD_SIGNALS) held until the returned release, for two steps a user takes as
 * one: neither stops the process between moving an index folder and writing config.yaml (Ctrl-C there left the index
 * under the new name and the registration under the old, read as never indexed: s21 hostile #1), nor between a
 * removal and the zeroing of its pages (remove.ts). A wait before them is not held (a Ctrl-C during the wait for
 * config.yaml's lock was swallowed for 10 s: s21 retest R5). The first signal held is sent again on release, so the
 * command then ends as it would have: swallowed, a Ctrl-C during remove's held step let the vectors.usearch rebuild
 * after it run to its end (s25b review F6).
 */
export function holdSignals(): () => Promise<void> {
  let held: NodeJS.Signals | undefined;
  const hold = (signal: NodeJS.Signals) => {
    held ??= signal;
  };
  for (const signal of HELD_SIGNALS) process.on(signal, hold);
  return async () => {
    // A signal that came during a step that did not yield waits in the event loop: it reaches `hold` now.
    await new Promise((resolve) => setImmediate(resolve));
    for (const signal of HELD_SIGNALS) process.off(signal, hold);
    // To the default (the process ends with it) or to a listener of the caller's, which heard it already.
    if (held && process.listenerCount(held) === 0) process.kill(process.pid, held);
  };
}

/**
 * What stops a command from outside but kill -9: Ctrl-C, a service's stop, a closed terminal, Ctrl-\ (s24 retest N2),
 * and the other signals a user, a service manager or a resource limit sends: a CPU-time limit's SIGXCPU (`ulimit -t`, a
 * batch job's), timers' and users' signals (s25 hostile F5). Not those the runtime ignores (SIGXFSZ, SIGPWR, SIGPIPE):
 * a listener taken off leaves the default, and a file size limit then killed the process where its write had failed
 * with an error.
 */
const HELD_SIGNALS = (
  ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGXCPU", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF"] as const
).filter((signal) => signal in constants.signals);

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * What an index folder holds: the database and its side files, the ANN file, the lock; copies moved aside are
 * MOVED_ASIDE's, temp files TEMP_FILE_NAME's.
 */
const INDEX_FILE = /^(?:index\.db(?:-wal|-shm)?|vectors\.usearch|lock)$/;

/**
 * Delete an index folder. One that is a link (the index kept on another disk) loses the index files in its target
 * and then the link; the target folder and anything else in it stay. Removing the link alone left the index and a
 * fresh lock behind while saying "removed" (s19 hostile #7).
 */
function deleteIndexFolder(dir: string): void {
  let target: string | undefined;
  try {
    target = lstatSync(dir).isSymbolicLink() ? realpathSync(dir) : undefined;
  } catch {
    target = undefined; // a link to nothing: only the link is left to remove
  }
  // Files only, by the names researcher writes: a folder beside them (`.drafts.tmp/`) is the user's (s20 hostile #5).
  if (target) {
    for (const entry of readdirSync(target, { withFileTypes: true }))
      if (entry.isFile() && (INDEX_FILE.test(entry.name) || MOVED_ASIDE.test(entry.name) || TEMP_FILE_NAME.test(entry.name)))
        rmSync(join(target, entry.name), { force: true });
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A repository about to be registered under a name whose index was kept (`repo remove --keep-data`) from another
 * folder: that index is moved aside (`<name>.kept-<time>`, beside it) and its folder returned, so the next run
 * indexes the new folder afresh. Kept, the other folder's text was searched under the new one's name.
 */
function setAsideOtherFoldersIndex(repo: RepositoryPlace): { folder: string; indexed: string } | undefined {
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
