/**
 * A search's results as it returns them: the hit types, and hydration, which reads the ranked candidates' rows and
 * makes each hit's snippet, location, refs and metadata (search.ts ranks; this module shows).
 */
import { join } from "node:path";
import { docidOf } from "./docid.ts";
import { LEAD, makeSnippet } from "./snippet.ts";
import type { ParsedQuery } from "./query.ts";
import type { Contribution } from "./fusion.ts";
import { contextFor, pathContext, type Repository } from "../repos.ts";
import { parseMetadata, type SectionParts, type Store, type FragmentRow } from "../store/store.ts";
import { boundedMetadata } from "../convert/document.ts";
import { isCodeFormat } from "../file-types.ts";
import type { SearchMode } from "../search-modes.ts";

export interface FragmentRef {
  id: number;
  seq: number;
  start_line: number;
  end_line: number;
  page: number | null;
  page_end: number | null;
  /** `repo:path:start-end`: what `get` and get_document read for exactly this fragment's lines. */
  ref: string;
  /**
   * When the fragment is one of several consecutive ones under the same heading (a function or section longer than
   * a fragment, split): which part it is, and the lines of them all (`ref` reads them), to read the whole unit in one
   * request.
   */
  section?: SectionParts & { ref: string };
}

export interface Explain {
  mode: SearchMode;
  bm25: Contribution | null;
  vector: Contribution | null;
  /** The hybrid score (see fusion.ts), null in single-list modes. */
  fused: number | null;
  /** Hybrid only: the lists' weights in this repository (the response's notes say why). */
  weights?: { bm25: number; vector: number };
  /** Why a repository searched in another mode than asked (e.g. it has no vectors). */
  note?: string;
  /** The calibrated evidence (0-1) that orders results of several repositories, and the score it gives. */
  merge: MergeEvidence;
}

export interface MergeEvidence {
  lexical: number | null;
  vector: number | null;
  score: number;
  /**
   * Its BM25 score over the query's IDF mass, uncapped (0 without a BM25 match): what orders results of equal score
   * across repositories, since the evidence caps at 1 (every mention of one identifier, and its definition, reach it).
   */
  strength: number;
}

export interface FragmentHit {
  rank: number;
  score: number;
  /**
   * The mode its repository was searched in, which `score` is on the scale of: a list over several repositories
   * mixes modes when some have no vectors (a BM25-only repository beside ones with vectors).
   */
  mode: SearchMode;
  repository: string;
  path: string;
  absolutePath: string;
  /** `path:line` in the converted text; `get` reads it back. */
  location: string;
  /** The page the snippet is on, for paged formats (PDF); null otherwise. */
  page: number | null;
  docid: string;
  title: string;
  heading: string;
  fragment: FragmentRef;
  snippet: string;
  highlights: [number, number][];
  /** What the documents under its path are (`context add`), else its repository's description. */
  context: string | null;
  /**
   * Whether `context` is a path's (`context add`), which text and markdown show: a repository's description, which
   * the citation's repository name already stands for, would repeat under every result of it.
   */
  pathContext?: true;
  /** The document's metadata as stored (front matter, PDF info, …) and its `format`. */
  metadata: Record<string, unknown>;
  explain?: Explain;
  /** With `full`: the whole fragment (a document hit's: its best fragment's). */
  text?: string;
}

export interface DocumentHit extends Omit<FragmentHit, "fragment"> {
  fragments: (FragmentRef & { heading: string; score: number; snippet: string; location: string; text?: string })[];
}

/** A ranked fragment of a repository, before its row is read. */
export interface Candidate {
  repo: Repository;
  store: Store;
  id: number;
  score: number;
  explain: Explain;
}

/** Fragments a document hit shows. */
const FRAGMENTS_PER_DOCUMENT = 3;

/**
 * The first `limit` candidates that still exist. Ranking and reading rows are separate queries, and an index run
 * may replace a document between them: its fragments are skipped and the page is filled from the next candidates,
 * so a search during an index run never comes back short.
 */
export function hydrate(candidates: Candidate[], offset: number, limit: number, parsed: ParsedQuery, full: boolean): FragmentHit[] {
  const page: [Candidate, FragmentRow][] = [];
  for (let start = offset; page.length < limit && start < candidates.length; ) {
    const batch = candidates.slice(start, start + limit - page.length);
    start += batch.length;
    const rows = fetchRows(batch);
    for (const c of batch) {
      const row = rows.get(c.store)?.get(c.id);
      if (row) page.push([c, row]);
    }
  }
  // A result shows what it shows on a page from the first result: the results of its documents ranked above it, on
  // earlier pages too, choose its passage as they would on one page (paging with --offset cited other lines: s19
  // user F3).
  const shown = new ShownPassages();
  const onPage = new Set(page.map(([c, row]) => passageKey(c, row)));
  // Only those of the page's documents are read whole (owners first: a deep offset read every text above it).
  const owners = new Map([...idsByStore(candidates.slice(0, offset))].map(([store, ids]) => [store, store.ownersOf(ids)]));
  const above = candidates.slice(0, offset).filter((c) => onPage.has(passageKey(c, { path: owners.get(c.store)?.get(c.id)?.path ?? "" })));
  const aboveRows = fetchRows(above);
  for (const c of above) {
    const row = aboveRows.get(c.store)?.get(c.id);
    if (row) shown.add(c, row, parsed, full);
  }
  return page.map(([c, row]) => shown.add(c, row, parsed, full));
}

