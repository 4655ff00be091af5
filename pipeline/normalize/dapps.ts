/**
 * Known mainnet contracts → dapp ids and decoders, and the normalizer's in-memory map of contract → dapp that learns
 * from blocks (children of a known factory or hub inherit their dapp). The deployed contracts themselves, with their
 * code hashes, are listed in lib/tokens/known-contracts.ts.
 */
import { addressFromContractId } from "@alephium/web3";
import { blake2b } from "@noble/hashes/blake2b";
import type { DappBook, RawBlock } from "../../lib/chain/types.ts";
import type { LiveCode } from "../../lib/dapps/code-hashes.ts";
import { ANNOUNCED_KIND, CHILD_KIND, CODE_MIGRATION, type DecoderKind } from "../../lib/dapps/kinds.ts";

export {
  type CodeHashBook,
  type CodeHashMismatch,
  createCodeHashBook,
  type LiveCode,
  type MutableCodeHashBook,
} from "../../lib/dapps/code-hashes.ts";

import type { DappContractRow } from "../../lib/tokens/known-contracts.ts";
import { fieldOf } from "./chain-utils.ts";
import type { DecoderBook } from "./draft.ts";

/** Event index of the node's ContractCreated system event. */
const CONTRACT_CREATED_EVENT = -1;

export { DAPP, type DappContractRow, KNOWN_DAPP_CONTRACTS } from "../../lib/tokens/known-contracts.ts";

/** In-memory book over seed rows (first row wins on a duplicated address). */
export function createStaticDappBook(rows: Iterable<DappContractRow>): DappBook {
  const byAddress = new Map<string, string>();
  for (const row of rows) {
    if (!byAddress.has(row.contract_address)) byAddress.set(row.contract_address, row.dapp_id);
  }
  return { dappOf: (contractAddress) => byAddress.get(contractAddress) };
}

export interface MutableDappBook extends DappBook {
  /** Records what a block announced; an address already known keeps its dapp. */
  add(rows: Iterable<{ contract_address: string; dapp_id: string }>): void;
}

/** Book over seed rows that learns from blocks as they are normalized, in chain order. */
export function createDappBook(rows: Iterable<DappContractRow>): MutableDappBook {
  const byAddress = new Map<string, string>();
  const add = (more: Iterable<{ contract_address: string; dapp_id: string }>) => {
    for (const row of more)
      if (!byAddress.has(row.contract_address)) byAddress.set(row.contract_address, row.dapp_id);
  };
  add(rows);
  return { dappOf: (contractAddress) => byAddress.get(contractAddress), add };
}

/** A contract a block's event makes known: created with a parent, or announced by a factory's event. */
interface Birth {
  contract: string;
  /** The contract it descends from (its parent, or the factory that announced it). */
  origin: string;
  /** The kind it takes whatever the origin's kind (an announced V3 game); else `CHILD_KIND` of the origin's. */
  kind?: DecoderKind;
}

/**
 * Contracts a block's events make known, in event order: ContractCreated system events with a parent, and
 * factories' announcements of contracts they copied (a Chain Reaction V2 factory's `NewGameCreated`: a
 * `copyCreateContract` game has no parent). Conflicted transactions' events count for nothing.
 */
function* births(raw: RawBlock, kindOf: (address: string) => DecoderKind | undefined): Generator<Birth> {
  if (!raw.mainChain) return;
  const conflicted = new Set(raw.block.conflictedTxs ?? []);
  for (const ev of raw.events) {
    if (conflicted.has(ev.txId)) continue;
    if (ev.eventIndex === CONTRACT_CREATED_EVENT) {
      const contract = fieldOf(ev.fields, 0, "Address");
      const parent = fieldOf(ev.fields, 1, "Address");
      if (contract && parent) yield { contract, origin: parent };
      continue;
    }
    const announced = ANNOUNCED_KIND[kindOf(ev.contractAddress) ?? ("" as DecoderKind)];
    if (!announced || ev.eventIndex !== announced.eventIndex) continue;
    const id = fieldOf(ev.fields, announced.field, "ByteVec");
    if (id && /^[0-9a-fA-F]{64}$/.test(id))
      yield {
        contract: addressFromContractId(id.toLowerCase()),
        origin: ev.contractAddress,
        kind: announced.kind,
      };
  }
}

/**
 * Contracts a block creates on behalf of a known dapp (ContractCreated system events whose parent belongs to
 * one, or contracts a known factory announces): the attribution the normalizer keeps for their later events.
 * Parents made known earlier in the same block count (a room and its first map entry). Pure: the result depends
 * on the block and the books built from earlier blocks only, never on other processors.
 */
