/** Walking a repository folder: which files are candidates for the index, and what could not be looked at. */
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync, type Dirent, type Stats } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { CODE_LANGUAGES, type CodeLanguage, fileTypeName, indexesCode, scriptLanguages } from "../file-types.ts";
import { own } from "../own.ts";
import { languageOf, SHEBANG_BYTES } from "../convert/code-languages.ts";
import { pathMatcher } from "../path-glob.ts";
import { fileType } from "../convert/convert.ts";
import { describeError, ResearcherError } from "../errors.ts";
import {
  isFileAt,
  isFolder,
  isInside,
  missingRootHint,
  notRegular,
  outsideRoot,
  readConfinedHead,
  readHead,
  readRegularFile,
} from "../files.ts";

export interface DiscoveredFile {
  /** The folder walked (the repository root): reads are confined to it (`readConfinedFile`). */
  root: string;
  /** Path relative to the root, always with `/` separators. */
  path: string;
  size: number;
  mtimeMs: number;
  /** The inode change time and inode number, which the index's stamp holds too (plan.ts Stamp). */
  ctimeMs: number;
  ino: number;
  /**
   * JavaScript of 4 KiB or more that no ignore file's `!` line names: its lines say whether it is minified
   * (isMinified), looked at only when a run would read the file (planChanges): an indexed file unchanged is never
   * opened, but one left out as minified is in no index, so each run reads its head again (64 KiB).
   */
  mayBeMinified?: true;
}

/** What of a file's stats (or of a discovered file) the index's stamp holds (plan.ts Stamp). */
export function stampOf(
  stats: Pick<Stats, "size" | "mtimeMs" | "ctimeMs" | "ino">,
): Pick<DiscoveredFile, "size" | "mtimeMs" | "ctimeMs" | "ino"> {
  return { size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino };
}

export interface DiscoverOptions {
  fileTypes: string[];
  exclude: string[];
  /** Honour `.gitignore` and `.ignore` files inside the folder (default true; `repo add --no-ignore` turns it off). */
  ignoreFiles?: boolean;
  /** The repository root, where `isCandidate` reads ignore files (a `Repository` passes itself). */
  path?: string;
  /** The repository's name, for the hint when its folder is gone (a `Repository` passes itself). */
  name?: string;
  /**
   * The researcher home the repository is registered in: never a document, even inside the root (a watch indexing
   * its own index's writes loops).
   */
  home?: string;
}

export interface Discovery {
  /** Regular files to index, sorted by path. */
  files: DiscoveredFile[];
  /**
   * Files left out because of their type, by extension (`""` for none: in a repository that indexes code, those whose
   * `#!` line names no language it indexes): why a folder of slides finds nothing.
   */
  skippedTypes: Record<string, number>;
  /**
   * Of the files without an extension left out, those whose `#!` line names a code language researcher reads (a
   * Python script in a repository that indexes no Python): a summary tells how to let them in only when there are
   * some (a folder's `LICENSE` got advice about `#!` lines and `--code`: s24 user U5).
   */
  skippedScripts: number;
  /**
   * Generated and vendored code left out, by rule (`node_modules/`, `dist/`, `*.min.js`, a saved web page's
   * `<page>_files/`): how many folders or files each rule skipped, so a summary can say why they are not in the index.
   */
  skippedGenerated: Record<string, number>;
  /** Links to folders, which discovery never follows (`linked/`): why a folder linked into a vault finds nothing. */
  skippedLinks: string[];
  /**
   * Candidates that cannot be indexed (special files, links out of the root, unreadable folders), each with a
   * reason; `gone` when the path leads out of the repository (a link out of the root), so an indexed document there
   * goes, where one that merely cannot be read now is kept.
   */
  problems: { path: string; reason: string; gone?: boolean }[];
  /** Folders that could not be listed: what the index holds under them is kept, never removed. */
  unlisted: string[];
  /** Folders on another device than the folder holding them: a drive or a network share mounted inside the root. */
  mounts: string[];
}

/** Whether an indexed path lies under a folder this discovery could not list: unreadable, not gone. */
export function isUnlisted(discovery: Discovery, path: string): boolean {
  return discovery.unlisted.some((dir) => dir === "" || path.startsWith(`${dir}/`));
}

/** Folders that hold tooling state, never a user's documents. Hidden folders (`.git`, `.venv`) are skipped too. */
const ALWAYS_SKIPPED = new Set(["node_modules", "__pycache__"]);

/**
 * Build output and vendored dependencies of code projects: skipped in repositories that index source code, where
 * they would bury the project's own code under copies and bundles. (A repository of documents keeps them: a
 * `build` folder of notes is the user's.) A source folder of such a name (pypa/build's `src/build/`) is kept by an
 * ignore file's `!build/`, as every rule here is: a negation is the user naming what they want.
 *
 * `third_party/` is vendoring as Google and Chromium name it: each library in it with its README and licence, and a
 * project's own pages kept elsewhere. (`coverage/` is told by what is in it: COVERAGE_REPORT.) Not `out/` (tsc's
 * outDir, but as often a source or notes folder of that name) nor `generated/` (protobuf or GraphQL stubs: often the
 * only code of its kind, no copy of the source): an ignore file leaves those out.
 */
export const GENERATED_FOLDER_NAMES: readonly string[] = ["dist", "build", "target", "vendor", "third_party"];
const GENERATED_FOLDERS = new Set(GENERATED_FOLDER_NAMES);

/** A file (or folder) that makes the folder holding it generated, in repositories that index code. */
interface Marker {
  name: string;
  /** The one folder name it marks, when the name alone is too common to mark any folder. */
  in?: string;
  /** A folder rather than a file. */
  folder?: true;
  /** What the file begins with, when its name alone could be the user's. */
  begins?: string;
}

const CACHEDIR_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55";

/**
 * A test-coverage report in `coverage/` (s27 code F3: the copies of the source its pages hold came first for a question
 * about the source) is told by what its tools write there: Istanbul (nyc, Jest, c8, Karma) `lcov.info` and
 * `lcov-report/`, `coverage-final.json`, `coverage-summary.json`, `clover.xml`, `cobertura-coverage.xml` and its HTML
 * page's `block-navigation.js`; SimpleCov `.last_run.json` and `.resultset.json`; JaCoCo `jacoco.xml` and
 * `jacoco-resources/`, coverlet `coverage.cobertura.xml`. (coverage.py's HTML report writes a `.gitignore` of `*`,
 * which leaves it out.) A `coverage/` with none of them is kept: a `docs/coverage/` of pages on the coverage policy
 * (or an insurance note) was left out by its name alone (s27b retest N3).
 */
