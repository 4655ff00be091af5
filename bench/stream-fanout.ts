/**
 * Bench (issue 24, fan-out; issue 46, 10,000 clients), embedded stores with ingest live, one run per BENCH_MODES
 * (default `stream,bare,poll`), each on the same live events:
 * - `stream`: BENCH_CLIENTS (default 1,000) connections of GET /events/stream;
 * - `bare`: the upper bound, as many plain Server-Sent Events responses of a minimal node:http server in this
 *   process, written the same event bytes (`id:` and `data:` per event, the same pages read in this process) at
 *   each watermark step;
 * - `poll`: as many pollers of /events/all?poll=1 (one request per BENCH_POLL_MS each, the pollers' usual rhythm).
 * For each: delivery latency from the watermark step that made an event visible (the API's events service started
 * serving pages under a ceiling above it: its onStep, in this process) to each client's receipt (p50/p99),
 * deliveries, this process's CPU time and memory per connection.
 * The clients run in a process of their own and connect (in waves of 500) before live blocks start.
 * Run: npm run bench:stream   (BENCH_BLOCKS=1500 history, BENCH_SECONDS=20 per run, BENCH_LIVE_MS=100 per block)
 * 10,000 clients: `ulimit -n 30000; BENCH_CLIENTS=10000 BENCH_MODES=stream,bare npm run bench:stream` (each
 * connection is a descriptor in both processes). The clients on a core of their own, the API process on the other
 * (as with clients on another host): `BENCH_CLIENT_CPUS=1 taskset -c 0 npm run bench:stream`. Mainnet's rate:
 * BENCH_LIVE_MS=500 (2 blocks/s). Each line also prints p99 by BENCH_WINDOW_S (5) window of the run, and the live heap
 * the open connections keep (after a full collection: `npm run bench:stream` runs with --expose-gc) and the main
 * thread's garbage-collection pauses over the timed section;
 * BENCH_HEAP_SNAPSHOT=<path prefix> writes heap snapshots before the clients connect and once they have;
 * BENCH_CPU_PROFILE=<dir> a CPU profile (and an allocation profile) of each run's timed section.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { writeHeapSnapshot } from "node:v8";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createLogger } from "../lib/logger.ts";
import { ingestHistory, produceLive, startBenchApp, startBenchPipeline } from "./lib.ts";
import { startCpuProfile } from "./profile.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 1500);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const LIVE_MS = Number(process.env.BENCH_LIVE_MS ?? 100);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 1000);
const CLIENT_CPUS = process.env.BENCH_CLIENT_CPUS ?? "";
const MODES = (process.env.BENCH_MODES ?? "stream,bare,poll").split(",") as ("stream" | "bare" | "poll")[];
const log = createLogger({ level: "warn" });
const gcFn = (globalThis as { gc?: () => void }).gc;
/** A heap snapshot (DevTools' Memory tab opens it) when BENCH_HEAP_SNAPSHOT names a path prefix. */
const snapshot = (name: string) => {
  const prefix = process.env.BENCH_HEAP_SNAPSHOT;
  if (prefix) writeHeapSnapshot(`${prefix}-${name}.heapsnapshot`);
};
/** Heap in use, after a full collection when run with --expose-gc (`npm run bench:stream` does). */
const heapUsed = (): number => {
  gcFn?.();
  return process.memoryUsage().heapUsed;
};

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
const {
  app,
  base,
  headers,
  deps: apiDeps,
} = await startBenchApp({
  config: { ...config, PUBLIC_RPM: 100_000_000, STREAM_CONNECTIONS: { bench: CLIENTS + 10 } },
  log,
  pg,
  ch,
});
const key = headers["x-api-key"]!;
const events = apiDeps.events!;

/**
 * The watermark steps: when the API's events service started serving pages under each higher ceiling (its onStep,
 * the moment new events become visible to every reader of this process). Like the stream hub, the bench reads the
 * ceiling every STREAM_POLL_MS (the steps need a reader); `step` gets each one at once (the bare fan-out).
 */
