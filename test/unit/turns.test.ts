/**
 * Turns for the event loop (lib/turns.ts) and the sliced insert payload (lib/stores/clickhouse.ts): long loops on
 * the main thread let timers and I/O run between their items, and a payload built in slices is the one JSON array
 * JSONEachRow takes, whatever the rows' sizes.
 */
import { describe, expect, it } from "vitest";
import { insertPayload } from "../../lib/stores/clickhouse.ts";
import { mapWithTurns, TURN_MS, turn } from "../../lib/turns.ts";

/** Busy work on the thread for `ms` (what building a batch's rows is). */
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/** How many times an interval fired while `work` ran. */
async function firingsDuring(work: () => Promise<void>): Promise<number> {
  let fired = 0;
  const timer = setInterval(() => fired++, 1);
  await work();
  clearInterval(timer);
  return fired;
}

describe("turns", () => {
  const items = Array.from({ length: 40 }, (_, i) => i);
  // Each item takes half a slice: the whole loop is twenty slices of work.
  const item = () => busy(TURN_MS / 2);

  it("a loop that awaits turn() between items lets timers run during it", async () => {
    const fired = await firingsDuring(async () => {
      for (const _ of items) {
        item();
        const t = turn();
        if (t) await t;
      }
    });
    expect(fired).toBeGreaterThanOrEqual(5);
  });

  it("the same loop without turns holds the thread to its end", async () => {
    const fired = await firingsDuring(async () => {
      for (const _ of items) item();
    });
    expect(fired).toBe(0);
  });

  it("mapWithTurns maps in order and gives turns", async () => {
    let out: number[] = [];
    const fired = await firingsDuring(async () => {
      out = await mapWithTurns(items, (i) => {
        item();
        return i * 2;
      });
    });
    expect(out).toEqual(items.map((i) => i * 2));
    expect(fired).toBeGreaterThanOrEqual(5);
  });
});

describe("insertPayload", () => {
  const decode = async (rows: unknown[]) => JSON.parse((await insertPayload(rows)).toString("utf8"));

  it("is the rows' JSON array, for small and large rows and across slices", async () => {
    const small = Array.from({ length: 5000 }, (_, i) => ({ id: i, s: "x".repeat(i % 7), n: null }));
    const large = Array.from({ length: 300 }, (_, i) => ({ id: i, json: `{"a":"${"y".repeat(5000 + i)}"}` }));
    const mixed = [...small.slice(0, 100), ...large.slice(0, 50), ...small.slice(100, 3000)];
    for (const rows of [small, large, mixed, [{ one: 1 }]]) {
      const text = (await insertPayload(rows)).toString("utf8");
      expect(text).toBe(JSON.stringify(rows));
    }
    expect(await decode([])).toEqual([]);
  });

  it("lets timers run while it serialises a large batch", async () => {
    // 2,000 rows of 10 kB (a backfill run of raw blocks is like it): 20 MB of JSON, about eighty slices.
    const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, block_json: "z".repeat(10_000) }));
    let length = 0;
    const fired = await firingsDuring(async () => {
      length = (await insertPayload(rows)).length;
    });
    expect(length).toBe(JSON.stringify(rows).length);
    expect(fired).toBeGreaterThanOrEqual(1);
  });
});
