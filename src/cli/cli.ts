/** The command line: parse flags, call the library, render. No business logic lives here. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { cac, type CAC } from "cac";
import { writeFileAtomic } from "../atomic.ts";
import { loadConfig } from "../config.ts";
import { GROUPS } from "./cli-groups.ts";
import { LIMIT, OFFSET, type Range } from "../search/bounds.ts";
import { downloadProgress, globals, home, integer, json, list, number, out, positive, repeated, type Flags } from "./cli-options.ts";
import { formatOf } from "../convert/convert.ts";
import { conversionLimits, convertPath } from "../convert/pool.ts";
import {
  documentInfo,
  listDocuments,
  listFailures,
  matchDocuments,
  readDocument,
  readDocuments,
  repositoryPath,
} from "../search/documents.ts";
import { EmbedderCache } from "../embed/embedder.ts";
import { ResearcherError, toResearcherError } from "../errors.ts";
import { env } from "../env.ts";
import { parseFilter } from "../search/filters.ts";
import { indexRepository, type IndexSummary, removeDocument } from "../index/indexer.ts";
import {
  documentInfoText,
  documentJson,
  documentListText,
  documentText,
  emptyListingText,
  indexSummaryText,
  multiGetText,
  problemLines,
  progressBar,
  renderSearch,
  SEARCH_FORMATS,
  skippedText,
  statusText,
  styleFor,
  type SearchFormat,
  verifyText,
  watchBatchJson,
  watchBatchText,
  watchStatusLine,
} from "../serve/render.ts";
import { getRepository, listRepositories, type Repository, selectRepositories } from "../repos.ts";
import { noStatusAnswered, repositoriesFor, repositoryStatuses, searchAll } from "../search/results.ts";
import { search, SearchContext, type SearchMode, type SearchOptions, type SearchResponse } from "../search/search.ts";
import { escapeControls, stderr, stdout } from "../terminal.ts";
import { versionText } from "../version.ts";
import { watchRepositories } from "../serve/watch.ts";

/** The exit status of a command that finished but found problems (`verify`); errors set theirs when thrown. */
let status = 0;

/** `--format`, with `--json` and `--files` as its aliases; two different answers are a usage error. */
function searchFormat(flags: Flags): SearchFormat {
  const asked = [
    ...(flags.format !== undefined ? [String(flags.format)] : []),
    ...(flags.json ? ["json"] : []),
    ...(flags.files ? ["files"] : []),
  ];
  const formats = [...new Set(asked)];
  if (formats.length > 1) throw new ResearcherError("USAGE", `choose one output format (got ${formats.join(", ")})`);
  const format = formats[0] ?? "text";
  if (!(SEARCH_FORMATS as readonly string[]).includes(format)) {
    throw new ResearcherError("USAGE", `--format must be ${SEARCH_FORMATS.join(", ")} (got ${format})`);
  }
  return format as SearchFormat;
}

/**
 * Fragments or documents, and how many: `--documents 3` is `--documents -n 3`. `--files` counts files, so it
 * searches by document: `--files -n 5` prints five paths.
 */
function searchShape(flags: Flags, format: SearchFormat): { documents: boolean; limit: number | undefined } {
  const documentsCount = countFlag(flags.documents, "documents");
  const fragmentsCount = countFlag(flags.fragments, "fragments");
  if (flags.documents !== undefined && flags.fragments !== undefined) {
    throw new ResearcherError("USAGE", "--documents and --fragments cannot be combined");
  }
  if (flags.all && flags.limit !== undefined) throw new ResearcherError("USAGE", "--all and -n/--limit cannot be combined");
  const counts = [...new Set([integer(flags.limit, "-n/--limit", LIMIT), documentsCount, fragmentsCount].filter((n) => n !== undefined))];
  if (counts.length > 1) throw new ResearcherError("USAGE", `two different result counts (${counts.join(" and ")})`);
  if (flags.all && counts.length) throw new ResearcherError("USAGE", "--all and a result count cannot be combined");
  const documents = flags.documents !== undefined || (format === "files" && flags.fragments === undefined);
  return { documents, limit: counts[0] };
}

/** An optional count after a flag: bare (`true`) or a number of results as `-n` takes it; anything else is a usage error. */
function countFlag(value: unknown, name: string): number | undefined {
  if (value === undefined || value === true || value === "true") return undefined;
  return integer(value, `--${name}`, LIMIT);
}

const PORT: Range = { min: 0, max: 65535 };
/** As config.yaml's `watch.debounce_ms` allows. */
const DEBOUNCE_MS: Range = { min: 0, max: 60_000 };