function watchSteps(step?: (ceiling: string) => void) {
  const steps: { ceiling: string; at: number }[] = [];
  const off = events.onStep((ceiling) => {
    steps.push({ ceiling, at: Date.now() });
    step?.(ceiling);
  });
  const ticker = setInterval(() => void events.ceiling().catch(() => undefined), config.STREAM_POLL_MS);
  return {
    /** When the event became visible: the first step whose ceiling is above its id (null: before or after). */
    servableAt(id: string): number | null {
      let lo = 0;
      let hi = steps.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (steps[mid]!.ceiling > id) hi = mid;
        else lo = mid + 1;
      }
      return lo < steps.length ? steps[lo]!.at : null;
    },
    stop() {
      off();
      clearInterval(ticker);
      return steps.length;
    },
  };
}

/** The bound: a minimal node:http server holding plain Server-Sent Events responses, written to all at once. */
async function bareServer(after: string) {
  const open = new Set<ServerResponse>();
  let cursor = after;
  let busy = false;
  let again = false;
  const http = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" });
    res.write("retry: 3000\n\n");
    open.add(res);
    res.on("close", () => open.delete(res));
  });
  http.maxConnections = CLIENTS + 100;
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", CLIENTS, r));
  return {
    base: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    /**
     * At a step, the new events (poll pages after the last written, read in this process like the hub does) as the
     * same bytes as the route (`id:` and `data:` the event's JSON), each page written to every response in one pass.
     */
    async step() {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        do {
          again = false;
          for (;;) {
            const page = await events.page({}, { limit: 200, afterId: cursor, poll: true });
            if (page.ids.length === 0) break;
            // Encoded once, as the route does: the same bytes to every response.
            const bytes = Buffer.from(
              page.ids.map((id, i) => `id: ${id}\ndata: ${page.docs[i]}\n\n`).join(""),
            );
            for (const res of open) res.write(bytes);
            cursor = page.ids.at(-1)!;
            if (page.ids.length < 200) break;
          }
        } while (again);
      } finally {
        busy = false;
      }
    },
    async close() {
      for (const res of open) res.end();
      await new Promise((r) => http.close(r));
    },
  };
}

