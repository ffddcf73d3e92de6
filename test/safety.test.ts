/**
 * Issue 22 (safety): reads stay inside the repository root whatever happens to its folders, symlinks inside it are
 * followed, names with control characters never reach a terminal raw, and the HTTP and stdio servers answer bad
 * input with an error instead of failing or wedging. The CLI and the servers run as real subprocesses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { discoverFiles } from "../src/index/discover.ts";
import { indexFiles, indexRepository, prepareDocument } from "../src/index/indexer.ts";
import { ConvertPool } from "../src/convert/pool.ts";
import { confinedReader, movedRoot, outsideRoot, readConfinedFile, rootRecord } from "../src/files.ts";
import { getRepository, selectRepositories } from "../src/repos.ts";
import { Store } from "../src/store/store.ts";
import { cliCommand, MODEL_ENV, HOOK_TIMEOUT, runCli, startServe, tempDir, writeTree } from "./helpers.ts";

const SECRET = "outside secret words";

const env = (home: string) => ({
  PATH: process.env.PATH ?? "",
  HOME: home,
  RESEARCHER_HOME: home,
  ...MODEL_ENV,
  NO_COLOR: "1",
});

/** Temp folders for a home and its repository "docs" (made while tests are collected: not inside a hook). */
const folders = () => ({ home: tempDir(), docs: tempDir() });

/** A BM25 repository "docs" over `docs`, indexed through the CLI. */
function indexedRepository({ home, docs }: { home: string; docs: string }, files: Record<string, string>, link?: (docs: string) => void) {
  writeTree(docs, files);
  link?.(docs);
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  const index = runCli(["index", "docs", "--json"], { home });
  expect(index.code).toBe(0);
  return { home, docs, summary: JSON.parse(index.stdout) };
}

/** `serve --port 0` as a subprocess; its URL once it listens, and what it printed until then. */
async function startHttp(home: string, flags: string[] = []): Promise<{ url: string; stop: () => void; printed: string }> {
  const { url, printed, proc } = await startServe(cliCommand, flags, { env: env(home), cwd: home });
  return { url, stop: () => proc.kill(), printed };
}

describe("a folder swapped for a link out of the root after indexing", () => {
  const outside = tempDir();
  const { home, docs } = folders();
  let docid: string;
  let http: { url: string; stop: () => void };
  let client: Client;

  beforeAll(async () => {
    writeTree(outside, { "a.md": `# Outside\n\n${SECRET}\n` });
    indexedRepository({ home, docs }, { "sub/a.md": "# Inside\n\ninside words\n", "top.md": "# Top\n\ntop words\n" });
    docid = JSON.parse(runCli(["get", "docs:sub/a.md", "--json"], { home }).stdout).docid;
    renameSync(join(docs, "sub"), join(docs, "x"));
    symlinkSync(outside, join(docs, "sub"));
    http = await startHttp(home);
    client = new Client({ name: "safety", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: cliCommand[0]!,
        args: [...cliCommand.slice(1), "serve"],
        env: env(home),
        cwd: home,
        stderr: "pipe",
      }),
    );
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    http?.stop();
    await client?.close();
  });

  test("get by docid refuses, naming where the file now resolves", () => {
    const got = runCli(["get", docid], { home });
    expect(got.stdout).not.toContain(SECRET);
    expect(got.code).toBe(1);
    expect(got.stderr).toContain("outside the repository");
    expect(got.stderr).toContain(join(outside, "a.md"));
  });

  test("multi-get skips it with the reason", () => {
    const got = runCli(["multi-get", "docs:sub/*", "--json"], { home });
    expect(got.stdout).not.toContain(SECRET);
    const answer = JSON.parse(got.stdout);
    expect(answer.documents).toEqual([]);
    expect(answer.skipped[0].reason).toContain("outside the repository");
  });

  test("MCP get_document and multi_get refuse", async () => {
    const one = (await client.callTool({ name: "get_document", arguments: { ref: docid } })) as {
      content: { text: string }[];
      isError?: boolean;
    };
    expect(one.isError).toBe(true);
    expect(JSON.stringify(one)).not.toContain(SECRET);
    const many = await client.callTool({ name: "multi_get", arguments: { pattern: "docs:sub/*" } });
    expect(JSON.stringify(many)).not.toContain(SECRET);
    expect(JSON.stringify(many)).toContain("outside the repository");
  });

  test("REST /documents refuses, by docid and by path alike", async () => {
    for (const ref of [docid, "docs:sub/a.md"]) {
      const response = await fetch(`${http.url}/documents/${encodeURIComponent(ref)}`);
      const body = await response.text();
      expect(body).not.toContain(SECRET);
      expect(response.status).toBe(422); // the file cannot be served: not a server failure (500), nor bad input (400)
      expect(JSON.parse(body).error.code).toBe("FILE_UNREADABLE");
      expect(body).toContain("outside the repository");
    }
  });

  test("a path the index does not hold is 'not indexed' whether or not a file exists there outside: nothing to probe (hostile s8 #5)", async () => {
    writeTree(outside, { "exists.md": "# Exists\n\noutside\n" });
    const answers = (path: string) => {
      const got = runCli(["get", `docs:${path}`], { home });
      return { code: got.code, stderr: got.stderr.split("\n")[0]!.replace(path, "<path>") };
    };
    expect(answers("sub/exists.md")).toEqual(answers("sub/nothere.md"));
    expect(answers("sub/exists.md").stderr).toBe("error: docs:<path> is not an indexed document");
    const statuses = await Promise.all(
      ["sub/exists.md", "sub/nothere.md"].map(async (path) => {
        const response = await fetch(`${http.url}/documents/${encodeURIComponent(`docs:${path}`)}`);
        return [response.status, JSON.parse(await response.text()).error.code];
      }),
    );
    expect(statuses).toEqual([
      [404, "DOCUMENT_NOT_FOUND"],
      [404, "DOCUMENT_NOT_FOUND"],
    ]);
  });

  test("a rebuild does not index the outside text (a linked folder is never entered)", () => {
    expect(runCli(["index", "docs", "--rebuild"], { home }).code).toBe(0);
    expect(JSON.parse(runCli(["search", "secret", "--json"], { home }).stdout).results).toEqual([]);
  });
});

