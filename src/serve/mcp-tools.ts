/**
 * The MCP server's tools and its document resource. Each validates its input strictly (an unknown parameter is an
 * error naming it), calls the same library function as the CLI, and answers with the CLI's JSON shape plus a short
 * text rendering; a failure is a tool result the agent can read.
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { listParts } from "../path-glob.ts";
import { namedRepository, refOfResourceUri, repositoryPath } from "../search/document-refs.ts";
import { listDocuments, listDocumentsPage, readDocument, readPart } from "../search/read-document.ts";
import { readDocuments } from "../search/multi-get.ts";
import { loadConfig } from "../config.ts";
import { ERROR_CODES, type ResearcherError, toResearcherError } from "../errors.ts";
import { defaultAnswerLimit, LISTED, MAX_ANSWER_BYTES, MAX_QUERY_CHARS } from "../search/bounds.ts";
import { parseFilter, type FilterJson } from "../search/filters.ts";
import { leftOutOfIndex } from "../index/discover.ts";
import { indexOneFile } from "../index/add-file.ts";
import type { IndexProgress } from "../index/indexer.ts";
import { removeDocument, stillOnDisk } from "../index/remove.ts";
import { escapeControls } from "../terminal.ts";
import { logger } from "../log.ts";
import {
  ocrNote,
  PLAIN,
  indexDueLine,
  indexHeldLine,
  pageProblemLines,
  problemLine,
  repositoryLines,
  repositoryMatchLines,
  changedSinceIndexLine,
  documentCitation,
  emptyListingText,
  readHeading,
  searchJson,
  searchText,
  searchWarningsText,
  vectorsPart,
  skippedText,
  MCP_NAMES,
  NO_REPOSITORIES,
  noResultsLines,
  stillOnDiskNote,
  removalLine,
  numberedRead,
  indexingNote,
  notIndexedWholeLine,
  languagesLine,
  progressPlace,
  statusLines,
} from "./render.ts";
import { getRepository } from "../repos.ts";
import { textMediaType } from "../file-types.ts";
import { search, type SearchContext, type SearchOptions } from "../search/search.ts";
import { repositoriesFor } from "../search/results.ts";
import { FAILURES_LISTED, repositorySummaries, type ServedStatus, servedStatuses } from "../index/status.ts";
import type { Serial } from "../serial.ts";
import { OUTPUT, optional, searchDocumentsInput, searchInput, searchOutput } from "./mcp-schemas.ts";
import { agentHint, withHints } from "./agent-hints.ts";

/** What brings a changed file's document up to date, for an agent: the tool it has. */
const MCP_CATCH_UP = "add_to_index with its path";

const plain = PLAIN;

