/**
 * Scores of several lists summed per fragment id, then the best k of them. Each list arrives in ascending id order
 * (posting lists are kept so; other hits are sorted first), and the lists are summed window by window of ids: a
 * window's sums fit in the processor's cache, where one array over every id of a large index does not (1M
 * fragments: a query of common words adds ~190k scores to ~150k ids, and adding them at random places in an 8 MB
 * array cost more than decoding them). Postings are kept in typed arrays reused from ranking to ranking (searches
 * run on one thread, one ranking at a time), so nothing here allocates per posting or per id.
 */

/** Ids per window: 32k sums (256 KB) stay in a core's L2 cache. */
const WINDOW = 1 << 15;

let ids = new Int32Array(1 << 16);
let scores = new Float64Array(1 << 16);
const windowSums = new Float64Array(WINDOW);
const windowTouched = new Int32Array(WINDOW);

export class TopScores {
  private count = 0;
  /** Where each list starts in `ids`/`scores`. */
  private readonly starts: number[] = [];
  /** Where the list being added starts. */
  private listStart = 0;
  private ascending = true;

  /** Start the next list: its postings follow, in ascending id order. */
  beginList(): void {
    this.starts.push(this.count);
    this.listStart = this.count;
  }

  /**
   * Add a posting to the list begun last (the first list begins by itself). Ids are below 2^31 (SQLite rowids here).
   */
  add(id: number, score: number): void {
    const at = this.count;
    if (this.starts.length === 0) this.beginList();
    if (at === ids.length) {
      ids = grown(ids, at + 1);
      scores = grown(scores, at + 1);
    }
    if (at > this.listStart && ids[at - 1]! >= id) this.ascending = false;
    ids[at] = id;
    scores[at] = score;
    this.count = at + 1;
  }

  /**
   * The best `k` admitted fragments (highest score first, then lowest id), and how many were admitted (every
   * fragment any list holds, when `admit` is not given).
   */
  top(k: number, admit?: (id: number) => boolean): { hits: { id: number; score: number }[]; total: number } {
    if (!this.ascending) this.sortLists();
    const heap = new MinHeap(k);
    const cursors = this.starts.slice();
    const ends = [...this.starts.slice(1), this.count];
    let total = 0;
    for (let base = this.firstWindow(cursors, ends); base >= 0; base = this.firstWindow(cursors, ends)) {
      const end = base + WINDOW;
      let touched = 0;
      // List by list, as a dense array would add them: every id's sum is added up in the same order.
      for (let list = 0; list < cursors.length; list++) {
        let i = cursors[list]!;
        const stop = ends[list]!;
        for (; i < stop && ids[i]! < end; i++) {
          const offset = ids[i]! - base;
          // Scores are positive (an IDF is at least 1e-6, a count at least 1): 0 means not touched yet.
          if (windowSums[offset] === 0) windowTouched[touched++] = offset;
          windowSums[offset] = windowSums[offset]! + scores[i]!;
        }
        cursors[list] = i;
      }
      for (let j = 0; j < touched; j++) {
        const offset = windowTouched[j]!;
        const sum = windowSums[offset]!;
        windowSums[offset] = 0;
        if (admit && !admit(base + offset)) continue;
        total++;
        heap.offer(base + offset, sum);
      }
    }
    return { hits: heap.sorted(), total };
  }

  reset(): void {
    this.count = 0;
    this.listStart = 0;
    this.starts.length = 0;
    this.ascending = true;
  }

  /** The window holding the lowest id not yet summed, or -1 when every list is done. */
  private firstWindow(cursors: number[], ends: number[]): number {
    let lowest = Infinity;
    for (let list = 0; list < cursors.length; list++) if (cursors[list]! < ends[list]!) lowest = Math.min(lowest, ids[cursors[list]!]!);
    return lowest === Infinity ? -1 : lowest - (lowest % WINDOW);
  }

  /** A list that came out of order (a caller's mistake, not a posting list) is put in order, its pairs together. */
  private sortLists(): void {
    const ends = [...this.starts.slice(1), this.count];
    this.starts.forEach((start, list) => {
      const order = Array.from({ length: ends[list]! - start }, (_, i) => start + i).sort((a, b) => ids[a]! - ids[b]!);
      const sortedIds = order.map((i) => ids[i]!);
      const sortedScores = order.map((i) => scores[i]!);
      ids.set(sortedIds, start);
      scores.set(sortedScores, start);
    });
    this.ascending = true;
  }
}

/** A copy of `array` with room for at least `size` entries (doubling, so growth costs O(1) per entry). */
function grown<T extends Float64Array | Int32Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(Math.max(size, array.length * 2));
  bigger.set(array);
  return bigger;
}

/** The k best (id, score) pairs seen; the worst of them at the root. */
class MinHeap {
  private readonly ids: Int32Array;
  private readonly scores: Float64Array;
  private size = 0;

  constructor(private readonly k: number) {
    this.ids = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  offer(id: number, score: number): void {
    if (this.size < this.k) {
      this.ids[this.size] = id;
      this.scores[this.size] = score;
      this.up(this.size++);
    } else if (this.k > 0 && score >= this.scores[0]! && this.ranksBelow(0, id, score)) {
      // (Most candidates of a large match fall below the root: the first comparison turns them away.)
      this.ids[0] = id;
      this.scores[0] = score;
      this.down(0);
    }
  }

  sorted(): { id: number; score: number }[] {
    return Array.from({ length: this.size }, (_, i) => ({ id: this.ids[i]!, score: this.scores[i]! })).sort(
      (a, b) => b.score - a.score || a.id - b.id,
    );
  }

  /** Whether the entry at `i` ranks below (id, score): lower score, or the same score and a higher id. */
  private ranksBelow(i: number, id: number, score: number): boolean {
    return this.scores[i]! < score || (this.scores[i] === score && this.ids[i]! > id);
  }

  private swap(i: number, j: number): void {
    const id = this.ids[i]!;
    const score = this.scores[i]!;
    this.ids[i] = this.ids[j]!;
    this.scores[i] = this.scores[j]!;
    this.ids[j] = id;
    this.scores[j] = score;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.ranksBelow(i, this.ids[parent]!, this.scores[parent]!)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      let least = i;
      const left = 2 * i + 1;
      const right = left + 1;
      if (left < this.size && this.ranksBelow(left, this.ids[least]!, this.scores[least]!)) least = left;
      if (right < this.size && this.ranksBelow(right, this.ids[least]!, this.scores[least]!)) least = right;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }
}
