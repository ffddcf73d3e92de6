/** The MCP tools' input and output schemas: what agents read to call a tool and to trust its structured answer. */
import { z } from "zod";
import { ANSWER_LIMIT, MAX_QUERY_CHARS, OFFSET } from "../search/bounds.ts";
import { FILTER_OPS } from "../search/filters.ts";
import { GARBLED_CAUSES } from "../search/read-document.ts";
import { REQUESTED_MODES, SEARCH_MODES } from "../search/search.ts";

/**
 * An optional parameter: left out or null, it is not given. Models and tool-call adapters send null for an argument
 * they do not use (OpenAI-style strict schemas make every optional one nullable), and it was a schema error, each
 * call refused until the model dropped the keys (s26 agent F8). The schema clients read says so (`["string","null"]`,
 * or anyOf with null: the SDK converts a tool's input side); the tool sees undefined, as for a parameter left out.
 */
export function optional<T extends z.ZodType>(schema: T) {
  return schema
    .nullish()
    .transform((value) => value ?? undefined)
    .optional();
}

export const searchInput = {
  query: z.string().min(1).max(MAX_QUERY_CHARS).describe('Words or a natural-language question; "phrase", -exclude and prefix* work'),
  repository: optional(z.string()).describe("Search only this repository (with `repositories`, it and those)"),
  repositories: optional(z.array(z.string()).min(1).max(100)).describe(
    "Search only these repositories (at least one: leave it out to search every repository)",
  ),
  mode: optional(z.enum(REQUESTED_MODES)).describe(
    "Default: auto (config.yaml's search.mode, itself auto by default): hybrid where vectors exist, else bm25. Vector pages, and hybrid ones where the vectors have a voice, are always full (every passage ranks by meaning): `words_found` false says none holds the query's words; hybrid whose vectors carry no weight lists word matches alone (a NO_WORD_MATCH warning when none: mode vector ranks by meaning). A query the model knows no word of ranks nothing by meaning: vector mode answers none (an UNKNOWN_QUERY warning), hybrid its word matches",
  ),
  n_results: optional(z.number().int().min(ANSWER_LIMIT.min).max(ANSWER_LIMIT.max)).describe(
    `How many results, fragments or documents by tool (default: config's search.limit, 10, at most ${ANSWER_LIMIT.max})`,
  ),
  offset: optional(z.number().int().min(OFFSET.min).max(OFFSET.max)).describe(
    "Skip this many results first: the next page starts at offset + n_results",
  ),
  min_score: optional(z.number().min(0)).describe("Drop results below this score of the mode (≥ 0, as the CLI's --min-score)"),
  full: optional(z.boolean()).describe(
    "Give each fragment's whole text as `text` (a function or section, as the CLI's --full; search_documents: each document's fragments), not a get_document call per result",
  ),
  filter: optional(z.string().max(500)).describe(
    "Glob on document paths inside each repository, e.g. 'meetings/**' or '*.md'; 'notes:meetings/**' is that glob in the repository notes alone, as in refs",
  ),
  where: optional(z.union([z.string().max(2000), whereJson()])).describe(
    "Only documents/fragments that match, applied before ranking. Text: space-separated terms that must all hold, " +
      "`key op value` with op = != < <= > >= ~ (contains, case-insensitive) or `key in (a|b)`, values bare or " +
      '"quoted", e.g. \'tags=rust format in (md|pdf) modified>=2025-01-01 title~"borrow"\'. Or JSON: ' +
      "{all:[{key,eq:value}…], any:[…], not:[…]} with ops eq ne lt le gt ge contains in. Keys: path (glob), format " +
      "(md, txt, pdf, docx, html, epub, or a code file's extension: py, ts, go, …), repository, page (PDF page or " +
      "range 3-5), modified (file date), size (bytes), title; for source code language (python, typescript, tsx, " +
      "javascript, go, rust, java, c, cpp, c_sharp, ruby, php, bash), git_project, git_branch and git_commit (the full " +
      "40-hex hash, or a short one of 4 to 39 hex digits as git log --oneline prints it: the commits starting with it); and any front-matter key (tags, author, date, …; a list " +
      "matches if any element does).",
  ),
};

/**
 * search_documents' parameters: search_fragments' own, each with a line of description, as its description says it
 * takes them. Their full descriptions again, the where grammar's included, were 1.4 KB more in every session's
 * tools/list (s22 agent #7).
 */
