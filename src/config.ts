/** The home folder and `config.yaml`: schema, defaults, validated reads and atomic writes. */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type * as Valibot from "valibot";
import { FILE_TYPES, fileTypeNames } from "./file-types.ts";
import { readDenied, ResearcherError, systemCode, writeDenied } from "./errors.ts";
import { writeFileAtomic } from "./atomic.ts";
import { danglingLink, repositoryFolder } from "./files.ts";
import { leftoverTempFiles, withConfigLock } from "./lock.ts";
import { env } from "./env.ts";
import { parseYaml, stringifyYaml, yamlError } from "./yaml.ts";
import { listParts } from "./path-glob.ts";
import { REQUESTED_MODES } from "./search-modes.ts";
import { own } from "./own.ts";
import { similarNames } from "./similar.ts";
import { BUILT_COMMIT, VERSION } from "./version.ts";

/** Source code's fragment budget (chunk.code_tokens): see the schema below. */
export const DEFAULT_CODE_TOKENS = 512;

export const REPO_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Names every JavaScript object already has (`constructor`, `toString`, `__proto__`, …, and `prototype`): a
 * repository named so would be found where there is none, or be dropped when config.yaml is read, and a setting's
 * key through one would reach the object's prototype. Neither may take one.
 */
const RESERVED_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), "prototype"]);
export const isReservedName = (name: string) => RESERVED_NAMES.has(name);

/** A repository's `ocr` setting: `auto` pages with (almost) no text layer, `always` every scanned page, `off` none. */
export const OCR_MODES = ["auto", "always", "off"] as const;

/**
 * The longest time limit a timer can keep: past 2^31 − 1 ms a timer fires at once, and a "no limit" of 3,000,000 s
 * failed every PDF as having taken longer than it.
 */
const MAX_TIMER_SECONDS = 2_147_483;
/** A description or a context goes out with every search result: a sentence or two, not a document. */
export const MAX_TEXT_CHARS = 1000;
/** A context's path prefix is a path inside the repository (PATH_MAX). */
const MAX_PREFIX_CHARS = 4096;
/** More conversion threads than this buys no speed on any machine this runs on, only memory. */
const MAX_CONVERT_WORKERS = 64;

/**
 * Loaded and built on first use: valibot and the schema cost start-up time, and a search reads the validated JSON
 * copy of the config instead.
 */
const valibot = () => require("valibot") as typeof Valibot;

