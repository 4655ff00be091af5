/**
 * Elexium reads (dapp `elexium`, category `dex`): pools with their tokens, stable flag, reserves and TVL, swaps
 * and liquidity events per pool and address, volume and fees per pool and UTC day, and the CoinGecko DEX
 * integration shapes (`tickers`, `historical_trades`) that aggregators read. Reserves are summed from the
 * pools' events since the index began (a pool created before `INGEST_START_TS` needs its history ingested);
 * fees are volume × the pool's fee rate (`feeBps`: Elexium does not publish fees in its events).
 */
import { ALPH_TOKEN_ID, idCeiling, idFloor } from "../chain/types.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { Pg } from "../stores/postgres.ts";
import type { Page, Pager } from "./pages.ts";
import { whereEq } from "./pages.ts";

/** Fee rates assumed per pool kind, in basis points (Velodrome's defaults, which Elexium's pools follow). */
export const ELEXIUM_FEE_BPS = { stable: 5, volatile: 30 } as const;

export interface Pool {
  pool_address: string;
  token0_id: string;
  token1_id: string;
  stable: boolean | null;
  fee_bps: number;
  reserve0: string;
  reserve1: string;
  swaps: number;
  tvl_usd: number | null;
  created_at: number | null;
  last_swap_at: number | null;
  first_id: string;
}

export interface Swap {
  id: string;
  tx_id: string;
  timestamp: number;
  pool_address: string;
  trader: string;
  side: "buy" | "sell";
  token_in_id: string;
  token_out_id: string;
  amount_in: string;
  amount_out: string;
  base_token_id: string;
  base_amount: string;
  quote_amount: string;
  price: string;
}

export interface LiquidityEvent {
  id: string;
  tx_id: string;
  timestamp: number;
  pool_address: string;
  provider: string;
  kind: "add" | "remove";
  amount0: string;
  amount1: string;
}

export interface PoolDay {
  day: string;
  swaps: number;
  volume0: string;
  volume1: string;
  fees0: string;
  fees1: string;
}

export interface Ticker {
  ticker_id: string;
  base_currency: string;
  target_currency: string;
  pool_id: string;
  last_price: string;
  base_volume: string;
  target_volume: string;
  liquidity_in_usd: string;
  high: string;
  low: string;
}

export interface HistoricalTrade {
  trade_id: string;
  price: string;
  base_volume: string;
  target_volume: string;
  trade_timestamp: number;
  type: "buy" | "sell";
}

interface ListArgs {
  limit: number;
  nextKey?: string | undefined;
}

export interface ElexiumReads {
  pools(a: ListArgs): Promise<Page<Pool>>;
  pool(address: string): Promise<Pool | null>;
  swaps(f: { pool?: string | undefined; address?: string | undefined }, a: ListArgs): Promise<Page<Swap>>;
  liquidity(
    f: { pool?: string | undefined; address?: string | undefined },
    a: ListArgs,
  ): Promise<Page<LiquidityEvent>>;
  days(pool: string, range: { from_ts?: number | undefined; to_ts?: number | undefined }): Promise<PoolDay[]>;
  tickers(): Promise<Ticker[]>;
  historicalTrades(q: {
    ticker_id: string;
    type?: "buy" | "sell" | undefined;
    limit: number;
    start_time?: number | undefined;
    end_time?: number | undefined;
  }): Promise<{ buy?: HistoricalTrade[]; sell?: HistoricalTrade[] } | null>;
}

const DEX = `FROM dapp_events FINAL WHERE dapp_id = 'elexium' AND category = 'dex' AND main_chain AND id < {ceiling:String}`;
const POOL =
  "if(JSONExtractString(payload, 'pool_address') != '', JSONExtractString(payload, 'pool_address'), to)";

