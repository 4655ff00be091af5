/**
 * The spot recompute (SPOT_SQL) reads a touched pool's trades from the earliest bound of the round, which the primary
 * key can use: with only the per-pool bounds, each round read every trade of the touched pools since their first.
 * Checked on the plan (`EXPLAIN indexes = 1`), not on a timing.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { SPOT_SQL, spotParams } from "../../lib/prices/writer.ts";
import { openTestCh, type TestCh } from "../helpers/stores.ts";

let t: TestCh;
const POOL = "pool-a";
const T0 = 1_700_000_000_000;
/** A trade a minute for 200,000 minutes (about 139 days): about 25 granules of the trades' key. */
const N = 200_000;

beforeAll(async () => {
  t = await openTestCh();
  await t.ch.command(
    "test_trades",
    `INSERT INTO trades (pool, ts, id, block_hash, tx_id, kind, base_token_id, quote_token_id, base_amount,
       quote_amount, price, inv_price, main_chain, version)
     SELECT {pool:String}, ${T0} + number * 60000, toString(number), hex(cityHash64(number)), '', 'buy', 'b', 'q',
       10, 20 + number % 7, 2, 0.5, true, 1 FROM numbers(${N})`,
    { pool: POOL },
  );
  await t.ch.command("test_optimize", "OPTIMIZE TABLE trades FINAL");
});
afterAll(async () => {
  await t?.close();
});

test("a round's spot reads the pool's trades from its bound, not every trade since the pool's first", async () => {
  // The last day of the pool's trades, as recomputeSpot looks back from a round's earliest trade.
  const params = spotParams([POOL], [T0 + (N - 1_440) * 60_000]);
  const [row] = await t.ch.query<{ main: string; last_id: string }>("test_spot", SPOT_SQL, params);
  expect(Number(row?.main)).toBe(1_440);
  expect(row?.last_id).toBe(String(N - 1));
  const plan = await t.ch.query<{ explain: string }>(
    "test_explain",
    `EXPLAIN indexes = 1 ${SPOT_SQL}`,
    params,
  );
  const last = plan
    .map((r) => r.explain)
    .filter((l) => /Granules: \d+\/\d+/.test(l))
    .at(-1)
    ?.match(/Granules: (\d+)\/(\d+)/);
  if (!last) throw new Error(`No granule count in the plan:\n${plan.map((r) => r.explain).join("\n")}`);
  const [selected, total] = [Number(last[1]), Number(last[2])];
  expect(total).toBeGreaterThan(20);
  expect(selected).toBeLessThanOrEqual(2);
});
