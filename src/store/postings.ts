/**
 * Posting lists of our own (tables: POSTINGS_SCHEMA in schema.ts): for each word in at least a given number of
 * fragments, every fragment that holds it, with the word's count in each column and the fragment's length, so a
 * query can be scored exactly in JS (search/bm25.ts, rankPostings) instead of by FTS5's bm25() row by row.
 *
 * A list is one blob, written when the lists are built from FTS5's own index. Fragments written later join through
 * `postings_added` (one row per listed word they hold); deleted ones are recorded in `postings_removed` by a
 * trigger and skipped on reading, until the next build starts over.
 */
import type { Database } from "bun:sqlite";

/** A word in one fragment: its count in each column and the fragment's length in tokens (all columns). */
export interface Posting {
  id: number;
  title: number;
  heading: number;
  body: number;
  length: number;
}

/** Called for each posting of a list: the fragment, the word's count in each column, the fragment's length. */
export type PostingVisitor = (id: number, title: number, heading: number, body: number, length: number) => void;

/** A word's list: `visit` calls back for every posting (the blob's, then those of fragments written since). */
export interface PostingList {
  visit(visitor: PostingVisitor): void;
}

export class PostingLists {
  private removedCache = { version: -1, ids: new Set<number>() };

  constructor(private readonly db: Database) {}

  /** True when lists have been built (and not cleared since). */
  built(): boolean {
    return this.db.query("SELECT 1 FROM term_postings LIMIT 1").get() !== null;
  }

  /** The word's list, or undefined when it has none. */
  read(term: string): PostingList | undefined {
    const row = this.db.query<{ postings: Uint8Array }, [string]>("SELECT postings FROM term_postings WHERE term = ?").get(term);
    if (!row) return undefined;
    const added = this.db
      .query<Posting, [string]>("SELECT fragment_id AS id, title, heading, body, length FROM postings_added WHERE term = ?")
      .all(term);
    return {
      visit: (visitor) => {
        decodePostings(row.postings, visitor);
        for (const p of added) visitor(p.id, p.title, p.heading, p.body, p.length);
      },
    };
  }

  /** Fragments deleted since the lists were built (their postings are still in the blobs); cached until a commit. */
  removed(): Set<number> {
    const version = this.db.query<{ data_version: number }, []>("PRAGMA data_version").get()!.data_version;
    if (version !== this.removedCache.version) {
      const ids = this.db.query<{ id: number }, []>("SELECT fragment_id AS id FROM postings_removed").all();
      this.removedCache = { version, ids: new Set(ids.map((row) => row.id)) };
    }
    return this.removedCache.ids;
  }

  /** The listed words. */
  terms(): Set<string> {
    return new Set(
      this.db
        .query<{ term: string }, []>("SELECT term FROM term_postings")
        .all()
        .map((row) => row.term),
    );
  }

  /** Fragments written or deleted since the lists were built. */
  changedSinceBuilt(): number {
    const added = this.db.query<{ n: number }, []>("SELECT count(DISTINCT fragment_id) AS n FROM postings_added").get()!.n;
    return added + this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM postings_removed").get()!.n;
  }

