/**
 * The stores' side of exchange (cex) price sources: the source row and its available pairs in
 * Postgres, and 1m candles, their coarser scales and spot rows in ClickHouse.
 *
 * 1m candles are written as the exchange sent them (decimal text, base volume). Their `version` is
 * 2 for a closed candle and 1 for the still-open one: polling the open minute again replaces it
 * (equal versions: the last insert wins), its closed form wins over any open one, and re-polling a
 * closed candle writes the same row. Coarser scales are recomputed from the stored 1m candles of the
 * touched buckets, exactly (decimal comparison and sums at 40 decimals); their version is the sum of
 * their 1m candles' versions, so a bucket that gained or closed a minute wins, and a recompute of the
 * same candles writes the same row.
 */

import { ratio } from "../../lib/prices/decimal.ts";
import { marketOf } from "../../lib/prices/reader.ts";
import { bucketStart, SCALE_MS, SCALES, type Scale, scaleOffset } from "../../lib/prices/scales.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import type { PgQueryable } from "../../lib/stores/postgres.ts";
import type { RawCandle, SpotMarket } from "./exchange.ts";

/** Symbols the token registry knows (non-deleted tokens, plus ALPH). */
export async function knownAssetSymbols(pg: PgQueryable): Promise<Set<string>> {
  const rows = await pg.query<{ symbol: string }>(
    "cex_known_symbols",
    "SELECT DISTINCT symbol FROM tokens WHERE NOT deleted AND symbol IS NOT NULL",
  );
  return new Set(["ALPH", ...rows.map((r) => r.symbol)]);
}

/** Inserts the source row of an exchange if absent (kind cex); refuses an id of another kind. */
export async function ensureCexSource(pg: PgQueryable, id: string, label: string): Promise<void> {
  const now = Date.now();
  await pg.query(
    "cex_source_ensure",
    `INSERT INTO price_sources (id, label, kind, supports_spot, supports_candles, supports_trades, created_at, updated_at)
     VALUES ($1, $2, 'cex', true, true, false, $3, $3) ON CONFLICT (id) DO NOTHING`,
    [id, label, now],
  );
  const [row] = await pg.query<{ kind: string }>(
    "cex_source_kind",
    "SELECT kind FROM price_sources WHERE id = $1",
    [id],
  );
  if (row?.kind !== "cex") {
    throw new Error(`Price source ${id} exists with kind ${row?.kind}: an exchange source needs kind cex`);
  }
}

/**
 * Updates the source row from the exchange's markets (label, denominations) and makes its available
 * pairs the given markets: new ones are added, gone ones removed, kept ones keep their ids.
 */
export async function syncCexSource(
  pg: PgQueryable,
  source: { id: string; label: string },
  markets: readonly SpotMarket[],
): Promise<void> {
  const denominations = [...new Set(markets.map((m) => m.quote))].sort();
  await ensureCexSource(pg, source.id, source.label);
  await pg.query(
    "cex_source_update",
    `UPDATE price_sources SET label = $2, supports_spot = true, supports_candles = true,
       supported_denominations = $3, updated_at = $4 WHERE id = $1 AND kind = 'cex'`,
    [source.id, source.label, denominations, Date.now()],
  );
  await pg.query(
    "cex_available_upsert",
    `INSERT INTO price_available_pairs (source_id, pair_symbol, base_asset, quote_asset)
     SELECT $1, s, b, q FROM unnest($2::text[], $3::text[], $4::text[]) AS x(s, b, q)
     ON CONFLICT (source_id, pair_symbol) DO UPDATE SET base_asset = EXCLUDED.base_asset,
       quote_asset = EXCLUDED.quote_asset`,
    [source.id, markets.map((m) => m.symbol), markets.map((m) => m.base), markets.map((m) => m.quote)],
  );
  await pg.query(
    "cex_available_prune",
    "DELETE FROM price_available_pairs WHERE source_id = $1 AND NOT (pair_symbol = ANY($2::text[]))",
    [source.id, markets.map((m) => m.symbol)],
  );
}

/** An enabled configured pair of an exchange source. */
export interface WatchedCexPair {
  id: number;
  pair_symbol: string;
  enable_trades: boolean;
  /** Alephium token id of the base, when the registry matched it. */
  token_id: string | null;
  base_asset: string | null;
  quote_asset: string | null;
}

/** Enabled configured pairs of a source, in id order. */
export async function watchedCexPairs(pg: PgQueryable, sourceId: string): Promise<WatchedCexPair[]> {
  return pg.query<WatchedCexPair>(
    "cex_watched_pairs",
    `SELECT p.id, p.pair_symbol, p.enable_trades, p.token_id, a.base_asset, a.quote_asset
     FROM price_pairs p
     LEFT JOIN price_available_pairs a ON a.source_id = p.source_id AND a.pair_symbol = p.pair_symbol
     WHERE p.source_id = $1 AND p.enabled ORDER BY p.id`,
    [sourceId],
  );
}

