/**
 * The index pipeline for one repository: discover → hash → convert → chunk → store, incremental.
 * A file whose size and mtime are unchanged is not opened; a changed one is read once, hashed, and converted
 * only when its SHA-256 differs. Writes go in batches of whole documents, each batch one transaction.
 */
import { readFileSync } from "node:fs";
import { chunkDocument, type ChunkOptions, type Fragment } from "./chunk.ts";
import { loadConfig } from "./config.ts";
import { convertFile } from "./convert.ts";
import { discoverFiles, type DiscoveredFile } from "./discover.ts";
import { checkModel, chooseModel, EmbedderCache, type Embedder } from "./embedder.ts";
import { describeError, ResearcherError } from "./errors.ts";
import { acquireWriterLock } from "./lock.ts";
import type { Repository } from "./repos.ts";
import { HEADING_SEPARATOR, Store, type DocumentInput } from "./store.ts";
import { syncVectorIndex } from "./vectors.ts";

export interface IndexSummary {
  repository: string;
  indexed: number;
  skipped: number;
  removed: number;
  failed: number;
  failures: { path: string; reason: string }[];
  /** Fragments written in this run. */
  fragments: number;
  documents_total: number;
  fragments_total: number;
  /** Fragment texts embedded in this run (unchanged texts are never embedded twice). */
  embedded: number;
  /** The model the repository's vectors come from, or null for BM25 only. */
  model: string | null;
  seconds: number;
}

export type IndexProgress = { phase: "scan" | "index" | "embed"; done: number; total: number; path?: string };

export interface IndexOptions {
  /** Drop the repository's index first and rebuild it from the files. */
  rebuild?: boolean;
  /** Keep fragments, drop and recompute every vector (after changing the model). */
  embeddingsOnly?: boolean;
  /** Skip embeddings for this run (the repository's `embed: false` does it for good). */
  noEmbed?: boolean;
  /** Index only these paths (relative to the root); other documents are left as they are. */
  only?: string[];
  /** `--model`: overrides the configured model for this run. */
  model?: string;
  embedders?: EmbedderCache;
  onProgress?: (progress: IndexProgress) => void;
}

interface Pending {
  /** Whether an older version of the document is stored. */
  replaces: boolean;
  doc: DocumentInput;
  fragments: Fragment[];
  hashes: string[];
}

const BATCH_DOCUMENTS = 1000;

export async function indexRepository(home: string, repo: Repository, options: IndexOptions = {}): Promise<IndexSummary> {
  const started = performance.now();
  const config = loadConfig(home);
  const embed = repo.embed && !options.noEmbed;
  const embedders = options.embedders ?? new EmbedderCache();
  const release = acquireWriterLock(repo.dir, repo.name);
  try {
    const store = Store.open(repo.dir, { create: true });
    // A rebuild or re-embedding is a fresh choice; otherwise the repository keeps the model it was embedded with.
    const remembered = options.rebuild || options.embeddingsOnly ? undefined : store.embeddingModel();
    const choice = chooseModel(config.embedding, repo.embedding, options.model, remembered);
    // Checkpoint once at the end rather than every 4 MB of WAL: each checkpoint syncs the database file.
    store.db.run("PRAGMA wal_autocheckpoint = 0");
    try {
      // Re-embedding starts only once the new model loads: a missing model must not cost the old vectors.
      if (options.embeddingsOnly && embed) await embedders.get(home, choice);
      if (options.rebuild) store.transaction(() => store.db.run("DELETE FROM documents"));
      if (options.rebuild || options.embeddingsOnly) store.transaction(() => store.clearVectors());
      const summary = options.embeddingsOnly
        ? { ...emptySummary(repo.name), ...store.counts() }
        : runIndex(store, repo, { ...config.chunk }, config.index.max_file_bytes, options);
      const changed = summary.fragments + summary.removed;
      if (changed > 0) store.compactFullText(changed / Math.max(1, summary.fragments_total));
      const embedding = embed
        ? await embedRepository(store, repo, () => embedders.get(home, choice), options)
        : { embedded: 0, model: store.embeddingModel()?.id ?? null };
      if (store.embeddingModel()) await syncVectorIndex(store, repo.dir, store.embeddingModel()!.dims);
      store.checkpoint();
      return { ...summary, ...embedding, seconds: round((performance.now() - started) / 1000) };
    } finally {
      store.close();
    }
  } finally {
    release();
    if (!options.embedders) await embedders.dispose();
  }
}

