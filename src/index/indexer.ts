/**
 * The index pipeline for one repository. A run plans its changes (new, changed, gone — from discovery and the
 * stored sizes and mtimes), then runs the per-document step, `prepareDocument` (read → convert → chunk), for each
 * new or changed file; a single-file add (`indexFiles`: MCP `add_to_index`, watch mode) runs the same step without
 * walking the tree. A changed file is read once and hashed, and converted only when its SHA-256 differs. Writes go
 * in batches of whole documents, each batch one transaction. Heavy formats convert in a worker pool.
 */
import type { OcrImage, OcrReading } from "../ocr-reading.ts";
import { readdirSync, rmdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { chunkDocument, type ChunkOptions, MAX_DOCUMENT_FRAGMENTS, tooManyFragments } from "./chunk.ts";
import { codeFragments } from "./code-chunk.ts";
import { loadConfig, type Config } from "../config.ts";
import { languageOf } from "../convert/code-languages.ts";
import { formatOf, OCR_FORMATS, ocrPagesOf, TEXT_FORMATS } from "../convert/convert.ts";
import { type ConvertedDocument, failedForOcrOff, type OcrPage } from "../convert/document.ts";
import {
  type ConvertListeners,
  ConvertPool,
  conversionLimits,
  conversionSettings,
  convertOptions,
  failureSettings,
} from "../convert/pool.ts";
import {
  candidacy,
  checkRoot,
  type DiscoveredFile,
  discoverFiles,
  folderLinkAbove,
  isEmptyFolder,
  keepUnmounted,
  mountsAbove,
  leftOutBecause,
  stampOf,
  UNDECODABLE_NAME,
  unreachable,
  wayBackIn,
} from "./discover.ts";
import {
  confinedReader,
  freeBytes,
  inWalkedFolder,
  isFileAt,
  movedRoot,
  movedRootHint,
  rootRecord,
  notRegular,
  sha256,
  type ReadResult,
  type RootRecord,
} from "../files.ts";
import { type Failed, planChanges, recordedStamp, type Stamp } from "./plan.ts";
import { chunkingChanges, currentChunking, readOtherwise, recordedChunking } from "./chunking.ts";
import { gitInfoCache } from "./git-info.ts";
import { chooseModel, EmbedderCache, isOtherModel, isPathLike, modelHold } from "../embed/embedder.ts";
import { embeddingText, embedOrDefer, embedRepository, modelOfVectors, refuseOtherModel } from "./embed-pass.ts";
import {
  damagedIndex,
  describeError,
  isResearcherError,
  isTransient,
  OPEN_FILES_HINT,
  OPEN_FILES_LIMIT,
  ResearcherError,
  toResearcherError,
} from "../errors.ts";
import { acquireWriterLock, leftoverTempFiles, withConfigLock } from "../lock.ts";
import { forEachConcurrently } from "../serial.ts";
import { keepRepositoryModel, listRepositories, type Repository } from "../repos.ts";
import { HEADING_SEPARATOR, Store, type DocumentInput, type Fragment, type RecordedFailure, type StoredDocument } from "../store/store.ts";
import { dropVectors, syncVectorIndex } from "../search/vectors.ts";
import { calibrateRepository } from "../search/calibration.ts";
import { clearImpacts, maintainImpactLists, updateImpacts } from "../search/bm25.ts";

/** At most this many folder links are named in a summary (a tree of links is no list to print). */
const MAX_LISTED_LINKS = 100;

export interface IndexSummary {
  repository: string;
  indexed: number;
  skipped: number;
  removed: number;
  /** Files that failed in this run (`failures` says why). */
  failed: number;
  failures: { path: string; reason: string }[];
  /**
   * Files that failed before and have not changed since: not tried again, their failures kept (`status` lists them).
   */
  failed_unchanged: number;
  /** Files not indexed because of their type, by extension: `{"pptx": 12}`. */
  skipped_types: Record<string, number>;
  /**
   * Of `skipped_types[""]`, the files whose `#!` line names a code language researcher reads
   * (Discovery.skippedScripts).
   */
  skipped_scripts: number;
  /** Generated and vendored code left out, by rule: `{"node_modules/": 3, "dist/": 1, "*.min.js": 2}`. */
  skipped_generated: Record<string, number>;
  /** Links to folders, never followed, by path (`["linked/"]`; at most MAX_LISTED_LINKS of them). */
  skipped_links: string[];
  /** Fragments written in this run. */
  fragments: number;
  /** Pages recognised by OCR in this run (scanned PDF pages): not those read back from a run cut short. */
  ocr_pages: number;
  documents_total: number;
  fragments_total: number;
  /** Fragment texts embedded in this run (unchanged texts are never embedded twice). */
  embedded: number;
  /** The model the repository's vectors come from, or null for BM25 only. */
  model: string | null;
  /** Fragment texts still without a vector because the model could not be loaded (offline first run). */
  embeddings_pending: number;
  /** What went wrong without failing the run, each with what to do. */
  warnings: string[];
  seconds: number;
}

/** What the document pass of a run counts (the embedding pass adds the rest). */
type RunCounts = Omit<IndexSummary, "seconds" | "embedded" | "model" | "embeddings_pending">;

/**
 * `merge`: the full-text index is merged into one segment after a large run, `done`/`total` in FTS5 pages. `ocr`:
 * an `index` event sent as OCR starts on a page of the file at `path` (a long scan is minutes within one file).
 */
export type IndexProgress = {
  phase: "scan" | "index" | "merge" | "embed";
  done: number;
  total: number;
  path?: string;
  ocr?: OcrPage;
};

export interface IndexOptions {
  /** Drop the repository's index first and rebuild it from the files. */
  rebuild?: boolean;
  /** Keep fragments, drop and recompute every vector (after changing the model). */
  embeddingsOnly?: boolean;
  /** Skip embeddings for this run (the repository's `embed: false` does it for good). */
  noEmbed?: boolean;
  /**
   * Let a run find an empty repository folder and remove every document, and remove the documents of a folder that
   * was a mount and is not now (otherwise refused, or kept: an unmounted drive?).
   */
  allowEmpty?: boolean;
  /** `--model`: overrides the configured model, and once the repository is embedded with it, becomes its model. */
  model?: string;
  /** Try every failed file again, unchanged or not (after fixing something outside them, e.g. an OCR language). */
  retryFailed?: boolean;
  embedders?: EmbedderCache;
  onProgress?: (progress: IndexProgress) => void;
}

/** What the per-document step makes of one file. */
export type Prepared =
  /** `reused`: its converted text came from the index (no OCR ran for it in this run); `ocrResumed`: of its OCR
   * pages, those read back from a conversion cut short (DocumentSettings.ocrReadings) or from its earlier version's
   * page images (DocumentSettings.ocrImages), not recognised in this run. */
  | {
      kind: "document";
      replaces: boolean;
      doc: DocumentInput;
      fragments: Fragment[];
      hashes: string[];
      reused?: boolean;
      ocrResumed?: number;
      warnings?: string[];
    }
  | { kind: "unchanged"; id: number; stamp: Stamp }
  /** `gone`: the path holds no document any more (a link out of the root, a scan while OCR is off): the indexed one
   * goes too. */
  | ({ kind: "failed"; gone?: boolean /** The bytes' hash, when they were read. */; hash?: string } & RecordedFailure)
  /** Deleted after it was listed: gone, like a file the plan found missing, not a failure. */
  | { kind: "vanished"; path: string };

/** What the per-document step needs to know about the repository's settings. */
export interface DocumentSettings {
  chunk: ChunkOptions;
  maxBytes: number;
  pool: ConvertPool;
  /** The repository folder as the session checked it: `read` is confined to it, and the run records it. */
  root: RootRecord | undefined;
  /** Reads a repository file, confined to its root (files.ts). */
  read: (path: string, maxBytes: number) => ReadResult;
  /** Files to re-read and re-chunk even when their content hash is unchanged (their chunking settings changed). */
  force: (path: string) => boolean;
  /** The chunking settings as recorded in the store once a complete run has applied them. */
  chunking: string;
  /** What a conversion's outcome depends on besides the file (conversionSettings): kept converted text records it. */
  conversion: string;
  /** The same with the time and memory limits (failureSettings): a failure is stamped with it. */
  failure: string;
  /** A conversion the index kept (OCR'd text) of a file with this content hash under these settings, if any. */
  kept: (hash: string) => ConvertedDocument | undefined;
  /** The pages OCR read of a file with this content hash under these settings in a conversion cut short. */
  ocrReadings: (hash: string) => Map<number, OcrReading>;
  /**
   * What OCR read of page images, under these settings, by their pixels: the indexed document's with this id, and
   * those kept at the file's path by conversions cut short (of other bytes).
   */
  ocrImages: (documentId: number | undefined, path: string) => Map<string, OcrReading>;
  /** Keep what OCR read of one page of the file at `path` with this content hash, as it is read. */
  keepOcrReading: (file: { hash: string; path: string }, page: number, reading: OcrReading) => void;
}

/**
 * Writes go in batches of this many documents, or of what `seconds` of converting made (a first run over scanned
 * books committed nothing for an hour, and a kill lost it all), one transaction each, and the WAL is checkpointed
 * between batches once it passes a tenth of the database (at least `walFloor`, at most `walLimit` bytes; see
 * Store.checkpointIfLarger): a fixed 64 MB was a quarter of a 100k-fragment index on top of it. Tests make them small.
 */
export const WRITE_BATCHES = {
  documents: 1000,
  seconds: 30,
  /** The first batch of a run: what was read in its first seconds is searchable then, not after a scan's OCR. */
  firstSeconds: 2,
  walLimit: 64 * 2 ** 20,
  walFloor: 8 * 2 ** 20,
  walShare: 0.1,
};

/** What a write session hands its body: the open store, the config and the shared conversion pool. */
interface Session {
  store: Store;
  config: Config;
  pool: ConvertPool;
  embedders: EmbedderCache;
  /** The repository folder as checked when the session began (refuseMovedRoot): reads are confined to it. */
  root: RootRecord | undefined;
}

/**
 * One writer's session on a repository: the writer lock, the store, a conversion pool; afterwards the ANN file is
 * brought in line with the vectors and the WAL truncated. A failure gives the WAL back and says "disk full" as such.
 */
async function writeSession(
  home: string,
  repo: Repository,
  options: { embedders?: EmbedderCache; deferAnn?: boolean; fresh?: boolean; warmUpParsers?: boolean },
  body: (session: Session) => Promise<Omit<IndexSummary, "seconds">>,
): Promise<IndexSummary> {
  const started = performance.now();
  const config = loadConfig(home);
  const release = acquireWriterLock(repo.dir, repo.name, "index");
  // Written only for a repository registered as it was looked up: a watcher of one removed meanwhile (`repo remove`)
  // must not build its index again, for a later `repo add` of the name to adopt. Checked holding the lock, which
  // `repo remove` holds while it unregisters, so a removal cannot come between the check and the writing; and read
  // under config.yaml's lock, which `repo rename` holds from moving the index folder to naming it anew: a run that
  // took the old name's lock in between built a whole second index there, that no repository owned (s21 hostile #2).
  // A config.yaml missing for a moment (replaced by delete and re-create) is no such removal: the run fails as the
  // registry cannot be read, and a watch's batch is tried again (s25 hostile F2).
  let registered: Repository | undefined;
  try {
    registered = withConfigLock(home, () => listRepositories(home, { missing: "refuse" })).find((r) => r.name === repo.name);
  } catch (error) {
    // config.yaml unreadable (missing, half-edited): the lock is given back, or this process held it for good and
    // its watch waited on it as "locked" ever after.
    release();
    removeIfEmpty(repo.dir);
    throw error;
  }
  if (registered?.path !== repo.path) {
    release();
    removeIfEmpty(repo.dir); // the lock's folder, when taking the lock made it
    // A path changed meanwhile (`config set repositories.<name>.path`) is not a removal: a watch of the old one stops.
    const moved = registered && `repository '${repo.name}' now names another folder (${registered.path}, not ${repo.path})`;
    throw new ResearcherError("REPO_NOT_FOUND", moved || `repository '${repo.name}' is no longer registered (removed meanwhile)`, {
      hint: moved
        ? "run it again for the new folder (a `watch` started before follows the old one: restart it)"
        : "`researcher repo list` shows the repositories",
    });
  }
  const embedders = options.embedders ?? new EmbedderCache();
  const pool = conversionPool(config, repo);
  if (options.warmUpParsers) pool.warmUp();
  try {
    const store = Store.open(repo.dir, { create: true, fresh: options.fresh });
    const root = refuseMovedRoot(repo, store);
    // Recorded before the first document is: a first run cut short after a batch left documents and no record, and
    // a repository registered through a link then read as moved to every later run.
    if (root && !store.recordedRoot()) store.recordRoot(root);
    // Checkpoint between batches past a size (BatchWriter), not every 4 MB of WAL: each checkpoint syncs the file.
    store.disableAutoCheckpoint();
    try {
      const summary = await body({ store, config, pool, embedders, root });
      // Every session, not only one that changed something: "kept 30 days" is 30 days, however quiet the folder.
      store.transaction(() => store.pruneRemovedTexts({ bySize: summary.removed > 0 || summary.indexed > 0 }));
      // Temp files their writers left (killed, or a rename that moved the folder under one: s21 retest R3) are
      // nobody's: the writer lock is held, so none is a write under way.
      for (const name of leftoverTempFiles(repo.dir)) rmSync(join(repo.dir, name), { force: true });
      const model = store.embeddings.model();
      if (model) await syncVectorIndex(store, repo.dir, model.dims, { defer: options.deferAnn });
      store.checkpoint();
      const aside =
        store.movedAside &&
        `${Store.dbPath(repo.dir)} could not be used (${store.movedAside.why}): moved aside to ${store.movedAside.to}, and this index was built fresh`;
      const warnings = aside ? [aside, ...summary.warnings] : summary.warnings;
      return { ...summary, warnings, seconds: round((performance.now() - started) / 1000) };
    } catch (error) {
      throw withMovedAside(store, repo, afterFailedWrite(store, repo, error));
    } finally {
      store.close();
    }
  } finally {
    pool.close();
    release();
    if (!options.embedders) await embedders.dispose();
  }
}

export async function indexRepository(home: string, repo: Repository, options: IndexOptions = {}): Promise<IndexSummary> {
  const embed = repo.embed && !options.noEmbed;
  // A first run over a folder that is not there fails before creating an index: the repository stays never indexed.
  if (!Store.exists(repo.dir)) checkRoot(repo.path, repo.name);
  const session = { ...options, fresh: options.rebuild, warmUpParsers: parsesAll(repo, options) };
  return writeSession(home, repo, session, async ({ store, config, pool, embedders, root }) => {
    // `embed: false` in config.yaml, unlike a one-run --no-embed, makes the repository BM25-only: vectors it had go
    // (they stayed, searches stayed hybrid, and each edit left a fragment without a vector no run would embed).
    if (!repo.embed && store.embeddings.model()) dropVectors(store, repo.dir);
    // A rebuild or re-embedding is a fresh choice; otherwise the repository keeps the model it was embedded with.
    const remembered = options.rebuild || options.embeddingsOnly ? undefined : store.embeddings.model();
    const choice = chooseModel(config.embedding, repo.embedding, options.model, remembered);
    const load = () => embedders.get(home, choice);
    // Re-embedding starts only once the new model loads: a missing model must not cost the old vectors. And a model
    // folder named on the command line that holds no model is a typo, not a model offline: refused before anything.
    if ((options.embeddingsOnly || (options.model && isPathLike(options.model))) && embed) await load();
    // Another model than the repository's is refused before anything changes, whatever the folder holds: a run
    // with nothing to embed must not accept what the next one, with a changed file, refuses. `status` and `verify`
    // tell the same hold from the same rule (heldIndexRuns); loading words the error with the model as loaded.
    if (embed && remembered && modelHold(home, repo.name, choice, remembered)) await refuseOtherModel(repo, remembered, load);
    // A rebuild may change the model: the new one must load before the old vectors go (a missing model must not
    // cost them), and they are replaced in the rebuild's own transaction.
    const previousModel = options.rebuild ? modelOfVectors(store) : undefined;
    // Another model, or the same one called otherwise (a prefix, a dtype: its vectors would not compare), or one the
    // index can no longer name (its record damaged): the vectors are replaced.
    const replacesVectors = previousModel === "unknown" || (previousModel !== undefined && isOtherModel(home, choice, previousModel));
    if (replacesVectors && embed) await load();
    let embeddedInRebuild: Awaited<ReturnType<typeof embedRepository>> | undefined;
    // An index of an older text form (FULL_TEXT_VERSION) is written again from its fragments, files unread; its
    // posting and impact lists are rebuilt at the end of the run (maintainImpactLists).
    if (!options.embeddingsOnly && store.fullText.upgrade()) clearImpacts(store);
    const summary = options.embeddingsOnly
      ? embeddingsOnlySummary(repo.name, store.counts())
      : options.rebuild
        ? await store.atomically(async () => {
            clearImpacts(store); // rebuilt at the end, rather than kept up fragment by fragment
            store.deleteOrphanFragments(); // rows of no document (an edit beneath the index): no file brings them back
            store.fullText.clear(); // written anew, never read: a damaged segment stays out (s26 hostile F1)
            // Without embedding, the old vectors stay the index's, unless no one knows their model any more.
            if ((replacesVectors && embed) || previousModel === "unknown") store.embeddings.clear();
            // Every file is read again (none is kept as unchanged); a document whose file cannot be read now (an
            // unreadable folder or file) is kept, as in any run, rather than cleared with the rest.
            const counts = await runIndex(store, repo, documentSettings(store, config, pool, repo, { all: true, root }), options);
            store.fullText.addMissing(); // the documents kept unread (an unreadable file or folder) are found again
            // The run has read back the kept texts it could use; the rebuilt index keeps no removed document's text,
            // as a new index would hold none (a scan removed or moved away stayed in it, s21 F10).
            store.dropRemovedTexts();
            store.dropOcrReadings(); // read back too: none is left behind
            // Until this commits, searches use the old index with its vectors; an interrupted run leaves both.
            if (replacesVectors && embed) embeddedInRebuild = await embedRepository(store, repo, load, options);
            return counts;
          })
        : await runIndex(store, repo, documentSettings(store, config, pool, repo, { root, retry: options.retryFailed }), options);
    // The moment a model switch commits, config.yaml names it too: a kill after the commit must not leave the two
    // disagreeing (every search would then be MODEL_MISMATCH) for the time the steps below take.
    const keepModel = () => {
      const model = store.embeddings.model();
      if (options.model && model?.id === choice.model) keepRepositoryModel(home, repo, model);
    };
    if (embeddedInRebuild) keepModel();
    const changed = summary.fragments + summary.removed;
    if (changed > 0) {
      const onStep = (done: number, total: number) => options.onProgress?.({ phase: "merge", done, total });
      store.fullText.compact(changed / Math.max(1, summary.fragments_total), onStep);
    }
    if (!options.embeddingsOnly) maintainImpactLists(store, changed / Math.max(1, summary.fragments_total));
    const embedding: Awaited<ReturnType<typeof embedOrDefer>> = !embed
      ? { embedded: 0, model: store.embeddings.model()?.id ?? null }
      : embeddedInRebuild
        ? embeddedInRebuild
        : options.embeddingsOnly
          ? await store.atomically(() => {
              store.embeddings.clear();
              return embedRepository(store, repo, load, options);
            })
          : await embedOrDefer(store, repo, load, options);
    if (!embeddedInRebuild) keepModel();
    const model = store.embeddings.model();
    if (embed && model && !("embeddings_pending" in embedding)) {
      // How well each list finds its own passages decides the fusion weights; it searches the fresh ANN file.
      await syncVectorIndex(store, repo.dir, model.dims);
      await calibrateRepository(store, repo.dir, load);
    }
    // A rebuild keeps none of what the index held before, as a new one would not: the pages it freed are zeroed.
    if (options.rebuild) store.scrubFreePages();
    return { embeddings_pending: 0, ...summary, ...embedding, warnings: [...summary.warnings, ...(embedding.warnings ?? [])] };
  });
}

/**
 * A failed run rolled its transaction back; what it wrote is still in the WAL. Truncating it gives the space back,
 * so a full disk does not stay full (and other repositories can still open theirs). The error gets its code where
 * every error does, naming this repository (damaged pages: the rebuild that recovers them).
 */
export function afterFailedWrite(store: Store, repo: Repository, error: unknown): ResearcherError {
  try {
    store.checkpoint();
  } catch {
    // the disk may be too full even for that; the WAL is truncated at the next successful open
  }
  const failure = toResearcherError(error, { repository: repo.name, dir: repo.dir });
  return failure.code === "INTERNAL" ? (damageBehind(store, repo, error) ?? failure) : failure;
}

/**
 * A run that failed after moving an unusable index aside says so: "nothing was changed" (a full disk, a folder not
 * there) was not true, and searches then said the repository was never indexed, with no word of the copy (s26
 * hostile F2). Its hint still holds: the run again builds the index fresh.
 */
function withMovedAside(store: Store, repo: Repository, failure: ResearcherError): ResearcherError {
  if (!store.movedAside) return failure;
  const { to, why } = store.movedAside;
  const message = `${failure.message.replace(/; nothing was changed$/, "")}; ${Store.dbPath(repo.dir)} could not be used (${why}) and was moved aside to ${to}`;
  return new ResearcherError(failure.code, message, { hint: failure.hint, cause: failure });
}

/**
 * An unexpected failure of a write can be damage SQLite met without naming it (a UNIQUE index that no longer holds
 * a path its table does: `UNIQUE constraint failed: documents.path`): its whole check says, and then the failure is
 * INDEX_CORRUPT with the rebuild that recovers it, not `unexpected`.
 */
function damageBehind(store: Store, repo: Repository, error: unknown): ResearcherError | undefined {
  let damage: string | null;
  try {
    damage = store.pageDamage();
  } catch {
    return undefined; // the check failed for the environment's sake (busy, a failing disk): it says nothing of the index
  }
  return damage ? damagedIndex(repo.name, `${describeError(error)} (${damage})`, error) : undefined;
}

/**
 * Free space for a run: 2.5 times the text it will add for text formats (a fresh index is 2.1–2.6 times its text:
 * fragments, full-text index, impact lists; measured on 1M synthetic fragments and on SciFact, and the stepwise
 * merge keeps the WAL on top of it small), half the file size for PDF/DOCX/EPUB (their text is a fraction of the
 * file), plus a margin. A run that would not fit stops before it writes anything.
 */
function checkFreeSpace(repo: Repository, files: DiscoveredFile[], maxFileBytes: number): void {
  // A file over index.max_file_bytes is never read (it fails as too large): it adds nothing.
  const read = files.filter((f) => f.size <= maxFileBytes);
  const needed = read.reduce((sum, f) => sum + f.size * (TEXT_FORMATS.has(formatOf(f.path)) ? 2.5 : 0.5), 4 * 2 ** 20);
  const free = freeBytes(repo.dir);
  if (free < needed) {
    const mb = (bytes: number) => `${Math.ceil(bytes / 2 ** 20)} MB`;
    throw new ResearcherError(
      "DISK_FULL",
      `not enough free space for this run: about ${mb(needed)} needed, ${mb(free)} free at ${repo.dir}; nothing was changed`,
      {
        hint: "free some space (or move RESEARCHER_HOME) and run the command again",
      },
    );
  }
}

/**
 * Index (or drop) the given files of a repository now, without walking the tree: the same per-document step and
 * transactions as a full run. A path the repository would not index (type, exclude, hidden folder, ignore file) is
 * an error, unless it is indexed: then its document goes, as the next full run would drop it. A missing file that
 * is not indexed is no failure to record (any recorded one is cleared): nothing happens, and the caller can tell.
 * The ANN file may be left stale for searches to scan (see SCAN_WHILE_STALE_BELOW): one saved file must not cost
 * a rebuild.
 */
export async function indexFiles(
  home: string,
  repo: Repository,
  paths: string[],
  options: Pick<IndexOptions, "noEmbed" | "embedders" | "model" | "onProgress"> = {},
): Promise<IndexSummary> {
  const onProgress = options.onProgress;
  const verdicts = new Map(paths.map((path) => [path, candidacy(path, repo)]));
  const unwanted = new Set(paths.filter((path) => verdicts.get(path) === "out"));
  return writeSession(
    home,
    repo,
    { embedders: options.embedders, deferAnn: true },
    async ({ store, config, pool, embedders, root: checked }) => {
      const stored = store.documents();
      for (const path of unwanted) {
        if (stored.has(path)) continue;
        const why = leftOutBecause(path, repo);
        throw new ResearcherError("INVALID_INPUT", `'${path}' is not a file repository '${repo.name}' indexes${why ? `: ${why}` : ""}`, {
          hint: `it indexes ${repo.fileTypes.join(", ")} files outside hidden, generated, excluded and ignored folders`,
        });
      }
      const settings = documentSettings(store, config, pool, repo, { root: checked });
      const root = rootIdentity(repo.path);
      const writer = new BatchWriter(store);
      const gone: string[] = [];
      const [recorded, mounts, devices] = [store.mounts(), new Set<string>(), new Map<string, number | undefined>()];
      for (const [done, path] of paths.entries()) {
        onProgress?.({ phase: "index", done, total: paths.length, path });
        // Failures as a run records them, one path each: a batch (watch's) is never refused for one of its paths.
        // Under an ignore file that cannot be read, a path is left as indexed, as a run leaves its folder.
        if (verdicts.get(path) === "unknown") {
          writer.add({ kind: "failed", path, reason: "under an ignore file that cannot be read: left as it was indexed" });
          continue;
        }
        // What discovery would not reach is not indexed by name either (a folder link to an excluded folder, say).
        const why = unwanted.has(path) ? undefined : unreachable(path, repo);
        // A document under a folder since replaced by a link leaves the index without a failure, as in a run, which
        // never enters the link; a path named through a link that the index does not hold says why it is not indexed.
        if (why && stored.has(path) && folderLinkAbove(repo.path, path) !== undefined) {
          gone.push(path);
          continue;
        }
        if (why) {
          writer.add({ kind: "failed", path, reason: why, gone: true });
          continue;
        }
        const file = unwanted.has(path) ? undefined : statFile(repo, path);
        if (file && "reason" in file) {
          writer.add({ kind: "failed", path, reason: file.reason }); // as a run records it: a watch said nothing
          continue;
        }
        if (!file) {
          if (stored.has(path)) gone.push(path);
          // A watch event names a file whose name is not UTF-8 as it decodes (with U+FFFD): no such file, and the
          // batch said nothing of it, where a run records it. One its folder no longer lists (renamed, as the
          // failure says to, or deleted) has no failure left.
          else if (path.includes("\ufffd") && listedIn(join(repo.path, dirname(path)), basename(path)))
            writer.add({ kind: "failed", path, reason: UNDECODABLE_NAME });
          continue;
        }
        // One scan is minutes of OCR: each page is told, as a run tells it (MCP's add_to_index sends it on: s24 agent
        // A2).
        const onOcrPage = onProgress && ((ocr: OcrPage) => onProgress({ phase: "index", done, total: paths.length, path, ocr }));
        writer.add(await prepareDocument(file, stored.get(path), settings, onOcrPage));
        for (const mount of mountsAbove(repo.path, path, devices)) mounts.add(mount);
      }
      writer.flush();
      onProgress?.({ phase: "index", done: paths.length, total: paths.length });
      // A share mounted since the last run, whose files a watch indexed: kept as a run's would be when it goes away.
      if ([...mounts].some((mount) => !recorded.includes(mount))) store.recordMounts([...recorded, ...mounts]);
      const summary = finishRun(store, repo, writer, gone, {
        root,
        rootRecord: settings.root,
        paths,
        failedUnchanged: [],
        failureInodes: new Map(),
        skippedTypes: {},
        skippedScripts: 0,
        skippedGenerated: {},
        skippedLinks: [],
      });
      const choice = chooseModel(config.embedding, repo.embedding, options.model, store.embeddings.model());
      const embedding =
        repo.embed && !options.noEmbed
          ? await embedOrDefer(store, repo, () => embedders.get(home, choice), { onProgress })
          : { embedded: 0, model: store.embeddings.model()?.id ?? null };
      return { embeddings_pending: 0, ...summary, ...embedding, warnings: [...summary.warnings, ...(embedding.warnings ?? [])] };
    },
  );
}

/**
 * Whether a run will parse every source file of the repository (a rebuild, or its first index): then its workers
 * start with the run. An update parses only what changed, often nothing, and starts them with its first file.
 */
function parsesAll(repo: Repository, options: IndexOptions): boolean {
  const code = repo.fileTypes.some((type) => languageOf(`.${type}`) !== null);
  return code && !options.embeddingsOnly && (Boolean(options.rebuild) || !Store.exists(repo.dir));
}

/** The run's conversion pool; source code is parsed into sections of the chunk budget there, in parallel. */
function conversionPool(config: Config, repo: Repository): ConvertPool {
  return new ConvertPool({
    size: config.index.convert_workers || undefined,
    ...conversionLimits(config, repo.ocr),
    convert: convertOptions(config, repo),
  });
}

/**
 * How this run reads documents; `all` (a rebuild) reads every file again, whatever the index holds for it.
 *
 * The chunking settings are part of what an index is: when they change, every document is chunked again. The store
 * records the settings every document was chunked with; a new setting is recorded only by a complete run (runIndex),
 * because a partial batch or a refused run leaves the other documents chunked the old way, and with it the documents
 * that run kept without reading them (`chunking_behind`), which later runs read again until one can. A store that
 * records nothing yet has nothing chunked otherwise: it takes the current settings at once.
 */
function documentSettings(
  store: Store,
  config: Config,
  pool: ConvertPool,
  repo: Repository,
  { all = false, root, retry = false }: { all?: boolean; root?: RootRecord; retry?: boolean } = {},
): DocumentSettings {
  const { tokens, overlap } = config.chunk;
  const [conversion, failure] = [conversionSettings(config, repo), failureSettings(config, repo)];
  const now = currentChunking(config, repo);
  const chunking = JSON.stringify(now);
  if (recordedChunking(store) === undefined) store.meta.set("chunking", chunking);
  const changes = chunkingChanges(recordedChunking(store)!, now);
  // Documents an older chunker gave no fragment (a note of headings alone) are chunked again, once. Scans and images
  // are left out: with no text found they have nothing to gain, and reading them again is OCR.
  const bare = changes.bare ? store.pathsWithoutFragments(BARE_FORMATS) : new Set<string>();
  // A document whose stored metadata was damaged beneath the index is read again: its file holds what it lost.
  const damaged = store.pathsWithDamagedMetadata();
  // Pages OCR left out (past its time or memory limit) are tried again with other limits, or when told to retry
  // failures: the document was indexed, so no failure stamp brings it back.
  const partial = retry || changes.limits ? store.pathsWithOcrLeftOut() : new Set<string>();
  // Documents an earlier run under the recorded settings could not read (an unlistable folder, a failed conversion)
  // are still chunked the way before it.
  const recordedBehind = store.meta.json<unknown>("chunking_behind", { derived: true }) ?? [];
  const behind = new Set<string>(Array.isArray(recordedBehind) ? recordedBehind.filter((path) => typeof path === "string") : []);
  const force = (path: string) =>
    all || behind.has(path) || bare.has(path) || damaged.has(path) || partial.has(path) || readOtherwise(changes, path).length > 0;
  const read = confinedReader(repo.path, root?.real);
  let cutShort: Map<string, OcrImage[]> | undefined; // the page images conversions cut short read, by path
  const kept = (hash: string): ConvertedDocument | undefined => {
    const found = store.keptConversion(hash, conversion);
    // A conversion that left pages out is not reused: they may be read now.
    if (!found || found.metadata.ocr_failed_pages !== undefined) return undefined;
    const pages = typeof found.metadata.pages === "number" ? found.metadata.pages : undefined;
    return {
      title: found.title,
      format: "markdown",
      text: found.text,
      firstLine: 1,
      metadata: found.metadata,
      pages,
      ocrImages: found.images,
    };
  };
  return {
    chunk: { tokens, overlap },
    maxBytes: config.index.max_file_bytes,
    pool,
    root,
    read,
    force,
    chunking,
    conversion,
    failure,
    kept,
    ocrReadings: (hash) => store.ocrReadings(hash, conversion),
    ocrImages: (documentId, path) => {
      cutShort ??= store.ocrReadingImages(conversion);
      const indexed = documentId === undefined ? [] : store.ocrImages(documentId, conversion);
      const images = [...(cutShort.get(path) ?? []), ...indexed];
      return new Map(images.map(({ pixels, ...reading }) => [pixels, reading]));
    },
    keepOcrReading: ({ hash, path }, page, reading) => {
      // A rebuild is one transaction: a page kept in it goes with a kill as everything else does, its rows are
      // dropped at its end, and a write failing inside it could roll the whole rebuild back (s26b review F8).
      if (all) return;
      try {
        store.keepOcrReading({ hash, settings: conversion, path }, page, reading);
      } catch {
        // Not kept (a full disk, a busy index): a later run recognises the page again. The document's own write
        // meets the same problem, and the run says what it is then.
      }
    },
  };
}

/** Formats whose documents may be only headings or front matter (their converted text is markdown, not paged). */
const BARE_FORMATS = ["md", "html", "docx", "epub"];

function emptySummary(repository: string): RunCounts {
  return {
    repository,
    indexed: 0,
    skipped: 0,
    removed: 0,
    failed: 0,
    failures: [],
    failed_unchanged: 0,
    skipped_types: {},
    skipped_scripts: 0,
    skipped_generated: {},
    skipped_links: [],
    fragments: 0,
    ocr_pages: 0,
    documents_total: 0,
    fragments_total: 0,
    warnings: [],
  };
}

/** An --embeddings-only run writes no fragment: its summary counts what the index holds, and what it embeds. */
function embeddingsOnlySummary(repository: string, counts: { documents: number; fragments: number }): RunCounts {
  return { ...emptySummary(repository), documents_total: counts.documents, fragments_total: counts.fragments };
}

async function runIndex(store: Store, repo: Repository, settings: DocumentSettings, options: IndexOptions): Promise<RunCounts> {
  const onProgress = options.onProgress;
  onProgress?.({ phase: "scan", done: 0, total: 0 });
  const root = rootIdentity(repo.path);
  const discovery = discoverFiles(repo.path, repo);
  const unmounted = options.allowEmpty ? [] : keepUnmounted(discovery, store.mounts(), repo);
  const stored = store.documents();
  if (discovery.files.length === 0 && stored.size > 0 && !options.allowEmpty && isEmptyFolder(repo.path)) {
    throw new ResearcherError(
      "PATH_NOT_FOUND",
      `repository folder ${repo.path} is empty but ${stored.size} documents are indexed from it; nothing was removed`,
      {
        hint: `if it was emptied on purpose, run \`researcher index ${repo.name} --allow-empty\` (a drive that is not mounted?)`,
      },
    );
  }
  const writer = new BatchWriter(store);
  const retry = options.rebuild || options.retryFailed;
  // What discovery could not take (a link out of the root, a name that is not UTF-8) and the last run recorded alike
  // is an unchanged failure, as an unchanged file that failed to convert is: not news at every run (s23 U3).
  const recorded = retry ? new Map<string, string>() : new Map(store.failures().map((f) => [f.path, f.reason]));
  const repeated = discovery.problems.filter((problem) => recorded.get(problem.path) === problem.reason).map((p) => p.path);
  for (const { path, reason } of discovery.problems) if (recorded.get(path) !== reason) writer.add({ kind: "failed", path, reason });
  // An unchanged stamp (plan.ts sameStamp): not opened at all, nor is a file that failed as it is now (unless told
  // to retry). New and changed files go through the per-document step.
  const failed: Failed | undefined = retry ? undefined : { stamps: store.failureStamps(), settings: settings.failure };
  const plan = planChanges(discovery, stored, { force: settings.force, failed });
  plan.failedUnchanged.push(...repeated);
  writer.skipped += plan.unchanged;
  const changed = [...plan.added, ...plan.changed];
  checkFreeSpace(repo, changed, settings.maxBytes);
  let done = 0;
  const hashes = new Map<string, string>(); // of the files read, as they are now
  // A batch comes due while the run waits on a slow file (a scan's OCR: minutes), not only when the next file is
  // read: a first run left a one-line note unsearchable behind the scan after it (s27 user U5).
  let flushFailure: { error: unknown } | undefined;
  const ticker = setInterval(() => {
    try {
      writer.flushIfDue();
    } catch (error) {
      flushFailure ??= { error };
    }
  }, 1000);
  try {
    await forEachConcurrently(changed, settings.pool.size * 2, async (file) => {
      if (flushFailure) throw flushFailure.error;
      if (done % 64 === 0) onProgress?.({ phase: "index", done, total: changed.length, path: file.path });
      const onOcrPage = onProgress && ((ocr: OcrPage) => onProgress({ phase: "index", done, total: changed.length, path: file.path, ocr }));
      const prepared = await prepareDocument(file, stored.get(file.path), settings, onOcrPage);
      const hash = prepared.kind === "document" ? prepared.doc.hash : prepared.kind === "failed" ? prepared.hash : undefined;
      if (hash) hashes.set(file.path, hash);
      writer.add(prepared);
      done++;
    });
  } finally {
    clearInterval(ticker);
  }
  if (flushFailure) throw flushFailure.error;
  writer.flush();
  onProgress?.({ phase: "index", done: changed.length, total: changed.length });

  const counts = finishRun(store, repo, writer, plan.gone, {
    root,
    rootRecord: settings.root,
    failedUnchanged: plan.failedUnchanged,
    failureInodes: plan.failureInodes,
    skippedTypes: discovery.skippedTypes,
    skippedScripts: discovery.skippedScripts,
    skippedGenerated: addCounts(discovery.skippedGenerated, plan.generated),
    skippedLinks: discovery.skippedLinks,
  });
  const problems = new Set(discovery.problems.map((problem) => problem.path)); // a link out of the root: said already
  const leftOut = settingsLeftOut(
    repo,
    plan.gone.filter((path) => !problems.has(path)),
  );
  if (leftOut) counts.warnings.push(leftOut);
  // Pages kept of conversions cut short that no file wants now: its bytes changed, it went, or OCR reads otherwise.
  // A file not read (it failed unchanged, or could not be looked at) may still want its pages: it is read again later.
  const unread = new Set([...plan.failedUnchanged, ...plan.unreadable]);
  const wanted = new Set([...discovery.files.map((file) => file.path), ...unread]);
  const current = (path: string) => hashes.get(path) ?? (unread.has(path) ? undefined : stored.get(path)?.hash);
  store.pruneOcrReadings(
    ({ hash, settings: read, path }) => read === settings.conversion && wanted.has(path) && (current(path) ?? hash) === hash,
  );
  // Every document read is now chunked this way; the ones the run kept unread are named, for the next run to read.
  const left = new Set([...plan.gone, ...writer.vanished]);
  const kept = [...plan.unreadable, ...plan.failedUnchanged, ...writer.failures.map((f) => f.path)];
  const behind = [...new Set(kept)].filter((path) => stored.has(path) && !left.has(path) && settings.force(path));
  // One commit: a kill between the two recorded the new settings with the last run's list of documents behind.
  store.transaction(() => {
    store.meta.set("chunking", settings.chunking);
    store.meta.set("chunking_behind", JSON.stringify(behind.sort()));
    store.recordMounts([...discovery.mounts, ...unmounted]);
  });
  return counts;
}

/**
 * Documents whose files are still there that a run took out of the index: the repository's settings (file types,
 * excludes, an ignore file) no longer admit them. Said in words, as "3 removed" alone did not, when "add png" had set
 * the file types to png and every PDF went (s26 user F10).
 */
function settingsLeftOut(repo: Repository, gone: string[]): string | undefined {
  // A file below a folder now linked is no rule's doing: the run's "link to a folder, never followed" line says why.
  const present = gone.filter((path) => isFileAt(join(repo.path, path)) && inWalkedFolder(repo.path, path));
  if (present.length === 0) return undefined;
  // Each with the rule's own words: a default rule (a saved page's files) is no setting of the user's (s26b review
  // F12).
  const some = present.slice(0, 3).map((path) => `${path}: ${leftOutBecause(path, repo) ?? "left out"}`);
  const what = present.length === 1 ? "1 document whose file is still there" : `${present.length} documents whose files are still there`;
  // The way back is each rule's own, as `get` of such a file says it: a setting where a setting left it out, a `!`
  // line for a default rule or an ignore file (the advice named config.yaml for a saved page's files: s27 review D8).
  const advice = [...new Set(present.map((path) => wayBackIn(path, repo)))].join("; ");
  return `${what} left the index, as the repository's rules no longer admit ${present.length === 1 ? "it" : "them"} (${some.join("; ")}${present.length > 3 ? "; …" : ""}): ${advice}`;
}

/** Counts by rule, of two sources, added up: a summary's `skipped_generated` from discovery and the plan. */
function addCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const sum = { ...a };
  for (const [key, n] of Object.entries(b)) sum[key] = (sum[key] ?? 0) + n;
  return sum;
}

