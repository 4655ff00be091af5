/** Every series definition. Adding one: a file beside this one, a line here, then `series backfill`. */
import type { ListDefinition, TimeseriesDefinition } from "../definition.ts";
import { chainActiveAddresses } from "./chain-active-addresses.ts";
import { chainBlocks } from "./chain-blocks.ts";
import { chainFees } from "./chain-fees.ts";
import { chainMiningRewards } from "./chain-mining-rewards.ts";
import { chainTransactions } from "./chain-transactions.ts";
import { dappActivity } from "./dapp-activity.ts";
import { dexPair } from "./dex-pair.ts";
import { dappsByUsers, tokensByVolume } from "./lists.ts";
import { tokenHolders } from "./token-holders.ts";
import { tokenTransfers } from "./token-transfers.ts";

export const TIMESERIES: readonly TimeseriesDefinition[] = [
  chainTransactions,
  chainBlocks,
  chainActiveAddresses,
  chainMiningRewards,
  chainFees,
  tokenTransfers,
  tokenHolders,
  dappActivity,
  dexPair,
];

export const LISTS: readonly ListDefinition[] = [tokensByVolume, dappsByUsers];

export function timeseriesById(id: string): TimeseriesDefinition | undefined {
  return TIMESERIES.find((d) => d.id === id);
}
