/**
 * `researcher verify`: is a repository's index whole and current? SQLite and FTS5 integrity, fragments ↔ vectors ↔
 * `vectors.usearch` agreement, files changed or gone since the last run, and temp files of interrupted writes.
 * `repair` rebuilds what is derived (the full-text index, the ANN file, orphan vectors, temp files) under the writer
 * lock and says what it did; what only an index run can bring back is named with its command.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { discoverFiles } from "./discover.ts";
import { describeError } from "./errors.ts";
import { acquireWriterLock, processStartTime } from "./lock.ts";
import type { Repository } from "./repos.ts";
import { Store } from "./store.ts";
import { ftsText } from "./text.ts";
import { mayDeferRebuild, syncVectorIndex, vectorIndexState } from "./vectors.ts";

export interface VerifyProblem {
  check: "database" | "full-text" | "vectors" | "ann" | "files" | "leftovers";
  detail: string;
  /** What `--repair` did about it, or the command that fixes it when repair cannot. */
  fix: string;
  repaired: boolean;
}

export interface VerifyReport {
  repository: string;
  ok: boolean;
  problems: VerifyProblem[];
}

/** Temp files of interrupted writes: `.<name>.<pid>.<time>.tmp` (see atomic.ts). */
const TEMP_FILE = /^\.(.+)\.(\d+)\.[0-9a-z]+\.tmp$/;

export async function verifyRepository(repo: Repository, options: { repair?: boolean } = {}): Promise<VerifyReport> {
  const problems: VerifyProblem[] = [];
  const report = () => ({ repository: repo.name, ok: problems.every((p) => p.repaired), problems });
  if (!Store.exists(repo.dir)) {
    problems.push({ check: "database", detail: "not indexed yet", fix: `researcher index ${repo.name}`, repaired: false });
    return report();
  }
  const release = options.repair ? acquireWriterLock(repo.dir, repo.name) : undefined;
  try {
    let store: Store;
    try {
      store = Store.open(repo.dir);
    } catch (error) {
      problems.push({ check: "database", detail: describeError(error), fix: `researcher index --rebuild ${repo.name}`, repaired: false });
      return report();
    }
    try {
      await checkStore(store, repo, problems, Boolean(options.repair));
    } finally {
      store.close();
    }
    checkLeftovers(repo, problems, Boolean(options.repair));
    return report();
  } finally {
    release?.();
  }
}

async function checkStore(store: Store, repo: Repository, problems: VerifyProblem[], repair: boolean): Promise<void> {
  const rebuild = `researcher index --rebuild ${repo.name}`;
  for (const detail of quickCheck(store)) problems.push({ check: "database", detail, fix: rebuild, repaired: false });

  const fullText = fullTextProblems(store);
  if (fullText.length) {
    if (repair) rebuildFullText(store);
    const fixed = repair && fullTextProblems(store).length === 0;
    for (const detail of fullText) problems.push({ check: "full-text", detail, fix: fixed ? "rebuilt from the fragments" : rebuild, repaired: fixed });
  }

  const model = store.embeddingModel();
  if (model) {
    const { missing, orphans } = vectorAgreement(store);
    if (missing) problems.push({ check: "vectors", detail: `${missing} fragment texts have no vector`, fix: `researcher index ${repo.name}`, repaired: false });
    if (orphans) {
      if (repair) store.transaction(() => store.pruneVectors());
      problems.push({ check: "vectors", detail: `${orphans} vectors belong to no fragment`, fix: repair ? "removed" : "researcher verify --repair", repaired: repair });
    }
    const state = vectorIndexState(store, repo.dir);
    const deferred = state === "stale" && mayDeferRebuild(store, model.dims); // searches scan until the next index run
    if (state !== "verified" && !deferred) {
      if (repair) await syncVectorIndex(store, repo.dir, model.dims);
      const detail = { missing: "vectors.usearch is missing", stale: "vectors.usearch was built for older vectors", damaged: "vectors.usearch does not match its recorded checksum" }[state];
      problems.push({ check: "ann", detail, fix: repair ? "rebuilt from index.db" : "researcher verify --repair (search rebuilds it too)", repaired: repair });
    }
  }
  checkFiles(store, repo, problems);
}

