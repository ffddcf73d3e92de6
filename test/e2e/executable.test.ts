/** The single-file executable on its own: no node_modules, no bun on PATH, native parts unpacked on first run. */
import { beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  describeShared,
  executable,
  GLOVE,
  gloveThroughOnnx,
  HOOK_TIMEOUT,
  ROOT,
  runCli,
  SHARED,
  SYSTEM_PATH,
  tempDir,
  useCliCommand,
  writeTree,
} from "../helpers.ts";
import { encode as encodePng } from "fast-png";
import { paragraph, SCANNED, scannedPage, scannedStrip, writePdf } from "../pdf-fixtures.ts";

const DOCS = {
  "cars.md": "# Vehicles\n\nCars and trucks drive on the highway; the driver parks the car in the garage.\n",
  "bread.md": "# Baking\n\nKnead the dough, let it rise, then bake the loaf in a hot oven.\n",
  "space.md": "# Astronomy\n\nThe telescope observed a distant galaxy and several planets orbiting a star.\n",
};

describeShared("compiled executable", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, DOCS);
  const cli = (...args: string[]) => runCli(args, { home });
  const onnxGlove = gloveThroughOnnx();
  let exe: string;
  beforeAll(async () => {
    exe = await executable();
    useCliCommand([exe]);
  }, HOOK_TIMEOUT);

  test("--version names version, commit, Bun and platform", () => {
    const result = cli("--version");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^researcher \d+\.\d+\.\d+ \(commit [0-9a-f]{12}(-dirty)?, bun \d+\.\d+\.\d+, linux-x64\)\n$/);
  });

  test("skill prints the SKILL.md it was built with: an agent's instructions travel with the executable (s22 agent #8)", () => {
    const result = cli("skill");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${readFileSync(join(ROOT, "SKILL.md"), "utf8").trimEnd()}\n`);
  });

  test("run in a folder holding a bunfig.toml and a .env, it reads neither (a preload there would run its code)", () => {
    const folder = tempDir();
    writeTree(folder, {
      "bunfig.toml": 'preload = ["./preload.ts"]\n',
      "preload.ts": 'console.error("PRELOAD RAN");\n',
      ".env": `RESEARCHER_HOME=${join(folder, "from-env")}\n`,
      "d/a.md": "# A\n",
    });
    // No RESEARCHER_HOME of its own: one from .env would be taken, and would make its folder.
    const result = Bun.spawnSync([exe, "repo", "add", "here", "d", "--no-embed"], {
      cwd: folder,
      env: { PATH: SYSTEM_PATH, HOME: tempDir() },
    });
    expect(result.exitCode).toBe(0);
    expect(result.stderr.toString()).not.toContain("PRELOAD RAN");
    expect(existsSync(join(folder, "from-env"))).toBe(false);
  });

  test("index with embeddings from a model folder, then search in every mode", () => {
    expect(cli("repo", "add", "docs", docs).code).toBe(0);
    const summary = JSON.parse(cli("index", "--json", "docs").stdout);
    expect(summary).toMatchObject({ indexed: 3, embedded: 3, model: GLOVE });
    expect(existsSync(join(home, "repositories/docs/vectors.usearch"))).toBe(true);

    const native = readdirSync(join(home, "native")).sort();
    expect(native).toEqual([
      expect.stringMatching(/^onnxruntime-node-1\.30\.0-linux-x64$/),
      expect.stringMatching(/^usearch-2\.25\.3-linux-x64$/),
    ]);
    expect(readdirSync(join(home, "native", native[0]!)).sort()).toEqual(["libonnxruntime.so.1", "onnxruntime_binding.node"]);

    const bm25 = JSON.parse(cli("search", "telescope", "--mode", "bm25", "--json").stdout);
    expect(bm25).toMatchObject({ mode: "bm25", total: 1, results: [{ path: "space.md" }] });
    const vector = JSON.parse(cli("search", "automobile", "--mode", "vector", "--json", "-n", "1").stdout);
    expect(vector).toMatchObject({ mode: "vector", results: [{ path: "cars.md" }] });
    const hybrid = JSON.parse(cli("search", "automobile garage", "--json", "--explain", "-n", "1").stdout);
    expect(hybrid).toMatchObject({ mode: "hybrid", results: [{ path: "cars.md", explain: { bm25: { rank: 1 }, vector: { rank: 1 } } }] });
    expect(Object.keys(hybrid.results[0].explain)).toEqual(["bm25", "vector", "fused", "weights", "merge"]);
  });

  test("a transformer model runs through the embedded ONNX runtime with the same results", () => {
    // GLOVE itself is read as a static token table; this copy claims a layer, so it runs as a network.
    const env = { RESEARCHER_MODEL_PATH: onnxGlove };
    const copy = tempDir();
    writeTree(copy, DOCS);
    expect(runCli(["repo", "add", "docs-onnx", copy], { home, env }).code).toBe(0);
    expect(JSON.parse(runCli(["index", "--json", "docs-onnx"], { home, env }).stdout)).toMatchObject({ indexed: 3, embedded: 3 });
    expect(JSON.parse(runCli(["model", "show", "--json"], { home, env }).stdout)).toMatchObject({ kind: "transformer", path: onnxGlove });
    const vector = JSON.parse(
      runCli(["search", "automobile", "--mode", "vector", "--json", "-n", "1", "--repo", "docs-onnx"], { home, env }).stdout,
    );
    expect(vector).toMatchObject({ mode: "vector", results: [{ path: "cars.md" }] });
  });

  test("an unpacked native library damaged on disk (same size, other bytes) is unpacked again, not loaded: no crash (s12 hostile #7)", () => {
    const library = join(home, "native/onnxruntime-node-1.30.0-linux-x64/libonnxruntime.so.1");
    const whole = readFileSync(library);
    const damaged = Buffer.from(whole);
    damaged.fill(0, damaged.length >> 1, (damaged.length >> 1) + (1 << 20));
    writeFileSync(library, damaged);
    const env = { RESEARCHER_MODEL_PATH: onnxGlove };
    const vector = runCli(["search", "automobile", "--mode", "vector", "--json", "-n", "1", "--repo", "docs-onnx"], { home, env });
    expect(vector.code).toBe(0);
    expect(JSON.parse(vector.stdout)).toMatchObject({ mode: "vector", results: [{ path: "cars.md" }] });
    expect(readFileSync(library).equals(whole)).toBe(true);
  });

  test("two processes unpacking the native parts at once both succeed", async () => {
    const fresh = tempDir();
    const start = () =>
      Bun.spawn([exe, "model", "pull", GLOVE], {
        env: { PATH: SYSTEM_PATH, HOME: fresh, RESEARCHER_HOME: fresh },
        stdout: "pipe",
        stderr: "pipe",
      });
    const [a, b] = [start(), start()];
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
    expect(readdirSync(join(fresh, "native/onnxruntime-node-1.30.0-linux-x64")).sort()).toEqual([
      "libonnxruntime.so.1",
      "onnxruntime_binding.node",
    ]);
  });

  test("status --json and model show", () => {
    const status = JSON.parse(cli("status", "docs", "--json").stdout);
    expect(status).toMatchObject({ name: "docs", documents: 3, fragments: 3, model: GLOVE, vectors: 3 });
    const model = JSON.parse(cli("model", "show", "--json").stdout);
    expect(model).toMatchObject({ provider: "local", source: "folder", kind: "static", path: GLOVE, dims: 100 });
    // As text: the values as a person reads them, not JSON strings.
    const text = cli("model", "show").stdout;
    expect(text).toContain(`provider        local\n`);
    expect(text).toContain(`path            ${GLOVE}\n`);
  });

  test("errors are one line and an exit code, never a stack trace", () => {
    const noModel = runCli(["search", "x", "--mode", "vector"], { home, env: { RESEARCHER_MODEL_PATH: "/nonexistent/model" } });
    expect(noModel.code).toBe(1);
    expect(noModel.stderr).toMatch(/^error: \/nonexistent\/model does not exist\nhint: /);
    const missing = runCli(["search", "x", "--mode", "vector"], {
      home,
      env: { RESEARCHER_MODEL_PATH: "", RESEARCHER_MODEL: "Xenova/bge-small-en-v1.5" },
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("error: model Xenova/bge-small-en-v1.5 is not on this machine");
    expect(missing.stderr).toContain("hint: run `researcher model pull");
    const usage = cli("search", "x", "--mode", "fuzzy");
    expect(usage.code).toBe(2);
    for (const result of [noModel, missing, usage]) expect(result.stderr).not.toContain("    at ");
  });

  test("one repository failing does not stop the others, and the command still fails", () => {
    const fresh = tempDir();
    const env = { RESEARCHER_MODEL_PATH: "" };
    const run = (...args: string[]) => runCli(args, { home: fresh, env });
    expect(run("repo", "add", "good", docs, "--embedding-model", GLOVE).code).toBe(0);
    const broken = tempDir();
    writeTree(broken, { "x.md": "text\n" });
    expect(run("repo", "add", "broken", broken).code).toBe(0);
    rmSync(broken, { recursive: true });
    const result = run("index", "--json");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: broken: cannot read repository folder .*nothing was changed/);
    expect(JSON.parse(result.stdout)).toEqual([
      expect.objectContaining({ repository: "good", embedded: 3 }),
      { repository: "broken", error: expect.objectContaining({ code: "PATH_NOT_FOUND" }) },
    ]);
  });

  test("offline first use of a hub model: BM25 indexed and reported, embeddings pending with what to do", () => {
    const fresh = tempDir();
    writeTree(fresh, { "a.md": "hello\n" });
    const env = { RESEARCHER_MODEL_PATH: "", HTTPS_PROXY: "http://127.0.0.1:9" };
    expect(runCli(["repo", "add", "a", fresh], { home: fresh, env }).code).toBe(0);
    const started = performance.now();
    const result = runCli(["index", "a", "--json"], { home: fresh, env });
    expect(performance.now() - started).toBeLessThan(25_000);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ indexed: 1, embedded: 0, embeddings_pending: 1, model: null });
    expect(result.stderr).toMatch(
      /^warning: a: embeddings pending for 1 fragment texts \(BM25 search works now\): cannot load model Snowflake\/snowflake-arctic-embed-xs.*researcher model/,
    );
    expect(JSON.parse(runCli(["search", "hello", "--json"], { home: fresh, env }).stdout).total).toBe(1);
    // status says the vectors are pending, not "BM25 only" as for a repository that never embeds.
    expect(JSON.parse(runCli(["status", "a", "--json"], { home: fresh, env }).stdout)).toMatchObject({
      model: null,
      embeddings_pending: 1,
    });
    const text = runCli(["status", "a"], { home: fresh, env }).stdout;
    expect(text).toContain("no vectors yet · 1 fragment texts waiting for embeddings (`researcher index a` with a model)");
    // The run that embeds them says how many it embedded.
    expect(runCli(["index", "a"], { home: fresh, env: { RESEARCHER_MODEL_PATH: GLOVE } }).stdout).toContain(" · 1 embedded · ");
  });
});

