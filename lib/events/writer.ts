/**
 * The writer of the events tables: `events` (and through `event_lookup_mv`, `event_lookup`),
 * `event_payloads`, `event_rewrites` and `chain_progress`. Rows are keyed by (id, block_hash) with the
 * block message's seq as version, so a replay writes the same rows again and a retraction (a newer
 * seq with main_chain = false) wins. Progress is written after the events it covers: a crash in
 * between only replays work. A batch that rewrites rows at or below a chain's durable position
 * (readers may have served them) is announced in `event_rewrites`, after those rows.
 */
import { idCeiling, idFloor, type NormalizedEvent } from "../chain/types.ts";
import type { Metrics } from "../metrics.ts";
import type { Ch } from "../stores/clickhouse.ts";
import { EVENT_FIELD_NAMES } from "./fields.ts";
import type { BlockEventsMessage, EventsMessage } from "./wire.ts";

/** A row of `events`: the event's fields, its payload as JSON text, and the storage columns. */
export type EventRow = Omit<NormalizedEvent, "payload"> & {
  payload: string;
  main_chain: boolean;
  doc: string;
  version: number;
};

/** `"name":` of every field, in served order. */
const KEYS = EVENT_FIELD_NAMES.map((name, i) => `${i === 0 ? "{" : ","}${JSON.stringify(name)}:`);
const PAYLOAD = EVENT_FIELD_NAMES.indexOf("payload");

/** The served event as JSON: the row's fields in `EVENT_FIELDS` order, the payload's JSON text as is. */
export function eventDoc(row: Omit<EventRow, "doc" | "main_chain" | "version">): string {
  let doc = "";
  for (let i = 0; i < KEYS.length; i++) {
    const value = row[EVENT_FIELD_NAMES[i] as keyof typeof row];
    doc += KEYS[i] + (i === PAYLOAD ? (value as string) : JSON.stringify(value));
  }
  return `${doc}}`;
}

/** The rows of a block's events, each with its served document, built in one pass. */
export function eventRows(m: BlockEventsMessage): EventRow[] {
  return m.events.map(({ payload_json, ...event }) => {
    const row = {
      ...event,
      chain_index: m.chain_index,
      block_hash: m.block_hash,
      block_height: m.block_height,
      timestamp: m.block_timestamp,
      payload: payload_json,
    };
    return { ...row, main_chain: true, doc: eventDoc(row), version: m.seq };
  });
}

export interface WriterDeps {
  ch: Ch;
  metrics: Metrics;
}

/** Newest durable block time per chain (what readers may already have served). */
async function durableTimes(ch: Ch): Promise<Map<number, number>> {
  const rows = await ch.query<{ chain_index: number; ts: string }>(
    "chain_progress_times",
    "SELECT chain_index, toUnixTimestamp64Milli(max(block_ts)) AS ts FROM chain_progress GROUP BY chain_index",
  );
  return new Map(rows.map((r) => [r.chain_index, Number(r.ts)]));
}

/** Writes a batch of events messages in message order; resolves once every table is written. */
export async function writeEventsBatch(deps: WriterDeps, messages: EventsMessage[]): Promise<number> {
  const { ch } = deps;
  // Blocks at or below their chain's durable position rewrite rows readers may have served already.
  const durable = await durableTimes(ch);
  const rewritten = messages.filter((m) => m.block_timestamp <= (durable.get(m.chain_index) ?? -1));
  let written = 0;
  let rows: EventRow[] = [];
  let payloads: { ref: string; payload: string; version: number }[] = [];
  const flush = async () => {
    await ch.insert("events_insert", "events", rows);
    await ch.insert("event_payloads_insert", "event_payloads", payloads);
    written += rows.length;
    rows = [];
    payloads = [];
  };
  // Runs of blocks are one insert; a retraction applies after the blocks before it.
  for (const m of messages) {
    if (m.kind === "block") {
      for (const row of eventRows(m)) rows.push(row);
      for (const o of m.offloaded) payloads.push({ ref: o.ref, payload: o.payload_json, version: m.seq });
      continue;
    }
    await flush();
    // No `main_chain` condition here: REPLACE makes `main_chain` an alias of false inside this SELECT.
    await ch.command(
      "events_retract",
      `INSERT INTO events SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
       FROM events FINAL WHERE block_hash = {hash:String}`,
      { seq: m.seq, hash: m.block_hash },
    );
  }
  await flush();
  if (rewritten.length > 0) {
    // Written after the rows it announces: a reader that sees it also sees them.
    let [first, last, seq] = [Number.POSITIVE_INFINITY, 0, 0];
    for (const m of rewritten) {
      first = Math.min(first, m.block_timestamp);
      last = Math.max(last, m.block_timestamp);
      seq = Math.max(seq, m.seq);
    }
    await ch.insert("event_rewrites_insert", "event_rewrites", [
      { from_id: idFloor(first), to_id: idCeiling(last), blocks: rewritten.length, seq },
    ]);
  }
  // Newest durable position per chain (main-chain blocks only; a retraction never moves it back).
  const progress = new Map<number, BlockEventsMessage>();
  for (const m of messages) {
    if (m.kind !== "block") continue;
    const seen = progress.get(m.chain_index);
    if (!seen || m.block_timestamp > seen.block_timestamp) progress.set(m.chain_index, m);
  }
  await ch.insert(
    "chain_progress_insert",
    "chain_progress",
    [...progress.values()].map((m) => ({
      chain_index: m.chain_index,
      height: m.block_height,
      block_hash: m.block_hash,
      block_ts: m.block_timestamp,
      version: m.block_timestamp,
    })),
  );
  deps.metrics.pipelineRows.inc({ stage: "events-sink", table: "events" }, written);
  return written;
}
