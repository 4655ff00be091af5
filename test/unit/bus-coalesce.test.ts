/**
 * The Kafka bus hands a processor the partition batches that arrive together as one batch (`coalesceBatches`,
 * lib/stores/bus.ts): one call for what kafkajs hands over at once, the next call for what arrived meanwhile,
 * never more calls in flight than the limit, each partition's records in order, and each batch's promise settled
 * by the call that held it (a partition commits only after its records were handled, and not after a failure).
 * Counted by calls and records, not by time. The same over the kcat mock cluster: test/integration/bus-kafka.test.ts.
 */
import { describe, expect, it, vi } from "vitest";
import { type BusRecord, coalesceBatches } from "../../lib/stores/bus.ts";

const batch = (partition: number, from: number, n: number): BusRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    key: `c${partition}`,
    value: Buffer.from(`${partition}:${from + i}`),
    partition,
    offset: String(from + i),
  }));

/** A handler that records each call's records and finishes when told to. */
function gatedHandler() {
  const calls: BusRecord[][] = [];
  const gates: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const handle = async (records: BusRecord[]) => {
    calls.push(records);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise<void>((resolve) => gates.push(resolve));
    inFlight--;
  };
  return {
    calls,
    handle,
    /** Lets every call in flight finish. */
    open: () => {
      for (const g of gates.splice(0)) g();
    },
    maxInFlight: () => maxInFlight,
  };
}

/** Lets queued immediates and promise callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe("coalesceBatches", () => {
  it("hands the batches of one turn over as one call, and those that arrive meanwhile as the next", async () => {
    const h = gatedHandler();
    const handle = coalesceBatches(h.handle);
    const settled: string[] = [];
    const track = (name: string, p: Promise<void>) => p.then(() => settled.push(name));
    const first = [0, 1, 2, 3].map((p) => track(`a${p}`, handle(batch(p, 0, 3))));
    await settle();
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0]).toHaveLength(12);
    // While that call runs, two more partitions' batches arrive: they wait, and nothing has settled.
    const second = [1, 3].map((p) => track(`b${p}`, handle(batch(p, 3, 2))));
    await settle();
    expect(h.calls).toHaveLength(1);
    expect(settled).toEqual([]);
    h.open();
    await Promise.all(first);
    expect(settled.sort()).toEqual(["a0", "a1", "a2", "a3"]);
    await settle();
    expect(h.calls).toHaveLength(2);
    expect(h.calls[1]!.map((r) => r.value.toString())).toEqual(["1:3", "1:4", "3:3", "3:4"]);
    h.open();
    await Promise.all(second);
    expect(h.maxInFlight()).toBe(1);
    // Each partition's records reach the handler in offset order, every one once.
    for (const p of [0, 1, 2, 3]) {
      const offsets = h.calls
        .flat()
        .filter((r) => r.partition === p)
        .map((r) => Number(r.offset));
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
      expect(new Set(offsets).size).toBe(offsets.length);
    }
  });

  it("with a linger, batches of later turns within it join the first call (one publish in several fetches)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    try {
      const h = gatedHandler();
      const handle = coalesceBatches(h.handle, 1, 100);
      const held = [handle(batch(0, 0, 2))];
      await settle();
      // Another broker's fetch response, a later turn: no call yet, so it joins.
      held.push(handle(batch(1, 0, 1)));
      await settle();
      expect(h.calls).toHaveLength(0);
      vi.advanceTimersByTime(100);
      await settle();
      expect(h.calls.map((c) => c.map((r) => r.partition))).toEqual([[0, 0, 1]]);
      h.open();
      await Promise.all(held);
    } finally {
      vi.useRealTimers();
    }
  });

  it("runs up to its limit of calls at once", async () => {
    const h = gatedHandler();
    const handle = coalesceBatches(h.handle, 2);
    const all: Promise<void>[] = [];
    for (let round = 0; round < 4; round++) {
      all.push(handle(batch(round, 0, 1)));
      await settle();
    }
    // Two calls run; the batches of the later turns wait together for a free one.
    expect(h.calls).toHaveLength(2);
    h.open();
    await settle();
    expect(h.calls).toHaveLength(3);
    expect(h.calls[2]!.map((r) => r.partition)).toEqual([2, 3]);
    h.open();
    await Promise.all(all);
    expect(h.maxInFlight()).toBe(2);
  });

  it("fails every batch a failed call held, and goes on with the next", async () => {
    let fail = true;
    const seen: number[] = [];
    const handle = coalesceBatches(async (records) => {
      seen.push(records.length);
      if (fail) {
        fail = false;
        throw new Error("write failed");
      }
    });
    const held = [handle(batch(0, 0, 2)), handle(batch(1, 0, 2))];
    const results = await Promise.allSettled(held);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((results[0] as PromiseRejectedResult).reason.message).toBe("write failed");
    await expect(handle(batch(0, 0, 2))).resolves.toBeUndefined();
    expect(seen).toEqual([4, 2]);
  });

  it("fails the batches of a handler that throws before it awaits anything", async () => {
    const handle = coalesceBatches(((records: BusRecord[]) => {
      if (records.length > 0) throw new TypeError("a bug in the handler");
      return Promise.resolve();
    }) as (records: BusRecord[]) => Promise<void>);
    await expect(handle(batch(0, 0, 1))).rejects.toThrow("a bug in the handler");
  });
});
