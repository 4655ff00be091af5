/**
 * Bench (pipeline): end-to-end blocks/s and events/s from the simulated network through ingest,
 * the bus, normalize and the sinks into ClickHouse, beside chDB's insert rate of the same event rows
 * alone (same batch sizes) in the same run. Embedded bus by default; Kafka too when KAFKA_BROKERS is set.
 * The embedded pass runs twice back to back, with the dapp decoders off and on (DAPP_DECODERS), and prints the
 * normalize processor's time per block in each: the decoders' added cost. Each pass also prints the main thread's
 * event-loop delay over the run (what a request to the embedded API waits meanwhile) and its GC pauses.
 * Run: npm run bench:pipeline   (BENCH_BLOCKS=4000; BENCH_CHAIN=mainnet runs on mainnet-shaped blocks and prints the
 * whole chain's time at the run's rate, with ingest's windows of a real backfill (the configuration's defaults, not
 * startBenchPipeline's smaller rounds); BENCH_PROFILE=1 adds each processor's handle time, the
 * statements' time and chDB CPU by label, and chDB's counters (query and merge CPU) over the run;
 * BENCH_PROCESSORS=holders,holders-recompute runs only those processors (`-holders` every one but it: a processor's
 * marginal cost; series and holders hand their recomputes to series-recompute and holders-recompute, so name those
 * with them); BENCH_NODE_DELAY_MS=500 makes the node double answer each window of blocks that much later, as
 * a remote node would; INGEST_* settings pass through (INGEST_PREFETCH=false, INGEST_WINDOW_MS=120000);
 * BENCH_CPU_PROFILE=<dir> writes a CPU profile of each timed section there; CHDB_CONNECTIONS=1 runs on one chDB connection;
 * BENCH_ONLY=embedded runs the embedded pass with the decoders on alone, BENCH_ONLY=kafka the Kafka pass alone). The embedded pass with the decoders on
 * ends with each table's storage after merges, per event and per raw block, and the biggest columns with their codec
 * (the sizing guide's figures).
 * The embedded pass with the decoders on also times the series processor's facts of the same blocks alone
 * (`factsOfMessage`, pure), and the events sink's rows of them with their insert payload (`eventRows`). Each pass
 * also prints a second bound: chDB's insert of every row the run stored (all tables, not only the events), alone,
 * and the pipeline's share of it (`allRowsBound`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { DEVNET_MAINNET_PROFILE } from "../devnet/types.ts";
import type { RawBlock } from "../lib/chain/types.ts";
import { CONFIG_SPEC, type Config } from "../lib/config.ts";
import { eventRows } from "../lib/events/writer.ts";
import { createLogger } from "../lib/logger.ts";
import { migrateClickHouse } from "../lib/migrate.ts";
import { factsOfMessage } from "../lib/series/facts.ts";
import { type Ch, createClickHouse, insertPayload } from "../lib/stores/clickhouse.ts";
import { stageDir } from "../lib/stores/index.ts";
import { normalizeBlock } from "../pipeline/normalize/index.ts";
import { blockEventsMessage, loadNormalizeState } from "../pipeline/processors/normalize.ts";
import { handleSeconds, startBenchPipeline, storageReport } from "./lib.ts";
import { chdbEvents, profileStores, startCpuProfile } from "./profile.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4000);
// The Kafka run ingests the same blocks (BENCH_KAFKA_BLOCKS: fewer). librdkafka's mock cluster keeps a bounded
// log per partition: a run much larger than 4,000 blocks may fall off it ("offset out of range").
const KAFKA_BLOCKS = Number(process.env.BENCH_KAFKA_BLOCKS ?? BLOCKS);
// BENCH_CHAIN=mainnet: blocks shaped like mainnet's (DEVNET_MAINNET_PROFILE: most blocks carry only the coinbase,
// about 2 events per block); the run then also prints the whole chain's time at its rate. Default: busy blocks.
const CHAIN = process.env.BENCH_CHAIN ?? "busy";
if (CHAIN !== "busy" && CHAIN !== "mainnet")
  throw new Error(`BENCH_CHAIN is ${CHAIN}: allowed are busy, mainnet`);
/** Mainnet's blocks (16 chains' heights summed, 2026-11; docs/sizing.md), and the goal for a whole backfill. */
const MAINNET_BLOCKS = 133_000_000;
const WHOLE_CHAIN_GOAL_H = 24;
const chain = createDevnetChain(
  CHAIN === "mainnet" ? { seed: 3, ...DEVNET_MAINNET_PROFILE } : { seed: 3, txPerBlock: [2, 8] },
);
chain.advance(BLOCKS);
// BENCH_NODE_DELAY_MS: the node's answer time for a window of blocks (a remote node's; 0 = the double's own).
const NODE_DELAY_MS = Number(process.env.BENCH_NODE_DELAY_MS ?? 0);
const server = await startDevnetServer(chain, { port: 0, blocksWithEventsDelayMs: NODE_DELAY_MS });
const log = createLogger({ level: "warn" });
const PROFILE = process.env.BENCH_PROFILE === "1";
const ONLY = process.env.BENCH_ONLY ?? "";

