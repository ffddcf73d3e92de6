/** The command line: declare the commands and their options, parse argv, report errors. commands.ts runs them. */
import { cac, type CAC } from "cac";
import { GROUPS, groupDescription } from "./cli-groups.ts";
import { globals, out } from "./cli-options.ts";
import {
  convertCommand,
  getCommand,
  indexCommand,
  lsCommand,
  multiGetCommand,
  removeCommand,
  reposForCommand,
  searchCommand,
  serveCommand,
  statusCommand,
  skillCommand,
  verifyCommand,
  watchCommand,
} from "./commands.ts";
import { ResearcherError, toResearcherError } from "../errors.ts";
import { problemLines } from "../serve/render.ts";
import { HTTP_ROUTES } from "../serve/routes.ts";
import { shellWord, stderr, stdout } from "../terminal.ts";
import { versionText } from "../version.ts";
import { similarNames } from "../similar.ts";
import { own } from "../own.ts";
import { BUILT_IN_KEYS } from "../store/filter-sql.ts";
import { GIT_KEYS } from "../index/indexer.ts";

/**
 * cac gives an optional-value flag the next word, whatever it is: `search --documents borrow` would lose the query
 * word and `search borrow --documents=3` would search "borrow 3" with a boolean flag. So before parsing, a count
 * right after `--documents`/`--fragments` is bound to it and a bare flag is closed, leaving every other word to the
 * query.
 */
function bindCountFlags(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return [...out, ...args.slice(i)];
    if (arg === "--documents" || arg === "--fragments") {
      const next = args[i + 1];
      if (next !== undefined && /^\d+$/.test(next)) {
        out.push(`${arg}=${next}`);
        i++;
      } else out.push(next === undefined || next.startsWith("-") ? arg : `${arg}=true`); // the parser takes no '-' word
      continue;
    }
    out.push(arg);
  }
  return out;
}

/**
 * cac tells its parser which flags are switches by their camelCase names, so a switch with a hyphen
 * (`--embeddings-only`, `--retry-failed`, `--line-numbers`) took the next word as its value: `index
 * --embeddings-only notes` ran on every repository. Such a switch is passed in its camelCase spelling, which the
 * parser knows as a switch.
 */
function camelSwitches(cli: CAC, args: string[]): string[] {
  const switches = new Map<string, string>();
  for (const command of [cli.globalCommand, ...cli.commands]) {
    for (const option of command.options) {
      if (!option.isBoolean || option.negated) continue;
      for (const name of option.rawName.split(",").map((n) => n.trim()))
        if (/^--\w+(-\w+)+$/.test(name)) switches.set(name, `--${option.names[0]}`);
    }
  }
  const end = args.indexOf("--");
  return args.map((arg, i) => (end >= 0 && i > end ? arg : (switches.get(arg) ?? arg)));
}

/**
 * The keys `search --where` knows, as search --help names them: the built-in ones, then the metadata indexing gives
 * source code (convert.ts's `language`) and files in a git repository (s29 user F6: a newcomer could not learn them).
 */
const WHERE_KEYS = `${[...Object.keys(BUILT_IN_KEYS), "language", ...GIT_KEYS].join(", ")}, or any front-matter key (tags, author, …)`;

/**
 * The main commands; given the command word, only that one is defined (defining all ~100 options costs ~2 ms of
 * every cold start).
 */
