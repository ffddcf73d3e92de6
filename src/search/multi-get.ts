/**
 * Several indexed documents read back by one pattern (multi-get): a glob over indexed paths, a folder, or a list of
 * refs, globs and folders; what cannot be read, or names nothing, is listed with its reason, up to a budget of text.
 */
import { REPO_NAME } from "../config.ts";
import { formatOf, TEXT_FORMATS } from "../convert/convert.ts";
import { cancelled, describeError, isResearcherError, notIndexedYet, ResearcherError } from "../errors.ts";
import { isGlob, listPartsAsWritten, lookupOf, pathGlob } from "../path-glob.ts";
import { getRepository, listRepositories, type Repository, type SkippedRepository } from "../repos.ts";
import { Store } from "../store/store.ts";
import { composed } from "../text.ts";
import { editDistance } from "../similar.ts";
import type { ConversionCache } from "./conversions.ts";
import {
  absoluteInRepository,
  type DocumentRef,
  DocumentMissed,
  readable,
  type RefLookup,
  refText,
  repositoryPrefix,
  resolveDocumentRef,
} from "./document-refs.ts";
import { documentInfo, type DocumentText, readDocument, readRef, type SkippedDocument, sentBytes } from "./read-document.ts";
import { shellWord } from "../terminal.ts";
import { inSession, ReadSession } from "./read-session.ts";

