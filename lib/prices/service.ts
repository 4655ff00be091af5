/**
 * The price reads the API serves, behind one service: a pair's spot price and its OHLCV candles (an identical
 * candle page reused for `cacheMs`, then served for `staleMs` more while one background read replaces it), and the
 * scales a pair has candles at. Pairs come from `pairs.ts`; the facts are ClickHouse's (reader.ts).
 */
import { createPageCache } from "../events/page-cache.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { PricedPair } from "./pair-types.ts";
import {
  type AverageWindow,
  type Candle,
  type CandleWindow,
  type PairRef,
  pairRef,
  readCandles,
  readScalesMeta,
  readSpot,
  type ScalesMeta,
  type SpotPrice,
} from "./reader.ts";
import type { Scale } from "./scales.ts";

export interface PriceReads {
  spot(
    pair: PricedPair,
    q: { timestamp?: number; averageWindow?: AverageWindow; scale: Scale },
  ): Promise<SpotPrice>;
  candles(pair: PricedPair, scale: Scale, window: CandleWindow): Promise<Candle[]>;
  /** Per market, the span of its candles at each scale; none for a market without candles. */
  scalesMeta(markets: string[]): Promise<Map<string, ScalesMeta>>;
}

export interface PriceReadsOptions {
  ch: Ch;
  /** OHLCV_CACHE_MS. */
  cacheMs: number;
  /** OHLCV_STALE_MS. */
  staleMs: number;
}

/** How a pair's facts are keyed and scaled: its source and symbol (the market), its token and decimals. */
export const refOf = (pair: PricedPair): PairRef =>
  pairRef({
    source_id: pair.source_id,
    source_kind: pair.source_kind,
    pair_symbol: pair.pair_symbol,
    token_id: pair.token_id,
    base_decimals: pair.base_decimals,
    quote_decimals: pair.quote_decimals,
  });

export function createPriceReads(o: PriceReadsOptions): PriceReads {
  const candlePages = createPageCache<Candle[]>({ ttlMs: o.cacheMs, staleMs: o.staleMs });
  return {
    spot: (pair, q) => readSpot(o.ch, refOf(pair), q),
    candles(pair, scale, window) {
      const ref = refOf(pair);
      // Keyed by everything the candles depend on, the pair's decimals included (an edit changes the key).
      return candlePages.get(JSON.stringify([ref, scale, window]), () =>
        readCandles(o.ch, ref, scale, window),
      );
    },
    scalesMeta: (markets) => readScalesMeta(o.ch, markets),
  };
}
