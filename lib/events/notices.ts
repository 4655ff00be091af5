/**
 * Reorg notices: what a poller needs to follow a reorg deeper than CONFIRMATIONS (guarantee 3).
 *
 * The events sink writes a notice into `events`, on chain index 17, when a batch
 * - retracts a block at or below its chain's durable time (its events may have been served):
 *   `chain / retraction / reorg` with `payload.retracted_ids`;
 * - writes a main-chain block at or below its chain's durable time whose rows are not on the main
 *   chain yet (the winning branch: its ids may sort below a poller's cursor): `chain / late_block /
 *   reorg` with `payload.added_ids` and `payload.events` (the block's events as served).
 *
 * **Ids.** `noticeId(T, seq, chain)` with T the chain's durable time read at the start of the batch:
 * `<T + 1>-17-<seq / 1e5>-<seq % 1e5>-<chain>`. Every id served so far is at or below the watermark,
 * which is at most T; the chain's durable time passes T only when this batch writes `chain_progress`,
 * after the notice. So a notice sorts above everything a poller may have received and becomes visible
 * only once every lower id is written. Only the owner of a chain's partition writes that chain's
 * progress (the blocks and events topics are keyed by chain). Within one T, the message seq orders the
 * notices of a chain as ingest published them (a retraction before the block that replaces it).
 *
 * **Once.** A notice is recorded in `reorg_notices` under its message's key (block hash, seq, kind)
 * before its row is written; a re-delivered message finds the record and writes the same notice again.
 * A message only counts when it is newer than the block's rows (an old block message re-delivered after
 * its retraction changes nothing, so it gets no notice). Re-publishing stored blocks (`reprocess`) finds
 * their rows on the main chain: no notice. A batch replayed by a second consumer while the first still
 * runs (a Kafka session expiry) may give a message two notices; applying a notice is idempotent.
 */
import { ALPH_TOKEN_ID, eventId, type NormalizedEvent } from "../chain/types.ts";
import type { EventsMessage } from "./wire.ts";

/** `chain_index` of reorg notices (0..15 are Alephium's chains, 16 the market feed). */
export const NOTICE_CHAIN_INDEX = 17;

export type NoticeKind = "retraction" | "late_block";

/** Message seqs fit the id's height and tx fields (15 digits: ms clocks until the year 33658). */
const SEQ_LIMIT = 1e15;

/**
 * Id of the notice a message of chain `chainIndex` with sequence `seq` produces, when the chain's
 * durable time at the start of the batch is `durableTs`: above every id at or before `durableTs`.
 */
export function noticeId(durableTs: number, seq: number, chainIndex: number): string {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq >= SEQ_LIMIT)
    throw new Error(`reorg notice: message seq ${seq} does not fit an event id (0 ≤ seq < 1e15)`);
  return eventId(durableTs + 1, NOTICE_CHAIN_INDEX, Math.floor(seq / 1e5), seq % 1e5, chainIndex);
}

/** Key of a notice's record: one notice per message. */
export const noticeKey = (blockHash: string, seq: number, kind: NoticeKind) => `${blockHash}/${seq}/${kind}`;

/** What the store holds of a block: the ids of its rows, whether they are main-chain, their newest version. */
export interface StoredBlock {
  ids: string[];
  main: boolean;
  version: number;
}

/** A notice to write: its kind, id, the message it comes from, and the event ids it names. */
export interface PlannedNotice {
  kind: NoticeKind;
  id: string;
  message: EventsMessage;
  ids: string[];
  /** Whether `reorg_notices` already holds it (a replay). */
  recorded: boolean;
}

/**
 * The notices of a batch, in message order (pure). `durable` is each chain's durable time at the start
 * of the batch, `recorded` the notice ids already in `reorg_notices` by `noticeKey`, `stored` what the
 * store holds of the blocks concerned. Blocks written earlier in the batch count as stored.
 */
export function planNotices(
  messages: readonly EventsMessage[],
  durable: ReadonlyMap<number, number>,
  recorded: ReadonlyMap<string, string>,
  stored: ReadonlyMap<string, StoredBlock>,
): PlannedNotice[] {
  const batch = new Map<string, StoredBlock>();
  const stateOf = (hash: string) =>
    batch.get(hash) ?? stored.get(hash) ?? { ids: [], main: false, version: -1 };
  const out: PlannedNotice[] = [];
  for (const m of messages) {
    const before = stateOf(m.block_hash);
    const ids = m.kind === "block" ? m.events.map((e) => e.id) : before.ids;
    const T = durable.get(m.chain_index);
    if (T !== undefined && m.block_timestamp <= T) {
      const kind: NoticeKind = m.kind === "block" ? "late_block" : "retraction";
      const known = recorded.get(noticeKey(m.block_hash, m.seq, kind));
      // A block new to the main chain, or the retraction of main-chain rows, by a message newer than the
      // rows (an older one re-delivered changes nothing); a replay keeps its record.
      const due = m.seq > before.version && (m.kind === "block" ? !before.main : before.main);
      if (known !== undefined || (due && ids.length > 0))
        out.push({
          kind,
          id: known ?? noticeId(T, m.seq, m.chain_index),
          message: m,
          ids,
          recorded: known !== undefined,
        });
    }
    if (m.seq > before.version) batch.set(m.block_hash, { ids, main: m.kind === "block", version: m.seq });
  }
  return out;
}

/**
 * The notice's payload as JSON text: `retracted_ids`, or `added_ids` and `events` (the block's served
 * documents, `docs`, inserted as they are).
 */
export function noticePayload(n: PlannedNotice, docs: readonly string[] = []): string {
  const m = n.message;
  const head = `{"block_hash":${JSON.stringify(m.block_hash)},"chain_index":${m.chain_index},"height":${m.block_height}`;
  if (n.kind === "retraction") return `${head},"retracted_ids":${JSON.stringify(n.ids)}}`;
  return `${head},"added_ids":${JSON.stringify(n.ids)},"events":[${docs.join(",")}]}`;
}

/** The notice as a normalized event (payload set by the caller, inline or offloaded). */
export function noticeEvent(n: PlannedNotice): Omit<NormalizedEvent, "payload" | "payload_ref"> {
  return {
    id: n.id,
    chain_index: NOTICE_CHAIN_INDEX,
    block_hash: "",
    block_height: 0,
    timestamp: Number(n.id.slice(0, 13)),
    tx_id: "",
    tx_index: 0,
    event_index: 0,
    dapp_id: "alephium",
    category: "chain",
    sub_kind: n.kind,
    type: "reorg",
    is_main: true,
    from: "",
    to: "",
    with: "",
    token_address: "",
    token_id: ALPH_TOKEN_ID,
    amount: "0",
    contract_address: "",
    contract_event_index: null,
  };
}

/** Blocks of a batch whose notices need the store's state (at or below their chain's durable time). */
export function noticeCandidates(
  messages: readonly EventsMessage[],
  durable: ReadonlyMap<number, number>,
): EventsMessage[] {
  return messages.filter((m) => m.block_timestamp <= (durable.get(m.chain_index) ?? -1));
}
