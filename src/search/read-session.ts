/**
 * What the reads of one call share (a multi-get, a `get`): each repository's index opened once, its paths listed
 * once, and the folder and spelling indexes made from them.
 */
import { type Config, loadConfig } from "../config.ts";
import type { Repository, SkippedRepository } from "../repos.ts";
import { Store, type StoredDocument } from "../store/store.ts";
import { subjects } from "../path-glob.ts";
import { composed } from "../text.ts";
import { unfinishedWarning } from "./first-run.ts";

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
  /** The repositories whose index the call looked in, by index folder. */
  private readonly opened = new Map<string, Repository>();
  private readonly listed = new Map<string, ReadonlyMap<string, StoredDocument> | null>();
  private readonly folderIndexes = new Map<string, FolderIndex>();
  private readonly spellingIndexes = new Map<string, Map<string, string[]>>();
  private readonly nameIndexes = new Map<string, Map<string, string[]>>();
  private loaded?: Config;

  constructor(private readonly home: string) {}

  get config(): Config {
    this.loaded ??= loadConfig(this.home);
    return this.loaded;
  }

  withStore<T>(repo: Repository, body: (store: Store) => T): T | undefined {
    if (!this.stores.has(repo.dir)) this.stores.set(repo.dir, Store.exists(repo.dir) ? Store.open(repo.dir) : null);
    const store = this.stores.get(repo.dir);
    if (store) this.opened.set(repo.dir, repo);
    return store ? body(store) : undefined;
  }

  /**
   * The warnings for the repositories the call looked in that no index run has finished (unfinishedWarning): what it
   * read of them is what is indexed so far. A multi-get of such a repository said nothing of the rest (s28 hostile F3).
   */
  unfinished(): SkippedRepository[] {
    const repos = [...this.opened.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
    return repos.flatMap((repo) => this.withStore(repo, (store) => unfinishedWarning(repo, store, "read")) ?? []);
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

  /**
   * The repository's indexed paths by their base name, composed as globs compare names, made once for the call from
   * `documents`: what a name alone in a multi-get pattern (`ideas.md`, at any depth) is looked up in.
   */
  names(repo: Repository): ReadonlyMap<string, readonly string[]> {
    if (!this.nameIndexes.has(repo.dir)) {
      const index = new Map<string, string[]>();
      for (const path of this.documents(repo)?.keys() ?? []) addTo(index, composed(path.slice(path.lastIndexOf("/") + 1)), path);
      this.nameIndexes.set(repo.dir, index);
    }
    return this.nameIndexes.get(repo.dir)!;
  }

  close(): void {
    for (const store of this.stores.values()) store?.close();
    this.stores.clear();
  }
}

/** `body` within `session`, or when there is none (`get`, `get --meta`), within a session of its own, closed after. */
export function inSession<T>(home: string, session: ReadSession | undefined, body: (session: ReadSession) => T): T {
  if (session) return body(session);
  const own = new ReadSession(home);
  try {
    return body(own);
  } finally {
    own.close();
  }
}

/** A repository's indexed documents (see ReadSession.documents), read now when no session keeps them. */
export function indexedDocuments(repo: Repository, session?: ReadSession): ReadonlyMap<string, StoredDocument> | undefined {
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
export function documentsBelow(repo: Repository, folder: string, session: ReadSession): readonly string[] {
  return session.folders(repo).byPath.get(composed(folder)) ?? [];
}
