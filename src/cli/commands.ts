/**
 * What each main command does: read its flags, call the library, render the answer. cli.ts declares the commands
 * and their options and hands each parsed command to its function here.
 */
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import skillText from "../../SKILL.md" with { type: "text" };
import { writeOutput } from "../atomic.ts";
import { loadConfig, OCR_MODES } from "../config.ts";
import { LIMIT, minimumScore, OFFSET, type Range } from "../search/bounds.ts";
import { downloadProgress, home, integer, json, out, positive, repeated, type Flags } from "./cli-options.ts";
import { NO_TEXT_LAYER_OCR_OFF } from "../convert/document.ts";
import { conversionLimits, convertPath } from "../convert/pool.ts";
import { absoluteInRepository, repositoryPath, workingFolderRef } from "../search/document-refs.ts";
import { documentInfo, listDocuments, listFailures, readDocument } from "../search/read-document.ts";
import { matchDocuments, namedNothing, readDocuments } from "../search/multi-get.ts";
import { EmbedderCache } from "../embed/embedder.ts";
import { insteadOfRunningAgain, isResearcherError, ResearcherError, toResearcherError } from "../errors.ts";
import { env } from "../env.ts";
import { parseFilter } from "../search/filters.ts";
import { leftOutOfIndex } from "../index/discover.ts";
import { indexRepository, type IndexSummary } from "../index/indexer.ts";
import { removeDocument, stillOnDisk } from "../index/remove.ts";
import {
  documentInfoText,
  documentJson,
  changedSinceIndexLine,
  CLI_NAMES,
  documentListText,
  documentText,
  emptyListingText,
  indexSummaryText,
  multiGetText,
  noResultsLines,
  stillOnDiskNote,
  numberedRead,
  removalLine,
  problemLines,
  progressBar,
  repositoryMatchesText,
  fileLines,
  renderSearch,
  resultFiles,
  SEARCH_FORMATS,
  searchWarningsText,
  skippedText,
  unmatchedLines,
  statusText,
  styleFor,
  type SearchFormat,
  verifyText,
  watchBatchJson,
  watchBatchText,
  clock,
  folderNote,
  watchStatusLine,
} from "../serve/render.ts";
import { getRepository, listRepositories, type Repository, repositoryNames, selectRepositories } from "../repos.ts";
import { repositoriesFor, searchAll } from "../search/results.ts";
import { noStatusAnswered, repositoryStatuses } from "../index/status.ts";
import { search, SearchContext, type SearchOptions, type SearchResponse, searchMode } from "../search/search.ts";
import { escapeControls, stderr, stdout } from "../terminal.ts";
import { STOP_WAIT_MS, watchRepositories } from "../serve/watch.ts";

/**
 * `-0`/`--null`: paths ended by NUL, as they are, for `xargs -0` (a name holding a newline is escaped for a terminal
 * otherwise, and the escaped text can name another file). Only a list of files has paths to end.
 */
function nulSeparated(flags: Flags, files: boolean): boolean {
  if (!flags.null) return false;
  if (!files) throw new ResearcherError("USAGE", "--null ends the paths --files prints", { hint: "add --files" });
  return true;
}

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

/**
 * An optional count after a flag: bare (`true`) or a number of results as `-n` takes it; anything else is a usage
 * error.
 */
function countFlag(value: unknown, name: string): number | undefined {
  if (value === undefined || value === true || value === "true") return undefined;
  return integer(value, `--${name}`, LIMIT);
}

const PORT: Range = { min: 0, max: 65535 };
/** As config.yaml's `watch.debounce_ms` allows. */
const DEBOUNCE_MS: Range = { min: 0, max: 60_000 };

/** One `hint:` line per filter value no document holds. */
function unmatchedHints(response: SearchResponse): string {
  return unmatchedLines(response.unmatched)
    .map((line) => `hint: ${line}\n`)
    .join("");
}

/**
 * A run that found files and could index none of them (none new, changed or unchanged), leaving the index empty,
 * failed, though it recorded why (in this run, or before for failed files it left alone); a file that failed beside
 * others that are indexed, or whose earlier version the index keeps, is reported in the summary only.
 */