const COVERAGE_REPORT: Marker[] = [
  ...["lcov.info", "coverage-final.json", "coverage-summary.json", "clover.xml", "cobertura-coverage.xml"],
  ...["block-navigation.js", ".last_run.json", ".resultset.json", "jacoco.xml", "coverage.cobertura.xml"],
]
  .map((name): Marker => ({ name, in: "coverage" }))
  .concat({ name: "lcov-report", in: "coverage", folder: true }, { name: "jacoco-resources", in: "coverage", folder: true });

/**
 * Markers of generated folders: a Python virtual environment's `pyvenv.cfg` (the standard library's own `venv`
 * package is source, and was left out by its name), the Cache Directory Tagging standard's `CACHEDIR.TAG` (Cargo's
 * `target/`, build caches) beginning with the standard's signature, as tar's `--exclude-caches` checks it (s24
 * hostile H7), and a coverage report's files.
 */
const GENERATED_MARKERS: Marker[] = [{ name: "pyvenv.cfg" }, { name: "CACHEDIR.TAG", begins: CACHEDIR_SIGNATURE }, ...COVERAGE_REPORT];
/** Minified files: one line of generated code, never what a search of the source is after. */
const MINIFIED = /\.min\.[cm]?js$/i;

/**
 * JavaScript minified under another name (`app.bundle.js`, a saved `bundle.js`) is told by its lines: over the first
 * 64 KiB they average more than 400 characters, as a bundle's few lines of tens of kilobytes do (one of 13 lines of
 * 30 KB each was 334 fragments, each line cited 26 times: s27 code F3), and Closure's and Emscripten's output wrapped
 * at 500 does. Of the 1,141 JavaScript files of 4 KiB or more in this project's node_modules, the 26 over 400 are
 * all minified or Emscripten's, and no written file averages 100 (tsc's barrels of long export lines come closest).
 * An average, not the longest line: an inlined asset among ordinary code keeps its file. And few spaces: minifiers
 * take them out (those 26 have under 5 in 100 bytes), while a written module of long string lines (an i18n table,
 * icons' SVG paths) keeps its words' (a table of 50 lines of 500 characters was left out: s27b retest N3); written
 * code has over 10. Files under 4 KiB are not judged (nor opened): a short file of one line is no bundle. CSS is no
 * code here (read as text where file_types names it).
 */
const MINIFIED_LINES = { head: 64 * 1024, atLeast: 4 * 1024, meanOver: 400, spacesUnder: 0.1 };
/** What a summary counts the files MINIFIED_LINES left out under (`skipped_generated`). */
export const MINIFIED_LINES_RULE = "minified *.js";

/** Why a file MINIFIED_LINES leaves out is left out. */
const minifiedReason = (path: string) =>
  `${path} is minified: its lines average over ${MINIFIED_LINES.meanOver} characters, with few spaces (generated code, left out)`;

/** Whether files of this type are JavaScript the repository indexes: those MINIFIED_LINES may leave out. */
function isJavaScript(type: string, types: Set<string>): boolean {
  return types.has(type) && own(CODE_LANGUAGES, type) === "javascript";
}

/** What the heads of files are read into, one buffer for every read: they are synchronous, each done with at once. */
let headBuffer: Uint8Array | undefined;

/** Whether the file at `path` (relative to `root`, confined to it) is minified by its first bytes (MINIFIED_LINES). */
function minifiedAt(root: string, path: string): boolean {
  headBuffer ??= new Uint8Array(MINIFIED_LINES.head);
  const head = readConfinedHead(root, path, MINIFIED_LINES.head, undefined, headBuffer);
  if (!("bytes" in head) || head.bytes.length < MINIFIED_LINES.atLeast) return false;
  let lines = 1;
  let spaces = 0;
  for (const byte of head.bytes) {
    if (byte === 0x0a) lines++;
    else if (byte === 0x20) spaces++;
  }
  return head.bytes.length / lines > MINIFIED_LINES.meanOver && spaces < head.bytes.length * MINIFIED_LINES.spacesUnder;
}

/**
 * Whether a discovered file is minified JavaScript, left out as generated code (MINIFIED_LINES_RULE). Its content
 * decides, so the planner asks only of the files a run would read (new or changed, and those it left out as minified
 * before, which no index records): the walk opened every one of 3,000 unchanged files on each run, 2 s where 40 ms had
 * been (s28 code F2).
 */
export function isMinified(file: DiscoveredFile): boolean {
  return file.mayBeMinified === true && minifiedAt(file.root, file.path);
}

/**
 * A web page a browser saved "complete" (Chrome, Edge, Firefox; Word's "Web Page" too) is `<page>.html` or `.htm`
 * and beside it `<page>_files/`, holding its style sheets, scripts, images and each iframe as `saved_resource.html`:
 * an ad or a cookie banner in there ranked above the page itself (s26 user F5). Such a folder is left out in every
 * repository while its page is beside it; a folder of that name alone is the user's.
 */
const SAVED_PAGE_FILES = /^(.+)_files$/;
/**
 * The page's extensions, as browsers and systems write them (`Page.HTML` and `.xhtml` pages kept theirs: s26b retest
 * N6).
 */
const SAVED_PAGE_EXTENSIONS = [".html", ".htm", ".xhtml", ".HTML", ".HTM", ".XHTML"];
/** What a summary counts the folders of saved pages under (`skipped_generated`). */
const SAVED_PAGE_RULE = "<page>_files/ of a saved <page>.html";

/**
 * The `<page>_files/` folder whose rule a saved page's file decides (`notes/Proj_files` for `notes/Proj.html`), or
 * null for another file: a watch looks at the folder again when the page comes or goes (s27 hostile W1).
 */
export function savedPageFolderOf(path: string): string | null {
  const extension = SAVED_PAGE_EXTENSIONS.find((candidate) => path.endsWith(candidate));
  return extension && path.length > extension.length ? `${path.slice(0, -extension.length)}_files` : null;
}

/**
 * Why discovery leaves a name out as generated or vendored code (`dist/`, `*.min.js`, a saved page's files), or null.
 * `isFileBeside` says whether a file of a name is in the same folder (a saved page's `_files/` needs its page).
 */
function generatedRule(name: string, isDir: boolean, types: Set<string>, isFileBeside: (name: string) => boolean): string | null {
  if (isDir) {
    if (ALWAYS_SKIPPED.has(name)) return `${name}/`;
    const page = SAVED_PAGE_FILES.exec(name)?.[1];
    if (page && SAVED_PAGE_EXTENSIONS.some((extension) => isFileBeside(page + extension))) return SAVED_PAGE_RULE;
    return GENERATED_FOLDERS.has(name) && indexesCode(types) ? `${name}/` : null;
  }
  return MINIFIED.test(name) ? "*.min.js" : null;
}

