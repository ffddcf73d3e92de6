/** The `meta` table of one index.db: named values the index keeps about itself (versions, model, generation). */
import type { Database } from "bun:sqlite";
import { damagedIndex } from "../errors.ts";

export class MetaTable {
  constructor(
    private readonly db: Database,
    /** The repository, named by the error a damaged value raises. */
    private readonly repository: string,
  ) {}

  get(key: string): string | undefined {
    return this.db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get(key)?.value;
  }

  /**
   * A value stored as JSON, or undefined when there is none. A damaged one (bit rot below the file system, an edit
   * with another tool: page checks do not see inside a value) is INDEX_CORRUPT with the command that rebuilds, or,
   * with `derived`, none at all: what is computed from the index is computed again.
   */
  json<T>(key: string, { derived = false } = {}): T | undefined {
    const raw = this.get(key);
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(raw) as T;
    } catch {
      if (derived) return undefined;
      throw damagedIndex(this.repository, `its ${key} record is not JSON`);
    }
  }

  set(key: string, value: string): void {
    this.db.query("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
  }

  delete(key: string): void {
    this.db.query("DELETE FROM meta WHERE key = ?").run(key);
  }
}
