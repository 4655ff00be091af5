/** Blocks per chain (and all chains): one per coinbase (every block above height 0 has one). */
import { CHAIN_COUNT, chainDims, type TimeseriesDefinition } from "../definition.ts";

export const chainBlocks: TimeseriesDefinition = {
  id: "chain-blocks",
  description:
    "Main-chain blocks per chain (chain_index 0-15, or all), counted by their coinbase reward event (genesis blocks have none).",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "bar",
  dimensions: ["chain_index"],
  pointKeys: [{ key: "blocks", agg: "count", description: "Blocks in the bucket." }],
  facts: (e) =>
    e.category === "mining" && e.sub_kind === "coinbase" && e.chain_index < CHAIN_COUNT
      ? chainDims(e).map((dimensions) => ({ dimensions, key: "blocks" }))
      : [],
};
