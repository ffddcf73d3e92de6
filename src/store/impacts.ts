/**
 * The impact lists' rows (tables: IMPACTS_SCHEMA in schema.ts). What goes on a list, and how a one-word query is
 * ranked from it, is search/bm25.ts's; this reads and writes the lists as it asks.
 */
import type { Database } from "bun:sqlite";

/** A fragment on a word's list: the word's weighted count there and the fragment's length in tokens. */
export interface ImpactEntry {
  id: number;
  weightedTf: number;
  length: number;
}

/** An entry as written: with the word's impact there, which orders the list. */
export interface WeighedEntry extends ImpactEntry {
  impact: number;
}

export class ImpactLists {
  constructor(private readonly db: Database) {}

  /** The word's list, best first, and the most it weighs in a fragment off the list; undefined when it has none. */
  list(term: string): { bound: number; entries: ImpactEntry[] } | undefined {
    const bound = this.db.query<{ bound: number }, [string]>("SELECT bound FROM term_bounds WHERE term = ?").get(term)?.bound;
    if (bound === undefined) return undefined;
    const entries = this.db
      .query<ImpactEntry, [string]>(
        "SELECT fragment_id AS id, weighted_tf AS weightedTf, length FROM term_impacts WHERE term = ? ORDER BY impact DESC",
      )
      .all(term);
    return { bound, entries };
  }

  /** Every listed word's bound. */
  bounds(): Map<string, number> {
    const rows = this.db.query<{ term: string; bound: number }, []>("SELECT term, bound FROM term_bounds").all();
    return new Map(rows.map((row) => [row.term, row.bound]));
  }

  /** Write a word's list and bound (the word has none: after `clear`, in the same transaction). */
  write(term: string, entries: WeighedEntry[], bound: number): void {
    const insert = this.db.query("INSERT INTO term_impacts(term, impact, fragment_id, weighted_tf, length) VALUES (?, ?, ?, ?, ?)");
    for (const entry of entries) insert.run(term, entry.impact, entry.id, entry.weightedTf, entry.length);
    this.db.query("INSERT INTO term_bounds(term, bound) VALUES (?, ?)").run(term, bound);
  }

  /** Put a fragment on a word's list (an entry it already has there is replaced). */
  add(term: string, entry: WeighedEntry): void {
    this.db
      .query("INSERT OR REPLACE INTO term_impacts(term, impact, fragment_id, weighted_tf, length) VALUES (?, ?, ?, ?, ?)")
      .run(term, entry.impact, entry.id, entry.weightedTf, entry.length);
  }

  /** Drop every list. (A deleted fragment leaves its lists through a trigger.) */
  clear(): void {
    this.db.run("DELETE FROM term_impacts");
    this.db.run("DELETE FROM term_bounds");
  }
}
