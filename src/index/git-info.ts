/**
 * The git repository a file belongs to, read from the `.git` folder without running git: its root, a name, the
 * checked-out branch and commit. Handles worktrees and submodules (a `.git` file holding `gitdir: <path>`, with
 * refs shared through `commondir`), loose and packed refs, and a detached HEAD. Anything unreadable gives null
 * fields, never an error: this is metadata, not something an index run may fail on.
 *
 * A `.git` may be hostile (an unpacked archive, a folder another user can write to), so every file in it is read
 * only if it is a regular file, opened without blocking (a FIFO would block an index run, and a server with it,
 * forever), and only up to a small size (a link to /dev/zero never ends). Ref names must be valid as git defines
 * them (`git check-ref-format`), which keeps every ref inside the git folder. And, like git's `safe.directory`
 * rule (CVE-2022-24765), a `.git` owned by another user is no repository: the lookup stops there.
 */
import { existsSync, lstatSync, realpathSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { isFolder, readRegularFile } from "../files.ts";
import { trimRuns } from "../text.ts";

/** HEAD, a loose ref, `commondir`, a `.git` file: a line of text each. */
const SMALL_FILE_BYTES = 4 * 1024;
const CONFIG_BYTES = 1024 * 1024;
/** packed-refs: 100,000 tags take about 6 MB; past this size it is not read at all. */
const PACKED_REFS_BYTES = 32 * 1024 * 1024;
/** A commit hash: SHA-1 or SHA-256. */
const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

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
  return gitInfoCache()(isFolder(dir) ? dir : dirname(dir));
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
    // Another user's `.git` is no repository, and git does not look above it either.
    const info = gitDir === FOREIGN ? null : gitDir ? readRepository(dir, gitDir) : parent === dir ? null : lookup(parent);
    byFolder.set(dir, info);
    return info;
  };
  return (folder) => lookup(resolve(folder));
}

/** What `gitDirOf` answers for a `.git` (or the folder its `gitdir:` names) that the current user does not own. */
const FOREIGN = Symbol("owned by another user");

/**
 * `<dir>/.git` as a folder, or the folder a `.git` file (`gitdir: …`) points to; FOREIGN when that `.git`, or the
 * folder it leads to, belongs to another user.
 */
function gitDirOf(dir: string): string | typeof FOREIGN | null {
  const dotGit = join(dir, ".git");
  let stats: Stats;
  try {
    stats = statSync(dotGit);
  } catch {
    return null;
  }
  if (stats.isDirectory()) {
    if (!existsSync(join(dotGit, "HEAD"))) return null;
    return ownedByUs(dotGit) ? dotGit : FOREIGN;
  }
  if (!stats.isFile()) return null;
  if (!ownedByUs(dotGit)) return FOREIGN;
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readSmall(dotGit, SMALL_FILE_BYTES) ?? "");
  if (!match) return null;
  const target = resolve(dir, match[1]!);
  if (!existsSync(join(target, "HEAD"))) return null;
  return ownedByUs(target) ? target : FOREIGN;
}

/**
 * Whether the current user owns `path`, both the name itself (a link) and what it leads to, as git checks a
 * repository before trusting it. Where there are no user ids (Windows), every path is ours.
 */
function ownedByUs(path: string): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  try {
    return lstatSync(path).uid === uid && statSync(path).uid === uid;
  } catch {
    return false;
  }
}

function readRepository(root: string, gitDir: string): GitInfo {
  // A worktree's own folder holds HEAD; refs, packed-refs and config live in the common folder.
  const common = readSmall(join(gitDir, "commondir"), SMALL_FILE_BYTES)?.trim();
  // The common folder is trusted as the git folder is: only if this user owns it (git's safe.directory rule).
  const commonDir = common && ownedByUs(resolve(gitDir, common)) ? resolve(gitDir, common) : gitDir;
  const head = (readSmall(join(gitDir, "HEAD"), SMALL_FILE_BYTES) ?? "").trim();
  let branch: string | null = null;
  let commit: string | null = null;
  if (head.startsWith("ref:")) {
    const ref = head.slice(4).trim();
    if (isValidRefName(ref)) {
      branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
      commit = resolveRef(ref, [gitDir, commonDir]);
    }
  } else if (COMMIT.test(head)) {
    commit = head;
  }
  const remote = originUrl(readSmall(join(commonDir, "config"), CONFIG_BYTES) ?? "");
  return { root, name: (remote && nameFromUrl(remote)) || basename(root), branch, commit, remote };
}