/**
 * The marker that makes `folder` generated, or null: a regular file by that name (a folder or a link to nothing so
 * named is none) beginning as the marker says, or a folder for a folder's marker. `listed`: whether the folder's
 * listing holds the name, when it is at hand, so only that is read.
 */
function markerOf(folder: string, types: Set<string>, listed: (name: string) => boolean = () => true): Marker | null {
  if (!indexesCode(types)) return null;
  const name = basename(folder);
  const marks = (marker: Marker) => (marker.in === undefined || marker.in === name) && listed(marker.name);
  return GENERATED_MARKERS.find((marker) => marks(marker) && isMarker(join(folder, marker.name), marker)) ?? null;
}

function isMarker(path: string, marker: Marker): boolean {
  if (marker.folder) return isFolder(path);
  const head = readHead(path, marker.begins?.length ?? 0);
  if (!("bytes" in head)) return false;
  return marker.begins === undefined || new TextDecoder().decode(head.bytes) === marker.begins;
}

/**
 * What a marker's folder is called in a reason and a summary's count (`skipped_generated`): `coverage/ with lcov.info`.
 */
const markerName = (marker: Marker) => `${marker.name}${marker.folder ? "/" : ""}`;
const markedRule = (marker: Marker) => `${marker.in ? `${marker.in}/` : "folders"} with ${markerName(marker)}`;

/** Compiled once per list of patterns (a repository's): discovery asks for every file and link. */
const compiledExcludes = new WeakMap<string[], (relativePath: string) => boolean>();

/**
 * Compile `--exclude` globs by the rule `--filter` uses (pathMatcher): a pattern without `/` matches a file or
 * folder name at any depth, like .gitignore, and a name holding glob syntax (`report [v2].md`) is that name first.
 * Names and folders are looked up and globs matched with each path's subjects made once (20,000 excludes, each
 * matched on its own, took a no-change run of 2,000 notes 9.7 s: s21 hostile #11).
 */
function compileExcludes(patterns: string[]): (relativePath: string) => boolean {
  let compiled = compiledExcludes.get(patterns);
  if (!compiled) {
    compiled = patterns.length ? pathMatcher(patterns) : () => false;
    compiledExcludes.set(patterns, compiled);
  }
  return compiled;
}

/**
 * Bun.Glob reads a leading `!` as "everything but": an ignore line `\!name` (a file named `!name`, for git) ignored
 * the whole folder. A leading `!` there is the character.
 */
function literalBang(pattern: string): string {
  return pattern.startsWith("!") ? `\\${pattern}` : pattern;
}

/**
 * Which rules a caller asks about: every one, or (`content: false`) those of names alone, for a caller that plans with
 * planChanges, which looks at the content of the files a run would read (isMinified) and of those alone.
 */
interface Judging {
  content?: boolean;
}

/** Whether a path (relative to the root) is one the repository's settings would index. */
export function isCandidate(path: string, options: DiscoverOptions, judging?: Judging): boolean {
  return candidacy(path, options, judging) === "in";
}

/**
 * `isCandidate` with a third answer: "unknown" when an ignore file on the way cannot be read. Then what the index
 * holds there is neither added to nor removed, as a run leaves such a folder (see UnreadableIgnoreFile).
 */
export function candidacy(path: string, options: DiscoverOptions, judging?: Judging): "in" | "out" | "unknown" {
  const why = leftOutBecause(path, options, judging);
  return why === null ? "in" : why === "unknown" ? "unknown" : "out";
}

/** Why the repository's rules leave `path` out (its type, a hidden or generated part, an exclude, an ignore file,
 * what the file holds), null when they do not, "unknown" when an ignore file on the way cannot be read. */
export function leftOutBecause(path: string, options: DiscoverOptions, { content = true }: Judging = {}): string | "unknown" | null {
  // Hidden first: `.env` is left out as hidden whatever its type (it was "its type (no extension)").
  if (isHidden(path)) return HIDDEN;
  const type = fileType(path);
  const types = wantedTypes(options);
  const scripts = type === "" && options.path ? scriptLanguages(types) : new Set<CodeLanguage>();
  if (!types.has(type) && scripts.size === 0) return `its type (${type ? `.${type}` : "no extension"}) is not one it indexes`;
  const rules = new RulesByFolder(options.path ?? "");
  const verdict = included(path, options, rules);
  if (verdict !== "in" || !content || !options.path) return verdict === "in" ? null : verdict;
  // What the file holds is read once the other rules leave it in: a file without an extension may be a script, and
  // JavaScript may be minified.
  if (scripts.size) return scriptLeftOutBecause(options.path, path, scripts);
  const minified = isJavaScript(type, types) && minifiedAt(options.path, path) && !keptByNegation(path, false, options, rules);
  return minified ? minifiedReason(path) : null;
}

/**
 * Whether the repository's own settings (`file_types`, `exclude`) leave `path` out, rather than a default rule (hidden,
 * generated, a saved page's files) or an ignore file: what `config show` can change.
 */
function leftOutBySettings(path: string, options: DiscoverOptions): boolean {
  return !wantedTypes(options).has(fileType(path)) || compileExcludes(options.exclude)(path);
}

/**
 * Why the repository's rules leave the file `path` out, for a read that found no document there (`get` of a file left
 * out as generated said only "not an indexed document": s27 code F5; the shells pass it to reads as their
 * LeftOutRule), or undefined: when they leave it in (a typo, a file not indexed yet), when an ignore file cannot be
 * read, for a folder (its name is no type), and behind a link, whose target is never looked at nor told (a rule's
 * read of a file beyond a folder link to outside the root said what is there: hostile s8 #5).
 */
export function leftOutOfIndex(options: DiscoverOptions & { path: string }, path: string): LeftOut | undefined {
  const absolute = join(options.path, path);
  // A file that is not there is no rule's doing: it may be a typo (s27b agent F3).
  if (path.endsWith("/") || !isFileAt(absolute) || folderLinkAbove(options.path, path) !== undefined || isLink(absolute)) return undefined;
  const why = leftOutBecause(path, options);
  if (why === null || why === "unknown") return undefined;
  return { why, hint: wayBackIn(path, options) };
}

/** Why a hidden file, or one in a hidden folder, is left out. */
const HIDDEN = "it is hidden, or in a hidden folder";

/** Whether a path is hidden or under a hidden folder: a part of it starts with a dot. */
function isHidden(path: string): boolean {
  return path.split("/").some((part) => part.startsWith("."));
}

/** A rule that leaves a file out, and how to bring it in (a hidden file has no way: s27b retest N8). */
export interface LeftOut {
  why: string;
  hint: string;
}

