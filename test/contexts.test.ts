/** Contexts on path prefixes and repositories ranked for a query: the CLI, the library and MCP see the same. */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { addContext, registerRepository, contextFor, getRepository, listContexts, removeContext } from "../src/repos.ts";
import { repositoriesFor } from "../src/search/results.ts";
import { search } from "../src/search/search.ts";
import { runCli, tempDir, writeTree } from "./helpers.ts";
import { paragraph, writePdf } from "./pdf-fixtures.ts";

describe("contexts on path prefixes", () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, {
    "ch16-01-threads.md": "# Threads\n\nSpawning threads runs code concurrently.\n",
    "ch16/deep/channels.md": "# Channels\n\nChannels send messages between threads.\n",
    "ch04-ownership.md": "# Ownership\n\nEach value has an owner; threads aside.\n",
  });
  registerRepository(home, { name: "rb", path: docs, description: "The Rust book", embed: false });

  test("the longest matching prefix is a result's context; otherwise the repository description", async () => {
    await indexRepository(home, getRepository(home, "rb"));
    addContext(home, "rb:ch16", "Concurrency chapter");
    addContext(home, "rb:ch16/deep/", "Message passing, in depth");
    const byPath = Object.fromEntries((await search(home, { query: "threads", mode: "bm25" })).results.map((r) => [r.path, r.context]));
    expect(byPath).toEqual({
      "ch16-01-threads.md": "Concurrency chapter",
      "ch16/deep/channels.md": "Message passing, in depth",
      "ch04-ownership.md": "The Rust book",
    });
    expect(contextFor(getRepository(home, "rb"), "other.md")).toBe("The Rust book");
    expect(listContexts(home)).toEqual([
      { repository: "rb", prefix: "ch16", context: "Concurrency chapter" },
      { repository: "rb", prefix: "ch16/deep/", context: "Message passing, in depth" },
    ]);
  });

  test("a path's context is a dim line under a result's heading path, in text and markdown; a description is not (s27 user U7)", async () => {
    await indexRepository(home, getRepository(home, "rb"));
    addContext(home, "rb:ch16", "Concurrency chapter");
    addContext(home, "rb:ch16/deep/", "Message passing, in depth"); // ch04 has the repository's description alone
    const text = runCli(["search", "threads", "--repo", "rb", "--mode", "bm25"], { home }).stdout;
    const blocks = Object.fromEntries(text.split("\n\n").map((block) => [block.split("\n")[0]!.split("  ")[2], block.split("\n")]));
    expect(blocks["rb:ch16-01-threads.md:3"]?.slice(1, 3)).toEqual(["   Threads", "   context: Concurrency chapter"]);
    expect(blocks["rb:ch16/deep/channels.md:3"]?.[2]).toBe("   context: Message passing, in depth");
    expect(text).not.toContain("The Rust book");
    const markdown = runCli(["search", "threads", "--repo", "rb", "--mode", "bm25", "--format", "md"], { home }).stdout;
    expect(markdown).toContain("· context: Concurrency chapter\n");
    expect(markdown).not.toContain("The Rust book");
    // JSON keeps the description where no prefix matches, as before.
    const json = JSON.parse(runCli(["search", "threads", "--repo", "rb", "--json"], { home }).stdout);
    expect(json.results.map((r: { context: string }) => r.context).sort()).toEqual([
      "Concurrency chapter",
      "Message passing, in depth",
      "The Rust book",
    ]);
  });

  test("the CLI adds, lists and removes; mistakes are clear errors", () => {
    expect(runCli(["context", "add", "rb:ch04", "Ownership chapter"], { home })).toMatchObject({
      code: 0,
      stdout: "context rb:ch04 → Ownership chapter\n",
      stderr: "",
    });
    // A prefix no indexed path starts with is kept, and most often a typo: said so.
    expect(runCli(["context", "add", "rb:chapter16", "Typo"], { home })).toMatchObject({
      code: 0,
      stderr: "warning: no indexed document of rb is under 'chapter16' (yet)\n",
    });
    expect(JSON.parse(runCli(["context", "list", "--json"], { home }).stdout)).toContainEqual({
      repository: "rb",
      prefix: "ch04",
      context: "Ownership chapter",
    });
    expect(runCli(["context", "remove", "rb:ch04"], { home }).code).toBe(0);
    const missing = runCli(["context", "remove", "rb:nope"], { home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toStartWith("error: no context for 'rb:nope'");
    expect(runCli(["context", "add", "nope:x", "y"], { home }).stderr).toStartWith("error: no repository named 'nope'");
    expect(() => removeContext(home, "rb:../x")).toThrow("a context prefix stays inside its repository");
    // A context goes out with every result under it: a 100 KB one was taken (hostile s8 #10).
    const long = runCli(["context", "add", "rb:ch01", "x".repeat(1001)], { home });
    expect(long).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: a context is at most 1000 characters \(got 1001\)\n/) });
    // Counted in characters: 501 emoji are 1,002 UTF-16 units, and were refused (s9 hostile).
    expect(runCli(["context", "add", "rb:ch01", "🦀".repeat(501)], { home }).code).toBe(0);
  });
});

