/** A single-file change leaves the ANN file stale (searches scan) instead of rebuilding it per saved file. */
import { afterAll, beforeAll, expect } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexFiles, indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { annPath, vectorIndexState } from "../src/search/vectors.ts";
import { verifyRepository } from "../src/index/verify.ts";
import { GLOVE, tempDir, testShared, writeTree } from "./helpers.ts";

// Through the graph even for this small repository, as in a large one.
beforeAll(() => {
  process.env.RESEARCHER_EXACT_SCAN_BELOW = "0";
});
afterAll(() => void delete process.env.RESEARCHER_EXACT_SCAN_BELOW);

testShared("indexFiles leaves vectors.usearch stale and search scans exactly; the next index run rebuilds it", async () => {
  const home = tempDir();
  const docs = tempDir();
  writeTree(docs, { "cars.md": "# Cars\n\nThe driver parks the car in the garage.\n", "bread.md": "# Bread\n\nKnead the dough.\n" });
  const repo = registerRepository(home, { name: "a", path: docs, embedding: { model: GLOVE } });
  await indexRepository(home, repo);
  const built = readFileSync(annPath(repo.dir));

  writeFileSync(join(docs, "space.md"), "# Space\n\nThe telescope observed a distant galaxy.\n");
  expect(await indexFiles(home, repo, ["space.md"])).toMatchObject({ indexed: 1, embedded: 1 });
  expect(readFileSync(annPath(repo.dir)).equals(built)).toBe(true); // not rebuilt
  const store = Store.open(repo.dir);
  expect(vectorIndexState(store, repo.dir)).toBe("stale");
  store.close();
  const hit = (await search(home, { query: "astronomy observatory", mode: "vector", limit: 1 })).results[0]!;
  expect(hit.path).toBe("space.md"); // found by the exact scan
  expect((await verifyRepository(repo)).problems).toEqual([]); // deferred, not damaged

  await indexRepository(home, repo);
  const after = Store.open(repo.dir);
  expect(vectorIndexState(after, repo.dir)).toBe("verified");
  after.close();
});
