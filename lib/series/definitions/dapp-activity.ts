/** Activity per dapp: events and distinct users (exact when rolled up). */
import type { TimeseriesDefinition } from "../definition.ts";

export const dappActivity: TimeseriesDefinition = {
  id: "dapp-activity",
  description:
    "Activity per dapp (dapp_id; protocol events are `alephium`, unattributed ones `unknown`): events, and distinct users (non-empty `from`), exact at every scale.",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "line",
  dimensions: ["dapp_id"],
  pointKeys: [
    { key: "events", agg: "count", description: "Normalized events of the dapp in the bucket." },
    { key: "users", agg: "distinct", description: "Distinct senders of the dapp's events in the bucket." },
  ],
  facts: (e) => {
    const dimensions = { dapp_id: e.dapp_id };
    return e.from === ""
      ? [{ dimensions, key: "events" }]
      : [
          { dimensions, key: "events" },
          { dimensions, key: "users", member: e.from },
        ];
  },
};
