// Test passes: embedded (ingest rounds and /status figures; the bus carries no figure it checks).
/**
 * Backfill progress in /status and /metrics: ingest runs round by round over a simulated chain with small
 * windows; after each round /status gives the phase, the blocks still to go (checked against the node's heights
 * and the ingest cursors), the chain time to go and an ETA, and each processor's newest block and lag; the
 * metrics expose the same. At the end the phase is live with nothing to go.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain } from "../../devnet/chain.ts";
import type { ProgressView } from "../../lib/pipeline-progress.ts";
import { saveProcessorProgress } from "../../lib/pipeline-progress.ts";
import { PROCESSORS } from "../../pipeline/runtime.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";

const CONFIRMATIONS = 2;

describe("backfill progress in /status and the metrics", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    const chain = createDevnetChain({ seed: 3 });
    chain.advance(1200);
    p = await startTestPipeline({
      chain,
      confirmations: CONFIRMATIONS,
      // One-minute windows, one at a time: the backfill takes many rounds.
      env: { INGEST_WINDOW_MS: "60000", INGEST_FIRST_WINDOW_MS: "60000", INGEST_CONCURRENCY: "1" },
    });
  }, 120_000);
  afterAll(async () => p?.close());

  const status = async (): Promise<ProgressView> => {
    const r = await p.api.app.inject({ url: "/status" });
    expect(r.statusCode).toBe(200);
    return r.json().progress as ProgressView;
  };
  const metrics = async (): Promise<string> => (await p.api.app.inject({ url: "/metrics" })).body;
  const gauge = (text: string, name: string): number | undefined => {
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.slice(name.length + 1));
  };
  /** Blocks still to publish, from the node's heights and the saved ingest cursors. */
  const expectedToGo = async (): Promise<number> => {
    const rows = await p.pg.pg.query<{ chain_index: number; height: number }>(
      "t",
      "SELECT chain_index, height FROM ingest_cursor",
    );
    const cursor = new Map(rows.map((r) => [Number(r.chain_index), Number(r.height)]));
    let sum = 0;
    for (let c = 0; c < 16; c++)
      sum += Math.max(0, p.chain.height(c) - CONFIRMATIONS - (cursor.get(c) ?? -1));
    return sum;
  };
  const drained = () =>
    waitFor("consumer groups to drain", async () => (await p.deps.bus.lag()) === 0, 60_000);
  const newestPublished = async (): Promise<number> => {
    const [row] = await p.pg.pg.query<{ ts: string }>("t", "SELECT max(block_ts) AS ts FROM ingest_cursor");
    return Number(row?.ts);
  };

  it("goes from unknown to backfill with fewer blocks to go each round, then live with none, with processor lags", async () => {
    const before = await status();
    expect(before.phase).toBe("unknown");
    expect(before.blocks_to_go).toBeNull();

    const seen: ProgressView[] = [];
    let checkedProcessors = false;
    for (let round = 0; round < 200; round++) {
      const r = await p.ingestor.runOnce();
      await drained();
      const toGo = await expectedToGo();
      let view: ProgressView | null = null;
      // /status answers from a background read: poll until it shows this round.
      await waitFor(
        "/status to show the round",
        async () => {
          view = await status();
          return view.blocks_to_go === toGo;
        },
        20_000,
      );
      const v = view as unknown as ProgressView;
      seen.push(v);
      if (v.phase === "backfill" && seen.length >= 3 && !checkedProcessors) {
        // Mid-backfill: every processor reports the newest block it handled; drained, none lags.
        const published = await newestPublished();
        expect(published).toBeLessThan(p.chain.latestTimestamp());
        await waitFor(
          "every processor's progress",
          async () => {
            const s = await status();
            return (
              s.processors.length === Object.keys(PROCESSORS).length &&
              s.processors.every((x) => x.block_ts === published)
            );
          },
          20_000,
        );
        const s = await status();
        expect(s.processors.map((x) => x.name).sort()).toEqual(Object.keys(PROCESSORS).sort());
        for (const x of s.processors) expect(x.lag_ms, x.name).toBe(0);
        expect(s.eta_ms).toBeGreaterThan(0);
        expect(s.blocks_per_s).toBeGreaterThan(0);
        expect(s.time_to_go_ms).toBe(s.tip_ts! - s.cursor_ts!);
        expect(s.time_to_go_ms).toBeGreaterThan(0);
        // The metrics give the same figures.
        const m = await metrics();
        expect(gauge(m, 'alephium_ingest_phase{phase="backfill"}')).toBe(1);
        expect(gauge(m, 'alephium_ingest_phase{phase="live"}')).toBe(0);
        expect(gauge(m, "alephium_ingest_blocks_to_go")).toBe(s.blocks_to_go);
        expect(gauge(m, "alephium_ingest_eta_seconds")).toBeCloseTo(s.eta_ms! / 1000, 2);
        expect(gauge(m, 'alephium_processor_lag_ms{processor="normalize"}')).toBe(0);
        expect(gauge(m, 'alephium_processor_block_ts_ms{processor="candles"}')).toBe(published);
        checkedProcessors = true;
      }
      if (r.caughtUp) break;
    }
    expect(checkedProcessors).toBe(true);
    const backfill = seen.filter((v) => v.phase === "backfill");
    expect(backfill.length).toBeGreaterThanOrEqual(3);
    // Blocks to go only decrease while ingest backfills (the chain does not grow here).
    const counts = seen.map((v) => v.blocks_to_go!);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeLessThanOrEqual(counts[i - 1]!);
    expect(counts[0]).toBeGreaterThan(counts.at(-1)!);
    // Backfill first, then live for good.
    const firstLive = seen.findIndex((v) => v.phase === "live");
    expect(firstLive).toBeGreaterThan(0);
    expect(seen.slice(firstLive).every((v) => v.phase === "live")).toBe(true);
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ phase: "live", blocks_to_go: 0, time_to_go_ms: 0, eta_ms: 0 });
    const m = await metrics();
    expect(gauge(m, 'alephium_ingest_phase{phase="live"}')).toBe(1);
    expect(gauge(m, "alephium_ingest_blocks_to_go")).toBe(0);
  }, 300_000);

  it("shows a processor behind ingest with its lag", async () => {
    const published = await newestPublished();
    // A processor of another process whose newest handled block is five seconds of chain time behind.
    await saveProcessorProgress(p.pg.pg, {
      processor: "behind-example",
      block_ts: published - 5_000,
      updated_at: Date.now(),
    });
    await waitFor(
      "the late processor in /status",
      async () => (await status()).processors.some((x) => x.name === "behind-example"),
      20_000,
    );
    const s = await status();
    expect(s.processors.find((x) => x.name === "behind-example")?.lag_ms).toBe(5_000);
    const m = await metrics();
    expect(gauge(m, 'alephium_processor_lag_ms{processor="behind-example"}')).toBe(5_000);
  });
});
