/**
 * Bench (following the chain): what it costs to follow the tip around the clock. The simulated network runs in
 * its own process (`devnet` command, its chain's timestamps on the wall clock at 2 blocks/s, mainnet's rate), so
 * its CPU is not the indexer's. This process runs what `start` runs: ingest on its own loop (INGEST_POLL_MS),
 * every processor, the API listening (no client) and the job worker, on embedded stores. It catches up on the
 * history first (backfill CPU per block of this build), waits BENCH_WARMUP_S, then measures BENCH_SECONDS of
 * following: CPU per block and % of one core by thread group (the main thread's JavaScript, PGlite's WebAssembly
 * on the main thread, chDB's statements, chDB's merges and background, Node's own threads).
 * CPU time holds fairly well on a shared machine; wall time does not, and the rate is set by the clock here.
 * Run: npm run bench:follow   (BENCH_BLOCKS=4000 history, BENCH_RATE=2 blocks/s, BENCH_SECONDS=120,
 * BENCH_WARMUP_S=15; any setting of the configuration passes through, for A/B runs; BENCH_PROFILE=1 adds the statements by label over the window (chDB's calls then go one at
 * a time); BENCH_CPU_PROFILE=<dir> writes a CPU profile of the main thread over the window)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { labelDevnetContracts } from "../devnet/labels.ts";
import type { DevnetState } from "../devnet/state.ts";
import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { startJobWorker } from "../pipeline/jobs/worker.ts";
import { startTradeWatcher } from "../pipeline/trade-watcher/watcher.ts";
import { startBenchApp, startBenchPipeline } from "./lib.ts";
import { chdbEvents, profileStores, startCpuProfile } from "./profile.ts";
import { cpuByGroup, cpuSnapshot, findLibuvThreads, pidCpuMs, threadCpuClock } from "./threads.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4000);
const RATE = Number(process.env.BENCH_RATE ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 120);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 15);
const PROFILE = process.env.BENCH_PROFILE === "1";
// Warnings off: the trade watcher polls the default exchanges, which fail fast where there is no network.
const log = createLogger({ level: "error" });
const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const libuv = await findLibuvThreads();
const dir = mkdtempSync(join(tmpdir(), "bench-follow-"));
const statePath = join(dir, "devnet.json");

// A free port for the simulated network (it logs its URLs; the port is known before it starts).
const port = await new Promise<number>((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => resolve(p));
  });
});
const devnet = spawn(
  process.execPath,
  [
    "--import",
    "tsx",
    "bin/cli.ts",
    "devnet",
    `--port=${port}`,
    `--blocks=${BLOCKS}`,
    `--live=${RATE}`,
    `--state=${statePath}`,
  ],
  { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, LOG_LEVEL: "warn" } },
);
await new Promise<void>((resolve, reject) => {
  let text = "";
  devnet.stdout.on("data", (d: Buffer) => {
    text += d.toString();
    if (text.includes("explorer API")) resolve();
  });
  devnet.on("exit", (code) => reject(new Error(`the devnet process ended (${code}) before serving`)));
});
devnet.stdout.resume();
const devnetPid = devnet.pid ?? 0;
const server = { nodeUrl: `http://127.0.0.1:${port}`, explorerUrl: `http://127.0.0.1:${port}/explorer` };
// The same chain's plan, for the registration `start --devnet` does (same seed and start: same contracts).
const state = JSON.parse(readFileSync(statePath, "utf8")) as DevnetState;
const plan = createDevnetChain({ seed: state.seed, startTimestamp: state.startTimestamp });
plan.advance(state.blocks);

/** Settings the bench sets itself (its stores, its network, its log). */
const OWN_KEYS = new Set([
  "DATA_DIR",
  "NODE_URL",
  "EXPLORER_URL",
  "INGEST_START_TS",
  "KAFKA_BROKERS",
  "LOG_LEVEL",
  "PORT",
]);
// Ingest's settings as shipped (startBenchPipeline's backfill settings are the bench's, not `start`'s).
const defaults = loadConfig({});
const bench = await startBenchPipeline({
  chain: plan,
  server,
  dir,
  log,
  // PGlite's share of the main thread, counted in the thread's CPU time (wall time would count the run queue).
  pgEngineClock: threadCpuClock(),
  env: {
    CONFIRMATIONS: String(defaults.CONFIRMATIONS),
    INGEST_WINDOW_MS: String(defaults.INGEST_WINDOW_MS),
    INGEST_CONCURRENCY: String(defaults.INGEST_CONCURRENCY),
    // Any other setting passes through (TRADE_FEED_HEARTBEAT_MS, JOBS_POLL_S …): A/B runs of one setting.
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        (e): e is [string, string] => e[0] in defaults && !OWN_KEYS.has(e[0]) && e[1] !== undefined,
      ),
    ),
  },
});
const { config, stores, pg, ch, deps, pipeline, ingestor, drain, metrics } = bench;
await labelDevnetContracts(pg, plan);
const engineMs = () => pg.engineMs?.() ?? 0;
const ingested = async () =>
  (await metrics.pipelineMessages.get()).values.find((v) => v.labels.stage === "ingest")?.value ?? 0;

