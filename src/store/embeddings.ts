/**
 * The `embeddings` table of one index.db: each distinct fragment text's vector (keyed by its hash, so identical texts
 * share one), and the model and generation they belong to. The ANN file (search/vectors.ts) is built from them.
 */
import type { Database } from "bun:sqlite";
import type { MetaTable } from "./meta.ts";

/** The model a repository was embedded with. */
export interface StoredModel {
  id: string;
  provider: string;
  dims: number;
  fingerprint: string;
  /** How it was called (recorded since 2026-11-26): what a repository that keeps its model keeps with it. */
  settings?: { dtype: string; pooling: string; query_prefix: string; document_prefix: string };
}

/**
 * Whether a stored vector can be searched: `dims` float32s, every one finite. SQLite keeps no checksums, so bit rot
 * in index.db is a blob of another length (every vector search failed, "unexpected") or a NaN (ranked first).
 */
function usableVector(blob: Uint8Array, dims: number): boolean {
  if (blob.byteLength !== dims * 4) return false;
  const vector = new Float32Array(blob.buffer, blob.byteOffset, dims);
  let sum = 0;
  for (let i = 0; i < dims; i++) sum += vector[i]!;
  return Number.isFinite(sum);
}

function toFloat32(blob: Uint8Array): Float32Array {
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

export class EmbeddingTable {
  constructor(
    private readonly db: Database,
    private readonly meta: MetaTable,
  ) {}

  /** How many distinct fragment texts have no vector yet. */
  pendingCount(): number {
    return this.db
      .query<{ n: number }, []>(
        "SELECT count(DISTINCT f.text_hash) AS n FROM fragments f WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash = f.text_hash)",
      )
      .get()!.n;
  }

  /**
   * Up to `limit` fragment texts with no vector yet, one per distinct text, in text-hash order after `after`: a run
   * embeds them page by page (the whole repository's text is never in memory at once).
   */
  unembedded(after: string, limit: number): { textHash: string; title: string; heading: string; text: string }[] {
    return this.db
      .query<{ textHash: string; title: string; heading: string; text: string }, [string, number]>(
        `SELECT f.text_hash AS textHash, d.title, f.heading, f.text
         FROM fragments f INDEXED BY fragments_by_text_hash JOIN documents d ON d.id = f.document_id
         WHERE f.text_hash > ? AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash = f.text_hash)
         GROUP BY f.text_hash ORDER BY f.text_hash LIMIT ?`,
      )
      .all(after, limit);
  }

  insert(rows: { textHash: string; vector: Float32Array }[]): void {
    const insert = this.db.query("INSERT OR REPLACE INTO embeddings(text_hash, vector) VALUES (?, ?)");
    for (const row of rows) insert.run(row.textHash, new Uint8Array(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength));
  }

  /** Vectors no fragment refers to any more (their text was edited or deleted). */
  prune(): number {
    return this.db.run("DELETE FROM embeddings WHERE text_hash NOT IN (SELECT text_hash FROM fragments)").changes;
  }

  clear(): void {
    this.db.run("DELETE FROM embeddings");
    this.meta.delete("embedding_model");
  }

  /**
   * Every fragment's vector, `size` at a time, as fragment ids and one row-major matrix: building the ANN file of a
   * million vectors never holds them all as JavaScript objects (that peaked at ~11 GB at 1M × 384).
   */
  *batches(size: number): Generator<{ keys: BigUint64Array; matrix: Float32Array }> {
    let ids: number[] = [];
    let blobs: Uint8Array[] = [];
    const pack = () => {
      const matrix = new Float32Array(blobs.reduce((sum, blob) => sum + blob.byteLength, 0) / 4);
      const bytes = new Uint8Array(matrix.buffer);
      let at = 0;
      for (const blob of blobs) {
        bytes.set(blob, at);
        at += blob.byteLength;
      }
      return { keys: BigUint64Array.from(ids, BigInt), matrix };
    };
    const rows = this.db.query<{ id: number; vector: Uint8Array }, []>(
      "SELECT f.id, e.vector FROM fragments f JOIN embeddings e ON e.text_hash = f.text_hash",
    );
    const dims = this.dims();
    for (const row of rows.iterate()) {
      if (!usableVector(row.vector, dims)) continue; // verify finds it, and --repair has it embedded again
      ids.push(row.id);
      blobs.push(row.vector);
      if (ids.length === size) {
        yield pack();
        [ids, blobs] = [[], []];
      }
    }
    if (ids.length > 0) yield pack();
  }

  all(): { id: number; vector: Float32Array }[] {
    const dims = this.dims();
    return this.db
      .query<{ id: number; vector: Uint8Array }, []>(
        "SELECT f.id, e.vector FROM fragments f JOIN embeddings e ON e.text_hash = f.text_hash",
      )
      .all()
      .filter((row) => usableVector(row.vector, dims))
      .map((row) => ({ id: row.id, vector: toFloat32(row.vector) }));
  }

  /** The recorded model's dimensions (0 without one: no vector is then usable). */
  private dims(): number {
    return this.model()?.dims ?? 0;
  }

  /** Stored vectors that cannot be searched (usableVector), by their text hash. */
  unusable(): string[] {
    const dims = this.dims();
    // Those a fragment uses: one no fragment uses is pruned as such.
    const rows = this.db.query<{ text_hash: string; vector: Uint8Array }, []>(
      "SELECT e.text_hash, e.vector FROM embeddings e WHERE EXISTS (SELECT 1 FROM fragments f WHERE f.text_hash = e.text_hash)",
    );
    const found: string[] = [];
    for (const row of rows.iterate()) if (!usableVector(row.vector, dims)) found.push(row.text_hash);
    return found;
  }

  /** Drop these stored vectors: their texts wait for the next index run's embeddings. */
  delete(textHashes: string[]): void {
    this.db.query("DELETE FROM embeddings WHERE text_hash IN (SELECT value FROM json_each(?))").run(JSON.stringify(textHashes));
  }

  /** The vectors of these fragments (an exact search over a filter's fragments reads only those). */
  of(ids: number[]): { id: number; vector: Float32Array }[] {
    const dims = this.dims();
    return this.db
      .query<{ id: number; vector: Uint8Array }, [string]>(
        `SELECT f.id, e.vector FROM fragments f JOIN embeddings e ON e.text_hash = f.text_hash
         WHERE f.id IN (SELECT value FROM json_each(?))`,
      )
      .all(JSON.stringify(ids))
      .filter((row) => usableVector(row.vector, dims))
      .map((row) => ({ id: row.id, vector: toFloat32(row.vector) }));
  }

  /** Distinct fragment texts without a vector, and stored vectors no fragment uses. */
  agreement(): { missing: number; orphans: number } {
    return this.db
      .query<{ missing: number; orphans: number }, []>(
        `SELECT
           (SELECT count(DISTINCT f.text_hash) FROM fragments f WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash = f.text_hash)) AS missing,
           (SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM fragments f WHERE f.text_hash = e.text_hash)) AS orphans`,
      )
      .get()!;
  }

  count(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM fragments f JOIN embeddings e ON e.text_hash = f.text_hash").get()!
      .n;
  }

  /** Changes whenever the set of fragment vectors may have changed; the ANN file records the one it was built for. */
  generation(): string {
    return this.meta.get("vectors_generation") ?? "0";
  }

  bumpGeneration(): void {
    this.meta.set("vectors_generation", String(Number(this.generation()) + 1));
  }

  model(): StoredModel | undefined {
    return this.meta.json<StoredModel>("embedding_model");
  }

  setModel(model: StoredModel): void {
    this.meta.set("embedding_model", JSON.stringify(model));
  }
}