/** The newest exchange trade id the trade watcher recorded for a pair (its read cursor), or null. */
export async function lastRecordedTradeId(
  pg: PgQueryable,
  sourceId: string,
  pairSymbol: string,
): Promise<string | null> {
  const rows = await pg.query<{ id: string | null }>(
    "cex_last_trade",
    `SELECT venue_trade_id AS id FROM market_trades WHERE source_id = $1 AND pair_symbol = $2
       AND venue_trade_id IS NOT NULL
     ORDER BY length(venue_trade_id) DESC, venue_trade_id DESC LIMIT 1`,
    [sourceId, pairSymbol],
  );
  return rows[0]?.id ?? null;
}

export async function markSourceOk(pg: PgQueryable, id: string, at: number): Promise<void> {
  await pg.query("cex_source_ok", "UPDATE price_sources SET status = 'ok', last_ok_at = $2 WHERE id = $1", [
    id,
    at,
  ]);
}

export async function markSourceDegraded(
  pg: PgQueryable,
  id: string,
  at: number,
  error: string,
): Promise<void> {
  await pg.query(
    "cex_source_degraded",
    "UPDATE price_sources SET status = 'degraded', last_error = $2, last_error_at = $3 WHERE id = $1",
    [id, error.slice(0, 1000), at],
  );
}

/** Start (ms) of the newest stored 1m candle of a market, or null when it has none. */
export async function lastCandleStart(ch: Ch, market: string): Promise<number | null> {
  const [row] = await ch.query<{ n: string; t: string }>(
    "cex_last_candle",
    `SELECT count() AS n, max(t) AS t FROM candles FINAL
     WHERE market = {market:String} AND scale = '1m' AND deleted = 0`,
    { market },
  );
  return row && Number(row.n) > 0 ? Number(row.t) : null;
}

/** Writes 1m candles of a market as given (closed: version 2, open: version 1). */
export async function writeCandles1m(ch: Ch, market: string, candles: readonly RawCandle[]): Promise<void> {
  if (candles.length === 0) return;
  await ch.insert(
    "cex_candles_insert",
    "candles",
    candles.map((c) => ({
      market,
      scale: "1m",
      t: c.t,
      o: c.o,
      h: c.h,
      l: c.l,
      c: c.c,
      v: c.v,
      trades: 0,
      deleted: 0,
      version: c.closed ? 2 : 1,
    })),
  );
}

const COARSE: readonly Scale[] = SCALES.filter((s) => s !== "1m");

/** Recomputes every coarser bucket holding a 1m candle in [lo, hi] (ms) from the stored 1m candles. */
export async function rollUpCandles(ch: Ch, market: string, lo: number, hi: number): Promise<void> {
  const los = COARSE.map((s) => bucketStart(s, lo));
  const his = COARSE.map((s) => bucketStart(s, hi) + SCALE_MS[s]);
  await ch.command(
    "cex_candles_rollup",
    `INSERT INTO candles (market, scale, t, o, h, l, c, v, trades, deleted, version)
     SELECT {market:String}, sc, bt,
       argMin(o, t), toString(max(toDecimal256(h, 40))), toString(min(toDecimal256(l, 40))), argMax(c, t),
       toString(sum(toDecimal256(v, 40))), toUInt32(sum(trades)), toUInt8(0), sum(version)
     FROM (
       SELECT t, o, h, l, c, v, trades, version, s.1 AS sc, t - (t - s.3) % s.2 AS bt, s.4 AS blo, s.5 AS bhi
       FROM candles FINAL
       ARRAY JOIN arrayZip({scales:Array(String)}, {widths:Array(UInt64)}, {offsets:Array(UInt64)},
         {los:Array(UInt64)}, {his:Array(UInt64)}) AS s
       WHERE market = {market:String} AND scale = '1m' AND deleted = 0
         AND t >= {min_lo:UInt64} AND t < {max_hi:UInt64}
     )
     WHERE t >= blo AND t < bhi
     GROUP BY sc, bt`,
    {
      market,
      scales: [...COARSE],
      widths: COARSE.map((s) => SCALE_MS[s]),
      offsets: COARSE.map((s) => scaleOffset(s)),
      los,
      his,
      min_lo: Math.min(...los),
      max_hi: Math.max(...his),
    },
  );
}

/** `1 / price` truncated to 40 decimals ("0" for a zero price). */
export function inverse(price: string): string {
  const [int = "0", frac = ""] = price.split(".");
  const n = BigInt(int + frac);
  return ratio(10n ** BigInt(frac.length), n);
}

/** `spot.pool` of an exchange pair. */
export const cexPool = marketOf;

/** Writes the spot row of an exchange pair: its last price at `ts` (version: ts, so a later read wins). */
export async function writeCexSpot(
  ch: Ch,
  sourceId: string,
  symbol: string,
  price: string,
  ts: number,
): Promise<void> {
  await ch.insert("cex_spot_insert", "spot", [
    {
      pool: cexPool(sourceId, symbol),
      ts,
      id: "ticker",
      base_token_id: "",
      price,
      inv_price: inverse(price),
      deleted: 0,
      version: ts,
    },
  ]);
}
