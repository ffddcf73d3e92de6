/**
 * Reading whole documents back: by `repo:path[:line]` or `#docid`, one at a time or by glob. Only documents the
 * index holds are read, and only inside their repository: `..`, absolute paths elsewhere, symlinks out of the root
 * and files that were never indexed (hidden, excluded, other types) are refused. A converted format (PDF, DOCX,
 * EPUB, HTML) reads back as the markdown indexing saw, through the same converter; PDFs with page marker lines.
 */
import { DOCID, docidOf } from "./docid.ts";
import { shellWord, unescapeControls } from "../terminal.ts";
import { existsSync, realpathSync } from "node:fs";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import { type Config, loadConfig, REPO_NAME } from "../config.ts";
import { decodeText, formatOf, TEXT_FORMATS } from "../convert/convert.ts";
import { PAGE_MARKER } from "../convert/document.ts";
import { ConversionCache } from "./conversions.ts";
import { conversionLimits, conversionSettings, convertOnce } from "../convert/pool.ts";
import { isInside, movedRoot, movedRootHint, outsideRoot, readConfinedFile, rootRecord, type RootRecord, sha256 } from "../files.ts";
import { composed } from "../text.ts";
import { cancelled, describeError, isResearcherError, notIndexedYet, ResearcherError, toResearcherError } from "../errors.ts";
import { attempt, getRepository, listRepositories, selectRepositories, settle, type Repository, type SkippedRepository } from "../repos.ts";
import { Store, type ListedDocument, type StoredDocument } from "../store/store.ts";
import { isGlob, leadingRepository, listParts, lookupOf, pathGlob, subjects } from "../path-glob.ts";

/** Who a document is: what every answer about it starts with. */
interface DocumentIdentity {
  repository: string;
  path: string;
  docid: string;
  title: string;
  format: string;
  metadata: Record<string, unknown>;
}

/** What the index knows about a document, without reading it: `ls` entries and `get --meta`. */
export interface DocumentInfo extends DocumentIdentity {
  size: number;
  /** The file's modification time when it was indexed (ISO 8601). */
  modified: string;
  fragments: number;
  /** The last page of a paged document (PDF), null for the rest. */
  pages: number | null;
}

export interface DocumentText extends DocumentIdentity {
  /** First and last line of `text` (1-based, inclusive); `to` is `from - 1` for an empty document. */
  from: number;
  to: number;
  /** The same as `from`/`to`, the names the first MCP contract used. */
  from_line: number;
  to_line: number;
  total_lines: number;
  /** The answer was cut short of what was asked for (by a byte budget): read on from `to + 1`. */
  truncated: boolean;
  /**
   * The file is not what was indexed (edited since, and no index run yet): the text is the file as it is now, so a
   * line range a search cited may have moved.
   */
  changed_since_index: boolean;
  text: string;
}

export interface DocumentRef {
  repo: Repository;
  path: string;
  line?: number;
  count?: number;
  /** A page of a paged document (PDF): read from its page marker to the next. */
  page?: number;
  /** The last page of a page range (`:p6-7`), read through its end. */
  lastPage?: number;
}

export interface ReadOptions {
  /** First line (1-based); default: the ref's line, else 1. */
  fromLine?: number;
  /** How many lines; default: the ref's count, else to the end. */
  maxLines?: number;
  /** A server's converted documents, reused while a file's bytes and settings are unchanged. */
  conversions?: ConversionCache;
  /** The caller gave up (an MCP client cancelled): a conversion only this read waits for is stopped. */
  signal?: AbortSignal;
  /** Indexes and configuration shared with other reads of the same call. */
  session?: ReadSession;
}

/** A path relative to the repository root that stays inside it, even through symlinks: one that may be read. */
function safeRelativePath(repo: Repository, input: string): string {
  const rel = repositoryPath(repo, input);
  // A path inside the root whose file now resolves out of it (a folder swapped for a link): the file cannot be read.
  const absolute = join(repo.path, rel);
  const real = existsSync(absolute) ? realpathSync(absolute) : undefined;
  if (real && !isInside(realpathSync(repo.path), real))
    throw new ResearcherError("FILE_UNREADABLE", `${repo.name}:${rel} ${outsideRoot(real)}`);
  return rel;
}

/**
 * A path relative to the repository root, written inside it (no `..` out, not the root itself), as the index names
 * its documents; what is at it now is not looked at (`remove` drops a document whose file became a link out).
 */
