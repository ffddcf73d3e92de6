/**
 * BM25 ranking that reads only what can decide the top k. FTS5's bm25() scores every row its match finds, so in a
 * large repository one common word costs a pass over a large share of the index (1M fragments: ~0.8 µs a row).
 *
 * Rare words first: the rarest words of the query ("essential"; together at most RARE_FIRST.essentialShare of the
 * fragments' postings, the rarest always) find the candidates, and FTS5 scores only their rows, on those words.
 * The best candidates are then scored on every word: common words are counted in a scratch index of just those
 * fragments (`FullTextIndex.termCounts`), with FTS5's formula, totals and tokenizer, so a candidate's score is the one
 * bm25() gives over the whole query. What this can miss is a fragment holding only common words, or one ranked
 * past the candidates on the rare words; `exact` says when neither can happen (MaxScore's bound: a word adds at
 * most (k1 + 1) × its IDF to any fragment).
 *
 * Every hit holds a rare word, so the count of matching fragments (`total`) counts the rare words' match: a count
 * over the common words would cost what ranking no longer does.
 *
 * One common word is ranked from its impact list (`rankOneWord`), kept here beside FTS5's index.
 *
 * In a large repository, a query of plain words is scored exactly from posting lists of our own (`rankPostings`,
 * store/postings.ts): every fragment holding a word, with its counts and length, summed in JS with FTS5's formula
 * and totals; the rarest words, which have no list, are scored by FTS5 over their few rows.
 */
import type { ParsedQuery } from "./query.ts";
import { buildMatch } from "./query.ts";
import { TopScores } from "./top-scores.ts";
import type { WeighedEntry } from "../store/impacts.ts";
import type { Bm25Weights, SqlCondition, Store } from "../store/store.ts";

/** Field weights for FTS5 bm25(): a word in a title or heading says more about a passage than one in its body. */
export const BM25_WEIGHTS: Bm25Weights = { title: 2.0, heading: 1.5, body: 1.0 };

/** FTS5's bm25() constants. */
export const K1 = 1.2;
const B = 0.75;

/**
 * When rare words first pays: scoring a candidate on every word costs ~25 µs (the scratch index), FTS5's pass
 * ~0.8 µs per posting, so it is used only when the common words' postings it skips outweigh its candidates'
 * scoring several times (on SciFact's 7,710 fragments it almost never does). Benchmarks set `minSkippedPostings`
 * to 0 to measure its ranking on a small corpus.
 */
export const RARE_FIRST = {
  minSkippedPostings: 50_000,
  /** The essential words' postings, as a share of the fragments (chosen on SciFact train; see docs/design.md). */
  essentialShare: 0.1,
  /** Candidates scored on every word: this many per result asked for, and at least `minCandidates`. */
  candidatesPerResult: 5,
  minCandidates: 500,
};

export interface Bm25Ranking {
  hits: { id: number; score: number }[];
  /** True when no fragment outside the candidates could have entered the top k. */
  exact: boolean;
  /** The rare words' match: every hit matches it, and `total` counts it. */
  match: string;
  /** The count of `match`, when it is known without counting. */
  total?: number;
}

interface Term {
  fts: string;
  stem: string;
  df: number;
  idf: number;
}

/**
 * The top `k` fragments for a query of optional words, or null when FTS5 ranks it as fast itself (one word,
 * phrases, prefixes, required or excluded parts, few postings of common words to skip) or a word's count is unknown.
 * A filter (`where`) only admits candidates: whether this path is taken, and every score, stay as without it.
 */
