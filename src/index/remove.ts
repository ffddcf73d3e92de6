/** `researcher remove` and MCP `remove_from_index`: one document out of a repository's index, its bytes zeroed. */
import { ResearcherError } from "../errors.ts";
import { acquireWriterLock } from "../lock.ts";
import type { Repository } from "../repos.ts";
import { closePaths, spelledIn, withoutRepository } from "../search/document-refs.ts";
import { syncVectorIndex } from "../search/vectors.ts";
import { Store } from "../store/store.ts";
import { afterFailedWrite } from "./indexer.ts";
import { holdSignals } from "./repositories.ts";

/**
 * Drop one document (its fragments, FTS rows, vectors and any kept OCR'd text), zero the pages that frees, and
 * refresh the ANN file; returns its path as the index holds it (`named` may be `repo:path`, as results print it).
 */
export async function removeDocument(repo: Repository, named: string): Promise<string> {
  const release = acquireWriterLock(repo.dir, repo.name);
  // Ctrl-C or SIGTERM between the removal's commit and the end of its scrub left the document's text in free pages
  // without a word (s24 hostile H2): the two are one step to the user, a second or so on a long free list.
  const releaseSignals = holdSignals();
  try {
    const store = Store.open(repo.dir, { write: true });
    try {
      // A name typed composed (NFC) for a decomposed one on disk; `notes:a.md`, as every other command prints it. Not
      // indexed either way, it is the path without the prefix, that the error names and near paths are looked for
      // (`notes:drafts/olt.md` got no "did you mean": s24 review D12).
      const inside = withoutRepository(repo, named, (path) => spelledIn(store, path) !== undefined);
      const path = spelledIn(store, inside) ?? inside;
      const removed = store.transaction(() => {
        const gone = store.forgetDocument(path); // "drop this": its OCR'd text too
        if (gone) {
          store.embeddings.bumpGeneration();
          store.embeddings.prune();
        }
        return gone;
      });
      if (!removed) {
        // Not indexed: perhaps a remove of it was killed after its removal committed, before its scrub, and this is
        // the command its user runs again. The pages it freed are zeroed before saying so.
        store.scrubFreePages();
        const close = closePaths(repo, path)
          .slice(0, 5)
          .map((ref) => ref.slice(repo.name.length + 1)); // paths, as `remove` takes them
        throw new ResearcherError("DOCUMENT_NOT_FOUND", `'${path}' is not indexed in '${repo.name}'`, {
          hint: close.length
            ? `did you mean ${close.join(", ")}?`
            : `paths are relative to the repository root (\`researcher ls ${repo.name}\` lists them)`,
        });
      }
      const model = store.embeddings.model();
      if (model) await syncVectorIndex(store, repo.dir, model.dims);
      try {
        store.scrubFreePages(); // what earlier runs freed keeps its bytes: nothing of the document may stay in the file
        store.checkpoint(); // the zeros reach index.db, not only its WAL (a write limit failed it: s24 hostile H7)
      } catch (error) {
        throw removedNotScrubbed(repo, path, afterFailedWrite(store, repo, error));
      }
      return path;
    } catch (error) {
      // As an index run's: a full disk or a damaged index named with its repository and fix, the WAL given back.
      throw afterFailedWrite(store, repo, error);
    } finally {
      store.close();
    }
  } finally {
    releaseSignals();
    release();
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
