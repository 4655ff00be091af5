/**
 * Builds series history from the stored normalized events (`events FINAL WHERE main_chain`): what a
 * new definition needs. Reads day by day in id (time) order, writes the facts with the event rows'
 * versions and recomputes what each day touched; idempotent, so running it again, or beside the series
 * processor, leaves the same state.
 */
import { idFloor } from "../chain/types.ts";
import { createEventsReader } from "../events/reader.ts";
import type { TimeseriesDefinition } from "./definition.ts";
import { CHAIN_COUNT } from "./definition.ts";
import { blockFacts, type EventFact, factsOfEvent, insertFacts, type SeriesTouched } from "./facts.ts";
import { recomputeSeries } from "./recompute.ts";
import type { SeriesDeps } from "./settings.ts";

const CHUNK_MS = 86_400_000;

export interface SeriesBackfillResult {
  series: string[];
  events: number;
  facts: number;
  days: number;
}

export async function backfillSeries(
  deps: SeriesDeps,
  defs: readonly TimeseriesDefinition[],
  onProgress?: (p: { day: number; days: number; events: number; facts: number }) => void,
): Promise<SeriesBackfillResult> {
  const { ch } = deps;
  const events = createEventsReader(ch);
  const result: SeriesBackfillResult = { series: defs.map((d) => d.id), events: 0, facts: 0, days: 0 };
  const [span] = await ch.query<{ lo: string; hi: string; n: string }>(
    "series_backfill_span",
    `SELECT toUnixTimestamp64Milli(min(timestamp)) AS lo, toUnixTimestamp64Milli(max(timestamp)) AS hi, count() AS n
     FROM events WHERE chain_index < {chains:UInt8}`,
    { chains: CHAIN_COUNT },
  );
  if (!span || Number(span.n) === 0) return result;
  const [lo, hi] = [Number(span.lo), Number(span.hi)];
  const first = lo - (lo % CHUNK_MS);
  const days = Math.floor((hi - first) / CHUNK_MS) + 1;
  for (let day = 0; day < days; day++) {
    const from = first + day * CHUNK_MS;
    const rows = await ch.query<{ doc: string; version: string }>(
      "series_backfill_events",
      `SELECT doc, version FROM events FINAL
       PREWHERE id >= {from_id:String} AND id < {to_id:String}
       WHERE main_chain AND chain_index < {chains:UInt8} ORDER BY id`,
      { from_id: idFloor(from), to_id: idFloor(from + CHUNK_MS), chains: CHAIN_COUNT },
    );
    const facts: EventFact[] = [];
    const docs = rows.map(
      (r) => JSON.parse(r.doc) as Record<string, unknown> & { payload: Record<string, unknown> },
    );
    // Offloaded payloads (event_payloads) are merged back, as the processor reads them from the message.
    const payloads = await events.payloads(
      docs.flatMap((d) => (typeof d.payload_ref === "string" && d.payload_ref ? [d.payload_ref] : [])),
    );
    for (const [i, { version }] of rows.entries()) {
      const e = docs[i]!;
      const stored = typeof e.payload_ref === "string" ? payloads.get(e.payload_ref) : undefined;
      if (stored !== undefined) e.payload = JSON.parse(stored) as Record<string, unknown>;
      facts.push(
        ...factsOfEvent(
          {
            id: String(e.id),
            chain_index: Number(e.chain_index),
            block_hash: String(e.block_hash),
            timestamp: Number(e.timestamp),
            tx_id: String(e.tx_id),
            is_main: Boolean(e.is_main),
            dapp_id: String(e.dapp_id),
            category: String(e.category),
            sub_kind: String(e.sub_kind),
            type: String(e.type),
            from: String(e.from),
            to: String(e.to),
            with: String(e.with),
            token_id: String(e.token_id),
            amount: String(e.amount),
            payload: () => e.payload ?? {},
          },
          Number(version),
          defs,
        ),
      );
    }
    const touched: SeriesTouched = new Map();
    await insertFacts(ch, blockFacts(facts), touched);
    await recomputeSeries(deps, touched);
    result.events += rows.length;
    result.facts += facts.length;
    result.days = day + 1;
    onProgress?.({ day: day + 1, days, events: result.events, facts: result.facts });
  }
  return result;
}
