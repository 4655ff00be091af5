/**
 * Address, token and transaction reads (`events_by_key`, `event_ids_by_tx` then `events`) resolve what the
 * writer stores as `events FINAL` does: replays, a rewrite that moves and drops events, a stale replay, and an
 * orphaned block whose sibling gives the same ids to another transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventsReader, type EventFilters, type StoredRow } from "../../lib/events/reader.ts";
import type { BlockEventsMessage, EventsMessage } from "../../lib/events/wire.ts";
import { blockMessage, writeMessages } from "../helpers/dapp-events.ts";
import { openTestCh, type TestCh } from "../helpers/stores.ts";

const T = 1752573600000;
const transfer = (from: string, to: string) => ({
  dapp_id: "alephium",
  category: "transfer",
  sub_kind: "send",
  type: "alph",
  from,
  to,
  payload: {},
});

/** The message with a given seq and token address on the events of `token` (by index). */
function shaped(m: BlockEventsMessage, seq: number, token: Record<number, string> = {}): BlockEventsMessage {
  return { ...m, seq, events: m.events.map((e, i) => ({ ...e, token_address: token[i] ?? "" })) };
}

describe("address, token and transaction reads", () => {
  let ch: TestCh;
  // b1: tx1 (A→B in token X, A→C), tx2 (D→A). Rewritten: A→C goes to E, tx2's event is dropped.
  const b1 = shaped(
    blockMessage(0, 10, T, [[transfer("1A", "1B"), transfer("1A", "1C")], [transfer("1D", "1A")]]),
    1,
    {
      0: "tokX",
    },
  );
  const b1Rewritten: BlockEventsMessage = {
    ...b1,
    seq: 4,
    events: [b1.events[0]!, { ...b1.events[1]!, to: "1E" }],
  };
  // b2 is orphaned; its sibling b3 (same chain, height and time: the same ids) holds another transaction.
  const b2 = shaped(blockMessage(0, 11, T + 1000, [[transfer("1A", "1F")]]), 2, { 0: "tokX" });
  const b3 = shaped(blockMessage(0, 11, T + 1000, [[transfer("1A", "1G")]]), 6, { 0: "tokX" });
  const [tx1, tx2] = [b1.events[0]!.tx_id, b1.events[2]!.tx_id];
  const [tx3, tx4] = [b2.events[0]!.tx_id, b3.events[0]!.tx_id];

  beforeAll(async () => {
    ch = await openTestCh();
    const retraction: EventsMessage = {
      kind: "retraction",
      chain_index: 0,
      block_hash: b2.block_hash,
      block_height: 11,
      block_timestamp: T + 1000,
      seq: 5,
    };
    // One message per batch, as the sink would meet them over time; b1 is replayed before and after its
    // rewrite (the later one stale).
    for (const m of [b1, b1, b2, b1Rewritten, retraction, b3, b1]) await writeMessages(ch.ch, [m]);
  });
  afterAll(async () => ch?.close());

  const reader = () => createEventsReader(ch.ch);
  /** Served events as "block letter tx→to": which block, transaction and version each document is. */
  const describeRows = (rows: StoredRow[]) =>
    rows.map((r) => {
      const e = JSON.parse(r.doc) as { id: string; block_hash: string; tx_id: string; to: string };
      const block = [b1, b2, b3].findIndex((b) => b.block_hash === e.block_hash) + 1;
      return `b${block} ${[tx1, tx2, tx3, tx4].indexOf(e.tx_id) + 1}→${e.to}`;
    });
  const page = async (filters: EventFilters, poll = false) =>
    describeRows(await reader().page(filters, { limit: 50, poll, ...(poll ? { afterId: "0" } : {}) }, "9"));

  it("holds the rows the reads resolve (versions, a retraction, a sibling block)", async () => {
    const [n] = await ch.ch.query<{ all: string; main: string; txs: string }>(
      "t",
      `SELECT (SELECT count() FROM events_by_key FINAL) AS all, (SELECT countIf(main_chain) FROM events_by_key FINAL) AS main,
              (SELECT count() FROM event_ids_by_tx FINAL) AS txs`,
    );
    // Keys of b1's first event (1A, 1B, tokX), of its second (1A, 1E, and 1C retracted), of tx2's dropped one
    // (1D, 1A, retracted), of b2 (1A, 1F, tokX, retracted) and of b3 (1A, 1G, tokX): the reads resolve them.
    expect([Number(n?.all), Number(n?.main)]).toEqual([14, 8]);
    // tx1's 2 ids, tx2's dropped one, and the one id of b2 and b3 under each of tx3 and tx4.
    expect(Number(n?.txs)).toBe(5);
  });

  it("address reads serve the newest main-chain row of each event, list and poll alike", async () => {
    const a = ["b1 1→1B", "b1 1→1E", "b3 4→1G"];
    expect(await page({ address: "1A" })).toEqual([...a].reverse());
    expect(await page({ address: "1A" }, true)).toEqual(a);
    expect(await page({ address: "1B" })).toEqual(["b1 1→1B"]);
    // Moved away by the rewrite, dropped by it, orphaned.
    expect(await page({ address: "1C" })).toEqual([]);
    expect(await page({ address: "1D" })).toEqual([]);
    expect(await page({ address: "1F" })).toEqual([]);
    expect(await page({ address: "1E" })).toEqual(["b1 1→1E"]);
    expect(await page({ address: "1G" })).toEqual(["b3 4→1G"]);
    expect(await page({ address: "1A", token_address: "tokX" })).toEqual(["b3 4→1G", "b1 1→1B"]);
    // One event per page: the cursor walks the same rows.
    const walked: string[] = [];
    for (let after = "0"; ; ) {
      const rows = await reader().page({ address: "1A" }, { limit: 1, poll: true, afterId: after }, "9");
      if (rows.length === 0) break;
      walked.push(...describeRows(rows));
      after = rows[0]!.id;
    }
    expect(walked).toEqual(a);
  });

  it("token reads drop the orphaned block's rows and keep its sibling's", async () => {
    expect(await page({ token_address: "tokX" })).toEqual(["b3 4→1G", "b1 1→1B"]);
    expect(await page({ token_address: "tokX" }, true)).toEqual(["b1 1→1B", "b3 4→1G"]);
  });

  it("transaction reads serve each transaction's own main-chain rows, newest version", async () => {
    const txs = async (ids: string[]) => describeRows(await reader().byTransactions(ids));
    expect(await txs([tx1])).toEqual(["b1 1→1B", "b1 1→1E"]);
    expect(await txs([tx2])).toEqual([]);
    // tx3's id is also b3's event of tx4: not served under tx3.
    expect(await txs([tx3])).toEqual([]);
    expect(await txs([tx4])).toEqual(["b3 4→1G"]);
    expect(await txs([tx1, tx2, tx3, tx4])).toEqual(["b1 1→1B", "b1 1→1E", "b3 4→1G"]);
  });

  it("every read equals the same filter over events FINAL", async () => {
    const truth = async (where: string) =>
      describeRows(
        await ch.ch.query<StoredRow>(
          "t",
          `SELECT id, block_hash, main_chain, toString(version) AS version, payload_ref, doc FROM events FINAL
           WHERE main_chain AND chain_index != 17 AND ${where} ORDER BY id`,
        ),
      );
    for (const a of ["1A", "1B", "1C", "1D", "1E", "1F", "1G"])
      expect(await page({ address: a }, true)).toEqual(await truth(`(from = '${a}' OR to = '${a}')`));
    expect(await page({ token_address: "tokX" }, true)).toEqual(await truth("token_address = 'tokX'"));
    for (const tx of [tx1, tx2, tx3, tx4])
      expect(describeRows(await reader().byTransactions([tx]))).toEqual(await truth(`tx_id = '${tx}'`));
  });
});