// Backfill: the history and whatever the network made meanwhile, every processor drained.
const backfillCpu = process.cpuUsage();
const backfillSnap = cpuSnapshot();
const backfillPg = engineMs();
const t0 = performance.now();
while (!(await ingestor.runOnce()).caughtUp) {}
await drain();
const backfillSeconds = (performance.now() - t0) / 1000;
const backfillBlocks = await ingested();
const cpu = process.cpuUsage(backfillCpu);
const backfillMs = (cpu.user + cpu.system) / 1000;
const backfillGroups = cpuByGroup(backfillSnap, cpuSnapshot(), libuv);
const backfillPgMs = engineMs() - backfillPg;

// Following, as `start` runs it: ingest's own loop, the API, the job worker, the trade watcher (its feed's heartbeat).
const { app } = await startBenchApp({ config, log, pg, ch, metrics });
const jobs = config.JOBS_WORKERS ? await startJobWorker(deps) : null;
const watcher = await startTradeWatcher({ pg, ch, log, metrics }, config);
ingestor.start();
await sleep(WARMUP_S * 1000);

const profiler = PROFILE ? profileStores(stores) : null;
const chBefore = await chdbEvents(ch);
const stopCpu = process.env.BENCH_CPU_PROFILE
  ? await startCpuProfile(join(process.env.BENCH_CPU_PROFILE, `follow-${Date.now()}.cpuprofile`))
  : undefined;
const a = cpuSnapshot();
const pgA = engineMs();
const blocksA = await ingested();
const devnetA = pidCpuMs(devnetPid);
const w0 = performance.now();
await sleep(SECONDS * 1000);
const b = cpuSnapshot();
const wall = (performance.now() - w0) / 1000;
const pgMs = engineMs() - pgA;
const blocks = (await ingested()) - blocksA;
const devnetMs = pidCpuMs(devnetPid) - devnetA;
await stopCpu?.();
const chAfter = await chdbEvents(ch);
const following = cpuByGroup(a, b, libuv);

const perBlock = (ms: number, n: number) => (n > 0 ? (ms / n).toFixed(2) : "-").padStart(8);
const core = (ms: number, s: number) => `${((ms / (s * 1000)) * 100).toFixed(1)}%`.padStart(7);
const rows = (g: ReturnType<typeof cpuByGroup>, pgliteMs: number, n: number, s: number) => {
  const main = g.groups.get("main") ?? 0;
  const entries: [string, number][] = [
    ["JavaScript (main thread, PGlite excluded)", main - pgliteMs],
    ["PGlite (WebAssembly on the main thread)", pgliteMs],
    ["chDB statements (libuv pool + its query pools)", g.groups.get("chdb-queries") ?? 0],
    ["chDB merges and background", g.groups.get("chdb-merges") ?? 0],
    ["Node runtime threads (GC helpers, loader)", g.groups.get("node-runtime") ?? 0],
    ["threads that ended meanwhile", g.groups.get("ended") ?? 0],
    ["process in all", g.totalMs],
  ];
  return entries.map(
    ([label, ms]) => `  ${label.padEnd(48)} ${perBlock(ms, n)} ms/block ${core(ms, s)} of a core`,
  );
};
const names = [...following.names.entries()].map(
  ([g, m]) =>
    `  ${g}: ${[...m.entries()]
      .sort((x, y) => y[1] - x[1])
      .filter(([, ms]) => ms > 0)
      .map(([n, ms]) => `${n} ${ms} ms`)
      .join(", ")}`,
);
const chCpu = (e: Map<string, number>) =>
  ((e.get("UserTimeMicroseconds") ?? 0) + (e.get("SystemTimeMicroseconds") ?? 0)) / 1000;
const diff = (k: string) => (chAfter.get(k) ?? 0) - (chBefore.get(k) ?? 0);
out(
  [
    `bench:follow: ${BLOCKS} blocks of history, then ${RATE} blocks/s for ${SECONDS} s (embedded stores, every processor, the API with no client, the job worker)`,
    "CPU time is measured per thread and holds fairly well on a shared machine; wall time does not (the rate is the devnet's clock).",
    `backfill: ${backfillBlocks} blocks in ${backfillSeconds.toFixed(1)} s, process CPU ${(backfillMs / 1000).toFixed(1)} s = ${(backfillMs / backfillBlocks).toFixed(2)} ms per block; by thread:`,
    ...rows(backfillGroups, backfillPgMs, backfillBlocks, backfillSeconds),
    `following: ${blocks} blocks in ${wall.toFixed(1)} s (${(blocks / wall).toFixed(2)} blocks/s); by thread:`,
    ...rows(following, pgMs, blocks, wall),
    `  target (issue 45): ≤ 25 ms/block, ≤ 5% of a core at 2 blocks/s`,
    `  the simulated network's own process (not counted above): ${perBlock(devnetMs, blocks)} ms/block ${core(devnetMs, wall)} of a core`,
    "  thread names by group (ms over the window):",
    ...names,
    `  chDB counters over the window: ${diff("Query")} queries (${diff("SelectQuery")} selects, ${diff("InsertQuery")} inserts), ${diff("InsertedRows")} rows inserted, ${diff("Merge")} merges, ${(chCpu(chAfter) - chCpu(chBefore)).toFixed(0)} ms of CPU counted by chDB`,
  ].join("\n"),
);
if (profiler) out(profiler.table(wall, 40));

await watcher?.stop();
await jobs?.stop();
await app.close();
await ingestor.stop();
await pipeline.stop();
await stores.close();
devnet.kill();
rmSync(dir, { recursive: true, force: true });
