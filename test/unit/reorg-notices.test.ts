/** Reorg notices (lib/events/notices.ts): the id rule and which messages of a batch get a notice. */
import { describe, expect, it } from "vitest";
import { eventId, idCeiling } from "../../lib/chain/types.ts";
import {
  NOTICE_CHAIN_INDEX,
  noticeId,
  noticeKey,
  noticePayload,
  planNotices,
  type StoredBlock,
} from "../../lib/events/notices.ts";
import type { BlockEventsMessage, EventsMessage, EventsRetractionMessage } from "../../lib/events/wire.ts";

const T = 1_700_000_000_000;
const SEQ = 1_764_000_000_123;

function block(chain: number, hash: string, ts: number, seq: number, ids: string[]): BlockEventsMessage {
  return {
    kind: "block",
    chain_index: chain,
    block_hash: hash,
    block_height: 10,
    block_timestamp: ts,
    seq,
    offloaded: [],
    events: ids.map((id) => ({ id }) as BlockEventsMessage["events"][number]),
  };
}
function retraction(chain: number, hash: string, ts: number, seq: number): EventsRetractionMessage {
  return {
    kind: "retraction",
    chain_index: chain,
    block_hash: hash,
    block_height: 10,
    block_timestamp: ts,
    seq,
  };
}

describe("notice ids", () => {
  it("sort above every id at or before the chain's durable time, and below the next ms", () => {
    const id = noticeId(T, SEQ, 3);
    expect(id > eventId(T, 15, 9_999_999_999, 99_999, 9999)).toBe(true);
    expect(id > idCeiling(T)).toBe(true); // above every ceiling a reader used with watermark ≤ T
    expect(id > eventId(T + 1, 16, 9_999_999_999, 99_999, 9999)).toBe(true); // after market ids of T + 1
    expect(id < eventId(T + 2, 0, 0, 0, 0)).toBe(true);
    expect(id.slice(14, 16)).toBe(String(NOTICE_CHAIN_INDEX));
    expect(id).toHaveLength(eventId(T, 0, 0, 0, 0).length);
  });

  it("are unique per message and ordered by seq within one durable time", () => {
    const ids = [SEQ, SEQ + 1, SEQ + 99_999, SEQ + 100_000, SEQ * 10].map((s) => noticeId(T, s, 0));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(noticeId(T, SEQ, 0)).not.toBe(noticeId(T, SEQ, 1));
    expect(noticeId(T, SEQ, 15) < noticeId(T, SEQ + 1, 0)).toBe(true);
    expect(() => noticeId(T, 1e15, 0)).toThrow(/seq/);
    expect(() => noticeId(T, 1.5, 0)).toThrow(/seq/);
  });
});

describe("planNotices", () => {
  const durable = new Map([[0, T]]);
  const none = new Map<string, string>();
  const stored = (entries: [string, Omit<StoredBlock, "version"> & { version?: number }][]) =>
    new Map(entries.map(([hash, b]) => [hash, { version: 1, ...b }]));

  it("gives a retraction notice for served main-chain rows, a late_block notice for their replacement", () => {
    const messages: EventsMessage[] = [
      retraction(0, "x", T - 10, SEQ),
      block(0, "y", T - 5, SEQ + 1, ["b1", "b2"]),
      block(0, "z", T + 5, SEQ + 2, ["c1"]), // above the durable time: never served, no notice
    ];
    const plan = planNotices(messages, durable, none, stored([["x", { ids: ["a1", "a2"], main: true }]]));
    expect(plan.map((n) => [n.kind, n.message.block_hash, n.ids, n.recorded])).toEqual([
      ["retraction", "x", ["a1", "a2"], false],
      ["late_block", "y", ["b1", "b2"], false],
    ]);
    expect(plan.map((n) => n.id)).toEqual([noticeId(T, SEQ, 0), noticeId(T, SEQ + 1, 0)]);
  });

  it("gives none for a reprocessed block, an already retracted block, or a chain without progress", () => {
    const plan = planNotices(
      [
        block(0, "y", T - 5, SEQ, ["b1"]),
        retraction(0, "x", T - 10, SEQ + 1),
        retraction(1, "w", 5, SEQ + 2),
      ],
      durable,
      none,
      stored([
        ["y", { ids: ["b1"], main: true }],
        ["x", { ids: ["a1"], main: false }],
        ["w", { ids: ["d1"], main: true }],
      ]),
    );
    expect(plan).toEqual([]);
  });

  it("follows the batch: a block written then retracted in it, a retracted block that comes back", () => {
    const plan = planNotices(
      [
        block(0, "y", T - 5, SEQ, ["b1"]),
        retraction(0, "y", T - 5, SEQ + 1),
        retraction(0, "x", T - 9, SEQ + 2),
        block(0, "x", T - 9, SEQ + 3, ["a1"]),
      ],
      durable,
      none,
      stored([["x", { ids: ["a1"], main: true }]]),
    );
    expect(plan.map((n) => `${n.kind}:${n.message.block_hash}:${n.ids}`)).toEqual([
      "late_block:y:b1",
      "retraction:y:b1",
      "retraction:x:a1",
      "late_block:x:a1",
    ]);
  });

  it("gives none for an older message re-delivered after a newer one (a replay from the start)", () => {
    const plan = planNotices(
      [block(0, "x", T - 10, SEQ, ["a1"]), retraction(0, "y", T - 5, SEQ + 1)],
      durable,
      none,
      stored([
        ["x", { ids: ["a1"], main: false, version: SEQ + 50 }], // retracted later
        ["y", { ids: ["b1"], main: true, version: SEQ + 60 }], // came back later
      ]),
    );
    expect(plan).toEqual([]);
  });

  it("reuses a recorded notice on a replay, whatever the store says now", () => {
    const recorded = new Map([
      [noticeKey("x", SEQ, "retraction"), "recorded-x"],
      [noticeKey("y", SEQ + 1, "late_block"), "recorded-y"],
    ]);
    const later = new Map([[0, T + 1000]]); // the first pass moved the chain's progress
    const plan = planNotices(
      [retraction(0, "x", T - 10, SEQ), block(0, "y", T - 5, SEQ + 1, ["b1"])],
      later,
      recorded,
      stored([
        ["x", { ids: ["a1"], main: false }],
        ["y", { ids: ["b1"], main: true }],
      ]),
    );
    expect(plan.map((n) => [n.id, n.recorded, n.ids])).toEqual([
      ["recorded-x", true, ["a1"]],
      ["recorded-y", true, ["b1"]],
    ]);
  });

  it("builds payloads that name the block and its ids", () => {
    const [r, l] = planNotices(
      [retraction(0, "x", T - 10, SEQ), block(0, "y", T - 5, SEQ + 1, ["b1"])],
      durable,
      none,
      stored([["x", { ids: ["a1"], main: true }]]),
    );
    expect(JSON.parse(noticePayload(r!))).toEqual({
      block_hash: "x",
      chain_index: 0,
      height: 10,
      retracted_ids: ["a1"],
    });
    expect(JSON.parse(noticePayload(l!, ['{"id":"b1"}']))).toEqual({
      block_hash: "y",
      chain_index: 0,
      height: 10,
      added_ids: ["b1"],
      events: [{ id: "b1" }],
    });
  });
});
