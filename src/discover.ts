/** Walking a repository folder: which files are candidates for the index. */
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from "node:fs";
import { extname, isAbsolute, join, relative, sep } from "node:path";

export interface DiscoveredFile {
  /** Path relative to the repository root, always with `/` separators. */
  path: string;
  absolute: string;
  size: number;
  mtimeMs: number;
}

export interface DiscoverOptions {
  fileTypes: string[];
  exclude: string[];
}

/** Folders that hold tooling state, never a user's documents. Hidden folders are skipped too. */
const ALWAYS_SKIPPED = new Set(["node_modules", "__pycache__"]);

/** Compile `--exclude` globs; a pattern without `/` matches a file or folder name at any depth, like .gitignore. */
function compileExcludes(patterns: string[]): (relativePath: string) => boolean {
  const globs = patterns.flatMap((pattern) => {
    const clean = pattern.replace(/^\.?\//, "").replace(/\/$/, "");
    const anchored = clean.includes("/") ? [clean] : [`**/${clean}`, clean];
    return anchored.flatMap((p) => [new Bun.Glob(p), new Bun.Glob(`${p}/**`)]);
  });
  return (path) => globs.some((glob) => glob.match(path));
}

function fileTypeOf(path: string): string {
  return extname(path).slice(1).toLowerCase();
}

/**
 * Every regular file under `root` whose extension is wanted and which no exclude matches, sorted by path.
 * Symlinked files are followed only when their target stays inside the root; symlinked folders are not
 * followed (no cycles, no escaping the repository).
 */
export function discoverFiles(root: string, options: DiscoverOptions): DiscoveredFile[] {
  const types = new Set(options.fileTypes.map((t) => t.toLowerCase().replace(/^\./, "")));
  const excluded = compileExcludes(options.exclude);
  const realRoot = realpathSync(root);
  const found: DiscoveredFile[] = [];

  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // an unreadable folder is not an error for the whole run
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".") || ALWAYS_SKIPPED.has(entry.name)) continue;
      const absolute = join(dir, entry.name);
      const path = relative(root, absolute).split(sep).join("/");
      if (excluded(path)) continue;
      if (entry.isDirectory()) {
        walk(absolute);
        continue;
      }
      if (!types.has(fileTypeOf(entry.name))) continue;
      const stats = fileStats(absolute, entry.isSymbolicLink(), realRoot);
      if (stats) found.push({ path, absolute, size: stats.size, mtimeMs: stats.mtimeMs });
    }
  };
  walk(root);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function fileStats(absolute: string, isLink: boolean, realRoot: string): Stats | undefined {
  try {
    if (!isLink) return lstatSync(absolute);
    if (!isInside(realRoot, realpathSync(absolute))) return undefined;
    const stats = statSync(absolute);
    return stats.isFile() ? stats : undefined;
  } catch {
    return undefined; // dangling link or vanished file
  }
}

export function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return !(rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}
