import { describe, expect, it } from "vitest";
import { orderByWeight, readWeights, UNKNOWN_SECONDS } from "../sequencer.ts";

describe("the order files go to the workers (test/sequencer.ts)", () => {
  it("puts the longest measured file first, an unmeasured one at the default weight, ties by path", () => {
    const weights = { "b.test.ts": 130, "a.test.ts": 2, "c.test.ts": UNKNOWN_SECONDS, "d.test.ts": 60 };
    expect(
      orderByWeight(["a.test.ts", "new.test.ts", "c.test.ts", "d.test.ts", "b.test.ts"], weights),
    ).toEqual(["b.test.ts", "d.test.ts", "c.test.ts", "new.test.ts", "a.test.ts"]);
  });

  it("reads the committed weights: every pass's entries are whole seconds of files that exist", async () => {
    const { existsSync } = await import("node:fs");
    const weights = readWeights();
    expect(Object.keys(weights).sort()).toEqual(expect.arrayContaining(["server"]));
    for (const [pass, files] of Object.entries(weights)) {
      expect(["embedded", "server"]).toContain(pass);
      for (const [path, seconds] of Object.entries(files)) {
        expect(Number.isInteger(seconds) && seconds >= 0, `${pass} ${path} ${seconds}`).toBe(true);
        expect(existsSync(path), `${path} in test/weights.json exists`).toBe(true);
      }
    }
  });
});
