/**
 * Bench (reads as the chain grows, issue 45 target 4), embedded stores: the read routes at growing table sizes
 * (BENCH_SIZES events, default 1 M, 10 M and 30 M), p50/p99 of each beside a bare route serving the same bytes, and
 * at the end each route's p99 at the largest size against its p99 at the smallest (goal: at most 2 times).
 *
 * The store: a simulated network's history ingested by every processor (tokens, pools, trades, candles, events),
 * then synthetic events added to `events` (and, through its views, the lookup tables) up to each size in turn,
 * newer than the history's: about 3 events a transaction, 4 transactions a block, 16 chains, 5,000 senders,
 * 7,000 receivers, 50 tokens, 3 dapps (the shape of bench:events). OHLCV reads a pair with size / 1,000 1m candles
 * (1,000 at 1 M events); the token list is the history's tokens (it does not grow with the events here). Every
 * request of a cursor or filter route reads a different page (2,000 distinct cursors, addresses, tokens or
 * transactions), so the page cache does not answer them; the newest page, OHLCV and the token list are one URL,
 * as clients poll them.
 * Run: npm run bench:reads   (BENCH_SIZES=1000000,10000000,30000000; BENCH_SECONDS=5 per route; BENCH_BLOCKS=500
 * history; BENCH_MAX_FILL_S=900: a size whose fill would take longer, judged from the fill rate so far, is skipped
 * and the output says so; BENCH_PAGE_CACHE_MS=0: the API's page cache, off so that the store answers every read)
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
  fillSyntheticEvents,
  ingestHistory,
  type LoadResult,
  load,
  printTable,
  startBenchApp,
  startBenchPipeline,
} from "./lib.ts";

const SIZES = (process.env.BENCH_SIZES ?? "1000000,10000000,30000000").split(",").map(Number);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 500);
const MAX_FILL_S = Number(process.env.BENCH_MAX_FILL_S ?? 900);
const PAGE_CACHE_MS = Number(process.env.BENCH_PAGE_CACHE_MS ?? 0);
const out = (line: string) => process.stdout.write(`${line}\n`);
const log = createLogger({ level: "warn" });

// Swap-heavy (as bench:live), so the history has pools, trades and candles.
const chain = createDevnetChain({ seed: 5, txPerBlock: [4, 8], swapShare: 1 });
chain.advance(BLOCKS);
const server = await startDevnetServer(chain, { port: 0 });
const dir = mkdtempSync(join(tmpdir(), "bench-reads-"));
const { config, stores, pg, ch, pipeline, ingestor, drain } = await startBenchPipeline({
  chain,
  server,
  dir,
  log,
});
await ingestHistory({ ingestor, drain }, BLOCKS);
await pipeline.stop();
const [history] = await ch.query<{ n: string; hi: string }>(
  "bench_history",
  "SELECT count() AS n, toString(toUnixTimestamp64Milli(max(timestamp))) AS hi FROM events",
);
const historyEvents = Number(history?.n ?? 0);
// Synthetic events start a day after the history's newest.
const startTs = Number(history?.hi ?? Date.now()) + 86_400_000;
// The watermark past every synthetic event (a version above the pipeline's), so every event is served.
await ch.command(
  "bench_progress",
  `INSERT INTO chain_progress (chain_index, height, block_hash, block_ts, version)
   SELECT number, 1000000000, 'x', fromUnixTimestamp64Milli(toInt64(4102444800000)), 1000000000000000 FROM numbers(16)`,
);

/** Adds synthetic events numbered [from, to) (bench:events' shape, numbered on from the previous size). */
const fill = (from: number, to: number) =>
  fillSyntheticEvents(ch, { from, count: to - from, start: startTs });

/** `n` ids of events in order from the `at`-th synthetic event (0 = the oldest). */
const idsFrom = async (at: number, n: number) =>
  (
    await ch.query<{ id: string }>(
      "bench_ids",
      "SELECT id FROM events WHERE timestamp >= fromUnixTimestamp64Milli(toInt64({start:UInt64})) ORDER BY id LIMIT {n:UInt64} OFFSET {o:UInt64}",
      { start: startTs, n, o: at },
    )
  ).map((r) => r.id);

const { app, base, headers } = await startBenchApp({
  // No page cache by default: ten connections cycling through 2,000 cursors revisit each within its 1 s once the
  // routes pass 2,000 requests a second, and from then on the cache, not the store, answers most of them (a 30 M
  // run with the cache on answered deep cursor pages at 2,257 a second, p50 1 ms, against 87 a second and 102 ms at
  // 1 M). BENCH_PAGE_CACHE_MS sets it, as EVENTS_PAGE_CACHE_MS would.
  config: { ...config, PUBLIC_RPM: 100_000_000, EVENTS_PAGE_CACHE_MS: PAGE_CACHE_MS },
  log,
  pg,
  ch,
});