function schemas() {
  const v = valibot();
  const Provider = v.picklist(["local", "ollama", "openai"]);
  // An embedding server is reached over HTTP: Bun's fetch reads `file:` URLs from the disk (file:///etc/passwd was
  // taken, and read as an embeddings response).
  const HttpUrl = v.pipe(
    v.string(),
    v.url(),
    v.check((url) => /^https?:\/\//i.test(url), "must be an http:// or https:// URL"),
  );

  const EmbeddingSchema = v.strictObject({
    provider: v.optional(Provider, "local"),
    /** A model id (hub or provider) or an absolute path to a local model folder. */
    model: v.optional(v.string()),
    pooling: v.optional(v.picklist(["mean", "cls"])),
    query_prefix: v.optional(v.string()),
    document_prefix: v.optional(v.string()),
    dtype: v.optional(v.picklist(["fp32", "fp16", "q8", "int8", "uint8", "q4"])),
    batch_size: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1024))),
    /**
     * Requests in flight at once to an Ollama or OpenAI-compatible server (the local model runs one batch at a time).
     */
    parallel: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(64))),
    ollama_url: v.optional(HttpUrl),
    openai_url: v.optional(HttpUrl),
  });

  const RepositorySchema = v.strictObject({
    path: v.pipe(v.string(), v.minLength(1)),
    /** Every result's context where no context of its own is set: a sentence or two, as a context is (checkBounds). */
    description: v.optional(v.nullable(v.string()), null),
    // An empty list, which an older release let `config set` write, reads as the default (refused, it failed every
    // command, the `config set` that would fix it included: s22 review F6); an edit may not write one (checkBounds).
    file_types: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9]+$/))),
        v.transform((types) => (types.length ? types : [...FILE_TYPES])),
      ),
      () => [...FILE_TYPES],
    ),
    exclude: v.optional(v.array(v.string()), []),
    embed: v.optional(v.boolean(), true),
    ignore_files: v.optional(v.boolean(), true),
    embedding: v.optional(v.partial(EmbeddingSchema)),
    /** Path prefix → what the documents under it are (`researcher context add`). */
    contexts: v.optional(v.record(v.string(), v.pipe(v.string(), v.minLength(1))), () => ({})),
    /** OCR of scanned pages (default auto): `auto` pages with (almost) no text layer, `always` every page with a
     * page-sized image, `off` none. */
    ocr: v.optional(v.picklist(OCR_MODES), "auto"),
    /** Tesseract language codes (default [eng], built in); the others are read from `ocr_data`. */
    ocr_languages: v.optional(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_]+$/))), () => ["eng"]),
    /** A folder with `<code>.traineddata` (or `.traineddata.gz`) files. */
    ocr_data: v.optional(v.string()),
    added: v.optional(v.string()),
  });

  const ConfigSchema = v.strictObject({
    repositories: v.optional(
      v.pipe(
        v.record(
          v.pipe(
            v.string(),
            v.regex(REPO_NAME, "must use only letters, digits, '-' and '_'"),
            v.check((name) => !isReservedName(name), "is a name JavaScript objects reserve"),
          ),
          RepositorySchema,
        ),
      ),
      {},
    ),
    search: v.optional(
      v.strictObject({
        limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10000)), 10),
        mode: v.optional(v.picklist(REQUESTED_MODES), "auto"),
      }),
      {},
    ),
    chunk: v.optional(
      v.strictObject({
        tokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(32), v.maxValue(8192)), 350),
        /**
         * Source code's budget: a function is code's unit of meaning, and at 350 a fifth of documented functions of
         * 5–60 lines cannot be returned whole (bench/code.ts). 512 is the default embedding models' window.
         */
        code_tokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(32), v.maxValue(8192)), DEFAULT_CODE_TOKENS),
        overlap: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(0.5)), 0.15),
      }),
      {},
    ),
    index: v.optional(
      v.strictObject({
        max_file_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 50 * 1024 * 1024),
        /** Seconds one file may take to convert before it is recorded as failed (at most a timer's ~24.8 days). */
        convert_timeout: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(MAX_TIMER_SECONDS)), 60),
        /**
         * Memory (MB) one conversion may use by itself (see ConvertPool); the file that needs more fails with a reason.
         */
        convert_memory_mb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 900),
        /**
         * Conversion worker threads; 0 means one per core. Each may use convert_memory_mb: a few thousand filled
         * memory, so at most MAX_CONVERT_WORKERS run, and a command sets no more (checkBounds).
         */
        convert_workers: v.optional(
          v.pipe(
            v.number(),
            v.integer(),
            v.minValue(0),
            v.transform((workers) => Math.min(workers, MAX_CONVERT_WORKERS)),
          ),
          0,
        ),
        /** Seconds OCR of one scanned page may take; it does not count against convert_timeout. */
        ocr_page_timeout: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(MAX_TIMER_SECONDS)), 120),
      }),
      {},
    ),
    watch: v.optional(
      v.strictObject({
        /** Quiet time after the last file event before a batch is applied (`researcher watch`, `serve --watch`). */
        debounce_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(60_000)), 300),
      }),
      {},
    ),
    embedding: v.optional(EmbeddingSchema, {}),
  });
  return { ConfigSchema, RepositorySchema, EmbeddingSchema };
}

let built: ReturnType<typeof schemas> | undefined;
const configSchema = () => {
  built ??= schemas();
  return built.ConfigSchema;
};

type Schemas = ReturnType<typeof schemas>;
export type Config = Valibot.InferOutput<Schemas["ConfigSchema"]>;
export type EmbeddingConfig = Valibot.InferOutput<Schemas["EmbeddingSchema"]>;

