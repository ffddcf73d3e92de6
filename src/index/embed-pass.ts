/**
 * The embedding pass of an index run: every fragment text without a vector gets one, batch by batch, each batch
 * committed on its own; a model that cannot be had leaves them pending (BM25 works meanwhile). indexer.ts runs it.
 */
import type { Config } from "../config.ts";
import { checkModel, chooseModel, type Embedder, type ModelHold, modelHold } from "../embed/embedder.ts";
import { damagedIndex, isResearcherError } from "../errors.ts";
import type { Repository } from "../repos.ts";
import type { Store, StoredModel } from "../store/store.ts";

/** What the pass reports as it goes (an index run's progress, its `embed` phase). */
export interface EmbedPassOptions {
  onProgress?: (event: { phase: "embed"; done: number; total: number }) => void;
}

const EMBED_BATCH = 256;

/**
 * The mismatch error when the chosen model, loaded, is not the one the repository was embedded with. A model that
 * cannot be loaded now (offline, its server down) is left to the run: it indexes the text and leaves the vectors
 * pending, as it would have without this check.
 */
export async function refuseOtherModel(repo: Repository, stored: StoredModel, load: () => Promise<Embedder>): Promise<void> {
  const embedder = await load().catch((error: unknown) => {
    if (isResearcherError(error) && (error.code === "MODEL_UNAVAILABLE" || error.code === "PROVIDER_FAILED")) return undefined;
    throw error;
  });
  if (embedder) checkModel(repo.name, stored, embedder);
}

/**
 * What stops every index run of `repo` before anything changes (modelHold): the model a plain `researcher index`
 * would embed with is not the one its vectors `stored` were made with, typically its own folder's files changed in
 * place. `status` and `verify` say it; an index run decides it by the same rule with its flags (indexer.ts).
 */
export function heldIndexRuns(home: string, config: Config, repo: Repository, stored: StoredModel | undefined): ModelHold | undefined {
  if (!repo.embed || !stored) return undefined;
  return modelHold(home, repo.name, chooseModel(config.embedding, repo.embedding, undefined, stored), stored);
}

/**
 * Embed, or leave the vectors pending when the model cannot be loaded or its server answered no vectors (offline, no
 * model folder yet, an Ollama or OpenAI-compatible server unreachable): the text is indexed and BM25 search works;
 * the next run with a model embeds what is missing.
 */
export async function embedOrDefer(
  store: Store,
  repo: Repository,
  loadModel: () => Promise<Embedder>,
  options: EmbedPassOptions,
): Promise<{ embedded: number; model: string | null; embeddings_pending?: number; warnings?: string[] }> {
  try {
    return await embedRepository(store, repo, loadModel, options);
  } catch (error) {
    if (!isResearcherError(error) || (error.code !== "MODEL_UNAVAILABLE" && error.code !== "PROVIDER_FAILED")) throw error;
    const pending = store.embeddings.pendingCount();
    const hint =
      error.code === "PROVIDER_FAILED"
        ? `${error.hint ?? "check the provider"}; then \`researcher index ${repo.name}\` embeds them`
        : (error.hint ?? "`researcher model pull` (online) or `researcher model set <folder>`");
    return {
      embedded: 0,
      model: store.embeddings.model()?.id ?? null,
      embeddings_pending: pending,
      warnings: [`embeddings pending for ${pending} fragment texts (BM25 search works now): ${error.message}; ${hint}`],
    };
  }
}

/**
 * Give every fragment text a vector. The model is loaded only when some text lacks one, and a repository never
 * mixes vectors of two models: a different model is an error until `--rebuild` or `--embeddings-only`.
 */
export async function embedRepository(
  store: Store,
  repo: Repository,
  loadModel: () => Promise<Embedder>,
  options: EmbedPassOptions,
): Promise<{ embedded: number; model: string | null }> {
  const total = store.embeddings.pendingCount();
  const stored = store.embeddings.model();
  if (total === 0) {
    store.transaction(() => store.embeddings.prune());
    return { embedded: 0, model: stored?.id ?? null };
  }
  const embedder = await loadModel();
  checkModel(repo.name, stored, embedder);
  if (!stored)
    store.embeddings.setModel({
      id: embedder.info.id,
      provider: embedder.info.provider,
      dims: embedder.dims,
      fingerprint: embedder.fingerprint,
      settings: {
        dtype: embedder.info.dtype,
        pooling: embedder.info.pooling,
        query_prefix: embedder.info.queryPrefix,
        document_prefix: embedder.info.documentPrefix,
      },
    });
  let done = 0;
  for (let after = ""; ; ) {
    const batch = store.embeddings.unembedded(after, EMBED_BATCH);
    if (batch.length === 0) break;
    options.onProgress?.({ phase: "embed", done, total });
    const vectors = await embedder.embed(
      batch.map((f) => embeddingText(f.title, f.heading, f.text)),
      "document",
    );
    // Each batch commits on its own: an interrupted run keeps what it embedded.
    store.transaction(() => {
      store.embeddings.insert(batch.map((f, i) => ({ textHash: f.textHash, vector: vectors[i]! })));
      store.embeddings.bumpGeneration();
    });
    done += batch.length;
    // The texts come in order of their hash, each after the last: an index of the hashes out of step with its table
    // (damage SQLite does not see until it checks) gave the same ones back forever, a WAL growing till the disk filled.
    if (batch.some((f) => f.textHash <= after)) throw damagedIndex(repo.name, "fragments_by_text_hash disagrees with its table");
    after = batch.at(-1)!.textHash;
  }
  options.onProgress?.({ phase: "embed", done, total });
  store.transaction(() => store.embeddings.prune());
  return { embedded: done, model: embedder.info.id };
}

/** What a fragment means on its own: the document title and heading path give the passage its context. */
export function embeddingText(title: string, heading: string, text: string): string {
  return [title, heading, text].filter(Boolean).join("\n");
}

/** The model the index's vectors are of; "unknown" when its record is damaged (a rebuild replaces them). */
export function modelOfVectors(store: Store): StoredModel | undefined | "unknown" {
  try {
    return store.embeddings.model();
  } catch (error) {
    if (isResearcherError(error) && error.code === "INDEX_CORRUPT") return "unknown";
    throw error;
  }
}
