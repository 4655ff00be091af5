/**
 * Bench (issue 22, "lean lookups"): the address page read of `event_lookup` as it is (a copy of each document per
 * key) beside layouts that store less: the same table with its documents at ZSTD(9), and a keys-only table whose
 * documents come from `events` by id (two statements, or one with an IN subquery). Prints each table's compressed
 * bytes per event and each read's p50/p90 over 120 addresses, the variants interleaved (rotating order) so a busy
 * machine slows them alike; the first line's read is the bound.
 * Run: npm run bench:lookup (BENCH_EVENTS, default 1,000,000)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { openStores } from "../lib/stores/index.ts";
import { prepareStores } from "../lib/stores/prepare.ts";

const N = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), "bench-lookup-"));
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent" });
const stores = await openStores(config, createLogger({ level: "silent" }), { command: "bench" });
await prepareStores(stores, createLogger({ level: "silent" }));
const ch = stores.ch!;
const fill = (await import("node:fs")).readFileSync(new URL("./events-api.ts", import.meta.url), "utf8");
const sql = /`(INSERT INTO events[\s\S]*?numbers\(\{n:UInt64\}\)\))`/.exec(fill)![1]!;
await ch.command("fill", sql, { n: N });
// Fully merged parts, so that sizes compare like for like.
await ch.command("opt", "OPTIMIZE TABLE events FINAL");
await ch.command("opt2", "OPTIMIZE TABLE event_lookup FINAL");
await ch.command(
  "lean",
  `CREATE TABLE lean_lookup (kind LowCardinality(String), key String, id String, block_hash String,
     dapp_id LowCardinality(String), category LowCardinality(String), sub_kind LowCardinality(String),
     token_address String, main_chain Bool, version UInt64)
   ENGINE = ReplacingMergeTree(version) ORDER BY (kind, key, id, block_hash) SETTINGS index_granularity = 1024`,
);
await ch.command(
  "lean_fill",
  `INSERT INTO lean_lookup SELECT kind, key, id, block_hash, dapp_id, category, sub_kind, token_address, main_chain, version FROM event_lookup`,
);
await ch.command("opt3", "OPTIMIZE TABLE lean_lookup FINAL");
await ch.command(
  "z6",
  `CREATE TABLE zstd6_lookup AS event_lookup ENGINE = ReplacingMergeTree(version) ORDER BY (kind, key, id, block_hash)
   SETTINGS index_granularity = 1024`,
);
await ch.command("z6c", "ALTER TABLE zstd6_lookup MODIFY COLUMN doc String CODEC(ZSTD(9))");
await ch.command("z6f", "INSERT INTO zstd6_lookup SELECT * FROM event_lookup");
await ch.command("opt4", "OPTIMIZE TABLE zstd6_lookup FINAL");
const sizes = await ch.query<{ table: string; bytes: string; rows: string }>(
  "sizes",
  `SELECT table, sum(data_compressed_bytes) AS bytes, sum(rows) AS rows FROM system.parts
   WHERE active AND database = currentDatabase() AND table IN ('events', 'event_lookup', 'lean_lookup', 'zstd6_lookup') GROUP BY table`,
);
for (const s of sizes)
  console.log(
    `${s.table}: ${(Number(s.bytes) / 1e6).toFixed(1)} MB, ${s.rows} rows, ${(Number(s.bytes) / N).toFixed(0)} B/event`,
  );
const cols = "id, block_hash, main_chain, version, payload_ref, doc";
const variants: [string, (a: string) => Promise<unknown>][] = [
  [
    "lookup with docs (today)",
    (a) =>
      ch.query(
        "a",
        `SELECT ${cols} FROM event_lookup WHERE kind = 'address' AND key = {a:String} ORDER BY id DESC LIMIT 116`,
        { a },
      ),
  ],
  [
    "lean: ids, then docs by id (two statements)",
    async (a) => {
      const keys = await ch.query<{ id: string }>(
        "b",
        "SELECT id, block_hash, main_chain, version FROM lean_lookup WHERE kind = 'address' AND key = {a:String} ORDER BY id DESC LIMIT 116",
        { a },
      );
      return ch.query("c", `SELECT ${cols} FROM events WHERE id IN {ids:Array(String)}`, {
        ids: keys.map((k) => k.id),
      });
    },
  ],
  [
    "lookup with docs at ZSTD(9)",
    (a) =>
      ch.query(
        "e",
        `SELECT ${cols} FROM zstd6_lookup WHERE kind = 'address' AND key = {a:String} ORDER BY id DESC LIMIT 116`,
        { a },
      ),
  ],
  [
    "lean: one statement, IN subquery",
    (a) =>
      ch.query(
        "d",
        `SELECT ${cols} FROM events WHERE id IN (SELECT id FROM lean_lookup WHERE kind = 'address' AND key = {a:String} ORDER BY id DESC LIMIT 116)`,
        { a },
      ),
  ],
];
const samples = variants.map(() => [] as number[]);
for (let k = 0; k < 5; k++) for (const [, run] of variants) await run(`1From${k * 13}`);
for (let k = 0; k < 120; k++) {
  const a = `1From${k * 41}`;
  for (let v = 0; v < variants.length; v++) {
    const idx = (v + k) % variants.length; // rotate the order
    const t = performance.now();
    await variants[idx]![1](a);
    samples[idx]!.push(performance.now() - t);
  }
}
variants.forEach(([label], i) => {
  const s = samples[i]!.sort((x, y) => x - y);
  console.log(
    `${label}: p50 ${s[Math.floor(s.length / 2)]!.toFixed(2)} ms, p90 ${s[Math.floor(s.length * 0.9)]!.toFixed(2)} ms`,
  );
});
await stores.close();
rmSync(dir, { recursive: true, force: true });
