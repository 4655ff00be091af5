/** Transactions per chain (and all chains): one per main event (every transaction has exactly one). */
import { CHAIN_COUNT, chainDims, type TimeseriesDefinition } from "../definition.ts";

export const chainTransactions: TimeseriesDefinition = {
  id: "chain-transactions",
  description: "Transactions per chain (chain_index 0-15, or all): main events, one per transaction.",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "bar",
  dimensions: ["chain_index"],
  pointKeys: [{ key: "transactions", agg: "count", description: "Transactions in the bucket." }],
  facts: (e) =>
    e.is_main && e.chain_index < CHAIN_COUNT
      ? chainDims(e).map((dimensions) => ({ dimensions, key: "transactions" }))
      : [],
};
