/**
 * A repository no index run has finished yet, as search and a listing both say it: nothing in it is an error (wait
 * for the run under way, or run one), and some documents in it (a first run's batches so far, files indexed on their
 * own) are answered with a warning that the rest are left out. A listing said nothing where search said to wait, and
 * an agent took the repository for empty (s27b agent F8).
 */
import { firstRunHint, firstRunUnderWay, notIndexedYet } from "../errors.ts";
import { writerLockHolder } from "../lock.ts";
import type { Repository, SkippedRepository } from "../repos.ts";
import type { Store } from "../store/store.ts";

/**
 * The warning for `repo` when no run has finished indexing it but some documents are in (`what` they are: searched,
 * listed); undefined once one has. Throws NOT_INDEXED when none is in: "no results" (an empty listing) would read as
 * "not in my documents".
 */
export function unfinishedIndex(repo: Repository, store: Store, what: "searched" | "listed"): SkippedRepository | undefined {
  if (store.meta.get("last_indexed") !== undefined) return undefined;
  const documents = store.counts().documents;
  const running = writerLockHolder(repo.dir);
  if (documents === 0)
    throw running ? firstRunUnderWay(repo.name, running) : notIndexedYet(repo.name, "its first index run did not finish");
  return partiallyIndexed(repo.name, documents, running, what);
}

/** The warning for a repository never indexed whole that holds some documents: its answer leaves the rest out. */
function partiallyIndexed(name: string, documents: number, running: number | null, what: string): SkippedRepository {
  const [files, are] = documents === 1 ? ["1 file", "is"] : [`${documents} files`, "are"];
  const { code, hint } = notIndexedYet(name);
  const message = running
    ? `its first index run is under way: only the ${files} indexed so far ${are} ${what}`
    : `not indexed whole yet: only the ${files} indexed so far (on ${documents === 1 ? "its" : "their"} own, or by a first run cut short) ${are} ${what}`;
  return { repository: name, code, message, hint: running ? firstRunHint(name, running) : (hint ?? null) };
}