/** Move a repository's folder aside and put a link in its place to a folder holding other text; returns that folder. */
function replaceWithLink(docs: string): string {
  const fake = tempDir();
  writeTree(fake, { "a.md": `# A\n\n${SECRET}\n` });
  renameSync(docs, `${docs}.real`);
  symlinkSync(fake, docs);
  return fake;
}

/** Undo replaceWithLink. */
function putBack(docs: string): void {
  rmSync(docs);
  renameSync(`${docs}.real`, docs);
}

test("a repository folder replaced by a link is neither read through nor emptied by a run (hostile s8 #7)", () => {
  const { home, docs } = indexedRepository(folders(), { "a.md": "# A\n\ninside words\n" });
  const fake = replaceWithLink(docs);
  const got = runCli(["get", "docs:a.md"], { home });
  expect(got.stdout).not.toContain(SECRET);
  expect(got.code).toBe(1);
  expect(got.stderr).toContain(`the repository folder ${docs} now resolves to ${fake}`);
  const run = runCli(["index", "docs"], { home });
  expect(run).toMatchObject({
    code: 1,
    stderr: expect.stringContaining(`repository folder ${docs} now resolves to ${fake}; nothing was changed`),
  });
  // The fix keeps the index (repo remove would delete it: s9 review).
  expect(got.stderr).toContain(
    `hint: put the folder back, or point the repository at the new place (its index is kept): \`researcher config set repositories.docs.path ${fake}\``,
  );
  const verified = runCli(["verify", "docs"], { home }); // it said ok (s9 hostile)
  expect(verified).toMatchObject({ code: 1, stdout: expect.stringContaining(`now resolves to ${fake}`) });
  putBack(docs);
  expect(runCli(["get", "docs:a.md"], { home }).stdout).toContain("inside words");
});

test("an index from before the folder's record was kept still refuses a folder replaced by a link (s10 review #1)", () => {
  const { home, docs } = indexedRepository(folders(), { "a.md": "# A\n\ninside words\n" });
  const store = Store.open(getRepository(home, "docs").dir, { write: true });
  store.meta.delete("root"); // as an index written before the record was kept
  store.close();
  const fake = replaceWithLink(docs);
  const got = runCli(["get", "docs:a.md"], { home });
  expect(got.stdout).not.toContain(SECRET);
  expect(got.stderr).toContain(`now resolves to ${fake}`);
  expect(runCli(["index", "docs"], { home }).code).toBe(1);
  putBack(docs);
});

test("a repository registered through a link follows it when it is pointed elsewhere (s10 review #2)", () => {
  const { home, docs } = indexedRepository(folders(), { "a.md": "# A\n\ninside words\n" });
  const other = tempDir();
  writeTree(other, { "b.md": "# B\n\nother words\n" });
  const link = join(tempDir(), "latest");
  symlinkSync(docs, link);
  expect(runCli(["config", "set", "repositories.docs.path", link], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  rmSync(link);
  symlinkSync(other, link); // `latest` now points at the next folder
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  expect(runCli(["get", "docs:b.md"], { home }).stdout).toContain("other words");
});

test("a repository registered through a link (config set …path, by hand) is no moved folder: it indexes and reads (s9 review)", () => {
  const { home, docs } = indexedRepository(folders(), { "a.md": "# A\n\ninside words\n" });
  const link = join(tempDir(), "docs-link");
  symlinkSync(docs, link);
  expect(runCli(["config", "set", "repositories.docs.path", link], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  expect(runCli(["get", "docs:a.md"], { home }).stdout).toContain("inside words");
  expect(runCli(["verify", "docs"], { home }).code).toBe(0);
});

test("a repository registered through a link before its first index run indexes: it was refused as moved, for good (s12 review #2)", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "a.md": "# A\n\ninside words\n" });
  const link = join(tempDir(), "docs-link");
  symlinkSync(docs, link);
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["config", "set", "repositories.docs.path", link], { home }).code).toBe(0);
  // Nothing was indexed anywhere yet: there is nothing the link could lead to read from the wrong place.
  expect(runCli(["index", "docs"], { home })).toMatchObject({ code: 0, stderr: "" });
  expect(runCli(["get", "docs:a.md"], { home }).stdout).toContain("inside words");
  expect(runCli(["status", "docs"], { home }).stdout).toContain("1 document");
});

test("a repository registered through a link whose first run was cut short after a batch indexes and reads on: it was refused as moved for ever (s13 review #3)", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [`n${i}.md`, `# N${i}\n\nnote number ${i}\n`])));
  const link = join(tempDir(), "docs-link");
  symlinkSync(docs, link);
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["config", "set", "repositories.docs.path", link], { home }).code).toBe(0);
  // Killed once its first batch of 1,000 documents is written, before the run's end records anything else.
  const cut = indexRepository(home, getRepository(home, "docs"), {
    onProgress: (progress) => {
      if (progress.phase === "index" && progress.done >= 1100) throw new Error("killed");
    },
  });
  expect(cut).rejects.toThrow("killed");
  await cut.catch(() => {});
  expect(Store.open(getRepository(home, "docs").dir).counts().documents).toBeGreaterThanOrEqual(1000);
  expect(runCli(["index", "docs"], { home })).toMatchObject({ code: 0, stderr: "" });
  expect(runCli(["get", "docs:n1.md"], { home }).stdout).toContain("note number 1");
  expect(runCli(["status", "docs"], { home }).stdout).toContain("1200 documents");
});

