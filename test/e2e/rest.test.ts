/**
 * REST's routes end to end, on a real server over real indexes: the listings (/repositories, /documents, /status)
 * answer what the CLI and MCP answer, behind the same checks, and errors' hints name routes; and REST under slow reads
 * and idle peers: Bun's idle limit meets a read that converts a long scan (issue 24's OCR).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexFiles } from "../../src/index/indexer.ts";
import { acquireWriterLock } from "../../src/lock.ts";
import { getRepository } from "../../src/repos.ts";
import { restHint, withHints } from "../../src/serve/agent-hints.ts";
import { Store } from "../../src/store/store.ts";
import { cliCommand, HOOK_TIMEOUT, runCli, startServe, tempDir, writeTree } from "../helpers.ts";
import { scanOfPages } from "../pdf-fixtures.ts";

const OCR_TIMEOUT = 240_000;

/** `serve --port 0` in `home`; its URL once it listens. */
async function startServer(home: string, flags: string[] = []): Promise<{ url: string; stop: () => void }> {
  const env = { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" };
  const { url, proc } = await startServe(cliCommand, flags, { env, cwd: home });
  return { url, stop: () => proc.kill() };
}

/** A home whose repository `docs` indexed a one-page `scan.pdf`, since replaced by a scan of `pages` pages. */
async function scanEditedSinceIndexed(pages: number): Promise<string> {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "scan.pdf": await scanOfPages(1) });
  expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
  expect(runCli(["index", "docs"], { home }).code).toBe(0);
  writeFileSync(join(docs, "scan.pdf"), await scanOfPages(pages));
  return home;
}

test(
  "REST waits for a read that converts a long scan: the connection is not dropped after 10 s idle (s11 hostile #4b)",
  async () => {
    // Bun closes a connection idle for 10 s by default; a GET /documents of a scan changed since it was indexed
    // converts it (OCR) first, and the client got an empty reply.
    // Edited: read as it is now, 100 pages of OCR (about 25 s here: past the idle limit on faster machines too).
    const home = await scanEditedSinceIndexed(100);
    const server = await startServer(home);
    try {
      const response = await fetch(`${server.url}/documents/${encodeURIComponent("docs:scan.pdf:p100")}`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { text: string }).text).toContain("hostile scan");
    } finally {
      server.stop();
    }
  },
  OCR_TIMEOUT,
);

