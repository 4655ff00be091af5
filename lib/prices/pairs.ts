import { ALPH_TOKEN_ID } from "../chain/types.ts";
import { badRequest, notFound } from "../errors.ts";
import type { Pg, PgParam } from "../stores/postgres.ts";
import { ALEPHIUM_CHAIN_ID, num } from "../tokens/repo-shared.ts";
import { addPair } from "./pair-adding.ts";
import {
  type AddPairInput,
  type AddPairResult,
  type AvailablePair,
  type ConfiguredPair,
  LEG_UPDATE_FIELDS,
  type LegInput,
  type LegUpdate,
  PAIR_UPDATE_FIELDS,
  type PairUpdate,
  type PricedPair,
  type PriceSource,
  type SourceKind,
  type SourceRow,
  symbolSql,
  type TokenLeg,
  type TokenPair,
} from "./pair-types.ts";

export * from "./pair-types.ts";

import { marketOf } from "./reader.ts";

export interface PricePairs {
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

export function createPricePairs(pg: Pg): PricePairs {
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
      return addPair(pg, await mustSource(sourceId), input);
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
