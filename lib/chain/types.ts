/**
 * Message and row contracts shared by every pipeline stage and the API.
 * These shapes are what travels on the bus (Avro schemas in `schemas/` mirror them) and what the
 * events sink writes; changing a field means a new versioned topic, never an edit in place.
 */
import type { node } from "@alephium/web3";
import type { Category, EventType, SubKind } from "./taxonomy.ts";

/** Number of address groups on Alephium mainnet; chains are every (fromGroup, toGroup) pair. */
export const ADDRESS_GROUPS = 4;
export const CHAINS = ADDRESS_GROUPS * ADDRESS_GROUPS;

/** ALPH's token id in token lists and events (64 zeros). */
export const ALPH_TOKEN_ID = "0".repeat(64);

/** chainIndex = fromGroup * 4 + toGroup (the order of the node's `blocks-with-events` arrays). */
export function chainIndexOf(fromGroup: number, toGroup: number): number {
  return fromGroup * ADDRESS_GROUPS + toGroup;
}

/** A block as published by ingest on `alephium.blocks.v1`: the node's BlockEntry and its contract events. */
export interface RawBlock {
  chainIndex: number;
  /** The node's `BlockEntry` exactly as served by `/blockflow/blocks-with-events`. */
  block: node.BlockEntry;
  /** The node's `ContractEventByBlockHash[]` for this block, in execution order (includes system events). */
  events: node.ContractEventByBlockHash[];
  /** False when ingest learned the block left the main chain (a retraction message for a reorg). */
  mainChain: boolean;
}

/**
 * One normalized event: the common schema every decoder produces.
 * Amounts are decimal strings of U256 (never JS numbers); times are Unix ms.
 */
export interface NormalizedEvent {
  /** Sortable id, see `eventId()`: events become visible to pollers in id order. */
  id: string;
  chain_index: number;
  block_hash: string;
  block_height: number;
  /** Block timestamp, Unix ms. */
  timestamp: number;
  tx_id: string;
  /** Position of the transaction in its block (the coinbase is last). */
  tx_index: number;
  /** Position of this normalized event among the events the normalizer produced for its transaction. */
  event_index: number;
  /** Dapp that produced the event (`alephium` for protocol-level events such as coinbase and transfers). */
  dapp_id: string;
  /** See `TAXONOMY.md`: every (category, sub_kind, type) triple the normalizer emits. */
  category: Category;
  sub_kind: SubKind;
  type: EventType;
  /** Main event of the transaction (exactly one per transaction; the taxonomy is lib/chain/TAXONOMY.md). */
  is_main: boolean;
  from: string;
  to: string;
  with: string;
  /** Base58 contract address of the token moved, or "" for ALPH-only events. */
  token_address: string;
  /** Token id (64 hex) of `token_address`; ALPH_TOKEN_ID for ALPH. */
  token_id: string;
  /** Primary amount (U256 decimal string), "0" when not applicable. */
  amount: string;
  /** Contract that emitted the decoded event, "" when the event was derived from outputs. */
  contract_address: string;
  /** Contract event index of the decoded event (-1 ContractCreated ...), or null when none. */
  contract_event_index: number | null;
  /** Category-specific fields (swap amounts, price, fields of an unknown event ...). */
  payload: Record<string, unknown>;
  /** Set when `payload` was offloaded because it exceeded the size limit; the payload is then `{}`. */
  payload_ref: string | null;
}

/** Zero-padded, fixed-width parts so that string order equals (timestamp, chain, height, tx, event) order. */
export function eventId(
  timestamp: number,
  chainIndex: number,
  height: number,
  txIndex: number,
  eventIndex: number,
): string {
  return [
    String(timestamp).padStart(13, "0"),
    String(chainIndex).padStart(2, "0"),
    String(height).padStart(10, "0"),
    String(txIndex).padStart(5, "0"),
    String(eventIndex).padStart(4, "0"),
  ].join("-");
}

/** Lowest possible id of an event at time `ts` (ms): every such id is >= it. */
export function idFloor(ts: number): string {
  return String(ts).padStart(13, "0");
}

/** First id strictly greater than every id of events at or before `ts` (ids start with the 13-digit time). */
export function idCeiling(ts: number): string {
  return String(ts + 1).padStart(13, "0");
}

/** Contract → dapp attribution used by the normalizer (loaded from Postgres by the caller). */
export interface DappBook {
  /** dapp id for a contract address (base58), or undefined when unknown. */
  dappOf(contractAddress: string): string | undefined;
}
