/**
 * The events writer's rows (lib/events/writer.ts `eventRows`): every wire field and block field lands in its column,
 * and the served document is, byte for byte, `JSON.stringify` of the event with its fields in `EVENT_FIELDS` order and
 * the payload as an object, whatever the strings hold (quotes, backslashes, control and non-ASCII characters).
 */
import { describe, expect, it } from "vitest";
import { EVENT_FIELD_NAMES } from "../../lib/events/fields.ts";
import type { BlockEventsMessage, WireEvent } from "../../lib/events/wire.ts";
import { eventDoc, eventRows } from "../../lib/events/writer.ts";

const wire = (i: number, over: Partial<WireEvent> = {}): WireEvent => ({
  id: `1752573600000-03-0000000007-0000${i}-0000`,
  tx_id: "a".repeat(63) + i,
  tx_index: i,
  event_index: 0,
  dapp_id: "alephium",
  category: "transfer",
  sub_kind: "send",
  type: "alph",
  is_main: i === 0,
  from: "1From",
  to: "1To",
  with: "",
  token_address: "",
  token_id: "0".repeat(64),
  amount: "1000000000000000000000000000000",
  contract_address: "",
  contract_event_index: null,
  payload_json: JSON.stringify({ n: i }),
  payload_ref: null,
  ...over,
});

const message: BlockEventsMessage = {
  kind: "block",
  chain_index: 3,
  block_hash: "b".repeat(64),
  block_height: 7,
  block_timestamp: 1_752_573_600_000,
  seq: 42,
  events: [
    wire(0),
    wire(1, {
      dapp_id: "ayin",
      category: "dex",
      sub_kind: "buy",
      type: "swap",
      with: 'quote " and \\ backslash',
      contract_address: "tab\tnew\nline\u2028sep",
      contract_event_index: -1,
      payload_json: JSON.stringify({
        name: "Ünïcode 🪙",
        nested: { a: [1, 'x"y'] },
        big: "12345678901234567890",
      }),
      payload_ref: null,
    }),
    wire(2, {
      payload_json: "{}",
      payload_ref: "1752573600000-03-0000000007-00002-0000",
      contract_event_index: 0,
    }),
  ],
  offloaded: [],
};

/** The reference document: the fields in served order, the payload parsed, one plain JSON.stringify. */
function reference(e: WireEvent, m: BlockEventsMessage): string {
  const full: Record<string, unknown> = {
    ...e,
    chain_index: m.chain_index,
    block_hash: m.block_hash,
    block_height: m.block_height,
    timestamp: m.block_timestamp,
    payload: JSON.parse(e.payload_json),
  };
  return JSON.stringify(Object.fromEntries(EVENT_FIELD_NAMES.map((name) => [name, full[name]])));
}

describe("event rows", () => {
  it("serve the document plain JSON.stringify gives, in field order, whatever the strings hold", () => {
    const rows = eventRows(message);
    expect(rows).toHaveLength(3);
    for (const [i, row] of rows.entries()) {
      const e = message.events[i]!;
      expect(row.doc).toBe(reference(e, message));
      expect(Object.keys(JSON.parse(row.doc))).toEqual(EVENT_FIELD_NAMES);
      // The document of the row's own fields is the same one (the trade feed calls eventDoc directly).
      expect(eventDoc(row)).toBe(row.doc);
    }
  });

  it("put every wire and block field in its column, with the storage columns", () => {
    const rows = eventRows(message);
    for (const [i, row] of rows.entries()) {
      const { payload_json, ...fields } = message.events[i]!;
      expect(row).toEqual({
        ...fields,
        chain_index: 3,
        block_hash: "b".repeat(64),
        block_height: 7,
        timestamp: 1_752_573_600_000,
        payload: payload_json,
        main_chain: true,
        version: 42,
        doc: reference(message.events[i]!, message),
      });
    }
    expect(rows[2]!.payload_ref).toBe("1752573600000-03-0000000007-00002-0000");
  });
});