/** The metadata keys of a document inside a git repository, which `--where` filters like any other. */
export const GIT_KEYS = ["git_project", "git_branch", "git_commit"] as const;

/**
 * The git repository each document is in (`git_project`, `git_branch`, `git_commit`, read from `.git`), refreshed
 * on every run: an unchanged file is never rewritten, but a checkout or a commit moves HEAD under it. Per document
 * rather than per repository, so `--where` filters them like any metadata and a folder of several clones works.
 * Only documents whose values changed are written.
 */
function refreshGitMetadata(store: Store, root: string): void {
  const gitOf = gitInfoCache();
  for (const doc of store.documentMetadataKeys(GIT_KEYS)) {
    const git = gitOf(dirname(join(root, doc.path)));
    const values = { git_project: git?.name ?? null, git_branch: git?.branch ?? null, git_commit: git?.commit ?? null };
    if (GIT_KEYS.some((key) => doc[key] !== values[key])) store.patchDocumentMetadata(doc.id, values);
  }
}

/**
 * A repository folder that resolves elsewhere than at the last run under the same registered path was replaced by a
 * link (or a folder above it was): every document would read as a link out of the root and be dropped, so nothing
 * is changed.
 */
function refuseMovedRoot(repo: Repository, store: Store): RootRecord | undefined {
  const now = rootRecord(repo.path);
  const recorded = store.recordedRoot();
  // An index that holds nothing yet read nothing from anywhere: its first run records where the path leads.
  if (!recorded && store.counts().documents === 0) return now;
  const real = movedRoot(repo.path, recorded, now);
  if (real === undefined) return now;
  throw new ResearcherError("PATH_NOT_FOUND", `repository folder ${repo.path} now resolves to ${real}; nothing was changed`, {
    hint: movedRootHint(repo.name, real),
  });
}

