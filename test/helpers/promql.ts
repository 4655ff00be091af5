/** Reading the PromQL of compose/'s alert rules and Grafana dashboard (test/unit/ops-metrics.test.ts, promtool). */

export const ALERTS = "compose/prometheus/alerts.yml";
export const DASHBOARD = "compose/grafana/dashboards/alephium-indexer.json";

/** PromQL functions, aggregations and keywords: the identifiers of an expression that are not metric names. */
const NOT_METRICS = new Set([
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "by",
  "without",
  "on",
  "ignoring",
  "inf",
  "nan",
]);

/**
 * The metric names an expression selects: its identifiers once strings, label matchers (`{...}`), ranges
 * (`[...]`), grouping clauses (`by (...)`) and function calls are taken out.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const m of bare.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (!name || call || NOT_METRICS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}

/** The alert rules' expressions: each rule's `expr:` is written on one line (checked here). */
export function alertExpressions(text: string): string[] {
  const exprs = [...text.matchAll(/^\s+expr:\s*(.+)$/gm)].map((m) => m[1]!.trim());
  const alerts = [...text.matchAll(/^\s+- alert:/gm)].length;
  if (exprs.length !== alerts) throw new Error(`${alerts} alerts but ${exprs.length} one-line expr: lines`);
  return exprs;
}

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

export function dashboardExpressions(text: string): { title: string; expr: string }[] {
  const dashboard = JSON.parse(text) as { panels: Panel[] };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })));
}