/** What one answer carries of document text by default: a model's context is small. */
const DEFAULT_ANSWER_BYTES = 128 * 1024;
const answerBytes = (asked: number | undefined) => Math.min(asked ?? DEFAULT_ANSWER_BYTES, MAX_ANSWER_BYTES);

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * A library answer as a tool gives it, its hints (skipped, warnings, an entry's error) naming tools as an error's do:
 * the structured content and the text rendered from it (s27b agent F7).
 */
const forAgent = <T>(answer: T): T => withHints(answer, agentHint);

/** A tool result: structured JSON for programs, a short text for models that read text. */
function result(structured: object, text: string) {
  return { content: [{ type: "text" as const, text }], structuredContent: structured as Record<string, unknown> };
}

/**
 * A budget of bytes, as get_document's and multi_get's `max_bytes` and multi_get's `max_bytes_per_document` take it.
 */
const byteBudget = (description: string) => optional(z.number().int().min(1).max(10_000_000)).describe(description);

/** `line_numbers`, as get_document and multi_get take it. */
const lineNumbers = optional(z.boolean()).describe(
  "Number each line as the CLI's `get --line-numbers` does: the document's own line number, a tab, the line (to cite lines of code). " +
    "A part read on from inside a line (from_char) starts with that line's number again: drop it when joining the parts",
);

/**
 * The line that tells a reader how to read on: after an answer cut by its byte budget, `how` from where it stopped;
 * after all that was asked (a page, a line range) where the document goes on.
 */
function continuationMarker(doc: ReturnType<typeof readPart>, how: string): string {
  const next = doc.continue_with;
  if (!next) {
    // Where it goes on, not which ref reads it: past a page or range the ref named, the same ref reads nothing more,
    // and inside it (cut by max_lines) a new ref would read past its end.
    return doc.to >= doc.total_lines
      ? ""
      : `\n\n[lines ${doc.from}–${doc.to} of ${doc.total_lines}, as asked; the document goes on at line ${doc.to + 1}]`;
  }
  const where =
    next.from_char === undefined
      ? `line ${doc.to} of ${doc.total_lines}`
      : `character ${next.from_char} of line ${next.from_line} (${doc.total_lines} lines)`;
  return `\n\n[truncated at ${where}: ${how} from_line ${next.from_line}${next.from_char === undefined ? "" : ` and from_char ${next.from_char}`}]`;
}

/**
 * resources/list: the indexed documents as `researcher://<repository>/<path>` (each path segment percent-encoded),
 * the first LISTED.max by repository and path; the list_documents tool pages through the rest.
 */
function documentResources(home: string) {
  return listDocuments(home, { repositories: [] })
    .documents.slice(0, LISTED.max)
    .map((d) => ({
      uri: `researcher://${encodeURIComponent(d.repository)}/${d.path.split("/").map(encodeURIComponent).join("/")}`,
      name: `${d.repository}:${d.path}`,
      title: d.title,
      // Not the template's, which the SDK copies onto each: 145 bytes a document, 28 KB of 62 (s24 agent A7).
      description: undefined,
      mimeType: textMediaType(d.format),
    }));
}

/**
 * A failed resource read as its code's JSON-RPC error (errors.ts): not found (-32002), bad input (-32602), or internal
 * (-32603).
 */
function resourceError(thrown: unknown): Error {
  const error = toResearcherError(thrown);
  return rpcError(ERROR_CODES[error.code].rpc, describe(error, error.hint && agentHint(error.hint)));
}

/**
 * A JSON-RPC error for the SDK to send (it sends any error's `code` and `message`). Not an McpError: that writes
 * "MCP error <code>: " into the message it sends, and the client's McpError prefixes it again.
 */
export function rpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** One line for an agent or a log: the message and the hint that fixes it (the hint as given, else the error's). */
export function describe(error: ResearcherError, hint = error.hint): string {
  return `${error.message}${hint ? ` (hint: ${hint})` : ""}`;
}

/**
 * A name (path, title, description) in a tool's text, escaped as the CLI's text output escapes it: clients show
 * tool results in terminals, and a name with a newline would also forge a line of a listing. Documents' own text
 * is given as it is, as `get` prints it.
 */
export const named = escapeControls;

/**
 * `where` as an agent sends it: the text grammar, the JSON object, or that object serialised as a string (agents
 * often send nested arguments as strings; the text grammar never starts with `{`).
 */
function whereArgument(where: string | FilterJson): string | FilterJson {
  if (typeof where !== "string" || !where.trimStart().startsWith("{")) return where;
  try {
    return JSON.parse(where) as FilterJson;
  } catch {
    return where; // the text grammar's error says where it went wrong
  }
}

/**
 * A failed tool call as a tool result an agent can read (MCP tools report errors in the result, not as JSON-RPC
 * errors), ending with the error's code, as the CLI's exit status and REST's `error.code` carry it: an agent can
 * tell LOCKED (try again) from REPO_NOT_FOUND without reading the prose. No structured content: clients check
 * it against the tool's output schema even on an error.
 */
function failure(thrown: unknown) {
  // Escaped: a message can carry a file's name or a converter's words about its content.
  const error = toResearcherError(thrown);
  const text = `${problemLine(error.message, error.hint && agentHint(error.hint))} [${error.code}]`;
  return { content: [{ type: "text" as const, text }], isError: true };
}

/** Run a tool body; a ResearcherError becomes a tool error the agent can read, never a crash. */
async function guarded<T>(body: () => Promise<T> | T): Promise<T | ReturnType<typeof failure>> {
  try {
    return await body();
  } catch (error) {
    logger.debug(error);
    return failure(error);
  }
}

/** Every tool and resource of the server, on `server`; `writes` runs the tools that change an index one at a time. */
export function registerTools(server: McpServer, home: string, context: SearchContext, writes: Serial): void {
  registerSearchTools(server, home, context);
  registerReadTools(server, home, context);
  registerDocumentResource(server, home, context);
  registerRepositoryTools(server, home, context);
  registerWriteTools(server, home, context, writes);
}

/** search_fragments and search_documents: one search, as fragments or grouped by document. */
function registerSearchTools(server: McpServer, home: string, context: SearchContext): void {
  const runSearch = async (input: z.infer<z.ZodObject<typeof searchInput>>, documents: boolean) => {
    const options: SearchOptions = {
      query: input.query,
      // `repository: ""` is refused (selectRepositories), not every repository.
      repositories: [...(input.repository !== undefined ? [input.repository] : []), ...(input.repositories ?? [])],
      mode: input.mode,
      limit: input.n_results ?? defaultAnswerLimit(loadConfig(home).search.limit),
      offset: input.offset,
      minScore: input.min_score,
      filter: input.filter,
      where: input.where === undefined ? undefined : [parseFilter(whereArgument(input.where as string | FilterJson))],
      documents,
      full: input.full,
    };
    const response = forAgent(await search(home, options, context));
    const asked = { limit: options.limit!, minScore: options.minScore, names: MCP_NAMES };
    const found = response.results.length ? searchText(response, plain, asked) : noResultsLines(response, options, MCP_NAMES).join("\n");
    const text = [found, skippedText(response.skipped), searchWarningsText(response.warnings)].filter(Boolean).join("\n");
    return result(searchJson(response), text);
  };

  server.registerTool(
    "search_fragments",
    {
      title: "Search passages",
      description:
        "Find passages (fragments) that answer a query, best first, with location, heading and snippet. In code a fragment is a " +
        "whole function or class, or one part of a longer one (split between statements into consecutive fragments with the same " +
        "heading): its heading is the symbol path, `fragment.start_line`-`end_line` its lines, and a part's `fragment.section` the " +
        "lines of the whole unit (read them with get_document `repo:path:start-end`); filter with where `language=python`, " +
        "`git_project`, `git_branch`, `git_commit`.",
      inputSchema: z.strictObject(searchInput),
      outputSchema: searchOutput(false),
      annotations: READ_ONLY,
    },
    (input) => guarded(() => runSearch(input, false)),
  );
  server.registerTool(
    "search_documents",
    {
      title: "Search documents",
      description:
        "Find documents that answer a query, best first, each with its top fragments (up to 3, best first, with location, " +
        "heading and snippet): where to read first. Takes search_fragments' parameters; n_results counts documents.",
      inputSchema: z.strictObject(searchDocumentsInput),
      outputSchema: searchOutput(true),
      annotations: READ_ONLY,
    },
    (input) => guarded(() => runSearch(input, true)),
  );
}

/** get_document, multi_get and list_documents: what the index holds, read in bounded answers. */
function registerReadTools(server: McpServer, home: string, context: SearchContext): void {
  registerGetDocument(server, home, context);
  registerMultiGet(server, home, context);
  registerListDocuments(server, home);
}

/** get_document: one document, or some of its lines, in answers of at most max_bytes with where to read on. */
function registerGetDocument(server: McpServer, home: string, context: SearchContext): void {
  server.registerTool(
    "get_document",
    {
      title: "Read a document",
      description:
        "Read an indexed document (or some lines) by `repo:path`, `repo:path:line[:count]`, `repo:path:from-to`, `repo:path:pN` (a PDF page), `repo:path:pN-M` (pages), `#docid` (with any of those tails), or a search result's " +
        `\`location\` (with its \`repository\`). At most max_bytes of text (default ${DEFAULT_ANSWER_BYTES}, at most ${MAX_ANSWER_BYTES}); ` +
        "when `truncated` (cut by max_bytes), read on with the same ref and `continue_with` (the next from_line, and from_char when the answer ended inside a line). " +
        "Rebuilding the text from the parts: a part that ends at a line end leaves out that line's newline, the last part too (join it to the next with `\\n`); " +
        "one that ends inside a line joins the next with nothing. " +
        "A page or line range in the ref bounds the read: from_line and max_lines read inside it.",
      inputSchema: z.strictObject({
        ref: z
          .string()
          .min(1)
          .max(2000)
          .describe(
            "repo:path, repo:path:line[:count], repo:path:from-to, repo:path:pN[-M], #docid[:tail], a search result's location, or a resource's researcher:// URI",
          ),
        repository: optional(z.string()).describe("The repository of a bare location or docid"),
        from_line: optional(z.number().int().min(1)).describe("First line to read (1-based); default: the ref's line, else 1"),
        from_char: optional(z.number().int().min(0)).describe(
          "Start this many characters (Unicode code points, not UTF-16 units) into the first line: to read on inside a line where an answer ended",
        ),
        max_lines: optional(z.number().int().min(1).max(100000)).describe(
          "How many lines at most; default: the ref's count, else to the end",
        ),
        max_bytes: byteBudget(`Default ${DEFAULT_ANSWER_BYTES}; larger values are capped at ${MAX_ANSWER_BYTES}`),
        line_numbers: lineNumbers,
      }),
      outputSchema: OUTPUT.document,
      annotations: READ_ONLY,
    },
    (input, { signal }) =>
      guarded(async () => {
        if (input.repository !== undefined) refuseOtherRepository(home, input.ref, input.repository, "ref");
        const whole = await readDocument(home, input.ref, {
          fromLine: input.from_line,
          maxLines: input.max_lines,
          repository: input.repository,
          conversions: context.conversions,
          signal,
          leftOut: leftOutOfIndex,
        });
        const doc = numberedRead(
          readPart(whole, input.from_char ?? 0, answerBytes(input.max_bytes), input.line_numbers),
          input.line_numbers,
        );
        const marker = continuationMarker(doc, "continue with the same ref and");
        return result(
          doc,
          `${changedSinceIndexLine(doc, MCP_CATCH_UP)}${named(documentCitation(doc))} lines ${doc.from}–${doc.to} of ${doc.total_lines}\n\n${doc.text}${marker}`,
        );
      }),
  );
}

/** multi_get: documents by a glob or a list of refs, up to a budget of text; the rest listed as skipped. */
function registerMultiGet(server: McpServer, home: string, context: SearchContext): void {
  server.registerTool(
    "multi_get",
    {
      title: "Read several documents",
      description:
        "Read indexed documents named by a glob over paths (`*.md` at any depth, as without a slash a glob matches the base name; " +
        "a name alone, `ideas.md`, is every document of that name; `repo:notes/**`) or by refs separated by commas, up to " +
        `max_bytes of text in all (default ${DEFAULT_ANSWER_BYTES}, at most ${MAX_ANSWER_BYTES}); the rest are listed in \`skipped\` with why (one too large for what is left with the get_document ref that reads it, an answer at a time).`,
      inputSchema: z.strictObject({
        pattern: z
          .string()
          .min(1)
          .max(4000)
          .describe(
            "A glob over indexed paths (`*.md`: base names at any depth; `ideas.md`: every document of that name; `repo:notes/**`) or refs separated by commas (`repo:ideas.md`, `notes/ideas.md:3-9`); a ref whose path has a comma (`notes:a,b.md:3-4`) is that document when the text before its comma names none, and its `#docid` always is",
          ),
        repository: optional(z.string()).describe("Only this repository"),
        max_bytes: byteBudget(
          `All documents together (default ${DEFAULT_ANSWER_BYTES}, capped at ${MAX_ANSWER_BYTES}); from the first document that does not fit, the rest are skipped unread but for text files small enough for what is left`,
        ),
        max_bytes_per_document: byteBudget("Skip (and list) larger documents"),
        line_numbers: lineNumbers,
      }),
      outputSchema: OUTPUT.documents,
      annotations: READ_ONLY,
    },
    (input, { signal }) =>
      guarded(async () => {
        if (input.repository !== undefined) refuseOtherRepository(home, input.pattern, input.repository);
        const read = await readDocuments(home, input.pattern, {
          repository: input.repository,
          maxBytes: answerBytes(input.max_bytes),
          maxBytesPerDocument: input.max_bytes_per_document,
          lineNumbers: input.line_numbers,
          conversions: context.conversions,
          signal,
        });
        // A reason's way on (a document that did not fit, a part that is a folder) as the tool that takes it.
        const skippedFor = read.skipped.map((s) => ({ ...s, reason: agentHint(s.reason) }));
        const documents = read.documents.map((d) => numberedRead(d, input.line_numbers));
        const found = { ...read, documents, skipped: skippedFor, ...(read.warnings ? { warnings: forAgent(read.warnings) } : {}) };
        const text = found.documents.map((d) => `${changedSinceIndexLine(d, MCP_CATCH_UP)}=== ${named(readHeading(d))}\n${d.text}`);
        const skipped = found.skipped.map((s) => `=== ${named(`${s.repository ? `${s.repository}:` : ""}${s.path} skipped: ${s.reason}`)}`);
        const unlisted = found.skipped_total - found.skipped.length;
        if (unlisted > 0) skipped.push(`=== and ${unlisted} more skipped, not listed: narrow the pattern, or page with list_documents`);
        const body = [...text, ...skipped].join("\n\n") || "no documents matched";
        return result(found, [body, searchWarningsText(found.warnings)].filter(Boolean).join("\n\n"));
      }),
  );
}

/**
 * A `repository` and a ref or pattern (the glob, or one of multi_get's refs) that names another registered repository
 * (`docs:notes/*.md` with repository `code`) contradict each other: an error naming both, not an empty answer or a
 * document not found (it would be read as a path in `repository` that begins with `docs:`).
 */
function refuseOtherRepository(home: string, pattern: string, repository: string, what: "pattern" | "ref" = "pattern"): void {
  const repo = getRepository(home, repository);
  for (const part of what === "pattern" ? listParts(pattern) : [pattern])
    namedRepository(home, part, [repo.name], { what, verb: "read from" });
}

/** list_documents: what the index holds, a page at a time. */
function registerListDocuments(server: McpServer, home: string): void {
  server.registerTool(
    "list_documents",
    {
      title: "List documents",
      description:
        "The indexed documents (path, title, format, size, fragments, pages, modified), optionally of one repository and under a path prefix.",
      inputSchema: z.strictObject({
        repository: optional(z.string()).describe("Only this repository"),
        prefix: optional(z.string().max(4000)).describe(
          "Only paths starting with this, e.g. 'meetings/2026'; 'notes:meetings/' also names the repository, as in refs",
        ),
        offset: optional(z.number().int().min(0)).describe("Skip this many documents first: the next page starts at offset + limit"),
        limit: optional(z.number().int().min(LISTED.min).max(LISTED.max)).describe(`Default and maximum ${LISTED.max}`),
      }),
      outputSchema: OUTPUT.listing,
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(() => {
        const page = forAgent(listDocumentsPage(home, input));
        const { documents, skipped, warnings, containing, meant, total, offset } = page;
        const more = offset + documents.length < total;
        // What the description promises, in the text too: clients often show the model only the text.
        const lines = documents.map((d) => {
          const pages = d.pages === null ? "" : `  ${d.pages} pages`;
          return named(
            `${d.repository}:${d.path}  ${d.format}  ${d.size} bytes  ${d.fragments} fragments${pages}  modified ${d.modified}  ${d.title}`,
          );
        });
        if (more) lines.push(`[${total - offset - documents.length} more: continue with offset ${offset + documents.length}]`);
        const none =
          total > 0
            ? `offset ${offset} is past the end: ${total} documents`
            : emptyListingText([], input.prefix, containing, meant).trimEnd();
        const text = [lines.join("\n") || none, skippedText(skipped), searchWarningsText(warnings)].filter(Boolean).join("\n");
        return result(page, text);
      }),
  );
}

/** Indexed documents as resources: researcher://notes/guides/setup.md (the path may hold slashes: {+path}). */
function registerDocumentResource(server: McpServer, home: string, context: SearchContext): void {
  server.registerResource(
    "document",
    new ResourceTemplate("researcher://{repository}/{+path}", { list: () => ({ resources: documentResources(home) }) }),
    {
      title: "Indexed document",
      description:
        "An indexed document's text (PDF, DOCX, EPUB and HTML as the markdown that was indexed; code and plain text as they are), capped like get_document",
    },
    async (uri, _variables, { signal }) => {
      let ref: string;
      try {
        ref = refOfResourceUri(uri.href) ?? uri.href; // the template matched it: it is one
      } catch (error) {
        throw resourceError(error);
      }
      const whole = await readDocument(home, ref, { conversions: context.conversions, signal, leftOut: leftOutOfIndex }).catch((error) =>
        Promise.reject(resourceError(error)),
      );
      const doc = readPart(whole, 0, DEFAULT_ANSWER_BYTES);
      const how = `the rest is longer than one answer: read it with the get_document tool, ref "${ref}",`;
      // Headed as get_document's text is: a client citing search locations from it learns the lines moved (s24 agent
      // A11).
      const text = changedSinceIndexLine(doc, MCP_CATCH_UP) + doc.text + continuationMarker(doc, how);
      return { contents: [{ uri: uri.href, mimeType: textMediaType(whole.format), text }] };
    },
  );
}

/**
 * list_repositories, repositories_for and get_index_status: which repositories there are, where to look, how they
 * stand.
 */
function registerRepositoryTools(server: McpServer, home: string, context: SearchContext): void {
  server.registerTool(
    "list_repositories",
    {
      title: "List repositories",
      description: "The repositories, what they hold (description) and how much.",
      inputSchema: z.strictObject({}),
      outputSchema: OUTPUT.repositories(false),
      annotations: READ_ONLY,
    },
    () =>
      guarded(() => {
        const repositories = forAgent(repositorySummaries(home));
        return result({ repositories }, repositoryLines(repositories) || noRepositories());
      }),
  );
  server.registerTool(
    "repositories_for",
    {
      title: "Where to look",
      description:
        "Repositories ranked by how strongly they match a query (BM25 evidence, 0-1, comparable across repositories), each with its best passage: where to search first.",
      inputSchema: z.strictObject({ query: z.string().min(1).max(MAX_QUERY_CHARS).describe("Words or a question") }),
      outputSchema: OUTPUT.matches,
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(async () => {
        const repositories = forAgent(await repositoriesFor(home, input.query, context));
        const warnings = repositories.flatMap((r) => (r.warning ? [{ repository: r.repository, ...r.warning }] : []));
        return result({ repositories }, [repositoryMatchLines(repositories), searchWarningsText(warnings)].filter(Boolean).join("\n"));
      }),
  );
  server.registerTool(
    "get_index_status",
    {
      title: "Index status",
      description: "Documents, fragments, last index time, size, failed files and pages search misses, per repository.",
      inputSchema: z.strictObject({ repository: optional(z.string()).describe("Only this repository; default: all") }),
      outputSchema: OUTPUT.repositories(true),
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(() => {
        const repositories = forAgent(servedStatuses(home, input.repository));
        return result({ repositories }, indexStatusText(repositories) || noRepositories());
      }),
  );
}

/**
 * list_repositories' and get_index_status's text of a home with none: the CLI's sentence, its hint as an agent's are
 * written (get_index_status's was blank: s29 agent P2).
 */
const noRepositories = () => agentHint(NO_REPOSITORIES);

/** Failed files named in get_index_status's text (its structured content lists FAILURES_LISTED). */
const FAILURES_SHOWN = 5;

/**
 * get_index_status's text: each repository's counts (statusLines, as list_repositories), then what the agent can
 * act on: a repository never indexed and the command that indexes it, the files that failed, with why, and the pages
 * search misses (OCR left them out, or their text reads as symbols).
 */
function indexStatusText(repositories: ServedStatus[]): string {
  return repositories
    .map((r) => {
      const lines = [statusLines([r])];
      // Any run, not only a first one: an add_to_index of a scan is minutes, and the text said nothing of it (s24 agent
      // A2).
      const indexing = indexingNote(r);
      if (indexing) lines.push(`  ${indexing}`);
      else if (!r.error && r.last_indexed === null) lines.push(notIndexedWholeLine(r));
      // What search can rank by meaning, and what waits for its model, as `status` says it (s26 agent F10).
      if (!r.error && r.last_indexed !== null) lines.push(`  ${vectorsPart(r)}`);
      const languages = languagesLine(r.languages); // as `status` says them (s24 code user C9)
      if (languages) lines.push(languages);
      if (r.failures_total) {
        lines.push(`  ${r.failures_total} ${r.failures_total === 1 ? "file" : "files"} failed:`);
        lines.push(...r.failures.slice(0, FAILURES_SHOWN).map((f) => `  - ${named(`${f.path}: ${f.reason}`)}`));
        const more = r.failures_total - FAILURES_SHOWN;
        if (more > 0) {
          const where = r.failures_total > FAILURES_LISTED ? `the first ${FAILURES_LISTED}` : "all";
          lines.push(
            `  - … ${more} more (${where} in the structured content's \`failures\`; \`researcher status ${r.name} --json\` lists every one)`,
          );
        }
      }
      lines.push(...pageProblemLines(r, plain));
      const due = indexDueLine(r, plain);
      if (due) lines.push(due);
      const held = indexHeldLine(r, plain);
      if (held) lines.push(held);
      return lines.join("\n");
    })
    .join("\n");
}

/**
 * Tell the client that resources/list changed (the server advertises resources.listChanged): after a tool or a
 * watch batch indexed or removed a document. Over HTTP (stateless, no stream to the client) nobody hears it; a
 * client gone meanwhile is no error.
 */
export function resourcesChanged(server: McpServer): void {
  if (!server.isConnected()) return;
  server.server.sendResourceListChanged().catch((error) => logger.debug(error));
}

/**
 * An index run's progress sent as MCP `notifications/progress` (`index 0/1 scan.pdf: OCR page 3 of 12`), when the
 * request asked for them with a `progressToken`: a scan is minutes of OCR, and the SDK's client times a call out
 * after 60 s unless progress resets its clock (s24 agent A2). `progress` counts the notifications: it must grow
 * with each, and an index run's own counts start again with each phase. Over HTTP (JSON answers) nothing is heard.
 */
function progressNotifier(extra: RequestHandlerExtra<ServerRequest, ServerNotification>): ((p: IndexProgress) => void) | undefined {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  let progress = 0;
  return (p) => {
    const message = `${p.phase} ${p.done}/${p.total} ${progressPlace(p)}`.trimEnd();
    extra
      .sendNotification({ method: "notifications/progress", params: { progressToken, progress: ++progress, message } })
      .catch((error) => logger.debug(error)); // a client gone meanwhile is no error of the run
  };
}

/** add_to_index and remove_from_index: the tools that change an index, one at a time through `writes`. */
function registerWriteTools(server: McpServer, home: string, context: SearchContext, writes: Serial): void {
  server.registerTool(
    "add_to_index",
    {
      title: "Index a file",
      description:
        "Index (or re-index) one file of a repository now, e.g. after editing it. A scanned PDF or image is read by OCR, " +
        "seconds a page: a long scan takes minutes. With a progressToken in the request's _meta, progress is sent as " +
        "notifications/progress (one per OCR page): an SDK client keeps waiting with resetTimeoutOnProgress.",
      inputSchema: z.strictObject({
        repository: z.string().describe("The repository that holds the file"),
        file_path: z
          .string()
          .min(1)
          .max(4000)
          .describe(
            "The file's path, relative to the repository's folder (or absolute inside it, or `repo:path` as results and list_documents show it)",
          ),
      }),
      outputSchema: OUTPUT.indexed,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (input, extra) =>
      guarded(() =>
        writes(async () => {
          const repo = getRepository(home, input.repository);
          const { path, summary } = await indexOneFile(home, repo, input.file_path, {
            embedders: context.embedders,
            onProgress: progressNotifier(extra),
          });
          const what = summary.removed
            ? "removed (the file is gone, or the repository no longer indexes it)"
            : summary.indexed
              ? `indexed${ocrNote(summary.ocr_pages)}`
              : "unchanged";
          if (summary.indexed || summary.removed) resourcesChanged(server);
          // Hosts give the model the text: a scan's unsearchable pages or embeddings not made are said there too (s26
          // agent F10).
          const warnings = summary.warnings.map((warning) => `\nwarning: ${named(warning)}`).join("");
          return result(summary, `${named(`${repo.name}:${path}`)}: ${what}${warnings}`);
        }),
      ),
  );
  server.registerTool(
    "remove_from_index",
    {
      title: "Remove from the index",
      description: "Drop one document from a repository's index, its OCR'd text included (the file itself is not touched).",
      inputSchema: z.strictObject({
        repository: z.string().describe("The repository that holds the document"),
        document_path: z.string().min(1).max(4000).describe("The document's path, as list_documents and search results show it"),
      }),
      outputSchema: OUTPUT.removed,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input) =>
      guarded(() =>
        writes(async () => {
          const repo = getRepository(home, input.repository);
          const { path, dropped } = await removeDocument(repo, repositoryPath(repo, input.document_path));
          if (dropped === "document") resourcesChanged(server);
          const ref = `${repo.name}:${path}`;
          const note = stillOnDisk(repo, path) ? `\nnote: ${stillOnDiskNote(ref)}` : "";
          return result({ repository: repo.name, path, removed: true, dropped }, `${removalLine(ref, dropped)}${note}`);
        }),
      ),
  );
}
