/**
 * The holders' opening balance reads a pair's periods before its t0's period and its hours from that period's start
 * (OPENING_HOURS_WHERE), from a constant bound the primary key can use: without them, each batch that touched a
 * miner's or an exchange's address read every hour it moved in since the chain's start. Checked on the plan
 * (`EXPLAIN indexes = 1`), not on a timing, and on the crossings a pass finds after 100,000 hours of history.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { splitStatements } from "../../lib/migrate.ts";
import {
  type HolderPairs,
  mergeHolderPair,
  OPENING_HOURS_WHERE,
  pairParams,
  recomputeHolders,
} from "../../lib/series/holders.ts";
import { createObjectStore } from "../../lib/stores/object-store.ts";
import { openTestCh, quietLog, type TestCh } from "../helpers/stores.ts";

let t: TestCh;
const ALPH = "0".repeat(64);
const MINER = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH";
const OTHER = "14UAjZ3qcmEVKdTo84Kwf4RprTQi86w2TefnnGFjov9xF";
const H = 3_600_000;
/** A period's start (clickhouse/0021: 1,024 hours), in 2016. */
const START = 400 * 1_024 * H;
/** Hours of history per pair: about 13 granules of the hours' key, 98 periods. */
const N = 100_000;
/** The batch's time: past the history, inside a period. */
const T0 = START + N * H + 5 * H + 1_000;

/** The statement of the migration that fills a table from the stored rows. */
function rebuild(file: string): string {
  const sql = readFileSync(new URL(`../../clickhouse/${file}`, import.meta.url), "utf8");
  const insert = splitStatements(sql).find((q) => q.replace(/--.*$/gm, "").trim().startsWith("INSERT"));
  if (!insert) throw new Error(`No INSERT in ${file}`);
  return insert;
}

beforeAll(async () => {
  t = await openTestCh();
  // Each hour: an output of 3 and a spend of 1 of it, so the balance before T0 is 2N.
  for (const address of [MINER, OTHER])
    await t.ch.command(
      "test_moves",
      `INSERT INTO holder_moves (token_id, address, ts, key, kind, block_hash, amount, main_chain, version)
       SELECT {token:String}, {address:String}, ${START} + intDiv(number, 2) * ${H} + 1000 + (number % 2) * 1000,
         hex(cityHash64(intDiv(number, 2))), if(number % 2 = 0, 'output', 'spend'), hex(cityHash64(number)),
         if(number % 2 = 0, 3, 1), true, 1
       FROM numbers(${2 * N})`,
      { token: ALPH, address },
    );
  await t.ch.command("test_hours", rebuild("0018_holder_hour_sums.sql"));
  await t.ch.command("test_periods", rebuild("0021_holder_period_sums.sql"));
  await t.ch.command("test_optimize", "OPTIMIZE TABLE holder_hour_sums FINAL");
});
afterAll(async () => {
  await t?.close();
});

/** Granules selected by the primary key, and the total, from the plan of a count under the condition. */
async function granules(table: string, where: string, params: Record<string, unknown>) {
  const plan = await t.ch.query<{ explain: string }>(
    "test_explain",
    `EXPLAIN indexes = 1 SELECT count() FROM ${table} FINAL WHERE ${where}`,
    params,
  );
  const lines = plan.map((r) => r.explain).filter((l) => /Granules: \d+\/\d+/.test(l));
  const last = lines.at(-1)?.match(/Granules: (\d+)\/(\d+)/);
  if (!last) throw new Error(`No granule count in the plan:\n${plan.map((r) => r.explain).join("\n")}`);
  return { selected: Number(last[1]), total: Number(last[2]) };
}

/** The miner touched at T0 (a spend of its whole balance) and just after it (an output of 1). */
function minerTouched(): HolderPairs {
  const pairs: HolderPairs = new Map();
  mergeHolderPair(pairs, ALPH, MINER, T0, [T0 - (T0 % H)]);
  return pairs;
}

test("a batch reads the hours of its pair's current period, not every hour since the pair's first", async () => {
  const params = pairParams(minerTouched());
  const [count] = await t.ch.query<{ n: string }>(
    "test_count",
    `SELECT count() AS n FROM holder_hour_sums FINAL WHERE ${OPENING_HOURS_WHERE}`,
    params,
  );
  // From the period's start to T0's hour: (N + 5) mod 1,024 hours, all of them with moves but the last 5.
  expect(Number(count?.n)).toBe(((N + 5) % 1_024) - 5);
  const hours = await granules("holder_hour_sums", OPENING_HOURS_WHERE, params);
  expect(hours.total).toBeGreaterThan(20);
  expect(hours.selected).toBeLessThanOrEqual(2);
});

test("the opening balance after 100,000 hours is the sum of all of them", async () => {
  // The miner spends its whole balance (2N) at T0 and receives 1 a millisecond later: it loses its holding at T0 and
  // holds again at T0 + 1 only if the opening balance is exactly 2N (less: no gain; more: no loss).
  await t.ch.insert("test_moves", "holder_moves", [
    {
      token_id: ALPH,
      address: MINER,
      ts: T0,
      key: "k-all",
      kind: "spend",
      block_hash: "b1",
      amount: String(2 * N),
      main_chain: true,
      version: 2,
    },
    {
      token_id: ALPH,
      address: MINER,
      ts: T0 + 1,
      key: "k-one",
      kind: "output",
      block_hash: "b2",
      amount: "1",
      main_chain: true,
      version: 2,
    },
  ]);
  const deps = {
    ch: t.ch,
    objects: createObjectStore({ dir: mkdtempSync(join(tmpdir(), "holders-r-")) }),
    settings: { retentionMs: 1000 * 86_400_000, pageDays: 1, segmentPoints: 240, rawSegmentMs: 3_600_000 },
    log: quietLog,
  };
  await recomputeHolders(deps, minerTouched());
  const changes = await t.ch.query<{ c: string }>(
    "test_changes",
    `SELECT concat(toString(ts - ${T0}), ' ', toString(change)) AS c FROM holder_changes FINAL
     WHERE address = {address:String} AND change != 0 ORDER BY ts`,
    { address: MINER },
  );
  expect(changes.map((r) => r.c)).toEqual(["0 -1", "1 1"]);
});
