/**
 * Reading files confined to a repository root: every reader of a document (the indexer, get, multi-get, MCP, REST)
 * and of a file named on the command line goes through here, so a file is read whole, only if it is a regular
 * file, never past a size limit, and never through a link out of the root.
 */
import {
  accessSync,
  closeSync,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  statfsSync,
  statSync,
  constants as fs,
  type BigIntStats,
  type Stats,
} from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { expandHome } from "./env.ts";
import { describeError, OPEN_FILES_LIMIT, ResearcherError, systemCode } from "./errors.ts";
import { shellWord } from "./terminal.ts";

/** The hash a document's bytes are known by (documents.hash) and a fragment text's (its first 32 digits). */
export function sha256(data: Uint8Array | string): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex");
}

export const outsideRoot = (target: string) => `resolves to ${target}, outside the repository`;
const REPLACED = "the file was moved or replaced while it was read";
/** What resolving an opened file's name fails with when that name no longer leads to it. */
const GONE = new Set(["ENOENT", "ENOTDIR", "ELOOP"]);

/**
 * A file's bytes, or why they cannot be read (a one-line reason, as index failures record it); `missing` when the
 * file is not there at all (deleted since it was listed: gone, not failed); `outside` when its name now leads out of
 * the root (a link): no document of the repository is there any more (a failure, and the indexed one goes);
 * `code`: the system's error code when opening or reading failed (`ENAMETOOLONG`, `EMFILE`), to decide by, never by
 * the reason's words; `special`: a FIFO, a device or a socket stands where the file was (a run keeps its document).
 */
export type ReadResult =
  | { bytes: Uint8Array }
  | { reason: string; missing?: boolean; outside?: boolean; code?: string; special?: boolean; tooLarge?: boolean; size?: number };

/** Where a repository's folder was at its last index run: the path it is registered under, and that path's real one. */
export interface RootRecord {
  path: string;
  real: string;
}

/** The record an index run keeps (in the index's meta, as JSON); undefined for a folder that cannot be resolved. */
export function rootRecord(path: string): RootRecord | undefined {
  try {
    return { path, real: realpathSync(path) };
  } catch {
    return undefined;
  }
}

/**
 * Where a repository folder resolves now, when it was indexed elsewhere under the same registered path: the folder
 * (or one above it) was replaced by a link, and the names the index holds would be read from wherever that leads.
 * A path registered anew (`config set repositories.<name>.path`), or through a link from the start, is no move.
 * Undefined when nothing moved, nothing was recorded, or the folder is not there at all (the caller's checks say so).
 */
export function movedRoot(path: string, recorded: RootRecord | undefined, now = rootRecord(path)): string | undefined {
  if (!now) return undefined;
  // An index from before the record was kept: `repo add` registers a folder by its real path.
  if (!recorded) return now.real !== path ? now.real : undefined;
  // Registered anew, or through a link from the start (following it where it points is what such a path means).
  if (recorded.path !== path || recorded.real !== recorded.path) return undefined;
  return now.real !== recorded.real ? now.real : undefined;
}

/** What fixes a moved root without losing the index: put the folder back, or point the repository at the new place. */
export const movedRootHint = (name: string, real: string) =>
  `put the folder back, or point the repository at the new place (its index is kept): \`researcher config set repositories.${name}.path ${shellWord(real)}\``;

/**
 * What fixes a repository folder that is not there: moved on disk (the index is kept, nothing is read again), or on a
 * drive not mounted. "Check that the folder exists" and `get`'s "run index" sent a user who had moved it round in
 * a circle (s26 user F9).
 */
export const missingRootHint = (name: string) =>
  `moved it? \`researcher config set repositories.${name}.path <its new folder>\` points the repository there (its index is kept); on a drive? mount it`;

/**
 * Read a repository's file, its real path confined to the root: the one way every reader (get, multi-get, MCP,
 * REST, the indexer) opens a document. The file is opened first (following symlinks) and the check is made on
 * what was opened: its real path must lie inside the root's and name the very file the descriptor holds (same
 * device and inode). So a folder swapped for a link out of the root, before or during the read, can make the
 * read fail but never return outside text; a symlink that stays inside the root is simply followed. (A root that
 * was itself replaced by a link is refused before any read: movedRoot.) `realRoot`: the root's real path as the
 * caller checked it (movedRoot), so that a root replaced after that check confines reads to where it was.
 */
export function readConfinedFile(root: string, path: string, maxBytes: number, realRoot?: string): ReadResult {
  return confinedReader(root, realRoot)(path, maxBytes);
}

/**
 * `readConfinedFile` for many files under one root, as an index run reads them: the root's real path is resolved
 * once, at the check before the run (`realRoot`) or on the first read (it cost an index run of 5,000 files 6% of its
 * time). Every file's own real path is still resolved and checked at its read; a root moved meanwhile can only make
 * reads fail, never reach outside.
 */