/** `--home` beats `RESEARCHER_HOME` beats `~/.researcher`. */
export function resolveHome(flag?: string): string {
  // An empty name (an unset variable) would be the user's real home: a script meant for a private one, `repo remove`
  // in it, deleted the real index.
  if (flag !== undefined && !flag.trim()) throw new ResearcherError("USAGE", "--home needs a folder (got an empty one)");
  const named = flag ?? env.home();
  if (!named.trim())
    throw new ResearcherError("USAGE", "RESEARCHER_HOME is set but empty", { hint: "point it at a folder, or unset it for ~/.researcher" });
  const home = resolve(named);
  const hint = flag ? "name a folder as the home (or move the file away)" : "point RESEARCHER_HOME at a folder (or move the file away)";
  // A file there would fail every write deep inside (EEXIST from mkdir) while reads said "no repositories yet".
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(home, { throwIfNoEntry: false });
  } catch (error) {
    // A file on the way to it (`RESEARCHER_HOME=notes.txt/home`): ENOTDIR, and no hint, before; a name past the
    // file system's 255 bytes was "unexpected".
    if (systemCode(error) === "ENAMETOOLONG")
      throw new ResearcherError("PATH_NOT_FOUND", `the home folder ${home} cannot exist: a name in it is too long`, {
        hint: `${flag ? "name" : "point RESEARCHER_HOME at"} a folder whose names are at most 255 bytes each`,
      });
    if (systemCode(error) !== "ENOTDIR") throw error;
    throw new ResearcherError("PATH_NOT_FOUND", `the home folder ${home} cannot be a folder: a file stands on its path`, { hint });
  }
  if (stats?.isDirectory() === false)
    throw new ResearcherError("PATH_NOT_FOUND", `the home folder ${home} is a file, not a folder`, { hint });
  return home;
}

export const configPath = (home: string) => join(home, "config.yaml");
export const repositoryDir = (home: string, name: string) => join(home, "repositories", name);

/** `hint` says how to fix it: by hand for the file (`config set` reads the file first, so it cannot help). */
function parseConfig(input: unknown, source: string, hint?: string): Config {
  refuseReservedRepositories(input, source);
  const v = valibot();
  const result = v.safeParse(configSchema(), input ?? {});
  if (result.success) return result.output;
  const issue = result.issues[0];
  const key = v.getDotPath(issue) ?? "(top level)";
  throw new ResearcherError("INVALID_CONFIG", `${key}: ${issueText(issue)} (${source})`, {
    // Not `config show`: it reads the same file, and fails the same way.
    hint: hint ?? `fix ${key} in ${source} by hand; the README's Configuration lists every setting and the values it takes`,
  });
}

/**
 * A repository named like a property every object has: valibot's records drop `constructor`, `prototype` and
 * `__proto__` without a word (an older release could write one), so it is named here, before validation.
 */
function refuseReservedRepositories(input: unknown, source: string): void {
  const repositories = (input as { repositories?: unknown } | null)?.repositories;
  if (!repositories || typeof repositories !== "object") return;
  const reserved = Object.keys(repositories).find(isReservedName);
  if (reserved === undefined) return;
  throw new ResearcherError("INVALID_CONFIG", `repositories.${reserved}: is a name JavaScript objects reserve (${source})`, {
    hint: `rename it in config.yaml by hand, and its index folder repositories/${reserved} with it`,
  });
}

/**
 * A validation issue in the words of a settings file rather than of its schema: valibot says "Invalid key:
 * Expected never" for a key that does not exist and `("a" | "b")` for a choice.
 */
function issueText(issue: { expected: string | null; received: string; message: string }): string {
  if (issue.expected === "never") return "no such setting";
  // A message of the schema's own (valibot's begin "Invalid …") says it better than the expected value does.
  if (!issue.expected || !issue.message.startsWith("Invalid ")) return issue.message;
  const choices = /^\((".*")\)$/.exec(issue.expected)?.[1];
  const expected = choices ? `one of ${choices.replaceAll('"', "").replaceAll(" | ", ", ")}` : issue.expected;
  return `expected ${expected}, got ${issue.received}`;
}

/** Parsed configs by file, reused while the file is unchanged (stampOf; servers search many times). */
const cache = new Map<string, { stamp: string; config: Config }>();

