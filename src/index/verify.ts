/**
 * `researcher verify`: is a repository's index whole and current? SQLite and FTS5 integrity, fragments ↔ vectors ↔
 * `vectors.usearch` agreement, a model whose files changed since it embedded the repository (every index run refuses
 * then), files changed or gone since the last run, and temp files of interrupted writes.
 * `repair` rebuilds what is derived (the full-text index, the ANN file, orphan vectors, temp files) under the writer
 * lock and says what it did; what only an index run can bring back is named with its command.
 */
import { rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { confinedReader, movedRoot, movedRootHint, NOT_REGULAR, sha256 } from "../files.ts";
import { shellWord } from "../terminal.ts";
import { discoverFiles, type Discovery, keepUnmounted, UNMOUNTED } from "./discover.ts";
import { planChanges } from "./plan.ts";
import {
  describeError,
  type ErrorCode,
  isResearcherError,
  isSqliteDamage,
  isSqliteEnvironment,
  type ResearcherError,
  toResearcherError,
} from "../errors.ts";
import { acquireWriterLock, leftoverTempFiles } from "../lock.ts";
import { type Repository, selectRepositories } from "../repos.ts";
import { indexesMovedAside } from "../store/schema.ts";
import { Store } from "../store/store.ts";
import { loadConfig } from "../config.ts";
import { indexDue } from "./chunking.ts";
import { heldIndexRuns } from "./embed-pass.ts";
import { ANN_PROBLEMS, type AnnProblem, annPath, mayDeferRebuild, syncVectorIndex, vectorIndexState } from "../search/vectors.ts";

export interface VerifyProblem {
  check: "database" | "fragments" | "full-text" | "model" | "vectors" | "ann" | "metadata" | "files" | "leftovers";
  detail: string;
  /** What `--repair` did about it, or the command that fixes it when repair cannot. */
  fix: string;
  repaired: boolean;
  /**
   * The error's code when the problem is an error the command met, not something found in the index (`LOCKED`: try
   * again; `PERMISSION_DENIED`), so a script tells them apart as it does the command's errors (s30b N5).
   */
  code?: ErrorCode;
}

export interface VerifyReport {
  repository: string;
  ok: boolean;
  problems: VerifyProblem[];
  /**
   * Indexes a writer moved aside (`index.db.damaged-<time>`): the user's to look at and delete, no problem of the
   * index.
   */
  moved_aside: { path: string; bytes: number }[];
}

/**
 * Each named repository verified (all, when none is named), in turn. Verifying all of them, one being indexed is
 * reported in its entry and the others are verified: its LOCKED error ended the command, dropping the reports (and
 * repairs) of those before it and never checking those after (s25 scripts D2). Named, it is the command's error.
 */
export async function verifyRepositories(home: string, names: string[], options: { repair?: boolean } = {}): Promise<VerifyReport[]> {
  const reports: VerifyReport[] = [];
  for (const repo of selectRepositories(home, names)) {
    try {
      reports.push(await verifyRepository(repo, options));
    } catch (error) {
      if (names.length > 0 || !isResearcherError(error) || error.code !== "LOCKED") throw error;
      // Not "once the run is over": the holder may be a removal, or another program with index.db open (s30b N5).
      const again = `researcher verify ${shellWord(repo.name)}${options.repair ? " --repair" : ""}`;
      const problem = errorProblem(error, `${again} once no other process holds the index`);
      reports.push({ repository: repo.name, ok: false, problems: [problem], moved_aside: indexesMovedAside(repo.dir) });
    }
  }
  return reports;
}

/** An error the command met reported as a repository's problem: its message, its fix (or its hint), its code. */
function errorProblem(error: ResearcherError, fix = error.hint ?? "try again"): VerifyProblem {
  return { check: "database", detail: error.message, fix, repaired: false, code: error.code };
}

/**
 * The command that repairs one repository, as a problem is one repository's: `verify --repair` alone verifies (and
 * repairs) every one, and did not say which (s28 user 6).
 */
function repairCommand(repo: Repository): string {
  return `researcher verify ${shellWord(repo.name)} --repair`;
}

/**
 * Verify takes the writer lock, with or without `repair`: FTS5's integrity check is itself a write, and during an
 * index run it would find the database busy and report that as damage. A running writer makes it fail with
 * LOCKED (verify again once the run is over) instead.
 */
export async function verifyRepository(repo: Repository, options: { repair?: boolean } = {}): Promise<VerifyReport> {
  const problems: VerifyProblem[] = [];
  const report = () => ({
    repository: repo.name,
    ok: problems.every((p) => p.repaired),
    problems,
    moved_aside: indexesMovedAside(repo.dir),
  });
  let exists: boolean;
  try {
    exists = Store.exists(repo.dir);
  } catch (error) {
    // A file where the index folder belongs is this repository's problem, reported with its fix: thrown, it ended a
    // verify of every repository and discarded the reports (and repairs) of the others (s22 review F3).
    if (!isResearcherError(error)) throw error;
    problems.push(errorProblem(error));
    return report();
  }
  if (!exists) {
    problems.push({ check: "database", detail: "not indexed yet", fix: `researcher index ${repo.name}`, repaired: false });
    return report();
  }
  const release = acquireWriterLock(repo.dir, repo.name, "verify");
  try {
    await checkDatabase(repo, problems, Boolean(options.repair));
    checkLeftovers(repo, problems, Boolean(options.repair));
    return report();
  } finally {
    release();
  }
}

/** index.db and what derives from it. A damaged database is reported alone: nothing read from it can be trusted. */
async function checkDatabase(repo: Repository, problems: VerifyProblem[], repair: boolean): Promise<void> {
  const damaged = (detail: string) =>
    problems.push({ check: "database", detail, fix: `researcher index --rebuild ${repo.name}`, repaired: false });
  let store: Store;
  try {
    store = Store.open(repo.dir, { write: true }); // under the writer lock: an older schema is upgraded
  } catch (thrown) {
    // Only damage is rebuilt: a file this user may not write, a full disk or an index another program holds is
    // the environment's, and its own hint says what helps (a rebuild moved a sound index aside: s19 review F7).
    const error = isSqliteEnvironment(thrown) ? toResearcherError(thrown, { repository: repo.name, dir: repo.dir }) : thrown;
    if (isResearcherError(error) && error.code !== "INDEX_CORRUPT") {
      problems.push(errorProblem(error));
    } else if (isResearcherError(error) || isSqliteDamage(error)) damaged(describeError(error));
    else throw error;
    return;
  }
  try {
    const pages = integrityCheck(store);
    const wrongTyped = pages.length ? 0 : store.wrongTypedRows();
    if (wrongTyped) damaged(`${wrongTyped} rows hold a value of the wrong type where text belongs`);
    if (pages.length) pages.forEach(damaged);
    else if (!wrongTyped) await checkStore(store, repo, problems, repair);
  } catch (error) {
    // A busy, full or forbidden index is LOCKED, DISK_FULL, PERMISSION_DENIED as every command says it: verifying
    // every repository, a LOCKED one is reported in its entry and the others are verified.
    if (isSqliteEnvironment(error)) throw toResearcherError(error, { repository: repo.name, dir: repo.dir });
    if (!isSqliteDamage(error)) throw error;
    damaged(describeError(error));
  } finally {
    store.close();
  }
}

async function checkStore(store: Store, repo: Repository, problems: VerifyProblem[], repair: boolean): Promise<void> {
  // Fragments of no document: no run reads them again, and a rebuild of the full text from the documents' fragments
  // left them counted, so each fix named another (s19 hostile #3). They are deleted, derived data of nothing.
  const orphans = store.orphanFragmentCount();
  if (orphans) {
    if (repair) store.transaction(() => store.deleteOrphanFragments());
    const fix = repair ? "deleted" : repairCommand(repo);
    problems.push({ check: "fragments", detail: `${orphans} fragments belong to no document`, fix, repaired: repair });
  }
  const fullText = fullTextProblems(store);
  if (fullText.length) {
    if (repair) store.fullText.rebuild();
    const fixed = repair && fullTextProblems(store).length === 0;
    const fix = fixed ? "rebuilt from the fragments" : repair ? `researcher index --rebuild ${repo.name}` : repairCommand(repo);
    for (const detail of fullText) problems.push({ check: "full-text", detail, fix, repaired: fixed });
  }

  const model = store.embeddings.model();
  // Before the checks whose fix is an index run: while the model's files differ from those it was embedded with,
  // every run refuses, and verify answered `ok` (s28b retest R2).
  const held = heldIndexRuns(repo.home, loadConfig(repo.home), repo, model);
  if (held) problems.push({ check: "model", detail: held.because, fix: held.fix, repaired: false });
  // A repository that embeds but has no model recorded yet was indexed while its model could not be loaded
  // (offline first run, provider unreachable): its fragments wait for vectors like those of one that has.
  if (!model && repo.embed) {
    const { missing } = store.embeddings.agreement();
    if (missing)
      problems.push({
        check: "vectors",
        detail: `embeddings pending: ${missing} fragment texts have no vector yet (indexed while the model could not be loaded, or by a BM25-only run)`,
        fix: `researcher index ${repo.name}`,
        repaired: false,
      });
  }
  if (model) {
    const { missing, orphans } = store.embeddings.agreement();
    if (missing)
      problems.push({
        check: "vectors",
        detail: `${missing} fragment texts have no vector`,
        fix: `researcher index ${repo.name}`,
        repaired: false,
      });
    const unusable = store.embeddings.unusable();
    if (unusable.length) {
      // Dropped, they are fragment texts without a vector: the next index run embeds them again.
      if (repair) store.transaction(() => store.embeddings.delete(unusable));
      problems.push({
        check: "vectors",
        detail: `${unusable.length} stored vectors are damaged (not ${model.dims} finite numbers); searches leave them out`,
        fix: repair ? `removed: \`researcher index ${repo.name}\` embeds their texts again` : repairCommand(repo),
        repaired: repair,
      });
    }
    if (orphans) {
      if (repair) store.transaction(() => store.embeddings.prune());
      problems.push({
        check: "vectors",
        detail: `${orphans} vectors belong to no fragment`,
        fix: repair ? "removed" : repairCommand(repo),
        repaired: repair,
      });
    }
    const state = vectorIndexState(store, repo.dir);
    const deferred = state === "stale" && mayDeferRebuild(store, model.dims); // searches scan until the next index run
    if (state !== "verified" && !deferred) {
      // Something other than a file in its place is not ours to remove: the user moves it, then repairs.
      const notAFile = statSync(annPath(repo.dir), { throwIfNoEntry: false })?.isFile() === false;
      // Forced: a damaged file may still carry the identity that vouches for it (bit rot keeps every timestamp).
      if (repair && !notAFile) await syncVectorIndex(store, repo.dir, model.dims, { force: true });
      const fixed = repair && !notAFile && vectorIndexState(store, repo.dir) === "verified";
      problems.push(notAFile ? annNotAFile(repo) : annProblem(repo, state, { repair, fixed }));
    }
  }
  const damaged = store.pathsWithDamagedMetadata().size;
  if (damaged)
    problems.push({
      check: "metadata",
      detail: `${damaged} documents' metadata is damaged (not a JSON object); searches read it as none`,
      fix: `researcher index ${repo.name}`, // the run reads those files again
      repaired: false,
    });
  checkFiles(store, repo, problems);
}

/** An ANN file that cannot serve searches, and the command that fixes it (or says it was rebuilt). */
function annProblem(repo: Repository, state: AnnProblem, { repair, fixed }: { repair: boolean; fixed: boolean }): VerifyProblem {
  const detail = `vectors.usearch ${ANN_PROBLEMS[state]}`;
  const fix = fixed ? "rebuilt from index.db" : repair ? `researcher index --rebuild ${repo.name}` : repairCommand(repo);
  return { check: "ann", detail, fix, repaired: fixed };
}

function annNotAFile(repo: Repository): VerifyProblem {
  return {
    check: "ann",
    detail: "vectors.usearch is not a file (a folder or a special file stands in its place)",
    fix: `move ${annPath(repo.dir)} away, then ${repairCommand(repo)}`,
    repaired: false,
  };
}

/**
 * Files new, changed or gone since the last run: an index run brings the index up to date. Documents under a
 * folder that cannot be listed are not gone (an index run keeps them too): they are reported as unreadable.
 */
function checkFiles(store: Store, repo: Repository, problems: VerifyProblem[]): void {
  const moved = movedRoot(repo.path, store.recordedRoot());
  if (moved !== undefined) {
    const detail = `the repository folder ${repo.path} now resolves to ${moved}: its documents are not read from there`;
    problems.push({ check: "files", detail, fix: movedRootHint(repo.name, moved), repaired: false });
    return;
  }
  let discovery: Discovery;
  try {
    discovery = discoverFiles(repo.path, repo);
  } catch (error) {
    problems.push({ check: "files", detail: describeError(error), fix: "check the repository folder", repaired: false });
    return;
  }
  keepUnmounted(discovery, store.mounts(), repo);
  const stamps = store.failureStamps();
  const documents = store.documents();
  const plan = planChanges(discovery, documents, { failed: { stamps } });
  // A file whose stamp differs in its times or inode alone (touched, renamed, recorded a tick early: recordedStamp
  // in plan.ts, or before the index kept them) has changed only if its bytes have, as the next run decides by hash.
  const read = confinedReader(repo.path);
  const reallyChanged = plan.changed.filter((file) => {
    const stored = documents.get(file.path)!;
    if (stored.size !== file.size) return true;
    const bytes = read(file.path, file.size);
    return "reason" in bytes || sha256(bytes.bytes) !== stored.hash;
  });
  // A file that failed last time is not new: the run that failed it recorded why, and `status` shows it. One that
  // changed since it failed is: the next run converts it again (the planner's rule).
  const failed = new Set(store.failures().map((f) => f.path));
  const added = plan.added.filter((file) => !failed.has(file.path)).map((file) => file.path);
  const changed = [...reallyChanged, ...plan.added.filter((file) => stamps.has(file.path))].map((file) => file.path);
  const parts = [named(added, "new"), named(changed, "changed"), named(plan.gone, "gone")].filter(Boolean);
  if (parts.length) {
    problems.push({
      check: "files",
      detail: `since the last run: ${parts.join("; ")}`,
      fix: `researcher index ${repo.name}`,
      repaired: false,
    });
  }
  if (plan.unreadable.length) problems.push(unreadableProblem(repo, discovery, plan.unreadable));
  const due = indexDue(store, loadConfig(repo.home), repo);
  if (due) {
    const detail = `${due.documents === 1 ? "1 document" : `${due.documents} documents`} read differently now (${due.because.join(", ")}): the index holds their older reading`;
    problems.push({ check: "files", detail, fix: `researcher index ${repo.name}`, repaired: false });
  }
}

/** Files a check counts, the first few by name: "2 new (a.md, b.md)", "9 gone (a.md, … and 6 more)". */
function named(paths: readonly string[], what: string): string {
  if (paths.length === 0) return "";
  const more = paths.length > FILES_NAMED ? `, … and ${paths.length - FILES_NAMED} more` : "";
  return `${paths.length} ${what} (${paths.slice(0, FILES_NAMED).join(", ")}${more})`;
}

const FILES_NAMED = 3;

/**
 * Indexed documents this check could not read, kept by the index: where (a folder that cannot be listed, an ignore
 * file that cannot be read, the file itself) and what to do about it.
 */
function unreadableProblem(repo: Repository, discovery: Discovery, unreadable: string[]): VerifyProblem {
  // A folder's problem is `dir/`; an ignore file's is its own path, and its folder (unlisted) is what it keeps.
  const folderOf = (problem: string) => {
    const folder = problem.endsWith("/") ? problem.slice(0, -1) : dirname(problem) === "." ? "" : dirname(problem);
    return discovery.unlisted.includes(folder) ? folder : undefined;
  };
  const covers = (problem: string, path: string) => {
    const folder = folderOf(problem);
    return problem === path || (folder !== undefined && (folder === "" || path.startsWith(`${folder}/`)));
  };
  const found = discovery.problems.filter((problem) => unreadable.some((path) => covers(problem.path, path)));
  const isIgnoreFile = (problem: string) => !problem.endsWith("/") && folderOf(problem) !== undefined;
  const places = found.map((problem) =>
    isIgnoreFile(problem.path) ? `${problem.path}: ${problem.reason.replace(/: its folder is left as it was indexed$/, "")}` : problem.path,
  );
  const first = found[0]?.path ?? discovery.unlisted[0] ?? "";
  const absolute = join(repo.path, first).replace(/\/$/, "");
  const count = unreadable.length === 1 ? "1 indexed document" : `${unreadable.length} indexed documents`;
  return {
    check: "files",
    detail: `${count} cannot be read (${places.join(", ") || "folders that cannot be listed"}); the index keeps ${unreadable.length === 1 ? "it" : "them"}`,
    fix: isIgnoreFile(first)
      ? `make ${absolute} readable (\`ls -ld\` shows who may read it), or remove it`
      : found[0]?.reason === UNMOUNTED
        ? `mount ${absolute} again (if it is gone for good, \`researcher index ${repo.name} --allow-empty\` removes its documents)`
        : found[0]?.reason.startsWith(NOT_REGULAR)
          ? `${absolute} is no longer a file (${found[0].reason}): put the document back, or drop it from the index with \`researcher remove ${repo.name} ${shellWord(first)}\``
          : `give yourself read access (\`ls -ld ${absolute}\` shows who has it)`,
    repaired: false,
  };
}

/** Temp files whose writer is gone; repair removes them. */
function checkLeftovers(repo: Repository, problems: VerifyProblem[], repair: boolean): void {
  for (const name of leftoverTempFiles(repo.dir)) {
    const removed = repair && removeLeftover(join(repo.dir, name));
    problems.push({
      check: "leftovers",
      detail: `${name}: a temp file of an interrupted write`,
      fix: removed
        ? "removed"
        : repair
          ? `it could not be removed: remove it by hand (\`rm ${shellWord(join(repo.dir, name))}\`)`
          : repairCommand(repo),
      repaired: removed,
    });
  }
}

/** Remove a dead writer's temp file; false when it cannot be (immutable, forbidden): a problem left, not a crash. */
function removeLeftover(path: string): boolean {
  try {
    rmSync(path, { force: true });
    return true;
  } catch {
    return false;
  }
}

// ---- the checks over the store ----------------------------------------------------------------------------

/**
 * What is wrong with the database's pages and indexes (SQLite's `integrity_check`). It also runs FTS5's integrity
 * check, whose findings are the full-text check's (a full-text index is rebuilt, not the database).
 */
function integrityCheck(store: Store): string[] {
  return store.integrityCheck().filter((row) => row !== "ok" && !row.startsWith("fts5:"));
}

/** Problems with the full-text index: its own integrity check, and one row per fragment. */
function fullTextProblems(store: Store): string[] {
  const problems: string[] = [];
  try {
    store.fullText.checkIntegrity();
  } catch (error) {
    // The check is a write: another program's lock on index.db (a sqlite3 shell in a transaction, a backup) fails
    // it with SQLITE_BUSY, which is no damage, and its "repair" rebuilt a sound full-text index (s30 hostile F4).
    if (isSqliteEnvironment(error)) throw error;
    problems.push(`integrity check failed: ${(error as Error).message}`);
  }
  const rows = store.fullText.rowCount();
  const fragments = store.fragmentCount();
  if (rows !== fragments) problems.push(`${rows} rows for ${fragments} fragments`);
  return problems;
}