function mainCli(only?: string): CAC {
  const cli = globals(cac("researcher"));
  // The two commands of the quick start, shown by `researcher --help`; --version is main()'s, listed here.
  if (only === undefined)
    cli
      .option("-v, --version", "Print the version")
      .example("  researcher repo add notes ~/notes && researcher index notes")
      .example('  researcher search "what did we decide about caching"');
  const want = (name: string) => only === undefined || only === name;

  if (want("index"))
    cli
      .command("index [...names]", "Index repositories (all when no name is given), incrementally")
      .option("--rebuild", "Drop the index and rebuild it from the files")
      .option("--embeddings-only", "Keep fragments, recompute every vector (after changing the model)")
      .option("--no-embed", "BM25 only for this run: skip embeddings")
      .option(
        "--allow-empty",
        "Accept an empty repository folder, or a subfolder mount that is not mounted now, and remove their documents (refused or kept otherwise)",
      )
      .option("--retry-failed", "Convert failed files again though unchanged (after installing an OCR language, say)")
      .option("--model <id|path>", "Embed with this model and keep it as the repository's (default: configured)")
      .option("--json", "Print the summary as JSON")
      .option("--quiet", "No progress bar and no summary")
      .example("  researcher index notes")
      .example("  researcher index --embeddings-only notes --model Xenova/bge-small-en-v1.5")
      .action(indexCommand);

  if (want("watch"))
    cli
      .command("watch [...names]", "Keep repositories' indexes current as files change (all when no name is given)")
      .option("--no-embed", "BM25 only: skip embeddings")
      .option("--debounce <ms>", "Quiet time after the last change before indexing, 0 to 60000 (default: watch.debounce_ms, 300)")
      .option("--json", "Print one JSON line per applied batch")
      .example("  researcher watch notes")
      .example("  researcher watch --json | jq -c 'select(.failed > 0)'")
      .action(watchCommand);

  if (want("search"))
    cli
      .command("search [...query]", "Search fragments by words and meaning")
      .option("--repo <name>", "Only this repository (repeatable)")
      .option("-n, --limit <n>", "Number of results (default: search.limit, 10); files with --files")
      .option("--offset <n>", "Skip this many results")
      .option("--all", "Every result (above --min-score), not one page")
      .option("--min-score <x>", "Drop results scoring below x")
      .option("--documents [n]", "Group fragments by document (n: how many documents)")
      .option("--fragments [n]", "One result per fragment, the default (n: how many fragments)")
      .option("--full", "The whole fragment text instead of a snippet")
      .option("--mode <mode>", "auto, bm25, vector or hybrid (default: search.mode, auto: hybrid where vectors exist)")
      .option("--model <id|path>", "Embedding model for the query (must match the repository's)")
      .option("--explain", "Show how each result was ranked")
      .option("--filter <glob>", "Only documents whose path matches, e.g. 'notes/**' or '*.md'")
      .option("--format <format>", "text, json, jsonl, csv, md or files (default: text)")
      .option("--json", "Same as --format json: {query, mode, total, results: [{rank, score, repository, path, location, page, …}], …}")
      .option("--files", "Same as --format files: matching file paths, one per line")
      .option("-0, --null", "With --files: end each path with a NUL byte, unescaped (for xargs -0)")
      .option(
        "--where <expr>",
        `Only what matches, e.g. 'tags=rust modified>=2025-01-01' (repeatable: all must hold), ops = != < <= > >= ~ in (a|b); keys: ${WHERE_KEYS}`,
      )
      .example('  researcher search "mutable reference" --repo rust-book -n 5')
      .example("  researcher search how does caching work --json")
      .example("  researcher search borrow checker --documents 3 --full")
      .example("  researcher search retry --all --min-score 5 --mode bm25 --format csv > hits.csv")
      .example('  researcher search -- "-unsafe borrow checker"')
      .example(`  researcher search ownership --where 'tags in (rust|go) format=md' --where 'title~"borrow"'`)
      .action(searchCommand);

  if (want("get"))
    cli
      .command("get <ref>", "Print an indexed document, or some of its lines")
      .option("--from <line>", "First line (default: the ref's line, else 1); inside the ref's page or range, if it names one")
      .option("--lines <n>", "How many lines (default: the ref's count, else to the end); within the ref's page or range")
      .option("--line-numbers", "Number the lines, as the document counts them")
      .option("--meta", "Only what the index holds about it: title, format, metadata, size, fragments")
      .option(
        "--json",
        "Print {repository, path, docid, title, format, metadata, from, to, page, page_end, total_lines, changed_since_index, text}",
      )
      .example("  researcher get notes:guides/setup.md")
      .example("  researcher get notes:guides/setup.md:40-60 --line-numbers     # lines 40 to 60")
      .example("  researcher get notes:guides/setup.md:40:20                    # 20 lines from line 40")
      .example("  researcher get papers:paper.pdf:p7                            # page 7; :p2-3 is pages 2 to 3")
      .example("  researcher get '#3fa2c1' --meta --json                        # by docid, as results show it")
      .action(getCommand);

  if (want("multi-get"))
    cli
      .command("multi-get <pattern>", "Print several indexed documents: a glob over paths, or refs separated by commas")
      .option("--max-bytes <n>", "Skip (and list) documents larger than this (default: 1048576)")
      .option("--line-numbers", "Number the lines")
      .option("--json", "Print {documents: [as get --json], skipped: [{repository, path, reason}]}")
      .option("--files", "Print the matching files' paths only, one per line")
      .option("-0, --null", "With --files: end each path with a NUL byte, unescaped (for xargs -0)")
      .example("  researcher multi-get 'notes:meetings/2026-*.md'")
      .example("  researcher multi-get 'notes:a.md,notes:b.md:10:5,#3fa2c1' --json")
      .example("  researcher multi-get '**/*.md' --files -0 | xargs -0 wc -l")
      .action(multiGetCommand);

  if (want("ls"))
    cli
      .command("ls [where]", "List indexed documents: all, one repository's, or those under repo:prefix")
      .option("--json", "Print [{repository, path, docid, title, format, metadata, size, modified, fragments, pages}]")
      .example("  researcher ls")
      .example("  researcher ls notes:meetings/2026 --json | jq -r '.[].path'")
      .action(lsCommand);

  if (want("remove"))
    cli
      .command("remove <repo> [document]", "Drop one document from a repository's index")
      .option("--json", 'Print {repository, path, removed, dropped: "document" or "kept_text"}')
      .example("  researcher remove notes drafts/old.md")
      .example("  researcher remove notes:drafts/old.md     # as ls and search print it")
      .action(removeCommand);

  if (want("repos-for"))
    cli
      .command("repos-for [...query]", "Rank repositories by how strongly they match a query (where to look)")
      .option("--json", "Print [{repository, description, score, matched, best: {path, location, page, title, snippet}}]")
      .example('  researcher repos-for "borrow checker"')
      .action(reposForCommand);

  if (want("verify"))
    cli
      .command("verify [...names]", "Check that indexes are whole and current; --repair rebuilds what is derived")
      .option("--repair", "Rebuild the full-text index, vectors.usearch and leftovers where they are damaged")
      .option("--json", "Print the reports as JSON")
      .example("  researcher verify notes --repair")
      .action(verifyCommand);

  if (want("convert"))
    cli
      .command("convert <file>", "Print what indexing sees in a file: its markdown (PDFs with a page marker per page)")
      .option("--json", "Print {title, format, metadata, pages, text}")
      .option("-o, --output <file>", "Write the markdown (or the JSON) to this file instead of stdout")
      .option(
        "--ocr [mode]",
        "OCR of scanned pages: auto (pages without text; --ocr alone), always, off (default: the repository's `ocr`, else auto)",
      )
      .example("  researcher convert paper.pdf | less")
      .example("  researcher convert scan.pdf --ocr always")
      .example("  researcher convert book.epub -o book.md")
      .action(convertCommand);

  if (want("status"))
    cli
      .command("status [name]", "Show what each repository's index holds")
      .option("--json", "Print as JSON")
      .example("  researcher status --json")
      .action(statusCommand);

  if (want("serve"))
    cli
      .command("serve", "Serve every repository to MCP clients (stdio, or HTTP with --port)")
      .option("--port <n>", `Serve over HTTP on this port (${HTTP_ROUTES})`)
      .option("--host <address>", "Address to bind with --port (default 127.0.0.1)")
      .option("--token <token>", "Require `Authorization: Bearer <token>` (default: $RESEARCHER_MCP_TOKEN)")
      .option("--watch", "Also keep every repository's index current as files change (as `researcher watch`)")
      .example("  researcher serve")
      .example("  researcher serve --watch")
      .example("  researcher serve --port 8765 --token s3cret")
      .example("  curl -H 'Authorization: Bearer s3cret' 'http://127.0.0.1:8765/search?q=borrow+checker&n=5'")
      .action(serveCommand);

  if (want("skill"))
    cli
      .command("skill", "Print SKILL.md, which tells an AI agent how to use researcher well (it is built into the executable)")
      .example("  mkdir -p ~/.claude/skills/researcher && researcher skill > ~/.claude/skills/researcher/SKILL.md")
      .action(skillCommand);

  // Listed for --help only: main() hands a group's words to its own parser, so these never run.
  for (const group of Object.keys(GROUPS)) {
    if (want(group))
      cli
        .command(`${group} [...args]`, groupDescription(group))
        .allowUnknownOptions()
        .action(() => {
          throw new ResearcherError("USAGE", `put options after the command: researcher ${group} <action> [options]`);
        });
  }
  return cli;
}

