/** Transaction fees per chain (and all chains): the `tx_fee` every transaction's main event carries. */
import { CHAIN_COUNT, chainDims, type TimeseriesDefinition } from "../definition.ts";

const DECIMAL = /^\d{1,78}$/;

export const chainFees: TimeseriesDefinition = {
  id: "chain-fees",
  description:
    "Transaction fees per chain (0-15, or all): `fees` sums gas amount × gas price of every transaction (atto-ALPH, exact; the main event's payload.tx_fee), failed scripts included; `paying` counts the transactions that paid one. Coinbase and genesis transactions pay none.",
  scales: ["0", "1m", "1h", "1d"],
  chartType: "bar",
  dimensions: ["chain_index"],
  pointKeys: [
    { key: "fees", agg: "sum", description: "Fees paid in the bucket (atto-ALPH)." },
    { key: "paying", agg: "count", description: "Transactions that paid a fee in the bucket." },
  ],
  facts: (e) => {
    if (!e.is_main || e.chain_index >= CHAIN_COUNT || e.category === "mining") return [];
    const fee = e.payload().tx_fee;
    if (typeof fee !== "string" || !DECIMAL.test(fee)) return [];
    return chainDims(e).flatMap((dimensions) => [
      { dimensions, key: "fees", value: fee },
      { dimensions, key: "paying" },
    ]);
  },
};
