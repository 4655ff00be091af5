/**
 * The bus codecs (Confluent wire format, built-in schema ids): a union of records carries its branch, and the
 * one-record union of `alephium.series-touched.v1` carries its only branch (index 0) and the record, which the
 * codec hands over as the message's fields; each refuses another topic's bytes.
 */
import avro from "avsc";
import { describe, expect, it } from "vitest";
import { createCodecs, type SeriesTouchedMessage } from "../../pipeline/messages.ts";

describe("bus codecs", () => {
  it("round-trip a series span with schema id 5: branch 0, then the record's fields", async () => {
    const codecs = await createCodecs({ SCHEMA_REGISTRY_URL: "" });
    const m: SeriesTouchedMessage = {
      kind: "touched",
      instance_id: "a".repeat(64),
      series_id: "chain-blocks",
      lo: 1_767_600_000_000,
      hi: 1_767_600_060_000,
      block_timestamp: 1_767_600_061_000,
    };
    const bytes = codecs.seriesTouched.encode(m);
    expect(bytes.readUInt8(0)).toBe(0);
    expect(bytes.readUInt32BE(1)).toBe(5);
    expect(codecs.seriesTouched.decode(bytes)).toEqual(m);
    // The body is the union's branch index (0, its one record), then the record.
    expect(bytes.readUInt8(5)).toBe(0);
    const record = avro.Type.forSchema({
      type: "record",
      name: "R",
      fields: [
        { name: "instance_id", type: "string" },
        { name: "series_id", type: "string" },
        { name: "lo", type: "long" },
        { name: "hi", type: "long" },
        { name: "block_timestamp", type: "long" },
      ],
    });
    expect(record.fromBuffer(bytes.subarray(6))).toMatchObject({ series_id: "chain-blocks", hi: m.hi });
  });

  it("refuse another topic's message, naming both schema ids", async () => {
    const codecs = await createCodecs({ SCHEMA_REGISTRY_URL: "" });
    const retraction = codecs.events.encode({
      kind: "retraction",
      chain_index: 3,
      block_hash: "b".repeat(64),
      block_height: 10,
      block_timestamp: 1_767_600_000_000,
      seq: 7,
    });
    expect(codecs.events.decode(retraction)).toMatchObject({ kind: "retraction", chain_index: 3, seq: 7 });
    expect(() => codecs.seriesTouched.decode(retraction)).toThrow(
      /schema id 4; alephium.series-touched.v1 uses 5/,
    );
    expect(() => codecs.seriesTouched.encode({ kind: "other" } as never)).toThrow(/no record for kind other/);
  });
});
