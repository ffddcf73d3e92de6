import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { loadConfig, resolveHome, setConfigValue } from "../src/config.ts";
import { decodeXmlEntities } from "../src/convert/xml.ts";
import { FILE_TYPES } from "../src/file-types.ts";
import { parseYaml } from "../src/yaml.ts";
import { ResearcherError } from "../src/errors.ts";
import { registerRepository, getRepository, listRepositories } from "../src/repos.ts";
import { AS_ROOT, cliAsNobody, cliCommand, ROOT, runCli, tempDir, writeTree } from "./helpers.ts";

describe("config", () => {
  test("a missing file gives the defaults", () => {
    const config = loadConfig(tempDir());
    expect(config.search.limit).toBe(10);
    expect(config.chunk).toEqual({ tokens: 350, code_tokens: 512, overlap: 0.15 });
    expect(config.repositories).toEqual({});
  });

  test("set keeps types, validates, and persists", () => {
    const home = tempDir();
    setConfigValue(home, "search.limit", "25");
    setConfigValue(home, "embedding.query_prefix", "query: ");
    expect(loadConfig(home).search.limit).toBe(25);
    expect(loadConfig(home).embedding.query_prefix).toBe("query: ");
    expect(() => setConfigValue(home, "search.limit", "many")).toThrow(/search\.limit/);
    expect(() => setConfigValue(home, "search.nope", "1")).toThrow(/search\.nope/);
    // In a settings file's words, not the schema library's ("Invalid key: Expected never …").
    expect(() => setConfigValue(home, "search.nope", "1")).toThrow("search.nope: no such setting (config set)");
    expect(() => setConfigValue(home, "search.mode", "foo")).toThrow('search.mode: expected one of auto, bm25, vector, hybrid, got "foo"');
    expect(() => setConfigValue(home, "search.limit", "many")).toThrow('search.limit: expected number, got "many"');
    expect(loadConfig(home).search.limit).toBe(25); // a rejected value changed nothing
  });

  test("config set of a key that names no setting suggests the one near it: a repository's without its section, or a typo (s26 user F3)", () => {
    const home = tempDir();
    registerRepository(home, { name: "vault", path: tempDir() });
    const hint = (key: string) => {
      try {
        setConfigValue(home, key, "5");
      } catch (error) {
        return [(error as ResearcherError).message, (error as ResearcherError).hint];
      }
      throw new Error(`${key} was set`);
    };
    expect(hint("vault.description")).toEqual(["vault: no such setting (config set)", "did you mean repositories.vault.description?"]);
    expect(hint("vault.descriptoin")).toEqual(["vault: no such setting (config set)", "did you mean repositories.vault.description?"]);
    expect(hint("repositories.vault.descriptoin")[1]).toBe("did you mean repositories.vault.description?");
    expect(hint("search.limt")).toEqual(["search.limt: no such setting (config set)", "did you mean search.limit?"]);
    expect(hint("serch.limit")[1]).toBe("did you mean search.limit?");
    expect(hint("index.convert_timout")[1]).toBe("did you mean index.convert_timeout?");
    // Near nothing (`vaul` is no repository's name): the hint there was.
    for (const key of ["search.nope", "vaul.description", "vault", "serch"]) {
      expect(hint(key)[1]).toBe("`researcher config show` prints every setting; the README's Configuration says the values each takes");
    }
    expect(loadConfig(home)).toMatchObject({ search: { limit: 10 }, repositories: { vault: { description: null } } }); // nothing changed
    // A setting's own wrong value keeps the hint it had.
    expect(hint("search.limit.x")).toEqual([
      "search.limit: expected number, got Object (config set)",
      "`researcher config show` prints every setting; the README's Configuration says the values each takes",
    ]);
  });

  test("config set of a repository's key: only a registered one, and a path only to a folder, written absolute", () => {
    const home = tempDir();
    const [docs, other] = [tempDir(), tempDir()];
    expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
    const unknown = runCli(["config", "set", "repositories.newrepo.path", other], { home });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no repository named 'newrepo'");
    expect(unknown.stderr).toContain("researcher repo add newrepo");
    const missing = runCli(["config", "set", "repositories.notes.path", join(other, "nope")], { home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("does not exist");
    // With the hint it had before repo add and config set shared the check (s21 review N1).
    expect(missing.stderr).toContain(`hint: check the path (\`ls -ld ${other}\` shows the folder above it), or create the folder first`);
    expect(runCli(["config", "set", "repositories.notes.path", "."], { home, cwd: other }).code).toBe(0);
    expect(loadConfig(home).repositories.notes!.path).toBe(other);
  });

  test("a relative repository path written in config.yaml by hand is read from config.yaml's folder", () => {
    const home = tempDir();
    writeTree(home, { "docs/a.md": "# A\n" });
    writeFileSync(join(home, "config.yaml"), "repositories:\n  notes:\n    path: docs\n");
    for (const cwd of [home, tempDir()]) {
      const listed = JSON.parse(runCli(["repo", "list", "--json"], { home, cwd }).stdout);
      expect(listed[0].path).toBe(join(home, "docs"));
    }
  });

  test("~/ in a repository path written by hand is the user's home, as the shell reads it (s19 hostile #8)", () => {
    // It was a folder named `~` inside the researcher home, and `index` hinted at a drive not mounted.
    const home = tempDir();
    const user = tempDir();
    writeTree(user, { "notes/a.md": "# A\n\nalpha\n" });
    writeFileSync(join(home, "config.yaml"), "repositories:\n  s:\n    path: ~/notes\n    embed: false\n");
    const env = { HOME: user };
    expect(JSON.parse(runCli(["repo", "list", "--json"], { home, env }).stdout)[0].path).toBe(join(user, "notes"));
    expect(runCli(["index", "s"], { home, env }).code).toBe(0);
    expect(runCli(["search", "alpha", "--files"], { home, env }).stdout).toBe(`${join(user, "notes/a.md")}\n`);
    // A `~` that reached the program unexpanded (quoted in a script) is the home too, as in the file.
    expect(runCli(["config", "set", "repositories.s.path", "~/notes"], { home, env }).code).toBe(0);
    const again = runCli(["repo", "add", "t", "~/notes/", "--no-embed"], { home, env, cwd: tempDir() });
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining("is already registered as 's'") });
    for (const written of ["$HOME/notes", "\u0024{HOME}/notes"]) {
      writeFileSync(join(home, "config.yaml"), `repositories:\n  s:\n    path: ${written}\n    embed: false\n`);
      expect(JSON.parse(runCli(["repo", "list", "--json"], { home, env }).stdout)[0].path).toBe(join(user, "notes"));
    }
  });

  test("a bad file names the key and the problem", () => {
    const home = tempDir();
    writeFileSync(join(home, "config.yaml"), "search:\n  limit: -3\n");
    try {
      loadConfig(home);
      throw new Error("expected an error");
    } catch (error) {
      expect(error).toBeInstanceOf(ResearcherError);
      expect((error as ResearcherError).code).toBe("INVALID_CONFIG");
      expect((error as Error).message).toContain("search.limit");
    }
    writeFileSync(join(home, "config.yaml"), "search: [unclosed\n");
    expect(() => loadConfig(home)).toThrow(/not valid YAML \(.+\)$/);
    // A file refused for its aliases says so: it read as a syntax error to look for (s19 hostile #7).
    const aliases = "abcdefghij".split("").map(
      (name, i) =>
        `${name}: &${name} [${Array(9)
          .fill(i ? `*${"abcdefghij"[i - 1]}` : "x")
          .join(",")}]`,
    );
    writeFileSync(join(home, "config.yaml"), `${aliases.join("\n")}\n`);
    expect(() => loadConfig(home)).toThrow(/not valid YAML \(Excessive alias count/);
  });

  test("the validated copy is reused, and ignored once config.yaml changes", () => {
    const home = tempDir();
    setConfigValue(home, "search.limit", "7");
    expect(loadConfig(home).search.limit).toBe(7);
    expect(existsSync(join(home, ".config.validated.json"))).toBe(true);
    writeFileSync(join(home, "config.yaml"), "search:\n  limit: 8000000\n");
    expect(() => loadConfig(home)).toThrow(/search\.limit/);
    writeFileSync(join(home, "config.yaml"), "search:\n  limit: 9\n");
    expect(loadConfig(home).search.limit).toBe(9);
    // An edit of the same size whose mtime is set back (`cp -p`, `touch -r`, a coarse file system): it was ignored.
    const before = join(tempDir(), "before.yaml");
    expect(Bun.spawnSync(["cp", "-p", join(home, "config.yaml"), before]).exitCode).toBe(0); // its times to the nanosecond
    writeFileSync(join(home, "config.yaml"), "search:\n  limit: 8\n");
    expect(Bun.spawnSync(["touch", "-r", before, join(home, "config.yaml")]).exitCode).toBe(0);
    expect(loadConfig(home).search.limit).toBe(8);
    // And in a new process, which reads the validated copy.
    expect(runCli(["config", "show", "--json"], { home }).stdout).toContain('"limit": 8');
  });

  test("a validated copy another build wrote is validated again: a default added since is filled in (s21 retest R0)", () => {
    // The copy of 28d543a had no `ocr_languages` for a repository: trusted after an upgrade, every command failed.
    const home = tempDir();
    expect(runCli(["repo", "add", "a", tempDir(), "--no-embed"], { home }).code).toBe(0);
    const copyFile = join(home, ".config.validated.json");
    const copy = JSON.parse(readFileSync(copyFile, "utf8"));
    delete copy.config.repositories.a.ocr;
    delete copy.config.repositories.a.ocr_languages;
    copy.stamp = copy.stamp.split("|").at(-1); // the stamp as the older build wrote it: the file's alone
    writeFileSync(copyFile, JSON.stringify(copy));
    const status = runCli(["status", "--json"], { home });
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(runCli(["config", "show", "--json"], { home }).stdout).repositories.a).toMatchObject({ ocr_languages: ["eng"] });
  });

  test("in a source checkout, a default another module holds is part of the validated copy's stamp (s22 review F5)", () => {
    // The stamp hashed config.ts alone: a change to file-types.ts's defaults was never seen until config.yaml changed.
    const tree = tempDir();
    cpSync(join(ROOT, "src"), join(tree, "src"), { recursive: true });
    for (const file of ["package.json", "SKILL.md"]) cpSync(join(ROOT, file), join(tree, file)); // what src imports
    symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"));
    const home = tempDir();
    const cli = (...args: string[]) =>
      Bun.spawnSync([process.execPath, join(tree, "src/main.ts"), ...args], { cwd: home, env: { ...process.env, RESEARCHER_HOME: home } });
    expect(cli("repo", "add", "r", tempDir(), "--no-embed").exitCode).toBe(0);
    const firstTypes = () => JSON.parse(cli("config", "show", "--json").stdout.toString()).repositories.r.file_types.slice(0, 2);
    expect(firstTypes()).toEqual(["md", "markdown"]);
    const types = join(tree, "src/file-types.ts");
    writeFileSync(types, readFileSync(types, "utf8").replace('["md", "markdown"', '["zzz", "md", "markdown"'));
    expect(firstTypes()).toEqual(["zzz", "md"]);
  });

  test("an empty config.yaml while indexes exist is an error that says so, never an empty registry", () => {
    const home = tempDir();
    writeTree(home, { "repositories/notes/index.db": "stand-in", "repositories/papers/index.db": "stand-in" });
    for (const text of ["", "  \n\n", "# only a comment\n"]) {
      writeFileSync(join(home, "config.yaml"), text);
      const error = (() => {
        try {
          return listRepositories(home);
        } catch (e) {
          return e;
        }
      })() as ResearcherError;
      expect(error).toBeInstanceOf(ResearcherError);
      expect(error.code).toBe("INVALID_CONFIG");
      expect(error.message).toContain("notes, papers");
      expect(error.hint).toContain("repo add");
    }
    const cli = runCli(["repo", "list"], { home });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^error: .*config\.yaml.*empty/);
  });

  test("an empty config.yaml in a home without indexes gives the defaults", () => {
    const home = tempDir();
    writeFileSync(join(home, "config.yaml"), "\n");
    expect(loadConfig(home).repositories).toEqual({});
  });

  test("a config.yaml that is not a mapping is refused", () => {
    const home = tempDir();
    for (const text of ["just words\n", "- a\n- b\n"]) {
      writeFileSync(join(home, "config.yaml"), text);
      expect(() => loadConfig(home)).toThrow(/mapping/);
    }
  });

  test("home: flag beats environment beats ~/.researcher", () => {
    const saved = process.env.RESEARCHER_HOME;
    process.env.RESEARCHER_HOME = "/tmp/from-env";
    expect(resolveHome("/tmp/from-flag")).toBe("/tmp/from-flag");
    expect(resolveHome()).toBe("/tmp/from-env");
    delete process.env.RESEARCHER_HOME;
    expect(resolveHome()).toMatch(/\.researcher$/);
    if (saved !== undefined) process.env.RESEARCHER_HOME = saved;
  });
});

