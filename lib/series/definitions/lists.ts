/** List metrics: instances of a timeseries ranked over a trailing window. */
import type { ListDefinition } from "../definition.ts";

export const tokensByVolume: ListDefinition = {
  id: "tokens-by-volume-24h",
  description: "Tokens ranked by transferred volume over the last 24 hours (token-transfers.volume).",
  dimensions: ["token_id"],
  sortKey: "token-transfers.volume",
  windowMs: 86_400_000,
  pageSize: 50,
};

export const dappsByUsers: ListDefinition = {
  id: "dapps-by-users-7d",
  description: "Dapps ranked by distinct users over the last 7 days (dapp-activity.users, exact).",
  dimensions: ["dapp_id"],
  sortKey: "dapp-activity.users",
  windowMs: 7 * 86_400_000,
  pageSize: 50,
};
