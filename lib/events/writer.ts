/**
 * The writer of the events tables: `events` (and through their views, `events_by_key` and `event_ids_by_tx`),
 * `event_payloads`, `event_rewrites` and `chain_progress`. Rows are keyed by (id, block_hash) with the
 * block message's seq as version, so a replay writes the same rows again and a retraction (a newer
 * seq with main_chain = false) wins. Progress is written after the events it covers: a crash in
 * between only replays work. A batch that rewrites rows at or below a chain's durable position
 * (readers may have served them) is announced in `event_rewrites`, after those rows. A reorg that reaches
 * such rows also gets a notice for pollers (chain index 17, `lib/events/notices.ts`), recorded in
 * `reorg_notices` before any row of the batch is written.
 */
import { applyInRuns } from "../batch.ts";
import { idCeiling, idFloor, type NormalizedEvent } from "../chain/types.ts";
import type { Metrics } from "../metrics.ts";
import type { Ch } from "../stores/clickhouse.ts";
import { turn } from "../turns.ts";
import { EVENT_FIELD_NAMES } from "./fields.ts";
import {
  noticeCandidates,
  noticeEvent,
  noticeKey,
  noticePayload,
  type PlannedNotice,
  planNotices,
  type StoredBlock,
} from "./notices.ts";
import type { BlockEventsMessage, EventsMessage } from "./wire.ts";

/** A row of `events`: the event's fields, its payload as JSON text, and the storage columns. */
export type EventRow = Omit<NormalizedEvent, "payload"> & {
  payload: string;
  main_chain: boolean;
  doc: string;
  version: number;
};

/** The fields before and after `payload`, in served order: one `JSON.stringify` each, the payload's text between. */
const PAYLOAD = EVENT_FIELD_NAMES.indexOf("payload");
const BEFORE_PAYLOAD = EVENT_FIELD_NAMES.slice(0, PAYLOAD);
const AFTER_PAYLOAD = EVENT_FIELD_NAMES.slice(PAYLOAD + 1);

/** The served event as JSON: the row's fields in `EVENT_FIELDS` order, the payload's JSON text as is. */
export function eventDoc(row: Omit<EventRow, "doc" | "main_chain" | "version">): string {
  // A key list as replacer writes those keys only, in its order (and nothing nested: every field is flat).
  const before = JSON.stringify(row, BEFORE_PAYLOAD);
  const after = AFTER_PAYLOAD.length > 0 ? `,${JSON.stringify(row, AFTER_PAYLOAD).slice(1, -1)}` : "";
  return `${before.slice(0, -1)},"payload":${row.payload}${after}}`;
}

/** The rows of a block's events, each with its served document, built in one pass. */
export function eventRows(m: BlockEventsMessage): EventRow[] {
  return m.events.map((e) => {
    const row: EventRow = {
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
      payload: e.payload_json,
      payload_ref: e.payload_ref,
      main_chain: true,
      doc: "",
      version: m.seq,
    };
    row.doc = eventDoc(row);
    return row;
  });
}

export interface WriterDeps {
  ch: Ch;
  metrics: Metrics;
  /** Notice payloads longer than this (UTF-8 bytes) are offloaded to `event_payloads`, like events'. */
  maxPayloadBytes?: number;
}

/** Newest durable block time per chain (what readers may already have served). */
async function durableTimes(ch: Ch): Promise<Map<number, number>> {
  const rows = await ch.query<{ chain_index: number; ts: string }>(
    "chain_progress_times",
    "SELECT chain_index, toUnixTimestamp64Milli(max(block_ts)) AS ts FROM chain_progress GROUP BY chain_index",
  );
  return new Map(rows.map((r) => [r.chain_index, Number(r.ts)]));
}

