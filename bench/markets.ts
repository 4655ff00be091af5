/**
 * Bench (market sources), embedded stores, the exchange double (Gate API v4) read through ccxt:
 *  1. Exchange backfill: one pair's 1m candles for 30 days (43,200) from its listing, as the exchange
 *     poller does it (read pages through ccxt, write, roll up every scale), beside the same pages
 *     only read through ccxt (the bound the write side adds to) and the same rows only written.
 *  2. Trade watcher: fills from the exchange double to served events. Throughput: a burst of fills
 *     read, recorded and served by `/events/all` poll, beside `record()` alone on the same fills.
 *     Latency: fills made live (the double's clock is the wall clock), from the venue's trade time
 *     to the event first served to a poller polling every 20 ms, p50/p95.
 * The chains' positions follow the wall clock (written every 100 ms), so the events watermark is
 * bounded by the watcher (the bench measures it, not ingestion).
 * Run: npm run bench:markets   (BENCH_DAYS=30, BENCH_TRADE_SECONDS=20)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ExchangePairSpec, startExchangeDouble } from "../devnet/exchange.ts";
import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { createMetrics } from "../lib/metrics.ts";
import { prepareStores } from "../lib/migrate.ts";
import { createPricePairs } from "../lib/prices/pairs.ts";
import { openStores } from "../lib/stores/index.ts";
import { rollUpCandles, writeCandles1m } from "../pipeline/trade-watcher/cex.ts";
import { CANDLES_PER_PAGE, createExchange, fetchCandles1m } from "../pipeline/trade-watcher/exchange.ts";
import { marketTradeOf } from "../pipeline/trade-watcher/exchange-poller.ts";
import { MARKET_CHAIN_INDEX } from "../pipeline/trade-watcher/feed.ts";
import { createTradeWatcher } from "../pipeline/trade-watcher/watcher.ts";
import { startBenchApp } from "./lib.ts";

const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const TRADE_SECONDS = Number(process.env.BENCH_TRADE_SECONDS ?? 20);
const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
const log = createLogger({ level: "warn" });

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const wallStart = Date.now();
const current = Math.floor(wallStart / MINUTE) * MINUTE;
const spec = (id: string, base: string, listedAt: number, tradesPerMinute: number): ExchangePairSpec => ({
  id,
  base,
  quote: "USDT",
  listedAt,
  startPrice: 0.31,
  trend: 0.000002,
  precision: 5,
  amountPrecision: 2,
  tradesPerMinute,
});
let exchangeNow = () => Date.now();
const double = await startExchangeDouble({
  seed: 3,
  now: () => exchangeNow(),
  pairs: [spec("ALPH_USDT", "ALPH", current - DAYS * DAY, 6), spec("AYIN_USDT", "AYIN", current - DAY, 999)],
});
const dir = mkdtempSync(join(tmpdir(), "bench-markets-"));
const config = loadConfig({
  DATA_DIR: dir,
  LOG_LEVEL: "warn",
  KAFKA_BROKERS: "",
  PUBLIC_RPM: "1000000",
});
const metrics = createMetrics();
const stores = await openStores(config, log, { command: "bench" });
await prepareStores(stores, log);
const pg = stores.pg!;
const ch = stores.ch!;
const registry = createPricePairs(pg);
const lines: string[] = [`\nmarkets bench (embedded: chDB, ${pg.kind}; exchange double through ccxt)`];
const print = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

// 1. Exchange backfill of 30 days of 1m candles.
{
  const client = createExchange("gate", { apiUrl: double.url, timeoutMs: 30_000 });
  const pages: [number, number][] = [];
  for (let from = current - DAYS * DAY; from <= current; from += CANDLES_PER_PAGE * MINUTE) {
    pages.push([from, Math.min(from + (CANDLES_PER_PAGE - 1) * MINUTE, current)]);
  }
  // Bound: the same pages read through ccxt only.
  let t = performance.now();
  const read = [];
  for (const [from, to] of pages) read.push(await fetchCandles1m(client, "ALPH_USDT", from, to));
  const readS = (performance.now() - t) / 1000;
  const count = read.reduce((n, r) => n + r.length, 0);
  // The same rows only written (1m rows, then the coarser scales), into a market of their own.
  t = performance.now();
  for (const rows of read) {
    await writeCandles1m(ch, "bench:write-only", rows);
    await rollUpCandles(ch, "bench:write-only", rows[0]!.t, rows[rows.length - 1]!.t);
  }
  const writeS = (performance.now() - t) / 1000;
  // The poller's backfill from the pair's listing.
  // The watcher without a feed: candles and spot only.
  const poller = createTradeWatcher(
    { pg, ch, log, metrics },
    {
      feed: null,
      exchanges: {
        sources: ["gate"],
        apiUrls: { gate: double.url },
        pollMs: 60_000,
        timeoutMs: 30_000,
        backfillDays: 0,
      },
    },
  ).exchanges!;
  await poller.pollOnce();
  await registry.addPair("gate", { pair_symbol: "ALPH_USDT" });
  t = performance.now();
  await poller.pollOnce();
  const fullS = (performance.now() - t) / 1000;
  const [stored] = await ch.query<{ n: string }>(
    "bench_candles",
    "SELECT count() AS n FROM candles FINAL WHERE market = 'gate:ALPH_USDT' AND scale = '1m'",
  );
  print(
    `  exchange backfill, ${DAYS} days of 1m candles (${count} candles, ${pages.length} pages; stored ${stored?.n}):`,
  );
  print(
    `    poller backfill:   ${(count / fullS).toFixed(0).padStart(7)} candles/s, done in ${fullS.toFixed(1)} s`,
  );
  print(
    `    ccxt read only:    ${(count / readS).toFixed(0).padStart(7)} candles/s, ${readS.toFixed(1)} s   (bound: the exchange side alone)`,
  );
  print(
    `    write only:        ${(count / writeS).toFixed(0).padStart(7)} candles/s, ${writeS.toFixed(1)} s   (bound: the store side alone)`,
  );
}

// 2. Trade watcher.
{
  // Live chains at the wall clock (their positions written every 100 ms, as the events sink would):
  // the watermark then follows the clock, and the bench measures the watcher, not ingestion.
  const chainsAt = (ts: number) =>
    ch.insert(
      "bench_chains",
      "chain_progress",
      Array.from({ length: 16 }, (_, c) => ({
        chain_index: c,
        height: 1,
        block_hash: "00".repeat(32),
        block_ts: ts,
        version: ts,
      })),
    );
  await chainsAt(Date.now());
  const chains = setInterval(() => void chainsAt(Date.now()).catch(() => undefined), 100);
  // The trade watcher as `start` wires it (pipeline/trade-watcher): the exchange poller hands fills to the feed.
  const watcher = createTradeWatcher(
    { pg, ch, log, metrics },
    {
      feed: { heartbeatMs: 100 },
      exchanges: {
        sources: ["gate"],
        apiUrls: { gate: double.url },
        pollMs: Number(process.env.BENCH_CANDLE_POLL_MS ?? 15_000),
        tradesPollMs: 100,
        timeoutMs: 30_000,
        backfillDays: 1,
      },
    },
  );
  await watcher.start({ poll: false });
  const feed = watcher.feed!;
  const ayin = await registry.addPair("gate", { pair_symbol: "AYIN_USDT" });
  await registry.updatePair("gate", ayin.id, { enable_trades: true });
  const alph = await pg.query<{ id: number }>(
    "bench_alph",
    "SELECT id FROM price_pairs WHERE pair_symbol = 'ALPH_USDT'",
  );
  await registry.updatePair("gate", alph[0]!.id, { enabled: false });
  const { app, base, headers } = await startBenchApp({ config, log, pg, ch, metrics });
  let after = "0";
  const served = new Map<string, number>();
  const poll = async () => {
    for (;;) {
      const r = await fetch(`${base}/events/all?poll=1&after_id=${after}&limit=200`, { headers });
      if (r.status !== 200) throw new Error(`/events/all answered ${r.status}: ${await r.text()}`);
      const events = (
        (await r.json()) as {
          events: { id: string; chain_index: number; dapp_id: string; timestamp: number }[];
        }
      ).events;
      const at = Date.now();
      for (const e of events) {
        // The watcher's fills of the exchange (not the record()-alone bound's, recorded as source "bench").
        if (e.chain_index === MARKET_CHAIN_INDEX && e.dapp_id === "gate") served.set(e.id, at - e.timestamp);
      }
      if (events.length > 0) after = events[events.length - 1]!.id;
      if (events.length < 200) return;
    }
  };
  const poller = watcher.exchanges!;

  // First poll: the markets, a day of candles, and the newest fills (the pair's start).
  await poller.pollOnce();
  await poll();

  // Throughput: the exchange's clock jumps ahead; the fills in between are read, recorded, served.
  const frozen = Date.now();
  exchangeNow = () => frozen + 30 * MINUTE;
  const before = served.size;
  let t = performance.now();
  await poller.pollOnce();
  // Served once the chains pass the time they were recorded at (≤ 100 ms here).
  const [recorded] = await pg.query<{ n: string }>("bench_n", "SELECT count(*) AS n FROM market_trades");
  while (served.size < Number(recorded!.n)) {
    await poll();
    await new Promise((r) => setTimeout(r, 5));
  }
  const burstS = (performance.now() - t) / 1000;
  const burst = served.size - before;
  // Bound: record() alone on the same number of fills (new keys), no exchange and no reads.
  const pair = {
    id: 0,
    pair_symbol: "AYIN_USDT",
    enable_trades: true,
    token_id: null,
    base_asset: "AYIN",
    quote_asset: "USDT",
  };
  const fills = double.trades(double.pair("AYIN_USDT")!, 0, burst).map((f) => ({
    ...marketTradeOf("bench", pair, {
      id: f.id,
      ts: Number(f.create_time_ms),
      side: f.side,
      amount: f.amount,
      price: f.price,
    }),
  }));
  t = performance.now();
  for (let i = 0; i < fills.length; i += 1000) await feed.record(fills.slice(i, i + 1000));
  const recordS = (performance.now() - t) / 1000;
  print(`  trade watcher, a burst of ${burst} fills (30 minutes of the exchange):`);
  print(
    `    exchange → served: ${(burst / burstS).toFixed(0).padStart(7)} trades/s, ${burstS.toFixed(2)} s (read through ccxt, recorded, served by /events/all)`,
  );
  print(
    `    record() alone:    ${(fills.length / recordS).toFixed(0).padStart(7)} trades/s, ${recordS.toFixed(2)} s   (bound: the stores' side)`,
  );

  // Latency: live fills, the double on the wall clock again (after the burst's minutes).
  const offset = frozen + 30 * MINUTE - Date.now();
  exchangeNow = () => Date.now() + offset;
  served.clear();
  poller.start();
  const until = Date.now() + TRADE_SECONDS * 1000;
  while (Date.now() < until) {
    await poll();
    await new Promise((r) => setTimeout(r, 20));
  }
  await poller.stop();
  // Venue time runs `offset` ahead of the wall clock here: latency is measured on the double's clock.
  const latencies = [...served.values()].map((l) => l + offset);
  print(
    `  trade watcher, live for ${TRADE_SECONDS} s (exchange polled every 100 ms, poller every 20 ms): ${latencies.length} fills, trade time → served p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms (bound: waits of up to 100 ms exchange poll + 100 ms chain and feed updates + 200 ms API watermark cache + 20 ms client poll = 420 ms)`,
  );
  clearInterval(chains);
  await feed.stop();
  await app.close();
}

await stores.close();
await double.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${lines.length > 0 ? "" : ""}\n`);
process.exit(0);
