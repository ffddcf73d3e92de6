/**
 * The one seeded generator: calibration's sample of pseudo-queries, the ANN recall probe, and the data tests and
 * benchmarks build all draw from it, so the same input gives the same result on every run and machine.
 */

const MODULUS = 2147483647; // 2^31 − 1, prime

/**
 * Park and Miller's minimal standard generator (Lehmer, multiplier 48271): numbers strictly between 0 and 1, so a
 * caller may take their logarithm (Box-Muller). Any integer is a seed.
 */
export function seeded(seed: number): () => number {
  let state = (((Math.trunc(seed) % (MODULUS - 1)) + (MODULUS - 1)) % (MODULUS - 1)) + 1;
  return () => {
    state = (state * 48271) % MODULUS;
    return state / MODULUS;
  };
}

/**
 * `count` different items of `items` (all of them when there are fewer), drawn by `next`: a partial Fisher–Yates
 * shuffle that records its swaps instead of copying the items (a million fragments' ids for 48 draws).
 */
export function drawn<T>(items: readonly T[], count: number, next: () => number): T[] {
  const swapped = new Map<number, number>(); // position → the index of the item now there
  const at = (position: number) => swapped.get(position) ?? position;
  const picked: T[] = [];
  for (let i = 0; i < Math.min(count, items.length); i++) {
    const j = i + Math.floor(next() * (items.length - i));
    picked.push(items[at(j)]!);
    swapped.set(j, at(i));
  }
  return picked;
}