/** How to bring in a file the repository's rules leave out, by the rule that does. */
export function wayBackIn(path: string, options: DiscoverOptions): string {
  if (isHidden(path)) return "hidden files and folders (a name starting with '.') are never indexed";
  if (leftOutBySettings(path, options))
    return "`researcher config show` shows the repository's file_types and exclude; `config set` changes them, each set whole";
  return "an ignore file's `!name/` line keeps a folder a default rule or an ignore file leaves out, `!name` a file";
}

/**
 * Why a file without an extension is no script of `languages`, or null when it is one. One that is not there may
 * have been (the document of a deleted script goes, as a watch asks of it).
 */
function scriptLeftOutBecause(root: string, path: string, languages: Set<CodeLanguage>): string | null {
  const verdict = isScriptOf(root, path, languages);
  return verdict === true || verdict === "missing" ? null : verdict;
}

/**
 * Whether the file at `path` (relative to `root`) is a script of one of `languages` by its `#!` line: its first
 * bytes alone are read, confined to the root as every read is. "missing" when nothing is there; else why it is no
 * such script (a link out of the root or a FIFO was said to have "no `#!` line": s22 retest N6).
 */
function isScriptOf(root: string, path: string, languages: Set<CodeLanguage>): true | "missing" | string {
  const head = readConfinedHead(root, path, SHEBANG_BYTES);
  if ("reason" in head) return head.missing ? "missing" : head.reason || "it cannot be read";
  const language = languageOf(path, head.bytes);
  if (language !== null && languages.has(language)) return true;
  return `it has no extension, and its first line is no \`#!\` line of a language it indexes (${[...languages].join(", ")})`;
}

/**
 * The code language the `#!` line of the file at `path` (relative to `root`) names, its first bytes alone read,
 * confined to the root; null when it names none or cannot be read.
 */
function scriptLanguageAt(root: string, path: string, realRoot: string): CodeLanguage | null {
  const head = readConfinedHead(root, path, SHEBANG_BYTES, realRoot);
  return "reason" in head ? null : languageOf(path, head.bytes);
}

/**
 * Whether the repository's rules leave `path` in, its type aside: no hidden or generated part, no exclude, no
 * ignore file against it, or why not; "unknown" when an ignore file on the way cannot be read. (A file link's target
 * must be included: a link's name does not let a left-out file in.)
 */
function included(path: string, options: DiscoverOptions, rules = new RulesByFolder(options.path ?? "")): "in" | "unknown" | string {
  const parts = path.split("/");
  const types = wantedTypes(options);
  if (isHidden(path) || parts.includes("")) return HIDDEN;
  const generated = generatedPart(parts, types, options, rules, { lastIsFile: true });
  if (generated) return generated;
  if (compileExcludes(options.exclude)(path)) return "an exclude pattern leaves it out";
  if (options.path && isUnder(path, homeInside(options.path, options))) return "it is researcher's own home (settings and indexes)";
  if (options.ignoreFiles === false || !options.path) return "in";
  // Every folder on the way down may hold ignore files, and an ignored folder hides all below it.
  const folder = parts.slice(0, -1).join("/");
  const above = rules.folder(folder);
  if (above !== "in") return above === "out" ? "an ignore file leaves it out" : above;
  const inFolder = rules.of(folder);
  if (inFolder === "unknown") return "unknown";
  return inFolder.ignores(path, false) ? "an ignore file leaves it out" : "in";
}

/**
 * Why a generated-code rule leaves a path out (a part's name; a folder's marker file, when `lastIsFile` says the
 * path is a file's and its folders can be looked in), or null. A part an ignore file's `!` line keeps is kept.
 */
function generatedPart(
  parts: string[],
  types: Set<string>,
  options: DiscoverOptions,
  rules: RulesByFolder,
  { lastIsFile }: { lastIsFile: boolean },
): string | null {
  const root = options.path;
  for (let i = 0; i < parts.length; i++) {
    const isDir = !lastIsFile || i < parts.length - 1;
    const path = parts.slice(0, i + 1).join("/");
    const isFileBeside = (name: string) => root !== undefined && isFileAt(join(root, ...parts.slice(0, i), name));
    const rule = generatedRule(parts[i]!, isDir, types, isFileBeside);
    const marker = !rule && lastIsFile && isDir && root ? markerOf(join(root, path), types) : null;
    if ((rule || marker) && keptByNegation(path, isDir, options, rules)) continue;
    if (rule === SAVED_PAGE_RULE) return `${path}/ holds the files of the web page saved beside it, left out`;
    if (rule) return `${rule} is generated or vendored code, left out`;
    if (marker) return `${path}/ holds ${markerName(marker)}: generated or vendored code, left out`;
  }
  return null;
}