/** The whole mainnet chain at this run's rate, beside the goal (24 h on this machine: 1,540 blocks/s). */
function wholeChain(blocks: number, events: number, seconds: number): string[] {
  let coinbaseOnly = 0;
  for (let c = 0; c < 16; c++)
    for (const b of chain.mainChain(c))
      if (b.block.height > 0 && b.block.transactions.length === 1) coinbaseOnly++;
  const rate = blocks / seconds;
  const hours = MAINNET_BLOCKS / rate / 3600;
  return [
    `  mainnet-shaped blocks:  ${(events / blocks).toFixed(2)} events per block, ${((coinbaseOnly / blocks) * 100).toFixed(0)}% of blocks coinbase only`,
    `  whole chain (${(MAINNET_BLOCKS / 1e6).toFixed(0)} M blocks) at ${rate.toFixed(0)} blocks/s: ${hours.toFixed(1)} h (goal ${WHOLE_CHAIN_GOAL_H} h: ${(MAINNET_BLOCKS / (WHOLE_CHAIN_GOAL_H * 3600)).toFixed(0)} blocks/s); wall time, so a loaded machine reads slower`,
  ];
}

async function run(mode: "embedded" | "kafka", target: number, decoders = true) {
  const dir = mkdtempSync(join(tmpdir(), `bench-pipeline-${mode}-`));
  let profile: ReturnType<typeof profileStores> | undefined;
  const { ch, stores, deps, pipeline, ingestor, drain, metrics, config } = await startBenchPipeline({
    chain,
    server,
    dir,
    log,
    onStores: (s) => {
      if (PROFILE) profile = profileStores(s);
    },
    env: {
      CONFIRMATIONS: String(Math.max(0, Math.floor((BLOCKS - target) / 16))),
      KAFKA_BROKERS: mode === "kafka" ? (process.env.KAFKA_BROKERS ?? "") : "",
      KAFKA_TOPIC_PREFIX: `bench${Date.now()}.`,
      DAPP_DECODERS: String(decoders),
      // On mainnet-shaped blocks, ingest's windows are a real backfill's (the configuration's defaults: 30 min windows,
      // 4 at once, rounds of up to 14,400 blocks), as the whole chain's time at the run's rate assumes; the busy chain
      // keeps startBenchPipeline's smaller rounds (10 min, 2 at once). Ingest's own settings still win.
      ...(CHAIN === "mainnet"
        ? {
            INGEST_WINDOW_MS: String(CONFIG_SPEC.INGEST_WINDOW_MS.default),
            INGEST_CONCURRENCY: String(CONFIG_SPEC.INGEST_CONCURRENCY.default),
          }
        : {}),
      // Ingest's own settings pass through (INGEST_WINDOW_MS, INGEST_PREFETCH ...): rounds of other sizes, prefetch
      // off; and CHDB_CONNECTIONS.
      ...Object.fromEntries(
        Object.entries(process.env).filter(
          ([k, v]) => (k.startsWith("INGEST_") || k === "CHDB_CONNECTIONS") && v !== undefined,
        ),
      ),
    },
  });
  const cpuDir = process.env.BENCH_CPU_PROFILE;
  const stopCpu = cpuDir
    ? await startCpuProfile(
        join(cpuDir, `pipeline-${mode}-${decoders ? "on" : "off"}-${Date.now()}.cpuprofile`),
      )
    : undefined;
  const chEvents = () => chdbEvents(ch);
  const eventsBefore = PROFILE ? await chEvents() : undefined;
  // The main thread's garbage-collection pauses over the timed section (scavenges and mark-compacts).
  let gcMs = 0;
  let gcCount = 0;
  let gcMax = 0;
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      gcCount++;
      gcMax = Math.max(gcMax, entry.duration);
    }
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  // How long a request arriving meanwhile would wait for the main thread (the API's, in the embedded process).
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let rounds = 0;
  while (!(await ingestor.runOnce()).caughtUp) rounds++;
  await drain(50);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  gcObserver.disconnect();
  loopDelay.disable();
  await stopCpu?.();
  const [counts] = await ch.query<{ blocks: string; events: string }>(
    "bench_counts",
    "SELECT (SELECT count() FROM raw_blocks) AS blocks, (SELECT count() FROM events) AS events",
  );
  const blocks = Number(counts?.blocks);
  const events = Number(counts?.events);
  const handled = await handleSeconds(metrics);
  const nodeWait = Number((await metrics.ingestNodeWaitSeconds.get()).values[0]?.value ?? 0);
  const normalizeSeconds = handled.get("normalize") ?? Number.NaN;
  if (profile) {
    const byProcessor = [...handled.entries()].sort((a, b) => b[1] - a[1]);
    process.stdout.write(
      `\n  seconds in handle per processor (${seconds.toFixed(2)} s run): ${byProcessor.map(([n, v]) => `${n} ${v.toFixed(2)}`).join(", ")}\n${profile.table(seconds)}\n`,
    );
    // chDB's own counters over the timed section: CPU in queries against CPU in background merges.
    const after = await chEvents();
    const delta = (name: string) => (after.get(name) ?? 0) - (eventsBefore?.get(name) ?? 0);
    process.stdout.write(
      `  chDB counters over the run: queries ${delta("Query")}, inserted rows ${delta("InsertedRows")}, ` +
        `merges ${delta("Merge")} (${delta("MergedRows")} rows, ${(delta("MergeTotalMilliseconds") / 1000).toFixed(2)} s), ` +
        `user CPU ${(delta("UserTimeMicroseconds") / 1e6).toFixed(2)} s, system CPU ${(delta("SystemTimeMicroseconds") / 1e6).toFixed(2)} s, ` +
        `real ${(delta("RealTimeMicroseconds") / 1e6).toFixed(2)} s (thread time in queries and merges)\n`,
    );
  }

  // Upper bound: the same event rows inserted alone, in batches of the size the sink wrote.
  const rows = await ch.query<Record<string, unknown>>(
    "bench_rows",
    "SELECT * EXCEPT (timestamp), toUnixTimestamp64Milli(timestamp) AS timestamp, toString(amount) AS amount FROM events",
  );
  const batch = Math.max(1, Math.round(events / Math.max(1, rounds + 1)));
  // Into a copy of `events` alone, then into a copy that also feeds copies of `events_by_key` and
  // `event_ids_by_tx` through the same views the pipeline's inserts go through (migration 0015).
  const insertAlone = async (withLookup: boolean) => {
    const suffix = withLookup ? "_lk" : "";
    await ch.command("bench_copy", `CREATE TABLE events_copy${suffix} AS events`);
    if (withLookup) {
      await ch.command("bench_copy", "CREATE TABLE events_by_key_copy AS events_by_key");
      await ch.command("bench_copy", "CREATE TABLE event_ids_by_tx_copy AS event_ids_by_tx");
      await ch.command(
        "bench_copy",
        `CREATE MATERIALIZED VIEW events_by_key_copy_mv TO events_by_key_copy AS
         SELECT k.1 AS kind, k.2 AS key, id, cityHash64(block_hash) AS block, dapp_id, category, sub_kind, token_address,
                main_chain, version, payload_ref, doc
         FROM events_copy_lk
         ARRAY JOIN arrayDistinct(arrayFilter(x -> x.2 != '', [('address', from), ('address', to), ('token', token_address)])) AS k`,
      );
      await ch.command(
        "bench_copy",
        `CREATE MATERIALIZED VIEW event_ids_by_tx_copy_mv TO event_ids_by_tx_copy AS
         SELECT cityHash64(tx_id) AS tx, id FROM events_copy_lk WHERE tx_id != ''`,
      );
    }
    const t0 = performance.now();
    for (let i = 0; i < rows.length; i += batch)
      await ch.insert("bench_copy_insert", `events_copy${suffix}`, rows.slice(i, i + batch));
    return (performance.now() - t0) / 1000;
  };
  const aloneSeconds = await insertAlone(false);
  const insertSeconds = await insertAlone(true);
  for (const t of [
    "events_by_key_copy_mv",
    "event_ids_by_tx_copy_mv",
    "events_by_key_copy",
    "event_ids_by_tx_copy",
    "events_copy_lk",
    "events_copy",
  ])
    await ch.command("bench_copy_drop", `DROP TABLE IF EXISTS ${t}`);
  const all = await allRowsBound(ch, config, rounds + 1);

  process.stdout.write(
    [
      `\npipeline bench (${mode}, ${deps.bus.kind} bus, chDB, ${stores.pg?.kind}, dapp decoders ${decoders ? "on" : "off"}); ${blocks} blocks, ${events} events, ${rounds + 1} ingest rounds${NODE_DELAY_MS ? `, node answers each window ${NODE_DELAY_MS} ms late` : ""}`,
      `  normalize:              ${((normalizeSeconds / blocks) * 1000).toFixed(3).padStart(8)} ms per block in handle (${normalizeSeconds.toFixed(2)} s)`,
      `  ingest waited for the node: ${nodeWait.toFixed(2)} s of the run`,
      `  end to end:             ${(blocks / seconds).toFixed(0).padStart(8)} blocks/s ${(events / seconds).toFixed(0).padStart(8)} events/s  (${seconds.toFixed(2)} s; process CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s, ${(((cpu.user + cpu.system) / 1e6 / seconds) * 100).toFixed(0)}% of one core)`,
      `  event-loop delay:         p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms (what a request waits for the main thread)`,
      `  main thread in GC:        ${(gcMs / 1000).toFixed(2)} s in ${gcCount} pauses (${((gcMs / 1000 / seconds) * 100).toFixed(0)}% of the run), the longest ${gcMax.toFixed(0)} ms`,
      `  chDB insert alone:      ${"".padStart(8)}          ${(events / insertSeconds).toFixed(0).padStart(8)} events/s  (${insertSeconds.toFixed(2)} s, batches of ${batch}, with the lookup views)`,
      `  chDB insert alone:      ${"".padStart(8)}          ${(events / aloneSeconds).toFixed(0).padStart(8)} events/s  (${aloneSeconds.toFixed(2)} s, events table only)`,
      `  pipeline / insert bound: ${((insertSeconds / seconds) * 100).toFixed(1)}%`,
      `  chDB insert of every row the run wrote, alone: ${all.rows} rows in ${all.seconds.toFixed(2)} s (${all.tables} tables, ${rounds + 1} batches each; the biggest: ${all.biggest})`,
      `  pipeline / insert bound of all its rows: ${((all.seconds / seconds) * 100).toFixed(1)}%`,
      ...(CHAIN === "mainnet" ? wholeChain(blocks, events, seconds) : []),
      "",
    ].join("\n"),
  );
  if (mode === "embedded" && decoders) {
    // The pure normalizer alone over the same blocks, with the saved state, with and without the decoders.
    const state = await loadNormalizeState(deps.pg);
    const raws: RawBlock[] = [];
    for (let c = 0; c < 16; c++) for (const b of chain.mainChain(c)) raws.push(chain.rawBlock(b.block.hash)!);
    const ctx = (withDecoders: boolean) => ({
      dapps: state.dapps,
      pools: state.pools,
      factories: state.factories,
      decoders: withDecoders ? state.decoders : undefined,
      maxPayloadBytes: 4096,
    });
    const time = (withDecoders: boolean) => {
      const t0 = performance.now();
      for (let k = 0; k < 3; k++) for (const raw of raws) normalizeBlock(raw, ctx(withDecoders));
      return (performance.now() - t0) / (3 * raws.length);
    };
    const [off, on, off2, on2] = [time(false), time(true), time(false), time(true)];
    process.stdout.write(
      `  normalizeBlock alone (${raws.length} blocks × 3, back to back twice): decoders off ${((off + off2) / 2).toFixed(3)} ms/block, on ${((on + on2) / 2).toFixed(3)} ms/block (runs: ${off.toFixed(3)}/${on.toFixed(3)}, ${off2.toFixed(3)}/${on2.toFixed(3)})\n`,
    );
    // The series processor's facts of the same blocks' events messages alone (pure), three times back to back twice.
    const messages = raws.map((raw, i) =>
      blockEventsMessage(
        {
          chain_index: raw.chainIndex,
          hash: raw.block.hash,
          height: raw.block.height,
          timestamp: raw.block.timestamp,
          seq: i + 1,
        },
        normalizeBlock(raw, ctx(true)),
      ),
    );
    const factsTime = () => {
      const t0 = performance.now();
      let rows = 0;
      for (let k = 0; k < 3; k++) for (const m of messages) rows += factsOfMessage(m).length;
      return { ms: (performance.now() - t0) / (3 * messages.length), rows: rows / 3 };
    };
    const [f1, f2] = [factsTime(), factsTime()];
    process.stdout.write(
      `  series facts alone (factsOfMessage, the same blocks × 3, twice): ${((f1.ms + f2.ms) / 2).toFixed(3)} ms/block, ${f1.rows} rows (runs: ${f1.ms.toFixed(3)}, ${f2.ms.toFixed(3)})\n`,
    );
    // The events sink's rows of the same messages and their insert payload (JSONEachRow bytes), alone.
    const rowsTime = async () => {
      const t0 = performance.now();
      let bytes = 0;
      for (let k = 0; k < 3; k++)
        for (let i = 0; i < messages.length; i += 500) {
          const rows = messages.slice(i, i + 500).flatMap((m) => eventRows(m));
          bytes += (await insertPayload(rows)).length;
        }
      return { ms: (performance.now() - t0) / (3 * messages.length), bytes: bytes / 3 };
    };
    const [r1, r2] = [await rowsTime(), await rowsTime()];
    process.stdout.write(
      `  event rows alone (eventRows and their insert payload, the same blocks × 3, twice): ${((r1.ms + r2.ms) / 2).toFixed(3)} ms/block, ${(r1.bytes / 1e6).toFixed(1)} MB (runs: ${r1.ms.toFixed(3)}, ${r2.ms.toFixed(3)})\n`,
    );
  }
  await pipeline.stop();
  // Storage per table of the realistic stream, for the sizing guide (after the timed part; merges first).
  if (mode === "embedded" && decoders) process.stdout.write(`${await storageReport(ch, events, blocks)}\n`);
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A second bound, of the whole pipeline's writes: every row the run stored, table by table, inserted alone into a new
 * database of the same chDB directory with the same migrations (so its views fill the event lookups and the outputs'
 * balance moves, as in the run), in as many batches as the run had ingest rounds. Rows a view wrote are left to the
 * view (holder_moves: only the spends' moves are inserted). Columns with a DEFAULT are left to it, as the processors
 * leave them. What the pipeline does besides writing rows (decoding, reads, recomputes) is not in it.
 */
async function allRowsBound(ch: Ch, config: Config, batches: number) {
  const database = `${ch.database}_bound`;
  const bound = await createClickHouse({
    url: "",
    user: "",
    password: "",
    dataDir: stageDir(config, "chdb"),
    connections: config.CHDB_CONNECTIONS,
    database,
    log,
  });
  try {
    await migrateClickHouse(bound, log);
    const viewTargets = await ch.query<{ target: string }>(
      "bench_view_targets",
      `SELECT arrayJoin(extractAll(create_table_query, 'TO [^ .]+[.]([A-Za-z0-9_]+)')) AS target
       FROM system.tables WHERE database = {db:String} AND engine = 'MaterializedView'`,
      { db: ch.database },
    );
    const byView = new Set(viewTargets.map((v) => v.target).filter((t) => t !== "holder_moves"));
    const tables = await ch.query<{ tbl: string; columns: string[]; types: string[] }>(
      "bench_tables",
      `SELECT table AS tbl, groupArray(name) AS columns, groupArray(type) AS types FROM system.columns
       WHERE database = {db:String} AND default_kind NOT IN ('DEFAULT', 'MATERIALIZED', 'ALIAS')
         AND table IN (SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree')
       GROUP BY tbl`,
      { db: ch.database },
    );
    let seconds = 0;
    let rows = 0;
    const sizes: { name: string; rows: number; seconds: number }[] = [];
    for (const t of tables) {
      const name = t.tbl;
      if (byView.has(name) || name === "schema_migrations") continue;
      // 128- and 256-bit integers as text (JSON numbers would lose their digits), as the processors write them.
      const cols = t.columns
        .map((c, i) =>
          /Int(128|256)/.test(t.types[i] ?? "") ? `toString(\`${c}\`) AS \`${c}\`` : `\`${c}\``,
        )
        .join(", ");
      const where = name === "holder_moves" ? " WHERE kind = 'spend'" : "";
      if (t.types.some((type) => type.includes("AggregateFunction"))) {
        // Aggregate states are only written inside the engine (the processors' recomputes): copied there too.
        const [count] = await ch.query<{ n: string }>("bench_rows", `SELECT count() AS n FROM ${name}`);
        const t0 = performance.now();
        await bound.command(
          "bench_bound_copy",
          `INSERT INTO ${database}.${name} (${cols}) SELECT ${cols} FROM ${ch.database}.${name}`,
        );
        const took = (performance.now() - t0) / 1000;
        seconds += took;
        rows += Number(count?.n ?? 0);
        sizes.push({ name, rows: Number(count?.n ?? 0), seconds: took });
        continue;
      }
      const data = await ch.query<Record<string, unknown>>(
        "bench_rows",
        `SELECT ${cols} FROM ${name}${where}`,
      );
      if (data.length === 0) continue;
      const size = Math.max(1, Math.ceil(data.length / batches));
      const t0 = performance.now();
      for (let i = 0; i < data.length; i += size)
        await bound.insert("bench_bound_insert", name, data.slice(i, i + size));
      const took = (performance.now() - t0) / 1000;
      seconds += took;
      rows += data.length;
      sizes.push({ name, rows: data.length, seconds: took });
    }
    const biggest = sizes
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 4)
      .map((x) => `${x.name} ${x.rows} rows ${x.seconds.toFixed(2)} s`)
      .join(", ");
    return { seconds, rows, tables: sizes.length, biggest };
  } finally {
    await bound.command("bench_bound_drop", `DROP DATABASE IF EXISTS ${database}`);
    await bound.close();
  }
}

if (ONLY === "") await run("embedded", BLOCKS, false);
if (ONLY !== "kafka") await run("embedded", BLOCKS, true);
if (ONLY === "embedded") process.stdout.write("(Kafka mode skipped: BENCH_ONLY=embedded)\n");
else if (process.env.KAFKA_BROKERS) await run("kafka", KAFKA_BLOCKS);
else process.stdout.write("(Kafka mode skipped: KAFKA_BROKERS is not set)\n");
await server.close();
