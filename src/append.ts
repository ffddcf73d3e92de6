/**
 * `target.push(...items)` without the spread: a spread passes each item as an argument, and past a few hundred
 * thousand (a million headings with no text under them) the engine's argument limit failed the whole document
 * ("Maximum call stack size exceeded": s21 hostile #8).
 */
export function appendAll<T>(target: T[], items: readonly T[]): T[] {
  for (const item of items) target.push(item);
  return target;
}
