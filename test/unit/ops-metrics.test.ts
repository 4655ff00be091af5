/**
 * The Grafana dashboard and the Prometheus alert rules of compose/ (docs/operations.md#dashboard-and-alerts) use
 * only metrics the code registers (lib/metrics.ts): a renamed metric fails here, not silently on a dashboard.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../lib/metrics.ts";
import { ALERTS, alertExpressions, DASHBOARD, dashboardExpressions, metricNames } from "../helpers/promql.ts";

/** Every series name the registry exposes (a histogram's `_bucket`, `_sum` and `_count` included). */
async function registeredNames(): Promise<Set<string>> {
  const metrics = await createMetrics().registry.getMetricsAsJSON();
  return new Set(
    metrics.flatMap((m) =>
      String(m.type) === "histogram"
        ? [m.name, `${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`]
        : [m.name],
    ),
  );
}

describe("the dashboard's and the alerts' metrics", () => {
  it("finds metric names in PromQL, not functions, labels or keywords", () => {
    expect(
      metricNames(
        'sum by (le) (rate(alephium_a_bucket{status=~"5.."}[5m])) / on(x) alephium_b > 0 and changes(alephium_c[1m]) == 0',
      ).sort(),
    ).toEqual(["alephium_a_bucket", "alephium_b", "alephium_c"]);
    expect(metricNames("time() * 1000 - alephium_events_watermark_ms")).toEqual([
      "alephium_events_watermark_ms",
    ]);
  });

  it("alert rules use only registered metrics, and cover stalls, lag, decode errors, code hashes and prices", async () => {
    const registered = await registeredNames();
    const exprs = alertExpressions(readFileSync(ALERTS, "utf8"));
    const used = new Set(exprs.flatMap(metricNames));
    for (const name of used) expect(registered, `${ALERTS}: ${name}`).toContain(name);
    for (const needed of [
      "alephium_chain_lag_ms",
      "alephium_events_watermark_ms",
      "alephium_processor_lag_ms",
      "alephium_normalize_decode_errors_total",
      "alephium_normalize_code_hash_refusals_total",
      "alephium_price_source_up",
    ])
      expect(used, `an alert on ${needed}`).toContain(needed);
  });

  it("dashboard panels use only registered metrics", async () => {
    const registered = await registeredNames();
    const targets = dashboardExpressions(readFileSync(DASHBOARD, "utf8"));
    expect(targets.length).toBeGreaterThan(10);
    for (const { title, expr } of targets) {
      const names = metricNames(expr);
      expect(names.length, `${title}: ${expr} selects a metric`).toBeGreaterThan(0);
      for (const name of names) expect(registered, `${title}: ${name}`).toContain(name);
    }
  });
});
