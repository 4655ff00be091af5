// Test passes: embedded (figures computed from the stored events, whatever batches the bus made; the guarantees run over Kafka elsewhere).
/**
 * The candles processor, through the routes: on the demo network, the OHLCV of every watched pair
 * equals a reference computed here (test/helpers/prices.ts, plain loops) from the swap events read
 * back from the store, at every scale: pairs watched from the start (the processor's path) and a pair
 * removed and added again through the API, priced the other way round (the backfill from stored
 * events). Spot follows the newest swap and is written before the candles; oracle feeds serve the
 * newest posted value.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { SCALES } from "../../lib/prices/scales.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";
import { type RefSwap, referenceCandles } from "../helpers/prices.ts";
import { openTestCh, openTestPg } from "../helpers/stores.ts";

/**
 * Every one-pool swap of the main chain, read back from the events table (the poll route would stop at
 * the watermark, while candles include every processed block).
 */
async function readSwaps(p: TestPipeline): Promise<RefSwap[]> {
  const rows = await p.ch.ch.query<{ doc: string }>(
    "t",
    "SELECT doc FROM events FINAL WHERE main_chain AND category = 'dex' AND sub_kind IN ('buy', 'sell') ORDER BY id",
  );
  return rows.map(({ doc }) => {
    const e = JSON.parse(doc) as { id: string; timestamp: number; payload: Record<string, string> };
    return {
      id: e.id,
      timestamp: e.timestamp,
      pool: e.payload.pool_address!,
      base_token_id: e.payload.base_token_id!,
      quote_token_id: e.payload.quote_token_id!,
      base_amount: BigInt(e.payload.base_amount!),
      quote_amount: BigInt(e.payload.quote_amount!),
    };
  });
}

interface Pair {
  id: number;
  pair_symbol: string;
  token_id: string;
  decimals: number | null;
  scales_meta: Record<string, { first_ts: number; last_ts: number }>;
}

