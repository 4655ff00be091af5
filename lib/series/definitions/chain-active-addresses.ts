/** Active addresses per chain (and all chains): distinct signers of transactions (exact at every scale). */
import { CHAIN_COUNT, chainDims, type TimeseriesDefinition } from "../definition.ts";

export const chainActiveAddresses: TimeseriesDefinition = {
  id: "chain-active-addresses",
  description:
    "Distinct addresses that signed a transaction (the `from` of main events), per chain (0-15, or all). Exact at every scale: coarser buckets merge uniqExact states, never sum finer counts.",
  scales: ["1m", "1h", "1d"],
  chartType: "line",
  dimensions: ["chain_index"],
  pointKeys: [{ key: "addresses", agg: "distinct", description: "Distinct signers in the bucket." }],
  facts: (e) =>
    e.is_main && e.from !== "" && e.chain_index < CHAIN_COUNT
      ? chainDims(e).map((dimensions) => ({ dimensions, key: "addresses", member: e.from }))
      : [],
};