describeShared("executable reads every format", () => {
  const home = tempDir();
  const docs = tempDir();
  const cli = (...args: string[]) => runCli(args, { home });
  beforeAll(async () => {
    useCliCommand([await executable()]);
    writeTree(docs, {
      "cells.pdf": await writePdf(
        [paragraph("Mitochondria produce energy for the cell.", 72), paragraph("Chloroplasts capture sunlight in plants.", 72)],
        { title: "Organelles" },
      ),
      // A Chinese table of contents in a CID font: its text needs pdf.js's character maps, embedded in the executable.
      "toc.pdf": readFileSync(join(SHARED, "data/corpus/pdf/pdfjs-test-pdfs/XiaoBiaoSong.pdf")),
      // A scanned page without a text layer: read by the embedded OCR engine and English model, nothing downloaded.
      "scan.pdf": await scannedPage(join(SHARED, SCANNED, "scan-01.pdf"), 1),
      // An image (opt-in by type), decoded without native code.
      "title.png": encodePng({ ...(await scannedStrip(join(SHARED, SCANNED, "scan-01.pdf"), 260)), channels: 1, depth: 8 }),
      "tables.docx": readFileSync(join(SHARED, "data/corpus/docx/mammoth.js/tables.docx")),
      "alice.epub": readFileSync(join(SHARED, "data/corpus/epub/epub.js/alice.epub")),
      "page.html":
        "<html><head><title>Sourdough</title><script>var hidden = 'javascriptonly';</script></head><body><nav>menu</nav><h1>Starter</h1><p>Feed the levain daily.</p></body></html>",
    });
  }, HOOK_TIMEOUT);

  test("index converts in worker threads; results cite pages; convert prints what indexing sees", () => {
    expect(cli("repo", "add", "papers", docs, "--no-embed", "--file-types", "pdf,docx,epub,html,png").code).toBe(0);
    expect(JSON.parse(cli("index", "papers", "--json").stdout)).toMatchObject({ indexed: 7, failed: 0, ocr_pages: 2 });
    const top = (query: string) => JSON.parse(cli("search", query, "--mode", "bm25", "--json").stdout).results[0]?.path;
    expect(top("bottom right")).toBe("tables.docx");
    expect(top("rabbit hole")).toBe("alice.epub");
    expect(top("levain")).toBe("page.html");
    expect(top("javascriptonly")).toBeUndefined();
    const text = cli("search", "chloroplasts", "--mode", "bm25");
    expect(text.stdout).toContain("papers:cells.pdf:p2");
    const hit = JSON.parse(cli("search", "chloroplasts", "--json").stdout).results[0];
    expect(hit).toMatchObject({ path: "cells.pdf", page: 2, location: expect.stringMatching(/^cells\.pdf:\d+$/) });
    expect(JSON.parse(cli("search", "红军作战", "--json").stdout).results[0]).toMatchObject({ path: "toc.pdf", page: 1 });
    expect(JSON.parse(cli("search", "hypoglycaemic counterregulation", "--json").stdout).results[0]).toMatchObject({
      path: "scan.pdf",
      page: 1,
    });
    expect(JSON.parse(cli("search", "unawareness", "--json", "--where", "format=png").stdout).results[0]).toMatchObject({
      path: "title.png",
    });
    const converted = JSON.parse(cli("convert", join(docs, "cells.pdf"), "--json").stdout);
    expect(converted).toMatchObject({ title: "Organelles", format: "pdf", pages: 2, metadata: { pages: 2 } });
    expect(cli("convert", join(docs, "cells.pdf")).stdout).toStartWith(
      "<!-- page 1 -->\n\nMitochondria produce energy for the cell.\n\n<!-- page 2 -->",
    );
  }, 240_000); // OCR of one page: seconds of CPU, more on a shared machine
});

