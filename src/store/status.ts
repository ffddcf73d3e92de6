/** What each repository's index holds: counts, freshness, size on disk, files that failed. */
import { writerLockHolder } from "../lock.ts";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Repository } from "../repos.ts";
import { indexesMovedAside, MOVED_ASIDE } from "./schema.ts";
import { Store } from "./store.ts";

export interface RepositoryStatus {
  name: string;
  path: string;
  description: string | null;
  documents: number;
  fragments: number;
  /** Pages of its documents read by OCR (scans). */
  ocr_pages: number;
  /**
   * Documents with pages OCR left out (past its time or memory limit), and which: `index --retry-failed` reads them
   * again.
   */
  ocr_left_out: { path: string; pages: number[] }[];
  /**
   * Documents with pages whose text reads as symbols, not words (fonts without a character map, or a scan OCR reads
   * as gibberish whichever way it is turned), and which: search
   * misses those pages' words until the file is replaced by a copy whose text reads.
   */
  garbled: { path: string; pages: number[] }[];
  /** ISO time of the last completed index run, or null when never indexed. */
  last_indexed: string | null;
  /** Bytes of the repository's index folder on disk. */
  bytes: number;
  /** The embedding model of its vectors, or null for BM25 only. */
  model: string | null;
  vectors: number;
  /**
   * Fragment texts of a repository that embeds with no vector yet (the model was not available, or a run was cut):
   * the count `index` reports (fragments with the same text share one vector).
   */
  embeddings_pending: number;
  /** The process writing the index now (an index run, `verify`, a watch batch), or null. */
  indexing: number | null;
  /** Code files by language (`{"python": 120, "typescript": 40}`), most first. */
  languages: Record<string, number>;
  failures: { path: string; reason: string }[];
  /** Indexes a writer moved aside because they could not be used (`index.db.damaged-<time>`): kept until deleted. */
  moved_aside: { path: string; bytes: number }[];
  /**
   * The paths OCR'd documents left the index from (deleted, excluded, moved) whose text is kept 30 days to be read
   * back if they return (null: kept before paths were recorded), with when: `remove` of a path drops its text.
   */
  kept_texts: { path: string | null; removed_at: string }[];
}

/** The status of a repository with nothing indexed (never indexed, or its index could not be read). */
export function emptyStatus(repo: Repository): RepositoryStatus {
  return {
    name: repo.name,
    path: repo.path,
    description: repo.description,
    documents: 0,
    fragments: 0,
    ocr_pages: 0,
    ocr_left_out: [],
    garbled: [],
    last_indexed: null,
    bytes: 0,
    model: null,
    vectors: 0,
    embeddings_pending: 0,
    indexing: writerLockHolder(repo.dir),
    languages: {},
    failures: [],
    moved_aside: indexesMovedAside(repo.dir),
    kept_texts: [],
  };
}

export function repositoryStatus(repo: Repository): RepositoryStatus {
  if (!Store.exists(repo.dir)) return emptyStatus(repo);
  const store = Store.open(repo.dir);
  try {
    return storeStatus(repo, store);
  } finally {
    store.close();
  }
}

/** What `store`, the repository's open index, holds: a caller that reads more of it reads all on one snapshot. */
export function storeStatus(repo: Repository, store: Store): RepositoryStatus {
  return {
    name: repo.name,
    path: repo.path,
    description: repo.description,
    ...store.counts(),
    ocr_pages: store.ocrPages(),
    ocr_left_out: store.ocrLeftOut(),
    garbled: store.garbledPages(),
    last_indexed: store.meta.get("last_indexed") ?? null,
    bytes: folderBytes(repo.dir),
    model: store.embeddings.model()?.id ?? null,
    vectors: store.embeddings.count(),
    embeddings_pending: repo.embed ? store.embeddings.pendingCount() : 0,
    indexing: writerLockHolder(repo.dir),
    languages: store.languageCounts(),
    failures: store.failures(),
    moved_aside: indexesMovedAside(repo.dir),
    kept_texts: store.keptTextPaths(),
  };
}

/**
 * The index folder's size, copies moved aside left out (`moved_aside` counts them); a file gone since it was listed
 * (a writer's temp file, renamed) counts nothing, as in `du`.
 */
function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && !MOVED_ASIDE.test(entry.name)) total += statSync(join(dir, entry.name), { throwIfNoEntry: false })?.size ?? 0;
  }
  return total;
}
