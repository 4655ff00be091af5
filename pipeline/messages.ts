/**
 * Bus topics and message shapes of the pipeline (Avro schemas in `schemas/` with the same names).
 * Every message is a discriminated union on `kind`: a main-chain block (or its events), or the
 * retraction of a block that left the main chain. Topic names are versioned and never reused for
 * another shape: a field change is a new topic (`…v3`), never an edit in place.
 */

import type { Config } from "../lib/config.ts";
import type { EventsMessage, EventsRetractionMessage } from "../lib/events/wire.ts";
import { type Codec, createCodec } from "../lib/stores/avro.ts";

export const TOPICS = {
  /** Raw blocks from ingest, key = chain index. */
  blocks: "alephium.blocks.v2",
  /** Normalized events per block, key = chain index. */
  events: "alephium.events.v2",
  /**
   * Series spans to recompute, from the series processor to series-recompute, key = instance id: one replica of
   * series-recompute owns each instance.
   */
  seriesTouched: "alephium.series-touched.v1",
  /**
   * Balances to recompute, from the holders processor to holders-recompute, key = token id: one replica of
   * holders-recompute owns each token.
   */
  holdersTouched: "alephium.holders-touched.v1",
} as const;

export type TopicName = keyof typeof TOPICS;

/** Consumer groups (one per processor; operators scale each on its own). */
export const CONSUMER_GROUPS = {
  normalize: "alephium-normalize",
  rawSink: "alephium-raw-sink",
  eventsSink: "alephium-events-sink",
  registry: "alephium-registry",
  candles: "alephium-candles",
  figures: "alephium-figures",
  payments: "alephium-payments",
  series: "alephium-series",
  seriesRecompute: "alephium-series-recompute",
  holders: "alephium-holders",
  holdersRecompute: "alephium-holders-recompute",
} as const;

/** Where a block sits; shared by a block and its retraction. */
export interface BlockPosition {
  chain_index: number;
  hash: string;
  height: number;
  timestamp: number;
  /** Publish sequence: a later message about the same block wins. */
  seq: number;
}

/** A main-chain block as ingest fetched it. */
export interface RawBlockMessage extends BlockPosition {
  kind: "block";
  /** The node's BlockEntry, JSON, verbatim. */
  block_json: string;
  /** The node's ContractEventByBlockHash[], JSON, verbatim. */
  events_json: string;
}

/** A block that left the main chain. */
export interface BlockRetractionMessage extends BlockPosition {
  kind: "retraction";
}

export type BlockMessage = RawBlockMessage | BlockRetractionMessage;

export type {
  BlockEventsMessage,
  EventsMessage,
  EventsRetractionMessage,
  WireEvent,
} from "../lib/events/wire.ts";
export { toWireEvent } from "../lib/events/wire.ts";

/** A series instance whose facts a batch wrote or retracted: the span series-recompute recomputes. */
export interface SeriesTouchedMessage {
  kind: "touched";
  instance_id: string;
  series_id: string;
  /** Earliest and latest fact time written or retracted (ms). */
  lo: number;
  hi: number;
  /** Newest block time of the batch (ms): the recompute's progress. */
  block_timestamp: number;
}

/**
 * (token, address) balances of one token whose moves a batch stored or retracted: what holders-recompute
 * recomputes.
 */
export interface HoldersTouchedMessage {
  kind: "touched";
  token_id: string;
  /** Each address's earliest changed move time and the starts of the hours whose moves changed (ms). */
  pairs: { address: string; t0: number; hours: number[] }[];
  /** Newest block time of the batch (ms): the recompute's progress. */
  block_timestamp: number;
}

export interface Codecs {
  blocks: Codec<BlockMessage>;
  events: Codec<EventsMessage>;
  seriesTouched: Codec<SeriesTouchedMessage>;
  holdersTouched: Codec<HoldersTouchedMessage>;
}

export async function createCodecs(config: Pick<Config, "SCHEMA_REGISTRY_URL">): Promise<Codecs> {
  const ns = "org.alephium.indexer";
  return {
    blocks: await createCodec<BlockMessage>(
      TOPICS.blocks,
      { block: `${ns}.RawBlockV2`, retraction: `${ns}.BlockRetractionV2` },
      config.SCHEMA_REGISTRY_URL,
    ),
    events: await createCodec<EventsMessage>(
      TOPICS.events,
      { block: `${ns}.BlockEventsV2`, retraction: `${ns}.EventsRetractionV2` },
      config.SCHEMA_REGISTRY_URL,
    ),
    seriesTouched: await createCodec<SeriesTouchedMessage>(
      TOPICS.seriesTouched,
      { touched: `${ns}.SeriesTouchedV1` },
      config.SCHEMA_REGISTRY_URL,
    ),
    holdersTouched: await createCodec<HoldersTouchedMessage>(
      TOPICS.holdersTouched,
      { touched: `${ns}.HoldersTouchedV1` },
      config.SCHEMA_REGISTRY_URL,
    ),
  };
}

/** The events retraction that follows a block retraction. */
export function eventsRetractionOf(m: BlockRetractionMessage): EventsRetractionMessage {
  return {
    kind: "retraction",
    chain_index: m.chain_index,
    block_hash: m.hash,
    block_height: m.height,
    block_timestamp: m.timestamp,
    seq: m.seq,
  };
}
