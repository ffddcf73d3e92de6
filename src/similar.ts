/** How near a typed name is to the ones that exist: for the "did you mean" of a hint. */

/**
 * Edit distance with a swap of two neighbouring letters counted as one edit (Damerau's, optimal string alignment):
 * `--mdoe` is one slip of the fingers from `--mode` (Levenshtein counted two, and a hint offered nothing: s28 user 4).
 * Gives up (returning `limit + 1`) once it must exceed `limit`.
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) current[j] = Math.min(current[j]!, beforePrevious[j - 2]! + 1);
      best = Math.min(best, current[j]!);
    }
    // No later row goes below this one's least: a swap two rows on costs what a substitution here cost, or more.
    if (best > limit) return limit + 1;
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The names among `candidates` near `typed`, nearest first: the same but for case (`Author` for `author`), one it
 * begins (`language` for `lang`, three letters or more), or a misspelling (an edit, two from five letters on, a swap
 * of neighbours counting one: `mdoe`, `langauge`, `--rebiuld`). `typed` itself is none of them.
 */
export function similarNames(typed: string, candidates: Iterable<string>): string[] {
  const wanted = typed.toLowerCase();
  const distance = (candidate: string) => {
    const lowered = candidate.toLowerCase();
    if (lowered === wanted) return 0;
    if (wanted.length >= 3 && lowered.startsWith(wanted)) return 1;
    const allowed = wanted.length >= 5 ? 2 : 1;
    const edits = editDistance(wanted, lowered, allowed);
    return edits <= allowed ? 1 + edits : Number.POSITIVE_INFINITY;
  };
  return [...new Set(candidates)]
    .filter((candidate) => candidate !== typed)
    .map((candidate) => ({ candidate, distance: distance(candidate) }))
    .filter(({ distance }) => distance < Number.POSITIVE_INFINITY)
    .sort((a, b) => a.distance - b.distance || (a.candidate < b.candidate ? -1 : 1))
    .map(({ candidate }) => candidate);
}