export function extractContractDapps(
  raw: RawBlock,
  dapps: DappBook,
  decoders?: DecoderBook,
): { contract_address: string; dapp_id: string }[] {
  const learned = new Map<string, string>();
  const dappOf = (a: string) => dapps.dappOf(a) ?? learned.get(a);
  for (const b of births(raw, (a) => decoders?.kindOf(a))) {
    if (dappOf(b.contract)) continue;
    const dapp = dappOf(b.origin);
    if (dapp) learned.set(b.contract, dapp);
  }
  return [...learned].map(([contract_address, dapp_id]) => ({ contract_address, dapp_id }));
}

/** A contract's decoder kind as learned from its parent (a row of `normalize_contract_dapps.decoder`). */
export interface LearnedKind {
  contract_address: string;
  decoder: DecoderKind;
}

export interface MutableDecoderBook extends DecoderBook {
  /** Records kinds; an address already bound keeps its kind (built-in and operator rows come first). */
  add(rows: Iterable<{ contract_address: string; decoder: DecoderKind }>): void;
}

/** Book over rows with a decoder (built-in list, `decoder_contracts`, learned kinds), first row wins. */
export function createDecoderBook(
  rows: Iterable<{ contract_address: string; decoder?: DecoderKind | null }> = [],
): MutableDecoderBook {
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
export function overlayDecoders(base: DecoderBook | undefined, extra: readonly LearnedKind[]): DecoderBook {
  if (extra.length === 0 && base) return base;
  const overlay = createDecoderBook(extra);
  return {
    kindOf: (a) => base?.kindOf(a) ?? overlay.kindOf(a),
    addressesOf: (k) => [...(base?.addressesOf(k) ?? []), ...overlay.addressesOf(k)],
  };
}

/**
 * Kinds a block gives to the contracts it makes known: a ContractCreated whose parent has kind K gives the new
 * contract `CHILD_KIND[K]` (a guessing hub's room, a Furnace's burner NFT), a factory's announcement its
 * `ANNOUNCED_KIND` (a Chain Reaction V3 game), in event order. Pure, like `extractContractDapps`; contracts made
 * known earlier in the same block count.
 */
export function extractContractKinds(raw: RawBlock, decoders: DecoderBook | undefined): LearnedKind[] {
  if (!decoders) return [];
  const learned = new Map<string, DecoderKind>();
  const kindOf = (a: string) => decoders.kindOf(a) ?? learned.get(a);
  for (const b of births(raw, kindOf)) {
    if (kindOf(b.contract)) continue;
    const originKind = kindOf(b.origin);
    const kind = b.kind ?? (originKind && CHILD_KIND[originKind]);
    if (kind) learned.set(b.contract, kind);
  }
  return [...learned].map(([contract_address, decoder]) => ({ contract_address, decoder }));
}

/**
 * A contract's code as a block changed it: the new code's hash (blake2b-256 of the bytecode, as the node's), the
 * block's time, and the tx that migrated it (events of later txs follow the new code).
 */
export interface CodeChange extends LiveCode {
  tx_id: string;
}

/**
 * Code changes a block's events announce (`CODE_MIGRATION`: a MyOnion contract's MigrateApply carries its new
 * bytecode), in event order. Pure, like `extractContractKinds`.
 */
export function extractCodeChanges(raw: RawBlock, decoders: DecoderBook | undefined): CodeChange[] {
  if (!raw.mainChain || !decoders) return [];
  const conflicted = new Set(raw.block.conflictedTxs ?? []);
  const changes: CodeChange[] = [];
  for (const ev of raw.events) {
    if (conflicted.has(ev.txId)) continue;
    const kind = decoders.kindOf(ev.contractAddress);
    const migration = kind ? CODE_MIGRATION[kind] : undefined;
    if (!migration?.eventIndexes.includes(ev.eventIndex)) continue;
    const code = fieldOf(ev.fields, migration.codeField, "ByteVec");
    if (code === undefined || !/^([0-9a-fA-F]{2})+$/.test(code)) continue;
    const hash = Buffer.from(blake2b(Buffer.from(code, "hex"), { dkLen: 32 })).toString("hex");
    changes.push({
      contract_address: ev.contractAddress,
      code_hash: hash,
      since_ts: raw.block.timestamp,
      tx_id: ev.txId,
    });
  }
  return changes;
}
