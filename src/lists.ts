/**
 * Lists of any length, without a spread: a spread passes each item as an argument, and past a few hundred thousand
 * (a million headings with no text under them) the engine's argument limit failed the whole document ("Maximum call
 * stack size exceeded": s21 hostile #8).
 */

/** `target.push(...items)`. */
export function appendAll<T>(target: T[], items: readonly T[]): T[] {
  for (const item of items) target.push(item);
  return target;
}

/** `Math.max(...values)`: the largest, or -Infinity for none. */
export function largest(values: Iterable<number>): number {
  let most = Number.NEGATIVE_INFINITY;
  for (const value of values) if (value > most) most = value;
  return most;
}

/** `Math.min(...values)`: the smallest, or Infinity for none. */
export function smallest(values: Iterable<number>): number {
  let least = Number.POSITIVE_INFINITY;
  for (const value of values) if (value < least) least = value;
  return least;
}
