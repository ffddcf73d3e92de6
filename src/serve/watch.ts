/**
 * Watch mode: keep repositories' indexes current from file events. Each repository first gets a normal incremental
 * run, then `node:fs` recursive watch events (inotify under Bun on Linux, new subfolders included) are collected
 * until `debounceMs` pass without one, resolved into candidate paths, and applied through `indexFiles` — the same
 * per-document step, transactions, embedding cache and failure records as `index` — in batches of at most
 * MAX_BATCH paths, each taking the writer lock on its own. Between events nothing runs: no polling.
 *
 * Events name paths, not what happened, so a batch looks at the disk: a file is indexed unless its stamp matches the
 * index (size, mtime, inode change time and number: a file renamed over it is read), or it failed as it is now (the
 * planner's rule, plan.ts); a path that is gone removes its document, and every document under it (a folder moved
 * away); a folder diffs its subtree against the index (a folder moved in). A file read that has other hard links
 * brings its other indexed names into the batch, looked at alike: an event names a file by the name written through
 * alone (otherLinks). A path created and deleted within one debounce never reaches the index. A repository folder
 * that vanishes or empties removes nothing: the watch waits for it to come back (the only timer that repeats, and
 * only in that state) and then runs a full incremental scan.
 *
 * Events that never stop (a log appended to every 0.1 s) would keep the quiet time from ever coming, so a batch
 * runs at the latest `maxDelayMs` after the first event it holds. A batch that fails (the database locked by
 * another connection, a full disk) keeps its paths pending and is retried with a growing delay. An ignore file
 * (.gitignore, .ignore) that changes re-plans its folder: what it now ignores leaves the index, what it no longer
 * ignores enters it. A subfolder the watcher may not read is reported once and left unwatched (its documents
 * stay, as in `index`) until a change to it (a chmod) finds it readable; the rest is watched.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync, watch, type FSWatcher, type Stats } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { loadConfig } from "../config.ts";
import {
  candidacy,
  discoverFiles,
  folderLinkAbove,
  IGNORE_FILES,
  isCandidate,
  isCandidateFolder,
  isEmptyFolder,
  savedPageFolderOf,
  keepUnmounted,
  type Discovery,
} from "../index/discover.ts";
import { type Failed, failedUnchanged, planChanges, sameStamp } from "../index/plan.ts";
import { EmbedderCache } from "../embed/embedder.ts";
import { shortened } from "../text.ts";
import { danglingLink, isFolder, isInside } from "../files.ts";
import { describeError, isResearcherError, ResearcherError, toResearcherError } from "../errors.ts";
import { indexFiles, indexRepository, type IndexSummary } from "../index/indexer.ts";
import { failureSettings } from "../convert/pool.ts";
import { listRepositories, type Repository } from "../repos.ts";
import { serialized } from "../serial.ts";
import { Store } from "../store/store.ts";

/** One applied batch: the `--json` line of `researcher watch`. */
export interface WatchBatch {
  repository: string;
  indexed: number;
  /** Pages read by OCR in this batch (scanned PDF pages, images), as `index` counts them. */
  ocr_pages: number;
  removed: number;
  failed: number;
  /** The paths this batch looked at (empty for a scan). */
  paths: string[];
  seconds: number;
  /** A full incremental run (the first one, after an event overflow, or after the folder came back). */
  scan: boolean;
  failures: { path: string; reason: string }[];
  warnings: string[];
}

/** `indexing` a batch; `watching` for events; `waiting` for the folder to come back; `locked` by another writer. */
export type WatchState = "indexing" | "watching" | "waiting" | "locked";

export interface WatchStatus {
  repository: string;
  state: WatchState;
  /** Paths seen in events and not applied yet. */
  pending: number;
}

export interface WatchOptions {
  /** Quiet time after the last event before a batch (default: config `watch.debounce_ms`, 300). */
  debounceMs?: number;
  /** The longest a pending event waits for quiet before its batch runs anyway (default: 10 debounces, at least 2 s). */
  maxDelayMs?: number;
  /** How often the registry is looked at for repositories renamed, removed or registered (default 2 s). */
  registryCheckMs?: number;
  noEmbed?: boolean;
  embedders?: EmbedderCache;
  onBatch?: (batch: WatchBatch) => void;
  /** A batch or scan that failed (it is retried, after a growing delay), or a watcher that failed (WATCH_FAILED). */
  onError?: (error: unknown, repository: string) => void;
  onStatus?: (status: WatchStatus) => void;
  /** Aborting it closes the watch, as `close()` does. */
  signal?: AbortSignal;
  /** Also watch repositories registered while watching: `watch` and `serve --watch` without names mean all of them. */
  followNew?: boolean;
  /**
   * Every repository watched was removed (`repo remove`), and none is followed elsewhere: a named watch has nothing
   * left to do (one of all repositories waits for the next to be registered).
   */
  onNothingLeft?: () => void;
  /**
   * Watching all repositories (`followNew`), one removed (`repo remove`) is no error, but what was asked: it is watched
   * no more, said here (as `error:` it raised a supervisor's alert for a normal operation: s26 user F17). A named
   * watch reports it through onError.
   */
  onRemoved?: (repository: string) => void;
  /**
   * A repository's folder went missing (an unmounted drive, a folder moved away: its documents stay, and the watch
   * waits for it) or came back (`present`). A supervisor tailing the output could not tell a healthy quiet watch
   * from one whose folder was gone (s27 user U3).
   */
  onFolder?: (repository: string, present: boolean, path: string) => void;
  /**
   * Runs each batch. `serve --watch` passes the MCP server's writer queue, so the server's own writes and the
   * watch take turns instead of meeting the writer lock.
   */
  exclusive?: <T>(task: () => Promise<T>) => Promise<T>;
}