interface Route {
  label: string;
  paths: string[];
  headers?: Record<string, string>;
}
const results = new Map<string, Map<number, { route: LoadResult; bare: LoadResult }>>();
const notes: string[] = [];
let have = 0;
let fillRate = 0; // events per second of the fills so far
for (const size of SIZES) {
  if (fillRate > 0 && (size - have) / fillRate > MAX_FILL_S) {
    const note = `size ${size}: skipped, its fill would take about ${Math.round((size - have) / fillRate)} s at the rate so far (BENCH_MAX_FILL_S=${MAX_FILL_S})`;
    notes.push(note);
    out(note);
    continue;
  }
  const t0 = performance.now();
  await fill(have, size);
  const seconds = (performance.now() - t0) / 1000;
  fillRate = (size - have) / seconds;
  have = size;
  const pair = await ensureCandles(pg, ch, Math.max(1000, Math.round(size / 1000)));
  const deep = await idsFrom(Math.floor(size / 20), 2000);
  const behind = await idsFrom(100, 2000);
  const txs = (
    await ch.query<{ tx_id: string }>(
      "bench_txs",
      "SELECT tx_id FROM events WHERE timestamp >= fromUnixTimestamp64Milli(toInt64({start:UInt64})) AND event_index = 0 AND cityHash64(id) % {m:UInt64} = 0 LIMIT 2000",
      { start: startTs, m: Math.max(1, Math.floor(size / 3 / 2000)) },
    )
  ).map((r) => r.tx_id);
  const routes: Route[] = [
    { label: "newest page /events/all?limit=50", paths: ["/events/all?limit=50"] },
    {
      label: "deep cursor page (5% from the oldest)",
      paths: deep.map((id) => `/events/all?limit=50&after_id=${id}`),
    },
    {
      label: "poll from far behind (100th event)",
      paths: behind.map((id) => `/events/all?poll=1&limit=50&after_id=${id}`),
    },
    {
      label: "address filter (5,000 senders)",
      paths: Array.from({ length: 2000 }, (_, i) => `/events/all?limit=50&address=1From${(i * 7) % 5000}`),
    },
    {
      label: "token filter (50 tokens)",
      paths: Array.from({ length: 50 }, (_, i) => `/events/all?limit=50&token_address=tok${i}`),
    },
    {
      label: "dapp filter (3 dapps)",
      paths: ["alephium", "ayin", "elexium"].map((d) => `/events/all?limit=50&dapp_id=${d}`),
    },
    { label: "a transaction's events", paths: txs.map((t) => `/transaction/${t}/events`), headers },
    {
      label: "OHLCV 1m pageSize=1000",
      paths: [`/price/pair/${pair.id}/ohlcv?scale=1m&pageSize=1000`],
    },
    { label: "token list /token/all", paths: ["/token/all"] },
  ];
  out(
    `\n== ${size.toLocaleString("en")} synthetic events (+ ${historyEvents} of the history): filled in ${seconds.toFixed(1)} s (${Math.round(fillRate)} events/s)`,
  );
  for (const r of routes) {
    const first = await app.inject({ url: r.paths[0]!, headers: r.headers });
    if (first.statusCode !== 200)
      throw new Error(`${r.label}: ${first.statusCode} ${first.body.slice(0, 200)}`);
    const bare = await bareServer(first.body);
    const route = await load(r.label, base, { paths: r.paths, headers: r.headers });
    const bound = await load("bare route, same bytes", bare.url);
    await bare.close();
    printTable(`${r.label}: ${first.body.length} bytes (first path)`, [route], bound);
    const bySize = results.get(r.label) ?? new Map();
    bySize.set(size, { route, bare: bound });
    results.set(r.label, bySize);
  }
}

const measured = SIZES.filter((s) => [...results.values()].some((m) => m.has(s)));
const smallest = measured[0];
const largest = measured.at(-1);
out(
  `\nsummary: p50 / p99 ms per size (bare route's p99 in brackets); growth = p99 at ${largest?.toLocaleString("en")} / p99 at ${smallest?.toLocaleString("en")} (goal ≤ 2)`,
);
for (const [label, bySize] of results) {
  const cells = measured.map((s) => {
    const r = bySize.get(s);
    return r ? `${r.route.p50}/${r.route.p99} [${r.bare.p99}]` : "-";
  });
  const a = smallest === undefined ? undefined : bySize.get(smallest)?.route.p99;
  const b = largest === undefined ? undefined : bySize.get(largest)?.route.p99;
  const growth = a !== undefined && b !== undefined ? (b / Math.max(1, a)).toFixed(2) : "-";
  out(`  ${label.padEnd(40)} ${cells.map((c) => c.padStart(16)).join(" ")}   growth ${growth}`);
}
for (const n of notes) out(`  ${n}`);

await app.close();
await stores.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
