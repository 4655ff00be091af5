/**
 * Bench (reads with ingest live), embedded stores: the API routes pollers, traders and dashboards hit most, at 10
 * connections while the simulated network keeps producing blocks that ingest and every processor handle in the
 * same process (one chDB session shared by all), p50/p99 beside a bare route serving the same bytes, and the
 * event loop's delay meanwhile. Targets (issue 22): p99 ≤ 50 ms for event pages and OHLCV, ≤ 20 ms for /status.
 * Run: npm run bench:live   (BENCH_BLOCKS=6000 history, BENCH_SECONDS=5 per route, BENCH_LIVE_MS=50 per block)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createLogger } from "../lib/logger.ts";
import { bareServer, ensureCandles, load, printTable, startBenchApp, startBenchPipeline } from "./lib.ts";

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
});
const t0 = performance.now();
while (!(await ingestor.runOnce()).caughtUp) {}
await drain();
process.stdout.write(
  `history: ${BLOCKS} blocks ingested and processed in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
);
const pair = await ensureCandles(pg, ch, 1000);

// The API with the configuration's defaults (watermark and page reuse as shipped), rate limits out of the way.
const { app, base } = await startBenchApp({ config: { ...config, PUBLIC_RPM: 100_000_000 }, log, pg, ch });

// Live ingest: one block every LIVE_MS, handled by every processor while routes are measured.
let live = true;
let made = 0;
const producer = (async () => {
  while (live) {
    chain.advance(1);
    made++;
    await ingestor.runOnce();
    await new Promise((r) => setTimeout(r, LIVE_MS));
  }
})();

const routes = [
  { label: "GET /events/all?limit=50", path: "/events/all?limit=50" },
  { label: "GET /events/all?limit=200", path: "/events/all?limit=200" },
  {
    label: "GET /price/pair/{id}/ohlcv 1m pageSize=1000",
    path: `/price/pair/${pair.id}/ohlcv?scale=1m&pageSize=1000`,
  },
  { label: "GET /status", path: "/status" },
];
const started = made;
for (const r of routes) {
  const body = (await app.inject({ url: r.path })).body;
  const bare = await bareServer(body);
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const measured = await load(r.label, `${base}${r.path}`);
  loopDelay.disable();
  printTable(
    `${r.label}: ${body.length} bytes, ingest live`,
    [measured],
    await load("bare route, same bytes", bare.url),
  );
  process.stdout.write(
    `event loop delay during the route's run: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms\n`,
  );
  await bare.close();
}
process.stdout.write(`\nlive blocks made and ingested during the runs: ${made - started}\n`);

live = false;
await producer;
await app.close();
await pipeline.stop();
await stores.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
