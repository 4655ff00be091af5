/**
 * The price pairs' kinds, types and shared SQL: the vocabulary `pairs.ts` (their life) and `pair-adding.ts`
 * (adding one) both speak.
 */
import { ALPH_TOKEN_ID } from "../chain/types.ts";

export const SOURCE_KINDS = [
  "onchain_dex",
  "oracle",
  "cex",
  "uniswap",
  "pancakeswap",
  "api",
  "aggregator",
] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** Sources whose pairs are pools of an EVM DEX, added by pool address (`0x` + 40 hex). */
export const EVM_DEX_KINDS: readonly SourceKind[] = ["uniswap", "pancakeswap"];

export const LEG_TYPES = ["cex", "dex", "api", "oracle", "aggregator"] as const;
export type LegType = (typeof LEG_TYPES)[number];

/** What a pair's quote or base is called when nothing names it (a pool the indexer has not seen yet). */
export const UNKNOWN_ASSET = "?";

/** SPEC "Price source", plus `kind`. */
export interface PriceSource {
  id: string;
  label: string;
  kind: SourceKind;
  supportsSpot: boolean;
  supportsCandles: boolean;
  supportsTrades: boolean;
  supportedDenominations: string[];
  enabled: boolean;
  /** onchain_dex: pools of its dapp in dex_pools; other kinds: rows of price_available_pairs. */
  availableCount: number;
  /** Configured pairs of the source. */
  watchedCount: number;
}

/** A source row as the registry needs it to add pairs. */
export interface SourceRow {
  id: string;
  label: string;
  kind: SourceKind;
  dapp_id: string | null;
  contract_addresses: string[];
  value_decimals: number | null;
  enabled: boolean;
}

/** SPEC "Token mapping (pair token leg)". */
export interface TokenLeg {
  id: number;
  token_price_source_id: number;
  type: LegType;
  dapp: string | null;
  chain: string;
  token_id: string;
  token_contract: string | null;
  in_consolidated_market: boolean;
}

/** SPEC "Configured pair" without `scales_meta` (ClickHouse's; the API adds it), plus the quote side. */
export interface ConfiguredPair {
  id: number;
  source_id: string;
  pair_symbol: string;
  pair_label: string;
  /** ISO date-time, or null when unknown. */
  pool_created_at: string | null;
  tokens: TokenLeg[];
  token_id: string | null;
  quote_token_id: string | null;
  chain: string;
  chain_id: number | null;
  denomination: string;
  available: boolean;
  enabled: boolean;
  enable_trades: boolean;
  includeInTVL: boolean;
  token_address: string | null;
  decimals: number | null;
  quote_decimals: number | null;
  /** `candles.market` of the pair (the key of its scales meta). */
  market: string;
}

/** SPEC "Available CEX pair": for an onchain_dex source, one of its discovered pools. */
export interface AvailablePair {
  id: number;
  source_id: string;
  pair_symbol: string;
  base_asset: string;
  quote_asset: string;
}

export interface AddPairInput {
  pair_symbol?: string;
  pair_id?: number;
  token_id?: string;
  chain_id?: number;
}

export interface AddPairResult {
  id: number;
  pair_symbol: string;
  /** False when the source already had a pair of that symbol (its id is returned, nothing changes). */
  created: boolean;
  /** Whether the pair's facts come from the chain (the API then starts its backfill). */
  onchain: boolean;
}

export const PAIR_UPDATE_FIELDS = ["enabled", "available", "enable_trades", "include_in_tvl"] as const;
export type PairUpdate = Partial<Record<(typeof PAIR_UPDATE_FIELDS)[number], boolean>>;

export interface LegInput {
  type: LegType;
  chain: string;
  token_id: string;
  dapp?: string | null;
  token_contract?: string | null;
  in_consolidated_market?: boolean;
}

export const LEG_UPDATE_FIELDS = [
  "token_id",
  "type",
  "dapp",
  "chain",
  "token_contract",
  "in_consolidated_market",
] as const;
export type LegUpdate = Partial<LegInput>;

/** A configured pair with what its prices need: source kind and the decimals to apply. */
export interface PricedPair {
  id: number;
  source_id: string;
  source_kind: SourceKind;
  pair_symbol: string;
  pair_label: string;
  token_id: string | null;
  quote_token_id: string | null;
  denomination: string;
  /** pair.decimals ?? the token's decimals ?? 0 (oracle and cex sources: 0). */
  base_decimals: number;
  /** pair.quote_decimals ?? the quote token's decimals ?? 0 (oracle sources: the source's value_decimals; cex: 0). */
  quote_decimals: number;
}

/** A pair of `GET /token/{tokenid}/pairs`, before its scales are added. */
export interface TokenPair {
  id: number;
  source_id: string;
  pair_symbol: string;
  pair_label: string;
  available: boolean;
  enabled: boolean;
  enable_trades: boolean;
  includeInTVL: boolean;
  chain: string;
  market: string;
}

/** SQL of a token's display symbol: ALPH for the zero id, the registry's symbol, else the id itself. */
export const symbolSql = (idExpr: string, tokenAlias: string) =>
  `CASE WHEN ${idExpr} = '${ALPH_TOKEN_ID}' THEN 'ALPH' ELSE COALESCE(${tokenAlias}.symbol, ${idExpr}) END`;
