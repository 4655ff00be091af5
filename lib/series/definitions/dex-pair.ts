/**
 * Per DEX pool: base volume, trades and the last traded price, from one-pool swap events. `price` is
 * the swap event's `payload.price` (raw quote per base, 18 decimals, as the pool orients it); the
 * candles of lib/prices keep 40 decimals of the same ratio.
 */
import type { TimeseriesDefinition } from "../definition.ts";

export const dexPair: TimeseriesDefinition = {
  id: "dex-pair",
  description:
    "Per on-chain DEX pool (pool, base58 address): base-token volume (smallest unit, exact), swaps, and the raw price (quote per base, smallest units, the event's payload.price) of the bucket's last swap.",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "line",
  dimensions: ["pool"],
  pointKeys: [
    { key: "volume", agg: "sum", description: "Base-token volume in the bucket (smallest unit)." },
    { key: "trades", agg: "count", description: "Swaps in the bucket." },
    { key: "price", agg: "last", description: "Raw price of the bucket's last swap (quote per base)." },
  ],
  facts: (e) => {
    if (e.category !== "dex" || e.type !== "swap" || (e.sub_kind !== "buy" && e.sub_kind !== "sell"))
      return [];
    const p = e.payload();
    const pool = typeof p.pool_address === "string" ? p.pool_address : "";
    if (pool === "") return [];
    const dimensions = { pool };
    return [
      { dimensions, key: "volume", value: String(p.base_amount ?? "0") },
      { dimensions, key: "trades" },
      { dimensions, key: "price", value: String(p.price ?? "0") },
    ];
  },
};
