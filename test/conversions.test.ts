/** A server's conversions (search/conversions.ts): kept for the next reads, shared while running, a few at a time. */
import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { indexRepository } from "../src/index/indexer.ts";
import { ConversionCache } from "../src/search/conversions.ts";
import { readDocument } from "../src/search/read-document.ts";
import { bm25Repository } from "./helpers.ts";

test("reads of a file being converted wait for that conversion; at most `concurrency` run at once; a failure is not kept", async () => {
  const cache = new ConversionCache(1024, 2);
  let running = 0;
  let most = 0;
  let calls = 0;
  const work = (text: string) => async () => {
    calls++;
    most = Math.max(most, ++running);
    await Bun.sleep(20);
    running--;
    return text;
  };
  expect(await Promise.all(Array.from({ length: 8 }, () => cache.convert("same", work("one text"))))).toEqual(Array(8).fill("one text"));
  expect(calls).toBe(1);
  expect(await cache.convert("same", work("again"))).toBe("one text"); // kept
  calls = 0;
  const texts = await Promise.all(Array.from({ length: 6 }, (_, i) => cache.convert(`key ${i}`, work(`text ${i}`))));
  expect(texts).toEqual(Array.from({ length: 6 }, (_, i) => `text ${i}`));
  expect([calls, most]).toEqual([6, 2]);
  const failing = async () => {
    throw new Error("broken");
  };
  await expect(Promise.all([cache.convert("bad", failing), cache.convert("bad", failing)])).rejects.toThrow("broken");
  expect(await cache.convert("bad", work("fixed"))).toBe("fixed"); // tried again, not a kept failure
});

test("parallel reads of one unconverted document start one conversion worker, not one each (s12 hostile #1, review #4)", async () => {
  const body = Array.from({ length: 4000 }, (_, i) => `<p>Paragraph ${i} of a long saved page.</p>`).join("");
  const { home, repo } = bm25Repository({ "page.html": `<html><body>${body}</body></html>` });
  await indexRepository(home, repo);
  const conversions = new ConversionCache(64 * 2 ** 20, 1);
  const threads = () => readdirSync("/proc/self/task").length;
  const before = threads();
  let most = before;
  const sampler = setInterval(() => {
    most = Math.max(most, threads());
  }, 2);
  try {
    const reads = await Promise.all(Array.from({ length: 8 }, () => readDocument(home, "docs:page.html", { conversions, maxLines: 1 })));
    expect(new Set(reads.map((r) => r.text))).toEqual(new Set(["Paragraph 0 of a long saved page."]));
  } finally {
    clearInterval(sampler);
  }
  // One worker thread at a time, where the eight reads each started their own (8 more threads).
  expect(most - before).toBeLessThanOrEqual(2);
});

test("a read that gives up stops waiting; the conversion stops only once no read waits for it, and is then forgotten", async () => {
  const cache = new ConversionCache(1024, 1);
  const stops: AbortSignal[] = [];
  const slow = (text: string) => async (signal: AbortSignal) => {
    stops.push(signal);
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (signal.aborted) throw new Error("stopped");
    return text;
  };
  // Two reads that may give up and one that may not: the conversion runs on while any waits.
  const [first, second] = [new AbortController(), new AbortController()];
  const reads = [cache.convert("a", slow("text a"), first.signal), cache.convert("a", slow("unused"), second.signal)];
  const patient = cache.convert("a", slow("unused"));
  first.abort();
  second.abort();
  await expect(reads[0]).rejects.toMatchObject({ code: "CONVERSION_STOPPED", message: "the request was cancelled" });
  await expect(reads[1]).rejects.toMatchObject({ code: "CONVERSION_STOPPED" });
  expect(await patient).toBe("text a");
  expect(stops.map((s) => s.aborted)).toEqual([false]);
  // Every read gave up: the conversion is stopped, and the next read starts its own.
  const alone = new AbortController();
  const gaveUp = cache.convert("b", slow("text b"), alone.signal);
  alone.abort();
  await expect(gaveUp).rejects.toMatchObject({ code: "CONVERSION_STOPPED" });
  expect(stops[1]?.aborted).toBe(true);
  expect(await cache.convert("b", slow("text b again"))).toBe("text b again");
  // A read already given up is refused at once.
  const early = new AbortController();
  early.abort();
  await expect(cache.convert("c", slow("text c"), early.signal)).rejects.toMatchObject({ code: "CONVERSION_STOPPED" });
});
