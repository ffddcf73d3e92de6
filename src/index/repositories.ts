/**
 * A repository's registration with its index folder. `repo add` of a name whose index was kept (`--keep-data`) for
 * another folder sets that index aside first. `repo remove` unregisters a repository and deletes its index; the
 * writer lock is held throughout, so an index run in progress refuses the removal (LOCKED) instead of having its
 * files deleted under it, and a writer that takes the lock after it finds the name unregistered and builds nothing
 * (writeSession checks under the lock). Its index folder is marked before the registration goes, so a removal killed
 * between the two steps is finished, or undone, by the next command (finishRemovals).
 */
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync } from "node:fs";
import { constants } from "node:os";
import { basename, join } from "node:path";
import {
  type AddRepositoryInput,
  forgetRepository,
  getRepository,
  listRepositories,
  nestedRepositories,
  type Nesting,
  registerRepository,
  renameRegistration,
  type Repository,
  type RepositoryPlace,
} from "../repos.ts";
import { acquireWriterLock, withConfigLock, writerLockHolder } from "../lock.ts";
import { TEMP_FILE_NAME, writeFileAtomic } from "../atomic.ts";
import { repositoryDir } from "../config.ts";
import { isResearcherError, ResearcherError, toResearcherError } from "../errors.ts";
import { danglingLink } from "../files.ts";
import { shellWord } from "../terminal.ts";
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
  finishRemovals(home); // an index a killed removal left under the name is not taken up as a kept one
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

/**
 * `repo remove`: unregister a repository and delete its index folder (`keepData`: keep it). The folder is marked
 * (REMOVAL_MARK) before config.yaml is written: a removal killed after the write left the whole index on disk, no
 * repository's, which no command showed or deleted, and `repo remove` of the name said there was none (s30 hostile F3).
 */
export function removeRepository(home: string, name: string, options: { keepData?: boolean } = {}): Repository {
  finishRemovals(home);
  const repo = registeredForRemoval(home, name);
  // An index folder that is a link to nothing (a disk not mounted) holds no index to lock or delete: the repository
  // goes, and so does the link unless kept (its lock could not be taken there: s22 retest2 A4).
  if (danglingLink(repo.dir) !== undefined) {
    forgetRepository(home, repo.name);
    if (!options.keepData) rmSync(repo.dir, { force: true });
    return repo;
  }
  const release = acquireWriterLock(repo.dir, repo.name, "remove");
  const deleteIndex = () => deleteIndexFolder(repo.dir); // the lock goes with it
  try {
    try {
      if (!options.keepData) writeFileAtomic(join(repo.dir, REMOVAL_MARK), removalMark(repo.name));
      forgetRepository(home, repo.name);
    } catch (error) {
      // On a full disk, deleting the index is what makes room for writing the config.
      if (options.keepData || toResearcherError(error).code !== "DISK_FULL") throw error;
      deleteIndex();
      forgetRepository(home, repo.name);
    }
  } catch (error) {
    rmSync(join(repo.dir, REMOVAL_MARK), { force: true }); // still registered: its index stays whole, unmarked
    release();
    throw error;
  }
  if (options.keepData) release();
  else deleteIndex();
  return repo;
}

/**
 * The file in an index folder that says `repo remove` is deleting it; the next command finishes what a removal killed
 * midway left (finishRemovals).
 */
const REMOVAL_MARK = "removing";

/**
 * The registered repository `repo remove` names. A name no repository has whose index folder is on disk (kept with
 * `--keep-data`, or left by a removal an older release was killed in) is named with the command that deletes it.
 */
function registeredForRemoval(home: string, name: string): Repository {
  try {
    return getRepository(home, name);
  } catch (error) {
    const dir = repositoryDir(home, name.trim());
    const kept = isResearcherError(error) && error.code === "REPO_NOT_FOUND" && /^[^/.]+$/.test(name.trim()) && Store.exists(dir);
    if (!kept) throw error;
    throw new ResearcherError("REPO_NOT_FOUND", `${error.message}, but an index is kept in ${dir}`, {
      hint: `\`rm -r ${shellWord(dir)}\` deletes it; \`researcher repo add ${shellWord(name.trim())} <folder>\` of its folder takes it up again`,
    });
  }
}

