import { join } from "node:path";
import { parseQuery } from "../src/search/query.ts";
import { rankBm25, search, SearchContext, selectiveMatch } from "../src/search/search.ts";
import { makeSnippet } from "../src/search/snippet.ts";
import { Store } from "../src/store/store.ts";
import { scaleQueries, scifactWords } from "./scale.ts";
const home = process.argv[2]!;
const store = Store.open(join(home, "repositories", "scale"));
const queries = scaleQueries(scifactWords());
const context = new SearchContext();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const acc: Record<string, number[]> = {};
const t = (k: string, f: () => unknown) => { const s = cpu(); const w = performance.now(); const r = f(); (acc[k] ??= []).push(cpu() - s); (acc[k + " wall"] ??= []).push(performance.now() - w); return r; };
for (let pass = 0; pass < 5; pass++)
  for (const q of queries) {
    const multi = q.includes(" ") ? "multi" : "one";
    const parsed = parseQuery(q);
    const match = t(`selectiveMatch ${multi}`, () => selectiveMatch(store, parsed)) as string;
    const ranked = t(`rankBm25 ${multi}`, () => rankBm25(store, parsed, match, 100)) as any;
    const rows = t(`rows ${multi}`, () => store.fragmentsByIds(ranked.hits.slice(0, 10).map((h: any) => h.id))) as Map<number, any>;
    t(`snippets ${multi}`, () => { for (const r of rows.values()) makeSnippet(r.text, parsed.highlight); });
    const s = cpu(); const w = performance.now();
    await search(home, { query: q, limit: 10, mode: "bm25" }, context);
    (acc[`search ${multi}`] ??= []).push(cpu() - s);
    (acc[`search ${multi} wall`] ??= []).push(performance.now() - w);
  }
const p50 = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
for (const [k, v] of Object.entries(acc).sort()) console.log(k.padEnd(28), `p50 ${p50(v).toFixed(2)}  mean ${mean(v).toFixed(2)}`);
