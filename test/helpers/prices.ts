/**
 * Price helpers for tests: a reference OHLCV computed from swap events with plain loops (independent
 * of lib/prices), and the state hash of the price tables (same method as the events guarantee tests).
 */
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import type { TestApp } from "./app.ts";
import type { TestCh, TestPg } from "./stores.ts";

export interface RefSwap {
  id: string;
  timestamp: number;
  pool: string;
  base_token_id: string;
  quote_token_id: string;
  base_amount: bigint;
  quote_amount: bigint;
}

export interface RefCandle {
  t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  v: number;
}

const WIDTH: Record<string, number> = {
  "1m": 60_000,
  "3m": 180_000,
  "5m": 300_000,
  "15m": 900_000,
  "1h": 3_600_000,
  "4h": 14_400_000,
  "1d": 86_400_000,
};

/** Bucket start, written differently from lib/prices/scales.ts: weeks from the UTC weekday. */
export function refBucket(scale: string, ts: number): number {
  if (scale === "1w") {
    const d = new Date(ts);
    const sinceMonday = (d.getUTCDay() + 6) % 7;
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - sinceMonday);
  }
  const w = WIDTH[scale]!;
  return Math.floor(ts / w) * w;
}

/** A/B × 10^shift as a number, via a 40-digit truncated quotient (what "exact until the JSON number" means). */
function refPrice(a: bigint, b: bigint, shift: number): number {
  const q = (a * 10n ** 40n) / b; // a/b truncated to 40 decimals, as an integer of 1e-40 units
  let s = q.toString();
  const point = 40 - shift; // digits after the point
  if (point <= 0) return Number(s + "0".repeat(-point));
  s = s.padStart(point + 1, "0");
  return Number(`${s.slice(0, s.length - point)}.${s.slice(s.length - point)}`);
}

function refUnits(raw: bigint, decimals: number): number {
  const s = raw.toString().padStart(decimals + 1, "0");
  return decimals === 0
    ? Number(s)
    : Number(`${s.slice(0, s.length - decimals)}.${s.slice(s.length - decimals)}`);
}

/**
 * Candles of one pair from its swaps, latest first: the pair prices `baseToken` in the other token;
 * o/c are the first/last swap by (timestamp, id), volume is the base token's amount.
 */
export function referenceCandles(
  swaps: RefSwap[],
  pool: string,
  baseToken: string,
  baseDecimals: number,
  quoteDecimals: number,
  scale: string,
): RefCandle[] {
  const mine = swaps
    .filter((s) => s.pool === pool)
    .sort((x, y) => x.timestamp - y.timestamp || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const buckets = new Map<number, { prices: number[]; volume: bigint }>();
  for (const s of mine) {
    const inverted = s.base_token_id !== baseToken;
    const [base, quote] = inverted ? [s.quote_amount, s.base_amount] : [s.base_amount, s.quote_amount];
    const price = refPrice(quote, base, baseDecimals - quoteDecimals);
    const t = refBucket(scale, s.timestamp);
    let b = buckets.get(t);
    if (!b) {
      b = { prices: [], volume: 0n };
      buckets.set(t, b);
    }
    b.prices.push(price);
    b.volume += base;
  }
  const out: RefCandle[] = [];
  for (const [t, b] of buckets) {
    let h = b.prices[0]!;
    let l = b.prices[0]!;
    for (const p of b.prices) {
      if (p > h) h = p;
      if (p < l) l = p;
    }
    out.push({
      t,
      o: b.prices[0]!,
      h,
      l,
      c: b.prices[b.prices.length - 1]!,
      v: refUnits(b.volume, baseDecimals),
    });
  }
  return out.sort((x, y) => y.t - x.t);
}

/** Hash of the resolved price tables (every column but the version) and their row counts. */
export async function pricesStateHash(ch: TestCh): Promise<Record<string, { rows: number; hash: string }>> {
  const out: Record<string, { rows: number; hash: string }> = {};
  const tables = {
    trades: "SELECT * EXCEPT (version) FROM trades FINAL WHERE main_chain",
    candles: "SELECT * EXCEPT (version) FROM candles FINAL WHERE deleted = 0",
    spot: "SELECT * EXCEPT (version) FROM spot FINAL WHERE deleted = 0",
    // The figures processor's facts (lib/figures): burned and locked amounts, pool reserve changes.
    supply_changes: "SELECT * EXCEPT (version) FROM supply_changes FINAL WHERE main_chain",
    pool_reserve_changes: "SELECT * EXCEPT (version) FROM pool_reserve_changes FINAL WHERE main_chain",
  };
  for (const [name, sql] of Object.entries(tables)) {
    const [r] = await ch.ch.query<{ rows: string; hash: string }>(
      "prices_state_hash",
      `SELECT count() AS rows, toString(sum(cityHash64(toString(tuple(*))))) AS hash FROM (${sql})`,
    );
    out[name] = { rows: Number(r?.rows ?? 0), hash: r?.hash ?? "" };
  }
  return out;
}

/**
 * A pool pair (`pool`: `token`/ALPH on the `ayin` source, added through the admin route) with three daily candles
 * (2024-01-02, 01-03 and 01-09) as the candles processor writes them. Returns the pair id.
 */
export async function addPoolPairWithDailyCandles(
  t: TestApp,
  stores: { pg: TestPg; ch: TestCh },
  pool: string,
  token: string,
): Promise<number> {
  await stores.pg.pg.query(
    "t",
    "INSERT INTO dex_pools (pool_address, dapp_id, token0_id, token1_id, created_at) VALUES ($1, 'ayin', $2, $3, $4)",
    [pool, ALPH_TOKEN_ID, token, "2024-03-01T12:00:00Z"],
  );
  const added = await t.app.inject({
    method: "POST",
    url: "/price/source/ayin/pair/add",
    headers: t.auth(t.adminKey),
    payload: { pair_symbol: pool, token_id: token },
  });
  if (added.statusCode !== 200) throw new Error(`pair add answered ${added.statusCode}: ${added.body}`);
  const candle = (day: number, c: string) => ({
    market: `ayin:${pool}`,
    scale: "1d",
    t: Date.UTC(2024, 0, day),
    o: c,
    h: c,
    l: c,
    c,
    v: "1500000",
    trades: 1,
    deleted: 0,
    version: 1,
  });
  await stores.ch.ch.insert("test_candles", "candles", [
    candle(2, "2000000000000"),
    candle(3, "2500000000000"),
    candle(9, "3000000000000"),
  ]);
  return (added.json() as { id: number }).id;
}
