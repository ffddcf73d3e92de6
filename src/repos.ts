/** The repository registry: named folders in config.yaml, each with its own index folder. */
import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { expandHome } from "./env.ts";
import {
  isReservedName,
  loadConfig,
  MAX_TEXT_CHARS,
  REPO_NAME,
  repositoryDir,
  updateConfig,
  type EmbeddingConfig,
  type UserSettings,
} from "./config.ts";
import { FILE_TYPES, fileTypeNames } from "./file-types.ts";
import { ResearcherError, toResearcherError, type ErrorCode } from "./errors.ts";
import { own } from "./own.ts";
import { isFolder, repositoryFolder } from "./files.ts";
import { shellWord } from "./terminal.ts";

export interface Repository {
  name: string;
  /** Absolute, symlink-resolved root folder. */
  path: string;
  description: string | null;
  fileTypes: string[];
  exclude: string[];
  /** False for BM25-only repositories. */
  embed: boolean;
  /** Honour `.gitignore` and `.ignore` files inside the folder. */
  ignoreFiles: boolean;
  embedding: Partial<EmbeddingConfig>;
  /** Path prefix → what the documents under it are; the longest matching prefix is a result's context. */
  contexts: Record<string, string>;
  /** Where this repository's index lives. */
  dir: string;
  /** The researcher home it is registered in, which discovery leaves out when it lies inside the root. */
  home: string;
  /** OCR of scanned pages (config `ocr`, `ocr_languages`, `ocr_data`). */
  ocr: { mode: "auto" | "off" | "always"; languages: string[]; data?: string };
}

export interface AddRepositoryInput {
  name: string;
  path: string;
  description?: string | null;
  fileTypes?: string[];
  exclude?: string[];
  embed?: boolean;
  ignoreFiles?: boolean;
  embedding?: Partial<EmbeddingConfig>;
}

/**
 * Repositories added before PDF, DOCX, HTML and EPUB were read had the text-only defaults written into config.yaml;
 * nobody chose them, so they mean "the defaults".
 */
const OLD_DEFAULT_TYPES = ["md", "markdown", "mdx", "txt"];
function isOldDefault(types: string[]): boolean {
  return types.length === OLD_DEFAULT_TYPES.length && OLD_DEFAULT_TYPES.every((t) => types.includes(t));
}