/**
 * Whether `ref` is a full ref name git would accept (the rules of `git check-ref-format`), under `refs/`: so it
 * names a file inside the git folder, never `..`, an absolute path, or a device.
 */
function isValidRefName(ref: string): boolean {
  if (!ref.startsWith("refs/") || ref.length > 1024 || ref.endsWith("/") || ref.endsWith(".")) return false;
  // Control characters, space, ~ ^ : ? * [ \, "..", "//" and "@{" are never part of a ref name.
  if (/[\x00-\x20\x7f~^:?*[\\]|\.\.|\/\/|@\{/.test(ref)) return false;
  return ref.split("/").every((part) => part !== "" && !part.startsWith(".") && !part.endsWith(".lock"));
}

/** A ref's commit: a loose ref file, else packed-refs; symbolic refs are followed a few levels. */
function resolveRef(ref: string, dirs: string[], depth = 0): string | null {
  if (depth > 5 || !isValidRefName(ref)) return null;
  for (const dir of dirs) {
    const loose = readSmall(join(dir, ref), SMALL_FILE_BYTES)?.trim();
    if (loose) {
      if (loose.startsWith("ref:")) return resolveRef(loose.slice(4).trim(), dirs, depth + 1);
      if (COMMIT.test(loose)) return loose;
    }
  }
  for (const dir of dirs) {
    const hash = packedRef(join(dir, "packed-refs"), ref);
    if (hash) return hash;
  }
  return null;
}

/**
 * `ref`'s commit in a packed-refs file (`<hash> <ref>` lines), read only if it is a regular file of at most
 * PACKED_REFS_BYTES.
 */
function packedRef(path: string, ref: string): string | null {
  for (const line of (readSmall(path, PACKED_REFS_BYTES) ?? "").split("\n")) {
    if (line.startsWith("#") || line.startsWith("^")) continue;
    const [hash, name] = line.trim().split(/\s+/);
    if (name === ref && hash && COMMIT.test(hash)) return hash;
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
  // Trimmed, not matched: `[\\/]+$` was quadratic on a long slash run (a 1 MiB config held every run minutes).
  const last =
    trimRuns(url, "/\\")
      .split(/[\\/:]/)
      .at(-1) ?? "";
  const name = last.replace(/\.git$/, "");
  return name || null;
}

/**
 * A small git file's text, or null: only a regular file (checked before it is opened, so a device is not even
 * opened, and again on the descriptor, which is opened without blocking) of at most `maxBytes`, and no link but
 * from a shared file to the same file of another git folder this user owns (isSharedGitFile). A link placed anywhere
 * else led outside the repository (its content became git_commit).
 */
function readSmall(path: string, maxBytes: number): string | null {
  if (!isPlainFile(path) && !isSharedGitFile(path)) return null;
  const read = readRegularFile(path, maxBytes);
  return "bytes" in read ? new TextDecoder().decode(read.bytes) : null;
}

/**
 * Whether `path` links to the file of the same name in another git folder (one with HEAD and objects) this user
 * owns: git-new-workdir and the `repo` tool share `config`, `packed-refs` and `refs` so. Never HEAD: each work tree
 * has its own, and a linked one named another repository's branch and commit.
 */
function isSharedGitFile(path: string): boolean {
  try {
    if (basename(path) === "HEAD" || !lstatSync(path).isSymbolicLink()) return false;
    const target = realpathSync(path);
    const folder = dirname(target);
    return (
      basename(target) === basename(path) && ownedByUs(folder) && isPlainFile(join(folder, "HEAD")) && isFolder(join(folder, "objects"))
    );
  } catch {
    return false;
  }
}

/** Whether `path` is a regular file itself (not a link to one). */
function isPlainFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
