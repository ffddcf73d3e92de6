/** The command groups of the CLI: `researcher repo|config|model|context <action>`, each with its own parser. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { cac, type CAC } from "cac";
import { configPath, loadConfig, setConfigValue } from "../config.ts";
import { CODE_EXTENSIONS, FILE_TYPES } from "../file-types.ts";
import { chooseModel, clearModels, describeModel, loadEmbedder, modelsDir, requireWeights } from "../embed/embedder.ts";
import { ResearcherError } from "../errors.ts";
import { addRepository, overlappingRepositories, removeRepository, renameRepository } from "../index/repositories.ts";
import { repositoriesOnOtherModel } from "../index/status.ts";
import { downloadProgress, globals, home, json, list, out, repeated, type Flags } from "./cli-options.ts";
import { repositoryJson, repositoryListText, styleFor } from "../serve/render.ts";
import {
  addContext,
  getRepository,
  listContexts,
  listRepositories,
  normalizeFileTypes,
  removeContext,
  repositoryName,
  type AddRepositoryInput,
  type Nesting,
  type Repository,
} from "../repos.ts";
import { escapeControls, shellWord, stderr, stdout } from "../terminal.ts";
import { stringifyYaml } from "../yaml.ts";
import { listDocuments } from "../search/read-document.ts";
import { own } from "../own.ts";

function embeddingFlags(flags: Flags): AddRepositoryInput["embedding"] {
  const provider = flags.embeddingProvider;
  if (provider !== undefined && provider !== "local" && provider !== "ollama" && provider !== "openai") {
    throw new ResearcherError("USAGE", `--embedding-provider must be local, ollama or openai (got ${provider})`);
  }
  const model = flags.embeddingModel === undefined ? undefined : String(flags.embeddingModel);
  return {
    ...(provider ? { provider } : {}),
    ...(model ? { model: existsSync(model) ? resolve(model) : model } : {}),
  };
}

/**
 * The command groups: what each is for, and its parser. `researcher --help` lists a group's commands from the parser
 * (groupDescription): written by hand, repo's left out `rename` (s28 user 6).
 */
export const GROUPS: Record<string, { description: string; build: () => CAC }> = {
  repo: { description: "Manage repositories", build: repoCli },
  config: { description: "Show or change config.yaml", build: configCli },
  model: { description: "Embedding models", build: modelCli },
  context: { description: "Say what the documents under a path are", build: contextCli },
};

/** A group as `researcher --help` lists it: what it is for, then its commands (`Manage repositories: add, …`). */
export function groupDescription(group: string): string {
  const { description, build } = GROUPS[group]!;
  const commands = build().commands.map((command) => command.name);
  return `${description}: ${commands.join(", ")}`;
}

function contextCli(): CAC {
  const cli = globals(cac("researcher context"));
  cli.example('  researcher context add notes:meetings "Weekly team meetings"');
  cli
    .command("add <target> <text>", "Describe the documents under repo:prefix (the longest prefix is a result's context)")
    .example('  researcher context add rust-book:src/ch16 "Concurrency chapter"')
    .action((target: string, text: string, flags: Flags) => {
      const added = addContext(home(flags), String(target), String(text));
      out(`${escapeControls(`context ${added.repository}:${added.prefix} → ${added.context}`)}\n`);
      // Kept either way (documents may come later), but a prefix no indexed path starts with is most often a typo.
      const listed = indexedUnder(home(flags), added.repository, added.prefix);
      if (added.prefix && listed.length === 0)
        stderr.write(`${escapeControls(`warning: no indexed document of ${added.repository} is under '${added.prefix}' (yet)`)}\n`);
    });
  cli
    .command("remove <target>", "Forget the context of repo:prefix")
    .example("  researcher context remove rust-book:src/ch16")
    .action((target: string, flags: Flags) => {
      const removed = removeContext(home(flags), String(target));
      out(`${escapeControls(`removed context ${removed.repository}:${removed.prefix}`)}\n`);
    });
  cli
    .command("list", "Every context, by repository and prefix")
    .option("--json", "Print [{repository, prefix, context}]")
    .example("  researcher context list --json")
    .action((flags: Flags) => {
      const contexts = listContexts(home(flags));
      if (flags.json) return json(contexts);
      if (contexts.length === 0) stderr.write("no contexts yet: researcher context add <repo>:<prefix> <text>\n");
      out(contexts.map((c) => `${escapeControls(`${c.repository}:${c.prefix}`)}\t${escapeControls(c.context)}\n`).join(""));
    });
  return cli;
}