/** Files new, changed or gone since the last run: an index run brings the index up to date. */
function checkFiles(store: Store, repo: Repository, problems: VerifyProblem[]): void {
  let files;
  try {
    files = discoverFiles(repo.path, repo).files;
  } catch (error) {
    problems.push({ check: "files", detail: describeError(error), fix: "check the repository folder", repaired: false });
    return;
  }
  const stored = store.documents();
  const failed = new Set(store.failures().map((f) => f.path));
  let added = 0;
  let changed = 0;
  for (const file of files) {
    const previous = stored.get(file.path);
    if (!previous) added += failed.has(file.path) ? 0 : 1;
    else if (previous.size !== file.size || previous.mtimeMs !== file.mtimeMs) changed++;
  }
  const present = new Set(files.map((f) => f.path));
  const gone = [...stored.keys()].filter((path) => !present.has(path)).length;
  const parts = [added && `${added} new`, changed && `${changed} changed`, gone && `${gone} gone`].filter(Boolean);
  if (parts.length) {
    problems.push({ check: "files", detail: `since the last run: ${parts.join(", ")}`, fix: `researcher index ${repo.name}`, repaired: false });
  }
}

/** Temp files whose writer is gone; repair removes them. */
function checkLeftovers(repo: Repository, problems: VerifyProblem[], repair: boolean): void {
  for (const name of readdirSync(repo.dir)) {
    const temp = TEMP_FILE.exec(name);
    if (temp && processStartTime(Number(temp[2])) === null) {
      if (repair) rmSync(join(repo.dir, name), { force: true });
      problems.push({ check: "leftovers", detail: `${name}: a temp file of an interrupted write`, fix: repair ? "removed" : "researcher verify --repair", repaired: repair });
    }
  }
}

// ---- the checks over the store ----------------------------------------------------------------------------

/** SQLite's own structural check (`quick_check`): "ok", or what is wrong. */
export function quickCheck(store: Store): string[] {
  const rows = store.db.query<{ quick_check: string }, []>("PRAGMA quick_check").all().map((r) => r.quick_check);
  return rows.length === 1 && rows[0] === "ok" ? [] : rows;
}

/** Problems with the full-text index: its own integrity check, and one row per fragment. */
export function fullTextProblems(store: Store): string[] {
  const problems: string[] = [];
  try {
    store.db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('integrity-check')");
  } catch (error) {
    problems.push(`integrity check failed: ${(error as Error).message}`);
  }
  const rows = store.db.query<{ n: number }, []>("SELECT count(*) AS n FROM fragments_fts_docsize").get()!.n;
  const fragments = store.fragmentCount();
  if (rows !== fragments) problems.push(`${rows} rows for ${fragments} fragments`);
  return problems;
}

/** Re-create the full-text index from the fragments (the text lives there; FTS5 holds only the index). */
export function rebuildFullText(store: Store): void {
  store.transaction(() => {
    store.db.run("INSERT INTO fragments_fts(fragments_fts) VALUES('delete-all')");
    const rows = store.db
      .query<{ id: number; title: string; heading: string; text: string }, []>(
        "SELECT f.id, d.title, f.heading, f.text FROM fragments f JOIN documents d ON d.id = f.document_id",
      )
      .all();
    const insert = store.db.query("INSERT INTO fragments_fts(rowid, title, heading, body) VALUES (?, ?, ?, ?)");
    for (const row of rows) insert.run(row.id, ftsText(row.title), ftsText(row.heading), ftsText(row.text));
  });
  store.optimize();
}

/** Distinct fragment texts without a vector, and stored vectors no fragment uses. */
export function vectorAgreement(store: Store): { missing: number; orphans: number } {
  return store.db
    .query<{ missing: number; orphans: number }, []>(
      `SELECT
         (SELECT count(DISTINCT f.text_hash) FROM fragments f WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash = f.text_hash)) AS missing,
         (SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM fragments f WHERE f.text_hash = e.text_hash)) AS orphans`,
    )
    .get()!;
}