/**
 * The passages already shown on a page, so that each result shows one of its own. Adjacent fragments share text (the
 * chunks' overlap), and a query whose words sit in that shared text picked the same passage for both, at the same
 * location: a fragment whose neighbour higher on the page already shows its passage takes one from the rest of its
 * text.
 */
class ShownPassages {
  private readonly byDocument = new Map<string, { row: FragmentRow; location: string }[]>();

  add(c: Candidate, row: FragmentRow, parsed: ParsedQuery, full: boolean): FragmentHit {
    const key = passageKey(c, row);
    const shown = this.byDocument.get(key) ?? [];
    this.byDocument.set(key, shown);
    let hit = toHit(c, row, parsed, full);
    // A neighbour shown already holds this hit's snippet: the same line, or a passage of their overlap that falls
    // a line or two apart (14 of 30 top-10 lists showed one passage twice; then 3 of 18 where lines differed).
    const neighbour = shown.find(
      (s) => Math.abs(s.row.seq - row.seq) === 1 && (s.location === hit.location || holdsSnippet(s.row.text, hit.snippet)),
    );
    const part = neighbour && ownPart(row.text, neighbour.row.text, neighbour.row.seq < row.seq);
    if (part) hit = toHit(c, row, parsed, full, part);
    shown.push({ row, location: hit.location });
    return hit;
  }
}

/** The document a result's passage is chosen within (ShownPassages). */
function passageKey(c: Candidate, row: { path: string }): string {
  return `${c.repo.name}\0${row.path}`;
}

/**
 * Whether `text` holds the opening of a snippet (its first 80 characters, ellipses and the spacing of lines aside),
 * the opening from one of its first words on, or its closing: a snippet begins up to LEAD characters before its first
 * match, so one whose match lies in the text two fragments share may begin a few words before that text (s20 review
 * F3), or run from its own text into the shared text to its end (the demo showed a section's parts 1 and 2 so). A
 * reader sees the same passage again.
 */
function holdsSnippet(text: string, snippet: string): boolean {
  const flat = snippet.replace(/^…/, "").replace(/…$/, "").replace(/\s+/g, " ").trim();
  const haystack = text.replace(/\s+/g, " ");
  const holds = (part: string) => part.length >= 20 && haystack.includes(part);
  const starts = [0];
  for (let at = flat.indexOf(" "); at !== -1 && at < LEAD; at = flat.indexOf(" ", at + 1)) starts.push(at + 1);
  return starts.some((start) => holds(flat.slice(start, start + 80))) || holds(flat.slice(-80));
}

/** The characters of `text` its neighbour does not hold (after the overlap when the neighbour comes first, else
 * before it), or undefined when they share none or that is all there is. */
function ownPart(text: string, neighbour: string, neighbourFirst: boolean): { from: number; to: number } | undefined {
  const overlap = neighbourFirst ? overlapLength(neighbour, text) : overlapLength(text, neighbour);
  const part = neighbourFirst ? { from: overlap, to: text.length } : { from: 0, to: text.length - overlap };
  return overlap > 0 && text.slice(part.from, part.to).trim() ? part : undefined;
}

/** How many characters that end `first` also begin `second`: their shared text, found from a probe of its start. */
function overlapLength(first: string, second: string): number {
  const probe = second.slice(0, 32);
  for (let at = first.indexOf(probe); probe && at !== -1; at = first.indexOf(probe, at + 1)) {
    if (second.startsWith(first.slice(at))) return first.length - at;
  }
  return 0;
}

/**
 * Fragments grouped by document, in the order of each document's best fragment (up to three each). A document's
 * further fragments are those `listed` admits: ranked as deep for every page, so they do not change with the page
 * (a page ranked shallower than `--all` listed fewer: s23 contracts C1). A further fragment fused to 0 in hybrid mode
 * (no BM25 match, and at or past the foot of the vector list's first 100) is no evidence: listed, it read as "also
 * lines 3" for a line sharing nothing with the query (s28 agent #2), where bm25 mode lists only matches.
 */
