/**
 * Per DEX pool: volumes, trades and the last traded price of one-pool swap events. The price is the
 * trade price of lib/prices (`swapOf`: quote per base in smallest units, 40 decimals), so at 1m, 1h and
 * 1d it equals the close of the pool's candles in pool orientation ("Prices I").
 */
import { isSwap, swapOf } from "../../prices/trades.ts";
import type { TimeseriesDefinition } from "../definition.ts";

export const dexPair: TimeseriesDefinition = {
  id: "dex-pair",
  description:
    "Per on-chain DEX pool (pool, base58 address), in the pool's orientation: base and quote volume (smallest units, exact), swaps, and `price`, the trade price of the bucket's last swap (quote per base in smallest units, 40 decimals; the candles' close at 1m, 1h and 1d).",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "line",
  dimensions: ["pool"],
  pointKeys: [
    { key: "volume", agg: "sum", description: "Base-token volume in the bucket (smallest unit)." },
    { key: "quote_volume", agg: "sum", description: "Quote-token volume in the bucket (smallest unit)." },
    { key: "trades", agg: "count", description: "Swaps in the bucket." },
    {
      key: "price",
      agg: "last",
      description: "Trade price of the bucket's last swap (quote per base, smallest units, 40 decimals).",
    },
  ],
  facts: (e) => {
    if (!isSwap(e)) return [];
    const swap = swapOf(e.payload());
    if (!swap) return [];
    const dimensions = { pool: swap.pool };
    return [
      { dimensions, key: "volume", value: swap.base_amount },
      { dimensions, key: "quote_volume", value: swap.quote_amount },
      { dimensions, key: "trades" },
      { dimensions, key: "price", value: swap.price },
    ];
  },
};
