/**
 * A record's own value for a key that came from outside (a command word, an entity name, a file type, a path
 * prefix): never a property every object has, such as `constructor` or `toString`.
 */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