/**
 * The validated config. A validated copy is kept beside config.yaml as JSON, keyed by config.yaml's stamp (size,
 * times, file), so a command reads it without parsing YAML or running the schema: that alone was most of a cold search.
 * A config.yaml that does not exist is an empty configuration, unless `missing: "refuse"`: a follower of the registry
 * (watch) must not read a file gone for a moment (deleted and written again) as every repository removed, and the
 * check is this read's own, not a second look before it (s25 review R10).
 */
export function loadConfig(home: string, { missing = "empty" }: { missing?: "empty" | "refuse" } = {}): Config {
  const file = configPath(home);
  const dangling = danglingLink(file);
  // Read as no configuration, every repository seemed gone ("no repositories yet"), while only a write said why.
  if (dangling !== undefined) {
    throw new ResearcherError("INVALID_CONFIG", `${file} is a link to ${dangling}, which does not exist`, {
      hint: "mount or restore what it points to (a dotfiles folder?), or remove the link to start a new configuration",
    });
  }
  const stamp = existsSync(file) ? `${writerKey()}|${stampOf(file)}` : "absent";
  if (stamp === "absent" && missing === "refuse") {
    // Not "register them again": a `repo add` meanwhile writes a config.yaml of that one repository (s25b retest N2).
    throw new ResearcherError("INVALID_CONFIG", `${file} is missing`, {
      hint: "restore it: until it is back, a watch goes on as it was and index runs wait",
    });
  }
  const cached = cache.get(file) ?? readValidatedCopy(home);
  if (cached?.stamp === stamp) return structuredClone(cached.config);
  const config = stamp === "absent" ? parseConfig({}, file) : readConfigFile(file);
  cache.set(file, { stamp, config });
  if (stamp !== "absent") writeValidatedCopy(home, { stamp, config });
  return structuredClone(config);
}

/**
 * What tells a changed config.yaml: its size and times, and which file it is. The change time too, which every write
 * sets and nothing sets back: an edit that kept the size on a file system of coarse times, or a copy restored with
 * its mtime (`cp -p`, `rsync -a`), was read as the old configuration.
 */
function stampOf(file: string): string {
  const stats = statSync(file);
  return `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.ino}:${stats.dev}`;
}

const validatedCopyPath = (home: string) => join(home, ".config.validated.json");

let writer: string | undefined;

/**
 * Which researcher validated a copy, part of its stamp: one another build wrote may lack what this one's schema
 * fills in (a default added since: after an upgrade every command failed on `repo.ocr_languages`, s21 retest R0), so
 * it is validated again from config.yaml. A build is its version and commit; a source checkout, this file as it is
 * and the defaults its schema fills in, some of which other modules hold (`file_types`: s22 review F5).
 */
function writerKey(): string {
  writer ??= BUILT_COMMIT !== undefined ? `${VERSION}+${BUILT_COMMIT}` : sourceKey();
  return writer;
}

function sourceKey(): string {
  const defaults = JSON.stringify(parseConfig({ repositories: { sample: { path: "/" } } }, "the defaults"));
  return Bun.hash(readFileSync(import.meta.path) + defaults).toString(36);
}

