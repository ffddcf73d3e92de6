/**
 * One file indexed now, by name: what MCP's `add_to_index` asks for, and a library caller too. `indexFiles` takes a
 * batch (a watch's), where a path that is not there is a file deleted; one file named on purpose that is not there
 * is a typo, and one that fails is the answer, so both are errors here.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ResearcherError } from "../errors.ts";
import { isFolder, spelledOnDisk } from "../files.ts";
import type { Repository } from "../repos.ts";
import { repositoryPath, withoutRepository } from "../search/document-refs.ts";
import { withStore } from "../search/read-session.ts";
import { type IndexOptions, type IndexSummary, indexFiles } from "./indexer.ts";

/**
 * The summary of indexing `file` (relative to the repository's folder, or absolute inside it, or `repo:path`), and its
 * path.
 */
export async function indexOneFile(
  home: string,
  repo: Repository,
  file: string,
  options: Pick<IndexOptions, "noEmbed" | "embedders" | "model" | "onProgress"> = {},
): Promise<{ path: string; summary: IndexSummary }> {
  // Not resolved here: a file that became a link out of the root fails in indexFiles, which drops its document.
  // `notes:a.md`, as results print it, is `a.md` in repository notes, as remove takes it (s24 agent A3).
  const named = withoutRepository(repo, file, (path) => existsSync(join(repo.path, path)));
  const path = spelledOnDisk(repo.path, repositoryPath(repo, named)); // a composed name for a decomposed one
  // A folder is no file to index: one named like a file (`notes.md/`) answered "unchanged", any other was refused
  // for its type, "(no extension)" (s24 agent A8). A document indexed at its path goes, as the folder replaced it.
  // Nothing there is no folder: indexFiles and the check after it say so.
  if (isFolder(join(repo.path, path)) && !withStore(repo, (store) => store.document(path) !== undefined)) {
    throw new ResearcherError("INVALID_INPUT", `'${path}' is a folder in repository '${repo.name}': add_to_index takes one file`, {
      hint: `name a file in it, or \`researcher index ${repo.name}\` reads every new or changed file of the repository`,
    });
  }
  const summary = await indexFiles(home, repo, [path], options);
  const failure = summary.failures[0];
  if (failure) {
    // Its earlier version, when the index holds one, is still what searches find: said so, an agent took "not
    // indexed" for the file being gone from the index.
    const kept = withStore(repo, (store) => store.document(path) !== undefined) ? "; its earlier version stays indexed" : "";
    throw new ResearcherError("FILE_UNREADABLE", `${repo.name}:${path} was not indexed: ${failure.reason}${kept}`);
  }
  // indexFiles records nothing for a missing file it never indexed (and clears an old failure).
  if (!summary.removed && !existsSync(join(repo.path, path))) {
    throw new ResearcherError("PATH_NOT_FOUND", `${repo.name}:${path} does not exist`, { hint: `file_path is relative to ${repo.path}` });
  }
  return { path, summary };
}