describe("candles", () => {
  let p: TestPipeline;
  // The price writer's statements in the order they ran (wrapped below), for the spot-before-candles order.
  const statements: string[] = [];
  beforeAll(async () => {
    const ch = await openTestCh();
    const { insert, command } = ch.ch;
    ch.ch.insert = (label, table, rows) => {
      statements.push(label);
      return insert.call(ch.ch, label, table, rows);
    };
    ch.ch.command = (label, sql, params) => {
      statements.push(label);
      return command.call(ch.ch, label, sql, params);
    };
    p = await startTestPipeline({ blocks: 2200, stores: { pg: await openTestPg(), ch } });
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    await p?.pg.close();
    await p?.ch.close();
  });

  const admin = () => p.api.auth(p.api.adminKey);
  const pairs = async (): Promise<Pair[]> => {
    const r = await p.api.app.inject({ url: "/price/source/devnet-dex/pair/all" });
    expect(r.statusCode).toBe(200);
    return r.json().pairs as Pair[];
  };

  it("match a reference built from the swap events, for watched and re-added pairs, at every scale", async () => {
    await p.catchUp();
    const before = await pairs();
    expect(before.length).toBeGreaterThanOrEqual(3);
    const pools = await p.pg.pg.query<{ pool_address: string; token0_id: string; token1_id: string }>(
      "t",
      "SELECT pool_address, token0_id, token1_id FROM dex_pools",
    );
    // Remove the first pair, then add its pool again priced in the other token (the list flow's DEX path).
    const first = before[0]!;
    const pool = pools.find((x) => x.pool_address === first.pair_symbol)!;
    const other = pool.token0_id === first.token_id ? pool.token1_id : pool.token0_id;
    const del = await p.api.app.inject({
      method: "POST",
      url: `/price/source/devnet-dex/pair/${first.id}/del`,
      headers: admin(),
    });
    expect(del.json()).toEqual({ ok: true, deleted: 1 });
    const add = await p.api.app.inject({
      method: "POST",
      url: "/price/source/devnet-dex/pair/add",
      headers: admin(),
      payload: { pair_symbol: first.pair_symbol, token_id: other },
    });
    expect(add.statusCode).toBe(200);
    const readded = add.json().id as number;
    // More blocks: new swaps reach every pair through the processor, the re-added one after its backfill.
    p.chain.advance(300);
    await p.catchUp();
    await waitFor("the re-added pair's backfill", async () => {
      const [row] = await p.pg.pg.query<{ at: string | null }>(
        "t",
        "SELECT backfilled_at AS at FROM price_pairs WHERE id = $1",
        [readded],
      );
      return row?.at != null;
    });

    const decimalsOf = async (token: string) => {
      if (token === ALPH_TOKEN_ID) return 18;
      const [t] = await p.pg.pg.query<{ decimals: number | null }>(
        "t",
        "SELECT decimals FROM tokens WHERE id = $1",
        [token],
      );
      return t?.decimals ?? 0;
    };
    const swaps = await readSwaps(p);
    const after = await pairs();
    expect(after.map((x) => x.id)).toContain(readded);
    let compared = 0;
    for (const pair of after) {
      const pool = pools.find((x) => x.pool_address === pair.pair_symbol)!;
      const quote = pool.token0_id === pair.token_id ? pool.token1_id : pool.token0_id;
      const [bd, qd] = [await decimalsOf(pair.token_id), await decimalsOf(quote)];
      for (const scale of SCALES) {
        const expected = referenceCandles(swaps, pair.pair_symbol, pair.token_id, bd, qd, scale);
        const r = await p.api.app.inject({
          url: `/price/pair/${pair.id}/ohlcv?scale=${scale}&pageSize=1000`,
        });
        expect(r.statusCode).toBe(200);
        expect(r.json().ohlcv, `pair ${pair.id} at ${scale}`).toEqual(expected);
        compared += expected.length;
        // scales_meta: the first and last candle of each scale.
        if (expected.length > 0) {
          expect(pair.scales_meta[scale]).toEqual({
            first_ts: expected[expected.length - 1]!.t,
            last_ts: expected[0]!.t,
          });
        }
      }
      // Spot: the newest swap of the pool, oriented for the pair.
      const newest = swaps.filter((s) => s.pool === pair.pair_symbol).at(-1);
      const spot = (await p.api.app.inject({ url: `/price/pair/${pair.id}/spot` })).json();
      expect(spot.from_spot_table).toBe(true);
      if (!newest) expect(spot.price).toBeNull();
      else {
        const [c] = referenceCandles([newest], pair.pair_symbol, pair.token_id, bd, qd, "1m");
        expect(spot.price).toBe(c!.c);
        expect(spot.timestamp).toBe(newest.timestamp);
      }
    }
    // The demo network trades enough for meaningful candles: many 1m buckets with moving prices.
    expect(compared).toBeGreaterThanOrEqual(90);
    const busiest = after.map((x) => x.scales_meta["1m"]).filter(Boolean);
    expect(busiest.length).toBeGreaterThanOrEqual(3);
  }, 300_000);

  it("writes the spot rows of a batch's trades before their candles, so a reader of candles finds the spot", async () => {
    await p.catchUp();
    const order = statements.filter((l) =>
      ["trades_insert", "trades_retract", "spot_insert", "candles_recompute"].includes(l),
    );
    let trades = 0;
    for (let i = 0; i < order.length; i++) {
      if (order[i] !== "trades_insert" && order[i] !== "trades_retract") continue;
      trades++;
      const next = order.slice(i + 1).find((l) => l === "spot_insert" || l === "candles_recompute");
      if (next !== undefined) expect(next, `statement ${i + 1} of ${order.length}`).toBe("spot_insert");
    }
    expect(trades).toBeGreaterThan(0);
    expect(order.filter((l) => l === "candles_recompute").length).toBeGreaterThan(0);
  });

  it("serves the oracle's newest value as spot, from the spot table", async () => {
    const r = await p.api.app.inject({ url: "/price/source/devnet-oracle/pair/all" });
    const feeds = r.json().pairs as { id: number; pair_symbol: string }[];
    expect(feeds.length).toBeGreaterThanOrEqual(2);
    const oracle = p.chain.oracle();
    const updates = await p.ch.ch.query<{ payload: string; ts: string }>(
      "t",
      `SELECT payload, toUnixTimestamp64Milli(timestamp) AS ts FROM events FINAL
       WHERE main_chain AND contract_address = {a:String} AND contract_event_index = 1 ORDER BY id`,
      { a: oracle.address },
    );
    expect(updates.length).toBeGreaterThan(feeds.length);
    for (const feed of feeds) {
      // Newest value of the feed by its own timestamp, as the oracle posted it (the decoded OracleUpdate).
      let newest: { value: bigint; seconds: number } | undefined;
      for (const u of updates) {
        const d = JSON.parse(u.payload) as { key: string; value: string; oracle_timestamp: number };
        if (d.key !== feed.pair_symbol) continue;
        const seconds = d.oracle_timestamp / 1000;
        if (!newest || seconds >= newest.seconds) newest = { value: BigInt(d.value), seconds };
      }
      const spot = (await p.api.app.inject({ url: `/price/pair/${feed.id}/spot` })).json();
      if (!newest) {
        expect(spot.price).toBeNull();
        continue;
      }
      expect(spot.price).toBe(Number(newest.value) / 1e8);
      expect(spot.timestamp).toBe(newest.seconds * 1000);
      expect(spot.from_spot_table).toBe(true);
    }
  });
});