test("config set of a list setting takes its items between commas, as repo add does; a YAML list still works (s23 U2)", () => {
  const home = tempDir();
  registerRepository(home, { name: "code", path: tempDir() });
  const repository = () => loadConfig(home).repositories.code!;
  // Both were "expected Array", the fix the index summary pointed a code folder added without --code to.
  setConfigValue(home, "repositories.code.file_types", "py");
  expect(repository().file_types).toEqual(["py"]);
  setConfigValue(home, "repositories.code.file_types", "md,py");
  expect(repository().file_types).toEqual(["md", "py"]);
  setConfigValue(home, "repositories.code.file_types", "[md, txt]");
  expect(repository().file_types).toEqual(["md", "txt"]);
  // A glob's own comma, inside braces, is no separator; '' is no item.
  setConfigValue(home, "repositories.code.exclude", "{drafts,tmp}/**, *.log");
  expect(repository().exclude).toEqual(["{drafts,tmp}/**", "*.log"]);
  setConfigValue(home, "repositories.code.exclude", "");
  expect(repository().exclude).toEqual([]);
  expect(() => setConfigValue(home, "repositories.code.file_types", "")).toThrow("needs at least one extension");
  setConfigValue(home, "repositories.code.ocr_languages", "eng,deu");
  expect(repository().ocr_languages).toEqual(["eng", "deu"]);
  // A setting that is no list keeps its commas.
  setConfigValue(home, "repositories.code.description", "a, b");
  expect(repository().description).toBe("a, b");
});

