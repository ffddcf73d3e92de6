/** Search across repositories: ranked candidates per repository, merged, paginated, with snippets. */
import { type ErrorCode, isResearcherError, ResearcherError } from "../errors.ts";
import { unfinishedIndex } from "./first-run.ts";
import { LIMIT, MAX_ALL_RESULTS, MAX_QUERY_CHARS, minimumScore, OFFSET, wholeNumber } from "./bounds.ts";
import { BM25_WEIGHTS, rankOneWord, rankPostings, rankRareFirst } from "./bm25.ts";
import { buildMatch, embeddingQuery, parseQuery, queryConstraint, type ParsedQuery } from "./query.ts";
import {
  listRepositories,
  attempt,
  noneAnswered,
  selectRepositories,
  settle,
  skippedRepository,
  type Repository,
  type SkippedRepository,
} from "../repos.ts";
import { ConversionCache } from "./conversions.ts";
import { Store, type SqlCondition } from "../store/store.ts";
import { loadConfig, type Config } from "../config.ts";
import { checkModel, chooseModel, EmbedderCache, type Embedder, emptyModelName, ModelFilesChanged } from "../embed/embedder.ts";
import { FUSION_DEPTH, fuseHybrid, fusionWeight, listAnchors, mergeRanked, mergeScore, type Ranked } from "./fusion.ts";
import { backgrounds, lexicalEvidence, lexicalRatio, queryCoverage, vectorCalibration, vectorEvidence } from "./calibration.ts";
import { boostHeadings } from "./heading-boost.ts";
import { cappedRanking, type DocumentCap } from "./per-document.ts";
import { pathOrdered } from "./ties.ts";
import { annNote, meansNothing, rankableVectors, searchVectors, VectorCache, type AnnProblem } from "./vectors.ts";
import { combineFilters, type Filter } from "./filters.ts";
import { namedRepository } from "./document-refs.ts";
import { type FilterMiss, filterMisses } from "./filter-misses.ts";
import { withoutInvisibles } from "../text.ts";
import { shellWord } from "../terminal.ts";
import { REQUESTED_MODES, type RequestedMode, type SearchMode } from "../search-modes.ts";
import {
  type Candidate,
  type DocumentHit,
  documentGroups,
  type FragmentHit,
  hydrate,
  hydrateGroups,
  type MergeEvidence,
  round,
  roundContribution,
} from "./hits.ts";

export { SEARCH_MODES, type SearchMode, REQUESTED_MODES, type RequestedMode } from "../search-modes.ts";
export type {
  FragmentRef,
  Explain,
  MergeEvidence,
  FragmentHit,
  DocumentHit,
} from "./hits.ts";

/** A search mode as an interface received it (`--mode`, REST's `mode`): one of REQUESTED_MODES, else a usage error. */
export function searchMode(value: unknown, name: string): RequestedMode | undefined {
  if (value === undefined) return undefined;
  if ((REQUESTED_MODES as readonly unknown[]).includes(value)) return value as RequestedMode;
  throw new ResearcherError("USAGE", `${name} must be ${REQUESTED_MODES.join(", ")} (got '${String(value)}')`);
}

export interface SearchOptions {
  query: string;
  repositories?: string[];
  /** Default: `search.limit` from config.yaml. */
  limit?: number;
  offset?: number;
  minScore?: number;
  /** Group fragments by document. */
  documents?: boolean;
  /**
   * "auto" (default: config.yaml's `search.mode`, itself auto by default): hybrid where a repository has vectors, bm25
   * elsewhere.
   */
  mode?: RequestedMode;
  /** `--model`: must match the model each repository was embedded with. */
  model?: string;
  explain?: boolean;
  /** Keep only fragments of documents whose path matches this glob (e.g. `notes/**` or `*.md`): a `path` term. */
  filter?: string;
  /** Keep only what these filters admit (all of them), before ranking; parse them with `parseFilter`. */
  where?: Filter[];
  /** Each hit's whole fragment text in `text` (`--full`), read on the snapshot it was ranked on. */
  full?: boolean;
}

export interface SearchResponse<T = FragmentHit | DocumentHit> {
  query: string;
  mode: SearchMode;
  repositories: string[];
  offset: number;
  total: number;
  /**
   * Whether any fragment searched holds the query's words. In vector mode, and in hybrid where the vector list has a
   * voice, a page is always full (every fragment is ranked by meaning), so false says the results match by meaning
   * alone; where it has none, hybrid lists word matches alone, and a NO_WORD_MATCH warning says why none came.
   */
  words_found: boolean;
  results: T[];
  /** Per-repository notes for `--explain` (mode fallbacks). */
  notes?: string[];
  /** Repositories a search over all of them left out (not indexed, damaged, no vectors for the mode), with why. */
  skipped: SkippedRepository[];
  /** When nothing matched: the filter's values no searched document holds, with the values that exist. */
  unmatched?: FilterMiss[];
  /**
   * Repositories searched with bm25 by default because their model could not be had now, or in hybrid mode because
   * they have no vectors, with why and the fix.
   */
  warnings?: SkippedRepository[];
}

export { BM25_WEIGHTS };
/** With --documents, fragments ranked per document asked for: a document often has several among the best. */
const RANKED_PER_DOCUMENT = 10;

/**
 * How deep every list is ranked for a page ending at result `end`. Every page within the first FUSION_DEPTH
 * results (documents with --documents) is cut from lists of one depth, so `-n 10` is the first ten of `-n 100`
 * and pages concatenate to one big page: vector search's neighbours and hybrid's normalisation (fusion.ts) would
 * otherwise change with the page. A page reaching further ranks deeper, in steps of FUSION_DEPTH; hybrid scores
 * still normalise over the first FUSION_DEPTH of each list, so deeper pages continue the same order.
 */
function rankingDepth(end: number, documents: boolean): number {
  const results = Math.ceil(Math.max(end, 1) / FUSION_DEPTH) * FUSION_DEPTH;
  return documents ? results * RANKED_PER_DOCUMENT : results;
}

