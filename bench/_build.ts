import { clearImpacts, maintainImpactLists } from "../src/search/bm25.ts";
import { Store } from "../src/store/store.ts";
const store = Store.open(process.argv[2]!, { write: true });
store.transaction(() => store.postings.clear());
const s = performance.now();
maintainImpactLists(store, 0);
console.log("maintain", (performance.now() - s).toFixed(0), "ms");
store.close();
