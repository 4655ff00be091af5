/** The series recompute queue: concurrent batches share a pass; a batch never joins a pass already running. */
import { describe, expect, it } from "vitest";
import type { SeriesTouched } from "../../lib/series/facts.ts";
import { createRecomputeQueue } from "../../lib/series/recompute.ts";

const span = (id: string, lo: number, hi: number): SeriesTouched =>
  new Map([[id, { seriesId: "s", lo, hi }]]);

describe("series recompute queue", () => {
  it("merges requests made before a pass starts, and runs a later request in a pass of its own", async () => {
    const passes: { id: string; lo: number; hi: number }[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const queue = createRecomputeQueue(async (touched) => {
      passes.push([...touched].map(([id, s]) => ({ id, lo: s.lo, hi: s.hi })));
      if (passes.length === 1) await gate;
    });
    const a = queue(span("all", 10, 20));
    const b = queue(span("all", 5, 12));
    const c = queue(span("chain0", 7, 7));
    await Promise.resolve();
    await Promise.resolve();
    // The first pass is running (held by the gate): this request waits for the next one.
    const d = queue(span("all", 30, 40));
    expect(passes).toEqual([
      [
        { id: "all", lo: 5, hi: 20 },
        { id: "chain0", lo: 7, hi: 7 },
      ],
    ]);
    release();
    await Promise.all([a, b, c, d]);
    expect(passes[1]).toEqual([{ id: "all", lo: 30, hi: 40 }]);
    expect(passes).toHaveLength(2);
  });

  it("fails every batch of a failed pass, and still runs the next one", async () => {
    let calls = 0;
    const queue = createRecomputeQueue(async () => {
      calls++;
      if (calls === 1) throw new Error("injected");
    });
    const a = queue(span("x", 1, 1));
    const b = queue(span("y", 2, 2));
    await expect(a).rejects.toThrow("injected");
    await expect(b).rejects.toThrow("injected");
    await expect(queue(span("x", 1, 1))).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});
