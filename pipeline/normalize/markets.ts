/**
 * Lending markets: a Linx lending contract holds many Morpho-style markets, and its events name the market, not
 * its tokens. `MarketCreated` (event 4) gives a market's loan and collateral tokens; this book keeps them so
 * the market's later events carry their token. Like pools: `extractMarkets()` is pure and returns the markets a
 * block creates, the caller adds them to its book between blocks, and a block's own markets apply to its later
 * transactions through `overlayMarkets`.
 */
import type { RawBlock } from "../../lib/chain/types.ts";
import { DECODER_KIND } from "../../lib/dapps/kinds.ts";
import { fieldOf, hasShape } from "./chain-utils.ts";

/** Event index of Linx lending's MarketCreated(id, marketContractId, loanToken, collateralToken, oracle, irm, ltv). */
export const LINX_MARKET_CREATED = 4;

/** A market of a lending contract. */
export interface LendingMarket {
  /** The lending contract that emits the market's events (base58). */
  contract_address: string;
  /** The market's id (lowercase hex), the first field of each of its events. */
  market_id: string;
  /** Token ids (64 hex). */
  loan_token: string;
  collateral_token: string;
}

/** A market as a block creates it, with the tx that created it. */
export interface CreatedMarket extends LendingMarket {
  tx_id: string;
}

export interface MarketBook {
  marketOf(contractAddress: string, marketId: string): LendingMarket | undefined;
}

export interface MutableMarketBook extends MarketBook {
  add(markets: Iterable<LendingMarket>): void;
}

const keyOf = (contractAddress: string, marketId: string) => `${contractAddress}/${marketId.toLowerCase()}`;

export function createMarketBook(initial: Iterable<LendingMarket> = []): MutableMarketBook {
  const byKey = new Map<string, LendingMarket>();
  const add = (markets: Iterable<LendingMarket>) => {
    for (const m of markets) byKey.set(keyOf(m.contract_address, m.market_id), m);
  };
  add(initial);
  return { marketOf: (c, id) => byKey.get(keyOf(c, id)), add };
}

/** `base`, with `extra` (markets created earlier in the same block) consulted first. */
export function overlayMarkets(
  base: MarketBook | undefined,
  extra: readonly LendingMarket[],
): MarketBook | undefined {
  if (extra.length === 0) return base;
  const byKey = new Map(extra.map((m) => [keyOf(m.contract_address, m.market_id), m]));
  return { marketOf: (c, id) => byKey.get(keyOf(c, id)) ?? base?.marketOf(c, id) };
}

const HEX32 = /^[0-9a-fA-F]{64}$/;
const LAYOUT = ["ByteVec", "ByteVec", "ByteVec", "ByteVec", "ByteVec", "ByteVec", "U256"] as const;

/**
 * Markets created by a block's Linx lending contracts (kind `linx-lending`), in event order; a MarketCreated of
 * another layout (the decoder refuses it) creates none. Skips conflicted txs; [] off the main chain.
 */
export function extractMarkets(
  raw: RawBlock,
  decoders: { kindOf(address: string): string | undefined } | undefined,
): CreatedMarket[] {
  if (!raw.mainChain || !decoders) return [];
  const conflicted = new Set(raw.block.conflictedTxs ?? []);
  const markets: CreatedMarket[] = [];
  for (const ev of raw.events) {
    if (ev.eventIndex !== LINX_MARKET_CREATED || conflicted.has(ev.txId)) continue;
    if (decoders.kindOf(ev.contractAddress) !== DECODER_KIND.linxLending || !hasShape(ev.fields, LAYOUT))
      continue;
    const id = fieldOf(ev.fields, 0, "ByteVec");
    const loan = fieldOf(ev.fields, 2, "ByteVec");
    const collateral = fieldOf(ev.fields, 3, "ByteVec");
    if (id === undefined || !loan || !collateral || !HEX32.test(loan) || !HEX32.test(collateral)) continue;
    markets.push({
      contract_address: ev.contractAddress,
      market_id: id.toLowerCase(),
      loan_token: loan.toLowerCase(),
      collateral_token: collateral.toLowerCase(),
      tx_id: ev.txId,
    });
  }
  return markets;
}
