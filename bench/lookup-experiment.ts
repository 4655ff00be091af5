/**
 * Experiment (not a bench script): event_lookup with documents vs keys only + documents from `events`.
 * Run: npx tsx bench/lookup-experiment.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { openStores } from "../lib/stores/index.ts";

const N = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), "lookup-exp-"));
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent" });
const stores = await openStores(config, createLogger({ level: "silent" }), { migrate: true, command: "bench" });
const ch = stores.ch!;
const fill = (await import("node:fs")).readFileSync(new URL("./events-api.ts", import.meta.url), "utf8");
const sql = /`(INSERT INTO events[\s\S]*?numbers\(\{n:UInt64\}\)\))`/.exec(fill)![1]!;
await ch.command("fill", sql, { n: N });
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
const sizes = await ch.query<{ table: string; bytes: string; rows: string }>(
  "sizes",
  `SELECT table, sum(data_compressed_bytes) AS bytes, sum(rows) AS rows FROM system.parts
   WHERE active AND database = currentDatabase() AND table IN ('events', 'event_lookup', 'lean_lookup') GROUP BY table`,
);
for (const s of sizes) console.log(`${s.table}: ${(Number(s.bytes) / 1e6).toFixed(1)} MB, ${s.rows} rows, ${(Number(s.bytes) / N).toFixed(0)} B/event`);
const cols = "id, block_hash, main_chain, version, payload_ref, doc";
const time = async (label: string, run: (a: string) => Promise<unknown>) => {
  for (let k = 0; k < 5; k++) await run(`1From${k * 13}`);
  const samples: number[] = [];
  for (let round = 0; round < 3; round++)
    for (let k = 0; k < 40; k++) {
      const t = performance.now();
      await run(`1From${k * 97 + round}`);
      samples.push(performance.now() - t);
    }
  samples.sort((a, b) => a - b);
  console.log(`${label}: p50 ${samples[Math.floor(samples.length / 2)]!.toFixed(2)} ms, p90 ${samples[Math.floor(samples.length * 0.9)]!.toFixed(2)} ms`);
};
await time("lookup with docs (today)", (a) =>
  ch.query("a", `SELECT ${cols} FROM event_lookup WHERE kind = 'address' AND key = {a:String} ORDER BY id DESC LIMIT 116`, { a }),
);
await time("lean: ids, then docs by id (two statements)", async (a) => {
  const keys = await ch.query<{ id: string; block_hash: string }>(
    "b",
    "SELECT id, block_hash, main_chain, version FROM lean_lookup WHERE kind = 'address' AND key = {a:String} ORDER BY id DESC LIMIT 116",
    { a },
  );
  return ch.query("c", `SELECT ${cols} FROM events WHERE id IN {ids:Array(String)}`, { ids: keys.map((k) => k.id) });
});
await time("lean: one statement, IN subquery", (a) =>
  ch.query(
    "d",
    `SELECT ${cols} FROM events WHERE id IN (SELECT id FROM lean_lookup WHERE kind = 'address' AND key = {a:String} ORDER BY id DESC LIMIT 116)`,
    { a },
  ),
);
await stores.close();
rmSync(dir, { recursive: true, force: true });