export function confinedReader(root: string, realRoot?: string): (path: string, maxBytes: number) => ReadResult {
  let real = realRoot;
  return (path, maxBytes) =>
    readConfined(
      root,
      () => (real ??= realpathSync(root)),
      path,
      (fd) => readOpenFile(fd, maxBytes),
    );
}

/**
 * The first `n` bytes of a repository's file (fewer when it is shorter), confined as `readConfinedFile` is: what
 * discovery reads of a file without an extension, to tell a script by its `#!` line. `into`: a buffer of at least
 * `n` bytes to read into, for a caller that reads many heads (the bytes returned are a view of it, valid until the
 * next read into it), rather than a new one each time.
 */
export function readConfinedHead(root: string, path: string, n: number, realRoot?: string, into?: Uint8Array): ReadResult {
  return readConfined(
    root,
    () => realRoot ?? realpathSync(root),
    path,
    (fd) => readOpenHead(fd, n, into),
  );
}

/** The first `n` bytes of a regular file, wherever it is (a marker file beside documents: discover.ts). */
export function readHead(absolute: string, n: number): ReadResult {
  return withOpenFile(absolute, (fd) => readOpenHead(fd, n));
}

function readOpenHead(fd: number, n: number, bytes: Uint8Array = new Uint8Array(n)): ReadResult {
  const stats = fstatSync(fd);
  if (!stats.isFile()) return { reason: notRegular(stats), special: !stats.isDirectory() };
  return { bytes: bytes.subarray(0, readSync(fd, bytes, 0, n, 0)) };
}

function readConfined(root: string, realRoot: () => string, path: string, read: (fd: number) => ReadResult): ReadResult {
  const absolute = join(root, path);
  return withOpenFile(absolute, (fd) => {
    const opened = fstatSync(fd, { bigint: true });
    let real: string;
    let named: BigIntStats;
    try {
      real = realpathSync(absolute);
      named = statSync(real, { bigint: true });
    } catch (error) {
      // Its name leads nowhere now: the file was moved away after it was opened. Anything else (no descriptor left
      // for realpath, EMFILE) is no sign of that, and says what it is.
      const code = systemCode(error);
      if (GONE.has(code)) return { reason: REPLACED };
      return { reason: `cannot read: ${describeError(error)}`, code };
    }
    if (!isInside(realRoot(), real)) return { reason: outsideRoot(real), outside: true };
    if (named.dev !== opened.dev || named.ino !== opened.ino) return { reason: REPLACED };
    return read(fd);
  });
}

/**
 * Read a file only if it is a regular file no larger than `maxBytes`, wherever it is: for files that are not
 * documents (ignore files, which may link to a shared one) and files named on the command line (`convert`).
 */
export function readRegularFile(absolute: string, maxBytes: number, limit = "index.max_file_bytes"): ReadResult {
  return withOpenFile(absolute, (fd) => readOpenFile(fd, maxBytes, limit));
}

/** Open for reading without blocking (a FIFO would block the open itself), run `body`, close; errors become reasons. */
function withOpenFile(absolute: string, body: (fd: number) => ReadResult): ReadResult {
  let fd: number;
  try {
    fd = openSync(absolute, fs.O_RDONLY | fs.O_NONBLOCK);
  } catch (error) {
    // Not there: no such file, or a folder on its path is now a file.
    const code = (error as NodeJS.ErrnoException).code;
    return { reason: `cannot read: ${describeError(error)}`, missing: code === "ENOENT" || code === "ENOTDIR", code };
  }
  try {
    return body(fd);
  } catch (error) {
    return { reason: `cannot read: ${describeError(error)}`, code: systemCode(error) };
  } finally {
    closeSync(fd);
  }
}

/**
 * The whole file behind `fd`, checked on the descriptor: only a regular file no larger than `maxBytes` (a FIFO would
 * block forever and a device never ends, even when it replaced a regular file after discovery).
 */
function readOpenFile(fd: number, maxBytes: number, limit = "index.max_file_bytes"): ReadResult {
  const stats = fstatSync(fd);
  if (!stats.isFile()) return { reason: notRegular(stats), special: !stats.isDirectory() };
  if (stats.size > maxBytes)
    return { reason: `larger than ${limit} (${stats.size} > ${maxBytes} bytes)`, tooLarge: true, size: stats.size };
  const bytes = new Uint8Array(stats.size);
  let offset = 0;
  while (offset < bytes.length) {
    const n = readSync(fd, bytes, offset, bytes.length - offset, offset);
    if (n === 0) break;
    offset += n;
  }
  return { bytes: offset === bytes.length ? bytes : bytes.subarray(0, offset) };
}

/** Why a path that is a FIFO, a device or a socket is not read: `not a regular file (named pipe)`. */
export const notRegular = (stats: Stats) => `${NOT_REGULAR} (${specialKind(stats)})`;
export const NOT_REGULAR = "not a regular file";