export interface WatchHandle {
  /** Settles when every repository's first incremental run has finished (or failed: see onError). */
  ready: Promise<void>;
  /**
   * Stop watching; resolves true once the batch running now, if any, has been written, or false when it still runs
   * after `waitMs` (a scan's OCR: minutes). It then runs on until the process ends, which cuts it as a kill cuts an
   * index run: the index stays whole, and the next run reads what it did not finish.
   */
  close(waitMs?: number): Promise<boolean>;
}

/** How long a stop asked by a signal or a closed client waits for the batch under way (s25 hostile F1). */
export const STOP_WAIT_MS = 2_000;

/** How often a watch looks at the registry: for repositories renamed, removed, or (watching all) registered since. */
const REGISTRY_CHECK_MS = 2_000;
/** Paths per `indexFiles` call: the writer lock is released between batches, so `index` can take turns. */
const MAX_BATCH = 500;
/** More pending paths than this (a huge checkout, a copied tree) are cheaper as one incremental scan. */
const OVERFLOW_PATHS = 20_000;
/** How long a batch waits when another process holds the writer lock, doubling up to LOCK_RETRY_MAX_MS. */
const LOCK_RETRY_MS = 250;
const LOCK_RETRY_MAX_MS = 5_000;
/** The same for a batch that failed: the cause (a full disk, say) may last, so the delay grows further. */
const FAILED_RETRY_MAX_MS = 60_000;
/** How often a vanished repository folder is looked for. */
const ROOT_CHECK_MS = 1_000;

/**
 * Watch `repos` and apply their changes until `close()`. Throws WATCH_FAILED at once when the system refuses the
 * watches (inotify limits); a folder that does not exist yet is waited for.
 */
export function watchRepositories(home: string, repos: Repository[], options: WatchOptions = {}): WatchHandle {
  const debounceMs = options.debounceMs ?? loadConfig(home).watch.debounce_ms;
  const maxDelayMs = options.maxDelayMs ?? Math.max(10 * debounceMs, 2_000);
  const embedders = options.embedders ?? new EmbedderCache();
  // One batch at a time across repositories: batches share the embedder, and memory stays one batch's worth.
  const serial = serialized();
  const context: Context = { home, debounceMs, maxDelayMs, embedders, options, serial, closed: false };
  const watchers: RepositoryWatch[] = [];
  try {
    for (const repo of repos) watchers.push(new RepositoryWatch(repo, context));
  } catch (error) {
    for (const w of watchers) w.stop();
    throw error;
  }
  const ready = Promise.all(watchers.map((w) => w.start())).then(() => undefined);
  const follow = setInterval(() => context.follow?.(), options.registryCheckMs ?? REGISTRY_CHECK_MS);
  follow.unref();
  context.follow = () => {
    followRegistry(home, watchers, context);
    // With no folder watched, the registry's look is all that waits: held, it keeps the process waiting for a
    // repository to be registered; left unreferenced, nothing did, and the runtime spun a core (s23 hostile H1).
    if (watchers.some((w) => w.active)) follow.unref();
    else if (context.options.followNew) follow.ref();
    else if (!context.closed) context.options.onNothingLeft?.();
  };
  let closing: Promise<void> | undefined;
  const closed = () =>
    (closing ??= (async () => {
      context.closed = true;
      clearInterval(follow);
      for (const w of watchers) w.stop();
      await serial(async () => undefined); // once the batches under way have ended
      if (!options.embedders) await embedders.dispose();
    })());
  const close = async (waitMs = Number.POSITIVE_INFINITY) => {
    if (!Number.isFinite(waitMs)) return closed().then(() => true);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    const ended = await Promise.race([closed().then(() => true), late]);
    clearTimeout(timer);
    return ended;
  };
  options.signal?.addEventListener("abort", () => void close(), { once: true });
  if (options.signal?.aborted) void close();
  return { ready, close };
}

/**
 * Follow the registry: stop watching repositories removed (or registered again for another folder), watch a renamed
 * one under its new name, and, watching all (`followNew`), start watching those registered since the watch began.
 * config.yaml is read from its cached copy; while it cannot be read (an edit by hand half done, the file missing) the
 * watch goes on as it is, and says why once.
 */