/**
 * cac gives an optional-value flag the next word, whatever it is: `search --documents borrow` would lose the query
 * word and `search borrow --documents=3` would search "borrow 3" with a boolean flag. So before parsing, a count
 * right after `--documents`/`--fragments` is bound to it and a bare flag is closed, leaving every other word to the
 * query.
 */
function bindCountFlags(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return [...out, ...args.slice(i)];
    if (arg === "--documents" || arg === "--fragments") {
      const next = args[i + 1];
      if (next !== undefined && /^\d+$/.test(next)) {
        out.push(`${arg}=${next}`);
        i++;
      } else out.push(`${arg}=true`);
      continue;
    }
    out.push(arg);
  }
  return out;
}

/**
 * cac tells its parser which flags are switches by their camelCase names, so a switch with a hyphen
 * (`--embeddings-only`, `--retry-failed`, `--line-numbers`) took the next word as its value: `index
 * --embeddings-only notes` ran on every repository. Such a switch is passed in its camelCase spelling, which the
 * parser knows as a switch.
 */
function camelSwitches(cli: CAC, args: string[]): string[] {
  const switches = new Map<string, string>();
  for (const command of [cli.globalCommand, ...cli.commands]) {
    for (const option of command.options) {
      if (!option.isBoolean || option.negated) continue;
      for (const name of option.rawName.split(",").map((n) => n.trim()))
        if (/^--\w+(-\w+)+$/.test(name)) switches.set(name, `--${option.names[0]}`);
    }
  }
  const end = args.indexOf("--");
  return args.map((arg, i) => (end >= 0 && i > end ? arg : (switches.get(arg) ?? arg)));
}

/** Why a text search printed nothing: no match, or matches all before --offset or below --min-score. */
function noResults(response: SearchResponse, options: SearchOptions): string {
  const none = `no results for "${escapeControls(response.query)}"`;
  if (response.total === 0 || response.mode !== "bm25") return `${none}\n`;
  const from = response.offset > 0 ? ` from --offset ${response.offset}` : "";
  const why =
    options.minScore !== undefined
      ? `none scoring --min-score ${options.minScore} or more${from}`
      : `all before --offset ${response.offset}`;
  return `${none} (${response.total} ${options.documents ? "documents match" : "fragments match"}; ${why})\n`;
}

function searchMode(value: unknown): SearchMode | undefined {
  if (value === undefined) return undefined;
  if (value === "bm25" || value === "vector" || value === "hybrid") return value;
  throw new ResearcherError("USAGE", `--mode must be bm25, vector or hybrid (got ${value})`);
}

/**
 * A run that found files and could index none of them (none new, changed or unchanged) failed, though it recorded
 * why (in this run, or before for failed files it left alone); a file that failed beside others that are indexed is
 * reported in the summary only.
 */
function everyFileFailed(summary: IndexSummary): boolean {
  return failedFiles(summary) > 0 && summary.indexed === 0 && summary.skipped === 0;
}

const failedFiles = (summary: IndexSummary) => summary.failed + summary.failed_unchanged;

/** The error of a run whose every file failed: the command's, and its summary's `error` in `--json`. */
function everyFileFailedError(summary: IndexSummary): ResearcherError {
  return new ResearcherError("FILE_UNREADABLE", `${summary.repository}: all ${failedFiles(summary)} files failed and none was indexed`, {
    hint: `\`researcher status ${summary.repository} --json\` lists them with their reasons`,
  });
}

/**
 * The main commands; given the command word, only that one is defined (defining all ~100 options costs ~2 ms of
 * every cold start).
 */
const OCR_MODES = ["auto", "always", "off"] as const;

/** `convert`'s OCR settings: those of the repository holding the file (else the defaults), `--ocr` overriding the mode. */
function ocrSettings(homeDir: string, file: string, flag: unknown): Repository["ocr"] {
  const repo = listRepositories(homeDir).find((r) => file.startsWith(join(r.path, "/")));
  const settings = repo?.ocr ?? { mode: "auto", languages: ["eng"] };
  if (flag === undefined) return settings;
  const mode = flag === true ? "auto" : String(flag);
  if (!(OCR_MODES as readonly string[]).includes(mode)) {
    throw new ResearcherError("USAGE", `--ocr must be ${OCR_MODES.join(", ")} (got ${mode})`);
  }
  return { ...settings, mode: mode as Repository["ocr"]["mode"] };
}

