/**
 * Each repository's status as `status` and MCP's `get_index_status` show it: what its index holds (store/status.ts),
 * what its searches need rebuilt (`ann`), and whether an index run is due (`index_due`: this version or its settings
 * read some documents differently from how the index holds them).
 */
import { loadConfig, type Config } from "../config.ts";
import { listRepositories, noneAnswered, type Repository, selectRepositories, skippedRepository } from "../repos.ts";
import { errorOf, type RepositoryError } from "../search/results.ts";
import { searchStatus } from "../search/search.ts";
import { emptyStatus } from "../store/status.ts";
import { Store } from "../store/store.ts";
import { type IndexDue, indexDue } from "./chunking.ts";

export type StatusEntry = ReturnType<typeof searchStatus> & { index_due: IndexDue | null; error?: RepositoryError };

/**
 * Each repository's status, or the named one's. One whose index cannot be read is listed with its error and empty
 * counts rather than failing the listing; the named one fails it.
 */
export function repositoryStatuses(home: string, name?: string): StatusEntry[] {
  const config = loadConfig(home);
  if (name !== undefined) return selectRepositories(home, [name]).map((repo) => statusOf(repo, config));
  return listRepositories(home).map((repo) => {
    try {
      return statusOf(repo, config);
    } catch (error) {
      return { ...emptyStatus(repo), ann: null, index_due: null, error: errorOf(skippedRepository(repo, error)) };
    }
  });
}

function statusOf(repo: Repository, config: Config): StatusEntry {
  const status = searchStatus(repo);
  if (status.last_indexed === null) return { ...status, index_due: null };
  const store = Store.open(repo.dir);
  try {
    return { ...status, index_due: indexDue(store, config, repo) };
  } finally {
    store.close();
  }
}

/** The error of a listing of all repositories in which none could answer (the command then fails). */
export function noStatusAnswered(statuses: StatusEntry[]): Error | undefined {
  if (statuses.length === 0 || statuses.some((s) => !s.error)) return undefined;
  return noneAnswered(statuses.map((s) => ({ repository: s.name, ...s.error! })));
}