function everyFileFailed(summary: IndexSummary): boolean {
  return failedFiles(summary) > 0 && summary.indexed === 0 && summary.skipped === 0 && summary.documents_total === 0;
}

const failedFiles = (summary: IndexSummary) => summary.failed + summary.failed_unchanged;

/** The error of a run whose every file failed: the command's, and its summary's `error` in `--json`. */
function everyFileFailedError(summary: IndexSummary): ResearcherError {
  return new ResearcherError("FILE_UNREADABLE", `all ${failedFiles(summary)} files failed and none was indexed`, {
    hint: `\`researcher status ${summary.repository} --json\` lists them with their reasons`,
  });
}

/**
 * `convert`'s OCR settings: those of the repository holding the file (else the defaults), `--ocr` overriding the mode.
 */
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

/**
 * Options that contradict each other, or of which one makes the other do nothing, are a usage error, not one silently
 * winning: a script author who adds a flag that has no effect never learns it had none (s23 contracts C5). (`noEmbed`
 * is cac's `embed: false`.)
 */
function refuseTogether(flags: Flags, names: [string, string], why: string, hint?: string): void {
  const given = (name: string) => (name === "noEmbed" ? flags.embed === false : flags[name] !== undefined && flags[name] !== false);
  if (!names.every(given)) return;
  const flag = (name: string) => `--${name === "noEmbed" ? "no-embed" : name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  throw new ResearcherError("USAGE", `${flag(names[0])} and ${flag(names[1])} do not go together: ${why}`, hint ? { hint } : {});
}

/** The search formats that show `--full`'s text and `--explain`'s ranking; the others have no place for them. */
const SHOWN_IN: Record<"full" | "explain", readonly SearchFormat[]> = {
  full: ["text", "json", "jsonl", "csv", "md"],
  explain: ["text", "json", "jsonl"],
};

/** `--full` or `--explain` with a format that shows neither is a usage error, as contradicting flags are. */
function refuseUnshown(flags: Flags, format: SearchFormat): void {
  for (const name of ["full", "explain"] as const) {
    if (!flags[name] || SHOWN_IN[name].includes(format)) continue;
    const given = flags.files ? "--files" : `--format ${format}`;
    throw new ResearcherError(
      "USAGE",
      `--${name} does nothing with ${given}: it has no place for ${name === "full" ? "the text" : "the ranking"}`,
      {
        hint: `leave --${name} out, or use --format ${SHOWN_IN[name].join(", ").replace(/, (?=\w+$)/, " or ")}`,
      },
    );
  }
}

/** `researcher index` */
export async function indexCommand(names: string[], flags: Flags): Promise<void> {
  refuseTogether(flags, ["rebuild", "embeddingsOnly"], "--rebuild already recomputes every vector");
  refuseTogether(flags, ["embeddingsOnly", "noEmbed"], "--embeddings-only computes vectors, --no-embed skips them");
  refuseTogether(flags, ["model", "noEmbed"], "--model names the model to embed with, --no-embed skips embedding");
  const { summaries, failures, repositories } = await indexEach(names, flags);
  // Warnings (e.g. embeddings pending offline) go to stderr, also with --json, so scripts and people both see them.
  for (const summary of summaries)
    for (const warning of summary.warnings) stderr.write(`${escapeControls(`warning: ${summary.repository}: ${warning}`)}\n`);
  // A repository that keeps no vectors has none to compute again: said, as the run did nothing for it.
  if (flags.embeddingsOnly) {
    for (const repo of selectRepositories(home(flags), names).filter((r) => !r.embed)) {
      const line = `warning: ${repo.name}: it keeps no embeddings (added with --no-embed), so --embeddings-only did nothing for it`;
      stderr.write(
        `${escapeControls(line)}\nhint: give it embeddings with \`researcher config set repositories.${repo.name}.embed true\`\n`,
      );
    }
  }
  if (flags.json) printIndexJson(names, summaries, failures);
  else if (!flags.quiet) {
    const fileTypes = (summary: IndexSummary) => repositories.find((repo) => repo.name === summary.repository)?.fileTypes ?? [];
    out(summaries.map((s) => indexSummaryText(s, styleFor(stdout), fileTypes(s))).join(""));
  }
  if (summaries.length === 0 && failures.length === 0 && !flags.json) stderr.write("no repositories to index\n");
  // Every repository that failed is said, a run's failure and a repository whose every file failed alike (the
  // latter went unsaid when another failed: s21 scripts #9); the last is the command's error.
  const errors = [
    ...failures.map(({ repository, error }) => ({ repository, error })),
    ...summaries.filter(everyFileFailed).map((summary) => ({ repository: summary.repository, error: everyFileFailedError(summary) })),
  ];
  const last = errors.pop();
  for (const { repository, error } of errors) stderr.write(problemLines(`error: ${repository}`, error.message, error.hint));
  if (last)
    throw new ResearcherError(last.error.code, `${last.repository}: ${last.error.message}`, {
      hint: last.error.hint,
      cause: last.error.cause ?? last.error,
    });
}

