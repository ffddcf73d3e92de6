import { join } from "node:path";
import { BM25_WEIGHTS } from "../src/search/bm25.ts";
import { parseQuery } from "../src/search/query.ts";
import { rankBm25, search, SearchContext, selectiveMatch } from "../src/search/search.ts";
import { Store } from "../src/store/store.ts";
import { scaleQueries, scifactWords } from "./scale.ts";

const home = process.argv[2]!;
const dir = join(home, "repositories", "scale");
const queries = scaleQueries(scifactWords());
const store = Store.open(dir);
const context = new SearchContext();
let bad = 0;
const times: Record<string, number[]> = {};
for (const q of queries) {
  const parsed = parseQuery(q);
  const match = selectiveMatch(store, parsed)!;
  const ranked = rankBm25(store, parsed, match, 100);
  const fts = store.searchBm25(match, BM25_WEIGHTS, 100);
  const same = ranked.hits.every((h, i) => Math.abs(h.score - fts[i]!.score) < 1e-9) && ranked.hits.length === fts.length;
  const total = ranked.total ?? store.countMatchingFragments(match);
  const totalOk = total === store.countMatchingFragments(match);
  if (!same || !totalOk) { bad++; console.log("MISMATCH", q, same, totalOk); }
}
for (let pass = 0; pass < 3; pass++)
  for (const q of queries) {
    const s = performance.now();
    await search(home, { query: q, limit: 10, mode: "bm25" }, context);
    (times[q.includes(" ") ? "multi" : "one"] ??= []).push(performance.now() - s);
  }
const p50 = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
console.log("bad", bad, Object.entries(times).map(([k, v]) => `${k} p50 ${p50(v).toFixed(2)} max ${Math.max(...v).toFixed(1)}`).join("; "));
