/**
 * The full-text index of one index.db (`fragments_fts`, its table defined by schema.ts and fts.ts): BM25 queries
 * against it, the statistics FTS5's bm25() reads, exact term counts through a scratch table, and its upkeep (version
 * upgrade, rebuild, segment merges).
 */
import type { Database } from "bun:sqlite";
import { ResearcherError } from "../errors.ts";
import type { SqlCondition } from "./filter-sql.ts";
import { FTS_COLUMNS, FTS_TOKENIZE, FULL_TEXT_VERSION, fullTextRowWriter, rewriteFullText, writeFullTextRows } from "./fts.ts";
import type { MetaTable } from "./meta.ts";

export class FullTextIndex {
  constructor(
    private readonly db: Database,
    private readonly meta: MetaTable,
    /** Empties the WAL between merge steps (Store.checkpoint). */
    private readonly checkpoint: () => void,
  ) {}

  /**
   * The best fragments for an FTS5 MATCH expression, with BM25 scores (higher is better); with `where` (see
   * filters.ts), only fragments it admits are ranked, so the limit counts admitted fragments.
   */
  search(match: string, weights: Bm25Weights, limit: number, where?: SqlCondition): { id: number; score: number }[] {
    return matching(() =>
      this.db
        .query<{ id: number; score: number }, (string | number)[]>(
          `SELECT rowid AS id, -bm25(fragments_fts, ${weights.title}, ${weights.heading}, ${weights.body}) AS score
           FROM fragments_fts WHERE fragments_fts MATCH ?${admitted(where)} ORDER BY score DESC LIMIT ?`,
        )
        .all(match, ...(where?.params ?? []), limit),
    );
  }

  /**
   * What FTS5's bm25() reads besides the match itself: the number of rows and their average length in tokens (all
   * columns), from the full-text index's own totals record, so a score computed here equals bm25()'s.
   */
  totals(): { rows: number; averageLength: number } {
    const block = this.db.query<{ block: Uint8Array }, []>("SELECT block FROM fragments_fts_data WHERE id = 1").get()?.block;
    if (!block) return { rows: 0, averageLength: 0 };
    const [rows, ...columns] = readVarints(block);
    const tokens = columns.reduce((sum, n) => sum + n, 0);
    return { rows: rows ?? 0, averageLength: rows ? tokens / rows : 0 };
  }

  /**
   * Each fragment's length in tokens (all columns), as FTS5 recorded it when indexing; every fragment's without ids.
   */
  lengths(ids?: number[]): Map<number, number> {
    const rows = ids
      ? this.db
          .query<{ id: number; sz: Uint8Array }, [string]>(
            "SELECT id, sz FROM fragments_fts_docsize WHERE id IN (SELECT value FROM json_each(?))",
          )
          .all(JSON.stringify(ids))
      : this.db.query<{ id: number; sz: Uint8Array }, []>("SELECT id, sz FROM fragments_fts_docsize").all();
    return new Map(rows.map((row) => [row.id, readVarints(row.sz).reduce((sum, n) => sum + n, 0)]));
  }

