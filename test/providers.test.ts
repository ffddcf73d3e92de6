/**
 * The HTTP embedding providers against small local servers that speak the Ollama and OpenAI embedding APIs
 * (stand-ins for the external services; our own client code is what runs).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chooseModel, loadEmbedder } from "../src/embed/embedder.ts";
import { fetchText } from "../src/embed/hub.ts";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { verifyRepository } from "../src/index/verify.ts";
import { registerRepository } from "../src/repos.ts";
import { runCli, tempDir } from "./helpers.ts";

/** A deterministic 8-dimensional "embedding": letter counts folded into 8 buckets. */
function fakeVector(text: string): number[] {
  const v = new Array(8).fill(0);
  for (const ch of text.toLowerCase()) v[ch.charCodeAt(0) % 8] += 1;
  return v;
}

const requests: { path: string; body: { model: string; input: string[] }; auth: string | null }[] = [];
const server = Bun.serve({
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const body = (await request.json()) as { model: string; input: string[] };
    requests.push({ path: url.pathname, body, auth: request.headers.get("authorization") });
    if (body.model === "missing") return new Response('{"error":"model not found"}', { status: 404 });
    // Wrong after the first request (the dimension probe): one vector short, or vectors of half the dimensions.
    const probe = body.input[0] === "dimension probe";
    if (body.model === "short" && !probe) return Response.json({ embeddings: body.input.slice(1).map(fakeVector) });
    if (body.model === "narrow" && !probe) return Response.json({ embeddings: body.input.map((t) => fakeVector(t).slice(4)) });
    if (body.model === "garbled" && !probe) return Response.json({ embeddings: body.input.map((t) => [...fakeVector(t).slice(1), "x"]) });
    if (body.model === "empty") return Response.json({ embeddings: body.input.map(() => []) });
    if (body.model === "nulls" && !probe) return Response.json({ embeddings: body.input.map(() => null) });
    if (url.pathname === "/api/embed") return Response.json({ embeddings: body.input.map(fakeVector) });
    if (url.pathname === "/v1/embeddings") {
      return Response.json({ data: body.input.map((t, index) => ({ index, embedding: fakeVector(t) })).reverse() });
    }
    return new Response("not found", { status: 404 });
  },
});
afterAll(() => server.stop(true));
const base = `http://127.0.0.1:${server.port}`;

describe("ollama provider", () => {
  test("embeds in batches, normalises, keeps order, and applies prefixes", async () => {
    const embedder = await loadEmbedder(
      tempDir(),
      chooseModel({ provider: "ollama", model: "nomic-embed-text", ollama_url: base, query_prefix: "search_query: " }),
    );
    expect(embedder.dims).toBe(8);
    expect(embedder.info).toMatchObject({ provider: "ollama", id: "nomic-embed-text", source: "remote" });
    const [a, b] = await embedder.embed(["aaaa", "bbbbbbbbbbbb"], "document");
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
    expect(Array.from(b!).indexOf(1)).toBe("b".charCodeAt(0) % 8);
    await embedder.embed(["question"], "query");
    expect(requests.at(-1)).toMatchObject({ path: "/api/embed", body: { model: "nomic-embed-text", input: ["search_query: question"] } });
  });

  test("a provider error is one clear error; an unreachable server fails fast", async () => {
    const missing = await loadEmbedder(tempDir(), chooseModel({ provider: "ollama", model: "missing", ollama_url: base })).catch((e) => e);
    expect(missing.code).toBe("PROVIDER_FAILED");
    expect(missing.message).toContain("404");
    const started = performance.now();
    const down = await loadEmbedder(tempDir(), chooseModel({ provider: "ollama", model: "x", ollama_url: "http://127.0.0.1:9" })).catch(
      (e) => e,
    );
    expect(down.code).toBe("PROVIDER_FAILED");
    expect(down.hint).toContain("ollama serve");
    expect(performance.now() - started).toBeLessThan(5000);
  });

  test("an address that is no http(s) is refused, from the environment too: a file: URL read the disk as a server (s18 retest N3)", async () => {
    const fake = tempDir();
    mkdirSync(join(fake, "api"));
    writeFileSync(join(fake, "api/embed"), '{"embeddings":[[0.1,0.2,0.3]]}');
    const refused = await loadEmbedder(tempDir(), chooseModel({ provider: "ollama", model: "x", ollama_url: `file://${fake}` })).catch(
      (e) => e,
    );
    expect(refused).toMatchObject({ code: "PROVIDER_FAILED", message: expect.stringContaining("is no http:// or https:// address") });
    await expect(fetchText("file:///etc/passwd")).rejects.toThrow("file:///etc/passwd is no http:// or https:// address");
  });
});