/** The documents indexed under `prefix` of a repository: none when it has no index yet. */
function indexedUnder(homeDir: string, repository: string, prefix: string) {
  try {
    return listDocuments(homeDir, { repositories: [repository], prefix }).documents;
  } catch {
    return []; // never indexed (or unreadable): nothing is under the prefix yet
  }
}

/**
 * The warnings of `repo add` for a repository whose documents another one indexes too (nested in it, or holding it),
 * and for each outer repository one hint: the command that sets its whole exclude list to leave every inner one to
 * itself (s29 user F3), those added before too. A hint per inner repository each replaced the list, so run in turn
 * they left out only the last (s29b retest P1, s29c retest Q2).
 */
function overlapWarnings(home: string, repo: Repository): string {
  const byOuter = new Map<string, Nesting[]>();
  for (const nesting of overlappingRepositories(home, repo)) {
    byOuter.set(nesting.outer.name, [...(byOuter.get(nesting.outer.name) ?? []), nesting]);
  }
  const everyInner = (outer: Repository) => overlappingRepositories(home, outer).filter((n) => n.outer.name === outer.name);
  return [...byOuter.values()]
    .map((nestings) => nestings.map((nesting) => overlapLine(repo, nesting)).join("") + excludeHint(everyInner(nestings[0]!.outer)))
    .join("");
}

/** The warning that `repo` and another repository index the same documents. */
function overlapLine(repo: Repository, { outer, inner }: Nesting): string {
  const [relation, other] = outer.name === repo.name ? ["holds repository", inner] : ["is inside repository", outer];
  return `${escapeControls(`warning: ${repo.path} ${relation} '${other.name}' (${other.path}): its documents will be found in both`)}\n`;
}

/** The command that keeps one outer repository's excludes and adds the folders of all its `nestings`' inner ones. */
function excludeHint(nestings: Nesting[]): string {
  const outer = nestings[0]!.outer;
  const exclude = [...outer.exclude, ...nestings.map(({ folder }) => `${folder}/`)];
  // A comma in a pattern would split it: the list is then written as YAML's (JSON's) brackets.
  const value = exclude.some((pattern) => pattern.includes(",")) ? JSON.stringify(exclude) : exclude.join(",");
  const command = `researcher config set repositories.${outer.name}.exclude ${shellWord(value)}`;
  const names = nestings.map(({ inner }) => `'${inner.name}'`);
  const them = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  return `hint: \`${escapeControls(command)}\` leaves them to ${escapeControls(them)} alone\n`;
}