/** The main parser for a command word: that command alone, or every command when the word names none (help, typos). */
function commandCli(word: string | undefined): CAC {
  const one = word && !word.startsWith("-") ? mainCli(word) : undefined;
  return one?.commands.some((command) => command.name === word) ? one : mainCli();
}

/**
 * Every option value as a word of its own, up to a `--` (the words after it are arguments): `-n5` or `-n1e20` as
 * `-n 5`, as `head -n1` takes it (the parser would read the short options n and 5), and `--repo=` (an empty
 * variable) as `--repo ''` (the parser took the next word for its value: the query); `--filter=a.md=` is the value
 * `a.md=`, as typed.
 */
function spelledOut(cli: CAC, args: string[]): string[] {
  const valued = [cli.globalCommand, ...cli.commands].flatMap((command) => command.options).filter((option) => !option.isBoolean);
  const shorts = new Set(valued.flatMap((option) => option.names.filter((name) => name.length === 1)));
  const end = args.indexOf("--");
  const options = end === -1 ? args : args.slice(0, end);
  const rest = end === -1 ? [] : args.slice(end);
  return [
    ...options.flatMap((arg) => {
      // (`-nightly` stays one word: an unknown option, whose error says how to search for it)
      if (/^-\w\d/.test(arg) && shorts.has(arg[1]!)) return [arg.slice(0, 2), arg.slice(2)];
      // Only a word that ends at its first `=` names no value: `--token=<base64>=` ends with one of its own (s24 D1).
      if (arg.indexOf("=") === arg.length - 1 && optionOf(valued, arg)) return [arg.slice(0, -1), ""];
      return [arg];
    }),
    ...rest,
  ];
}

