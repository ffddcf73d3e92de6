/** The repository registry: named folders in config.yaml, each with its own index folder. */
import { accessSync, constants, existsSync, realpathSync, rmSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_FILE_TYPES, loadConfig, REPO_NAME, repositoryDir, saveConfig, type EmbeddingConfig } from "./config.ts";
import { ResearcherError } from "./errors.ts";

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
  /** Where this repository's index lives. */
  dir: string;
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

export function listRepositories(home: string): Repository[] {
  const config = loadConfig(home);
  return Object.entries(config.repositories)
    .map(([name, repo]) => ({
      name,
      path: repo.path,
      description: repo.description ?? null,
      fileTypes: repo.file_types,
      exclude: repo.exclude,
      embed: repo.embed,
      ignoreFiles: repo.ignore_files,
      embedding: repo.embedding ?? {},
      dir: repositoryDir(home, name),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function getRepository(home: string, name: string): Repository {
  const repos = listRepositories(home);
  const repo = repos.find((r) => r.name === name);
  if (repo) return repo;
  const known = repos.map((r) => r.name).join(", ");
  throw new ResearcherError("REPO_NOT_FOUND", `no repository named '${name}'`, {
    hint: known ? `known repositories: ${known}` : "add one with `researcher repo add <name> <path>`",
  });
}

/** The named repositories, or all of them when no names are given. */
export function selectRepositories(home: string, names: string[] = []): Repository[] {
  if (names.length === 0) return listRepositories(home);
  return [...new Set(names)].map((name) => getRepository(home, name));
}

export function addRepository(home: string, input: AddRepositoryInput): Repository {
  if (!REPO_NAME.test(input.name)) {
    throw new ResearcherError("INVALID_INPUT", `invalid repository name '${input.name}'`, {
      hint: "use letters, digits, '-' and '_' (at most 64)",
    });
  }
  const path = checkedFolder(input.path);
  const config = loadConfig(home);
  if (config.repositories[input.name]) {
    throw new ResearcherError("REPO_EXISTS", `a repository named '${input.name}' already exists`, {
      hint: "choose another name, or `researcher repo remove` the old one first",
    });
  }
  const sameFolder = Object.entries(config.repositories).find(([, repo]) => repo.path === path);
  if (sameFolder) {
    throw new ResearcherError("REPO_EXISTS", `${path} is already registered as '${sameFolder[0]}'`);
  }
  config.repositories[input.name] = {
    path,
    description: input.description ?? null,
    file_types: normalizeFileTypes(input.fileTypes ?? DEFAULT_FILE_TYPES),
    exclude: input.exclude ?? [],
    embed: input.embed ?? true,
    ignore_files: input.ignoreFiles ?? true,
    ...(input.embedding && Object.keys(input.embedding).length ? { embedding: input.embedding } : {}),
    added: new Date().toISOString(),
  };
  saveConfig(home, config);
  return getRepository(home, input.name);
}

export function removeRepository(home: string, name: string, options: { keepData?: boolean } = {}): Repository {
  const repo = getRepository(home, name);
  const config = loadConfig(home);
  delete config.repositories[name];
  // The index goes first: on a full disk, deleting it is what makes room for writing the config.
  if (!options.keepData) rmSync(repo.dir, { recursive: true, force: true });
  saveConfig(home, config);
  return repo;
}

function normalizeFileTypes(types: string[]): string[] {
  const clean = [...new Set(types.map((t) => t.trim().toLowerCase().replace(/^\./, "")).filter(Boolean))];
  if (clean.length === 0) throw new ResearcherError("INVALID_INPUT", "--file-types needs at least one extension");
  return clean;
}

function checkedFolder(input: string): string {
  const absolute = resolve(input);
  if (!existsSync(absolute)) {
    throw new ResearcherError("PATH_NOT_FOUND", `${absolute} does not exist`);
  }
  if (!statSync(absolute).isDirectory()) {
    throw new ResearcherError("INVALID_INPUT", `${absolute} is not a folder`, { hint: "a repository is a folder of documents" });
  }
  try {
    accessSync(absolute, constants.R_OK | constants.X_OK);
  } catch {
    throw new ResearcherError("PATH_NOT_FOUND", `${absolute} is not readable`);
  }
  return realpathSync(absolute);
}