export function listRepositories(home: string, options?: Parameters<typeof loadConfig>[1]): Repository[] {
  const config = loadConfig(home, options);
  return Object.entries(config.repositories)
    .map(([name, repo]) => ({
      name,
      // Written absolute by `repo add`; one written relative by hand is read from config.yaml's folder, never from
      // wherever the command happens to run, and `~/` is the user's home, as the shell reads it.
      path: resolve(home, expandHome(repo.path)),
      description: repo.description ?? null,
      fileTypes: isOldDefault(repo.file_types) ? [...FILE_TYPES] : repo.file_types,
      exclude: repo.exclude,
      embed: repo.embed,
      ignoreFiles: repo.ignore_files,
      embedding: repo.embedding ?? {},
      contexts: repo.contexts ?? {},
      dir: repositoryDir(home, name),
      home,
      // A language named twice is read once: the engine loads (and frees) each model once.
      // As meant, not as written: `[]` is the default and a language twice is once (either OCR'd every scan again).
      ocr: { mode: repo.ocr, languages: repo.ocr_languages.length ? [...new Set(repo.ocr_languages)] : ["eng"], data: repo.ocr_data },
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function getRepository(home: string, name: string): Repository {
  const repos = listRepositories(home);
  const wanted = repositoryName(name);
  const repo = repos.find((r) => r.name === wanted);
  if (repo) return repo;
  // An absolute path where a repository was asked for (`ls /etc`) is a folder no repository's holds: said so, with
  // where each one's is (s29b retest P6).
  const folder = isAbsolute(name);
  const known = repos.map((r) => (folder ? `${r.name} (${r.path})` : r.name)).join(", ");
  throw new ResearcherError("REPO_NOT_FOUND", folder ? `no repository's folder holds ${name}` : `no repository named '${name}'`, {
    hint: known ? `known repositories: ${known}` : "add one with `researcher repo add <name> <path>`",
  });
}

/**
 * A repository name as an interface takes it typed, the one rule every lookup and every registry writer reads it by:
 * no name holds blanks around it (REPO_NAME), so ` book` is book (an MCP `repository`, `--repo`, REST `repo=`, `repo
 * remove`), and an empty one is a usage error: it names nothing, and must not widen a selection to every repository.
 * A writer that used the name as typed after a trimmed lookup deleted the index of `notes` and left it registered
 * (s24 review D5). `list` is the option and its whole value when the name was split from a list (`--repo 'a,,b'`).
 */
export function repositoryName(name: string, list?: { given: string; value: string }): string {
  const wanted = name.trim();
  if (wanted) return wanted;
  if (list)
    throw new ResearcherError("USAGE", `${list.given} holds an empty name in the list (got '${list.value}')`, {
      hint: `name each repository, or leave ${list.given} out to search every one`,
    });
  throw new ResearcherError("USAGE", `a repository name is empty (got '${name}')`, {
    hint: "name a repository: `researcher repo list` shows them",
  });
}

/**
 * Repository names as an interface takes them typed (`--repo a,b`, REST `repo=a,b`, each repeatable): split at
 * commas, each read by repositoryName (`--repo 'book ,mixed'`; REST answered `repo=%20book` 404 while the CLI
 * trimmed: s23 contracts L9). `given` is the option or parameter as the caller knows it.
 */
export function repositoryNames(values: readonly string[], given: string): string[] {
  return values.flatMap((value) => value.split(",").map((name) => repositoryName(name, { given, value })));
}

/** The named repositories (repositoryName's rule), or all of them when no names are given. */
export function selectRepositories(home: string, names: string[] = []): Repository[] {
  if (names.length === 0) return listRepositories(home);
  return [...new Set(names.map((name) => repositoryName(name)))].map((name) => getRepository(home, name));
}

/** A repository a command over all repositories left out, and why: the error it would have failed with. */
export interface SkippedRepository {
  repository: string;
  code: ErrorCode;
  message: string;
  hint: string | null;
}

export function skippedRepository(repo: Repository, thrown: unknown): SkippedRepository {
  // No writer's context: a reader that meets damaged pages leaves naming the fix to `verify` (see toResearcherError).
  const error = toResearcherError(thrown);
  return { repository: repo.name, code: error.code, message: error.message, hint: error.hint ?? null };
}

/** Why a repository could not answer, in a listing of all of them (where its name is said already). */
export type RepositoryError = Omit<SkippedRepository, "repository">;

export function errorOf({ repository: _, ...error }: SkippedRepository): RepositoryError {
  return error;
}

/** One repository's part of a command over several: its answer, or what it failed with. */
export type Attempt<T> = { repo: Repository; value: T } | { repo: Repository; error: unknown };

export function attempt<T>(repo: Repository, work: (repo: Repository) => T): Attempt<T> {
  try {
    return { repo, value: work(repo) };
  } catch (error) {
    return { repo, error };
  }
}

/**
 * The answers of a command over repositories. Over all of them (`named` false) it serves the healthy ones: one that
 * failed (a damaged or outdated index, no vectors for the mode asked, …) is left out and reported in `skipped`, so
 * one bad repository does not take the others down. A repository the user named fails the command, and so does
 * every repository failing.
 */
export function settle<T>(
  attempts: Attempt<T>[],
  named: boolean,
): { answers: { repo: Repository; value: T }[]; skipped: SkippedRepository[] } {
  const answers = attempts.flatMap((a) => ("value" in a ? [a] : []));
  const failed = attempts.flatMap((a) => ("error" in a ? [a] : []));
  if (named && failed[0]) throw failed[0].error;
  const skipped = failed.map(({ repo, error }) => skippedRepository(repo, error));
  if (answers.length === 0 && failed.length > 0) throw noneAnswered(skipped);
  return { answers, skipped };
}

/** The error of a command over all repositories that none answered: the one failure, or each of them. */
export function noneAnswered(skipped: SkippedRepository[]): ResearcherError {
  const [first] = skipped;
  // One failure, or the same one everywhere (a model missing for every repository): said once, as it is.
  if (new Set(skipped.map((s) => `${s.code}\0${s.message}`)).size === 1)
    return new ResearcherError(first!.code, first!.message, { hint: first!.hint ?? undefined });
  const hints = [...new Set(skipped.flatMap((s) => (s.hint ? [s.hint] : [])))];
  return new ResearcherError(first!.code, `no repository could answer: ${skipped.map((s) => `${s.repository}: ${s.message}`).join("; ")}`, {
    hint: hints.join("; ") || undefined,
  });
}

/** Where a repository is about to be registered: its name, folder and index folder. */
export type RepositoryPlace = Pick<Repository, "name" | "path" | "dir">;

/**
 * Register a folder as a repository in config.yaml. `beforeRegister` runs under config.yaml's lock once the name and
 * folder are known free, before anything is written: what it throws registers nothing. The library's and the CLI's
 * `repo add` is index/repositories.ts `addRepository`, which sets aside a kept index of another folder there.
 */
export function registerRepository(home: string, input: AddRepositoryInput, beforeRegister?: (place: RepositoryPlace) => void): Repository {
  checkName(input.name, swappedArguments(input));
  const path = realpathSync(repositoryFolder(input.path));
  // Only what was chosen is written: a repository that takes the defaults gets later releases' defaults too.
  const entry: UserSettings = { path };
  if (input.description != null) entry.description = input.description;
  if (input.fileTypes) entry.file_types = normalizeFileTypes(input.fileTypes);
  if (input.exclude?.length) entry.exclude = input.exclude;
  if (input.embed === false) entry.embed = false;
  if (input.ignoreFiles === false) entry.ignore_files = false;
  if (input.embedding && Object.keys(input.embedding).length) entry.embedding = input.embedding;
  entry.added = new Date().toISOString();
  updateConfig(home, (settings) => {
    // Checked under config.yaml's lock, on the file as it is: two `repo add` of one name at once cannot both succeed.
    const repositories = (settings.repositories ?? {}) as Record<string, UserSettings>;
    if (Object.hasOwn(repositories, input.name)) {
      throw new ResearcherError("REPO_EXISTS", `a repository named '${input.name}' already exists`, {
        hint: "choose another name, or `researcher repo remove` the old one first",
      });
    }
    const sameFolder = Object.entries(repositories).find(([, repo]) => repo.path === path);
    if (sameFolder) throw new ResearcherError("REPO_EXISTS", `${path} is already registered as '${sameFolder[0]}'`);
    beforeRegister?.({ name: input.name, path, dir: repositoryDir(home, input.name) });
    settings.repositories = { ...repositories, [input.name]: entry };
  });
  return getRepository(home, input.name);
}

/** Two registered repositories, the folder of one (`inner`) inside the other's: `folder`, relative to `outer`'s. */
export interface Nesting {
  outer: Repository;
  inner: Repository;
  folder: string;
}

/**
 * Other repositories whose folder holds this one's, or lies inside it: unless the outer one's rules leave the inner
 * folder out (overlappingRepositories), their common documents are indexed, and found, in both.
 */
export function nestedRepositories(home: string, repo: Repository): Nesting[] {
  const inside = (inner: string, outer: string) => inner.startsWith(outer.endsWith("/") ? outer : `${outer}/`);
  return listRepositories(home).flatMap((other): Nesting[] => {
    if (other.name === repo.name) return [];
    const pair = inside(repo.path, other.path)
      ? { outer: other, inner: repo }
      : inside(other.path, repo.path)
        ? { outer: repo, inner: other }
        : undefined;
    return pair ? [{ ...pair, folder: relative(pair.outer.path, pair.inner.path).split(sep).join("/") }] : [];
  });
}

/**
 * A name `repo add` and `repo rename` may give: refused as a usage error (exit 2), as a ref no document could have.
 * `hint` replaces the naming rules where a better one is known.
 */
function checkName(name: string, hint?: string): void {
  if (validName(name)) return;
  throw new ResearcherError("USAGE", `invalid repository name '${name}'`, {
    hint:
      hint ??
      "use letters, digits, '-' and '_' (at most 64, not starting with '-'), and no name JavaScript objects reserve (constructor, toString, …)",
  });
}

function validName(name: string): boolean {
  // A leading '-' made every hint that names the repository (`researcher index -x`) an unknown option (s26 hostile
  // F3); config.yaml still reads one an older release registered.
  return REPO_NAME.test(name) && !isReservedName(name) && !name.startsWith("-");
}

/**
 * `repo add <path> <name>`, a common slip: the name refused is a folder and the folder given would be a valid name.
 * The naming rules were the hint, and the user looked for what was wrong with the name (s27 user U7).
 */
function swappedArguments({ name, path }: AddRepositoryInput): string | undefined {
  if (!validName(path) || !isFolder(resolve(expandHome(name)))) return undefined;
  return `the name comes first: \`researcher repo add ${path} ${shellWord(name)}\``;
}

/**
 * Give a registered repository another name, its settings kept in their place. `beforeRename` moves its index folder
 * under config.yaml's lock, after the checks and before the file is written (index/repositories.ts).
 */
export function renameRegistration(home: string, typed: string, to: string, beforeRename: (from: string, to: string) => void): Repository {
  checkName(to);
  const from = repositoryName(typed);
  updateConfig(home, (settings) => {
    const repositories = (settings.repositories ?? {}) as Record<string, UserSettings>;
    if (!Object.hasOwn(repositories, from)) getRepository(home, from); // the error that names what there is
    if (Object.hasOwn(repositories, to)) {
      throw new ResearcherError("REPO_EXISTS", `a repository named '${to}' already exists`, {
        hint: `choose another name, or \`researcher repo remove ${to}\` first`,
      });
    }
    beforeRename(repositoryDir(home, from), repositoryDir(home, to));
    settings.repositories = Object.fromEntries(Object.entries(repositories).map(([name, entry]) => [name === from ? to : name, entry]));
  });
  return getRepository(home, to);
}

/** Drop a repository from the configuration (its index folder is index/repositories.ts's to delete). */
export function forgetRepository(home: string, typed: string): void {
  const name = repositoryName(typed);
  updateConfig(home, (settings) => {
    delete (settings.repositories as UserSettings)[name];
  });
}

/**
 * `index --model`: the model a repository was just embedded with becomes its own model in config.yaml, so its
 * searches embed queries with it and later index runs embed new text with it (a one-run choice would leave the
 * configured model to search vectors of another).
 */
export function keepRepositoryModel(home: string, repo: Repository, model: { id: string; provider: string }): void {
  if (repo.embedding.model === model.id && (repo.embedding.provider ?? "local") === model.provider) return;
  updateConfig(home, (settings) => {
    const entry = repositorySettings(settings, repo.name);
    entry.embedding = { ...(entry.embedding as UserSettings | undefined), model: model.id, provider: model.provider };
  });
}

/** Extensions as config.yaml keeps them (fileTypeNames); none at all is refused. */
export function normalizeFileTypes(types: string[]): string[] {
  const clean = fileTypeNames(types);
  if (clean.length === 0)
    throw new ResearcherError("INVALID_INPUT", "the file types need at least one extension", { hint: "e.g. md,txt,pdf" });
  return clean;
}

// ---- contexts: what the documents under a path prefix are ------------------------------------------------------

export interface PathContext {
  repository: string;
  prefix: string;
  context: string;
}

/** `repo:prefix` → its parts; the prefix is a path relative to the root (`ch16`, `notes/2026/`), or empty. */
function parseTarget(home: string, target: string): { repo: Repository; prefix: string } {
  const at = target.indexOf(":");
  const repo = getRepository(home, at === -1 ? target : target.slice(0, at));
  const prefix = at === -1 ? "" : target.slice(at + 1).replace(/^\.?\//, "");
  if (prefix.split("/").includes(".."))
    throw new ResearcherError("INVALID_INPUT", `'${target}': a context prefix stays inside its repository`);
  // config.yaml's reader drops such keys: the context would be lost without a word.
  if (isReservedName(prefix)) {
    throw new ResearcherError("INVALID_INPUT", `'${target}': '${prefix}' is a name JavaScript objects reserve`, {
      hint: "give the context to the folder above it, or to one inside it",
    });
  }
  return { repo, prefix };
}

export function addContext(home: string, target: string, context: string): PathContext {
  const { repo, prefix } = parseTarget(home, target);
  if (!context.trim())
    throw new ResearcherError("USAGE", "a context needs some text", {
      hint: `researcher context add ${target} "what these documents are"`,
    });
  const length = [...context.trim()].length; // characters as people count them, not UTF-16 units
  if (length > MAX_TEXT_CHARS) {
    throw new ResearcherError("USAGE", `a context is at most ${MAX_TEXT_CHARS} characters (got ${length})`, {
      hint: "say in a sentence or two what these documents are: it is repeated with every result from them",
    });
  }
  updateConfig(home, (settings) => {
    const entry = repositorySettings(settings, repo.name);
    entry.contexts = { ...(entry.contexts as UserSettings | undefined), [prefix]: context.trim() };
  });
  return { repository: repo.name, prefix, context: context.trim() };
}

export function removeContext(home: string, target: string): PathContext {
  const { repo, prefix } = parseTarget(home, target);
  const context = own(repo.contexts, prefix);
  if (context === undefined) {
    throw new ResearcherError("INVALID_INPUT", `no context for '${repo.name}:${prefix}'`, { hint: "`researcher context list` shows them" });
  }
  updateConfig(home, (settings) => {
    const entry = repositorySettings(settings, repo.name);
    const { [prefix]: _, ...rest } = (entry.contexts as UserSettings | undefined) ?? {};
    entry.contexts = rest;
  });
  return { repository: repo.name, prefix, context };
}

/**
 * A registered repository's entry in config.yaml as it is under the lock: one removed since it was looked up (by
 * `repo remove` in another process) is REPO_NOT_FOUND, not an internal error.
 */
function repositorySettings(settings: UserSettings, name: string): UserSettings {
  const entry = (settings.repositories as Record<string, UserSettings> | undefined)?.[name];
  if (!entry) throw new ResearcherError("REPO_NOT_FOUND", `no repository named '${name}' (it was removed meanwhile)`);
  return entry;
}

export function listContexts(home: string): PathContext[] {
  return listRepositories(home).flatMap((repo) =>
    Object.entries(repo.contexts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([prefix, context]) => ({ repository: repo.name, prefix, context })),
  );
}

/** A document's context: the longest context prefix of its path, else the repository's description. */
export function contextFor(repo: Repository, path: string): string | null {
  return pathContext(repo, path) ?? repo.description;
}

/** The context `context add` gave the longest prefix of a document's path, if one did. */
export function pathContext(repo: Repository, path: string): string | undefined {
  let best: string | undefined;
  for (const prefix of Object.keys(repo.contexts)) {
    if (path.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return best === undefined ? undefined : repo.contexts[best]!;
}
