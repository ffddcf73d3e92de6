/**
 * Putting a repository's scores on a common scale, so results of several repositories can be merged by how good
 * each match is rather than by rank alone. Raw scores do not compare: BM25 grows with a query's length and its
 * words' rarity in each repository, and cosine depends on the model (GloVe-SIF puts a SciFact query at 0.49 from
 * an average abstract and 0.19 from an average Rust-book section) and on the query.
 *
 * - Lexical evidence is the share of the query's IDF mass a fragment's BM25 score reaches: a fragment with every
 *   query word once, in a body of average length, scores about the sum of the words' IDFs, so it gets ~1; one
 *   that matches a single common word of a long question gets little.
 * - Vector evidence is how far a cosine has come from the query's background (its mean cosine with the
 *   repository's vectors, which is its cosine with their centroid, recorded at index time) towards 1.
 *
 * Index time also measures how well each list finds the fragment a pseudo-query was cut from; fusion.ts weighs a
 * repository's BM25 and vector lists by it.
 */
import type { Embedder } from "../embed/embedder.ts";
import { parseQuery, type ParsedQuery } from "./query.ts";
import { BM25_WEIGHTS } from "./bm25.ts";
import { round } from "./hits.ts";
import { dot, searchVectors, VectorCache } from "./vectors.ts";
import type { Store } from "../store/store.ts";
import { drawn, seeded } from "../random.ts";

export interface VectorCalibration {
  /** The vectors generation this was measured on. */
  generation: string;
  /** The mean of the repository's vectors: a query's dot product with it is its mean cosine with them. */
  centroid: number[];
  /** How many vectors the mean is of (calibrations from before it was kept have none: the store counts them). */
  vectors?: number;
  lists?: ListStrength;
  /** How the pseudo-queries were drawn (CALIBRATION_METHOD); one measured another way is measured again. */
  method?: number;
}

/** How well each list finds the fragment a pseudo-query was cut from: mean reciprocal rank in its top 100. */
export interface ListStrength {
  bm25: number;
  vector: number;
  queries: number;
}

const PSEUDO_QUERIES = 48;
const PSEUDO_QUERY_WORDS = 8;
const SOURCE_DEPTH = 100;

const META_KEY = "vector_calibration";
/**
 * 2: the pseudo-queries' fragments are drawn without replacement. Drawn with it, 30 fragments gave 18 distinct ones,
 * fewer than fusion.ts needs, so repositories of 24–38 fragments were never calibrated (s20 review F4).
 */
const CALIBRATION_METHOD = 2;

/**
 * Record the repository's calibration when its vectors changed since the last one: the centroid of its vectors,
 * and how well each list finds the passage a pseudo-query was cut from (fusion.ts weighs the lists by it).
 */
export async function calibrateRepository(store: Store, dir: string, loadEmbedder: () => Promise<Embedder>): Promise<void> {
  const generation = store.embeddings.generation();
  const recorded = vectorCalibration(store);
  if (recorded?.generation === generation && recorded.method === CALIBRATION_METHOD) return;
  // Streamed: a million vectors are summed batch by batch, never held at once.
  const ids: number[] = [];
  let sum: Float64Array | undefined;
  for (const { keys, matrix } of store.embeddings.batches(50_000)) {
    const dims = matrix.length / keys.length;
    sum ??= new Float64Array(dims);
    for (let i = 0; i < matrix.length; i++) sum[i % dims]! += matrix[i]!;
    for (const key of keys) ids.push(Number(key));
  }
  if (!sum) return store.meta.delete(META_KEY);
  const centroid = Array.from(sum, (x) => x / ids.length);
  const lists = await findSources(store, dir, ids, await loadEmbedder());
  const calibration: VectorCalibration = {
    generation,
    centroid: centroid.map((x) => Math.round(x * 1e6) / 1e6),
    vectors: ids.length,
    lists,
    method: CALIBRATION_METHOD,
  };
  store.meta.set(META_KEY, JSON.stringify(calibration));
}

