/**
 * Embedding is resumable: every batch of vectors commits on its own, so a run killed mid-embedding keeps what it
 * embedded, the next run embeds only the rest, and the result is the same as one uninterrupted run.
 */
import { expect } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { cliCommand, GLOVE, HOOK_TIMEOUT, runCli, tempDir, testShared, writeTree } from "./helpers.ts";

/** ~12,000 fragments of distinct text: dozens of embedding batches, so a kill can land between two of them. */
function writeCorpus(root: string): void {
  const files: Record<string, string> = {};
  for (let f = 0; f < 400; f++) {
    const sections = Array.from(
      { length: 30 },
      (_, s) => `## Part ${s}\n\nNote ${f}-${s} about protein ${s * f} in cells of tissue ${f % 17} and river ${s % 5}.`,
    );
    files[`n${f}.md`] = `# Notebook ${f}\n\n${sections.join("\n\n")}\n`;
  }
  writeTree(root, files);
}

const vectors = (home: string) => {
  const db = new Database(join(home, "repositories", "r", "index.db"), { readonly: true });
  try {
    return new Map(
      db
        .query<{ h: string; v: Uint8Array }, []>("SELECT text_hash AS h, vector AS v FROM embeddings")
        .all()
        .map((r) => [r.h, Buffer.from(r.v).toString("hex")]),
    );
  } finally {
    db.close();
  }
};

const status = (home: string) =>
  JSON.parse(runCli(["status", "r", "--json"], { home }).stdout) as
    | { fragments: number; vectors: number }[]
    | { fragments: number; vectors: number };
const first = <T>(value: T | T[]) => (Array.isArray(value) ? value[0]! : value);

testShared(
  "an index run killed mid-embedding keeps its batches; the next run embeds the rest, same vectors as an uninterrupted run",
  async () => {
    const docs = tempDir();
    writeCorpus(docs);
    const [killed, clean] = [tempDir(), tempDir()];
    for (const home of [killed, clean]) expect(runCli(["repo", "add", "r", docs, "--embedding-model", GLOVE], { home }).code).toBe(0);

    const env = { PATH: process.env.PATH ?? "", HOME: killed, RESEARCHER_HOME: killed, RESEARCHER_MODEL_PATH: GLOVE, NO_COLOR: "1" };
    const run = Bun.spawn([...cliCommand, "index", "r", "--quiet"], { env, stdout: "ignore", stderr: "ignore" });
    const db = join(killed, "repositories", "r", "index.db");
    let stored = 0;
    for (let waited = 0; waited < 60_000 && stored < 512; waited += 10) {
      await Bun.sleep(10);
      try {
        const reader = new Database(db, { readonly: true });
        stored = reader.query<{ n: number }, []>("SELECT count(*) AS n FROM embeddings").get()!.n;
        reader.close();
      } catch {
        // not created yet, or busy for a moment
      }
    }
    run.kill("SIGKILL");
    await run.exited;
    const interrupted = first(status(killed));
    const before = vectors(killed).size;
    expect(interrupted.vectors).toBeGreaterThanOrEqual(512);
    expect(interrupted.vectors).toBeLessThan(interrupted.fragments); // it died mid-embedding

    const resumed = runCli(["index", "r", "--json"], { home: killed });
    expect(resumed.code).toBe(0);
    const summary = first(JSON.parse(resumed.stdout) as { embedded: number; indexed: number });
    expect(summary.indexed).toBe(0); // the document pass had finished before the kill
    expect(summary.embedded).toBe(vectors(killed).size - before); // only what the killed run had not stored

    expect(runCli(["index", "r"], { home: clean }).code).toBe(0);
    const [after, reference] = [vectors(killed), vectors(clean)];
    expect(after.size).toBe(reference.size);
    for (const [hash, vector] of reference) expect(after.get(hash)).toBe(vector);
    const done = first(status(killed));
    expect(done.vectors).toBe(done.fragments);
  },
  HOOK_TIMEOUT,
);
