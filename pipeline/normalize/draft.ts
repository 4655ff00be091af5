/**
 * Drafts: normalized events before ids and the main flag are assigned, and the per-transaction scope the
 * decoders share. Internal to the normalizer (`normalize.ts` and `decoders/`).
 */
import type { node } from "@alephium/web3";
import { type Category, type EventType, mainPriority, type SubKind } from "../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID, type DappBook } from "../../lib/chain/types.ts";
import type { CodeHashBook, CodeHashMismatch } from "../../lib/dapps/code-hashes.ts";
import type { DecoderKind } from "../../lib/dapps/kinds.ts";
import type { MarketBook } from "./markets.ts";
import type { PoolBook, PoolFactory } from "./pools.ts";

export type ContractEvent = node.ContractEventByBlockHash;

/** Known exchange (CEX) hot/deposit addresses → exchange id; turns plain transfers into `cex` events. */
export interface ExchangeBook {
  exchangeOf(address: string): string | undefined;
}

/**
 * Contracts bound to a decoder kind (`lib/dapps/kinds.ts`): the built-in mainnet list, the operator's
 * `decoder_contracts` rows and the kinds learned from parents (`extractContractKinds`).
 */
export interface DecoderBook {
  kindOf(address: string): DecoderKind | undefined;
  /** Every address bound to a kind (AlphBanX reads its ABD / ABX token ids from its token contracts). */
  addressesOf(kind: DecoderKind): readonly string[];
}

/** Everything the normalizer may look up; all lookups are read-only. */
export interface NormalizeContext {
  dapps: DappBook;
  /** Known pools (seed + learned from PairCreated, see `extractPools`); pools created in the block itself are added. */
  pools?: PoolBook;
  /** Factories whose creation events announce pools; `KNOWN_FACTORIES` when absent. */
  factories?: readonly PoolFactory[];
  exchanges?: ExchangeBook;
  /** Decoder kinds of dapp contracts; without it only DEX pools are decoded. Kinds created in the block are added. */
  decoders?: DecoderBook;
  /**
   * Known contracts' expected and live code hashes: a contract whose live code is not the one its decoder's
   * layout was read from has its events published generic with `decode_error: "code_hash_changed"`.
   */
  codeHashes?: CodeHashBook;
  /** Lending markets (learned from MarketCreated, see `extractMarkets`); a block's own markets are added. */
  markets?: MarketBook;
  /** Payloads whose `JSON.stringify` is longer than this many UTF-8 bytes are offloaded. */
  maxPayloadBytes: number;
}

/** An event before ids and main flag are assigned. */
export interface Draft {
  category: Category;
  sub_kind: SubKind;
  type: EventType;
  priority: number;
  dapp_id: string;
  from: string;
  to: string;
  with: string;
  token_id: string;
  amount: string;
  contract_address: string;
  contract_event_index: number | null;
  payload: Record<string, unknown>;
}

export interface DraftInput {
  dapp_id: string;
  from?: string;
  to?: string;
  with?: string;
  token_id?: string;
  amount?: bigint;
  contract_address?: string;
  contract_event_index?: number | null;
  payload?: Record<string, unknown>;
}

export function draft(category: Category, sub_kind: SubKind, type: EventType, d: DraftInput): Draft {
  return {
    category,
    sub_kind,
    type,
    priority: mainPriority(category, sub_kind, type),
    dapp_id: d.dapp_id,
    from: d.from ?? "",
    to: d.to ?? "",
    with: d.with ?? "",
    token_id: d.token_id ?? ALPH_TOKEN_ID,
    amount: (d.amount ?? 0n).toString(),
    contract_address: d.contract_address ?? "",
    contract_event_index: d.contract_event_index ?? null,
    payload: d.payload ?? {},
  };
}

export interface SwapHop {
  pool: string;
  dapp_id: string;
  token_in: string;
  token_out: string;
  amount_in: bigint;
  amount_out: bigint;
  to: string;
}

/** Per-transaction state shared by the decoders. */
export interface TxScope {
  tx: node.Transaction;
  sender: string;
  ctx: NormalizeContext;
  pools: PoolBook;
  decoders: DecoderBook;
  /** Lending markets known before this tx (earlier blocks and earlier txs of this block). */
  markets: MarketBook | undefined;
  /** The tx's contract events, in execution order (a Furnace burn looks for its NFT's ContractCreated). */
  events: readonly ContractEvent[];
  /** Token ids issued by this tx (reported as genesis_mint, not again as payouts). */
  minted: Set<string>;
  hops: SwapHop[];
  /** The contract's code hash mismatch as of this tx (earlier blocks, and migrations earlier in this block). */
  codeMismatch(contractAddress: string): CodeHashMismatch | undefined;
}

/** Dapp of a contract by the dapp book, else `fallback`. */
export function dappOf(s: TxScope, address: string, fallback: string): string {
  return (address && s.ctx.dapps.dappOf(address)) || fallback;
}

/** Generated outputs carry `type`; fixed outputs (no `type`) are always asset outputs. */
export function isAssetOutput(o: node.FixedAssetOutput | node.Output): boolean {
  return !("type" in o) || o.type === "AssetOutput";
}

export function contractOutputs(tx: node.Transaction): node.Output[] {
  return tx.generatedOutputs.filter((o) => o.type === "ContractOutput");
}