describe("the indexer's read step", () => {
  test("a folder swapped between discovery and the read is not read through", async () => {
    const docs = tempDir();
    const outside = tempDir();
    writeTree(docs, { "sub/a.md": "# Inside\n\ninside words\n" });
    writeTree(outside, { "a.md": `# Outside\n\n${SECRET}\n` });
    const [file] = discoverFiles(docs, { fileTypes: ["md"], exclude: [] }).files;
    renameSync(join(docs, "sub"), join(docs, "x"));
    symlinkSync(outside, join(docs, "sub"));
    const pool = new ConvertPool({ size: 1, timeoutMs: 10_000 });
    try {
      const prepared = await prepareDocument(file!, undefined, {
        chunk: { tokens: 350, overlap: 0 },
        maxBytes: 1 << 20,
        pool,
        root: undefined,
        read: confinedReader(file!.root),
        force: () => false,
        chunking: "",
        conversion: "",
        failure: "",
        kept: () => undefined,
        ocrReadings: () => new Map(),
        ocrImages: () => new Map(),
        keepOcrReading: () => {},
      });
      expect(prepared).toEqual({
        kind: "failed",
        path: "sub/a.md",
        reason: `resolves to ${join(outside, "a.md")}, outside the repository`,
        gone: true, // the path leads out of the repository: an indexed document there goes
      });
    } finally {
      pool.close();
    }
  });
});

test("a root replaced by a link after it was checked: reads stay confined to the folder the check accepted (s11 review #7)", () => {
  // get and index runs checked the root (movedRoot) and then resolved it afresh at the read: a swap in between
  // read through the link.
  const base = tempDir();
  const docs = join(base, "docs");
  const outside = tempDir();
  writeTree(docs, { "a.md": "# Inside\n\ninside words\n" });
  writeTree(outside, { "a.md": `# Outside\n\n${SECRET}\n` });
  const checked = rootRecord(docs)!;
  expect(movedRoot(docs, checked)).toBeUndefined();
  renameSync(docs, join(base, "was-docs"));
  symlinkSync(outside, docs);
  const refused = { reason: outsideRoot(realpathSync(join(outside, "a.md"))), outside: true };
  expect(readConfinedFile(docs, "a.md", 1 << 20, checked.real)).toEqual(refused);
  expect(confinedReader(docs, checked.real)("a.md", 1 << 20)).toEqual(refused);
});

describe("symlinked files", () => {
  test("a link inside the root is indexed and read; one out of it is a failure naming its target", () => {
    const outside = tempDir();
    writeTree(outside, { "secret.md": `# Secret\n\n${SECRET}\n` });
    const { home, summary } = indexedRepository(folders(), { "real.md": "# Real\n\nlinked words\n" }, (docs) => {
      symlinkSync("real.md", join(docs, "link.md"));
      mkdirSync(join(docs, "deeper"));
      symlinkSync("../real.md", join(docs, "deeper/up.md"));
      symlinkSync(join(outside, "secret.md"), join(docs, "out.md"));
    });
    expect(summary).toMatchObject({ indexed: 3, failed: 1 });
    expect(summary.failures).toEqual([{ path: "out.md", reason: `resolves to ${join(outside, "secret.md")}, outside the repository` }]);
    const got = runCli(["get", "docs:link.md"], { home });
    expect(got).toMatchObject({ code: 0, stdout: "# Real\n\nlinked words\n" });
    expect(runCli(["get", "docs:deeper/up.md"], { home }).stdout).toBe("# Real\n\nlinked words\n");
  });
});

describe("links to what the repository leaves out (excluded, hidden, ignored)", () => {
  test("neither a file link nor a path through a folder link lets such a file in, in a run or by name", async () => {
    const { home, docs } = folders();
    writeTree(docs, {
      "private/secret.md": "# S\n\nprivatesecret one\n",
      ".hidden/h.md": "# H\n\nhiddensecret two\n",
      "ignored/i.md": "# I\n\nignoredsecret three\n",
      ".gitignore": "ignored/\n",
      "ok.md": "# Ok\n\nfine words\n",
    });
    for (const [link, target] of [
      ["pub", "private"],
      ["vis", ".hidden"],
      ["notign", "ignored"],
      ["direct.md", "private/secret.md"],
    ])
      symlinkSync(target!, join(docs, link!));
    expect(runCli(["repo", "add", "docs", docs, "--exclude", "private", "--no-embed"], { home }).code).toBe(0);
    const run = JSON.parse(runCli(["index", "docs", "--json"], { home }).stdout);
    expect(run).toMatchObject({
      indexed: 1,
      failures: [{ path: "direct.md", reason: "links to private/secret.md, which this repository leaves out" }],
    });
    const repo = getRepository(home, "docs");
    // By name (MCP add_to_index, watch), each is a failure saying why, and the rest of the batch goes on.
    const named = await indexFiles(home, repo, ["pub/secret.md", "vis/h.md", "notign/i.md", "ok.md"]);
    expect(named.failures).toEqual([
      { path: "pub/secret.md", reason: "its folder pub is a link, which discovery does not follow" },
      { path: "vis/h.md", reason: "its folder vis is a link, which discovery does not follow" },
      { path: "notign/i.md", reason: "its folder notign is a link, which discovery does not follow" },
    ]);
    for (const word of ["privatesecret", "hiddensecret", "ignoredsecret"]) {
      expect(JSON.parse(runCli(["search", word, "--json"], { home }).stdout).results).toEqual([]);
    }
  });
});

describe("an indexed file replaced by a link out of the root", () => {
  const swap = (docs: string, outside: string) => {
    rmSync(join(docs, "a.md"));
    symlinkSync(join(outside, "secret.md"), join(docs, "a.md"));
  };
  const setUp = () => {
    const outside = tempDir();
    writeTree(outside, { "secret.md": `# Secret\n\n${SECRET}\n` });
    const { home, docs } = indexedRepository(folders(), { "a.md": "# Old\n\noldcontent canary\n", "b.md": "# B\n\nkept\n" });
    return { home, docs, outside };
  };
  const hits = (home: string, query: string) => JSON.parse(runCli(["search", query, "--json"], { home }).stdout).results.length;

  test("the next index run drops its document and records why (it holds no document of the repository any more)", () => {
    const { home, docs, outside } = setUp();
    swap(docs, outside);
    const run = runCli(["index", "docs", "--json"], { home });
    expect(JSON.parse(run.stdout)).toMatchObject({
      removed: 1,
      failures: [{ path: "a.md", reason: `resolves to ${join(outside, "secret.md")}, outside the repository` }],
    });
    expect(hits(home, "canary")).toBe(0);
    expect(hits(home, SECRET)).toBe(0);
    expect(hits(home, "kept")).toBe(1);
    expect(runCli(["verify", "docs"], { home }).code).toBe(0);
  });

  test("remove drops it without following the link; an add_to_index-style update (indexFiles) drops it too", async () => {
    const { home, docs, outside } = setUp();
    swap(docs, outside);
    expect(runCli(["remove", "docs", "a.md"], { home })).toMatchObject({ code: 0, stdout: "removed docs:a.md\n" });
    expect(hits(home, "canary")).toBe(0);
    const again = setUp();
    swap(again.docs, again.outside);
    const summary = await indexFiles(again.home, getRepository(again.home, "docs"), ["a.md"]);
    expect(summary).toMatchObject({ removed: 1, failed: 1 });
    expect(hits(again.home, "canary")).toBe(0);
  });
});

