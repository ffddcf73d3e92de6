/**
 * Searches while an index run replaces documents: ranking and reading rows are separate queries, and a page must
 * never come back short because a fragment was replaced in between (the reliability issue saw 9 of 5,106).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search, SearchContext } from "../src/search/search.ts";
import { ROOT, tempDir, writeTree } from "./helpers.ts";

const WRITER = `
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexRepository } from ${JSON.stringify(join(ROOT, "src/index/indexer.ts"))};
import { getRepository } from ${JSON.stringify(join(ROOT, "src/repos.ts"))};
const [home, docs, until] = process.argv.slice(2);
const repo = getRepository(home, "live");
for (let round = 1; Date.now() < Number(until); round++) {
  for (let i = 0; i < 40; i++) writeFileSync(join(docs, "d" + i + ".md"), "# Doc " + i + "\\n\\nshared term, round " + round + " of document " + i + ".\\n");
  await indexRepository(home, repo);
}
`;

test("a page is never short while an index run replaces the documents it ranked", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(
    docs,
    Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`d${i}.md`, `# Doc ${i}\n\nshared term, round 0 of document ${i}.\n`])),
  );
  await indexRepository(home, registerRepository(home, { name: "live", path: docs, embed: false }));
  const script = join(tempDir(), "writer.ts");
  await Bun.write(script, WRITER);
  const until = Date.now() + 4000;
  const writer = Bun.spawn([process.execPath, script, home, docs, String(until)], { stderr: "pipe" });
  const context = new SearchContext();
  const short: number[] = [];
  let searches = 0;
  try {
    while (Date.now() < until) {
      for (const documents of [false, true]) {
        const response = await search(home, { query: "shared term", mode: "bm25", limit: 10, documents }, context);
        searches++;
        if (response.results.length < 10) short.push(response.results.length);
      }
    }
  } finally {
    await context.close();
  }
  expect(await writer.exited).toBe(0);
  expect(searches).toBeGreaterThan(100);
  expect(short).toEqual([]);
}, 30_000);