type IndexFailure = { repository: string; error: ResearcherError };

/** Index the named repositories (all without names) in turn: one failing does not stop the others. */
async function indexEach(
  names: string[],
  flags: Flags,
): Promise<{ summaries: IndexSummary[]; failures: IndexFailure[]; repositories: Repository[] }> {
  const repositories = selectRepositories(home(flags), names);
  const embedders = new EmbedderCache({ allowDownload: true, onProgress: flags.quiet ? undefined : downloadProgress() });
  const summaries: IndexSummary[] = [];
  const failures: IndexFailure[] = [];
  try {
    for (const repo of repositories) {
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
  return { summaries, failures, repositories };
}

/**
 * `index --json`: one summary for one named repository, else an array with the failed ones as `{repository, error}`.
 */
function printIndexJson(names: string[], summaries: IndexSummary[], failures: IndexFailure[]): void {
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
}

/** `researcher watch` */
export async function watchCommand(names: string[], flags: Flags): Promise<void> {
  const repos = selectRepositories(home(flags), names);
  if (repos.length === 0)
    throw new ResearcherError("INVALID_INPUT", "no repositories to watch", {
      hint: "add one with `researcher repo add <name> <path>`",
    });
  const debounceMs = integer(flags.debounce, "--debounce", DEBOUNCE_MS);
  // A terminal gets a live status line; a pipe (or TERM=dumb) gets one line per batch (JSON with --json).
  const live = !flags.json && stderr.redraws ? watchStatusLine(stderr) : undefined;
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
    followNew: names.length === 0, // all repositories: those registered meanwhile too
    debounceMs,
    noEmbed: flags.embed === false,
    embedders,
    onBatch: (batch) => {
      if (flags.json) out(watchBatchJson(batch));
      else if (live) live.batch(batch);
      else out(watchBatchText(batch));
      // Timed as the batch's own line and errors are (the watch's warnings had no time: s26b retest N8).
      for (const failure of batch.failures) note(`${clock()} failed: ${batch.repository}:${failure.path}: ${failure.reason}`);
      for (const warning of batch.warnings) note(`${clock()} warning: ${batch.repository}: ${warning}`);
    },
    onError: (thrown, repository) => {
      const error = toResearcherError(thrown);
      if (error.code === "WATCH_FAILED") {
        fatal ??= error; // the system refused the watches: stop, and say how to raise the limit
        return stop();
      }
      // Timed as batches are; a failed batch is tried again by the watch itself, so no hint says to run it again.
      note(`${clock()} error: ${repository}: ${error.message}`);
      if (error.hint) note(`${clock()} hint: ${insteadOfRunningAgain(error.hint, "; the watch tries again by itself")}`);
    },
    onStatus: live?.status,
    onRemoved: (repository) => note(`${clock()} ${repository}: removed from the repositories, watched no more`),
    onFolder: (repository, present, path) => note(`${clock()} ${repository}: ${folderNote(present, path)}`),
    onNothingLeft: () => {
      note(`${clock()} nothing left to watch: the watch ends`);
      stop();
    },
  });
  // Ctrl-C and SIGTERM end the watch after the batch being written, or within STOP_WAIT_MS of it.
  await stopped;
  process.off("SIGINT", stop);
  process.off("SIGTERM", stop);
  const ended = await handle.close(STOP_WAIT_MS);
  if (ended) await embedders.dispose();
  live?.clear();
  if (fatal) {
    // The system refused the watches (WATCH_FAILED): once the error is reported, the process ends though a batch
    // runs on, as a signal's stop does (s25b review F5).
    if (!ended) setTimeout(() => process.exit(1), 0);
    throw fatal;
  }
  endCuttingBatch(ended);
}

