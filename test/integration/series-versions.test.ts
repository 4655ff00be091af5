/**
 * Over Kafka the events of different chains arrive on different partitions, so a retraction can carry
 * a smaller seq than facts of another chain already stored in the same bucket (the `all` instances).
 * Every recompute must still replace what an earlier one wrote: these cases feed the writer such
 * out-of-order seqs directly and compare every scale with the facts left on the main chain.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventsMessage } from "../../lib/events/wire.ts";
import { refreshVersionClock } from "../../lib/series/clock.ts";
import { instanceIdOf } from "../../lib/series/definition.ts";
import { factsOfMessage, insertFacts, retractFacts, type SeriesTouched } from "../../lib/series/facts.ts";
import { recomputeSeries } from "../../lib/series/recompute.ts";
import type { SeriesDeps } from "../../lib/series/settings.ts";
import { createObjectStore } from "../../lib/stores/object-store.ts";
import { openTestCh, quietLog, type TestCh } from "../helpers/stores.ts";

const T0 = Date.UTC(2026, 0, 5, 10, 0, 0);
const ALL_BLOCKS = instanceIdOf("chain-blocks", { chain_index: "all" });
const CHAIN0_BLOCKS = instanceIdOf("chain-blocks", { chain_index: "0" });
const ALL_REWARDS = instanceIdOf("chain-mining-rewards", { chain_index: "all" });

function coinbaseBlock(chain: number, hash: string, ts: number, seq: number, amount: string): EventsMessage {
  return {
    kind: "block",
    chain_index: chain,
    block_hash: hash,
    block_height: 1,
    block_timestamp: ts,
    seq,
    offloaded: [],
    events: [
      {
        id: `${hash.slice(0, 16)}-0`,
        tx_id: hash,
        is_main: true,
        category: "mining",
        sub_kind: "coinbase",
        type: "reward",
        from: "",
        to: "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH",
        with: "",
        token_id: "0".repeat(64),
        amount,
        dapp_id: "alephium",
        payload_json: "{}",
      } as never,
    ],
  };
}

/** Applies messages as the series processor does (one batch each). */
async function apply(deps: SeriesDeps, messages: EventsMessage[]) {
  for (const m of messages) {
    const touched: SeriesTouched = new Map();
    if (m.kind === "block") await insertFacts(deps.ch, factsOfMessage(m), touched);
    else await retractFacts(deps.ch, { block_hash: m.block_hash, seq: m.seq }, touched);
    await recomputeSeries(deps, touched);
  }
}

async function points(t: TestCh, instance: string) {
  const rows = await t.ch.query<{ scale: string; t: string; key: string; value: string }>(
    "test_points",
    `SELECT scale, toString(t) AS t, key, value FROM series_points FINAL
     WHERE instance_id = {id:String} AND deleted = 0 ORDER BY scale, t, key`,
    { id: instance },
  );
  return rows.map((r) => `${r.scale} ${Number(r.t) - T0} ${r.key}=${r.value}`);
}

async function lastSeen(t: TestCh, instance: string) {
  const rows = await t.ch.query<{ l: string }>(
    "test_last_seen",
    "SELECT toString(last_seen_at) AS l FROM series_instances FINAL WHERE instance_id = {id:String}",
    { id: instance },
  );
  return Number(rows[0]?.l ?? -1);
}

