/**
 * researcher as a library: everything the CLI and the MCP server do, as functions that return data.
 *
 *   import { addRepository, indexRepository, search, resolveHome } from "researcher";
 *   const home = resolveHome();
 *   const repo = addRepository(home, { name: "notes", path: "/home/me/notes" });
 *   await indexRepository(home, repo);
 *   const { results } = await search(home, { query: "retry policy" });
 */
export { loadConfig, resolveHome, setConfigValue, type Config } from "./config.ts";
export { resolveDocumentRef } from "./search/document-refs.ts";
export { readDocument, type DocumentText } from "./search/read-document.ts";
export { readDocuments } from "./search/multi-get.ts";
export { chooseModel, describeModel, EmbedderCache, KNOWN_MODELS, loadEmbedder, type Embedder, type ModelInfo } from "./embed/embedder.ts";
export { ERROR_CODES, ResearcherError, type ErrorCode } from "./errors.ts";
export { parseFilter, type Filter, type FilterJson } from "./search/filters.ts";
export { indexRepository, type IndexOptions, type IndexProgress, type IndexSummary } from "./index/indexer.ts";
export { removeDocument } from "./index/remove.ts";
export { indexOneFile } from "./index/add-file.ts";
export { getRepository, listRepositories, type Repository } from "./repos.ts";
export { addRepository, removeRepository, type AddedRepository } from "./index/repositories.ts";
export { search, SearchContext, type DocumentHit, type FragmentHit, type SearchOptions, type SearchResponse } from "./search/search.ts";
export { repositoryStatus, type RepositoryStatus } from "./store/status.ts";
export { watchRepositories, type WatchBatch, type WatchHandle, type WatchOptions, type WatchStatus } from "./serve/watch.ts";
