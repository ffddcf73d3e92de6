/**
 * Scores summed per fragment id, then the best k of them: a dense array indexed by id (ids are small integers),
 * so adding a posting's score is an array write, not a map lookup. One array is kept and reused, with the ids a
 * ranking touched in a typed array beside it; `reset` clears what a ranking touched, so one ranking runs at a time
 * (searches run on one thread). A query of common words touches a large share of a big index (1M fragments:
 * ~150k ids, ~190k postings), so nothing here allocates per posting or per id.
 */
let sums = new Float64Array(1 << 16);
let touched = new Int32Array(1 << 12);

export class TopScores {
  private count = 0;

  add(id: number, score: number): void {
    if (id >= sums.length) sums = grown(sums, id + 1);
    const before = sums[id]!;
    if (before === 0) {
      // Scores are positive (an IDF is at least 1e-6, a count at least 1): 0 means not touched yet.
      if (this.count === touched.length) touched = grown(touched, this.count + 1);
      touched[this.count++] = id;
    }
    sums[id] = before + score;
  }

  /**
   * The best `k` admitted fragments (highest score first, then lowest id), and how many were admitted (every
   * touched one when `admit` is not given).
   */
  top(k: number, admit?: (id: number) => boolean): { hits: { id: number; score: number }[]; total: number } {
    const heap = new MinHeap(k);
    let total = 0;
    for (let i = 0; i < this.count; i++) {
      const id = touched[i]!;
      if (admit && !admit(id)) continue;
      total++;
      heap.offer(id, sums[id]!);
    }
    return { hits: heap.sorted(), total };
  }

  reset(): void {
    for (let i = 0; i < this.count; i++) sums[touched[i]!] = 0;
    this.count = 0;
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