test("a peer without the token is still closed when idle: only an authorised read may wait for its work (s11 diff review #2)", async () => {
  const home = tempDir();
  const server = await startServer(home, ["--token", "secret-token"]);
  try {
    const { hostname, port } = new URL(server.url);
    const closed = Promise.withResolvers<number>();
    let answer = "";
    const started = performance.now();
    const socket = await Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        data: (_, data) => {
          answer += new TextDecoder().decode(data);
        },
        close: () => closed.resolve(performance.now() - started),
      },
    });
    socket.write(`GET /search?q=x HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
    const idle = await Promise.race([closed.promise, Bun.sleep(30_000).then(() => Number.POSITIVE_INFINITY)]);
    expect(answer).toStartWith("HTTP/1.1 401");
    expect(idle).toBeLessThan(25_000); // Bun's idle limit is 10 s; the connection was held open indefinitely
    socket.end();
  } finally {
    server.stop();
  }
}, 60_000);

test(
  "SIGTERM lets a read in flight answer before serve exits; a second signal cuts it (s23 contracts L4)",
  async () => {
    const read = async (signals: number) => {
      // Edited since it was indexed: the read converts it (OCR of 8 pages, seconds), so it is in flight at the signal.
      // A home each: what one read recognised is kept, and the next would answer at once.
      const home = await scanEditedSinceIndexed(8);
      const env = { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" };
      const { url, proc } = await startServe(cliCommand, [], { env, cwd: home });
      const answer = fetch(`${url}/documents/${encodeURIComponent("docs:scan.pdf")}`).then(
        async (response) => ({ status: response.status, text: ((await response.json()) as { text: string }).text }),
        () => ({ status: 0, text: "" }),
      );
      await Bun.sleep(1000); // the request is in (its OCR takes seconds more)
      for (let i = 0; i < signals; i++) {
        proc.kill("SIGTERM");
        await Bun.sleep(200); // one signal each: two sent at once arrive as one
      }
      return { ...(await answer), code: await proc.exited };
    };
    const answered = await read(1);
    expect(answered).toMatchObject({ status: 200, code: 0 });
    expect(answered.text).toContain("hostile scan");
    expect(await read(2)).toEqual({ status: 0, text: "", code: 0 });
  },
  OCR_TIMEOUT,
);

describe("REST listings: /repositories, /documents and /status (s26 agent F3)", () => {
  const home = tempDir();
  const [docs, code, fresh] = [tempDir(), tempDir(), tempDir()];
  const auth = { Authorization: "Bearer s3cret" };
  let server: { url: string; stop: () => void };
  beforeAll(async () => {
    writeTree(docs, {
      "a.md": "# A\n\nalpha words\n",
      "guides/install.md": "# Install\n\nsteps\n",
      "guides/setup.md": "# Setup\n\nmore steps\n",
      "bad.pdf": "%PDF-1.4 this is not a PDF body",
      ".env": "SECRET=outside the index\n", // hidden: never indexed, so never listed
    });
    writeTree(code, { "main.py": "def main():\n    return 1\n" });
    writeTree(fresh, { "b.md": "# B\n" });
    for (const [name, folder] of [
      ["docs", docs],
      ["code", code],
      ["fresh", fresh],
    ] as const)
      expect(runCli(["repo", "add", name, folder, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "docs"], { home }).code).toBe(0); // bad.pdf fails: a failure for status to list
    expect(runCli(["index", "code"], { home }).code).toBe(0); // fresh: never indexed
    server = await startServer(home, ["--token", "s3cret"]);
  }, HOOK_TIMEOUT);
  afterAll(() => server?.stop());

  /** A REST answer, read loosely: each test checks what it names (an error, or a route's fields). */
  type Answer = {
    error: { code: string; message: string; hint?: string };
    repositories: ({ name: string } & Record<string, unknown>)[];
    documents: { path: string }[];
    total: number;
    offset: number;
    skipped: unknown[];
  };
  const get = async (path: string, init: RequestInit = { headers: auth }) => {
    const response = await fetch(`${server.url}${path}`, init);
    return { status: response.status, body: (await response.json()) as Answer };
  };
  const cliJson = (args: string[]) => JSON.parse(runCli([...args, "--json"], { home }).stdout);
  /** A status without its size on disk, which the server's open connections may change between two reads. */
  const sizeless = ({ bytes: _, ...status }: Record<string, unknown>) => status;

  test("GET /status answers get_index_status's repositories: `status --json`'s, with failures_total; ?repo= one of them", async () => {
    const all = await get("/status");
    expect(all.status).toBe(200);
    const cli = cliJson(["status"]) as Record<string, unknown>[];
    expect(all.body.repositories.map(sizeless)).toEqual(
      cli.map((s) => sizeless({ ...s, failures_total: (s.failures as unknown[]).length })),
    );
    expect(all.body.repositories.map((r) => r.name)).toEqual(["code", "docs", "fresh"]);
    const one = await get("/status?repo=docs");
    expect(one.body.repositories).toHaveLength(1);
    expect(one.body.repositories[0]).toMatchObject({ name: "docs", failures: [{ path: "bad.pdf" }], failures_total: 1 });
    expect(sizeless(one.body.repositories[0]!)).toEqual(sizeless({ ...cliJson(["status", "docs"]), failures_total: 1 }));
  });

  test("GET /search whose filters admit nothing says the words were found where they were, as the CLI says (s30 hostile F6)", async () => {
    // It answered `"words_found": false`, which says no passage holds the query's words, and the words were there.
    const none = ["where=path%3Dguides%2Finstall.md", "where=path%3Da.md"].join("&");
    for (const [query, found] of [
      ["steps", true],
      ["zzzq", false],
    ] as const) {
      const answer = await get(`/search?q=${query}&${none}`);
      expect({ query, status: answer.status, body: answer.body }).toMatchObject({
        query,
        status: 200,
        body: { total: 0, words_found: found, results: [] },
      });
      const cli = cliJson(["search", query, "--where", "path=guides/install.md", "--where", "path=a.md"]);
      expect({ query, words_found: cli.words_found }).toEqual({ query, words_found: found });
    }
    // A filter that admits fragments without the words: none the search admits holds them.
    expect((await get("/search?q=steps&where=path%3Da.md")).body).toMatchObject({ total: 0, words_found: false });
  });

  test("GET /repositories answers list_repositories': each status without failures, ann, index_due and index_held", async () => {
    const { status, body } = await get("/repositories");
    expect(status).toBe(200);
    const cli = cliJson(["status"]) as Record<string, unknown>[];
    const summaries = cli.map(({ failures: _, ann: __, index_due: ___, index_held: ____, ...s }) => sizeless(s));
    expect(body.repositories.map(sizeless)).toEqual(summaries);
    expect(body.repositories[1]).toMatchObject({ name: "docs", path: docs, documents: 3 });
  });

  test("GET /documents lists what the index holds as `ls --json` does, a page at a time, with the repositories left out", async () => {
    const docsListing = await get("/documents?repo=docs");
    expect(docsListing.status).toBe(200);
    expect(docsListing.body as unknown).toEqual({ total: 3, offset: 0, documents: cliJson(["ls", "docs"]), skipped: [] });
    expect(docsListing.body.documents.map((d: { path: string }) => d.path)).toEqual(["a.md", "guides/install.md", "guides/setup.md"]);
    // Every repository: the one never indexed is left out, and said to be.
    const all = await get("/documents");
    expect(all.body.documents).toEqual(cliJson(["ls"]));
    expect(all.body.skipped).toEqual([expect.objectContaining({ repository: "fresh", code: "NOT_INDEXED" })]);
    // A prefix, also written as a ref writes it (`docs:guides/`), as `ls` and list_documents take it.
    const paths = async (query: string) => (await get(`/documents?${query}`)).body.documents.map((d: { path: string }) => d.path);
    const guides = ["guides/install.md", "guides/setup.md"];
    expect(await paths("repo=docs&prefix=guides/")).toEqual(guides);
    expect(await paths(`prefix=${encodeURIComponent("docs:guides/")}`)).toEqual(guides);
    expect(await paths(`repo=docs&prefix=${encodeURIComponent("docs:guides/")}`)).toEqual(guides);
    // Pages: n and offset, as list_documents' limit and offset.
    expect((await get("/documents?repo=docs&n=1&offset=1")).body).toMatchObject({
      total: 3,
      offset: 1,
      documents: [{ path: "guides/install.md" }],
    });
    expect((await get("/documents?repo=docs&offset=7")).body).toMatchObject({ total: 3, offset: 7, documents: [] });
    expect((await get("/documents?n=1000")).status).toBe(200);
  });

  test("GET /documents is confined to the index: no prefix reaches a file it does not hold, in the folder or out of it", async () => {
    for (const prefix of ["../", ".env", `${docs}/.env`, "docs:../"]) {
      const { status, body } = await get(`/documents?prefix=${encodeURIComponent(prefix)}`);
      expect({ prefix, status, total: body.total }).toEqual({ prefix, status: 200, total: 0 });
    }
    // An absolute path inside no repository's folder is said to be, as `ls /etc` says it (s29c retest Q4).
    for (const prefix of ["/etc", `${docs}/../`]) {
      const { status, body } = await get(`/documents?prefix=${encodeURIComponent(prefix)}`);
      expect({ status, code: body.error.code, message: body.error.message }).toEqual({
        status: 404,
        code: "REPO_NOT_FOUND",
        message: `no repository's folder holds ${prefix}`,
      });
    }
    // The repository's folder by its absolute path is its indexed documents, as `docs:` (s29 agent P5).
    expect((await get(`/documents?prefix=${encodeURIComponent(`${docs}/`)}`)).body.total).toBe(3);
    const listed = (await get("/documents?repo=docs")).body.documents.map((d: { path: string }) => d.path);
    expect(listed).not.toContain(".env");
    expect(listed).not.toContain("bad.pdf"); // failed: listed by /status, not as a document
  });

  test("a listing and a read do not collide: /documents?… lists, /documents/<ref> reads, each with its own parameters", async () => {
    const read = await get(`/documents/${encodeURIComponent("docs:a.md")}`);
    expect(read).toMatchObject({ status: 200, body: { repository: "docs", path: "a.md", text: expect.stringContaining("alpha") } });
    const mixed = await get(`/documents/${encodeURIComponent("docs:a.md")}?repo=docs`);
    expect(mixed).toMatchObject({
      status: 400,
      body: { error: { code: "USAGE", message: "unknown parameter 'repo' for /documents/<ref>" } },
    });
    const listing = await get("/documents?from=2");
    expect(listing.status).toBe(400);
    expect(listing.body.error).toEqual({
      code: "USAGE",
      message: "unknown parameter 'from' for /documents",
      hint: "known parameters: repo, prefix, n, offset",
    });
  });

  test("bad parameters are 400 (404 for a repository that is not there), as on the other routes", async () => {
    for (const [path, status, code, words] of [
      ["/documents?n=0", 400, "USAGE", "n must be a whole number from 1 to 1000 (got 0)"],
      ["/documents?n=1001", 400, "USAGE", "n must be a whole number from 1 to 1000 (got 1001)"],
      ["/documents?offset=-1", 400, "USAGE", "offset must be a whole number from 0 to 1000000000 (got -1)"],
      // A number no double holds exactly was echoed back as 1e20 (s27b agent note).
      [
        "/documents?offset=99999999999999999999",
        400,
        "USAGE",
        "offset must be a whole number from 0 to 1000000000 (got 99999999999999999999)",
      ],
      ["/documents?repo=docs&repo=code", 400, "USAGE", "parameter 'repo' is given more than once"],
      ["/documents?repo=docs,code", 400, "USAGE", "a listing is of one repository (got 'docs,code')"],
      ["/documents?repo=", 400, "USAGE", "repository name"],
      ["/documents?repo=nope", 404, "REPO_NOT_FOUND", "no repository named 'nope'"],
      [`/documents?repo=code&prefix=${encodeURIComponent("docs:guides/")}`, 400, "USAGE", "names repository 'docs'"],
      ["/documents?prefix=%E0%A4%A", 400, "INVALID_INPUT", "percent-encoding"],
      ["/status?repo=nope", 404, "REPO_NOT_FOUND", "no repository named 'nope'"],
      ["/status?repo=fresh&repo=docs", 400, "USAGE", "parameter 'repo' is given more than once"],
      ["/status?name=docs", 400, "USAGE", "unknown parameter 'name' for /status"],
      ["/repositories?repo=docs", 400, "USAGE", "unknown parameter 'repo' for /repositories"],
    ] as const) {
      const answer = await get(path);
      expect({ path, status: answer.status, code: answer.body.error?.code }).toEqual({ path, status, code });
      expect(answer.body.error.message).toContain(words);
    }
    expect((await get("/repositories?repo=docs")).body.error.hint).toBe("/repositories takes no parameters");
    // A JSON where, which MCP's tools take, is told the text form REST takes (s27b agent note).
    const json = await get(`/search?q=guide&where=${encodeURIComponent('{"author":"x"}')}`);
    expect({ status: json.status, hint: json.body.error.hint }).toEqual({
      status: 400,
      hint: "REST's where takes the text form, as the CLI's --where: where=author%3DMarguerite (MCP's tools take JSON too)",
    });
    // A where that does not parse points at the route's parameter, not at the CLI's Filters alone (s28 agent 7).
    const bad = await get(`/search?q=guide&where=${encodeURIComponent("title=>cars")}`);
    expect({ status: bad.status, hint: bad.body.error.hint }).toEqual({
      status: 400,
      hint: 'e.g. tags=rust format in (md|pdf) modified>=2025-01-01 title~"borrow" (see where of GET /search in README, REST, and its grammar in README, Filters)',
    });
  });

  test("the same checks as every route: the token, a foreign Origin, GET and HEAD only", async () => {
    for (const path of ["/repositories", "/documents?repo=docs", "/status", "/mcp"]) {
      // A 401 names the scheme HTTP asks for (WWW-Authenticate), REST's and MCP's alike (s27b agent note).
      const refused = await fetch(`${server.url}${path}`, { method: path === "/mcp" ? "POST" : "GET" });
      expect({ path, status: refused.status, challenge: refused.headers.get("www-authenticate") }).toEqual({
        path,
        status: 401,
        challenge: 'Bearer realm="researcher"',
      });
      const origin = await fetch(`${server.url}${path}`, {
        method: path === "/mcp" ? "POST" : "GET",
        headers: { ...auth, Origin: "http://evil.example" },
      });
      // Each in its clients' error shape: /mcp's in JSON-RPC, as its 401 (the 403 was REST's: s29 agent P4).
      const shape =
        path === "/mcp"
          ? { jsonrpc: "2.0", id: null, error: { code: -32000, message: expect.stringContaining("requests from http://evil.example") } }
          : { error: { code: "FORBIDDEN", message: "requests from http://evil.example are not served here", hint: expect.any(String) } };
      expect({ path, status: origin.status, body: await origin.json() }).toEqual({ path, status: 403, body: shape });
      if (path === "/mcp") {
        const body = await refused.json();
        expect(body).toEqual({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32001, message: expect.stringContaining("missing or wrong bearer token") },
        });
        continue;
      }
      const post = await fetch(`${server.url}${path}`, { method: "POST", headers: auth });
      expect({ path, status: post.status, allow: post.headers.get("allow") }).toEqual({ path, status: 405, allow: "GET, HEAD" });
      const head = await fetch(`${server.url}${path}`, { method: "HEAD", headers: auth });
      expect({ path, status: head.status, body: await head.text() }).toEqual({ path, status: 200, body: "" });
    }
  });

  test("the 404 of no route lists every route, the listings too", async () => {
    const route = await get("/list");
    expect(route).toMatchObject({ status: 404, body: { error: { code: "NOT_FOUND", message: "no route /list" } } });
    for (const listed of ["GET /documents?repo=&prefix=", "GET /repositories", "GET /status"])
      expect(route.body.error.hint).toContain(listed);
  });

  test("an error's hint names the routes that do what the CLI commands it named do", async () => {
    // Was: "only indexed documents can be read; `researcher ls docs` lists them, `researcher status` lists failures".
    const missing = await get(`/documents/${encodeURIComponent("docs:zzz-nothing-like-it.md")}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({
      code: "DOCUMENT_NOT_FOUND",
      message: "docs:zzz-nothing-like-it.md is not an indexed document",
      hint: "only indexed documents can be read; `GET /documents?repo=docs` lists them, `GET /status` lists failures",
    });
    // A folder: read by multi-get, which only MCP has, and listed by /documents.
    const folder = await get(`/documents/${encodeURIComponent("docs:guides")}`);
    expect(folder.body.error.hint).toBe(
      'the multi_get tool with pattern "docs:guides/" (MCP, at POST /mcp) reads them, `GET /documents?repo=docs&prefix=guides/` lists them',
    );
  });

  test("hints inside an answer name routes as an error's do, and a listing during a first run says to wait (s27b agent F7, F8)", async () => {
    const folder = tempDir();
    writeTree(folder, { "a.md": "# A\n\nwombat burrow\n", "b.md": "# B\n\nwombat\n" });
    expect(runCli(["repo", "add", "first", folder, "--no-embed"], { home }).code).toBe(0);
    const repo = getRepository(home, "first");
    Store.open(repo.dir, { create: true }).close(); // a first run before its first batch
    await indexFiles(home, repo, ["a.md"]); // as its first batch
    const release = acquireWriterLock(repo.dir, repo.name, "index"); // the run, as another process holds it
    const waiting = `wait for it to finish (process ${process.pid}): \`GET /status?repo=first\` says when it has`;
    try {
      // Was: "… `researcher status first` says when it has", in search's warnings and skipped alike.
      const found = (await get("/search?q=wombat&repo=first&mode=bm25")).body as unknown as { warnings: unknown[] };
      expect(found.warnings).toEqual([expect.objectContaining({ repository: "first", hint: waiting })]);
      const listed = await get("/documents?repo=first");
      expect(listed.status).toBe(200);
      expect(listed.body as unknown).toMatchObject({
        total: 1,
        documents: [{ path: "a.md" }],
        warnings: [{ repository: "first", code: "NOT_INDEXED", hint: waiting }],
      });
      // A read of a file the run has not reached: it said "not an indexed document", `GET /status` lists failures
      // (s28 hostile F3).
      expect(await get(`/documents/${encodeURIComponent("first:b.md")}`)).toMatchObject({
        status: 404,
        body: {
          error: {
            code: "DOCUMENT_NOT_FOUND",
            message:
              "first:b.md is not indexed: the first index run of first is under way and may not have reached it yet (1 file indexed so far)",
            hint: `${waiting}; or did you mean first:a.md?`,
          },
        },
      });
    } finally {
      release();
      expect(runCli(["repo", "remove", "first"], { home }).code).toBe(0);
    }
  });

  test("a listing's prefix naming no repository is REPO_NOT_FOUND, as `ls`; an empty one carries MCP's suggestions (s27b agent F1, F2)", async () => {
    const typo = await get(`/documents?prefix=${encodeURIComponent("nore:x/")}`);
    expect(typo).toMatchObject({
      status: 404,
      body: { error: { code: "REPO_NOT_FOUND", message: "no repository named 'nore'", hint: "known repositories: code, docs, fresh" } },
    });
    // Inside a repository, the same prefix is a path (a file name may hold a colon): an empty page.
    expect((await get(`/documents?repo=docs&prefix=${encodeURIComponent("nore:x/")}`)).body.total).toBe(0);
    expect((await get("/documents?prefix=install")).body as unknown).toEqual({
      total: 0,
      offset: 0,
      documents: [],
      skipped: [expect.objectContaining({ repository: "fresh" })],
      containing: ["docs:guides/install.md"],
    });
    expect((await get("/documents?prefix=docs/guides/")).body).toMatchObject({
      total: 0,
      meant: { repository: "docs", prefix: "guides/" },
    });
  });

  test("/documents/ (a slash too many, or a docid's unencoded #) reads nothing: the hint names the listing (s27b agent F6)", async () => {
    const slash = await get("/documents/?repo=docs");
    expect(slash).toMatchObject({
      status: 400,
      body: {
        error: {
          code: "USAGE",
          message: "/documents/ names no document to read",
          hint: "for a listing, `GET /documents?repo=docs` (no slash); a ref's # is sent as %23: `GET /documents/%23<docid>`",
        },
      },
    });
  });

  test("restHint: a command a route does is that route, its arguments encoded; one only a tool does is that tool at /mcp; the rest stay", () => {
    expect(restHint("`researcher ls 'my notes:drafts/a b'` lists them")).toBe(
      "`GET /documents?repo=my%20notes&prefix=drafts/a%20b` lists them",
    );
    expect(restHint("`researcher ls` lists them")).toBe("`GET /documents` lists them");
    expect(restHint("see `researcher status notes --json`")).toBe("see `GET /status?repo=notes`");
    expect(restHint("read `researcher get '#51481f'` or `researcher get -- notes:-x.md`")).toBe(
      "read `GET /documents/%2351481f` or `GET /documents/notes%3A-x.md`",
    );
    expect(restHint("`researcher repo list` shows the repositories")).toBe("`GET /repositories` shows the repositories");
    expect(restHint("see `researcher repos-for 'borrow checker'`")).toBe(
      'see the repositories_for tool with query "borrow checker" (MCP, at POST /mcp)',
    );
    // Commands no route nor tool does are the server's user's: they stay as they are.
    for (const hint of ["`researcher repo add notes ~/notes`", "run `researcher index docs`", "`researcher constructor`"])
      expect(restHint(hint)).toBe(hint);
    // Inside an answer: each problem's hint (an object with a code), never a document's own front matter.
    const listed = "`researcher ls a`";
    const answer = {
      skipped: [{ repository: "a", code: "X", message: "m", hint: listed }],
      documents: [{ metadata: { code: 1, hint: listed } }],
    };
    expect(withHints(answer, restHint)).toEqual({
      skipped: [{ repository: "a", code: "X", message: "m", hint: "`GET /documents?repo=a`" }],
      documents: [{ metadata: { code: 1, hint: listed } }],
    });
  });
});

