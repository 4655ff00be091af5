/**
 * The series recompute's range condition (RANGE_WHERE) lets the primary key skip what lies outside the touched spans:
 * without its constant bounds, each round of a backfill read every fact of the touched instances since the chain's
 * start. Checked on the plan (`EXPLAIN indexes = 1`), not on a timing.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { RANGE_WHERE } from "../../lib/series/points.ts";
import { openTestCh, type TestCh } from "../helpers/stores.ts";

let t: TestCh;
const ID = "a".repeat(64);
const OTHER = "b".repeat(64);
const T0 = 1_700_000_000_000;
/** A fact a second for 100,000 s per instance: about 25 granules of the facts' key. */
const N = 100_000;

beforeAll(async () => {
  t = await openTestCh();
  for (const id of [ID, OTHER])
    await t.ch.command(
      "test_facts",
      `INSERT INTO series_block_facts (series_id, instance_id, dimensions, key, agg, ts, block_hash, value, last_id,
         members, main_chain, version)
       SELECT 'chain-blocks', {id:String}, '{}', 'blocks', 'count', ${T0} + number * 1000, hex(cityHash64(number)),
         '1', '', [], true, 1 FROM numbers(${N})`,
      { id },
    );
  await t.ch.command("test_optimize", "OPTIMIZE TABLE series_block_facts FINAL");
});
afterAll(async () => {
  await t?.close();
});

/** Granules selected by the primary key, and the total, from the plan of a count under the condition. */
async function granules(where: string, params: Record<string, unknown>) {
  const plan = await t.ch.query<{ explain: string }>(
    "test_explain",
    `EXPLAIN indexes = 1 SELECT count() FROM series_block_facts FINAL WHERE ${where}`,
    params,
  );
  const lines = plan.map((r) => r.explain).filter((l) => /Granules: \d+\/\d+/.test(l));
  const last = lines.at(-1)?.match(/Granules: (\d+)\/(\d+)/);
  if (!last) throw new Error(`No granule count in the plan:\n${plan.map((r) => r.explain).join("\n")}`);
  return { selected: Number(last[1]), total: Number(last[2]) };
}

test("a range's facts are read from its own granules, not from every fact of the instance", async () => {
  // Two hours at the end of the instance's history, and the other instance's first hour.
  const params = {
    ids: [ID, OTHER],
    los: [T0 + (N - 7_200) * 1000, T0],
    his: [T0 + N * 1000, T0 + 3_600_000],
  };
  const [count] = await t.ch.query<{ n: string }>(
    "test_count",
    `SELECT count() AS n FROM series_block_facts FINAL WHERE ${RANGE_WHERE("ts")}`,
    params,
  );
  expect(Number(count?.n)).toBe(7_200 + 3_600);
  // One instance's last two hours: a few of its granules, not its whole history.
  const recent = await granules(RANGE_WHERE("ts"), {
    ids: [ID],
    los: params.los.slice(0, 1),
    his: params.his.slice(0, 1),
  });
  expect(recent.total).toBeGreaterThan(20);
  expect(recent.selected).toBeLessThanOrEqual(4);
  expect(recent.selected).toBeLessThan(recent.total / 5);
});
