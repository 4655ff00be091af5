/**
 * Bench (issue 22, "lean lookups"): the lookup tables of migration 0015 (`events_by_key` for address and token
 * reads; `event_ids_by_tx`, then `events` by id, for transaction reads) against `event_lookup` as migration 0003
 * made it (a copy of each event row per address, token and transaction key), on the same events. Prints each
 * layout's compressed bytes per event after merges, and the p50/p90 of four reads through each: an address page and
 * a token page (50 events, the API's default), one transaction, a batch of 20 transactions (the explorer's
 * decorated pages). The new reads are the events reader's own; the old ones are the reader's statements before
 * 0015. Old and new alternate (which goes first too) so that a busy machine slows both alike; the old layout's
 * read, measured in the same run, is the bound; new/old is the median ratio of the pairs. Both must serve the same
 * rows (checked on every sample).
 * Data: the simulated network's events through ingest, normalize and the events sink (BENCH_BLOCKS blocks,
 * default 4,000; the processors are BENCH_PROCESSORS, default normalize,events-sink), or with
 * BENCH_DATA=synthetic the synthetic events of bench:events (BENCH_EVENTS, default 1,000,000). BENCH_SAMPLES reads of
 * each kind per layout (default 300).
 * Run: npm run bench:lookup
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDevnetChain } from "../devnet/chain.ts";
import { startDevnetServer } from "../devnet/server.ts";
import { createEventsReader, mainRows, resolveVersions, type StoredRow } from "../lib/events/reader.ts";
import { createLogger } from "../lib/logger.ts";
import { prepareStores, readMigrations, splitStatements } from "../lib/migrate.ts";
import type { Ch } from "../lib/stores/clickhouse.ts";
import { openStores } from "../lib/stores/index.ts";
import { startBenchPipeline } from "./lib.ts";

const DATA = process.env.BENCH_DATA ?? "devnet";
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4000);
const N = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const LIMIT = 50;
const log = createLogger({ level: "warn" });
const dir = mkdtempSync(join(tmpdir(), "bench-lookup-"));

/** Stores holding the bench's events, and how to close them. */
async function fill(): Promise<{ ch: Ch; close: () => Promise<void>; source: string }> {
  if (DATA === "synthetic") {
    const { loadConfig } = await import("../lib/config.ts");
    const stores = await openStores(loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent" }), log, {
      command: "bench",
    });
    await prepareStores(stores, log);
    const ch = stores.ch!;
    const text = readFileSync(new URL("./events-api.ts", import.meta.url), "utf8");
    const sql = /`(INSERT INTO events[\s\S]*?numbers\(\{n:UInt64\}\)\))`/.exec(text)![1]!;
    await ch.command("bench_fill", sql, { n: N });
    return { ch, close: () => stores.close(), source: `synthetic events of bench:events` };
  }
  process.env.BENCH_PROCESSORS ??= "normalize,events-sink";
  const chain = createDevnetChain({ seed: 3, txPerBlock: [2, 8] });
  chain.advance(BLOCKS);
  const server = await startDevnetServer(chain, { port: 0 });
  const { ch, stores, pipeline, ingestor, drain } = await startBenchPipeline({ chain, server, dir, log });
  while (!(await ingestor.runOnce()).caughtUp);
  await drain(50);
  await pipeline.stop();
  return {
    ch,
    close: async () => {
      await stores.close();
      await server.close();
    },
    source: `simulated network, ${BLOCKS} blocks through the pipeline`,
  };
}

const { ch, close, source } = await fill();
// The old layout, as migration 0003 made it (table, view, copy of the rows written so far); its view is
// dropped at once (no event is written after this).
const m3 = readMigrations("clickhouse").find((m) => m.version === 3)!;
for (const statement of splitStatements(m3.sql)) await ch.command("bench_0003", statement);
await ch.command("bench_0003", "DROP VIEW event_lookup_mv");
const tables = ["events", "event_lookup", "events_by_key", "event_ids_by_tx"];
for (const t of tables) await ch.command("bench_optimize", `OPTIMIZE TABLE ${t} FINAL`);
const parts = await ch.query<{ table: string; bytes: string; rows: string }>(
  "bench_sizes",
  `SELECT table, sum(data_compressed_bytes) AS bytes, sum(rows) AS rows FROM system.parts
   WHERE active AND database = currentDatabase() AND table IN {t:Array(String)} GROUP BY table`,
  { t: tables },
);
const size = new Map(parts.map((p) => [p.table, { bytes: Number(p.bytes), rows: Number(p.rows) }]));
const events = size.get("events")!.rows;
const perEvent = (bytes: number) =>
  `${(bytes / events).toFixed(0)} B/event (${(bytes / size.get("events")!.bytes).toFixed(2)}× events)`;
console.log(`lookup layouts on ${events} events (${source}):`);
for (const t of tables) {
  const s = size.get(t)!;
  console.log(
    `  ${t.padEnd(16)} ${(s.bytes / 2 ** 20).toFixed(1).padStart(7)} MiB ${String(s.rows).padStart(9)} rows ${(s.bytes / s.rows).toFixed(0).padStart(4)} B/row  ${perEvent(s.bytes)}`,
  );
}
const lean = size.get("events_by_key")!.bytes + size.get("event_ids_by_tx")!.bytes;
console.log(`  old lookup (event_lookup):                 ${perEvent(size.get("event_lookup")!.bytes)}`);
console.log(`  new lookup (events_by_key + event_ids_by_tx): ${perEvent(lean)}`);