test("repo add and config set read a list setting by one rule: braces keep their commas, file types lose dot and case (s23 U2 leftover)", () => {
  const home = tempDir();
  const folder = tempDir();
  // repo add split '{drafts,tmp}/**' at every comma (into '{drafts' and 'tmp}/**'), where config set keeps it whole.
  const added = runCli(["repo", "add", "code", folder, "--exclude", "{drafts,tmp}/**,*.log", "--file-types", ".PY,md"], { home });
  expect(added.code).toBe(0);
  const byRepoAdd = loadConfig(home).repositories.code!;
  expect([byRepoAdd.exclude, byRepoAdd.file_types]).toEqual([
    ["{drafts,tmp}/**", "*.log"],
    ["py", "md"],
  ]);
  // config set stored `.PY` as typed (which the schema then refused) and `PY` upper case, where repo add keeps `py`.
  setConfigValue(home, "repositories.code.exclude", "{drafts,tmp}/**,*.log");
  setConfigValue(home, "repositories.code.file_types", ".PY,md");
  const byConfigSet = loadConfig(home).repositories.code!;
  expect([byConfigSet.exclude, byConfigSet.file_types]).toEqual([byRepoAdd.exclude, byRepoAdd.file_types]);
  setConfigValue(home, "repositories.code.file_types", "[.TXT, Md, txt]");
  expect(loadConfig(home).repositories.code!.file_types).toEqual(["txt", "md"]);
});