/** The cached copy, or nothing when it is missing, unreadable or not a plain file (a FIFO there would block). */
function readValidatedCopy(home: string): { stamp: string; config: Config } | undefined {
  try {
    const file = validatedCopyPath(home);
    const stats = statSync(file);
    if (!stats.isFile() || stats.size > MAX_CONFIG_BYTES * 4) return undefined;
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

function writeValidatedCopy(home: string, entry: { stamp: string; config: Config }): void {
  try {
    writeFileAtomic(validatedCopyPath(home), JSON.stringify(entry));
  } catch {
    // a read-only home still works, only slower
  }
}

function readConfigFile(file: string): Config {
  const raw = readUserSettings(file);
  return raw === undefined ? emptyConfig(file) : parseConfig(raw, file);
}

/** Larger than any config.yaml a person writes: a link to a device or a huge file is refused, not read. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/** What config.yaml itself says: only the keys the user set (`undefined` for an empty file), not yet validated. */
function readUserSettings(file: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    // Checked first: a FIFO (secrets piped in) would block every command, a link to /dev/zero never end.
    const stats = statSync(file);
    if (!stats.isFile() || stats.size > MAX_CONFIG_BYTES) {
      const what = stats.isFile() ? `larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MB` : "not a regular file";
      throw new ResearcherError("INVALID_CONFIG", `${file} is ${what}`, {
        hint: stats.isFile()
          ? "remove entries it no longer needs by hand (contexts, descriptions); `researcher config path` prints where it is"
          : "make it a regular YAML file; `researcher config path` prints where it is",
      });
    }
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (error instanceof ResearcherError) throw error;
    throw readDenied(error, file) ?? error;
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    const { line, reason } = yamlError(error);
    throw new ResearcherError("INVALID_CONFIG", `${file}${line ? `:${line}` : ""}: not valid YAML (${reason})`, {
      hint: "fix the file by hand; `researcher config path` prints where it is",
      cause: error,
    });
  }
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new ResearcherError(
      "INVALID_CONFIG",
      `${file}: must be a mapping of settings (key: value), not ${Array.isArray(raw) ? "a list" : "plain text"}`,
      {
        hint: "fix the file by hand; `researcher config path` prints where it is",
      },
    );
  }
  return raw as Record<string, unknown>;
}

/**
 * A config.yaml with nothing in it. In a new home that is the defaults; where indexes exist it was emptied (an
 * editor, a full disk, a bad copy), and reading it as "no repositories" would silently unregister all of them.
 */
function emptyConfig(file: string): Config {
  const indexed = indexedRepositories(dirname(file));
  if (indexed.length === 0) return parseConfig({}, file);
  throw new ResearcherError("INVALID_CONFIG", `${file} is empty, but indexes exist for: ${indexed.join(", ")}`, {
    hint: "restore config.yaml from a backup, or delete it and register each folder again with `researcher repo add <name> <path>` (the indexes are kept)",
  });
}

/** Names of the index folders in `repositories/` that hold an index.db. */
function indexedRepositories(home: string): string[] {
  const root = join(home, "repositories");
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, "index.db")))
    .map((entry) => entry.name)
    .sort();
}

/** The settings a user wrote in config.yaml, as `updateConfig` hands them to an edit. */
export type UserSettings = Record<string, unknown>;

/**
 * Change config.yaml: `edit` changes the settings the user wrote (never the defaults, which stay out of the file,
 * so a later release's defaults still reach every key nobody set). The result is validated before it is written,
 * atomically; a rejected edit changes nothing. `source` and `hint` name the edit in a validation error.
 */
export function updateConfig(home: string, edit: (settings: UserSettings) => void, source?: string, hint?: string): Config {
  // Read, edited and written under config.yaml's lock: two edits at once would each write over the other's.
  return withConfigLock(home, () => {
    const file = configPath(home);
    cache.delete(file); // read as it is now, after any edit another process made
    loadConfig(home); // the file as it is must be valid (and not emptied while indexes exist) before it is changed
    const settings = (existsSync(file) && readUserSettings(file)) || {};
    const before = structuredClone(settings);
    edit(settings);
    const checked = parseConfig(settings, source ?? file, hint);
    checkBounds(before, settings);
    const text = stringifyYaml(settings);
    // A file past what is read back would fail every command after, `context remove` included.
    if (Buffer.byteLength(text) > MAX_CONFIG_BYTES) {
      throw new ResearcherError("INVALID_INPUT", `${file} would grow past ${MAX_CONFIG_BYTES / 2 ** 20} MB; nothing was changed`, {
        hint: "remove contexts or descriptions that are no longer needed (`researcher context list` lists the contexts)",
      });
    }
    try {
      writeFileAtomic(file, text);
    } catch (error) {
      throw writeDenied(error, file, home) ?? error;
    }
    // What writes killed midway left in the home (config.yaml's, its validated copy's, a lock takeover's) goes here,
    // under the lock: nothing else would ever remove them.
    for (const name of leftoverTempFiles(home)) {
      try {
        rmSync(join(home, name), { force: true });
      } catch {
        // housekeeping after a write that has landed: the next write tries again, and this one succeeded
      }
    }
    cache.delete(file);
    rmSync(validatedCopyPath(home), { force: true });
    return checked;
  });
}

