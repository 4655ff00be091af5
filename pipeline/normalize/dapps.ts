/**
 * Known mainnet contracts → dapp ids (seed for the Postgres `dapps` table) and an in-memory DappRegistry.
 * Addresses come from the reference brief (§7, §8, dapp-event-schemas.json); token contracts are listed under
 * the dapp that issued them, their address being `addressFromContractId(tokenId)`.
 */
import type { DappRegistry, RawBlock } from "../../lib/chain/types.ts";
import { CHILD_KIND, type DecoderKind } from "../../lib/dapps/kinds.ts";
import type { DappContractRow } from "../../lib/tokens/known-contracts.ts";
import { fieldOf } from "./chain-utils.ts";
import type { DecoderRegistry } from "./draft.ts";

/** Event index of the node's ContractCreated system event. */
const CONTRACT_CREATED_EVENT = -1;

export { DAPP, type DappContractRow, KNOWN_DAPP_CONTRACTS } from "../../lib/tokens/known-contracts.ts";

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

/** A contract's decoder kind as learned from its parent (a row of `normalize_contract_dapps.decoder`). */
export interface LearnedKind {
  contract_address: string;
  decoder: DecoderKind;
}

export interface MutableDecoderRegistry extends DecoderRegistry {
  /** Records kinds; an address already bound keeps its kind (built-in and operator rows come first). */
  add(rows: Iterable<{ contract_address: string; decoder: DecoderKind }>): void;
}

/** Registry over rows with a decoder (built-in list, `decoder_contracts`, learned kinds), first row wins. */
export function createDecoderRegistry(
  rows: Iterable<{ contract_address: string; decoder?: DecoderKind | null }> = [],
): MutableDecoderRegistry {
  const byAddress = new Map<string, DecoderKind>();
  const byKind = new Map<DecoderKind, string[]>();
  const add = (more: Iterable<{ contract_address: string; decoder?: DecoderKind | null }>) => {
    for (const row of more) {
      if (!row.decoder || byAddress.has(row.contract_address)) continue;
      byAddress.set(row.contract_address, row.decoder);
      byKind.set(row.decoder, [...(byKind.get(row.decoder) ?? []), row.contract_address]);
    }
  };
  add(rows);
  return { kindOf: (a) => byAddress.get(a), addressesOf: (k) => byKind.get(k) ?? [], add };
}

/** Lookup that first consults `extra` (kinds learned from the block being normalized), then `base`. */
export function overlayDecoders(
  base: DecoderRegistry | undefined,
  extra: readonly LearnedKind[],
): DecoderRegistry {
  if (extra.length === 0 && base) return base;
  const overlay = createDecoderRegistry(extra);
  return {
    kindOf: (a) => base?.kindOf(a) ?? overlay.kindOf(a),
    addressesOf: (k) => [...(base?.addressesOf(k) ?? []), ...overlay.addressesOf(k)],
  };
}

/**
 * Kinds a block gives to the contracts it creates: a ContractCreated whose parent has kind K gives the new
 * contract `CHILD_KIND[K]` (a guessing hub's room, a Furnace's burner NFT), in event order. Pure, like
 * `extractContractDapps`; parents created earlier in the same block count.
 */
export function extractContractKinds(raw: RawBlock, decoders: DecoderRegistry | undefined): LearnedKind[] {
  if (!raw.mainChain || !decoders) return [];
  const conflicted = new Set(raw.block.conflictedTxs ?? []);
  const learned = new Map<string, DecoderKind>();
  for (const ev of raw.events) {
    if (ev.eventIndex !== CONTRACT_CREATED_EVENT || conflicted.has(ev.txId)) continue;
    const contract = fieldOf(ev.fields, 0, "Address");
    const parent = fieldOf(ev.fields, 1, "Address");
    if (!contract || !parent || decoders.kindOf(contract) || learned.has(contract)) continue;
    const parentKind = decoders.kindOf(parent) ?? learned.get(parent);
    const kind = parentKind && CHILD_KIND[parentKind];
    if (kind) learned.set(contract, kind);
  }
  return [...learned].map(([contract_address, decoder]) => ({ contract_address, decoder }));
}
