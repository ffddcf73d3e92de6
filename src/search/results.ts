/**
 * What the retrieval surface adds to a search: every result rather than one page (`--all`), each result's whole
 * fragment text rather than its snippet (`--full`), and repositories ranked for a query (`repos-for`). Ranking
 * stays in search.ts.
 */
import { errorOf, listRepositories, type RepositoryError, settle, type Attempt } from "../repos.ts";
import { isCodeFormat } from "../file-types.ts";
import { MAX_ALL_RESULTS } from "./bounds.ts";
import {
  search,
  type SearchContext,
  withContext,
  type DocumentHit,
  type FragmentHit,
  type SearchOptions,
  type SearchResponse,
} from "./search.ts";

/**
 * Every result from `offset` on that passes `minScore`. Search fetches candidates in proportion to the page it is
 * asked for, so the page grows until the answer comes back short of it.
 */
export async function searchAll(home: string, options: SearchOptions, context?: SearchContext): Promise<SearchResponse> {
  return withContext(context, async (open) => {
    let limit = 1000;
    for (;;) {
      const response = await search(home, { ...options, limit }, open);
      if (response.results.length < limit || limit >= MAX_ALL_RESULTS) return response;
      limit = Math.min(limit * 8, MAX_ALL_RESULTS);
    }
  });
}

export interface RepositoryMatch {
  repository: string;
  description: string | null;
  /**
   * How strongly the repository's best fragment matches, as the calibrated evidence (0-1) that orders merged
   * results of several repositories (calibration.ts): the share of the query's IDF mass its BM25 score reaches.
   */
  score: number;
  /**
   * That fragment's raw BM25 score: it grows with the repository's own term statistics, so it does not compare across
   * them.
   */
  bm25: number;
  /** How many fragments match the query's words. */
  matched: number;
  /**
   * `citation` is where to read, as a search cites it (citationOf); `ref` the passage itself (`repo:path:start-end`, as
   * a search's `fragment.ref`): a prose citation `notes.md:42` read from its line to the document's end (s26 agent F2).
   */
  best: { path: string; location: string; citation: string; ref: string; page: number | null; title: string; snippet: string } | null;
  /** Only for a repository that could not be searched (then ranked last, with nothing matched): why, and the fix. */
  error?: RepositoryError;
  /**
   * Only for a repository not indexed whole yet (its first run under way or cut short), ranked by the files indexed so
   * far: search's warning (unfinishedIndex), and what to do.
   */
  warning?: RepositoryError;
}

/**
 * Where a person looks: `paper.pdf:p12` for paged documents, `parser.py:120-168` for code (a whole unit, or one part
 * of a long one: the range is what to read, and `get` takes it back), `notes.md:42` for the rest.
 */
export function citationOf(hit: FragmentHit | DocumentHit): string {
  if (hit.page !== null) return `${hit.path}:p${hit.page}`;
  const fragment = "fragment" in hit ? hit.fragment : hit.fragments[0];
  return isCodeFormat(String(hit.metadata.format)) && fragment ? `${hit.path}:${fragment.start_line}-${fragment.end_line}` : hit.location;
}

/**
 * Repositories ranked by how strongly they match a query, so a person or an agent knows where to look. BM25 only:
 * it needs no model, and a word that is rare in a repository yet present there is exactly the evidence wanted.
 * Ranked by calibrated evidence, not raw BM25: in a two-document repository every word is common, and the only
 * answer would score near zero.
 */
export async function repositoriesFor(home: string, query: string, context?: SearchContext): Promise<RepositoryMatch[]> {
  return withContext(context, (open) => rankRepositories(home, query, open));
}

async function rankRepositories(home: string, query: string, context: SearchContext): Promise<RepositoryMatch[]> {
  // Every repository, those never indexed too: they are listed last with the error that says how to index them.
  const repositories = listRepositories(home);
  const attempts: Attempt<RepositoryMatch>[] = [];
  const strengths = new Map<string, number>();
  for (const repo of repositories) {
    try {
      const response = await search(home, { query, repositories: [repo.name], mode: "bm25", limit: 1, explain: true }, context);
      const top = response.results[0] as FragmentHit | undefined;
      // The one warning a bm25 search of one repository gives: it is not indexed whole yet (repos-for said nothing of
      // it: s28 hostile F3).
      const warning = response.warnings?.find((w) => w.repository === repo.name);
      const value = {
        repository: repo.name,
        description: repo.description,
        score: top?.explain?.merge.score ?? 0,
        bm25: top?.score ?? 0,
        matched: response.total,
        best: top
          ? {
              path: top.path,
              location: top.location,
              citation: citationOf(top),
              ref: top.fragment.ref,
              page: top.page,
              title: top.title,
              snippet: top.snippet,
            }
          : null,
        ...(warning ? { warning: errorOf(warning) } : {}),
      };
      attempts.push({ repo, value });
      strengths.set(repo.name, top?.explain?.merge.strength ?? 0);
    } catch (error) {
      attempts.push({ repo, error });
    }
  }
  const { answers, skipped } = settle(attempts, false);
  const broken = skipped.map((s) => ({
    repository: s.repository,
    description: repositories.find((r) => r.name === s.repository)!.description,
    score: 0,
    bm25: 0,
    matched: 0,
    best: null,
    error: errorOf(s),
  }));
  // Equal evidence goes by strength, as a search across repositories orders it (mergeRanked's ties): a definition's
  // repository before one that names it more often (s24 code user C1).
  const strengthOf = (match: RepositoryMatch) => strengths.get(match.repository) ?? 0;
  const ranked = answers
    .map((a) => a.value)
    .sort(
      (a, b) => b.score - a.score || strengthOf(b) - strengthOf(a) || b.matched - a.matched || a.repository.localeCompare(b.repository),
    );
  return [...ranked, ...broken];
}
