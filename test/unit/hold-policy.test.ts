/** The holding rules of the recompute processors' held rounds (pipeline/held-batches.ts `createHoldPolicy`). */
import { describe, expect, it } from "vitest";
import { createHoldPolicy } from "../../pipeline/held-batches.ts";

const S = 1_000;

describe("held rounds: the holding rules", () => {
  it("0 turns holding off: every round runs alone, whatever its span", () => {
    const p = createHoldPolicy(0);
    for (const span of [
      { lo: 0, hi: 0 },
      { lo: 10 * S, hi: 11 * S },
      { lo: 0, hi: 86_400 * S },
    ])
      expect(p.decide(span)).toBe("run");
    expect(p.held).toBe(0);
  });

  it("holds small rounds until the block span from the oldest held to the newest reaches the window", () => {
    const p = createHoldPolicy(60 * S);
    // Rounds of 4 s of blocks each, as following at INGEST_POLL_MS=4000.
    let t = 1_000 * S;
    const decisions: string[] = [];
    for (let i = 0; i < 20; i++) {
      const span = { lo: t, hi: t + 4 * S };
      const d = p.decide(span);
      decisions.push(d);
      if (d === "hold") p.add(span);
      else p.clear();
      t += 4 * S;
    }
    // 15 rounds cover 60 s from the first held block's time to the 15th's newest: the 15th releases the 14 held.
    expect(decisions.slice(0, 14)).toEqual(Array(14).fill("hold"));
    expect(decisions[14]).toBe("release");
    expect(decisions.slice(15)).toEqual(Array(5).fill("hold"));
    expect(p.held).toBe(5);
    expect(p.span).toEqual({ lo: t - 20 * S, hi: t });
  });

  it("counts the union of spans: an older round reaching back widens what is held", () => {
    const p = createHoldPolicy(60 * S);
    p.add({ lo: 100 * S, hi: 110 * S });
    // A retraction of an older block: its facts reach back 55 s before the newest held block.
    expect(p.decide({ lo: 55 * S, hi: 56 * S })).toBe("hold");
    p.add({ lo: 55 * S, hi: 56 * S });
    expect(p.span).toEqual({ lo: 55 * S, hi: 110 * S });
    expect(p.decide({ lo: 111 * S, hi: 115 * S })).toBe("release");
    expect(p.held).toBe(2);
  });

  it("never holds a backfill-sized round: alone it runs, with rounds held it releases them", () => {
    const p = createHoldPolicy(60 * S);
    expect(p.decide({ lo: 0, hi: 600 * S })).toBe("run");
    expect(p.decide({ lo: 0, hi: 60 * S })).toBe("run");
    p.add({ lo: 700 * S, hi: 701 * S });
    expect(p.decide({ lo: 701 * S, hi: 1_400 * S })).toBe("release");
  });

  it("forgets what it held on clear (after a release was written)", () => {
    const p = createHoldPolicy(60 * S);
    p.add({ lo: 0, hi: 50 * S });
    expect(p.decide({ lo: 50 * S, hi: 70 * S })).toBe("release");
    p.clear();
    expect(p.held).toBe(0);
    expect(p.span).toBeNull();
    expect(p.decide({ lo: 50 * S, hi: 70 * S })).toBe("hold");
  });
});
