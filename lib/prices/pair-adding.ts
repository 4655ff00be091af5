/**
 * Adding a configured price pair: an on-chain DEX pool by its address or its `dex_pools` id, or a pair a source
 * lists (CEX, oracle, API, aggregator; an EVM DEX pool also by its `0x` address), filled with the tokens' symbols
 * and decimals; idempotent per source and pair symbol. The rest of the pairs' life is `pairs.ts`.
 */
import { isContractAddress, isValidAddress } from "@alephium/web3";
import { ALPH_TOKEN_ID } from "../chain/types.ts";
import { badRequest, notFound } from "../errors.ts";
import type { PgQueryable } from "../stores/postgres.ts";
import { ALEPHIUM_CHAIN_ID, contractAddressOf, num } from "../tokens/repo-shared.ts";
import {
  type AddPairInput,
  type AddPairResult,
  type AvailablePair,
  EVM_DEX_KINDS,
  type SourceRow,
  symbolSql,
  UNKNOWN_ASSET,
} from "./pair-types.ts";

const HEX64 = /^[0-9a-fA-F]{64}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

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

/** Chain short name of a chain id (chains table); 400 naming chain_id when unknown. */
const chainOf = async (pg: PgQueryable, chainId: number): Promise<string> => {
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

const insertPair = async (pg: PgQueryable, source: SourceRow, p: NewPair): Promise<AddPairResult> => {
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
  const existing = await existingPair(pg, source.id, p.pair_symbol);
  if (!existing) throw new Error(`price pair ${source.id}/${p.pair_symbol} neither inserted nor found`);
  return { ...existing, onchain };
};

const existingPair = async (pg: PgQueryable, sourceId: string, symbol: string) => {
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
const addOnchainDex = async (pg: PgQueryable, source: SourceRow, input: AddPairInput, chainId: number) => {
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
  return insertPair(pg, source, {
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
const availableRow = async (pg: PgQueryable, source: SourceRow, input: AddPairInput) => {
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
const addListed = async (pg: PgQueryable, source: SourceRow, input: AddPairInput, chainId: number) => {
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
  const listed = await availableRow(pg, source, input);
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
  return insertPair(pg, source, {
    pair_symbol: symbol,
    pair_label: `${baseName}/${quoteName}`,
    pool_created_at: null,
    token_id: tokenId,
    quote_token_id: quoteId,
    chain: await chainOf(pg, chainId),
    chain_id: chainId,
    denomination: quoteName,
    token_address: tokenAddress(tokenId),
    decimals: oracle || cex ? 0 : (base?.decimals ?? null),
    quote_decimals: oracle ? (source.value_decimals ?? 0) : cex ? 0 : (quote?.decimals ?? null),
  });
};

/** Adds a configured pair of `source` (idempotent per source and pair symbol); 400/404 as the route documents. */
export async function addPair(
  pg: PgQueryable,
  source: SourceRow,
  input: AddPairInput,
): Promise<AddPairResult> {
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
  if (source.kind === "onchain_dex") return addOnchainDex(pg, source, input, chainId);
  return addListed(pg, source, input, chainId);
}