function followRegistry(home: string, watchers: RepositoryWatch[], context: Context): void {
  if (context.closed) return;
  let registered: Repository[];
  try {
    // A config.yaml gone says nothing of what is registered (a tool that replaces it by delete and re-create): read
    // as no repositories, every one watched was "removed", and a named watch ended (s24 hostile H4). The watch goes
    // on as it was until it is back.
    registered = listRepositories(home, { missing: watchers.some((watcher) => watcher.active) ? "refuse" : "empty" });
    context.registryProblem = undefined;
  } catch (error) {
    const problem = toResearcherError(error).message;
    if (problem !== context.registryProblem) context.options.onError?.(error, "config.yaml");
    context.registryProblem = problem;
    return;
  }
  for (const watcher of watchers) watcher.followSettings(registered);
  const paths = new Map(registered.map((repo) => [repo.name, repo.path]));
  const stopped = watchers.filter((watcher) => watcher.active && paths.get(watcher.name) !== watcher.path);
  for (const watcher of stopped) watcher.stop();
  const watched = new Set(watchers.filter((w) => w.active).map((w) => w.name));
  // Renamed, or pointed at another folder (`config set repositories.<name>.path`): the same index, watched on.
  const moved = watchers.flatMap((watcher) => {
    const to = watcher.active || watcher.followed ? undefined : watcher.movedTo(registered);
    if (!to || watched.has(to.name)) return [];
    watcher.followed = true;
    return [to];
  });
  for (const watcher of stopped) if (!watcher.followed) reportRemoved(context, watcher.name, removedWhileWatched(watcher.name));
  const starting = context.options.followNew ? registered.filter((repo) => !watched.has(repo.name)) : moved;
  for (const repo of starting) {
    try {
      const watcher = new RepositoryWatch(repo, context);
      watchers.push(watcher);
      void watcher.start();
    } catch (error) {
      context.options.onError?.(error, repo.name);
    }
  }
}

/** A repository removed while watched: an error of a named watch, a note of a watch of all repositories. */
function reportRemoved(context: Context, name: string, error: ResearcherError): void {
  if (context.options.followNew && context.options.onRemoved) context.options.onRemoved(name);
  else context.options.onError?.(error, name);
}

/** Said of a watched repository that is no longer registered (or is, for another index): it is watched no more. */
function removedWhileWatched(name: string): ResearcherError {
  return new ResearcherError("REPO_NOT_FOUND", `repository '${name}' was removed while watched: it is watched no more`, {
    hint: "`researcher repo list` lists the repositories; watch again the ones to follow",
  });
}

/** An index folder's identity: `repo rename` moves the folder itself; `repo remove` and `repo add` make another. */
function folderIdentity(path: string): string | undefined {
  try {
    const stats = lstatSync(path);
    return `${stats.dev}:${stats.ino}:${stats.birthtimeMs}`;
  } catch {
    return undefined;
  }
}

interface Context {
  home: string;
  debounceMs: number;
  maxDelayMs: number;
  embedders: EmbedderCache;
  options: WatchOptions;
  serial: <T>(task: () => Promise<T>) => Promise<T>;
  closed: boolean;
  /** Look at the registry now (followRegistry). */
  follow?: () => void;
  /** Why the registry could not be read at the last look, once reported. */
  registryProblem?: string;
}

/** One repository: its watcher, the paths seen since the last batch, and what the next batch must do. */
class RepositoryWatch {
  private watcher: FSWatcher | undefined;
  /** The root folder's inode when the watcher started: a folder replaced by another needs a new watcher. */
  private rootIno = 0;
  /** Paths from events, each with the time of its first event (how long it has waited for its writer to finish). */
  private pending = new Map<string, number>();
  /** Indexed documents that are links to files in the root, by the path each resolves to (linkedDocuments). */
  private links: Map<string, string[]> | undefined;
  private needsScan = true;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the next batch runs at the latest, however busy the events (set by the first event after a batch). */
  private deadline: number | undefined;
  private rootCheck: ReturnType<typeof setInterval> | undefined;
  /** The delay before the next retry of a locked or failed batch. */
  private retryDelay = LOCK_RETRY_MS;
  private state: WatchState = "indexing";
  /** The system refused the watch (WATCH_FAILED, reported): this repository is no longer watched. */
  private failed = false;
  /** Subfolders the watcher may not read (reported once each): everything else is watched. */
  private readonly unwatchable = new Set<string>();

  /** The index folder as last seen: a repository renamed (`repo rename`) is the one registered with this folder. */
  private indexFolder: string | undefined;
  /** Set once a watch under the repository's new name has taken over. */
  followed = false;

  constructor(
    private repo: Repository,
    private readonly context: Context,
  ) {
    this.indexFolder = folderIdentity(repo.dir);
    this.startWatcher();
  }

  /**
   * The repository this one now is, renamed (`repo rename`) or pointed at another folder (`config set
   * repositories.<name>.path`): the one registered with its index folder. A repository removed and added again
   * has another index folder, and is not this one. One never indexed (its folder was missing) has no index folder to
   * follow, and every other never-indexed repository "had" its none: the watch took up the first of them (s24 review
   * D4). It is the one registered under its name (pointed elsewhere), or, its name gone, at its folder (renamed: a
   * folder is registered under one name at a time); removed and added again for its folder, it is indistinguishable
   * from renamed, and no other folder's text is indexed by following it.
   */
  movedTo(registered: Repository[]): Repository | undefined {
    if (this.indexFolder !== undefined) return registered.find((repo) => folderIdentity(repo.dir) === this.indexFolder);
    return registered.find((repo) => repo.name === this.name) ?? registered.find((repo) => repo.path === this.path);
  }

  get name(): string {
    return this.repo.name;
  }

  get path(): string {
    return this.repo.path;
  }

  /** Still watching: not stopped (a removed repository stops its watch). */
  get active(): boolean {
    return !this.stopped;
  }