describe("series: recomputes win over earlier writes whatever the seq order", () => {
  let t: TestCh;
  let deps: SeriesDeps;
  beforeAll(async () => {
    t = await openTestCh();
    deps = {
      ch: t.ch,
      objects: createObjectStore({ dir: mkdtempSync(join(tmpdir(), "series-v-")) }),
      settings: { retentionMs: 1000 * 86_400_000, pageDays: 1, segmentPoints: 240, rawSegmentMs: 3_600_000 },
      log: quietLog,
    };
  });
  afterAll(async () => t?.close());

  it("a retraction with a smaller seq than another chain's block in the bucket lowers the count", async () => {
    const a = coinbaseBlock(0, "a".repeat(64), T0 + 1_000, 2_000_000_000_100, "3");
    const b = coinbaseBlock(1, "b".repeat(64), T0 + 2_000, 2_000_000_000_150, "5");
    await apply(deps, [a, b]);
    expect(await points(t, ALL_BLOCKS)).toEqual([
      "0 1000 blocks=1",
      "0 2000 blocks=1",
      "1d -36000000 blocks=2",
      "1h 0 blocks=2",
      "1m 0 blocks=2",
    ]);
    // Chain 0's retraction was sequenced before chain 1's block, and is consumed after it.
    await apply(deps, [{ ...a, kind: "retraction", seq: 2_000_000_000_120 } as EventsMessage]);
    expect(await points(t, ALL_BLOCKS)).toEqual([
      "0 2000 blocks=1",
      "1d -36000000 blocks=1",
      "1h 0 blocks=1",
      "1m 0 blocks=1",
    ]);
    expect(await lastSeen(t, CHAIN0_BLOCKS)).toBe(0);
    expect(await points(t, ALL_REWARDS)).toEqual([
      "0 2000 rewards=5",
      "1d -36000000 rewards=5",
      "1h 0 rewards=5",
      "1m 0 rewards=5",
    ]);
    // The replacement block of chain 0, then a replay of everything: the same state.
    const a2 = coinbaseBlock(0, "c".repeat(64), T0 + 1_500, 2_000_000_000_130, "7");
    await apply(deps, [a2]);
    expect(await lastSeen(t, CHAIN0_BLOCKS)).toBe(T0 + 1_500);
    const once = await points(t, ALL_REWARDS);
    expect(once).toEqual([
      "0 1500 rewards=7",
      "0 2000 rewards=5",
      "1d -36000000 rewards=12",
      "1h 0 rewards=12",
      "1m 0 rewards=12",
    ]);
    await apply(deps, [a, b, { ...a, kind: "retraction", seq: 2_000_000_000_120 } as EventsMessage, a2]);
    expect(await points(t, ALL_REWARDS)).toEqual(once);
  });

  it("after a rebalance, an instance taken over from a replica whose clock ran ahead is recomputed above its rows", async () => {
    // series-recompute replicas on two machines: the instance's previous owner wrote the minute, hour and day that
    // the next block shares with a clock an hour ahead (and a wrong count, to tell its rows apart).
    const day = T0 + 10 * 86_400_000;
    const CHAIN2_BLOCKS = instanceIdOf("chain-blocks", { chain_index: "2" });
    const staleWrite = async () =>
      t.ch.command(
        "test_stale_points",
        `INSERT INTO series_points SELECT * REPLACE ('999' AS value, {v:UInt64} AS version)
         FROM series_points FINAL WHERE instance_id = {id:String} AND scale != '0'`,
        { id: CHAIN2_BLOCKS, v: ((BigInt(Date.now()) + 3_600_000n) * 1_000_000n).toString() },
      );
    await apply(deps, [coinbaseBlock(2, "d".repeat(64), day + 1_000, 2_000_000_000_200, "1")]);
    await staleWrite();
    // Without reading the stored versions again, this replica's clock writes below them: the stale rows stay.
    await apply(deps, [coinbaseBlock(2, "e".repeat(64), day + 2_000, 2_000_000_000_210, "1")]);
    expect(await points(t, CHAIN2_BLOCKS)).toContain("1m 864000000 blocks=999");
    // What series-recompute does when its group rebalanced: the next recompute writes above every stored version.
    refreshVersionClock(t.ch);
    await apply(deps, [coinbaseBlock(2, "f".repeat(64), day + 3_000, 2_000_000_000_220, "1")]);
    expect(await points(t, CHAIN2_BLOCKS)).toEqual([
      "0 864001000 blocks=1",
      "0 864002000 blocks=1",
      "0 864003000 blocks=1",
      "1d 828000000 blocks=3",
      "1h 864000000 blocks=3",
      "1m 864000000 blocks=3",
    ]);
  });
});
