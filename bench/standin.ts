/**
 * A stand-in embedding server (OpenAI-compatible, on 127.0.0.1) whose vectors are derived from SciFact's qrels,
 * so a model of any strength can be had: each query has a random direction; a document's vector is the sum of
 * its relevant queries' directions plus noise, a query's is its direction plus noise. More noise, weaker model.
 * Any other text (e.g. a pseudo-query cut from a fragment) is placed near the document it was cut from, as a
 * real model places a passage's words near the passage.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readQrels, SCIFACT } from "./scifact.ts";

const DIMS = 128;
const wordsOf = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(" ");

function seeded(text: string): () => number {
  let state = Number(Bun.hash.xxHash32(text)) || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) + 0.5) / 2 ** 32;
  };
}

function randomUnit(seed: string): number[] {
  const next = seeded(seed);
  const v = Array.from({ length: DIMS }, () => Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next()));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const add = (a: number[], b: number[], scale = 1) => a.map((x, i) => x + scale * b[i]!);
const unit = (v: number[]) => {
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
};

/** Starts a server for one noise level; returns its base URL and a stop function. */
export function startStandIn(noise: number): { url: string; stop: () => void } {
  const corpus = readFileSync(join(SCIFACT, "corpus.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
  const queries = new Map(
    readFileSync(join(SCIFACT, "queries.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { _id: string; text: string })
      .map((q) => [q.text, q._id]),
  );
  const relevantTo = new Map<string, string[]>();
  for (const split of ["train", "test"] as const) {
    for (const [query, docs] of readQrels(split))
      for (const doc of docs.keys()) relevantTo.set(doc, [...(relevantTo.get(doc) ?? []), query]);
  }
  const byTitle = new Map<string, string>();
  for (const doc of corpus) if (!byTitle.has(doc.title)) byTitle.set(doc.title, doc._id);
  // A document's topic: the directions of the queries it answers (its own random one if it answers none). The
  // model sees each text's topic through its own error, documents, queries and pseudo-queries alike.
  const topic = (id: string) => {
    const queries = relevantTo.get(id) ?? [];
    return unit(
      queries.length ? queries.reduce((sum, q) => add(sum, randomUnit(`q${q}`)), new Array<number>(DIMS).fill(0)) : randomUnit(`t${id}`),
    );
  };
  // A document's text opens with its title, cut with "…" when long (convert.ts): a cut title is matched by its start.
  const cut = new Map<string, string | undefined>();
  const documentOf = (line: string) => {
    if (byTitle.has(line) || !line.endsWith("…")) return byTitle.get(line);
    const start = line.slice(0, -1).trimEnd();
    if (!cut.has(start)) cut.set(start, corpus.find((d) => d.title.startsWith(start))?._id);
    return cut.get(start);
  };
  const docVector = (id: string) => unit(add(topic(id), randomUnit(`d${id}`), noise));
  const plain: string[] = [];
  const embed = (text: string): number[] => {
    const query = queries.get(text);
    if (query !== undefined) return unit(add(randomUnit(`q${query}`), randomUnit(`n${text}`), noise));
    const doc = documentOf(text.split("\n")[0]!);
    if (doc !== undefined) return docVector(doc);
    const words = wordsOf(text);
    const source = corpus.find((d, i) => {
      plain[i] ??= wordsOf(`${d.title} ${d.text}`);
      return plain[i].includes(words);
    });
    return source ? unit(add(topic(source._id), randomUnit(`n${text}`), noise)) : randomUnit(`n${text}`);
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const body = (await request.json()) as { input: string[] };
      return Response.json({ data: body.input.map((text, index) => ({ index, embedding: embed(text) })) });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
