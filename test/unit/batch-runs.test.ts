import { describe, expect, it } from "vitest";
import { applyInRuns } from "../../lib/batch.ts";

type M = { kind: "block"; n: number } | { kind: "retraction"; n: number };
const b = (n: number): M => ({ kind: "block", n });
const r = (n: number): M => ({ kind: "retraction", n });

describe("the batch rule (applyInRuns)", () => {
  it("writes each run of blocks at once and each retraction after the run before it, in message order", async () => {
    const calls: string[] = [];
    await applyInRuns([b(1), b(2), r(1), b(3), r(2), r(3), b(4), b(5)], {
      blocks: async (run) => {
        calls.push(`blocks ${run.map((m) => m.n).join(",")}`);
      },
      retraction: async (m) => {
        calls.push(`retraction ${m.n}`);
      },
    });
    expect(calls).toEqual([
      "blocks 1,2",
      "retraction 1",
      "blocks 3",
      "retraction 2",
      "retraction 3",
      "blocks 4,5",
    ]);
  });

  it("never writes an empty run, and waits for each write before the next", async () => {
    const calls: string[] = [];
    let pending = 0;
    const write = (label: string) => async () => {
      expect(pending).toBe(0);
      pending++;
      await new Promise((res) => setTimeout(res, 5));
      calls.push(label);
      pending--;
    };
    await applyInRuns([r(1), r(2)], { blocks: write("blocks"), retraction: write("retraction") });
    await applyInRuns([], { blocks: write("blocks"), retraction: write("retraction") });
    expect(calls).toEqual(["retraction", "retraction"]);
  });
});
