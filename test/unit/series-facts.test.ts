/**
 * The series processor's facts of a block message (`factsOfMessage`): aggregated per (instance, point key) as the
 * events are read, with the instance ids and dimensions' JSON from the memoized `instanceOf`.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { BlockEventsMessage, WireEvent } from "../../lib/events/wire.ts";
import { dimensionsJson, instanceOf } from "../../lib/series/definition.ts";
import { blockFacts, factsOfEvent, factsOfMessage } from "../../lib/series/facts.ts";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const TOKEN = "ab".repeat(32);

function event(n: number, fields: Partial<WireEvent>): WireEvent {
  return {
    id: `e${n.toString().padStart(3, "0")}`,
    tx_id: `t${n}`,
    tx_index: n,
    event_index: 0,
    dapp_id: "",
    category: "transfer",
    sub_kind: "send",
    type: "transfer",
    is_main: false,
    from: "",
    to: "",
    with: "",
    token_address: "",
    token_id: "",
    amount: "0",
    contract_address: "",
    contract_event_index: null,
    payload_ref: null,
    payload_json: "{}",
    ...fields,
  } as WireEvent;
}

const message = (events: WireEvent[]): BlockEventsMessage => ({
  kind: "block",
  chain_index: 3,
  block_hash: "b".repeat(64),
  block_height: 10,
  block_timestamp: 1_700_000_000_000,
  seq: 42,
  events,
  offloaded: [],
});

describe("instanceOf", () => {
  it("is the SHA-256 of the series id and the sorted name=value pairs, whatever the keys' order", () => {
    expect(instanceOf("s", { chain_index: "3" }).id).toBe(sha("s\nchain_index=3"));
    expect(instanceOf("s", { chain_index: "all" }).id).toBe(sha("s\nchain_index=all"));
    // The same value under another series or another dimension name is another instance.
    expect(instanceOf("t", { chain_index: "3" }).id).toBe(sha("t\nchain_index=3"));
    expect(instanceOf("s", { token_id: "3" }).id).toBe(sha("s\ntoken_id=3"));
    const two = instanceOf("s", { b: "2", a: "1" });
    expect(two.id).toBe(sha("s\na=1\nb=2"));
    expect(instanceOf("s", { a: "1", b: "2" })).toBe(two);
    expect(two.json).toBe('{"a":"1","b":"2"}');
    expect(instanceOf("s", {}).id).toBe(sha("s"));
    expect(instanceOf("s", { chain_index: "3" }).json).toBe(dimensionsJson({ chain_index: "3" }));
  });
});

describe("factsOfMessage", () => {
  const m = message([
    event(1, { is_main: true, from: "alice", token_id: TOKEN, amount: "5" }),
    event(2, { is_main: true, from: "bob", token_id: TOKEN, amount: "7" }),
    event(3, { is_main: true, from: "alice", category: "contract", sub_kind: "event", type: "undecoded" }),
  ]);
  const rows = factsOfMessage(m);
  const row = (seriesId: string, dims: Record<string, string>, key: string) =>
    rows.find((r) => r.instance_id === instanceOf(seriesId, dims).id && r.key === key);

  it("counts, sums and collects members per instance and point key of the block", () => {
    expect(row("token-transfers", { token_id: TOKEN }, "transfers")?.value).toBe("2");
    expect(row("token-transfers", { token_id: TOKEN }, "volume")?.value).toBe("12");
    for (const chain of ["3", "all"]) {
      expect(row("chain-transactions", { chain_index: chain }, "transactions")?.value).toBe("3");
      expect(row("chain-active-addresses", { chain_index: chain }, "addresses")?.members).toEqual([
        "alice",
        "bob",
      ]);
    }
    for (const r of rows) {
      expect(r).toMatchObject({
        block_hash: m.block_hash,
        ts: m.block_timestamp,
        main_chain: true,
        version: 42,
      });
    }
    // One row per (instance, point key).
    expect(new Set(rows.map((r) => `${r.instance_id}/${r.key}`)).size).toBe(rows.length);
  });

  it("equals the facts of each event aggregated per block", () => {
    const perEvent = m.events.flatMap((w) =>
      factsOfEvent(
        {
          ...w,
          chain_index: m.chain_index,
          block_hash: m.block_hash,
          timestamp: m.block_timestamp,
          payload: () => JSON.parse(w.payload_json) as Record<string, unknown>,
        },
        m.seq,
      ),
    );
    expect(perEvent.length).toBeGreaterThan(rows.length);
    expect(factsOfMessage(m)).toEqual(blockFacts(perEvent));
  });
});