  /**
   * The repository's settings as config.yaml holds them now: a changed exclude, file type or ignore-file setting
   * brings a full incremental run, which applies it to every file (the run adds and removes what it now takes in or
   * leaves out). A repository removed meanwhile keeps the settings it had, and its batch is refused.
   */
  private refreshSettings(registered = listRepositories(this.context.home)): boolean {
    const current = registered.find((r) => r.name === this.repo.name);
    if (!current || current.path !== this.repo.path) return false;
    const rules = (r: Repository) => JSON.stringify([r.exclude, r.fileTypes, r.ignoreFiles]);
    const changed = rules(current) !== rules(this.repo);
    if (changed) this.needsScan = true;
    this.repo = current;
    return changed;
  }

  /**
   * The registry's look (every REGISTRY_CHECK_MS): settings changed since are applied now, not at the next file
   * event (an exclude set under a running watch left the excluded notes searchable until another file changed: s26
   * user F16).
   */
  followSettings(registered: Repository[]): void {
    if (this.active && this.refreshSettings(registered)) this.schedule();
  }

  /** The first incremental run. */
  start(): Promise<void> {
    return this.tick();
  }

  /** Run a batch in turn; what goes wrong is reported, never thrown into a timer. */
  private tick(): Promise<void> {
    return this.context.serial(() =>
      this.flush().catch((error) => {
        this.context.options.onError?.(error, this.repo.name);
        // What failed before its batch was applied (the index could not be opened: busy, a full disk) is still
        // pending; without a retry it would wait for the next file event.
        if (!this.stopped && (this.pending.size > 0 || this.needsScan)) {
          this.retry(toResearcherError(error).code === "LOCKED" ? "locked" : "failed");
        }
      }),
    );
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.rootCheck);
    this.watcher?.close();
    this.watcher = undefined;
  }

  /** Set by `stop`: nothing is scheduled any more (the server closing, or the repository removed). */
  private stopped = false;

  private get closed(): boolean {
    return this.context.closed || this.stopped;
  }

  /** Watch the root; a root that is missing or not a folder is waited for. A refused watch throws WATCH_FAILED. */
  private startWatcher(): void {
    this.watcher?.close();
    this.watcher = undefined;
    const stats = statOf(this.repo.path);
    if (!stats?.isDirectory()) {
      this.waitForRoot();
      return;
    }
    try {
      this.watcher = watch(this.repo.path, { recursive: true }, (_event, name) => this.onEvent(name));
    } catch (error) {
      if (!isFolder(this.repo.path)) {
        this.waitForRoot(); // gone between the two calls
        return;
      }
      this.failed = true;
      throw watchError(this.repo, error);
    }
    this.rootIno = stats.ino;
    this.watcher.on("error", (error) => this.onWatcherError(error));
  }

  private onWatcherError(error: unknown): void {
    if (this.closed) return;
    const unreadable = unwatchableFolder(error, this.repo.path);
    if (unreadable !== undefined) {
      // The rest is still watched, and a rescan would meet the same folder again (it used to loop): say it once.
      if (!this.unwatchable.has(unreadable)) this.context.options.onError?.(unwatchableError(this.repo, unreadable, error), this.repo.name);
      this.unwatchable.add(unreadable);
      return;
    }
    this.watcher?.close();
    this.watcher = undefined;
    if (isWatchLimit(error)) {
      this.failed = true;
      this.context.options.onError?.(watchError(this.repo, error), this.repo.name);
      return;
    }
    // Anything else (a queue overflow, the root going away): events may have been lost, so scan.
    this.needsScan = true;
    this.schedule();
  }

  private onEvent(name: string | Buffer | null | undefined): void {
    if (this.closed) return;
    if (name === null || name === undefined || name === "") {
      this.schedule(); // the root itself: the batch checks whether it still exists
      return;
    }
    const path = String(name).split("\\").join("/");
    if (this.isIgnoreFile(path)) {
      this.replan(dirname(path));
      return;
    }
    // A saved page coming or going decides whether the `<page>_files/` beside it is left out, as a run decides it.
    const savedFiles = savedPageFolderOf(path);
    if (savedFiles && isFolder(join(this.repo.path, savedFiles))) this.replan(savedFiles);
    // Hidden and excluded paths (editor temp files, .git) are never candidates and never hold any.
    if (!isCandidateFolder(path, this.repo)) return;
    if (this.unwatchable.has(path) && isListable(join(this.repo.path, path))) {
      // Readable now (a chmod is an event): a new watcher takes it in; the folder event below diffs its files.
      this.unwatchable.delete(path);
      // This runs in fs.watch's listener, where a throw would end the process (`serve --watch`): reported instead.
      try {
        this.startWatcher();
      } catch (error) {
        this.context.options.onError?.(toResearcherError(error), this.repo.name);
        return;
      }
    }
    if (this.pending.size >= OVERFLOW_PATHS) {
      this.pending.clear();
      this.needsScan = true;
    }
    // A path already pending keeps the time of its first event: a file written without pause sends events all along.
    if (!this.needsScan && !this.pending.has(path)) this.pending.set(path, Date.now());
    this.schedule();
  }

  /** An ignore file of a folder that could hold candidates, when the repository honours them. */
  private isIgnoreFile(path: string): boolean {
    return (
      this.repo.ignoreFiles &&
      IGNORE_FILES.includes(basename(path)) &&
      isCandidateFolder(dirname(path) === "." ? "" : dirname(path), this.repo)
    );
  }

  /** Diff a folder's subtree against the index, as if it had moved in; the root's is the full incremental scan. */
  private replan(folder: string): void {
    if (folder === ".") {
      this.pending.clear();
      this.needsScan = true;
    } else if (!this.needsScan && !this.pending.has(folder)) this.pending.set(folder, Date.now());
    this.schedule();
  }

  private schedule(delay = this.context.debounceMs): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    const now = Date.now();
    this.deadline ??= now + this.context.maxDelayMs;
    this.timer = setTimeout(() => void this.tick(), Math.min(delay, Math.max(0, this.deadline - now)));
    this.report(this.state === "locked" ? "locked" : "watching");
  }

  private report(state: WatchState): void {
    this.state = state;
    this.context.options.onStatus?.({ repository: this.repo.name, state, pending: this.pending.size });
  }

  private waitForRoot(): void {
    if (this.rootCheck || this.closed) return;
    this.report("waiting");
    this.context.options.onFolder?.(this.repo.name, false, this.repo.path);
    this.rootCheck = setInterval(() => {
      if (!isFolder(this.repo.path)) return;
      clearInterval(this.rootCheck);
      this.rootCheck = undefined;
      this.needsScan = true;
      this.context.options.onFolder?.(this.repo.name, true, this.repo.path);
      try {
        this.startWatcher();
      } catch (error) {
        return this.context.options.onError?.(error, this.repo.name);
      }
      this.schedule(0);
    }, ROOT_CHECK_MS);
  }

  /** A root refused as it stands: looked at once a second, and scanned again once the path is another folder. */
  private waitForOtherRoot(): void {
    if (this.rootCheck || this.closed) return;
    const refused = statOf(this.repo.path)?.ino;
    this.rootCheck = setInterval(() => {
      if (statOf(this.repo.path)?.ino === refused) return;
      clearInterval(this.rootCheck);
      this.rootCheck = undefined;
      this.needsScan = true;
      this.schedule(0);
    }, ROOT_CHECK_MS);
  }

  /** Apply what is pending: a scan, or the pending paths in batches. Runs inside `serial`. */
  private async flush(): Promise<void> {
    this.deadline = undefined;
    if (this.closed || this.failed) return;
    const root = statOf(this.repo.path);
    if (!root?.isDirectory()) {
      // Its documents stay: an unmounted drive or a folder being replaced is not a deletion.
      this.watcher?.close();
      this.watcher = undefined;
      this.pending.clear();
      this.needsScan = true;
      this.waitForRoot();
      return;
    }
    if (!this.watcher || root.ino !== this.rootIno) {
      this.startWatcher(); // gone and back within one debounce: the old watcher watches nothing
      this.needsScan = true;
    }
    this.refreshSettings();
    if (this.needsScan) return this.scan();
    if (this.pending.size === 0) return this.report("watching");
    this.report("indexing");
    const { paths, waiting } = this.resolvePending();
    if (paths === undefined) return this.scan(); // no index yet
    if (paths.some((p) => p.gone) && isEmptyFolder(this.repo.path)) {
      // Everything deleted at once looks like an unmounted drive: the scan refuses it with a hint, as `index` does.
      this.pending.clear();
      return this.scan();
    }
    const list = paths.map((p) => p.path);
    for (let start = 0; start < list.length; start += MAX_BATCH) {
      if (this.closed) return;
      const chunk = list.slice(start, start + MAX_BATCH);
      const applied = await this.apply(chunk);
      if (applied !== "done") {
        // This chunk and the rest wait for the retry; a file that is gone by then removes its document as usual.
        for (const path of list.slice(start)) this.pending.set(path, Date.now());
        return this.retry(applied);
      }
    }
    this.retryDelay = LOCK_RETRY_MS;
    if (waiting) this.schedule();
    else this.report("watching");
  }

  /**
   * Turn event paths into the paths `indexFiles` should look at, and take them off `pending`. Files modified within
   * the last debounce stay pending for another round, their writer probably not done, up to `maxDelayMs` after their
   * first event. `undefined`: no index yet.
   */
  private resolvePending(): { paths: { path: string; gone: boolean }[] | undefined; waiting: boolean } {
    if (!Store.exists(this.repo.dir)) return { paths: undefined, waiting: false };
    const store = Store.open(this.repo.dir);
    const chosen = new Map<string, boolean>(); // path → gone
    const now = Date.now();
    const recent = now - this.context.debounceMs;
    // Taken off `pending` as a whole: a path put back while looping over the map would be visited again at once.
    const taken = [...this.pending];
    this.pending.clear();
    const waiters = new Map<string, number>(); // still being written: back to pending, with their first event's time
    const links = new Map<string, boolean>(); // folders looked at for folderLinkAbove
    try {
      const failed: Failed = { stamps: store.failureStamps(), settings: failureSettings(loadConfig(this.context.home), this.repo) };
      const seen = new Set(taken.map(([path]) => path));
      // Rounds: the batch's paths, then the other hard links of the files it reads (otherLinks), looked at alike.
      for (let round = taken; round.length > 0; ) {
        const shared = new Map<number, number>(); // inode number → first event's time, of files with other links
        for (const [path, since] of round) {
          // A link made, changed or gone: the links are looked for again.
          if (this.links && mayBeLink(join(this.repo.path, path))) this.links = undefined;
          // Under a folder that is a link nothing is there, as for a run, which never enters one; the link itself is
          // looked at (a folder of its own, or one replaced by a link): discoverFiles finds nothing in it.
          const stats = folderLinkAbove(this.repo.path, path, links) === undefined ? statOf(join(this.repo.path, path)) : undefined;
          if (stats?.isDirectory()) {
            if (store.document(path)) chosen.set(path, true); // a file replaced by a folder of its name
            this.resolveFolder(store, path, chosen, failed);
            continue;
          }
          if (!stats) {
            // A file, or a folder moved or deleted: its documents go.
            if (isCandidate(path, this.repo) && store.document(path)) chosen.set(path, true);
            // A name that is not UTF-8, as fs.watch decodes it: no file by that name, but one is there, and the batch
            // records why it cannot be read, as a run does (it was dropped without a word).
            else if (path.includes("\ufffd") && isCandidate(path, this.repo)) chosen.set(path, false);
            for (const doc of store.documentsUnder(path)) chosen.set(doc.path, true);
            continue;
          }
          // A folder replaced by a file of its name: what was indexed under it is gone.
          for (const doc of store.documentsUnder(path)) chosen.set(doc.path, true);
          const verdict = candidacy(path, this.repo);
          if (verdict === "unknown") this.reportOnce(path, "under an ignore file that cannot be read: left as it was indexed");
          // A file now left out (a script whose `#!` line went: its content decides) loses its document, as a run's.
          if (verdict === "out" && store.document(path)) chosen.set(path, true);
          if (verdict !== "in") continue;
          if (sameStamp(store.document(path), stats) || failedUnchanged(failed, path, stats)) continue;
          // Still being written: it waits, but no longer than any change waits for its batch (a log is never quiet,
          // a clock in the future never passes).
          if (stats.mtimeMs > recent && now - since < this.context.maxDelayMs) {
            waiters.set(path, since);
            continue;
          }
          chosen.set(path, false);
          if (stats.nlink > 1) shared.set(stats.ino, since);
        }
        round = otherLinks(store, shared, seen);
      }
      // A document read through a link changes with the file it links to: an event names only that file.
      if (chosen.size > 0) {
        const batch = [...chosen.keys()];
        for (const path of batch) for (const link of this.linksTo(store, path, batch)) chosen.set(link, false);
      }
    } catch (error) {
      for (const [path, since] of taken) this.pending.set(path, Math.min(since, this.pending.get(path) ?? since)); // tried again
      throw error;
    } finally {
      store.close();
    }
    // A path still being written comes back for another round, as pending since its first event.
    for (const [path, since] of waiters) this.pending.set(path, Math.min(since, this.pending.get(path) ?? since));
    const paths = [...chosen].map(([path, gone]) => ({ path, gone })).sort((a, b) => (a.path < b.path ? -1 : 1));
    return { paths, waiting: waiters.size > 0 };
  }

  /**
   * The indexed documents that are links resolving to `path` (a note linked into a second folder): a watch kept
   * their old text when the file they link to changed or went (s24 hostile H6). Found once by looking at every
   * document, then kept until a scan or an event on a link changes them. The batch's own paths are looked at too: a
   * link made under the watch is not in the index yet when the event that made it invalidates them, and its target's
   * later changes left it as first read (s25b retest N3). Kept only once whole: a map cut short by a failed read
   * would pass for one with no links (s26 review F5).
   */
  private linksTo(store: Store, path: string, batch: string[]): string[] {
    this.links ??= linkMap(store, this.repo.path, batch);
    return this.links.get(path) ?? [];
  }

  /** A folder event: its candidate files that differ from the index, and indexed documents no longer in it. */
  private resolveFolder(store: Store, folder: string, chosen: Map<string, boolean>, failed: Failed): void {
    let found: Discovery;
    try {
      found = discoverFiles(this.repo.path, this.repo, folder);
    } catch {
      return; // gone again meanwhile: a later event says so
    }
    const stored = new Map(store.documentsUnder(folder).map((doc) => [doc.path, doc]));
    const discovery = inRepository(found, folder, this.repo);
    keepUnmounted(discovery, store.mounts(), this.repo, folder);
    const plan = planChanges(discovery, stored, { failed });
    for (const file of [...plan.added, ...plan.changed]) chosen.set(file.path, false);
    for (const path of plan.gone) chosen.set(path, true);
    // What the walk could not take (an ignore file it cannot read, a FIFO, a link out): said once, as a run says it.
    for (const { path, reason } of discovery.problems) this.reportOnce(path, reason);
  }

  /** Problems already reported, so that each is said once however many events touch it. */
  private readonly reported = new Set<string>();

  private reportOnce(path: string, reason: string): void {
    const key = `${path}\0${reason}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.context.options.onError?.(new ResearcherError("FILE_UNREADABLE", `${path}: ${reason}`), this.repo.name);
  }

  /** One `indexFiles` batch; "locked" when another writer holds the repository, "failed" when it failed (reported). */
  private async apply(paths: string[]): Promise<"done" | "locked" | "failed"> {
    const { home, embedders, options } = this.context;
    const run = () => indexFiles(home, this.repo, paths, { noEmbed: options.noEmbed, embedders });
    try {
      const summary = await (options.exclusive ? options.exclusive(run) : run());
      this.emit(summary, paths, false);
    } catch (error) {
      if (toResearcherError(error).code === "LOCKED") return "locked"; // a writer's lock, or SQLite busy: wait
      if (!this.stopIfRemoved(error)) this.reportFailure(error);
      return "failed";
    }
    return "done";
  }

  /**
   * A failed batch or scan, said unless the registry's look says it already: config.yaml missing fails each retry
   * too, and its error came again at every one (s25b retest N2).
   */
  private reportFailure(error: unknown): void {
    if (toResearcherError(error).message !== this.context.registryProblem) this.context.options.onError?.(error, this.repo.name);
  }

  /**
   * A repository removed while watched (`repo remove`) is watched no more, and says so: its index must not come
   * back. One renamed (`repo rename`) is watched on under its new name, whose first run applies what was pending.
   */
  private stopIfRemoved(error: unknown): boolean {
    if (toResearcherError(error).code !== "REPO_NOT_FOUND") return false;
    this.stop();
    this.context.follow?.();
    if (!this.followed) reportRemoved(this.context, this.repo.name, toResearcherError(error));
    return true;
  }

  private async scan(): Promise<void> {
    const { home, embedders, options } = this.context;
    this.needsScan = false;
    this.pending.clear();
    this.links = undefined;
    this.report("indexing");
    const run = () => indexRepository(home, this.repo, { noEmbed: options.noEmbed, embedders });
    try {
      const summary = await (options.exclusive ? options.exclusive(run) : run());
      this.emit(summary, [], true);
      this.retryDelay = LOCK_RETRY_MS;
      clearInterval(this.rootCheck); // a root waited for is here
      this.rootCheck = undefined;
      this.report("watching");
    } catch (error) {
      this.needsScan = true;
      if (toResearcherError(error).code === "LOCKED") return this.retry("locked");
      if (this.stopIfRemoved(error)) return;
      this.reportFailure(error);
      if (!isFolder(this.repo.path)) return this.report("waiting"); // the next flush waits for it to come back
      // A folder refused as it stands, emptied or now a link elsewhere (a folder being replaced): the next event
      // tries again, and so does the folder turning into another (the real one back: its events went to the old
      // one's watcher, and the watch was never heard of again: s21 hostile #9). A file in the index folder's place
      // is no fault of the root's, whose change was waited for in vain: that is tried again in time (s22 review F7).
      if (isResearcherError(error) && error.code === "PATH_NOT_FOUND" && !inTheWay(this.repo.dir)) {
        this.waitForOtherRoot();
        return this.report("watching");
      }
      this.retry("failed");
    }
  }

  /**
   * Try the pending work again later, each time waiting twice as long (up to a ceiling); an event brings it forward.
   */
  private retry(why: "locked" | "failed"): void {
    this.report(why === "locked" ? "locked" : "watching");
    // The delay is meant, not a debounce: the deadline must not cut it short.
    this.deadline = Date.now() + this.retryDelay;
    this.schedule(this.retryDelay);
    this.retryDelay = Math.min(this.retryDelay * 2, why === "locked" ? LOCK_RETRY_MAX_MS : FAILED_RETRY_MAX_MS);
  }

  private emit(summary: IndexSummary, paths: string[], scan: boolean): void {
    this.indexFolder = folderIdentity(this.repo.dir); // the first run makes it
    this.context.options.onBatch?.({
      repository: summary.repository,
      indexed: summary.indexed,
      ocr_pages: summary.ocr_pages,
      removed: summary.removed,
      failed: summary.failed,
      paths,
      seconds: summary.seconds,
      scan,
      failures: summary.failures,
      warnings: summary.warnings,
    });
  }
}

/**
 * A folder's discovery as a full run would see it: the ignore rules of the folders above it apply too. By the rules
 * of names: the planner looks at what the files it would read hold (isMinified), and an unchanged one is not opened.
 */
function inRepository(found: Discovery, folder: string, repo: Repository): Discovery {
  const byName = { content: false };
  // An ignore file above the folder that cannot be read: the folder is left as indexed (unlisted), as a run leaves it.
  const unknown = found.files.some((file) => candidacy(file.path, repo, byName) === "unknown");
  return {
    ...found,
    files: unknown ? [] : found.files.filter((file) => isCandidate(file.path, repo, byName)),
    unlisted: [...found.unlisted, ...(unknown ? [folder] : [])],
  };
}

/**
 * The indexed and failed paths not looked at yet that are other hard links of files the batch reads (`shared`:
 * their inode numbers), each with the time of its twin's first event. inotify names a write by the name it went
 * through alone, and the other names kept their old text for as long as the watch ran (s29 hostile F1). They are
 * looked at as paths of an event are, stamp first: a number that another device's file shares (a mount inside the
 * root) costs that check. A name outside the repository, or one the watch leaves out, sends no event at all.
 */
function otherLinks(store: Store, shared: ReadonlyMap<number, number>, seen: Set<string>): [string, number][] {
  const others = store.pathsWithInodes([...shared.keys()]).filter(({ path }) => !seen.has(path));
  for (const { path } of others) seen.add(path);
  return others.map(({ path, ino }) => [path, shared.get(ino)!]);
}

/** The indexed and failed documents, and `batch`, that are links into the folder, by each path they lead to. */
function linkMap(store: Store, folder: string, batch: string[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  const root = realpathOf(folder);
  if (!root) return map;
  // Failed paths too: a link that led nowhere when indexed is read once the file it names appears (s25 hostile F3).
  for (const doc of new Set([...store.documents().keys(), ...store.failures().map((f) => f.path), ...batch])) {
    for (const target of linkTargets(folder, root, doc)) map.set(target, [...(map.get(target) ?? []), doc]);
  }
  return map;
}

/**
 * Where an indexed document that is a link leads, as paths in the root (`root`: its real path): each link it passes
 * through and the file at the end, so that a change to any of them reads it again, the last one replaced by a link
 * out of the repository too (it kept its old text: s25 hostile F3). A link to nothing leads where its text says: the
 * file it linked to, just deleted, or not yet made.
 */
function linkTargets(folder: string, root: string, path: string): string[] {
  const targets: string[] = [];
  let absolute = join(folder, path);
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    try {
      if (!lstatSync(absolute).isSymbolicLink()) break;
      absolute = resolve(realpathOf(dirname(absolute)) ?? dirname(absolute), readlinkSync(absolute));
    } catch {
      break; // nothing there: the path the last link names is the target
    }
    // A hop outside the root is followed, not recorded: a chain out and back in (`a.md → /elsewhere/l.md →
    // real.md`) still leads to a file of the repository (s25b review F3).
    if (absolute !== root && isInside(root, absolute)) targets.push(relative(root, absolute).split(sep).join("/"));
  }
  return targets;
}