/**
 * A page of documents' lists (per-document.ts): whole as deep as the first page of documents ranks, then
 * RANKED_PER_DOCUMENT fragments of a document at most, so finding documents past a few long ones costs their best
 * fragments, not all of them.
 */
function documentCap(store: Store): DocumentCap {
  return { head: rankingDepth(1, true), perDocument: RANKED_PER_DOCUMENT, documentsOf: (ids) => store.documentIdsOf(ids) };
}

/** The longest a search joins the read snapshot of searches already running (SearchContext.store). */
const MAX_SHARED_SNAPSHOT_MS = 500;

/** Keeps databases, ANN files and models open between searches (the MCP server reuses one for its lifetime). */
export class SearchContext {
  /** Each repository's open index, with the identity of the file it opened (`Store.fileIdentity`). */
  private readonly stores = new Map<string, { store: Store; file: string | null }>();
  readonly embedders: EmbedderCache;
  readonly vectors = new VectorCache();
  /** Documents converted for reading (get_document, multi_get, REST /documents), kept for the next read. */
  readonly conversions = new ConversionCache();

  constructor(embedders = new EmbedderCache({ allowDownload: false })) {
    this.embedders = embedders;
  }

  /**
   * The repository's open index; NOT_INDEXED or INDEX_CORRUPT when there is none to read. An index.db that is
   * another file than the one open (deleted, the repository removed and added again, moved aside by a rebuild), or
   * one opened immutable that its owner has written since, is opened afresh, with nothing kept from the old one; a
   * search still running on the old one finishes on it.
   */
  store(repo: Repository): Store {
    const file = Store.fileIdentity(repo.dir); // a stat: 2–5 µs beside a warm search's 0.6 ms (BM25, Rust book)
    const open = this.stores.get(repo.dir);
    if (open && open.file === file && file !== null && open.store.stillAsOpened(repo.dir)) {
      // Searches that overlap share one snapshot, which steady load would keep open for ever (no commit seen, the
      // WAL never reset): past this age, new searches start on a fresh connection and the old one closes when its
      // searches end.
      if (open.store.snapshotAge() < MAX_SHARED_SNAPSHOT_MS) return open.store;
      open.store.retire();
      this.stores.delete(repo.dir);
    } else if (open) {
      open.store.retire();
      this.stores.delete(repo.dir);
      this.vectors.forget(repo.dir);
    }
    // Identified before opening: a file replaced in between is found different, and opened again, next time.
    const store = Store.open(repo.dir);
    this.stores.set(repo.dir, { store, file });
    return store;
  }

  async close(): Promise<void> {
    for (const { store } of this.stores.values()) store.retire();
    this.stores.clear();
    this.vectors.clear();
    await this.embedders.dispose();
  }
}

/**
 * Run `work` with `context`, or with a context of its own that is closed when it ends: a caller that passes none
 * (a library user's one-off search) leaves no database or model open behind it.
 */
export async function withContext<T>(context: SearchContext | undefined, work: (context: SearchContext) => Promise<T>): Promise<T> {
  if (context) return work(context);
  const own = new SearchContext();
  try {
    return await work(own);
  } finally {
    await own.close();
  }
}

export async function search(home: string, options: SearchOptions, context?: SearchContext): Promise<SearchResponse> {
  return withContext(context, (open) => searchWith(home, options, open));
}

async function searchWith(home: string, options: SearchOptions, context: SearchContext): Promise<SearchResponse> {
  checkRequest(options);
  const config = loadConfig(home);
  const limit = wholeNumber(options.limit ?? config.search.limit, "limit", LIMIT);
  const offset = wholeNumber(options.offset ?? 0, "offset", OFFSET);
  const scoped = scopedFilter(home, options);
  const named = scoped.repositories.length > 0;
  const { searchable, skipped, partial } = openRepositories(home, scoped.repositories, context);
  const parsed = parseQuery(options.query);
  const semanticQuery = embeddingQuery(options.query);
  if (parsed.match === null && parsed.excluded.length > 0 && semanticQuery === "") {
    // Every mode answered "no results", which reads as "nothing is there" (s12 hostile #14).
    throw new ResearcherError("USAGE", "a query of exclusions alone (-word) has nothing to search for", {
      hint: 'add a word to find, e.g. "borrow -unsafe"',
    });
  }
  const filter = combineFilters([
    ...(options.where ?? []),
    ...(scoped.filter ? [{ kind: "term" as const, key: "path", op: "eq" as const, values: [scoped.filter] }] : []),
  ]);
  // Every repository's reads on one snapshot of its index, however index runs commit meanwhile.
  const stores = searchable.map((s) => s.store);
  const onSnapshots = (work: () => Promise<SearchResponse>) => stores.reduce((inner, store) => () => store.snapshot(inner), work)();
  return onSnapshots(async () => {
    const embedQuery = queryEmbedder(semanticQuery);
    const run: SearchRun = {
      home,
      parsed,
      embeddable: semanticQuery !== "",
      options,
      filter,
      config,
      context,
      embedQuery,
      backgrounds: backgrounds(stores),
      merging: searchable.length > 1 || Boolean(options.explain),
      // A page of fragments is decided by each list's first `offset + limit` (a merge keeps each list's order); one of
      // documents may reach further down, to its documents' best fragments.
      coverageDepth: options.documents ? Number.POSITIVE_INFINITY : offset + limit,
    };
    const ranked = await rankPage(run, searchable, named, offset + limit);
    skipped.push(...ranked.left);
    if (ranked.perRepo.length === 0) throw noneAnswered(skipped);
    const results = options.documents
      ? hydrateGroups(ranked.groups.slice(offset, offset + limit), parsed, Boolean(options.full))
      : hydrate(ranked.candidates, offset, limit, parsed, Boolean(options.full));
    results.forEach((hit, i) => {
      hit.rank = offset + i + 1;
      if (!options.explain) delete hit.explain;
    });
    const { perRepo } = ranked;
    const answered = searchable.filter(({ repo }) => perRepo.some((r) => r.repo === repo.name));
    const unmatched = ranked.total === 0 ? filterMisses(filter, answered) : [];
    const modes = new Set(perRepo.map((r) => r.mode));
    const notes = perRepo.flatMap((r) => [r.note, r.why, r.ann].flatMap((n) => (n ? [`${r.repo}: ${n}`] : [])));
    const fallbacks = perRepo.flatMap((r) => (r.fallback ? [{ repository: r.repo, ...r.fallback }] : []));
    const warnings = [...partial.filter((p) => perRepo.some((r) => r.repo === p.repository)), ...fallbacks];
    return {
      query: options.query,
      mode: modes.size === 1 ? [...modes][0]! : "hybrid",
      repositories: perRepo.map((r) => r.repo),
      offset,
      total: ranked.total,
      words_found: perRepo.some((r) => r.wordsFound),
      results,
      ...(options.explain ? { notes } : {}),
      skipped: skipped.sort((a, b) => a.repository.localeCompare(b.repository)),
      ...(unmatched.length ? { unmatched } : {}),
      ...(warnings.length ? { warnings } : {}),
    };
  });
}

