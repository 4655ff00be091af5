/**
 * Bench (pipeline): end-to-end blocks/s and events/s from the simulated network through ingest,
 * the bus, normalize and the sinks into ClickHouse, beside chDB's insert rate of the same event rows
 * alone (same batch sizes) in the same run. Embedded bus by default; Kafka too when KAFKA_BROKERS is set.
 * The embedded pass runs twice back to back, with the dapp decoders off and on (DAPP_DECODERS), and prints the
 * normalize processor's time per block in each: the decoders' added cost. Each pass also prints the main thread's
 * event-loop delay over the run (what a request to the embedded API waits meanwhile) and its GC pauses.
 * Run: npm run bench:pipeline   (BENCH_BLOCKS=4000; BENCH_PROFILE=1 adds each processor's handle time, the
 * statements' time and chDB CPU by label, and chDB's counters (query and merge CPU) over the run;
 * BENCH_PROCESSORS=holders,series runs only those processors (`-holders` every one but it: a processor's
 * marginal cost); BENCH_NODE_DELAY_MS=500 makes the node double answer each window of blocks that much later, as
 * a remote node would; INGEST_* settings pass through (INGEST_PREFETCH=false, INGEST_WINDOW_MS=120000);
 * BENCH_CPU_PROFILE=<dir> writes a CPU profile of each timed section there; CHDB_CONNECTIONS=1 runs on one chDB connection;
 * BENCH_ONLY=embedded runs the embedded pass with the decoders on alone, BENCH_ONLY=kafka the Kafka pass alone). The embedded pass with the decoders on
 * ends with each table's storage after merges, per event and per raw block (the sizing guide's figures).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import type { RawBlock } from "../lib/chain/types.ts";
import { createLogger } from "../lib/logger.ts";
import { normalizeBlock } from "../pipeline/normalize/index.ts";
import { loadNormalizeState } from "../pipeline/processors/normalize.ts";
import { handleSeconds, startBenchPipeline, storageReport } from "./lib.ts";
import { chdbEvents, profileStores, startCpuProfile } from "./profile.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4000);
// The Kafka run ingests the same blocks (BENCH_KAFKA_BLOCKS: fewer). librdkafka's mock cluster keeps a bounded
// log per partition: a run much larger than 4,000 blocks may fall off it ("offset out of range").
const KAFKA_BLOCKS = Number(process.env.BENCH_KAFKA_BLOCKS ?? BLOCKS);
const chain = createDevnetChain({ seed: 3, txPerBlock: [2, 8] });
chain.advance(BLOCKS);
// BENCH_NODE_DELAY_MS: the node's answer time for a window of blocks (a remote node's; 0 = the double's own).
const NODE_DELAY_MS = Number(process.env.BENCH_NODE_DELAY_MS ?? 0);
const server = await startDevnetServer(chain, { port: 0, blocksWithEventsDelayMs: NODE_DELAY_MS });
const log = createLogger({ level: "warn" });
const PROFILE = process.env.BENCH_PROFILE === "1";
const ONLY = process.env.BENCH_ONLY ?? "";

async function run(mode: "embedded" | "kafka", target: number, decoders = true) {
  const dir = mkdtempSync(join(tmpdir(), `bench-pipeline-${mode}-`));
  let profile: ReturnType<typeof profileStores> | undefined;
  const { ch, stores, deps, pipeline, ingestor, drain, metrics } = await startBenchPipeline({
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
      "",
    ].join("\n"),
  );
  if (mode === "embedded" && decoders) {
    // The pure normalizer alone over the same blocks, with the saved state, with and without the decoders.
    const state = await loadNormalizeState(deps.pg);
    const raws: RawBlock[] = [];
    for (let c = 0; c < 16; c++) for (const b of chain.mainChain(c)) raws.push(chain.rawBlock(b.block.hash)!);
    const time = (withDecoders: boolean) => {
      const t0 = performance.now();
      for (let k = 0; k < 3; k++)
        for (const raw of raws)
          normalizeBlock(raw, {
            dapps: state.dapps,
            pools: state.pools,
            factories: state.factories,
            decoders: withDecoders ? state.decoders : undefined,
            maxPayloadBytes: 4096,
          });
      return (performance.now() - t0) / (3 * raws.length);
    };
    const [off, on, off2, on2] = [time(false), time(true), time(false), time(true)];
    process.stdout.write(
      `  normalizeBlock alone (${raws.length} blocks × 3, back to back twice): decoders off ${((off + off2) / 2).toFixed(3)} ms/block, on ${((on + on2) / 2).toFixed(3)} ms/block (runs: ${off.toFixed(3)}/${on.toFixed(3)}, ${off2.toFixed(3)}/${on2.toFixed(3)})\n`,
    );
  }
  await pipeline.stop();
  // Storage per table of the realistic stream, for the sizing guide (after the timed part; merges first).
  if (mode === "embedded" && decoders) process.stdout.write(`${await storageReport(ch, events, blocks)}\n`);
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}

if (ONLY === "") await run("embedded", BLOCKS, false);
if (ONLY !== "kafka") await run("embedded", BLOCKS, true);
if (ONLY === "embedded") process.stdout.write("(Kafka mode skipped: BENCH_ONLY=embedded)\n");
else if (process.env.KAFKA_BROKERS) await run("kafka", KAFKA_BLOCKS);
else process.stdout.write("(Kafka mode skipped: KAFKA_BROKERS is not set)\n");
await server.close();