export function specialKind(stats: Stats): string {
  if (stats.isFIFO()) return "named pipe";
  if (stats.isCharacterDevice()) return "character device";
  if (stats.isBlockDevice()) return "block device";
  if (stats.isSocket()) return "socket";
  if (stats.isDirectory()) return "folder";
  return "special file";
}

/** Whether a path leads to a file (through links); false when it leads to anything else or nowhere. */
export function isFileAt(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Whether the folder holding `path` (relative to `root`) is reached from the root through no link, as discovery walks
 * it (a link to a folder is never followed): a file below such a link is not one of the repository's.
 */
export function inWalkedFolder(root: string, path: string): boolean {
  const folder = dirname(path);
  if (folder === ".") return true;
  try {
    return realpathSync(join(root, folder)) === join(realpathSync(root), folder);
  } catch {
    return false;
  }
}

/** Whether a path leads to a folder (through links); false when it leads nowhere (missing, a loop, forbidden). */
export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return !(rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}

/**
 * `path` (relative to `root`) as the disk spells it: each segment as given when it exists, else the one entry of its
 * folder that reads the same once both are NFC-normalised (a name from a Mac is decomposed on disk; the one typed,
 * or written back by an agent, is composed). The path as given when a segment has no such single entry.
 */
export function spelledOnDisk(root: string, path: string): string {
  if (existsSync(join(root, path)) || /^[\x00-\x7f]*$/.test(path)) return path;
  const spelled: string[] = [];
  for (const segment of path.split("/")) {
    const folder = join(root, ...spelled);
    if (existsSync(join(folder, segment))) {
      spelled.push(segment);
      continue;
    }
    const wanted = segment.normalize("NFC");
    const same = safeList(folder).filter((entry) => entry.normalize("NFC") === wanted);
    if (same.length !== 1) return path;
    spelled.push(same[0]!);
  }
  return spelled.join("/");
}

function safeList(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** Bytes free to this user on the file system holding `folder`. */
export function freeBytes(folder: string): number {
  const { bavail, bsize } = statfsSync(folder);
  return Number(bavail) * Number(bsize);
}

/**
 * Whether this process has (nearly) no file descriptor left: SQLite says only "unable to open database file" when
 * it has none. Linux tells through /proc (listing it needs a descriptor too: failing with EMFILE is the answer);
 * elsewhere this says false.
 */
export function openFilesExhausted(): boolean {
  try {
    const open = readdirSync("/proc/self/fd").length;
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1];
    return soft !== undefined && open + FEW_DESCRIPTORS >= Number(soft);
  } catch (error) {
    return OPEN_FILES_LIMIT.has(systemCode(error));
  }
}

/** What opening an SQLite database may need at once: the file, its WAL and shared-memory files, a journal. */
const FEW_DESCRIPTORS = 4;

/**
 * Where `file` leads when it is a link to nothing (a disk not mounted, a dotfiles folder not checked out), else
 * undefined.
 */
export function danglingLink(file: string): string | undefined {
  try {
    return lstatSync(file).isSymbolicLink() && !existsSync(file) ? readlinkSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The folder a repository is of, as `repo add` and `config set repositories.<name>.path` take it: a readable folder,
 * as an absolute path (a relative one would move with the current folder). A link stays a link: `repo add` writes
 * where it leads, `config set` the link itself, which a repository then follows when it is pointed elsewhere.
 */
export function repositoryFolder(input: string): string {
  // An empty path (an unset variable in a script) would read as the current folder: the home folder, say.
  if (!input.trim())
    throw new ResearcherError("USAGE", "a repository needs a folder (got an empty path)", { hint: "e.g. ~/notes, or . for this folder" });
  // A `~/` that reached us unexpanded (quoted in a script, an MCP client's settings) is the home, as in config.yaml.
  const absolute = resolve(expandHome(input));
  // `"$NOTES/"` with NOTES unset: the root, whose index run would walk every mounted disk.
  if (absolute === "/")
    throw new ResearcherError("USAGE", "/ is the file system's root, not a folder of documents", {
      hint: "name the folder to index, e.g. ~/notes",
    });
  if (!existsSync(absolute)) {
    throw new ResearcherError("PATH_NOT_FOUND", `${absolute} does not exist`, {
      hint: `check the path (\`ls -ld ${shellWord(dirname(absolute))}\` shows the folder above it), or create the folder first`,
    });
  }
  if (!statSync(absolute).isDirectory()) {
    throw new ResearcherError("INVALID_INPUT", `${absolute} is not a folder`, { hint: "a repository is a folder of documents" });
  }
  try {
    accessSync(absolute, fs.R_OK | fs.X_OK);
  } catch {
    throw new ResearcherError("PATH_NOT_FOUND", `${absolute} is not readable`, {
      hint: `give yourself read access (\`ls -ld ${shellWord(absolute)}\` shows who has it)`,
    });
  }
  return absolute;
}