/**
 * The repositories to search and the path glob inside them: a filter that begins with `repo:` names that repository,
 * as a ref, a listing's prefix and a multi-get pattern do (`rustbook:ch04*` matched no path, even with rustbook the
 * repository searched: s24 agent A9); one naming a repository not asked for is a usage error.
 */
function scopedFilter(home: string, options: SearchOptions): { repositories: string[]; filter?: string } {
  const asked = options.repositories ?? [];
  if (options.filter === undefined) return { repositories: asked };
  if (asked.length > 0) selectRepositories(home, asked); // an unknown or empty name is the error to give first
  const named = namedRepository(home, options.filter, asked, { what: "filter", verb: "search", anchored: true });
  if (!named) return { repositories: asked, filter: options.filter };
  return { repositories: [named.repository], filter: named.inside || undefined }; // `notes:` is all of notes
}

/** Mistakes in a request, before anything is opened: a blank or oversized query, an empty glob, a bad minimum. */
function checkRequest(options: SearchOptions): void {
  searchMode(options.mode, "mode"); // a library caller's typo would otherwise be searched as vector mode
  // A blank query is the caller's mistake, not a search that found nothing (the CLI and REST say how to ask).
  // An empty model name (`--model "$MODEL"` with MODEL unset) is refused whether or not a repository has vectors.
  if (options.model !== undefined && !options.model.trim()) throw emptyModelName();
  // Invisible characters alone (a zero-width space, a soft hyphen) are no query either: the index reads none of them.
  if (!withoutInvisibles(options.query).trim())
    throw new ResearcherError("USAGE", "search needs a query", { hint: "ask with words or a question" });
  if (options.query.length > MAX_QUERY_CHARS) {
    throw new ResearcherError("USAGE", `a query holds at most ${MAX_QUERY_CHARS} characters (this one has ${options.query.length})`, {
      hint: "ask with its key words or a sentence",
    });
  }
  // An empty glob is a mistake (an unset variable), not "no filter": it would search everything.
  if (options.filter !== undefined && !options.filter.trim())
    throw new ResearcherError("USAGE", "filter needs a path glob (got an empty one)", { hint: "e.g. '*.md' or 'notes/**'" });
  minimumScore(options.minScore, "minScore"); // NaN or a negative would drop every result, or none
}

/** The query's vector by a model, embedded once per model however many repositories share it. */
function queryEmbedder(text: string): (embedder: Embedder) => Promise<Float32Array> {
  const vectors = new Map<Embedder, Promise<Float32Array>>();
  return (embedder) => {
    if (!vectors.has(embedder))
      vectors.set(
        embedder,
        embedder.embed([text], "query").then(([v]) => v!),
      );
    return vectors.get(embedder)!;
  };
}

/** Every repository ranked and merged, deep enough for results up to `end` (of documents, with --documents). */
async function rankPage(run: SearchRun, searchable: { repo: Repository; store: Store }[], named: boolean, end: number) {
  const documents = run.options.documents ?? false;
  // Searching all repositories, one that cannot be searched as asked is skipped, as one that cannot be opened is.
  const rankAt = async (depth: number) => {
    const left: SkippedRepository[] = [];
    const answers = await Promise.all(
      searchable.map(({ repo, store }) =>
        searchRepository(run, repo, store, depth).catch((error: unknown) => {
          if (named) throw error;
          left.push(skippedRepository(repo, error));
          return null;
        }),
      ),
    );
    const perRepo = answers.filter((r) => r !== null);
    const merged = mergeRanked(
      perRepo.map((r) => r.candidates),
      (c) => c.explain.merge.score,
      [(c) => c.explain.merge.vector ?? 0, (c) => c.explain.merge.strength],
    );
    const candidates = merged.items;
    const total = perRepo.reduce((sum, r) => sum + r.total, 0);
    const groups = documents ? groupsOf(perRepo, candidates) : [];
    // The page's last document is final when no repository cut short could still rank a fragment before its best.
    const need = Math.min(end, total);
    const last = groups[Math.min(need, groups.length) - 1]?.[0];
    const final = groups.length >= need && (!last || merged.finalThrough(last, (l) => perRepo[l]!.cut));
    return { perRepo, left, candidates, total, groups, final };
  };
  let depth = rankingDepth(end, documents);
  let ranked = await rankAt(depth);
  // A page of documents needs that many documents among the ranked fragments, in their final order: where a few long
  // documents hold most of the best fragments, or a document of one repository is found only deeper than the page's
  // last document of another ranks, rank deeper, until it is or every document that can be found is. Pages then
  // concatenate: pages ending at different places were cut from different lists, and across repositories a document
  // repeated at a page's end and the next one's start while another was on no page (s25 scripts D1). (A page of
  // fragments needs no more: each repository ranks as deep as the page ends.)
  while (documents && !ranked.final && ranked.perRepo.some((r) => r.cut) && depth < MAX_ALL_RESULTS * RANKED_PER_DOCUMENT) {
    depth *= 2;
    ranked = await rankAt(depth);
  }
  return ranked;
}