/** Drop one document (its fragments, FTS rows and vectors) and refresh the ANN file. */
export async function removeDocument(repo: Repository, path: string): Promise<void> {
  const release = acquireWriterLock(repo.dir, repo.name);
  try {
    const store = Store.open(repo.dir);
    try {
      const removed = store.transaction(() => {
        const gone = store.deleteDocument(path);
        if (gone) {
          store.bumpVectorsGeneration();
          store.pruneVectors();
        }
        return gone;
      });
      if (!removed) {
        throw new ResearcherError("DOCUMENT_NOT_FOUND", `'${path}' is not indexed in '${repo.name}'`, {
          hint: "paths are relative to the repository root, as search results print them",
        });
      }
      const model = store.embeddingModel();
      if (model) await syncVectorIndex(store, repo.dir, model.dims);
    } finally {
      store.close();
    }
  } finally {
    release();
  }
}

function emptySummary(repository: string): Omit<IndexSummary, "seconds" | "embedded" | "model"> {
  return { repository, indexed: 0, skipped: 0, removed: 0, failed: 0, failures: [], fragments: 0, documents_total: 0, fragments_total: 0 };
}

const EMBED_BATCH = 256;

/**
 * Give every fragment text a vector. The model is loaded only when some text lacks one, and a repository never
 * mixes vectors of two models: a different model is an error until `--rebuild` or `--embeddings-only`.
 */
async function embedRepository(
  store: Store,
  repo: Repository,
  loadModel: () => Promise<Embedder>,
  options: IndexOptions,
): Promise<{ embedded: number; model: string | null }> {
  const pending = store.fragmentsWithoutVectors();
  const stored = store.embeddingModel();
  if (pending.length === 0) {
    store.transaction(() => store.pruneVectors());
    return { embedded: 0, model: stored?.id ?? null };
  }
  const embedder = await loadModel();
  checkModel(repo.name, stored, embedder);
  if (!stored) store.setEmbeddingModel({ id: embedder.info.id, provider: embedder.info.provider, dims: embedder.dims, fingerprint: embedder.fingerprint });
  for (let start = 0; start < pending.length; start += EMBED_BATCH) {
    options.onProgress?.({ phase: "embed", done: start, total: pending.length });
    const batch = pending.slice(start, start + EMBED_BATCH);
    const vectors = await embedder.embed(batch.map((f) => embeddingText(f.title, f.heading, f.text)), "document");
    // Each batch commits on its own: an interrupted run keeps what it embedded.
    store.transaction(() => {
      store.insertVectors(batch.map((f, i) => ({ textHash: f.textHash, vector: vectors[i]! })));
      store.bumpVectorsGeneration();
    });
  }
  options.onProgress?.({ phase: "embed", done: pending.length, total: pending.length });
  store.transaction(() => store.pruneVectors());
  return { embedded: pending.length, model: embedder.info.id };
}

