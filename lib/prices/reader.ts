/**
 * Reads of the price tables for the API: candles of a pair (latest first), the scales a pair has
 * candles at, and spot prices. Stored prices are raw ratios (smallest units); the pair's token
 * decimals are applied here, exactly, before the one conversion to a JSON number.
 */
import { AppError } from "../errors.ts";
import type { Ch } from "../stores/clickhouse.ts";
import { PRICE_SCALE, shiftToNumber, withPoint } from "./decimal.ts";
import { bucketStart, SCALE_MS, SCALES, type Scale } from "./scales.ts";
import { oraclePool } from "./trades.ts";

/** Where a configured pair's facts are, and how to serve them. */
export interface PairRef {
  /** `candles.market`. */
  market: string;
  /** `trades.pool` / `spot.pool`. */
  pool: string;
  /** The priced (base) token; null when the pair names none (oracle feeds of off-chain assets). */
  token_id: string | null;
  base_decimals: number;
  quote_decimals: number;
}

export function marketOf(sourceId: string, pairSymbol: string): string {
  return `${sourceId}:${pairSymbol}`;
}

/**
 * `trades.pool` / `spot.pool` of a pair: the pool address for on-chain DEX pairs, `<source>:<key>`
 * for oracle feeds, `<source>:<symbol>` for exchange (cex) pairs.
 */
export function poolOf(source: { id: string; kind: string }, pairSymbol: string): string {
  if (source.kind === "cex") return marketOf(source.id, pairSymbol);
  return source.kind === "oracle" ? oraclePool(source.id, pairSymbol) : pairSymbol;
}

export function pairRef(pair: {
  source_id: string;
  source_kind: string;
  pair_symbol: string;
  token_id: string | null;
  base_decimals: number;
  quote_decimals: number;
}): PairRef {
  return {
    market: marketOf(pair.source_id, pair.pair_symbol),
    pool: poolOf({ id: pair.source_id, kind: pair.source_kind }, pair.pair_symbol),
    token_id: pair.token_id,
    base_decimals: pair.base_decimals,
    quote_decimals: pair.quote_decimals,
  };
}

export interface Candle {
  /** Bucket start (ms). */
  t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  /** Base volume in whole tokens. */
  v: number;
}

/** `page` counts back from the latest candle; `start`/`end` select buckets whose start is in [start, end]. */
export type CandleWindow =
  | { page: number; pageSize: number }
  | { start?: number; end?: number; limit: number };

interface CandleRow {
  t: string;
  o: string;
  h: string;
  l: string;
  c: string;
  v: string;
}

const CANDLE_COLUMNS = "t, o, h, l, c, v";