/** Whether a folder lists an entry of this name, as names decode (a name that is not UTF-8 with U+FFFD in it). */
function listedIn(folder: string, name: string): boolean {
  try {
    return readdirSync(folder).includes(name);
  } catch {
    return false;
  }
}

/** The repository folder's identity (device and inode, through a link), or null when no folder is there now. */
function rootIdentity(root: string): string | null {
  const stats = statSync(root, { throwIfNoEntry: false });
  return stats?.isDirectory() ? `${stats.dev}:${stats.ino}` : null;
}

/**
 * Remove what is gone, record failures (all of them but those of failed files left alone, or only for `paths` in a
 * partial run) and the totals.
 */
function finishRun(
  store: Store,
  repo: Repository,
  writer: BatchWriter,
  gone: string[],
  run: {
    /** The repository folder's identity when the run began (rootIdentity). */
    root: string | null;
    /** The repository folder as the session checked it (refuseMovedRoot). */
    rootRecord?: RootRecord;
    paths?: string[];
    failedUnchanged: string[];
    /** Inode numbers to record of unchanged failures recorded without one (plan.ts failureInodes). */
    failureInodes: ReadonlyMap<string, number>;
    skippedTypes: Record<string, number>;
    skippedScripts: number;
    skippedGenerated: Record<string, number>;
    skippedLinks: string[];
  },
): RunCounts {
  if ((gone.length > 0 || writer.vanished.length > 0) && (run.root === null || rootIdentity(repo.path) !== run.root)) {
    // Its files did not go one by one: the folder did (a drive unmounted, a share dropped, a folder moved away).
    throw new ResearcherError("PATH_NOT_FOUND", `repository folder ${repo.path} went away during the run; nothing was removed`, {
      hint: "put it back (a drive that was unmounted?) and run the command again",
    });
  }
  let removed = 0;
  store.transaction(() => {
    // Files deleted during the run go as the ones the plan found gone (those never indexed leave nothing behind).
    for (const path of [...gone, ...writer.vanished]) if (store.deleteDocument(path)) removed++;
    if (removed) store.embeddings.bumpGeneration();
    if (removed || writer.indexed) store.recheckHeadings();
    store.recordFailures(writer.failures, { paths: run.paths, kept: new Set(run.failedUnchanged), inodes: run.failureInodes });
    refreshGitMetadata(store, repo.path);
    // A repository is indexed once a whole run has been: files indexed one by one (add_to_index, a watch batch)
    // before that leave it "not indexed yet", with the command that indexes the rest of its folder.
    if (!run.paths || store.meta.get("last_indexed")) store.meta.set("last_indexed", new Date().toISOString());
    // The folder as the run found it, not wherever its path leads now: a root replaced during the run is no new home.
    store.recordRoot(run.rootRecord ?? rootRecord(repo.path));
  });
  const totals = store.counts();
  return {
    repository: repo.name,
    indexed: writer.indexed,
    skipped: writer.skipped,
    removed,
    failed: writer.failures.length,
    failures: writer.failures.map(({ path, reason }) => ({ path, reason })),
    failed_unchanged: run.failedUnchanged.length,
    skipped_types: run.skippedTypes,
    skipped_scripts: run.skippedScripts,
    skipped_generated: run.skippedGenerated,
    skipped_links: run.skippedLinks.slice(0, MAX_LISTED_LINKS),
    fragments: writer.fragments,
    ocr_pages: writer.ocrPages,
    documents_total: totals.documents,
    fragments_total: totals.fragments,
    warnings: writer.warnings,
  };
}

