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
