/**
 * Holders per token: how many addresses started or stopped holding it in each bucket. Computed from
 * balances, not events (transfer events leave out change outputs, fees and contract inputs): the holders
 * processor follows every output and spend of the blocks topic (lib/series/holders.ts).
 */
import type { TimeseriesDefinition } from "../definition.ts";

export const tokenHolders: TimeseriesDefinition = {
  id: "token-holders",
  source: "balances",
  description:
    "Holders per token (token_id, 64 hex; ALPH is 64 zeros): addresses (asset or contract) whose balance of the token became positive (gained) or zero (lost) in the bucket, and the net change of the holder count. Balances are the sums of main-chain outputs minus spent outputs, from the first indexed block on.",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "bar",
  dimensions: ["token_id"],
  pointKeys: [
    {
      key: "holders_delta",
      agg: "net",
      description: "Holder count change in the bucket: gained minus lost (may be negative).",
    },
    { key: "gained", agg: "sum", description: "Addresses whose balance became positive in the bucket." },
    { key: "lost", agg: "sum", description: "Addresses whose balance became zero in the bucket." },
  ],
  facts: () => [],
};