function mainCli(only?: string): CAC {
  const cli = globals(cac("researcher"));
  const want = (name: string) => only === undefined || only === name;

  if (want("index"))
    cli
      .command("index [...names]", "Index repositories (all when no name is given), incrementally")
      .option("--rebuild", "Drop the index and rebuild it from the files")
      .option("--embeddings-only", "Keep fragments, recompute every vector (after changing the model)")
      .option("--no-embed", "BM25 only for this run: skip embeddings")
      .option("--allow-empty", "Accept an empty repository folder and remove its documents (refused otherwise)")
      .option("--retry-failed", "Convert failed files again though unchanged (after installing an OCR language, say)")
      .option("--model <id|path>", "Embed with this model and keep it as the repository's (default: configured)")
      .option("--json", "Print the summary as JSON")
      .option("--quiet", "No progress bar and no summary")
      .example("  researcher index notes")
      .example("  researcher index --embeddings-only notes --model Xenova/bge-small-en-v1.5")
      .action(async (names: string[], flags: Flags) => {
        refuseTogether(flags, ["rebuild", "embeddingsOnly"], "--rebuild already recomputes every vector");
        refuseTogether(flags, ["embeddingsOnly", "noEmbed"], "--embeddings-only computes vectors, --no-embed skips them");
        const embedders = new EmbedderCache({ allowDownload: true, onProgress: flags.quiet ? undefined : downloadProgress() });
        const summaries = [];
        // One repository failing does not stop the others; the command still fails, and says which failed and why.
        const failures: { repository: string; error: ResearcherError }[] = [];
        try {
          for (const repo of selectRepositories(home(flags), names)) {
            const bar = flags.quiet || flags.json ? undefined : progressBar(stderr, repo.name);
            try {
              summaries.push(
                await indexRepository(home(flags), repo, {
                  rebuild: Boolean(flags.rebuild),
                  embeddingsOnly: Boolean(flags.embeddingsOnly),
                  noEmbed: flags.embed === false,
                  allowEmpty: Boolean(flags.allowEmpty),
                  retryFailed: Boolean(flags.retryFailed),
                  model: flags.model as string | undefined,
                  embedders,
                  onProgress: bar?.update,
                }),
              );
            } catch (error) {
              failures.push({ repository: repo.name, error: toResearcherError(error, { repository: repo.name, dir: repo.dir }) });
            } finally {
              bar?.done();
            }
          }
        } finally {
          await embedders.dispose();
        }
        // Warnings (e.g. embeddings pending offline) go to stderr, also with --json, so scripts and people both see them.
        for (const summary of summaries)
          for (const warning of summary.warnings) stderr.write(`${escapeControls(`warning: ${summary.repository}: ${warning}`)}\n`);
        if (flags.json) {
          const failed = failures.map(({ repository, error }) => ({
            repository,
            error: { code: error.code, message: error.message, hint: error.hint ?? null },
          }));
          // A run whose every file failed completed (its summary lists why), and says it failed as a failed run does.
          const shown = summaries.map((s) => {
            if (!everyFileFailed(s)) return s;
            const { code, message, hint } = everyFileFailedError(s);
            return { ...s, error: { code, message, hint: hint ?? null } };
          });
          if (names.length !== 1) json([...shown, ...failed]);
          else if (shown[0]) json(shown[0]); // one named repository that failed: only the error, on stderr
        } else if (!flags.quiet) out(summaries.map((s) => indexSummaryText(s, styleFor(stdout))).join(""));
        const last = failures.pop();
        for (const { repository, error } of failures) stderr.write(problemLines(`error: ${repository}`, error.message, error.hint));
        if (last)
          throw new ResearcherError(last.error.code, `${last.repository}: ${last.error.message}`, {
            hint: last.error.hint,
            cause: last.error.cause ?? last.error,
          });
        if (summaries.length === 0 && !flags.json) stderr.write("no repositories to index\n");
        const hopeless = summaries.find(everyFileFailed);
        if (hopeless) throw everyFileFailedError(hopeless);
      });

  if (want("watch"))
    cli
      .command("watch [...names]", "Keep repositories' indexes current as files change (all when no name is given)")
      .option("--no-embed", "BM25 only: skip embeddings")
      .option("--debounce <ms>", "Quiet time after the last change before indexing, 0 to 60000 (default: watch.debounce_ms, 300)")
      .option("--json", "Print one JSON line per applied batch")
      .example("  researcher watch notes")
      .example("  researcher watch --json | jq -c 'select(.failed > 0)'")
      .action(async (names: string[], flags: Flags) => {
        const repos = selectRepositories(home(flags), names);
        if (repos.length === 0)
          throw new ResearcherError("INVALID_INPUT", "no repositories to watch", {
            hint: "add one with `researcher repo add <name> <path>`",
          });
        const debounceMs = integer(flags.debounce, "--debounce", DEBOUNCE_MS);
        // A terminal gets a live status line; a pipe gets one line per batch (JSON with --json).
        const live = !flags.json && stderr.isTTY ? watchStatusLine(stderr) : undefined;
        // A note is one line whatever a file name or a reason holds: its control characters are shown escaped.
        const note = (text: string) => {
          const line = escapeControls(text);
          return live ? live.note(line) : stderr.write(`${line}\n`);
        };
        const embedders = new EmbedderCache({ allowDownload: true });
        let fatal: unknown;
        let stop!: () => void;
        const stopped = new Promise<void>((resolve) => (stop = resolve));
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
        const handle = watchRepositories(home(flags), repos, {
          debounceMs,
          noEmbed: flags.embed === false,
          embedders,
          onBatch: (batch) => {
            if (flags.json) out(watchBatchJson(batch));
            else if (live) live.batch(batch);
            else out(watchBatchText(batch));
            for (const failure of batch.failures) note(`failed: ${batch.repository}:${failure.path}: ${failure.reason}`);
            for (const warning of batch.warnings) note(`warning: ${batch.repository}: ${warning}`);
          },
          onError: (thrown, repository) => {
            const error = toResearcherError(thrown);
            if (error.code === "WATCH_FAILED") {
              fatal ??= error; // the system refused the watches: stop, and say how to raise the limit
              return stop();
            }
            note(`error: ${repository}: ${error.message}`);
            if (error.hint) note(`hint: ${error.hint}`);
          },
          onStatus: live?.status,
        });
        // Ctrl-C and SIGTERM end the watch after the batch being written.
        await stopped;
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        await handle.close();
        await embedders.dispose();
        live?.clear();
        if (fatal) throw fatal;
      });

  if (want("search"))
    cli
      .command("search [...query]", "Search fragments by words and meaning")
      .option("--repo <name>", "Only this repository (repeatable)")
      .option("-n, --limit <n>", "Number of results (default: search.limit, 10); files with --files")
      .option("--offset <n>", "Skip this many results")
      .option("--all", "Every result (above --min-score), not one page")
      .option("--min-score <x>", "Drop results scoring below x")
      .option("--documents [n]", "Group fragments by document (n: how many documents)")
      .option("--fragments [n]", "One result per fragment, the default (n: how many fragments)")
      .option("--full", "The whole fragment text instead of a snippet")
      .option("--mode <mode>", "bm25, vector or hybrid (default: hybrid where vectors exist)")
      .option("--model <id|path>", "Embedding model for the query (must match the repository's)")
      .option("--explain", "Show how each result was ranked")
      .option("--filter <glob>", "Only documents whose path matches, e.g. 'notes/**' or '*.md'")
      .option("--format <format>", "text, json, jsonl, csv, md or files (default: text)")
      .option("--json", "Same as --format json (see README for the contract)")
      .option("--files", "Same as --format files: matching file paths, one per line")
      .option("--where <expr>", "Only what matches, e.g. 'tags=rust modified>=2025-01-01' (repeatable; README: Filters)")
      .example('  researcher search "mutable reference" --repo rust-book -n 5')
      .example("  researcher search how does caching work --json")
      .example("  researcher search borrow checker --documents 3 --full")
      .example("  researcher search retry --all --min-score 5 --mode bm25 --format csv > hits.csv")
      .example('  researcher search -- "-starts-with-a-dash"')
      .example(`  researcher search ownership --where 'tags in (rust|go) format=md' --where 'title~"borrow"'`)
      .action(async (words: string[], flags: Flags) => {
        // Words after `--` are query text even when they look like flags.
        const query = [...words, ...((flags["--"] as string[] | undefined) ?? [])].join(" ");
        if (!query.trim()) throw new ResearcherError("USAGE", "search needs a query", { hint: 'researcher search "your question"' });
        const format = searchFormat(flags);
        const { documents, limit } = searchShape(flags, format);
        const context = new SearchContext();
        try {
          const options: SearchOptions = {
            query,
            mode: searchMode(flags.mode),
            model: flags.model as string | undefined,
            explain: Boolean(flags.explain),
            filter: flags.filter === undefined ? undefined : String(flags.filter),
            where: repeated(flags.where).map((text) => parseFilter(text, "--where")),
            repositories: list(flags.repo),
            limit,
            offset: integer(flags.offset, "--offset", OFFSET),
            minScore: number(flags.minScore, "min-score"),
            documents,
            full: Boolean(flags.full),
          };
          const response = await (flags.all ? searchAll(home(flags), options, context) : search(home(flags), options, context));
          stderr.write(skippedText(response.skipped));
          if (format === "text" && response.results.length === 0) stderr.write(noResults(response, options));
          out(renderSearch(response, format, styleFor(stdout)));
        } finally {
          await context.close();
        }
      });

  if (want("get"))
    cli
      .command("get <ref>", "Print an indexed document, or some of its lines")
      .option("--from <line>", "First line (default: the ref's line, else 1)")
      .option("--lines <n>", "How many lines (default: the ref's count, else to the end)")
      .option("--line-numbers", "Number the lines, as the document counts them")
      .option("--meta", "Only what the index holds about it: title, format, metadata, size, fragments")
      .option("--json", "Print {repository, path, docid, title, format, metadata, from, to, total_lines, text}")
      .example("  researcher get notes:guides/setup.md")
      .example("  researcher get notes:guides/setup.md:40:20 --line-numbers")
      .example("  researcher get '#3fa2c1' --meta --json")
      .action(async (ref: string, flags: Flags) => {
        if (flags.meta) {
          const info = documentInfo(home(flags), String(ref));
          return flags.json ? json(info) : out(documentInfoText(info));
        }
        const doc = await readDocument(home(flags), String(ref), {
          fromLine: positive(flags.from, "--from"),
          maxLines: positive(flags.lines, "--lines"),
        });
        if (flags.json) return json(documentJson(doc));
        out(documentText(doc, { lineNumbers: Boolean(flags.lineNumbers) }));
      });

  if (want("multi-get"))
    cli
      .command("multi-get <pattern>", "Print several indexed documents: a glob over paths, or refs separated by commas")
      .option("--max-bytes <n>", "Skip (and list) documents larger than this (default: 1048576)")
      .option("--line-numbers", "Number the lines")
      .option("--json", "Print {documents: [as get --json], skipped: [{repository, path, reason}]}")
      .option("--files", "Print the matching files' paths only, one per line")
      .example("  researcher multi-get 'notes:meetings/2026-*.md'")
      .example("  researcher multi-get 'notes:a.md,notes:b.md:10:5,#3fa2c1' --json")
      .example("  researcher multi-get '**/*.md' --files | xargs wc -l")
      .action(async (pattern: string, flags: Flags) => {
        if (flags.json && flags.files) throw new ResearcherError("USAGE", "--json and --files cannot be combined");
        const maxBytesPerDocument = positive(flags.maxBytes, "--max-bytes") ?? 1024 * 1024;
        if (flags.files) {
          const { refs, skipped } = matchDocuments(home(flags), String(pattern));
          for (const s of skipped) stderr.write(`${escapeControls(`skipped ${s.path}: ${s.reason}`)}\n`);
          return out(refs.map((r) => `${escapeControls(join(r.repo.path, r.path))}\n`).join(""));
        }
        const found = await readDocuments(home(flags), String(pattern), { maxBytesPerDocument });
        if (flags.json) return json({ documents: found.documents.map(documentJson), skipped: found.skipped });
        out(multiGetText(found, { lineNumbers: Boolean(flags.lineNumbers) }));
        if (found.documents.length === 0 && found.skipped.length === 0)
          stderr.write(`no indexed documents match ${escapeControls(pattern)}\n`);
      });

  if (want("ls"))
    cli
      .command("ls [where]", "List indexed documents: all, one repository's, or those under repo:prefix")
      .option("--json", "Print [{repository, path, docid, title, format, metadata, size, modified, fragments, pages}]")
      .example("  researcher ls")
      .example("  researcher ls notes:meetings/2026 --json | jq -r '.[].path'")
      .action((where: string | undefined, flags: Flags) => {
        const [name, ...rest] = where === undefined ? [] : String(where).split(":");
        const listing = { repositories: name ? [name] : [], prefix: rest.join(":") };
        const { documents, skipped } = listDocuments(home(flags), listing);
        stderr.write(skippedText(skipped));
        if (flags.json) return json(documents);
        if (documents.length === 0) stderr.write(emptyListingText(listFailures(home(flags), listing)));
        const roots = new Map(listRepositories(home(flags)).map((r) => [r.name, r.path]));
        out(documentListText(documents, styleFor(stdout), (d) => join(roots.get(d.repository) ?? "", d.path)));
      });

  if (want("remove"))
    cli
      .command("remove <repo> <document>", "Drop one document from a repository's index")
      .example("  researcher remove notes drafts/old.md")
      .action(async (name: string, document: string, flags: Flags) => {
        const repo = getRepository(home(flags), name);
        const path = repositoryPath(repo, document);
        await removeDocument(repo, path);
        out(`${escapeControls(`removed ${name}:${path}`)}\n`);
      });

  if (want("repos-for"))
    cli
      .command("repos-for [...query]", "Rank repositories by how strongly they match a query (where to look)")
      .option("--json", "Print [{repository, description, score, matched, best: {path, location, page, title, snippet}}]")
      .example('  researcher repos-for "borrow checker"')
      .action(async (words: string[], flags: Flags) => {
        const query = [...words, ...((flags["--"] as string[] | undefined) ?? [])].join(" ");
        if (!query.trim()) throw new ResearcherError("USAGE", "repos-for needs a query", { hint: 'researcher repos-for "your question"' });
        const context = new SearchContext();
        const matches = await repositoriesFor(home(flags), query, context).finally(() => context.close());
        stderr.write(skippedText(matches.flatMap((m) => (m.error ? [{ repository: m.repository, ...m.error }] : []))));
        if (flags.json) return json(matches);
        out(
          matches
            .filter((m) => !m.error)
            .map(
              (m) =>
                `${m.score.toFixed(2).padStart(6)}  ${m.repository}  ${m.matched} fragments${m.best ? `  best: ${m.best.location}` : ""}${m.description ? `\n        ${m.description}` : ""}\n`,
            )
            .join(""),
        );
      });

  if (want("verify"))
    cli
      .command("verify [...names]", "Check that indexes are whole and current; --repair rebuilds what is derived")
      .option("--repair", "Rebuild the full-text index, vectors.usearch and leftovers where they are damaged")
      .option("--json", "Print the reports as JSON")
      .example("  researcher verify notes --repair")
      .action(async (names: string[], flags: Flags) => {
        const { verifyRepository } = await import("../index/verify.ts");
        const reports = [];
        for (const repo of selectRepositories(home(flags), names))
          reports.push(await verifyRepository(repo, { repair: Boolean(flags.repair) }));
        if (flags.json) json(reports.length === 1 && names.length === 1 ? reports[0] : reports);
        else out(verifyText(reports, styleFor(stdout)));
        if (reports.some((r) => !r.ok)) status = 1;
      });

  if (want("convert"))
    cli
      .command("convert <file>", "Print what indexing sees in a file: its markdown (PDFs with a page marker per page)")
      .option("--json", "Print {title, format, metadata, pages, text}")
      .option("-o, --output <file>", "Write the markdown to this file instead of stdout")
      .option(
        "--ocr [mode]",
        "OCR of scanned pages: auto (pages without text; --ocr alone), always, off (default: the repository's `ocr`, else auto)",
      )
      .example("  researcher convert paper.pdf | less")
      .example("  researcher convert scan.pdf --ocr always")
      .example("  researcher convert book.epub -o book.md")
      .action(async (file: string, flags: Flags) => {
        const config = loadConfig(home(flags));
        const absolute = resolve(file);
        if (!existsSync(absolute)) throw new ResearcherError("PATH_NOT_FOUND", `${file} does not exist`);
        const converted = await convertPath(absolute, {
          maxBytes: config.index.max_file_bytes,
          ...conversionLimits(config, ocrSettings(home(flags), absolute, flags.ocr)),
        });
        const { title, metadata, pages = null, text } = converted;
        if (flags.json) return json({ title, format: formatOf(absolute), metadata, pages, text });
        const markdown = text.endsWith("\n") ? text : `${text}\n`;
        if (flags.output) writeFileAtomic(resolve(String(flags.output)), markdown);
        else out(markdown);
      });

  if (want("status"))
    cli
      .command("status [name]", "Show what each repository's index holds")
      .option("--json", "Print as JSON")
      .example("  researcher status --json")
      .action((name: string | undefined, flags: Flags) => {
        const statuses = repositoryStatuses(home(flags), name);
        // Every repository listed, the broken ones with their error; the command fails only when none could answer.
        if (flags.json) json(name ? statuses[0] : statuses);
        else out(statusText(statuses, styleFor(stdout)));
        const none = noStatusAnswered(statuses);
        if (none) throw none;
      });

  if (want("serve"))
    cli
      .command("serve", "Serve every repository to MCP clients (stdio, or HTTP with --port)")
      .option("--port <n>", "Serve over HTTP on this port: MCP at POST /mcp, REST at GET /search and /documents/<ref>, GET /health")
      .option("--host <address>", "Address to bind with --port (default 127.0.0.1)")
      .option("--token <token>", "Require `Authorization: Bearer <token>` (default: $RESEARCHER_MCP_TOKEN)")
      .option("--watch", "Also keep every repository's index current as files change (as `researcher watch`)")
      .example("  researcher serve")
      .example("  researcher serve --watch")
      .example("  researcher serve --port 8765 --token s3cret")
      .example("  curl -H 'Authorization: Bearer s3cret' 'http://127.0.0.1:8765/search?q=borrow+checker&n=5'")
      .action(async (flags: Flags) => {
        const mcp = await import("../serve/mcp.ts"); // the MCP SDK loads only for this command
        const watch = Boolean(flags.watch);
        if (flags.port === undefined) return mcp.serveStdio(home(flags), { watch });
        const port = integer(flags.port, "--port", PORT)!;
        // Bun binds '' to every interface: an empty --host is a slip, not a request to serve the network.
        if (flags.host !== undefined && !String(flags.host).trim())
          throw new ResearcherError("USAGE", `--host needs an address (got '${flags.host}')`, {
            hint: "--host 127.0.0.1, or 0.0.0.0 for all",
          });
        const token = (flags.token as string | undefined) ?? env.mcpToken();
        const { serveHttp } = await import("../serve/http.ts");
        const server = serveHttp(home(flags), { port, host: flags.host as string | undefined, token: token || undefined, watch });
        stderr.write(`listening on ${escapeControls(server.url)}/mcp\n`);
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        await server.stop();
      });

  // Listed for --help only: main() hands a group's words to its own parser, so these never run.
  for (const group of Object.keys(GROUPS)) {
    if (want(group))
      cli
        .command(`${group} [...args]`, GROUPS[group]!.description)
        .allowUnknownOptions()
        .action(() => {
          throw new ResearcherError("USAGE", `put options after the command: researcher ${group} <action> [options]`);
        });
  }
  return cli;
}

