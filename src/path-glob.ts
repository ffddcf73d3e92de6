/**
 * Globs over a repository's paths, one rule for every place that takes one: `--exclude` (discovery), `--filter`,
 * `--where path=` and multi-get. Pure string matching, no file system.
 */
import { composed } from "./text.ts";

/**
 * The one rule for a glob over a repository's paths (`--exclude`, `--filter`, `--where path=`, multi-get). As in
 * .gitignore, a glob without a slash (`*.md`) matches a document's base name at any depth; one with a slash matches the
 * path from the repository's root (`notes/*.md` only directly in notes/, `notes/**` at any depth below it). A leading
 * slash only anchors (`/README.md` is the root's; `/src/**` as `src/**`, the form `ls repo:/src` takes), and a trailing
 * one is the folder with everything below it (`src/` as `src/**`). A pattern that matches a folder matches all below it
 * (`subjects`). A pattern also matches the path (or name) it spells.
 */
export function pathGlob(typed: string): (path: string) => boolean {
  return pathGlobs([typed]);
}

/**
 * Whether a path matches any of the patterns (pathGlob's rule), each path's subjects made once for all of them: a
 * filter of a hundred globs over 100,000 paths made them a hundred times each.
 */
export function pathGlobs(typed: readonly string[]): (path: string) => boolean {
  const compiled = typed.map(compile);
  const [paths, names] = [compiled.some((c) => c.anchored), compiled.some((c) => !c.anchored)];
  return (stored) => {
    const path = composed(stored);
    const bySubject = { anchored: paths ? subjects(path, true) : [], names: names ? subjects(path, false) : [] };
    return compiled.some(
      ({ matcher, anchored, literal, below }) =>
        below(path) || bySubject[anchored ? "anchored" : "names"].some((subject) => subject === literal || matcher.match(subject)),
    );
  };
}

function compile(typed: string) {
  // Names compare composed: one stored decomposed (from a Mac) was read by `get` and missed by every glob (s19 retest).
  const pattern = composed(typed);
  const { glob, anchored } = pathPattern(pattern);
  // A leading `!` is a name's first letter, not Bun.Glob's negation (`!x.md` matched every other file): a filter
  // says "not" with `!=`.
  const matcher = new Bun.Glob(glob.startsWith("!") ? `\\${glob}` : glob);
  // A name that holds glob syntax (`report [v2].md`, `notes{1}.md`, a folder `notes{1}/`) is first of all that name:
  // `ls` shows it, and it must reach it.
  const literal = pattern.replace(/^(?:\.?\/)+/, "");
  const below = literal.endsWith("/") ? (path: string) => path.startsWith(literal) : () => false;
  return { matcher, anchored, literal, below };
}

/**
 * What a pattern is matched against, as .gitignore matches it: the path from the root (anchored) or each name in it
 * (not), the folders above the document included, so a pattern that names a folder holds all below it: `papers` is
 * every folder of that name with what is in it, `src/lib` the folder src/lib (`--filter papers` found nothing).
 */
export function subjects(path: string, anchored: boolean): string[] {
  const names = path.split("/");
  return anchored ? names.map((_, i) => names.slice(0, i + 1).join("/")) : names;
}

/** A path pattern's glob without its leading slash, and whether it matches whole paths (else base names). */
export function pathPattern(pattern: string): { glob: string; anchored: boolean } {
  // `/src`, `./src` and `src/` as `ls` takes them; `src//` as `src/` (as `src//**` it matched nothing).
  const unanchored = withOneTrailingSlash(pattern.replace(/^(?:\.?\/)+/, ""));
  const glob = unanchored === "" ? "**" : unanchored.endsWith("/") ? `${unanchored}**` : unanchored;
  return { glob, anchored: glob.includes("/") || unanchored !== pattern };
}

/**
 * A pattern without glob syntax as what it is looked up by, pathGlob's rule without matching: a path from the root
 * (`notes/a.md`, `/notes`: a subject of every path below it), a name at any depth (`a.md`), a folder (`notes/`, with
 * `folder`: only the folders above a path, never a file of that name, as `notes/**` and .gitignore's `notes/` match),
 * or "" for the root (`/`), which holds every path. Undefined for a glob, which is matched.
 */
export function lookupOf(pattern: string): { subject: string; anchored: boolean; folder: boolean } | undefined {
  if (isGlob(pattern)) return undefined;
  const { glob, anchored } = pathPattern(pattern);
  const folder = glob.endsWith("/**");
  return { subject: folder ? glob.slice(0, -3) : glob === "**" ? "" : glob, anchored, folder };
}