test("a repository registered with the old text-only defaults reads every format now; chosen types stay chosen", () => {
  const home = tempDir();
  registerRepository(home, { name: "old", path: tempDir() });
  registerRepository(home, { name: "chosen", path: tempDir(), fileTypes: ["md"] });
  setConfigValue(home, "repositories.old.file_types", '["md", "markdown", "mdx", "txt"]');
  expect(getRepository(home, "old").fileTypes).toEqual([...FILE_TYPES]);
  expect(getRepository(home, "old").fileTypes).toContain("pdf");
  expect(getRepository(home, "chosen").fileTypes).toEqual(["md"]);
});

describe("config.yaml holds only what the user set", () => {
  const written = (home: string) => parseYaml(readFileSync(join(home, "config.yaml"), "utf8"));

  test("setting one key writes that key alone: later default changes still reach the others", () => {
    const home = tempDir();
    setConfigValue(home, "search.limit", "25");
    expect(written(home)).toEqual({ search: { limit: 25 } });
    setConfigValue(home, "chunk.tokens", "200");
    expect(written(home)).toEqual({ search: { limit: 25 }, chunk: { tokens: 200 } });
    expect(loadConfig(home).chunk).toEqual({ tokens: 200, code_tokens: 512, overlap: 0.15 });
  });

  test("a repository is written with its path and the options chosen for it, not every default", () => {
    const home = tempDir();
    const plain = tempDir();
    const chosen = tempDir();
    registerRepository(home, { name: "plain", path: plain, embed: true, ignoreFiles: true, exclude: [] });
    registerRepository(home, { name: "chosen", path: chosen, fileTypes: ["md"], exclude: ["drafts"], embed: false, description: "d" });
    const repos = (written(home) as { repositories: Record<string, Record<string, unknown>> }).repositories;
    expect(Object.keys(repos.plain!).sort()).toEqual(["added", "path"]);
    expect(repos.chosen).toMatchObject({ file_types: ["md"], exclude: ["drafts"], embed: false, description: "d" });
    expect(getRepository(home, "plain").fileTypes).toEqual([...FILE_TYPES]);
  });
});

test.skipIf(!AS_ROOT)(
  "a home or config.yaml this user may not write or read is named with the fix (run as an unprivileged user)",
  async () => {
    const base = tempDir();
    chmodSync(base, 0o755);
    mkdirSync(join(base, "home"));
    chownSync(join(base, "home"), 65534, 65534);
    const cli = await cliAsNobody(base);
    const home = join(base, "home");
    const file = join(home, "config.yaml");
    expect(cli("config", "set", "search.limit", "5").code).toBe(0);
    chmodSync(file, 0o000);
    const unreadable = cli("config", "set", "search.limit", "6");
    expect(unreadable).toMatchObject({
      code: 1,
      stderr: `error: cannot read ${file}: permission denied\nhint: give yourself read access to it (\`ls -l ${file}\` shows who has it)\n`,
    });
    chmodSync(file, 0o644);
    chmodSync(home, 0o555);
    try {
      const unwritable = cli("config", "set", "search.limit", "7");
      expect(unwritable.code).toBe(1);
      expect(unwritable.stderr).toBe(
        `error: cannot write ${file}: permission denied\nhint: give yourself read and write access to ${home} and its files (\`ls -la ${home}\` shows who has it)\n`,
      );
    } finally {
      chmodSync(home, 0o755);
    }
  },
);

