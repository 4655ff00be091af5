/**
 * Bench (issue 46): what one Server-Sent Events page costs the API process per connection it is written to, as a
 * string (node encodes it to UTF-8 again for every socket) and as bytes encoded once (what the stream hub writes,
 * lib/events/stream.ts `rendered`). A node:http server holds BENCH_CLIENTS responses from a client process that
 * reads and drops what it gets; each round writes one page of BENCH_PAGE_EVENTS events to every response, then
 * waits BENCH_GAP_MS for the sockets to drain. The two modes alternate BENCH_PAIRS times on the same connections;
 * each line prints the server's CPU per write (user and system time of the whole process). A third mode, `hub`,
 * writes the bytes through the stream hub itself (lib/events/stream.ts, the route's sinks over the same responses,
 * each round a watermark step of a stand-in events service): its line beside `bytes` is what the hub's bookkeeping
 * costs per connection over a bare loop of the same writes.
 * Run: npm run bench:sse-writes   (BENCH_CLIENTS=4000 BENCH_ROUNDS=40 BENCH_PAIRS=3 BENCH_PAGE_EVENTS=20)
 */
import { spawn } from "node:child_process";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { EventsPage, EventsService } from "../lib/events/service.ts";
import { createStreamHub, responseSink, type StreamSettings } from "../lib/events/stream.ts";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
const PAGE_EVENTS = Number(process.env.BENCH_PAGE_EVENTS ?? 20);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 50);
const MODES = (process.env.BENCH_MODES ?? "string,bytes,hub").split(",") as ("string" | "bytes" | "hub")[];

const open: ServerResponse[] = [];
const http = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" });
  res.write("retry: 3000\n\n");
  open.push(res);
});
http.maxConnections = CLIENTS + 10;
await new Promise<void>((r) => http.listen(0, "127.0.0.1", CLIENTS, r));
const port = (http.address() as AddressInfo).port;
// The clients: plain node:http requests in their own process, reading and dropping every byte.
const clientCode = `
const { request } = require("node:http");
(async () => {
  for (let i = 0; i < ${CLIENTS}; i++) {
    request({ port: ${port}, host: "127.0.0.1", path: "/", agent: false }, (res) => res.on("data", () => {})).end();
    if (i % 500 === 499) await new Promise((r) => setTimeout(r, 20));
  }
  setInterval(() => {}, 1000);
})();`;
const clients = spawn(process.execPath, ["-e", clientCode], { stdio: ["ignore", "inherit", "inherit"] });
while (open.length < CLIENTS) await new Promise((r) => setTimeout(r, 50));

// A page shaped like the route's: `id:` and `data:` (an event's JSON, with a few non-ASCII characters) per event.
const doc = JSON.stringify({
  id: "00000000000000000000012345:0000000001:00003",
  category: "dex",
  sub_kind: "swap",
  dapp_id: "ayin",
  amounts: ["123456789012345678901", "98765432109876"],
  address: "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH",
  tx_hash: "a".repeat(64),
  token_symbol: "ALPH·ü",
});
const text = Array.from({ length: PAGE_EVENTS }, (_, i) => `id: ${i}\ndata: ${doc}\n\n`).join("");
const bytes = Buffer.from(text, "utf8");
await new Promise((r) => setTimeout(r, 500));

/**
 * The hub's mode: a stand-in events service whose every round is a watermark step with one new page (the same bytes'
 * events under fresh ids), and every response followed by the hub as the route does once a stream is caught up.
 */
const idOf = (n: number) => String(n).padStart(20, "0");
let served = 0; // events under the ceiling
const listeners = new Set<(ceiling: string) => void>();
const pageAfter = new Map<string, EventsPage>();
const stand = {
  async page(_filters: unknown, req: { afterId?: string | null }): Promise<EventsPage> {
    const after = Number(req.afterId ?? 0);
    const key = `${after}:${served}`;
    let page = pageAfter.get(key);
    if (!page) {
      const ids = Array.from({ length: Math.max(0, served - after) }, (_, i) => idOf(after + i + 1));
      page = { ids, docs: ids.map(() => doc), ceiling: idOf(served + 1) };
      pageAfter.clear();
      pageAfter.set(key, page);
    }
    return page;
  },
  ceiling: async () => idOf(served + 1),
  onStep(listener: (ceiling: string) => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
} as unknown as EventsService;
const settings: StreamSettings = {
  pollMs: 60_000,
  heartbeatMs: 3_600_000,
  retryMs: 3_000,
  bufferBytes: 2 ** 30,
  drainMs: 60_000,
  pageSize: 200,
};
let hub: ReturnType<typeof createStreamHub> | null = null;
async function followAll() {
  hub = createStreamHub(stand, settings);
  for (const res of open)
    void hub.follow({
      filters: {},
      cursor: idOf(served),
      seen: idOf(served + 1),
      sink: responseSink(res, settings.drainMs),
      lastWrite: Date.now(),
      settings,
      delivered: 0,
      key: "",
      handBack: () => {},
    });
}

async function run(mode: "string" | "bytes" | "hub"): Promise<number> {
  const chunk = mode === "string" ? text : bytes;
  if (mode === "hub") await followAll();
  const start = process.cpuUsage();
  for (let k = 0; k < ROUNDS; k++) {
    if (mode === "hub") {
      served += PAGE_EVENTS;
      for (const step of listeners) step(idOf(served + 1));
    } else for (const res of open) res.write(chunk);
    await new Promise((r) => setTimeout(r, GAP_MS));
  }
  const used = process.cpuUsage(start);
  hub?.close(); // hands every followed response back
  return (used.user + used.system) / (CLIENTS * ROUNDS);
}

console.log(
  `page of ${PAGE_EVENTS} events (${bytes.length} B) × ${CLIENTS} connections × ${ROUNDS} rounds, modes alternated ${PAIRS} times`,
);
const results: Record<string, number[]> = { string: [], bytes: [], hub: [] };
for (let i = 0; i < PAIRS; i++)
  for (const mode of MODES) {
    const us = await run(mode);
    results[mode]!.push(us);
    console.log(`${mode.padEnd(6)} server CPU ${us.toFixed(2)} µs per write`);
  }
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
console.log(
  `mean: string ${mean(results.string!).toFixed(2)} µs, bytes ${mean(results.bytes!).toFixed(2)} µs per write ` +
    `(bytes at ${((100 * mean(results.bytes!)) / mean(results.string!)).toFixed(0)} % of the string's); ` +
    `through the hub ${mean(results.hub!).toFixed(2)} µs (${((100 * mean(results.hub!)) / mean(results.bytes!)).toFixed(0)} % of the bare bytes loop)`,
);
clients.kill();
for (const res of open) res.destroy();
http.close();
