/**
 * Bench (issue 24, fan-out), embedded stores with ingest live: BENCH_CLIENTS (default 1,000) connections of
 * GET /events/stream, then as many pollers of /events/all?poll=1 (one request per BENCH_POLL_MS each, the
 * pollers' usual rhythm), on the same live events. For each: delivery latency from the moment an event became
 * servable (the API's watermark passed its time, watched every 20 ms here) to each client's receipt (p50/p99),
 * deliveries, the API process's CPU time and memory per connection. The clients run in a process of their own.
 * Run: npm run bench:stream   (BENCH_BLOCKS=1500 history, BENCH_SECONDS=20 per run, BENCH_LIVE_MS=100 per block)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createLogger } from "../lib/logger.ts";
import { ingestHistory, produceLive, startBenchApp, startBenchPipeline } from "./lib.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 1500);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const LIVE_MS = Number(process.env.BENCH_LIVE_MS ?? 100);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 1000);
const log = createLogger({ level: "warn" });

const chain = createDevnetChain({ seed: 5 });
chain.advance(BLOCKS);
const server = await startDevnetServer(chain, { port: 0 });
const dir = mkdtempSync(join(tmpdir(), "bench-stream-"));
const { config, stores, pg, ch, pipeline, ingestor, drain } = await startBenchPipeline({
  chain,
  server,
  dir,
  log,
});
await ingestHistory({ ingestor, drain }, BLOCKS);
const { app, base, headers } = await startBenchApp({
  config: { ...config, PUBLIC_RPM: 100_000_000, STREAM_CONNECTIONS: { bench: CLIENTS + 10 } },
  log,
  pg,
  ch,
});
const key = headers["x-api-key"]!;

/** When each live event became servable: the first watermark read (every 20 ms) at or past its time. */
async function watchServable(stop: AbortSignal): Promise<Map<string, number>> {
  const at = new Map<string, number>();
  const first = (await (await fetch(`${base}/events/all?limit=1`)).json()) as { events: { id: string }[] };
  let cursor = first.events[0]?.id ?? "0";
  while (!stop.aborted) {
    const res = await fetch(`${base}/events/all?poll=1&limit=200&after_id=${cursor}`);
    const page = (await res.json()) as { events: { id: string }[] };
    const now = Date.now();
    for (const e of page.events) at.set(e.id, now);
    cursor = page.events.at(-1)?.id ?? cursor;
    if (page.events.length < 200) await new Promise((r) => setTimeout(r, 20));
  }
  return at;
}

async function run(mode: "stream" | "poll") {
  const start = ((await (await fetch(`${base}/events/all?limit=1`)).json()) as { events: { id: string }[] })
    .events[0]?.id;
  const live = produceLive(chain, ingestor, LIVE_MS);
  const stop = new AbortController();
  const servable = watchServable(stop.signal);
  const rss0 = process.memoryUsage().rss;
  const cpu0 = process.cpuUsage();
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "bench/stream-clients.ts",
      mode,
      base,
      key,
      String(CLIENTS),
      String(SECONDS),
      start ?? "0",
      String(POLL_MS),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  let peakRss = rss0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 200);
  await new Promise((r) => child.on("exit", r));
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpu0);
  stop.abort();
  const at = await servable;
  const made = await live.stop();
  const { received, errors } = JSON.parse(out) as { received: Record<string, number[]>; errors: number };
  const latencies: number[] = [];
  let deliveries = 0;
  for (const [id, times] of Object.entries(received)) {
    deliveries += times.length;
    const t = at.get(id);
    if (t === undefined) continue; // history before the run, or after the watcher stopped
    for (const r of times) latencies.push(r - t);
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? Number.NaN;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(
    `${mode === "stream" ? "GET /events/stream" : `GET /events/all?poll=1 every ${POLL_MS} ms`} × ${CLIENTS}: ` +
      `${made} live blocks, ${at.size} events servable during the run, ${deliveries} deliveries, ${errors} client errors; ` +
      `latency servable → client p50 ${pct(0.5).toFixed(0)} ms, p99 ${pct(0.99).toFixed(0)} ms; ` +
      `API process CPU ${(cpuMs / SECONDS / 10).toFixed(1)}% of a core (${(cpuMs / CLIENTS).toFixed(1)} ms per connection over ${SECONDS} s, ingest and processors included), ` +
      `peak RSS +${((peakRss - rss0) / 2 ** 20).toFixed(0)} MiB (${((peakRss - rss0) / CLIENTS / 1024).toFixed(0)} KiB per connection)\n`,
  );
}

await run("stream");
await run("poll");
await app.close();
await pipeline.stop();
await stores.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
