// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * The normalize processor's decoder state on a real Postgres: operator `decoder_contracts` rows, Elexium-style
 * factories (`stable_field`, `liquidity_layout`), kinds learned from a parent saved before the events are
 * published, the decode-error counter, and the code-hash guard (a migrated contract's events refused until its
 * new layout is registered).
 */
import { blake2b } from "@noble/hashes/blake2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RawBlock } from "../../lib/chain/types.ts";
import type { EventsMessage } from "../../lib/events/wire.ts";
import { createMetrics } from "../../lib/metrics.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import type { RawBlockMessage } from "../../pipeline/messages.ts";
import { loadNormalizeState, normalizeBatch } from "../../pipeline/processors/normalize.ts";
import { block, CREATED_G0, caddr, cid, ev, tx } from "../fixtures/normalize/dapp-blocks.ts";
import { createTestApp } from "../helpers/app.ts";
import { openTestCh, openTestPg, type TestPg } from "../helpers/stores.ts";

/** A raw block as ingest publishes it. */
const messageOf = (raw: RawBlock, seq: number): RawBlockMessage => ({
  kind: "block",
  chain_index: raw.chainIndex,
  hash: raw.block.hash,
  height: raw.block.height,
  timestamp: raw.block.timestamp,
  seq,
  block_json: JSON.stringify(raw.block),
  events_json: JSON.stringify(raw.events),
});

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
    const message = messageOf(raw, 1);
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

  it("saves a Linx market before publishing its events, and a restart gives its later events the market's token", async () => {
    const LINX = "vQcfta4Mm32L7Xsb7tYF2rrR76JWxjNv3oia8GPK6x71";
    const market = cid("pg-linx-market");
    const loan = cid("pg-linx-loan");
    const t0 = tx("pg-linx-create", { from: "alice", script: true });
    const t1 = tx("pg-linx-supply", { from: "alice", script: true });
    const supply = (t: ReturnType<typeof tx>) =>
      ev(t, LINX, 10, [
        ["ByteVec", market],
        ["Address", caddr("alice")],
        ["Address", caddr("bob")],
        ["U256", "77"],
        ["U256", "70"],
      ]);
    const created = block(
      "pg-linx-1",
      [t0],
      [
        ev(t0, LINX, 4, [
          ["ByteVec", market],
          ["ByteVec", cid("pg-linx-market-contract")],
          ["ByteVec", loan],
          ["ByteVec", cid("pg-linx-collateral")],
          ["ByteVec", cid("pg-linx-oracle")],
          ["ByteVec", cid("pg-linx-irm")],
          ["U256", "1"],
        ]),
      ],
    );
    const published: EventsMessage[] = [];
    const deps = {
      pg: store.pg,
      metrics: createMetrics(),
      config: { PAYLOAD_MAX_BYTES: 100_000, DAPP_DECODERS: true },
      codecs: { events: { encode: (m: EventsMessage) => m } },
      bus: {
        publish: async (_topic: string, records: { value: EventsMessage }[]) => {
          const rows = await store.pg.query(
            "t",
            "SELECT loan_token FROM lending_markets WHERE market_id = $1",
            [market],
          );
          expect(rows).toEqual([{ loan_token: loan }]);
          published.push(...records.map((r) => r.value));
        },
      },
    } as unknown as PipelineDeps;
    await normalizeBatch([messageOf(created, 10)], deps, await loadNormalizeState(store.pg));
    // A restarted processor: the market comes from PostgreSQL.
    await normalizeBatch(
      [messageOf(block("pg-linx-2", [t1], [supply(t1)]), 11)],
      deps,
      await loadNormalizeState(store.pg),
    );
    const events = published.flatMap((m) => (m.kind === "block" ? m.events : []));
    expect(events.find((e) => e.tx_id === t1.unsigned.txId && e.contract_address === LINX)).toMatchObject({
      sub_kind: "supply",
      token_id: loan,
      amount: "77",
    });
  });

  it("guards code hashes: a migrated MyOnion router's later events stay generic until its new layout is registered", async () => {
    const ROUTER = "29c4EEH1aZr5HDumULCFp1eJN1bWftojCGepqTpovyQhd";
    const newCode = "0a0b0c0d";
    const newHash = Buffer.from(blake2b(Buffer.from(newCode, "hex"), { dkLen: 32 })).toString("hex");
    const trade = (t: ReturnType<typeof tx>) =>
      ev(t, ROUTER, 5, [
        ["ByteVec", cid("meme")],
        ["Address", caddr("trader")],
        ["ByteVec", "00".repeat(32)],
        ["U256", "100"],
        ["U256", "5000"],
        ["U256", "1"],
        ["U256", "1"],
        ["Address", caddr("royalty")],
      ]);
    const t0 = tx("guard-before", { from: "alice", script: true });
    const t1 = tx("guard-migrate", { from: "alice", script: true });
    const t2 = tx("guard-after", { from: "alice", script: true });
    const t3 = tx("guard-next-block", { from: "alice", script: true });
    const first = block(
      "guard-1",
      [t0, t1, t2],
      [
        trade(t0),
        ev(t1, ROUTER, 3, [
          ["Address", caddr("owner")],
          ["ByteVec", newCode],
        ]),
        trade(t2),
      ],
    );
    const later = block("guard-2", [t3], [trade(t3)]);
    // A later block (the fixtures' blocks share one time).
    const second = { ...later, block: { ...later.block, timestamp: later.block.timestamp + 64_000 } };
    const published: EventsMessage[] = [];
    const metrics = createMetrics();
    const deps = {
      pg: store.pg,
      metrics,
      config: { PAYLOAD_MAX_BYTES: 100_000, DAPP_DECODERS: true },
      codecs: { events: { encode: (m: EventsMessage) => m } },
      bus: {
        publish: async (_t: string, records: { value: EventsMessage }[]) =>
          void published.push(...records.map((r) => r.value)),
      },
    } as unknown as PipelineDeps;
    const routerEvents = () =>
      published
        .flatMap((m) => (m.kind === "block" ? m.events : []))
        .filter((e) => e.contract_address === ROUTER && e.contract_event_index === 5);
    await normalizeBatch([messageOf(first, 10)], deps, await loadNormalizeState(store.pg));
    // A restart between the blocks: the live code hash is read back from Postgres.
    await normalizeBatch([messageOf(second, 11)], deps, await loadNormalizeState(store.pg));
    const [before, after, next] = routerEvents();
    expect(before).toMatchObject({ category: "launchpad", sub_kind: "buy" });
    for (const e of [after!, next!]) {
      expect(e).toMatchObject({ category: "contract", type: "undecoded" });
      expect(JSON.parse(e.payload_json)).toMatchObject({
        decoder: "myonion-router",
        decode_error: "code_hash_changed",
        code_hash_expected: "333646eb5fd44384550d0291de7a624dd300494a000082bf4cd82761e6f57154",
        code_hash_live: newHash,
      });
    }
    expect((await metrics.codeHashRefusals.get()).values).toEqual([
      { labels: { contract_address: ROUTER }, value: 2 },
    ]);
    const saved = await store.pg.query<{ code_hash: string }>(
      "t",
      "SELECT code_hash FROM normalize_contract_dapps WHERE address = $1",
      [ROUTER],
    );
    expect(saved).toEqual([{ code_hash: newHash }]);
    // A reprocess of the migrating block (state read back with the live hash) still decodes what came before it.
    published.length = 0;
    await normalizeBatch([messageOf(first, 13)], deps, await loadNormalizeState(store.pg));
    const [again, againAfter] = routerEvents();
    expect(again).toMatchObject({ category: "launchpad", sub_kind: "buy" });
    expect(JSON.parse(againAfter!.payload_json)).toMatchObject({ decode_error: "code_hash_changed" });
    // /status names the contract.
    const ch = await openTestCh();
    const api = await createTestApp({ stores: { pg: store, ch } });
    const statusOf = async () => (await api.app.inject({ url: "/status" })).json().code_hash_changes;
    try {
      expect(await statusOf()).toEqual([
        {
          contract_address: ROUTER,
          dapp_id: "myonion",
          label: "OnionRouter",
          expected_code_hash: "333646eb5fd44384550d0291de7a624dd300494a000082bf4cd82761e6f57154",
          live_code_hash: newHash,
          since_ts: first.block.timestamp,
          source: "migration",
        },
      ]);
      // The operator registers the new layout (the same decoder, the new code): the router decodes again.
      await store.pg.query(
        "t",
        `INSERT INTO decoder_contracts (contract_address, dapp_id, decoder, label, code_hash)
       VALUES ($1, 'myonion', 'myonion-router', 'OnionRouter v2', $2)`,
        [ROUTER, newHash],
      );
      published.length = 0;
      await normalizeBatch([messageOf(second, 12)], deps, await loadNormalizeState(store.pg));
      expect(routerEvents()[0]).toMatchObject({ category: "launchpad", sub_kind: "buy" });
      expect(await statusOf()).toEqual([]);
    } finally {
      await api.close();
      await ch.close();
    }
  });
});
