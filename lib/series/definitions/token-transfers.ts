/** Transfers per token: count and volume of send and payout events (ALPH is the 64-zero token id). */
import type { TimeseriesDefinition } from "../definition.ts";

export const tokenTransfers: TimeseriesDefinition = {
  id: "token-transfers",
  description:
    "Transfers per token (token_id, 64 hex; ALPH is 64 zeros): send and payout events, their count and summed amount (smallest unit, exact).",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "bar",
  dimensions: ["token_id"],
  pointKeys: [
    { key: "transfers", agg: "count", description: "Transfer events in the bucket." },
    { key: "volume", agg: "sum", description: "Amount transferred in the bucket (token's smallest unit)." },
  ],
  facts: (e) => {
    if (e.category !== "transfer" || (e.sub_kind !== "send" && e.sub_kind !== "payout")) return [];
    const dimensions = { token_id: e.token_id };
    return [
      { dimensions, key: "transfers" },
      { dimensions, key: "volume", value: e.amount },
    ];
  },
};