  /**
   * The scratch full-text table (same tokenizer as the index) and its per-occurrence view, in the temp schema. Asked
   * for on every use, not remembered: created inside a transaction that then rolls back, they are dropped with it.
   */
  private openScratch(): void {
    this.db.run(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.scoring USING fts5(title, heading, body, content='', ${FTS_TOKENIZE})`);
    this.db.run("CREATE VIRTUAL TABLE IF NOT EXISTS temp.scoring_terms USING fts5vocab(temp, scoring, instance)");
  }

  /**
   * How often each term occurs in each column (title, heading, body) of these fragments, tokenized exactly as the
   * index tokenized them: their texts go through a scratch FTS5 table with the same tokenizer (a reader can write
   * its temp schema), which costs microseconds per fragment instead of a pass over each term's whole posting list.
   * Without `terms`, every term they hold.
   */
  termCounts(ids: number[], terms?: string[]): Map<number, Map<string, [number, number, number]>> {
    this.openScratch();
    const counts = new Map<number, Map<string, [number, number, number]>>(ids.map((id) => [id, new Map()]));
    this.db.transaction(() => {
      this.db.run("INSERT INTO temp.scoring(scoring) VALUES ('delete-all')");
      const texts = this.db
        .query<{ id: number; title: string; heading: string; text: string }, [string]>(
          `SELECT f.id, d.title, f.heading, f.text FROM fragments f JOIN documents d ON d.id = f.document_id
           WHERE f.id IN (SELECT value FROM json_each(?))`,
        )
        .all(JSON.stringify(ids));
      const insert = fullTextRowWriter(this.db, "temp.scoring");
      for (const row of texts) insert(row.id, row.title, row.heading, row.text);
      const count = ({ term, doc, col, n }: { term: string; doc: number; col: string; n: number }) => {
        const perColumn = counts.get(doc)!.get(term) ?? [0, 0, 0];
        perColumn[FTS_COLUMNS.indexOf(col)] = n;
        counts.get(doc)!.set(term, perColumn);
      };
      if (!terms) {
        const all = "SELECT term, doc, col, count(*) AS n FROM temp.scoring_terms GROUP BY term, doc, col";
        for (const row of this.db.query<{ term: string; doc: number; col: string; n: number }, []>(all).iterate()) count(row);
      }
      const instances = this.db.query<{ term: string; doc: number; col: string; n: number }, [string]>(
        "SELECT term, doc, col, count(*) AS n FROM temp.scoring_terms WHERE term = ? GROUP BY doc, col",
      );
      for (const term of terms ?? []) for (const row of instances.all(term)) count(row);
    })();
    return counts;
  }

  /** The terms FTS5 indexes as themselves when searched: each goes through the tokenizer in a scratch row. */
  selfStemming(terms: string[]): string[] {
    this.openScratch();
    return this.db.transaction(() => {
      this.db.run("INSERT INTO temp.scoring(scoring) VALUES ('delete-all')");
      const insert = fullTextRowWriter(this.db, "temp.scoring");
      for (const [i, term] of terms.entries()) insert(i + 1, "", "", term);
      const found = this.db.query<{ doc: number; term: string }, []>("SELECT doc, term FROM temp.scoring_terms").all();
      const same = new Set(found.filter((row) => row.term === terms[row.doc - 1]).map((row) => row.doc - 1));
      return terms.filter((_, i) => same.has(i));
    })();
  }

  /** How many fragments match (a separate pass without ranking is cheaper than counting ranked rows). */
  countMatches(match: string, where?: SqlCondition): number {
    return matching(
      () =>
        this.db
          .query<{ n: number }, (string | number)[]>(
            `SELECT count(*) AS n FROM fragments_fts WHERE fragments_fts MATCH ?${admitted(where)}`,
          )
          .get(match, ...(where?.params ?? []))!.n,
    );
  }

  /** The fragments an FTS5 expression matches. */
  idsMatching(match: string): number[] {
    return matching(() =>
      this.db
        .query<{ id: number }, [string]>("SELECT rowid AS id FROM fragments_fts WHERE fragments_fts MATCH ?")
        .all(match)
        .map((row) => row.id),
    );
  }

  private frequencies = { version: -1, terms: new Map<string, number>() };

  /**
   * How many fragments contain each (stemmed) term, read from FTS5's own index; cached until another connection
   * commits.
   */
  termFrequencies(terms: string[]): Map<string, number> {
    // Asked for every time, as the scratch tables are: a rolled-back transaction drops what it created.
    this.db.run("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fragments_vocab USING fts5vocab(main, fragments_fts, row)");
    const version = dataVersion(this.db);
    if (version !== this.frequencies.version) this.frequencies = { version, terms: new Map() };
    const cache = this.frequencies.terms;
    const lookup = this.db.query<{ doc: number }, [string]>("SELECT doc FROM temp.fragments_vocab WHERE term = ?");
    return new Map(
      terms.map((term) => {
        if (!cache.has(term)) cache.set(term, lookup.get(term)?.doc ?? 0);
        return [term, cache.get(term)!];
      }),
    );
  }

  /** Terms found in at least `minimum` fragments (a pass over the full-text index's vocabulary). */
  commonTerms(minimum: number): string[] {
    this.termFrequencies([]);
    return this.db
      .query<{ term: string }, [number]>("SELECT term FROM temp.fragments_vocab WHERE doc >= ?")
      .all(minimum)
      .map((row) => row.term);
  }

  countMatchingDocuments(match: string, where?: SqlCondition): number {
    return matching(
      () =>
        this.db
          .query<{ n: number }, (string | number)[]>(
            `SELECT count(DISTINCT f.document_id) AS n
             FROM fragments_fts JOIN fragments f INDEXED BY fragments_owner ON f.id = fragments_fts.rowid
             WHERE fragments_fts MATCH ?${admitted(where)}`,
          )
          .get(match, ...(where?.params ?? []))?.n ?? 0,
    );
  }

  /** FTS5's own integrity check of the full-text index; throws SQLite's error for what it finds wrong. */
  checkIntegrity(): void {
    this.db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('integrity-check')");
  }

  /** Rows in the full-text index (one per fragment when it is whole). */
  rowCount(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM fragments_fts_docsize").get()!.n;
  }

  /**
   * Write the full-text index again when it holds an older form of the text (FULL_TEXT_VERSION), once; true when it
   * did. The posting and impact lists, built from it, are then out of date: the caller rebuilds them.
   */
  upgrade(): boolean {
    if (this.meta.get("full_text_version") === String(FULL_TEXT_VERSION)) return false;
    this.db.transaction(() => {
      rewriteFullText(this.db);
      this.meta.set("full_text_version", String(FULL_TEXT_VERSION));
    })();
    return true;
  }

  /**
   * Empty the full-text index without reading it, for a rebuild that writes every document's rows again: a rebuild
   * that replaced rows in place left a damaged segment (bytes changed inside a valid page, which no integrity check
   * sees) under the new ones, and a word whose list it held still failed, as did every run's merge (s26 hostile F1).
   */
  clear(): void {
    this.db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')");
  }

  /** Write the rows of the fragments the full-text index lacks: documents a rebuild kept without reading them again. */
  addMissing(): void {
    writeFullTextRows(this.db, true);
  }

  /**
   * Re-create the full-text index from the fragments (fts.ts `rewriteFullText`) in one transaction, then merge its
   * segments and refresh the planner's statistics.
   */
  rebuild(): void {
    this.db.transaction(() => rewriteFullText(this.db))();
    this.merge();
    this.db.run("PRAGMA optimize");
  }

  /**
   * FTS5 writes a new segment per transaction and every query reads them all; merged into one, SciFact queries
   * run ~25% faster. A full merge rewrites the whole full-text index, so only a run that changed a large share
   * pays for it; smaller runs do a bounded incremental merge.
   */
  compact(changedShare: number, onStep?: MergeProgress): void {
    if (changedShare >= 0.1) this.merge(onStep);
    else this.db.run("INSERT INTO fragments_fts(fragments_fts, rank) VALUES('merge', 500)");
  }

  /**
   * Merge every full-text segment into one, as FTS5's 'optimize' does, but in steps of FULL_TEXT_MERGE.stepPages
   * pages, each its own transaction followed by a checkpoint. 'optimize' rewrites the whole full-text index in one
   * transaction, so the WAL grew by all of it on top of the database: at 1M fragments the peak was 1.32× the final
   * index. FTS5's recipe: a negative 'merge' starts merging all segments as one level, positive ones carry that
   * merge on (a segment committed meanwhile waits instead of restarting it), and a step that changes fewer than
   * two rows found nothing left to merge.
   */
  private merge(onStep?: MergeProgress): void {
    const totalPages = this.pages();
    const merge = this.db.query("INSERT INTO fragments_fts(fragments_fts, rank) VALUES('merge', ?)");
    const changes = this.db.query<{ n: number }, []>("SELECT total_changes() AS n");
    for (let step = 0; ; step++) {
      const before = changes.get()!.n;
      merge.run(step === 0 ? -FULL_TEXT_MERGE.stepPages : FULL_TEXT_MERGE.stepPages);
      const done = changes.get()!.n - before < 2;
      onStep?.(done ? totalPages : Math.min(totalPages, (step + 1) * FULL_TEXT_MERGE.stepPages), totalPages);
      this.checkpoint();
      if (done) return;
    }
  }

  /** The full-text index's size in FTS5 pages (one row of its data table each, bar a few records). */
  private pages(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM fragments_fts_data").get()!.n;
  }
}

/** Changes whenever another connection commits (SQLite's own counter). */
export function dataVersion(db: Database): number {
  return db.query<{ data_version: number }, []>("PRAGMA data_version").get()!.data_version;
}

export interface Bm25Weights {
  title: number;
  heading: number;
  body: number;
}

/**
 * Run an FTS5 MATCH query. Its SQL is fixed, so a plain SQLITE_ERROR (FTS5 syntax, an unterminated string, an
 * expression too large) is about the query text and is said as such, not as an unexpected failure; busy,
 * corrupt or I/O errors have other codes and pass through.
 */
function matching<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    const message = (error as Error).message ?? "";
    if ((error as { code?: string }).code !== "SQLITE_ERROR") throw error;
    throw new ResearcherError("INVALID_INPUT", `the query cannot be searched: ${message}`, {
      hint: "use fewer or simpler terms; quote words that contain punctuation",
      cause: error,
    });
  }
}

/**
 * An FTS5 query's extra condition keeping only the fragments a filter admits: the admitted set is built once and
 * each match is looked up in it, so bm25() is computed only for admitted matches. The `+` matters: without it
 * FTS5 takes `rowid IN` as its access path and runs the MATCH once per admitted rowid (SciFact, a filter admitting
 * 2,239 of 7,710 fragments: p50 3.0 ms with `+`, 186 ms without; joining each match to its fragment and document
 * instead: 1.2 s, the path set being re-read per match).
 */
function admitted(where: SqlCondition | undefined): string {
  return where
    ? ` AND +fragments_fts.rowid IN (SELECT f.id FROM fragments f JOIN documents d ON d.id = f.document_id WHERE ${where.sql})`
    : "";
}

/**
 * Full-text merges go in steps of this many FTS5 pages (~4 KB each): the WAL holds at most one step's writes
 * (see FullTextIndex.merge). Each step also leaves the pages it freed for the next, so the last step's stay free in
 * the file. Tests make it small.
 */
export const FULL_TEXT_MERGE = { stepPages: 4000 };

/**
 * Called after each step of a full-text merge has committed and before the WAL is checkpointed, so an observer
 * sees the step's WAL at its largest: FTS5 pages written so far, and the index's size in pages.
 */
export type MergeProgress = (donePages: number, totalPages: number) => void;

/** SQLite's variable-length integers (as FTS5 stores its totals and row sizes): 7 bits a byte, high bit = more. */
function readVarints(bytes: Uint8Array): number[] {
  const values: number[] = [];
  let value = 0;
  for (let i = 0, n = 0; i < bytes.length; i++, n++) {
    if (n === 8) {
      values.push(value * 256 + bytes[i]!); // the ninth byte carries 8 bits
      value = 0;
      n = -1;
    } else if (bytes[i]! & 0x80) value = value * 128 + (bytes[i]! & 0x7f);
    else {
      values.push(value * 128 + bytes[i]!);
      value = 0;
      n = -1;
    }
  }
  return values;
}
