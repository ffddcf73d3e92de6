/**
 * One repository's `index.db` (its schema is in schema.ts), SQLite the source of truth: the connection, documents,
 * fragments and failures here, and the parts it holds for the rest (full-text.ts, embeddings.ts, meta.ts,
 * postings.ts, impacts.ts). Nothing outside src/store/ runs SQL.
 */
import type { OcrImage, OcrReading } from "../ocr-reading.ts";
import type { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { linkToNothing, systemCode, toResearcherError } from "../errors.ts";
import { CODE_EXTENSIONS } from "../file-types.ts";
import { LABEL_SEPARATOR } from "../text.ts";
import { filterSql, type Filter, metadataOf, metadataPath, type SqlCondition } from "./filter-sql.ts";
import { fullTextRowWriter } from "./fts.ts";
import { EmbeddingTable } from "./embeddings.ts";
import { dataVersion, FullTextIndex } from "./full-text.ts";
import { ImpactLists } from "./impacts.ts";
import { MetaTable } from "./meta.ts";
import { PostingLists } from "./postings.ts";
import { HEADING_SEPARATOR, MAX_SECTION_REACH, runAround, SECTION_REACH, type SectionParts, type SectionRow } from "./sections.ts";
import { BUSY_TIMEOUT_MS, integrityCheck, openIndexDatabase, type OpenedIndex, pageDamage, stillAsOpened } from "./schema.ts";
import { danglingLink, type RootRecord } from "../files.ts";

export type { StoredModel } from "./embeddings.ts";
export type { SqlCondition } from "./filter-sql.ts";
export { type Bm25Weights, FULL_TEXT_MERGE, type MergeProgress } from "./full-text.ts";
export { HEADING_SEPARATOR, type SectionParts } from "./sections.ts";

/**
 * A file's stamp as the index records it (index/plan.ts Stamp): the inode change time and number are null in rows
 * written before schema 18, and in any row a reader of such an index reads.
 */
export interface StoredStamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number | null;
  ino: number | null;
}

export interface StoredDocument extends StoredStamp {
  id: number;
  path: string;
  hash: string;
}

/**
 * A failed file as the index saw it when its conversion failed: its stamp but the inode change time (index/plan.ts
 * failedUnchanged), and the conversion settings (an opaque string the indexer compares). While they all still hold,
 * converting it again would fail again.
 */
export interface FailureStamp extends Omit<StoredStamp, "ctimeMs"> {
  settings: string;
}

/** How long a checkpoint waits for searches on an older snapshot before leaving the WAL for a later one. */
const CHECKPOINT_WAIT_MS = 200;

/** A file a run could not index and why; `stamp` when the failure is the file's own (not a busy or full disk). */
export interface RecordedFailure {
  path: string;
  reason: string;
  stamp?: FailureStamp;
}

export interface DocumentInput extends StoredStamp {
  path: string;
  hash: string;
  title: string;
  format: string;
  metadata: Record<string, unknown>;
  /**
   * The converted text to keep, when converting it again would be slow (OCR), and the settings it depends on; with
   * what OCR read of each of its page images (OCR_IMAGES_SCHEMA), for its next version to read back.
   */
  convertedText?: { text: string; settings: string; images?: OcrImage[] };
}

/** A piece of a document as the chunker cuts it (index/chunk.ts) and the store keeps it. */
export interface Fragment {
  seq: number;
  text: string;
  /** 1-based, inclusive, in the original file. */
  startLine: number;
  endLine: number;
  headings: string[];
  /** Paged formats: the page the fragment starts on, and the page it ends on. */
  page: number | null;
  pageEnd: number | null;
  /**
   * The unit it is part of, numbered within its document: a heading's section (across its pages), a function or
   * class. The parts of a unit split into several fragments share it; a same-named sibling (two `### Example`
   * sections, a getter and its setter) has its own. Absent where the chunker does not tell (plain text).
   */
  unit?: number;
  /**
   * Code: the labels of every unit whose definition it holds, its units' members too (`def parse`, `class Row`,
   * `get()`): its heading names at most four, and a class kept whole by its name alone. What the exact-name rule
   * counts as defined here (search/heading-boost.ts).
   */
  defines?: string[];
}

/** The zero-filled blobs scrubFreePages writes, one at a time (SQLite bounds one value's size). */
const SCRUB_BLOB_BYTES = 64 * 2 ** 20;

/** What heading-boost.ts weighs a fragment by (Store.fragmentHeadings). */
export interface FragmentHeadings {
  heading: string;
  title: string;
  format: string;
  text: string | null;
  /** The heading path of the fragment before it in its document (null for the first). */
  previous: string | null;
  /** Fragment.defines, joined by LABEL_SEPARATOR (null for prose, and code chunked before schema 12). */
  defines: string | null;
  /**
   * Whether it goes on with the unit the fragment before it is part of, under the same heading or after a unit
   * nested in it (a split function's later part, its tail after a closure; a class's fragments share its unit, and
   * each method's own heading begins in its fragment).
   */
  continued: number | null;
}

export interface FragmentRow {
  id: number;
  documentId: number;
  seq: number;
  startLine: number;
  endLine: number;
  page: number | null;
  pageEnd: number | null;
  heading: string;
  text: string;
  path: string;
  title: string;
  hash: string;
  format: string;
  /** The document's metadata as stored (JSON text). */
  metadata: string;
}

/** A document as `ls` and `get --meta` show it (its stamp without the inode change time and number). */
export interface ListedDocument extends Omit<DocumentInput, "ctimeMs" | "ino"> {
  indexedAt: string;
  fragments: number;
  /** The last page for paged formats (PDF), null for the rest. */
  pages: number | null;
}

/** A kept reading's row (ocr_readings, ocr_images) as a reading: no text when it read none. */
function keptReading(row: { text: string | null; poor: number; pixels: string | null }): OcrReading {
  return {
    ...(row.text === null ? {} : { text: row.text }),
    ...(row.poor ? { poor: true } : {}),
    ...(row.pixels ? { pixels: row.pixels } : {}),
  };
}

/**
 * A document's stored metadata; a damaged value (not a JSON object, or no text at all) reads as none, so the rest of
 * the row is served, and the next index run reads the file again (pathsWithDamagedMetadata).
 */