test("convert follows a symlink it is given", () => {
  const dir = tempDir();
  writeTree(dir, { "t.md": "# T\n\nhello\n" });
  symlinkSync("t.md", join(dir, "link.md"));
  expect(runCli(["convert", join(dir, "link.md")], { home: dir })).toMatchObject({ code: 0, stdout: "# T\n\nhello\n" });
});

describe("names with control characters", () => {
  const evil = "red\x1b[31m\x07.md";
  const newline = "two\nlines.md";
  const { home, docs } = folders();
  beforeAll(() => {
    indexedRepository(
      { home, docs },
      { [evil]: "# Red\n\ncontrol words\n", [newline]: "# Two\n\ncontrol words \x1b]52;c;cHduZWQ=\x07 here\n" },
    );
  });

  const noRawControls = (text: string) => {
    expect(text).not.toContain("\x1b");
    expect(text).not.toContain("\x07");
    expect(text).not.toContain("two\nlines");
  };

  test("MCP tool texts escape them in names (listings, headers, confirmations); documents' text is as it is", async () => {
    const client = new Client({ name: "safety", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({ command: cliCommand[0]!, args: [...cliCommand.slice(1), "serve"], env: env(home), cwd: home }),
    );
    try {
      const text = async (name: string, args: Record<string, unknown> = {}) =>
        ((await client.callTool({ name, arguments: args })) as { content: { text: string }[] }).content[0]!.text;
      for (const [tool, args] of [
        ["list_documents", {}],
        ["get_document", { ref: `docs:${evil}` }],
        ["multi_get", { pattern: "docs:*" }],
        ["repositories_for", { query: "control" }],
        ["search_fragments", { query: "control" }],
      ] as const) {
        const shown = await text(tool, args);
        expect({ tool, raw: shown.includes("\x1b[31m") || shown.includes("two\nlines") }).toEqual({ tool, raw: false });
      }
      expect(await text("list_documents")).toContain("docs:red\\x1b[31m\\x07.md");
      expect(await text("multi_get", { pattern: `docs:${newline}` })).toContain("=== docs:two\\nlines.md\n# Two");
    } finally {
      await client.close();
    }
  });

  test("--files -0 ends each path with NUL, as it is: xargs -0 reaches the very file (s16 user #2)", () => {
    // Escaped, `two\nlines.md` is the name of another file a script could then read (or delete).
    for (const args of [
      ["search", "control", "--files", "-0"],
      ["multi-get", "docs:*", "--files", "--null"],
    ]) {
      const { stdout, code } = runCli(args, { home });
      expect({ args, code }).toEqual({ args, code: 0 });
      expect(stdout.endsWith("\0")).toBe(true);
      const paths = stdout.slice(0, -1).split("\0");
      expect(paths.map((p) => p.slice(docs.length + 1)).sort()).toEqual([evil, newline].sort());
      for (const path of paths) expect(readFileSync(path, "utf8")).toStartWith("# ");
    }
    const usage = runCli(["search", "control", "-0"], { home });
    expect(usage).toMatchObject({ code: 2, stderr: expect.stringContaining("error: --null ends the paths --files prints") });
  });

  test("search text, search --files, repos-for and multi-get --files escape them", () => {
    for (const args of [
      ["search", "control"],
      ["search", "control", "--files"],
      ["search", "control", "--documents"],
      ["repos-for", "control"],
      ["multi-get", "docs:*", "--files"],
    ]) {
      const { stdout, code } = runCli(args, { home });
      expect(code).toBe(0);
      noRawControls(stdout);
      expect(stdout).toMatch(/red\\x1b\[31m\\x07\.md|two\\nlines\.md/); // repos-for names its best fragment only
      if (args[0] !== "repos-for") {
        expect(stdout).toContain("red\\x1b[31m\\x07.md");
        expect(stdout).toContain("two\\nlines.md");
      }
    }
    expect(runCli(["search", "control"], { home }).stdout).toContain("control words \\x1b]52;c;cHduZWQ=\\x07 here"); // in a snippet
    // The query itself, echoed in the markdown heading, is escaped too.
    noRawControls(runCli(["search", "control\x1b]0;pwned\x07", "--format", "md"], { home }).stdout);
    // --full text among the results is escaped too (tabs kept); `get` prints a document as it is, like cat.
    for (const format of ["text", "md"]) {
      for (const full of [[], ["--full"]]) {
        const shown = runCli(["search", "control", "--format", format, ...full], { home }).stdout;
        noRawControls(shown);
        expect(shown).toContain("control words \\x1b]52;c;cHduZWQ=\\x07 here");
      }
    }
  });

  test("a description in status and a context in context list are escaped too (config.yaml may come from elsewhere)", () => {
    const other = folders();
    writeTree(other.docs, { "a.md": "# A\n\nwords\n" });
    const description = "d\x1b]0;pwned\x07red";
    expect(runCli(["repo", "add", "d2", other.docs, "--description", description, "--no-embed"], { home: other.home }).code).toBe(0);
    expect(runCli(["context", "add", "d2:sub", "ctx\x1b[2J text"], { home: other.home }).code).toBe(0);
    expect(runCli(["index", "d2"], { home: other.home }).code).toBe(0);
    const status = runCli(["status", "d2"], { home: other.home }).stdout;
    const contexts = runCli(["context", "list"], { home: other.home }).stdout;
    const reposFor = runCli(["repos-for", "words"], { home: other.home }).stdout;
    for (const text of [status, contexts, reposFor]) noRawControls(text);
    expect(reposFor).toContain("d\\x1b]0;pwned\\x07red");
    expect(status).toContain("d\\x1b]0;pwned\\x07red");
    expect(contexts).toBe("d2:sub\tctx\\x1b[2J text\n");
  });

  test("ls and multi-get headers escape them (a document's own text is printed as it is, like cat)", () => {
    const ls = runCli(["ls"], { home }).stdout;
    noRawControls(ls);
    expect(ls).toContain("two\\nlines.md");
    const headers = runCli(["multi-get", "*.md"], { home })
      .stdout.split("\n")
      .filter((line) => line.startsWith("==>"));
    expect(headers).toEqual(["==> docs:red\\x1b[31m\\x07.md <==", "==> docs:two\\nlines.md <=="]);
  });

  test("hints and watch's failure lines escape them", async () => {
    const near = runCli(["get", "docs:red\x1b[31m\x07.mdx"], { home });
    expect(near.code).toBe(1);
    expect(near.stderr).toContain("did you mean docs:red\\x1b[31m\\x07.md");
    noRawControls(near.stderr);

    const proc = Bun.spawn([...cliCommand, "watch", "docs", "--debounce", "50"], {
      env: env(home),
      cwd: home,
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      await Bun.sleep(1500); // its first run over the unchanged folder
      writeTree(docs, { "bad\x1b]0;pwned\x07.pdf": "not a pdf at all" });
      let text = "";
      void (async () => {
        for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) text += new TextDecoder().decode(chunk);
      })();
      for (const deadline = Date.now() + 30_000; !text.includes("failed: ") && Date.now() < deadline; ) await Bun.sleep(200);
      expect(text).toContain("failed: docs:bad\\x1b]0;pwned\\x07.pdf");
      noRawControls(text);
    } finally {
      proc.kill();
      await proc.exited;
    }
  }, 60_000);

  test("a repository folder's name is escaped by repo add's confirmation and verify's problems, as status and repo list escape it", () => {
    const home = tempDir();
    const folder = join(tempDir(), "esc\x1b[31mRED\x07");
    mkdirSync(folder);
    writeTree(folder, { "a.md": "# Z\n\nzz text\n" });
    const added = runCli(["repo", "add", "e", folder, "--no-embed"], { home });
    expect(added.code).toBe(0);
    expect(added.stdout).toContain("esc\\x1b[31mRED\\x07");
    noRawControls(added.stdout);
    expect(runCli(["index", "e", "--quiet"], { home }).code).toBe(0);
    renameSync(folder, `${folder}.moved`);
    const verified = runCli(["verify", "e"], { home });
    expect(verified.code).toBe(1);
    expect(verified.stdout).toContain("cannot read repository folder");
    expect(verified.stdout).toContain("esc\\x1b[31mRED\\x07");
    noRawControls(verified.stdout + verified.stderr);
    for (const args of [
      ["status", "e"],
      ["repo", "list"],
      ["index", "e"],
    ]) {
      const { stdout, stderr } = runCli(args, { home });
      expect(stdout + stderr).toContain("esc\\x1b[31mRED\\x07");
      noRawControls(stdout + stderr);
    }
  });

  test("JSON keeps the exact names", () => {
    const paths = JSON.parse(runCli(["search", "control", "--json"], { home }).stdout).results.map((r: { path: string }) => r.path);
    expect(paths.sort()).toEqual([evil, newline].sort());
  });
});

describe("REST input checks", () => {
  let http: { url: string; stop: () => void };
  const repo = folders();
  beforeAll(async () => {
    http = await startHttp(indexedRepository(repo, { "a.md": "# A\n\nalpha words\n" }).home);
  }, HOOK_TIMEOUT);
  afterAll(() => http?.stop());

  /** curl, because fetch will not send a malformed Host. */
  const curl = (path: string, headers: string[] = []) => {
    const proc = Bun.spawnSync(["curl", "-s", "-w", "\n%{http_code}", ...headers.flatMap((h) => ["-H", h]), `${http.url}${path}`]);
    const out = proc.stdout.toString();
    const cut = out.lastIndexOf("\n");
    return { status: Number(out.slice(cut + 1)), body: out.slice(0, cut) };
  };

  test("a malformed Host header is 400 with a JSON error", () => {
    for (const host of ["Host: a b", "Host: x:y:z", "Host: [::1"]) {
      const { status, body } = curl("/search?q=alpha", [host]);
      expect(status).toBe(400);
      expect(JSON.parse(body).error.code).toBe("INVALID_INPUT");
    }
  });

  test("malformed percent-encoding is 400 with a JSON error whose hint names what to encode", () => {
    const { status, body } = curl("/documents/%E0%A4%A");
    expect(status).toBe(400);
    expect(JSON.parse(body).error.message).toContain("percent-encoding");
    expect(JSON.parse(body).error.hint).toStartWith("encode the ref as encodeURIComponent does");
    // A query is no ref (s16 hostile #10: `q=%ff` was told to encode "the ref").
    expect(JSON.parse(curl("/search?q=%ff").body).error.hint).toStartWith("encode the value of 'q' as encodeURIComponent does");
  });

  test("an empty repo= is 400, not every repository, like the CLI's --repo '' (s17 review #4)", async () => {
    for (const repo of ["", ",", "docs,", "%20"]) {
      const response = await fetch(`${http.url}/search?q=alpha&repo=${repo}`);
      expect({ repo, status: response.status }).toEqual({ repo, status: 400 });
      const { error } = (await response.json()) as { error: { message: string } };
      expect(error.message).toBe(`repo holds an empty name in the list (got '${decodeURIComponent(repo)}')`);
    }
  });

  test("repo= names are trimmed as the CLI's --repo names are: one rule for both (s23 contracts L9)", async () => {
    const cli = JSON.parse(runCli(["search", "alpha", "--repo", " docs ,docs", "--json"], { home: repo.home }).stdout);
    expect(cli.repositories).toEqual(["docs"]);
    for (const names of ["%20docs", "docs%20,docs", "docs%20&repo=%20docs"]) {
      const response = await fetch(`${http.url}/search?q=alpha&repo=${names}`);
      expect({ names, status: response.status }).toEqual({ names, status: 200 });
      expect(await response.json()).toEqual(cli);
    }
  });

  test("a repository named with blanks around it over MCP (no list to split) is that repository too (s23 contracts L9)", () => {
    // MCP's `repository` and `repositories` reach the lookup as typed: " docs" answered "not found".
    expect(getRepository(repo.home, " docs ").name).toBe("docs");
    expect(selectRepositories(repo.home, [" docs", "docs"]).map((r) => r.name)).toEqual(["docs"]);
  });

  test("an empty query is 400, like the CLI and MCP", async () => {
    for (const q of ["", "%20%20"]) {
      const response = await fetch(`${http.url}/search?q=${q}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain("needs a query");
    }
    expect((await fetch(`${http.url}/search`)).status).toBe(400);
  });

  test("query parameters are checked: unknown names, malformed percent-encoding and bad numbers are 400; min_score takes fractions", async () => {
    const errorOf = async (path: string) => {
      const response = await fetch(`${http.url}${path}`);
      return { status: response.status, error: ((await response.json()) as { error: { code: string; message: string } }).error };
    };
    expect((await fetch(`${http.url}/search?q=alpha&min_score=0.5`)).status).toBe(200);
    expect((await fetch(`${http.url}/search?q=alpha&repo=docs&repo=docs&where=format=md&where=format=md`)).status).toBe(200);
    // full=1: each result carries its whole fragment, as the CLI's --full does.
    const full = (await (await fetch(`${http.url}/search?q=alpha&full=1&documents=1`)).json()) as {
      results: { text: string; snippet: string; fragments: { text: string }[] }[];
    };
    expect(full.results.length).toBeGreaterThan(0);
    for (const hit of full.results) {
      expect(hit.text).toContain("alpha");
      expect(hit.fragments[0]!.text).toBe(hit.text);
    }
    for (const [path, words] of [
      ["/search?q=alpha&nn=3", "unknown parameter 'nn'"],
      ["/search?q=%ZZ", "percent-encoding"],
      ["/search?q=%FF", "percent-encoding"],
      ["/search?q=alpha&min_score=abc", "min_score must be a decimal number"],
      ["/search?q=alpha&n=0", "n must be a whole number from 1 to 200"],
      ["/documents/r%3Aa.md?from=abc", "from must be a whole number ≥ 1"],
      ["/documents/r%3Aa.md?line=3", "unknown parameter 'line'"],
      // A count given twice is ambiguous (repo and where add up, as the CLI's repeated flags do).
      ["/search?q=alpha&n=1&n=5", "parameter 'n' is given more than once"],
      ["/search?q=alpha&mode=bm25&mode=vector", "parameter 'mode' is given more than once"],
    ] as const) {
      const { status, error } = await errorOf(path);
      expect(status).toBe(400);
      expect(error.message).toContain(words);
    }
  });

  test("a method a route does not answer is 405 with a JSON error and Allow", async () => {
    for (const [path, allowed] of [
      ["/search?q=alpha", "GET, HEAD"],
      ["/health", "GET, HEAD"],
      ["/mcp", "POST"],
    ] as const) {
      const response = await fetch(`${http.url}${path}`, { method: path === "/mcp" ? "PUT" : "POST" });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe(allowed);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("METHOD_NOT_ALLOWED");
    }
    // A route that does not exist is 404 whatever the method: a mistyped MCP address is posted to (s15 agent #5).
    for (const path of ["/mcp/", "/MCP", "/"]) {
      const response = await fetch(`${http.url}${path}`, { method: "POST", body: "{}" });
      expect(response.status).toBe(404);
      const { error } = (await response.json()) as { error: { code: string; message: string; hint: string } };
      expect(error).toMatchObject({ code: "NOT_FOUND", message: `no route ${path}`, hint: expect.stringContaining("MCP is POST /mcp") });
    }
    // HEAD is GET without a body.
    for (const path of ["/search?q=alpha", "/health"]) {
      const head = await fetch(`${http.url}${path}`, { method: "HEAD" });
      expect({ path, status: head.status, body: await head.text() }).toEqual({ path, status: 200, body: "" });
    }
  });

  test("a second server on the same port, or on an address this machine lacks, is one clear error", () => {
    const port = new URL(http.url).port;
    for (const args of [
      ["serve", "--port", port],
      ["serve", "--port", "0", "--host", "999.1.1.1"],
    ]) {
      const taken = runCli(args, { home: repo.home });
      expect(taken.code).toBe(1);
      expect(taken.stderr).toMatch(/^error: cannot listen on \S+: the port is taken, or the address is not one of this machine's\nhint: /m);
      expect(taken.stderr).not.toContain("unexpected");
    }
  });

  test("on every address without a token: a `warning:` line, as every warning reads (s23 contracts L3: `warn:`)", async () => {
    const server = await startHttp(repo.home, ["--host", "0.0.0.0"]);
    try {
      expect(server.printed).toMatch(/^warning: serving 0\.0\.0\.0 without a token/m);
    } finally {
      server.stop();
    }
  });

  test("IPv6 loopback, as ::1 or [::1]: a URL with brackets, no warning about reaching it, and it answers", async () => {
    for (const host of ["::1", "[::1]"]) {
      const server = await startHttp(repo.home, ["--host", host]);
      try {
        expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
        expect(server.printed).not.toContain("without a token");
        expect((await fetch(`${server.url}/health`)).status).toBe(200);
      } finally {
        server.stop();
      }
    }
  });

  test("a --host that is no address, no name that resolves, or empty is a clear error too, never an internal one", () => {
    for (const host of ["bad host", "a..b", "::zz"]) {
      const result = runCli(["serve", "--port", "0", "--host", host], { home: repo.home });
      expect({ host, code: result.code }).toEqual({ host, code: 1 });
      expect(result.stderr).toMatch(
        /^error: cannot listen on .+:0: '.+' (is not an address|cannot be listened on).*\nhint: give --host an address /,
      );
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(2); // one error line, one hint
    }
    const empty = runCli(["serve", "--port", "0", "--host", ""], { home: repo.home });
    expect(empty).toMatchObject({
      code: 2,
      stderr: "error: --host needs an address (got '')\nhint: --host 127.0.0.1, or 0.0.0.0 for all\n",
    });
  });

  test("offset and n past their ranges (2^63 and up too) are 400 naming the parameter and its range, never a 500", async () => {
    expect((await fetch(`${http.url}/search?q=alpha&offset=100000`)).status).toBe(200);
    for (const [query, words] of [
      ["offset=9223372036854775807", "offset must be a whole number from 0 to 100000 (got 9223372036854775807)"],
      ["offset=1e20", "offset must be a whole number from 0 to 100000 (got 1e20)"],
      ["offset=100001", "offset must be a whole number from 0 to 100000 (got 100001)"],
      ["n=1e20", "n must be a whole number from 1 to 200 (got 1e20)"],
    ] as const) {
      const response = await fetch(`${http.url}/search?q=alpha&${query}`);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: "USAGE",
        message: words,
      });
    }
  });

  test("switches are true or false: a typo is 400, not silently off", async () => {
    expect((await fetch(`${http.url}/search?q=alpha&documents=true&full=0`)).status).toBe(200);
    const response = await fetch(`${http.url}/search?q=alpha&documents=ture`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe("documents must be true or false (got 'ture')");
  });

  test("n is capped at MCP's maximum, 200: above it is 400", async () => {
    expect((await fetch(`${http.url}/search?q=alpha&n=200`)).status).toBe(200);
    const response = await fetch(`${http.url}/search?q=alpha&n=100000`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain("200");
  });
});

describe("HTTP with a token", () => {
  test("a REST request without it is 401 in REST's error shape; /mcp answers in JSON-RPC", async () => {
    const http = await startHttp(indexedRepository(folders(), { "a.md": "# A\n\nalpha words\n" }).home, ["--token", "s3cret"]);
    try {
      const rest = await fetch(`${http.url}/search?q=alpha`);
      expect(rest.status).toBe(401);
      expect(((await rest.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
      const mcp = await fetch(`${http.url}/mcp`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
      expect(mcp.status).toBe(401);
      expect(((await mcp.json()) as { jsonrpc: string }).jsonrpc).toBe("2.0");
      const allowed = await fetch(`${http.url}/search?q=alpha`, { headers: { Authorization: "Bearer s3cret" } });
      expect(allowed.status).toBe(200);
    } finally {
      http.stop();
    }
  }, 60_000);

  test("a base64 token given as --token=<token> is the token with its `=` (it was refused as 'unused args': s24 D1)", async () => {
    const token = Buffer.from("s3cret!").toString("base64"); // czNjcmV0IQ==
    const http = await startHttp(indexedRepository(folders(), { "a.md": "# A\n\nalpha words\n" }).home, [`--token=${token}`]);
    try {
      const status = async (presented: string) =>
        (await fetch(`${http.url}/search?q=alpha`, { headers: { Authorization: `Bearer ${presented}` } })).status;
      expect([await status(token), await status(token.slice(0, -1))]).toEqual([200, 401]);
    } finally {
      http.stop();
    }
  }, 60_000);
});

test("an empty --token is refused, not taken as serving without one (RESEARCHER_MCP_TOKEN set or not); --host and --token need --port", () => {
  const { home } = folders();
  for (const tokenEnv of [{}, { RESEARCHER_MCP_TOKEN: "s3cret" }] as Record<string, string>[]) {
    const empty = runCli(["serve", "--port", "0", "--token", ""], { home, env: tokenEnv });
    expect(empty).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --token needs a value \(got an empty one\)\nhint: /) });
  }
  // Set but empty, or spaces alone (a token that can never be presented), it served without one (s18 hostile #8a).
  for (const blank of ["", " "]) {
    const fromEnv = runCli(["serve", "--port", "0"], { home, env: { RESEARCHER_MCP_TOKEN: blank } });
    expect(fromEnv).toMatchObject({
      code: 2,
      stderr: "error: RESEARCHER_MCP_TOKEN is set but empty\nhint: set it to a secret, or unset it to serve without a token\n",
    });
  }
  // White space around a token: accepted, and every request was 401 (s18 retest N6).
  for (const run of [
    runCli(["serve", "--port", "0"], { home, env: { RESEARCHER_MCP_TOKEN: " ab " } }),
    runCli(["serve", "--port", "0", "--token", " ab "], { home }),
  ])
    expect(run).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: the token has white space around it/) });
  for (const flag of ["--host", "--token"]) {
    const stdio = runCli(["serve", flag, "x"], { home });
    expect(stdio).toMatchObject({ code: 2, stderr: `error: ${flag} applies to HTTP only\nhint: add --port <n> to serve over HTTP\n` });
  }
});

test("a search.limit over 200 in config.yaml does not lift the 200-result cap of REST and MCP answers (it is the CLI's default)", async () => {
  const files = Object.fromEntries(Array.from({ length: 230 }, (_, i) => [`n${i}.md`, `# Note ${i}\n\nalpha ${i}\n`]));
  const { home } = indexedRepository(folders(), files);
  expect(runCli(["config", "set", "search.limit", "300"], { home }).code).toBe(0);
  expect(JSON.parse(runCli(["search", "alpha", "--json"], { home }).stdout).results).toHaveLength(230);
  const http = await startHttp(home);
  try {
    expect(((await (await fetch(`${http.url}/search?q=alpha`)).json()) as { results: unknown[] }).results).toHaveLength(200);
  } finally {
    http.stop();
  }
  const client = new Client({ name: "cap", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: cliCommand[0]!, args: [...cliCommand.slice(1), "serve"], env: env(home), cwd: home }),
  );
  try {
    const answer = await client.callTool({ name: "search_fragments", arguments: { query: "alpha" } });
    expect((answer.structuredContent as { results: unknown[] }).results).toHaveLength(200);
  } finally {
    await client.close();
  }
}, 60_000);

test("auto is a mode on every interface, as config.yaml's search.mode takes it: --mode auto, REST mode=auto and MCP mode auto (s23 contracts L12)", async () => {
  const { home } = indexedRepository(folders(), { "a.md": "# A\n\nalpha words\n" });
  // A configured mode the repository cannot be searched in (it has no vectors): `auto` asked outright overrides it.
  expect(runCli(["config", "set", "search.mode", "vector"], { home }).code).toBe(0);
  expect(runCli(["search", "alpha", "--json"], { home }).code).toBe(1);
  const cli = runCli(["search", "alpha", "--mode", "auto", "--json"], { home });
  expect(cli.code).toBe(0);
  expect(JSON.parse(cli.stdout)).toMatchObject({ mode: "bm25", total: 1 });
  expect(runCli(["search", "alpha", "--mode", "fuzzy"], { home }).stderr).toStartWith(
    "error: --mode must be auto, bm25, vector, hybrid (got 'fuzzy')",
  );
  const http = await startHttp(home);
  try {
    const response = await fetch(`${http.url}/search?q=alpha&mode=auto`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(cli.stdout));
  } finally {
    http.stop();
  }
  const client = new Client({ name: "auto", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: cliCommand[0]!, args: [...cliCommand.slice(1), "serve"], env: env(home), cwd: home }),
  );
  try {
    const answer = await client.callTool({ name: "search_fragments", arguments: { query: "alpha", mode: "auto" } });
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).toMatchObject({ mode: "bm25", total: 1 });
  } finally {
    await client.close();
  }
}, 60_000);

describe("stdio MCP lines over 10 MiB", () => {
  test("are answered with an error to their id (written first or last), the next request is served, and the server exits when stdin closes", async () => {
    const { home } = indexedRepository(folders(), { "a.md": "# A\n\nalpha words\n" });
    const proc = Bun.spawn([...cliCommand, "serve"], { env: env(home), cwd: home, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const pad = "x".repeat(11 * 2 ** 20);
    proc.stdin.write(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"${pad}"}}\n`);
    // The MCP SDK's client writes the id last.
    proc.stdin.write(`{"method":"ping","params":{"pad":"${pad}","id":99},"jsonrpc":"2.0","id":"req-7"}\n`);
    proc.stdin.write(`{"method":"ping","params":{"pad":"${pad}"}}\n`); // no id to answer
    proc.stdin.flush();
    proc.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n`,
    );
    proc.stdin.flush();
    proc.stdin.end();
    const exited = await Promise.race([proc.exited, Bun.sleep(20_000).then(() => "still running")]);
    if (exited === "still running") proc.kill();
    expect(exited).toBe(0);
    const messages = (await new Response(proc.stdout).text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    for (const id of [5, "req-7", null]) {
      expect(messages.find((m) => m.id === id)?.error).toMatchObject({ code: -32600, message: expect.stringContaining("10 MiB") });
    }
    expect(messages.find((m) => m.id === 1)?.result?.serverInfo?.name).toBe("researcher");
  }, 60_000);
});

test("a stdio client that goes away (its end of stdout closed) gets a server that exits 0 at once, without a stack trace (s13 hostile #7)", async () => {
  const { home } = indexedRepository(folders(), { "a.md": "# A\n\nalpha words\n" });
  const requests = [
    {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search_fragments", arguments: { query: "alpha" } } },
  ];
  const input = join(home, "requests.jsonl");
  writeTree(home, { "requests.jsonl": requests.map((r) => JSON.stringify(r)).join("\n") });
  const command = [...cliCommand, "serve"].map((part) => `'${part}'`).join(" ");
  // The server's answers go to a reader that has already gone: every write meets a closed pipe.
  const shell = Bun.spawn(["bash", "-c", `(${command} < '${input}' 2> '${home}/err.txt'; echo $? > '${home}/rc.txt') | true`], {
    env: env(home),
    cwd: home,
  });
  const started = performance.now();
  expect(await Promise.race([shell.exited, Bun.sleep(20_000).then(() => "still running")])).toBe(0);
  expect(performance.now() - started).toBeLessThan(15_000);
  expect(readFileSync(join(home, "rc.txt"), "utf8").trim()).toBe("0");
  const stderr = readFileSync(join(home, "err.txt"), "utf8");
  expect(stderr).not.toContain("EPIPE");
  expect(stderr).not.toContain("    at ");
}, 60_000);

test("a UTF-8 BOM before a stdio client's first line is no parse error (s13 hostile #10)", async () => {
  const { home } = indexedRepository(folders(), { "a.md": "# A\n\nalpha words\n" });
  const proc = Bun.spawn([...cliCommand, "serve"], { env: env(home), cwd: home, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const init = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bom", version: "1" } },
  };
  proc.stdin.write(`\ufeff${JSON.stringify(init)}\n`);
  proc.stdin.end();
  expect(await Promise.race([proc.exited, Bun.sleep(20_000).then(() => "still running")])).toBe(0);
  const messages = (await new Response(proc.stdout).text())
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(messages).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ serverInfo: expect.anything() }) })]);
}, 60_000);

test("front matter with an unknown YAML tag prints no warning that copies its line (escape sequences and all) to the terminal", () => {
  const { home, docs } = folders();
  writeTree(docs, { "esc.md": '---\nx: !!foo "a\x1b]0;pwned\x07\x1b[2J"\n---\nfmword\n' });
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  const run = runCli(["index", "docs"], { home });
  expect(run.code).toBe(0);
  expect(run.stderr).not.toContain("\x1b");
  expect(run.stderr).not.toContain("YAMLWarning");
  expect(JSON.parse(runCli(["search", "fmword", "--json"], { home }).stdout).results).toHaveLength(1);
});