export const searchDocumentsInput = describedAs(searchInput, {
  query: "Words or a question, as for search_fragments",
  repository: "Search only this repository",
  repositories: "Search only these repositories",
  mode: "auto (the default), hybrid, bm25 or vector, as for search_fragments",
  n_results: `How many documents (default: config's search.limit, at most ${ANSWER_LIMIT.max})`,
  offset: "Skip this many documents first: the next page starts at offset + n_results",
  min_score: "Drop documents below this score",
  full: "Give each fragment's whole text as `text`",
  filter: "Glob on paths inside each repository, as for search_fragments",
  where: "Only documents that match: search_fragments' where, as text or JSON",
});

function describedAs<T extends Record<string, z.ZodType>>(shape: T, descriptions: Record<keyof T, string>): T {
  return Object.fromEntries(Object.entries(shape).map(([key, schema]) => [key, schema.describe(descriptions[key]!)])) as T;
}

/**
 * What the search tools return as structured content: the CLI's `search --json`. Results are described by their
 * stable fields; more may be added (the contract is additive), so objects are open.
 */
export function searchOutput(documents: boolean) {
  const location = { location: z.string().describe("path:line where the snippet starts; with the repository, a ref for get_document") };
  const fragment = z.looseObject({
    id: z.number(),
    seq: z.number(),
    start_line: z.number(),
    end_line: z.number(),
    page: z.number().nullable(),
    page_end: z.number().nullable(),
    ref: z.string().describe("repo:path:start-end, the fragment's lines: the ref get_document reads the passage with"),
    section: z
      .looseObject({ part: z.number(), parts: z.number(), start_line: z.number(), end_line: z.number(), ref: z.string() })
      .optional()
      .describe("A part of a longer unit or section split under one heading: which part, the lines of all its parts, and their ref"),
  });
  const result = z.looseObject({
    rank: z.number(),
    score: z.number().describe("On the scale of the result's own mode"),
    mode: z.enum(SEARCH_MODES).describe("The mode its repository was searched in (one without vectors: bm25)"),
    repository: z.string(),
    path: z.string(),
    ...location,
    page: z.number().nullable().describe("PDF page of the snippet"),
    docid: z.string(),
    title: z.string(),
    heading: z.string(),
    snippet: z.string(),
    context: z.string().nullable(),
    text: z.string().optional().describe("The whole fragment, with full"),
    metadata: z.record(z.string(), z.unknown()),
    ...(documents
      ? {
          fragments: z.array(
            fragment.extend({
              heading: z.string(),
              score: z.number(),
              snippet: z.string(),
              ...location,
              text: z.string().optional().describe("The whole fragment, with full"),
            }),
          ),
        }
      : { fragment }),
  });
  return z.looseObject({
    query: z.string(),
    mode: z.enum(SEARCH_MODES),
    repositories: z.array(z.string()),
    offset: z.number(),
    total: z.number(),
    words_found: z
      .boolean()
      .describe(
        "Whether any searched fragment holds the query's words; when false (possible in hybrid or vector mode), the results match by meaning alone",
      ),
    skipped: skippedRepositories,
    unmatched: z
      .array(
        z.object({
          filter: z.string(),
          key: z.string(),
          known: z.array(z.string()),
          similar_keys: z.array(z.string()).optional(),
          repository: z.string().optional().describe("A path filter began with this repository's name: search it by name instead"),
        }),
      )
      .optional()
      .describe("Only when nothing matched: the filter's values no document holds, each with the values that exist (`known`)"),
    warnings: skippedRepositories
      .optional()
      .describe(
        "Repositories searched with bm25 because their embedding model cannot be loaded now or changed, or (hybrid) because they have no vectors, each with why and the fix",
      ),
    results: z.array(result),
  });
}

const failureEntry = z.object({ path: z.string(), reason: z.string() });
const identity = {
  repository: z.string(),
  path: z.string(),
  docid: z.string(),
  title: z.string(),
  format: z.string(),
  metadata: z.record(z.string(), z.unknown()),
};

/** The lines read, under the names get_document's parameters use (`from_line`); the same as `from` and `to`. */
const lineRange = {
  from_line: z.number().describe("The first line read (the same as from)"),
  to_line: z.number().describe("The last line read (the same as to)"),
};

/** The pages the lines read are on, as a search result's fragment names its own. */
const pageRange = {
  page: z.number().nullable().describe("The first page the lines read are on (a PDF or a scan); null without pages"),
  page_end: z.number().nullable().describe("The last page the lines read are on; null without pages"),
};

/** Where to read on after a cut answer: the next line, or (an answer that ended inside a line) the rest of that one. */
export const continuation = z.object({ from_line: z.number(), from_char: z.number().optional() });

