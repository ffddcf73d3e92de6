/** How near a typed name is to the ones that exist: for the "did you mean" of a hint. */

/** Levenshtein distance, giving up (returning `limit + 1`) once it must exceed `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, current[j]!);
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The names among `candidates` near `typed`, nearest first: the same but for case (`Author` for `author`), one it
 * begins (`language` for `lang`, three letters or more), or a misspelling (an edit, two from five letters on:
 * `langauge`, `--rebiuld`). `typed` itself is none of them.
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
