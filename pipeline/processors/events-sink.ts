/**
 * Events sink: `alephium.events.v1` → ClickHouse `events`, `event_payloads`, then `chain_progress`.
 * Rows are keyed by (id, block_hash) with the block message's seq as version, so a replay writes the
 * same rows again and a retraction (a newer seq with main_chain = false) wins. Progress is written
 * after the events it covers: a crash in between only replays work. A batch that rewrites rows at or
 * below a chain's durable position (readers may have served them) is announced in `event_rewrites`.
 */
import { idCeiling, idFloor } from "../../lib/chain/types.ts";
import type { PipelineDeps } from "../deps.ts";
import { type BlockEventsMessage, CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

export function eventRows(m: BlockEventsMessage) {
  return m.events.map((e) => {
    const served = {
      id: e.id,
      chain_index: m.chain_index,
      block_hash: m.block_hash,
      block_height: m.block_height,
      timestamp: m.block_timestamp,
      tx_id: e.tx_id,
      tx_index: e.tx_index,
      event_index: e.event_index,
      dapp_id: e.dapp_id,
      category: e.category,
      sub_kind: e.sub_kind,
      type: e.type,
      is_main: e.is_main,
      from: e.from,
      to: e.to,
      with: e.with,
      token_address: e.token_address,
      token_id: e.token_id,
      amount: e.amount,
      contract_address: e.contract_address,
      contract_event_index: e.contract_event_index,
    };
    // `doc` is the served event in one column, so an API page reads a few columns instead of all of them.
    const doc = `${JSON.stringify(served).slice(0, -1)},"payload":${e.payload_json},"payload_ref":${JSON.stringify(e.payload_ref)}}`;
    return {
      ...served,
      payload: e.payload_json,
      payload_ref: e.payload_ref,
      main_chain: true,
      doc,
      version: m.seq,
    };
  });
}

/** Newest durable block time per chain (what readers may already have served). */
async function durableTimes(deps: Pick<PipelineDeps, "ch">): Promise<Map<number, number>> {
  const rows = await deps.ch.query<{ chain_index: number; ts: string }>(
    "chain_progress_times",
    "SELECT chain_index, toUnixTimestamp64Milli(max(block_ts)) AS ts FROM chain_progress GROUP BY chain_index",
  );
  return new Map(rows.map((r) => [r.chain_index, Number(r.ts)]));
}

export async function writeEventsBatch(
  deps: Pick<PipelineDeps, "ch" | "metrics">,
  messages: EventsMessage[],
) {
  // Blocks at or below their chain's durable position rewrite rows readers may have served already.
  const durable = await durableTimes(deps);
  const rewritten = messages.filter((m) => m.block_timestamp <= (durable.get(m.chain_index) ?? -1));
  const blocks = messages.filter((m): m is BlockEventsMessage => m.kind === "block");
  const rows = blocks.flatMap(eventRows);
  const payloads = blocks.flatMap((m) =>
    m.offloaded.map((o) => ({ ref: o.ref, payload: o.payload_json, version: m.seq })),
  );
  await deps.ch.insert("events_insert", "events", rows);
  await deps.ch.insert("event_payloads_insert", "event_payloads", payloads);
  for (const m of messages.filter((x) => x.kind === "retraction")) {
    // No `main_chain` condition here: REPLACE makes `main_chain` an alias of false inside this SELECT.
    await deps.ch.command(
      "events_retract",
      `INSERT INTO events SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
       FROM events FINAL WHERE block_hash = {hash:String}`,
      { seq: m.seq, hash: m.block_hash },
    );
  }
  if (rewritten.length > 0) {
    // Written after the rows it announces: a reader that sees it also sees them.
    let [first, last, seq] = [Number.POSITIVE_INFINITY, 0, 0];
    for (const m of rewritten) {
      first = Math.min(first, m.block_timestamp);
      last = Math.max(last, m.block_timestamp);
      seq = Math.max(seq, m.seq);
    }
    await deps.ch.insert("event_rewrites_insert", "event_rewrites", [
      { from_id: idFloor(first), to_id: idCeiling(last), blocks: rewritten.length, seq },
    ]);
  }
  // Newest durable position per chain (main-chain blocks only; a retraction never moves it back).
  const progress = new Map<number, EventsMessage>();
  for (const m of blocks) {
    const seen = progress.get(m.chain_index);
    if (!seen || m.block_timestamp > seen.block_timestamp) progress.set(m.chain_index, m);
  }
  await deps.ch.insert(
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
  deps.metrics.pipelineRows.inc({ stage: "events-sink", table: "events" }, rows.length);
  return rows.length;
}

export const eventsSinkProcessor = defineProcessor<EventsMessage>({
  name: "events-sink",
  topic: "events",
  group: CONSUMER_GROUPS.eventsSink,
  codec: (codecs) => codecs.events,
  async handle(messages, { deps }) {
    await writeEventsBatch(deps, messages);
  },
});
