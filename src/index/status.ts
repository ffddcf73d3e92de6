/**
 * Each repository's status as `status` and MCP's `get_index_status` show it: what its index holds (store/status.ts),
 * what its searches need rebuilt (`ann`), and whether an index run is due (`index_due`: this version or its settings
 * read some documents differently from how the index holds them). All three are read from one open index, on one
 * snapshot: an index run committing meanwhile cannot make them describe different states. And whether index runs are
 * held (`index_held`: its model's files changed since it was embedded), as the next run would refuse.
 */
import { loadConfig, type Config } from "../config.ts";
import {
  errorOf,
  listRepositories,
  noneAnswered,
  type Repository,
  type RepositoryError,
  selectRepositories,
  skippedRepository,
} from "../repos.ts";
import { chooseModel, isOtherModel, type ModelHold } from "../embed/embedder.ts";
import { toResearcherError } from "../errors.ts";
import { withStore } from "../search/read-session.ts";
import { annNeedsRebuilding, annNote } from "../search/vectors.ts";
import { emptyStatus, type RepositoryStatus, storeStatus } from "../store/status.ts";
import { Store, type StoredModel } from "../store/store.ts";
import { type IndexDue, indexDue } from "./chunking.ts";
import { heldIndexRuns } from "./embed-pass.ts";

/**
 * A repository's status with `ann`, the note a search's --explain would give about its ANN file (null when there is
 * nothing to rebuild), `index_due` and `index_held`; `error` when its index could not be read.
 */
export type StatusEntry = RepositoryStatus & {
  ann: string | null;
  index_due: IndexDue | null;
  index_held: ModelHold | null;
  error?: RepositoryError;
};

/**
 * Each repository's status, or the named one's. One whose index cannot be read is listed with its error and empty
 * counts rather than failing the listing; the named one fails it.
 */
export function repositoryStatuses(home: string, name?: string): StatusEntry[] {
  const config = loadConfig(home);
  if (name !== undefined) return selectRepositories(home, [name]).map((repo) => statusOf(home, repo, config));
  return listRepositories(home).map((repo) => {
    try {
      return statusOf(home, repo, config);
    } catch (error) {
      return { ...emptyStatus(repo), ann: null, index_due: null, index_held: null, error: errorOf(skippedRepository(repo, error)) };
    }
  });
}

/**
 * The repositories whose vectors are of another model than `model` (`model set`'s note: each keeps the model it was
 * embedded with until `index --embeddings-only` moves it). Only each index's model record is read, not its status
 * (counts, folder sizes, the ANN check). The model compared is the one `index --embeddings-only` would embed with
 * (the default, no flag), told apart as an index run tells it (isOtherModel): the same folder at another path,
 * through a link or copied is not another model (s27 review D3, s27b retest N4). A repository whose own settings name
 * its model or provider is left out: they govern it, not the default, and that run would embed with them (s28 code
 * review #4). An index that cannot be read is left out: `status` names it.
 */
export function repositoriesOnOtherModel(home: string, model: string): string[] {
  const config = loadConfig(home);
  return listRepositories(home).flatMap((repo) => {
    if (repo.embedding.model || repo.embedding.provider) return [];
    const stored = storedModel(repo);
    if (!stored) return [];
    return isOtherModel(home, chooseModel({ ...config.embedding, model }, repo.embedding), stored) ? [repo.name] : [];
  });
}

/**
 * The model record of a repository's index; none when it has none, or when the index cannot be read (damaged, busy,
 * forbidden: SQLite's own errors among them, which toResearcherError names). Anything else is a bug, thrown rather
 * than taken for an unreadable index (s28 code review #9).
 */
function storedModel(repo: Repository): StoredModel | undefined {
  try {
    return withStore(repo, (store) => store.embeddings.model());
  } catch (error) {
    if (toResearcherError(error).code === "INTERNAL") throw error;
    return undefined;
  }
}

function statusOf(home: string, repo: Repository, config: Config): StatusEntry {
  if (!Store.exists(repo.dir)) return { ...emptyStatus(repo), ann: null, index_due: null, index_held: null };
  const store = Store.open(repo.dir);
  let entry: Omit<StatusEntry, "index_held">;
  let stored: StoredModel | undefined;
  try {
    // A read transaction: the snapshot the three reads share (a reader never writes in it).
    entry = store.transaction(() => {
      const status = storeStatus(repo, store);
      stored = store.embeddings.model();
      const problem = status.model ? annNeedsRebuilding(store, repo.dir) : null;
      const due = status.last_indexed === null ? null : indexDue(store, config, repo);
      return { ...status, ann: problem && annNote(repo.name, problem), index_due: due };
    });
  } finally {
    store.close();
  }
  // Told from the model's files (hashed once a process), after the index is closed: no snapshot is held meanwhile.
  return { ...entry, index_held: heldIndexRuns(home, config, repo, stored) ?? null };
}

/** The error of a listing of all repositories in which none could answer (the command then fails). */
export function noStatusAnswered(statuses: StatusEntry[]): Error | undefined {
  if (statuses.length === 0 || statuses.some((s) => !s.error)) return undefined;
  return noneAnswered(statuses.map((s) => ({ repository: s.name, ...s.error! })));
}

/** Failed files a server's status answer lists for each repository, with their total (`failures_total`). */
export const FAILURES_LISTED = 100;

/** A repository's status as a server answers it: its first FAILURES_LISTED failures, and how many there are. */
export type ServedStatus = StatusEntry & { failures_total: number };

/**
 * Each repository's status, or the named one's, as the servers answer it (MCP's get_index_status, REST's GET
 * /status): failures listed in full made a 13.7 MB answer of 100,000 of them, past what the MCP SDK's client reads
 * (10 MiB); `status --json` lists every one. An error when none could answer, as `status` fails.
 */
export function servedStatuses(home: string, name?: string): ServedStatus[] {
  const statuses = repositoryStatuses(home, name);
  const none = noStatusAnswered(statuses);
  if (none) throw none;
  return statuses.map((r) => ({ ...r, failures: r.failures.slice(0, FAILURES_LISTED), failures_total: r.failures.length }));
}

/** A repository as the servers list them: what it holds and how much, without what went wrong (a status tells that). */
export type RepositorySummary = Omit<StatusEntry, "failures" | "ann" | "index_due" | "index_held">;

/**
 * The repositories as MCP's list_repositories and REST's GET /repositories list them; an error when none could answer.
 */
export function repositorySummaries(home: string): RepositorySummary[] {
  return servedStatuses(home).map(({ failures: _, failures_total: __, ann: ___, index_due: ____, index_held: _____, ...s }) => s);
}
