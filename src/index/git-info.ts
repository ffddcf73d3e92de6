/**
 * The git repository a file belongs to, read from the `.git` folder without running git: its root, a name, the
 * checked-out branch and commit. Handles worktrees and submodules (a `.git` file holding `gitdir: <path>`, with
 * refs shared through `commondir`), loose and packed refs, and a detached HEAD. Anything unreadable gives null
 * fields, never an error: this is metadata, not something an index run may fail on.
 */
import { existsSync, readFileSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

export interface GitInfo {
  /** The work tree's root folder (absolute). */
  root: string;
  /** The repository's name: from `remote.origin.url` when there is one, else the root folder's name. */
  name: string;
  /** The checked-out branch (`main`), or null when HEAD is detached. */
  branch: string | null;
  /** The full commit hash HEAD points to, or null in a repository without commits. */
  commit: string | null;
  /** `remote.origin.url`, when set. */
  remote: string | null;
}

/** The enclosing git repository of a file or folder, or null when there is none. */
export function findGitRepository(path: string): GitInfo | null {
  const dir = resolve(path);
  return gitInfoCache()(isDirectory(dir) ? dir : dirname(dir));
}

/**
 * `findGitRepository` for folders, cached per folder and its parents: an index run asks for the folder of every
 * document, and the answer changes only between runs. A repository is read once however many folders it holds
 * (its packed-refs can be megabytes: read per folder, 2,000 folders took 8 s).
 */
export function gitInfoCache(): (folder: string) => GitInfo | null {
  const byFolder = new Map<string, GitInfo | null>();
  const lookup = (dir: string): GitInfo | null => {
    const known = byFolder.get(dir);
    if (known !== undefined) return known;
    const gitDir = gitDirOf(dir);
    const parent = dirname(dir);
    const info = gitDir ? readRepository(dir, gitDir) : parent === dir ? null : lookup(parent);
    byFolder.set(dir, info);
    return info;
  };
  return (folder) => lookup(resolve(folder));
}

/** `<dir>/.git` as a folder, or the folder a `.git` file (`gitdir: …`) points to. */
function gitDirOf(dir: string): string | null {
  const dotGit = join(dir, ".git");
  let stats: Stats;
  try {
    stats = statSync(dotGit);
  } catch {
    return null;
  }
  if (stats.isDirectory()) return existsSync(join(dotGit, "HEAD")) ? dotGit : null;
  if (!stats.isFile()) return null;
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotGit) ?? "");
  if (!match) return null;
  const target = resolve(dir, match[1]!);
  return existsSync(join(target, "HEAD")) ? target : null;
}

function readRepository(root: string, gitDir: string): GitInfo {
  // A worktree's own folder holds HEAD; refs, packed-refs and config live in the common folder.
  const common = readText(join(gitDir, "commondir"));
  const commonDir = common ? resolve(gitDir, common.trim()) : gitDir;
  const head = (readText(join(gitDir, "HEAD")) ?? "").trim();
  let branch: string | null = null;
  let commit: string | null = null;
  if (head.startsWith("ref:")) {
    const ref = head.slice(4).trim();
    branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
    commit = resolveRef(ref, [gitDir, commonDir]);
  } else if (/^[0-9a-f]{40,64}$/.test(head)) {
    commit = head;
  }
  const remote = originUrl(readText(join(commonDir, "config")) ?? "");
  return { root, name: (remote && nameFromUrl(remote)) || basename(root), branch, commit, remote };
}

/** A ref's commit: a loose ref file, else packed-refs; symbolic refs are followed a few levels. */
function resolveRef(ref: string, dirs: string[], depth = 0): string | null {
  if (depth > 5) return null;
  for (const dir of dirs) {
    const loose = readText(join(dir, ref))?.trim();
    if (loose) {
      if (loose.startsWith("ref:")) return resolveRef(loose.slice(4).trim(), dirs, depth + 1);
      if (/^[0-9a-f]{40,64}$/.test(loose)) return loose;
    }
  }
  for (const dir of dirs) {
    const packed = readText(join(dir, "packed-refs"));
    if (!packed) continue;
    for (const line of packed.split("\n")) {
      if (line.startsWith("#") || line.startsWith("^")) continue;
      const [hash, name] = line.trim().split(/\s+/);
      if (name === ref && hash && /^[0-9a-f]{40,64}$/.test(hash)) return hash;
    }
  }
  return null;
}

/** `url` of `[remote "origin"]` in a git config. */
function originUrl(config: string): string | null {
  let inOrigin = false;
  for (const raw of config.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith("[")) {
      inOrigin = /^\[remote\s+"origin"\]$/.test(line);
      continue;
    }
    const match = inOrigin ? /^url\s*=\s*(.+)$/.exec(line) : null;
    if (match) return match[1]!.replace(/^"(.*)"$/, "$1");
  }
  return null;
}

/** `git@github.com:owner/name.git`, `https://host/owner/name`, `/srv/name.git` → `name`. */
export function nameFromUrl(url: string): string | null {
  const last =
    url
      .replace(/[\\/]+$/, "")
      .split(/[\\/:]/)
      .at(-1) ?? "";
  const name = last.replace(/\.git$/, "");
  return name || null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