/** Collects prepared documents and writes them in batches, one transaction each. */
class BatchWriter {
  indexed = 0;
  skipped = 0;
  fragments = 0;
  ocrPages = 0;
  readonly failures: RecordedFailure[] = [];
  /** What conversions left out of documents they wrote (a scan's unreadable page), each `path: what`. */
  readonly warnings: string[] = [];
  readonly vanished: string[] = [];
  private pending: Extract<Prepared, { kind: "document" }>[] = [];
  private touched: Extract<Prepared, { kind: "unchanged" }>[] = [];
  /** When the last batch was written (or the writer made). */
  private flushed = performance.now();

  constructor(private readonly store: Store) {}

  add(prepared: Prepared): void {
    // Reasons come from converters' and libraries' messages (xmldom's hold tabs): a reason is one line wherever shown.
    if (prepared.kind === "failed") {
      const { path, reason, stamp, gone } = prepared;
      this.failures.push({ path, reason: oneLine(reason), stamp });
      if (gone) this.vanished.push(path);
    } else if (prepared.kind === "vanished") this.vanished.push(prepared.path);
    else if (prepared.kind === "unchanged") {
      this.touched.push(prepared);
      this.skipped++;
    } else this.pending.push(prepared);
    if (this.pending.length + this.touched.length >= WRITE_BATCHES.documents) this.flush();
    else this.flushIfDue();
  }

