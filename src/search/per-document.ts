/**
 * Lists for a page of documents (`--documents`): past a fixed head, a ranked list keeps at most a few fragments of a
 * document. A page of documents ranks fragments until it has found as many documents as it shows (search.ts,
 * rankPage), and where a few long documents hold most of the matches (a book of 10,000 sections each naming the
 * query's word) that meant ranking, and weighing the headings of, every one of their fragments: 7.6 s and 680 MB
 * for ten documents among 200,000 matching sections (s25b review F1). A document ranks by its best fragment and shows
 * its best few from the head, so its fragments past the cap change no page but where a heading would have lifted one
 * past its BM25 betters (the cap comes before headings are weighed).
 *
 * The head is the same for every page, so the capped list is one list whatever the page asks: pages of documents
 * still concatenate. Within the head nothing is dropped, and the lists that normalise hybrid scores (their first
 * FUSION_DEPTH) are the same as uncapped.
 */

/** How a list is capped: `head` items kept whole, then at most `perDocument` of a document. */
export interface DocumentCap {
  head: number;
  perDocument: number;
  /** The document of each fragment id (one deleted since has none, and is counted for no document). */
  documentsOf: (ids: number[]) => Map<number, number>;
}

/** How much deeper each raw ranking goes than the last, while the capped list is short of the depth asked for. */
const DEEPER = 4;

/**
 * `rank` (a function from a depth to the best `depth` of a list, now or later: BM25 answers at once, vector search
 * later) capped per document: the capped list's best `depth`. The raw list is ranked deeper until the capped one
 * holds `depth` items or the raw one is exhausted.
 */
export function cappedRanking<List extends { hits: { id: number }[] }, Answer extends List | Promise<List>>(
  rank: (depth: number) => Answer,
  cap: DocumentCap,
): (depth: number) => Answer {
  const capped = new Capped(cap);
  const deepen = (depth: number, raw: number): List | Promise<List> => {
    const take = (list: List) => capped.of(list, raw, depth) ?? deepen(depth, raw * DEEPER);
    const answer = rank(raw);
    return answer instanceof Promise ? answer.then(take) : take(answer as List);
  };
  return (depth) => (depth <= cap.head ? rank(depth) : (deepen(depth, depth * 2) as Answer));
}

class Capped {
  /** Kept while the ranking deepens: each fragment's document is looked up once. */
  private readonly owners = new Map<number, number>();

  constructor(private readonly cap: DocumentCap) {}

  /** The capped list's best `depth`, from the raw list ranked `raw` deep; null when a deeper raw list may add to it. */
  of<List extends { hits: { id: number }[] }>(list: List, raw: number, depth: number): List | null {
    const kept = capHits(list.hits, this.cap, this.owners);
    return kept.length >= depth || list.hits.length < raw ? { ...list, hits: kept.slice(0, depth) } : null;
  }
}

function capHits<Hit extends { id: number }>(hits: Hit[], cap: DocumentCap, owners: Map<number, number>): Hit[] {
  const unknown = hits.flatMap((hit) => (owners.has(hit.id) ? [] : [hit.id]));
  for (const [id, document] of cap.documentsOf(unknown)) owners.set(id, document);
  // The head's fragments count towards their documents' caps too: a document is capped, not its tail.
  const counts = new Map<number, number>();
  return hits.filter((hit, i) => {
    const document = owners.get(hit.id);
    const n = document === undefined ? 1 : (counts.get(document) ?? 0) + 1;
    if (document !== undefined) counts.set(document, n);
    return i < cap.head || n <= cap.perDocument;
  });
}
