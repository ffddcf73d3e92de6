/** `researcher remove` and MCP `remove_from_index`: one document out of a repository's index, its bytes zeroed. */
import { join } from "node:path";
import { insteadOfRunningAgain, ResearcherError } from "../errors.ts";
import { isFileAt } from "../files.ts";
import { acquireWriterLock } from "../lock.ts";
import type { Repository } from "../repos.ts";
import { closePaths, spelledIn, withoutRepository } from "../search/document-refs.ts";
import { syncVectorIndex } from "../search/vectors.ts";
import { Store } from "../store/store.ts";
import { candidacy } from "./discover.ts";
import { afterFailedWrite } from "./indexer.ts";
import { holdSignals } from "./repositories.ts";

/**
 * What a `remove` dropped: the document at `path` (its path as the index held it), or, where none is indexed now, the
 * OCR'd text kept of the documents that left the index from there (REMOVED_TEXTS_SCHEMA).
 */
export interface Removal {
  path: string;
  dropped: "document" | "kept_text";
}

/**
 * Drop one document (its fragments, FTS rows, vectors and any kept OCR'd text), zero the pages that frees, and
 * refresh the ANN file; a path no longer indexed whose OCR'd text is kept (deleted, or newly ignored, within 30 days)
 * has that text dropped instead. `named` may be `repo:path`, as results print it. `onRemoved` hears what went once it
 * is gone and its pages zeroed, before the ANN file's rebuild.
 */
export async function removeDocument(repo: Repository, named: string, onRemoved?: (removal: Removal) => void): Promise<Removal> {
  const release = acquireWriterLock(repo.dir, repo.name, "remove-document");
  try {
    const store = Store.open(repo.dir, { write: true });
    try {
      // A name typed composed (NFC) for a decomposed one on disk; `notes:a.md`, as every other command prints it. Not
      // indexed either way, it is the path without the prefix, that the error names and near paths are looked for
      // (`notes:drafts/olt.md` got no "did you mean": s24 review D12).
      const inside = withoutRepository(repo, named, (path) => spelledIn(store, path) !== undefined);
      const path = spelledIn(store, inside) ?? inside;
      const removal = await forgetAndZero(store, repo, path, onRemoved);
      if (!removal) {
        // Not indexed: perhaps a remove of it was killed after its removal committed, before its scrub, and this is
        // the command its user runs again, or its first index run was cut short (the pages OCR read of it went
        // with forgetDocument). The pages they freed are zeroed, into index.db, before saying so.
        store.scrubFreePages();
        store.checkpoint();
        const close = closePaths(repo, path)
          .slice(0, 5)
          .map((ref) => ref.slice(repo.name.length + 1)); // paths, as `remove` takes them
        throw new ResearcherError("DOCUMENT_NOT_FOUND", `'${path}' is not indexed in '${repo.name}'`, {
          hint: close.length
            ? `did you mean ${close.join(", ")}?`
            : `paths are relative to the repository root (\`researcher ls ${repo.name}\` lists them)`,
        });
      }
      // After the held step, so Ctrl-C stops it: a full HNSW rebuild (seconds at 50k vectors, minutes at 1M) that, run
      // between the removal and the zeroing, held Ctrl-C and kept the removed text in free pages for as long (s25
      // review R5). It is derived data: killed, it leaves a stale vectors.usearch (and a temp file the next index run
      // sweeps), which searches scan around and the next index run rebuilds. Its own writes need no second scrub:
      // they replace ann_* rows of meta (checksums, counts, orphan keys), so the pages they free held no document
      // text, and the pages they take come from a free list zeroed just before.
      const model = removal.dropped === "document" && store.embeddings.model();
      if (model) {
        try {
          await syncVectorIndex(store, repo.dir, model.dims);
        } catch (error) {
          throw removedAnnNotRebuilt(repo, path, afterFailedWrite(store, repo, error));
        }
      }
      return removal;
    } catch (error) {
      // As an index run's: a full disk or a damaged index named with its repository and fix, the WAL given back.
      throw afterFailedWrite(store, repo, error);
    } finally {
      store.close();
    }
  } finally {
    release();
  }
}

/**
 * Whether a removed document's file is still in the repository's folder and its rules take it in: the next index run
 * reads it again (one they leave out, an excluded file, does not come back: s26b review F9).
 */
export function stillOnDisk(repo: Repository, path: string): boolean {
  return isFileAt(join(repo.path, path)) && candidacy(path, repo) === "in";
}

/**
 * The removal, the zeroing of the pages it and earlier runs freed, and the checkpoint that carries the zeros into
 * index.db, with Ctrl-C, SIGTERM, SIGHUP and SIGQUIT held: a signal between the commit and the checkpoint left the
 * document's text in the file without a word (s24 hostile H2). Held from after the waits (the writer lock, the
 * store's open), for a second or so on a long free list; a signal held is let go after `onRemoved` has said the
 * document is gone (a Ctrl-C then ended the command without a word: s25b retest N1). What went, if anything did.
 */
async function forgetAndZero(
  store: Store,
  repo: Repository,
  path: string,
  onRemoved?: (removal: Removal) => void,
): Promise<Removal | undefined> {
  const releaseSignals = holdSignals();
  try {
    const dropped = store.transaction((): Removal["dropped"] | undefined => {
      if (store.forgetDocument(path)) {
        store.embeddings.bumpGeneration();
        store.embeddings.prune();
        return "document";
      }
      return store.forgetKeptTexts(path) > 0 ? "kept_text" : undefined;
    });
    if (!dropped) return undefined;
    try {
      store.scrubFreePages(); // what earlier runs freed keeps its bytes: nothing of the document may stay in the file
      store.checkpoint(); // the zeros reach index.db, not only its WAL (a write limit failed it: s24 hostile H7)
    } catch (error) {
      throw removedNotScrubbed(repo, path, afterFailedWrite(store, repo, error));
    }
    const removal = { path, dropped };
    onRemoved?.(removal);
    return removal;
  } finally {
    await releaseSignals();
  }
}

/**
 * A removal committed whose scrub of the free pages failed (a full disk): the document is gone, which "run the
 * command again" denied (it then said the document was not indexed: s23 hostile H3); a rebuild scrubs them.
 */
function removedNotScrubbed(repo: Repository, path: string, failure: ResearcherError): ResearcherError {
  return new ResearcherError(failure.code, `removed ${repo.name}:${path}, but the pages it freed were not zeroed: ${failure.message}`, {
    hint: `free some space, then \`researcher index ${repo.name} --rebuild\` zeroes them`,
    cause: failure,
  });
}

/**
 * A removal done and zeroed whose ANN rebuild failed (a folder where vectors.usearch goes, a full disk): the document
 * is gone, so the failure's "run the command again" would only hear it is not indexed; an index run rebuilds the file.
 */
function removedAnnNotRebuilt(repo: Repository, path: string, failure: ResearcherError): ResearcherError {
  const rebuild = `\`researcher index ${repo.name}\` rebuilds it (searches read the vectors without it until then)`;
  const fix = failure.hint && insteadOfRunningAgain(failure.hint, `, then ${rebuild}`);
  return new ResearcherError(failure.code, `removed ${repo.name}:${path}, but vectors.usearch was not rebuilt: ${failure.message}`, {
    hint: !fix ? rebuild : fix === failure.hint ? `${fix}; then ${rebuild}` : fix,
    cause: failure,
  });
}