/** The reorg notices of a batch, as `planNotices` decides them from the records and the stored rows. */
async function notices(ch: Ch, candidates: EventsMessage[], durable: Map<number, number>) {
  if (candidates.length === 0) return [];
  const recorded = await ch.query<{ block_hash: string; seq: string; kind: string; notice_id: string }>(
    "reorg_notices_read",
    `SELECT block_hash, seq, kind, notice_id FROM reorg_notices FINAL
     WHERE block_hash IN {hashes:Array(String)} AND seq IN {seqs:Array(UInt64)}`,
    { hashes: candidates.map((m) => m.block_hash), seqs: candidates.map((m) => m.seq) },
  );
  // A block's rows are the ids of its time: one id range covers every candidate.
  let [lo, hi] = [Number.POSITIVE_INFINITY, 0];
  for (const m of candidates) [lo, hi] = [Math.min(lo, m.block_timestamp), Math.max(hi, m.block_timestamp)];
  const rows = await ch.query<{ block_hash: string; id: string; main: boolean | number; newest: string }>(
    "reorg_blocks_read",
    `SELECT block_hash, id, argMax(main_chain, version) AS main, max(version) AS newest FROM events
     WHERE id >= {lo:String} AND id < {hi:String} AND block_hash IN {hashes:Array(String)}
     GROUP BY block_hash, id ORDER BY id`,
    { lo: idFloor(lo), hi: idCeiling(hi), hashes: candidates.map((m) => m.block_hash) },
  );
  const stored = new Map<string, StoredBlock>();
  for (const r of rows) {
    const block = stored.get(r.block_hash) ?? { ids: [], main: false, version: -1 };
    block.ids.push(r.id);
    block.main ||= Boolean(r.main);
    block.version = Math.max(block.version, Number(r.newest));
    stored.set(r.block_hash, block);
  }
  const records = new Map(
    recorded.map((r) => [
      noticeKey(r.block_hash, Number(r.seq), r.kind as PlannedNotice["kind"]),
      r.notice_id,
    ]),
  );
  return planNotices(candidates, durable, records, stored);
}

/** Dapps whose events `dapp_events_mv` copies (clickhouse/0012_create_dapp_events.sql). */
const DAPP_EVENTS_DAPPS = ["furnace", "chainreaction", "elexium", "alphbanx", "dia-oracle"];

/**
 * A block normalized again with other results (a reprocess with a new decoder) may drop an event id, or move an
 * event to another address, token, dapp or sub kind. The copies keyed by those (`events_by_key`, `dapp_events`)
 * and the dropped ids would then keep serving the old rows: before the new rows are written, every stored key of
 * these blocks that the new rows do not have is retracted, with the new message's seq as version (only over
 * older rows: a stale replay changes nothing). Identical rows (a plain replay) have no such key. An event's
 * transaction is its block's at its position, the same in every version: `event_ids_by_tx` needs no retraction
 * (transaction reads take the rows themselves from `events`).
 */
async function retractStaleKeys(ch: Ch, blocks: BlockEventsMessage[]): Promise<void> {
  if (blocks.length === 0) return;
  let [lo, hi] = [Number.POSITIVE_INFINITY, 0];
  for (const m of blocks) [lo, hi] = [Math.min(lo, m.block_timestamp), Math.max(hi, m.block_timestamp)];
  // Keys as text ('|' occurs in no id, address or name): tuples do not travel as query parameters.
  const ids: string[] = [];
  const lookup: string[] = [];
  const dapp: string[] = [];
  for (const m of blocks)
    for (const e of m.events) {
      ids.push(`${m.block_hash}|${e.id}`);
      const keyed = [
        ["address", e.from],
        ["address", e.to],
        ["token", e.token_address],
      ] as const;
      for (const [kind, key] of keyed) if (key) lookup.push(`${kind}|${key}|${e.id}|${m.block_hash}`);
      dapp.push(`${e.dapp_id}|${e.sub_kind}|${e.id}|${m.block_hash}`);
    }
  const params = {
    lo: idFloor(lo),
    hi: idCeiling(hi),
    hashes: blocks.map((m) => m.block_hash),
    seqs: blocks.map((m) => m.seq),
    ids,
    lookup,
    dapp,
    dapps: DAPP_EVENTS_DAPPS,
  };
  // The stored main-chain rows of these blocks older than the message rewriting them, with its seq as `v`.
  const stored = `SELECT *, transform(block_hash, {hashes:Array(String)}, {seqs:Array(UInt64)}, toUInt64(0)) AS v
    FROM events FINAL
    WHERE id >= {lo:String} AND id < {hi:String} AND block_hash IN {hashes:Array(String)} AND main_chain AND version < v`;
  await ch.command(
    "events_retract_stale_keys",
    `INSERT INTO events_by_key
     SELECT k.1 AS kind, k.2 AS key, id, cityHash64(block_hash) AS block, dapp_id, category, sub_kind, token_address,
            false AS main_chain, v AS version, payload_ref, doc
     FROM (${stored})
     ARRAY JOIN arrayDistinct(arrayFilter(x -> x.2 != '', [('address', from), ('address', to), ('token', token_address)])) AS k
     WHERE concat(k.1, '|', k.2, '|', id, '|', block_hash) NOT IN {lookup:Array(String)}`,
    params,
  );
  await ch.command(
    "events_retract_stale_dapp_keys",
    `INSERT INTO dapp_events
     SELECT dapp_id, category, sub_kind, type, id, block_hash, timestamp, tx_id, from, to, with, token_id, amount,
            contract_address, payload, false AS main_chain, v AS version
     FROM (${stored})
     WHERE dapp_id IN {dapps:Array(String)} AND concat(dapp_id, '|', sub_kind, '|', id, '|', block_hash) NOT IN {dapp:Array(String)}`,
    params,
  );
  await ch.command(
    "events_retract_stale_ids",
    `INSERT INTO events
     SELECT * EXCEPT (v) REPLACE (false AS main_chain, v AS version)
     FROM (${stored}) WHERE concat(block_hash, '|', id) NOT IN {ids:Array(String)}`,
    params,
  );
}