  /** Write the documents read so far once they have waited long enough (the run's first batch sooner). */
  flushIfDue(): void {
    const { firstSeconds, seconds: later } = WRITE_BATCHES;
    const seconds = this.indexed === 0 ? Math.min(firstSeconds, later) : later;
    if (this.pending.length > 0 && performance.now() - this.flushed >= seconds * 1000) this.flush();
  }

  flush(): void {
    const batch = this.pending;
    const touched = this.touched;
    if (batch.length === 0 && touched.length === 0) return;
    this.store.transaction(() => {
      const written = batch.map((item) => this.store.replaceDocument(item.doc, item.fragments, item.hashes, item.replaces));
      updateImpacts(this.store, written);
      for (const t of touched) this.store.touchDocument(t.id, t.stamp);
      if (batch.length) this.store.embeddings.bumpGeneration();
    });
    const { walLimit, walFloor, walShare } = WRITE_BATCHES;
    const database = this.store.databaseBytes();
    this.store.checkpointIfLarger(Math.min(walLimit, Math.max(walFloor, database * walShare)));
    this.indexed += batch.length;
    this.fragments += batch.reduce((sum, item) => sum + item.fragments.length, 0);
    // The pages recognised in this run: not a kept text read back, nor pages a run cut short had read.
    this.ocrPages += batch.reduce((sum, item) => sum + (item.reused ? 0 : ocrPagesOf(item.doc.metadata) - (item.ocrResumed ?? 0)), 0);
    for (const item of batch) for (const warning of item.warnings ?? []) this.warnings.push(`${item.doc.path}: ${warning}`);
    this.pending = [];
    this.touched = [];
    this.flushed = performance.now();
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The per-document step: read → convert → chunk one file. Throws only what is the process's and not the file's (no file
 * descriptor left: every file would fail the same way, so the run stops); any other problem becomes a reason, and the
 * stored version of the document (if any) stays as it was. A failed conversion is stamped with the file's stamp
 * (failedUnchanged says which part counts) and the conversion settings (its time and memory limits included), so that
 * a run leaves the file alone until one of them changes; a failure that says nothing about the file (a lock, a full
 * disk: isTransient) and a file that could not be read (a stat or an open to find out again; its cause, e.g.
 * permissions, is usually outside the file) get no stamp and are tried again by every run. `onOcrPage` hears of each
 * page OCR starts on.
 */
export async function prepareDocument(
  file: DiscoveredFile,
  previous: StoredDocument | undefined,
  settings: DocumentSettings,
  onOcrPage?: (page: OcrPage) => void,
): Promise<Prepared> {
  const stamp = recordedStamp(file, Date.now());
  const read = settings.read(file.path, settings.maxBytes);
  if ("reason" in read && OPEN_FILES_LIMIT.has(read.code ?? ""))
    throw new ResearcherError("TOO_MANY_OPEN_FILES", `${file.path}: ${read.reason}`, { hint: OPEN_FILES_HINT });
  if ("reason" in read) {
    if (read.missing) return { kind: "vanished", path: file.path };
    // Too large is the file's own failure, as a failed conversion is (index.max_file_bytes is among the settings
    // its stamp holds): unstamped, it was a new failure at every run of a folder that did not change (s23 retest N7).
    const failure = read.tooLarge ? { ...stampOf(file), settings: settings.failure } : undefined;
    return { kind: "failed", path: file.path, reason: read.reason, gone: read.outside, stamp: failure };
  }
  const hash = sha256(read.bytes);
  if (previous?.hash === hash && !settings.force(file.path)) return { kind: "unchanged", id: previous.id, stamp };
  try {
    // OCR'd text kept for these very bytes is read back rather than recognised again (a new chunk size, a renamed
    // or copied scan); anything else is converted, which costs little.
    const ocr = OCR_FORMATS.has(formatOf(file.path));
    const kept = ocr ? settings.kept(hash) : undefined;
    // Each page OCR reads is kept as it is read, and the pages a conversion of these bytes cut short read (a kill,
    // a limit) are read back: a run killed at page 400 of 500 recognises 100 pages next time, not 500.
    const ocrKnown = ocr && !kept ? settings.ocrReadings(hash) : undefined;
    // A new version of an OCR'd document (a highlight added, an update a reader appended) reads its page images the
    // old version read back: only the pages whose images changed are recognised (s26 F13); so does a file changed
    // after a conversion of it was cut short, with the pages that conversion read (s27 hostile O1).
    const ocrImages = ocr && !kept ? settings.ocrImages(previous?.id, file.path) : undefined;
    let readBack = 0; // pages with text read back from the old version's images, not recognised in this run
    const listeners: ConvertListeners = {
      onOcrPage,
      ocrKnown,
      ocrImages,
      onOcrRead: (page, reading) => {
        // One read back needs no keeping: the old version's images stay until this one is written.
        if (reading.resumed) readBack += reading.text ? 1 : 0;
        else settings.keepOcrReading({ hash, path: file.path }, page.page, reading);
      },
    };
    const converted = kept ?? (await settings.pool.convert(file.path, read.bytes, listeners));
    const fragments = fragmentsOf(converted, settings.chunk);
    return {
      kind: "document",
      reused: Boolean(kept),
      // The same bytes under the same settings want the same pages read: every kept page with text was read back.
      ocrResumed: [...(ocrKnown?.values() ?? [])].filter((reading) => reading.text).length + readBack,
      replaces: Boolean(previous),
      doc: {
        path: file.path,
        hash,
        ...stamp,
        title: converted.title,
        format: formatOf(file.path, read.bytes),
        metadata: converted.metadata,
        // Pages read by OCR take seconds each to read again: `get` reads them back from the index instead.
        convertedText:
          ocrPagesOf(converted.metadata) > 0
            ? { text: converted.text, settings: settings.conversion, images: converted.ocrImages }
            : undefined,
      },
      fragments,
      hashes: fragments.map((f) => sha256(embeddingText(converted.title, f.headings.join(HEADING_SEPARATOR), f.text)).slice(0, 32)),
      warnings: converted.warnings,
    };
  } catch (error) {
    if (toResearcherError(error).code === "TOO_MANY_OPEN_FILES") throw error;
    const reason = isResearcherError(error) ? error.message : `conversion failed: ${describeError(error)}`;
    return {
      kind: "failed",
      path: file.path,
      hash,
      reason,
      // OCR turned off is a choice, not a read error: the version OCR read goes (its text kept for a return to
      // `auto`), as a first run under `off` would not index it. Kept, it was "failed" and still found (s25 P2).
      gone: Boolean(previous) && failedForOcrOff(reason),
      // A failure keeps its file's own stamp: to read it again after a racy stamp would convert it again, which for a
      // file that hit a time limit costs the limit each run.
      stamp: isTransient(error) ? undefined : { ...stampOf(file), settings: settings.failure },
    };
  }
}

/**
 * A converted file's fragments. Source code comes with its sections (parsed in a conversion worker by its syntax
 * tree); a file the parser gave up on (too large, too slow) and every other format go to the text chunker.
 */
function fragmentsOf(converted: ConvertedDocument, chunk: ChunkOptions): Fragment[] {
  if ((converted.codeSections?.length ?? 0) > MAX_DOCUMENT_FRAGMENTS) throw tooManyFragments();
  return converted.codeSections ? codeFragments(converted.text, converted.codeSections) : chunkDocument(converted, chunk);
}

/** The file at `path` as discovery would find it, why it is none (a named pipe, a device), or undefined when gone. */
function statFile(repo: Repository, path: string): DiscoveredFile | { reason: string } | undefined {
  try {
    const stats = statSync(join(repo.path, path));
    if (stats.isFile()) return { root: repo.path, path, ...stampOf(stats) };
    return stats.isDirectory() ? undefined : { reason: notRegular(stats) };
  } catch {
    return undefined;
  }
}

function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {} // not empty (an index of the name registered anew), or already gone
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
