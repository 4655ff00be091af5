/**
 * Bench (series), embedded stores:
 *  1. the series processor's rate on the demo block stream beside the events sink's on the same stream
 *     (time spent in each processor's `handle`, from the processor metrics);
 *  2. `GET /series/instances/{id}/0/chart` returning 1,000 and 5,000 raw points at one connection, beside a
 *     bare route serving the same bytes.
 * Run: npm run bench:series   (BENCH_BLOCKS=8000, BENCH_SECONDS=5)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { registerDevnetDapps } from "../devnet/register.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { createMetrics, type Metrics } from "../lib/metrics.ts";
import { instanceIdOf } from "../lib/series/definition.ts";
import { openStores } from "../lib/stores/index.ts";
import { createIngestor } from "../pipeline/ingest/ingest.ts";
import { createNodeClient } from "../pipeline/ingest/node-client.ts";
import {
  createPipelineDeps,
  ingestOptions,
  PROCESSORS,
  type ProcessorName,
  startPipeline,
} from "../pipeline/runtime.ts";
import { bareServer, load, startBenchApp } from "./lib.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 8000);
const log = createLogger({ level: "warn" });

/** Seconds spent in `handle` per processor (sum of the batch histogram). */
async function handleSeconds(metrics: Metrics): Promise<Map<string, number>> {
  const m = await metrics.processorBatchSeconds.get();
  const out = new Map<string, number>();
  for (const v of m.values)
    if (v.metricName?.endsWith("_sum")) out.set(String(v.labels.processor), Number(v.value));
  return out;
}

const chain = createDevnetChain({ seed: 5 });
chain.advance(BLOCKS);
const server = await startDevnetServer(chain, { port: 0 });
const dir = mkdtempSync(join(tmpdir(), "bench-series-"));
const config = loadConfig({
  DATA_DIR: dir,
  LOG_LEVEL: "warn",
  NODE_URL: server.nodeUrl,
  EXPLORER_URL: server.explorerUrl,
  INGEST_START_TS: String(chain.options.startTimestamp - 1),
  CONFIRMATIONS: "0",
  INGEST_WINDOW_MS: "600000",
  INGEST_CONCURRENCY: "2",
  KAFKA_BROKERS: "",
  // One-minute raw segments: a 5,000-point chart reads a few dozen sealed segments and the pending span.
  SERIES_RAW_SEGMENT_MS: "60000",
});
const metrics = createMetrics();
const stores = await openStores(config, log, { migrate: true, command: "bench" });
const pg = stores.pg!;
const ch = stores.ch!;
// BENCH_PROFILE=1: mean time of each ClickHouse statement (by label), printed after the pipeline and each load.
const profile = new Map<string, { n: number; ms: number }>();
function profiled<F extends (label: string, ...rest: never[]) => Promise<unknown>>(prefix: string, f: F): F {
  return (async (label: string, ...rest: never[]) => {
    const t = performance.now();
    try {
      return await f(label, ...rest);
    } finally {
      const p = profile.get(`${prefix} ${label}`) ?? { n: 0, ms: 0 };
      p.n++;
      p.ms += performance.now() - t;
      profile.set(`${prefix} ${label}`, p);
    }
  }) as F;
}
function profileLines(): string[] {
  const lines = [...profile]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(
      ([label, p]) =>
        `  ${label}: ${(p.ms / p.n).toFixed(2)} ms mean × ${p.n} = ${(p.ms / 1000).toFixed(2)} s`,
    );
  profile.clear();
  return lines;
}
if (process.env.BENCH_PROFILE === "1") {
  ch.query = profiled("read", ch.query.bind(ch));
  ch.command = profiled("command", ch.command.bind(ch));
  ch.insert = profiled("insert", ch.insert.bind(ch));
}
await registerDevnetDapps(pg, chain);
const deps = await createPipelineDeps({ config, log, metrics }, stores);
const pipeline = await startPipeline(deps, {
  processors: Object.keys(PROCESSORS) as ProcessorName[],
  ingest: false,
});
const ingestor = createIngestor(
  deps,
  createNodeClient({ url: config.NODE_URL, apiKey: "", log }),
  ingestOptions(config),
);
const t0 = performance.now();
while (!(await ingestor.runOnce()).caughtUp) {}
let zeros = 0;
while (zeros < 2) {
  zeros = (await deps.bus.lag()) === 0 ? zeros + 1 : 0;
  if (zeros < 2) await new Promise((r) => setTimeout(r, 20));
}
const wall = (performance.now() - t0) / 1000;
await pipeline.stop();
const [counts] = await ch.query<{ blocks: string; events: string; facts: string; points: string }>(
  "bench_counts",
  `SELECT (SELECT count() FROM raw_blocks) AS blocks, (SELECT count() FROM events) AS events,
          (SELECT count() FROM series_block_facts) AS facts, (SELECT count() FROM series_points) AS points`,
);
const blocks = Number(counts?.blocks);
const handle = await handleSeconds(metrics);
const rate = (name: string) => {
  const s = handle.get(name) ?? Number.NaN;
  return `${(blocks / s).toFixed(0).padStart(7)} blocks/s  (${s.toFixed(2)} s in handle)`;
};
process.stdout.write(
  [
    `\nseries bench (embedded: chDB, ${pg.kind}): ${blocks} blocks, ${counts?.events} events, ${counts?.facts} series block facts, ${counts?.points} point rows; end to end ${wall.toFixed(1)} s`,
    `  series processor: ${rate("series")}`,
    `  events sink:      ${rate("events-sink")}   (same stream; the bound the series processor must keep up with)`,
    ...profileLines(),
    "",
  ].join("\n"),
);