/**
 * `src//` as `src/`: trailing slashes counted from the end, not by a pattern anchored at it (`/\/+$/` tried each
 * slash of a long run in the middle of a value: 80,000 took 1.7 s, s22 hostile F4).
 */
function withOneTrailingSlash(value: string): string {
  let end = value.length;
  while (end > 0 && value[end - 1] === "/") end--;
  return end === value.length ? value : `${value.slice(0, end)}/`;
}

/**
 * pathGlobs' rule, with the patterns that are no globs looked up: a list of paths, names or folders (as an agent
 * sends) costs a set lookup per subject however long it is; only globs are matched, and only they are bounded
 * (filters.ts: ten thousand folder values, each matched as `dir/**`, took 14 s over 20,000 notes).
 */
export function pathMatcher(typed: readonly string[]): (path: string) => boolean {
  const lookups = typed.map((pattern) => lookupOf(composed(pattern)));
  if (lookups.some((lookup) => lookup?.subject === "")) return () => true;
  const subjectsOf = (kept: (l: NonNullable<(typeof lookups)[number]>) => boolean) =>
    new Set(lookups.flatMap((l) => (l && kept(l) ? [l.subject] : [])));
  const paths = subjectsOf((l) => l.anchored && !l.folder);
  const folders = subjectsOf((l) => l.folder);
  const names = subjectsOf((l) => !l.anchored);
  const globbed = typed.filter((_, i) => lookups[i] === undefined);
  const globs = globbed.length > 0 ? pathGlobs(globbed) : () => false;
  return (stored) => {
    const path = composed(stored);
    const anchored = paths.size > 0 || folders.size > 0 ? subjects(path, true) : [];
    return (
      (paths.size > 0 && anchored.some((p) => paths.has(p))) ||
      // The path's folders only: `b.md/` is no file b.md (it dropped b.md from an index: s22 review F2).
      (folders.size > 0 && anchored.slice(0, -1).some((p) => folders.has(p))) ||
      (names.size > 0 && subjects(path, false).some((name) => names.has(name))) ||
      globs(path)
    );
  };
}

/**
 * The repository a path value begins with (`notes/**`, `/notes/src`, `notes:src/**`), when `names` has it, and the
 * rest of the value: paths are inside a repository's folder, so such a value names a folder `notes` in one, where it
 * meant the repository (a filter, a listing's prefix). Without `colon`, only `notes/`: where `notes:` already names
 * the repository (a listing's prefix), one left in the value is a path's own (`code:notes:x.md`).
 */
export function leadingRepository(
  value: string,
  names: ReadonlySet<string>,
  { colon = true } = {},
): { repository: string; inside: string } | undefined {
  const match = (colon ? /^\/?([^/:]+)[/:]/ : /^\/?([^/:]+)\//).exec(value);
  return match && names.has(match[1]!) ? { repository: match[1]!, inside: value.slice(match[0].length) } : undefined;
}

/** Characters that make a glob more than its own text (Bun.Glob's syntax). */
const GLOB_SYNTAX = /[*?[\]{}!\\]/;

/** Whether a pattern is a glob rather than a path (or name) of its own: it holds glob syntax. */
export function isGlob(pattern: string): boolean {
  return GLOB_SYNTAX.test(pattern);
}

/**
 * A list's parts (multi-get's pattern of globs, a list `config set` is given): split at commas outside braces and
 * character classes (`notes/{a,b}.md` and `[b,n]*.md` are one glob each: the class was cut in two, s22 review N1),
 * each trimmed; empty parts dropped.
 */
export function listParts(pattern: string): string[] {
  return listPartsAsWritten(pattern)
    .map((part) => part.trim())
    .filter(Boolean);
}

/**
 * A list's parts as listParts splits it, each as written (blanks kept) and empty ones too: joined again with commas,
 * a run of them is the text a comma cut (a name with a comma, `Smith, J.md`, in multi-get's list).
 */
export function listPartsAsWritten(pattern: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inClass = false;
  let from = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\")
      i++; // an escaped character is itself
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "{") depth++;
    else if (c === "}") depth = Math.max(0, depth - 1);
    else if (c === "," && depth === 0) {
      parts.push(pattern.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(pattern.slice(from));
  // A brace or class never closed is no glob's: its commas split as any (`a{b.md,c.md` hid `c.md` in one glob: s21
  // retest R8).
  return depth > 0 || inClass ? pattern.split(",") : parts;
}