/** Why a repository could not answer a request over all of them (it is left out; the others answer). */
const repositoryError = z.object({ code: z.string(), message: z.string(), hint: z.string().nullable() });
const skippedRepositories = z
  .array(repositoryError.extend({ repository: z.string() }))
  .describe("Repositories left out because they could not answer (e.g. a damaged index), each with why and the fix");
const errorField = repositoryError.optional().describe("Only when the repository could not answer: why, and the fix");

const changed = {
  changed_since_index: z
    .boolean()
    .describe("The file changed since it was indexed: line numbers from a search may have moved (index it again)"),
  garbled_pages: z
    .array(z.number())
    .optional()
    .describe(`Pages of this read whose text reads as symbols, not words (${GARBLED_CAUSES}): their words are missing`),
};

const readText = z.string().describe("The lines read, joined by \\n; with line_numbers, each as its number, a tab and the line");

/** Structured content of the other tools, by their stable fields (objects are open: the contract is additive). */
export const OUTPUT = {
  document: z.looseObject({
    ...identity,
    from: z.number(),
    to: z.number(),
    ...lineRange,
    ...pageRange,
    total_lines: z.number(),
    truncated: z.boolean().describe("Cut short of what was asked by max_bytes: read on with continue_with"),
    ...changed,
    text: readText,
    continue_with: continuation
      .optional()
      .describe("Present when truncated: the from_line (and from_char, in characters: code points) of the next read"),
  }),
  documents: z.looseObject({
    documents: z.array(
      z.looseObject({
        ...identity,
        from: z.number(),
        to: z.number(),
        ...lineRange,
        ...pageRange,
        total_lines: z.number(),
        truncated: z.boolean(),
        ...changed,
        text: readText,
      }),
    ),
    skipped: z
      .array(z.object({ repository: z.string(), path: z.string(), reason: z.string() }))
      .describe("Matches left out, each with why: the first 100"),
    skipped_total: z.number().describe("How many matches were left out in all"),
    warnings: skippedRepositories
      .optional()
      .describe("Repositories whose first index run is under way (or never finished), read as far as they are indexed: wait for it"),
  }),
  listing: z.looseObject({
    total: z.number(),
    offset: z.number(),
    documents: z.array(
      z.looseObject({ ...identity, size: z.number(), modified: z.string(), fragments: z.number(), pages: z.number().nullable() }),
    ),
    skipped: skippedRepositories,
    warnings: skippedRepositories
      .optional()
      .describe("Repositories whose first index run is under way (or never finished), listed as far as they are indexed: wait for it"),
    containing: z
      .array(z.string())
      .optional()
      .describe("Only when nothing is listed: the paths (repo:path) that hold the prefix, e.g. src/ch04-… for 'ch04'"),
    meant: z
      .object({ repository: z.string(), prefix: z.string() })
      .optional()
      .describe("Only when nothing is listed and the prefix began with a repository's name ('docs/book/'): list that one"),
  }),
  repositories: (failures: boolean) =>
    z.looseObject({
      repositories: z.array(
        z.looseObject({
          name: z.string(),
          path: z.string(),
          description: z.string().nullable(),
          documents: z.number(),
          fragments: z.number(),
          ocr_pages: z.number().describe("Pages of its documents read by OCR"),
          ocr_left_out: z
            .array(z.object({ path: z.string(), pages: z.array(z.number()) }))
            .describe("Documents with pages OCR left out (past its time or memory limit), and which"),
          garbled: z
            .array(z.object({ path: z.string(), pages: z.array(z.number()) }))
            .describe("Documents with pages whose text reads as symbols, not words (search misses them), and which"),
          last_indexed: z.string().nullable(),
          bytes: z.number().describe("Size of its index on disk"),
          model: z.string().nullable(),
          vectors: z.number(),
          embeddings_pending: z.number().describe("Fragment texts without a vector yet (BM25 finds them meanwhile)"),
          indexing: z.number().nullable().describe("The process writing its index now, or null"),
          languages: z.record(z.string(), z.number()).describe("Code files by language"),
          moved_aside: z
            .array(z.object({ path: z.string(), bytes: z.number() }))
            .describe("Indexes moved aside because they could not be used (index.db.damaged-<time>), the user's to delete"),
          kept_texts: z
            .array(z.object({ path: z.string().nullable(), removed_at: z.string() }))
            .describe("Paths OCR'd documents left the index from whose text is kept 30 days (remove_from_index drops one)"),
          ...(failures
            ? {
                failures: z.array(failureEntry).describe("Files that failed, with why: the first 100"),
                failures_total: z.number().describe("How many files failed in all"),
                ann: z
                  .string()
                  .nullable()
                  .optional()
                  .describe("Why searches scan for want of a usable vectors.usearch (and the fix), or null"),
                index_due: z
                  .object({ documents: z.number(), because: z.array(z.string()) })
                  .nullable()
                  .optional()
                  .describe(
                    "Documents the next index run reads again because this version or the settings read them differently (e.g. 'pdf converter'), or null",
                  ),
                index_held: z
                  .object({ because: z.string(), fix: z.string() })
                  .nullable()
                  .optional()
                  .describe(
                    "Why every index run refuses before taking in any change (its model's files changed since it was embedded), and the command that re-embeds it; or null",
                  ),
              }
            : {}),
          error: errorField,
        }),
      ),
    }),
  matches: z.looseObject({
    repositories: z.array(
      z.looseObject({
        repository: z.string(),
        description: z.string().nullable(),
        score: z.number(),
        bm25: z.number().describe("Its best fragment's raw BM25 score (the repository's own scale)"),
        matched: z.number(),
        best: z
          .looseObject({
            path: z.string(),
            location: z.string(),
            citation: z.string().describe("Where to read it, as search cites it: paper.pdf:p12, parser.py:120-168, notes.md:42"),
            ref: z.string().describe("The passage itself, repo:path:start-end: get_document reads just it"),
            page: z.number().nullable(),
            title: z.string(),
            snippet: z.string(),
          })
          .nullable(),
        error: errorField,
        warning: repositoryError
          .optional()
          .describe("Only when its first index run is under way (or never finished): ranked by the files indexed so far; wait for it"),
      }),
    ),
  }),
  indexed: z.looseObject({
    repository: z.string(),
    indexed: z.number(),
    skipped: z.number(),
    ocr_pages: z.number(),
    removed: z.number(),
    failed: z.number(),
    failures: z.array(failureEntry),
    failed_unchanged: z.number().describe("Failed before and unchanged since: not tried again"),
    skipped_types: z.record(z.string(), z.number()).describe("Files not indexed because of their type, by extension"),
    skipped_scripts: z
      .number()
      .describe('Of skipped_types[""], the files whose #! line names a code language (a file_types entry or --code lets them in)'),
    skipped_generated: z
      .record(z.string(), z.number())
      .describe("Generated and vendored code left out, by rule (a saved web page's <page>_files/ among them)"),
    skipped_links: z.array(z.string()).describe("Links to folders, never followed (the first 100)"),
    fragments: z.number(),
    documents_total: z.number(),
    fragments_total: z.number(),
    embedded: z.number(),
    model: z.string().nullable(),
    embeddings_pending: z.number(),
    warnings: z.array(z.string()).describe("What went wrong without failing the file, each with what to do"),
    seconds: z.number(),
  }),
  removed: z.looseObject({
    repository: z.string(),
    path: z.string(),
    removed: z.boolean(),
    dropped: z
      .enum(["document", "kept_text"])
      .describe("The document, or (a path no longer indexed) the OCR'd text kept of it since it left the index"),
  }),
};

