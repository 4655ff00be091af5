/**
 * Bench (issue 24, webhook throughput), embedded stores: one webhook with no filter to a local receiver that answers
 * 204 at once. First the whole history (BENCH_BLOCKS blocks) is delivered from `after_id=0`: events/s, beside the
 * bound of reading the same events as poll pages of WEBHOOK_BATCH (what each delivery reads before it POSTs). Then
 * ingest goes live for BENCH_SECONDS: latency from the moment an event became servable (the API's watermark passed
 * its time, watched every 20 ms) to its 2xx at the receiver, p50/p99. Beside both, the bound: a bare POST loop, one
 * POST at a time (fetch, keep-alive) of the very bodies the history was delivered in, to the same receiver.
 * Run: npm run bench:webhooks   (BENCH_BLOCKS=1500, BENCH_SECONDS=20, BENCH_LIVE_MS=100)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createLogger } from "../lib/logger.ts";
import { startJobWorker } from "../pipeline/jobs/worker.ts";
import { ingestHistory, produceLive, startBenchApp, startBenchPipeline } from "./lib.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 1500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const LIVE_MS = Number(process.env.BENCH_LIVE_MS ?? 100);
const log = createLogger({ level: "warn" });

const chain = createDevnetChain({ seed: 5 });
chain.advance(BLOCKS);
const server = await startDevnetServer(chain, { port: 0 });
const dir = mkdtempSync(join(tmpdir(), "bench-webhooks-"));
const env = { WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8", WEBHOOK_POLL_S: "1", JOBS_POLL_S: "1" };
const { config, stores, pg, ch, deps, pipeline, ingestor, drain } = await startBenchPipeline({
  chain,
  server,
  dir,
  log,
  env,
});
await ingestHistory({ ingestor, drain }, BLOCKS);
const { app, base, headers } = await startBenchApp({
  config: { ...config, PUBLIC_RPM: 100_000_000 },
  log,
  pg,
  ch,
});

// The receiver: when each event id was acknowledged (the first time: deliveries are at least once).
const acked = new Map<string, number>();
let posts = 0;
const bodies: string[] = [];
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => {
    body += d;
  });
  req.on("end", () => {
    if (req.headers["x-bare"]) return void res.writeHead(204).end();
    const now = Date.now();
    posts++;
    bodies.push(body);
    for (const e of (JSON.parse(body) as { events: { id: string }[] }).events)
      if (!acked.has(e.id)) acked.set(e.id, now);
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

/** Every event id under the watermark, oldest first, read as poll pages of WEBHOOK_BATCH: the bound. */
async function readAll(): Promise<{ ids: string[]; ms: number }> {
  const t0 = performance.now();
  const ids: string[] = [];
  let after = "0";
  for (;;) {
    const page = (await (
      await fetch(`${base}/events/all?poll=1&limit=${config.WEBHOOK_BATCH}&after_id=${after}`)
    ).json()) as { events: { id: string }[] };
    if (page.events.length === 0) return { ids, ms: performance.now() - t0 };
    ids.push(...page.events.map((e) => e.id));
    after = page.events.at(-1)!.id;
  }
}

const bound = await readAll();
const worker = await startJobWorker(deps);
const created = await fetch(`${base}/webhooks`, {
  method: "POST",
  headers: { ...headers, "content-type": "application/json" },
  body: JSON.stringify({ url: receiverUrl, after_id: "0" }),
});
if (created.status !== 201) throw new Error(`webhook create: ${created.status} ${await created.text()}`);
const t0 = performance.now();
while (acked.size < bound.ids.length) await new Promise((r) => setTimeout(r, 10));
const historyMs = performance.now() - t0;
const historyPosts = posts;
// The bare POST loop: the same bodies, one POST at a time, to the same receiver (which ignores them).
const postMs: number[] = [];
const b0 = performance.now();
for (const body of bodies.slice(0, historyPosts)) {
  const p0 = performance.now();
  const res = await fetch(receiverUrl, {
    method: "POST",
    headers: { "content-type": "application/json", "x-bare": "1" },
    body,
  });
  await res.arrayBuffer();
  postMs.push(performance.now() - p0);
}
const bareMs = performance.now() - b0;
postMs.sort((a, b) => a - b);
const postPct = (p: number) =>
  postMs[Math.min(postMs.length - 1, Math.floor(postMs.length * p))] ?? Number.NaN;
process.stdout.write(
  `history: ${bound.ids.length} events delivered in ${(historyMs / 1000).toFixed(1)} s = ${((bound.ids.length * 1000) / historyMs).toFixed(0)} events/s ` +
    `(${historyPosts} POSTs of up to ${config.WEBHOOK_BATCH}); bound, the same events read as poll pages: ${((bound.ids.length * 1000) / bound.ms).toFixed(0)} events/s; ` +
    `bare POST loop of the same ${historyPosts} bodies to the same receiver: ${((bound.ids.length * 1000) / bareMs).toFixed(0)} events/s ` +
    `(a POST p50 ${postPct(0.5).toFixed(1)} ms, p99 ${postPct(0.99).toFixed(1)} ms)\n`,
);

// Live: servable → 2xx.
const servable = new Map<string, number>();
let cursor = bound.ids.at(-1) ?? "0";
const live = produceLive(chain, ingestor, LIVE_MS);
const end = Date.now() + SECONDS * 1000;
while (Date.now() < end) {
  const page = (await (await fetch(`${base}/events/all?poll=1&limit=200&after_id=${cursor}`)).json()) as {
    events: { id: string }[];
  };
  const now = Date.now();
  for (const e of page.events) servable.set(e.id, now);
  cursor = page.events.at(-1)?.id ?? cursor;
  if (page.events.length < 200) await new Promise((r) => setTimeout(r, 20));
}
await live.stop();
// Let the last deliveries arrive (a caught-up webhook looks again every WEBHOOK_POLL_S).
const deadline = Date.now() + 10_000;
while ([...servable.keys()].some((id) => !acked.has(id)) && Date.now() < deadline)
  await new Promise((r) => setTimeout(r, 50));
const latencies = [...servable]
  .flatMap(([id, at]) => (acked.has(id) ? [acked.get(id)! - at] : []))
  .sort((a, b) => a - b);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? Number.NaN;
process.stdout.write(
  `live: ${servable.size} events servable in ${SECONDS} s, ${latencies.length} acknowledged; servable → 2xx p50 ${pct(0.5).toFixed(0)} ms, p99 ${pct(0.99).toFixed(0)} ms (WEBHOOK_POLL_S ${config.WEBHOOK_POLL_S} s when caught up)\n`,
);

await worker.stop();
await app.close();
receiver.close();
await pipeline.stop();
await stores.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