/** The main parser for a command word: that command alone, or every command when the word names none (help, typos). */
function commandCli(word: string | undefined): CAC {
  const one = word && !word.startsWith("-") ? mainCli(word) : undefined;
  return one?.commands.some((command) => command.name === word) ? one : mainCli();
}

// ---- command groups: `researcher <group> <action>` -------------------------------------------------------

/** Parse argv and run one command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const args = argv.slice(2);
  const verbose = args.includes("--verbose");
  const at = commandIndex(args);
  const groupName = GROUPS[args[at] ?? ""] ? args[at] : undefined;
  let topic = groupName; // what a usage error's hint sends to --help: the command once it is known
  try {
    if (args[0] === "--version" || args[0] === "-v" || args[0] === "version") {
      out(`${versionText()}\n`);
      return 0;
    }
    const cli = groupName ? GROUPS[groupName]!.build() : commandCli(args[at]);
    // cac shows `--no-embed` as "(default: true)", which reads as if embedding were off by default.
    cli.help((sections) => sections.map((s) => ({ ...s, body: s.body.replace(/^(\s*--no-.*?)\s*\(default: true\)[ \t]*$/gm, "$1") })));
    cli.showHelpOnExit = false; // help is printed below, once the options are known to be real ones
    // A group's own parser sees the words without the group's name, global options included.
    const parsedArgv = groupName
      ? [argv[0]!, argv[1]!, ...camelSwitches(cli, [...args.slice(0, at), ...args.slice(at + 1)])]
      : [argv[0]!, argv[1]!, ...camelSwitches(cli, bindCountFlags(args))];
    cli.parse(parsedArgv, { run: false });
    if (cli.matchedCommand) topic = [groupName, cli.matchedCommand.name].filter(Boolean).join(" ");
    checkOptions(cli, args, groupName);
    keepTypedValues(cli, args);
    // Words after `--` are arguments, never options (`researcher get -- notes:-x.md`); cac sets them apart.
    const rest = (cli.options["--"] as string[] | undefined) ?? [];
    if (cli.matchedCommand && rest.length > 0) {
      cli.args = [...cli.args, ...rest];
      cli.options["--"] = [];
    }
    if (cli.options.help) {
      cli.outputHelp();
      return 0;
    }
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) {
        throw new ResearcherError("USAGE", `unknown command '${cli.args[0]}'`, {
          hint: `run \`researcher${groupName ? ` ${groupName}` : ""} --help\` for the list`,
        });
      }
      cli.outputHelp();
      return groupName ? 2 : 0;
    }
    status = 0;
    await cli.runMatchedCommand();
    return status;
  } catch (error) {
    return reportError(error, verbose, topic);
  }
}

/** Options that contradict each other are a usage error, not one silently winning. (`noEmbed` is cac's `embed: false`.) */
function refuseTogether(flags: Flags, names: [string, string], why: string): void {
  const given = (name: string) => (name === "noEmbed" ? flags.embed === false : Boolean(flags[name]));
  if (!names.every(given)) return;
  const flag = (name: string) => `--${name === "noEmbed" ? "no-embed" : name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  throw new ResearcherError("USAGE", `${flag(names[0])} and ${flag(names[1])} do not go together: ${why}`);
}

/**
 * cac's parser turns an option value that looks like a number into one: '' becomes 0 and '007' becomes 7, which
 * mangles a token, a description or a list of file types. Each option given a value (`--limit 1e20`, `-n 1e20`)
 * gets back the text as typed (options that want numbers parse the text themselves: cli-options.ts).
 */
function keepTypedValues(cli: CAC, args: string[]): void {
  const end = args.indexOf("--");
  const words = end === -1 ? args : args.slice(0, end);
  for (const option of [...cli.globalCommand.options, ...(cli.matchedCommand?.options ?? [])]) {
    const long = /--([\w-]+)/.exec(option.rawName)?.[1];
    const short = /(?:^|[\s,])-(\w)\b/.exec(option.rawName)?.[1]; // `-n` of `-n, --limit <n>`
    const key = option.names.reduce((a, b) => (b.length > a.length ? b : a), "");
    if (option.isBoolean || !long || typeof cli.options[key] !== "number") continue;
    let typed: string | undefined;
    words.forEach((word, i) => {
      if ((word === `--${long}` || (short && word === `-${short}`)) && i + 1 < words.length) typed = words[i + 1];
      else if (word.startsWith(`--${long}=`)) typed = word.slice(long.length + 3);
    });
    if (typed !== undefined) cli.options[key] = typed;
  }
}

/** Where the command word is: global options may come first (`researcher --home X repo list`). */
function commandIndex(args: string[]): number {
  let i = 0;
  while (i < args.length) {
    if (args[i] === "--home") i += 2;
    else if (args[i]!.startsWith("--home=") || args[i] === "--verbose") i += 1;
    else break;
  }
  return i;
}

/**
 * Every word before `--` that starts with '-' must be an option of the command. The parser reads `-q the` as the
 * short options q, t, h, e, and the `h` printed help with exit 0; cac checks long options only, and only after.
 */
function checkOptions(cli: CAC, args: string[], group: string | undefined): void {
  const end = args.indexOf("--");
  const options = [...cli.globalCommand.options, ...(cli.matchedCommand?.options ?? [])];
  const known = new Set(options.flatMap((o) => o.names));
  const nameOf = (word: string) =>
    word
      .replace(/^--?/, "")
      .split("=")[0]!
      .replace(/^no-/, "")
      .replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  const words = end === -1 ? args : args.slice(0, end);
  for (const [i, word] of words.entries()) {
    if (!word.startsWith("-") || word === "-" || word === "--version" || word === "-v") continue;
    // `-n -1`: a negative number after an option that takes a value is that value, and no option takes one.
    const before = options.find((o) => i > 0 && o.names.includes(nameOf(words[i - 1]!)) && !words[i - 1]!.includes("="));
    if (/^-\d/.test(word) && before && !before.isBoolean)
      throw new ResearcherError("USAGE", `${words[i - 1]} takes no negative number (got ${word})`);
    if (known.has(nameOf(word))) continue;
    const command = [group, cli.matchedCommand?.name].filter(Boolean).join(" ");
    throw new ResearcherError("USAGE", `unknown option '${word}'`, {
      hint:
        cli.matchedCommand?.name === "search"
          ? `to search for words that start with '-', put them after --: researcher search -- "${word}"`
          : `run \`researcher ${command ? `${command} ` : ""}--help\` for the options`,
    });
  }
}

function reportError(thrown: unknown, verbose: boolean, topic: string | undefined): number {
  const error = toResearcherError(thrown);
  // "Cannot …" reads as "cannot …" after "error: "; a name such as OPENAI_API_KEY keeps its spelling.
  const message = error.code === "INTERNAL" ? `unexpected: ${error.message}` : error.message;
  const usage = error.code === "USAGE" ? `run \`researcher ${topic ? `${topic} ` : ""}--help\`` : undefined;
  stderr.write(
    problemLines(
      "error",
      message.replace(/^[A-Z](?=[a-z])/, (c) => c.toLowerCase()),
      error.hint ?? usage,
    ),
  );
  const stack = error.code === "INTERNAL" && error.cause instanceof Error ? error.cause.stack : error.stack;
  if (verbose && stack) stderr.write(`${stack}\n`);
  else if (error.code === "INTERNAL") stderr.write("hint: run again with --verbose for details\n");
  return error.exitCode;
}