function repoCli(): CAC {
  const cli = globals(cac("researcher repo"));
  cli.example("  researcher repo add notes ~/notes --description 'Personal notes'");
  cli
    .command("add <name> <path>", "Register a folder as a repository")
    .option("--file-types <list>", `Comma-separated extensions, repeatable (default: ${FILE_TYPES.join(",")})`)
    .option(
      "--code",
      `Also index source code (${CODE_EXTENSIONS.join(",")}, and scripts without an extension by their #! line): fragments follow the syntax; build output and vendored code (dist/, build/, target/, vendor/, coverage/, third_party/, virtual environments) left out`,
    )
    .option("--exclude <glob>", "Skip matching files or folders (repeatable)")
    .option("--description <text>", "What the repository holds (shown to agents as context)")
    .option("--embedding-provider <provider>", "local (default), ollama or openai")
    .option("--embedding-model <id|path>", "Embedding model for this repository (default: the configured one)")
    .option("--no-embed", "BM25 only: never compute vectors for this repository")
    .option("--no-ignore", "Index files that .gitignore and .ignore files inside the folder leave out")
    .example("  researcher repo add notes ~/notes --exclude drafts --description 'My notes'")
    .example("  researcher repo add papers ~/papers --embedding-provider ollama --embedding-model nomic-embed-text")
    .example("  researcher repo add app ~/src/app --code")
    .action((name: string, path: string, flags: Flags) => {
      // Each --file-types names an extension, as one given alone must: `--file-types "$EMPTY" --file-types md` was md.
      const given =
        flags.fileTypes === undefined ? undefined : repeated(flags.fileTypes).flatMap((value) => normalizeFileTypes(list(value)));
      const fileTypes = flags.code ? [...(given ?? FILE_TYPES), ...CODE_EXTENSIONS] : given;
      const repo = addRepository(home(flags), {
        name,
        path,
        description: flags.description === undefined ? null : String(flags.description),
        fileTypes,
        exclude: list(flags.exclude),
        embed: flags.embed !== false,
        ignoreFiles: flags.ignore !== false,
        embedding: embeddingFlags(flags),
      });
      const { setAside } = repo;
      if (setAside) {
        const line = `warning: the index kept under '${repo.name}' was of ${setAside.indexed}: moved aside to ${setAside.folder}; \`researcher index ${repo.name}\` indexes ${repo.path}`;
        stderr.write(`${escapeControls(line)}\n`);
      }
      stderr.write(overlapWarnings(home(flags), repo));
      // The folder's name is the user's, or a mount's: shown escaped, as status and repo list show it.
      out(`${escapeControls(`added ${repo.name} → ${repo.path}`)}\nnext: researcher index ${escapeControls(repo.name)}\n`);
    });
  cli
    .command("remove <name>", "Unregister a repository and delete its index")
    .option("--keep-data", "Keep the index folder on disk")
    .example("  researcher repo remove notes")
    .action((name: string, flags: Flags) => {
      const repo = removeRepository(home(flags), name, { keepData: Boolean(flags.keepData) });
      out(`${escapeControls(`removed ${repo.name}${flags.keepData ? ` (index kept in ${repo.dir})` : ""}`)}\n`);
    });
  cli
    .command("rename <name> <new-name>", "Give a repository another name, its index kept")
    .example("  researcher repo rename k papers")
    .action(async (name: string, newName: string, flags: Flags) => {
      const repo = await renameRepository(home(flags), name, String(newName));
      const from = repositoryName(String(name)); // as the rename read it: ' notes' is notes
      out(`${escapeControls(from === repo.name ? `${from} already has that name` : `renamed ${from} → ${repo.name}`)}\n`);
    });
  cli
    .command("list", "List repositories")
    .option("--json", "Print as JSON")
    .example("  researcher repo list --json")
    .action((flags: Flags) => {
      const repos = listRepositories(home(flags));
      if (flags.json) return json(repos.map(repositoryJson));
      out(repositoryListText(repos, styleFor(stdout)));
    });
  return cli;
}

function configCli(): CAC {
  const cli = globals(cac("researcher config"));
  cli.example("  researcher config set search.limit 20");
  cli
    .command("show", "Print the effective configuration")
    .option("--json", "Print as JSON")
    .example("  researcher config show --json | jq .search")
    .action((flags: Flags) => {
      const config = loadConfig(home(flags));
      if (flags.json) return json(config);
      out(stringifyYaml(config));
    });
  cli
    .command("path", "Print where config.yaml is")
    .example('  "$EDITOR" "$(researcher config path)"')
    .action((flags: Flags) => out(`${configPath(home(flags))}\n`));
  cli
    .command("set <key> <value>", "Set a value (dotted key), validated before it is saved")
    .example("  researcher config set search.limit 20")
    .example("  researcher config set repositories.notes.description 'Meeting notes'")
    .action((key: string, value: string, flags: Flags) => {
      const config = setConfigValue(home(flags), key, String(value));
      out(`set ${key} = ${escapeControls(settingText(config, key) ?? String(value))}\n`);
      // What a repository's walk reaches changed: the overlap repo add warned of may be gone, or made.
      const reach = /^repositories\.([^.]+)\.(?:path|exclude|ignore_files)$/.exec(key);
      if (reach) stderr.write(overlapWarnings(home(flags), getRepository(home(flags), reach[1]!)));
    });
  return cli;
}