export function rankRareFirst(
  store: Store,
  parsed: ParsedQuery,
  weights: Bm25Weights,
  k: number,
  where?: SqlCondition,
): Bm25Ranking | null {
  if (parsed.required.length || parsed.excluded.length || parsed.optional.length < 2) return null;
  if (parsed.optional.some((term) => !term.stem)) return null;
  const { rows, averageLength } = store.fullText.totals();
  const frequency = store.fullText.termFrequencies(parsed.optional.map((term) => term.stem!));
  // A stem the index does not know may still match through FTS5's own tokenizing of the query: let it decide.
  if ([...frequency.values()].some((n) => n === 0)) return null;
  const terms = parsed.optional
    .map((term) => ({ fts: term.fts, stem: term.stem!, df: frequency.get(term.stem!)!, idf: idf(rows, frequency.get(term.stem!)!) }))
    .sort((a, b) => a.df - b.df);
  const split = essentialCount(
    terms.map((t) => t.df),
    rows * RARE_FIRST.essentialShare,
  );
  if (split === terms.length) return null; // nothing common: FTS5's pass is the same work
  const [essential, common] = [terms.slice(0, split), terms.slice(split)];
  if (common.reduce((sum, t) => sum + t.df, 0) < RARE_FIRST.minSkippedPostings) return null;

  const limit = Math.max(RARE_FIRST.minCandidates, k * RARE_FIRST.candidatesPerResult);
  const match = buildMatch(
    [],
    essential.map((t) => t.fts),
    [],
  )!;
  const candidates = store.fullText.search(match, weights, limit, where);
  const hits = scoreCommon(store, candidates, common, weights, averageLength)
    .sort((a, b) => b.score - a.score)
    .slice(0, k);
  const commonBound = common.reduce((sum, t) => sum + (K1 + 1) * t.idf, 0);
  const threshold = hits.length === k ? hits[k - 1]!.score : -Infinity;
  const pastCandidates = candidates.length < limit ? -Infinity : candidates[limit - 1]!.score + commonBound;
  return { hits, exact: threshold >= commonBound && threshold >= pastCandidates, match };
}

/** The rarest words whose postings stay within `budget`; the rarest always. */
function essentialCount(frequencies: number[], budget: number): number {
  let postings = frequencies[0]!;
  let count = 1;
  while (count < frequencies.length && postings + frequencies[count]! <= budget) postings += frequencies[count++]!;
  return count;
}

/** FTS5's IDF: a word in more than half the rows would go negative and counts (almost) nothing instead. */
function idf(rows: number, df: number): number {
  const value = Math.log((rows - df + 0.5) / (df + 0.5));
  return value <= 0 ? 1e-6 : value;
}

/** Add each common word's BM25 term to the candidates' scores on the rare words. */
function scoreCommon(
  store: Store,
  candidates: { id: number; score: number }[],
  common: Term[],
  weights: Bm25Weights,
  averageLength: number,
): { id: number; score: number }[] {
  const ids = candidates.map((c) => c.id);
  const lengths = store.fullText.lengths(ids);
  const counts = store.fullText.termCounts(
    ids,
    common.map((t) => t.stem),
  );
  return candidates.map(({ id, score }) => {
    const norm = K1 * (1 - B + (B * lengths.get(id)!) / averageLength);
    for (const term of common) {
      const [title, heading, body] = counts.get(id)!.get(term.stem) ?? [0, 0, 0];
      const tf = title * weights.title + heading * weights.heading + body * weights.body;
      score += (term.idf * (tf * (K1 + 1))) / (tf + norm);
    }
    return { id, score };
  });
}

/**
 * Posting lists are kept in repositories of at least `from` fragments, for words in at least `minFragments` of
 * them (rarer words cost FTS5 next to nothing), and built again once `rebuildShare` of the fragments has been
 * written or deleted since.
 */
const POSTINGS = { from: 20_000, minFragments: 64, rebuildShare: 0.1 };

/**
 * The top `k` fragments for the optional words `terms` (the match's), scored as FTS5's bm25() scores `match`,
 * every fragment it matches counted (`total`); null when a word is not a plain word or no word has a list. Words
 * without a list (the rarest, or unknown to the index as stemmed here) are FTS5's to match and score, over their
 * few rows. A filter (`where`) only admits fragments: the scores stay as without it.
 */
export function rankPostings(
  store: Store,
  parsed: ParsedQuery,
  terms: ParsedQuery["optional"],
  match: string,
  weights: Bm25Weights,
  k: number,
  where?: SqlCondition,
): Bm25Ranking | null {
  if (parsed.required.length || parsed.excluded.length || terms.length === 0 || terms.some((term) => !term.stem)) return null;
  const frequency = store.fullText.termFrequencies(terms.map((term) => term.stem!));
  const lists = new Map(
    terms.flatMap((term) => {
      const list = store.postings.read(term.stem!);
      return list ? [[term, list] as const] : [];
    }),
  );
  if (lists.size === 0) return null;

  const { rows, averageLength } = store.fullText.totals();
  const removed = store.postings.removed();
  const scores = new TopScores();
  try {
    for (const [term, list] of lists) {
      const weight = idf(rows, frequency.get(term.stem!)!);
      scores.beginList(); // a list's postings come in ascending id order
      list.visit((id, title, heading, body, length) => {
        if (removed.size && removed.has(id)) return;
        const tf = title * weights.title + heading * weights.heading + body * weights.body;
        scores.add(id, (weight * (tf * (K1 + 1))) / (tf + K1 * (1 - B + (B * length) / averageLength)));
      });
    }
    const rare = terms.filter((term) => !lists.has(term));
    if (rare.length) {
      const rareMatch = buildMatch(
        [],
        rare.map((term) => term.fts),
        [],
      )!;
      scores.beginList();
      for (const hit of store.fullText.search(rareMatch, weights, -1).sort((a, b) => a.id - b.id)) scores.add(hit.id, hit.score);
    }
    const admitted = where && new Set(store.fragmentIdsWhere(where));
    const { hits, total } = scores.top(k, admitted ? (id) => admitted.has(id) : undefined);
    return { hits, exact: true, match, total };
  } finally {
    scores.reset();
  }
}

