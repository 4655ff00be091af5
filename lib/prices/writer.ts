/**
 * The writer of the price tables (`trades`, `candles`, `spot`). Trades are facts keyed by (pool, ts,
 * event id, block hash) with the block message's seq as version: a replay writes the same rows, a
 * retraction writes them again with main_chain = false and a newer seq. Candles and spot are never
 * summed on insert: each batch recomputes every bucket (and spot row) it touched from `trades FINAL`,
 * so any order, repetition or retraction of batches leaves the state of one clean pass.
 */
import type { Ch } from "../stores/clickhouse.ts";
import { bucketStart, SCALE_MS, SCALES, type Scale, scaleOffset } from "./scales.ts";
import type { TradeRow } from "./trades.ts";

/** A watched pair as the candles writer needs it. */
export interface CandlePair {
  /** `candles.market`: `<source id>:<pair symbol>`. */
  market: string;
  /** `trades.pool` the pair reads. */
  pool: string;
  /** The pair's base token: trades whose quote is this token are inverted (empty: as the pool orients them). */
  token_id: string;
}

/** Time span of the trades a batch wrote or retracted, per pool. */
export type Touched = Map<string, { lo: number; hi: number }>;

export function touch(touched: Touched, pool: string, ts: number): void {
  const span = touched.get(pool);
  if (!span) touched.set(pool, { lo: ts, hi: ts });
  else {
    if (ts < span.lo) span.lo = ts;
    if (ts > span.hi) span.hi = ts;
  }
}

export async function insertTrades(ch: Ch, rows: readonly TradeRow[]): Promise<void> {
  await ch.insert("trades_insert", "trades", rows);
}

/**
 * Marks the trades of blocks that left the main chain (a newer seq wins), and returns the spans
 * they covered so their buckets are recomputed.
 */
export async function retractTrades(
  ch: Ch,
  blocks: readonly { block_hash: string; seq: number }[],
  touched: Touched,
): Promise<void> {
  for (const { block_hash, seq } of blocks) {
    const spans = await ch.query<{ pool: string; lo: string; hi: string }>(
      "trades_retracted_spans",
      "SELECT pool, min(ts) AS lo, max(ts) AS hi FROM trades FINAL WHERE block_hash = {hash:String} GROUP BY pool",
      { hash: block_hash },
    );
    if (spans.length === 0) continue;
    // No `main_chain` condition here: REPLACE makes `main_chain` an alias of false inside this SELECT.
    await ch.command(
      "trades_retract",
      `INSERT INTO trades SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
       FROM trades FINAL WHERE block_hash = {hash:String}`,
      { seq, hash: block_hash },
    );
    for (const s of spans) {
      touch(touched, s.pool, Number(s.lo));
      touch(touched, s.pool, Number(s.hi));
    }
  }
}

/** Version of a recomputed row: the newest trade version it saw, then how many main-chain trades. */
const VERSION = "max(version) * 1000000 + least(countIf(main_chain), 999999)";

/**
 * Recomputes, from `trades FINAL`, every candle bucket of `pairs` that the spans touch, at every
 * scale. A bucket left without main-chain trades is written with deleted = 1.
 */
