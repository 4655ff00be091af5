// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/**
 * The fields of a normalized event are listed once (`lib/events/fields.ts`); this test holds the other
 * places they appear to that list: the Avro record on `alephium.events.v2`, the migrated `events`
 * table, the API's `NormalizedEvent` response schema, and the document the writer stores.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_FIELD_NAMES, EVENT_FIELDS, STORAGE_COLUMNS } from "../../lib/events/fields.ts";
import { eventRows } from "../../lib/events/writer.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { openTestCh, type TestCh } from "../helpers/stores.ts";

interface AvroField {
  name: string;
  type: unknown;
}
interface AvroRecord {
  name: string;
  fields: AvroField[];
}

const schema = JSON.parse(readFileSync("schemas/alephium.events.v2.avsc", "utf8")) as AvroRecord[];
const blockEvents = schema.find((r) => r.name === "BlockEventsV2")!;
const eventsField = blockEvents.fields.find((f) => f.name === "events")!;
const normalizedEvent = (eventsField.type as { items: AvroRecord }).items;
const fields = Object.entries(EVENT_FIELDS);
const avroType = (t: string | readonly string[]) =>
  t === "timestamp-millis" ? { type: "long", logicalType: "timestamp-millis" } : t;

describe("event fields", () => {
  let ch: TestCh;
  let t: TestApp;
  beforeAll(async () => {
    ch = await openTestCh();
    t = await createTestApp({ databases: false });
  });
  afterAll(async () => {
    await t?.close();
    await ch?.close();
  });

  it("match the Avro record of each event, in order, with their types", () => {
    expect(normalizedEvent.name).toBe("NormalizedEventV2");
    const expected = fields
      .filter(([, f]) => f.wire.on === "event")
      .map(([name, f]) => ({ name: f.wire.name ?? name, type: avroType(f.wire.avro) }));
    expect(normalizedEvent.fields.map(({ name, type }) => ({ name, type }))).toEqual(expected);
  });

  it("match the block fields of the Avro message", () => {
    const expected = fields
      .filter(([, f]) => f.wire.on === "block")
      .map(([name, f]) => ({ name: f.wire.name ?? name, type: avroType(f.wire.avro) }));
    const onMessage = blockEvents.fields
      .filter((f) => !["seq", "events", "offloaded"].includes(f.name))
      .map(({ name, type }) => ({ name, type }));
    expect(onMessage).toEqual(expected);
  });

  it("match the columns of the migrated events table, in order, with their types", async () => {
    const columns = await ch.ch.query<{ name: string; type: string }>(
      "t",
      "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'events' ORDER BY position",
    );
    const expected = [
      ...fields.map(([name, f]) => ({ name, type: f.clickhouse })),
      ...Object.entries(STORAGE_COLUMNS).map(([name, type]) => ({ name, type })),
    ];
    expect(columns).toEqual(expected);
  });

  it("match the NormalizedEvent response schema of the OpenAPI document", async () => {
    const doc = (await t.app.inject({ url: "/openapi.json" })).json();
    const served = doc.components.schemas.NormalizedEvent as {
      properties: Record<string, { type?: string; nullable?: boolean }>;
      required: string[];
    };
    const { address_labels: labels, ...properties } = served.properties;
    expect(labels?.type).toBe("object");
    const types = Object.fromEntries(
      Object.entries(properties).map(([name, p]) => [name, { json: p.type, nullable: p.nullable === true }]),
    );
    expect(types).toEqual(
      Object.fromEntries(fields.map(([name, f]) => [name, { json: f.json, nullable: f.nullable }])),
    );
    expect([...served.required].sort()).toEqual([...EVENT_FIELD_NAMES, "address_labels"].sort());
  });

  it("are the keys of the document the writer stores, in order", () => {
    const [row] = eventRows({
      kind: "block",
      chain_index: 3,
      block_hash: "b".repeat(64),
      block_height: 7,
      block_timestamp: 1_752_573_600_000,
      seq: 1,
      events: [
        {
          id: "1752573600000-03-0000000007-00000-0000",
          tx_id: "a".repeat(64),
          tx_index: 0,
          event_index: 0,
          dapp_id: "alephium",
          category: "transfer",
          sub_kind: "send",
          type: "alph",
          is_main: true,
          from: "1From",
          to: "1To",
          with: "",
          token_address: "",
          token_id: "0".repeat(64),
          amount: "1",
          contract_address: "",
          contract_event_index: null,
          payload_json: '{"n":1}',
          payload_ref: null,
        },
      ],
      offloaded: [],
    });
    const doc = JSON.parse(row!.doc) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(EVENT_FIELD_NAMES);
    expect(doc).toMatchObject({ chain_index: 3, timestamp: 1_752_573_600_000, payload: { n: 1 } });
  });
});
