// Test passes: embedded (ingest's own warnings).
/** Ingest says so when it cannot move: a node behind its cursors, or nothing to publish for a while. */
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../lib/logger.ts";
import { createIngestor } from "../../pipeline/ingest/ingest.ts";
import { createNodeClient } from "../../pipeline/ingest/node-client.ts";
import { ingestOptions } from "../../pipeline/runtime.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";
import { quietLog } from "../helpers/stores.ts";

function capturedLog() {
  const stream = new PassThrough();
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  stream.on("data", (chunk: Buffer) => {
    for (const l of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l));
  });
  return { log: createLogger({ level: "warn", stream }), lines };
}

describe("ingest warnings", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 100 });
    await p.catchUp();
  });
  afterAll(async () => p?.close());

  const ingestorWith = (log: ReturnType<typeof capturedLog>["log"]) =>
    createIngestor(
      { ...p.deps, log },
      createNodeClient({ url: p.config.NODE_URL, apiKey: "", log: quietLog }),
      { ...ingestOptions(p.config), stallWarnMs: 1 },
    );

  it("warns when the node's tip is below the stored cursors (a node restarted from scratch, another network)", async () => {
    await p.pg.pg.query("t", "UPDATE ingest_cursor SET height = height + 1000000");
    const { log, lines } = capturedLog();
    const ingestor = ingestorWith(log);
    expect((await ingestor.runOnce()).caughtUp).toBe(true);
    const warning = lines.find((l) => l.msg.startsWith("The node's tip is below the ingest cursor"));
    expect(warning).toMatchObject({ level: 40, chains: expect.arrayContaining([0]) });
    const heights = warning as unknown as { cursor_heights: number[]; node_heights: number[] };
    expect(heights.cursor_heights[0]).toBeGreaterThan(heights.node_heights[0] ?? 0);
    await p.pg.pg.query("t", "UPDATE ingest_cursor SET height = height - 1000000");
  });

  it("warns when a running ingest has published nothing for a while", async () => {
    const { log, lines } = capturedLog();
    const ingestor = ingestorWith(log);
    ingestor.start();
    await waitFor("a stall warning", async () =>
      lines.some((l) => l.msg.startsWith("Ingest has published nothing")),
    );
    await ingestor.stop();
    expect(lines.find((l) => l.msg.startsWith("Ingest has published nothing"))).toMatchObject({ level: 40 });
  });
});