// Storage: compressed bytes on disk of the series tables after a merge, per million rows of each.
await ch.command("bench_optimize_points", "OPTIMIZE TABLE series_points FINAL");
await ch.command("bench_optimize_facts", "OPTIMIZE TABLE series_block_facts FINAL");
const parts = await ch.query<{ table: string; rows: string; bytes: string }>(
  "bench_storage",
  `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts
   WHERE active AND database = currentDatabase() AND table IN ('series_points', 'series_block_facts') GROUP BY table`,
);
for (const t of parts) {
  const perMillion = (Number(t.bytes) / Number(t.rows)) * 1e6;
  process.stdout.write(
    `  storage ${t.table}: ${t.rows} rows, ${(Number(t.bytes) / 2 ** 20).toFixed(1)} MiB on disk = ${(perMillion / 2 ** 20).toFixed(1)} MiB per million rows\n`,
  );
}

const { base, app, headers } = await startBenchApp({ config, log, pg, ch });
profile.clear();
const id = instanceIdOf("chain-transactions", { chain_index: "all" });
for (const limit of [1000, 5000]) {
  const path = `/series/instances/${id}/0/chart?limit=${limit}`;
  const body = await (await fetch(base + path, { headers })).text();
  const parsed = JSON.parse(body) as { points: unknown[]; window: { segmentsScanned: number } };
  const bare = await bareServer(body);
  const route = await load(`chart ${parsed.points.length} points`, base + path, { headers, connections: 1 });
  const bound = await load("bare route, same bytes", `${bare.url}${path}`, { connections: 1 });
  process.stdout.write(
    [
      `\nGET ${path} (${parsed.points.length} points, ${parsed.window.segmentsScanned} segments, ${(body.length / 1024).toFixed(0)} KiB), 1 connection`,
      `  route:      p50 ${route.p50} ms  p99 ${route.p99} ms  ${route.rps} req/s  non-2xx ${route.non2xx}`,
      `  bare route: p50 ${bound.p50} ms  p99 ${bound.p99} ms  ${bound.rps} req/s`,
      ...profileLines(),
      "",
    ].join("\n"),
  );
  await bare.close();
}
await app.close();
await stores.close();
await server.close();
if (process.env.BENCH_KEEP === "1") process.stdout.write(`kept the stores in ${dir}\n`);
else rmSync(dir, { recursive: true, force: true });