export interface MultiGetResult {
  documents: DocumentText[];
  /**
   * Matches left out, each with why: too large, unreadable, not indexed, over the answer's budget; the first
   * MAX_SKIPPED_LISTED of them.
   */
  skipped: SkippedDocument[];
  /** How many matches were left out in all: more than `skipped` lists when a broad pattern matched many. */
  skipped_total: number;
  /**
   * Only when a repository it looked in has not been indexed whole yet (its first run under way or cut short): what
   * it read of it is what is indexed so far (ReadSession.unfinished).
   */
  warnings?: SkippedRepository[];
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
 * part that names nothing (alone or in a list) is a skipped entry, not a failure. Within `session` (one is opened
 * otherwise), whose listings every part shares.
 */
export function matchDocuments(
  home: string,
  pattern: string,
  options: { repository?: string; session?: ReadSession } = {},
): Matched & { warnings: SkippedRepository[] } {
  // The repository asked for is the call's, not a part's: an unknown or empty name is the error to give first, as a
  // search's is, not a skipped entry for each part (an empty one read every repository: s29 agent P1).
  if (options.repository !== undefined) getRepository(home, options.repository);
  return inSession(home, options.session, (session) => ({
    ...matchIn(home, pattern, { repository: options.repository, session, nearLeft: { count: NEAR_MISSES } }),
    warnings: session.unfinished(),
  }));
}

/**
 * What a pattern matched, and, when it named its repository, that repository if its index failed to open; a part
 * skipped for what it names failing (definiteFailure), that error.
 */
type Matched = { refs: DocumentRef[]; skipped: SkippedDocument[]; unreadable?: SkippedRepository[]; failure?: ResearcherError };

/** matchDocuments within a session: every part looks paths up in the same listing of each repository. */
function matchIn(home: string, pattern: string, scope: PartScope): Matched {
  const empty = () => new ResearcherError("USAGE", "an empty pattern of documents", { hint: MULTI_GET_HINT });
  // An empty pattern (`multi-get "$REFS"` with REFS unset) names nothing, as an empty ref does for `get`.
  if (!pattern.trim()) throw empty();
  // A name holding a comma (`Smith, John - CV.pdf`) is one document, not a list of two that name others: every
  // document of that name, or the one its ref names.
  if (pattern.includes(",")) {
    const named = byName(home, pattern.trim(), scope);
    if (named) return named;
    const whole = resolvedPart(home, pattern, scope);
    if ("ref" in whole) return { refs: [whole.ref], skipped: [] };
  }
  const written = listPartsAsWritten(pattern);
  const parts = written.map((part) => part.trim()).filter(Boolean);
  // `,` (two unset variables) names nothing either: it was an empty match, `''` a usage error (s22 review F10).
  if (parts.length === 0) throw empty();
  // One part, with the commas and blanks around it gone (`a,` read every document: s21 retest R1).
  if (parts.length === 1) return matchPart(home, parts[0]!, scope, true);
  // A list: each part a ref, a glob or a folder (a ref whose name holds glob syntax, `report [v2].md`, made the
  // whole list one glob that matched nothing); a part that names nothing is skipped, saying so.
  const matched: Matched[] = [];
  for (let i = 0; i < written.length; i++) {
    const part = written[i]!.trim();
    if (!part) continue;
    const resolved = resolvedPart(home, part, scope); // once: matchPart and rejoined take it as it is
    const cut = "ref" in resolved ? undefined : rejoined(home, written, i, scope);
    if (cut) i = cut.last;
    matched.push(cut ? { refs: [cut.ref], skipped: [] } : matchPart(home, part, scope, false, resolved));
  }
  // Every part failing on what it names: the command's error (the first part's), as a pattern of one such part is (it
  // exited 0, "no indexed documents match", where `get` and `ls` failed: s30 hostile F6, s30b N3).
  const failure = matched.every((m) => m.failure) ? matched[0]?.failure : undefined;
  if (failure) throw failure;
  return { refs: matched.flatMap((m) => m.refs), skipped: matched.flatMap((m) => m.skipped) };
}

/** The most commas a name in a list is looked for with (`Smith, John, Jr., CV.pdf` has three). */
const MAX_COMMAS_IN_A_NAME = 8;

/**
 * The indexed document that the list's parts from `first` on name when joined again, if the comma after `first` cut
 * its name (`rustbook:a,b.md:3-4` is `rustbook:a` and `b.md:3-4`, which read `b.md` of another repository: s24 agent
 * A10), and the last part it takes. Only a part that is no document itself is joined to the ones after it (the
 * caller's to know).
 */
function rejoined(home: string, written: string[], first: number, scope: PartScope): { ref: DocumentRef; last: number } | undefined {
  const end = Math.min(written.length - 1, first + MAX_COMMAS_IN_A_NAME);
  for (let last = first + 1; last <= end; last++) {
    const joined = resolvedPart(
      home,
      written
        .slice(first, last + 1)
        .join(",")
        .trim(),
      scope,
    );
    if ("ref" in joined) return { ref: joined.ref, last };
  }
  return undefined;
}

/**
 * Where a pattern's parts are looked for: one repository or all, on the indexes and listings of one call; and how
 * many more of its missed parts are given close paths.
 */
interface PartScope {
  repository?: string;
  session: ReadSession;
  nearLeft: { count: number };
}

/** The missed parts of one pattern given close paths at most: each compares itself with every indexed path. */
const NEAR_MISSES = 5;

/**
 * One part of a pattern: a name alone, the documents of that name (byName); a glob or folder (matched), else a ref,
 * else a name that is no document but a folder of them is that folder. A part that names nothing, or cannot be matched
 * (a glob in a repository never indexed, or none of that name), is a skipped entry, alone as in a list; but a glob
 * alone (`single`) is never read as a ref, and one that matches nothing is an empty match.
 */
function matchPart(home: string, part: string, scope: PartScope, single: boolean, known?: ReturnType<typeof resolvedPart>): Matched {
  const named = byName(home, part, scope);
  if (named) return named;
  const globbed = isGlob(part) || part.endsWith("/");
  // A folder (`repo:src/`) is all below it, as in a glob. In a list, a search result's ref whose name holds glob
  // syntax (`odd:report [v2].md:1-1`) is that ref (`known`: resolved already).
  const resolved = known ?? (single && globbed ? undefined : resolvedPart(home, part, scope));
  if (resolved && "ref" in resolved) return { refs: [resolved.ref], skipped: [] };
  const skip = (reason: string): Matched => ({ refs: [], skipped: [{ repository: "", path: part, reason }] });
  // A part's error is its skipped entry, but the failure of a repository's index, or of what the part names, fails a
  // pattern of that part alone, as `get` and `ls` fail.
  const skipFor = (error: unknown): Matched => {
    const failure = definiteFailure(error);
    if (single && isResearcherError(error) && (INDEX_FAILURES.has(error.code) || failure)) throw error;
    return { ...skip(partReason(error)), failure };
  };
  let absolute: { pattern: string; folder: boolean } | undefined;
  try {
    absolute = anchoredInRepository(home, part, globbed);
  } catch (error) {
    return skipFor(error); // inside two repositories' folders: which one is for the part to say
  }
  if (globbed || absolute?.folder === false) {
    let found: Matched;
    try {
      found = matchGlob(home, absolute?.pattern ?? part, scope);
    } catch (error) {
      // A glob's error is its skipped entry, as a ref's is: a glob part's failed the whole list (s22 review F10), and
      // a glob alone the command, where a ref alone in the same repository was listed (s23 C2).
      return skipFor(error);
    }
    if (found.refs.length > 0 || found.skipped.length > 0) return single ? failIfUnreadable(found) : found;
    return single ? found : skip("no indexed document matches it");
  }
  // A folder's name without its slash is that folder, in a list as alone (s21 retest R2); an absolute one too.
  return folderOf(home, absolute?.pattern ?? part, scope) ?? skipFor(missed(home, part, (resolved as { error: unknown }).error, scope));
}

/**
 * An absolute path inside one repository's folder that is no document as that repository's path anchored at its root
 * (`notes:/book/*.md`): a glob or a folder with its slash as a glob (`folder` false), the repository's folder itself
 * as all of it, any other path as what may be a folder (folderOf). A ref to a document was read already
 * (resolveAnywhere).
 */
function anchoredInRepository(home: string, part: string, globbed: boolean): { pattern: string; folder: boolean } | undefined {
  const absolute = absoluteInRepository(home, part);
  if (!absolute) return undefined;
  return { pattern: `${absolute.repository}:/${absolute.inside}`, folder: !globbed && absolute.inside !== "" };
}

/**
 * Why a part that is no glob names no document, said as `get` says it: a repository's name is not its documents
 * (`notes:*` is), and a part close to indexed paths names them, for the first few misses of a pattern (s28b hostile
 * F6).
 */
function missed(home: string, part: string, error: unknown, scope: PartScope): unknown {
  if (!isResearcherError(error) || error.code !== "DOCUMENT_NOT_FOUND") return error;
  if (listRepositories(home).some((repo) => repo.name === part)) {
    return new ResearcherError("DOCUMENT_NOT_FOUND", `${error.message} (${part} is a repository: ${part}:* names its documents)`);
  }
  if (scope.nearLeft.count <= 0) return error;
  scope.nearLeft.count--;
  const again = resolvedPart(home, part, scope, true);
  return "error" in again ? again.error : error;
}

/**
 * A name alone (no glob syntax, slash, repository, line or page: `ideas.md`) is every document of that base name, at
 * any depth in every repository (or the one asked for), as a pattern without a slash is and `--filter ideas.md` reads
 * it. Read as a ref, it was the one at a repository's root, the others dropped unsaid, and at two roots an error that
 * read neither (s28 agent 3). Undefined for any other part, and for a name no document has: read on as a ref (whose
 * error it gives) or a folder's name.
 */
function byName(home: string, part: string, scope: PartScope): Matched | undefined {
  if (isGlob(part) || /[/:]/.test(part) || part.startsWith("#") || /^\.*$/.test(part)) return undefined;
  try {
    const named = matchGlob(home, part, scope);
    return named.refs.length > 0 ? named : undefined;
  } catch {
    return undefined; // a repository asked for that does not exist: the ref's error says so
  }
}

/**
 * Errors of a repository's index rather than of the part (a damaged, outdated or forbidden index): a pattern of one
 * part fails with them, as `get` and `ls` do; listed as skipped, they hid the INDEX_CORRUPT a script alerts on
 * (s23 retest N2). A part that names nothing (no such repository or document, never indexed) is its skipped entry.
 */
const INDEX_FAILURES = new Set(["INDEX_CORRUPT", "INDEX_OUTDATED", "PERMISSION_DENIED", "TOO_MANY_OPEN_FILES"]);

/**
 * A part's error that says what it names fails, not that it matches nothing: a repository that does not exist, a file
 * the index holds none of for a reason it gives (the last run failed it). Skipped in a list that reads something; a
 * part alone, or every part of a list, fails the command with it, as `get` and `ls` do. A document that is not there,
 * or a glob that matches none, is an empty match.
 */
function definiteFailure(error: unknown): ResearcherError | undefined {
  if (error instanceof DocumentMissed) return error.known ? error : undefined;
  return isResearcherError(error) && error.code === "REPO_NOT_FOUND" ? error : undefined;
}

function failIfUnreadable(found: Matched): Matched {
  const failed = found.refs.length === 0 ? found.unreadable?.find((s) => INDEX_FAILURES.has(s.code)) : undefined;
  if (failed) throw new ResearcherError(failed.code, failed.message, { hint: failed.hint ?? undefined });
  return found;
}

/**
 * Why a part names nothing, as its skipped entry says: its error's message, and for a repository never indexed the
 * run that indexes it (the fix is the repository's, as a skipped repository's reason gives its hint).
 */
function partReason(error: unknown): string {
  const hint = isResearcherError(error) && error.code === "NOT_INDEXED" ? error.hint : undefined;
  const near = error instanceof DocumentMissed && error.near.length ? ` (did you mean ${error.near.slice(0, 5).join(", ")}?)` : "";
  return `${describeError(error)}${hint ? ` (hint: ${hint})` : ""}${near}`;
}

/**
 * A pattern named no document: none was given (`given`: read, or matched for paths alone) and every entry left out is a
 * part that named none (`repository` ""), not a document too large, unread or in an index that cannot be read. All of
 * them are known only when all are listed (`total`): the parts come first, the documents after.
 */
export function namedNothing(given: number, skipped: SkippedDocument[], total = skipped.length): boolean {
  return given === 0 && total === skipped.length && skipped.every((s) => s.repository === "");
}

/**
 * The indexed document `text` reads as a ref, or why it reads none. Its close paths are looked for only when
 * `suggest`: a part may be read as something else yet (a name, a folder, a ref a comma cut), and most are not misses.
 */
function resolvedPart(home: string, text: string, scope: PartScope, suggest = false): { ref: DocumentRef } | { error: unknown } {
  const lookup: RefLookup = { repository: scope.repository, session: scope.session, suggest };
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
  let repos = repository !== undefined ? [getRepository(home, repository)] : listRepositories(home);
  const prefix = repositoryPrefix(pattern);
  const named = prefix.name ? repos.find((r) => r.name === prefix.name) : undefined;
  if (named) repos = [named];
  const inRepository = named ? prefix.inside : pattern;
  const matches = pathGlob(inRepository);
  const select: Selection = folderSelection(inRepository) ?? nameSelection(inRepository) ?? ((paths) => paths.filter(matches));
  // A repository named and never indexed is said to be, as `ls` says it; unnamed, it holds nothing yet.
  if (named && !Store.exists(named.dir)) throw notIndexedYet(named.name);
  const { answers, skipped } = readable(repos, (repo) => [...(session.documents(repo)?.keys() ?? [])]);
  const refs = answers.flatMap(({ repo, value }) => [...select(value, repo, session)].sort().map((path) => ({ repo, path })));
  // Nothing matched and the part before the colon reads as a repository's name, misspelt (two edits at most) or
  // where no indexed name has a colon after a part of its shape (what a glob over such paths means: `2025:01/*`
  // beside `2024:01/`): an error, as in a ref, rather than an empty match (a script's typo went unnoticed). Any
  // colon anywhere made `nosuch:*` an empty match (s17 review #9).
  const shape = (text: string) => text.replace(/\p{N}/gu, "0").replace(/\p{L}/gu, "a");
  const alike = (path: string) => path.split("/").some((name) => name.includes(":") && shape(name.split(":")[0]!) === shape(prefix.name));
  const misnamed = () => !answers.some(({ value }) => value.some(alike)) || repos.some((r) => editDistance(prefix.name, r.name, 3) <= 2);
  if (refs.length === 0 && !named && REPO_NAME.test(prefix.name) && misnamed()) getRepository(home, prefix.name);
  const reason = (s: SkippedRepository) => `its index cannot be read: ${s.message}${s.hint ? ` (hint: ${s.hint})` : ""}`;
  return {
    refs,
    skipped: skipped.map((s) => ({ repository: s.repository, path: pattern, reason: reason(s) })),
    unreadable: named ? skipped : [],
  };
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
 * A name alone, without glob syntax or a slash (byName's), as what selects the documents of that base name from the
 * name index, not matched against every path: a list of names costs a lookup each. Undefined for any other pattern.
 * (A folder of that name is folderOf's, when no document has the name.)
 */
function nameSelection(pattern: string): Selection | undefined {
  const lookup = lookupOf(composed(pattern));
  if (!lookup || lookup.anchored || lookup.folder || lookup.subject === "") return undefined;
  return (_, repo, session) => session.names(repo).get(lookup.subject) ?? [];
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
  const { refs, skipped, warnings } = matchDocuments(home, pattern, { repository: options.repository, session });
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
  const fits = (ref: DocumentRef) =>
    (TEXT_FORMATS.has(formatOf(ref.path)) && (ref.line !== undefined || indexedSize(ref) <= budget - used)) || converted.has(keyOf(ref));
  // Documents this answer converted already: another page or range of one costs no conversion, and is judged by
  // what it holds (a PDF's second page was skipped unread after its first did not fit: s24 retest2 M1).
  const converted = new Set<string>();
  const keyOf = ({ repo, path }: DocumentRef) => `${repo.dir}\0${path}`;
  const documents: DocumentText[] = [];
  // A document too large for what is left, by the bytes it would send, or its file's when it is a text file not read.
  const overBudget = (bytes: number) => `${bytes} bytes, more than the ${budget - used} left of max_bytes for the answer (${budget} bytes)`;
  for (const ref of refs) {
    const entry = { repository: ref.repo.name, path: ref.path };
    if (stoppedAt !== undefined && !fits(ref)) {
      // The answer goes on (text files that fit are read). A text file was judged by its size, said as the first
      // one's is ("were left after" read as if it was never looked at: s29 agent P3); a document that must be
      // converted was not, for the budget's rest.
      const size = TEXT_FORMATS.has(formatOf(ref.path)) ? indexedSize(ref) : Number.POSITIVE_INFINITY;
      const why = Number.isFinite(size)
        ? overBudget(size)
        : `not read: ${budget - used} bytes of max_bytes (${budget}) were left after ${stoppedAt} did not fit`;
      skipped.push({ ...entry, reason: skipReason(why, refText(ref)) });
      continue;
    }
    let doc: DocumentText;
    if (options.signal?.aborted) throw cancelled();
    try {
      doc = await readDocument(home, ref, { conversions: options.conversions, signal: options.signal, session });
      converted.add(keyOf(ref));
    } catch (error) {
      skipped.push({ ...entry, reason: describeError(error) });
      continue;
    }
    const bytes = sentBytes(doc, options.lineNumbers ?? false);
    if (bytes > perDocument) {
      skipped.push({ ...entry, reason: skipReason(`larger than max_bytes per document (${bytes} > ${perDocument} bytes)`, readRef(doc)) });
    } else if (used + bytes > budget) {
      skipped.push({ ...entry, reason: skipReason(overBudget(bytes), readRef(doc)) });
      stoppedAt ??= refText(ref);
    } else {
      used += bytes;
      documents.push(doc);
    }
  }
  return {
    documents,
    skipped: skipped.slice(0, MAX_SKIPPED_LISTED),
    skipped_total: skipped.length,
    ...(warnings.length ? { warnings } : {}),
  };
}

/**
 * Why a document an answer had no room for was skipped (`why`), and the way on, which its budget (1 MiB at most over
 * MCP) never gives (s24 agent A5): every such reason, the per-document limit's too (s29 agent P3).
 */
function skipReason(why: string, ref: string): string {
  return `${why}: read it by itself with \`researcher get ${shellWord(ref)}\`, an answer at a time (continue_with)`;
}
