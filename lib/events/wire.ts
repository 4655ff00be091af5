/**
 * Normalized events on the bus (`alephium.events.v2`, schema `schemas/alephium.events.v2.avsc`): the
 * block's fields travel once on the message, each event carries the rest and its payload as JSON text.
 * The shape is fixed for this topic version: a field change is a new topic, never an edit in place.
 */
import type { NormalizedEvent } from "../chain/types.ts";

/** A normalized event on the wire: its block's fields travel once, on the message. */
export type WireEvent = Omit<
  NormalizedEvent,
  "chain_index" | "block_hash" | "block_height" | "timestamp" | "payload"
> & { payload_json: string };

interface EventsPosition {
  chain_index: number;
  block_hash: string;
  block_height: number;
  block_timestamp: number;
  /** Sequence of the block message these events came from. */
  seq: number;
}

/** Every normalized event of one main-chain block (all or nothing). */
export interface BlockEventsMessage extends EventsPosition {
  kind: "block";
  events: WireEvent[];
  offloaded: { ref: string; payload_json: string }[];
}

/** Every event of this block is withdrawn. */
export interface EventsRetractionMessage extends EventsPosition {
  kind: "retraction";
}

export type EventsMessage = BlockEventsMessage | EventsRetractionMessage;

export function toWireEvent(e: NormalizedEvent): WireEvent {
  const { chain_index: _c, block_hash: _b, block_height: _h, timestamp: _t, payload, ...rest } = e;
  // Added to the rest object, not spread into a new one: on Node 20 `{ ...rest, payload_json }` gives each wire
  // event a hidden class of its own (lib/events/stream.ts).
  return Object.assign(rest, { payload_json: JSON.stringify(payload) });
}
