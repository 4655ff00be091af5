// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * The normalize processor's decoder state on a real Postgres: operator `decoder_contracts` rows, Elexium-style
 * factories (`stable_field`, `liquidity_layout`), kinds learned from a parent saved before the events are
 * published, and the decode-error counter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventsMessage } from "../../lib/events/wire.ts";
import { createMetrics } from "../../lib/metrics.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import type { RawBlockMessage } from "../../pipeline/messages.ts";
import { loadNormalizeState, normalizeBatch } from "../../pipeline/processors/normalize.ts";
import { block, CREATED_G0, caddr, cid, ev, tx } from "../fixtures/normalize/dapp-blocks.ts";
import { openTestPg, type TestPg } from "../helpers/stores.ts";

const HUB = caddr("devnet-hub");
const ROOM = caddr("devnet-room");
const ORACLE = caddr("devnet-oracle");
const FACTORY = caddr("devnet-elexium");

describe("normalize processor: decoder kinds", () => {
  let store: TestPg;
  beforeAll(async () => {
    store = await openTestPg();
    await store.pg.query(
      "t",
      `INSERT INTO decoder_contracts (contract_address, dapp_id, decoder, label) VALUES
         ($1, 'chainreaction', 'guessing-hub', 'devnet hub'), ($2, 'dia-oracle', 'dia-price', 'devnet oracle'),
         ($3, 'x', 'no-such-kind', 'ignored')`,
      [HUB, ORACLE, caddr("bad-kind")],
    );
    await store.pg.query(
      "t",
      `INSERT INTO dex_factories (factory_address, dapp_id, created_event_index, token0_field, token1_field, pool_field,
         swap_event_index, mint_event_index, burn_event_index, stable_field, liquidity_layout)
       VALUES ($1, 'elexium', 0, 0, 1, 3, 3, 1, 2, 2, 'velodrome')`,
      [FACTORY],
    );
  });
  afterAll(async () => store?.close());

  it("loads operator rows (unknown kinds ignored) and registered factories with their layout", async () => {
    const state = await loadNormalizeState(store.pg);
    expect(state.decoders.kindOf(HUB)).toBe("guessing-hub");
    expect(state.decoders.kindOf(ORACLE)).toBe("dia-price");
    expect(state.decoders.kindOf(caddr("bad-kind"))).toBeUndefined();
    expect(state.dapps.dappOf(ORACLE)).toBe("dia-oracle");
    expect(state.factories.find((f) => f.factory_address === FACTORY)).toMatchObject({
      stable_field: 2,
      liquidity_layout: "velodrome",
      mint_event_index: 1,
      burn_event_index: 2,
    });
  });

  it("saves a room's kind before publishing its decoded events, keeps pools' stable flag, counts decode errors", async () => {
    const state = await loadNormalizeState(store.pg);
    const t0 = tx("pg-room", { from: "alice", script: true });
    const t1 = tx("pg-pool", { from: "alice", script: true });
    const poolId = cid("devnet-stable-pool");
    const raw = block(
      "pg",
      [t0, t1],
      [
        ev(t0, CREATED_G0, -1, [
          ["Address", ROOM],
          ["Address", HUB],
          ["ByteVec", ""],
        ]),
        ev(t0, ROOM, 0, [
          ["ByteVec", cid("devnet-room")],
          ["Address", caddr("x")],
          ["U256", "7"],
        ]),
        ev(t0, ORACLE, 1, [["ByteVec", "00"]]),
        ev(t1, FACTORY, 0, [
          ["ByteVec", cid("ta")],
          ["ByteVec", cid("tb")],
          ["Bool", true],
          ["ByteVec", poolId],
          ["U256", "1"],
        ]),
      ],
    );
    const message: RawBlockMessage = {
      kind: "block",
      chain_index: raw.chainIndex,
      hash: raw.block.hash,
      height: raw.block.height,
      timestamp: raw.block.timestamp,
      seq: 1,
      block_json: JSON.stringify(raw.block),
      events_json: JSON.stringify(raw.events),
    };
    const published: EventsMessage[] = [];
    const metrics = createMetrics();
    const deps = {
      pg: store.pg,
      metrics,
      config: { PAYLOAD_MAX_BYTES: 100_000, DAPP_DECODERS: true },
      codecs: { events: { encode: (m: EventsMessage) => m } },
      bus: {
        publish: async (_topic: string, records: { value: EventsMessage }[]) => {
          // The kind must already be saved when the events go out.
          const rows = await store.pg.query<{ decoder: string | null }>(
            "t",
            "SELECT decoder FROM normalize_contract_dapps WHERE address = $1",
            [ROOM],
          );
          expect(rows).toEqual([{ decoder: "guessing-room" }]);
          published.push(...records.map((r) => r.value));
        },
      },
    } as unknown as PipelineDeps;
    await normalizeBatch([message], deps, state);
    const events = published.flatMap((m) => (m.kind === "block" ? m.events : []));
    expect(events.find((e) => e.contract_address === ROOM)).toMatchObject({
      category: "game",
      sub_kind: "room_joined",
    });
    const refused = events.find((e) => e.contract_address === ORACLE)!;
    expect(JSON.parse(refused.payload_json)).toMatchObject({ decoder: "dia-price" });
    expect((await metrics.decodeErrors.get()).values).toEqual([
      { labels: { decoder: "dia-price", event_index: "1" }, value: 1 },
    ]);
    const pools = await store.pg.query<{ stable: boolean | null; factory_address: string }>(
      "t",
      "SELECT stable, factory_address FROM dex_pools",
    );
    expect(pools).toEqual([{ stable: true, factory_address: FACTORY }]);
    // A restart reads back the learned kind and the pool's flag and layout.
    const again = await loadNormalizeState(store.pg);
    expect(again.decoders.kindOf(ROOM)).toBe("guessing-room");
    expect(again.pools.poolOf(caddr("devnet-stable-pool"))).toMatchObject({
      stable: true,
      liquidity_layout: "velodrome",
      swap_event_index: 3,
    });
  });
});