/** Documents' groups, a document's further fragments from the depth the first page ranks, whatever the page. */
function groupsOf(perRepo: { candidates: Candidate[] }[], candidates: Candidate[]): Candidate[][] {
  const listed = new Set(perRepo.flatMap((r) => r.candidates.slice(0, rankingDepth(1, true))));
  return documentGroups(candidates, (c) => listed.has(c));
}

/**
 * The repositories to search and their open indexes. A named repository that cannot be opened (never indexed,
 * damaged, outdated) is an error; searching all of them skips those, reported, unless that leaves nothing to search.
 */
function openRepositories(
  home: string,
  named: string[],
  context: SearchContext,
): { searchable: { repo: Repository; store: Store }[]; skipped: SkippedRepository[]; partial: SkippedRepository[] } {
  const partial: SkippedRepository[] = [];
  // By name, however they were named: one set of repositories, one order of results (ties interleave by it).
  const repos = (named.length ? selectRepositories(home, named) : listRepositories(home)).sort((a, b) => (a.name < b.name ? -1 : 1));
  if (repos.length === 0) {
    throw new ResearcherError("REPO_NOT_FOUND", "no repositories to search", {
      hint: "add one with `researcher repo add <name> <path>` and run `researcher index`",
    });
  }
  const { answers, skipped } = settle(
    repos.map((repo) =>
      attempt(repo, (r) => {
        const store = context.store(r);
        // Files indexed on their own (add_to_index, a watch batch) or so far by a first run are searched, said so.
        const unfinished = unfinishedIndex(r, store, "searched");
        if (unfinished) partial.push(unfinished);
        return store;
      }),
    ),
    named.length > 0,
  );
  return { searchable: answers.map(({ repo, value }) => ({ repo, store: value })), skipped, partial };
}

interface RepositoryResult {
  repo: string;
  mode: SearchMode;
  total: number;
  candidates: Candidate[];
  /** A list was cut at the depth asked for: ranking deeper may find more. */
  cut: boolean;
  note?: string;
  /** How the lists were weighed, for --explain's notes. */
  why?: string;
  /** Why the vector list came from an exact scan rather than the ANN file, and how to fix that. */
  ann?: string;
  /**
   * A warning: searched with bm25 in auto mode because its model could not be had, or nothing ranked: (vector mode)
   * the model knows no word of the query, or (hybrid) no fragment holds them and the vectors have no voice; why, and
   * the fix.
   */
  fallback?: Omit<SkippedRepository, "repository">;
  /** Some fragment it searched holds the query's words (its BM25 list is not empty). */
  wordsFound: boolean;
}

/** What every repository's ranking in one search shares. */
interface SearchRun {
  home: string;
  parsed: ParsedQuery;
  /** Whether the query has text to embed (a query of -words only has none). */
  embeddable: boolean;
  options: SearchOptions;
  filter: Filter | undefined;
  config: Config;
  context: SearchContext;
  /** The query's vector by a model, embedded once however many repositories share the model. */
  embedQuery: (embedder: Embedder) => Promise<Float32Array>;
  /** What each repository's vector evidence is measured from (calibration.ts backgrounds). */
  backgrounds: Map<Store, number[]>;
  /** Whether merge evidence counts: lists of several repositories are merged by it, and --explain shows it. */
  merging: boolean;
  /** How many of each BM25 list's first hits the query's coverage is measured for (queryCoverage costs per hit). */
  coverageDepth: number;
}

/** A repository's ranked lists, as deep as asked, and what turns their scores into comparable evidence. */
interface RankedLists {
  where: SqlCondition | undefined;
  /** Some fragment the search admits holds the query's words. */
  wordsFound: boolean;
  ranked: Bm25List | { hits: Ranked[]; match: null };
  keyword: Ranked[];
  semantic: Ranked[];
  /** What the vector list could rank, once it has run. */
  bounds?: VectorBounds;
  /** The lists as the same search unfiltered ranks them (hybrid with a filter): their anchors and best score. */
  unfiltered?: { bm25: Ranked[]; vector: Ranked[] };
  /** A BM25 score over the query's IDF mass in this repository (calibration.ts lexicalRatio). */
  lexicalRatio: (score: number) => number;
  /** The share of the query each of these fragments holds (queryCoverage), where results are merged or explained. */
  coverageOf?: (ids: number[]) => Map<number, number>;
  vectorScale: (cosine: number) => number | null;
  annProblem?: AnnProblem;
  /** The model knows no word of the query (a static model): it ranks nothing by meaning. */
  meaningless?: boolean;
}