type Option = CAC["globalCommand"]["options"][number];

/**
 * The option a word names, as the parser keys it (`--line-numbers=x` → lineNumbers, `--no-embed` → embed); one dash
 * names one letter (the parser reads `-limit` as the options l, i, m, i, t).
 */
function optionOf(options: Option[], word: string): Option | undefined {
  const name = word
    .replace(/^--?/, "")
    .split("=")[0]!
    .replace(/^no-/, "")
    .replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  if (!word.startsWith("-") || (!word.startsWith("--") && name.length !== 1)) return undefined;
  return options.find((option) => option.names.includes(name));
}

/** One use of an option: the index of its word and, for an option that takes one, the value as typed. */
interface OptionUse {
  option: Option;
  index: number;
  value?: string;
}

/**
 * Every use of the command's options in `words` (before `--`), in order, by the parser's own rule: a value is what
 * follows `=`, else the next word unless it starts with '-' (`-n -1` gives `-n` none); a switch takes none. One rule
 * for "is an option", "given twice" and "the value as typed", so the three cannot disagree.
 */
function optionUses(cli: CAC, words: string[]): OptionUse[] {
  const options = [...cli.globalCommand.options, ...(cli.matchedCommand?.options ?? [])];
  const uses: OptionUse[] = [];
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    const option = optionOf(options, word);
    if (!option) continue;
    const attached = word.indexOf("=") === -1 ? "" : word.slice(word.indexOf("=") + 1);
    const next = words[index + 1];
    const takesNext = !option.isBoolean && !/^--?no-/.test(word) && !attached && next !== undefined && !next.startsWith("-");
    uses.push({ option, index, value: option.isBoolean ? undefined : takesNext ? next : attached || undefined });
    if (takesNext) index++;
  }
  return uses;
}

/** The words before `--`: options and their arguments (cac sets the rest apart). */
function beforeDashes(words: string[]): string[] {
  const end = words.indexOf("--");
  return end === -1 ? words : words.slice(0, end);
}

