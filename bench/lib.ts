/**
 * Bench helpers: a bounded autocannon run, and a bare Fastify server that serves given bytes
 * (the upper bound each bench prints beside its own figures, measured in the same run).
 */
import autocannon from "autocannon";
import Fastify from "fastify";
import { buildApp } from "../api/app.ts";
import { createApiDeps } from "../api/deps.ts";
import type { App } from "../api/types.ts";
import type { Config } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import type { Metrics } from "../lib/metrics.ts";
import { createKeysRepo } from "../lib/repos/keys.ts";
import type { Ch } from "../lib/stores/clickhouse.ts";
import type { Pg } from "../lib/stores/postgres.ts";

export interface LoadResult {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

export async function load(
  label: string,
  url: string,
  options: {
    headers?: Record<string, string>;
    seconds?: number;
    connections?: number;
    /** Paths to cycle through (each request takes the next one), for example distinct cursors. */
    paths?: string[];
  } = {},
): Promise<LoadResult> {
  let next = 0;
  const paths = options.paths;
  const result = await autocannon({
    url,
    headers: options.headers,
    ...(paths?.length
      ? { requests: [{ setupRequest: (req: object) => ({ ...req, path: paths[next++ % paths.length] }) }] }
      : {}),
    duration: options.seconds ?? Number(process.env.BENCH_SECONDS ?? 5),
    connections: options.connections ?? 10,
  });
  return {
    label,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

/** A bare Fastify route serving exactly `body` with the same content type. */
export async function bareServer(body: string, contentType = "application/json; charset=utf-8") {
  const app = Fastify({ logger: false });
  app.get("/*", async (_req, reply) => reply.type(contentType).send(body));
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return { url, close: () => app.close() };
}

export function printTable(title: string, rows: LoadResult[], bound: LoadResult) {
  process.stdout.write(`\n${title}\n`);
  process.stdout.write(
    "route                                         req/s    p50 ms  p99 ms  non-2xx  vs bare req/s\n",
  );
  for (const r of [...rows, bound]) {
    const ratio = `${((r.rps / Math.max(1, bound.rps)) * 100).toFixed(1)}%`;
    process.stdout.write(
      `${r.label.padEnd(44)} ${String(r.rps).padStart(7)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(7)} ${String(r.non2xx).padStart(8)}  ${ratio.padStart(8)}\n`,
    );
  }
}

/**
 * The real app on opened stores, listening on loopback, with a user key on an unlimited plan
 * (so the bench measures the route, not the rate limiter's 429s).
 */
export async function startBenchApp(deps: {
  config: Config;
  log: Logger;
  pg: Pg;
  ch: Ch;
  metrics?: Metrics;
}): Promise<{ app: App; base: string; headers: Record<string, string> }> {
  const { config, log, pg, ch } = deps;
  const keys = createKeysRepo(pg);
  await keys.upsertPlan({
    plan_id: "bench",
    name: "Bench",
    rpm: 100_000_000,
    rpd: 100_000_000,
    price: "0",
    price_alph: "0",
    validity_days: 1,
  });
  const created = await keys.createKey({ userId: "bench", planId: "free", level: "user" });
  await keys.setPlan(created.keyId, "bench");
  const app = await buildApp(createApiDeps(config, { pg, ch }, log, deps.metrics));
  const base = await app.listen({ host: "127.0.0.1", port: 0 });
  return { app, base, headers: { "x-api-key": created.key, authorization: `Bearer ${created.key}` } };
}