/** One row per pool: tokens and stable flag from any of its events, reserves summed from swaps and liquidity. */
const pools = `
  SELECT pool_address, any(token0_id) AS token0_id, any(token1_id) AS token1_id,
         anyIf(stable, stable_known) AS stable_v, countIf(stable_known) > 0 AS has_stable,
         toString(sum(d0)) AS reserve0, toString(sum(d1)) AS reserve1,
         countIf(sub_kind IN ('buy', 'sell')) AS swaps, min(id) AS first_id,
         toUnixTimestamp64Milli(minIf(timestamp, sub_kind = 'pool_created')) AS created_at,
         countIf(sub_kind = 'pool_created') > 0 AS created_seen,
         toUnixTimestamp64Milli(maxIf(timestamp, sub_kind IN ('buy', 'sell'))) AS last_swap_at
  FROM (
    SELECT id, sub_kind, timestamp, ${POOL} AS pool_address,
           JSONExtractString(payload, 'token0_id') AS token0_id, JSONExtractString(payload, 'token1_id') AS token1_id,
           JSONExtractBool(payload, 'stable') AS stable, JSONType(payload, 'stable') = 'Bool' AS stable_known,
           toInt256OrZero(JSONExtractString(payload, 'amount_in')) AS a_in, toInt256OrZero(JSONExtractString(payload, 'amount_out')) AS a_out,
           JSONExtractString(payload, 'token_in_id') AS t_in, JSONExtractString(payload, 'token_out_id') AS t_out,
           toInt256OrZero(JSONExtractString(payload, 'amount0')) AS l0, toInt256OrZero(JSONExtractString(payload, 'amount1')) AS l1,
           multiIf(sub_kind IN ('buy', 'sell'), if(t_in = token0_id, a_in, toInt256(0)) - if(t_out = token0_id, a_out, toInt256(0)),
                   sub_kind = 'add_liquidity', l0, sub_kind = 'remove_liquidity', -l0, toInt256(0)) AS d0,
           multiIf(sub_kind IN ('buy', 'sell'), if(t_in = token1_id, a_in, toInt256(0)) - if(t_out = token1_id, a_out, toInt256(0)),
                   sub_kind = 'add_liquidity', l1, sub_kind = 'remove_liquidity', -l1, toInt256(0)) AS d1
    ${DEX} AND sub_kind IN ('pool_created', 'buy', 'sell', 'add_liquidity', 'remove_liquidity'))
  GROUP BY pool_address`;

const swapsSql = `SELECT id, tx_id, toUnixTimestamp64Milli(timestamp) AS ts, ${POOL} AS pool_address, from, sub_kind,
         JSONExtractString(payload, 'token_in_id') AS token_in_id, JSONExtractString(payload, 'token_out_id') AS token_out_id,
         JSONExtractString(payload, 'amount_in') AS amount_in, JSONExtractString(payload, 'amount_out') AS amount_out,
         JSONExtractString(payload, 'base_token_id') AS base_token_id, JSONExtractString(payload, 'base_amount') AS base_amount,
         JSONExtractString(payload, 'quote_amount') AS quote_amount, JSONExtractString(payload, 'price') AS price
  ${DEX} AND sub_kind IN ('buy', 'sell') AND type = 'swap'`;

const swapRow = (r: Record<string, unknown>): Swap => ({
  id: String(r.id),
  tx_id: String(r.tx_id),
  timestamp: Number(r.ts),
  pool_address: String(r.pool_address),
  trader: String(r.from),
  side: String(r.sub_kind) as "buy" | "sell",
  token_in_id: String(r.token_in_id),
  token_out_id: String(r.token_out_id),
  amount_in: String(r.amount_in),
  amount_out: String(r.amount_out),
  base_token_id: String(r.base_token_id),
  base_amount: String(r.base_amount),
  quote_amount: String(r.quote_amount),
  price: String(r.price),
});

/** A raw amount in whole tokens (decimal string), or the raw amount when decimals are unknown. */
function whole(raw: string, decimals: number | undefined): string {
  if (decimals === undefined || decimals === 0) return raw;
  const neg = raw.startsWith("-");
  const digits = (neg ? raw.slice(1) : raw).padStart(decimals + 1, "0");
  const int = digits.slice(0, -decimals);
  const frac = digits.slice(-decimals).replace(/0+$/, "");
  return `${neg ? "-" : ""}${int}${frac ? `.${frac}` : ""}`;
}

