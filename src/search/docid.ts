/**
 * A document's short id: `#` and the first 6 hex digits of its content's SHA-256, as results print it and `get
 * '#3fa2c1'` reads it (more digits may be typed, up to the whole hash).
 */
export const docidOf = (hash: string): string => `#${hash.slice(0, 6)}`;

/** A docid as typed: `#` and 6 to 64 hex digits. */
export const DOCID = /^#[0-9a-f]{6,64}$/i;
