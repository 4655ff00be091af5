/**
 * Hand-made normalized events written through the events sink's own writer, for route tests that need exact
 * control over what is stored (the simulated network's chain is used end to end elsewhere).
 */
import { randomBytes } from "node:crypto";
import { ALPH_TOKEN_ID, CHAINS, eventId } from "../../lib/chain/types.ts";
import type { BlockEventsMessage, EventsMessage } from "../../lib/events/wire.ts";
import { writeEventsBatch } from "../../lib/events/writer.ts";
import { createMetrics } from "../../lib/metrics.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";

export interface EventSpec {
  dapp_id: string;
  category: string;
  sub_kind: string;
  type: string;
  from?: string;
  to?: string;
  with?: string;
  token_id?: string;
  amount?: string;
  contract_address?: string;
  contract_event_index?: number | null;
  payload: Record<string, unknown>;
}

export const hex32 = () => randomBytes(32).toString("hex");

let seq = 1;

/** A block message of `chain` at `height` and time `ts`: one transaction per inner list, its first event main. */
export function blockMessage(
  chain: number,
  height: number,
  ts: number,
  txs: EventSpec[][],
): BlockEventsMessage {
  return {
    kind: "block",
    chain_index: chain,
    block_hash: hex32(),
    block_height: height,
    block_timestamp: ts,
    seq: seq++,
    events: txs.flatMap((events, txIndex) => {
      const txId = hex32();
      return events.map((e, i) => ({
        id: eventId(ts, chain, height, txIndex, i),
        tx_id: txId,
        tx_index: txIndex,
        event_index: i,
        dapp_id: e.dapp_id,
        category: e.category as never,
        sub_kind: e.sub_kind as never,
        type: e.type as never,
        is_main: i === 0,
        from: e.from ?? "",
        to: e.to ?? "",
        with: e.with ?? "",
        token_address: "",
        token_id: e.token_id ?? ALPH_TOKEN_ID,
        amount: e.amount ?? "0",
        contract_address: e.contract_address ?? "",
        contract_event_index: e.contract_event_index ?? null,
        payload_ref: null,
        payload_json: JSON.stringify(e.payload),
      }));
    }),
    offloaded: [],
  };
}

export async function writeMessages(ch: Ch, messages: EventsMessage[]): Promise<void> {
  await writeEventsBatch({ ch, metrics: createMetrics() }, messages);
}

/** Moves every chain's durable position to `ts` (an empty block each), so events up to `ts` are served. */
export async function liftWatermark(ch: Ch, ts: number, height = 1_000_000): Promise<void> {
  await writeMessages(
    ch,
    Array.from({ length: CHAINS }, (_, chain) => blockMessage(chain, height + Math.floor(ts / 1000), ts, [])),
  );
}
