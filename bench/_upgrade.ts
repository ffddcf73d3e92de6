import { indexRepository } from "../src/index/indexer.ts";
import { listRepositories } from "../src/repos.ts";
const home = process.argv[2]!;
const [repo] = listRepositories(home);
const s = performance.now();
const summary = await indexRepository(home, repo!);
console.log("index run (upgrade + posting lists)", ((performance.now() - s) / 1000).toFixed(1), "s", JSON.stringify(summary).slice(0, 200));
