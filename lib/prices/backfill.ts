/**
 * Rebuilds a pair's trades, candles and spot from the stored normalized events (the `events` table):
 * what a pair added after its swaps were processed needs. Reads week by week in id (time) order and
 * logs progress; every write is idempotent, so running it again, or beside the candles processor,
 * leaves the same state.
 */
import { idFloor } from "../chain/types.ts";
import type { Logger } from "../logger.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { Pg } from "../stores/postgres.ts";
import { poolOf } from "./reader.ts";
import { ORACLE_UPDATE_EVENT, type TradeRow, tradeOf } from "./trades.ts";
import { loadCandlePairs, loadOracleContracts, markBackfilled, ONCHAIN_KINDS } from "./watched.ts";
import { insertTrades, recomputeCandles, recomputeSpot, type Touched, touch } from "./writer.ts";

const CHUNK_MS = 7 * 86_400_000;

export interface BackfillResult {
  pair_id: number;
  events: number;
  trades: number;
  /** False when the pair is not of an on-chain source (nothing to rebuild) or no longer exists. */
  done: boolean;
}

interface EventRow {
  id: string;
  block_hash: string;
  tx_id: string;
  ts: string;
  category: string;
  sub_kind: string;
  type: string;
  contract_address: string;
  contract_event_index: number | null;
  payload: string;
  main_chain: boolean;
  version: string;
}

export async function backfillPair(
  deps: { ch: Ch; pg: Pg; log: Logger },
  pair: { id: number },
): Promise<BackfillResult> {
  const { ch, pg } = deps;
  const result: BackfillResult = { pair_id: pair.id, events: 0, trades: 0, done: false };
  const [row] = await pg.query<{ source_id: string; kind: string; pair_symbol: string; contracts: string[] }>(
    "price_pair_for_backfill",
    `SELECT p.source_id, s.kind, p.pair_symbol, s.contract_addresses AS contracts
     FROM price_pairs p JOIN price_sources s ON s.id = p.source_id WHERE p.id = $1`,
    [pair.id],
  );
  if (!row || !(ONCHAIN_KINDS as readonly string[]).includes(row.kind)) return result;
  const startedAt = Date.now();
  const log = deps.log.child({ component: "prices-backfill", pair_id: pair.id, source: row.source_id });
  const pool = poolOf({ id: row.source_id, kind: row.kind }, row.pair_symbol);
  const oracle = row.kind === "oracle";
  const oracles = oracle ? await loadOracleContracts(pg) : new Map<string, string>();
  const [span] = await ch.query<{ lo: string; hi: string; n: string }>(
    "events_time_span",
    "SELECT toUnixTimestamp64Milli(min(timestamp)) AS lo, toUnixTimestamp64Milli(max(timestamp)) AS hi, count() AS n FROM events",
  );
  const filter = oracle
    ? "contract_address IN {contracts:Array(String)} AND contract_event_index = {event:Int32}"
    : "category = 'dex' AND type = 'swap' AND sub_kind IN ('buy', 'sell') AND with = {pool:String}";
  const touched: Touched = new Map();
  if (span && Number(span.n) > 0) {
    const [lo, hi] = [Number(span.lo), Number(span.hi)];
    const chunks = Math.max(1, Math.ceil((hi + 1 - lo) / CHUNK_MS));
    log.info(
      { pool, from: new Date(lo).toISOString(), to: new Date(hi).toISOString() },
      "Backfilling pair from stored events.",
    );
    for (let i = 0, from = lo; from <= hi; i++, from += CHUNK_MS) {
      const rows = await ch.query<EventRow>(
        "prices_backfill_events",
        `SELECT id, block_hash, tx_id, toUnixTimestamp64Milli(timestamp) AS ts, category, sub_kind, type,
           contract_address, contract_event_index, payload, main_chain, version
         FROM events FINAL
         PREWHERE id >= {from_id:String} AND id < {to_id:String}
         WHERE ${filter}`,
        {
          from_id: idFloor(from),
          to_id: idFloor(from + CHUNK_MS),
          pool,
          contracts: row.contracts,
          event: ORACLE_UPDATE_EVENT,
        },
      );
      const trades: TradeRow[] = [];
      for (const e of rows) {
        const t = tradeOf(
          { ...e, timestamp: Number(e.ts) },
          oracles,
          Boolean(e.main_chain),
          Number(e.version),
        );
        // Oracle events of the source's contracts carry every feed: keep this pair's.
        if (!t || t.pool !== pool) continue;
        trades.push(t);
        touch(touched, t.pool, t.ts);
      }
      await insertTrades(ch, trades);
      result.events += rows.length;
      result.trades += trades.length;
      if (chunks > 1 && (i % 10 === 9 || from + CHUNK_MS > hi)) {
        log.info(
          { week: i + 1, weeks: chunks, events: result.events, trades: result.trades },
          `Backfill ${Math.round(((i + 1) / chunks) * 100)}%: ${result.trades} trades.`,
        );
      }
    }
  }
  // Trades the candles processor wrote before the pair existed count too: rebuild over their whole span.
  const [known] = await ch.query<{ lo: string; hi: string; n: string }>(
    "trades_pool_span",
    "SELECT min(ts) AS lo, max(ts) AS hi, count() AS n FROM trades WHERE pool = {pool:String}",
    { pool },
  );
  if (known && Number(known.n) > 0) {
    touch(touched, pool, Number(known.lo));
    touch(touched, pool, Number(known.hi));
  }
  // Spot before candles: a reader that sees the pair's candles sees its spot row too.
  await recomputeSpot(ch, new Map([...touched].filter(([p]) => p === pool)));
  const candlePairs = await loadCandlePairs(pg, [pair.id]);
  const span2 = touched.get(pool);
  if (span2 && candlePairs.length > 0) {
    // Month by month: each insert stays small whatever the history's length.
    for (let from = span2.lo; from <= span2.hi; from += 4 * CHUNK_MS) {
      const part: Touched = new Map([[pool, { lo: from, hi: Math.min(span2.hi, from + 4 * CHUNK_MS - 1) }]]);
      await recomputeCandles(ch, candlePairs, part);
    }
  }
  await markBackfilled(pg, pair.id, Date.now());
  log.info(
    { events: result.events, trades: result.trades, ms: Date.now() - startedAt },
    "Pair backfilled from stored events.",
  );
  result.done = true;
  return result;
}