/** Mean reciprocal rank (in the top 100) of each pseudo-query's source fragment in the BM25 and vector lists. */
async function findSources(store: Store, dir: string, ids: number[], embedder: Embedder): Promise<ListStrength> {
  const next = seeded(ids.length); // the same repository gets the same calibration on every run
  const sample = drawn(ids, PSEUDO_QUERIES, next);
  const texts = store.fragmentsByIds(sample);
  const pairs = sample.flatMap((id) => (texts.has(id) ? [{ id, query: pseudoQuery(texts.get(id)!.text, next) }] : []));
  const vectors = await embedder.embed(
    pairs.map((p) => p.query),
    "query",
  );
  const reciprocal = (list: { id: number }[], id: number) => 1 / (list.findIndex((hit) => hit.id === id) + 1 || Infinity);
  let bm25 = 0,
    vector = 0;
  const cache = new VectorCache(); // the ANN file mapped once for every pseudo-query
  for (const [i, { id, query }] of pairs.entries()) {
    const match = parseQuery(query).match;
    bm25 += match ? reciprocal(store.fullText.search(match, BM25_WEIGHTS, SOURCE_DEPTH), id) : 0;
    vector += reciprocal((await searchVectors(store, dir, vectors[i]!, SOURCE_DEPTH, { cache })).hits, id);
  }
  const n = Math.max(1, pairs.length);
  return { bm25: round(bm25 / n), vector: round(vector / n), queries: pairs.length };
}

