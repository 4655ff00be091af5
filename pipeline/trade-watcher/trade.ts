/**
 * A trade made off the Alephium chain (an exchange fill or an EVM pool swap) as the market pollers
 * hand it to the trade watcher (`feed.ts`), which turns the trades of pairs with
 * `enable_trades` into normalized events (category `cex` or `dex`, sub_kind `buy`/`sell`).
 */
export interface MarketTrade {
  /**
   * Unique and the same every time the trade is read again: `cex:<source>:<pair_symbol>:<exchange
   * trade id>` for an exchange fill, `evm:<chain id>:<tx hash>:<log index>` for a pool swap. The
   * watcher records a key once: handing it the same trade again (a re-read after a crash) is harmless.
   */
  key: string;
  /** `cex` for an exchange fill, `dex` for an EVM pool swap. */
  category: "cex" | "dex";
  /** Price source id (`gate`, `uniswap-eth` …). */
  source_id: string;
  /** Watched pair id (`price_pairs.id`). */
  pair_id: number;
  /** The pair's symbol at its source (`ALPH_USDT`, or the pool address for EVM pools). */
  pair_symbol: string;
  /** Taker side relative to the base: `buy` = the taker received base and paid quote. */
  side: "buy" | "sell";
  /** Trade time (ms) as the venue reports it (the block time for an EVM swap). */
  ts: number;
  /** Base amount in whole units, decimal string (`"1234.5"`). */
  base_amount: string;
  /** Quote amount in whole units, decimal string. */
  quote_amount: string;
  /** Quote per base, decimal string. */
  price: string;
  /** Base and quote asset symbols as the venue names them. */
  base_symbol: string;
  quote_symbol: string;
  /** Alephium token id (64 hex) of the base when the registry knows it, else "". */
  base_token_id: string;
  /** EVM only: chain id, transaction hash (0x…), block number, log index, taker (the swap's `to`). */
  evm?: { chain_id: number; tx_hash: string; block_number: number; log_index: number; taker: string };
}

/** Where the market pollers send trades of pairs with `enable_trades`; resolves once they are durable. */
export interface TradeSink {
  record(trades: readonly MarketTrade[]): Promise<void>;
}