/**
 * Ends the process when a stop left a watch's batch running (a scan's OCR: minutes, which kept `watch` and `serve
 * --watch` alive after SIGTERM and Ctrl-C: s25 hostile F1). Cut there, as a kill cuts an index run, the index stays
 * whole and the next run reads what the batch did not finish.
 */
function endCuttingBatch(ended: boolean): void {
  if (!ended) process.exit(0);
}

/** `researcher search` */
export async function searchCommand(words: string[], flags: Flags): Promise<void> {
  // Words after `--` are query text even when they look like flags.
  const query = [...words, ...((flags["--"] as string[] | undefined) ?? [])].join(" ");
  if (!query.trim()) throw new ResearcherError("USAGE", "search needs a query", { hint: 'researcher search "your question"' });
  const format = searchFormat(flags);
  const nul = nulSeparated(flags, format === "files");
  refuseUnshown(flags, format);
  const { documents, limit } = searchShape(flags, format);
  const context = new SearchContext();
  try {
    const options: SearchOptions = {
      query,
      mode: searchMode(flags.mode, "--mode"),
      model: flags.model as string | undefined,
      explain: Boolean(flags.explain),
      filter: flags.filter === undefined ? undefined : String(flags.filter),
      where: repeated(flags.where).map((text) => parseFilter(text, "--where")),
      repositories: repositoryNames(repeated(flags.repo), "--repo"),
      limit,
      offset: integer(flags.offset, "--offset", OFFSET),
      minScore: minimumScore(flags.minScore, "--min-score"),
      documents,
      full: Boolean(flags.full),
    };
    const response = await (flags.all ? searchAll(home(flags), options, context) : search(home(flags), options, context));
    stderr.write(skippedText(response.skipped) + searchWarningsText(response.warnings));
    if (format === "text" && response.results.length === 0) {
      const [line, ...hints] = noResultsLines(response, options, CLI_NAMES);
      stderr.write(`${line}\n${hints.map((hint) => `hint: ${hint}\n`).join("")}`);
    }
    // A filter value no document holds: JSON has `unmatched` and markdown says it in its body; a list of paths or
    // rows would be empty without a word (the scripted case, where a typo in a key is hardest to see).
    else if (format !== "json" && format !== "md" && response.results.length === 0) stderr.write(unmatchedHints(response));
    // Text says so in its footer and JSON in `words_found`; a list of paths or rows would pass for matches.
    if (format !== "text" && format !== "json" && response.results.length > 0 && !response.words_found) {
      stderr.write("note: no fragment holds the query's words: these matched by meaning alone\n");
    }
    // The page's size as searched (search.limit when -n is not given), for text's footer; --all is no page.
    const asked = flags.all
      ? undefined
      : { limit: limit ?? loadConfig(home(flags)).search.limit, minScore: options.minScore, names: CLI_NAMES };
    out(nul ? fileLines(resultFiles(response), true) : renderSearch(response, format, styleFor(stdout), asked));
  } finally {
    await context.close();
  }
}

