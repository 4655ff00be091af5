/**
 * The price registry in Postgres: sources, the pairs they offer, the configured (watched) pairs and
 * their token legs. Every SQL statement of the registry is here; the API's Price routes, the candles
 * processor and the CLI read and change it through this one object. Facts (trades, candles, spot)
 * are in ClickHouse (lib/prices/reader.ts).
 */
import { isContractAddress, isValidAddress } from "@alephium/web3";
import { ALPH_TOKEN_ID } from "../chain/types.ts";
import { badRequest, notFound } from "../errors.ts";
import type { Pg, PgParam, PgQueryable } from "../stores/postgres.ts";
import { ALEPHIUM_CHAIN_ID, contractAddressOf, num } from "../tokens/repo-shared.ts";
import { marketOf } from "./reader.ts";

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

const HEX64 = /^[0-9a-fA-F]{64}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

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

export interface PriceRegistry {
  listSources(): Promise<PriceSource[]>;
  /** The source, or null. */
  getSource(id: string): Promise<SourceRow | null>;
  /** Configured pairs of a source in id order; 404 for an unknown source. */
  listPairs(sourceId: string): Promise<ConfiguredPair[]>;
  /** One configured pair of a source; 404 for an unknown source, or a pair not of that source. */
  getPair(sourceId: string, pairId: number): Promise<ConfiguredPair>;
  /** Pairs the source offers (onchain_dex: its pools in dex_pools); 404 for an unknown source. */
  listAvailable(sourceId: string): Promise<AvailablePair[]>;
  /** Adds a configured pair (idempotent per source and pair symbol); 400/404 as documented on the route. */
  addPair(sourceId: string, input: AddPairInput): Promise<AddPairResult>;
  /** Changes the whitelisted flags of a pair; 400 when none is given, 404 for an unknown source or pair. */
  updatePair(sourceId: string, pairId: number, update: PairUpdate): Promise<{ id: number }>;
  /** Deletes a pair and its legs (watched → removed); returns 1; 404 when absent. */
  deletePair(sourceId: string, pairId: number): Promise<number>;
  /** Legs of a pair in id order; 404 for an unknown source or pair. */
  listLegs(
    sourceId: string,
    pairId: number,
  ): Promise<{ source_id: string; pair_id: number; pair_symbol: string; tokens: TokenLeg[] }>;
  addLeg(sourceId: string, pairId: number, input: LegInput): Promise<{ id: number }>;
  /** 400 when no field is given; 404 for an unknown source, pair, or a mapping not of that pair. */
  updateLeg(sourceId: string, pairId: number, legId: number, update: LegUpdate): Promise<{ id: number }>;
  deleteLeg(sourceId: string, pairId: number, legId: number): Promise<number>;
  /** A pair by id with its source kind and decimals (spot, OHLCV), or null. */
  getPricedPair(pairId: number): Promise<PricedPair | null>;
  /** Pairs whose token_id, or one of whose legs' token_id, is the token; optionally on one chain. */
  tokenPairs(tokenId: string, chain?: string): Promise<TokenPair[]>;
}

/** A price_pairs row as PAIR_COLUMNS reads it: the served pair's stored fields, in the table's names. */
type PairRow = Omit<ConfiguredPair, "tokens" | "market" | "includeInTVL" | "pool_created_at"> & {
  include_in_tvl: boolean;
  pool_created_at: string | number | null;
};

const PAIR_COLUMNS = `p.id, p.source_id, p.pair_symbol, p.pair_label, p.pool_created_at, p.token_id, p.quote_token_id,
  p.chain, p.chain_id, p.denomination, p.available, p.enabled, p.enable_trades, p.include_in_tvl, p.token_address,
  p.decimals, p.quote_decimals`;

const LEG_COLUMNS =
  "l.id, l.token_price_source_id, l.type, l.dapp, l.chain, l.token_id, l.token_contract, l.in_consolidated_market";

/** SQL of a token's display symbol: ALPH for the zero id, the registry's symbol, else the id itself. */
const symbolSql = (idExpr: string, tokenAlias: string) =>
  `CASE WHEN ${idExpr} = '${ALPH_TOKEN_ID}' THEN 'ALPH' ELSE COALESCE(${tokenAlias}.symbol, ${idExpr}) END`;