export function documentGroups(candidates: Candidate[], listed: (c: Candidate) => boolean): Candidate[][] {
  const owners = new Map([...idsByStore(candidates)].map(([store, ids]) => [store, store.ownersOf(ids)]));
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const documentId = owners.get(c.store)!.get(c.id)?.documentId;
    if (documentId === undefined) continue;
    const key = `${c.repo.name}\0${documentId}`;
    const group = groups.get(key);
    if (!group) groups.set(key, [c]);
    else if (group.length < FRAGMENTS_PER_DOCUMENT && listed(c) && (c.explain.fused !== 0 || c.explain.bm25 !== null)) group.push(c);
  }
  return [...groups.values()];
}

/** A page of document groups as results; only the page asked for is hydrated. */
export function hydrateGroups(page: Candidate[][], parsed: ParsedQuery, full: boolean): DocumentHit[] {
  const rows = fetchRows(page.flat());
  return page.flatMap((group) => {
    // A fragment replaced by an index run since ranking is skipped (see hydrate).
    const shown = new ShownPassages();
    const hits = group.flatMap((c) => {
      const row = rows.get(c.store)?.get(c.id);
      return row ? [shown.add(c, row, parsed, full)] : [];
    });
    if (hits.length === 0) return [];
    const { fragment: _, ...best } = hits[0]!;
    return {
      ...best,
      fragments: hits.map((h) => ({
        ...h.fragment,
        heading: h.heading,
        score: h.score,
        snippet: h.snippet,
        location: h.location,
        ...(full ? { text: h.text } : {}),
      })),
    };
  });
}

function idsByStore(candidates: Candidate[]): Map<Store, number[]> {
  const byStore = new Map<Store, number[]>();
  for (const c of candidates) {
    const ids = byStore.get(c.store);
    if (ids) ids.push(c.id);
    else byStore.set(c.store, [c.id]);
  }
  return byStore;
}

function fetchRows(candidates: Candidate[]): Map<Store, Map<number, FragmentRow>> {
  return new Map([...idsByStore(candidates)].map(([store, ids]) => [store, store.fragmentsByIds(ids)]));
}

function toHit(c: Candidate, row: FragmentRow, parsed: ParsedQuery, full: boolean, part?: { from: number; to: number }): FragmentHit {
  const snippet = makeSnippet(row.text, parsed.highlight, { ...part, code: isCodeFormat(row.format) });
  const line = Math.min(row.endLine, row.startLine + countNewlines(row.text, snippet.offset));
  return {
    rank: 0,
    score: c.score,
    mode: c.explain.mode,
    repository: c.repo.name,
    path: row.path,
    absolutePath: join(c.repo.path, row.path),
    location: `${row.path}:${line}`,
    page: row.page,
    docid: docidOf(row.hash),
    title: row.title,
    heading: row.heading,
    fragment: {
      id: row.id,
      seq: row.seq,
      start_line: row.startLine,
      end_line: row.endLine,
      page: row.page,
      page_end: row.pageEnd,
      ref: linesRef(c.repo.name, row.path, row.startLine, row.endLine),
      ...sectionOf(c.store, c.repo.name, row),
    },
    snippet: snippet.text,
    highlights: snippet.highlights,
    context: contextFor(c.repo, row.path),
    ...(pathContext(c.repo, row.path) !== undefined ? { pathContext: true as const } : {}),
    metadata: { ...boundedMetadata(parseMetadata(row.metadata), RESULT_METADATA), format: row.format },
    explain: c.explain,
    ...(full ? { text: row.text } : {}),
  };
}

/**
 * A result's share of its document's metadata: each value cut at 300 characters, 4 KB in all. Every result carries
 * it, so 200 results from a note with 20 long front-matter values answered 13 MB; `get --meta` gives it whole.
 */
const RESULT_METADATA = { depth: 8, values: 200, chars: 4096, valueChars: 300 };

/** `{ section }` for a fragment split from a longer unit under the same heading, else nothing. */
function sectionOf(store: Store, repository: string, row: FragmentRow): Pick<FragmentRef, "section"> {
  const section = row.heading ? store.sectionParts(row.documentId, row.seq, row.heading, isCodeFormat(row.format)) : undefined;
  return section ? { section: { ...section, ref: linesRef(repository, row.path, section.start_line, section.end_line) } } : {};
}

/** The ref of some lines of a document (`notes:a.md:3-24`; one line is `3-3`, as `:3` reads on to the end). */
function linesRef(repository: string, path: string, start: number, end: number): string {
  return `${repository}:${path}:${start}-${end}`;
}

function countNewlines(text: string, end: number): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) count++;
  return count;
}

export function roundContribution(c: Contribution | null): Contribution | null {
  return c && { rank: c.rank, score: round(c.score) };
}

export function round(score: number): number {
  return Math.round(score * 10000) / 10000;
}
