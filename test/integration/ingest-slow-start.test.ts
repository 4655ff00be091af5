// Test passes: embedded (ingest's own rounds and windows).
/**
 * A start serves its first events after one small round: the first round asks the node for INGEST_FIRST_WINDOW_MS
 * windows, and each round doubles them while the answers stay small, up to INGEST_WINDOW_MS. Every block is still
 * published exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIngestor } from "../../pipeline/ingest/ingest.ts";
import { createNodeClient } from "../../pipeline/ingest/node-client.ts";
import { ingestOptions } from "../../pipeline/runtime.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";
import { quietLog } from "../helpers/stores.ts";

describe("ingest slow start", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    // Long enough (about half an hour of chain) for rounds to grow past twice the first while ingest still backfills
    // (INGEST_CONCURRENCY windows at once) before it reaches the tip.
    // The raw sink alone: the test counts the blocks it stores.
    p = await startTestPipeline({
      blocks: 3200,
      env: { INGEST_FIRST_WINDOW_MS: "60000" },
      processors: ["raw-sink"],
    });
  });
  afterAll(async () => p?.close());

  it("publishes a first round of at most its first windows' blocks, then growing rounds, and every block once", async () => {
    const options = ingestOptions(p.config);
    expect(options.firstWindowMs).toBe(60_000);
    const ingestor = createIngestor(
      p.deps,
      createNodeClient({ url: p.config.NODE_URL, apiKey: "", log: quietLog }),
      options,
    );
    // Blocks of all 16 chains in the first round's windows (a little jitter either way).
    const perSecond = (16 * 1000) / p.chain.options.blockIntervalMs;
    const firstBound = Math.ceil(options.concurrency * 60 * perSecond * 1.1) + 16;
    const rounds: number[] = [];
    for (let i = 0; i < 100; i++) {
      const r = await ingestor.runOnce();
      if (r.caughtUp) break;
      rounds.push(r.published);
    }
    expect(rounds[0]).toBeGreaterThan(0);
    expect(rounds[0]).toBeLessThanOrEqual(firstBound);
    // The windows grow: later rounds publish several times the first (chains ahead of the slowest one skip what
    // they already published, so growth shows over rounds, not necessarily from one to the next).
    expect(Math.max(...rounds)).toBeGreaterThan(2 * rounds[0]!);
    // Every main-chain block up to the confirmations, once.
    const expected = Array.from({ length: 16 }, (_, c) =>
      Math.max(0, p.chain.height(c) - p.config.CONFIRMATIONS),
    ).reduce((a, h) => a + h, 0);
    expect(rounds.reduce((a, n) => a + n, 0)).toBe(expected);
    // Written by the raw sink (over Kafka, once its consumer has caught up).
    const stored = async () =>
      Number(
        (
          await p.ch.ch.query<{ n: string }>(
            "t",
            "SELECT count() AS n FROM raw_blocks FINAL WHERE main_chain",
          )
        )[0]?.n,
      );
    await waitFor("every published block in raw_blocks", async () => (await stored()) >= expected, 60_000);
    expect(await stored()).toBe(expected);
  });
});
