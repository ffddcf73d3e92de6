/**
 * Scores summed per fragment id, then the best k of them: a dense array indexed by id (ids are small integers),
 * so adding a posting's score is an array write, not a map lookup. One array is kept and reused; `reset` clears
 * what a ranking touched, so one ranking runs at a time (searches run on one thread).
 */
let sums = new Float64Array(1 << 16);

export class TopScores {
  private readonly touched: number[] = [];

  add(id: number, score: number): void {
    if (id >= sums.length) {
      const grown = new Float64Array(Math.max(id + 1, sums.length * 2));
      grown.set(sums);
      sums = grown;
    }
    if (sums[id] === 0) this.touched.push(id);
    sums[id] = sums[id]! + score;
  }

  /** The best `k` admitted fragments (highest score first, then lowest id), and how many were admitted. */
  top(k: number, admit: (id: number) => boolean): { hits: { id: number; score: number }[]; total: number } {
    const heap = new MinHeap(k);
    let total = 0;
    for (const id of this.touched) {
      if (!admit(id)) continue;
      total++;
      heap.offer(id, sums[id]!);
    }
    return { hits: heap.sorted(), total };
  }

  reset(): void {
    for (const id of this.touched) sums[id] = 0;
    this.touched.length = 0;
  }
}

/** The k best (id, score) pairs seen; the worst of them at the root. */
class MinHeap {
  private readonly ids: number[] = [];
  private readonly scores: number[] = [];

  constructor(private readonly k: number) {}

  offer(id: number, score: number): void {
    if (this.k === 0) return;
    if (this.ids.length < this.k) {
      this.ids.push(id);
      this.scores.push(score);
      this.up(this.ids.length - 1);
    } else if (this.worse(0, id, score)) {
      this.ids[0] = id;
      this.scores[0] = score;
      this.down(0);
    }
  }

  sorted(): { id: number; score: number }[] {
    return this.ids.map((id, i) => ({ id, score: this.scores[i]! })).sort((a, b) => b.score - a.score || a.id - b.id);
  }

  /** Whether the entry at `i` ranks below (id, score): lower score, or the same score and a higher id. */
  private worse(i: number, id: number, score: number): boolean {
    return this.scores[i]! < score || (this.scores[i] === score && this.ids[i]! > id);
  }

  private swap(i: number, j: number): void {
    [this.ids[i], this.ids[j]] = [this.ids[j]!, this.ids[i]!];
    [this.scores[i], this.scores[j]] = [this.scores[j]!, this.scores[i]!];
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, this.ids[parent]!, this.scores[parent]!)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      let least = i;
      for (const child of [2 * i + 1, 2 * i + 2]) {
        if (child < this.ids.length && this.worse(child, this.ids[least]!, this.scores[least]!)) least = child;
      }
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }
}