/** Writes a batch of events messages in message order; resolves once every table is written. */
export async function writeEventsBatch(deps: WriterDeps, messages: EventsMessage[]): Promise<number> {
  const { ch } = deps;
  // Blocks at or below their chain's durable position rewrite rows readers may have served already.
  const durable = await durableTimes(ch);
  const rewritten = noticeCandidates(messages, durable);
  // Notices are recorded first: a crash after this replays the batch into the same notices.
  const planned = await notices(ch, rewritten, durable);
  const unrecorded = planned.filter((n) => !n.recorded);
  if (unrecorded.length > 0)
    await ch.insert(
      "reorg_notices_insert",
      "reorg_notices",
      unrecorded.map((n) => ({
        block_hash: n.message.block_hash,
        seq: n.message.seq,
        kind: n.kind,
        chain_index: n.message.chain_index,
        notice_id: n.id,
        version: n.message.seq,
      })),
    );
  await retractStaleKeys(
    ch,
    rewritten.filter((m): m is BlockEventsMessage => m.kind === "block"),
  );
  let written = 0;
  await applyInRuns(messages, {
    async blocks(run) {
      const rows: EventRow[] = [];
      const payloads: { ref: string; payload: string; version: number }[] = [];
      for (const m of run) {
        for (const row of eventRows(m)) rows.push(row);
        for (const o of m.offloaded) payloads.push({ ref: o.ref, payload: o.payload_json, version: m.seq });
        const t = turn();
        if (t) await t;
      }
      await ch.insert("events_insert", "events", rows);
      await ch.insert("event_payloads_insert", "event_payloads", payloads);
      written += rows.length;
    },
    async retraction(m) {
      // No `main_chain` condition here: REPLACE makes `main_chain` an alias of false inside this SELECT.
      await ch.command(
        "events_retract",
        `INSERT INTO events SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
         FROM events FINAL WHERE block_hash = {hash:String}`,
        { seq: m.seq, hash: m.block_hash },
      );
    },
  });
  if (planned.length > 0) {
    const rows: EventRow[] = [];
    const payloads: { ref: string; payload: string; version: number }[] = [];
    // Above the chain's durable time: visible only once this batch's progress (below) is written.
    for (const n of planned) {
      const m = n.message;
      let payload = noticePayload(n, m.kind === "block" ? eventRows(m).map((r) => r.doc) : []);
      let ref: string | null = null;
      if (Buffer.byteLength(payload, "utf8") > (deps.maxPayloadBytes ?? Number.POSITIVE_INFINITY)) {
        payloads.push({ ref: n.id, payload, version: m.seq });
        [payload, ref] = ["{}", n.id];
      }
      const row = { ...noticeEvent(n), payload, payload_ref: ref };
      rows.push({ ...row, main_chain: true, doc: eventDoc(row), version: m.seq });
    }
    await ch.insert("event_payloads_insert", "event_payloads", payloads);
    await ch.insert("reorg_notice_events_insert", "events", rows);
  }
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
