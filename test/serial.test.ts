import { expect, test } from "bun:test";
import { limited } from "../src/serial.ts";

test("limited runs at most n tasks at once, the rest in the order given, whether they succeed or fail", async () => {
  const run = limited(3);
  let running = 0;
  let most = 0;
  const started: number[] = [];
  const task = (i: number) => async () => {
    started.push(i);
    running++;
    most = Math.max(most, running);
    await Bun.sleep(5 + (i % 4));
    running--;
    if (i % 5 === 0) throw new Error(`task ${i}`);
    return i;
  };
  const settled = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => run(task(i))));
  expect(most).toBe(3);
  expect(started).toEqual(Array.from({ length: 20 }, (_, i) => i));
  expect(settled.filter((s) => s.status === "rejected")).toHaveLength(4);
});