export function createElexiumReads(ch: Ch, pg: Pg, pager: Pager): ElexiumReads {
  /** Decimals and USD price of tokens from the registry (ALPH: 18, its price when known). */
  async function tokenInfo(
    ids: string[],
  ): Promise<Map<string, { decimals?: number; price?: number; symbol?: string }>> {
    const unique = [...new Set(ids)];
    const rows = await pg.query<{
      id: string;
      decimals: number | null;
      price_usd: number | null;
      symbol: string | null;
    }>(
      "dapp_elexium_tokens",
      "SELECT id, decimals, price_usd, symbol FROM tokens WHERE id = ANY($1::text[])",
      [unique],
    );
    const out = new Map<string, { decimals?: number; price?: number; symbol?: string }>();
    for (const r of rows)
      out.set(r.id, {
        ...(r.decimals !== null ? { decimals: r.decimals } : {}),
        ...(r.price_usd !== null ? { price: r.price_usd } : {}),
        ...(r.symbol ? { symbol: r.symbol } : {}),
      });
    const alph = out.get(ALPH_TOKEN_ID) ?? {};
    out.set(ALPH_TOKEN_ID, { ...alph, decimals: 18, symbol: alph.symbol ?? "ALPH" });
    return out;
  }

  async function poolRows(sqlTail: string, params: Record<string, unknown>): Promise<Pool[]> {
    const rows = await ch.query<Record<string, unknown>>(
      "dapp_elexium_pools",
      `SELECT * FROM (${pools}) ${sqlTail}`,
      params,
    );
    const info = await tokenInfo(rows.flatMap((r) => [String(r.token0_id), String(r.token1_id)]));
    return rows.map((r) => {
      const stable = r.has_stable ? Boolean(r.stable_v) : null;
      const legs = [
        [String(r.token0_id), String(r.reserve0)],
        [String(r.token1_id), String(r.reserve1)],
      ] as const;
      // A leg without a price counts as much as its priced twin (a pool holds equal values of both legs).
      const usd = legs.map(([id, raw]) => {
        const t = info.get(id);
        return t?.price !== undefined && t.decimals !== undefined
          ? Number(whole(raw, t.decimals)) * t.price
          : null;
      });
      const known = usd.filter((v): v is number => v !== null);
      return {
        pool_address: String(r.pool_address),
        token0_id: String(r.token0_id),
        token1_id: String(r.token1_id),
        stable,
        fee_bps: stable ? ELEXIUM_FEE_BPS.stable : ELEXIUM_FEE_BPS.volatile,
        reserve0: String(r.reserve0),
        reserve1: String(r.reserve1),
        swaps: Number(r.swaps),
        tvl_usd: known.length === 0 ? null : known.length === 2 ? known[0]! + known[1]! : known[0]! * 2,
        created_at: r.created_seen ? Number(r.created_at) : null,
        last_swap_at: Number(r.swaps) > 0 ? Number(r.last_swap_at) : null,
        first_id: String(r.first_id),
      };
    });
  }

  return {
    pools: (a) =>
      pager.page<Pool>(
        { list: "elexium.pools", filters: {}, ...a },
        (r) => [r.first_id, r.pool_address],
        (ceiling, after, limit) =>
          poolRows(
            `${after ? "WHERE (first_id, pool_address) > ({a0:String}, {a1:String})" : ""} ORDER BY first_id, pool_address LIMIT {limit:UInt32}`,
            { ceiling, a0: after?.[0], a1: after?.[1], limit },
          ),
      ),
    async pool(address) {
      const rows = await poolRows("WHERE pool_address = {pool:String}", {
        ceiling: await pager.ceiling(),
        pool: address,
      });
      return rows[0] ?? null;
    },
    swaps: (f, a) =>
      pager.page<Swap>(
        { list: "elexium.swaps", filters: { ...f }, ...a },
        (r) => [r.id],
        async (ceiling, after, limit) => {
          const eq = whereEq({ pool: f.pool, address: f.address }, { pool: "pool_address", address: "from" });
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_elexium_swaps",
            `SELECT * FROM (${swapsSql}) WHERE 1 ${eq.sql} ${after ? "AND id < {a0:String}" : ""} ORDER BY id DESC LIMIT {limit:UInt32}`,
            { ...eq.params, ceiling, a0: after?.[0], limit },
          );
          return rows.map(swapRow);
        },
      ),
    liquidity: (f, a) =>
      pager.page<LiquidityEvent>(
        { list: "elexium.liquidity", filters: { ...f }, ...a },
        (r) => [r.id],
        async (ceiling, after, limit) => {
          const eq = whereEq({ pool: f.pool, address: f.address }, { pool: "pool_address", address: "from" });
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_elexium_liquidity",
            `SELECT * FROM (
               SELECT id, tx_id, toUnixTimestamp64Milli(timestamp) AS ts, ${POOL} AS pool_address, from, sub_kind,
                      JSONExtractString(payload, 'amount0') AS amount0, JSONExtractString(payload, 'amount1') AS amount1
               ${DEX} AND sub_kind IN ('add_liquidity', 'remove_liquidity'))
             WHERE 1 ${eq.sql} ${after ? "AND id < {a0:String}" : ""} ORDER BY id DESC LIMIT {limit:UInt32}`,
            { ...eq.params, ceiling, a0: after?.[0], limit },
          );
          return rows.map((r) => ({
            id: String(r.id),
            tx_id: String(r.tx_id),
            timestamp: Number(r.ts),
            pool_address: String(r.pool_address),
            provider: String(r.from),
            kind: r.sub_kind === "add_liquidity" ? ("add" as const) : ("remove" as const),
            amount0: String(r.amount0),
            amount1: String(r.amount1),
          }));
        },
      ),
    async days(pool, range) {
      const ceiling = await pager.ceiling();
      const p = await this.pool(pool);
      if (!p) return [];
      const rows = await ch.query<Record<string, unknown>>(
        "dapp_elexium_days",
        `SELECT toString(toDate(fromUnixTimestamp64Milli(ts))) AS day, count() AS swaps,
                toString(sum(if(token_in_id = {t0:String}, toUInt256OrZero(amount_in), toUInt256OrZero(amount_out)))) AS volume0,
                toString(sum(if(token_in_id = {t1:String}, toUInt256OrZero(amount_in), toUInt256OrZero(amount_out)))) AS volume1,
                toString(sum(if(token_in_id = {t0:String}, toUInt256OrZero(amount_in), toUInt256(0))) * {fee:UInt32} / 10000) AS fees0,
                toString(sum(if(token_in_id = {t1:String}, toUInt256OrZero(amount_in), toUInt256(0))) * {fee:UInt32} / 10000) AS fees1
         FROM (${swapsSql}) WHERE pool_address = {pool:String}
           ${range.from_ts !== undefined ? "AND id >= {from_id:String}" : ""}
           ${range.to_ts !== undefined ? "AND id < {to_id:String}" : ""}
         GROUP BY day ORDER BY day`,
        {
          ceiling,
          pool,
          t0: p.token0_id,
          t1: p.token1_id,
          fee: p.fee_bps,
          from_id: range.from_ts !== undefined ? idFloor(range.from_ts) : undefined,
          to_id: range.to_ts !== undefined ? idCeiling(range.to_ts) : undefined,
        },
      );
      return rows.map((r) => ({
        day: String(r.day),
        swaps: Number(r.swaps),
        volume0: String(r.volume0),
        volume1: String(r.volume1),
        fees0: String(r.fees0),
        fees1: String(r.fees1),
      }));
    },
    async tickers() {
      const ceiling = await pager.ceiling();
      const all = await poolRows("ORDER BY first_id, pool_address", { ceiling });
      const info = await tokenInfo(all.flatMap((p) => [p.token0_id, p.token1_id]));
      const day = await ch.query<Record<string, unknown>>(
        "dapp_elexium_tickers",
        `SELECT pool_address, base_token_id, sum(toUInt256OrZero(base_amount)) AS base_n, sum(toUInt256OrZero(quote_amount)) AS quote_n,
                toString(base_n) AS base_volume, toString(quote_n) AS quote_volume,
                argMax(price, id) AS last_price, max(toFloat64OrZero(price)) AS high, min(toFloat64OrZero(price)) AS low
         FROM (${swapsSql}) WHERE id >= {since:String} GROUP BY pool_address, base_token_id`,
        { ceiling, since: idFloor(Date.now() - 86_400_000) },
      );
      const last = await ch.query<Record<string, unknown>>(
        "dapp_elexium_last_price",
        `SELECT pool_address, argMax(price, id) AS last_price, argMax(base_token_id, id) AS base_token_id
         FROM (${swapsSql}) GROUP BY pool_address`,
        { ceiling },
      );
      const dayBy = new Map(day.map((r) => [String(r.pool_address), r]));
      const lastBy = new Map(last.map((r) => [String(r.pool_address), r]));
      return all.map((p) => {
        const l = lastBy.get(p.pool_address);
        const base = l ? String(l.base_token_id) : p.token0_id === ALPH_TOKEN_ID ? p.token1_id : p.token0_id;
        const target = base === p.token0_id ? p.token1_id : p.token0_id;
        const bd = info.get(base)?.decimals;
        const td = info.get(target)?.decimals;
        const d = dayBy.get(p.pool_address);
        // Prices are raw ratios (quote units per base unit): scale by the decimals for whole-token prices.
        const scale = bd !== undefined && td !== undefined ? 10 ** (bd - td) : 1;
        const price = (raw: unknown) => (Number(raw ?? 0) * scale).toString();
        return {
          ticker_id: `${base}_${target}`,
          base_currency: base,
          target_currency: target,
          pool_id: p.pool_address,
          last_price: price(l?.last_price),
          base_volume: whole(d ? String(d.base_volume) : "0", bd),
          target_volume: whole(d ? String(d.quote_volume) : "0", td),
          liquidity_in_usd: String(p.tvl_usd ?? 0),
          high: price(d?.high),
          low: price(d?.low),
        };
      });
    },
    async historicalTrades(q) {
      const [base, target] = q.ticker_id.split("_");
      if (!base || !target) return null;
      const ceiling = await pager.ceiling();
      const info = await tokenInfo([base, target]);
      const rows = await ch.query<Record<string, unknown>>(
        "dapp_elexium_historical_trades",
        `SELECT * FROM (${swapsSql})
         WHERE base_token_id = {base:String} AND ((token_in_id = {base:String} AND token_out_id = {target:String})
            OR (token_in_id = {target:String} AND token_out_id = {base:String}))
           ${q.type ? "AND sub_kind = {type:String}" : ""}
           ${q.start_time !== undefined ? "AND id >= {from_id:String}" : ""}
           ${q.end_time !== undefined ? "AND id < {to_id:String}" : ""}
         ORDER BY id DESC LIMIT {limit:UInt32}`,
        {
          ceiling,
          base,
          target,
          type: q.type,
          from_id: q.start_time !== undefined ? idFloor(q.start_time) : undefined,
          to_id: q.end_time !== undefined ? idCeiling(q.end_time) : undefined,
          limit: q.limit,
        },
      );
      const bd = info.get(base)?.decimals;
      const td = info.get(target)?.decimals;
      const scale = bd !== undefined && td !== undefined ? 10 ** (bd - td) : 1;
      const trades = rows.map(swapRow).map((s) => ({
        trade_id: s.id,
        price: String(Number(s.price) * scale),
        base_volume: whole(s.base_amount, bd),
        target_volume: whole(s.quote_amount, td),
        trade_timestamp: s.timestamp,
        type: s.side,
      }));
      return {
        ...(q.type !== "sell" ? { buy: trades.filter((t) => t.type === "buy") } : {}),
        ...(q.type !== "buy" ? { sell: trades.filter((t) => t.type === "sell") } : {}),
      };
    },
  };
}