/** Links followed in one chain at most, as the system's own limit (ELOOP past 40). */
const MAX_LINK_HOPS = 40;

/** Whether the path is a link, or nothing now (what was there may have been one). */
function mayBeLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return true;
  }
}

function realpathOf(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false }) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether something other than a folder stands where the index folder belongs: a file, or a link to nothing (an
 * index on a disk not mounted now, which the watch waited in vain for the root to change over: s23 review R3).
 */
function inTheWay(dir: string): boolean {
  const stats = statOf(dir);
  return stats === undefined ? danglingLink(dir) !== undefined : !stats.isDirectory();
}

function isListable(path: string): boolean {
  try {
    readdirSync(path);
    return true;
  } catch {
    return false;
  }
}

function isWatchLimit(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOSPC" || code === "EMFILE" || /ENOSPC|no space left|too many open files/i.test(describeError(error));
}

/**
 * Why one folder cannot be watched while the rest can: it may not be read, or its path is past the system's length
 * (a rescan meets it again, so the watch reports it once and goes on; a rescan loop ran three times a second).
 */
const UNWATCHABLE_FOLDER = new Set(["EACCES", "EPERM", "ENAMETOOLONG"]);

/**
 * The folder under `root` the recursive watcher could not watch (EACCES, which Bun reports as code EPERM, or
 * ENAMETOOLONG), or undefined for any other watcher error. The root itself is not one: without it nothing is watched.
 */
