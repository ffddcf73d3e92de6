import { join } from "node:path";
import { BM25_WEIGHTS } from "../src/search/bm25.ts";
import { parseQuery } from "../src/search/query.ts";
import { selectiveTerms } from "../src/search/search.ts";
import { TopScores } from "../src/search/top-scores.ts";
import { Store } from "../src/store/store.ts";
import { scaleQueries, scifactWords } from "./scale.ts";
const store = Store.open(join(process.argv[2]!, "repositories", "scale"));
const queries = scaleQueries(scifactWords()).filter((q) => q.includes(" "));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const acc: Record<string, number> = {};
const t = (k: string, f: () => any) => { const s = cpu(); const r = f(); acc[k] = (acc[k] ?? 0) + cpu() - s; return r; };
const P = 5;
for (let pass = 0; pass < P; pass++)
for (const q of queries) store.transaction(() => {
  const parsed = parseQuery(q);
  const terms = selectiveTerms(store, parsed);
  const frequency = t("freq", () => store.termFrequencies(terms.map((x) => x.stem!)));
  const lists = t("read", () => new Map(terms.flatMap((term) => { const l = store.postings.read(term.stem!); return l ? [[term, l] as const] : []; })));
  const { rows, averageLength } = t("totals", () => store.fullTextTotals());
  const removed = t("removed", () => store.postings.removed());
  const scores = new TopScores();
  t("visit+score", () => { for (const [term, list] of lists) { const weight = Math.log((rows - frequency.get(term.stem!)! + 0.5) / (frequency.get(term.stem!)! + 0.5)); list.visit((id: number, title: number, heading: number, body: number, length: number) => { if (removed.has(id)) return; const tf = title * 2 + heading * 1.5 + body; scores.add(id, (weight * (tf * 2.2)) / (tf + 1.2 * (0.25 + (0.75 * length) / averageLength))); }); } });
  const rare = terms.filter((x) => !lists.has(x));
  if (rare.length) t("fts rare", () => { for (const hit of store.searchBm25(`(${rare.map((r) => r.fts).join(" OR ")})`, BM25_WEIGHTS, -1)) scores.add(hit.id, hit.score); });
  t("top", () => scores.top(100, () => true));
  t("reset", () => scores.reset());
});
console.log(Object.entries(acc).map(([k, v]) => `${k}: ${(v / P / queries.length).toFixed(3)}`).join("\n"));