describe("repos-for", () => {
  test("repositories ranked by how strongly they match, each with its best passage", async () => {
    const home = tempDir();
    const cooking = tempDir();
    const space = tempDir();
    writeTree(cooking, {
      "bread.md": "# Bread\n\nKnead the dough and bake the loaf in a hot oven.\n",
      "soup.md": "# Soup\n\nSimmer the stock.\n",
    });
    writeTree(space, {
      "stars.md": "# Stars\n\nA telescope observes galaxies.\n",
      "oven.md": "# Planets\n\nVenus is as hot as an oven.\n",
    });
    // Enough other documents that the query's words are rare, as in real repositories (BM25's IDF).
    for (const dir of [cooking, space])
      writeTree(
        dir,
        Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`filler${i}.md`, `# Note ${i}\n\nUnrelated words number ${i}.\n`])),
      );
    for (const [name, path] of [
      ["cooking", cooking],
      ["space", space],
    ] as const) {
      await indexRepository(home, registerRepository(home, { name, path, embed: false }));
    }
    const ranked = await repositoriesFor(home, "knead dough bake oven");
    expect(ranked.map((r) => [r.repository, r.matched])).toEqual([
      ["cooking", 1],
      ["space", 1],
    ]);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
    expect(ranked[0]!.best).toMatchObject({ path: "bread.md", location: "bread.md:3" });
    const none = await repositoriesFor(home, "quantum chromodynamics");
    expect(none.every((r) => r.score === 0 && r.best === null)).toBe(true);
    const cli = JSON.parse(runCli(["repos-for", "telescope", "--json"], { home }).stdout);
    expect(cli[0]).toMatchObject({ repository: "space", matched: 1, best: { path: "stars.md", citation: "stars.md:3" } });
    // The passage itself, which `get` reads without the rest of the document (s26 agent F2).
    expect(cli[0].best.ref).toMatch(/^space:stars\.md:3-\d+$/);
    expect(runCli(["get", cli[0].best.ref], { home }).stdout).toContain("telescope");
  });

  test("its best passage is cited as search cites it: a PDF by page, code by the lines of its unit (s19 user F5)", async () => {
    const home = tempDir();
    const root = tempDir();
    writeTree(root, {
      "heap.py": "import os\n\n\ndef merge_sorted(a, b):\n    # merge two sorted lists\n    return sorted(a + b)\n",
    });
    writeFileSync(join(root, "paper.pdf"), await writePdf([paragraph("A study of the merge of sorted runs.", 700)]));
    await indexRepository(home, registerRepository(home, { name: "lib", path: root, embed: false, fileTypes: ["py", "pdf"] }));
    const bestOf = (query: string) => repositoriesFor(home, query).then((r) => r[0]!.best!.citation);
    expect(await bestOf("merge two sorted lists")).toBe("heap.py:1-6"); // the lines of its fragment: it cited one line
    expect(await bestOf("study of sorted runs")).toBe("paper.pdf:p1");
    expect(runCli(["repos-for", "merge two sorted lists"], { home }).stdout).toContain("best: lib:heap.py:1-6");
  });
});