async function run(mode: "stream" | "bare" | "poll") {
  const start = ((await (await fetch(`${base}/events/all?limit=1`)).json()) as { events: { id: string }[] })
    .events[0]?.id;
  const bare = mode === "bare" ? await bareServer(start ?? "0") : null;
  const heap0 = heapUsed();
  snapshot(`${mode}-before`);
  const rss0 = process.memoryUsage().rss;
  // BENCH_CLIENT_CPUS (a `taskset -c` list) puts the clients' process on cores of its own: run the bench itself
  // under `taskset -c <the others>` and the API process no longer shares its cores with the clients.
  const clientArgs = [
    process.execPath,
    "--import",
    "tsx",
    "bench/stream-clients.ts",
    mode === "poll" ? "poll" : "stream",
    bare?.base ?? base,
    key,
    String(CLIENTS),
    String(SECONDS),
    start ?? "0",
    String(POLL_MS),
  ];
  const child = CLIENT_CPUS
    ? spawn("taskset", ["-c", CLIENT_CPUS, ...clientArgs], { stdio: ["ignore", "pipe", "inherit"] })
    : spawn(clientArgs[0]!, clientArgs.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  let ready = () => {};
  const connected = new Promise<void>((r) => {
    ready = r;
  });
  child.stdout.on("data", (d) => {
    out += d;
    if (out.startsWith("ready\n")) ready();
  });
  const exited = new Promise((r) => child.on("exit", r));
  await Promise.race([connected, exited]);
  // What the open connections keep alive (after a full collection with --expose-gc): what every major collection
  // marks again while they stay open. Load-independent, unlike the latencies.
  const heapPerConnection = (heapUsed() - heap0) / CLIENTS;
  snapshot(mode);
  const stopProfile = process.env.BENCH_CPU_PROFILE
    ? await startCpuProfile(join(process.env.BENCH_CPU_PROFILE, `stream-${mode}-${Date.now()}.cpuprofile`))
    : null;
  const cpu0 = process.cpuUsage();
  // The main thread's garbage-collection pauses over the timed section: what the heap the connections keep costs.
  const gc = { ms: 0, count: 0, major: 0, majorMs: 0, max: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.ms += entry.duration;
      gc.count++;
      gc.max = Math.max(gc.max, entry.duration);
      if (
        (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ===
        constants.NODE_PERFORMANCE_GC_MAJOR
      ) {
        gc.major++;
        gc.majorMs += entry.duration;
      }
    }
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  const steps = watchSteps(bare ? () => void bare.step() : undefined);
  const liveStart = Date.now();
  const live = produceLive(chain, ingestor, LIVE_MS);
  let peakRss = rss0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 200);
  await exited;
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpu0);
  gcObserver.disconnect();
  await stopProfile?.();
  const stepCount = steps.stop();
  const made = await live.stop();
  await bare?.close();
  const { received, errors } = JSON.parse(out.slice(out.indexOf("\n") + 1)) as {
    received: Record<string, number[]>;
    errors: number;
  };
  const latencies: number[] = [];
  // The same latencies by the window of the run their step fell in (BENCH_WINDOW_S): a slow start (connections
  // still joining) shows apart from the steady state.
  const windowMs = Number(process.env.BENCH_WINDOW_S ?? 5) * 1000;
  const windows: number[][] = [];
  let deliveries = 0;
  let servable = 0;
  for (const [id, times] of Object.entries(received)) {
    deliveries += times.length;
    const t = steps.servableAt(id);
    if (t === null) continue; // after the last step seen
    servable++;
    const at = Math.max(0, Math.floor((t - liveStart) / windowMs));
    const w = windows[at] ?? [];
    windows[at] = w;
    for (const r of times) {
      latencies.push(r - t);
      w.push(r - t);
    }
  }
  latencies.sort((a, b) => a - b);
  const byWindow = [...windows]
    .map((w) => w?.sort((a, b) => a - b)[Math.min(w.length - 1, Math.floor(w.length * 0.99))])
    .map((v) => (v === undefined ? "-" : v.toFixed(0)))
    .join(" / ");
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? Number.NaN;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stdout.write(
    `${{ stream: "GET /events/stream", bare: "bare fan-out (node:http, same bytes)", poll: `GET /events/all?poll=1 every ${POLL_MS} ms` }[mode]} × ${CLIENTS}: ` +
      `${made} live blocks, ${stepCount} watermark steps, ${servable} events received (${deliveries} deliveries, ${((100 * deliveries) / Math.max(1, servable * CLIENTS)).toFixed(1)}% of events × clients), ${errors} client errors; ` +
      `latency watermark step → client p50 ${pct(0.5).toFixed(0)} ms, p99 ${pct(0.99).toFixed(0)} ms (p99 by ${windowMs / 1000} s window: ${byWindow}); ` +
      `API process CPU ${(cpuMs / SECONDS / 10).toFixed(1)}% of a core (${(cpuMs / CLIENTS).toFixed(1)} ms per connection over ${SECONDS} s, ingest and processors included), ` +
      `peak RSS +${((peakRss - rss0) / 2 ** 20).toFixed(0)} MiB (${((peakRss - rss0) / CLIENTS / 1024).toFixed(0)} KiB per connection), ` +
      `live heap ${(heapPerConnection / 1024).toFixed(1)} KiB per connection once connected${gcFn ? "" : " (garbage included: run with --expose-gc)"}; ` +
      `main thread in GC ${gc.ms.toFixed(0)} ms in ${gc.count} pauses (${gc.major} mark-compacts, ${gc.majorMs.toFixed(0)} ms), the longest ${gc.max.toFixed(0)} ms\n`,
  );
}

for (const mode of MODES) await run(mode);
await app.close();
await pipeline.stop();
await stores.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