export async function recomputeCandles(
  ch: Ch,
  pairs: readonly CandlePair[],
  touched: Touched,
  scales: readonly Scale[] = SCALES,
): Promise<number> {
  const jobs = {
    markets: [] as string[],
    pools: [] as string[],
    tokens: [] as string[],
    scales: [] as string[],
    widths: [] as number[],
    offsets: [] as number[],
    los: [] as number[],
    his: [] as number[],
  };
  for (const pair of pairs) {
    const span = touched.get(pair.pool);
    if (!span) continue;
    for (const scale of scales) {
      jobs.markets.push(pair.market);
      jobs.pools.push(pair.pool);
      jobs.tokens.push(pair.token_id);
      jobs.scales.push(scale);
      jobs.widths.push(SCALE_MS[scale]);
      jobs.offsets.push(scaleOffset(scale));
      jobs.los.push(bucketStart(scale, span.lo));
      jobs.his.push(bucketStart(scale, span.hi) + SCALE_MS[scale]);
    }
  }
  if (jobs.markets.length === 0) return 0;
  await ch.command(
    "candles_recompute",
    `INSERT INTO candles (market, scale, t, o, h, l, c, v, trades, deleted, version)
     SELECT market, scale, t,
       toString(argMinIf(p, (ts, id), main_chain)), toString(maxIf(p, main_chain)), toString(minIf(p, main_chain)),
       toString(argMaxIf(p, (ts, id), main_chain)), toString(sumIf(vol, main_chain)),
       toUInt32(countIf(main_chain)), toUInt8(countIf(main_chain) = 0), ${VERSION}
     FROM (
       SELECT ts, id, main_chain, version,
         {markets:Array(String)}[j] AS market,
         {scales:Array(String)}[j] AS scale,
         ts - (ts - {offsets:Array(UInt64)}[j]) % {widths:Array(UInt64)}[j] AS t,
         quote_token_id != '' AND quote_token_id = {tokens:Array(String)}[j] AS inverted,
         if(inverted, inv_price, price) AS p,
         if(inverted, quote_amount, base_amount) AS vol
       FROM trades FINAL
       ARRAY JOIN arrayFilter(
         i -> {pools:Array(String)}[i] = pool AND ts >= {los:Array(UInt64)}[i] AND ts < {his:Array(UInt64)}[i],
         range(1, {n:UInt32} + 1)) AS j
       WHERE pool IN {pool_set:Array(String)} AND ts >= {min_lo:UInt64} AND ts < {max_hi:UInt64}
     )
     GROUP BY market, scale, t`,
    {
      ...jobs,
      n: jobs.markets.length,
      pool_set: [...new Set(jobs.pools)],
      min_lo: Math.min(...jobs.los),
      max_hi: Math.max(...jobs.his),
    },
  );
  return jobs.markets.length;
}

/** How far back the newest main-chain trade of a touched pool is looked for before scanning it all. */
const SPOT_LOOKBACK_MS = 86_400_000;

interface SpotRow {
  pool: string;
  last_ts: string;
  last_id: string;
  last_base: string;
  last_price: string;
  last_inv: string;
  main: string;
  ver: string;
}

/**
 * The newest main-chain trade of each pool from its bound on. The earliest bound is a constant the primary key can use
 * (the per-pool ones are not: without it, every round read each touched pool's trades since its first).
 */
export const SPOT_SQL = `SELECT pool,
    argMaxIf(ts, (ts, id), main_chain) AS last_ts, argMaxIf(id, (ts, id), main_chain) AS last_id,
    argMaxIf(base_token_id, (ts, id), main_chain) AS last_base,
    toString(argMaxIf(price, (ts, id), main_chain)) AS last_price,
    toString(argMaxIf(inv_price, (ts, id), main_chain)) AS last_inv,
    countIf(main_chain) AS main, ${VERSION} AS ver
  FROM trades FINAL
  WHERE pool IN {pools:Array(String)} AND ts >= {lo_min:UInt64}
    AND ts >= {los:Array(UInt64)}[indexOf({pools:Array(String)}, pool)]
  GROUP BY pool`;

/** SPOT_SQL's parameters: the pools and their bounds. */
export const spotParams = (pools: string[], los: number[]) => ({
  pools,
  los,
  lo_min: los.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY),
});

async function spotRows(ch: Ch, pools: string[], los: number[]): Promise<SpotRow[]> {
  return ch.query<SpotRow>("spot_recompute", SPOT_SQL, spotParams(pools, los));
}

/** Recomputes the spot row (newest main-chain trade) of every touched pool. */
export async function recomputeSpot(ch: Ch, touched: Touched): Promise<void> {
  if (touched.size === 0) return;
  const pools = [...touched.keys()];
  const recent = await spotRows(
    ch,
    pools,
    pools.map((p) => Math.max(0, touched.get(p)!.lo - SPOT_LOOKBACK_MS)),
  );
  // A pool whose recent trades all left the main chain: look at all of its trades.
  const found = new Map(recent.filter((r) => Number(r.main) > 0).map((r) => [r.pool, r]));
  const rest = pools.filter((p) => !found.has(p));
  const older =
    rest.length > 0
      ? await spotRows(
          ch,
          rest,
          rest.map(() => 0),
        )
      : [];
  const rows = [...found.values(), ...older].map((r) => {
    const live = Number(r.main) > 0;
    return {
      pool: r.pool,
      ts: live ? r.last_ts : "0",
      id: live ? r.last_id : "",
      base_token_id: live ? r.last_base : "",
      price: live ? r.last_price : "0",
      inv_price: live ? r.last_inv : "0",
      deleted: live ? 0 : 1,
      version: r.ver,
    };
  });
  await ch.insert("spot_insert", "spot", rows);
}
