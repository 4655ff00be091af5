/**
 * Registers the simulated network's DEX factory and contracts the way an operator registers a new
 * dapp on mainnet, so that the normalizer decodes its swaps (`dex_factories`, `contracts.dapp_id`).
 */
import type { Pg } from "../lib/stores/postgres.ts";
import type { DevnetChain } from "./chain.ts";

export const DEVNET_DAPP = "devnet-dex";

export async function registerDevnetDapps(pg: Pg, chain: DevnetChain): Promise<void> {
  const factory = chain.pools()[0]?.factoryAddress;
  if (!factory) return;
  // Ayin's layout: PairCreated(token0, token1, pair, size) = event 0; Mint 0, Burn 1, Swap 2 on pairs.
  await pg.query(
    "devnet_factory",
    `INSERT INTO dex_factories (factory_address, dapp_id, created_event_index, token0_field, token1_field, pool_field,
       swap_event_index, mint_event_index, burn_event_index)
     VALUES ($1, $2, 0, 0, 1, 2, 2, 0, 1) ON CONFLICT (factory_address) DO NOTHING`,
    [factory, DEVNET_DAPP],
  );
}