function runIndex(
  store: Store,
  repo: Repository,
  chunkOptions: ChunkOptions,
  maxBytes: number,
  options: IndexOptions,
): Omit<IndexSummary, "seconds" | "embedded" | "model"> {
  const onProgress = options.onProgress;
  onProgress?.({ phase: "scan", done: 0, total: 0 });
  const only = options.only && new Set(options.only);
  const files = discoverFiles(repo.path, { fileTypes: repo.fileTypes, exclude: repo.exclude }).filter((f) => !only || only.has(f.path));
  const stored = store.documents();
  const failures: IndexSummary["failures"] = [];
  let pending: Pending[] = [];
  const touched: { id: number; size: number; mtimeMs: number }[] = [];
  let indexed = 0;
  let skipped = 0;
  let fragments = 0;

  const flush = () => {
    if (pending.length === 0 && touched.length === 0) return;
    const batch = pending;
    store.transaction(() => {
      for (const item of batch) store.replaceDocument(item.doc, item.fragments, item.hashes, item.replaces);
      for (const t of touched) store.touchDocument(t.id, t.size, t.mtimeMs);
      if (batch.length) store.bumpVectorsGeneration();
    });
    indexed += batch.length;
    fragments += batch.reduce((sum, item) => sum + item.fragments.length, 0);
    pending = [];
    touched.length = 0;
  };

  files.forEach((file, i) => {
    if (i % 64 === 0) onProgress?.({ phase: "index", done: i, total: files.length, path: file.path });
    const previous = stored.get(file.path);
    if (previous && previous.size === file.size && previous.mtimeMs === file.mtimeMs) {
      skipped++;
      return;
    }
    const read = readFile(file, maxBytes);
    if (!("reason" in read) && previous?.hash === read.hash) {
      touched.push({ id: previous.id, size: file.size, mtimeMs: file.mtimeMs });
      skipped++;
      return;
    }
    const result = "reason" in read ? read : prepareDocument(file, read, chunkOptions, Boolean(previous));
    if ("reason" in result) {
      failures.push({ path: file.path, reason: result.reason });
      return;
    }
    pending.push(result);
    if (pending.length >= BATCH_DOCUMENTS) flush();
  });
  flush();
  onProgress?.({ phase: "index", done: files.length, total: files.length });

  const present = new Set(files.map((f) => f.path));
  const gone = [...stored.keys()].filter((path) => !present.has(path) && (!only || only.has(path)));
  store.transaction(() => {
    for (const path of gone) store.deleteDocument(path);
    if (gone.length) store.bumpVectorsGeneration();
    store.replaceFailures(failures);
    store.setMeta("last_indexed", new Date().toISOString());
  });
  const totals = store.counts();
  return {
    repository: repo.name,
    indexed,
    skipped,
    removed: gone.length,
    failed: failures.length,
    failures,
    fragments,
    documents_total: totals.documents,
    fragments_total: totals.fragments,
  };
}

function readFile(file: DiscoveredFile, maxBytes: number): { bytes: Uint8Array; hash: string } | { reason: string } {
  if (file.size > maxBytes) return { reason: `larger than index.max_file_bytes (${file.size} > ${maxBytes} bytes)` };
  try {
    const bytes = readFileSync(file.absolute);
    return { bytes, hash: sha256(bytes) };
  } catch (error) {
    return { reason: `cannot read: ${describeError(error)}` };
  }
}

/** Convert and chunk one file; a problem becomes a reason instead of an exception, so the run goes on. */
function prepareDocument(
  file: DiscoveredFile,
  read: { bytes: Uint8Array; hash: string },
  chunkOptions: ChunkOptions,
  replaces: boolean,
): Pending | { reason: string } {
  try {
    const converted = convertFile(file.path, read.bytes);
    const fragments = chunkDocument(converted, chunkOptions);
    return {
      replaces,
      doc: {
        path: file.path,
        hash: read.hash,
        size: file.size,
        mtimeMs: file.mtimeMs,
        title: converted.title,
        format: converted.format,
        metadata: converted.metadata,
      },
      fragments,
      hashes: fragments.map((f) => sha256(embeddingText(converted.title, f.headings.join(HEADING_SEPARATOR), f.text)).slice(0, 32)),
    };
  } catch (error) {
    return { reason: describeError(error) };
  }
}

/** What a fragment means on its own: the document title and heading path give the passage its context. */
export function embeddingText(title: string, heading: string, text: string): string {
  return [title, heading, text].filter(Boolean).join("\n");
}

export function sha256(data: Uint8Array | string): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex");
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
