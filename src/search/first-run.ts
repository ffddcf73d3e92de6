/**
 * A repository no index run has finished yet, as search, a listing and a read all say it: nothing in it is an error
 * (wait for the run under way, or run one), and some documents in it (a first run's batches so far, files indexed on
 * their own) are answered with a warning that the rest are left out. A listing said nothing where search said to
 * wait, and an agent took the repository for empty (s27b agent F8); `get` of a file the run had not reached yet sent
 * the reader to look for it among failures (s28 hostile F3).
 */
import { firstRunHint, firstRunUnderWay, notIndexedYet } from "../errors.ts";
import { writerLockHolder } from "../lock.ts";
import { type Repository, type SkippedRepository, skippedRepository } from "../repos.ts";
import type { Store } from "../store/store.ts";

/** How far a repository no index run has finished is: the documents in, and the process of the run under way. */
interface FirstRun {
  documents: number;
  running: number | null;
}

/**
 * Where `repo`'s first index run stands; undefined once a run has finished. Throws NOT_INDEXED when no document is in:
 * "no results" (an empty listing, a document not found) would read as "not in my documents".
 */
function firstRun(repo: Repository, store: Store): FirstRun | undefined {
  if (store.meta.get("last_indexed") !== undefined) return undefined;
  const documents = store.counts().documents;
  const running = writerLockHolder(repo.dir);
  if (documents === 0)
    throw running ? firstRunUnderWay(repo.name, running) : notIndexedYet(repo.name, "its first index run did not finish");
  return { documents, running };
}

/**
 * The warning for `repo` when no run has finished indexing it but some documents are in (`what` they are: searched,
 * listed, read); undefined once one has. Throws NOT_INDEXED when none is in (firstRun).
 */
export function unfinishedIndex(
  repo: Repository,
  store: Store,
  what: "searched" | "listed" | "read" | "looked in",
): SkippedRepository | undefined {
  const state = firstRun(repo, store);
  return state && partiallyIndexed(repo.name, state, what);
}

/**
 * unfinishedIndex for an answer over the repositories a call looked in (multi-get, a bare path's miss): a repository
 * with no document in yet is a warning too, as the error firstRun throws for it, since the others answered.
 */
export function unfinishedWarning(repo: Repository, store: Store, what: "read" | "looked in"): SkippedRepository | undefined {
  try {
    return unfinishedIndex(repo, store, what);
  } catch (error) {
    return skippedRepository(repo, error);
  }
}

/**
 * Why a path is not in the index of a repository no index run has finished, and what to do: the run under way may not
 * have reached it yet (wait for it), or none ever indexed it whole (run one); undefined once a run has finished.
 * Throws NOT_INDEXED when no document is in (firstRun).
 */
export function notReachedYet(repo: Repository, store: Store): { why: string; hint: string } | undefined {
  const state = firstRun(repo, store);
  if (state === undefined) return undefined;
  const files = state.documents === 1 ? "1 file" : `${state.documents} files`;
  if (state.running) {
    return {
      why: `the first index run of ${repo.name} is under way and may not have reached it yet (${files} indexed so far)`,
      hint: firstRunHint(repo.name, state.running),
    };
  }
  const { hint } = notIndexedYet(repo.name);
  return {
    why: `${repo.name} is not indexed whole yet (${files} indexed so far, on ${state.documents === 1 ? "its" : "their"} own or by a first run cut short)`,
    hint: hint!,
  };
}

/** The warning for a repository never indexed whole that holds some documents: its answer leaves the rest out. */
function partiallyIndexed(name: string, { documents, running }: FirstRun, what: string): SkippedRepository {
  const [files, are] = documents === 1 ? ["1 file", "is"] : [`${documents} files`, "are"];
  const { code, hint } = notIndexedYet(name);
  const message = running
    ? `its first index run is under way: only the ${files} indexed so far ${are} ${what}`
    : `not indexed whole yet: only the ${files} indexed so far (on ${documents === 1 ? "its" : "their"} own, or by a first run cut short) ${are} ${what}`;
  return { repository: name, code, message, hint: running ? firstRunHint(name, running) : (hint ?? null) };
}
