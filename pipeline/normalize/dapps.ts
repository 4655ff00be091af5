/**
 * Known mainnet contracts → dapp ids (seed for the Postgres `dapps` table) and an in-memory DappRegistry.
 * Addresses come from the reference brief (§7, §8, dapp-event-schemas.json); token contracts are listed under
 * the dapp that issued them, their address being `addressFromContractId(tokenId)`.
 */
import type { DappRegistry, RawBlock } from "../../lib/chain/types.ts";
import type { DappContractRow } from "../../lib/registry/known-contracts.ts";
import { fieldOf } from "./chain-utils.ts";

/** Event index of the node's ContractCreated system event. */
const CONTRACT_CREATED_EVENT = -1;

export { DAPP, type DappContractRow, KNOWN_DAPP_CONTRACTS } from "../../lib/registry/known-contracts.ts";

/** In-memory registry over seed rows (first row wins on a duplicated address). */
export function createStaticDappRegistry(rows: Iterable<DappContractRow>): DappRegistry {
  const byAddress = new Map<string, string>();
  for (const row of rows) {
    if (!byAddress.has(row.contract_address)) byAddress.set(row.contract_address, row.dapp_id);
  }
  return { dappOf: (contractAddress) => byAddress.get(contractAddress) };
}

export interface MutableDappRegistry extends DappRegistry {
  /** Records what a block announced; an address already known keeps its dapp. */
  add(rows: Iterable<{ contract_address: string; dapp_id: string }>): void;
}

/** Registry over seed rows that learns from blocks as they are normalized, in chain order. */
export function createDappRegistry(rows: Iterable<DappContractRow>): MutableDappRegistry {
  const byAddress = new Map<string, string>();
  const add = (more: Iterable<{ contract_address: string; dapp_id: string }>) => {
    for (const row of more)
      if (!byAddress.has(row.contract_address)) byAddress.set(row.contract_address, row.dapp_id);
  };
  add(rows);
  return { dappOf: (contractAddress) => byAddress.get(contractAddress), add };
}

/**
 * Contracts a block creates on behalf of a known dapp (ContractCreated system events whose parent
 * belongs to one): the attribution the normalizer keeps for their later events. Pure: the result
 * depends on the block and the registry built from earlier blocks only, never on other processors.
 */
export function extractContractDapps(
  raw: RawBlock,
  dapps: DappRegistry,
): { contract_address: string; dapp_id: string }[] {
  if (!raw.mainChain) return [];
  const conflicted = new Set(raw.block.conflictedTxs ?? []);
  const learned: { contract_address: string; dapp_id: string }[] = [];
  for (const ev of raw.events) {
    if (ev.eventIndex !== CONTRACT_CREATED_EVENT || conflicted.has(ev.txId)) continue;
    const contract = fieldOf(ev.fields, 0, "Address");
    const parent = fieldOf(ev.fields, 1, "Address");
    if (!contract || dapps.dappOf(contract)) continue;
    const dapp = parent ? dapps.dappOf(parent) : undefined;
    if (dapp) learned.push({ contract_address: contract, dapp_id: dapp });
  }
  return learned;
}