test("edits made at once by several processes all land (config.yaml is read, edited and written under a lock)", async () => {
  const home = tempDir();
  const folders = [tempDir(), tempDir(), tempDir()];
  expect(runCli(["repo", "add", "base", folders[0]!, "--no-embed"], { home }).code).toBe(0);
  const edits = [
    ["context", "add", "base:a", "ctx A"],
    ["context", "add", "base:b", "ctx B"],
    ["context", "add", "base:c", "ctx C"],
    ["config", "set", "search.limit", "17"],
    ["repo", "add", "r1", folders[1]!, "--no-embed"],
    ["repo", "add", "r2", folders[2]!, "--no-embed"],
  ];
  const runs = edits.map((args) =>
    Bun.spawn([process.execPath, join(import.meta.dir, "../src/main.ts"), ...args], {
      env: { ...process.env, RESEARCHER_HOME: home },
      stdout: "ignore",
      stderr: "pipe",
    }),
  );
  const codes = await Promise.all(runs.map((run) => run.exited));
  expect(codes).toEqual(edits.map(() => 0));
  const settings = parseYaml(readFileSync(join(home, "config.yaml"), "utf8")) as {
    search: { limit: number };
    repositories: Record<string, { contexts?: Record<string, string> }>;
  };
  expect(settings.search.limit).toBe(17);
  expect(Object.keys(settings.repositories).sort()).toEqual(["base", "r1", "r2"]);
  expect(settings.repositories.base!.contexts).toEqual({ a: "ctx A", b: "ctx B", c: "ctx C" });
  expect(existsSync(join(home, "config.lock"))).toBe(false);
  // Two `repo add` of one name at once: one succeeds, the other says the name is taken (both said "added").
  const same = [tempDir(), tempDir()].map((folder) =>
    Bun.spawn([process.execPath, join(import.meta.dir, "../src/main.ts"), "repo", "add", "twin", folder, "--no-embed"], {
      env: { ...process.env, RESEARCHER_HOME: home },
      stdout: "ignore",
      stderr: "pipe",
    }),
  );
  expect((await Promise.all(same.map((run) => run.exited))).sort()).toEqual([0, 1]);
}, 30_000);

test("names JavaScript objects reserve are no repository names and no part of a setting's key (they reached the prototype)", () => {
  const home = tempDir();
  const docs = tempDir();
  for (const name of ["constructor", "prototype", "toString", "__proto__", "hasOwnProperty"]) {
    const added = runCli(["repo", "add", name, docs, "--no-embed"], { home });
    expect({ name, code: added.code, stderr: added.stderr }).toMatchObject({
      name,
      code: 2,
      stderr: expect.stringMatching(/^error: invalid repository name .*\nhint: .*reserve/),
    });
  }
  expect(runCli(["repo", "list"], { home }).stdout).toContain("no repositories yet");
  for (const key of ["__proto__.x", "search.__proto__", "constructor.prototype.x"]) {
    const set = runCli(["config", "set", key, "1"], { home });
    expect({ key, code: set.code, stderr: set.stderr }).toMatchObject({
      key,
      code: 1,
      stderr: expect.stringMatching(/^error: config key .*: there is no setting/),
    });
  }
  expect(runCli(["repo", "add", "fine", docs, "--no-embed"], { home }).code).toBe(0);
});

test("reserved names elsewhere: a context prefix, a command word, an XML entity, a repository an older release wrote (review s8 #5)", () => {
  const home = tempDir();
  const docs = tempDir();
  expect(runCli(["repo", "add", "notes", docs, "--no-embed"], { home }).code).toBe(0);
  // A context the reader of config.yaml would drop without a word, and one that does not exist, are refused.
  for (const [command, prefix] of [
    ["add", "constructor"],
    ["remove", "toString"],
  ] as const) {
    const result = runCli(["context", command, `notes:${prefix}`, ...(command === "add" ? ["x"] : [])], { home });
    expect({ prefix, code: result.code, stderr: result.stderr.split("\n")[0] }).toEqual({
      prefix,
      code: 1,
      stderr: `error: 'notes:${prefix}': '${prefix}' is a name JavaScript objects reserve`,
    });
  }
  for (const word of ["constructor", "toString", "__proto__"]) {
    expect(runCli([word], { home })).toMatchObject({
      code: 2,
      stderr: `error: unknown command '${word}'\nhint: run \`researcher --help\` for the list\n`,
    });
  }
  expect(decodeXmlEntities("Tom &constructor; &amp; Jerry")).toBe("Tom &constructor; & Jerry");
  writeFileSync(join(home, "config.yaml"), `${readFileSync(join(home, "config.yaml"), "utf8")}  prototype:\n    path: ${docs}\n`);
  const list = runCli(["repo", "list"], { home });
  expect(list).toMatchObject({
    code: 1,
    stderr: expect.stringContaining("error: repositories.prototype: is a name JavaScript objects reserve"),
  });
});

test("a config.yaml that is a FIFO or a link to a device is refused at once, not read (it blocked every command)", () => {
  const home = tempDir();
  Bun.spawnSync(["mkfifo", join(home, "config.yaml")]);
  const started = Date.now();
  const fifo = runCli(["repo", "list"], { home });
  expect(fifo).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: .*config\.yaml is not a regular file\nhint: /) });
  rmSync(join(home, "config.yaml"));
  symlinkSync("/dev/zero", join(home, "config.yaml"));
  expect(runCli(["search", "x"], { home }).stderr).toMatch(/config\.yaml is not a regular file/);
  expect(Date.now() - started).toBeLessThan(20_000);
});

