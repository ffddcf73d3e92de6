/**
 * What a document reference names: `repo:path[:line]`, `#docid` or a search result's bare location, resolved to an
 * indexed document of a repository. Only paths inside their repository resolve: `..`, absolute paths elsewhere and
 * symlinks out of the root are refused; a miss names the close paths the index holds (spelling suggestions).
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { REPO_NAME } from "../config.ts";
import { isResearcherError, ResearcherError } from "../errors.ts";
import { isFileAt, isFolder, isInside, outsideRoot } from "../files.ts";
import { attempt, getRepository, listRepositories, settle, type Repository, type SkippedRepository } from "../repos.ts";
import type { Store } from "../store/store.ts";
import { shellWord, unescapeControls } from "../terminal.ts";
import { composed } from "../text.ts";
import { editDistance } from "../similar.ts";
import { DOCID } from "./docid.ts";
import { unfinishedWarning } from "./first-run.ts";
import { indexedDocuments, type ReadSession, withStore } from "./read-session.ts";

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

/** A ref as it is written (`notes:a.md:10:5`, `p:x.pdf:p2-3`): what reads the same part again. */
export function refText({ repo, path, line, count, page, lastPage }: DocumentRef): string {
  const place =
    page !== undefined
      ? `:p${page}${lastPage === undefined ? "" : `-${lastPage}`}`
      : line !== undefined
        ? `:${line}${count === undefined ? "" : `:${count}`}`
        : "";
  return `${repo.name}:${path}${place}`;
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
 * The repository a value that begins with `repo:` names, as a ref does (a listing's prefix, a search's path filter,
 * a ref or a part of a multi-get pattern), and the value inside it; undefined when no registered repository has that
 * name (`2024:01/log.md` is a path's own colon). One naming another repository than the ones `asked` for (none: any)
 * is a usage error: read as a path inside them that begins with `repo:`, it matched nothing, in silence.
 */
export function namedRepository(
  home: string,
  value: string,
  asked: readonly string[],
  { what, verb, anchored = false }: { what: string; verb: string; anchored?: boolean },
): { repository: string; inside: string } | undefined {
  const names = asked.map((a) => a.trim());
  const absolute = absoluteInRepository(home, value);
  if (absolute) return absoluteIn(absolute, value, names, what, anchored);
  const { name, inside } = repositoryPrefix(value);
  if (!name || !(names.includes(name) || listRepositories(home).some((repo) => repo.name === name))) return undefined;
  if (names.length > 0 && !names.includes(name)) {
    const [given, first] = [names.map((a) => `'${a}'`).join(", "), names[0]!];
    throw new ResearcherError(
      "USAGE",
      `${what} '${value}' names repository '${name}' but ${asked.length === 1 ? "repository is" : "repositories are"} ${given}: they do not go together`,
      {
        hint: `leave out repository to ${verb} '${name}', or write ${first}:${value} for a path in '${first}' that begins with '${name}:'`,
      },
    );
  }
  return { repository: name, inside };
}

/**
 * An absolute path's repository (absoluteInRepository) as namedRepository gives it, the path inside it anchored at
 * its root where `anchored` (a glob: `/…/notes/*.md` is not every `*.md`); one inside another repository than those
 * asked for is a usage error, as a `repo:` prefix naming another is.
 */
function absoluteIn(
  absolute: { repository: string; inside: string },
  value: string,
  names: string[],
  what: string,
  anchored: boolean,
): { repository: string; inside: string } {
  if (names.length > 0 && !names.includes(absolute.repository)) {
    throw new ResearcherError(
      "USAGE",
      `${what} '${value}' is inside repository '${absolute.repository}', not ${names.map((n) => `'${n}'`).join(", ")}`,
      {
        hint: `leave out repository to use '${absolute.repository}'`,
      },
    );
  }
  return { repository: absolute.repository, inside: anchored && absolute.inside ? `/${absolute.inside}` : absolute.inside };
}

/**
 * The repository name a value's `repo:` prefix gives, trimmed as every lookup of a name is (`' p:'` listed nothing:
 * s24 retest N7; `get 'big :a.md'` found nothing where `ls 'big :a'` listed it: s25 review R6), and what follows it;
 * name "" when the value has no prefix.
 */
export function repositoryPrefix(value: string): { name: string; inside: string } {
  const colon = value.indexOf(":");
  return colon > 0 ? { name: value.slice(0, colon).trim(), inside: value.slice(colon + 1) } : { name: "", inside: value };
}

/**
 * A path named as results print it, `notes:a.md` in repository notes, as the path inside it, `a.md`: unless the name
 * as given `isThere` (a file named `notes:a.md`). The pair that undo each other, `remove` (remove_from_index) and
 * add_to_index, take both forms (s24 agent A3).
 */
export function withoutRepository(repo: Repository, named: string, isThere: (path: string) => boolean): string {
  const prefix = `${repo.name}:`;
  return named.startsWith(prefix) && !isThere(named) ? named.slice(prefix.length) : named;
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
  /** Why the repository's rules leave a path out, for a miss to name it (see LeftOutRule). */
  leftOut?: LeftOutRule;
}

/**
 * Why a repository's rules leave `path` out of its index (a generated folder, its type, an exclude), or undefined: the
 * index stage's `leftOutOfIndex`, which the shells pass to a read, as search does not reach into index.
 */
export type LeftOutRule = (repo: Repository, path: string) => { why: string; hint: string } | undefined;

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

/**
 * A ref that is a file's path relative to the working folder, what a shell's tab completion gives
 * (`./lib/ebooks/alice.epub`, with any tail: `:p2`), as the document its absolute path names (as `search --files`
 * prints paths, a ref may be one). Undefined when no file is there, or no repository holds it: the ref is then looked
 * up as given, a search result's location being relative to its repository's folder. A relative path was refused,
 * "no repository holds ./lib/…" (s27 user U7).
 */
export function workingFolderRef(home: string, ref: string, cwd: string): DocumentRef | undefined {
  if (isAbsolute(ref)) return undefined;
  const place = lineSuffix(ref);
  const path = isFileAt(resolve(cwd, ref)) ? ref : place && isFileAt(resolve(cwd, place.path)) ? place.path : undefined;
  if (path === undefined) return undefined;
  return unlessRefused(() => resolveDocumentRef(home, resolve(cwd, path) + ref.slice(path.length), { suggest: false }));
}

/** A repository whose folder holds an absolute path, the path inside it ("" for the folder), and the path resolved. */
export interface Holder {
  repo: Repository;
  inside: string;
  /** The absolute path with the links of its folders resolved, as `repo add` resolved the repository's folder. */
  resolved: string;
}

/**
 * The repositories whose folders hold an absolute path or glob (with a `:line` tail, or not): its folders' links
 * resolved up to its last folder before any glob character, its last part as typed (a link to a file inside the
 * root is indexed by its own name). `repo add ~/notes` stores the real folder, and the path as typed named none of
 * its documents (s29b retest F5). Nested repositories both hold a path below the inner one's folder.
 */
export function repositoriesHolding(home: string, absolute: string): Holder[] {
  if (!isAbsolute(absolute)) return [];
  const resolved = linksResolved(absolute);
  return listRepositories(home)
    .filter((repo) => isInside(repo.path, resolved))
    .map((repo) => {
      const inside = relative(repo.path, resolved).split(sep).join("/");
      return { repo, inside: inside && /\/\.?$/.test(absolute) ? `${inside}/` : inside, resolved };
    });
}

/**
 * `absolute` with the links of its existing folders resolved (before its first glob character), the rest as typed:
 * a folder itself too (a repository's folder named by the link it was added through).
 */
function linksResolved(absolute: string): string {
  const glob = absolute.search(/[*?[{]/);
  let folder =
    glob < 0 && isFolder(absolute)
      ? absolute
      : absolute.slice(0, Math.max(1, absolute.lastIndexOf("/", glob < 0 ? absolute.length : glob)));
  for (;;) {
    try {
      const real = realpathSync(folder);
      return real === "/" ? `/${absolute.slice(folder.length).replace(/^\/+/, "")}` : real + absolute.slice(folder.length);
    } catch {
      const up = dirname(folder);
      if (up === folder) return absolute;
      folder = up;
    }
  }
}

/**
 * An absolute path, or glob, inside one repository's folder as that repository's name and path inside it, as a read
 * takes an absolute path (resolveAnywhere): `ls /home/me/notes/sub`, a multi-get glob, list_documents' prefix and
 * `--filter` said "no repository named" or matched nothing, where `get` of the same path read it (s29 agent P5).
 * Undefined for any other text and a path inside no repository's folder; inside two (nested), an error naming both,
 * as `get`'s (s29b retest F1).
 */
export function absoluteInRepository(home: string, text: string): { repository: string; inside: string } | undefined {
  const holders = repositoriesHolding(home, text);
  if (holders.length === 0) return undefined;
  if (holders.length > 1) {
    const named = holders.map((h) => (h.inside ? `${h.repo.name}:${h.inside}` : h.repo.name)).join(", ");
    throw new ResearcherError("INVALID_INPUT", `'${text}' is in ${holders.length} repositories: ${named}`, {
      hint: "name it in one of them: repo:path",
    });
  }
  return { repository: holders[0]!.repo.name, inside: holders[0]!.inside };
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

/**
 * The ref an MCP resource's URI stands for: `researcher://notes/a%20b.md` is `notes:a b.md` (its repository and
 * path percent-decoded), or undefined for anything else. A path is relative, so no ref of a repository named
 * `researcher` reads like one (`researcher://…` would be a path starting with `//`).
 */
export function refOfResourceUri(uri: string): string | undefined {
  const match = /^researcher:\/\/([^/]+)\/(.+)$/s.exec(uri);
  if (!match) return undefined;
  try {
    return `${decodeURIComponent(match[1]!)}:${decodeURIComponent(match[2]!)}`;
  } catch {
    throw new ResearcherError("INVALID_INPUT", `malformed percent-encoding in ${uri}`, {
      hint: "a resource URI is researcher://<repository>/<path>, each path segment percent-encoded",
    });
  }
}

function resolveTrimmedRef(home: string, trimmed: string, options: RefLookup): DocumentRef {
  // A ref that cannot name anything is malformed (exit 2), as a line 0 is; one that names nothing indexed is not.
  if (!trimmed) throw new ResearcherError("USAGE", "an empty document reference", { hint: REF_HINT });
  // A URI resources/list hands out, given as a ref: it was "no repository named 'researcher'" (s24 agent A7).
  const resource = refOfResourceUri(trimmed);
  if (resource !== undefined) return resolveTrimmedRef(home, resource, options);
  if (trimmed.startsWith("#")) return resolveDocid(home, trimmed, options);
  const repos = listRepositories(home);
  const prefix = repositoryPrefix(trimmed);
  const named = prefix.name ? repos.find((r) => r.name === prefix.name) : undefined;
  // `repository: ""` is refused (getRepository), as every interface refuses an empty name: not read as none given.
  if (options.repository !== undefined) {
    const repo = getRepository(home, options.repository);
    const rest = named?.name === repo.name && !hasIndexedPath(repo, trimmed, options.session) ? prefix.inside : trimmed;
    return resolveInRepository(repo, rest, true, options.session)!;
  }
  if (named) return resolveInRepository(named, prefix.inside, true, options.session)!;
  return resolveAnywhere(home, trimmed, repos, options);
}

/** `#docid`, with any tail (`#51481f:p6`, `#51481f:40-60`). */
function resolveDocid(home: string, trimmed: string, options: RefLookup): DocumentRef {
  if (DOCID.test(trimmed)) return findByDocid(home, trimmed.slice(1).toLowerCase(), options);
  const place = lineSuffix(trimmed);
  if (place && DOCID.test(place.path)) return { ...findByDocid(home, place.path.slice(1).toLowerCase(), options), ...checkedPlace(place) };
  throw new ResearcherError("USAGE", `'${trimmed}' is not a docid`, {
    hint: "a docid is # and at least 6 hex digits, as search results print it",
  });
}

/** A ref that names no repository: the one document of that path in any of them, or an error that says why none. */
function resolveAnywhere(home: string, trimmed: string, repos: Repository[], options: RefLookup): DocumentRef {
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
  // An absolute path inside one repository's folder names a document of that repository, indexed or not: its miss
  // names the rule that leaves the file out (hidden, an exclude), as `repo:path` does (s28 code 6).
  const owners = repositoriesHolding(home, trimmed);
  if (owners.length === 1) return resolveInRepository(owners[0]!.repo, owners[0]!.resolved, true, options.session)!;
  throw unread(
    missedAnywhere(
      home,
      trimmed,
      answers.map(({ repo }) => repo),
      options,
    ),
    skipped,
  );
}

/**
 * Why a ref that names no repository names no document in `looked` (the repositories whose indexes could be read):
 * a docid without its `#`, a repository misspelled, a line 0, a repository whose first run has not reached it yet,
 * or no such path, with the indexed paths close to it.
 */
function missedAnywhere(home: string, trimmed: string, looked: Repository[], options: RefLookup): ResearcherError {
  const suffix = lineSuffix(trimmed);
  const target = suffix?.path ?? trimmed;
  // A docid copied without its `#` (which a shell reads as a comment's start), maybe with a place: `51481f:p6` is
  // no repository's name either (s24 user U8).
  if (options.suggest !== false && DOCID.test(`#${target}`) && docidMatches(home, target.toLowerCase(), options).found.length > 0) {
    // As a command, which a shell needs quoted (and an agent is given as get_document's ref: s24 retest N9).
    const hint = `did you mean the docid: \`researcher get ${shellWord(`#${trimmed}`)}\`? (a docid begins with #)`;
    return new ResearcherError("DOCUMENT_NOT_FOUND", `no repository holds ${trimmed}`, { hint });
  }
  const prefix = repositoryPrefix(trimmed);
  if (prefix.name && REPO_NAME.test(prefix.name)) getRepository(home, prefix.name); // throws, naming the known ones
  if (suffix) refuseZero(suffix); // `a.md:0` names no place in any document: a usage error, not a miss
  const suggestions = options.suggest === false ? [] : looked.flatMap((repo) => closePaths(repo, target, options.session));
  // A repository no index run has finished may hold it yet: said as multi-get warns of it, with its run to wait for
  // or start ("no repository holds" read as not there: s28b retest R4).
  const unfinished = looked.flatMap(
    (repo) => withStore(repo, (store) => unfinishedWarning(repo, store, "looked in"), options.session) ?? [],
  );
  return unfinished.length ? notYetIn(trimmed, unfinished, suggestions) : notIndexed(trimmed, suggestions, "no repository holds");
}

/**
 * A path no repository holds when `unfinished` (unfinishedWarning) are not indexed whole yet: each named with what
 * to do, before a close path indexed so far (s.pdf not reached yet is no typo for n.pdf).
 */
function notYetIn(what: string, unfinished: SkippedRepository[], suggestions: string[]): ResearcherError {
  const why = unfinished.map((u) => `${u.repository}: ${u.message}`).join("; ");
  const hints = [...new Set(unfinished.flatMap((u) => (u.hint ? [u.hint] : [])))];
  if (suggestions.length) hints.push(`or did you mean ${suggestions.slice(0, 5).join(", ")}?`);
  return new DocumentMissed(`no repository holds ${what} so far; ${why}`, hints.join("; "), suggestions);
}

/**
 * `work` over each repository whose index can be read: a lookup over all of them must not fail for one damaged or
 * outdated index (its error is in `skipped`), unless every one fails.
 */
export function readable<T>(repos: Repository[], work: (repo: Repository) => T): ReturnType<typeof settle<T>> {
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
 * result's page, `:pN-M` pages), as search results print them, and `#pN` or `#page=N`, as PDF viewers and links write a
 * page. The path before it may hold any character a file name can, a newline too (`s`: `.` matches it), and `$` is the
 * very end: a search location always round-trips (a whole path that is indexed is taken first).
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

/**
 * The place a ref names (its `path` the document's name, for messages): a range that ends before it starts is a usage
 * error.
 */
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

export const badPage = (page: number) =>
  new ResearcherError("USAGE", `pages count from 1 (got p${page})`, { hint: "read the first page as pN with N ≥ 1" });
export const badFirstLine = (line: number) => new ResearcherError("USAGE", `the first line must be 1 or more (got ${line})`);
export const badCount = (count: number) => new ResearcherError("USAGE", `the number of lines must be 1 or more (got ${count})`);

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

function findByDocid(home: string, prefix: string, options: RefLookup): DocumentRef {
  const { found, skipped } = docidMatches(home, prefix, options);
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

/** The documents whose hash starts with `prefix` (lower-case hex), and the repositories that could not be looked in. */
function docidMatches(
  home: string,
  prefix: string,
  { repository, session }: RefLookup,
): { found: { repo: Repository; path: string; hash: string }[]; skipped: SkippedRepository[] } {
  const repos = repository !== undefined ? [getRepository(home, repository)] : listRepositories(home);
  const { answers, skipped } = readable(repos, (repo) => [...(indexedDocuments(repo, session)?.values() ?? [])]);
  const found = answers.flatMap(({ repo, value }) =>
    value.filter((doc) => doc.hash.startsWith(prefix)).map((doc) => ({ repo, path: doc.path, hash: doc.hash })),
  );
  return { found, skipped };
}

/**
 * A ref to no indexed document; `leftOut`, why it is not in and the fix: the rule of the repository that leaves the
 * path out, when one does (its type, an exclude, a generated folder: see leftOutOfIndex), or a first index run that
 * has not finished (notReachedYet).
 */
export function notIndexed(
  what: string,
  suggestions: string[],
  prefix: string,
  repository?: string,
  leftOut?: { why: string; hint: string; known?: boolean },
): ResearcherError {
  const message = prefix ? `${prefix} ${what}` : leftOut ? `${what} is not indexed: ${leftOut.why}` : `${what} is not an indexed document`;
  const hint = suggestions.length
    ? `did you mean ${suggestions.slice(0, 5).join(", ")}?`
    : (leftOut?.hint ??
      `only indexed documents can be read; \`researcher ls${repository ? ` ${repository}` : ""}\` lists them, \`researcher status\` lists failures`);
  return new DocumentMissed(message, hint, suggestions, Boolean(leftOut?.known));
}

/**
 * DOCUMENT_NOT_FOUND for a ref to no indexed document, with the indexed paths close to it (`near`): multi-get gives
 * them in a part's skipped entry, which has no hint of its own. `known`: the ref names a file that the index knows and
 * says why it holds none of it (the last run failed it, a rule leaves it out): no miss, which multi-get answers with
 * an empty match, but what the ref names failing, as `get` fails.
 */
export class DocumentMissed extends ResearcherError {
  constructor(
    message: string,
    hint: string,
    readonly near: string[],
    readonly known = false,
  ) {
    super("DOCUMENT_NOT_FOUND", message, { hint });
  }
}

/**
 * Indexed paths close to a missed one: the same file name elsewhere, or a few edits away (typos, case), or the note a
 * wiki link names (`Drip Irrigation`, `Daily/2026-11-20#Friday`: its name without extension, a `#heading` dropped).
 */
export function closePaths(repo: Repository, target: string, session?: ReadSession): string[] {
  const paths = [...(indexedDocuments(repo, session)?.keys() ?? [])];
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
