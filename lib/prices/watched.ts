/**
 * What the candles processor reads from the price pairs each batch: the configured pairs whose
 * source builds candles, and the contracts of oracle sources. Each batch reads them after writing its
 * trades, so a pair added meanwhile is either seen by the batch or finds the batch's trades written
 * when its backfill runs.
 */
import type { PgQueryable } from "../stores/postgres.ts";
import { marketOf, poolOf } from "./reader.ts";
import type { OracleContracts } from "./trades.ts";
import type { CandlePair } from "./writer.ts";

export interface WatchedPair extends CandlePair {
  id: number;
  source_id: string;
  source_kind: string;
  pair_symbol: string;
  /** Null when the pair's candles still have to be rebuilt from stored events. */
  backfilled_at: number | null;
}

/** Kinds of sources whose facts come from the chain (the candles processor serves them). */
export const ONCHAIN_KINDS = ["onchain_dex", "oracle"] as const;

/** Configured pairs of on-chain sources that support candles, in id order. */
export async function loadCandlePairs(pg: PgQueryable, ids?: number[]): Promise<WatchedPair[]> {
  const rows = await pg.query<{
    id: number;
    source_id: string;
    source_kind: string;
    pair_symbol: string;
    token_id: string | null;
    backfilled_at: string | null;
  }>(
    "price_candle_pairs",
    `SELECT p.id, p.source_id, s.kind AS source_kind, p.pair_symbol, p.token_id, p.backfilled_at
     FROM price_pairs p JOIN price_sources s ON s.id = p.source_id
     WHERE s.supports_candles AND s.kind = ANY($1) AND ($2::integer[] IS NULL OR p.id = ANY($2))
     ORDER BY p.id`,
    [[...ONCHAIN_KINDS], ids ?? null],
  );
  return rows.map((r) => ({
    id: r.id,
    source_id: r.source_id,
    source_kind: r.source_kind,
    pair_symbol: r.pair_symbol,
    market: marketOf(r.source_id, r.pair_symbol),
    pool: poolOf({ id: r.source_id, kind: r.source_kind }, r.pair_symbol),
    token_id: r.token_id ?? "",
    backfilled_at: r.backfilled_at === null ? null : Number(r.backfilled_at),
  }));
}

/** Contract address → oracle source id, for every oracle source. */
export async function loadOracleContracts(pg: PgQueryable): Promise<OracleContracts> {
  const rows = await pg.query<{ id: string; contract_addresses: string[] }>(
    "price_oracle_contracts",
    "SELECT id, contract_addresses FROM price_sources WHERE kind = 'oracle' ORDER BY id",
  );
  const out = new Map<string, string>();
  for (const r of rows)
    for (const address of r.contract_addresses) if (!out.has(address)) out.set(address, r.id);
  return out;
}

/** Marks a pair's candles as rebuilt (unless the pair was removed meanwhile). */
export async function markBackfilled(pg: PgQueryable, id: number, at: number): Promise<void> {
  await pg.query("price_pair_backfilled", "UPDATE price_pairs SET backfilled_at = $2 WHERE id = $1", [
    id,
    at,
  ]);
}

/** Ids of the configured pairs of on-chain sources (all, the given ones, or those not rebuilt yet). */
export async function loadPricePairIds(
  pg: PgQueryable,
  ids: number[] | undefined,
  pendingOnly: boolean,
): Promise<number[]> {
  const rows = await pg.query<{ id: number }>(
    "price_pair_ids",
    `SELECT p.id FROM price_pairs p JOIN price_sources s ON s.id = p.source_id
     WHERE s.kind = ANY($1) AND ($2::integer[] IS NULL OR p.id = ANY($2)) AND (NOT $3 OR p.backfilled_at IS NULL)
     ORDER BY p.id`,
    [[...ONCHAIN_KINDS], ids ?? null, pendingOnly],
  );
  return rows.map((r) => r.id);
}
