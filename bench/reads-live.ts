/**
 * Bench (reads with ingest live), embedded stores: the API routes pollers, traders and dashboards hit most, at 10
 * connections while the simulated network keeps producing blocks that ingest and every processor handle in the
 * same process (sharing the chDB connection pool, CHDB_CONNECTIONS), p50/p99 beside a bare route serving the same bytes, and the
 * event loop's delay meanwhile. Targets (issue 22): p99 ≤ 50 ms for event pages and OHLCV, ≤ 20 ms for /status.
 * Run: npm run bench:live   (BENCH_BLOCKS=6000 history, BENCH_SECONDS=5 per route, BENCH_LIVE_MS=50 per block)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createLogger } from "../lib/logger.ts";
import {
  bareServer,
  ensureCandles,
  ingestHistory,
  load,
  printTable,
  produceLive,
  startBenchApp,
  startBenchPipeline,
  watchLoopDelay,
} from "./lib.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 6000);
const LIVE_MS = Number(process.env.BENCH_LIVE_MS ?? 50);
const log = createLogger({ level: "warn" });

// Swap-heavy, like bench:prices, so the candles processor works on every live block.
const chain = createDevnetChain({ seed: 5, txPerBlock: [4, 8], swapShare: 1 });
chain.advance(BLOCKS);
const server = await startDevnetServer(chain, { port: 0 });
const dir = mkdtempSync(join(tmpdir(), "bench-live-"));
const { config, stores, pg, ch, pipeline, ingestor, drain } = await startBenchPipeline({
  chain,
  server,
  dir,
  log,
  // CHDB_CONNECTIONS=1: the API's reads and the pipeline on one chDB connection (as before the pool).
  env: process.env.CHDB_CONNECTIONS ? { CHDB_CONNECTIONS: process.env.CHDB_CONNECTIONS } : {},
});
await ingestHistory({ ingestor, drain }, BLOCKS);
const pair = await ensureCandles(pg, ch, 1000);

// The API with the configuration's defaults (watermark and page reuse as shipped), rate limits out of the way.
const { app, base } = await startBenchApp({ config: { ...config, PUBLIC_RPM: 100_000_000 }, log, pg, ch });

// Live ingest: one block every LIVE_MS, handled by every processor while routes are measured.
const live = produceLive(chain, ingestor, LIVE_MS);

const routes = [
  { label: "GET /events/all?limit=50", path: "/events/all?limit=50" },
  { label: "GET /events/all?limit=200", path: "/events/all?limit=200" },
  {
    label: "GET /price/pair/{id}/ohlcv 1m pageSize=1000",
    path: `/price/pair/${pair.id}/ohlcv?scale=1m&pageSize=1000`,
  },
  { label: "GET /status", path: "/status" },
];
const started = live.made();
for (const r of routes) {
  const body = (await app.inject({ url: r.path })).body;
  const bare = await bareServer(body);
  const loopDelay = watchLoopDelay();
  const measured = await load(r.label, `${base}${r.path}`);
  const bound = await load("bare route, same bytes", bare.url);
  printTable(`${r.label}: ${body.length} bytes, ingest live`, [measured], bound);
  loopDelay("during the route's and the bare route's runs");
  await bare.close();
}
process.stdout.write(`\nlive blocks made and ingested during the runs: ${(await live.stop()) - started}\n`);

await app.close();
await pipeline.stop();
await stores.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
