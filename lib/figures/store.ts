/**
 * The figures' tables: facts in ClickHouse (`supply_changes`, `pool_reserve_changes`, written by the
 * figures processor and its backfill), figures in Postgres (`tokens` and `dapps` columns, written by
 * `refreshFigures`) and their history in ClickHouse (`market_figures`). The facts are keyed by event or
 * block, so writes are idempotent; figures are recomputed from them, never accumulated.
 */
import { ALPH_TOKEN_ID } from "../chain/types.ts";
import type { Logger } from "../logger.ts";
import { shiftToNumber } from "../prices/decimal.ts";
import { PAIR_DECIMALS_COLUMNS, PAIR_DECIMALS_FROM } from "../prices/pairs.ts";
import { poolOf } from "../prices/reader.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { Pg } from "../stores/postgres.ts";
import { ALPH_MAX_SUPPLY, type AlphSupply, loadAlphSupply, saveAlphSupply } from "./alph-supply.ts";
import {
  computeTvl,
  type PriceRoute,
  resolveUsdPrices,
  STABLE_SYMBOLS,
  type TvlPool,
  tokenFigures,
} from "./compute.ts";
import type { ReserveChangeRow, SupplyChangeRow } from "./facts.ts";

export async function insertFacts(
  ch: Ch,
  supply: readonly SupplyChangeRow[],
  reserves: readonly ReserveChangeRow[],
): Promise<void> {
  await ch.insert("supply_changes_insert", "supply_changes", supply);
  await ch.insert("pool_reserve_changes_insert", "pool_reserve_changes", reserves);
}

/** Empties the facts (`figures backfill --rebuild`, after a burn address was removed). */
export async function truncateFacts(ch: Ch): Promise<void> {
  for (const table of ["supply_changes", "pool_reserve_changes"])
    await ch.command(`${table}_truncate`, `TRUNCATE TABLE ${table}`);
}

/** Marks the facts of a block that left the main chain (a newer seq wins). */
export async function retractFacts(ch: Ch, block: { block_hash: string; seq: number }): Promise<void> {
  // No `main_chain` condition: REPLACE makes `main_chain` an alias of false inside the SELECT.
  for (const table of ["supply_changes", "pool_reserve_changes"]) {
    await ch.command(
      `${table}_retract`,
      `INSERT INTO ${table} SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
       FROM ${table} FINAL WHERE block_hash = {hash:String}`,
      { seq: block.seq, hash: block.block_hash },
    );
  }
}

/** Burned and still-locked amounts per token (smallest units). */
export async function readSupplyChanges(
  ch: Ch,
  now: number,
): Promise<Map<string, { burned: bigint; locked: bigint }>> {
  const rows = await ch.query<{ token_id: string; burned: string; locked: string }>(
    "supply_changes_sums",
    `SELECT token_id, toString(sumIf(amount, kind = 'burned')) AS burned,
       toString(sumIf(amount, kind = 'locked')) AS locked
     FROM supply_changes FINAL
     WHERE main_chain AND (kind = 'burned' OR (kind = 'locked' AND unlock_at > {now:UInt64}))
     GROUP BY token_id`,
    { now },
  );
  return new Map(rows.map((r) => [r.token_id, { burned: BigInt(r.burned), locked: BigInt(r.locked) }]));
}

/** Current reserves of the given pools, per token (smallest units). */
export async function readReserves(
  ch: Ch,
  pools: readonly string[],
): Promise<Map<string, Map<string, bigint>>> {
  const out = new Map<string, Map<string, bigint>>();
  if (pools.length === 0) return out;
  const rows = await ch.query<{ pool: string; token_id: string; reserve: string }>(
    "pool_reserves",
    `SELECT pool, token_id, toString(sum(delta)) AS reserve FROM pool_reserve_changes FINAL
     WHERE pool IN {pools:Array(String)} AND main_chain GROUP BY pool, token_id ORDER BY pool, token_id`,
    { pools: [...pools] },
  );
  for (const r of rows) {
    const m = out.get(r.pool) ?? new Map<string, bigint>();
    m.set(r.token_id, BigInt(r.reserve));
    out.set(r.pool, m);
  }
  return out;
}

/**
 * Whether the token `t` was issued by a bridge pool (a Wormhole RemoteTokenPool, which issues itself the whole u256
 * range): a mapped Alephium Bridge token, or a token whose issuing contract the normalizer attributed to the bridge
 * (a sub-contract of its TokenBridge).
 */