describe("openai provider", () => {
  test("sends the key, restores the order of returned data", async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "sk-test";
    try {
      const embedder = await loadEmbedder(
        tempDir(),
        chooseModel({ provider: "openai", model: "text-embedding-3-small", openai_url: base }),
      );
      const [x, y] = await embedder.embed(["xxxx", "yyyy"], "document");
      expect(Array.from(x!).indexOf(1)).toBe("x".charCodeAt(0) % 8);
      expect(Array.from(y!).indexOf(1)).toBe("y".charCodeAt(0) % 8);
      expect(requests.at(-1)).toMatchObject({ path: "/v1/embeddings", auth: "Bearer sk-test" });
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  test("an openai_url that ends in /v1 (as OpenAI documents it) is not given another /v1", async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = "sk-test";
    try {
      for (const openai_url of [`${base}/v1`, `${base}/v1/`, `${base}/`]) {
        const embedder = await loadEmbedder(tempDir(), chooseModel({ provider: "openai", model: "m", openai_url }));
        expect(embedder.dims).toBe(8);
        expect(requests.at(-1)!.path).toBe("/v1/embeddings");
      }
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  test("the CLI prints the missing key's name as it is spelled", () => {
    const home = tempDir();
    writeFileSync(join(home, "config.yaml"), `embedding:\n  provider: openai\n  model: m\n  openai_url: ${base}\n`);
    const result = runCli(["model", "pull"], { home, env: { RESEARCHER_MODEL_PATH: "", OPENAI_API_KEY: "" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toStartWith("error: OPENAI_API_KEY is not set\n");
  });

  test("without OPENAI_API_KEY it says so", async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    const error = await loadEmbedder(tempDir(), chooseModel({ provider: "openai", model: "m", openai_url: base })).catch((e) => e);
    expect(error.message).toContain("OPENAI_API_KEY");
    if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
  });
});

describe("remote parallelism", () => {
  test("up to embedding.parallel requests are in flight at once; results keep their order", async () => {
    let inFlight = 0;
    let most = 0;
    const slow = Bun.serve({
      port: 0,
      async fetch(request) {
        const body = (await request.json()) as { input: string[] };
        most = Math.max(most, ++inFlight);
        await Bun.sleep(30);
        inFlight--;
        return Response.json({ embeddings: body.input.map(fakeVector) });
      },
    });
    try {
      const url = `http://127.0.0.1:${slow.port}`;
      const texts = Array.from({ length: 120 }, (_, i) => `${"a".repeat(i + 1)}b`); // each text its own direction
      for (const parallel of [1, 3]) {
        most = 0;
        const embedder = await loadEmbedder(
          tempDir(),
          chooseModel({ provider: "ollama", model: "m", ollama_url: url, batch_size: 10, parallel }),
        );
        const vectors = await embedder.embed(texts, "document");
        expect(most).toBe(parallel);
        // order kept: the i-th text has i + 1 a's (bucket 1) for one b (bucket 2)
        for (const [i, v] of vectors.entries()) expect(v[1]! / v[2]!).toBeCloseTo(i + 1, 4);
      }
      const sequential = await loadEmbedder(
        tempDir(),
        chooseModel({ provider: "ollama", model: "m", ollama_url: url, batch_size: 10, parallel: 1 }),
      );
      const parallel = await loadEmbedder(
        tempDir(),
        chooseModel({ provider: "ollama", model: "m", ollama_url: url, batch_size: 10, parallel: 3 }),
      );
      expect(await parallel.embed(texts, "document")).toEqual(await sequential.embed(texts, "document"));
    } finally {
      slow.stop(true);
    }
  });
});

test("OLLAMA_HOST is read as Ollama reads it: host:port without a scheme reaches the server", async () => {
  const saved = process.env.OLLAMA_HOST;
  process.env.OLLAMA_HOST = `127.0.0.1:${server.port}`;
  try {
    const embedder = await loadEmbedder(tempDir(), chooseModel({ provider: "ollama", model: "nomic-embed-text" }));
    expect(embedder.dims).toBe(8);
    expect(requests.at(-1)!.path).toBe("/api/embed");
  } finally {
    if (saved === undefined) delete process.env.OLLAMA_HOST;
    else process.env.OLLAMA_HOST = saved;
  }
});

describe("a provider that answers badly", () => {
  // Headers at once, then the body stalls (an overloaded provider, a proxy), or a body that is not JSON.
  const stalling = Bun.serve({
    port: 0,
    idleTimeout: 0,
    fetch(request) {
      if (new URL(request.url).pathname === "/api/embed") return new Response("<html>gateway</html>", { status: 200 });
      return new Response(
        new ReadableStream({
          start(stream) {
            stream.enqueue(new TextEncoder().encode('{"embeddings": [[0.1,'));
          },
        }),
        { headers: { "content-type": "application/json" } },
      );
    },
  });
  afterAll(() => stalling.stop(true));
  const url = `http://127.0.0.1:${stalling.port}`;

  test("a body that stalls after the headers is an error within the deadline, not a hang", async () => {
    const started = performance.now();
    expect(fetchText(`${url}/stall`, {}, 300)).rejects.toThrow(`no complete answer from ${url}/stall within 0.3 s`);
    await fetchText(`${url}/stall`, {}, 300).catch(() => {});
    expect(performance.now() - started).toBeLessThan(5000);
  });

  test("too few vectors, or vectors of other dimensions than the probe's, are the provider's failure: none is kept", async () => {
    for (const [model, problem] of [
      ["short", "1 vectors for 2 texts"],
      ["narrow", "a vector of 4 dimensions, not 8"],
      ["garbled", "values that are not finite numbers"],
      ["nulls", "response holds something other than a vector: null"], // a TypeError, "unexpected" (s12 review #9)
    ]) {
      const embedder = await loadEmbedder(tempDir(), chooseModel({ provider: "ollama", model: model!, ollama_url: base }));
      await expect(embedder.embed(["aaaa", "bbbb"], "document")).rejects.toMatchObject({
        code: "PROVIDER_FAILED",
        message: expect.stringContaining(problem!),
      });
    }
    await expect(loadEmbedder(tempDir(), chooseModel({ provider: "ollama", model: "empty", ollama_url: base }))).rejects.toMatchObject({
      code: "PROVIDER_FAILED",
      message: expect.stringContaining("an empty one"),
    });
    // An index run keeps the text searchable and the vectors pending; a BM25-only run after it completes.
    const home = tempDir();
    const docs = tempDir();
    writeFileSync(join(docs, "a.md"), "# A\n\nalpha words\n");
    const repo = registerRepository(home, { name: "n", path: docs, embedding: { provider: "ollama", model: "narrow", ollama_url: base } });
    const summary = await indexRepository(home, repo);
    expect(summary).toMatchObject({ indexed: 1, embedded: 0, embeddings_pending: 1 });
    expect(summary.warnings.join(" ")).toContain("a vector of 4 dimensions, not 8");
    expect(runCli(["index", "n", "--no-embed"], { home }).code).toBe(0);
    expect((await verifyRepository(repo)).problems.map((p) => p.check)).toEqual(["vectors"]); // pending, with its fix
  });

  test("a body that is not JSON is the provider's failure, named, not an internal error", async () => {
    // Loading asks for one embedding (the model's dimensions): the answer fails there.
    expect(loadEmbedder(tempDir(), chooseModel({ provider: "ollama", model: "m", ollama_url: url }))).rejects.toMatchObject({
      code: "PROVIDER_FAILED",
      message: expect.stringContaining("answered something other than JSON: <html>gateway</html>"),
    });
  });
});
