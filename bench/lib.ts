/**
 * Bench helpers: a bounded autocannon run, and a bare Fastify server that serves given bytes
 * (the upper bound each bench prints beside its own figures, measured in the same run).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import autocannon from "autocannon";
import Fastify from "fastify";
import { buildApp } from "../api/app.ts";
import { createApiDeps } from "../api/deps.ts";
import type { ApiDeps, App } from "../api/types.ts";
import { registerDevnetDapps } from "../devnet/register.ts";
import type { DevnetChain } from "../devnet/types.ts";
import { type Config, loadConfig } from "../lib/config.ts";
import { createKeysRepo } from "../lib/keys/repo.ts";
import type { Logger } from "../lib/logger.ts";
import { createMetrics, type Metrics } from "../lib/metrics.ts";
import { prepareStores } from "../lib/migrate.ts";
import { bucketStart } from "../lib/prices/scales.ts";
import { loadCandlePairs } from "../lib/prices/watched.ts";
import { insertTrades, recomputeCandles } from "../lib/prices/writer.ts";
import type { Ch } from "../lib/stores/clickhouse.ts";
import { openStores, type Stores } from "../lib/stores/index.ts";
import type { Pg } from "../lib/stores/postgres.ts";
import { createIngestor, type Ingestor } from "../pipeline/ingest/ingest.ts";
import { createNodeClient } from "../pipeline/ingest/node-client.ts";
import {
  createPipelineDeps,
  ingestOptions,
  PROCESSORS,
  type ProcessorName,
  startPipeline,
} from "../pipeline/runtime.ts";

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
}): Promise<{ app: App; base: string; headers: Record<string, string>; deps: ApiDeps }> {
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
  const apiDeps = createApiDeps(config, { pg, ch }, log, deps.metrics);
  const app = await buildApp(apiDeps);
  const base = await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    app,
    base,
    headers: { "x-api-key": created.key, authorization: `Bearer ${created.key}` },
    deps: apiDeps,
  };
}

/** The processors a pipeline bench runs: every one, or those BENCH_PROCESSORS names (comma-separated; `-name` leaves one out). */
export function benchProcessors(): ProcessorName[] {
  const all = Object.keys(PROCESSORS) as ProcessorName[];
  const spec = (process.env.BENCH_PROCESSORS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (spec.length === 0) return all;
  for (const s of spec)
    if (!all.includes(s.replace(/^-/, "") as ProcessorName))
      throw new Error(`BENCH_PROCESSORS: unknown processor ${JSON.stringify(s)} (known: ${all.join(", ")})`);
  const chosen = spec.every((s) => s.startsWith("-"))
    ? all.filter((n) => !spec.includes(`-${n}`))
    : all.filter((n) => spec.includes(n));
  // series and holders hand their recomputes on: without the recompute processor that work would not be measured.
  for (const [first, then] of [
    ["series", "series-recompute"],
    ["holders", "holders-recompute"],
  ] as const)
    if (chosen.includes(first) && !chosen.includes(then))
      process.stderr.write(
        `BENCH_PROCESSORS: ${first} without ${then}: its recomputes are not run or measured\n`,
      );
  return chosen;
}

/**
 * Every processor over a simulated network's server, on the stores of `dir` (embedded unless `env` says
 * otherwise), with its dapps registered and the ingestor ready: what the processor benches share.
 * `onStores` runs before the processors start (to wrap the stores, for example).
 */
export async function startBenchPipeline(options: {
  chain: DevnetChain;
  server: { nodeUrl: string; explorerUrl: string };
  dir: string;
  log: Logger;
  env?: Record<string, string>;
  onStores?: (stores: Stores) => void;
  /** The clock of PGlite's `engineMs` (wall time by default). */
  pgEngineClock?: () => number;
}) {
  const { chain, server, log } = options;
  const config = loadConfig({
    DATA_DIR: options.dir,
    LOG_LEVEL: "warn",
    NODE_URL: server.nodeUrl,
    EXPLORER_URL: server.explorerUrl,
    INGEST_START_TS: String(chain.options.startTimestamp - 1),
    CONFIRMATIONS: "0",
    INGEST_WINDOW_MS: "600000",
    INGEST_CONCURRENCY: "2",
    KAFKA_BROKERS: "",
    ...options.env,
  });
  const metrics = createMetrics();
  const stores = await openStores(config, log, { command: "bench", pgEngineClock: options.pgEngineClock });
  await prepareStores(stores, log);
  await registerDevnetDapps(stores.pg!, chain);
  options.onStores?.(stores);
  const deps = await createPipelineDeps({ config, log, metrics }, stores);
  const pipeline = await startPipeline(deps, {
    processors: benchProcessors(),
    ingest: false,
  });
  const ingestor = createIngestor(
    deps,
    createNodeClient({ url: config.NODE_URL, apiKey: "", log }),
    ingestOptions(config),
  );
  /** Waits until every group has handled everything published (two empty lag reads in a row). */
  const drain = async (pollMs = 20) => {
    let zeros = 0;
    while (zeros < 2) {
      zeros = (await deps.bus.lag()) === 0 ? zeros + 1 : 0;
      if (zeros < 2) await new Promise((r) => setTimeout(r, pollMs));
    }
  };
  return { config, metrics, stores, pg: stores.pg!, ch: stores.ch!, deps, pipeline, ingestor, drain };
}

/** Seconds spent in `handle` per processor (sum of the batch histogram). */
export async function handleSeconds(metrics: Metrics): Promise<Map<string, number>> {
  const m = await metrics.processorBatchSeconds.get();
  const out = new Map<string, number>();
  for (const v of m.values)
    if (v.metricName?.endsWith("_sum")) out.set(String(v.labels.processor), Number(v.value));
  return out;
}

/** "<blocks/s> blocks/s (<s> s in handle)" of a processor, from its handle time in the metrics. */
export async function handleRates(metrics: Metrics, blocks: number): Promise<(processor: string) => string> {
  const handle = await handleSeconds(metrics);
  return (processor) => {
    const s = handle.get(processor) ?? Number.NaN;
    return `${(blocks / s).toFixed(0).padStart(7)} blocks/s  (${s.toFixed(2)} s in handle)`;
  };
}

/**
 * The first watched devnet DEX pair, with at least `n` 1m candles: synthetic trades one minute apart after the
 * chain's own (copies of one of its real trades), recomputed like the candles processor does.
 */
export async function ensureCandles(pg: Pg, ch: Ch, n: number) {
  const [pair] = await pg.query<{ id: number; source_id: string; pair_symbol: string }>(
    "bench_pair",
    "SELECT id, source_id, pair_symbol FROM price_pairs WHERE source_id = 'devnet-dex' ORDER BY id LIMIT 1",
  );
  if (!pair) throw new Error("no watched devnet pair: devnet/register.ts did not register the pools");
  const market = `${pair.source_id}:${pair.pair_symbol}`;
  const [span] = await ch.query<{ n: string; hi: string }>(
    "bench_span",
    "SELECT count() AS n, max(t) AS hi FROM candles FINAL WHERE market = {m:String} AND scale = '1m' AND deleted = 0",
    { m: market },
  );
  const have = Number(span?.n ?? 0);
  if (have >= n) return pair;
  const [sample] = await ch.query<Record<string, unknown>>(
    "bench_sample",
    "SELECT * EXCEPT (ts, id) FROM trades FINAL WHERE pool = {p:String} AND main_chain LIMIT 1",
    { p: pair.pair_symbol },
  );
  // With no candle yet, max(t) is 0: the synthetic ones start at the clock instead.
  const start = bucketStart("1m", have > 0 ? Number(span?.hi) : Date.now()) + 60_000;
  const rows = Array.from({ length: n - have + 5 }, (_, i) => ({
    ...sample,
    ts: start + i * 60_000 + 1_000,
    id: `bench-${String(i).padStart(6, "0")}`,
  }));
  // biome-ignore lint/suspicious/noExplicitAny: rows copy a real trade's columns
  await insertTrades(ch, rows as any);
  await recomputeCandles(
    ch,
    await loadCandlePairs(pg, [pair.id]),
    new Map([[pair.pair_symbol, { lo: start, hi: start + rows.length * 60_000 }]]),
  );
  return pair;
}

/**
 * Storage of every table of this database after merging its parts (OPTIMIZE … FINAL): rows, compressed and
 * uncompressed bytes, and compressed bytes per row, per event and per raw block, for the sizing guide; then the
 * twelve biggest columns with their codec (where the bytes are).
 */
export async function storageReport(ch: Ch, events: number, blocks: number): Promise<string> {
  const tables = await ch.query<{ name: string }>(
    "bench_tables",
    "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree%' ORDER BY name",
  );
  for (const t of tables) await ch.command("bench_optimize", `OPTIMIZE TABLE ${t.name} FINAL`);
  const parts = await ch.query<{ table: string; rows: string; compressed: string; uncompressed: string }>(
    "bench_parts",
    `SELECT table, sum(rows) AS rows, sum(data_compressed_bytes) AS compressed,
            sum(data_uncompressed_bytes) AS uncompressed
     FROM system.parts WHERE database = currentDatabase() AND active GROUP BY table ORDER BY compressed DESC`,
  );
  const kib = (n: number) => (n / 1024).toFixed(0).padStart(8);
  // A run without the events sink (BENCH_PROCESSORS) has no events to divide by.
  const perEvent = (n: number) => (events > 0 ? (n / events).toFixed(0) : "-").padStart(8);
  // A run with raw-sink off stores no raw blocks: "-", not Infinity.
  const perBlock = (n: number) => (blocks > 0 ? (n / blocks).toFixed(0) : "-").padStart(8);
  const lines = [
    `  storage after merges (${events} events, ${blocks} raw blocks):`,
    `  ${"table".padEnd(28)} ${"rows".padStart(9)} ${"KiB".padStart(8)} ${"raw KiB".padStart(8)} ${"B/row".padStart(7)} ${"B/event".padStart(8)} ${"B/block".padStart(8)}`,
  ];
  let total = 0;
  for (const p of parts) {
    const [rows, bytes] = [Number(p.rows), Number(p.compressed)];
    total += bytes;
    lines.push(
      `  ${p.table.padEnd(28)} ${String(rows).padStart(9)} ${kib(bytes)} ${kib(Number(p.uncompressed))} ${(rows ? bytes / rows : 0).toFixed(0).padStart(7)} ${perEvent(bytes)} ${perBlock(bytes)}`,
    );
  }
  lines.push(
    `  ${"all tables".padEnd(28)} ${"".padStart(9)} ${kib(total)} ${"".padStart(8)} ${"".padStart(7)} ${perEvent(total)} ${perBlock(total)}`,
  );
  // Where the bytes are: the biggest columns, with their codec (the default is LZ4).
  const columns = await ch.query<{
    table: string;
    name: string;
    codec: string;
    compressed: string;
    uncompressed: string;
  }>(
    "bench_columns",
    `SELECT table, name, compression_codec AS codec, data_compressed_bytes AS compressed,
            data_uncompressed_bytes AS uncompressed
     FROM system.columns WHERE database = currentDatabase() ORDER BY data_compressed_bytes DESC LIMIT 12`,
  );
  lines.push(`  the biggest columns:`);
  lines.push(
    `  ${"table.column".padEnd(40)} ${"KiB".padStart(8)} ${"raw KiB".padStart(8)} ${"B/event".padStart(8)}  codec`,
  );
  for (const c of columns)
    lines.push(
      `  ${`${c.table}.${c.name}`.padEnd(40)} ${kib(Number(c.compressed))} ${kib(Number(c.uncompressed))} ${perEvent(Number(c.compressed))}  ${c.codec || "default (LZ4)"}`,
    );
  return lines.join("\n");
}

/** Ingests the whole simulated history and waits for every processor; prints how long it took. */
export async function ingestHistory(
  bench: { ingestor: Ingestor; drain: () => Promise<void> },
  blocks: number,
) {
  const t0 = performance.now();
  while (!(await bench.ingestor.runOnce()).caughtUp) {}
  await bench.drain();
  process.stdout.write(
    `history: ${blocks} blocks ingested and processed in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  );
}

/**
 * Live ingest while routes are measured: the simulated network adds a block every `everyMs` and the pipeline
 * follows it. `stop` ends it and returns how many blocks were made.
 */
export function produceLive(chain: DevnetChain, ingestor: Ingestor, everyMs: number) {
  let live = true;
  let made = 0;
  const producer = (async () => {
    while (live) {
      chain.advance(1);
      made++;
      await ingestor.runOnce();
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    made: () => made,
    async stop() {
      live = false;
      await producer;
      return made;
    },
  };
}

/** The event loop's delay over a measured section (the API shares its thread with ingest and every processor). */
export function watchLoopDelay() {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  return (what: string) => {
    h.disable();
    const ms = (ns: number) => (ns / 1e6).toFixed(1);
    process.stdout.write(
      `event loop delay ${what}: p50 ${ms(h.percentile(50))} ms, p99 ${ms(h.percentile(99))} ms, max ${ms(h.max)} ms\n`,
    );
  };
}

/**
 * Synthetic events numbered [from, from + count): about 3 events per transaction, 16 chains, one block every 8 s per
 * chain from `start` (ms), ids and documents in the service's format (bench:events, bench:reads).
 */
export async function fillSyntheticEvents(
  ch: Ch,
  o: { from: number; count: number; start: number },
): Promise<void> {
  await ch.command(
    "bench_fill",
    `INSERT INTO events
   SELECT
     concat(leftPad(toString(ts), 13, '0'), '-', leftPad(toString(chain), 2, '0'), '-', leftPad(toString(height), 10, '0'),
            '-', leftPad(toString(tx % 4), 5, '0'), '-', leftPad(toString(number % 3), 4, '0')) AS id,
     chain AS chain_index, lower(hex(SHA256(concat('b', toString(chain), '-', toString(height))))) AS block_hash,
     height AS block_height, fromUnixTimestamp64Milli(toInt64(ts)) AS timestamp,
     lower(hex(SHA256(concat('t', toString(tx))))) AS tx_id, tx % 4 AS tx_index, number % 3 AS event_index,
     ['alephium', 'ayin', 'elexium'][1 + number % 3] AS dapp_id, ['transfer', 'dex', 'token'][1 + number % 3] AS category,
     ['send', 'buy', 'genesis_mint'][1 + number % 3] AS sub_kind, 'transfer' AS type, number % 3 = 0 AS is_main,
     concat('1From', toString(number % 5000)) AS from, concat('1To', toString(number % 7000)) AS to, '' AS with,
     concat('tok', toString(number % 50)) AS token_address, repeat('0', 64) AS token_id, toUInt256(number * 1000) AS amount,
     '' AS contract_address, NULL AS contract_event_index, '{"n":1}' AS payload, NULL AS payload_ref,
     true AS main_chain,
     concat('{"id":"', id, '","chain_index":', toString(chain_index), ',"block_hash":"', block_hash,
            '","block_height":', toString(block_height), ',"timestamp":', toString(ts), ',"tx_id":"', tx_id,
            '","tx_index":', toString(tx_index), ',"event_index":', toString(event_index), ',"dapp_id":"', dapp_id,
            '","category":"', category, '","sub_kind":"', sub_kind, '","type":"transfer","is_main":',
            if(is_main, 'true', 'false'), ',"from":"', from, '","to":"', to, '","with":"","token_address":"',
            token_address, '","token_id":"', token_id, '","amount":"', toString(amount),
            '","contract_address":"","contract_event_index":null,"payload":{"n":1},"payload_ref":null}') AS doc,
     1 AS version
   FROM (SELECT number, intDiv(number, 3) AS tx, intDiv(tx, 4) AS blk, blk % 16 AS chain, intDiv(blk, 16) AS height,
                {start:UInt64} + height * 8000 + chain * 500 AS ts FROM numbers({from:UInt64}, {count:UInt64}))`,
    o,
  );
}