async function searchRepository(run: SearchRun, repo: Repository, store: Store, depth: number): Promise<RepositoryResult> {
  const chosen = repositoryMode(run, repo, store);
  let { mode, fallback } = chosen;
  let lists: RankedLists;
  try {
    lists = await rankLists(run, repo, store, mode, depth);
  } catch (error) {
    // Another model than the repository's (named by --model, RESEARCHER_MODEL or the configuration), or any named
    // with --model, is somebody's choice: an error however asked, and so is a model named with --model that cannot
    // be loaded (a typo searched with bm25, exit 0). Only the repository's own model, unavailable or with changed
    // files, falls back.
    const chosenModel =
      isResearcherError(error) &&
      (run.options.model !== undefined || (error.code === "MODEL_MISMATCH" && !(error instanceof ModelFilesChanged)));
    if (!isResearcherError(error) || !MODEL_FAILURES.has(error.code) || chosenModel) throw error;
    // Asked for by name, the mode stays an error; by default (auto) the search degrades as an index run does: the
    // words are all there, so it searches them and says why.
    const hint = error.hint ? `${error.hint}; or search in bm25 mode` : "search in bm25 mode";
    if (requestedMode(run) !== "auto") throw new ResearcherError(error.code, error.message, { hint, cause: error });
    mode = "bm25";
    fallback = { code: error.code, message: `searched with bm25: ${error.message}`, hint: error.hint ?? null };
    lists = await rankLists(run, repo, store, mode, depth);
  }
  const note = chosen.note;
  // Vector mode then finds nothing: said, or an agent concludes the repository holds nothing about it (s21 MCP #3).
  if (mode === "vector" && lists.meaningless) fallback ??= UNKNOWN_QUERY;
  const { candidates, why, voiceless } = candidatesOf(repo, store, mode, lists, run.coverageDepth);
  // Nor does hybrid, where the vector list has no voice and no fragment holds the words: "no results" alone read as
  // "nothing is about it", though the model knows the words and vector mode ranks by them (s28b retest R3). Said only
  // where vector mode would answer: a filter that admits nothing here is no missing word (s29 agent 2).
  if (voiceless && !lists.wordsFound && lists.semantic.length > 0) fallback ??= noWordMatch(run.options);
  const minScore = run.options.minScore;
  return {
    repo: repo.name,
    mode,
    // Where the vector list has no voice, hybrid lists BM25's matches alone (candidatesOf), and counts them.
    total: repositoryTotal(run, repo, store, voiceless ? "bm25" : mode, lists, depth),
    candidates: minScore === undefined ? candidates : candidates.filter((c) => c.score >= minScore),
    cut: lists.keyword.length >= depth || (!voiceless && lists.semantic.length >= depth),
    note: note ?? (run.options.explain && mode !== "bm25" ? coverageNote(store, repo, mode) : undefined),
    why,
    ann: lists.annProblem && annNote(repo.name, lists.annProblem),
    fallback,
    wordsFound: lists.wordsFound,
  };
}

/** Said per repository, and on the command line once for all it is the same for. */
const UNKNOWN_QUERY: RepositoryResult["fallback"] = {
  code: "UNKNOWN_QUERY",
  message: "the embedding model knows none of the query's words: nothing ranks by meaning",
  hint: "search in hybrid or bm25 mode, or with other words",
};

/**
 * Said of a repository hybrid answered nothing from: its vector list has no voice with this model (calibration.ts),
 * so only fragments that hold the query's words are listed, and none does (none the filters admit, when there are
 * some). The hint is the search that ranks by meaning, as a command (agent-hints.ts writes it as the tool's or
 * route's `mode`): a query starting with `-` after `--`, which a flag would otherwise take it for (s29 code A3). A
 * query holding a backtick would end the command's code span inside it (and the tool's and route's, rewritten from
 * it): the hint names the mode without a command (s29b retest F3).
 */
function noWordMatch({ query, where, filter, repositories }: SearchOptions): RepositoryResult["fallback"] {
  const filtered = Boolean(where?.length || filter);
  return {
    code: "NO_WORD_MATCH",
    message: `no fragment${filtered ? " the filters admit" : ""} holds the query's words, and with this model its vectors carry no weight in hybrid`,
    hint: query.includes("`") ? "the same search in vector mode ranks by meaning" : vectorCommandHint(query, filtered, repositories),
  };
}

/** The search in vector mode as a command, a query starting with `-` after `--`, and what it leaves out said. */
function vectorCommandHint(query: string, filtered: boolean, repositories: string[] | undefined): string {
  const command = query.startsWith("-")
    ? `researcher search --mode vector -- ${shellWord(query)}`
    : `researcher search ${shellWord(query)} --mode vector`;
  const same = filtered || repositories?.length ? ` (with the same ${filtered ? "repositories and filters" : "repositories"})` : "";
  return `\`${command}\` ranks by meaning${same}`;
}

/**
 * Why a repository's query embedder could not be had: a model that cannot be loaded now, a provider that failed, or
 * a model whose files changed since the repository was embedded (its vectors no longer match the queries').
 */
const MODEL_FAILURES = new Set<ErrorCode>(["MODEL_UNAVAILABLE", "PROVIDER_FAILED", "MODEL_MISMATCH"]);

function requestedMode(run: SearchRun): RequestedMode {
  return run.options.mode ?? run.config.search.mode;
}

/**
 * The mode a repository is searched in: the one asked for, or (auto) hybrid where it has vectors, else bm25. Hybrid
 * asked of one without vectors is its bm25 half, with a warning (an agent that asked for hybrid got nothing); vector
 * is an error.
 */
function repositoryMode(
  run: SearchRun,
  repo: Repository,
  store: Store,
): { mode: SearchMode; note?: string; fallback?: RepositoryResult["fallback"] } {
  const requested = requestedMode(run);
  const model = store.embeddings.model();
  if (requested === "auto") {
    return model ? { mode: "hybrid" } : { mode: "bm25", note: "no vectors: searched with bm25 (index with embeddings for hybrid)" };
  }
  if (requested === "bm25" || model) return { mode: requested };
  // A repository with nothing in it (every file failed) has nothing to embed: it finds nothing in the mode asked
  // (rankLists embeds no query for it), and its "embed it" hint was a command that changed nothing (s23 contracts
  // L11); searched in bm25 instead, it made a vector search beside it say "hybrid" (s23 retest N3).
  if (store.fragmentCount() === 0) return { mode: requested };
  // `embed: false` in config.yaml keeps every index run BM25-only, so indexing alone would not add vectors. One that
  // embeds and has none waits for its model (it could not be loaded, or the run was cut short): `index` alone may
  // embed nothing, and `status` says why (s25 scripts D3).
  const pending = repo.embed ? store.embeddings.pendingCount() : 0;
  const enable = repo.embed ? "" : `researcher config set repositories.${repo.name}.embed true && `;
  const message = pending
    ? `repository '${repo.name}' has no vectors yet for ${requested} search: ${pending} fragment texts wait for embeddings`
    : `repository '${repo.name}' was indexed without embeddings: it has no vectors for ${requested} search`;
  const embed = pending
    ? `\`researcher index ${repo.name}\` embeds them once their model can be loaded (its warning says why it cannot)`
    : `embed it with \`${enable}researcher index ${repo.name}\``;
  if (requested === "vector") throw new ResearcherError("NO_VECTORS", message, { hint: `${embed}, or search it in bm25 mode` });
  return { mode: "bm25", fallback: { code: "NO_VECTORS", message: `searched with bm25: ${message}`, hint: embed } };
}

