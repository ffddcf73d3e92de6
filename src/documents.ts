/**
 * Reading whole documents back: by `repo:path[:line]` or `#docid`, one at a time or by glob. Only documents the
 * index holds are read, and only inside their repository: `..`, absolute paths elsewhere, symlinks out of the root
 * and files that were never indexed (hidden, excluded, other types) are refused. A converted format (PDF, DOCX,
 * EPUB, HTML) reads back as the markdown indexing saw, through the same converter; PDFs with page marker lines.
 */
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { loadConfig } from "./config.ts";
import { decodeText, formatOf, TEXT_FORMATS } from "./convert.ts";
import { convertPath } from "./convert-pool.ts";
import { isInside, readRegularFile } from "./discover.ts";
import { ResearcherError } from "./errors.ts";
import { getRepository, listRepositories, type Repository } from "./repos.ts";
import { Store } from "./store.ts";

export interface DocumentText {
  repository: string;
  path: string;
  docid: string;
  title: string;
  from_line: number;
  to_line: number;
  total_lines: number;
  truncated: boolean;
  text: string;
}

/** A path relative to the repository root that stays inside it, even through symlinks. */
export function safeRelativePath(repo: Repository, input: string): string {
  const cleaned = input.replace(/^\.\//, "");
  const absolute = isAbsolute(cleaned) ? cleaned : join(repo.path, cleaned);
  const rel = relative(repo.path, absolute);
  const escapes = () =>
    new ResearcherError("PATH_OUTSIDE_REPO", `'${input}' is outside repository '${repo.name}'`, {
      hint: `paths are relative to ${repo.path} and must stay inside it`,
    });
  if (!isInside(repo.path, absolute)) throw escapes();
  if (existsSync(absolute) && !isInside(realpathSync(repo.path), realpathSync(absolute))) throw escapes();
  return rel.split(sep).join("/");
}

/** `repo:path`, `repo:path:line` or `#docid` (the first 6+ hex digits of the document's hash). */
export function resolveDocumentRef(home: string, ref: string): { repo: Repository; path: string; line?: number } {
  const trimmed = ref.trim();
  if (/^#[0-9a-f]{6,64}$/i.test(trimmed)) return findByDocid(home, trimmed.slice(1).toLowerCase());
  const match = /^([A-Za-z0-9_-]+):(.+?)(?::(\d+))?$/.exec(trimmed);
  if (!match) {
    throw new ResearcherError("INVALID_INPUT", `'${ref}' is not a document reference`, {
      hint: "use repo:path, repo:path:line or #docid, as search results print them",
    });
  }
  const repo = getRepository(home, match[1]!);
  return { repo, path: safeRelativePath(repo, match[2]!), line: match[3] ? Number(match[3]) : undefined };
}

function findByDocid(home: string, prefix: string): { repo: Repository; path: string } {
  for (const repo of listRepositories(home)) {
    if (!Store.exists(repo.dir)) continue;
    const store = Store.open(repo.dir);
    try {
      const path = store.pathByHashPrefix(prefix);
      if (path) return { repo, path };
    } finally {
      store.close();
    }
  }
  throw new ResearcherError("DOCUMENT_NOT_FOUND", `no document with docid #${prefix}`);
}

export async function readDocument(
  home: string,
  ref: string,
  options: { fromLine?: number; maxLines?: number } = {},
): Promise<DocumentText> {
  const { repo, path, line } = resolveDocumentRef(home, ref);
  const meta = documentMeta(repo, path);
  const lines = (await documentText(home, repo, path)).split(/\r?\n/);
  const from = Math.max(1, options.fromLine ?? line ?? 1);
  const count = Math.max(1, options.maxLines ?? lines.length);
  const slice = lines.slice(from - 1, from - 1 + count);
  return {
    repository: repo.name,
    path,
    docid: meta.docid,
    title: meta.title,
    from_line: from,
    to_line: from + slice.length - 1,
    total_lines: lines.length,
    truncated: from - 1 + count < lines.length,
    text: slice.join("\n"),
  };
}

/**
 * A document's text as its line numbers count: the file itself for markdown and text (front matter included),
 * the converted markdown for every other format.
 */
async function documentText(home: string, repo: Repository, path: string): Promise<string> {
  const config = loadConfig(home);
  const absolute = join(repo.path, path);
  const limits = { maxBytes: config.index.max_file_bytes, timeoutMs: config.index.convert_timeout * 1000 };
  try {
    if (TEXT_FORMATS.has(formatOf(path))) {
      const read = readRegularFile(absolute, limits.maxBytes);
      if ("reason" in read) throw new Error(read.reason);
      return decodeText(read.bytes);
    }
    return (await convertPath(absolute, limits)).text;
  } catch (error) {
    throw new ResearcherError("FILE_UNREADABLE", `${repo.name}:${path}: ${(error as Error).message}`);
  }
}

/** The stored document, or a refusal: only what the index holds is ever read. */
function documentMeta(repo: Repository, path: string): { docid: string; title: string } {
  const notIndexed = () =>
    new ResearcherError("DOCUMENT_NOT_FOUND", `${repo.name}:${path} is not an indexed document`, {
      hint: `only indexed documents can be read; \`researcher status ${repo.name}\` lists failures, \`researcher index ${repo.name}\` picks up new files`,
    });
  if (!Store.exists(repo.dir)) throw notIndexed();
  const store = Store.open(repo.dir);
  try {
    const doc = store.documentByPath(path);
    if (!doc) throw notIndexed();
    return { docid: `#${doc.hash.slice(0, 6)}`, title: doc.title };
  } finally {
    store.close();
  }
}

/** Indexed documents whose path matches a glob, read whole until `maxBytes` of text; the rest are listed as skipped. */
export async function readDocuments(
  home: string,
  pattern: string,
  options: { repository?: string; maxBytes?: number } = {},
): Promise<{ documents: DocumentText[]; skipped: { repository: string; path: string; reason: string }[] }> {
  const glob = new Bun.Glob(pattern);
  const repos = options.repository ? [getRepository(home, options.repository)] : listRepositories(home);
  const budget = options.maxBytes ?? 256 * 1024;
  let used = 0;
  const documents: DocumentText[] = [];
  const skipped: { repository: string; path: string; reason: string }[] = [];
  for (const repo of repos) {
    if (!Store.exists(repo.dir)) continue;
    const store = Store.open(repo.dir);
    const paths = [...store.documents().keys()].filter((p) => glob.match(p) || glob.match(`${repo.name}:${p}`)).sort();
    store.close();
    for (const path of paths) {
      let doc: DocumentText;
      try {
        doc = await readDocument(home, `${repo.name}:${path}`);
      } catch (error) {
        skipped.push({ repository: repo.name, path, reason: (error as Error).message }); // one unreadable match is its entry's problem
        continue;
      }
      const bytes = Buffer.byteLength(doc.text);
      if (used + bytes > budget) {
        skipped.push({ repository: repo.name, path, reason: `over max_bytes (${budget})` });
        continue;
      }
      used += bytes;
      documents.push(doc);
    }
  }
  return { documents, skipped };
}