/** `researcher get` */
export async function getCommand(ref: string, flags: Flags): Promise<void> {
  for (const lines of ["from", "lines", "lineNumbers"])
    refuseTogether(
      flags,
      ["meta", lines],
      "--meta prints what the index holds about the document, not its lines",
      "leave --meta out to read lines",
    );
  // A path typed relative to the working folder names the file there, as the shell completed it.
  const target = workingFolderRef(home(flags), String(ref), process.cwd()) ?? String(ref);
  if (flags.meta) {
    const info = documentInfo(home(flags), target, { leftOut: leftOutOfIndex });
    return flags.json ? json(info) : out(documentInfoText(info));
  }
  const read = await readDocument(home(flags), target, {
    fromLine: positive(flags.from, "--from"),
    maxLines: positive(flags.lines, "--lines"),
    leftOut: leftOutOfIndex,
  });
  stderr.write(changedSinceIndexLine(read));
  const doc = numberedRead(read, Boolean(flags.lineNumbers));
  if (flags.json) return json(documentJson(doc));
  out(documentText(doc, stdout.isTTY));
}

/** `researcher multi-get` */
export async function multiGetCommand(pattern: string, flags: Flags): Promise<void> {
  if (flags.json && flags.files) throw new ResearcherError("USAGE", "--json and --files cannot be combined");
  const unread = "--files lists the documents' paths without reading them";
  refuseTogether(flags, ["files", "lineNumbers"], unread, "leave --files out to print the numbered lines");
  refuseTogether(flags, ["files", "maxBytes"], unread, "leave --files out to print the documents");
  const maxBytesPerDocument = positive(flags.maxBytes, "--max-bytes") ?? 1024 * 1024;
  const nul = nulSeparated(flags, Boolean(flags.files));
  // Said on stderr whatever the format: a script's pattern that matched nothing answered an empty success in silence,
  // and so did a ref or a glob in a repository that names none, listed as skipped (s23 C2).
  const noMatch = () => stderr.write(`no indexed documents match ${escapeControls(pattern)}\n`);
  if (flags.files) {
    const { refs, skipped, warnings } = matchDocuments(home(flags), String(pattern));
    for (const s of skipped) stderr.write(`${escapeControls(`skipped ${s.path}: ${s.reason}`)}\n`);
    stderr.write(searchWarningsText(warnings));
    if (namedNothing(refs.length, skipped)) noMatch();
    // A set of files, as search's --files is: two parts of one file name it once.
    return out(fileLines([...new Set(refs.map((r) => join(r.repo.path, r.path)))], nul));
  }
  // --max-bytes counts the text as printed, its numbers too, as MCP's max_bytes_per_document does.
  const found = await readDocuments(home(flags), String(pattern), { maxBytesPerDocument, lineNumbers: Boolean(flags.lineNumbers) });
  stderr.write(found.documents.map((doc) => changedSinceIndexLine(doc)).join("") + searchWarningsText(found.warnings));
  if (namedNothing(found.documents.length, found.skipped, found.skipped_total)) noMatch();
  const read = { ...found, documents: found.documents.map((doc) => numberedRead(doc, Boolean(flags.lineNumbers))) };
  if (flags.json) {
    const { skipped, skipped_total, warnings } = read;
    return json({ documents: read.documents.map(documentJson), skipped, skipped_total, ...(warnings ? { warnings } : {}) });
  }
  out(multiGetText(read, stdout.isTTY));
}

/** `researcher ls` */
export function lsCommand(where: string | undefined, flags: Flags): void {
  // A folder by its absolute path, inside one repository's folder, is that repository's prefix, as `get` reads one.
  const absolute = where === undefined ? undefined : absoluteInRepository(home(flags), String(where));
  const asked = absolute ? `${absolute.repository}:${absolute.inside}` : where === undefined ? undefined : String(where);
  const [name, ...rest] = asked === undefined ? [] : asked.split(":");
  // A name given empty (`ls "$REPO"` with REPO unset) names nothing: selectRepositories refuses it, as elsewhere.
  const listing = { repositories: where === undefined ? [] : [name ?? ""], prefix: rest.join(":") };
  const { documents, skipped, warnings, containing, meant } = listDocuments(home(flags), listing);
  stderr.write(skippedText(skipped) + searchWarningsText(warnings));
  if (flags.json) json(documents);
  else {
    if (documents.length === 0) stderr.write(emptyListingText(listFailures(home(flags), listing), listing.prefix, containing, meant));
    const roots = new Map(listRepositories(home(flags)).map((r) => [r.name, r.path]));
    out(documentListText(documents, styleFor(stdout), (d) => join(roots.get(d.repository) ?? "", d.path)));
  }
}