/** A few consecutive words of a fragment, like a short query about it (the title line left out). */
function pseudoQuery(text: string, next: () => number): string {
  const words = text.replace(/^#.*$/gm, " ").match(/[\p{L}\p{N}]+/gu) ?? [];
  const start = Math.floor(next() * Math.max(1, words.length - PSEUDO_QUERY_WORDS));
  return words.slice(start, start + PSEUDO_QUERY_WORDS).join(" ");
}

const cache = new WeakMap<Store, { raw: string | undefined; calibration: VectorCalibration | null }>();

/** The recorded calibration, or null for an index built before calibration existed (re-index to record it). */
export function vectorCalibration(store: Store): VectorCalibration | null {
  const raw = store.meta.get(META_KEY);
  const cached = cache.get(store);
  if (cached && cached.raw === raw) return cached.calibration;
  const calibration = raw ? (store.meta.json<VectorCalibration>(META_KEY, { derived: true }) ?? null) : null;
  cache.set(store, { raw, calibration });
  return calibration;
}

/**
 * The centroid each store's vector evidence is measured from. Alone, or with a model no other searched repository
 * shares, a repository's own. Repositories embedded with one model share the mean of their vectors, as if they
 * were one index: measured from each one's own mean, a repository the query is about (its mean close to the query)
 * gave its real matches little evidence and an unrelated one's nearest passage much (a JavaScript paper first for
 * "the default integer type in Rust", s12 user #3); with one background, their cosines compare as they are.
 */
export function backgrounds(stores: Store[]): Map<Store, number[]> {
  const byModel = new Map<string, { store: Store; calibration: VectorCalibration }[]>();
  for (const store of stores) {
    const calibration = vectorCalibration(store);
    const model = calibration && fingerprintOf(store);
    if (!calibration || !model) continue;
    byModel.set(model, [...(byModel.get(model) ?? []), { store, calibration }]);
  }
  const centroids = new Map<Store, number[]>();
  for (const group of byModel.values()) {
    // Alone with its model (every search of one repository), its own mean, uncounted: a count of a million vectors
    // (calibrations from before `vectors` was kept) is milliseconds on every search.
    if (group.length === 1) {
      centroids.set(group[0]!.store, group[0]!.calibration.centroid);
      continue;
    }
    const weights = group.map(({ store, calibration }) => calibration.vectors ?? store.embeddings.count());
    const total = weights.reduce((sum, w) => sum + w, 0) || 1;
    const mean = group[0]!.calibration.centroid.map(
      (_, d) => group.reduce((sum, { calibration }, i) => sum + calibration.centroid[d]! * weights[i]!, 0) / total,
    );
    for (const { store } of group) centroids.set(store, mean);
  }
  return centroids;
}

/** The fingerprint of the model a store's vectors are of; none when it has none, or its record is damaged. */
function fingerprintOf(store: Store): string | undefined {
  try {
    return store.embeddings.model()?.fingerprint;
  } catch {
    return undefined; // the repository's own search reports the damage
  }
}

/**
 * A function from a cosine to vector evidence in [0, 1] for one query in one repository: how far the cosine has
 * come from the query's background (its cosine with `centroid`, backgrounds()) towards 1. Without one the
 * background is taken as 0.
 */
export function vectorEvidence(query: Float32Array, centroid: number[] | undefined): (cosine: number) => number {
  const background = centroid ? dot(query, centroid) : 0;
  const span = Math.max(1 - background, 0.05); // a query as close to everything as a match is tells nothing
  return (cosine) => clamp((cosine - background) / span);
}

/**
 * A function from a fragment's BM25 score to the share of the query's IDF mass it reaches, for one query in one
 * repository: its lexical evidence is this capped to [0, 1] (lexicalEvidence). Uncapped, it still tells apart two
 * full matches of one word (a definition its name's boost doubled, a line that mentions it), which the cap made
 * equal across repositories (s24 code user C1).
 */
export function lexicalRatio(store: Store, parsed: ParsedQuery): (score: number) => number {
  const mass = idfMass(store, parsed);
  return (score) => (mass > 0 ? score / mass : 0);
}

/** Lexical evidence in [0, 1] from a lexicalRatio. */
export function lexicalEvidence(ratio: number): number {
  return clamp(ratio);
}

/**
 * The share of the query's IDF mass each of these fragments holds: 1 with every word, less the IDFs of the words it
 * lacks. Lexical evidence is capped by it, as BM25 alone reached the whole mass with one word repeated, or in a
 * title, or beside a word common there: a fragment lacking the query's rarest word tied with full matches of other
 * repositories and came first by name (s19 user F1). Phrases and prefixes count as held (they have no one term).
 */
export function queryCoverage(store: Store, parsed: ParsedQuery, ids: number[]): Map<number, number> {
  const stems = [...new Set(parsed.optional.flatMap((t) => (t.stem ? [t.stem] : [])))];
  if (stems.length === 0 || ids.length === 0) return new Map();
  const mass = idfMass(store, parsed);
  const idfs = termIdfs(store, stems);
  const counts = store.fullText.termCounts(ids, stems);
  return new Map(
    ids.map((id) => {
      const held = counts.get(id);
      const missing = stems.reduce((sum, stem) => sum + (held?.has(stem) ? 0 : (idfs.get(stem) ?? 0)), 0);
      return [id, mass > 0 ? clamp(1 - missing / mass) : 1];
    }),
  );
}

/**
 * The sum of FTS5's IDFs of the query's words in this repository. Phrases and prefixes have no single term to
 * look up; each counts as a word of the median IDF (a required phrase is usually as telling as any word).
 */
function idfMass(store: Store, parsed: ParsedQuery): number {
  const stems = parsed.optional.flatMap((t) => (t.stem ? [t.stem] : []));
  const others = parsed.optional.length - stems.length + parsed.required.length;
  const total = store.fragmentCount();
  const idfs = [...termIdfs(store, stems).values()];
  const typical = idfs.length ? [...idfs].sort((a, b) => a - b)[Math.floor(idfs.length / 2)]! : Math.log(total + 1);
  // A word absent from the repository still counts: a fragment cannot match it, so the match is partial.
  return idfs.reduce((sum, idf) => sum + idf, 0) + others * typical;
}

/** FTS5's IDF of each term in this repository (a term no fragment holds gets the highest). */
export function termIdfs(store: Store, stems: string[]): Map<string, number> {
  const total = store.fragmentCount();
  const frequencies = store.fullText.termFrequencies(stems);
  return new Map([...frequencies].map(([term, n]) => [term, Math.max(1e-6, Math.log((total - n + 0.5) / (n + 0.5)))]));
}

function clamp(x: number): number {
  return Math.min(1, Math.max(0, x));
}