/**
 * Bounds on what a command writes, not on what config.yaml holds: a value an older release wrote is read as it is
 * (refusing it failed every command, the `config set` that would fix it included), and only a value an edit
 * changes must keep them. `before` and `after` are the user's settings, `after` already valid.
 */
function checkBounds(before: UserSettings, after: UserSettings): void {
  const at = (settings: UserSettings, path: string[]) =>
    path.reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as UserSettings)[key] : undefined), settings);
  const changed = (path: string[]) => at(after, path) !== at(before, path);
  const refuse = (what: string, why: string, hint: string) => {
    throw new ResearcherError("INVALID_INPUT", `${what}: ${why}; nothing was changed`, { hint });
  };
  const workers = at(after, ["index", "convert_workers"]) as number | undefined;
  if (workers !== undefined && workers > MAX_CONVERT_WORKERS && changed(["index", "convert_workers"]))
    refuse(
      "index.convert_workers",
      `expected <=${MAX_CONVERT_WORKERS}, got ${workers}`,
      "each worker may use index.convert_memory_mb; 0 is one per core",
    );
  const textHint = "say in a sentence or two what these documents are: it goes out with every result from them";
  for (const [name, repo] of Object.entries((after.repositories ?? {}) as Record<string, UserSettings>)) {
    // An empty list would leave every document out at the next run (as `repo add --file-types ''` is refused).
    const types = ["repositories", name, "file_types"];
    if (JSON.stringify(repo.file_types) === "[]" && JSON.stringify(at(before, types)) !== "[]")
      refuse(types.join("."), "needs at least one extension, e.g. [md, txt, pdf]", "name the extensions to index, e.g. [md, txt, pdf]");
    const description = repo.description;
    if (typeof description === "string" && changed(["repositories", name, "description"]) && [...description].length > MAX_TEXT_CHARS)
      refuse(`repositories.${name}.description`, `at most ${MAX_TEXT_CHARS} characters, got ${[...description].length}`, textHint);
    for (const [prefix, context] of Object.entries((repo.contexts ?? {}) as Record<string, string>)) {
      if (!changed(["repositories", name, "contexts", prefix])) continue;
      // Not named in full: a prefix past the bound is a page of text.
      if ([...prefix].length > MAX_PREFIX_CHARS)
        refuse(
          `a context's path prefix in ${name}`,
          `at most ${MAX_PREFIX_CHARS} characters, got ${[...prefix].length}`,
          "a prefix is a path inside the repository",
        );
      if ([...context].length > MAX_TEXT_CHARS)
        refuse(`the context of ${name}:${prefix}`, `at most ${MAX_TEXT_CHARS} characters, got ${[...context].length}`, textHint);
    }
  }
}

/**
 * `config set repositories.<name>.…` changes a repository `repo add` made, with `repo add`'s check on a path
 * (`repositoryFolder`: an empty path or the root is refused, as an unset variable makes them). Returns the value
 * to write for a path, undefined for any other key.
 */
function repositoryValue(settings: UserSettings, parts: string[], value: string): string | undefined {
  const [section, name, field] = parts;
  if (section !== "repositories" || name === undefined) return undefined;
  const repositories = (settings.repositories ?? {}) as UserSettings;
  if (!(name in repositories)) {
    throw new ResearcherError("INVALID_INPUT", `no repository named '${name}'`, {
      hint: `add it with \`researcher repo add ${name} <folder>\``,
    });
  }
  if (field !== "path" || parts.length !== 3) return undefined;
  return repositoryFolder(value);
}

/**
 * Apply `config set a.b.c value`: the value is read as a YAML scalar so numbers and booleans keep their type, and a
 * list setting's as its items separated by commas (`md,py`), as `repo add --file-types` takes them, or a YAML list.
 */
