/**
 * Bench (dapp groups), embedded stores: each group's main list route at 10 connections while ingest is live
 * (the simulated network keeps producing blocks, which every processor handles), p50/p99 beside a bare route
 * serving the same bytes. Each request asks for a different page of the first page's snapshot (distinct
 * cursors), so page reuse does not answer it, plus the first page (reused per snapshot) as clients poll it.
 * Run: npm run bench:dapps   (BENCH_BLOCKS=6000 history, BENCH_SECONDS=5 per route)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createLogger } from "../lib/logger.ts";
import {
  bareServer,
  ingestHistory,
  type LoadResult,
  load,
  printTable,
  produceLive,
  startBenchApp,
  startBenchPipeline,
  watchLoopDelay,
} from "./lib.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 6000);
const log = createLogger({ level: "warn" });

const chain = createDevnetChain({ seed: 5 });
chain.advance(BLOCKS);
const server = await startDevnetServer(chain, { port: 0 });
const dir = mkdtempSync(join(tmpdir(), "bench-dapps-"));
const { config, stores, pg, ch, pipeline, ingestor, drain } = await startBenchPipeline({
  chain,
  server,
  dir,
  log,
});
await ingestHistory({ ingestor, drain }, BLOCKS);

const { app, base, headers } = await startBenchApp({
  config: { ...config, PUBLIC_RPM: 100_000_000, EVENTS_WATERMARK_CACHE_MS: 200 },
  log,
  pg,
  ch,
});

// Live ingest: the devnet adds a block every 50 ms and the pipeline follows it while routes are measured.
const live = produceLive(chain, ingestor, 50);

const routes: { label: string; path: string; field: string; key?: boolean }[] = [
  { label: "GET /dapps/furnace/burns", path: "/dapps/furnace/burns?limit=20", field: "burns" },
  { label: "GET /dapps/chainreaction/games", path: "/dapps/chainreaction/games?limit=20", field: "games" },
  {
    label: "GET /dapps/chainreaction/leaderboard",
    path: "/dapps/chainreaction/leaderboard?limit=20",
    field: "entries",
  },
  { label: "GET /dapps/elexium/swaps", path: "/dapps/elexium/swaps?limit=20", field: "swaps" },
  {
    label: "GET /dapps/alphbanx/operations",
    path: "/dapps/alphbanx/operations?limit=20",
    field: "operations",
    key: true,
  },
  {
    label: "GET /dapps/dia-oracle/history",
    path: "/dapps/dia-oracle/history?key=ALPH/USD&limit=20",
    field: "values",
  },
  {
    label: "GET /dapps/dia-oracle/randomness",
    path: "/dapps/dia-oracle/randomness?limit=20",
    field: "rounds",
  },
];

for (const r of routes) {
  const h = r.key ? headers : {};
  // The cursors of up to 50 pages of one snapshot: each request of the run reads another page.
  const paths = [r.path];
  let next: string | null = null;
  for (let i = 0; i < 50; i++) {
    const res = await app.inject({ url: `${paths[paths.length - 1]}`, headers: h });
    next = res.json().nextKey ?? null;
    if (!next) break;
    paths.push(`${r.path}&nextKey=${encodeURIComponent(next)}`);
  }
  const body = (await app.inject({ url: r.path, headers: h })).body;
  const rows = (JSON.parse(body)[r.field] as unknown[]).length;
  const bare = await bareServer(body);
  // The API shares its thread with ingest and every processor: how long that thread was held meanwhile.
  const loopDelay = watchLoopDelay();
  const measured: LoadResult[] = [
    await load(`${r.label} (${paths.length} pages)`, base, { headers: h, paths }),
    await load(`${r.label} (first page)`, `${base}${r.path}`, { headers: h }),
  ];
  printTable(
    `${r.label}: ${rows} rows, ${body.length} bytes, ingest live`,
    measured,
    await load("bare route, same bytes", bare.url),
  );
  loopDelay("over the runs");
  await bare.close();
}

await live.stop();
await app.close();
await pipeline.stop();
await stores.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
