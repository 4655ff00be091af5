/**
 * The candles processor: candles of watched pairs equal a reference computed here from the swap
 * events read back from the store, at every scale, for pairs watched from the start (the
 * processor's path) and for a pair added later (the backfill from stored events).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { backfillPair } from "../../lib/prices/backfill.ts";
import { pairRef, readCandles } from "../../lib/prices/reader.ts";
import { SCALES } from "../../lib/prices/scales.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { type RefSwap, referenceCandles } from "../helpers/prices.ts";
import { quietLog } from "../helpers/stores.ts";

interface PoolRow {
  pool_address: string;
  token0_id: string;
  token1_id: string;
}

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

describe("candles", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 600 });
  }, 120_000);
  afterAll(async () => p?.close());

  it("match a reference built from the swap events, for watched and later-added pairs, at every scale", async () => {
    await p.catchUp();
    const pg = p.pg.pg;
    const pools = await pg.query<PoolRow>(
      "t",
      "SELECT pool_address, token0_id, token1_id FROM dex_pools ORDER BY id",
    );
    expect(pools.length).toBeGreaterThanOrEqual(2);
    await pg.query(
      "t",
      `INSERT INTO price_sources (id, label, kind, dapp_id, supports_spot, supports_candles, supports_trades, created_at, updated_at)
       VALUES ('test-dex', 'Test DEX', 'onchain_dex', 'devnet-dex', true, true, true, 0, 0) ON CONFLICT (id) DO NOTHING`,
    );
    // The first pool priced in its quote token (inverted), the second as the pool orients it.
    const pairs = pools.slice(0, 2).map((pool, i) => {
      const base = pool.token0_id === ALPH_TOKEN_ID ? pool.token1_id : pool.token0_id;
      const quote = base === pool.token0_id ? pool.token1_id : pool.token0_id;
      return { pool: pool.pool_address, token: i === 0 ? quote : base, other: i === 0 ? base : quote };
    });
    const ids: number[] = [];
    for (const pair of pairs) {
      const [row] = await pg.query<{ id: number }>(
        "t",
        `INSERT INTO price_pairs (source_id, pair_symbol, pair_label, token_id, quote_token_id, denomination, created_at, updated_at)
         VALUES ('test-dex', $1, 'X/Y', $2, $3, 'Y', 0, 0) RETURNING id`,
        [pair.pool, pair.token, pair.other],
      );
      ids.push(row!.id);
    }
    // Pair 0 is rebuilt from stored events now; pair 1 waits for the processor's next batch.
    const rebuilt = await backfillPair({ ch: p.ch.ch, pg, log: quietLog }, { id: ids[0]! });
    expect(rebuilt.done).toBe(true);
    expect(rebuilt.trades).toBeGreaterThan(0);
    p.chain.advance(300);
    await p.catchUp();

    const decimals = async (token: string) => {
      if (token === ALPH_TOKEN_ID) return 18;
      const [t] = await pg.query<{ decimals: number | null }>(
        "t",
        "SELECT decimals FROM tokens WHERE id = $1",
        [token],
      );
      return t?.decimals ?? 0;
    };
    const swaps = await readSwaps(p);
    for (const [i, pair] of pairs.entries()) {
      const [bd, qd] = [await decimals(pair.token), await decimals(pair.other)];
      const ref = pairRef({
        source_id: "test-dex",
        source_kind: "onchain_dex",
        pair_symbol: pair.pool,
        token_id: pair.token,
        base_decimals: bd,
        quote_decimals: qd,
      });
      let compared = 0;
      for (const scale of SCALES) {
        const expected = referenceCandles(swaps, pair.pool, pair.token, bd, qd, scale);
        const served = await readCandles(p.ch.ch, ref, scale, { page: 0, pageSize: 1000 });
        expect(served, `pair ${ids[i]} at ${scale}`).toEqual(expected);
        compared += expected.length;
      }
      expect(compared).toBeGreaterThan(8);
    }
  }, 300_000);
});
