// Test passes: embedded (ingest's round result; the loop's wait is not timed).
/**
 * Following the tip, ingest's loop waits INGEST_POLL_MS after a round that published every chain up to its confirmed
 * tip (`following`), as after one that found nothing; a round that left confirmed blocks behind (a backlog larger
 * than its window) is followed by the next at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIngestor } from "../../pipeline/ingest/ingest.ts";
import { createNodeClient } from "../../pipeline/ingest/node-client.ts";
import { ingestOptions } from "../../pipeline/runtime.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { quietLog } from "../helpers/stores.ts";

describe("ingest following the tip", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 100 });
    await p.catchUp();
  });
  afterAll(async () => p?.close());

  it("a round that reached every chain's confirmed tip says following; one that left a backlog does not", async () => {
    p.chain.advance(4);
    const atTip = await p.ingestor.runOnce();
    expect(atTip.published).toBeGreaterThan(0);
    expect(atTip).toMatchObject({ caughtUp: false, following: true });

    // A backlog of many windows for an ingestor whose window is 10 s: its round publishes one window and goes on.
    p.chain.advance(400);
    const narrow = createIngestor(
      p.deps,
      createNodeClient({ url: p.config.NODE_URL, apiKey: "", log: quietLog }),
      {
        ...ingestOptions(p.config),
        maxWindowMs: 10_000,
        firstWindowMs: 10_000,
        concurrency: 1,
        prefetch: false,
      },
    );
    const behind = await narrow.runOnce();
    expect(behind.published).toBeGreaterThan(0);
    expect(behind).toMatchObject({ caughtUp: false, following: false });
  });
});