function unwatchableFolder(error: unknown, root: string): string | undefined {
  const { code, path } = (error ?? {}) as NodeJS.ErrnoException;
  if (!UNWATCHABLE_FOLDER.has(code ?? "") || typeof path !== "string" || !path.startsWith(`${root}/`)) return undefined;
  return path.slice(root.length + 1);
}

function unwatchableError(repo: Repository, folder: string, error: unknown): ResearcherError {
  const absolute = join(repo.path, folder);
  const tooLong = (error as NodeJS.ErrnoException).code === "ENAMETOOLONG";
  // The system's message holds the whole path again: past the length, the code alone keeps the error one line.
  const [shown, why] = tooLong ? [shortened(folder, 120), "ENAMETOOLONG"] : [folder, describeError(error)];
  return new ResearcherError("PATH_NOT_FOUND", `cannot watch ${shown}/ (${why}); the rest of '${repo.name}' is watched`, {
    hint: tooLong
      ? "its path is longer than the system allows: move or rename folders above it"
      : `give yourself read access (\`ls -ld ${absolute}\` shows who has it)`,
    cause: error,
  });
}

function watchError(repo: Repository, error: unknown): ResearcherError {
  const where = `cannot watch ${repo.path} (repository '${repo.name}')`;
  if (!isWatchLimit(error)) {
    return new ResearcherError("WATCH_FAILED", `${where}: ${describeError(error)}`, {
      hint: "check that you may read the folder",
      cause: error,
    });
  }
  const instances = /EMFILE|too many open files/i.test(`${(error as NodeJS.ErrnoException).code} ${describeError(error)}`);
  return new ResearcherError("WATCH_FAILED", `${where}: the system's limit of file watches is reached (${describeError(error)})`, {
    hint: instances
      ? "raise fs.inotify.max_user_instances, e.g. `sudo sysctl fs.inotify.max_user_instances=1024`"
      : "raise fs.inotify.max_user_watches, e.g. `sudo sysctl fs.inotify.max_user_watches=524288` (add it to /etc/sysctl.conf to keep it)",
    cause: error,
  });
}
