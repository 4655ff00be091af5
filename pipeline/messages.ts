/**
 * Bus topics and message shapes of the pipeline (Avro schemas in `schemas/` with the same names).
 * Topic names are versioned and never reused for another shape.
 */

import type { NormalizedEvent } from "../lib/chain/types.ts";
import type { Config } from "../lib/config.ts";
import { type Codec, createCodec } from "../lib/stores/avro.ts";

export const TOPICS = {
  /** Raw blocks from ingest, key = chain index. */
  blocks: "alephium.blocks.v1",
  /** Normalized events per block, key = chain index. */
  events: "alephium.events.v1",
} as const;

/** Consumer groups (one per processor; operators scale each on its own). */
export const GROUPS = {
  normalize: "alephium-normalize",
  rawSink: "alephium-raw-sink",
  eventsSink: "alephium-events-sink",
  registry: "alephium-registry",
} as const;

export interface BlockMessage {
  chain_index: number;
  hash: string;
  height: number;
  timestamp: number;
  main_chain: boolean;
  seq: number;
  /** Node BlockEntry JSON; empty for a retraction. */
  block_json: string;
  events_json: string;
}

export type WireEvent = Omit<
  NormalizedEvent,
  "chain_index" | "block_hash" | "block_height" | "timestamp" | "payload"
> & { payload_json: string };

export interface EventsMessage {
  chain_index: number;
  block_hash: string;
  block_height: number;
  block_timestamp: number;
  main_chain: boolean;
  seq: number;
  events: WireEvent[];
  offloaded: { ref: string; payload_json: string }[];
}

export interface Codecs {
  blocks: Codec<BlockMessage>;
  events: Codec<EventsMessage>;
}

export async function createCodecs(config: Pick<Config, "SCHEMA_REGISTRY_URL">): Promise<Codecs> {
  return {
    blocks: await createCodec<BlockMessage>(TOPICS.blocks, config.SCHEMA_REGISTRY_URL),
    events: await createCodec<EventsMessage>(TOPICS.events, config.SCHEMA_REGISTRY_URL),
  };
}

export function toWireEvent(e: NormalizedEvent): WireEvent {
  const { chain_index: _c, block_hash: _b, block_height: _h, timestamp: _t, payload, ...rest } = e;
  return { ...rest, payload_json: JSON.stringify(payload) };
}