export function repositoryPath(repo: Repository, input: string): string {
  const cleaned = input.replace(/^\.\//, "");
  const absolute = isAbsolute(cleaned) ? cleaned : join(repo.path, cleaned);
  const rel = relative(repo.path, absolute);
  const escapes = () =>
    new ResearcherError("PATH_OUTSIDE_REPO", `'${input}' is outside repository '${repo.name}'`, {
      hint: `paths are relative to ${repo.path} and must stay inside it`,
    });
  if (!isInside(repo.path, absolute)) throw escapes();
  if (rel === "")
    throw new ResearcherError("INVALID_INPUT", `'${input}' is the folder of repository '${repo.name}', not a file in it`, {
      hint: `name a file relative to ${repo.path}`,
    });
  return rel.split(sep).join("/");
}

/**
 * How a ref is looked up: in one repository (`repository`), on the indexes and path listings one call shares
 * (`session`), and whether a miss names close paths (`suggest`, default true). A multi-get list gives a part's miss
 * as its message alone: its close paths, found by a pass over every path, were never shown (s22 review F4).
 */
export interface RefLookup {
  repository?: string;
  session?: ReadSession;
  suggest?: boolean;
}

const REF_HINT =
  "use repo:path, repo:path:line[:count], repo:path:from-to, repo:path:pN[-M], #docid (with any of those tails), or a search result's location";

/**
 * A reference to an indexed document: `repo:path`, `repo:path:line`, `repo:path:line:count`, `#docid` (6+ hex
 * digits of its hash, with any of those tails: `#3662ff:p6`), or a search result's bare `location` (`path:line`),
 * found in whichever repository holds it.
 * A path that is itself indexed wins over reading its tail as a line number (`notes:log:12` may be a file). An
 * ambiguous docid or bare location is an error that lists the candidates; a miss suggests close paths.
 */
export function resolveDocumentRef(home: string, ref: string, options: RefLookup = {}): DocumentRef {
  // A ref never ends in whitespace (a path ends in its extension, a location in its line or page), but a file name
  // may begin with some: a bare search location (" notes.md:3") is read as given when that names an indexed
  // document, else trimmed (stray spaces around a pasted ref).
  const given = ref.trimEnd();
  const trimmed = given.trimStart();
  if (given !== trimmed) {
    const exact = unlessRefused(() => resolveTrimmedRef(home, given, options));
    if (exact && hasIndexedPath(exact.repo, exact.path, options.session)) return exact;
  }
  return resolveTrimmedRef(home, trimmed, options);
}

/** What `body` gives, or undefined when it refuses (a ResearcherError); anything else is a bug and rethrown. */
function unlessRefused<T>(body: () => T): T | undefined {
  try {
    return body();
  } catch (error) {
    if (isResearcherError(error)) return undefined;
    throw error;
  }
}

function resolveTrimmedRef(home: string, trimmed: string, options: RefLookup): DocumentRef {
  // A ref that cannot name anything is malformed (exit 2), as a line 0 is; one that names nothing indexed is not.
  if (!trimmed) throw new ResearcherError("USAGE", "an empty document reference", { hint: REF_HINT });
  if (DOCID.test(trimmed)) return findByDocid(home, trimmed.slice(1).toLowerCase(), options);
  const place = trimmed.startsWith("#") ? lineSuffix(trimmed) : undefined;
  if (place && DOCID.test(place.path)) return { ...findByDocid(home, place.path.slice(1).toLowerCase(), options), ...checkedPlace(place) };
  if (trimmed.startsWith("#")) {
    throw new ResearcherError("USAGE", `'${trimmed}' is not a docid`, {
      hint: "a docid is # and at least 6 hex digits, as search results print it",
    });
  }
  const repos = listRepositories(home);
  const colon = trimmed.indexOf(":");
  const named = colon > 0 ? repos.find((r) => r.name === trimmed.slice(0, colon)) : undefined;
  if (options.repository) {
    const repo = getRepository(home, options.repository);
    const rest = named?.name === repo.name && !hasIndexedPath(repo, trimmed, options.session) ? trimmed.slice(colon + 1) : trimmed;
    return resolveInRepository(repo, rest, true, options.session)!;
  }
  if (named) return resolveInRepository(named, trimmed.slice(colon + 1), true, options.session)!;

  const { answers, skipped } = readable(repos, (repo) => resolveInRepository(repo, trimmed, false, options.session));
  const found = answers.flatMap(({ value }) => (value ? [value] : []));
  if (found.length === 1) return found[0]!;
  if (found.length > 1) {
    throw new ResearcherError(
      "INVALID_INPUT",
      `'${trimmed}' is in ${found.length} repositories: ${found.map((f) => `${f.repo.name}:${f.path}`).join(", ")}`,
      {
        hint: "prefix the repository: repo:path[:line]",
      },
    );
  }
  if (colon > 0 && REPO_NAME.test(trimmed.slice(0, colon))) getRepository(home, trimmed.slice(0, colon)); // throws, naming the known ones
  const suffix = lineSuffix(trimmed);
  if (suffix) refuseZero(suffix); // `a.md:0` names no place in any document: a usage error, not a miss
  const target = suffix?.path ?? trimmed;
  throw unread(
    notIndexed(trimmed, options.suggest === false ? [] : answers.flatMap(({ repo }) => closePaths(repo, target)), "no repository holds"),
    skipped,
  );
}

/**
 * `work` over each repository whose index can be read: a lookup over all of them must not fail for one damaged or
 * outdated index (its error is in `skipped`), unless every one fails.
 */
function readable<T>(repos: Repository[], work: (repo: Repository) => T): ReturnType<typeof settle<T>> {
  return settle(
    repos.map((repo) => attempt(repo, work)),
    false,
  );
}

/** A miss, saying which repositories could not be looked in (they may hold it). */
function unread(miss: ResearcherError, skipped: SkippedRepository[]): ResearcherError {
  if (skipped.length === 0) return miss;
  const names = skipped.map((s) => s.repository).join(", ");
  return new ResearcherError(miss.code, `${miss.message} (${names} could not be read)`, {
    hint: `${miss.hint ? `${miss.hint}; ` : ""}\`researcher status\` says what is wrong with ${names}`,
  });
}

/**
 * The place a ref's tail names: `:line`, `:line:count`, `:from-to` (a code result's line range) or `:pN` (a PDF
 * result's page, `:pN-M` pages), as search results print them, and `#pN` or `#page=N`, as PDF viewers and links write a page. The
 * path before it may hold any character a file name can, a newline too (`s`: `.` matches it), and `$` is the very
 * end: a search location always round-trips (a whole path that is indexed is taken first).
 */
interface Place {
  path: string;
  line?: number;
  count?: number;
  to?: number;
  page?: number;
  lastPage?: number;
}

const lineSuffix = (text: string): Place | undefined => {
  const page = /^(.+?)(?::p|#p|#page=)(\d+)(?:-p?(\d+))?$/s.exec(text);
  if (page) return { path: page[1]!, page: Number(page[2]), ...(page[3] === undefined ? {} : { lastPage: Number(page[3]) }) };
  const range = /^(.+?):(\d+)-(\d+)$/s.exec(text);
  if (range) {
    const [line, to] = [Number(range[2]), Number(range[3])];
    return { path: range[1]!, line, to, count: to - line + 1 };
  }
  const match = /^(.+?):(\d+)(?::(\d+))?$/s.exec(text);
  return match ? { path: match[1]!, line: Number(match[2]), count: match[3] === undefined ? undefined : Number(match[3]) } : undefined;
};

/**
 * `rest` (a path, maybe with `:line[:count]`) in one repository. With `strict`, a path outside the repository is an
 * error and a miss returns the cleaned path (for `documentInfo` to refuse with suggestions); otherwise only an
 * indexed document is returned.
 */
function resolveInRepository(repo: Repository, rest: string, strict: boolean, session?: ReadSession): DocumentRef | undefined {
  // `repo:/README.md` as `ls repo:/src` and path globs take it, from the root, when the absolute path is outside it
  // and the root holds that document; any other absolute path outside stays refused as outside.
  if (rest.startsWith("/") && !isInside(repo.path, rest)) {
    const rooted = resolveInRepository(repo, rest.replace(/^\/+/, ""), false, session);
    if (rooted) return rooted;
  }
  const attempt = (check: (repo: Repository, path: string) => string, path: string) => {
    try {
      return check(repo, path);
    } catch (error) {
      if (strict) throw error;
      return undefined;
    }
  };
  // Looked up by name first; only a path the index holds is resolved on disk (confined to the root). Resolving any
  // path first would answer differently for outside files that exist, through a link in the root to a parent.
  const indexed = (path: string | undefined) => {
    const spelled = path === undefined ? undefined : indexedSpelling(repo, path, session);
    return spelled === undefined ? undefined : attempt(safeRelativePath, spelled);
  };
  const whole = attempt(repositoryPath, rest);
  const found = indexed(whole);
  if (found !== undefined) return { repo, path: found };
  const split = lineSuffix(rest);
  if (split) {
    refuseZero(split);
    const named = attempt(repositoryPath, split.path);
    const path = indexed(named) ?? (strict ? named : undefined);
    if (path !== undefined) return { repo, path, ...checkedPlace({ ...split, path: `${repo.name}:${path}` }) };
  }
  if (strict) refuseOtherTail(repo, rest, session);
  return strict ? { repo, path: whole! } : undefined;
}

/**
 * An indexed document's path with a tail that is no place (`index.js:convertToHtml`, a symbol as headings name it):
 * the tail is what is wrong, not the document ("not an indexed document" led nowhere: s22 agent #6).
 */
function refuseOtherTail(repo: Repository, rest: string, session?: ReadSession): void {
  // The document is looked for before each of the last three colons: a place has two at most (`:line:count`), and a
  // stray one may follow it (`x.md:3:` was "not an indexed document" where `x.md:` named its tail). No further: a
  // name of 80,000 colons is not looked up 80,000 times.
  let colon = rest.length;
  for (let tried = 0; tried < 3; tried++) {
    colon = rest.lastIndexOf(":", colon - 1);
    const tail = rest.slice(colon + 1);
    if (colon <= 0 || tail.includes("/")) return;
    const head = unlessRefused(() => repositoryPath(repo, rest.slice(0, colon)));
    const path = head === undefined ? undefined : indexedSpelling(repo, head, session);
    if (path === undefined) continue;
    throw new ResearcherError("USAGE", `'${tail}' after ${repo.name}:${path} is not a line, a line range or a page`, {
      hint: "a ref ends in :line, :line:count, :from-to or :pN; a function or a section is read by its lines, the ref a search result gives (`fragment.ref`)",
    });
  }
}

/** The place a ref names (its `path` the document's name, for messages): a range that ends before it starts is a usage error. */
function checkedPlace(place: Place): Pick<DocumentRef, "line" | "count" | "page" | "lastPage"> {
  refuseZero(place);
  if (place.to !== undefined && place.to < place.line!) throw reversedRange(place.path, place.line!, place.to);
  if (place.lastPage !== undefined && place.lastPage < place.page!) {
    throw new ResearcherError("USAGE", `the page range p${place.page}-${place.lastPage} ends before it starts`, {
      hint: `name the first page first: ${place.path}:p${place.lastPage}-${place.page}`,
    });
  }
  const { line, count, page, lastPage } = place;
  return { line, count, page, ...(lastPage === undefined || lastPage === page ? {} : { lastPage }) };
}

/** Line 0 and page 0 are no place in any document: a usage error before anything is looked up, as `:20-10` is. */
function refuseZero({ line, count, to, page, lastPage }: Omit<Place, "path">): void {
  // Digits past what a number holds exactly were read rounded ("line 100000000000000000000 is past the end").
  const huge = [line, count, to, page, lastPage].find((n) => n !== undefined && !Number.isSafeInteger(n));
  if (huge !== undefined) throw new ResearcherError("USAGE", `line and page numbers go up to ${Number.MAX_SAFE_INTEGER}`);
  if (page === 0 || lastPage === 0) throw badPage(0);
  if (line === 0) throw badFirstLine(line);
  if (count === 0 && to === undefined) throw badCount(count); // a range ending before it starts says so itself
}

const badPage = (page: number) =>
  new ResearcherError("USAGE", `pages count from 1 (got p${page})`, { hint: "read the first page as pN with N ≥ 1" });
const badFirstLine = (line: number) => new ResearcherError("USAGE", `the first line must be 1 or more (got ${line})`);
const badCount = (count: number) => new ResearcherError("USAGE", `the number of lines must be 1 or more (got ${count})`);

/** `:20-10`: refused rather than read as one line, which a typo (or a swapped pair) would silently get. */
function reversedRange(name: string, from: number, to: number): ResearcherError {
  return new ResearcherError("USAGE", `the line range ${from}-${to} ends before it starts`, {
    hint: `name the first line first: ${name}:${Math.max(1, to)}-${from}`,
  });
}

function hasIndexedPath(repo: Repository, path: string, session?: ReadSession): boolean {
  return withStore(repo, (store) => store.documentByPath(path) !== undefined, session) ?? false;
}

/**
 * The indexed path `path` names: itself, or the one indexed path it equals once both are NFC-normalised. A name
 * copied from a Mac is decomposed (NFD) on disk, and the same name typed (or written back by an agent) is composed:
 * the two print alike, and `get` of the one answered "did you mean" with the other.
 */
function indexedSpelling(repo: Repository, path: string, session?: ReadSession): string | undefined {
  return withStore(repo, (store) => spelledIn(store, path, session && (() => session.spellings(repo))), session);
}

/**
 * `path` as the store spells it (see indexedSpelling), or undefined; `spellings`, the indexed paths by their composed
 * spelling when a session keeps them (each part of a multi-get list read every path to compose it).
 */
export function spelledIn(store: Store, path: string, spellings?: () => ReadonlyMap<string, readonly string[]>): string | undefined {
  if (store.documentByPath(path)) return path;
  if (path.includes("\\")) {
    const unescaped = unescapeControls(path); // as `ls` and text results print a name with control characters
    if (unescaped !== path && store.documentByPath(unescaped)) return unescaped;
  }
  if (/^[\x00-\x7f]*$/.test(path)) return undefined; // nothing to normalise
  const wanted = composed(path);
  const same = spellings ? (spellings().get(wanted) ?? []) : [...store.documents().keys()].filter((p) => composed(p) === wanted);
  return same.length === 1 ? same[0] : undefined;
}

/**
 * Run `body` on the repository's index, or return undefined when it has none; within a `session`, on the index it
 * keeps open.
 */
export function withStore<T>(repo: Repository, body: (store: Store) => T, session?: ReadSession): T | undefined {
  if (session) return session.withStore(repo, body);
  if (!Store.exists(repo.dir)) return undefined;
  const store = Store.open(repo.dir);
  try {
    return body(store);
  } finally {
    store.close();
  }
}

/**
 * What the reads of one call share (multi-get): each repository's index opened once and the configuration read once.
 * Opened per document, 100,000 notes took 70 s (ls: 0.6 s), and SQLite made and removed the WAL files each time.
 */
export class ReadSession {
  private readonly stores = new Map<string, Store | null>();
  private readonly listed = new Map<string, ReadonlyMap<string, StoredDocument> | null>();
  private readonly folderIndexes = new Map<string, FolderIndex>();
  private readonly spellingIndexes = new Map<string, Map<string, string[]>>();
  private loaded?: Config;

  constructor(private readonly home: string) {}

  get config(): Config {
    this.loaded ??= loadConfig(this.home);
    return this.loaded;
  }

  withStore<T>(repo: Repository, body: (store: Store) => T): T | undefined {
    if (!this.stores.has(repo.dir)) this.stores.set(repo.dir, Store.exists(repo.dir) ? Store.open(repo.dir) : null);
    const store = this.stores.get(repo.dir);
    return store ? body(store) : undefined;
  }

  /**
   * The repository's indexed documents by path, read once for the call (undefined: it has no index): every part of a
   * multi-get list looks its paths up here, where each read them all (s22 review F4).
   */
  documents(repo: Repository): ReadonlyMap<string, StoredDocument> | undefined {
    if (!this.listed.has(repo.dir)) this.listed.set(repo.dir, this.withStore(repo, (store) => store.documents()) ?? null);
    return this.listed.get(repo.dir) ?? undefined;
  }

  /** The repository's folders, made once for the call from `documents`. */
  folders(repo: Repository): FolderIndex {
    if (!this.folderIndexes.has(repo.dir)) this.folderIndexes.set(repo.dir, folderIndex(this.documents(repo)?.keys() ?? []));
    return this.folderIndexes.get(repo.dir)!;
  }

  /** The repository's indexed paths by their composed (NFC) spelling, made once for the call from `documents`. */
  spellings(repo: Repository): ReadonlyMap<string, readonly string[]> {
    if (!this.spellingIndexes.has(repo.dir)) {
      const index = new Map<string, string[]>();
      for (const path of this.documents(repo)?.keys() ?? []) addTo(index, composed(path), path);
      this.spellingIndexes.set(repo.dir, index);
    }
    return this.spellingIndexes.get(repo.dir)!;
  }

  close(): void {
    for (const store of this.stores.values()) store?.close();
    this.stores.clear();
  }
}

/** `body` within `session`, or when there is none (`get`, `get --meta`), within a session of its own, closed after. */
function inSession<T>(home: string, session: ReadSession | undefined, body: (session: ReadSession) => T): T {
  if (session) return body(session);
  const own = new ReadSession(home);
  try {
    return body(own);
  } finally {
    own.close();
  }
}

/** A repository's indexed documents (see ReadSession.documents), read now when no session keeps them. */
function indexedDocuments(repo: Repository, session?: ReadSession): ReadonlyMap<string, StoredDocument> | undefined {
  return session ? session.documents(repo) : withStore(repo, (store) => store.documents());
}

/**
 * The paths below each folder, by the folder's path from the root (`a/b`) and by its name (`b`, at any depth), both
 * composed as globs compare them: what a folder part of a multi-get list (`notes:a/b/`, `notes:b`) is looked up in.
 */
interface FolderIndex {
  byPath: Map<string, string[]>;
  byName: Map<string, string[]>;
}

function folderIndex(paths: Iterable<string>): FolderIndex {
  const index: FolderIndex = { byPath: new Map(), byName: new Map() };
  for (const path of paths) {
    const folders = subjects(composed(path), true).slice(0, -1);
    for (const folder of folders) addTo(index.byPath, folder, path);
    for (const name of new Set(folders.map((folder) => folder.slice(folder.lastIndexOf("/") + 1)))) addTo(index.byName, name, path);
  }
  return index;
}

/** `path` added to the list under `key`. */
function addTo(map: Map<string, string[]>, key: string, path: string): void {
  const list = map.get(key);
  if (list) list.push(path);
  else map.set(key, [path]);
}

/** The indexed paths below a folder (its path from the root, without a trailing slash), compared composed. */
function documentsBelow(repo: Repository, folder: string, session: ReadSession): readonly string[] {
  return session.folders(repo).byPath.get(composed(folder)) ?? [];
}

function findByDocid(home: string, prefix: string, { repository, session }: RefLookup): DocumentRef {
  const repos = repository ? [getRepository(home, repository)] : listRepositories(home);
  const { answers, skipped } = readable(repos, (repo) => [...(indexedDocuments(repo, session)?.values() ?? [])]);
  const found = answers.flatMap(({ repo, value }) =>
    value.filter((doc) => doc.hash.startsWith(prefix)).map((doc) => ({ repo, path: doc.path, hash: doc.hash })),
  );
  if (found.length === 1) return { repo: found[0]!.repo, path: found[0]!.path };
  if (found.length === 0) {
    const miss = new ResearcherError("DOCUMENT_NOT_FOUND", `no document with docid #${prefix}`, {
      hint: "docids change when a document changes: search again for the current one",
    });
    throw unread(miss, skipped);
  }
  const list = found
    .slice(0, 10)
    .map((f) => `${f.repo.name}:${f.path}`)
    .join(", ");
  throw new ResearcherError(
    "INVALID_INPUT",
    `docid #${prefix} matches ${found.length} documents: ${list}${found.length > 10 ? ", …" : ""}`,
    {
      // A docid is the content's hash: copies of one file share it, and no number of digits tells them apart.
      hint:
        new Set(found.map((f) => f.hash)).size === 1
          ? "these files have the same content, so the same docid: name one as repo:path"
          : "use repo:path, or more hex digits of the docid",
    },
  );
}

/** A document's listing (`get --meta`, `ls`) by any ref; a refusal (with close paths) for anything not indexed. */
export function documentInfo(home: string, ref: string | DocumentRef, options: RefLookup = {}): DocumentInfo {
  const { repo, path } = typeof ref === "string" ? resolveDocumentRef(home, ref, options) : ref;
  return listedInfo(repo, indexedDocument(home, repo, path, options).listed);
}

/**
 * What the index holds about a document, and where its repository's folder led at the last run (read together: one
 * opening of the index per document read); a refusal (with close paths) for anything it does not hold.
 */
function indexedDocument(
  home: string,
  repo: Repository,
  path: string,
  { session, suggest }: RefLookup,
): { listed: ListedDocument; root: RootRecord | undefined } {
  const found = withStore(repo, (store) => ({ listed: store.documentListing(path)[0], root: store.recordedRoot() }), session);
  // A repository never indexed holds no document yet: the fix is to index it, as `ls` says (its `ls` hint failed).
  if (found === undefined) throw notIndexedYet(repo.name);
  if (!found.listed) throw folderOrNotIndexed(home, repo, path, { session, suggest });
  return { listed: found.listed, root: found.root };
}

/** A ref to no document: a folder of indexed documents is said to be one, with the commands that read and list it. */
function folderOrNotIndexed(home: string, repo: Repository, path: string, { session, suggest }: RefLookup): ResearcherError {
  const folder = path.replace(/\/+$/, "");
  // In a session of its own when the caller has none (`get`, `get --meta`): one rule for what is below a folder.
  const below = inSession(home, session, (within) => documentsBelow(repo, folder, within).length);
  if (below === 0) return notIndexed(`${repo.name}:${path}`, suggest === false ? [] : closePaths(repo, path), "", repo.name);
  const ref = shellWord(`${repo.name}:${folder}/`);
  return new ResearcherError(
    "DOCUMENT_NOT_FOUND",
    `${repo.name}:${path} is a folder of ${below === 1 ? "1 indexed document" : `${below} indexed documents`}, not a document`,
    {
      hint: `\`researcher multi-get ${ref}\` reads them, \`researcher ls ${ref}\` lists them`,
    },
  );
}

function listedInfo(repo: Repository, doc: ListedDocument): DocumentInfo {
  return {
    repository: repo.name,
    path: doc.path,
    docid: docidOf(doc.hash),
    title: doc.title,
    format: doc.format,
    metadata: doc.metadata,
    size: doc.size,
    modified: isoTime(doc.mtimeMs),
    fragments: doc.fragments,
    pages: doc.pages,
  };
}

function notIndexed(what: string, suggestions: string[], prefix: string, repository?: string): ResearcherError {
  const message = prefix ? `${prefix} ${what}` : `${what} is not an indexed document`;
  const hint = suggestions.length
    ? `did you mean ${suggestions.slice(0, 5).join(", ")}?`
    : `only indexed documents can be read; \`researcher ls${repository ? ` ${repository}` : ""}\` lists them, \`researcher status\` lists failures`;
  return new ResearcherError("DOCUMENT_NOT_FOUND", message, { hint });
}

/**
 * Indexed paths close to a missed one: the same file name elsewhere, or a few edits away (typos, case), or the note a
 * wiki link names (`Drip Irrigation`, `Daily/2026-11-20#Friday`: its name without extension, a `#heading` dropped).
 */
export function closePaths(repo: Repository, target: string): string[] {
  const paths = withStore(repo, (store) => [...store.documents().keys()]) ?? [];
  const name = basename(target).toLowerCase();
  // Its `#heading` is what follows the first `#` of the last segment (found, not matched: `/#[^/]*$/` rescanned each
  // `#` of a long run to the next `/`).
  const hash = target.indexOf("#", target.lastIndexOf("/") + 1);
  const linked = basename(hash < 0 ? target : target.slice(0, hash)).toLowerCase();
  const lowered = target.toLowerCase();
  const budget = Math.max(2, Math.floor(target.length / 4));
  return paths
    .map((path) => {
      const distance = editDistance(lowered, path.toLowerCase(), budget);
      const base = basename(path).toLowerCase();
      const sameName = base === name || base === linked || base.replace(/\.[^.]*$/, "") === linked;
      return { path, rank: sameName ? Math.min(distance, budget) - 0.5 : distance };
    })
    .filter((c) => c.rank <= budget)
    .sort((a, b) => a.rank - b.rank || (a.path < b.path ? -1 : 1))
    .slice(0, 5)
    .map((c) => `${repo.name}:${c.path}`);
}

/** Levenshtein distance, giving up (returning `limit + 1`) once it must exceed `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, current[j]!);
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** The latest and earliest times a Date can hold (±100,000,000 days), in ms from 1970. */
const DATE_LIMIT = 8.64e15;

/**
 * A file's mtime as ISO text, held within what a Date can write: a 64-bit file system (tmpfs, btrfs, ZFS) or a tar
 * archive may give a time past year 275,760, and one such file made its whole repository unlistable ("Invalid Date").
 */
function isoTime(ms: number): string {
  return new Date(Math.max(-DATE_LIMIT, Math.min(DATE_LIMIT, Number.isFinite(ms) ? ms : 0))).toISOString();
}

/**
 * The lines of pages `page` to `last` (the first one's marker line to the line before the marker after the last)
 * in a paged document's text.
 */
function pageLines(lines: string[], page: number, name: string, last = page): { from: number; count: number } {
  if (page < 1) throw badPage(page);
  const markers = lines.flatMap((line, i) => (PAGE_MARKER.test(line) ? [i] : []));
  if (markers.length === 0) throw noPages(name);
  const start = markers[page - 1];
  const missing = start === undefined ? page : last > markers.length ? last : undefined;
  if (missing !== undefined) {
    throw new ResearcherError("INVALID_INPUT", `${name} has no page ${missing} (${markers.length} pages)`, {
      hint: `read a page between p1 and p${markers.length}`,
    });
  }
  return { from: start! + 1, count: (markers[last] ?? lines.length) - start! };
}

const noPages = (name: string) =>
  new ResearcherError("INVALID_INPUT", `${name} has no pages`, {
    hint: `read it by line, e.g. \`researcher get ${shellWord(`${name}:1-40`)}\``,
  });

/**
 * The page or line range a ref names (`:p3`, `:20-40`, `:20:5`), if any. Only a document indexed with pages (a PDF,
 * a multi-page scan) has them: a note holding page-marker comments (`convert paper.pdf -o paper.md` writes them) is
 * cited by line, as search cites it, and its markers' numbers need not start at 1.
 */
function askedRange(ref: DocumentRef, lines: string[], paged: boolean): { from: number; count: number } | undefined {
  const name = `${ref.repo.name}:${ref.path}`;
  if (ref.page !== undefined && !paged) throw noPages(name);
  if (ref.page !== undefined) return pageLines(lines, ref.page, name, ref.lastPage);
  return ref.line !== undefined && ref.count !== undefined ? { from: ref.line, count: ref.count } : undefined;
}

/** A first line to read from inside the page or range a ref names; one outside it is an error that says where. */
function checkInside(ref: DocumentRef, range: { from: number; count: number }, from: number): void {
  const [first, last] = [range.from, range.from + range.count - 1];
  if (from >= first && from <= last) return;
  const name = `${ref.repo.name}:${ref.path}`;
  const pages = ref.lastPage === undefined ? `p${ref.page}` : `p${ref.page}-${ref.lastPage}`;
  const asked = ref.page !== undefined ? `${name}:${pages}` : `${name}:${first}-${last}`;
  throw new ResearcherError("INVALID_INPUT", `line ${from} is outside ${asked} (lines ${first}–${last})`, {
    hint: `read from a line between ${first} and ${last}, or read ${name}:${from} for the lines from there on`,
  });
}

function minimum(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/**
 * Read an indexed document, whole or a range of lines. Lines count as `get`, search locations and editors count
 * them: a final newline ends the last line rather than starting another.
 */
export async function readDocument(
  home: string,
  ref: string | DocumentRef,
  options: ReadOptions & { repository?: string } = {},
): Promise<DocumentText> {
  const resolved = typeof ref === "string" ? resolveDocumentRef(home, ref, options) : ref;
  const { repo, path } = resolved;
  const { listed: indexed, root } = indexedDocument(home, repo, path, options);
  const info = listedInfo(repo, indexed);
  const { text, hash } = await documentText(home, repo, path, root, options);
  const lines = text === "" ? [] : text.replace(/\r?\n$/, "").split(/\r?\n/);
  // A line number in a ref is the caller's to get right, as a flag's is: a usage error (exit 2), as `--from 0` is.
  for (const count of [resolved.count, options.maxLines]) {
    if (count !== undefined && (!Number.isInteger(count) || count < 1)) throw badCount(count);
  }
  // A page or a line range in the ref is what was asked for: a first line (reading on after a cut answer) and a line
  // count read inside it, never past it.
  const range = askedRange(resolved, lines, info.pages !== null);
  const from = options.fromLine ?? range?.from ?? resolved.line ?? 1;
  if (!Number.isInteger(from) || from < 1) throw badFirstLine(from);
  if (range) checkInside(resolved, range, from);
  const count = minimum(options.maxLines, range && range.from + range.count - from);
  if (from > Math.max(1, lines.length)) {
    const size = lines.length === 1 ? "1 line" : `${lines.length} lines`;
    // A line a search cited can be past the end because the file changed since: that is the fix to name.
    const hint =
      hash !== indexed.hash
        ? `it changed since it was indexed: \`researcher index ${repo.name}\` catches up`
        : `read from a line between 1 and ${lines.length}`;
    throw new ResearcherError("INVALID_INPUT", `line ${from} is past the end of ${repo.name}:${path} (${size})`, { hint });
  }
  const slice = lines.slice(from - 1, count === undefined ? undefined : from - 1 + count);
  const to = from + slice.length - 1;
  return {
    repository: repo.name,
    path,
    docid: info.docid,
    title: info.title,
    format: info.format,
    metadata: info.metadata,
    from,
    to,
    from_line: from,
    to_line: to,
    total_lines: lines.length,
    truncated: false, // all that was asked for: only a byte budget cuts an answer short (limitDocumentBytes)
    changed_since_index: hash !== indexed.hash,
    text: slice.join("\n"),
  };
}

/**
 * The document's lines, each after its own line number and a tab as `cat -n` prints them (`get --line-numbers`, MCP
 * `line_numbers`); no newline after the last. The numbers are as wide as the last one needs, 6 at least.
 */
export function withLineNumbers(doc: DocumentText): string {
  if (doc.text === "" && doc.to < doc.from) return "";
  const width = Math.max(6, String(doc.to).length);
  return doc.text
    .split("\n")
    .map((line, i) => `${String(doc.from + i).padStart(width)}\t${line}`)
    .join("\n");
}

/** What each line's number and tab add to its text in withLineNumbers (0 without numbers). */
function numberBytes(doc: DocumentText, lineNumbers: boolean): number {
  return lineNumbers ? Math.max(6, String(doc.to).length) + 1 : 0;
}

/** The document's text in UTF-8 bytes as it is sent: with its line numbers when they are asked for. */
function sentBytes(doc: DocumentText, lineNumbers: boolean): number {
  return Buffer.byteLength(doc.text) + Math.max(0, doc.to - doc.from + 1) * numberBytes(doc, lineNumbers);
}

/**
 * The document cut to at most `maxBytes` of UTF-8 text as it is sent (numbered by withLineNumbers when `lineNumbers`:
 * numbering after the cut sent 4.5 MiB under a 1 MiB cap, s23 review R4), at a line end where one fits (inside the
 * first line otherwise, never inside a character); `to` and `truncated` say where it stopped, so the next read starts
 * at `to + 1`. The text is returned unnumbered.
 */
export function limitDocumentBytes(doc: DocumentText, maxBytes: number, { lineNumbers = false } = {}): DocumentText {
  if (sentBytes(doc, lineNumbers) <= maxBytes) return doc;
  // The width of the uncut text's last number: a cut can only make it narrower, so the answer stays within budget.
  const perLine = numberBytes(doc, lineNumbers);
  const lines = doc.text.split("\n");
  const cost = (i: number) => Buffer.byteLength(lines[i]!) + perLine + (i ? 1 : 0);
  let used = 0;
  let kept = 0;
  while (kept < lines.length && used + cost(kept) <= maxBytes) {
    used += cost(kept);
    kept++;
  }
  if (kept === 0) {
    const bytes = Buffer.from(lines[0]!).subarray(0, Math.max(0, maxBytes - perLine));
    const cut = new TextDecoder().decode(bytes).replace(/\uFFFD$/, "");
    // At least one whole character, past the budget if it must be: an empty answer would continue where it began.
    const text = cut || String.fromCodePoint(lines[0]!.codePointAt(0)!);
    return { ...doc, to: doc.from, to_line: doc.from, truncated: true, text };
  }
  const to = doc.from + kept - 1;
  return { ...doc, to, to_line: to, truncated: true, text: lines.slice(0, kept).join("\n") };
}

/**
 * Every indexed document of the named repositories (all when none), optionally under a path prefix, and the
 * repositories a listing of all of them left out because their index cannot be read.
 */
export function listDocuments(home: string, options: ListingOptions = {}): Listing {
  const { repos, prefix } = listing(home, options);
  const named = Boolean(options.repositories?.length);
  const { answers, skipped } = settle(
    repos.map((repo) =>
      attempt(repo, (r) => {
        // A repository never indexed is an error when named (as search --repo and status are); a listing of all of
        // them says why it is left out.
        if (!Store.exists(r.dir)) throw notIndexedYet(r.name);
        return withStore(r, (store) => store.documentListing()) ?? [];
      }),
    ),
    named,
  );
  const wanted = composed(prefix); // names from a Mac are stored decomposed, and typed composed
  const documents = answers.flatMap(({ repo, value }) =>
    value.filter((doc) => composed(doc.path).startsWith(wanted)).map((doc) => listedInfo(repo, doc)),
  );
  // A prefix that starts no path is often the inside of one (`ch04` for `src/ch04-…`): the paths that contain it.
  const lowered = prefix.toLowerCase();
  const containing =
    documents.length || !prefix
      ? []
      : answers.flatMap(({ repo, value }) =>
          value.filter((doc) => doc.path.toLowerCase().includes(lowered)).map((doc) => `${repo.name}:${doc.path}`),
        );
  // A prefix that begins with a repository's name (`py/json`) names a folder `py` inside one: the listing it meant.
  const names = () => new Set(listRepositories(home).map((repo) => repo.name));
  const meant = documents.length ? undefined : leadingRepository(prefix, names(), { colon: false });
  return { documents, skipped, containing, ...(meant ? { meant: { repository: meant.repository, prefix: meant.inside } } : {}) };
}

export interface Listing {
  documents: DocumentInfo[];
  skipped: SkippedRepository[];
  /** When nothing is listed: the paths that hold the prefix (`ch04` for `src/ch04-…`). */
  containing: string[];
  /** When nothing is listed and the prefix begins with a repository's name (`py/json`): that repository and the prefix inside it. */
  meant?: { repository: string; prefix: string };
}

/** The files that failed to index (as the last runs recorded them) where `listDocuments` lists documents. */
export function listFailures(home: string, options: ListingOptions = {}): SkippedDocument[] {
  const { repos, prefix } = listing(home, options);
  const { answers } = settle(
    repos.map((repo) => attempt(repo, (r) => withStore(r, (store) => store.failures()) ?? [])),
    Boolean(options.repositories?.length),
  );
  return answers.flatMap(({ repo, value }) =>
    value.filter((failure) => failure.path.startsWith(prefix)).map((failure) => ({ repository: repo.name, ...failure })),
  );
}

export interface ListingOptions {
  /** These repositories (all when none). */
  repositories?: string[];
  /** Only paths under this prefix. */
  prefix?: string;
}

function listing(home: string, options: ListingOptions): { repos: Repository[]; prefix: string } {
  const repos = selectRepositories(home, options.repositories);
  return { repos, prefix: options.prefix?.replace(/^\.?\//, "") ?? "" };
}

/**
 * A document's text as its line numbers count, read as its file is now: the file itself for markdown and text
 * (front matter included), the converted markdown for every other format; and the hash of those bytes (the
 * index's hash, if the file is unchanged).
 */
async function documentText(
  home: string,
  repo: Repository,
  path: string,
  root: RootRecord | undefined,
  { conversions, signal, session }: Pick<ReadOptions, "conversions" | "signal" | "session">,
): Promise<{ text: string; hash: string }> {
  const config = session?.config ?? loadConfig(home);
  // The read is confined to the folder this check accepted: one replaced by a link just after it reads nothing.
  const now = rootRecord(repo.path);
  const moved = movedRoot(repo.path, root, now);
  if (moved !== undefined) {
    throw new ResearcherError("FILE_UNREADABLE", `${repo.name}:${path}: the repository folder ${repo.path} now resolves to ${moved}`, {
      hint: movedRootHint(repo.name, moved),
    });
  }
  const read = readConfinedFile(repo.path, path, config.index.max_file_bytes, now?.real);
  const hint = `if the file changed since it was indexed, \`researcher index ${repo.name}\` brings the index up to date`;
  if ("reason" in read) {
    // A FIFO or a device where the document was: no index run takes that in (it keeps the document).
    const gone = `put the document back, or drop it from the index with \`researcher remove ${repo.name} ${shellWord(path)}\``;
    throw new ResearcherError("FILE_UNREADABLE", `${repo.name}:${path}: ${read.reason}`, {
      hint: read.special ? gone : hint,
    });
  }
  const hash = sha256(read.bytes);
  try {
    if (TEXT_FORMATS.has(formatOf(path))) return { text: decodeText(read.bytes), hash };
    const limits = conversionLimits(config, repo.ocr);
    const key = ConversionCache.key(join(repo.path, path), read.bytes, limits.convert);
    const kept = conversions?.get(key) ?? keptText(repo, path, hash, conversionSettings(config, repo), session);
    if (kept !== undefined) return { text: kept, hash };
    const convert = async (stop?: AbortSignal) => (await convertOnce(path, read.bytes, limits, stop)).text;
    return { text: await (conversions ? conversions.convert(key, convert, signal) : convert(signal)), hash };
  } catch (error) {
    // The conversion's own code stays (a time limit is CONVERSION_STOPPED: try again; HTTP 503); a converter's
    // refusal or a bug says the file cannot be read as it is now.
    const failure = toResearcherError(error);
    const code = failure.code === "INTERNAL" ? "FILE_UNREADABLE" : failure.code;
    throw new ResearcherError(code, `${repo.name}:${path}: ${failure.code === "INTERNAL" ? describeError(error) : failure.message}`, {
      hint: failure.hint ?? hint,
      cause: error,
    });
  }
}

/**
 * The converted text the index kept for these very bytes under these settings (OCR'd documents), if any. A shortcut
 * only: an index that cannot be read now (busy, damaged) leaves the file to be converted.
 */
function keptText(repo: Repository, path: string, hash: string, settings: string, session?: ReadSession): string | undefined {
  try {
    const kept = withStore(repo, (store) => store.convertedText(path), session);
    return kept && kept.settings === settings && kept.hash === hash ? kept.text : undefined;
  } catch {
    return undefined;
  }
}

export interface SkippedDocument {
  /** The repository, or "" when a ref named none that could be found. */
  repository: string;
  /** The path, or the ref as given when it resolved to nothing. */
  path: string;
  reason: string;
}

export interface MultiGetResult {
  documents: DocumentText[];
  /**
   * Matches left out, each with why: too large, unreadable, not indexed, over the answer's budget; the first
   * MAX_SKIPPED_LISTED of them.
   */
  skipped: SkippedDocument[];
  /** How many matches were left out in all: more than `skipped` lists when a broad pattern matched many. */
  skipped_total: number;
}

/**
 * The most skipped documents a multi-get answer lists one by one: a glob over 200,000 notes with `max_bytes` 1000
 * answered 51 MB of "skipped" lines (s19 hostile #2). The rest are counted.
 */
export const MAX_SKIPPED_LISTED = 100;

export interface MultiGetOptions {
  /** Only this repository. */
  repository?: string;
  /** A document whose text is larger than this is listed in `skipped`, not read back. */
  maxBytesPerDocument?: number;
  /**
   * All documents' text together stays under this: from the first document that does not fit, it and the rest are
   * listed in `skipped`, unread (reading on only to skip would convert every PDF of a large glob), but for text files
   * whose indexed size fits what is left.
   */
  maxBytes?: number;
  /** The text is sent numbered (withLineNumbers): both limits count the numbers. */
  lineNumbers?: boolean;
  /** As for readDocument. */
  conversions?: ConversionCache;
  /** As for readDocument; no document is read once it is aborted. */
  signal?: AbortSignal;
}

const MULTI_GET_HINT = "a glob (`notes:meetings/*.md`, `*.pdf`), a folder (`notes:meetings/`) or a comma-separated list of refs";

/**
 * What a multi-get pattern names: a glob over indexed paths, by the rule `--filter` uses (`*.md` at any depth,
 * `notes/**`, or `repo:docs/*` to match in one repository), or a comma-separated list of refs, globs and folders. A
 * part that names nothing (alone or in a list) is a skipped entry, not a failure. Within `session` (one is opened otherwise),
 * whose listings every part shares.
 */
export function matchDocuments(home: string, pattern: string, options: { repository?: string; session?: ReadSession } = {}): Matched {
  return inSession(home, options.session, (session) => matchIn(home, pattern, { repository: options.repository, session }));
}

type Matched = { refs: DocumentRef[]; skipped: SkippedDocument[] };

/** matchDocuments within a session: every part looks paths up in the same listing of each repository. */
function matchIn(home: string, pattern: string, scope: PartScope): Matched {
  const empty = () => new ResearcherError("USAGE", "an empty pattern of documents", { hint: MULTI_GET_HINT });
  // An empty pattern (`multi-get "$REFS"` with REFS unset) names nothing, as an empty ref does for `get`.
  if (!pattern.trim()) throw empty();
  // A name holding a comma (`Smith, John - CV.pdf`) is one document, not a list of two that name others.
  const whole = pattern.includes(",") ? resolvedPart(home, pattern, scope) : undefined;
  if (whole && "ref" in whole) return { refs: [whole.ref], skipped: [] };
  const parts = listParts(pattern);
  // `,` (two unset variables) names nothing either: it was an empty match, `''` a usage error (s22 review F10).
  if (parts.length === 0) throw empty();
  // One part, with the commas and blanks around it gone (`a,` read every document: s21 retest R1).
  if (parts.length === 1) return matchPart(home, parts[0]!, scope, true);
  // A list: each part a ref, a glob or a folder (a ref whose name holds glob syntax, `report [v2].md`, made the
  // whole list one glob that matched nothing); a part that names nothing is skipped, saying so.
  const matched = parts.map((part) => matchPart(home, part, scope, false));
  return { refs: matched.flatMap((m) => m.refs), skipped: matched.flatMap((m) => m.skipped) };
}

/** Where a pattern's parts are looked for: one repository or all, on the indexes and listings of one call. */
interface PartScope {
  repository?: string;
  session: ReadSession;
}

/**
 * One part of a pattern: a glob or folder (matched), else a ref, else a name that is no document but a folder of
 * them is that folder. A part that names nothing, or cannot be matched (a glob in a repository never indexed, or none
 * of that name), is a skipped entry, alone as in a list; but a glob alone (`single`) is never read as a ref, and one
 * that matches nothing is an empty match.
 */
function matchPart(home: string, part: string, scope: PartScope, single: boolean): Matched {
  const globbed = isGlob(part) || part.endsWith("/");
  // A folder (`repo:src/`) is all below it, as in a glob. In a list, a search result's ref whose name holds glob
  // syntax (`odd:report [v2].md:1-1`) is that ref.
  const resolved = single && globbed ? undefined : resolvedPart(home, part, scope);
  if (resolved && "ref" in resolved) return { refs: [resolved.ref], skipped: [] };
  const skip = (reason: string): Matched => ({ refs: [], skipped: [{ repository: "", path: part, reason }] });
  if (globbed) {
    let found: Matched;
    try {
      found = matchGlob(home, part, scope);
    } catch (error) {
      // A glob's error is its skipped entry, as a ref's is: a glob part's failed the whole list (s22 review F10), and
      // a glob alone the command, where a ref alone in the same repository was listed (s23 C2).
      return skip(partReason(error));
    }
    if (found.refs.length > 0 || found.skipped.length > 0 || single) return found;
    return skip("no indexed document matches it");
  }
  // A folder's name without its slash is that folder, in a list as alone (s21 retest R2).
  return folderOf(home, part, scope) ?? skip(partReason((resolved as { error: unknown }).error));
}

/**
 * Why a part names nothing, as its skipped entry says: its error's message, and for a repository never indexed the
 * run that indexes it (the fix is the repository's, as a skipped repository's reason gives its hint).
 */
function partReason(error: unknown): string {
  const hint = isResearcherError(error) && error.code === "NOT_INDEXED" ? error.hint : undefined;
  return `${describeError(error)}${hint ? ` (hint: ${hint})` : ""}`;
}

/**
 * A pattern named no document: none was given (`given`: read, or matched for paths alone) and every entry left out is a part that named none
 * (`repository` ""), not a document too large, unread or in an index that cannot be read. All of them are known only
 * when all are listed (`total`): the parts come first, the documents after.
 */
export function namedNothing(given: number, skipped: SkippedDocument[], total = skipped.length): boolean {
  return given === 0 && total === skipped.length && skipped.every((s) => s.repository === "");
}

/**
 * The indexed document `text` reads as a ref, or why it reads none. Its close paths are not looked for: a part's
 * miss is given by its message alone (a skipped entry, or another reading of the part).
 */
function resolvedPart(home: string, text: string, scope: PartScope): { ref: DocumentRef } | { error: unknown } {
  const lookup: RefLookup = { ...scope, suggest: false };
  try {
    const ref = resolveDocumentRef(home, text, lookup);
    documentInfo(home, ref, lookup);
    return { ref };
  } catch (error) {
    return { error };
  }
}

/**
 * The indexed documents a glob matches, by the rule `--filter` uses; `repo:glob` matches in one repository. A folder
 * (`notes/`, or `**\/notes/`: that name at any depth) is looked up in the session's index of folders, not matched
 * against every path: each part of a list of folders matched them all (s22 review F4).
 */
function matchGlob(home: string, pattern: string, { repository, session }: PartScope): Matched {
  let repos = repository ? [getRepository(home, repository)] : listRepositories(home);
  const colon = pattern.indexOf(":");
  const prefix = colon > 0 ? pattern.slice(0, colon) : "";
  const named = prefix ? repos.find((r) => r.name === prefix) : undefined;
  if (named) repos = [named];
  const inRepository = named ? pattern.slice(colon + 1) : pattern;
  const matches = pathGlob(inRepository);
  const select: Selection = folderSelection(inRepository) ?? ((paths) => paths.filter(matches));
  // A repository named and never indexed is said to be, as `ls` says it; unnamed, it holds nothing yet.
  if (named && !Store.exists(named.dir)) throw notIndexedYet(named.name);
  const { answers, skipped } = readable(repos, (repo) => [...(session.documents(repo)?.keys() ?? [])]);
  const refs = answers.flatMap(({ repo, value }) => [...select(value, repo, session)].sort().map((path) => ({ repo, path })));
  // Nothing matched and the part before the colon reads as a repository's name, misspelt (two edits at most) or
  // where no indexed name has a colon after a part of its shape (what a glob over such paths means: `2025:01/*`
  // beside `2024:01/`): an error, as in a ref, rather than an empty match (a script's typo went unnoticed). Any
  // colon anywhere made `nosuch:*` an empty match (s17 review #9).
  const shape = (text: string) => text.replace(/\p{N}/gu, "0").replace(/\p{L}/gu, "a");
  const alike = (path: string) => path.split("/").some((name) => name.includes(":") && shape(name.split(":")[0]!) === shape(prefix));
  const misnamed = () => !answers.some(({ value }) => value.some(alike)) || repos.some((r) => editDistance(prefix, r.name, 3) <= 2);
  if (refs.length === 0 && !named && REPO_NAME.test(prefix) && misnamed()) getRepository(home, prefix);
  const reason = (s: SkippedRepository) => `its index cannot be read: ${s.message}${s.hint ? ` (hint: ${s.hint})` : ""}`;
  return { refs, skipped: skipped.map((s) => ({ repository: s.repository, path: pattern, reason: reason(s) })) };
}

type Selection = (paths: string[], repo: Repository, session: ReadSession) => readonly string[];

/**
 * A pattern that names a folder, as what selects its paths from the folder index: `a/b/` (pathGlob's `a/b/**`: below
 * that folder) or `**\/b/` (below a folder named b at any depth); undefined for any other pattern, which is matched.
 */
function folderSelection(pattern: string): Selection | undefined {
  const anyDepth = /^\*\*\/([^/]+)\/$/.exec(pattern)?.[1];
  if (anyDepth !== undefined && !isGlob(anyDepth)) return (_, repo, session) => session.folders(repo).byName.get(composed(anyDepth)) ?? [];
  const lookup = lookupOf(composed(pattern));
  if (!lookup?.folder) return undefined;
  return (_, repo, session) => session.folders(repo).byPath.get(lookup.subject) ?? [];
}

/**
 * One name that is no document but a folder of them (`notes:journal`) is that folder, as in --filter: a name without
 * a slash is every folder of that name, at any depth; one with a slash is the folder at that path.
 */
function folderOf(home: string, ref: string, scope: PartScope): Matched | undefined {
  const colon = ref.indexOf(":");
  const [prefix, path] = colon > 0 && REPO_NAME.test(ref.slice(0, colon)) ? [ref.slice(0, colon + 1), ref.slice(colon + 1)] : ["", ref];
  // An empty name (`notes:$DIR` with DIR unset) names no folder: its glob `**//` reads as `**/**`, every document
  // (s23 review R2). The root is `notes:/` or `notes:**`, which say so.
  if (path === "") return undefined;
  try {
    // A glob of its own, never a list: a name with a comma (`a,`) split into parts, one of them the root (`/`).
    const folder = matchGlob(home, path.includes("/") ? `${ref}/` : `${prefix}**/${path}/`, scope);
    return folder.refs.length > 0 ? folder : undefined;
  } catch {
    return undefined; // the name's own error is the one to give
  }
}

/**
 * Indexed documents named by a glob or a list of refs, read whole (or the lines a ref names). One document that
 * cannot be read, or is too large, is its own skipped entry; the rest are still read.
 */
export async function readDocuments(home: string, pattern: string, options: MultiGetOptions = {}): Promise<MultiGetResult> {
  const session = new ReadSession(home);
  try {
    return await readMatched(home, pattern, options, session);
  } finally {
    session.close();
  }
}

async function readMatched(home: string, pattern: string, options: MultiGetOptions, session: ReadSession): Promise<MultiGetResult> {
  const { refs, skipped } = matchDocuments(home, pattern, { repository: options.repository, session });
  const perDocument = options.maxBytesPerDocument ?? Infinity;
  const budget = options.maxBytes ?? Infinity;
  let used = 0;
  // Once a document did not fit, the rest that must be converted are not read (converting them all, 184 PDFs for an
  // answer of 2,000 bytes, took a minute), and each says so rather than claiming to be too large itself. Text files
  // that fit are still given (one large file sorted first left an answer empty).
  let stoppedAt: string | undefined;
  // By index folder, in the session: each ref of a list comes with a Repository of its own (a map per ref took 17 ms
  // in 20,000 notes).
  const indexedSize = ({ repo, path }: DocumentRef) => session.documents(repo)?.get(path)?.size ?? Number.POSITIVE_INFINITY;
  // A text file's text is its bytes, give or take line ends and a legacy encoding: one larger than what is left is
  // not read (20,000 notes were read whole after the answer was full, 1 s → 18 s). Some lines of one (`a.md:10:5`)
  // are read, and judged by what they hold.
  const fits = (ref: DocumentRef) => TEXT_FORMATS.has(formatOf(ref.path)) && (ref.line !== undefined || indexedSize(ref) <= budget - used);
  const documents: DocumentText[] = [];
  for (const ref of refs) {
    const entry = { repository: ref.repo.name, path: ref.path };
    if (stoppedAt !== undefined && !fits(ref)) {
      skipped.push({ ...entry, reason: `not read: the answer stopped at ${stoppedAt}, which did not fit max_bytes (${budget} bytes)` });
      continue;
    }
    let doc: DocumentText;
    if (options.signal?.aborted) throw cancelled();
    try {
      doc = await readDocument(home, ref, { conversions: options.conversions, signal: options.signal, session });
    } catch (error) {
      skipped.push({ ...entry, reason: describeError(error) });
      continue;
    }
    const bytes = sentBytes(doc, options.lineNumbers ?? false);
    if (bytes > perDocument) {
      skipped.push({ ...entry, reason: `larger than max_bytes per document (${bytes} > ${perDocument} bytes)` });
    } else if (used + bytes > budget) {
      skipped.push({
        ...entry,
        reason: `${bytes} bytes, more than the ${budget - used} left of max_bytes for the answer (${budget} bytes)`,
      });
      stoppedAt ??= `${ref.repo.name}:${ref.path}`;
    } else {
      used += bytes;
      documents.push(doc);
    }
  }
  return { documents, skipped: skipped.slice(0, MAX_SKIPPED_LISTED), skipped_total: skipped.length };
}