const BRIDGE_POOL_SQL = `(EXISTS (SELECT 1 FROM bridged_tokens b
    WHERE b.native_token_id = t.id AND b.mapping_kind = 'wormhole_remote_pool')
  OR EXISTS (SELECT 1 FROM normalize_contract_dapps n WHERE n.address = t.contract_address AND n.dapp_id = 'wormhole'))`;

/** A token whose supply the figures processor reads from the node. */
export interface SupplyDue {
  id: string;
  contract_address: string;
  /** Issued by a bridge pool: its supply is what left the pool, read from the pool's balance. */
  bridge_pool: boolean;
}

/**
 * Tokens whose maxSupply the node should give: those without one (the official list's seeds) and bridged tokens,
 * whose bridged amount moves. At most `limit`, least recently read first.
 */
export async function tokensNeedingSupply(pg: Pg, limit: number): Promise<SupplyDue[]> {
  return pg.query<SupplyDue>(
    "figures_supply_due",
    `SELECT id, contract_address, bridge_pool FROM (
       SELECT t.id, t.contract_address, t.max_supply, t.supply_read_at, ${BRIDGE_POOL_SQL} AS bridge_pool
       FROM tokens t WHERE NOT t.deleted AND t.chain_id = 8738 AND t.id <> $1) x
     WHERE x.max_supply IS NULL OR x.bridge_pool
     ORDER BY x.supply_read_at NULLS FIRST, x.id LIMIT $2`,
    [ALPH_TOKEN_ID, limit],
  );
}

/** Records what the node said of a token's supply (null: it gave none; the read time is kept either way). */
export async function recordSupply(
  pg: Pg,
  tokenId: string,
  totalSupply: string | null,
  at: number,
): Promise<void> {
  await pg.query(
    "figures_supply_read",
    "UPDATE tokens SET max_supply = COALESCE($2, max_supply), supply_read_at = $3 WHERE id = $1",
    [tokenId, totalSupply, at],
  );
}

interface PairRow {
  id: number;
  source_id: string;
  source_kind: string;
  source_dapp: string | null;
  pair_symbol: string;
  token_id: string | null;
  quote_token_id: string | null;
  denomination: string;
  include_in_tvl: boolean;
  base_decimals: number;
  quote_decimals: number;
}

/** Enabled watched pairs of enabled sources, with the decimals their prices are served with. */
async function loadPairs(pg: Pg): Promise<PairRow[]> {
  const rows = await pg.query<PairRow>(
    "figures_pairs",
    `SELECT p.id, p.source_id, s.kind AS source_kind, s.dapp_id AS source_dapp, p.pair_symbol, p.token_id,
       p.quote_token_id, p.denomination, p.include_in_tvl, ${PAIR_DECIMALS_COLUMNS}
     ${PAIR_DECIMALS_FROM}
     WHERE p.enabled AND s.enabled ORDER BY p.id`,
  );
  return rows.map((r) => ({
    ...r,
    base_decimals: Number(r.base_decimals),
    quote_decimals: Number(r.quote_decimals),
  }));
}

/** Spot price (oriented for the pair, decimals applied) and 24 h base volume of each pair. */
async function loadRoutes(ch: Ch, pairs: readonly PairRow[], now: number): Promise<PriceRoute[]> {
  const priced = pairs.filter((p) => p.token_id);
  if (priced.length === 0) return [];
  const poolOfPair = (p: PairRow) => poolOf({ id: p.source_id, kind: p.source_kind }, p.pair_symbol);
  const spots = await ch.query<{
    pool: string;
    ts: string;
    base_token_id: string;
    price: string;
    inv_price: string;
  }>(
    "figures_spots",
    `SELECT pool, ts, base_token_id, toString(price) AS price, toString(inv_price) AS inv_price
     FROM spot FINAL WHERE pool IN {pools:Array(String)} AND deleted = 0`,
    { pools: [...new Set(priced.map(poolOfPair))] },
  );
  const spotOf = new Map(spots.map((s) => [s.pool, s]));
  const volumes = await ch.query<{ market: string; v: string }>(
    "figures_volumes",
    `SELECT market, toString(sum(toUInt256OrZero(v))) AS v FROM candles FINAL
     WHERE market IN {markets:Array(String)} AND scale = '1h' AND deleted = 0 AND t >= {since:UInt64}
     GROUP BY market`,
    { markets: priced.map((p) => `${p.source_id}:${p.pair_symbol}`), since: now - 86_400_000 },
  );
  const volumeOf = new Map(volumes.map((v) => [v.market, v.v]));
  const out: PriceRoute[] = [];
  for (const p of priced) {
    const s = spotOf.get(poolOfPair(p));
    if (!s || !p.token_id) continue;
    // A spot row is oriented as its pool orients it; a pair priced in the pool's base token inverts it.
    const inverted = s.base_token_id !== "" && s.base_token_id !== p.token_id;
    out.push({
      pair_id: p.id,
      token_id: p.token_id,
      quote_token_id: p.quote_token_id,
      denomination: p.denomination,
      price: shiftToNumber(inverted ? s.inv_price : s.price, p.base_decimals - p.quote_decimals),
      spot_ts: Number(s.ts),
      volume_24h: shiftToNumber(volumeOf.get(`${p.source_id}:${p.pair_symbol}`) ?? "0", -p.base_decimals),
    });
  }
  return out;
}