const toLeg = (r: TokenLeg): TokenLeg => ({
  ...r,
  in_consolidated_market: Boolean(r.in_consolidated_market),
});

function toPair({ include_in_tvl, pool_created_at, ...r }: PairRow, tokens: TokenLeg[]): ConfiguredPair {
  const created = num(pool_created_at);
  return {
    ...r,
    pool_created_at: created === null ? null : new Date(created).toISOString(),
    tokens,
    chain_id: r.chain_id ?? (r.chain === "alph" ? ALEPHIUM_CHAIN_ID : null),
    includeInTVL: include_in_tvl,
    market: marketOf(r.source_id, r.pair_symbol),
  };
}

/** Token facts the add flow fills a pair with. */
interface TokenFacts {
  symbol: string;
  decimals: number | null;
}

async function tokenFacts(db: PgQueryable, ids: (string | null)[]): Promise<Map<string, TokenFacts>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  const out = new Map<string, TokenFacts>();
  if (wanted.length === 0) return out;
  const rows = await db.query<{ id: string; symbol: string; decimals: number | null }>(
    "price_token_facts",
    `SELECT x.id, ${symbolSql("x.id", "t")} AS symbol, t.decimals
     FROM unnest($1::text[]) AS x(id) LEFT JOIN tokens t ON t.id = x.id`,
    [wanted],
  );
  for (const r of rows) out.set(r.id, { symbol: r.symbol, decimals: r.decimals });
  return out;
}

/** The one non-deleted token of a symbol (exact), or null when none or several carry it. */
async function tokenOfSymbol(db: PgQueryable, symbol: string): Promise<string | null> {
  if (symbol === "ALPH") return ALPH_TOKEN_ID;
  const rows = await db.query<{ id: string }>(
    "price_token_of_symbol",
    "SELECT id FROM tokens WHERE symbol = $1 AND NOT deleted LIMIT 2",
    [symbol],
  );
  return rows.length === 1 ? rows[0]!.id : null;
}

function isPoolAddress(value: string): boolean {
  try {
    return isValidAddress(value) && isContractAddress(value);
  } catch {
    return false;
  }
}

/**
 * How long a pair's serving details (source, decimals, label) are reused by spot and OHLCV reads in
 * one API process. Changes made through this process apply at once; others (another API process,
 * a token's decimals edited) within this time.
 */
const PRICED_PAIR_CACHE_MS = 2000;

/**
 * The decimals a pair's prices are served with (`base_decimals`, `quote_decimals`): the pair's own, else
 * the tokens' (oracle sources: the source's value_decimals for the quote; cex: 0). Columns of a SELECT over
 * {@link PAIR_DECIMALS_FROM} (`p` the pair, `s` its source).
 */
export const PAIR_DECIMALS_COLUMNS = `COALESCE(p.decimals, CASE WHEN s.kind IN ('oracle', 'cex') THEN 0 ELSE tb.decimals END, 0)
    AS base_decimals,
  COALESCE(p.quote_decimals,
    CASE WHEN s.kind = 'oracle' THEN s.value_decimals WHEN s.kind = 'cex' THEN 0 ELSE tq.decimals END, 0)
    AS quote_decimals`;
export const PAIR_DECIMALS_FROM = `FROM price_pairs p JOIN price_sources s ON s.id = p.source_id
  LEFT JOIN tokens tb ON tb.id = p.token_id
  LEFT JOIN tokens tq ON tq.id = p.quote_token_id`;