/**
 * Finish, or undo, what `repo remove` killed midway left: an index folder marked for removal (REMOVAL_MARK) goes when
 * its repository is no longer registered (config.yaml was written), and is unmarked, whole, when it still is (the
 * kill came before). One a live removal holds is left to it. Under config.yaml's lock, so no `repo add` registers the
 * name between the look and the deletion. Run as a home is opened (the CLI's commands) and by `repo add` and `repo
 * remove`; what cannot be done now (a folder another process holds, one this user cannot write) waits for a later one.
 */
export function finishRemovals(home: string): void {
  const root = join(home, "repositories");
  let marked: string[];
  try {
    // Read by listings, not by looking for files that are mostly absent: a failed call leaves its errno, which Bun
    // reports as a later failure's (`serve --host 999.1.1.1` then said ENOENT instead of the address).
    if (!readdirSync(home).includes("repositories")) return;
    marked = readdirSync(root).filter((name) => isMarked(join(root, name)));
  } catch {
    return; // no index yet, or none this user can read: nothing to finish
  }
  if (marked.length === 0) return;
  try {
    withConfigLock(home, () => {
      const registered = new Set(listRepositories(home).map((repo) => repo.name));
      for (const name of marked) finishRemoval(join(root, name), name, registered.has(name));
    });
  } catch {
    // a config.yaml being edited, or unreadable: the command says so itself, and a later one finishes the removal
  }
}

/**
 * Whether an index folder (or the folder a link to one leads to) holds REMOVAL_MARK naming it, as `repo remove`
 * writes it: a folder of the user's holding a file of that name is no removal (`status` deleted one, s30b N6).
 */
function isMarked(dir: string): boolean {
  try {
    return readdirSync(dir).includes(REMOVAL_MARK) && readFileSync(join(dir, REMOVAL_MARK), "utf8") === removalMark(basename(dir));
  } catch {
    return false; // a file, a link to nothing, a folder this user cannot read
  }
}

/** What REMOVAL_MARK holds: the name of the repository being removed. */
const removalMark = (name: string) => `${name}\n`;

function finishRemoval(dir: string, name: string, registered: boolean): void {
  if (writerLockHolder(dir) !== null) return; // a removal (or a run) in progress
  if (registered) {
    rmSync(join(dir, REMOVAL_MARK), { force: true });
    return;
  }
  let release: () => void;
  try {
    release = acquireWriterLock(dir, name, "remove");
  } catch {
    return; // taken meanwhile
  }
  try {
    deleteIndexFolder(dir);
  } catch {
    release(); // a later command tries again
  }
}

/**
 * `repo rename`: the repository keeps its index (nothing is read, recognised or embedded again) under its new name.
 * Its index folder moves under the writer lock, so an index run in progress refuses the rename (LOCKED); a config.yaml
 * that cannot be written moves it back.
 */
export async function renameRepository(home: string, from: string, to: string): Promise<Repository> {
  const repo = getRepository(home, from);
  if (to === repo.name) return repo; // already its name: nothing to do (its REPO_EXISTS hint said to remove it)
  const release = acquireWriterLock(repo.dir, repo.name, "rename");
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
 * What an index folder holds: the database and its side files, the ANN file, the lock, a removal's mark
 * (REMOVAL_MARK); copies moved aside are MOVED_ASIDE's, temp files TEMP_FILE_NAME's.
 */
const INDEX_FILE = /^(?:index\.db(?:-wal|-shm)?|vectors\.usearch|lock|removing)$/;

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
  // The removal mark goes last: a kill midway left the index unmarked and no repository's, kept for good (s30b N1).
  const unmarked = (name: string) => name !== REMOVAL_MARK;
  // Files only, by the names researcher writes: a folder beside them (`.drafts.tmp/`) is the user's (s20 hostile #5).
  if (target) {
    const ours = (name: string) => INDEX_FILE.test(name) || MOVED_ASIDE.test(name) || TEMP_FILE_NAME.test(name);
    for (const entry of readdirSync(target, { withFileTypes: true }))
      if (entry.isFile() && ours(entry.name) && unmarked(entry.name)) rmSync(join(target, entry.name), { force: true });
    rmSync(join(target, REMOVAL_MARK), { force: true });
  } else {
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      // no folder (never indexed), or a file: removed below as it is
    }
    for (const name of names.filter(unmarked)) rmSync(join(dir, name), { recursive: true, force: true });
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
  const release = acquireWriterLock(repo.dir, repo.name, "set-aside");
  try {
    renameSync(repo.dir, folder);
  } catch (error) {
    release();
    throw error;
  }
  rmSync(join(folder, "lock"), { force: true });
  return { folder, indexed };
}