/** Parse argv and run one command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const args = argv.slice(2);
  const verbose = args.includes("--verbose");
  const at = commandIndex(args);
  const groupName = own(GROUPS, args[at] ?? "") ? args[at] : undefined;
  let topic = groupName; // what a usage error's hint sends to --help: the command once it is known
  try {
    // After the global options too, as top-level --help lists it (`--home x --version` printed the help).
    const word = args[at];
    if (word === "--version" || word === "-v" || word === "version") {
      // A word after it is refused, as every other command's unused ones are (s23 contracts C5).
      if (args.length > at + 1)
        throw new ResearcherError("USAGE", `${word} takes no arguments (got ${shellWord(args[at + 1]!)})`, {
          hint: `run \`researcher ${word}\` alone`,
        });
      out(`${versionText()}\n`);
      return 0;
    }
    const cli = groupName ? GROUPS[groupName]!.build() : commandCli(args[at]);
    // cac shows `--no-embed` as "(default: true)", which reads as if embedding were off by default.
    cli.help((sections) => {
      // A command's own help says what it does (cac prints its description only in the list of commands).
      const described = cli.matchedCommand?.description;
      const withDescription = described ? [sections[0]!, { body: described }, ...sections.slice(1)] : sections;
      return withDescription.map((s) => ({ ...s, body: s.body.replace(/^(\s*--no-.*?)\s*\(default: true\)[ \t]*$/gm, "$1") }));
    });
    cli.showHelpOnExit = false; // help is printed below, once the options are known to be real ones
    // A group's own parser sees the words without the group's name, global options included.
    const words = spelledOut(cli, groupName ? [...args.slice(0, at), ...args.slice(at + 1)] : bindCountFlags(args));
    cli.parse([argv[0]!, argv[1]!, ...camelSwitches(cli, words)], { run: false });
    if (cli.matchedCommand) topic = [groupName, cli.matchedCommand.name].filter(Boolean).join(" ");
    const uses = optionUses(cli, beforeDashes(words));
    checkOptions(cli, beforeDashes(words), uses, groupName);
    checkGivenOnce(uses);
    // Words after `--` are arguments, never options (`researcher get -- notes:-x.md`); cac sets them apart.
    const rest = (cli.options["--"] as string[] | undefined) ?? [];
    if (cli.matchedCommand && rest.length > 0) {
      cli.args = [...cli.args, ...rest];
      cli.options["--"] = [];
    }
    if (cli.options.help) {
      cli.outputHelp();
      return 0;
    }
    keepTypedValues(cli, uses);
    const noRef = cli.matchedCommand && cli.args.length === 0 ? own(MISSING_REF_HINTS, topic ?? "") : undefined;
    if (noRef) throw new ResearcherError("USAGE", `missing required args for command \`${cli.matchedCommand!.rawName}\``, { hint: noRef });
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) {
        throw new ResearcherError("USAGE", `unknown command '${cli.args[0]}'`, {
          hint: unknownCommandHint(cli, String(cli.args[0]), groupName),
        });
      }
      // A bare group is a usage error like any other (error and hint on stderr, exit 2): its help on stdout read as
      // data to a script, and its log of stderr held nothing. `researcher` alone is asking for the help.
      if (groupName) {
        const names = cli.commands.map((command) => command.name).filter(Boolean);
        throw new ResearcherError("USAGE", `${groupName} needs a command (${names.join(", ")})`, {
          hint: `run \`researcher ${groupName} --help\` for what each does`,
        });
      }
      cli.outputHelp();
      return 0;
    }
    const status: unknown = await cli.runMatchedCommand();
    return typeof status === "number" ? status : 0;
  } catch (error) {
    return reportError(error, { verbose, topic, json: asksJson(args) });
  }
}

/**
 * What a command that reads documents by ref says when it is given none. A docid as results print it, `#51481f`,
 * typed unquoted is a shell comment: `researcher get #51481f` arrives as `researcher get` (s24 user U8).
 */
const MISSING_REF_HINTS: Record<string, string> = {
  get: "name a document, `researcher get notes:a.md`, or quote a docid: `researcher get '#51481f'` (a shell reads # and what follows as a comment)",
  "multi-get":
    "name documents, `researcher multi-get 'notes:*.md'`, or quote docids: `researcher multi-get '#51481f,#9b0d44'` (a shell reads # and what follows as a comment)",
};

/** A command line that asks for JSON (`--json`, `--format json|jsonl`): its error is JSON on stdout too. */
function asksJson(args: string[]): boolean {
  const end = args.indexOf("--");
  const words = end === -1 ? args : args.slice(0, end);
  return words.some(
    (word, i) => word === "--json" || /^--format=jsonl?$/.test(word) || (word === "--format" && /^jsonl?$/.test(words[i + 1] ?? "")),
  );
}

/**
 * cac's parser turns an option value that looks like a number into one: '' becomes 0 and '007' becomes 7, which
 * mangles a token, a description or a list of file types, and given twice (`--exclude 007 --exclude tmp`) it is a
 * list of both kinds. So every option given a value gets the text as typed, a list of them when it is repeated
 * (options that want numbers parse the text themselves: cli-options.ts). An option that needs a value and is given
 * none is refused at each use, as cac refuses it given once.
 */
