/**
 * Registers the simulated network the way an operator registers a new dapp and price sources on mainnet: its
 * DEX factory (`dex_factories`, so the normalizer decodes its swaps), and for prices its DEX and its oracle
 * (`price_sources`), the oracle's feeds (`price_available_pairs`) and watched pairs (`price_pairs`) for every
 * devnet pool and oracle key, so the demo shows candles and spot prices right away; and the decoder kinds of its games
 * (devnet/dapps/games-register.ts) and its DeFi dapps (their `dapps` rows, decoder kinds in `decoder_contracts`, the Elexium factory: devnet/dapps/defi-register.ts).
 * Everything comes from the chain's plan (addresses derived from the seed), so it works before the blocks
 * creating those contracts exist.
 */

import { ALPH_TOKEN_ID } from "../lib/chain/types.ts";
import { createPricePairs } from "../lib/prices/pairs.ts";
import type { Pg, PgQueryable } from "../lib/stores/postgres.ts";
import type { DevnetChain, DevnetPlan } from "./chain.ts";
import { devnetDecoderContracts as defiDecoderContracts, registerDefiDapps } from "./dapps/defi-register.ts";
import {
  devnetDecoderContracts as gamesDecoderContracts,
  registerGamesDapps,
} from "./dapps/games-register.ts";

export const DEVNET_DAPP = "devnet-dex";

/** Every devnet dapp contract with its decoder kind (what `decoder_contracts` holds after registration). */
export const devnetDecoderContracts = (plan: DevnetPlan) => [
  ...gamesDecoderContracts(plan),
  ...defiDecoderContracts(plan),
];
/** Price source of the devnet's pools (an `onchain_dex` source of the dapp {@link DEVNET_DAPP}). */
export const DEVNET_DEX_SOURCE = "devnet-dex";
/** Price source of the devnet's DIA-like oracle. */
export const DEVNET_ORACLE_SOURCE = "devnet-oracle";

/** A watched pair the registration inserts into `price_pairs` (columns in camelCase). */
export interface DevnetPricePair {
  sourceId: typeof DEVNET_DEX_SOURCE | typeof DEVNET_ORACLE_SOURCE;
  /** Pool contract address (DEX) or feed key such as "ALPH/USD" (oracle). */
  pairSymbol: string;
  /** "BASE/QUOTE" symbols. */
  pairLabel: string;
  /** Base token id (DEX: token1 of an ALPH pool, else token0, as the normalizer prices swaps); oracle: ALPH for ALPH/USD, else null. */
  tokenId: string | null;
  /** Quote token id (DEX: the pool's other token); null for the oracle. */
  quoteTokenId: string | null;
  /** Contract address of the base token (null for ALPH and oracle feeds). */
  tokenAddress: string | null;
  /** Quote symbol (DEX) or "USD" (oracle). */
  denomination: string;
  /** Decimals of the base (DEX: the token's, ALPH 18; oracle: 0). */
  decimals: number;
  /** Decimals of the quote (DEX: the token's; oracle: 8, the values' decimals). */
  quoteDecimals: number;
  chainId: number;
  /** Time (ms) of the block that created the pool when it exists already, else null (and always for feeds). */
  poolCreatedAt: number | null;
}

const ALPH = { symbol: "ALPH", decimals: 18, address: null };

/** The watched pairs of a devnet: one per planned pool (plan order), then one per oracle key (key order). */
export function devnetPricePairs(chain: DevnetChain): DevnetPricePair[] {
  const plan = chain.plan();
  const tokens = new Map<string, { symbol: string; decimals: number; address: string | null }>(
    plan.tokens.map((t) => [t.id, { symbol: t.symbol, decimals: t.decimals, address: t.address }]),
  );
  tokens.set(ALPH_TOKEN_ID, ALPH);
  const created = new Map(
    chain.pools().map((p) => [p.id, chain.getTransaction(p.createTxId)?.timestamp ?? null] as const),
  );
  const pools = plan.pools.map((p): DevnetPricePair => {
    const [base, quote] = p.token0 === ALPH_TOKEN_ID ? [p.token1, p.token0] : [p.token0, p.token1];
    const b = tokens.get(base)!;
    const q = tokens.get(quote)!;
    return {
      sourceId: DEVNET_DEX_SOURCE,
      pairSymbol: p.address,
      pairLabel: `${b.symbol}/${q.symbol}`,
      tokenId: base,
      quoteTokenId: quote,
      tokenAddress: b.address,
      denomination: q.symbol,
      decimals: b.decimals,
      quoteDecimals: q.decimals,
      chainId: 8738,
      poolCreatedAt: created.get(p.id) ?? null,
    };
  });
  const oracle = chain.oracle();
  const feeds = oracle.keys.map(
    (key): DevnetPricePair => ({
      sourceId: DEVNET_ORACLE_SOURCE,
      pairSymbol: key,
      pairLabel: key,
      tokenId: key.split("/")[0] === "ALPH" ? ALPH_TOKEN_ID : null,
      quoteTokenId: null,
      tokenAddress: null,
      denomination: "USD",
      decimals: 0,
      quoteDecimals: oracle.valueDecimals,
      chainId: 8738,
      poolCreatedAt: null,
    }),
  );
  return [...pools, ...feeds];
}