/** `researcher remove` */
export async function removeCommand(named: string, document: string | undefined, flags: Flags): Promise<void> {
  // One argument is a document as ls and search print it, `notes:drafts/old.md` (s23 hostile H9).
  const colon = named.indexOf(":");
  if (document === undefined && colon <= 0)
    throw new ResearcherError("USAGE", "remove needs a repository and a document", {
      hint: "researcher remove notes drafts/old.md, or researcher remove notes:drafts/old.md",
    });
  const [name, path] = document === undefined ? [named.slice(0, colon), named.slice(colon + 1)] : [named, document];
  const repo = getRepository(home(flags), name);
  await removeDocument(repo, repositoryPath(repo, path), ({ path: removed, dropped }) => {
    const ref = `${repo.name}:${removed}`;
    if (flags.json) json({ repository: repo.name, path: removed, removed: true, dropped });
    else out(`${removalLine(ref, dropped)}\n`);
    if (stillOnDisk(repo, removed)) stderr.write(`note: ${stillOnDiskNote(ref)}\n`);
  });
}

/** `researcher repos-for` */
export async function reposForCommand(words: string[], flags: Flags): Promise<void> {
  const query = [...words, ...((flags["--"] as string[] | undefined) ?? [])].join(" ");
  if (!query.trim()) throw new ResearcherError("USAGE", "repos-for needs a query", { hint: 'researcher repos-for "your question"' });
  const context = new SearchContext();
  const matches = await repositoriesFor(home(flags), query, context).finally(() => context.close());
  stderr.write(skippedText(matches.flatMap((m) => (m.error ? [{ repository: m.repository, ...m.error }] : []))));
  // A repository ranked by the files its first index run has indexed so far says so, as search does.
  stderr.write(searchWarningsText(matches.flatMap((m) => (m.warning ? [{ repository: m.repository, ...m.warning }] : []))));
  if (flags.json) json(matches);
  else out(repositoryMatchesText(matches));
}

/** `researcher verify`: exits 1 when an index has problems, though the command itself ran. */
export async function verifyCommand(names: string[], flags: Flags): Promise<number> {
  const { verifyRepositories } = await import("../index/verify.ts");
  const reports = await verifyRepositories(home(flags), names, { repair: Boolean(flags.repair) });
  if (flags.json) json(reports.length === 1 && names.length === 1 ? reports[0] : reports);
  else out(verifyText(reports, styleFor(stdout)));
  return reports.some((r) => !r.ok) ? 1 : 0;
}

/** `researcher convert` */
export async function convertCommand(file: string, flags: Flags): Promise<void> {
  // An empty name (an unset variable) would read as the current folder.
  if (!file.trim()) throw new ResearcherError("USAGE", "convert needs a file name", { hint: "researcher convert paper.pdf" });
  const config = loadConfig(home(flags));
  const absolute = resolve(file);
  if (!existsSync(absolute)) throw new ResearcherError("PATH_NOT_FOUND", `${file} does not exist`);
  if (flags.output === "" || flags.output === true)
    throw new ResearcherError("USAGE", "-o needs a file name", { hint: "researcher convert <file> -o out.md" });
  const output = flags.output === undefined ? undefined : resolve(String(flags.output));
  if (output && sameFile(output, absolute)) {
    throw new ResearcherError("USAGE", `-o names ${file} itself: converting it would overwrite it`, {
      hint: "write the markdown to another file",
    });
  }
  const ocr = ocrSettings(home(flags), absolute, flags.ocr);
  const { converted, format } = await convertPath(absolute, {
    maxBytes: config.index.max_file_bytes,
    ...conversionLimits(config, ocr),
  }).catch((error: unknown) => {
    // The converter names the repository setting; here it was this command's --ocr (or the setting it took).
    if (ocr.mode !== "off" || !isResearcherError(error) || !error.message.includes(NO_TEXT_LAYER_OCR_OFF)) throw error;
    throw new ResearcherError(error.code, error.message, { hint: `\`researcher convert ${file} --ocr auto\` reads its scanned pages` });
  });
  const { title, metadata, pages = null, text } = converted;
  const rendered = flags.json
    ? `${JSON.stringify({ title, format, metadata, pages, text }, null, 2)}\n`
    : text.endsWith("\n")
      ? text
      : `${text}\n`;
  if (output) writeOutput(output, rendered);
  else out(rendered);
}