/** Impact lists are kept in repositories of this many fragments, for words in at least IMPACT_SHARE of them. */
const IMPACTS_FROM = 20_000;
const IMPACT_SHARE = 0.2;
/** Fragments on each word's list: enough for the deepest ranking asked of it (hybrid, --documents). */
const IMPACTS_PER_TERM = 1000;

/**
 * One common word: the fragments on its impact list scored exactly, when the list proves that no fragment off it
 * can enter the top k (off the list the word weighs at most its bound, widened if the average length has grown
 * since); null otherwise, and FTS5 ranks every fragment that holds the word, with the same scores (also under a
 * filter, whose admitted fragments the list cannot prove complete).
 */
export function rankOneWord(store: Store, parsed: ParsedQuery, weights: Bm25Weights, k: number, where?: SqlCondition): Bm25Ranking | null {
  const [term] = parsed.optional;
  if (where || parsed.required.length || parsed.excluded.length || parsed.optional.length !== 1 || !term?.stem || !parsed.match)
    return null;
  const settings = impactSettings(store);
  if (!settings || settings.weights.join() !== [weights.title, weights.heading, weights.body].join()) return null;
  const list = store.impacts.list(term.stem);
  if (!list) return null;
  const { rows, averageLength } = store.fullText.totals();
  const df = store.fullText.termFrequencies([term.stem]).get(term.stem)!;
  const weight = idf(rows, df);
  const weigh = impactOf(averageLength);
  const hits = list.entries
    .map((entry) => ({ id: entry.id, score: weight * weigh(entry.weightedTf, entry.length) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, k);
  // The list was cut at one average length; at a longer one, every fragment off it weighs at most that much more.
  const offList = weight * list.bound * Math.max(1, averageLength / settings.average);
  if (hits.length < Math.min(k, df) || (hits.length === k && hits[k - 1]!.score < offList)) return null;
  return { hits, exact: true, match: parsed.match, total: df };
}

/**
 * After an index run: (re)build the impact lists of a large repository when it has none or the run changed a
 * large share of it (a smaller run has kept them whole, fragment by fragment); drop them when it is small. The
 * posting lists likewise, by the changes since they were built.
 */
export function maintainImpactLists(store: Store, changedShare: number): void {
  const { rows } = store.fullText.totals();
  maintainPostingLists(store, rows);
  if (rows < IMPACTS_FROM) {
    if (impactSettings(store)) store.transaction(() => clearImpactLists(store));
    return;
  }
  if (impactSettings(store) && changedShare < 0.1) return;
  // Stopwords too: a query of a stopword alone keeps it, and would otherwise be a full pass over the index.
  const common = store.fullText.commonTerms(Math.ceil(rows * IMPACT_SHARE));
  buildImpacts(store, common, { weights: [BM25_WEIGHTS.title, BM25_WEIGHTS.heading, BM25_WEIGHTS.body] }, IMPACTS_PER_TERM);
}

/**
 * Build the posting lists of a large repository when it has none or they have taken many changes; drop them in a small
 * one.
 */
function maintainPostingLists(store: Store, rows: number): void {
  if (rows < POSTINGS.from) {
    if (store.postings.built()) store.transaction(() => store.postings.clear());
    return;
  }
  if (store.postings.built() && store.postings.changedSinceBuilt() < rows * POSTINGS.rebuildShare) return;
  store.transaction(() => store.postings.build(POSTINGS.minFragments, store.fullText.lengths()));
}

/**
 * Keep the posting lists whole after writing these documents (call in the same transaction): each new fragment
 * joins the list of every listed word it holds. (Deleted fragments are recorded by a trigger.)
 */
function updatePostings(store: Store, documentIds: number[]): void {
  if (documentIds.length === 0 || !store.postings.built()) return;
  const ids = store.fragmentIdsOfDocuments(documentIds);
  const listed = store.postings.terms();
  const lengths = store.fullText.lengths(ids);
  for (const [id, perTerm] of store.fullText.termCounts(ids)) {
    for (const [term, [title, heading, body]] of perTerm) {
      if (listed.has(term)) store.postings.add(term, { id, title, heading, body, length: lengths.get(id)! });
    }
  }
}

// ---- the impact lists (their rows: store/impacts.ts) -------------------------------------------------------------

/** How the impact lists were built: field weights (title, heading, body) and the average length at the time. */
interface ImpactSettings {
  weights: [number, number, number];
  average: number;
}

/** A word's BM25 term without its IDF, in a fragment of `length` tokens where it counts `weightedTf`. */
function impactOf(average: number): (weightedTf: number, length: number) => number {
  return (tf, length) => (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / average));
}

/** What the impact lists were built with, or undefined when there are none. */
export function impactSettings(store: Store): ImpactSettings | undefined {
  return store.meta.json<ImpactSettings>("impacts", { derived: true });
}

/**
 * Replace every impact list (one transaction): each of `terms` gets the `perTerm` fragments where it weighs most,
 * found by FTS5's own one-word ranking and counted exactly. Terms FTS5 would not search as themselves (the
 * stemmer is not idempotent) are left without a list.
 */
function buildImpacts(store: Store, terms: string[], settings: Omit<ImpactSettings, "average">, perTerm: number): void {
  const average = store.fullText.totals().averageLength;
  const weigh = impactOf(average);
  const searchable = store.fullText.selfStemming(terms);
  store.transaction(() => {
    clearImpactLists(store);
    for (const term of searchable) {
      const [title, heading, body] = settings.weights;
      const best = store.fullText.search(`"${term}"`, { title, heading, body }, perTerm + 1).map((hit) => hit.id);
      const weighed = weighTerms(store, best, [term], settings.weights, weigh);
      const [kept, next] = [best.slice(0, perTerm), best[perTerm]];
      const entries = kept.map((id) => weighed.get(id)!.get(term)!);
      store.impacts.write(term, entries, next === undefined ? 0 : weighed.get(next)!.get(term)!.impact);
    }
    store.meta.set("impacts", JSON.stringify({ ...settings, average }));
  });
}

/** Drop the impact lists and the posting lists (a rebuild builds both again at its end). */
export function clearImpacts(store: Store): void {
  clearImpactLists(store);
  store.postings.clear();
}

function clearImpactLists(store: Store): void {
  store.impacts.clear();
  store.meta.delete("impacts");
}

/**
 * Keep the impact lists whole after writing these documents (call in the same transaction): a new fragment
 * joins a word's list when the word weighs more in it than the list's bound. (Deleted fragments leave their lists
 * through a trigger.) The posting lists are kept too.
 */
export function updateImpacts(store: Store, documentIds: number[]): void {
  updatePostings(store, documentIds);
  const settings = impactSettings(store);
  if (!settings || documentIds.length === 0) return;
  const bounds = store.impacts.bounds();
  const ids = store.fragmentIdsOfDocuments(documentIds);
  const weighed = weighTerms(store, ids, [...bounds.keys()], settings.weights, impactOf(settings.average));
  for (const terms of weighed.values()) {
    for (const [term, entry] of terms) if (entry.impact > bounds.get(term)!) store.impacts.add(term, entry);
  }
}

/** Each term's entry in each fragment that holds it: its weighted count, the fragment's length, its impact there. */
function weighTerms(
  store: Store,
  ids: number[],
  terms: string[],
  weights: [number, number, number],
  weigh: (weightedTf: number, length: number) => number,
): Map<number, Map<string, WeighedEntry>> {
  const counts = store.fullText.termCounts(ids, terms);
  const lengths = store.fullText.lengths(ids);
  return new Map(
    [...counts].map(([id, perTerm]) => [
      id,
      new Map(
        [...perTerm].map(([term, columns]) => {
          const weightedTf = columns[0] * weights[0] + columns[1] * weights[1] + columns[2] * weights[2];
          return [term, { id, weightedTf, length: lengths.get(id)!, impact: weigh(weightedTf, lengths.get(id)!) }];
        }),
      ),
    ]),
  );
}
