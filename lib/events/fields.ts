/**
 * The fields of a normalized event, listed once: their order (of the served document and of the
 * `events` columns), and their type on the wire (Avro `alephium.events.v2`), in ClickHouse and in the
 * API's JSON. `test/integration/event-fields.test.ts` checks this list against the Avro schema, the
 * migrated `events` table and the app's OpenAPI document, so a field added in one place only fails it.
 */
import type { NormalizedEvent } from "../chain/types.ts";

type JsonKind<T> =
  NonNullable<T> extends string
    ? "string"
    : NonNullable<T> extends number
      ? "integer"
      : NonNullable<T> extends boolean
        ? "boolean"
        : "object";

export type AvroType = "string" | "int" | "long" | "boolean" | ["null", "int"] | ["null", "string"];

/** One field; `json` and `nullable` are tied to the field's TypeScript type in `NormalizedEvent`. */
export interface FieldSpec<T = unknown> {
  /**
   * Where it travels on `alephium.events.v2`: `block` fields once on the message (`BlockEventsV2`),
   * `event` fields on each `NormalizedEventV2`; `name` is the wire name when it differs.
   */
  wire: { on: "block" | "event"; name?: string; avro: AvroType | "timestamp-millis" };
  clickhouse: string;
  json: JsonKind<T>;
  nullable: null extends T ? true : false;
}

/** Every field of `NormalizedEvent`, in served and column order (the type forbids a missing or extra one). */
export const EVENT_FIELDS: { [K in keyof NormalizedEvent]-?: FieldSpec<NormalizedEvent[K]> } = {
  id: { wire: { on: "event", avro: "string" }, clickhouse: "String", json: "string", nullable: false },
  chain_index: { wire: { on: "block", avro: "int" }, clickhouse: "UInt8", json: "integer", nullable: false },
  block_hash: {
    wire: { on: "block", avro: "string" },
    clickhouse: "String",
    json: "string",
    nullable: false,
  },
  block_height: {
    wire: { on: "block", avro: "int" },
    clickhouse: "UInt32",
    json: "integer",
    nullable: false,
  },
  timestamp: {
    wire: { on: "block", name: "block_timestamp", avro: "timestamp-millis" },
    clickhouse: "DateTime64(3, 'UTC')",
    json: "integer",
    nullable: false,
  },
  tx_id: { wire: { on: "event", avro: "string" }, clickhouse: "String", json: "string", nullable: false },
  tx_index: { wire: { on: "event", avro: "int" }, clickhouse: "UInt16", json: "integer", nullable: false },
  event_index: { wire: { on: "event", avro: "int" }, clickhouse: "UInt16", json: "integer", nullable: false },
  dapp_id: {
    wire: { on: "event", avro: "string" },
    clickhouse: "LowCardinality(String)",
    json: "string",
    nullable: false,
  },
  category: {
    wire: { on: "event", avro: "string" },
    clickhouse: "LowCardinality(String)",
    json: "string",
    nullable: false,
  },
  sub_kind: {
    wire: { on: "event", avro: "string" },
    clickhouse: "LowCardinality(String)",
    json: "string",
    nullable: false,
  },
  type: {
    wire: { on: "event", avro: "string" },
    clickhouse: "LowCardinality(String)",
    json: "string",
    nullable: false,
  },
  is_main: { wire: { on: "event", avro: "boolean" }, clickhouse: "Bool", json: "boolean", nullable: false },
  from: { wire: { on: "event", avro: "string" }, clickhouse: "String", json: "string", nullable: false },
  to: { wire: { on: "event", avro: "string" }, clickhouse: "String", json: "string", nullable: false },
  with: { wire: { on: "event", avro: "string" }, clickhouse: "String", json: "string", nullable: false },
  token_address: {
    wire: { on: "event", avro: "string" },
    clickhouse: "String",
    json: "string",
    nullable: false,
  },
  token_id: { wire: { on: "event", avro: "string" }, clickhouse: "String", json: "string", nullable: false },
  amount: { wire: { on: "event", avro: "string" }, clickhouse: "UInt256", json: "string", nullable: false },
  contract_address: {
    wire: { on: "event", avro: "string" },
    clickhouse: "String",
    json: "string",
    nullable: false,
  },
  contract_event_index: {
    wire: { on: "event", avro: ["null", "int"] },
    clickhouse: "Nullable(Int32)",
    json: "integer",
    nullable: true,
  },
  // JSON text on the wire and in ClickHouse, an object in the served document.
  payload: {
    wire: { on: "event", name: "payload_json", avro: "string" },
    clickhouse: "String",
    json: "object",
    nullable: false,
  },
  payload_ref: {
    wire: { on: "event", avro: ["null", "string"] },
    clickhouse: "Nullable(String)",
    json: "string",
    nullable: true,
  },
};

export type EventField = keyof NormalizedEvent;

export const EVENT_FIELD_NAMES = Object.keys(EVENT_FIELDS) as EventField[];

/** Columns of `events` after the event's own fields: what storage needs besides the served event. */
export const STORAGE_COLUMNS = {
  /** False once the block left the main chain. */
  main_chain: "Bool",
  /** The served event (every field above, in their order) as one JSON text: a page reads one column. */
  doc: "String",
  /** ReplacingMergeTree version: the block message's seq. */
  version: "UInt64",
} as const;
