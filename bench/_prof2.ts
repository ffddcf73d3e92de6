import { join } from "node:path";
import { BM25_WEIGHTS, rankPostings } from "../src/search/bm25.ts";
import { parseQuery } from "../src/search/query.ts";
import { selectiveMatch, selectiveTerms } from "../src/search/search.ts";
import { decodePostings } from "../src/store/postings.ts";
import { Store } from "../src/store/store.ts";
import { scaleQueries, scifactWords } from "./scale.ts";
const store = Store.open(join(process.argv[2]!, "repositories", "scale"));
if (process.argv[3]) (store as any).db.run(process.argv[3]);
const queries = scaleQueries(scifactWords()).filter((q) => q.includes(" "));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const acc: Record<string, number> = {};
const t = (k: string, f: () => unknown) => { const s = cpu(); const r = f(); acc[k] = (acc[k] ?? 0) + cpu() - s; return r; };
const P = 5;
for (let pass = 0; pass < P; pass++)
for (const q of queries) {
  const parsed = parseQuery(q);
  const match = selectiveMatch(store, parsed)!;
  const terms = selectiveTerms(store, parsed);
  let n = 0;
  for (const term of terms) {
    const blob = t("read blob", () => (store as any).db.query("SELECT postings FROM term_postings WHERE term = ?").get(term.stem)) as any;
    if (blob) t("decode", () => decodePostings(blob.postings, () => { n++; }));
  }
  t("rankPostings whole", () => store.transaction(() => rankPostings(store, parsed, terms, match, BM25_WEIGHTS, 100)));
  acc.postings = (acc.postings ?? 0) + n;
}
console.log(Object.entries(acc).map(([k, v]) => `${k}: ${(v / P / queries.length).toFixed(3)}`).join("\n"));