/**
 * Whether some fragment the search admits holds the query's words: its BM25 list (`ranked`) is not empty, or, where
 * there is none (vector mode ranks no words), its best one. Where the filters admit no fragment at all, whether any
 * fragment holds them: a filter that admits nothing is no missing word, as NO_WORD_MATCH is not said then (s29 agent
 * 2), and `words_found: false` told a REST client the words were missing (s30 hostile F6).
 */
function wordsFoundIn(
  store: Store,
  parsed: ParsedQuery,
  match: string | null,
  ranked: { hits: Ranked[] } | undefined,
  where?: SqlCondition,
): boolean {
  if (!match) return false;
  const found = (condition?: SqlCondition) => fts5Ranking(store, parsed, match, 1, condition).hits.length > 0;
  if (ranked ? ranked.hits.length > 0 : found(where)) return true;
  return where !== undefined && !store.admitsAny(where) && found();
}

/** The BM25 and vector lists of one repository, `depth` deep, the filter applied (and, hybrid, unfiltered too). */
async function rankLists(run: SearchRun, repo: Repository, store: Store, mode: SearchMode, depth: number): Promise<RankedLists> {
  const { parsed, filter, context } = run;
  const where = filter && store.compileFilter(filter, repo.name);
  const match = selectiveMatch(store, parsed);
  const cap = run.options.documents ? documentCap(store) : undefined;
  const ranked: RankedLists["ranked"] =
    match && mode !== "vector" ? rankBm25(store, parsed, match, depth, where, cap) : { hits: [], match: null };
  const lists: RankedLists = {
    where,
    ranked,
    wordsFound: wordsFoundIn(store, parsed, match, mode === "vector" ? undefined : ranked, where),
    keyword: ranked.hits,
    semantic: [],
    lexicalRatio: lexicalRatio(store, parsed),
    coverageOf: run.merging ? (ids) => queryCoverage(store, parsed, ids) : undefined,
    vectorScale: () => null,
  };
  // A filter restricts the unfiltered ranking (README, Filters): hybrid scores of filtered lists are normalised
  // against the unfiltered lists' anchors and weighed by the unfiltered BM25 list's best, so those lists are ranked
  // too, as deep as the same search unfiltered ranks them (the anchors are then exactly its own, ANN included).
  if (mode === "hybrid" && where)
    lists.unfiltered = { bm25: match ? rankBm25(store, parsed, match, depth, undefined, cap).hits : [], vector: [] };
  if (mode === "bm25" || !run.embeddable || store.fragmentCount() === 0) return lists;
  const model = store.embeddings.model();
  const embedder = await context.embedders.get(run.home, chooseModel(run.config.embedding, repo.embedding, run.options.model, model));
  checkModel(repo.name, model, embedder);
  const queryVector = await run.embedQuery(embedder);
  // A query the model knows no word of ranks nothing by meaning: the lists, and what they count, are BM25's (it
  // counted every fragment as ranked: "1–2 of 7954", s19 retest).
  if (meansNothing(queryVector)) return { ...lists, meaningless: true };
  // The query's phrases and -words hold in the vector list too; a filter restricts it further.
  const { admitted, excluded } = queryBounds(store, parsed);
  const within = where ? intersection(new Set(store.fragmentIdsWhere(where)), admitted) : admitted;
  lists.bounds = { within, without: excluded };
  const cache = context.vectors;
  const vectors = (bounds: Parameters<typeof searchVectors>[4]) => {
    const rank = pathOrdered(store, (deeper: number) => searchVectors(store, repo.dir, queryVector, deeper, { ...bounds, cache }));
    return cap ? cappedRanking(rank, cap)(depth) : rank(depth);
  };
  const searched = await vectors({ within, without: excluded });
  lists.semantic = searched.hits;
  lists.annProblem = searched.annProblem;
  if (lists.unfiltered) lists.unfiltered.vector = (await vectors({ within: admitted, without: excluded })).hits;
  lists.vectorScale = vectorEvidence(queryVector, run.backgrounds.get(store));
  return lists;
}