export function createPriceRegistry(pg: Pg): PriceRegistry {
  const priced = new Map<number, { at: number; value: PricedPair | null }>();
  const getSource = async (id: string): Promise<SourceRow | null> => {
    const rows = await pg.query<SourceRow>(
      "price_source_get",
      `SELECT id, label, kind, dapp_id, contract_addresses, value_decimals, enabled
       FROM price_sources WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  };
  const mustSource = async (id: string): Promise<SourceRow> => {
    const source = await getSource(id);
    if (!source) throw notFound(`Price source ${id} not found`, { srcid: id });
    return source;
  };
  const legsOf = async (pairIds: number[]): Promise<Map<number, TokenLeg[]>> => {
    const out = new Map<number, TokenLeg[]>(pairIds.map((id) => [id, []]));
    if (pairIds.length === 0) return out;
    const rows = await pg.query<TokenLeg>(
      "price_legs_of_pairs",
      `SELECT ${LEG_COLUMNS} FROM price_pair_tokens l WHERE l.token_price_source_id = ANY($1::integer[])
       ORDER BY l.token_price_source_id, l.id`,
      [pairIds],
    );
    for (const r of rows) out.get(r.token_price_source_id)?.push(toLeg(r));
    return out;
  };
  /** The pair row of a source: 404 naming the source when unknown, else naming the pair. */
  const mustPair = async (sourceId: string, pairId: number): Promise<PairRow> => {
    await mustSource(sourceId);
    const rows = await pg.query<PairRow>(
      "price_pair_get",
      `SELECT ${PAIR_COLUMNS} FROM price_pairs p WHERE p.id = $1 AND p.source_id = $2`,
      [pairId, sourceId],
    );
    if (!rows[0]) {
      throw notFound(`Pair ${pairId} of price source ${sourceId} not found`, {
        srcid: sourceId,
        pairid: pairId,
      });
    }
    return rows[0];
  };

  /** Chain short name of a chain id (chains table); 400 naming chain_id when unknown. */
  const chainOf = async (chainId: number): Promise<string> => {
    const rows = await pg.query<{ short_name: string }>(
      "price_chain_of",
      "SELECT short_name FROM chains WHERE id = $1",
      [chainId],
    );
    if (!rows[0]) throw badRequest(`chain_id ${chainId} is not a known chain`, { field: "chain_id" });
    return rows[0].short_name;
  };

  interface NewPair {
    pair_symbol: string;
    pair_label: string;
    pool_created_at: number | null;
    token_id: string | null;
    quote_token_id: string | null;
    chain: string;
    chain_id: number;
    denomination: string;
    token_address: string | null;
    decimals: number | null;
    quote_decimals: number | null;
  }

  const insertPair = async (source: SourceRow, p: NewPair): Promise<AddPairResult> => {
    const onchain = source.kind === "onchain_dex" || source.kind === "oracle";
    const t = Date.now();
    const inserted = await pg.query<{ id: number }>(
      "price_pair_add",
      `INSERT INTO price_pairs (source_id, pair_symbol, pair_label, pool_created_at, token_id, quote_token_id, chain,
         chain_id, denomination, token_address, decimals, quote_decimals, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)
       ON CONFLICT (source_id, pair_symbol) DO NOTHING RETURNING id`,
      [
        source.id,
        p.pair_symbol,
        p.pair_label,
        p.pool_created_at,
        p.token_id,
        p.quote_token_id,
        p.chain,
        p.chain_id,
        p.denomination,
        p.token_address,
        p.decimals,
        p.quote_decimals,
        t,
      ],
    );
    if (inserted[0]) return { id: inserted[0].id, pair_symbol: p.pair_symbol, created: true, onchain };
    const existing = await existingPair(source.id, p.pair_symbol);
    if (!existing) throw new Error(`price pair ${source.id}/${p.pair_symbol} neither inserted nor found`);
    return { ...existing, onchain };
  };

  const existingPair = async (sourceId: string, symbol: string) => {
    const rows = await pg.query<{ id: number }>(
      "price_pair_existing",
      "SELECT id FROM price_pairs WHERE source_id = $1 AND pair_symbol = $2",
      [sourceId, symbol],
    );
    return rows[0] ? { id: rows[0].id, pair_symbol: symbol, created: false } : null;
  };

  const tokenAddress = (tokenId: string | null) =>
    tokenId === null || tokenId === ALPH_TOKEN_ID || !HEX64.test(tokenId) ? null : contractAddressOf(tokenId);

  /** On-chain DEX: the pool by address (pair_symbol) or by its dex_pools id (pair_id). */
  const addOnchainDex = async (source: SourceRow, input: AddPairInput, chainId: number) => {
    let address = input.pair_symbol;
    if (address !== undefined && !isPoolAddress(address)) {
      throw badRequest(`Invalid pool address in pair_symbol: ${address} is not a base58 contract address`, {
        field: "pair_symbol",
      });
    }
    const pools = await pg.query<{
      id: number;
      pool_address: string;
      dapp_id: string;
      token0_id: string;
      token1_id: string;
      created_ms: string | number;
    }>(
      "price_dex_pool_get",
      `SELECT id, pool_address, dapp_id, token0_id, token1_id,
         (extract(epoch FROM created_at) * 1000)::bigint AS created_ms
       FROM dex_pools WHERE ($1::text IS NOT NULL AND pool_address = $1) OR ($2::integer IS NOT NULL AND id = $2)`,
      [address ?? null, input.pair_id ?? null],
    );
    let pool = pools.find((p) => address === undefined || p.pool_address === address);
    if (input.pair_id !== undefined) {
      const byId = pools.find((p) => p.id === input.pair_id && p.dapp_id === source.dapp_id);
      if (!byId) {
        throw notFound(
          `pair_id ${input.pair_id} not found among the available pools of price source ${source.id}`,
          {
            field: "pair_id",
          },
        );
      }
      if (address !== undefined && address !== byId.pool_address) {
        throw badRequest(`pair_symbol ${address} and pair_id ${input.pair_id} name different pools`, {
          field: "pair_symbol",
        });
      }
      pool = byId;
      address = byId.pool_address;
    }
    if (address === undefined) throw new Error("unreachable: no pool address");
    if (pool && source.dapp_id !== null && pool.dapp_id !== source.dapp_id) {
      throw badRequest(
        `pair_symbol ${address} is a pool of dapp ${pool.dapp_id}, not of price source ${source.id} (${source.dapp_id})`,
        { field: "pair_symbol" },
      );
    }
    let tokenId = input.token_id?.toLowerCase();
    if (tokenId === undefined) {
      // By pair_id the available list named base and quote: the base is the default.
      if (!pool || input.pair_symbol !== undefined) {
        throw badRequest("token_id is required to add an on-chain DEX pool by its address (pair_symbol)", {
          field: "token_id",
        });
      }
      tokenId = pool.token0_id === ALPH_TOKEN_ID ? pool.token1_id : pool.token0_id;
    }
    if (!HEX64.test(tokenId)) {
      throw badRequest("token_id of an Alephium pool is a 64-hex token id", { field: "token_id" });
    }
    let quoteId: string | null = null;
    if (pool) {
      if (tokenId !== pool.token0_id && tokenId !== pool.token1_id) {
        throw badRequest(
          `token_id ${tokenId} is not a token of pool ${address} (${pool.token0_id}, ${pool.token1_id})`,
          { field: "token_id" },
        );
      }
      quoteId = tokenId === pool.token0_id ? pool.token1_id : pool.token0_id;
    }
    const facts = await tokenFacts(pg, [tokenId, quoteId]);
    const base = facts.get(tokenId);
    const quote = quoteId === null ? undefined : facts.get(quoteId);
    const quoteSymbol = quote?.symbol ?? UNKNOWN_ASSET;
    return insertPair(source, {
      pair_symbol: address,
      pair_label: `${base?.symbol ?? tokenId}/${quoteSymbol}`,
      pool_created_at: pool ? num(pool.created_ms) : null,
      token_id: tokenId,
      quote_token_id: quoteId,
      chain: "alph",
      chain_id: chainId,
      denomination: quoteSymbol,
      token_address: tokenAddress(tokenId),
      decimals: base?.decimals ?? null,
      quote_decimals: quote?.decimals ?? null,
    });
  };

  /** A row of price_available_pairs by symbol and/or id; 404 when it names none (or 400 when two). */
  const availableRow = async (source: SourceRow, input: AddPairInput) => {
    const rows = await pg.query<AvailablePair>(
      "price_available_get",
      `SELECT id, source_id, pair_symbol, base_asset, quote_asset FROM price_available_pairs
       WHERE source_id = $1 AND (($2::text IS NOT NULL AND pair_symbol = $2) OR ($3::integer IS NOT NULL AND id = $3))`,
      [source.id, input.pair_symbol ?? null, input.pair_id ?? null],
    );
    if (input.pair_id !== undefined) {
      const byId = rows.find((r) => r.id === input.pair_id);
      if (!byId) {
        throw notFound(
          `pair_id ${input.pair_id} not found among the available pairs of price source ${source.id}`,
          {
            field: "pair_id",
          },
        );
      }
      if (input.pair_symbol !== undefined && input.pair_symbol !== byId.pair_symbol) {
        throw badRequest(
          `pair_symbol ${input.pair_symbol} and pair_id ${input.pair_id} name different available pairs`,
          { field: "pair_symbol" },
        );
      }
      return byId;
    }
    return rows[0] ?? null;
  };

  /** CEX, oracle, API, aggregator: an available pair; EVM DEX: also a pool by address (`0x` + 40 hex). */
  const addListed = async (source: SourceRow, input: AddPairInput, chainId: number) => {
    const evm = EVM_DEX_KINDS.includes(source.kind) && input.pair_id === undefined;
    if (evm) {
      if (!EVM_ADDRESS.test(input.pair_symbol ?? "")) {
        throw badRequest(`Invalid pool address in pair_symbol: ${source.kind} pools are 0x + 40 hex`, {
          field: "pair_symbol",
        });
      }
      if (input.token_id === undefined) {
        throw badRequest("token_id is required to add a DEX pool by its address (pair_symbol)", {
          field: "token_id",
        });
      }
      input = { ...input, pair_symbol: input.pair_symbol?.toLowerCase() };
    }
    const listed = await availableRow(source, input);
    if (!listed && !evm) {
      throw notFound(
        `pair_symbol ${input.pair_symbol} not found among the available pairs of price source ${source.id}`,
        {
          field: "pair_symbol",
        },
      );
    }
    const symbol = listed?.pair_symbol ?? (input.pair_symbol as string);
    const tokenId =
      input.token_id?.toLowerCase() ?? (listed ? await tokenOfSymbol(pg, listed.base_asset) : null);
    const quoteId = listed ? await tokenOfSymbol(pg, listed.quote_asset) : null;
    const facts = await tokenFacts(pg, [tokenId, quoteId]);
    const base = tokenId === null ? undefined : facts.get(tokenId);
    const quote = quoteId === null ? undefined : facts.get(quoteId);
    const baseName = listed?.base_asset ?? base?.symbol ?? tokenId ?? UNKNOWN_ASSET;
    const quoteName = listed?.quote_asset ?? UNKNOWN_ASSET;
    const oracle = source.kind === "oracle";
    // Exchanges send prices and base volumes in whole units: their candles are served as stored.
    const cex = source.kind === "cex";
    return insertPair(source, {
      pair_symbol: symbol,
      pair_label: `${baseName}/${quoteName}`,
      pool_created_at: null,
      token_id: tokenId,
      quote_token_id: quoteId,
      chain: await chainOf(chainId),
      chain_id: chainId,
      denomination: quoteName,
      token_address: tokenAddress(tokenId),
      decimals: oracle || cex ? 0 : (base?.decimals ?? null),
      quote_decimals: oracle ? (source.value_decimals ?? 0) : cex ? 0 : (quote?.decimals ?? null),
    });
  };

  return {
    async listSources() {
      const rows = await pg.query<{
        id: string;
        label: string;
        kind: SourceKind;
        supports_spot: boolean;
        supports_candles: boolean;
        supports_trades: boolean;
        supported_denominations: string[];
        enabled: boolean;
        available_count: number;
        watched_count: number;
      }>(
        "price_sources_list",
        `SELECT s.id, s.label, s.kind, s.supports_spot, s.supports_candles, s.supports_trades,
           s.supported_denominations, s.enabled,
           (CASE WHEN s.kind = 'onchain_dex' THEN (SELECT count(*) FROM dex_pools d WHERE d.dapp_id = s.dapp_id)
                 ELSE (SELECT count(*) FROM price_available_pairs a WHERE a.source_id = s.id) END)::int
             AS available_count,
           (SELECT count(*) FROM price_pairs p WHERE p.source_id = s.id)::int AS watched_count
         FROM price_sources s ORDER BY s.id`,
      );
      return rows.map((r) => ({
        id: r.id,
        label: r.label,
        kind: r.kind,
        supportsSpot: r.supports_spot,
        supportsCandles: r.supports_candles,
        supportsTrades: r.supports_trades,
        supportedDenominations: r.supported_denominations ?? [],
        enabled: r.enabled,
        availableCount: Number(r.available_count),
        watchedCount: Number(r.watched_count),
      }));
    },

    getSource,

    async listPairs(sourceId) {
      await mustSource(sourceId);
      const rows = await pg.query<PairRow>(
        "price_pairs_list",
        `SELECT ${PAIR_COLUMNS} FROM price_pairs p WHERE p.source_id = $1 ORDER BY p.id`,
        [sourceId],
      );
      const legs = await legsOf(rows.map((r) => r.id));
      return rows.map((r) => toPair(r, legs.get(r.id) ?? []));
    },

    async getPair(sourceId, pairId) {
      const row = await mustPair(sourceId, pairId);
      return toPair(row, (await legsOf([row.id])).get(row.id) ?? []);
    },

    async listAvailable(sourceId) {
      const source = await mustSource(sourceId);
      if (source.kind === "onchain_dex") {
        // Base and quote as the normalizer orients a pool: the non-ALPH leg is the base.
        return pg.query<AvailablePair>(
          "price_available_dex",
          `SELECT d.id, $1::text AS source_id, d.pool_address AS pair_symbol,
             ${symbolSql("b.id_", "tb")} AS base_asset, ${symbolSql("q.id_", "tq")} AS quote_asset
           FROM dex_pools d
           CROSS JOIN LATERAL (SELECT CASE WHEN d.token0_id = '${ALPH_TOKEN_ID}' THEN d.token1_id ELSE d.token0_id END AS id_) b
           CROSS JOIN LATERAL (SELECT CASE WHEN d.token0_id = '${ALPH_TOKEN_ID}' THEN d.token0_id ELSE d.token1_id END AS id_) q
           LEFT JOIN tokens tb ON tb.id = b.id_
           LEFT JOIN tokens tq ON tq.id = q.id_
           WHERE d.dapp_id = $2 ORDER BY d.id`,
          [source.id, source.dapp_id],
        );
      }
      return pg.query<AvailablePair>(
        "price_available_list",
        `SELECT id, source_id, pair_symbol, base_asset, quote_asset FROM price_available_pairs
         WHERE source_id = $1 ORDER BY id`,
        [source.id],
      );
    },

    async addPair(sourceId, input) {
      priced.clear();
      const source = await mustSource(sourceId);
      if (input.pair_symbol === undefined && input.pair_id === undefined) {
        throw badRequest("Give pair_symbol or pair_id to name the pair to add", {
          fields: ["pair_symbol", "pair_id"],
        });
      }
      const chainId = input.chain_id ?? ALEPHIUM_CHAIN_ID;
      const onchain = source.kind === "onchain_dex" || source.kind === "oracle";
      if (onchain && chainId !== ALEPHIUM_CHAIN_ID) {
        throw badRequest(`chain_id of a ${source.kind} source's pair is ${ALEPHIUM_CHAIN_ID} (Alephium)`, {
          field: "chain_id",
        });
      }
      if (source.kind === "onchain_dex") return addOnchainDex(source, input, chainId);
      return addListed(source, input, chainId);
    },

    async updatePair(sourceId, pairId, update) {
      priced.clear();
      const fields = PAIR_UPDATE_FIELDS.filter((k) => update[k] !== undefined);
      if (fields.length === 0) {
        throw badRequest(`No fields to update: give any of ${PAIR_UPDATE_FIELDS.join(", ")}`, {
          allowed: [...PAIR_UPDATE_FIELDS],
        });
      }
      await mustPair(sourceId, pairId);
      const params: PgParam[] = [pairId, sourceId, Date.now()];
      const sets = fields.map((k) => {
        params.push(update[k] as boolean);
        return `${k} = $${params.length}`;
      });
      const rows = await pg.query<{ id: number }>(
        "price_pair_update",
        `UPDATE price_pairs SET ${sets.join(", ")}, updated_at = $3 WHERE id = $1 AND source_id = $2 RETURNING id`,
        params,
      );
      if (!rows[0])
        throw notFound(`Pair ${pairId} of price source ${sourceId} not found`, { pairid: pairId });
      return { id: rows[0].id };
    },

    async deletePair(sourceId, pairId) {
      priced.clear();
      await mustSource(sourceId);
      const rows = await pg.query<{ id: number }>(
        "price_pair_del",
        "DELETE FROM price_pairs WHERE id = $1 AND source_id = $2 RETURNING id",
        [pairId, sourceId],
      );
      if (rows.length === 0) {
        throw notFound(`Pair ${pairId} of price source ${sourceId} not found`, {
          srcid: sourceId,
          pairid: pairId,
        });
      }
      return rows.length;
    },

    async listLegs(sourceId, pairId) {
      const pair = await mustPair(sourceId, pairId);
      return {
        source_id: sourceId,
        pair_id: pair.id,
        pair_symbol: pair.pair_symbol,
        tokens: (await legsOf([pair.id])).get(pair.id) ?? [],
      };
    },

    async addLeg(sourceId, pairId, input) {
      priced.clear();
      await mustPair(sourceId, pairId);
      const rows = await pg.query<{ id: number }>(
        "price_leg_add",
        `INSERT INTO price_pair_tokens (token_price_source_id, type, dapp, chain, token_id, token_contract,
           in_consolidated_market) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
        [
          pairId,
          input.type,
          input.dapp ?? null,
          input.chain,
          input.token_id,
          input.token_contract ?? null,
          input.in_consolidated_market ?? false,
        ],
      );
      return { id: rows[0]!.id };
    },

    async updateLeg(sourceId, pairId, legId, update) {
      priced.clear();
      const fields = LEG_UPDATE_FIELDS.filter((k) => update[k] !== undefined);
      if (fields.length === 0) {
        throw badRequest(`No fields to update: give any of ${LEG_UPDATE_FIELDS.join(", ")}`, {
          allowed: [...LEG_UPDATE_FIELDS],
        });
      }
      await mustPair(sourceId, pairId);
      const params: PgParam[] = [legId, pairId];
      const sets = fields.map((k) => {
        params.push(update[k] as PgParam);
        return `${k} = $${params.length}`;
      });
      const rows = await pg.query<{ id: number }>(
        "price_leg_update",
        `UPDATE price_pair_tokens SET ${sets.join(", ")} WHERE id = $1 AND token_price_source_id = $2 RETURNING id`,
        params,
      );
      if (!rows[0]) throw legNotFound(sourceId, pairId, legId);
      return { id: rows[0].id };
    },

    async deleteLeg(sourceId, pairId, legId) {
      priced.clear();
      await mustPair(sourceId, pairId);
      const rows = await pg.query<{ id: number }>(
        "price_leg_del",
        "DELETE FROM price_pair_tokens WHERE id = $1 AND token_price_source_id = $2 RETURNING id",
        [legId, pairId],
      );
      if (rows.length === 0) throw legNotFound(sourceId, pairId, legId);
      return rows.length;
    },

    async getPricedPair(pairId) {
      const hit = priced.get(pairId);
      if (hit && performance.now() - hit.at < PRICED_PAIR_CACHE_MS) return hit.value;
      const rows = await pg.query<PricedPair>(
        "price_pair_priced",
        `SELECT p.id, p.source_id, s.kind AS source_kind, p.pair_symbol, p.pair_label, p.token_id, p.quote_token_id,
           p.denomination, ${PAIR_DECIMALS_COLUMNS}
         ${PAIR_DECIMALS_FROM}
         WHERE p.id = $1`,
        [pairId],
      );
      const r = rows[0];
      const value = r
        ? { ...r, base_decimals: Number(r.base_decimals), quote_decimals: Number(r.quote_decimals) }
        : null;
      if (priced.size >= 10_000) priced.clear();
      priced.set(pairId, { at: performance.now(), value });
      return value;
    },

    async tokenPairs(tokenId, chain) {
      const rows = await pg.query<Omit<TokenPair, "market" | "includeInTVL"> & { include_in_tvl: boolean }>(
        "price_token_pairs",
        `SELECT p.id, p.source_id, p.pair_symbol, p.pair_label, p.available, p.enabled, p.enable_trades,
           p.include_in_tvl, p.chain
         FROM price_pairs p
         WHERE (lower(p.token_id) = $1 OR EXISTS (SELECT 1 FROM price_pair_tokens l
                  WHERE l.token_price_source_id = p.id AND lower(l.token_id) = $1))
           AND ($2::text IS NULL OR lower(p.chain) = lower($2))
         ORDER BY p.id`,
        [tokenId.toLowerCase(), chain ?? null],
      );
      return rows.map(({ include_in_tvl, ...r }) => ({
        ...r,
        includeInTVL: include_in_tvl,
        market: marketOf(r.source_id, r.pair_symbol),
      }));
    },
  };
}

function legNotFound(sourceId: string, pairId: number, legId: number) {
  return notFound(`Token mapping ${legId} of pair ${pairId} (price source ${sourceId}) not found`, {
    id: legId,
  });
}