export async function readCandles(
  ch: Ch,
  pair: PairRef,
  scale: Scale,
  window: CandleWindow,
): Promise<Candle[]> {
  let rows: CandleRow[];
  if ("page" in window) {
    rows = await ch.query<CandleRow>(
      "candles_page",
      `SELECT ${CANDLE_COLUMNS} FROM candles FINAL
       WHERE market = {market:String} AND scale = {scale:String} AND deleted = 0
       ORDER BY t DESC LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      { market: pair.market, scale, limit: window.pageSize, offset: window.page * window.pageSize },
    );
  } else {
    rows = await ch.query<CandleRow>(
      "candles_range",
      `SELECT ${CANDLE_COLUMNS} FROM candles FINAL
       WHERE market = {market:String} AND scale = {scale:String} AND deleted = 0
         AND t >= {start:UInt64} AND t <= {end:UInt64}
       ORDER BY t DESC LIMIT {limit:UInt32}`,
      {
        market: pair.market,
        scale,
        start: window.start ?? 0,
        end: window.end ?? Number.MAX_SAFE_INTEGER,
        limit: window.limit,
      },
    );
  }
  const shift = pair.base_decimals - pair.quote_decimals;
  return rows.map((r) => ({
    t: Number(r.t),
    o: shiftToNumber(r.o, shift),
    h: shiftToNumber(r.h, shift),
    l: shiftToNumber(r.l, shift),
    c: shiftToNumber(r.c, shift),
    v: shiftToNumber(r.v, -pair.base_decimals),
  }));
}

export type ScalesMeta = Partial<Record<Scale, { first_ts: number; last_ts: number }>>;

/**
 * First and last candle time per scale of each market. Every trade lands in one bucket of each
 * scale and the widths nest (1m divides them all), so the first and last 1m candles give every
 * scale's; those are found inside the first and last 1d candles, which keeps the scan small.
 */
export async function readScalesMeta(ch: Ch, markets: string[]): Promise<Map<string, ScalesMeta>> {
  const out = new Map<string, ScalesMeta>();
  if (markets.length === 0) return out;
  const days = await ch.query<{ market: string; first: string; last: string }>(
    "candles_day_span",
    `SELECT market, min(t) AS first, max(t) AS last FROM candles FINAL
     WHERE market IN {markets:Array(String)} AND scale = '1d' AND deleted = 0 GROUP BY market`,
    { markets },
  );
  if (days.length === 0) return out;
  const dayMs = SCALE_MS["1d"];
  const minutes = await ch.query<{ market: string; first: string; last: string }>(
    "candles_minute_span",
    `SELECT market, min(t) AS first, max(t) AS last FROM candles FINAL
     WHERE market IN {markets:Array(String)} AND scale = '1m' AND deleted = 0
       AND ((t >= {firsts:Array(UInt64)}[indexOf({markets:Array(String)}, market)]
             AND t < {firsts:Array(UInt64)}[indexOf({markets:Array(String)}, market)] + ${dayMs})
         OR (t >= {lasts:Array(UInt64)}[indexOf({markets:Array(String)}, market)]
             AND t < {lasts:Array(UInt64)}[indexOf({markets:Array(String)}, market)] + ${dayMs}))
     GROUP BY market`,
    { markets: days.map((d) => d.market), firsts: days.map((d) => d.first), lasts: days.map((d) => d.last) },
  );
  for (const m of minutes) {
    const [first, last] = [Number(m.first), Number(m.last)];
    const meta: ScalesMeta = {};
    for (const scale of SCALES)
      meta[scale] = { first_ts: bucketStart(scale, first), last_ts: bucketStart(scale, last) };
    out.set(m.market, meta);
  }
  return out;
}

/** `sum / n` of a decimal string, exact to 40 decimals (truncated). */
function meanOf(sum: string, n: number): string {
  const [int = "0", frac = ""] = sum.split(".");
  const scaled = BigInt(int + frac.padEnd(PRICE_SCALE, "0").slice(0, PRICE_SCALE));
  return withPoint(scaled / BigInt(n), PRICE_SCALE);
}

/** Windows `averageWindow` accepts. */
export const AVERAGE_WINDOWS = ["1m", "5m", "15m", "1h", "4h", "1d", "1w"] as const;
export type AverageWindow = (typeof AVERAGE_WINDOWS)[number];

export interface SpotPrice {
  price: number | null;
  /** Time (ms) of what the price comes from: the trade or value, the candle's start, or the window's end. */
  timestamp: number | null;
  /** ISO time of that data: the trade or value time, or the end of the candle or window. */
  updated_at: string | null;
  from_spot_table: boolean;
}

const NONE = { price: null, timestamp: null, updated_at: null };

/**
 * Spot price of a pair. Without `timestamp` and `averageWindow`: the newest trade or oracle value
 * (the spot table). With `timestamp`: the close of the last `scale` candle starting at or before it.
 * With `averageWindow`: the mean close of the `scale` candles overlapping the window that ends at
 * `timestamp` (or now).
 */
export async function readSpot(
  ch: Ch,
  pair: PairRef,
  q: { timestamp?: number; averageWindow?: AverageWindow; scale: Scale; now?: number },
): Promise<SpotPrice> {
  const shift = pair.base_decimals - pair.quote_decimals;
  if (q.timestamp === undefined && q.averageWindow === undefined) {
    const [row] = await ch.query<{ ts: string; base_token_id: string; price: string; inv_price: string }>(
      "spot_read",
      `SELECT ts, base_token_id, toString(price) AS price, toString(inv_price) AS inv_price
       FROM spot FINAL WHERE pool = {pool:String} AND deleted = 0`,
      { pool: pair.pool },
    );
    if (!row) return { ...NONE, from_spot_table: true };
    // The spot row is oriented as the pool orients it; a pair priced in the pool's base token inverts it.
    const inverted =
      pair.token_id !== null && row.base_token_id !== "" && row.base_token_id !== pair.token_id;
    const ts = Number(row.ts);
    return {
      price: shiftToNumber(inverted ? row.inv_price : row.price, shift),
      timestamp: ts,
      updated_at: new Date(ts).toISOString(),
      from_spot_table: true,
    };
  }
  const width = SCALE_MS[q.scale];
  if (q.averageWindow === undefined) {
    const [row] = await ch.query<{ t: string; c: string }>(
      "spot_candle_at",
      `SELECT t, toString(c) AS c FROM candles FINAL
       WHERE market = {market:String} AND scale = {scale:String} AND deleted = 0 AND t <= {ts:UInt64}
       ORDER BY t DESC LIMIT 1`,
      { market: pair.market, scale: q.scale, ts: q.timestamp },
    );
    if (!row) return { ...NONE, from_spot_table: false };
    const t = Number(row.t);
    return {
      price: shiftToNumber(row.c, shift),
      timestamp: t,
      updated_at: new Date(Math.min(t + width, q.timestamp ?? t + width)).toISOString(),
      from_spot_table: false,
    };
  }
  const end = q.timestamp ?? q.now ?? Date.now();
  const windowMs = SCALE_MS[q.averageWindow];
  if (windowMs < width) {
    throw new AppError(
      "bad_request",
      `averageWindow ${q.averageWindow} is shorter than scale ${q.scale}: choose a scale of at most ${q.averageWindow}`,
      { status: 400 },
    );
  }
  const [row] = await ch.query<{ n: string; sum: string }>(
    "spot_window_average",
    `SELECT count() AS n, toString(sum(toDecimal256(c, 40))) AS sum FROM candles FINAL
     WHERE market = {market:String} AND scale = {scale:String} AND deleted = 0
       AND t <= {end:UInt64} AND t + {width:UInt64} > {start:Int64}`,
    { market: pair.market, scale: q.scale, end, width, start: end - windowMs },
  );
  if (!row || Number(row.n) === 0) return { ...NONE, from_spot_table: false };
  return {
    price: shiftToNumber(meanOf(row.sum, Number(row.n)), shift),
    timestamp: end,
    updated_at: new Date(end).toISOString(),
    from_spot_table: false,
  };
}
