/**
 * What every full-text table shares: the index's (`fragments_fts`, schema.ts) and the scratch copies that count
 * terms exactly as it does (store.ts) use one tokenizer and write their rows one way, so their tokens always agree.
 */
import type { Database } from "bun:sqlite";
import { ftsText, shortHeading } from "../text.ts";

/**
 * The tokenizer option of every full-text table: Porter stems of unicode61 words, diacritics folded (text.ts's `stem`
 * and `foldCase` mirror it for queries). Marks are word characters (`M*`; unicode61's default is `L* N* Co`): a vowel
 * sign of Devanagari, Bengali, Tamil or Thai was a word break, so `हिन्दी` was `ह न द` and `कमला` (a name) `कमल`
 * (lotus) (s26 review F1). Double-quoted, as the categories are quoted inside.
 */
export const FTS_TOKENIZE = `tokenize = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'"`;

/**
 * The version of what `ftsText` makes of a text: 2 folds compatibility forms and composes characters (NFKC); 3 drops
 * zero-width spaces, word joiners and U+FEFF inside words, as soft hyphens were (text.ts); 4 cuts Thai, Lao, Khmer
 * and Myanmar into their words; 5 drops Hebrew and Arabic points (text.ts OPTIONAL_POINTS), with schema 13, whose
 * upgrade writes the full text again itself (its tokenizer changed too); 6 adds Arabic words without their article
 * (text.ts ARABIC_ARTICLE). An index that recorded another version is written again from its fragments by the next
 * index run (FullTextIndex.upgrade); until then searches read it as it is (a form it lacks is not found).
 */
export const FULL_TEXT_VERSION = 6;

/** A full-text table's columns, in the order bm25() takes their weights. */
export const FTS_COLUMNS: readonly string[] = ["title", "heading", "body"];

export type FullTextRowWriter = (rowid: number | bigint, title: string, heading: string, body: string) => void;

/**
 * Writes rows into the full-text table `table`, each text as it is indexed (`ftsText`: CJK characters apart), the
 * title to its first HEADING_MAX_CHARS as headings are (TITLE_MAX_CHARS says why).
 */
export function fullTextRowWriter(db: Database, table: string): FullTextRowWriter {
  const insert = db.query(`INSERT INTO ${table}(rowid, ${FTS_COLUMNS.join(", ")}) VALUES (?, ?, ?, ?)`);
  return (rowid, title, heading, body) => {
    insert.run(rowid, ftsText(shortHeading(title)), ftsText(heading), ftsText(body));
  };
}

/**
 * Write the full-text index again from the fragments (the text lives there; FTS5 holds only the index), row by row:
 * all the text read at once was the whole corpus in memory (a million fragments, gigabytes). The caller holds the
 * transaction.
 */
export function rewriteFullText(db: Database): void {
  db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')");
  writeFullTextRows(db);
}

/** Write the full-text rows of the fragments: every one, or (`missing`) those the full-text index lacks. */
export function writeFullTextRows(db: Database, missing = false): void {
  const write = fullTextRowWriter(db, "fragments_fts");
  const rows = db.query<{ id: number; title: string; heading: string; text: string }, []>(
    `SELECT f.id, d.title, f.heading, f.text FROM fragments f JOIN documents d ON d.id = f.document_id${
      missing ? " WHERE f.id NOT IN (SELECT id FROM fragments_fts_docsize)" : ""
    }`,
  );
  // (The NOT IN's list is made once, before the first row: the writes do not change what the walk reads.)
  for (const row of rows.iterate()) write(row.id, row.title, row.heading, row.text);
}
