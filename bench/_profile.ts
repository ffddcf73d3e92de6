import { join } from "node:path";
import { BM25_WEIGHTS, rankOneWord, rankRareFirst } from "../src/search/bm25.ts";
import { parseQuery } from "../src/search/query.ts";
import { rankBm25, search, SearchContext, selectiveMatch } from "../src/search/search.ts";
import { makeSnippet } from "../src/search/snippet.ts";
import { Store } from "../src/store/store.ts";
import { scaleQueries, scifactWords } from "./scale.ts";

const size = process.argv[2] ?? "100k";
const home = join("/tmp/xap", `home-${size}`);
const dir = join(home, "repositories", "scale");
const queries = scaleQueries(scifactWords());
const store = Store.open(dir);
const t = () => performance.now();
const sums: Record<string, number[]> = {};
const add = (k: string, v: number) => (sums[k] ??= []).push(v);
const context = new SearchContext();
for (let pass = 0; pass < 3; pass++) {
  for (const q of queries) {
    const parsed = parseQuery(q);
    if (parsed.optional.length < 2) continue;
    let s = t();
    const totals = store.fullTextTotals();
    add("fullTextTotals", t() - s);
    s = t();
    store.termFrequencies(parsed.optional.flatMap((o) => (o.stem ? [o.stem] : [])));
    add("termFrequencies", t() - s);
    s = t();
    const match = selectiveMatch(store, parsed)!;
    add("selectiveMatch", t() - s);
    s = t();
    const rare = store.transaction(() => rankRareFirst(store, parsed, BM25_WEIGHTS, 100));
    add("rankRareFirst (null or not)", t() - s);
    s = t();
    const ranked = rankBm25(store, parsed, match, 100);
    add(`rankBm25 [${rare ? "rare" : "fts"}]`, t() - s);
    s = t();
    const n = ranked.total ?? store.countMatchingFragments(ranked.match);
    add(`total count [${rare ? "rare" : "fts"}]`, t() - s);
    s = t();
    const rows = store.fragmentsByIds(ranked.hits.slice(0, 10).map((h) => h.id));
    add("fragmentsByIds(10)", t() - s);
    s = t();
    for (const r of rows.values()) makeSnippet(r.text, parsed.highlight);
    add("snippets(10)", t() - s);
    s = t();
    await search(home, { query: q, limit: 10, mode: "bm25" }, context);
    add(`search() [${rare ? "rare" : "fts"}]`, t() - s);
    if (pass === 0 && process.argv[3]) console.log(q, "|", match, rare ? "rare" : "fts", n);
  }
}
const p50 = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
for (const [k, v] of Object.entries(sums))
  console.log(k.padEnd(36), `n=${v.length}`, `p50 ${p50(v).toFixed(2)} ms`, `mean ${(v.reduce((a, b) => a + b, 0) / v.length).toFixed(2)} ms`);