/**
 * Idempotent (ON CONFLICT DO NOTHING): a restart changes nothing an operator changed, but re-adds a watched
 * pair an admin deleted (acceptable for the demo, which this is for).
 */
export async function registerDevnetDapps(pg: Pg, chain: DevnetChain): Promise<void> {
  await pg.transaction((tx) => register(tx, chain));
}

async function register(pg: PgQueryable, chain: DevnetChain): Promise<void> {
  const plan = chain.plan();
  if (plan.factory) {
    // Ayin's layout: PairCreated(token0, token1, pair, size) = event 0; Mint 0, Burn 1, Swap 2 on pairs.
    await pg.query(
      "devnet_factory",
      `INSERT INTO dex_factories (factory_address, dapp_id, created_event_index, token0_field, token1_field, pool_field,
         swap_event_index, mint_event_index, burn_event_index)
       VALUES ($1, $2, 0, 0, 1, 2, 2, 0, 1) ON CONFLICT (factory_address) DO NOTHING`,
      [plan.factory.address, DEVNET_DAPP],
    );
  }
  const now = Date.now();
  // The dapp itself, so its record carries its TVL (figures processor).
  await pg.query(
    "devnet_dapp",
    `INSERT INTO dapps (id, name, description, website, logo, deleted, created_at, updated_at)
     VALUES ($1, 'Devnet DEX', 'The simulated network''s DEX (Ayin-like pairs).', NULL, NULL, false, $2, $2)
     ON CONFLICT (id) DO NOTHING`,
    [DEVNET_DAPP, now],
  );
  await registerGamesDapps(pg, plan, now);
  await registerDefiDapps(pg, plan, now);
  const oracle = chain.oracle();
  await pg.query(
    "devnet_price_sources",
    `INSERT INTO price_sources (id, label, kind, dapp_id, contract_addresses, value_decimals, supports_spot,
       supports_candles, supports_trades, supported_denominations, created_at, updated_at) VALUES
       ($1, 'Devnet DEX', 'onchain_dex', $2, '{}', NULL, true, true, true, '{ALPH}', $5, $5),
       ($3, 'Devnet oracle', 'oracle', NULL, ARRAY[$4::text], $6::integer, true, false, false, '{USD}', $5, $5)
     ON CONFLICT (id) DO NOTHING`,
    [DEVNET_DEX_SOURCE, DEVNET_DAPP, DEVNET_ORACLE_SOURCE, oracle.address, now, oracle.valueDecimals],
  );
  for (const key of oracle.keys) {
    const [base = key, quote = ""] = key.split("/");
    await pg.query(
      "devnet_price_available_pair",
      `INSERT INTO price_available_pairs (source_id, pair_symbol, base_asset, quote_asset) VALUES ($1, $2, $3, $4)
       ON CONFLICT (source_id, pair_symbol) DO NOTHING`,
      [DEVNET_ORACLE_SOURCE, key, base, quote],
    );
  }
  for (const p of devnetPricePairs(chain)) {
    await pg.query(
      "devnet_price_pair",
      `INSERT INTO price_pairs (source_id, pair_symbol, pair_label, pool_created_at, token_id, quote_token_id, chain,
         chain_id, denomination, available, enabled, enable_trades, include_in_tvl, token_address, decimals,
         quote_decimals, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'alph', $7, $8, true, true, false, $13, $9, $10, $11, $12, $12)
       ON CONFLICT (source_id, pair_symbol) DO NOTHING`,
      [
        p.sourceId,
        p.pairSymbol,
        p.pairLabel,
        p.poolCreatedAt,
        p.tokenId,
        p.quoteTokenId,
        p.chainId,
        p.denomination,
        p.tokenAddress,
        p.decimals,
        p.quoteDecimals,
        now,
        // The demo's pools count in TVL (an operator sets includeInTVL per pair).
        p.sourceId === DEVNET_DEX_SOURCE,
      ],
    );
  }
}

/** The demo's exchange pair: watched with its fills as events (the trade watcher), once the exchange's markets are read. */
export const DEVNET_EXCHANGE_PAIR = { source: "gate", symbol: "ALPH_USDT" } as const;

/**
 * Waits (in the background of the demo) for the exchange poller to list the double's markets, then
 * watches ALPH_USDT with `enable_trades`, as an admin would through the API. Idempotent.
 */
export async function watchDevnetExchangePair(
  pg: Pg,
  options: { signal: AbortSignal; timeoutMs?: number },
): Promise<number | null> {
  const { source, symbol } = DEVNET_EXCHANGE_PAIR;
  const until = Date.now() + (options.timeoutMs ?? 120_000);
  while (!options.signal.aborted && Date.now() < until) {
    const listed = await pg.query<{ n: string }>(
      "devnet_exchange_listed",
      "SELECT count(*) AS n FROM price_available_pairs WHERE source_id = $1 AND pair_symbol = $2",
      [source, symbol],
    );
    if (Number(listed[0]?.n ?? 0) > 0) {
      const registry = createPricePairs(pg);
      const { id } = await registry.addPair(source, { pair_symbol: symbol });
      await registry.updatePair(source, id, { enable_trades: true });
      return id;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return null;
}