/** Whether an ignore file's `!` line is the last rule naming `path`: what keeps a generated-looking part in. */
function keptByNegation(path: string, isDir: boolean, options: DiscoverOptions, rules: RulesByFolder): boolean {
  if (options.ignoreFiles === false || !options.path) return false;
  const inFolder = rules.of(path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
  return inFolder !== "unknown" && inFolder.decision(path, isDir) === "named";
}

/** The ignore rules in effect in each folder under a root, read once per folder (discovery asks per link). */
class RulesByFolder {
  private readonly known = new Map<string, IgnoreRules | "unknown">();
  private readonly folders = new Map<string, "in" | "out" | "unknown">();

  constructor(private readonly root: string) {}

  /** Whether the folder `dir` and every folder above it are left in by the ignore files above them. */
  folder(dir: string): "in" | "out" | "unknown" {
    if (dir === "") return "in";
    let verdict = this.folders.get(dir);
    if (verdict === undefined) {
      const parent = dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : "";
      const above = this.folder(parent);
      const rules = above === "in" ? this.of(parent) : above;
      verdict = rules === "out" || rules === "unknown" ? rules : rules.ignores(dir, true) ? "out" : "in";
      this.folders.set(dir, verdict);
    }
    return verdict;
  }

  /** The rules in `dir` (relative to the root), or "unknown" when an ignore file on the way cannot be read. */
  of(dir: string): IgnoreRules | "unknown" {
    let rules = this.known.get(dir);
    if (rules === undefined) {
      const parent = dir === "" ? IgnoreRules.EMPTY : this.of(dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : "");
      rules = parent === "unknown" ? parent : enterOrUnknown(parent, join(this.root, dir), dir);
      this.known.set(dir, rules);
    }
    return rules;
  }
}

function enterOrUnknown(rules: IgnoreRules, absoluteDir: string, relativeDir: string): IgnoreRules | "unknown" {
  try {
    return rules.enter(absoluteDir, relativeDir);
  } catch (error) {
    if (error instanceof UnreadableIgnoreFile) return "unknown";
    throw error;
  }
}

// ---- .gitignore and .ignore ------------------------------------------------------------------------------

export const IGNORE_FILES = [".gitignore", ".ignore"]; // later files win: .ignore overrides .gitignore, as in ripgrep

interface IgnoreRule {
  /** The folder (relative to the root, "" for the root) whose ignore file holds the rule. */
  base: string;
  negate: boolean;
  dirOnly: boolean;
  /** Without a `/` before its end, a pattern matches a name at any depth below its folder. */
  anchored: boolean;
  glob: Bun.Glob;
  /** The name or path the pattern spells when it has no glob syntax: looked up, not matched (IgnoreRules.index). */
  literal?: string;
}

/**
 * gitignore semantics (https://git-scm.com/docs/gitignore) for the rules in effect in one folder: its own ignore
 * files and its ancestors'. The last matching rule decides, deeper files after shallower ones; `!` re-includes;
 * `/x` anchors to the file's folder; `x/` matches folders only; `**` spans folders; `\#`, `\!` and `\ ` escape.
 * A re-included path inside an ignored folder stays ignored, because the walk never enters that folder.
 *
 * Each folder with ignore files of its own is one level holding only those rules, over its parent's level: a
 * folder's rules come after all of its ancestors', so the last of its own rules that matches is the last of all,
 * and the parent decides only when none of its own does. Indexing every inherited rule again per folder cost a
 * monorepo with a `.gitignore` per package its generated root file once per package (500 folders under a
 * 200,000-rule root file: 15 s for a run that changed nothing, s21 F6).
 */
export class IgnoreRules {
  static readonly EMPTY = new IgnoreRules(undefined, []);
  /**
   * The own rules' positions by what they spell (literal ones: most of a generated file's) and the glob rules'
   * positions: a 200,000-rule .gitignore tried every rule on every path (a run that changed nothing took 55 s).
   */
  private index?: { names: Map<string, number[]>; paths: Map<string, number[]>; bases: string[]; globs: number[] };

  private constructor(
    private readonly parent: IgnoreRules | undefined,
    private readonly rules: IgnoreRule[],
  ) {}

  /** The rules for a subfolder: these plus its own ignore files'. */
  enter(absoluteDir: string, relativeDir: string): IgnoreRules {
    const added = IGNORE_FILES.flatMap((name) => parseIgnoreFile(join(absoluteDir, name), relativeDir));
    return added.length ? new IgnoreRules(this, added) : this;
  }

  /** Whether a path (relative to the root) is ignored: by the last rule that matches it, as git decides. */
  ignores(path: string, isDir: boolean): boolean {
    return this.decision(path, isDir) === "ignored";
  }

  /**
   * What the last rule that matches a path says: ignored, kept by a `!` line that names it (`!build/`, no glob: what
   * keeps a generated folder in), kept by a `!` glob (a whitelist's `!*\/` keeps every folder, and brought
   * node_modules back: s23 retest N1), or undefined when no rule matches.
   */
  decision(path: string, isDir: boolean): "ignored" | "named" | "kept" | undefined {
    const last = this.lastMatch(path, isDir);
    if (last < 0) return this.parent?.decision(path, isDir);
    const rule = this.rules[last]!;
    return !rule.negate ? "ignored" : rule.literal !== undefined ? "named" : "kept";
  }

  /** The position of the last of this level's own rules that matches the path, -1 when none does. */
  private lastMatch(path: string, isDir: boolean): number {
    this.index ??= indexRules(this.rules);
    const { names, paths, bases, globs } = this.index;
    const applies = (i: number) => {
      const rule = this.rules[i]!;
      return (!rule.dirOnly || isDir) && (!rule.base || path.startsWith(`${rule.base}/`));
    };
    let last = -1;
    const consider = (positions: number[] | undefined) => {
      for (const i of positions ?? []) if (i > last && applies(i)) last = i;
    };
    consider(names.get(path.slice(path.lastIndexOf("/") + 1)));
    for (const base of bases)
      if (!base || path.startsWith(`${base}/`)) consider(paths.get(`${base}\0${base ? path.slice(base.length + 1) : path}`));
    // The glob rules from the last down, until one matches or none after `last` is left.
    for (let k = globs.length - 1; k >= 0 && globs[k]! > last; k--) {
      const rule = this.rules[globs[k]!]!;
      if (!applies(globs[k]!)) continue;
      const rel = rule.base ? path.slice(rule.base.length + 1) : path;
      if (rule.glob.match(rule.anchored ? rel : rel.slice(rel.lastIndexOf("/") + 1))) last = globs[k]!;
    }
    return last;
  }
}

/** How many rules have been indexed so far (tests check that a folder indexes its own rules, not its ancestors'). */
let indexedRules = 0;
export function rulesIndexed(): number {
  return indexedRules;
}

function indexRules(rules: IgnoreRule[]): NonNullable<IgnoreRules["index"]> {
  indexedRules += rules.length;
  const names = new Map<string, number[]>();
  const paths = new Map<string, number[]>();
  const bases = new Set<string>();
  const globs: number[] = [];
  const add = (map: Map<string, number[]>, key: string, i: number) => {
    const list = map.get(key);
    if (list) list.push(i);
    else map.set(key, [i]);
  };
  rules.forEach((rule, i) => {
    if (rule.literal === undefined) globs.push(i);
    else if (!rule.anchored) add(names, rule.literal, i);
    else {
      bases.add(rule.base);
      add(paths, `${rule.base}\0${rule.literal}`, i);
    }
  });
  return { names, paths, bases: [...bases], globs };
}

/** Why a folder nested past the system's path length (PATH_MAX, 4,096 bytes on Linux) is not indexed. */
const TOO_LONG = "its path is longer than the system allows (ENAMETOOLONG): move or rename folders above it to index it";

/** Larger than any ignore file people write or generate; a bigger one is read as unreadable, not as empty. */
const MAX_IGNORE_FILE_BYTES = 16 * 2 ** 20;

/** A file whose name is not UTF-8: it comes back with U+FFFD in it, and no file has the name it reads as. */
export const UNDECODABLE_NAME = "file name is not valid UTF-8 (rename the file to index it)";

/**
 * An ignore file that is there but cannot be read: what it would leave out is unknown, so its folder is left as
 * it was indexed (nothing added, nothing removed) rather than walked as if it had no rules.
 */
export class UnreadableIgnoreFile extends Error {
  constructor(
    /** The ignore file's name (`.gitignore`, `.ignore`). */
    readonly file: string,
    reason: string,
    /** The system's error code, when opening it failed. */
    readonly code?: string,
  ) {
    super(reason);
  }
}

function parseIgnoreFile(file: string, base: string): IgnoreRule[] {
  const read = readRegularFile(file, MAX_IGNORE_FILE_BYTES);
  if ("reason" in read) {
    if (read.missing) return [];
    const reason = /^larger than/.test(read.reason) ? `larger than ${MAX_IGNORE_FILE_BYTES / 2 ** 20} MiB` : read.reason;
    throw new UnreadableIgnoreFile(
      basename(file),
      `cannot read it (${reason.replace(/^cannot read: /, "")}): its folder is left as it was indexed`,
      read.code,
    );
  }
  return new TextDecoder()
    .decode(read.bytes)
    .split(/\r?\n/)
    .flatMap((line) => {
      const rule = parseIgnoreLine(line, base);
      return rule ? [rule] : [];
    });
}

/**
 * An ignore line without its trailing white space, but for a space escaped with a backslash (`name\ `), as git
 * reads it. Trimmed, not matched: `(?<!\\)\s+$` backtracked quadratically on a long run of spaces inside a line (a
 * 300 KB line held a run for 43 s).
 */
function withoutTrailingSpace(line: string): string {
  const trimmed = line.trimEnd();
  return trimmed.length < line.length && trimmed.endsWith("\\") ? line.slice(0, trimmed.length + 1) : trimmed;
}

export function parseIgnoreLine(line: string, base = ""): IgnoreRule | undefined {
  let pattern = withoutTrailingSpace(line);
  if (pattern === "" || pattern.startsWith("#")) return undefined;
  const negate = pattern.startsWith("!");
  if (negate) pattern = pattern.slice(1);
  // `\#` and `\!` stay escaped: Bun.Glob takes a backslash escape as git does, and a bare leading `!` as negation.
  const dirOnly = pattern.endsWith("/") && !pattern.endsWith("\\/");
  if (dirOnly) pattern = pattern.slice(0, -1);
  // `**/build` is git's way of writing `build` at any depth: the same rule, and so a `!` line of it names the folder
  // (`!**/build/` kept no `build/` out of the generated ones: s24 hostile H7).
  if (/^\*\*\/[^/]+$/.test(pattern)) pattern = pattern.slice(3);
  const anchored = pattern.includes("/");
  pattern = pattern.replace(/^\//, "");
  if (pattern === "") return undefined;
  // `a/**` matches everything inside a; a `**/` prefix also matches at the top. Git has no `{a,b}` alternatives:
  // braces are characters.
  const glob = literalBang(pattern.replace(/\\ /g, " ").replace(/(?<!\\)[{}]/g, "\\$&"));
  // Without `*`, `?`, `[` or an escape, the pattern is the name or path it spells.
  const literal = /[*?[\\]/.test(pattern) ? undefined : pattern;
  return { base, negate, dirOnly, anchored, glob: new Bun.Glob(glob), ...(literal === undefined ? {} : { literal }) };
}

/** Whether files under this folder (relative to the root) could be candidates: not hidden, skipped or excluded. */
export function isCandidateFolder(path: string, options: DiscoverOptions): boolean {
  if (path === "") return true;
  if (isHidden(path) || path.split("/").includes("")) return false;
  const parts = path.split("/");
  // Names only: a marker file is looked for when a batch discovers the folder.
  if (generatedPart(parts, wantedTypes(options), options, new RulesByFolder(options.path ?? ""), { lastIsFile: false })) return false;
  if (options.path && isUnder(path, homeInside(options.path, options))) return false;
  return !compileExcludes(options.exclude)(path);
}

/**
 * Whether discovery leaves out everything under the folder `path` (relative to the root): isCandidateFolder's rules
 * (hidden, generated, excluded, the home), and the ignore files above it (a walk never enters a folder they leave
 * out). One under an ignore file that cannot be read is not known to be left out.
 */
export function leavesOutFolder(path: string, options: DiscoverOptions): boolean {
  // A pattern of what a folder holds (`notes/`, `notes/*`) leaves all its files out, though not the folder itself: a
  // name no file has stands for them.
  if (!isCandidateFolder(path, options) || compileExcludes(options.exclude)(`${path}/\0`)) return true;
  if (options.ignoreFiles === false || !options.path) return false;
  return new RulesByFolder(options.path).folder(path) === "out";
}

/** Where the researcher home lies under `root` (relative, `/`-separated), or undefined when it does not. */
function homeInside(root: string, options: DiscoverOptions): string | undefined {
  if (!options.home) return undefined;
  let real: string;
  try {
    real = realpathSync(options.home);
  } catch {
    return undefined; // no home on disk yet: nothing of it to leave out
  }
  const realRoot = realpathOr(root);
  return isInside(realRoot, real) && real !== realRoot ? relative(realRoot, real).split(sep).join("/") : undefined;
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function isUnder(path: string, folder: string | undefined): boolean {
  return folder !== undefined && (path === folder || path.startsWith(`${folder}/`));
}

/**
 * Why discovery would not reach `path` (a candidate) as it is on disk now, or undefined when it would: it goes
 * through a folder link (discovery never enters one, so a link to an excluded, hidden or ignored folder must not
 * let its files in by another name), or it is a file link to a file the rules leave out. A path that does not
 * exist, or a link out of the root, is reachable: reading it says what is wrong (and drops what the index held).
 * The reason is recorded as discovery records it: a failure of that path.
 */
export function unreachable(path: string, options: DiscoverOptions & { path: string }): string | undefined {
  const folder = folderLinkAbove(options.path, path);
  if (folder !== undefined) return `its folder ${folder} is a link, which discovery does not follow`;
  const absolute = join(options.path, path);
  if (!isLink(absolute)) return undefined;
  try {
    const [realRoot, target] = [realpathSync(options.path), realpathSync(absolute)];
    return isInside(realRoot, target) ? linkedOut(realRoot, target, options) : undefined;
  } catch {
    return undefined; // a broken link: the read reports it
  }
}

/** The first folder link on the way from the root down to the file at `path` (relative to the root), if any. */
export function folderLinkAbove(root: string, path: string, links?: Map<string, boolean>): string | undefined {
  return linkedFolder(root, path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "", links);
}

/**
 * The first folder on the way from the root down to `folder` (relative to the root; itself included) that is a link,
 * if one is: discovery never enters one. `links` caches what was looked at, for a caller that asks of many paths.
 */
export function linkedFolder(root: string, folder: string, links = new Map<string, boolean>()): string | undefined {
  if (folder === "") return undefined;
  const parts = folder.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const above = parts.slice(0, i).join("/");
    if (!links.has(above)) links.set(above, isLink(join(root, above)));
    if (links.get(above)) return above;
  }
  return undefined;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Why a file link's target (real path) may not be followed: out of the root, or a path the rules leave out. */
function linkedOut(realRoot: string, target: string, options: DiscoverOptions, rules?: RulesByFolder): string | undefined {
  if (!isInside(realRoot, target)) return outsideRoot(target);
  const path = relative(realRoot, target).split(sep).join("/");
  const verdict = included(path, { ...options, path: realRoot }, rules);
  if (verdict === "unknown") return `links to ${path}, under an ignore file that cannot be read`;
  return verdict === "in" ? undefined : `links to ${path}, which this repository leaves out`;
}

function wantedTypes(options: DiscoverOptions): Set<string> {
  return new Set(options.fileTypes.map(fileTypeName));
}

/**
 * Every regular file under `root` whose extension is wanted and which no exclude matches. Symlinked files are
 * followed only when their target stays inside the root; symlinked folders are not followed (no cycles, no escaping
 * the repository). A root that cannot be listed is an error, never an empty repository.
 *
 * `under` walks only that folder of the root (a watch event's), judged as the whole walk judges it: links confined
 * to the root, excludes and generated-folder rules on paths from the root, the ignore files above it read as the
 * whole walk reads them. A folder that is not there is an error too.
 */
export function discoverFiles(root: string, options: DiscoverOptions, under = ""): Discovery {
  const types = wantedTypes(options);
  const scripts = scriptLanguages(types);
  const excluded = compileExcludes(options.exclude);
  const realRoot = checkRoot(root, options.name);
  const home = homeInside(realRoot, options);
  if (under) checkRoot(join(root, under), options.name);
  const discovery: Discovery = {
    files: [],
    skippedTypes: {},
    skippedScripts: 0,
    skippedGenerated: {},
    skippedLinks: [],
    problems: [],
    unlisted: [],
    mounts: [],
  };
  // A folder reached through a link holds nothing, as a run's walk never enters one: a watch given the folder of a
  // link made meanwhile (`ln -s / notes/root`) walked the link's target, the whole machine, failing every file.
  if (linkedFolder(root, under) !== undefined) return discovery;

  const honourIgnores = options.ignoreFiles !== false;
  const linkRules = new RulesByFolder(realRoot); // the rules at link targets, read once per folder for the walk
  const walk = (dir: string, path: string, parentRules: IgnoreRules, parentDevice?: number) => {
    const device = deviceOf(dir);
    if (path && parentDevice !== undefined && device !== undefined && device !== parentDevice) discovery.mounts.push(path);
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      if (path === "") throw unreadableRoot(root, error, options.name);
      discovery.unlisted.push(path);
      // A name that is not UTF-8 comes back with U+FFFD in it, and no folder has that name.
      const undecodable = (error as NodeJS.ErrnoException).code === "ENOENT" && path.includes("\ufffd");
      const reason = undecodable
        ? "folder name is not valid UTF-8 (rename the folder to index it)"
        : (error as NodeJS.ErrnoException).code === "ENAMETOOLONG"
          ? TOO_LONG
          : `cannot list folder: ${describeError(error)}`;
      discovery.problems.push({ path: `${path}/`, reason });
      return;
    }
    let rules = parentRules;
    try {
      if (honourIgnores) rules = parentRules.enter(dir, path);
    } catch (error) {
      if (!(error instanceof UnreadableIgnoreFile)) throw error;
      discovery.unlisted.push(path);
      // A folder so deep that its ignore file's path is too long to open: the folder is what cannot be read.
      if (error.code === "ENAMETOOLONG") discovery.problems.push({ path: `${path}/`, reason: TOO_LONG });
      else discovery.problems.push({ path: path ? `${path}/${error.file}` : error.file, reason: error.message });
      return;
    }
    // A folder its own files mark as generated (a virtual environment) is left out once listed, unless kept by a `!`.
    const marker = path && markerOf(dir, types, (name) => entries.some((entry) => entry.name === name));
    if (marker && parentRules.decision(path, true) !== "named") return countGenerated(discovery, markedRule(marker));
    const isFileBeside = (name: string) => isFileAt(join(dir, name));
    for (const entry of entries) {
      if (isHidden(entry.name)) continue;
      const absolute = join(dir, entry.name);
      const relativePath = path ? `${path}/${entry.name}` : entry.name;
      if (excluded(relativePath) || relativePath === home) continue;
      // A link to a folder is told by its target (statted for links alone): a folder rule (`ignored/`) leaves it out.
      const folderLink = entry.isSymbolicLink() && isFolder(absolute);
      const decided = rules.decision(relativePath, entry.isDirectory() || folderLink);
      if (decided === "ignored") continue;
      const generated = decided === "named" ? null : generatedRule(entry.name, entry.isDirectory(), types, isFileBeside);
      if (generated) {
        countGenerated(discovery, generated);
        continue;
      }
      if (entry.isDirectory()) {
        walk(absolute, relativePath, rules, device);
        continue;
      }
      if (folderLink) {
        discovery.skippedLinks.push(`${relativePath}/`);
        continue;
      }
      const type = fileType(entry.name);
      // A file without an extension may be a script of a language the repository indexes: its first bytes say.
      const script = type === "" && scripts.size > 0;
      if (!types.has(type) && !script) {
        if (entry.isFile()) countSkippedType(discovery, type, type === "" ? scriptLanguageAt(root, relativePath, realRoot) : null);
        continue;
      }
      const found = regularFile(absolute, entry.isSymbolicLink(), (target) => linkedOut(realRoot, target, options, linkRules));
      // A link that cannot be followed says nothing of a script: left out by its name, as before there were scripts.
      const language = script && !("reason" in found) ? scriptLanguageAt(root, relativePath, realRoot) : null;
      if (script && (language === null || !scripts.has(language))) {
        if (entry.isFile()) countSkippedType(discovery, type, language);
        continue;
      }
      if ("reason" in found) {
        // A name that is not UTF-8 comes back with U+FFFD in it and cannot be opened by that name.
        const undecodable = !found.reason && !entry.isSymbolicLink() && entry.name.includes("\ufffd");
        const reason = undecodable ? UNDECODABLE_NAME : found.reason;
        if (reason) discovery.problems.push({ path: relativePath, reason, ...(found.gone ? { gone: true } : {}) });
        continue;
      }
      // Whether it is minified is told by its content, which only a run that reads it looks at (isMinified).
      const file: DiscoveredFile = { root, path: relativePath, ...stampOf(found) };
      if (decided !== "named" && found.size >= MINIFIED_LINES.atLeast && isJavaScript(type, types)) file.mayBeMinified = true;
      discovery.files.push(file);
    }
  };
  // A walk of one folder compares it with the folder holding it: it may be a mount itself.
  const start = under ? join(root, under) : root;
  // A folder's walk starts from the rules above it: a `!build/` there keeps what it names below it too.
  const above = under && honourIgnores ? new RulesByFolder(root).of(under.includes("/") ? dirname(under) : "") : IgnoreRules.EMPTY;
  walk(start, under, above === "unknown" ? IgnoreRules.EMPTY : above, under ? deviceOf(dirname(start)) : undefined);
  discovery.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return discovery;
}

function countGenerated(discovery: Discovery, rule: string): void {
  discovery.skippedGenerated[rule] = (discovery.skippedGenerated[rule] ?? 0) + 1;
}

/** Counts a file left out by its type; `script`, the language its `#!` line names, if it has no extension. */
function countSkippedType(discovery: Discovery, type: string, script: CodeLanguage | null): void {
  discovery.skippedTypes[type] = (discovery.skippedTypes[type] ?? 0) + 1;
  if (script !== null) discovery.skippedScripts++;
}

/** The device a folder is on; undefined when it cannot be looked at (listing it then says why). */
function deviceOf(dir: string): number | undefined {
  try {
    return statSync(dir).dev;
  } catch {
    return undefined;
  }
}

/**
 * The mounts (folders on another device than their parent, as a run's walk finds them) on the way from the root down
 * to the folder of `path`, which a file indexed by name (a watch batch, add_to_index) lies under: recorded as a run
 * records what it walked, so that its documents are kept when the drive or share goes away. `devices`: folders
 * already looked at.
 */
export function mountsAbove(root: string, path: string, devices = new Map<string, number | undefined>()): string[] {
  const device = (dir: string) => {
    if (!devices.has(dir)) devices.set(dir, deviceOf(dir ? join(root, dir) : root));
    return devices.get(dir);
  };
  const mounts: string[] = [];
  const folders = path.split("/").slice(0, -1);
  let parent = device("");
  for (let i = 1; i <= folders.length && parent !== undefined; i++) {
    const dir = folders.slice(0, i).join("/");
    const here = device(dir);
    if (here !== undefined && here !== parent) mounts.push(dir);
    parent = here;
  }
  return mounts;
}

export const UNMOUNTED = "not mounted now (it was at the last run): what the index holds under it is kept";

/**
 * Folders that were mounts at the last run (`recorded`) and are not now, as unlisted folders: an unmounted drive or
 * share leaves an empty folder (or none) on the parent's device, and its documents would read as deleted (then be
 * converted again, OCR and all, when it is back). A folder the repository no longer reaches (excluded, ignored) is
 * not kept. `under`: the folder the discovery walked (a watch event's). Returns the folders kept.
 */
export function keepUnmounted(discovery: Discovery, recorded: readonly string[], options: DiscoverOptions, under = ""): string[] {
  const walked = (mount: string) => !under || mount === under || mount.startsWith(`${under}/`);
  const kept = recorded.filter((mount) => walked(mount) && !discovery.mounts.includes(mount) && isCandidateFolder(mount, options));
  for (const mount of kept) {
    discovery.unlisted.push(mount);
    discovery.problems.push({ path: `${mount}/`, reason: UNMOUNTED });
  }
  // What the empty mount point holds on the parent's device is not the share's: it waits with it.
  discovery.files = discovery.files.filter((file) => !kept.some((mount) => file.path.startsWith(`${mount}/`)));
  return kept;
}

/**
 * Whether a repository folder that once held indexed documents now lists nothing: an unmounted drive or a folder
 * being replaced looks like that, so runs and watch remove nothing on its word (a folder that cannot be listed is
 * not empty: it is reported as unreadable).
 */
export function isEmptyFolder(path: string): boolean {
  try {
    return readdirSync(path).length === 0;
  } catch {
    return false;
  }
}

/** The root must be a folder we can list; its real path confines symlinks. */
export function checkRoot(root: string, name?: string): string {
  let stats: Stats;
  try {
    stats = statSync(root);
  } catch (error) {
    throw unreadableRoot(root, error, name);
  }
  if (!stats.isDirectory()) {
    throw new ResearcherError("PATH_NOT_FOUND", `repository folder ${root} is not a folder; nothing was changed`, {
      hint: "put the folder back, or point the repository elsewhere with `researcher repo remove` and `repo add`",
    });
  }
  return realpathSync(root);
}

function unreadableRoot(root: string, error: unknown, name?: string): ResearcherError {
  const gone = (error as NodeJS.ErrnoException).code === "ENOENT" && name !== undefined;
  return new ResearcherError("PATH_NOT_FOUND", `cannot read repository folder ${root}: ${describeError(error)}; nothing was changed`, {
    hint: gone ? missingRootHint(name) : "check that the folder exists and that you may list it (a drive that is not mounted?)",
  });
}

/**
 * A regular file's stats, or why it is not one. Special files (FIFOs, devices, sockets) are reported: reading them
 * blocks forever or never ends; so are links `linkRefused` refuses (out of the root, naming their target, or to a
 * file the repository leaves out) and links that lead nowhere (a document's name says one was meant). A folder,
 * and a file gone since the listing, are left out silently (`reason: ""`). `gone`: the name leads to no document of
 * the repository (a refused link), as opposed to one that may read again (a broken link's target may come back, a
 * FIFO be replaced).
 */
function regularFile(
  absolute: string,
  isLink: boolean,
  linkRefused: (target: string) => string | undefined,
): Stats | { reason: string; gone?: boolean } {
  try {
    if (isLink) {
      const refused = linkRefused(realpathSync(absolute));
      if (refused) return { reason: refused, gone: true };
    }
    const stats = isLink ? statSync(absolute) : lstatSync(absolute);
    if (stats.isFile()) return stats;
    if (stats.isDirectory()) return { reason: "" };
    return { reason: notRegular(stats) };
  } catch (error) {
    return { reason: isLink ? brokenLink(absolute, error) : "" };
  }
}

/** Why a link cannot be followed: its target is missing, it loops, or following it failed. */
function brokenLink(absolute: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  let target = "?";
  try {
    target = readlinkSync(absolute);
  } catch {}
  if (code === "ENOENT") return `a link to ${target}, which does not exist`;
  if (code === "ELOOP")
    return linkCycle(absolute) ? `a link to ${target}, which loops` : `a link to ${target}: a chain of links too long to follow (over 40)`;
  return `cannot follow the link to ${target}: ${describeError(error)}`;
}

/** Whether following links from `absolute` comes back to one already followed (the system says ELOOP past 40 too). */
function linkCycle(absolute: string): boolean {
  const seen = new Set<string>();
  for (let current = absolute; !seen.has(current); ) {
    seen.add(current);
    try {
      current = resolve(dirname(current), readlinkSync(current));
    } catch {
      return false; // the chain ends in something that is no link
    }
  }
  return true;
}