test("a config.yaml that does not validate has a hint that works, not `config show` (which fails the same way: review s8 #4)", () => {
  const home = tempDir();
  writeFileSync(join(home, "config.yaml"), "search:\n  limit: many\n");
  const search = runCli(["search", "x"], { home });
  expect(search.code).toBe(1);
  expect(search.stderr).toContain("hint: fix search.limit in ");
  expect(search.stderr).toContain("the README's Configuration lists every setting");
  expect(runCli(["config", "show"], { home }).code).toBe(1); // why the hint may not send the user there
});

test("a config key with an empty part is refused, not read as another key (search..limit set search.limit: hostile s8 #10)", () => {
  const home = tempDir();
  for (const key of ["search..limit", ".search.limit", "search.limit."]) {
    const set = runCli(["config", "set", key, "1"], { home });
    expect({ key, code: set.code, stderr: set.stderr.split("\n")[0] }).toEqual({
      key,
      code: 1,
      stderr: `error: config key '${key}' has an empty part`,
    });
    expect(set.stderr).toContain("hint: did you mean search.limit?");
  }
  expect(loadConfig(home).search.limit).toBe(10);
});

test("a FIFO where the validated copy of config.yaml is kept is passed over, not read (it blocked every command: review s8 #6)", () => {
  const home = tempDir();
  expect(runCli(["repo", "add", "notes", tempDir(), "--no-embed"], { home }).code).toBe(0);
  const copy = join(home, ".config.validated.json");
  rmSync(copy, { force: true });
  Bun.spawnSync(["mkfifo", copy]);
  const list = Bun.spawnSync([...cliCommand, "repo", "list"], { env: { ...process.env, RESEARCHER_HOME: home }, timeout: 20_000 });
  expect({ code: list.exitCode, listed: list.stdout.toString().includes("notes") }).toEqual({ code: 0, listed: true });
});

test("a home that is a file is one error line naming it, for writes and reads alike (it was an internal EEXIST)", () => {
  const file = join(tempDir(), "not-a-folder");
  writeFileSync(file, "x");
  for (const args of [["repo", "add", "zz", tempDir()], ["index"], ["repo", "list"]]) {
    const run = runCli(args, { home: tempDir(), env: { RESEARCHER_HOME: file } });
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({
      args,
      code: 1,
      stderr: `error: the home folder ${file} is a file, not a folder\nhint: point RESEARCHER_HOME at a folder (or move the file away)\n`,
    });
    // A file on the way to it was `error: ENOTDIR: not a directory, stat …`, with no hint (s16 hostile #10).
    const under = runCli(args, { home: tempDir(), env: { RESEARCHER_HOME: join(file, "sub") } });
    expect({ args, code: under.code, stderr: under.stderr }).toEqual({
      args,
      code: 1,
      stderr: `error: the home folder ${join(file, "sub")} cannot be a folder: a file stands on its path\nhint: point RESEARCHER_HOME at a folder (or move the file away)\n`,
    });
    // A name past the file system's 255 bytes was "unexpected: ENAMETOOLONG" (s19 hostile #7).
    const long = join(tempDir(), "h".repeat(300));
    const tooLong = runCli(args, { home: tempDir(), env: { RESEARCHER_HOME: long } });
    expect({ args, code: tooLong.code, stderr: tooLong.stderr }).toEqual({
      args,
      code: 1,
      stderr: `error: the home folder ${long} cannot exist: a name in it is too long\nhint: point RESEARCHER_HOME at a folder whose names are at most 255 bytes each\n`,
    });
  }
});

