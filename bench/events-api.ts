/**
 * Bench (events API): /events/all list and poll and /transaction/{txid}/events on a table of
 * BENCH_EVENTS (default 1,000,000) synthetic events, beside a bare Fastify route serving the same bytes.
 * Run: npm run bench:events
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { prepareStores } from "../lib/migrate.ts";
import { openStores } from "../lib/stores/index.ts";
import { bareServer, fillSyntheticEvents, type LoadResult, load, printTable, startBenchApp } from "./lib.ts";

const N = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), "bench-events-"));
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent", PUBLIC_RPM: "1000000" });
const log = createLogger({ level: "silent" });
const stores = await openStores(config, log, { command: "bench" });
await prepareStores(stores, log);
const ch = stores.ch!;
const pg = stores.pg!;

// ~3 events per transaction, 16 chains, one block every 8 s per chain, ids in the service's format.
const t0 = performance.now();
await fillSyntheticEvents(ch, { from: 0, count: N, start: 1752573600000 });
await ch.command(
  "bench_progress",
  `INSERT INTO chain_progress (chain_index, height, block_hash, block_ts, version)
   SELECT number, 1000000000, 'x', fromUnixTimestamp64Milli(toInt64(4102444800000)), 1 FROM numbers(16)`,
);
const fillSeconds = (performance.now() - t0) / 1000;

const { app, base, headers } = await startBenchApp({ config, log, pg, ch });

const [middle] = await ch.query<{ id: string; tx_id: string }>(
  "bench_middle",
  "SELECT id, tx_id FROM events ORDER BY id LIMIT 1 OFFSET {o:UInt64}",
  { o: Math.floor(N / 2) },
);
// Distinct cursors: every request reads a different page (no page-cache hits).
const cursors = await ch.query<{ id: string }>(
  "bench_cursors",
  "SELECT id FROM events ORDER BY id LIMIT 2000 OFFSET {o:UInt64}",
  { o: Math.floor(N / 3) },
);
const pollPaths = cursors.map((c) => `/events/all?poll=1&limit=50&after_id=${c.id}`);
// Distinct cursors among the newest events: pollers near the tip, answered by the in-memory tail.
const tailCursors = await ch.query<{ id: string }>(
  "bench_tail_cursors",
  "SELECT id FROM events ORDER BY id DESC LIMIT 2000 OFFSET 100",
);
const tailPaths = tailCursors.map((c) => `/events/all?poll=1&limit=50&after_id=${c.id}`);
const routes = [
  { label: "GET /events/all?limit=50 (list)", path: "/events/all?limit=50", headers: {} },
  {
    label: "GET /events/all?poll=1&after_id=… (poll)",
    path: `/events/all?poll=1&limit=50&after_id=${middle?.id}`,
    headers: {},
  },
  { label: "GET /events/all?address=… (filter)", path: "/events/all?limit=50&address=1From42", headers: {} },
  { label: "GET /transaction/{txid}/events", path: `/transaction/${middle?.tx_id}/events`, headers },
];
process.stdout.write(`filled ${N} events in ${fillSeconds.toFixed(1)} s\n`);
process.stdout.write(
  `distinct poll cursors: "tail" = 2,000 among the newest events (in the in-memory tail of ${config.EVENTS_TAIL_CACHE}),\n` +
    `"store" = 2,000 at a third of the table (read from chDB); no page-cache hits in either\n`,
);
for (const [label, paths] of [
  ["poll, distinct cursors (tail)", tailPaths],
  ["poll, distinct cursors (store)", pollPaths],
] as const) {
  const list = [...paths];
  const body = (await app.inject({ url: list[0]! })).body;
  const bare = await bareServer(body);
  const measured = await load(label, base, { paths: list });
  const single = await load(`${label} [1 connection]`, base, { paths: list, connections: 1 });
  printTable(
    `${label}: ~${body.length} bytes`,
    [measured, single],
    await load("bare route, same bytes", bare.url),
  );
  await bare.close();
}
for (const r of routes) {
  const body = (await app.inject({ url: r.path, headers: r.headers })).body;
  const bare = await bareServer(body);
  const measured: LoadResult = await load(r.label, `${base}${r.path}`, { headers: r.headers });
  const single: LoadResult = await load(`${r.label} [1 connection]`, `${base}${r.path}`, {
    headers: r.headers,
    connections: 1,
  });
  const bound = await load("bare route, same bytes", bare.url);
  printTable(`${r.label}: ${body.length} bytes`, [measured, single], bound);
  await bare.close();
}
{
  // The same address page two ways, straight on chDB: a key range of events_by_key (what the API reads)
  // and the filter on events (bloom filters on from/to: every granule is tested, so it grows with the table).
  const cols = "id, block_hash, main_chain, version, payload_ref, doc";
  const keyCols = "id, block AS block_hash, main_chain, version, payload_ref, doc";
  const timePages = async (sql: (k: number) => string) => {
    const t = performance.now();
    for (let k = 0; k < 40; k++) await ch.query("bench_address_page", sql(k), { a: `1From${k * 97}` });
    return (performance.now() - t) / 40;
  };
  const viaLookup = await timePages(
    () =>
      `SELECT ${keyCols} FROM events_by_key WHERE kind = 'address' AND key = {a:String} ORDER BY id DESC LIMIT 116`,
  );
  const viaEvents = await timePages(
    () => `SELECT ${cols} FROM events WHERE from = {a:String} OR to = {a:String} ORDER BY id DESC LIMIT 116`,
  );
  process.stdout.write(
    `\naddress page straight on chDB (40 addresses, ${N} events): events_by_key ${viaLookup.toFixed(1)} ms per page, ` +
      `events with bloom filters ${viaEvents.toFixed(1)} ms per page\n`,
  );
}
await app.close();
await stores.close();
rmSync(dir, { recursive: true, force: true });