/** The repository's ranked candidates: its lists fused (hybrid) or the one list, each with how it was ranked. */
function candidatesOf(
  repo: Repository,
  store: Store,
  mode: SearchMode,
  lists: RankedLists,
  coverageDepth: number,
): { candidates: Candidate[]; why?: string; voiceless?: boolean } {
  // Lexical evidence is capped by the share of the query the fragment holds, measured for the candidates a page can
  // show (the first `coverageDepth` in this repository's order); the weight of the lists (below) is measured without
  // the cap, as fusion was tuned.
  let coverage = new Map<number, number>();
  const measureCoverage = (ordered: { id: number; lexical: boolean }[]) => {
    const ids = ordered.slice(0, coverageDepth).flatMap((item) => (item.lexical ? [item.id] : []));
    coverage = lists.coverageOf?.(ids) ?? coverage;
  };
  const lexicalOf = (id: number, score: number) => Math.min(lexicalEvidence(lists.lexicalRatio(score)), coverage.get(id) ?? 1);
  // `bm25`: the fragment's BM25 score, for its strength (MergeEvidence); in hybrid only within FUSION_DEPTH, as its
  // evidence: ranked deeper for a later page, a fragment gained a strength that moved it among other repositories'.
  const evidence = (id: number, lexical: { score: number } | null, vector: { score: number } | null, bm25: number | null, share = 1) => {
    const cosine = vector && lists.vectorScale(vector.score);
    const strength = bm25 === null ? 0 : lists.lexicalRatio(bm25);
    return mergeEvidence(lexical && lexicalOf(id, lexical.score), cosine === null ? null : share * cosine, strength);
  };
  if (mode === "hybrid") {
    const best = (lists.unfiltered?.bm25 ?? lists.keyword)[0];
    const calibration = vectorCalibration(store);
    const weight = fusionWeight(calibration?.lists, best && lexicalEvidence(lists.lexicalRatio(best.score)), calibration?.vectors);
    const weights = { bm25: weight.lexical, vector: round(1 - weight.lexical) };
    const anchors = lists.unfiltered && listAnchors(lists.unfiltered.bm25, lists.unfiltered.vector);
    // A vector list without a voice (weight 0) is no evidence: fusion leaves out what it alone found, and hybrid
    // lists what bm25 mode lists, in its order (SciFact with GloVe: BM25's figures; docs/design.md).
    const voiceless = weights.vector === 0;
    const fused = fuseHybrid(lists.keyword, lists.semantic, weight.lexical, anchors);
    measureCoverage(fused.map((f) => ({ id: f.id, lexical: f.bm25 !== null })));
    const candidates = fused.map((f) => ({
      repo,
      store,
      id: f.id,
      score: round(f.score),
      explain: {
        mode,
        bm25: roundContribution(f.bm25),
        vector: roundContribution(f.vector),
        fused: round(f.score),
        weights,
        // A vector list the repository gives no voice adds no evidence across repositories either: an Arabic PDF's
        // neighbour of a query's unknown words (cosine 1, weight 0) came first, printed with score 0.00 (s19 user F2).
        // A small voice adds evidence in proportion: at weight 0.13 a date's neighbour of "April … month" (fused
        // 0.13) came first across repositories, above an exact line (s22 user F1). A list place past FUSION_DEPTH
        // counts as absent, as in the fused score: a deeper page must not add evidence that moves a result among
        // other repositories' (s19 review F5).
        merge: evidence(
          f.id,
          withinDepth(f.bm25),
          weights.vector > 0 ? withinDepth(f.vector) : null,
          withinDepth(f.bm25)?.score ?? null,
          vectorShare(weights),
        ),
      },
    }));
    return { candidates, why: `hybrid weights bm25 ${weights.bm25}, vector ${weights.vector}: ${weight.reason}`, voiceless };
  }
  const list = mode === "bm25" ? lists.keyword : lists.semantic;
  if (mode === "bm25") measureCoverage(list.map((hit) => ({ id: hit.id, lexical: true })));
  const candidates = list.map((hit, i) => {
    const contribution = { rank: i + 1, score: round(hit.score) };
    return {
      repo,
      store,
      id: hit.id,
      score: round(hit.score),
      explain: {
        mode,
        bm25: mode === "bm25" ? contribution : null,
        vector: mode === "vector" ? contribution : null,
        fused: null,
        merge: mode === "bm25" ? evidence(hit.id, hit, null, hit.score) : evidence(hit.id, null, hit, null),
      },
    };
  });
  return { candidates };
}

/**
 * How many results the repository has for the query, whatever the page: BM25 matches, or in vector and hybrid mode
 * every fragment (or document) the filters, phrases and -words admit (see rankableTotal).
 */
function repositoryTotal(run: SearchRun, repo: Repository, store: Store, mode: SearchMode, lists: RankedLists, depth: number): number {
  const { options, context } = run;
  if (mode === "bm25") {
    return lists.ranked.match ? bm25Total(store, lists.ranked, lists.keyword.length, depth, options, lists.where) : 0;
  }
  // No vector list (a query the model knows no word of): hybrid ranks BM25's matches alone, vector mode nothing.
  if (!lists.bounds)
    return mode === "hybrid" && lists.ranked.match ? bm25Total(store, lists.ranked, lists.keyword.length, depth, options, lists.where) : 0;
  const { within, without } = lists.bounds;
  // Fragments still to be embedded are in no vector list.
  if (mode === "vector" && !within && !without && !options.documents) return rankableVectors(store, repo.dir, context.vectors);
  return rankableTotal(store, lists.bounds, Boolean(options.documents));
}

/**
 * In vector and hybrid mode, every fragment the filters, phrases and -words admit is ranked somewhere (the vector
 * list ranks them all), so `total` counts those fragments, or their documents: what `--all` returns, whatever the
 * page. (BM25 matches that have no vector yet are in it too, as fragments still to be embedded are.)
 */
function rankableTotal(store: Store, { within, without }: VectorBounds, documents: boolean): number {
  if (!within && !without) return documents ? store.counts().documents : store.counts().fragments;
  if (!within) return documents ? store.documentCountWithout([...without!]) : store.counts().fragments - without!.size;
  const ids = without ? [...within].filter((id) => !without.has(id)) : [...within];
  return documents ? store.documentCountOf(ids) : ids.length;
}

/** The fragments a vector list may rank: only `within` when given, never one of `without`. */
interface VectorBounds {
  within?: Set<number>;
  without?: Set<number>;
}

/**
 * The fragments the query's "phrases" admit, or the ones its -words rule out (queryConstraint): the ids FTS5
 * matches, a word's list at most, never the whole repository.
 */
function queryBounds(store: Store, parsed: ParsedQuery): { admitted?: Set<number>; excluded?: Set<number> } {
  const constraint = queryConstraint(parsed);
  if (!constraint) return {};
  const ids = new Set(store.fullText.idsMatching(constraint.match));
  return constraint.admit ? { admitted: ids } : { excluded: ids };
}

function intersection(a: Set<number>, b: Set<number> | undefined): Set<number> {
  return b ? new Set([...a].filter((id) => b.has(id))) : a;
}

/**
 * Embedding can lag behind the text (offline, interrupted, a large repository still embedding): the vector list
 * then covers only part of the repository, which --explain says (counting costs a scan, so only when asked).
 */
