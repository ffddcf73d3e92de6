/**
 * Tasks run one after another, in the order they were given: each starts when the one before has settled, and a
 * failure is its own caller's (the next task runs all the same).
 */
export type Serial = <T>(task: () => Promise<T>) => Promise<T>;

export function serialized(): Serial {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * Tasks run at most `n` at once, the rest waiting in the order they were given: `serialized` is `limited(1)` in
 * spirit, kept apart for its one-after-another failure rule.
 */
export function limited(n: number): Serial {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/**
 * `work` on every item, `limit` at a time (conversions wait on the worker pool). The first failure stops every lane (a
 * full disk must not leave the others reading and converting the rest of the repository for nothing) and is thrown once
 * they have stopped.
 */
export async function forEachConcurrently<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (!failure && next < items.length) {
      try {
        await work(items[next++]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure) throw failure.error;
}
