/** Ingest progress output: backfill lines, then live lines with recent (not lifetime) rates. */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../lib/logger.ts";
import type { IngestProgress } from "../../pipeline/ingest/ingest.ts";
import { createProgressReporter } from "../../pipeline/ingest/progress.ts";

describe("progress reporter (log mode)", () => {
  it("reports backfill with its share done, then live with the lag behind the tip and recent rates", () => {
    const out = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    out.on("data", (chunk: Buffer) => {
      for (const l of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l));
    });
    let t = 0;
    let events = 0;
    const reporter = createProgressReporter(createLogger({ level: "info", stream: out }), {
      stream: Object.assign(new PassThrough(), { isTTY: false }) as unknown as NodeJS.WriteStream,
      events: () => events,
      now: () => t,
      windowMs: 30_000,
      logEveryMs: 10_000,
    });
    const p = (over: Partial<IngestProgress>): IngestProgress => ({
      startTs: 0,
      cursorTs: 0,
      tipTs: 1_000_000,
      blocks: 0,
      nodeEvents: 0,
      phase: "backfill",
      ...over,
    });
    // Backfill: 100 blocks/s and 1,000 events/s for 60 s, half the history.
    for (let s = 0; s <= 60; s += 5) {
      t = s * 1000;
      events = s * 1000;
      reporter.update(p({ blocks: s * 100, cursorTs: s * 8_000 }));
    }
    // Live: 2 blocks/s and 10 events/s for 60 s more.
    for (let s = 65; s <= 120; s += 5) {
      t = s * 1000;
      events = 60_000 + (s - 60) * 10;
      reporter.update(
        p({ blocks: 6_000 + (s - 60) * 2, cursorTs: 980_000 + s, tipTs: 1_000_000 + s, phase: "live" }),
      );
    }
    reporter.stop();
    const backfill = lines.filter((l) => l.phase === "backfill");
    const live = lines.filter((l) => l.phase === "live");
    expect(backfill.length).toBeGreaterThan(2);
    expect(live.length).toBeGreaterThan(2);
    expect(backfill.at(-1)).toMatchObject({ blocks_per_s: 100, events_per_s: 1000, done_pct: 44 }); // logged at 55 s
    const last = live.at(-1);
    // The last 30 s only: a lifetime average would be about 51 blocks/s here.
    expect(last).toMatchObject({
      blocks_per_s: 2,
      events_per_s: 10,
      behind_tip_s: 20,
      msg: "Ingest following the node.",
    });
    expect(last).not.toHaveProperty("done_pct");
    expect(lines.every((l) => l.blocks_per_s !== 0 || l.blocks === 0)).toBe(true);
  });
});
