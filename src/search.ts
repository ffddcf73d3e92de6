/** Search across repositories: ranked candidates per repository, merged, paginated, with snippets. */
import { join } from "node:path";
import { ResearcherError } from "./errors.ts";
import { parseQuery, type ParsedQuery } from "./query.ts";
import { listRepositories, selectRepositories, type Repository } from "./repos.ts";
import { makeSnippet } from "./snippet.ts";
import { Store, type Bm25Weights, type FragmentRow } from "./store.ts";

export type SearchMode = "bm25";

export interface SearchOptions {
  query: string;
  repositories?: string[];
  limit?: number;
  offset?: number;
  minScore?: number;
  /** Group fragments by document. */
  documents?: boolean;
}

export interface FragmentRef {
  id: number;
  seq: number;
  start_line: number;
  end_line: number;
  page: number | null;
}

export interface FragmentHit {
  rank: number;
  score: number;
  repository: string;
  path: string;
  absolutePath: string;
  location: string;
  docid: string;
  title: string;
  heading: string;
  fragment: FragmentRef;
  snippet: string;
  highlights: [number, number][];
  context: string | null;
}

export interface DocumentHit extends Omit<FragmentHit, "fragment"> {
  fragments: (FragmentRef & { score: number; snippet: string; location: string })[];
}

export interface SearchResponse<T = FragmentHit | DocumentHit> {
  query: string;
  mode: SearchMode;
  repositories: string[];
  offset: number;
  total: number;
  results: T[];
}

/** Field weights for FTS5 bm25(): a word in a title or heading says more about a passage than one in its body. */
export const BM25_WEIGHTS: Bm25Weights = { title: 2.0, heading: 1.5, body: 1.0 };
const FRAGMENTS_PER_DOCUMENT = 3;

interface Candidate {
  repo: Repository;
  store: Store;
  id: number;
  score: number;
}

/** Keeps repository databases open between searches (the MCP server reuses one for its lifetime). */
export class StoreCache {
  private readonly stores = new Map<string, Store>();

  get(repo: Repository): Store | undefined {
    let store = this.stores.get(repo.dir);
    if (!store && Store.exists(repo.dir)) {
      store = Store.open(repo.dir);
      this.stores.set(repo.dir, store);
    }
    return store;
  }

  close(): void {
    for (const store of this.stores.values()) store.close();
    this.stores.clear();
  }
}

export function search(home: string, options: SearchOptions, stores = new StoreCache()): SearchResponse {
  const limit = checkedInteger(options.limit ?? 10, "limit", 1);
  const offset = checkedInteger(options.offset ?? 0, "offset", 0);
  const named = options.repositories ?? [];
  const repos = named.length ? selectRepositories(home, named) : listRepositories(home);
  if (repos.length === 0) {
    throw new ResearcherError("REPO_NOT_FOUND", "no repositories to search", {
      hint: "add one with `researcher repo add <name> <path>` and run `researcher index`",
    });
  }
  const searchable = repos.flatMap((repo) => {
    const store = stores.get(repo);
    if (store) return [{ repo, store }];
    if (named.length) {
      throw new ResearcherError("NOT_INDEXED", `repository '${repo.name}' has not been indexed yet`, {
        hint: `run \`researcher index ${repo.name}\``,
      });
    }
    return [];
  });

  const parsed = parseQuery(options.query);
  const base = { query: options.query, mode: "bm25" as const, repositories: searchable.map((s) => s.repo.name), offset };
  if (!parsed.match) return { ...base, total: 0, results: [] };

  const wanted = options.documents ? Math.max(200, (offset + limit) * 10) : offset + limit;
  let total = 0;
  let candidates: Candidate[] = searchable.flatMap(({ repo, store }) => {
    const found = store.searchBm25(parsed.match!, BM25_WEIGHTS, wanted);
    total += options.documents ? store.countMatchingDocuments(parsed.match!) : found.total;
    return found.hits.map((hit) => ({ repo, store, id: hit.id, score: round(hit.score) }));
  });
  candidates.sort((a, b) => b.score - a.score);
  if (options.minScore !== undefined) candidates = candidates.filter((c) => c.score >= options.minScore!);
  const results = options.documents
    ? groupByDocument(candidates, parsed).slice(offset, offset + limit)
    : hydrate(candidates.slice(offset, offset + limit), parsed);
  results.forEach((hit, i) => (hit.rank = offset + i + 1));
  return { ...base, total, results };
}

function hydrate(candidates: Candidate[], parsed: ParsedQuery): FragmentHit[] {
  const rows = fetchRows(candidates);
  return candidates.flatMap((c) => {
    const row = rows.get(c.store)?.get(c.id);
    return row ? [toHit(c, row, parsed)] : [];
  });
}

function groupByDocument(candidates: Candidate[], parsed: ParsedQuery): DocumentHit[] {
  const groups = new Map<string, Candidate[]>();
  const rows = fetchRows(candidates);
  for (const c of candidates) {
    const row = rows.get(c.store)?.get(c.id);
    if (!row) continue;
    const key = `${c.repo.name}\0${row.documentId}`;
    const group = groups.get(key) ?? [];
    if (group.length < FRAGMENTS_PER_DOCUMENT) group.push(c);
    groups.set(key, group);
  }
  return [...groups.values()].map((group) => {
    const hits = group.map((c) => toHit(c, rows.get(c.store)!.get(c.id)!, parsed));
    const { fragment: _, ...best } = hits[0]!;
    return {
      ...best,
      fragments: hits.map((h) => ({ ...h.fragment, score: h.score, snippet: h.snippet, location: h.location })),
    };
  });
}

function fetchRows(candidates: Candidate[]): Map<Store, Map<number, FragmentRow>> {
  const byStore = new Map<Store, number[]>();
  for (const c of candidates) byStore.set(c.store, [...(byStore.get(c.store) ?? []), c.id]);
  return new Map([...byStore].map(([store, ids]) => [store, store.fragmentsByIds(ids)]));
}

function toHit(c: Candidate, row: FragmentRow, parsed: ParsedQuery): FragmentHit {
  const snippet = makeSnippet(row.text, parsed.highlight);
  const line = Math.min(row.endLine, row.startLine + countNewlines(row.text, snippet.offset));
  return {
    rank: 0,
    score: c.score,
    repository: c.repo.name,
    path: row.path,
    absolutePath: join(c.repo.path, row.path),
    location: `${row.path}:${line}`,
    docid: `#${row.hash.slice(0, 6)}`,
    title: row.title,
    heading: row.heading,
    fragment: { id: row.id, seq: row.seq, start_line: row.startLine, end_line: row.endLine, page: row.page },
    snippet: snippet.text,
    highlights: snippet.highlights,
    context: c.repo.description,
  };
}

function countNewlines(text: string, end: number): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) count++;
  return count;
}

function checkedInteger(value: number, name: string, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new ResearcherError("INVALID_INPUT", `--${name} must be an integer ≥ ${min} (got ${value})`);
  }
  return value;
}

function round(score: number): number {
  return Math.round(score * 10000) / 10000;
}
