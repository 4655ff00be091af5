/**
 * Bench (decorated explorer proxies): each decorated route of the real app (embedded stores with the devnet
 * chain's events, auth, rate limits, one events + one labels query) beside the same request sent straight to
 * the simulated explorer, in the same run. The overhead is the p50 difference.
 * Run: npx tsx bench/decorated.ts   (BENCH_SECONDS=5 per measurement, BENCH_CONNECTIONS=10 by default)
 * With embedded stores (chDB, PGlite) and 10 connections the p50 is mostly waiting for the events query;
 * BENCH_CONNECTIONS=1 shows the per-request overhead.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain, type DevnetBlock } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { loadConfig } from "../lib/config.ts";
import { writeEventsBatch } from "../lib/events/writer.ts";
import { createLogger } from "../lib/logger.ts";
import { createMetrics } from "../lib/metrics.ts";
import { prepareStores } from "../lib/migrate.ts";
import { openStores } from "../lib/stores/index.ts";
import { createStaticDappBook } from "../pipeline/normalize/index.ts";
import { toEventsMessage } from "../pipeline/processors/normalize.ts";
import { type LoadResult, load, startBenchApp } from "./lib.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const dir = mkdtempSync(join(tmpdir(), "bench-decorated-"));
const log = createLogger({ level: "silent" });
const chain = createDevnetChain({ seed: 3 });
chain.advance(400);
const devnet = await startDevnetServer(chain, { port: 0 });
const config = loadConfig({
  DATA_DIR: dir,
  LOG_LEVEL: "silent",
  PUBLIC_RPM: "1000000",
  POSTGRES_URL: process.env.POSTGRES_URL ?? "",
  EXPLORER_URL: devnet.explorerUrl,
});
const stores = await openStores(config, log, { command: "bench" });
await prepareStores(stores, log);
const pg = stores.pg!;
const ch = stores.ch!;
const metrics = createMetrics();

// Every main-chain block's events, as the pipeline's normalizer and events sink write them.
const blocks: DevnetBlock[] = [];
for (let c = 0; c < 16; c++) blocks.push(...chain.mainChain(c));
const ctx = { dapps: createStaticDappBook([]), maxPayloadBytes: 4096 };
const messages = blocks.map((b, i) => {
  const raw = chain.rawBlock(b.block.hash)!;
  const m = {
    kind: "block" as const,
    chain_index: b.chainIndex,
    hash: b.block.hash,
    height: b.block.height,
    timestamp: b.block.timestamp,
    seq: i + 1,
    block_json: JSON.stringify(raw.block),
    events_json: JSON.stringify(raw.events),
  };
  return toEventsMessage(m, ctx);
});
await writeEventsBatch({ ch, metrics }, messages);

const { app, base, headers } = await startBenchApp({ config, log, pg, ch, metrics });

const token = chain.tokens()[0]!;
const busy = blocks.filter((b) => b.block.transactions.length >= 4).at(-1)!;
const pairs: [string, string, string][] = [
  ["GET /transaction/{id}", `/transaction/${token.mintTxId}`, `/transactions/${token.mintTxId}`],
  ["GET /block/{hash}", `/block/${token.mintBlockHash}`, `/blocks/${token.mintBlockHash}`],
  [
    "GET /block/{hash}/transactions",
    `/block/${busy.block.hash}/transactions`,
    `/blocks/${busy.block.hash}/transactions`,
  ],
  [
    "GET /addresses/{a}/transactions",
    `/addresses/${token.minter}/transactions`,
    `/addresses/${token.minter}/transactions`,
  ],
  [
    "GET /addresses/{a}/tokens/{t}/transactions",
    `/addresses/${token.minter}/tokens/${token.id}/transactions`,
    `/addresses/${token.minter}/tokens/${token.id}/transactions`,
  ],
  ["GET /token/{t}/transactions", `/token/${token.id}/transactions`, `/tokens/${token.id}/transactions`],
];

const rows: { label: string; ours: LoadResult; direct: LoadResult; items: number }[] = [];
for (const [label, ours, theirs] of pairs) {
  const check = await fetch(`${base}${ours}`, { headers });
  const body = (await check.json()) as unknown;
  if (check.status !== 200) throw new Error(`${label}: ${check.status} ${JSON.stringify(body)}`);
  const items = Array.isArray(body) ? body.length : 1;
  const o = await load(label, `${base}${ours}`, { headers, seconds, connections });
  const d = await load(`${label} (explorer)`, `${devnet.explorerUrl}${theirs}`, { seconds, connections });
  rows.push({ label, ours: o, direct: d, items });
}

process.stdout.write(
  `\nDecorated explorer routes vs the same request straight to the simulated explorer ` +
    `(${pg.kind}, ${seconds} s per run, ${connections} connections, app + explorer + load generator in one process)\n`,
);
process.stdout.write(
  `${"route".padEnd(44)} ${"items".padStart(5)}  ${"req/s".padStart(7)} ${"p50".padStart(5)} ${"p99".padStart(5)}` +
    `  | explorer ${"req/s".padStart(7)} ${"p50".padStart(5)} ${"p99".padStart(5)}  | p50 overhead  non-2xx\n`,
);
for (const { label, ours, direct, items } of rows) {
  process.stdout.write(
    `${label.padEnd(44)} ${String(items).padStart(5)}  ${String(ours.rps).padStart(7)} ${String(ours.p50).padStart(5)} ` +
      `${String(ours.p99).padStart(5)}  |          ${String(direct.rps).padStart(7)} ${String(direct.p50).padStart(5)} ` +
      `${String(direct.p99).padStart(5)}  | ${`${ours.p50 - direct.p50} ms`.padStart(12)}  ${String(ours.non2xx + direct.non2xx).padStart(7)}\n`,
  );
}

await app.close();
await devnet.close();
await stores.close();
rmSync(dir, { recursive: true, force: true });