test("a time limit past what a timer can keep (~24.8 days) is refused, not read as 'fail every file at once' (s14 hostile #3)", () => {
  const home = tempDir();
  for (const key of ["index.convert_timeout", "index.ocr_page_timeout"]) {
    const refused = runCli(["config", "set", key, "3000000"], { home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toStartWith(`error: ${key}: expected <=2147483, got 3000000`);
    expect(runCli(["config", "set", key, "2147483"], { home }).code).toBe(0);
  }
});

test("convert_workers has a bound: each worker may use convert_memory_mb, and 2,000 of them took 7.6 GB for one file (s16 hostile #1)", () => {
  const home = tempDir();
  const refused = runCli(["config", "set", "index.convert_workers", "2000"], { home });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toStartWith("error: index.convert_workers: expected <=64, got 2000");
  expect(runCli(["config", "set", "index.convert_workers", "64"], { home }).code).toBe(0);
});

test("config.yaml is never written past the 4 MB it reads back; a description is as short as a context, a prefix a path (s16 hostile #9)", () => {
  const home = tempDir();
  const docs = tempDir();
  expect(runCli(["repo", "add", "a", docs, "--no-embed"], { home }).code).toBe(0);
  // A long description went out with every result (one search --json result was 121 KB).
  const description = runCli(["config", "set", "repositories.a.description", "d".repeat(1001)], { home });
  expect(description).toMatchObject({ code: 1, stderr: expect.stringContaining("at most 1000 characters") });
  const prefix = runCli(["context", "add", `a:${"p".repeat(5000)}`, "a short context"], { home });
  expect(prefix.code).toBe(1);
  // A config.yaml a little under 4 MB of contexts (a script that describes every folder): the write that would pass
  // the bound is refused, and every command still works (each failed once the file was past it).
  const contexts = Object.fromEntries(Array.from({ length: 1044 }, (_, i) => [`${i}${"q".repeat(3000)}`, "t".repeat(1000)]));
  writeFileSync(join(home, "config.yaml"), JSON.stringify({ repositories: { a: { path: docs, embed: false, contexts } } }));
  const added = runCli(["context", "add", `a:more${"q".repeat(3000)}`, "t".repeat(1000)], { home });
  expect(added).toMatchObject({
    code: 1,
    stderr: expect.stringMatching(/would grow past 4 MB; nothing was changed\nhint: remove contexts/),
  });
  expect(runCli(["context", "remove", `a:0${"q".repeat(3000)}`], { home }).code).toBe(0);
  expect(runCli(["repo", "list"], { home }).code).toBe(0);
});

test("the bounds hold for what a command writes; a config.yaml an older release wrote past them still works (s17 review #1, #8)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeFileSync(join(docs, "a.md"), "# A\n\nalpha\n");
  // Each was accepted before the bounds: every command then failed on the file, `config set` that would fix it too.
  const long = "d".repeat(1500);
  const contexts = { [`${"p".repeat(5000)}`]: "short", notes: "c".repeat(2000) };
  writeFileSync(
    join(home, "config.yaml"),
    JSON.stringify({ repositories: { a: { path: docs, embed: false, description: long, contexts } }, index: { convert_workers: 2000 } }),
  );
  expect(runCli(["index", "a"], { home }).code).toBe(0);
  const found = runCli(["search", "alpha", "--json"], { home });
  expect(found.code).toBe(0);
  expect(JSON.parse(found.stdout).results[0].context).toBe(long);
  expect(runCli(["config", "set", "search.limit", "20"], { home }).code).toBe(0);
  // More workers than are ever used run as many as are: the bound.
  expect(JSON.parse(runCli(["config", "show", "--json"], { home }).stdout).index.convert_workers).toBe(64);
  // A value an edit changes keeps the bounds, with the fix and no page of the value echoed back.
  const description = runCli(["repo", "add", "b", tempDir(), "--description", "x".repeat(1001)], { home });
  expect(description).toMatchObject({
    code: 1,
    stderr:
      "error: repositories.b.description: at most 1000 characters, got 1001; nothing was changed\nhint: say in a sentence or two what these documents are: it goes out with every result from them\n",
  });
  const prefix = runCli(["context", "add", `a:${"q".repeat(5000)}`, "a short context"], { home });
  expect(prefix).toMatchObject({
    code: 1,
    stderr:
      "error: a context's path prefix in a: at most 4096 characters, got 5000; nothing was changed\nhint: a prefix is a path inside the repository\n",
  });
  expect(runCli(["repo", "list", "--json"], { home }).stdout).not.toContain('"b"');
});

test("temp files a killed config write left in the home are removed by the next one; a running writer's stay (s17 hostile #7)", () => {
  const home = tempDir();
  expect(runCli(["config", "set", "search.limit", "20"], { home }).code).toBe(0);
  const dead = Bun.spawnSync(["true"]).pid; // gone by now
  const left = [
    `.config.yaml.${dead}.mi2k3.ab12cd.tmp`,
    `..config.validated.json.${dead}.mi2k3.ef34gh.tmp`,
    `.config.lock.takeover.${dead}.mi2k3.x1.tmp`,
  ];
  const running = `.config.yaml.${process.pid}.mi2k3.zz99yy.tmp`;
  for (const name of [...left, running]) writeFileSync(join(home, name), "partial");
  expect(runCli(["config", "set", "search.limit", "30"], { home }).code).toBe(0);
  // They stayed for good: verify looks in index folders only.
  for (const name of left) expect({ name, exists: existsSync(join(home, name)) }).toEqual({ name, exists: false });
  expect(existsSync(join(home, running))).toBe(true);
  // A folder of such a name is no writer's temp file: it stays, and the write says it succeeded (it wrote, then failed
  // with `unexpected: Path is a directory`) (s18 review #2).
  const folder = join(home, `.config.yaml.${dead}.mi2k3.cd56ef.tmp`);
  mkdirSync(folder);
  expect(runCli(["config", "set", "search.limit", "40"], { home })).toMatchObject({ code: 0, stderr: "" });
  expect(existsSync(folder)).toBe(true);
});

test("an embedding server's URL must be http or https: a file: URL was taken, and the disk read as a server (s18 hostile #8c)", () => {
  const home = tempDir();
  for (const key of ["embedding.openai_url", "embedding.ollama_url"]) {
    const refused = runCli(["config", "set", key, "file:///etc/passwd"], { home });
    expect({ key, code: refused.code, stderr: refused.stderr.split("\n")[0] }).toEqual({
      key,
      code: 1,
      stderr: `error: ${key}: must be an http:// or https:// URL (config set)`,
    });
    expect(runCli(["config", "set", key, "https://embed.example.org"], { home }).code).toBe(0);
  }
});

test("an empty list of file types is refused, as repo add refuses it: the next run would leave every document out (s21 hostile #11)", () => {
  const home = tempDir();
  expect(runCli(["repo", "add", "n", tempDir(), "--no-embed"], { home }).code).toBe(0);
  const refused = runCli(["config", "set", "repositories.n.file_types", "[]"], { home });
  expect([refused.code, refused.stderr.split("\n")[0]]).toEqual([
    1,
    "error: repositories.n.file_types: needs at least one extension, e.g. [md, txt, pdf]; nothing was changed",
  ]);
  // One an older release wrote reads as the default, and `config set` can replace it (it failed every command,
  // that one included: s22 review F6).
  writeFileSync(
    join(home, "config.yaml"),
    readFileSync(join(home, "config.yaml"), "utf8").replace("embed: false", "embed: false\n    file_types: []"),
  );
  expect(runCli(["status"], { home })).toMatchObject({ code: 0, stderr: "" });
  expect(runCli(["config", "set", "search.limit", "7"], { home }).code).toBe(0);
  expect(runCli(["config", "set", "repositories.n.file_types", "[md]"], { home }).code).toBe(0);
  expect(listRepositories(home)[0]!.fileTypes).toEqual(["md"]);
});

test("OCR languages as meant: [] is the default and a language twice is once, so neither reads every scan again (s21 hostile #11)", () => {
  const home = tempDir();
  const docs = tempDir();
  registerRepository(home, { name: "a", path: docs, embed: false });
  const languages = () => listRepositories(home)[0]!.ocr.languages;
  expect(languages()).toEqual(["eng"]);
  for (const value of ["[]", "[eng, eng]"]) {
    setConfigValue(home, "repositories.a.ocr_languages", value);
    expect({ value, languages: languages() }).toEqual({ value, languages: ["eng"] });
  }
});

test("config show --json fills in each repository's OCR defaults, and config.yaml keeps only what was set (s21 scripts #4)", () => {
  const home = tempDir();
  expect(runCli(["repo", "add", "n", tempDir(), "--no-embed"], { home }).code).toBe(0);
  const shown = JSON.parse(runCli(["config", "show", "--json"], { home }).stdout);
  // `contexts` too: present only once a context was added, `jq '.repositories.n.contexts | keys'` failed (s23 contracts L2).
  expect(shown.repositories.n).toMatchObject({ ocr: "auto", ocr_languages: ["eng"], contexts: {} });
  expect(readFileSync(join(home, "config.yaml"), "utf8")).not.toMatch(/ocr|contexts/);
});

test("config set says what it set, value and all (s18 user: it answered `set search.limit` alone)", () => {
  const home = tempDir();
  expect(runCli(["config", "set", "search.limit", "20"], { home })).toMatchObject({ code: 0, stdout: "set search.limit = 20\n" });
  // What was saved, not what was typed: `0500` is 500, a list is a list, a relative path is the folder it names.
  expect(runCli(["config", "set", "watch.debounce_ms", "0500"], { home }).stdout).toBe("set watch.debounce_ms = 500\n");
  const docs = tempDir();
  mkdirSync(join(docs, "notes"));
  expect(runCli(["repo", "add", "n", join(docs, "notes"), "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["config", "set", "repositories.n.exclude", "[drafts, tmp ]"], { home }).stdout).toBe(
    'set repositories.n.exclude = ["drafts","tmp"]\n',
  );
  expect(runCli(["config", "set", "repositories.n.path", "notes"], { home, cwd: docs }).stdout).toBe(
    `set repositories.n.path = ${join(realpathSync(docs), "notes")}\n`,
  );
});

test("a config.yaml that is a link to nothing is named so, not read as no repositories (s18 retest)", () => {
  // A dotfiles folder not checked out: `repo list` said "no repositories yet", exit 0, and search "no repositories to search".
  const home = tempDir();
  const docs = tempDir();
  writeFileSync(join(docs, "a.md"), "# A\n\nalpha\n");
  expect(runCli(["repo", "add", "a", docs, "--no-embed"], { home }).code).toBe(0);
  const gone = join(tempDir(), "dotfiles", "config.yaml");
  rmSync(join(home, "config.yaml"));
  symlinkSync(gone, join(home, "config.yaml"));
  for (const args of [
    ["repo", "list"],
    ["search", "alpha"],
  ]) {
    const run = runCli(args, { home });
    expect({ args, code: run.code, stderr: run.stderr.split("\n")[0] }).toEqual({
      args,
      code: 1,
      stderr: `error: ${join(home, "config.yaml")} is a link to ${gone}, which does not exist`,
    });
  }
});
