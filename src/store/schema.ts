/**
 * The schema of `index.db`, its versions and upgrades, and opening it safely: writers (under the writer lock)
 * create a missing index beside and link it into place, and migrate an older schema; readers never lock or write,
 * so a search racing the first `index` sees either no index or a complete one, and an older schema is an error
 * that names the command upgrading it.
 */
import { Database } from "bun:sqlite";
import {
  accessSync,
  chmodSync,
  constants as fs,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { syncFolder, tempPathFor } from "../atomic.ts";
import {
  damagedIndex,
  describeError,
  isSqliteDamage,
  isSqliteEnvironment,
  linkToNothing,
  notIndexedYet,
  OPEN_FILES_HINT,
  permissionHint,
  rebuildHint,
  ResearcherError,
  systemCode,
  toResearcherError,
  writeDenied,
} from "../errors.ts";
import { danglingLink, freeBytes, openFilesExhausted } from "../files.ts";
import { FTS_TOKENIZE, FULL_TEXT_VERSION, rewriteFullText } from "./fts.ts";

export const SCHEMA_VERSION = 18;

/**
 * The oldest schema a reader reads as it is: the upgrades since add only what writers alone read (v14: the OCR readings
 * of a conversion cut short; v15: the OCR readings of documents' page images; v16: the path a removed text was removed
 * from; v17: the page image a kept reading was read from; v18: the stamps' inode change time and number, which the
 * store reads as none there), so an index written before them is searched as it was until the next writer upgrades
 * it, and no search says INDEX_OUTDATED after an upgrade of researcher. v13 remade the full-text index with other
 * terms: an index from before it is not searched as it is.
 */
const READABLE_FROM = 13;

/**
 * Impact lists (see bm25.ts): for words in many fragments, the fragments where the word weighs most (its weighted
 * count and the fragment's length), so a one-word query reads a short list instead of scoring every fragment that
 * holds the word. `bound` is the most the word weighs in any fragment left off its list, at the average length
 * recorded in meta `impacts`; a fragment written later joins the list if it weighs more.
 */
const IMPACTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS term_impacts (
  term TEXT NOT NULL,
  impact REAL NOT NULL,
  fragment_id INTEGER NOT NULL,
  weighted_tf REAL NOT NULL,
  length INTEGER NOT NULL,
  PRIMARY KEY (term, impact, fragment_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS term_impacts_by_fragment ON term_impacts(fragment_id);
CREATE TABLE IF NOT EXISTS term_bounds (term TEXT PRIMARY KEY, bound REAL NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS term_impacts_delete AFTER DELETE ON fragments BEGIN
  DELETE FROM term_impacts WHERE fragment_id = old.id;
END;
`;

/**
 * Posting lists (see store/postings.ts and bm25.ts): every fragment holding a word (but the rarest), with the
 * word's counts and the fragment's length, as one blob per word; fragments written since join through
 * `postings_added`, deleted ones are recorded in `postings_removed` (by the trigger, while lists exist).
 */
const POSTINGS_SCHEMA = `
CREATE TABLE IF NOT EXISTS term_postings (term TEXT PRIMARY KEY, postings BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS postings_added (
  term TEXT NOT NULL,
  fragment_id INTEGER NOT NULL,
  title INTEGER NOT NULL,
  heading INTEGER NOT NULL,
  body INTEGER NOT NULL,
  length INTEGER NOT NULL,
  PRIMARY KEY (term, fragment_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS postings_removed (fragment_id INTEGER PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS postings_delete AFTER DELETE ON fragments WHEN EXISTS (SELECT 1 FROM term_postings) BEGIN
  INSERT OR IGNORE INTO postings_removed(fragment_id) VALUES (old.id);
END;
`;

/**
 * The text of documents whose conversion is slow to repeat (pages read by OCR), as the index run converted it, with
 * the conversion settings it was converted under: `get` reads a page of a scanned book back from here instead of
 * recognising the whole book again. Valid while the document's hash and the settings are unchanged.
 */
const DOCUMENT_TEXTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS document_texts (
  document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
  settings TEXT NOT NULL,
  text TEXT NOT NULL
);
`;

/** Pruning by age reads this, not every kept text (removed_at lies after the text in its row: 0.1 s at 60 MiB). */
const REMOVED_TEXTS_AGE = "CREATE INDEX IF NOT EXISTS removed_texts_age ON removed_texts(removed_at);";
/**
 * What OCR read of each page of a file whose conversion has not finished (an index run killed, stopped, or a
 * conversion stopped by a limit), as soon as each page is read: by the file's bytes (`hash`), the conversion settings
 * it was read under and the page, so the next conversion of those very bytes reads the pages back and recognises only
 * the rest. `path` is where it was read, for a complete run to drop the pages of a file changed or gone since, and
 * `remove` those of the path it drops. A document written for those bytes drops them: its text is kept whole then.
 * `pixels` is the key of the page image read (null in rows kept before schema 17): a page read back keeps its place
 * among the document's page images (OCR_IMAGES_SCHEMA).
 */
const OCR_READINGS_SCHEMA = `
CREATE TABLE IF NOT EXISTS ocr_readings (
  hash TEXT NOT NULL,
  settings TEXT NOT NULL,
  page INTEGER NOT NULL,
  path TEXT NOT NULL,
  text TEXT,
  poor INTEGER NOT NULL,
  pixels TEXT,
  PRIMARY KEY (hash, settings, page)
) WITHOUT ROWID;
`;

/**
 * What OCR read of each distinct page image of an OCR'd document (ConvertedDocument.ocrImages), by the image's
 * pixels (ocr.ts pixelsKey), kept with its converted text (DOCUMENT_TEXTS_SCHEMA, whose settings it was read under):
 * the document's next version (a highlight added, an incremental update appended) reads the pages whose images are
 * the same back, and recognises only the others. It goes with its document (replaced, gone, removed): only the
 * current documents' pages are kept.
 */
const OCR_IMAGES_SCHEMA = `
CREATE TABLE IF NOT EXISTS ocr_images (
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  pixels TEXT NOT NULL,
  text TEXT,
  poor INTEGER NOT NULL,
  PRIMARY KEY (document_id, pixels)
) WITHOUT ROWID;
`;

/** The trigger that keeps a deleted document's text with its path, and the index `remove` finds a path's texts by. */
const REMOVED_TEXTS_PATHS = `
CREATE INDEX IF NOT EXISTS removed_texts_path ON removed_texts(path);
CREATE TRIGGER IF NOT EXISTS documents_keep_text BEFORE DELETE ON documents BEGIN
  INSERT OR REPLACE INTO removed_texts(hash, settings, title, metadata, text, removed_at, path)
    SELECT old.hash, t.settings, old.title, old.metadata, t.text, julianday('now'), old.path FROM document_texts t WHERE t.document_id = old.id;
END;
`;

/**
 * The kept text of OCR'd documents removed from the index (gone, excluded, moved out, replaced by other bytes), for
 * REMOVED_TEXTS_DAYS: a scan that comes back with the same bytes (a folder excluded for a while, a file moved out and
 * back, a branch checked out and back) is read back, not recognised again (about 3 CPU-s a page).
 * Store.pruneRemovedTexts bounds it by age and size. `path` is where it was removed from (null in rows kept before
 * schema 16): `remove` of a path drops the texts of its earlier versions too (an annotated scan's text before the
 * annotation).
 */
const REMOVED_TEXTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS removed_texts (
  hash TEXT NOT NULL,
  settings TEXT NOT NULL,
  title TEXT NOT NULL,
  metadata TEXT NOT NULL,
  text TEXT NOT NULL,
  removed_at REAL NOT NULL,
  path TEXT,
  PRIMARY KEY (hash, settings)
) WITHOUT ROWID;
${REMOVED_TEXTS_AGE}
${REMOVED_TEXTS_PATHS}
`;

/** Contentless: the text lives once, in fragments; snippets are cut from there. */
const FULL_TEXT_SCHEMA = `
CREATE VIRTUAL TABLE fragments_fts USING fts5(
  title, heading, body, content='', contentless_delete=1,
  ${FTS_TOKENIZE}
);
`;

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- No fragment has a heading yet (Store.mayHaveHeadings); an index from before the key existed may have some.
INSERT INTO meta(key, value) VALUES ('fragment_headings', 'none');
CREATE TABLE documents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  path TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms REAL NOT NULL,
  -- The rest of the file's stamp (index/plan.ts Stamp): its inode change time and inode number.
  ctime_ms REAL,
  ino INTEGER,
  title TEXT NOT NULL,
  format TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  indexed_at TEXT NOT NULL
);
-- AUTOINCREMENT: fragment ids are keys in vectors.usearch and must never be reused.
CREATE TABLE fragments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  page INTEGER,
  page_end INTEGER,
  heading TEXT NOT NULL,
  text TEXT NOT NULL,
  text_hash TEXT NOT NULL,
  unit INTEGER,
  defines TEXT
);
CREATE INDEX fragments_by_document ON fragments(document_id, seq);
CREATE INDEX fragments_by_text_hash ON fragments(text_hash);
-- Fragment → document without reading fragment texts (counting matched documents reads one per match).
CREATE INDEX fragments_owner ON fragments(id, document_id);
${FULL_TEXT_SCHEMA}
CREATE TRIGGER fragments_fts_delete AFTER DELETE ON fragments BEGIN
  DELETE FROM fragments_fts WHERE rowid = old.id;
END;
${IMPACTS_SCHEMA}
${POSTINGS_SCHEMA}
${DOCUMENT_TEXTS_SCHEMA}
${REMOVED_TEXTS_SCHEMA}
${OCR_READINGS_SCHEMA}
${OCR_IMAGES_SCHEMA}
-- Vectors keyed by the fragment text's hash: an unchanged text is never embedded twice.
CREATE TABLE embeddings (text_hash TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
-- A file that failed to convert, with its stamp (index/plan.ts failedUnchanged) and conversion settings then (null:
-- tried again every run).
CREATE TABLE failures (path TEXT PRIMARY KEY, reason TEXT NOT NULL, at TEXT NOT NULL, size INTEGER, mtime_ms REAL, ino INTEGER, settings TEXT);
`;

/**
 * How the index is opened. `read` never writes it. Writers hold the writer lock and upgrade an older schema:
 * `write` opens an existing index, `create` also a missing one, `fresh` (`index --rebuild`) also replaces one it
 * cannot use.
 */
export type OpenMode = "read" | "write" | "create" | "fresh";

/** An open index.db, and where an index that could not be used was moved aside (`fresh` only). */
export interface OpenedIndex {
  db: Database;
  movedAside?: { to: string; why: string };
}

/**
 * Open a repository database. Writers (`create`, under the writer lock) create it when missing and migrate an older
 * schema. A file that is not a readable SQLite database is INDEX_CORRUPT for readers; a writer moves it aside (as
 * `index.db.damaged-<time>`, with its WAL) and starts a new index. `fresh` (a rebuild, which rewrites everything
 * anyway) also checks every page and index first (`integrityCheck`) and moves aside an index that is damaged inside,
 * one written by a newer researcher, or one that fails to open: whatever state it is in, a rebuild can start.
 */
export function openIndexDatabase(file: string, name: string, mode: OpenMode): OpenedIndex {
  const create = mode === "create" || mode === "fresh";
  const odd = oddFiles(file, name);
  if (odd) {
    // No index run builds a new index in its place unasked (an index on a disk not mounted comes back with the
    // disk); a rebuild moves the three files aside.
    if (mode !== "fresh") throw new ResearcherError("INDEX_CORRUPT", odd.what, { hint: odd.hint });
    const to = moveAside(file);
    createBeside(file);
    return { db: openChecked(file, name, "create"), movedAside: { to, why: odd.what } };
  }
  if (!existsSync(file)) {
    if (!create) {
      // The index folder a link to nothing (an index on a disk not mounted now) is that, not "never indexed".
      const target = danglingLink(dirname(file));
      throw target === undefined ? notIndexedYet(name, `no ${file}`) : linkToNothing(dirname(file), target);
    }
    createBeside(file);
  }
  let why: string;
  try {
    const db = openChecked(file, name, mode);
    if (mode === "read") return { db };
    // Writers make sure the tables they write are there; a rebuild checks every page too.
    const damage = (mode === "fresh" ? pageDamage(db) : null) ?? missingFromSchema(db);
    if (damage === null) return { db };
    db.close();
    if (mode !== "fresh") throw damagedIndex(name, damage);
    why = damage;
  } catch (error) {
    if (!create || !(isUnreadable(error) || (mode === "fresh" && isIndexFailure(error)))) throw error;
    why = describeError(error);
  }
  const to = moveAside(file);
  createBeside(file);
  return { db: openChecked(file, name, "create"), movedAside: { to, why } };
}

/**
 * SQLite's check of every page and every index against its table (`integrity_check`): one row, "ok", or one row per
 * problem found, its lines joined. `quick_check` does not compare an index with its table: a damaged UNIQUE index on
 * document paths passed it, and the next edit stored a document twice (s15 hostile #2); this costs about a fifth more.
 */
export function integrityCheck(db: Database): string[] {
  return db
    .query<{ integrity_check: string }, []>("PRAGMA integrity_check")
    .all()
    .map((r) => r.integrity_check.replace(/\s*\n\s*/g, "; "));
}

/**
 * What SQLite's check (`integrityCheck`) finds wrong, or null when every page and index is whole. The check failing
 * is damage too, unless SQLite says why in words of the environment (busy, full, forbidden): only a rebuild asks.
 */
export function pageDamage(db: Database): string | null {
  try {
    const rows = integrityCheck(db);
    return rows.length === 1 && rows[0] === "ok" ? null : rows.slice(0, 3).join("; ");
  } catch (error) {
    if (isSqliteDamage(error) || (systemCode(error).startsWith("SQLITE_") && !isSqliteEnvironment(error))) return describeError(error);
    throw error;
  }
}

/**
 * The tables and columns a current index has that this one lacks, or null when it lacks none: a table or column
 * dropped beneath the index (its pages whole, so SQLite's check passed) failed every write of a rebuild with `no such
 * column`. Extra ones are no damage. A schema made in memory says what a current index holds, so this cannot drift.
 */
export function missingFromSchema(db: Database): string | null {
  const actual = tableColumns(db);
  const missing = [...currentShape()].flatMap(([table, columns]) => {
    const have = actual.get(table);
    if (!have) return [`table ${table}`];
    return [...columns].filter((column) => !have.has(column)).map((column) => `column ${table}.${column}`);
  });
  return missing.length ? `its schema lacks ${missing.slice(0, 3).join(", ")}` : null;
}

let shape: Map<string, Set<string>> | undefined;

/** The tables and columns of a current index, made once per process (every writer's open compares with them). */
function currentShape(): Map<string, Set<string>> {
  if (!shape) {
    const pristine = new Database(":memory:");
    try {
      pristine.run(SCHEMA);
      shape = tableColumns(pristine);
    } finally {
      pristine.close();
    }
  }
  return shape;
}

/** Each table of a database (SQLite's own aside) with its columns. */
function tableColumns(db: Database): Map<string, Set<string>> {
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
  const columns = db.query<{ name: string }, [string]>("SELECT name FROM pragma_table_info(?)");
  return new Map(tables.map(({ name }) => [name, new Set(columns.all(name).map((column) => column.name))]));
}

/** INDEX_CORRUPT from opening (not permissions, which no rebuild helps): a rebuild replaces the file. */
const isIndexFailure = (error: unknown) => error instanceof ResearcherError && error.code === "INDEX_CORRUPT";

/** What turns schema version N - 1 into N: SQL, or a step that needs code. */
const UPGRADES: Record<number, string | ((db: Database) => void)> = {
  2: "CREATE INDEX IF NOT EXISTS fragments_owner ON fragments(id, document_id)",
  // v3: fragments remember the page they end on; a document's format is its file type (md, txt, pdf, …).
  3: `ALTER TABLE fragments ADD COLUMN page_end INTEGER;
      UPDATE documents SET format = CASE format WHEN 'markdown' THEN 'md' WHEN 'text' THEN 'txt' ELSE format END;`,
  // v4: impact lists for one-word BM25 queries (empty until an index run of a large repository builds them).
  4: IMPACTS_SCHEMA,
  // v5: the full-text index also holds the parts of compound words (ftsText): re-index every fragment's text, and
  // drop the impact lists computed from the old index (the next index run builds them again).
  5: rebuildFullTextForIdentifiers,
  // v6: a failure remembers the file's stamp and the conversion settings it failed under, so an unchanged failed
  // file is not converted again; failures recorded before have none and are tried once more.
  6: `ALTER TABLE failures ADD COLUMN size INTEGER;
      ALTER TABLE failures ADD COLUMN mtime_ms REAL;
      ALTER TABLE failures ADD COLUMN settings TEXT;`,
  // v7: posting lists for multi-word BM25 queries (empty until an index run of a large repository builds them).
  7: POSTINGS_SCHEMA,
  // v8: the converted text of OCR'd documents (filled as the next index runs convert them).
  8: DOCUMENT_TEXTS_SCHEMA,
  // v9: which unit (section, function) of its document a fragment is part of; null until its document is chunked again.
  9: "ALTER TABLE fragments ADD COLUMN unit INTEGER",
  // v10: the OCR'd text of removed documents, kept for a while (filled as documents are removed from now on).
  10: REMOVED_TEXTS_SCHEMA,
  // v11: removed texts pruned by age through an index, as every write session now prunes.
  11: REMOVED_TEXTS_AGE,
  // v12: the labels of every unit a code fragment defines, beyond the four its heading shows; null until its document
  // is chunked again (CODE_OUTLINE_VERSION 23 re-chunks code at the next index run).
  12: "ALTER TABLE fragments ADD COLUMN defines TEXT",
  // v13: marks are word characters (fts.ts FTS_TOKENIZE) and Hebrew and Arabic points are dropped (FULL_TEXT_VERSION
  // 5): the full-text index is made again and written from the fragments. Its terms are not an older index's, so a
  // reader of one must not search it as it is (INDEX_OUTDATED says to run `index`).
  13: remakeFullText,
  // v14: the OCR readings of pages of a conversion not finished (filled as pages are read from now on); readers
  // never read them (READABLE_FROM).
  14: OCR_READINGS_SCHEMA,
  // v15: the OCR readings of OCR'd documents' page images (filled as documents are written from now on); readers
  // never read them (READABLE_FROM).
  15: OCR_IMAGES_SCHEMA,
  // v16: a removed text keeps the path it was removed from (null in the rows kept before), for `remove` of the path.
  16: keepRemovedTextPaths,
  // v17: a kept page reading keeps the key of the page image it was read from (null in the rows kept before).
  17: (db) => addColumn(db, "ocr_readings", "pixels TEXT"),
  // v18: a document's stamp holds the file's inode change time and number too (index/plan.ts Stamp), so that a file
  // put in an indexed one's place with its size and mtime is read; a failure's, the inode number. Null in the rows
  // written before: the next run reads and hashes each such file once and records them (only a file whose bytes
  // differ is converted again); a failure without one is taken as of the file there (plan.ts failedUnchanged).
  18: addInodeStamps,
};

/** v18: the inode change time and number of documents' stamps, and the inode number of failures'. */
function addInodeStamps(db: Database): void {
  addColumn(db, "documents", "ctime_ms REAL");
  addColumn(db, "documents", "ino INTEGER");
  addColumn(db, "failures", "ino INTEGER");
}

/** v16: the path column, and the trigger that fills it in place of the old. */
function keepRemovedTextPaths(db: Database): void {
  addColumn(db, "removed_texts", "path TEXT");
  db.run(`DROP TRIGGER IF EXISTS documents_keep_text; ${REMOVED_TEXTS_PATHS}`);
}

/** Add a column (`name TYPE`) to a table that lacks it: the upgrade that made the table may have made it current. */
function addColumn(db: Database, table: string, definition: string): void {
  const name = definition.split(" ")[0];
  const columns = db.query<{ name: string }, [string]>("SELECT name FROM pragma_table_info(?)").all(table);
  if (!columns.some((column) => column.name === name)) db.run(`ALTER TABLE ${table} ADD COLUMN ${definition}`);
}

function rebuildFullTextForIdentifiers(db: Database): void {
  rewriteFullText(db);
  db.run("DELETE FROM term_impacts; DELETE FROM term_bounds; DELETE FROM meta WHERE key = 'impacts'");
}

/**
 * The full-text index made again with the current tokenizer and written from the fragments; the impact and posting
 * lists read from the old one are dropped (the next index run builds them again: maintainImpactLists).
 */
function remakeFullText(db: Database): void {
  db.run(`DROP TABLE fragments_fts; ${FULL_TEXT_SCHEMA}`);
  rewriteFullText(db);
  db.run(`DELETE FROM term_impacts; DELETE FROM term_bounds; DELETE FROM meta WHERE key = 'impacts';
          DELETE FROM term_postings; DELETE FROM postings_added; DELETE FROM postings_removed;
          INSERT OR REPLACE INTO meta(key, value) VALUES ('full_text_version', '${FULL_TEXT_VERSION}')`);
}

/** An index.db that SQLite cannot read at all; a writer replaces it (other errors, e.g. busy, never do). */
class UnreadableIndex extends ResearcherError {}

const isUnreadable = (error: unknown) => error instanceof UnreadableIndex;

function corrupt(file: string, name: string, why: string, cause?: unknown): UnreadableIndex {
  return new UnreadableIndex("INDEX_CORRUPT", `cannot open ${file}: ${why}`, { hint: rebuildHint(name), cause });
}

/** SQLite's codes for a file it may not open, lock or write. */
const PERMISSION_CODES = new Set(["SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM", "SQLITE_AUTH"]);

/**
 * Whether this user may not write index.db or may not write its folder (a read-only mount, a backup, another user's
 * index, a team's shared folder), and its WAL holds nothing: then no writer is at work on it, and a reader must not
 * make SQLite's side files. Where it could not (a folder it may not write), it could not search at all (s23 hostile
 * H7); where it could (a shared folder), the `-wal` and `-shm` it made were its own, and the index's owner could
 * index no more (s24 hostile H3). Its owner may start writing later (stillAsOpened).
 */
function readOnlyHere(file: string): boolean {
  const writable = (path: string) => {
    try {
      accessSync(path, fs.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  return (!writable(file) || !writable(dirname(file))) && (statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) === 0;
}

/**
 * SQLite's read-only, immutable open (no locks, no `-shm`): for a file this user cannot change and no WAL is being
 * written to (readOnlyHere). Its owner still may: the state it was opened in is kept, for stillAsOpened.
 */
function openImmutable(file: string): Database {
  const state = fileState(file);
  const uri = `file:${encodeURI(file).replace(/[?#]/g, encodeURIComponent)}?immutable=1`;
  const db = new Database(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  immutableOpens.set(db, state);
  return db;
}

/** The state (fileState) of each file opened immutable, when it was opened. */
const immutableOpens = new WeakMap<Database, string>();

/** index.db's modification time and size, and its WAL's size: what a write by anyone changes. */
function fileState(file: string): string {
  const stats = statSync(file, { bigint: true, throwIfNoEntry: false });
  return `${stats?.mtimeNs}:${stats?.size}:${statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0}`;
}

/**
 * False when a file opened immutable has changed since (its owner wrote it, or began a WAL): SQLite reads an immutable
 * file with no locks and no change detection, so a server that kept such a connection read a mix of two states,
 * "database disk image is malformed", until it was restarted (s24 review D3). True for other opens: SQLite sees
 * their changes.
 */
export function stillAsOpened(db: Database, file: string): boolean {
  const state = immutableOpens.get(db);
  return state === undefined || state === fileState(file);
}

/** sqlite3_open_v2's flags (bun:sqlite takes them as a number; its options object has no URI). */
const SQLITE_OPEN_READONLY = 0x01;
const SQLITE_OPEN_URI = 0x40;

/**
 * A writer's files must be writable before it opens them: SQLite opens a file it may only read without a word and
 * fails at the first write ("attempt to write a readonly database"), naming no file. A reader may leave an
 * `index.db-shm` that only it can write (SQLite gives it index.db's mode), so the WAL files are checked too.
 */
function checkWritable(file: string): void {
  const folder = dirname(file);
  for (const [path, mode] of [
    [folder, fs.W_OK | fs.X_OK],
    [file, fs.R_OK | fs.W_OK],
    [`${file}-wal`, fs.R_OK | fs.W_OK],
    [`${file}-shm`, fs.R_OK | fs.W_OK],
  ] as const) {
    try {
      accessSync(path, mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      if (path !== file && path !== folder && makeOwnWritable(path)) continue;
      throw writeDenied(error, path, folder) ?? error;
    }
  }
}

/**
 * SQLite's side file (`-wal`, `-shm`) of this user's that only its mode keeps from being written: a search of a
 * read-only index.db left it so, and the user who gave index.db its write access back cannot be expected to know.
 */
function makeOwnWritable(path: string): boolean {
  try {
    const stats = statSync(path);
    if (stats.uid !== process.getuid?.()) return false;
    chmodSync(path, (stats.mode & 0o7777) | 0o600);
    return true;
  } catch {
    return false;
  }
}

/** How long a statement waits for a lock another connection holds before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/** Open an existing index.db; a writer brings an older schema up to date, a reader refuses it. */
function openChecked(file: string, name: string, mode: OpenMode): Database {
  const stats = statSync(file);
  // A folder (a botched restore, `cp -r`) or a FIFO or device at its name is none: SQLite says only "unable to open",
  // which read as a permission problem, and a FIFO as an empty file.
  if (stats.isDirectory()) throw corrupt(file, name, "it is a folder, not a database");
  if (!stats.isFile()) throw corrupt(file, name, "it is no regular file (a FIFO or a device)");
  if (stats.size === 0) throw corrupt(file, name, "the file is empty");
  if (mode !== "read") checkWritable(file);
  let db: Database | undefined;
  try {
    db = mode === "read" && readOnlyHere(file) ? openImmutable(file) : new Database(file, { readwrite: true, create: false, strict: true });
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Before any write, a migration's too: a deleted row's bytes are zeroed, and every page freed, so an edited or
    // removed document's old text lingers neither in free space nor in a page taken again.
    db.run(`PRAGMA secure_delete = ${SECURE_DELETE}`);
    const version = userVersion(db);
    // Version 0: a database no researcher wrote, or one whose creation was cut short; only `index` may fill it in.
    if (version === 0 && mode !== "create" && mode !== "fresh") throw corrupt(file, name, "it holds no researcher index");
    if (version > SCHEMA_VERSION) {
      throw new ResearcherError("INDEX_CORRUPT", `${file} was written by a newer researcher (schema ${version})`, {
        hint: `upgrade researcher, or start over with \`researcher index --rebuild ${name}\` (it moves this index aside)`,
      });
    }
    if (version < SCHEMA_VERSION && !(mode === "read" && version >= READABLE_FROM)) {
      // Reading an older schema as it is would need every query in two versions; upgrading is a write, for writers.
      if (mode === "read") {
        throw new ResearcherError(
          "INDEX_OUTDATED",
          `the index of '${name}' was written by an older researcher (schema ${version}): run \`researcher index ${name}\` to upgrade it`,
        );
      }
      migrate(db);
    }
    db.run("PRAGMA foreign_keys = ON");
    db.run("PRAGMA synchronous = NORMAL");
    // Reads map the file instead of a system call per page: SQLite reads each overflow page of a large blob (the
    // BM25 posting lists) straight from the file otherwise, which was most of a multi-word query. Nothing here
    // truncates index.db (no VACUUM; a rebuild renames it aside), the one hazard of a mapping.
    db.run("PRAGMA mmap_size = 2147418112");
    return db;
  } catch (error) {
    db?.close();
    throw openingError(error, file, name);
  }
}

/**
 * What a failure to open index.db means. A file SQLite cannot read as a database is damage; a lock held past the
 * busy timeout (LOCKED), a full disk (DISK_FULL) and damaged pages are errors.ts's to name. SQLite says only
 * "unable to open database file" or "disk I/O error" for the rest, so the folder is asked why: a full disk, a
 * read-only file system, a permission. Only a failure none of that explains points at the index itself.
 */
function openingError(error: unknown, file: string, name: string): ResearcherError {
  if (error instanceof ResearcherError) return error;
  const code = systemCode(error);
  if (code === "SQLITE_NOTADB") return corrupt(file, name, "it is not an SQLite database", error);
  const named = toResearcherError(error, { repository: name, dir: dirname(file) });
  if (named.code !== "INTERNAL" && named.code !== "PERMISSION_DENIED") return named;
  const found = environmentProblem(file, error);
  if (found) return found;
  if (PERMISSION_CODES.has(code) || /^SQLITE_(CANTOPEN|PERM|AUTH)_/.test(code)) {
    return new ResearcherError("PERMISSION_DENIED", `cannot open ${file}: ${describeError(error)}`, {
      hint: permissionHint(dirname(file)),
      cause: error,
    });
  }
  return new ResearcherError("INDEX_CORRUPT", `cannot open ${file}: ${describeError(error)}`, { hint: rebuildHint(name), cause: error });
}

/** Below this much free space, a failure to open is the disk being full (a reader writes index.db-shm beside it). */
const FULL_BELOW_BYTES = 1024 * 1024;

/**
 * Why SQLite could not open index.db: no file descriptor left, or the index's folder refusing it (a full disk, a
 * read-only file system, a permission).
 */
function environmentProblem(file: string, error: unknown): ResearcherError | undefined {
  const folder = dirname(file);
  const message = describeError(error);
  if (openFilesExhausted()) {
    return new ResearcherError("TOO_MANY_OPEN_FILES", `cannot open ${file}: too many open files (${message})`, {
      hint: OPEN_FILES_HINT,
      cause: error,
    });
  }
  try {
    if (freeBytes(folder) < FULL_BELOW_BYTES) {
      return new ResearcherError("DISK_FULL", `cannot open ${file}: the disk holding it is full (${message})`, {
        hint: "free some space (or move RESEARCHER_HOME) and run the command again: the index itself is fine",
        cause: error,
      });
    }
    accessSync(folder, fs.W_OK | fs.X_OK);
    accessSync(file, fs.R_OK | fs.W_OK);
  } catch (problem) {
    const why = (problem as NodeJS.ErrnoException).code;
    if (why === "EROFS") {
      return new ResearcherError("PERMISSION_DENIED", `cannot open ${file}: it is on a read-only file system (${message})`, {
        hint: "searching writes index.db-shm beside it: mount it read-write, or copy RESEARCHER_HOME to a writable disk",
        cause: error,
      });
    }
    if (why === "EACCES" || why === "EPERM") {
      return new ResearcherError("PERMISSION_DENIED", `cannot open ${file}: ${message}`, { hint: permissionHint(folder), cause: error });
    }
  }
  return undefined;
}

/**
 * SQLite's secure_delete as every connection keeps it. ON, not FAST: FAST left the pages a write frees whole as they
 * were, and SQLite writes an overflow page taken from the free list only as far as its value runs, so a kept OCR'd
 * text's last page kept a removed one's text past its end, in a live page that no zeroing of free pages reaches (s28b
 * scrub repro). ON zeroes a page as it is freed, at the cost of a write of each page freed and not taken again.
 */
export const SECURE_DELETE = "ON";

const userVersion = (db: Database) => db.query<{ user_version: number }, []>("PRAGMA user_version").get()?.user_version ?? 0;

/**
 * Create or upgrade the schema inside one IMMEDIATE transaction that re-reads the version first: of two
 * processes racing here, the second finds the work done.
 */
function migrate(db: Database): void {
  db.run("BEGIN IMMEDIATE");
  try {
    const from = userVersion(db);
    if (from === 0) db.run(SCHEMA);
    else {
      for (let version = from + 1; version <= SCHEMA_VERSION; version++) {
        const step = UPGRADES[version]!;
        if (typeof step === "string") db.run(step);
        else step(db);
      }
    }
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.run("COMMIT");
  } catch (error) {
    // SQLite has rolled back itself after some failures (a full disk): a ROLLBACK then fails, and hid the cause.
    if (db.inTransaction) db.run("ROLLBACK");
    throw error;
  }
}

/**
 * A new index is built beside and linked into place complete (schema, WAL mode): no reader ever sees an empty or
 * half-made index.db. `link` fails if another writer got there first, and then its index is the one used.
 */
function createBeside(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = tempPathFor(file);
  try {
    const db = new Database(temp, { create: true, strict: true });
    try {
      db.run("PRAGMA journal_mode = WAL");
      migrate(db);
      checkpointWhole(db);
    } finally {
      db.close();
    }
    linkSync(temp, file);
    syncFolder(dirname(file));
  } catch (error) {
    // Another writer linked its index first: that one is used. Anything else is the disk's or the folder's to say
    // (a full disk was `unexpected: disk I/O error`).
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw environmentProblem(file, error) ?? error;
  } finally {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(temp + suffix, { force: true });
  }
}

/**
 * Move everything the WAL holds into the database file, or fail: a new index is linked into place after this and
 * its WAL removed, so a checkpoint the disk had no room for left the schema only in the removed WAL, and index.db
 * malformed ("the index is damaged" at every run after).
 */
function checkpointWhole(db: Database): void {
  const result = db.query<{ busy: number; log: number; checkpointed: number }, []>("PRAGMA wal_checkpoint(TRUNCATE)").get();
  if (result?.busy !== 0 || result.log !== result.checkpointed) {
    throw Object.assign(new Error("the new index could not be written whole"), { code: "SQLITE_IOERR" });
  }
}

/**
 * What stands where index.db or its WAL side files belong but is none: a link to nothing (an index on a disk not
 * mounted), a folder or a FIFO as `-wal` or `-shm`. SQLite said only "unable to open" or "readonly database", read as
 * a permission problem, and the rebuild failed the same way. (index.db itself as a folder or FIFO is openChecked's.)
 */
function oddFiles(file: string, name: string): { what: string; hint: string } | undefined {
  const dangling = danglingLink(file);
  if (dangling !== undefined) {
    return {
      what: `${file} is a link to ${dangling}, which does not exist`,
      hint: `mount what holds it, or start over with \`researcher index --rebuild ${name}\` (it moves the link aside)`,
    };
  }
  for (const side of [`${file}-wal`, `${file}-shm`]) {
    const target = danglingLink(side);
    if (target !== undefined) return { what: `${side} is a link to ${target}, which does not exist`, hint: rebuildHint(name) };
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(side, { throwIfNoEntry: false });
    } catch (error) {
      return { what: `${side} cannot be looked at: ${describeError(error)}`, hint: rebuildHint(name) }; // a loop of links
    }
    if (stats && !stats.isFile())
      return { what: `${side} is ${stats.isDirectory() ? "a folder" : "no regular file"}`, hint: rebuildHint(name) };
  }
  return undefined;
}

/** An index moved aside: `index.db.damaged-<time>`, its WAL and shared memory beside it as `-wal` and `-shm`. */
export const MOVED_ASIDE = /^index\.db\.damaged-[0-9TZ-]+(?:-wal|-shm)?$/;

/**
 * Keep an index that cannot be used (and its WAL, which must not be replayed into a new one) for whoever wants to look.
 */
function moveAside(file: string): string {
  const aside = `${file}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  for (const suffix of ["-wal", "-shm", ""]) {
    if (lstatSync(file + suffix, { throwIfNoEntry: false })) renameSync(file + suffix, aside + suffix); // a link to nothing too
  }
  return aside;
}

/**
 * The indexes moved aside in a repository's index folder, oldest first, each with the bytes it and its side files
 * take: kept until the user deletes them, so `status` and `verify` name them (s26 hostile F2).
 */
export function indexesMovedAside(dir: string): { path: string; bytes: number }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const copies = new Map<string, number>();
  for (const name of names.filter((n) => MOVED_ASIDE.test(n)).sort()) {
    const copy = name.replace(/-(?:wal|shm)$/, "");
    const size = lstatSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0;
    copies.set(copy, (copies.get(copy) ?? 0) + size);
  }
  return [...copies].map(([name, bytes]) => ({ path: join(dir, name), bytes }));
}