/** Whether two paths name one file (through links), as far as both exist. */
function sameFile(a: string, b: string): boolean {
  const [x, y] = [statSync(a, { throwIfNoEntry: false }), statSync(b, { throwIfNoEntry: false })];
  return Boolean(x && y && x.dev === y.dev && x.ino === y.ino);
}

/** `researcher status` */
export function statusCommand(name: string | undefined, flags: Flags): void {
  const statuses = repositoryStatuses(home(flags), name);
  // Every repository listed, the broken ones with their error; the command fails only when none could answer.
  if (flags.json) json(name ? statuses[0] : statuses);
  else out(statusText(statuses, styleFor(stdout)));
  const none = noStatusAnswered(statuses);
  if (none) throw none;
}

/** `researcher serve` */
export async function serveCommand(flags: Flags): Promise<void> {
  const mcp = await import("../serve/mcp.ts"); // the MCP SDK loads only for this command
  const watch = Boolean(flags.watch);
  if (flags.port === undefined) {
    const http = ["host", "token"].find((name) => flags[name] !== undefined);
    if (http) throw new ResearcherError("USAGE", `--${http} applies to HTTP only`, { hint: `add --port <n> to serve over HTTP` });
    return endCuttingBatch(await mcp.serveStdio(home(flags), { watch }));
  }
  const port = integer(flags.port, "--port", PORT)!;
  // Bun binds '' to every interface: an empty --host is a slip, not a request to serve the network.
  if (flags.host !== undefined && !String(flags.host).trim())
    throw new ResearcherError("USAGE", `--host needs an address (got '${flags.host}')`, {
      hint: "--host 127.0.0.1, or 0.0.0.0 for all",
    });
  // Nor is an empty --token (`--token "$TOKEN"` with TOKEN unset) a request to serve without one.
  if (flags.token !== undefined && !String(flags.token).trim())
    throw new ResearcherError("USAGE", "--token needs a value (got an empty one)", {
      hint: "--token <secret>, or set RESEARCHER_MCP_TOKEN; leave both out to serve without a token",
    });
  const token = (flags.token as string | undefined) ?? env.mcpToken();
  // A token of spaces alone could never be presented either, nor one with white space around it (a header's value
  // is trimmed: every request was 401).
  if (token !== undefined && !token.trim())
    throw new ResearcherError("USAGE", "RESEARCHER_MCP_TOKEN is set but empty", {
      hint: "set it to a secret, or unset it to serve without a token",
    });
  if (token !== undefined && token !== token.trim())
    throw new ResearcherError("USAGE", "the token has white space around it, which no request can send", {
      hint: "set the token without leading or trailing spaces",
    });
  const { serveHttp } = await import("../serve/http.ts");
  const server = serveHttp(home(flags), { port, host: flags.host as string | undefined, token, watch });
  stderr.write(`listening on ${escapeControls(server.url)}/mcp\n`);
  const signal = () =>
    new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
  await signal();
  // Requests in flight are answered before it stops; a second Ctrl-C or SIGTERM cuts them.
  void signal().then(() => server.stop(true));
  endCuttingBatch(await server.stop());
}

/** `researcher skill`: SKILL.md as this build knows it, for an agent's skills folder. */
export function skillCommand(): void {
  out(`${skillText.trimEnd()}\n`);
}
