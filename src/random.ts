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