describeShared("executable indexes code with its embedded grammars", () => {
  const home = tempDir();
  const code = tempDir();
  const cli = (...args: string[]) => runCli(args, { home });
  beforeAll(async () => useCliCommand([await executable()]), HOOK_TIMEOUT);

  test("fragments follow the syntax in every language tried, with no node_modules to read grammars from", () => {
    writeTree(code, {
      "server.go":
        'package main\n\nimport "fmt"\n\n// Start starts the listener.\nfunc (s *Server) Start() error {\n\tfmt.Println(s.name)\n\treturn nil\n}\n',
      "point.rs": "/// A point.\npub struct Point { x: i32 }\n\nimpl Point {\n    fn norm(&self) -> i32 { self.x.abs() }\n}\n",
      "feed.py": 'class Reader:\n    def feed(self, chunk):\n        """Feed a chunk."""\n        self.buf += chunk\n',
      "button.tsx": 'export function Button({ label }: { label: string }) {\n  return <button className="b">{label}</button>;\n}\n',
      "greet.cpp": "#include <string>\nnamespace geo {\nint area(int w, int h) { return w * h; }\n}\n",
      // A script without an extension, told by its #! line (s22 agent #4).
      "bin/deploy": "#!/usr/bin/env bash\nrollout() {\n  kubectl apply -f release.yaml\n}\n",
    });
    expect(cli("repo", "add", "code", code, "--code", "--no-embed").code).toBe(0);
    expect(JSON.parse(cli("index", "code", "--json").stdout)).toMatchObject({ indexed: 6, failed: 0 });
    const top = (query: string) => JSON.parse(cli("search", query, "--mode", "bm25", "--json").stdout).results[0];
    expect(top("listener")).toMatchObject({
      path: "server.go",
      heading: "package main, imports, func (*Server) Start",
      metadata: { language: "go" },
    });
    expect(top("norm")).toMatchObject({ path: "point.rs", heading: "struct Point, impl Point", metadata: { language: "rust" } });
    expect(top("chunk")).toMatchObject({ path: "feed.py", heading: "class Reader", metadata: { language: "python" } });
    expect(top("label")).toMatchObject({ path: "button.tsx", heading: "function Button", metadata: { language: "tsx" } });
    expect(top("area")).toMatchObject({ path: "greet.cpp", metadata: { language: "cpp" } });
    expect(top("rollout")).toMatchObject({ path: "bin/deploy", heading: "function rollout", metadata: { language: "bash", format: "sh" } });
  });
});

describeShared("executable with an embedded model", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, DOCS);
  beforeAll(async () => useCliCommand([await executable({ embedModel: GLOVE })]), HOOK_TIMEOUT);

  test("works offline from the first run and reports the model as embedded", () => {
    const env = { RESEARCHER_MODEL_PATH: "" };
    const cli = (...args: string[]) => runCli(args, { home, env });
    expect(JSON.parse(cli("model", "show", "--json").stdout)).toMatchObject({
      id: "embedded:glove-6b-100d-sif",
      source: "embedded",
      dims: 100,
    });
    expect(cli("repo", "add", "docs", docs).code).toBe(0);
    expect(JSON.parse(cli("index", "--json", "docs").stdout)).toMatchObject({ embedded: 3, model: "embedded:glove-6b-100d-sif" });
    expect(JSON.parse(cli("search", "automobile", "--mode", "vector", "--json", "-n", "1").stdout).results[0].path).toBe("cars.md");
  });
});
