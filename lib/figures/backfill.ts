/**
 * Rebuilds the figures' facts (`supply_changes`, `pool_reserve_changes`) from the stored normalized
 * events: what a deployment that adds the figures processor to an existing index needs, and what
 * `figures backfill` runs. Reads week by week in id (time) order with progress in the log; every row
 * is keyed by its event or block and carries the event's version, so running it again, or beside the
 * processor, leaves the same state.
 */
import { idFloor } from "../chain/types.ts";
import type { Logger } from "../logger.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { Pg } from "../stores/postgres.ts";
import {
  BlockReserves,
  type FactContext,
  type FactSource,
  type ReserveChangeRow,
  type SupplyChangeRow,
  supplyChangeOf,
} from "./facts.ts";
import { insertFacts } from "./store.ts";

const CHUNK_MS = 7 * 86_400_000;

/** An events-table row as the backfill reads it: the fact's fields, with its block state. */
type EventRow = Omit<FactSource, "timestamp"> & { ts: string; main_chain: boolean; version: string };

export interface FiguresBackfillResult {
  events: number;
  supply_changes: number;
  reserve_changes: number;
}

export async function backfillFigures(
  deps: { ch: Ch; pg: Pg; log: Logger },
  ctx: FactContext,
): Promise<FiguresBackfillResult> {
  const { ch, pg } = deps;
  const log = deps.log.child({ component: "figures-backfill" });
  const result: FiguresBackfillResult = { events: 0, supply_changes: 0, reserve_changes: 0 };
  const startedAt = Date.now();
  const [span] = await ch.query<{ lo: string; hi: string; n: string }>(
    "events_time_span",
    "SELECT toUnixTimestamp64Milli(min(timestamp)) AS lo, toUnixTimestamp64Milli(max(timestamp)) AS hi, count() AS n FROM events",
  );
  if (span && Number(span.n) > 0) {
    const [lo, hi] = [Number(span.lo), Number(span.hi)];
    const chunks = Math.max(1, Math.ceil((hi + 1 - lo) / CHUNK_MS));
    log.info(
      { from: new Date(lo).toISOString(), to: new Date(hi).toISOString(), weeks: chunks },
      "Backfilling market figures' facts from stored events.",
    );
    for (let i = 0, from = lo; from <= hi; i++, from += CHUNK_MS) {
      const rows = await ch.query<EventRow>(
        "figures_backfill_events",
        `SELECT id, block_hash, toUnixTimestamp64Milli(timestamp) AS ts, category, sub_kind, type, to, token_id,
           toString(amount) AS amount, contract_address, contract_event_index, payload, main_chain, version
         FROM events FINAL
         PREWHERE id >= {from_id:String} AND id < {to_id:String}
         WHERE (category = 'dex' AND type IN ('swap', 'mint', 'burn'))
            OR (category = 'transfer' AND (sub_kind IN ('send', 'payout') AND to IN {burn:Array(String)} OR sub_kind = 'genesis_allocation'))
            OR category = 'mining'
            OR (category = 'token' AND sub_kind = 'burn' AND type = 'furnace_burn')
            OR (contract_address IN {furnaces:Array(String)} AND type = 'undecoded')
         ORDER BY id`,
        {
          from_id: idFloor(from),
          to_id: idFloor(from + CHUNK_MS),
          burn: [...ctx.burnAddresses],
          furnaces: [...ctx.furnaces],
        },
      );
      const supply: SupplyChangeRow[] = [];
      // A block's events share its state (main_chain, version): its reserve changes are summed per block.
      const blocks = new Map<
        string,
        { reserves: BlockReserves; ts: number; main: boolean; version: number }
      >();
      for (const r of rows) {
        const e = { ...r, timestamp: Number(r.ts) };
        const [main, version] = [Boolean(r.main_chain), Number(r.version)];
        const s = supplyChangeOf(e, ctx, main, version);
        if (s) supply.push(s);
        let b = blocks.get(r.block_hash);
        if (!b) {
          b = { reserves: new BlockReserves(), ts: e.timestamp, main, version };
          blocks.set(r.block_hash, b);
        }
        b.reserves.add(e);
      }
      const reserves: ReserveChangeRow[] = [...blocks].flatMap(([hash, b]) =>
        b.reserves.rows({ block_hash: hash, ts: b.ts }, b.main, b.version),
      );
      await insertFacts(ch, supply, reserves);
      result.events += rows.length;
      result.supply_changes += supply.length;
      result.reserve_changes += reserves.length;
      if (chunks > 1 && (i % 10 === 9 || from + CHUNK_MS > hi)) {
        log.info(
          { week: i + 1, weeks: chunks, ...result },
          `Figures backfill ${Math.round(((i + 1) / chunks) * 100)}%: ${result.events} events.`,
        );
      }
    }
  }
  await pg.query(
    "figures_backfilled",
    `INSERT INTO figures_state (id, backfilled_at) VALUES (1, $1)
     ON CONFLICT (id) DO UPDATE SET backfilled_at = EXCLUDED.backfilled_at`,
    [Date.now()],
  );
  log.info({ ...result, ms: Date.now() - startedAt }, "Market figures' facts backfilled from stored events.");
  return result;
}

/** Whether the facts were ever rebuilt from stored events (the processor does it once, at its first start). */
export async function figuresBackfilled(pg: Pg): Promise<boolean> {
  const rows = await pg.query<{ n: string }>("figures_state", "SELECT count(*) AS n FROM figures_state");
  return Number(rows[0]?.n ?? 0) > 0;
}
