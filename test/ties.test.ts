/** Ties of a ranking in path order (src/search/ties.ts), through the real indexer, store and search. */
import { expect, test } from "bun:test";
import { mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { BM25_WEIGHTS, type DocumentHit, type FragmentHit, search } from "../src/search/search.ts";
import { pathOrdered } from "../src/search/ties.ts";
import { Store } from "../src/store/store.ts";
import { describeShared, GLOVE, tempDir, writeTree } from "./helpers.ts";

const TWIN = "# Quokka\n\nThe quokka lives on Rottnest Island and smiles for photographs.\n";
const OTHERS = {
  "notes/x.md": "# Wombat\n\nThe wombat digs burrows.\n",
  "notes/y.md": "# Numbat\n\nThe numbat eats termites.\n",
  "notes/z.md": "# Bilby\n\nThe bilby has long ears.\n",
};

/** A folder with three identical notes (and others), indexed; `a.md` then moved out, indexed, moved back, indexed. */
async function movedOutAndBack(embedding?: { model: string }) {
  const home = tempDir();
  const docs = tempDir();
  const away = tempDir();
  writeTree(docs, { "a.md": TWIN, "b.md": TWIN, "c.md": TWIN, ...OTHERS });
  const repo = registerRepository(home, { name: "t", path: docs, ...(embedding ? { embedding } : { embed: false }) });
  await indexRepository(home, repo);
  const fresh = await pages(home, embedding ? "hybrid" : "bm25");
  renameSync(join(docs, "a.md"), join(away, "a.md"));
  expect(await indexRepository(home, repo)).toMatchObject({ removed: 1 });
  renameSync(join(away, "a.md"), join(docs, "a.md"));
  expect(await indexRepository(home, repo)).toMatchObject({ indexed: 1 });
  return { home, repo, fresh };
}

/** Paths of the first three results, one page of three and page by page, of fragments and of documents. */
async function pages(home: string, mode: "bm25" | "hybrid") {
  const paths = async (options: { limit: number; offset?: number; documents?: boolean }) =>
    ((await search(home, { query: "quokka smiles", mode, ...options })).results as (FragmentHit | DocumentHit)[]).map((r) => r.path);
  const onePage = await paths({ limit: 3 });
  const byPage = [...(await paths({ limit: 1 })), ...(await paths({ limit: 1, offset: 1 })), ...(await paths({ limit: 1, offset: 2 }))];
  const documents = await paths({ limit: 3, documents: true });
  const documentPages = [...(await paths({ limit: 2, documents: true })), ...(await paths({ limit: 2, offset: 2, documents: true }))];
  return { onePage, byPage, documents, documentPages: documentPages.slice(0, 3) };
}

const BY_PATH = { onePage: ["a.md", "b.md", "c.md"], byPage: ["a.md", "b.md", "c.md"], documents: ["a.md", "b.md", "c.md"] };

test("identical files rank by path, a fresh index and one whose file moved out and back alike, and pages agree (s28 hostile F9)", async () => {
  // a.md, moved out and back, got the newest ids: it ranked after b.md and c.md, and `--offset 1 -n 1` returned it.
  const { home, fresh } = await movedOutAndBack();
  expect(fresh).toMatchObject(BY_PATH);
  const after = await pages(home, "bm25");
  expect(after).toMatchObject(BY_PATH);
  expect(after.documentPages).toEqual(BY_PATH.documents);
});

test("a ranking orders the ties it holds by path, and ranks no deeper than asked (s28 hostile F9)", async () => {
  const home = tempDir();
  const docs = tempDir();
  mkdirSync(join(docs, "d"));
  const names = ["k.md", "e.md", "q.md", "a.md", "m.md", "d/b.md", "z.md"];
  writeTree(docs, { ...Object.fromEntries(names.map((name) => [name, TWIN])), ...OTHERS });
  const repo = registerRepository(home, { name: "t", path: docs, embed: false });
  await indexRepository(home, repo);
  const store = Store.open(repo.dir);
  try {
    const calls: number[] = [];
    const rank = pathOrdered(store, (depth: number) => {
      calls.push(depth);
      return { hits: store.fullText.search("quokka", BM25_WEIGHTS, depth) };
    });
    const paths = (hits: { id: number }[]) => hits.map((hit) => store.ownersOf([hit.id]).get(hit.id)!.path);
    expect(paths(rank(7).hits)).toEqual([...names].sort());
    // Cut inside the tie, the ranking's own cut stands (ranking on until the tie ended doubled a one-word query's time
    // at scale): the two it kept, in path order.
    const two = paths(rank(2).hits);
    expect(two).toEqual([...two].sort());
    expect(calls).toEqual([7, 2]);
  } finally {
    store.close();
  }
});

describeShared("ties in hybrid search", () => {
  test("identical files rank by path in hybrid search too, after a move out and back (s28 hostile F9)", async () => {
    const { home, fresh } = await movedOutAndBack({ model: GLOVE });
    expect(fresh).toMatchObject(BY_PATH);
    expect(await pages(home, "hybrid")).toMatchObject(BY_PATH);
  });
});