test(
  "GET /documents/<ref> answers at most 1 MiB of text (max_bytes less), with where to read on (s28 hostile F4)",
  async () => {
    const home = tempDir();
    const docs = tempDir();
    // 1.5 MiB of lines, and one line of 300 KB: a read cut inside it goes on from inside it.
    const lines = Array.from({ length: 15_000 }, (_, i) => `line ${i + 1} ${"x".repeat(94)}`);
    const long = "y".repeat(300_000);
    const text = `${lines.join("\n")}\n${long}\nlast line\n`;
    writeTree(docs, { "big.md": text });
    expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "docs"], { home }).code).toBe(0);
    const server = await startServer(home);
    try {
      const read = async (query: string) => {
        const response = await fetch(`${server.url}/documents/${encodeURIComponent("docs:big.md")}${query}`);
        return { status: response.status, body: (await response.json()) as Record<string, unknown> & { text: string } };
      };
      const first = await read("");
      expect(first.status).toBe(200);
      expect(Buffer.byteLength(first.body.text)).toBeLessThanOrEqual(1024 * 1024);
      expect(first.body).toMatchObject({ from: 1, truncated: true, continue_with: { from: (first.body.to as number) + 1 } });
      // Read on with what each answer says until it is whole: the parts make the text again.
      const parts = [first.body];
      while (parts.at(-1)!.truncated) {
        const next = parts.at(-1)!.continue_with as { from: number; from_char?: number };
        const charAt = next.from_char === undefined ? "" : `&from_char=${next.from_char}`;
        const answer = await read(`?from=${next.from}${charAt}&max_bytes=200000`);
        expect(answer.status).toBe(200);
        expect(Buffer.byteLength(answer.body.text)).toBeLessThanOrEqual(200_000);
        parts.push(answer.body);
      }
      expect(parts.some((p) => (p.continue_with as { from_char?: number } | undefined)?.from_char)).toBe(true);
      const joined = parts.map((p, i) => {
        const next = i > 0 ? (parts[i - 1]!.continue_with as { from_char?: number }) : undefined;
        return (i === 0 ? "" : next?.from_char === undefined ? "\n" : "") + p.text;
      });
      expect(joined.join("")).toBe(text.slice(0, -1));
      // A document within its budget is whole, with no continuation; a bad budget is a usage error.
      const small = await read("?from=15002");
      expect(small.body).toMatchObject({ from: 15002, text: "last line" });
      expect(small.body.truncated).toBeUndefined();
      expect((await read("?max_bytes=0")).status).toBe(400);
      expect((await read("?from_char=-1")).status).toBe(400);
    } finally {
      server.stop();
    }
  },
  HOOK_TIMEOUT,
);