/**
 * A setting as the validated configuration holds it (`0500` is 500, a path absolute): what was saved, not what was
 * typed.
 */
function settingText(config: unknown, key: string): string | undefined {
  let node = config;
  for (const part of key.split("."))
    node = node !== null && typeof node === "object" ? own(node as Record<string, unknown>, part) : undefined;
  if (node === undefined) return undefined;
  return typeof node === "string" ? node : JSON.stringify(node);
}

/**
 * `model set`'s note on the repositories that keep the model they were embedded with, and the command that moves them
 * to the new default, naming them: its `<name>` was no command to paste (s28 code review #4).
 */
function otherModelNote(names: string[]): string {
  const which = names.length === 1 ? "1 repository keeps the model it was" : `${names.length} repositories keep the models they were`;
  const listed = names.slice(0, 5).join(", ") + (names.length > 5 ? ", …" : "");
  const command = `researcher index --embeddings-only ${names.map(shellWord).join(" ")}`;
  return `note: ${which} embedded with (${listed}): \`${command}\` moves ${names.length === 1 ? "it" : "them"} to this model\n`;
}

function modelCli(): CAC {
  const cli = globals(cac("researcher model"));
  cli.example("  researcher model set ~/models/bge-small-en-v1.5");
  const choice = (flags: Flags, id?: string) =>
    chooseModel(loadConfig(home(flags)).embedding, {}, id ?? (flags.model as string | undefined));
  cli
    .command("show", "Show the embedding model in use: id, source, dims, path")
    .option("--model <id|path>", "Show this model instead of the configured one")
    .option("--json", "Print as JSON")
    .example("  researcher model show --json")
    .action((flags: Flags) => {
      const info = describeModel(home(flags), choice(flags));
      if (flags.json) return json(info);
      out(
        Object.entries(info)
          .map(
            ([key, value]) =>
              `${key.padEnd(15)} ${typeof value === "string" && value !== "" ? escapeControls(value) : value === null ? "none" : JSON.stringify(value)}`,
          )
          .join("\n")
          .concat("\n"),
      );
    });
  cli
    .command("pull [id]", "Download a model from the Hugging Face hub into ~/.researcher/models")
    .example("  researcher model pull Snowflake/snowflake-arctic-embed-xs")
    .action(async (id: string | undefined, flags: Flags) => {
      const embedder = await loadEmbedder(home(flags), choice(flags, id), { allowDownload: true, onProgress: downloadProgress() });
      // A local folder is used where it is; only a downloaded model lands in the models folder.
      const where = embedder.info.path && embedder.info.source !== "cache" ? `at ${embedder.info.path}` : `in ${modelsDir(home(flags))}`;
      out(`${escapeControls(`${embedder.info.id}: ${embedder.dims} dims, ready ${where}`)}\n`);
      await embedder.dispose();
    });
  cli
    .command("set <model>", "Use this model id or local folder for new repositories")
    .example("  researcher model set /models/bge-small-en-v1.5")
    .example("  researcher model set Xenova/bge-small-en-v1.5")
    .action((model: string, flags: Flags) => {
      const value = existsSync(model) ? resolve(model) : model;
      // Refuses a path that is not a model folder, or one without the weights its dtype names.
      requireWeights(describeModel(home(flags), { ...choice(flags, value), provider: "local", model: value }));
      setConfigValue(home(flags), "embedding.model", value);
      out(`embedding model: ${escapeControls(value)}\n`);
      // Repositories keep the model they were embedded with: said, as a user who "switched" saw nothing change (s26
      // user F6).
      const others = repositoriesOnOtherModel(home(flags), value);
      if (others.length) stderr.write(otherModelNote(others));
    });
  cli
    .command("clear [id]", "Delete downloaded models (all, or one id) from ~/.researcher/models")
    .example("  researcher model clear Xenova/bge-small-en-v1.5")
    .action((id: string | undefined, flags: Flags) => {
      out(`removed ${escapeControls(clearModels(home(flags), id === undefined ? undefined : String(id)))}\n`);
    });
  return cli;
}

// ---- entry -----------------------------------------------------------------------------------------------
