/** Mining rewards per chain (and all chains): coinbase and uncle rewards in ALPH's smallest unit. */
import { CHAIN_COUNT, chainDims, type TimeseriesDefinition } from "../definition.ts";

export const chainMiningRewards: TimeseriesDefinition = {
  id: "chain-mining-rewards",
  description:
    "Mining rewards per chain (0-15, or all): `rewards` sums coinbase and ghost-uncle rewards (atto-ALPH, exact), `uncles` counts uncle rewards.",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "bar",
  dimensions: ["chain_index"],
  pointKeys: [
    { key: "rewards", agg: "sum", description: "Rewards paid in the bucket (atto-ALPH)." },
    { key: "uncles", agg: "count", description: "Uncle rewards paid in the bucket." },
  ],
  facts: (e) => {
    if (e.category !== "mining" || e.chain_index >= CHAIN_COUNT) return [];
    const uncle = e.sub_kind === "uncle_reward";
    if (!uncle && e.sub_kind !== "coinbase") return [];
    return chainDims(e).flatMap((dimensions) => [
      { dimensions, key: "rewards", value: e.amount },
      ...(uncle ? [{ dimensions, key: "uncles" }] : []),
    ]);
  },
};
