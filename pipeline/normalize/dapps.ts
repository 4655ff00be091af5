/**
 * Known mainnet contracts → dapp ids (seed for the Postgres `dapps` table) and an in-memory DappRegistry.
 * Addresses come from the reference brief (§7, §8, dapp-event-schemas.json); token contracts are listed under
 * the dapp that issued them, their address being `addressFromContractId(tokenId)`.
 */
import type { DappRegistry } from "../../lib/chain/types.ts";
import type { DappContractRow } from "../../lib/registry/known-contracts.ts";

export { DAPP, type DappContractRow, KNOWN_DAPP_CONTRACTS } from "../../lib/registry/known-contracts.ts";

/** In-memory registry over seed rows (first row wins on a duplicated address). */
export function createStaticDappRegistry(rows: Iterable<DappContractRow>): DappRegistry {
  const byAddress = new Map<string, string>();
  for (const row of rows) {
    if (!byAddress.has(row.contract_address)) byAddress.set(row.contract_address, row.dapp_id);
  }
  return { dappOf: (contractAddress) => byAddress.get(contractAddress) };
}