  /**
   * Replace every list (call in a transaction): each word FTS5's index holds in at least `minDf` fragments gets
   * the list of them, counted from FTS5's own per-occurrence view, so it holds exactly what bm25() reads.
   */
  build(minDf: number, lengths: Map<number, number>): void {
    this.clear();
    this.db.run("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fragments_instances USING fts5vocab(main, fragments_fts, instance)");
    this.db.run("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fragments_vocab USING fts5vocab(main, fragments_fts, row)");
    const terms = new Set(
      this.db
        .query<{ term: string }, [number]>("SELECT term FROM temp.fragments_vocab WHERE doc >= ?")
        .all(minDf)
        .map((row) => row.term),
    );
    const insert = this.db.query("INSERT INTO term_postings(term, postings) VALUES (?, ?)");
    let maxId = 0;
    for (const id of lengths.keys()) maxId = Math.max(maxId, id);
    const lengthOf = new Int32Array(maxId + 1);
    for (const [id, length] of lengths) lengthOf[id] = length;
    // One pass over every occurrence, in term, fragment, column order: cheaper than a query per word. The loop
    // runs once per occurrence (16M at 100k fragments), so it keeps no object per posting: counts in locals,
    // written as bytes when the fragment changes.
    const list = new PostingsWriter();
    let term = "";
    let listed = false;
    let doc = -1;
    let [title, heading, body] = [0, 0, 0];
    const endPosting = () => {
      if (doc >= 0) list.add(doc, title, heading, body, lengthOf[doc]!);
      doc = -1;
    };
    for (const row of this.db
      .query<{ term: string; doc: number; col: string }, []>("SELECT term, doc, col FROM temp.fragments_instances")
      .iterate()) {
      if (row.term !== term) {
        endPosting();
        if (listed) insert.run(term, list.take());
        term = row.term;
        listed = terms.has(term);
      }
      if (!listed) continue;
      if (row.doc !== doc) {
        endPosting();
        doc = row.doc;
        [title, heading, body] = [0, 0, 0];
      }
      const column = row.col.charCodeAt(0); // title, heading or body
      if (column === 98) body++;
      else if (column === 116) title++;
      else heading++;
    }
    endPosting();
    if (listed) insert.run(term, list.take());
  }

  /** Fragments written since the lists were built join the lists of the listed words they hold. */
  add(term: string, posting: Posting): void {
    this.db
      .query("INSERT OR REPLACE INTO postings_added(term, fragment_id, title, heading, body, length) VALUES (?, ?, ?, ?, ?, ?)")
      .run(term, posting.id, posting.title, posting.heading, posting.body, posting.length);
  }

  /** Drop every list. */
  clear(): void {
    this.db.run("DELETE FROM term_postings");
    this.db.run("DELETE FROM postings_added");
    this.db.run("DELETE FROM postings_removed");
  }
}

/**
 * A list as bytes, unsigned LEB128 varints per posting: the id's gap from the previous one, then
 * `body << 2 | (title > 0) << 1 | (heading > 0)`, the title and heading counts when not 0, and the length.
 * Mostly 4–5 bytes a posting (a word is rarely in a title or heading). Read back by `decodePostings`.
 */
class PostingsWriter {
  private bytes = new Uint8Array(1 << 16);
  private at = 0;
  private previous = 0;

  /** The next posting; ids ascending. */
  add(id: number, title: number, heading: number, body: number, length: number): void {
    // A varint of a 32-bit value takes at most 5 bytes; a posting at most 5 of them.
    if (this.at + 25 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.put(id - this.previous);
    this.previous = id;
    this.put(body * 4 + (title > 0 ? 2 : 0) + (heading > 0 ? 1 : 0));
    if (title > 0) this.put(title);
    if (heading > 0) this.put(heading);
    this.put(length);
  }

  /** The list written so far, and a fresh start for the next. */
  take(): Uint8Array {
    const list = this.bytes.slice(0, this.at);
    this.at = 0;
    this.previous = 0;
    return list;
  }

  private put(value: number): void {
    while (value >= 0x80) {
      this.bytes[this.at++] = (value & 0x7f) | 0x80;
      value = Math.floor(value / 128);
    }
    this.bytes[this.at++] = value;
  }
}

/** Call `visitor` for each posting of a blob, in order (a call per posting costs no more than inlined code here). */
function decodePostings(bytes: Uint8Array, visitor: PostingVisitor): void {
  cursor = 0;
  let id = 0;
  while (cursor < bytes.length) {
    id += varint(bytes);
    const code = varint(bytes);
    const title = code & 2 ? varint(bytes) : 0;
    const heading = code & 1 ? varint(bytes) : 0;
    visitor(id, title, heading, code >>> 2, varint(bytes));
  }
}

/** Where `varint` reads next (module state rather than a closure: the loop above runs once per posting). */
let cursor = 0;

/** The LEB128 varint at `cursor`, which moves past it; most are one byte. */
function varint(bytes: Uint8Array): number {
  let byte = bytes[cursor++]!;
  if (byte < 0x80) return byte;
  let value = byte & 0x7f;
  let scale = 0x80;
  do {
    byte = bytes[cursor++]!;
    value += (byte & 0x7f) * scale;
    scale *= 0x80;
  } while (byte & 0x80);
  return value;
}