function coverageNote(store: Store, repo: Repository, mode: SearchMode): string | undefined {
  const { fragments } = store.counts();
  const vectors = store.embeddings.count();
  if (vectors >= fragments) return undefined;
  const rest = mode === "vector" ? "the rest cannot be found in vector mode" : "the rest are found by bm25 only";
  return `vectors cover ${vectors} of ${fragments} fragments; ${rest} until \`researcher index ${repo.name}\` embeds them`;
}

/**
 * How much of a result's vector evidence counts across repositories: all of it where the repository's fusion weighs
 * its vector list at least as much as its BM25 list, else in the ratio of their weights. Lexical evidence is never
 * scaled: a full match of the query's words means the same in any repository.
 */
function vectorShare(weights: { bm25: number; vector: number }): number {
  return weights.vector >= weights.bm25 ? 1 : weights.vector / weights.bm25;
}

/** A list's contribution where fusion counts it: within the first FUSION_DEPTH places. */
function withinDepth<T extends { rank: number }>(contribution: T | null): T | null {
  return contribution && contribution.rank <= FUSION_DEPTH ? contribution : null;
}

/** A result's evidence on the common scale of calibration.ts (rounded as shown), its merge score and its strength. */
function mergeEvidence(lexical: number | null, vector: number | null, strength: number): MergeEvidence {
  const [l, v] = [lexical === null ? null : round(lexical), vector === null ? null : round(vector)];
  return { lexical: l, vector: v, score: round(mergeScore(l, v)), strength: round(strength) };
}

/**
 * The BM25 list and the match its total counts: a common word's impact list, the posting lists, or rare words first,
 * where they give FTS5's ranking (see bm25.ts); FTS5's own ranking of the match otherwise. A filter takes the same
 * path, applied inside its queries, so it restricts the ranking without rescoring it (the paths score common words
 * differently).
 */
interface Bm25List {
  hits: Ranked[];
  /** What `total` counts, and the count when it is known without counting. */
  match: string;
  total?: number;
}

/** The BM25 list a search ranks: FTS5's ranking of the match with headings weighed in (heading-boost.ts). */
export function rankBm25(
  store: Store,
  parsed: ParsedQuery,
  match: string,
  depth: number,
  where?: SqlCondition,
  cap?: DocumentCap,
): Bm25List {
  const rank = (deeper: number) => fts5Ranking(store, parsed, match, deeper, where);
  // One read transaction: the lists and the headings weighed in them come from one snapshot of the index.
  return store.transaction(() => boostHeadings(store, parsed, depth, cap ? cappedRanking(rank, cap) : rank));
}

/**
 * FTS5's own BM25 ranking of the match, from the lists of bm25.ts where they give it, or from FTS5's pass; ties in
 * path order (ties.ts), whichever path ranked them.
 */
export function fts5Ranking(store: Store, parsed: ParsedQuery, match: string, depth: number, where?: SqlCondition): Bm25List {
  return pathOrdered(store, (deeper: number) => bm25Ranking(store, parsed, match, deeper, where))(depth);
}

function bm25Ranking(store: Store, parsed: ParsedQuery, match: string, depth: number, where?: SqlCondition): Bm25List {
  // One read transaction: the lists, totals and counts the fast paths combine come from one snapshot of the index.
  const fast = store.transaction(
    () =>
      rankOneWord(store, parsed, BM25_WEIGHTS, depth, where) ??
      rankPostings(store, parsed, selectiveTerms(store, parsed), match, BM25_WEIGHTS, depth, where) ??
      rankRareFirst(store, parsed, BM25_WEIGHTS, depth, where),
  );
  return fast ?? { hits: store.fullText.search(match, BM25_WEIGHTS, depth, where), match };
}

/** Plain BM25 reports every fragment (or document) that matches, not just the ones fetched. */
function bm25Total(store: Store, ranked: Bm25List, fetched: number, depth: number, options: SearchOptions, where?: SqlCondition): number {
  if (options.documents) return store.fullText.countMatchingDocuments(ranked.match, where);
  return fetched < depth ? fetched : (ranked.total ?? store.fullText.countMatches(ranked.match, where));
}

/**
 * In a large repository (20,000 fragments and more, where posting lists and impact lists start), optional words
 * found in more than a fifth of all fragments are left out of the match: scoring every fragment they touch is most
 * of the cost of a query. It is a trade of quality for speed, made only where the speed is needed: in a book or a
 * project's documentation the topic's words are common because the collection is about them, and leaving them out
 * lost the answer ("two traits have a method with the same name, how do I call the right one" searched "right"
 * alone). From 1,000 fragments, as it was, it cost natural questions MRR 0.829 → 0.854 (bench/questions.ts, 40
 * tuning questions), 0.758 → 0.810 and 0.831 → 0.850 (s14 and s12 testers' Rust-book questions), and gained SciFact
 * test nDCG@10 0.6929 → 0.6965 (train 0.7076 → 0.7078).
 */
const COMMON_TERM_SHARE = 0.2;
const PRUNE_FROM_FRAGMENTS = 20_000;

export function selectiveMatch(store: Store, parsed: ParsedQuery): string | null {
  const kept = selectiveTerms(store, parsed);
  if (kept === parsed.optional) return parsed.match;
  return buildMatch(
    parsed.required,
    kept.map((term) => term.fts),
    parsed.excluded,
  );
}

/** The optional terms `selectiveMatch` keeps (all of them, the same array, when it keeps the query's match). */
export function selectiveTerms(store: Store, parsed: ParsedQuery): ParsedQuery["optional"] {
  if (!parsed.match || parsed.optional.length < 2) return parsed.optional;
  const fragments = store.fragmentCount();
  if (fragments < PRUNE_FROM_FRAGMENTS) return parsed.optional;
  const stems = parsed.optional.flatMap((term) => (term.stem ? [term.stem] : []));
  const frequency = store.fullText.termFrequencies(stems);
  const kept = parsed.optional.filter((term) => !term.stem || frequency.get(term.stem)! / fragments <= COMMON_TERM_SHARE);
  return kept.length === 0 || kept.length === parsed.optional.length ? parsed.optional : kept;
}
