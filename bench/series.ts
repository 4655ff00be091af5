/**
 * Bench (series), embedded stores:
 *  1. the series and holders processors' rates on the demo block stream beside the events sink's on the same stream
 *     (time spent in each processor's `handle`, from the processor metrics);
 *  2. `GET /series/instances/{id}/0/chart` returning 1,000 and 5,000 raw points at one connection, beside a
 *     bare route serving the same bytes.
 * Run: npm run bench:series   (BENCH_BLOCKS=8000, BENCH_SECONDS=5)
 * BENCH_ARCHIVE=1: a chain of a block every 15 minutes per chain (2,000 blocks are 31 hours) with 3 hours of raw
 * retention and 1-day pages, so that the backfill archives raw pages as a backfill of a long history does (the
 * default retention, 30 days, archives nothing on the demo stream).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createLogger } from "../lib/logger.ts";
import { instanceIdOf } from "../lib/series/definition.ts";
import type { Ch } from "../lib/stores/clickhouse.ts";
import { bareServer, handleRates, load, startBenchApp, startBenchPipeline } from "./lib.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 8000);
const log = createLogger({ level: "warn" });

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
function profileStatements(ch: Ch) {
  if (process.env.BENCH_PROFILE !== "1") return;
  ch.query = profiled("read", ch.query.bind(ch));
  ch.command = profiled("command", ch.command.bind(ch));
  ch.insert = profiled("insert", ch.insert.bind(ch));
}

const ARCHIVE = process.env.BENCH_ARCHIVE === "1";
const chain = createDevnetChain({
  seed: 5,
  ...(ARCHIVE ? { startTimestamp: Date.UTC(2025, 6, 15), blockIntervalMs: 15 * 60_000 } : {}),
});
chain.advance(BLOCKS);
const server = await startDevnetServer(chain, { port: 0 });
const dir = mkdtempSync(join(tmpdir(), "bench-series-"));
const { config, metrics, stores, pg, ch, pipeline, ingestor, drain } = await startBenchPipeline({
  chain,
  server,
  dir,
  log,
  // One-minute raw segments: a 5,000-point chart reads a few dozen sealed segments and the pending span.
  env: {
    SERIES_RAW_SEGMENT_MS: "60000",
    // Windows of 30 minutes (the largest allowed): fewer rounds over the longer chain time.
    ...(ARCHIVE
      ? {
          SERIES_RAW_RETENTION_HOURS: "3",
          SERIES_RAW_ARCHIVE_PAGE_DAYS: "1",
          INGEST_WINDOW_MS: String(30 * 60_000),
          INGEST_FIRST_WINDOW_MS: String(30 * 60_000),
        }
      : {}),
  },
  onStores: (opened) => profileStatements(opened.ch!),
});
const t0 = performance.now();
while (!(await ingestor.runOnce()).caughtUp) {}
await drain();
const wall = (performance.now() - t0) / 1000;
await pipeline.stop();
const [counts] = await ch.query<{
  blocks: string;
  events: string;
  facts: string;
  points: string;
  pages: string;
}>(
  "bench_counts",
  `SELECT (SELECT count() FROM raw_blocks) AS blocks, (SELECT count() FROM events) AS events,
          (SELECT count() FROM series_block_facts) AS facts, (SELECT count() FROM series_points) AS points,
          (SELECT count() FROM series_archive_pages FINAL) AS pages`,
);
const blocks = Number(counts?.blocks);
const rate = await handleRates(metrics, blocks);
process.stdout.write(
  [
    `\nseries bench (embedded: chDB, ${pg.kind}): ${blocks} blocks, ${counts?.events} events, ${counts?.facts} series block facts, ${counts?.points} point rows, ${counts?.pages} archived raw pages; end to end ${wall.toFixed(1)} s`,
    `  series processor: ${rate("series")}   (facts; on the in-process bus its time includes series-recompute's)`,
    `  series recompute: ${rate("series-recompute")}   (points, segments, archive pages, instances)`,
    `  holders processor: ${rate("holders")}   (blocks topic: outputs, spends, balance moves; on the in-process bus its time includes holders-recompute's)`,
    `  holders recompute: ${rate("holders-recompute")}   (balance crossings, token-holders facts and points)`,
    `  events sink:      ${rate("events-sink")}   (same stream; the bound the series processor must keep up with)`,
    ...profileLines(),
    "",
  ].join("\n"),
);

// Storage: compressed bytes on disk of the series tables after a merge, per million rows of each.
await ch.command("bench_optimize_points", "OPTIMIZE TABLE series_points FINAL");
await ch.command("bench_optimize_facts", "OPTIMIZE TABLE series_block_facts FINAL");
for (const table of ["holder_outputs", "holder_spends", "holder_moves", "holder_changes"])
  await ch.command("bench_optimize_holders", `OPTIMIZE TABLE ${table} FINAL`);
const parts = await ch.query<{ table: string; rows: string; bytes: string }>(
  "bench_storage",
  `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts
   WHERE active AND database = currentDatabase()
     AND table IN ('series_points', 'series_block_facts', 'holder_outputs', 'holder_spends', 'holder_moves', 'holder_changes')
   GROUP BY table`,
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