function keepTypedValues(cli: CAC, uses: OptionUse[]): void {
  for (const option of new Set(uses.map((use) => use.option))) {
    if (option.isBoolean) continue;
    const values = uses.filter((use) => use.option === option).map((use) => use.value);
    if (option.required && values.includes(undefined)) throw new ResearcherError("USAGE", `option \`${option.rawName}\` value is missing`);
    const typed = values.map((value) => value ?? true); // `--documents` alone: no count
    for (const name of option.names) cli.options[name] = typed.length === 1 ? typed[0] : typed;
  }
}

/** Where the command word is: global options may come first (`researcher --home X repo list`). */
function commandIndex(args: string[]): number {
  let i = 0;
  while (i < args.length) {
    if (args[i] === "--home") i += 2;
    else if (args[i]!.startsWith("--home=") || args[i] === "--verbose") i += 1;
    else break;
  }
  return i;
}

/**
 * Every word before `--` that starts with '-' must be an option of the command. The parser reads `-q the` as the
 * short options q, t, h, e, and the `h` printed help with exit 0; cac checks long options only, and only after.
 */
function checkOptions(cli: CAC, words: string[], uses: OptionUse[], group: string | undefined): void {
  const useAt = new Map(uses.map((use) => [use.index, use]));
  for (const [i, word] of words.entries()) {
    // (a value the option took never starts with '-')
    if (!word.startsWith("-") || word === "-" || word === "--version" || word === "-v") continue;
    // `-n -1`: a negative number after an option that takes a value is that value, and no option takes one.
    const before = useAt.get(i - 1);
    if (/^-\d/.test(word) && before && !before.option.isBoolean && !words[i - 1]!.includes("="))
      throw new ResearcherError("USAGE", `${words[i - 1]} takes no negative number (got ${word})`);
    const use = useAt.get(i);
    // `--full=yes` set the flag and searched "yes" too (s21 scripts): a flag that takes no value is given none.
    if (use?.option.isBoolean && word.includes("=")) {
      throw new ResearcherError("USAGE", `${word.split("=")[0]} takes no value (got ${word})`, {
        hint: `write ${word.split("=")[0]} alone to set it, or leave it out`,
      });
    }
    if (use) continue;
    const command = [group, cli.matchedCommand?.name].filter(Boolean).join(" ");
    throw new ResearcherError("USAGE", `unknown option '${word}'`, { hint: unknownOptionHint(cli, word, command) });
  }
}

/**
 * What an unknown option was likely meant as: the options near it, and on `search` the way to search for the word
 * when nothing is near or it has one dash: `rust -mod` may as well exclude "mod" in the query's syntax as mistype
 * `--mode`, and naming only the options left someone excluding a word no way out (s27 review F5).
 */
function unknownOptionHint(cli: CAC, word: string, command: string): string {
  const format = formatNamed(cli, word);
  if (format) return `the format is an option's value: \`--format ${format}\``;
  const meant = closeOptions(cli, word);
  const near = meant.length ? `did you mean ${meant.join(" or ")}?` : undefined;
  const searched =
    cli.matchedCommand?.name === "search" && !(near && word.startsWith("--"))
      ? `to search for '${word}', quote it after -- (a bare -word there excludes the word): researcher search -- ${shellWord(`"${word}"`)}`
      : undefined;
  if (near && searched) return `${near} Or, ${searched}`;
  return near ?? searched ?? `run \`researcher ${command ? `${command} ` : ""}--help\` for the options`;
}

/** Output formats as people name them for an option of their own (`--json-lines`, `--csv`): `--format`'s values. */
const FORMAT_NAMES: Record<string, string> = {
  jsonl: "jsonl",
  jsonlines: "jsonl",
  ndjson: "jsonl",
  csv: "csv",
  md: "md",
  markdown: "md",
  text: "text",
  txt: "text",
};

/** The `--format` value an unknown option names, on a command that has `--format` (s28 user 4: `--json-lines`). */
function formatNamed(cli: CAC, word: string): string | undefined {
  if (!cli.matchedCommand?.options.some((option) => option.names.includes("format"))) return undefined;
  return FORMAT_NAMES[word.replace(/^-+/, "").replace(/[-_]/g, "").toLowerCase()];
}

/**
 * The commands near an unknown one (`serch` → search, `reop` → repo), as a mistyped option is told its near ones: the
 * hint sent to --help alone (s28 user 4).
 */