export function parseMetadata(json: unknown): Record<string, unknown> {
  if (typeof json !== "string") return {};
  try {
    const value = JSON.parse(json);
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** The meta key whose value `none` says no fragment has had a heading (mayHaveHeadings). */
const NO_HEADINGS_KEY = "fragment_headings";

/** How long a removed document's OCR'd text is kept, in days, and how much of it in all (characters: ~64 MB). */
const REMOVED_TEXTS_DAYS = 30;
const REMOVED_TEXTS_CHARS = 64 * 1024 * 1024;

/** Connections opened that cannot name their file before opening it (see Store.file). */
let connections = 0;

/**
 * Rows read for results must hold text where the schema says text: bytes changed beneath SQLite, which checks no
 * types in these tables, put a number or bytes there (`text.matchAll is not a function`). That is damage, as SQLite
 * names it, so every caller reports INDEX_CORRUPT with the command that rebuilds.
 */
function checkText<Row extends object>(rows: Row[], columns: (keyof Row)[], what: string, orNull: (keyof Row)[] = []): void {
  const text = (value: unknown) => typeof value === "string";
  for (const row of rows)
    if (!columns.every((column) => text(row[column])) || !orNull.every((column) => row[column] === null || text(row[column])))
      throw Object.assign(new Error(`${what} holds a value of the wrong type`), { code: "SQLITE_CORRUPT" });
}

/** The documents' metadata column as JSON functions read it (a damaged cell reads as none). */
const METADATA = metadataOf("metadata");

export class Store {
  /** Only the store talks to SQLite: every statement is one of its methods or of a part it holds. */
  private readonly db: Database;
  /** Where `open` with `fresh` moved an index it could not use, and why. */
  readonly movedAside?: OpenedIndex["movedAside"];
  /** The BM25 impact lists' rows (see search/bm25.ts). */
  readonly impacts: ImpactLists;
  /** The BM25 posting lists (see store/postings.ts). */
  readonly postings: PostingLists;
  /** What the index records about itself. */
  readonly meta: MetaTable;
  /** The fragments' vectors and the model that made them. */
  readonly embeddings: EmbeddingTable;
  /** The full-text index: BM25 queries and their statistics, and its upkeep. */
  readonly fullText: FullTextIndex;

  private constructor(
    { db, movedAside }: OpenedIndex,
    repository: string,
    /**
     * Which index.db this connection reads (Store.fileIdentity when it opened): what connections of one file share
     * (a repository's vectors at one generation). A file made by the opening itself is told apart by its connection.
     */
    readonly file: string,
  ) {
    this.db = db;
    this.movedAside = movedAside;
    this.impacts = new ImpactLists(db);
    this.postings = new PostingLists(db);
    this.meta = new MetaTable(db, repository);
    this.embeddings = new EmbeddingTable(db, this.meta);
    this.fullText = new FullTextIndex(db, this.meta, () => this.checkpoint());
  }

  static dbPath(dir: string): string {
    return join(dir, "index.db");
  }

  /** Whether the repository has an index.db, a link to nothing among them (its open says what it is). */
  static exists(dir: string): boolean {
    if (existsSync(Store.dbPath(dir)) || danglingLink(Store.dbPath(dir)) !== undefined) return true;
    // The index folder a link to nothing (an index kept on a disk not mounted now): not a repository never indexed,
    // whose `index` then failed on the link (EEXIST) (s22 retest N5).
    const target = danglingLink(dir);
    if (target !== undefined) throw linkToNothing(dir, target);
    // A file where the index folder should be (a restore, a sync tool's conflict copy) is said with the move that fixes
    // it, not taken for a repository never indexed, whose hint (`index`) then failed (s21 retest R8).
    try {
      statSync(Store.dbPath(dir));
    } catch (error) {
      if (systemCode(error) === "ENOTDIR") throw toResearcherError(error);
    }
    return false;
  }

  /**
   * Which file the repository's index.db is (device and inode), or null when there is none. A connection holding
   * the file open keeps its inode from being reused, so another identity means another file: the repository removed
   * and added again, or a rebuild that moved an unusable index aside. Writes keep it, however they change the file.
   */
  static fileIdentity(dir: string): string | null {
    const stats = statSync(Store.dbPath(dir), { bigint: true, throwIfNoEntry: false });
    return stats ? `${stats.dev}:${stats.ino}` : null;
  }

  /**
   * Open a repository database, read only by default; `write`, `create` and `fresh` are for the writer lock's holder
   * (see OpenMode, and schema.ts for who may create and migrate it). `fresh` (a rebuild) moves aside an index it
   * cannot use, whatever is wrong with it, and starts a new one.
   */
  static open(dir: string, options: { write?: boolean; create?: boolean; fresh?: boolean } = {}): Store {
    const mode = options.fresh ? "fresh" : options.create ? "create" : options.write ? "write" : "read";
    // Identified before opening (as SearchContext does): a file replaced in between is found different next time.
    const file = mode === "read" ? Store.fileIdentity(dir) : null;
    return new Store(openIndexDatabase(Store.dbPath(dir), basename(dir), mode), basename(dir), file ?? `connection ${++connections}`);
  }

  close(): void {
    this.db.close();
  }

  /** Whether this connection still reads the file as it is (schema.ts stillAsOpened: an immutable open may not). */
  stillAsOpened(dir: string): boolean {
    return stillAsOpened(this.db, Store.dbPath(dir));
  }

  /** Searches running on this connection's read snapshot (see `snapshot`), and when it began. */
  private readers = 0;
  private snapshotStart = 0;
  /** Set by `retire`: the connection closes when its last search ends. */
  private retired = false;
  /** A document whose fragments had headings was deleted or replaced since the last recheckHeadings. */
  private headingsDropped = false;

  /** Close once no search runs on this connection: one under way finishes on the snapshot it started with. */
  retire(): void {
    this.retired = true;
    if (this.readers === 0) this.db.close();
  }

  /**
   * Run `work` on one consistent snapshot: a read transaction (WAL readers never block the writer) held while
   * any search on this connection runs, so ranking and reading rows see the same index even when an index run
   * commits in between. Concurrent searches on a shared connection share the snapshot.
   */
  async snapshot<T>(work: () => Promise<T>): Promise<T> {
    if (this.readers++ === 0 && !this.db.inTransaction) {
      this.db.run("BEGIN");
      this.snapshotStart = performance.now();
    }
    try {
      return await work();
    } finally {
      if (--this.readers === 0) {
        if (this.db.inTransaction) this.db.run("COMMIT");
        if (this.retired) this.db.close();
      }
    }
  }

  /** How long the shared read snapshot has been open (0 when no search runs): overlapping searches keep it open. */
  snapshotAge(): number {
    return this.readers > 0 ? performance.now() - this.snapshotStart : 0;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /**
   * Run `work` as one write transaction, however many batches it writes (each `transaction` inside becomes a
   * savepoint): readers keep seeing the old index until it commits, and a kill or an error leaves the old index
   * whole. For `index --rebuild` and `--embeddings-only`, which replace everything.
   */
  async atomically<T>(work: () => Promise<T>): Promise<T> {
    this.db.run("BEGIN IMMEDIATE");
    try {
      const result = await work();
      this.db.run("COMMIT");
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.run("ROLLBACK");
      throw error;
    }
  }

  /** Where the repository's folder was at the last index run (files.ts movedRoot), if recorded. */
  recordedRoot(): RootRecord | undefined {
    const text = this.meta.get("root");
    if (text === undefined) return undefined;
    try {
      const record = JSON.parse(text) as Partial<RootRecord>;
      return typeof record.path === "string" && typeof record.real === "string" ? { path: record.path, real: record.real } : undefined;
    } catch {
      return undefined;
    }
  }

  recordRoot(record: RootRecord | undefined): void {
    if (record) this.meta.set("root", JSON.stringify(record));
  }

  /** The folders inside the root that were mounts at the last complete run (discover.ts keepUnmounted). */
  mounts(): string[] {
    const mounts = this.meta.json<unknown>("mounts", { derived: true });
    return Array.isArray(mounts) ? mounts.filter((mount): mount is string => typeof mount === "string") : [];
  }

  recordMounts(mounts: readonly string[]): void {
    this.meta.set("mounts", JSON.stringify([...new Set(mounts)].sort()));
  }

  documents(): Map<string, StoredDocument> {
    const rows = this.db.query<StoredDocument, []>(`SELECT ${this.documentColumns()} FROM documents`).all();
    return new Map(rows.map((row) => [row.path, row]));
  }

  /** Whether the index keeps the stamps' inode change time and number (schema 18), once known. */
  private stamped?: boolean;

  /**
   * The columns of a stamp's inode change time and number. A reader reads an index of an older schema as it is
   * (schema.ts READABLE_FROM): one written before schema 18 has neither, which it reads as none.
   */
  private inodeColumns(): string {
    return this.hasInodes() ? "ctime_ms AS ctimeMs, ino" : "NULL AS ctimeMs, NULL AS ino";
  }

  /** Whether the stamps of documents and failures have their inode numbers' columns (schema 18). */
  private hasInodes(): boolean {
    this.stamped ??= this.db
      .query<{ name: string }, []>("SELECT name FROM pragma_table_info('documents') WHERE name = 'ino'")
      .all()
      .some(Boolean);
    return this.stamped;
  }

  /** A stored document's columns (StoredDocument). */
  private documentColumns(): string {
    return `id, path, hash, size, mtime_ms AS mtimeMs, ${this.inodeColumns()}`;
  }

  /** Paths of the documents whose stored metadata is damaged (not a JSON object): an index run reads them again. */
  pathsWithDamagedMetadata(): Set<string> {
    const rows = this.db
      .query<{ path: string }, []>(
        `SELECT path FROM documents WHERE typeof(metadata) <> 'text' OR (${METADATA} = '{}' AND metadata <> '{}')`,
      )
      .all();
    return new Set(rows.map((row) => row.path));
  }

  /** Paths of the documents with pages OCR left out (metadata `ocr_failed_pages`). */
  pathsWithOcrLeftOut(): Set<string> {
    return new Set(this.ocrLeftOut().map((doc) => doc.path));
  }

  /** The documents with pages OCR left out, and which pages (metadata `ocr_failed_pages`), by path. */
  ocrLeftOut(): { path: string; pages: number[] }[] {
    return this.pagesNamed("ocr_failed_pages");
  }

  /** The documents with pages whose text reads as symbols, not words, and which (metadata `garbled_pages`), by path. */
  garbledPages(): { path: string; pages: number[] }[] {
    return this.pagesNamed("garbled_pages");
  }

  /** The documents whose metadata `key` lists pages, and those pages, by path. */
  private pagesNamed(key: "ocr_failed_pages" | "garbled_pages"): { path: string; pages: number[] }[] {
    const rows = this.db
      .query<{ path: string; pages: string }, []>(
        `SELECT path, json_extract(${METADATA}, '$.${key}') AS pages FROM documents
         WHERE json_type(${METADATA}, '$.${key}') = 'array' ORDER BY path`,
      )
      .all();
    return rows.map(({ path, pages }) => ({
      path,
      pages: (JSON.parse(pages) as unknown[]).filter((page): page is number => typeof page === "number"),
    }));
  }

  /** Paths of the documents of these formats (md, pdf, …) that have no fragment. */
  pathsWithoutFragments(formats: string[]): Set<string> {
    const rows = this.db
      .query<{ path: string }, [string]>(
        `SELECT path FROM documents d WHERE format IN (SELECT value FROM json_each(?))
           AND NOT EXISTS (SELECT 1 FROM fragments f WHERE f.document_id = d.id)`,
      )
      .all(JSON.stringify(formats));
    return new Set(rows.map((row) => row.path));
  }

  /** Every document's id, path and the given metadata keys (top-level, read in SQL: no document's JSON is parsed). */
  documentMetadataKeys<K extends string>(keys: readonly K[]): ({ id: number; path: string } & Record<K, unknown>)[] {
    const columns = keys.map((key) => `json_extract(${METADATA}, '$.${key}') AS "${key}"`).join(", ");
    return this.db.query<{ id: number; path: string } & Record<K, unknown>, []>(`SELECT id, path, ${columns} FROM documents`).all();
  }

  /** Merge `patch` into a document's metadata (RFC 7396: a null value removes its key). */
  patchDocumentMetadata(id: number, patch: Record<string, unknown>): void {
    this.db.query(`UPDATE documents SET metadata = json_patch(${METADATA}, ?) WHERE id = ?`).run(JSON.stringify(patch), id);
  }

  /**
   * Write a document and all its fragments, replacing the stored version if `replaces`. Call inside
   * `transaction` so readers never see half of it. (A DELETE touches the FTS index and costs a flush of its
   * pending writes, so new documents skip it: that is most of a fresh index's time otherwise.)
   */
  replaceDocument(doc: DocumentInput, fragments: Fragment[], textHashes: string[], replaces = true): number {
    if (replaces) this.deleteDocument(doc.path);
    // `.run().lastInsertRowid`, not RETURNING: a RETURNING insert read with .get() costs several times more here.
    const id = Number(
      this.db
        .query(
          `INSERT INTO documents(path, hash, size, mtime_ms, ctime_ms, ino, title, format, metadata, indexed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          doc.path,
          doc.hash,
          doc.size,
          doc.mtimeMs,
          doc.ctimeMs,
          doc.ino,
          doc.title,
          doc.format,
          JSON.stringify(doc.metadata),
          new Date().toISOString(),
        ).lastInsertRowid,
    );
    const insertFragment = this.db.query(
      `INSERT INTO fragments(document_id, seq, start_line, end_line, page, page_end, heading, text, text_hash, unit, defines)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertFts = fullTextRowWriter(this.db, "fragments_fts");
    if (fragments.some((f) => f.headings.length > 0) && !this.mayHaveHeadings()) this.meta.delete(NO_HEADINGS_KEY);
    fragments.forEach((fragment, i) => {
      const heading = fragment.headings.join(HEADING_SEPARATOR);
      const row = insertFragment.run(
        id,
        fragment.seq,
        fragment.startLine,
        fragment.endLine,
        fragment.page,
        fragment.pageEnd,
        heading,
        fragment.text,
        textHashes[i]!,
        fragment.unit ?? null,
        fragment.defines?.join(LABEL_SEPARATOR) ?? null,
      );
      insertFts(row.lastInsertRowid, doc.title, heading, fragment.text);
    });
    // The pages kept of a conversion of these bytes cut short: finished now, they are no longer needed.
    this.db.query("DELETE FROM ocr_readings WHERE hash = ?").run(doc.hash);
    if (doc.convertedText) {
      this.db
        .query("INSERT INTO document_texts(document_id, settings, text) VALUES (?, ?, ?)")
        .run(id, doc.convertedText.settings, doc.convertedText.text);
      this.adoptHistory(doc.path, doc.hash);
      // Its own text again (a re-chunk replaces a document, and the trigger kept the text it had): one copy is enough.
      this.db.query("DELETE FROM removed_texts WHERE hash = ? AND settings = ?").run(doc.hash, doc.convertedText.settings);
      const insertImage = this.db.query("INSERT OR REPLACE INTO ocr_images(document_id, pixels, text, poor) VALUES (?, ?, ?, ?)");
      for (const image of doc.convertedText.images ?? []) insertImage.run(id, image.pixels, image.text ?? null, image.poor ? 1 : 0);
    }
    return id;
  }

  /**
   * What OCR read of the page images of the document with this id, read under these conversion settings
   * (OCR_IMAGES_SCHEMA), by their pixels: for its next version to read back.
   */
  ocrImages(documentId: number, settings: string): OcrImage[] {
    return this.db
      .query<{ pixels: string; text: string | null; poor: number }, [number, string]>(
        `SELECT i.pixels, i.text, i.poor FROM ocr_images i JOIN document_texts t ON t.document_id = i.document_id
         WHERE i.document_id = ? AND t.settings = ?`,
      )
      .all(documentId, settings)
      .map((row) => ({ ...keptReading(row), pixels: row.pixels }));
  }

  /** A document's kept converted text (replaceDocument), with the hash of the file it came from. */
  convertedText(path: string): { hash: string; settings: string; text: string } | undefined {
    return (
      this.db
        .query<{ hash: string; settings: string; text: string }, [string]>(
          "SELECT d.hash, t.settings, t.text FROM documents d JOIN document_texts t ON t.document_id = d.id WHERE d.path = ?",
        )
        .get(path) ?? undefined
    );
  }

  /**
   * A kept converted text of a file with these bytes (`hash`) converted under these settings, under whatever path:
   * its title, metadata and text, so that a re-chunk, a rename or a copy is not converted (OCR'd) again; a live
   * document's with its page images' readings, which its replacement keeps (a removed one's went with it).
   */
  keptConversion(
    hash: string,
    settings: string,
  ): { title: string; metadata: Record<string, unknown>; text: string; images?: OcrImage[] } | undefined {
    const row = this.db
      .query<{ document: number | null; title: string; metadata: string; text: string }, [string, string]>(
        // A live document's text first, then a removed one's (REMOVED_TEXTS_SCHEMA). From the kept texts (OCR'd
        // documents only, few) to their documents: documents.hash has no index of its own. Either way, a text whose
        // metadata is damaged lost its pages and OCR counts with it: it is recognised again (a removed one read back
        // without this check gave a scan no pages, s21 F8).
        `SELECT document, title, metadata, text FROM (
           SELECT d.id AS document, d.title, d.metadata, t.text, 0 AS removed FROM document_texts t CROSS JOIN documents d ON d.id = t.document_id
           WHERE d.hash = ?1 AND t.settings = ?2
           UNION ALL
           SELECT NULL, title, metadata, text, 1 FROM removed_texts WHERE hash = ?1 AND settings = ?2
         ) WHERE ${metadataOf("metadata")} = metadata ORDER BY removed LIMIT 1`,
      )
      .get(hash, settings);
    if (!row) return undefined;
    const images = row.document === null ? undefined : this.ocrImages(row.document, settings);
    return { title: row.title, metadata: parseMetadata(row.metadata), text: row.text, ...(images?.length ? { images } : {}) };
  }

  /**
   * Drop removed documents' kept texts (REMOVED_TEXTS_SCHEMA) older than REMOVED_TEXTS_DAYS, and with `bySize` the
   * oldest past REMOVED_TEXTS_CHARS in all. Every write session prunes by age (one DELETE), so a text is kept 30
   * days whether or not a later run changes anything; by size only a session that removed or replaced documents,
   * the only ones that add texts (summing every text's length costs a read of them all). The caller holds the
   * transaction.
   */
  pruneRemovedTexts({ bySize }: { bySize: boolean }): void {
    this.db.query("DELETE FROM removed_texts WHERE removed_at < julianday('now') - ?").run(REMOVED_TEXTS_DAYS);
    if (!bySize) return;
    this.db
      .query(
        `DELETE FROM removed_texts WHERE (hash, settings) IN (
           SELECT hash, settings FROM (
             SELECT hash, settings, sum(length(text)) OVER (ORDER BY removed_at DESC, hash, settings) AS kept FROM removed_texts
           ) WHERE kept > ?)`,
      )
      .run(REMOVED_TEXTS_CHARS);
  }

  /** Drop every removed document's kept text: a rebuild leaves none behind, as a new index would hold none. */
  dropRemovedTexts(): void {
    this.db.run("DELETE FROM removed_texts");
  }

  /**
   * Keep what OCR read of one page of the file at `path` with these bytes (`hash`), read under these conversion
   * settings (OCR_READINGS_SCHEMA), committed at once unless the caller holds a transaction: a kill right after keeps
   * it.
   */
  keepOcrReading(file: { hash: string; settings: string; path: string }, page: number, reading: OcrReading): void {
    this.db
      .query("INSERT OR REPLACE INTO ocr_readings(hash, settings, page, path, text, poor, pixels) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(file.hash, file.settings, page, file.path, reading.text ?? null, reading.poor ? 1 : 0, reading.pixels ?? null);
  }

  /** The pages kept of a file with these bytes read under these settings (keepOcrReading), by page number. */
  ocrReadings(hash: string, settings: string): Map<number, OcrReading> {
    const rows = this.db
      .query<{ page: number; text: string | null; poor: number; pixels: string | null }, [string, string]>(
        "SELECT page, text, poor, pixels FROM ocr_readings WHERE hash = ? AND settings = ?",
      )
      .all(hash, settings);
    return new Map(rows.map((row) => [row.page, keptReading(row)]));
  }

  /**
   * The page images OCR read under these settings in conversions cut short, of whatever bytes, by the path read at:
   * a file killed mid-OCR and then changed (a viewer's highlight, an appended save) reads back the pages whose images
   * it still paints, as a new version of an indexed scan does (s27 hostile O1). Read once a run: the table holds only
   * what conversions cut short left.
   */
  ocrReadingImages(settings: string): Map<string, OcrImage[]> {
    const rows = this.db
      .query<{ path: string; pixels: string; text: string | null; poor: number }, [string]>(
        "SELECT path, pixels, text, poor FROM ocr_readings WHERE settings = ? AND pixels IS NOT NULL",
      )
      .all(settings);
    const byPath = new Map<string, OcrImage[]>();
    for (const row of rows) byPath.set(row.path, [...(byPath.get(row.path) ?? []), { ...keptReading(row), pixels: row.pixels }]);
    return byPath;
  }

  /**
   * Drop the kept pages of every file `keep` does not want (a complete run: the file changed, went, or is read
   * under other settings now), with their bytes: one of them may be all the index holds of a file since deleted.
   */
  pruneOcrReadings(keep: (file: { hash: string; settings: string; path: string }) => boolean): void {
    const files = this.db
      .query<{ hash: string; settings: string; path: string }, []>("SELECT DISTINCT hash, settings, path FROM ocr_readings")
      .all();
    // Pages of one file's bytes may be kept under two paths (read before and after it moved): they go only when no
    // path of theirs is wanted (the old path's going took the new one's pages: s26b review F2).
    const wanted = new Set(files.filter(keep).map((file) => `${file.hash}\0${file.settings}`));
    const unwanted = files.filter((file) => !wanted.has(`${file.hash}\0${file.settings}`));
    if (!unwanted.length) return;
    const drop = this.db.query("DELETE FROM ocr_readings WHERE hash = ? AND settings = ?");
    this.transaction(() => {
      for (const file of unwanted) drop.run(file.hash, file.settings);
    });
  }

  /** Drop every kept page: a rebuild leaves none behind, as a new index would hold none. */
  dropOcrReadings(): void {
    this.db.run("DELETE FROM ocr_readings");
  }

  /**
   * Zero every free page of index.db: every connection zeroes the pages it frees (SECURE_DELETE), but those an
   * ordinary run freed whole under secure_delete FAST, before it was ON (a long document deleted or edited, rows moved
   * by a deletion nearby), keep their old bytes, and `remove` or a rebuild, which say they leave no text behind, cannot
   * reach them row by row (s22 retest2 A1). Zero-filled blobs take the free pages over and are dropped (zeroed again),
   * and nothing truncates the mapped file (no VACUUM). Each blob is sized
   * to the pages still free, at what an overflow page carries (its size less a 4-byte link): sized at whole pages,
   * they ran past the free list and grew the file a page at every `remove` (s23 review R7). Costs a write of the
   * free pages.
   */
  scrubFreePages(): void {
    const pragma = (name: string) => Object.values(this.db.query(`PRAGMA ${name}`).get() as Record<string, number>)[0]!;
    if (pragma("freelist_count") === 0) return;
    const carried = pragma("page_size") - 4;
    this.db.transaction(() => {
      this.db.run("CREATE TABLE scrub_free_pages(b BLOB)");
      const insert = this.db.query<unknown, [number]>("INSERT INTO scrub_free_pages(b) VALUES (zeroblob(?))");
      // Until none is free, or a blob took none (a page split's last page): never more blobs than pages.
      for (
        let free = pragma("freelist_count"), before = Infinity;
        free > 0 && free < before;
        before = free, free = pragma("freelist_count")
      )
        insert.run(Math.min(free * carried, SCRUB_BLOB_BYTES));
      this.db.run("DROP TABLE scrub_free_pages");
    })();
  }

  documentByPath(path: string): { id: number; hash: string; title: string } | undefined {
    return (
      this.db
        .query<{ id: number; hash: string; title: string }, [string]>("SELECT id, hash, title FROM documents WHERE path = ?")
        .get(path) ?? undefined
    );
  }

  /** Indexed documents as listings show them (all, or the one at `path`): stored fields, fragment count, last page. */
  documentListing(path?: string): ListedDocument[] {
    const rows = this.db
      .query<Omit<ListedDocument, "metadata"> & { metadata: string }, string[]>(
        `SELECT d.path, d.hash, d.size, d.mtime_ms AS mtimeMs, d.title, d.format, d.metadata, d.indexed_at AS indexedAt,
                (SELECT count(*) FROM fragments f WHERE f.document_id = d.id) AS fragments,
                (SELECT max(coalesce(f.page_end, f.page)) FROM fragments f WHERE f.document_id = d.id) AS pages
         FROM documents d ${path === undefined ? "" : "WHERE d.path = ?"} ORDER BY d.path`,
      )
      .all(...(path === undefined ? [] : [path]));
    return rows.map((row) => ({ ...row, metadata: parseMetadata(row.metadata) }));
  }

  /** Record a new stamp for a file whose content hash did not change. */
  touchDocument(id: number, stamp: StoredStamp): void {
    this.db
      .query("UPDATE documents SET size = ?, mtime_ms = ?, ctime_ms = ?, ino = ? WHERE id = ?")
      .run(stamp.size, stamp.mtimeMs, stamp.ctimeMs, stamp.ino, id);
  }

  deleteDocument(path: string): boolean {
    if (!this.headingsDropped && this.mayHaveHeadings()) this.headingsDropped = this.hasHeadings(path);
    const hash = this.documentByPath(path)?.hash;
    if (hash !== undefined) this.adoptHistory(path, hash);
    return this.db.query("DELETE FROM documents WHERE path = ?").run(path).changes > 0;
  }

  /**
   * Drop a document at a user's word (`remove`, MCP remove_from_index): unlike one that left its folder, it leaves no
   * kept text (REMOVED_TEXTS_SCHEMA) of its bytes behind, nor of its earlier versions at its path, no page OCR read of
   * its file in a conversion cut short (OCR_READINGS_SCHEMA: its bytes, or newer bytes read at its path), nor of its
   * page images (OCR_IMAGES_SCHEMA: they go with its row), and no bytes of its rows in the file (SECURE_DELETE). A user
   * dropping a confidential scan from an index before sharing it kept its whole OCR'd text in it (s21 F10). The pages
   * read at a path not indexed (its first conversion cut short) go too; whether a document went.
   */
  forgetDocument(path: string): boolean {
    const hash = this.documentByPath(path)?.hash;
    // The pages read at its path, of its bytes, and of any bytes read at its path (pages read earlier at another
    // path, before the file moved, share those bytes: s26b review F2).
    this.db
      .query("DELETE FROM ocr_readings WHERE path = ?1 OR hash = ?2 OR hash IN (SELECT hash FROM ocr_readings WHERE path = ?1)")
      .run(path, hash ?? null);
    if (hash === undefined || !this.deleteDocument(path)) return false;
    // Its bytes' text, its earlier versions' (replaced by other bytes at its path: a scan before its annotation, or
    // kept at a path it moved from: adoptHistory), and every text kept before removed texts recorded their path
    // (schema 16): it may be one of its versions, and a text dropped costs only its OCR again (s26b review F1).
    this.db.query("DELETE FROM removed_texts WHERE hash = ? OR path = ? OR path IS NULL").run(hash, path);
    return true;
  }

  /**
   * Drop, at a user's word, the texts kept (REMOVED_TEXTS_SCHEMA) of documents that left the index from `path`, which
   * no document holds now: `remove` of a deleted or newly ignored scan's path answered "not indexed" and kept its
   * OCR'd text for 30 days, which only a rebuild cleared (s28 hostile F2). As forgetDocument does, the texts of the
   * same bytes under other settings go too, with the pages read of them in conversions cut short and, once one was
   * kept there, every text kept before texts recorded their path (schema 16). How many were kept at `path`.
   */
  forgetKeptTexts(path: string): number {
    const kept = this.db.query<{ hash: string }, [string]>("SELECT hash FROM removed_texts WHERE path = ?").all(path);
    if (kept.length === 0) return 0;
    const hashes = JSON.stringify(kept.map((row) => row.hash));
    this.db
      .query("DELETE FROM removed_texts WHERE path = ?1 OR path IS NULL OR hash IN (SELECT value FROM json_each(?2))")
      .run(path, hashes);
    this.db.query("DELETE FROM ocr_readings WHERE hash IN (SELECT value FROM json_each(?))").run(hashes);
    return kept.length;
  }

  /**
   * The paths documents left the index from whose texts are kept (REMOVED_TEXTS_SCHEMA), oldest removal first: not a
   * text an indexed document still holds (a file moved), nor a path indexed again with other bytes (its earlier
   * version's text is its history), which status called documents no longer indexed (s28b retest R5, hostile F5).
   */
  keptTextPaths(): { path: string | null; removed_at: string }[] {
    return this.db
      .query<{ path: string | null; removed_at: string }, []>(
        `SELECT path, strftime('%Y-%m-%dT%H:%M:%fZ', max(removed_at)) AS removed_at FROM removed_texts
         WHERE hash NOT IN (SELECT hash FROM documents) AND (path IS NULL OR path NOT IN (SELECT path FROM documents))
         GROUP BY path ORDER BY max(removed_at), path`,
      )
      .all();
  }

  /**
   * The kept texts (REMOVED_TEXTS_SCHEMA) at a path these bytes were kept from, where no document is now, become the
   * texts of `path`'s history: the file moved from there, and a `remove` of it must drop its earlier versions too
   * (they stayed under the old path: s26b review F1). At each write and each delete: a file moved in one run is
   * written at its new path before its old one is deleted, so only the delete after it sees the move, and the kept
   * text it leaves replaces the one that pointed further back (s27 review F1). The original of a copy, still
   * indexed, keeps its own history (F2).
   */
  private adoptHistory(path: string, hash: string): void {
    this.db
      .query(
        `UPDATE removed_texts SET path = ?1 WHERE path IN (
           SELECT r.path FROM removed_texts r WHERE r.hash = ?2 AND r.path <> ?1
             AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.path = r.path))`,
      )
      .run(path, hash);
  }

  /** Whether a document's fragments have a heading (below its title). */
  private hasHeadings(path: string): boolean {
    return Boolean(
      this.db
        .query<{ one: number }, [string]>(
          `SELECT 1 AS one FROM fragments f JOIN documents d ON d.id = f.document_id WHERE d.path = ? AND f.heading <> '' LIMIT 1`,
        )
        .get(path),
    );
  }

  /**
   * Record a run's failures: they replace all recorded ones but those of `kept` (failed files the run left alone,
   * unchanged since), or with `paths` (a partial run) only those paths'; `inodes`, the numbers of kept failures
   * recorded without one (before schema 18).
   */
  recordFailures(
    failures: RecordedFailure[],
    scope: { paths?: string[]; kept?: ReadonlySet<string>; inodes?: ReadonlyMap<string, number> } = {},
  ): void {
    const learn = this.db.query("UPDATE failures SET ino = ? WHERE path = ? AND ino IS NULL");
    for (const [path, ino] of scope.inodes ?? []) learn.run(ino, path);
    const forget = this.db.query("DELETE FROM failures WHERE path = ?");
    const recorded = this.db.query<{ path: string }, []>("SELECT path FROM failures").all();
    const dropped = scope.paths ?? recorded.map((r) => r.path).filter((path) => !scope.kept?.has(path));
    for (const path of dropped) forget.run(path);
    const insert = this.db.query(
      "INSERT OR REPLACE INTO failures(path, reason, at, size, mtime_ms, ino, settings) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    const at = new Date().toISOString();
    for (const { path, reason, stamp } of failures)
      insert.run(path, reason, at, stamp?.size ?? null, stamp?.mtimeMs ?? null, stamp?.ino ?? null, stamp?.settings ?? null);
  }

  /**
   * The recorded failures that carry a stamp (the others are tried again by every run), by path. One recorded before
   * schema 18 has no inode number, and matches no file: it is tried once more.
   */
  failureStamps(): Map<string, FailureStamp> {
    this.inodeColumns(); // one upgrade added both tables' columns: the documents' say whether the failures have theirs
    const rows = this.db
      .query<FailureStamp & { path: string }, []>(
        `SELECT path, size, mtime_ms AS mtimeMs, ${this.stamped ? "ino" : "NULL AS ino"}, settings FROM failures
         WHERE size IS NOT NULL AND mtime_ms IS NOT NULL AND settings IS NOT NULL`,
      )
      .all();
    return new Map(rows.map(({ path, ...stamp }) => [path, stamp]));
  }

  failures(): { path: string; reason: string }[] {
    return this.db.query<{ path: string; reason: string }, []>("SELECT path, reason FROM failures ORDER BY path").all();
  }

  /** Why the last run that read `path` failed it, if it did (as `status` lists it). */
  failureOf(path: string): string | undefined {
    return this.db.query<{ reason: string }, [string]>("SELECT reason FROM failures WHERE path = ?").get(path)?.reason;
  }

  /** The fragments a filter admits. */
  fragmentIdsWhere(where: SqlCondition): number[] {
    return this.db
      .query<{ id: number }, (string | number)[]>(
        `SELECT f.id FROM fragments f JOIN documents d ON d.id = f.document_id WHERE ${where.sql}`,
      )
      .all(...where.params)
      .map((row) => row.id);
  }

  /** Whether any fragment passes the condition (a filter that admits none explains an empty search). */
  admitsAny(where: SqlCondition): boolean {
    return (
      this.db
        .query<{ one: number }, (string | number)[]>(
          `SELECT 1 AS one FROM fragments f JOIN documents d ON d.id = f.document_id WHERE ${where.sql} LIMIT 1`,
        )
        .get(...where.params) !== null
    );
  }

  /**
   * The values documents hold for `format` or a front-matter key (a list's elements each) with how many hold each,
   * most common first: what a filter on that key could have asked for. Null when the key holds objects somewhere
   * (its values are no list to offer).
   */
  keyValues(key: string, limit: number): { value: string; count: number }[] | null {
    if (key === "format") {
      return this.db
        .query<{ value: string; count: number }, [number]>(
          "SELECT format AS value, count(*) AS count FROM documents GROUP BY format ORDER BY count DESC, format LIMIT ?",
        )
        .all(limit);
    }
    const path = metadataPath(key);
    const nested = this.db
      .query<{ one: number }, [string]>(`SELECT 1 AS one FROM documents WHERE json_type(${METADATA}, ?) = 'object' LIMIT 1`)
      .get(path);
    if (nested) return null;
    return this.db
      .query<{ value: string | number; count: number }, [string, number]>(
        `SELECT CASE m.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE m.value END AS value, count(*) AS count
         FROM documents d, json_each(${metadataOf("d.metadata")}, ?) AS m
         WHERE m.type IN ('text', 'integer', 'real', 'true', 'false') GROUP BY 1 ORDER BY count DESC, 1 LIMIT ?`,
      )
      .all(path, limit)
      .map((row) => ({ value: String(row.value), count: row.count }));
  }

  /** The front-matter keys documents have (top level), at most `limit` of them. */
  metadataKeys(limit: number): string[] {
    return this.db
      .query<{ key: string }, [number]>(
        `SELECT DISTINCT m.key AS key FROM documents d, json_each(${metadataOf("d.metadata")}) AS m WHERE m.key IS NOT NULL LIMIT ?`,
      )
      .all(limit)
      .map((row) => row.key);
  }

  /** The filter as a condition the ranking queries take (`where`): compiled once per search, path globs matched. */
  compileFilter(filter: Filter, repository: string): SqlCondition {
    return filterSql(filter, { repository, documentPaths: () => this.documentPaths() });
  }

  /** Every document's id and path (what a path glob is matched against). */
  private documentPaths(): { id: number; path: string }[] {
    return this.db.query<{ id: number; path: string }, []>("SELECT id, path FROM documents").all();
  }

  private fragmentTotal = { version: -1, count: 0 };

  /** Fragments in the index, cached until another connection commits (`data_version`): read it on a reader's
   * connection, or before this connection's own writes. */
  fragmentCount(): number {
    const version = dataVersion(this.db);
    if (version !== this.fragmentTotal.version) {
      this.fragmentTotal = { version, count: this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM fragments").get()!.n };
    }
    return this.fragmentTotal.count;
  }

  /** The fragments of these documents. */
  fragmentIdsOfDocuments(documentIds: number[]): number[] {
    return this.db
      .query<{ id: number }, [string]>("SELECT id FROM fragments WHERE document_id IN (SELECT value FROM json_each(?))")
      .all(JSON.stringify(documentIds))
      .map((row) => row.id);
  }

  /** How many documents hold a fragment other than these. */
  documentCountWithout(ids: number[]): number {
    return this.db
      .query<{ n: number }, [string]>(
        "SELECT count(DISTINCT document_id) AS n FROM fragments WHERE id NOT IN (SELECT value FROM json_each(?))",
      )
      .get(JSON.stringify(ids))!.n;
  }

  /** How many documents hold these fragments. */
  documentCountOf(ids: number[]): number {
    return this.db
      .query<{ n: number }, [string]>("SELECT count(DISTINCT document_id) AS n FROM fragments WHERE id IN (SELECT value FROM json_each(?))")
      .get(JSON.stringify(ids))!.n;
  }

  /**
   * Which document each fragment belongs to (by id), from the covering index alone: a search capping lists by document.
   */
  documentIdsOf(ids: number[]): Map<number, number> {
    const rows = this.db
      .query<{ id: number; documentId: number }, [string]>(
        "SELECT id, document_id AS documentId FROM fragments INDEXED BY fragments_owner WHERE id IN (SELECT value FROM json_each(?))",
      )
      .all(JSON.stringify(ids));
    return new Map(rows.map(({ id, documentId }) => [id, documentId]));
  }

  /**
   * These fragment ids in the order of their documents' paths, then their places in them: how ties of a ranking are
   * ordered, by what the folder holds rather than the history of its index (s28 hostile F9). Ids no longer indexed
   * are left out.
   */
  inPathOrder(ids: number[]): number[] {
    return this.db
      .query<{ id: number }, [string]>(
        `SELECT f.id FROM fragments f JOIN documents d ON d.id = f.document_id
         WHERE f.id IN (SELECT value FROM json_each(?)) ORDER BY d.path, f.seq, f.id`,
      )
      .all(JSON.stringify(ids))
      .map((row) => row.id);
  }

  /** Which document (id and path) each fragment belongs to, without reading fragment texts. */
  ownersOf(ids: number[]): Map<number, { documentId: number; path: string }> {
    const rows = this.db
      .query<{ id: number; documentId: number; path: string }, [string]>(
        `SELECT f.id, f.document_id AS documentId, d.path
         FROM fragments f INDEXED BY fragments_owner JOIN documents d ON d.id = f.document_id
         WHERE f.id IN (SELECT value FROM json_each(?))`,
      )
      .all(JSON.stringify(ids));
    return new Map(rows.map(({ id, ...owner }) => [id, owner]));
  }

  /**
   * False when no fragment of this index has a heading (recorded from its creation on, and again by index runs that
   * change documents: recheckHeadings), so no heading can weigh in a ranking (search/heading-boost.ts); true when
   * one may.
   */
  mayHaveHeadings(): boolean {
    return this.meta.get(NO_HEADINGS_KEY) !== "none";
  }

  /**
   * After documents were replaced or removed: whether a fragment with a heading is left. Without it, the ranking
   * went on as if the last document with sections were still there (s13 review #6). The search stops at the first
   * fragment with one; an index that has none already is not searched.
   */
  recheckHeadings(): void {
    // Only when a document with headings went: the look is a scan of every fragment where headings are few (0.3 s
    // at a million), and every watch batch and add_to_index ran it.
    if (!this.headingsDropped || !this.mayHaveHeadings()) return;
    this.headingsDropped = false;
    const any = this.db.query<{ one: number }, []>("SELECT 1 AS one FROM fragments WHERE heading <> '' LIMIT 1").get();
    if (!any) this.meta.set(NO_HEADINGS_KEY, "none");
  }

  /** Each fragment's heading path, its document's title and format, its text when at most `textChars` long, and how
   * it follows the fragment before it in its document. */
  fragmentHeadings(ids: number[], textChars = 0): Map<number, FragmentHeadings> {
    if (ids.length === 0) return new Map();
    const rows = this.db
      .query<FragmentHeadings & { id: number }, [number, string, string]>(
        `SELECT f.id, f.heading, d.title, d.format, CASE WHEN length(f.text) <= ?1 THEN f.text END AS text,
                p.heading AS previous, f.defines,
                f.unit IS NOT NULL AND (f.unit = p.unit AND f.heading = p.heading
                  OR substr(p.heading, 1, length(f.heading) + length(?2)) = f.heading || ?2) AS continued
         FROM fragments f JOIN documents d ON d.id = f.document_id
         LEFT JOIN fragments p ON p.document_id = f.document_id AND p.seq = f.seq - 1
         WHERE f.id IN (SELECT value FROM json_each(?3))`,
      )
      .all(textChars, HEADING_SEPARATOR, JSON.stringify(ids));
    checkText(rows, ["heading", "title", "format"], "a result's heading", ["text", "previous", "defines"]);
    return new Map(rows.map(({ id, ...row }) => [id, row]));
  }

  /**
   * The run of consecutive fragments that holds fragment `seq` of a document when it is one part of a unit or section
   * split into parts: which part `seq` is, and the lines of the run. A run is the fragments under `heading` (a
   * function's part: under the function its recorded unit names, though its heading names a nested def it holds), and
   * those of units nested in it (`heading › …`) where the unit goes on after them, or, for a function, at its ends:
   * a function split around a closure or a method of an object it builds is one run, head, nested units and tail (its
   * 4-line head had no section, and nothing told an agent the function went on). A fragment of another unit ends a run
   * (a getter and its setter, two overloads of one name, two `### Example` sections), as the chunker recorded it
   * (Fragment.unit); fragments chunked before units were recorded fall back to what they show: in code, a first line of
   * code that names the unit; in text, a start more than a blank line after the one before on the same page. A
   * section's subsections never join it.
   */
  sectionParts(documentId: number, seq: number, heading: string, code: boolean): SectionParts | undefined {
    for (let reach = SECTION_REACH; ; reach *= 4) {
      const rows = this.db
        .query<SectionRow, [number, number, number]>(
          `SELECT seq, start_line AS start, end_line AS end, page, heading, unit, substr(text, 1, 400) AS head FROM fragments
           WHERE document_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`,
        )
        .all(documentId, seq - reach, seq + reach);
      const run = runAround(rows, seq, heading, code);
      if (!run) return undefined;
      // A run that reaches the end of what was read may go on past it: read further (a 200-part section was told
      // "part 65 of 114" from one of its fragments and "part 1 of 65" from another).
      const cut = (run.first === 0 && rows[0]!.seq === seq - reach) || (run.last === rows.length - 1 && rows.at(-1)!.seq === seq + reach);
      if (cut && reach < MAX_SECTION_REACH) continue;
      if (run.first === run.last) return undefined;
      return {
        part: run.at - run.first + 1,
        parts: run.last - run.first + 1,
        start_line: rows[run.first]!.start,
        end_line: rows[run.last]!.end,
      };
    }
  }

  /** Rows whose text columns hold another type (a number, bytes): damage SQLite's own check does not look for. */
  wrongTypedRows(): number {
    const notText = (columns: string[]) => columns.map((column) => `typeof(${column}) <> 'text'`).join(" OR ");
    return this.db
      .query<{ n: number }, []>(
        `SELECT (SELECT count(*) FROM fragments WHERE ${notText(["text", "heading", "text_hash"])})
              + (SELECT count(*) FROM documents WHERE ${notText(["path", "hash", "title", "format"])}) AS n`,
      )
      .get()!.n;
  }

  fragmentsByIds(ids: number[]): Map<number, FragmentRow> {
    if (ids.length === 0) return new Map();
    const rows = this.db
      .query<FragmentRow, string[]>(
        `SELECT f.id, f.document_id AS documentId, f.seq, f.start_line AS startLine, f.end_line AS endLine, f.page,
                f.page_end AS pageEnd, f.heading, f.text, d.path, d.title, d.hash, d.format, d.metadata
         FROM fragments f JOIN documents d ON d.id = f.document_id
         WHERE f.id IN (SELECT value FROM json_each(?))`,
      )
      .all(JSON.stringify(ids));
    // Metadata is not checked: damaged, it reads as none (parseMetadata) until an index run reads the file again.
    checkText(rows, ["text", "heading", "path", "title", "hash", "format"], "a result's fragment");
    return new Map(rows.map((row) => [row.id, row]));
  }

  document(path: string): StoredDocument | undefined {
    return this.db.query<StoredDocument, [string]>(`SELECT ${this.documentColumns()} FROM documents WHERE path = ?`).get(path) ?? undefined;
  }

  /**
   * The indexed and failed paths whose stamp holds one of these inode numbers: a file's other hard links (watch.ts).
   * One scan of the table (no index on `ino`: asked only of a batch that changed a file with several links). An index
   * written before schema 18 records no numbers, and has none.
   */
  pathsWithInodes(inodes: readonly number[]): { path: string; ino: number }[] {
    if (inodes.length === 0 || !this.hasInodes()) return [];
    return this.db
      .query<{ path: string; ino: number }, [string, string]>(
        `SELECT path, ino FROM documents WHERE ino IN (SELECT value FROM json_each(?))
         UNION SELECT path, ino FROM failures WHERE ino IN (SELECT value FROM json_each(?))`,
      )
      .all(JSON.stringify(inodes), JSON.stringify(inodes));
  }

  /** The documents under a folder (relative, no trailing `/`), found by a range of the path index. */
  documentsUnder(folder: string): StoredDocument[] {
    // Every path that starts with `folder/` sorts in [`folder/`, `folder0`): '0' follows '/'.
    return this.db
      .query<StoredDocument, [string, string]>(`SELECT ${this.documentColumns()} FROM documents WHERE path >= ? AND path < ?`)
      .all(`${folder}/`, `${folder}0`);
  }

  counts(): { documents: number; fragments: number } {
    return this.db
      .query<{ documents: number; fragments: number }, []>(
        "SELECT (SELECT count(*) FROM documents) AS documents, (SELECT count(*) FROM fragments) AS fragments",
      )
      .get()!;
  }

  /** Pages of the stored documents that were read by OCR (their `ocr_pages` metadata). */
  ocrPages(): number {
    return this.db
      .query<{ pages: number }, []>(`SELECT coalesce(sum(json_extract(${METADATA}, '$.ocr_pages')), 0) AS pages FROM documents`)
      .get()!.pages;
  }

  /** Documents per code language (metadata `language`), most first. */
  languageCounts(): Record<string, number> {
    // Code files only (format = a code extension): EPUB's and HTML's `language` is the natural one (`en-US`).
    const rows = this.db
      .query<{ language: string; n: number }, [string]>(
        `SELECT json_extract(${METADATA}, '$.language') AS language, count(*) AS n FROM documents
         WHERE json_type(${METADATA}, '$.language') = 'text' AND format IN (SELECT value FROM json_each(?))
         GROUP BY language ORDER BY n DESC, language`,
      )
      .all(JSON.stringify(CODE_EXTENSIONS));
    return Object.fromEntries(rows.map((row) => [row.language, row.n]));
  }

  // ---- integrity (verify) -----------------------------------------------------------------------------------

  /** SQLite's check of every page and index (`integrity_check`): "ok", or one row per problem (FTS5's among them). */
  integrityCheck(): string[] {
    return integrityCheck(this.db);
  }

  /** What SQLite's check finds wrong, or null; throws when the check itself fails for the environment (busy, I/O). */
  pageDamage(): string | null {
    return pageDamage(this.db);
  }

  /**
   * Fragments that belong to no document: rows an edit beneath the index left (foreign keys keep them out otherwise).
   */
  orphanFragmentCount(): number {
    return this.db
      .query<{ n: number }, []>("SELECT count(*) AS n FROM fragments WHERE document_id NOT IN (SELECT id FROM documents)")
      .get()!.n;
  }

  /** Delete the fragments that belong to no document (their full-text rows go with them); how many there were. */
  deleteOrphanFragments(): number {
    return this.db.query("DELETE FROM fragments WHERE document_id NOT IN (SELECT id FROM documents)").run().changes;
  }

  /**
   * Copy the WAL into the database and empty it. Emptying waits for searches reading an older snapshot; an index
   * run waits for them briefly, not the full busy timeout (5 s per checkpoint behind a long search): the WAL is
   * then emptied by a later checkpoint.
   */
  checkpoint(): void {
    this.db.run(`PRAGMA busy_timeout = ${CHECKPOINT_WAIT_MS}`);
    try {
      this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    } finally {
      this.db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /**
   * Leave checkpoints to the caller (`checkpoint`, `checkpointIfLarger`): SQLite's automatic ones each sync the file.
   */
  disableAutoCheckpoint(): void {
    this.db.run("PRAGMA wal_autocheckpoint = 0");
  }

  /** index.db's size on disk, without its WAL. */
  databaseBytes(): number {
    return statSync(this.db.filename).size;
  }

  /**
   * Checkpoint once the WAL has grown past `limit` bytes. Index runs turn automatic checkpoints off (each one syncs
   * the database file) and call this between batches, so a long run's WAL, and the free disk it needs, stay bounded.
   */
  checkpointIfLarger(limit: number): void {
    if (this.db.inTransaction) return; // a rebuild's single transaction can only be checkpointed once committed
    const wal = statSync(`${this.db.filename}-wal`, { throwIfNoEntry: false });
    if (wal && wal.size > limit) this.checkpoint();
  }
}