export function setConfigValue(home: string, key: string, value: string): Config {
  const parts = key.split(".");
  if (parts.some((part) => part === "")) {
    const meant = key.split(".").filter(Boolean).join(".");
    throw new ResearcherError("INVALID_INPUT", `config key '${key}' has an empty part`, {
      hint: meant ? `did you mean ${meant}?` : "name it with dots between words: search.limit",
    });
  }
  const reserved = parts.find(isReservedName);
  if (reserved) throw new ResearcherError("INVALID_INPUT", `config key ${key}: there is no setting '${reserved}'`);
  const set = (settings: UserSettings) => {
    const written = repositoryValue(settings, parts, value);
    let node = settings;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (next === undefined) node[part] = {};
      else if (typeof next !== "object" || next === null || Array.isArray(next))
        throw new ResearcherError("INVALID_INPUT", `config key ${key}: ${part} is not a section`);
      node = node[part] as UserSettings;
    }
    node[parts.at(-1)!] = written ?? (isListSetting(parts) ? listValue(parts, value) : parseScalar(value));
  };
  const meant = meantSetting(home, parts);
  return updateConfig(
    home,
    set,
    "config set",
    meant
      ? `did you mean ${meant}?`
      : "`researcher config show` prints every setting; the README's Configuration says the values each takes",
  );
}

/**
 * Whether the setting at `parts` holds a list (a repository's `file_types`, `exclude`, `ocr_languages`), by the
 * schema itself.
 */
function isListSetting(parts: string[]): boolean {
  return settingAt(parts)?.node.type === "array";
}

type SchemaNode = { type: string; wrapped?: SchemaNode; value?: SchemaNode; entries?: Record<string, SchemaNode> };

/**
 * The schema's node of the setting at `parts` and its key: each part as given, or with `near` a part that names no
 * setting as the nearest one that does (similarNames: `search.limt` is search.limit). Undefined past a part that
 * names none.
 */
function settingAt(parts: string[], near = false): { node: SchemaNode; key: string[] } | undefined {
  const unwrap = (node: SchemaNode | undefined) => {
    while (node?.wrapped) node = node.wrapped; // optional(…), nullable(…)
    return node;
  };
  let node = unwrap(configSchema() as unknown as SchemaNode);
  const key: string[] = [];
  for (const part of parts) {
    const entries = node?.type === "record" ? undefined : (node?.entries ?? {});
    const name = !entries || own(entries, part) ? part : near ? similarNames(part, Object.keys(entries))[0] : undefined;
    if (name === undefined) return undefined;
    key.push(name);
    node = unwrap(entries ? entries[name] : node?.value);
  }
  return node && { node, key };
}

/**
 * The setting a key that names none was likely meant as, for its error's hint: a repository's without its section
 * (`vault.description` for repositories.vault.description, as README's examples write it) or a misspelled one
 * (`search.limt`). They had only the generic hint (s26 user F3). Undefined for a key that is a setting, or near none.
 */
function meantSetting(home: string, parts: string[]): string | undefined {
  if (settingAt(parts)) return undefined;
  const repository = Object.hasOwn(loadConfig(home).repositories, parts[0]!);
  const meant = settingAt(repository ? ["repositories", ...parts] : parts, true);
  // A value is set to a setting, not a section (`vault` alone is no repositories.vault).
  return meant && !meant.node.entries && meant.node.type !== "record" ? meant.key.join(".") : undefined;
}

/**
 * A list setting's value: a YAML list (`[md, py]`), else its items between commas (`md,py`; `''` is none); a
 * repository's file types as `repo add --file-types` keeps them (`.py`, `PY` → `py`).
 */
function listValue(parts: string[], value: string): unknown {
  const yaml = /^\s*\[/.test(value) ? parseScalar(value) : undefined;
  const items = Array.isArray(yaml) ? yaml : listParts(value);
  return parts[0] === "repositories" && parts.at(-1) === "file_types" ? fileTypeNames(items.map(String)) : items;
}

/** YAML scalars (`20`, `true`, `[md, txt]`) keep their type; anything else, e.g. `a: b`, stays the literal text. */
function parseScalar(value: string): unknown {
  const trimmed = value.trim();
  if (trimmed === "") return "";
  try {
    const parsed = parseYaml(value);
    if (typeof parsed === "object" && parsed !== null && !/^[[{]/.test(trimmed)) return value;
    return parsed;
  } catch {
    return value;
  }
}
