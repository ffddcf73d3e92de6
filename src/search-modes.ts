/**
 * The search modes, a leaf of their own: config.yaml's `search.mode` and every interface's mode (`--mode`, REST
 * `mode=`, MCP `mode`) take the same words, and config.ts cannot import the search modules.
 */

/** The modes a repository is searched in, as a result's `mode` names them. */
export const SEARCH_MODES = ["bm25", "vector", "hybrid"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/**
 * The modes a search may ask for: `auto` (the default), hybrid where a repository has vectors and bm25 elsewhere, or
 * one by name. A wrapper passes the configured `search.mode` through as it is (`--mode auto` was refused: s23
 * contracts L12).
 */
export const REQUESTED_MODES = ["auto", ...SEARCH_MODES] as const;
export type RequestedMode = (typeof REQUESTED_MODES)[number];
