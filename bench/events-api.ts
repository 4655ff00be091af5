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
import { bareServer, type LoadResult, load, printTable, startBenchApp } from "./lib.ts";

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
                1752573600000 + height * 8000 + chain * 500 AS ts FROM numbers({n:UInt64}))`,
  { n: N },
);
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
