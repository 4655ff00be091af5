/**
 * Bench (prices), embedded stores:
 *  1. `GET /price/pair/{id}/ohlcv` returning 1,000 candles at one connection, beside a bare route serving
 *     the same bytes;
 *  2. the candles processor's rate on a swap-heavy block stream beside the events sink's on the same
 *     stream (time spent in each processor's `handle`, from the processor metrics);
 *  3. freshness: from a swap's block passing the watermark (its event first served by `/events/all`
 *     poll) to its 1m candle being served with it.
 * Run: npm run bench:prices   (BENCH_BLOCKS=6000, BENCH_SECONDS=5, BENCH_FRESH_ROUNDS=40)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createLogger } from "../lib/logger.ts";
import { bucketStart } from "../lib/prices/scales.ts";
import { PROCESSORS, type ProcessorName, startPipeline } from "../pipeline/runtime.ts";
import { bareServer, ensureCandles, handleRates, load, startBenchApp, startBenchPipeline } from "./lib.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 6000);
const log = createLogger({ level: "warn" });

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

// Swap-heavy: every user tx of the pools' chain (0→0) is a swap, 4-8 per block, bursts on top.
const chain = createDevnetChain({ seed: 5, txPerBlock: [4, 8], swapShare: 1 });
chain.advance(BLOCKS);
const server = await startDevnetServer(chain, { port: 0 });
const dir = mkdtempSync(join(tmpdir(), "bench-prices-"));
const { config, metrics, pg, ch, deps, pipeline, ingestor, drain, stores } = await startBenchPipeline({
  chain,
  server,
  dir,
  log,
  env: { EVENTS_PAGE_CACHE_MS: "0", EVENTS_WATERMARK_CACHE_MS: "0" },
});

// 2. Processor rates on the swap-heavy backfill.
const t0 = performance.now();
while (!(await ingestor.runOnce()).caughtUp) {}
await drain();
const wall = (performance.now() - t0) / 1000;
const [counts] = await ch.query<{ blocks: string; events: string; trades: string; candles: string }>(
  "bench_counts",
  `SELECT (SELECT count() FROM raw_blocks) AS blocks, (SELECT count() FROM events) AS events,
          (SELECT count() FROM trades) AS trades, (SELECT count() FROM candles) AS candles`,
);
const blocks = Number(counts?.blocks);
const rate = await handleRates(metrics, blocks);
process.stdout.write(
  [
    `\nprices bench (embedded: chDB, ${pg.kind}); swap-heavy stream: ${blocks} blocks, ${counts?.events} events, ${counts?.trades} trades, ${counts?.candles} candle rows; end to end ${wall.toFixed(1)} s`,
    `  candles processor: ${rate("candles")}`,
    `  events sink:       ${rate("events-sink")}   (same stream; the bound the candles processor must keep up with)`,
    "",
  ].join("\n"),
);

// 1. OHLCV read of 1,000 candles at one connection.
const pair = await ensureCandles(pg, ch, 1000);
await pipeline.stop();
const { base, app } = await startBenchApp({ config, log, pg, ch });
const path = `/price/pair/${pair.id}/ohlcv?scale=1m&pageSize=1000`;
const body = await (await fetch(base + path)).text();
const served = (JSON.parse(body) as { ohlcv: unknown[] }).ohlcv.length;
const bare = await bareServer(body);
const route = await load(`ohlcv 1m, ${served} candles`, base + path, { connections: 1 });
const bound = await load("bare route, same bytes", `${bare.url}${path}`, { connections: 1 });
process.stdout.write(
  [
    `\nGET ${path} (${(body.length / 1024).toFixed(0)} KiB), 1 connection`,
    `  route:      p50 ${route.p50} ms  p99 ${route.p99} ms  ${route.rps} req/s  non-2xx ${route.non2xx}`,
    `  bare route: p50 ${bound.p50} ms  p99 ${bound.p99} ms  ${bound.rps} req/s`,
    "",
  ].join("\n"),
);
await bare.close();

// 3. Freshness: new blocks arrive, a poller reads swaps as the watermark passes them; when is each one's 1m candle served?
const fresh = await startPipeline(deps, {
  processors: Object.keys(PROCESSORS) as ProcessorName[],
  ingest: false,
});
const pools = new Map(
  (
    await pg.query<{ id: number; pair_symbol: string }>(
      "bench_pairs",
      "SELECT id, pair_symbol FROM price_pairs WHERE source_id = 'devnet-dex'",
    )
  ).map((r) => [r.pair_symbol, r.id]),
);
let after =
  ((await (await fetch(`${base}/events/all?limit=1`)).json()) as { events: { id: string }[] }).events[0]
    ?.id ?? "0";
const delays: number[] = [];
const pending: { pairId: number; minute: number; seenAt: number }[] = [];
const volumeByMinute = new Map<string, number>();
const rounds = Number(process.env.BENCH_FRESH_ROUNDS ?? 40);
for (let round = 0; round < rounds; round++) {
  chain.advance(16);
  const ingesting = ingestor.runOnce();
  const until = performance.now() + 3000;
  while (performance.now() < until) {
    const r = (await (
      await fetch(`${base}/events/all?poll=1&after_id=${after}&limit=200&category=dex`)
    ).json()) as {
      events: { id: string; timestamp: number; sub_kind: string; payload: Record<string, string> }[];
    };
    const now = performance.now();
    for (const e of r.events) {
      after = e.id;
      const pairId = pools.get(e.payload.pool_address ?? "");
      if (pairId === undefined || (e.sub_kind !== "buy" && e.sub_kind !== "sell")) continue;
      const minute = bucketStart("1m", e.timestamp);
      const key = `${pairId}:${minute}`;
      // The first swap of a pair's minute: its candle appears when that swap is in it.
      if (volumeByMinute.has(key)) continue;
      volumeByMinute.set(key, 1);
      pending.push({ pairId, minute, seenAt: now });
    }
    for (let i = pending.length - 1; i >= 0; i--) {
      const w = pending[i]!;
      const c = (await (
        await fetch(`${base}/price/pair/${w.pairId}/ohlcv?scale=1m&start=${w.minute}&end=${w.minute}&limit=1`)
      ).json()) as { ohlcv: { t: number }[] };
      if (c.ohlcv.some((x) => x.t === w.minute)) {
        delays.push(performance.now() - w.seenAt);
        pending.splice(i, 1);
      }
    }
    if (r.events.length === 0 && pending.length === 0) {
      await ingesting;
      break;
    }
  }
  await ingesting;
}
process.stdout.write(
  [
    `\nfreshness over ${rounds} rounds of 16 blocks: ${delays.length} first swaps of a pair's minute (${pending.length} never served as a candle within 3 s)`,
    `  event served → its 1m candle served: p50 ${percentile(delays, 50).toFixed(1)} ms, p95 ${percentile(delays, 95).toFixed(1)} ms`,
    "",
  ].join("\n"),
);

await fresh.stop();
await app.close();
await stores.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
