/**
 * The bus codecs (Confluent wire format, built-in schema ids): a union of records carries its branch, and the
 * one-record unions of `alephium.series-touched.v1` and `alephium.holders-touched.v1` carry their only branch
 * (index 0) and the record, which the codec hands over as the message's fields; each refuses another topic's bytes.
 */
import avro from "avsc";
import { describe, expect, it } from "vitest";
import { type HolderPairs, mergeHolderPair } from "../../lib/series/holders.ts";
import { createCodecs, type SeriesTouchedMessage } from "../../pipeline/messages.ts";
import { holdersTouchedMessages, PAIRS_PER_MESSAGE } from "../../pipeline/processors/holders.ts";

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

  it("carry a batch's touched balances per token, a busy token in several messages, and merge back to the same pairs", async () => {
    const codecs = await createCodecs({ SCHEMA_REGISTRY_URL: "" });
    const H = 3_600_000;
    const pairs: HolderPairs = new Map();
    const alph = "0".repeat(64);
    const token = "c".repeat(64);
    // ALPH touched by more addresses than one message holds; a token by one address in two hours.
    for (let i = 0; i < PAIRS_PER_MESSAGE * 2 + 5; i++)
      mergeHolderPair(pairs, alph, `1addr${i}`, 10 * H + i, [10 * H]);
    mergeHolderPair(pairs, token, "1only", 10 * H + 5, [10 * H, 12 * H]);
    mergeHolderPair(pairs, token, "1only", 11 * H + 1, [11 * H]);
    const messages = holdersTouchedMessages(pairs, 13 * H);
    expect(messages.map((m) => [m.token_id.slice(0, 1), m.pairs.length])).toEqual([
      ["0", PAIRS_PER_MESSAGE],
      ["0", PAIRS_PER_MESSAGE],
      ["0", 5],
      ["c", 1],
    ]);
    expect(messages[3]?.pairs).toEqual([
      { address: "1only", t0: 10 * H + 5, hours: [10 * H, 11 * H, 12 * H] },
    ]);
    // Through the codec (schema id 6) and back into one map: the same pairs, t0s and hours.
    const merged: HolderPairs = new Map();
    for (const m of messages) {
      const bytes = codecs.holdersTouched.encode(m);
      expect(bytes.readUInt32BE(1)).toBe(6);
      const back = codecs.holdersTouched.decode(bytes);
      expect(back).toEqual(m);
      for (const p of back.pairs) mergeHolderPair(merged, back.token_id, p.address, p.t0, p.hours);
    }
    expect(merged).toEqual(pairs);
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