function unknownCommandHint(cli: CAC, word: string, group: string | undefined): string {
  const prefix = `researcher${group ? ` ${group}` : ""}`;
  const names = cli.commands.map((command) => command.name).filter(Boolean);
  const meant = similarNames(word, names).slice(0, MEANT_OPTIONS);
  const help = `run \`${prefix} --help\` for the list`;
  return meant.length ? `did you mean ${meant.map((name) => `\`${prefix} ${name}\``).join(" or ")}? (${help})` : help;
}

/** How many options (commands) a "did you mean" names at most. */
const MEANT_OPTIONS = 3;

/**
 * The command's options an unknown one was likely meant as (`--repos` or `-r` as `--repo`, `--limt` or `-limit` as
 * `--limit`): a hint that searched for the typo as a word, or sent to --help, left the user to find it (s26 user F2).
 * One letter is the one long option that begins with it, if only one does; a longer name is a near one (similarNames).
 */
function closeOptions(cli: CAC, word: string): string[] {
  const flags = [...cli.globalCommand.options, ...(cli.matchedCommand?.options ?? [])].flatMap(flagsOf);
  const typed = word.split("=")[0]!.replace(/^--?/, "");
  if (!typed) return [];
  const long = flags.filter((flag) => flag.startsWith("--")).map((flag) => flag.slice(2));
  if (long.includes(typed)) return [`--${typed}`]; // `-limit`, one dash short
  if (typed.length === 1) {
    const begun = long.filter((name) => name.startsWith(typed.toLowerCase()));
    return begun.length === 1 ? [`--${begun[0]}`] : [];
  }
  return similarNames(typed, long)
    .slice(0, MEANT_OPTIONS)
    .map((name) => `--${name}`);
}

/** An option's flags as typed: `-n, --limit <n>` → -n, --limit. */
function flagsOf(option: Option): string[] {
  return option.rawName
    .replace(/[<[].*$/, "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

/**
 * An option that takes one value given twice is a usage error: cac gives both as a list, and `String()` of it joined
 * them with a comma (`--filter a/** --filter b/**` was the glob `a/**,b/**`, which matched nothing, and
 * `--description a --description b` stored "a,b"). Options that say "repeatable" take each.
 */
function checkGivenOnce(uses: OptionUse[]): void {
  for (const option of new Set(uses.map((use) => use.option))) {
    if (option.isBoolean || /repeatable/.test(option.description)) continue;
    // By any of its names: `-n 1 --limit 2` is one option twice.
    const given = uses.filter((use) => use.option === option).length;
    if (given < 2) continue;
    const flag = flagsOf(option).join("/");
    throw new ResearcherError("USAGE", `${flag} is given ${given} times: it takes one value`, {
      hint:
        flag === "--filter"
          ? "for several globs write one, e.g. --filter '{notes,papers}/**', or add --where 'path in (notes/**|papers/**)'"
          : `give ${flag} once`,
    });
  }
}

/**
 * An error as one `error:` line on stderr, with its `hint:` line. A command asked for JSON that printed nothing also
 * prints `{"error": {code, message, hint}}` on stdout, as REST answers it: a script tells LOCKED (try again) from
 * INDEX_CORRUPT by its code, not by an English message.
 */
function reportError(thrown: unknown, { verbose, topic, json }: { verbose: boolean; topic?: string; json: boolean }): number {
  const error = toResearcherError(thrown);
  // "Cannot …" reads as "cannot …" after "error: "; a name such as OPENAI_API_KEY keeps its spelling.
  const message = (error.code === "INTERNAL" ? `unexpected: ${error.message}` : error.message).replace(/^[A-Z](?=[a-z])/, (c) =>
    c.toLowerCase(),
  );
  const usage = error.code === "USAGE" ? `run \`researcher ${topic ? `${topic} ` : ""}--help\`` : undefined;
  const hint = error.hint ?? usage;
  stderr.write(problemLines("error", message, hint));
  // `hint` is null when there is none, as in every other error object a command prints (s25 scripts L3).
  if (json && !stdout.written) stdout.write(`${JSON.stringify({ error: { code: error.code, message, hint: hint ?? null } })}\n`);
  const stack = error.code === "INTERNAL" && error.cause instanceof Error ? error.cause.stack : error.stack;
  if (verbose && stack) stderr.write(`${stack}\n`);
  else if (error.code === "INTERNAL") stderr.write("hint: run again with --verbose for details\n");
  return error.exitCode;
}