test(
  "GET /documents/<ref> counts from_char in characters (code points): never half an emoji, and a ZWJ line rebuilt at 5 bytes (s29b retest F2)",
  async () => {
    const home = tempDir();
    const docs = tempDir();
    const family = "👩‍👩‍👧‍👦";
    const text = `# E\n\n😀😀日本語éa\n${Array.from({ length: 12 }, (_, i) => `${i}${family}😀`).join("")}\nend\n`;
    writeTree(docs, { "emo.md": text });
    expect(runCli(["repo", "add", "docs", docs, "--no-embed"], { home }).code).toBe(0);
    expect(runCli(["index", "docs"], { home }).code).toBe(0);
    const server = await startServer(home);
    try {
      const read = async (query: string) => {
        const response = await fetch(`${server.url}/documents/${encodeURIComponent("docs:emo.md")}${query}`);
        return (await response.json()) as Record<string, unknown> & { text: string; error?: { message: string } };
      };
      expect((await read("?from=3&from_char=1&lines=1")).text).toBe("😀日本語éa"); // was a lone surrogate first
      expect((await read("?from=3&from_char=2&lines=1")).text).toBe("日本語éa");
      expect((await read("?from=3&from_char=99")).error?.message).toBe("from_char 99 is past the end of line 3 (7 characters)");
      // Read on by continue_with at 5 bytes: every part well formed, the parts the text again.
      let rebuilt = "";
      let next: { from: number; from_char?: number } | undefined = { from: 1 };
      for (let calls = 0; next; calls++) {
        const charAt: string = next.from_char === undefined ? "" : `&from_char=${next.from_char}`;
        const part = await read(`?from=${next.from}${charAt}&max_bytes=5`);
        expect(part.text.isWellFormed()).toBe(true);
        next = part.continue_with as typeof next;
        rebuilt += part.text + (next && next.from_char === undefined ? "\n" : "");
        expect(calls).toBeLessThan(200);
      }
      expect(rebuilt).toBe(text.slice(0, -1));
    } finally {
      server.stop();
    }
  },
  HOOK_TIMEOUT,
);
