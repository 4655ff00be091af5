// Test passes: embedded (ingest's own rounds, recorded through a wrapped bus).
/**
 * During backfill ingest fetches the next round's windows while the current round publishes, so the node's answer
 * time and the processors' work overlap. The early answer is used only for exactly the windows the next round asks
 * for; a failed early fetch is fetched again by the round; every block is still published exactly once, and none
 * above the confirmations.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { createIngestor } from "../../pipeline/ingest/ingest.ts";
import { createNodeClient, type NodeClient } from "../../pipeline/ingest/node-client.ts";
import { ingestOptions } from "../../pipeline/runtime.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { quietLog } from "../helpers/stores.ts";

interface Call {
  window: string;
  /** The call started while a round was publishing (an early fetch). */
  duringPublish: boolean;
  failed: boolean;
}

/** A node client and bus that record each blocks-with-events call and whether a publish was in flight. */
function recording(p: TestPipeline, failEarly: (n: number) => boolean) {
  const calls: Call[] = [];
  let publishing = 0;
  let early = 0;
  const real = createNodeClient({ url: p.config.NODE_URL, apiKey: "", log: quietLog });
  const client: NodeClient = {
    ...real,
    async blocksWithEvents(fromTs, toTs) {
      const call: Call = { window: `${fromTs}-${toTs}`, duringPublish: publishing > 0, failed: false };
      calls.push(call);
      if (call.duringPublish && failEarly(++early)) {
        call.failed = true;
        throw new Error("node unavailable (test)");
      }
      return real.blocksWithEvents(fromTs, toTs);
    },
  };
  const deps: PipelineDeps = {
    ...p.deps,
    bus: {
      ...p.deps.bus,
      kind: p.deps.bus.kind,
      async publish(topic, messages) {
        publishing++;
        try {
          await p.deps.bus.publish(topic, messages);
        } finally {
          publishing--;
        }
      },
    },
  };
  return { calls, client, deps };
}

async function backfill(p: TestPipeline, failEarly: (n: number) => boolean) {
  const { calls, client, deps } = recording(p, failEarly);
  const ingestor = createIngestor(deps, client, ingestOptions(p.config));
  let published = 0;
  for (let i = 0; i < 200; i++) {
    const r = await ingestor.runOnce();
    if (r.caughtUp) break;
    published += r.published;
  }
  return { calls, published };
}

/** Main-chain blocks up to the confirmations, over the 16 chains. */
const expectedBlocks = (p: TestPipeline) =>
  Array.from({ length: 16 }, (_, c) => Math.max(0, p.chain.height(c) - p.config.CONFIRMATIONS)).reduce(
    (a, h) => a + h,
    0,
  );

/**
 * Each case builds a 3,200-block pipeline and backfills it in many small rounds: about 15 s on an idle machine, past
 * the default 60 s at a load of 15–20 (a liveness bound, not a speed check).
 */
const BACKFILL_TIMEOUT_MS = 240_000;

describe("ingest prefetch", () => {
  // One pipeline at a time (chDB opens one data directory per process); small windows, so that a backfill of this
  // chain takes many rounds.
  let p: TestPipeline | undefined;
  const start = async (env: Record<string, string> = {}) => {
    await p?.close();
    p = await startTestPipeline({
      blocks: 3200,
      env: { INGEST_FIRST_WINDOW_MS: "60000", INGEST_WINDOW_MS: "120000", ...env },
      // Ingest publishes to the blocks topic; one of its consumers is enough for a publish to wait on.
      processors: ["raw-sink"],
    });
    return p;
  };
  afterAll(async () => p?.close());

  it(
    "fetches the next windows while a round publishes and uses them: each window asked once, each block published once",
    async () => {
      const p = await start();
      const { calls, published } = await backfill(p, () => false);
      const early = calls.filter((c) => c.duringPublish);
      expect(early.length).toBeGreaterThan(2);
      // The rounds used the early answers instead of asking again.
      const windows = calls.map((c) => c.window);
      expect(new Set(windows).size).toBe(windows.length);
      expect(published).toBe(expectedBlocks(p));
    },
    BACKFILL_TIMEOUT_MS,
  );

  it(
    "a failed early fetch is fetched again by its round, and nothing is lost or published twice",
    async () => {
      const q = await start();
      // Every other early fetch fails.
      const { calls, published } = await backfill(q, (n) => n % 2 === 1);
      const failed = calls.filter((c) => c.failed);
      expect(failed.length).toBeGreaterThan(0);
      // Each failed window was asked again, outside a publish (by its own round).
      for (const f of failed)
        expect(calls.some((c) => c.window === f.window && !c.failed && !c.duringPublish)).toBe(true);
      expect(published).toBe(expectedBlocks(q));
    },
    BACKFILL_TIMEOUT_MS,
  );

  it(
    "INGEST_PREFETCH=false fetches each round's windows when the round starts",
    async () => {
      const r = await start({ INGEST_PREFETCH: "false" });
      const { calls, published } = await backfill(r, () => false);
      expect(calls.filter((c) => c.duringPublish)).toHaveLength(0);
      expect(published).toBe(expectedBlocks(r));
    },
    BACKFILL_TIMEOUT_MS,
  );
});