export interface FiguresRefresh {
  tokens: number;
  priced: number;
  tvl_pools: number;
  alph_usd: number | null;
}

/**
 * Recomputes every token's and dapp's figures from the facts, the price tables and the registry,
 * writes those that changed, and appends this minute's row to `market_figures`.
 */
export async function refreshFigures(
  deps: { ch: Ch; pg: Pg; log?: Logger },
  options: {
    now: number;
    maxPriceAgeMs: number;
    /**
     * ALPH's supply (lib/figures/alph-supply.ts): its circulating and locked figures replace the facts' for ALPH.
     * Without it (`figures backfill`), the last stored one is used.
     */
    alphSupply?: AlphSupply;
  },
): Promise<FiguresRefresh> {
  const { ch, pg, log } = deps;
  const { now } = options;
  const tokens = await pg.query<{
    id: string;
    symbol: string | null;
    decimals: number | null;
    max_supply: string | null;
    bridge_pool: boolean;
  }>(
    "figures_tokens",
    `SELECT t.id, t.symbol, t.decimals, t.max_supply, ${BRIDGE_POOL_SQL} AS bridge_pool
     FROM tokens t WHERE NOT t.deleted ORDER BY t.id`,
  );
  const byId = new Map(tokens.map((t) => [t.id, t]));
  const stable = new Set(
    tokens.filter((t) => STABLE_SYMBOLS.has((t.symbol ?? "").toUpperCase())).map((t) => t.id),
  );
  const pairs = await loadPairs(pg);
  const prices = resolveUsdPrices(await loadRoutes(ch, pairs, now), stable, {
    now,
    maxAgeMs: options.maxPriceAgeMs,
  });
  const supplies = await readSupplyChanges(ch, now);
  const alphSupply = options.alphSupply ?? (await loadAlphSupply(pg)) ?? undefined;
  // Pools counted in TVL: on-chain DEX pairs with includeInTVL (one pool may be watched twice).
  const tvlPairs = pairs.filter((p) => p.include_in_tvl && p.source_kind === "onchain_dex");
  const dappOfPool = new Map(tvlPairs.map((p) => [p.pair_symbol, p.source_dapp ?? p.source_id]));
  const reserves = await readReserves(ch, [...dappOfPool.keys()]);
  const pools: TvlPool[] = [...dappOfPool].map(([pool, dapp]) => ({
    pool,
    dapp_id: dapp,
    legs: [...(reserves.get(pool) ?? new Map<string, bigint>())].map(([token_id, reserve]) => ({
      token_id,
      reserve,
    })),
  }));
  const decimalsOf = (id: string) =>
    id === ALPH_TOKEN_ID ? (byId.get(id)?.decimals ?? 18) : (byId.get(id)?.decimals ?? null);
  const tvl = computeTvl(pools, (id) => prices.get(id)?.price ?? null, decimalsOf);

  const rows = tokens.map((t) => {
    const s = supplies.get(t.id) ?? { burned: 0n, locked: 0n };
    const alph = t.id === ALPH_TOKEN_ID ? alphSupply : undefined;
    const price = prices.get(t.id) ?? null;
    const f = tokenFigures({
      max_supply: alph ? (t.max_supply ?? ALPH_MAX_SUPPLY) : t.max_supply,
      decimals: decimalsOf(t.id),
      burned: s.burned,
      locked: alph?.locked.value ? BigInt(alph.locked.value) : s.locked,
      bridge_pool: t.bridge_pool,
      ...(alph ? { circulating: alph.circulating } : {}),
      price_usd: price?.price ?? null,
      tvl_usd: tvl.tokens.get(t.id) ?? null,
    });
    return {
      id: t.id,
      price_usd: price?.price ?? null,
      price_pair_id: price?.pair_id ?? null,
      burned_supply: f.burned_supply,
      lock_supply: f.lock_supply,
      circulating_supply: f.circulating_supply,
      circulating_supply_usd: f.circulating_supply_usd,
      tvl_usd: tvl.tokens.get(t.id) ?? null,
      figure_notes: JSON.stringify(f.notes),
    };
  });
  // One statement for every token; rows whose figures did not change are left alone.
  await pg.query(
    "figures_tokens_update",
    `UPDATE tokens t SET price_usd = x.price_usd, price_pair_id = x.price_pair_id,
       burned_supply = x.burned_supply, lock_supply = x.lock_supply, circulating_supply = x.circulating_supply,
       circulating_supply_usd = x.circulating_supply_usd, tvl_usd = x.tvl_usd, figure_notes = x.figure_notes::jsonb,
       figures_updated_at = $9
     FROM unnest($1::text[], $2::float8[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::float8[],
       $10::text[])
       AS x(id, price_usd, price_pair_id, burned_supply, lock_supply, circulating_supply, circulating_supply_usd, tvl_usd,
         figure_notes)
     WHERE t.id = x.id AND (t.price_usd, t.price_pair_id, t.burned_supply, t.lock_supply, t.circulating_supply,
       t.circulating_supply_usd, t.tvl_usd, t.figure_notes) IS DISTINCT FROM (x.price_usd, x.price_pair_id,
       x.burned_supply, x.lock_supply, x.circulating_supply, x.circulating_supply_usd, x.tvl_usd, x.figure_notes::jsonb)`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.price_usd) as unknown as number[],
      rows.map((r) => r.price_pair_id) as unknown as number[],
      rows.map((r) => r.burned_supply),
      rows.map((r) => r.lock_supply),
      rows.map((r) => r.circulating_supply) as unknown as string[],
      rows.map((r) => r.circulating_supply_usd) as unknown as number[],
      rows.map((r) => r.tvl_usd) as unknown as number[],
      now,
      rows.map((r) => r.figure_notes),
    ],
  );
  const dapps = await pg.query<{ id: string }>("figures_dapps", "SELECT id FROM dapps ORDER BY id");
  await pg.query(
    "figures_dapps_update",
    `UPDATE dapps d SET tvl_usd = x.tvl_usd, figures_updated_at = $3
     FROM unnest($1::text[], $2::float8[]) AS x(id, tvl_usd)
     WHERE d.id = x.id AND d.tvl_usd IS DISTINCT FROM x.tvl_usd`,
    [dapps.map((d) => d.id), dapps.map((d) => tvl.dapps.get(d.id) ?? null) as unknown as number[], now],
  );
  const minute = now - (now % 60_000);
  const history = [
    ...rows
      .filter((r) => r.price_usd !== null || r.tvl_usd !== null || r.circulating_supply !== null)
      .map((r) => ({
        entity: "token",
        entity_id: r.id,
        t: minute,
        price_usd: r.price_usd,
        circulating_supply: r.circulating_supply,
        circulating_supply_usd: r.circulating_supply_usd,
        tvl_usd: r.tvl_usd,
        refreshed_at: now,
      })),
    ...[...tvl.dapps].map(([id, value]) => ({
      entity: "dapp",
      entity_id: id,
      t: minute,
      price_usd: null,
      circulating_supply: null,
      circulating_supply_usd: null,
      tvl_usd: value,
      refreshed_at: now,
    })),
  ];
  await ch.insert("market_figures_insert", "market_figures", history);
  if (options.alphSupply) await saveAlphSupply(pg, options.alphSupply);
  const result = {
    tokens: rows.length,
    priced: prices.size,
    tvl_pools: tvl.pools.size,
    alph_usd: prices.get(ALPH_TOKEN_ID)?.price ?? null,
  };
  log?.debug(result, "Market figures refreshed.");
  return result;
}
