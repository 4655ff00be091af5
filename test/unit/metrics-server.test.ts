/** A pipeline process's own /metrics (METRICS_PORT, lib/metrics-server.ts): its registry, and nothing else. */
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../lib/metrics.ts";
import { startMetricsServer } from "../../lib/metrics-server.ts";

describe("a process's metrics server", () => {
  it("serves the process's registry at GET /metrics and refuses other paths", async () => {
    const metrics = createMetrics();
    metrics.decodeErrors.inc({ decoder: "furnace", event_index: "0" }, 3);
    const server = await startMetricsServer(metrics.registry, "127.0.0.1", 0);
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const answer = await fetch(`${base}/metrics`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toContain("text/plain");
      expect(await answer.text()).toContain(
        'alephium_normalize_decode_errors_total{decoder="furnace",event_index="0"} 3',
      );
      expect((await fetch(`${base}/status`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