/** The JSON form of a filter, as a schema agents can read (parseFilter validates the values). */
function whereJson() {
  const scalar = z.union([z.string(), z.number(), z.boolean()]);
  const op = (name: string) => [name, (name === "in" ? z.array(scalar) : scalar).optional()] as const;
  const term = z.strictObject({ key: z.string(), ...Object.fromEntries(FILTER_OPS.map(op)) });
  const list = z.array(term).max(100).optional();
  return z.strictObject(
    { all: list, any: list, not: list },
    { error: (issue) => (issue.code === "unrecognized_keys" ? bareKeys(issue) : undefined) },
  );
}

/**
 * What the JSON form of `{"language":"python"}` is, for the error that refuses it: "Unrecognized key" alone sent an
 * agent to the description for the shape (s22 agent #6).
 */
function bareKeys({ keys, input }: { keys: string[]; input?: unknown }): string {
  const given = (input ?? {}) as Record<string, unknown>;
  const terms = keys.map((key) => {
    const value = given[key];
    return Array.isArray(value) ? { key, in: value } : { key, eq: typeof value === "object" ? "…" : value };
  });
  const text = terms.map((t) => (t.in ? `${t.key} in (${t.in.join("|")})` : `${t.key}=${t.eq}`)).join(" ");
  return `unrecognized key${keys.length > 1 ? "s" : ""} ${keys.map((k) => `"${k}"`).join(", ")}: a condition is a term of all, any or not, as ${JSON.stringify({ all: terms })}, or the text form '${text}'`;
}