// Keys as the API meets them: the addresses and tokens of randomly drawn events (busy keys come up as
// often as they have events), and randomly drawn transactions.
const draw = async (column: string, n: number) =>
  (
    await ch.query<{ k: string }>(
      "bench_keys",
      `SELECT ${column} AS k FROM events WHERE ${column} != '' AND chain_index != 17 ORDER BY cityHash64(id) LIMIT {n:UInt32}`,
      { n },
    )
  ).map((r) => r.k);
const addresses = await draw("from", SAMPLES);
const tokens = await draw("token_address", SAMPLES);
const txs = (
  await ch.query<{ k: string }>(
    "bench_txs",
    "SELECT tx_id AS k FROM events WHERE tx_id != '' GROUP BY tx_id ORDER BY cityHash64(tx_id) LIMIT {n:UInt32}",
    { n: SAMPLES * 21 },
  )
).map((r) => r.k);
/** The k-th batch of 20 transactions (they repeat once the drawn ones run out). */
const batch = (k: number) => Array.from({ length: 20 }, (_, i) => txs[(k * 20 + i + 1) % txs.length]!);

const reader = createEventsReader(ch);
const COLUMNS = "id, block_hash, main_chain, version, payload_ref, doc";
/** The reader's page before 0015 (lib/events/reader.ts at 0003): windows of `event_lookup` in id order. */
async function oldPage(kind: "address" | "token", key: string): Promise<StoredRow[]> {
  const best = new Map<string, StoredRow>();
  let cap = LIMIT * 2 + 16;
  let bound: string | undefined;
  for (;;) {
    const rows = await ch.query<StoredRow>(
      "events_lookup",
      `SELECT ${COLUMNS} FROM event_lookup WHERE id < {ceiling:String} AND kind = {kind:String} AND key = {key:String}
       ${bound ? "AND id <= {bound:String}" : ""} ORDER BY id DESC LIMIT {cap:UInt32}`,
      { ceiling: "9", kind, key, cap, ...(bound ? { bound } : {}) },
    );
    resolveVersions(rows, best);
    const complete = rows.length < cap;
    const lastId = rows[rows.length - 1]?.id ?? "";
    const settled = [...best.values()]
      .filter((r) => r.main_chain && (complete || r.id > lastId))
      .sort((a, b) => (a.id === b.id ? 0 : a.id > b.id ? -1 : 1));
    if (complete || settled.length >= LIMIT) return settled.slice(0, LIMIT);
    if (bound === lastId) cap *= 4;
    bound = lastId;
  }
}
const oldTxs = async (ids: string[]) =>
  mainRows(
    await ch.query<StoredRow>(
      "events_by_tx",
      `SELECT ${COLUMNS} FROM event_lookup WHERE kind = 'tx' AND key IN {txs:Array(String)}`,
      { txs: ids },
    ),
  );
const page = { limit: LIMIT, poll: false };
type Read = (k: number) => Promise<StoredRow[]>;
const reads: [string, Read, Read][] = [
  [
    "address page",
    (k) => oldPage("address", addresses[k]!),
    (k) => reader.page({ address: addresses[k]! }, page, "9"),
  ],
  [
    "token page",
    (k) => oldPage("token", tokens[k]!),
    (k) => reader.page({ token_address: tokens[k]! }, page, "9"),
  ],
  ["single tx", (k) => oldTxs([txs[k]!]), (k) => reader.byTransactions([txs[k]!])],
  ["20-tx batch", (k) => oldTxs(batch(k)), (k) => reader.byTransactions(batch(k))],
];
const same = (a: StoredRow[], b: StoredRow[]) =>
  a.length === b.length && a.every((r, i) => r.id === b[i]!.id && r.doc === b[i]!.doc);
const pct = (s: number[], q: number) => [...s].sort((x, y) => x - y)[Math.floor(s.length * q)]!;
const fmt = (s: number[]) =>
  `p50 ${pct(s, 0.5).toFixed(2).padStart(6)} ms, p90 ${pct(s, 0.9).toFixed(2).padStart(6)} ms`;
console.log(`reads (${SAMPLES} samples each, old and new alternating; rows served per read in brackets):`);
for (const [label, old, lean] of reads) {
  for (let k = 0; k < 5; k++) {
    await old(k);
    await lean(k);
  }
  const samples = { old: [] as number[], lean: [] as number[] };
  let rows = 0;
  for (let k = 0; k < SAMPLES; k++) {
    const order = k % 2 === 0 ? (["old", "lean"] as const) : (["lean", "old"] as const);
    const got: Record<string, StoredRow[]> = {};
    for (const which of order) {
      const t = performance.now();
      got[which] = await (which === "old" ? old : lean)(k);
      samples[which].push(performance.now() - t);
    }
    if (!same(got.old!, got.lean!)) throw new Error(`${label} ${k}: the layouts served different rows`);
    rows += got.lean!.length;
  }
  // The median of new/old over the pairs (each pair read back to back): less noisy than comparing p50s.
  const ratio = pct(
    samples.lean.map((t, i) => t / samples.old[i]!),
    0.5,
  );
  console.log(
    `  ${label.padEnd(12)} old (event_lookup) ${fmt(samples.old)} | new ${fmt(samples.lean)} | new/old ${ratio.toFixed(2)}  [${(rows / SAMPLES).toFixed(1)} rows]`,
  );
}
await close();
rmSync(dir, { recursive: true, force: true });
