// Test passes: embedded and server (the whole pipeline over Kafka and PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devnetPricePairs } from "../../devnet/register.ts";
import { chainIndexOf } from "../../lib/chain/types.ts";
import { normalizeBlock } from "../../pipeline/normalize/index.ts";
import { loadNormalizeState } from "../../pipeline/processors/normalize.ts";
import { eventsStateHash, startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

describe("devnet → ingest → bus → normalize → ClickHouse → API (embedded)", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 400, confirmations: 2 });
    await p.catchUp();
  });
  afterAll(async () => p?.close());

  it("writes every confirmed main-chain block and its events", async () => {
    const [raw] = await p.ch.ch.query<{ n: string }>(
      "t",
      "SELECT count() AS n FROM raw_blocks FINAL WHERE main_chain",
    );
    let expectedBlocks = 0;
    for (let c = 0; c < 16; c++) expectedBlocks += Math.max(0, p.chain.height(c) - 2); // height 1..tip-2
    expect(Number(raw?.n)).toBe(expectedBlocks);
    const block = p.chain.mainChain(3)[5]!;
    const [counts] = await p.ch.ch.query<{ tx_count: number; event_count: number }>(
      "t",
      "SELECT tx_count, event_count FROM raw_blocks FINAL WHERE hash = {h:String}",
      { h: block.block.hash },
    );
    expect(counts).toEqual({ tx_count: block.block.transactions.length, event_count: block.events.length });
    const { rows } = await eventsStateHash(p.ch);
    expect(rows).toBeGreaterThan(expectedBlocks); // at least a coinbase per block, plus transfers etc.
  });

  it("stores exactly what the pure normalizer yields for a block", async () => {
    const block = p.chain.mainChain(0)[10]!;
    const raw = p.chain.rawBlock(block.block.hash)!;
    expect(raw.chainIndex).toBe(chainIndexOf(block.block.chainFrom, block.block.chainTo));
    // With what the normalizer knows (its saved state): pools and attributions learned from earlier blocks.
    const state = await loadNormalizeState(p.pg.pg);
    const expected = normalizeBlock(raw, {
      dapps: state.dapps,
      decoders: state.decoders,
      factories: state.factories,
      pools: state.pools,
      maxPayloadBytes: p.config.PAYLOAD_MAX_BYTES,
    }).events;
    expect(expected.length).toBeGreaterThan(0);
    const stored = await p.ch.ch.query<{ id: string; category: string; sub_kind: string }>(
      "t",
      "SELECT id, category, sub_kind FROM events FINAL WHERE block_hash = {h:String} AND main_chain ORDER BY id",
      { h: block.block.hash },
    );
    expect(stored.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(stored.map((e) => `${e.category}/${e.sub_kind}`)).toEqual(
      expected.map((e) => `${e.category}/${e.sub_kind}`),
    );
  });

  it("serves events through /events/all and /transaction/{txid}/events", async () => {
    const list = await p.api.app.inject({ url: "/events/all?limit=5" });
    expect(list.statusCode).toBe(200);
    const events = list.json().events as { id: string; tx_id: string }[];
    expect(events).toHaveLength(5);
    expect([...events].map((e) => e.id)).toEqual(
      [...events]
        .map((e) => e.id)
        .sort()
        .reverse(),
    );
    const tx = events[0]!.tx_id;
    const byTx = await p.api.app.inject({
      url: `/transaction/${tx}/events`,
      headers: p.api.auth(p.api.userKey),
    });
    expect(byTx.statusCode).toBe(200);
    expect(byTx.json().transaction_id).toBe(tx);
    expect(byTx.json().events.some((e: { id: string }) => e.id === events[0]!.id)).toBe(true);
    expect(byTx.json().meta).toEqual({ payload_chunk_hydration_enabled: true });
  });

  it("decodes the simulated DEX swaps as buy/sell events", async () => {
    const [swaps] = await p.ch.ch.query<{ n: string }>(
      "t",
      "SELECT count() AS n FROM events FINAL WHERE category = 'dex' AND sub_kind IN ('buy', 'sell') AND main_chain",
    );
    expect(Number(swaps?.n)).toBeGreaterThan(0);
  });

  it("prices those swaps as the watched devnet pairs registered at start say (base, quote, dapp)", async () => {
    const expected = devnetPricePairs(p.chain).filter((x) => x.sourceId === "devnet-dex");
    const watched = await p.pg.pg.query<{ pair_symbol: string; token_id: string; quote_token_id: string }>(
      "t",
      "SELECT pair_symbol, token_id, quote_token_id FROM price_pairs WHERE source_id = 'devnet-dex' ORDER BY id",
    );
    expect(watched).toEqual(
      expected.map((x) => ({
        pair_symbol: x.pairSymbol,
        token_id: x.tokenId,
        quote_token_id: x.quoteTokenId,
      })),
    );
    const byPool = new Map(watched.map((w) => [w.pair_symbol, w]));
    const swaps = await p.ch.ch.query<{ dapp_id: string; payload: string }>(
      "t",
      "SELECT dapp_id, payload FROM events FINAL WHERE category = 'dex' AND type = 'swap' AND main_chain",
    );
    expect(swaps.length).toBeGreaterThan(0);
    // The devnet's Elexium pools are a second registered factory's, not watched price pairs.
    const elexium = new Set(p.chain.plan().elexium.pools.map((x) => x.address));
    for (const s of swaps) {
      const payload = JSON.parse(s.payload) as {
        pool_address: string;
        base_token_id: string;
        quote_token_id: string;
      };
      if (elexium.has(payload.pool_address)) {
        expect(s.dapp_id).toBe("elexium");
        continue;
      }
      const pair = byPool.get(payload.pool_address)!;
      expect([s.dapp_id, payload.base_token_id, payload.quote_token_id]).toEqual([
        "devnet-dex",
        pair.token_id,
        pair.quote_token_id,
      ]);
    }
  });
});

describe("address labels on events", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 300, confirmations: 2 });
    await p.catchUp();
  });
  afterAll(async () => p?.close());

  it("labels a registered token's contract with its symbol, and an admin label wins", async () => {
    const admin = p.api.auth(p.api.adminKey);
    const token = p.chain.tokens()[0]!;
    const byToken = async () => {
      const r = await p.api.app.inject({ url: `/events/all?token_address=${token.address}&limit=5` });
      expect(r.statusCode).toBe(200);
      const events = r.json().events as {
        address_labels: Record<string, { label: string; source: string }>;
      }[];
      expect(events.length).toBeGreaterThan(0);
      return events[0]!.address_labels[token.address];
    };
    expect(await byToken()).toBeUndefined(); // discovered tokens are unregistered
    const reg = await p.api.app.inject({
      method: "POST",
      url: `/token/${token.id}/update`,
      headers: admin,
      payload: { registered: true },
    });
    expect(reg.statusCode).toBe(200);
    expect(await byToken()).toMatchObject({ label: token.symbol, source: "token_registry" });

    const add = await p.api.app.inject({
      method: "POST",
      url: "/addresses/labels/add",
      headers: admin,
      payload: { address: token.address, label: "Featured token", source: "admin" },
    });
    expect(add.statusCode).toBe(200);
    expect(await byToken()).toMatchObject({
      label: "Featured token",
      mapped_label: "Featured token",
      source: "admin",
    });
    const list = await p.api.app.inject({ url: `/addresses/labels?address=${token.address}` });
    expect(list.json().labels).toHaveLength(1);
    const del = await p.api.app.inject({
      method: "POST",
      url: "/addresses/labels/del",
      headers: admin,
      payload: { address: token.address },
    });
    expect(del.json()).toEqual({ ok: true, deleted: 1 });
    expect(
      (
        await p.api.app.inject({
          method: "POST",
          url: "/addresses/labels/del",
          headers: admin,
          payload: { address: token.address },
        })
      ).statusCode,
    ).toBe(404);
    expect(await byToken()).toMatchObject({ source: "token_registry" });
  });
});

describe("page cache of /events/all", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({
      blocks: 200,
      confirmations: 2,
      env: { EVENTS_PAGE_CACHE_MS: "60000", EVENTS_TAIL_CACHE: "0" },
    });
    await p.catchUp();
  });
  afterAll(async () => p?.close());

  it("serves identical pages from one read and reads again when the watermark moves", async () => {
    const ch = p.api.deps.ch!;
    const real = ch.query.bind(ch);
    let listReads = 0;
    ch.query = async (label, sql, params) => {
      if (label === "events_list") listReads++;
      return real(label, sql, params);
    };
    const first = await p.api.app.inject({ url: "/events/all?limit=20" });
    const again = await Promise.all([1, 2, 3].map(() => p.api.app.inject({ url: "/events/all?limit=20" })));
    for (const r of again) expect(r.body).toBe(first.body);
    expect(listReads).toBe(1);
    await p.api.app.inject({ url: "/events/all?limit=21" });
    expect(listReads).toBe(2);
    p.chain.advance(64);
    await p.catchUp();
    const moved = await p.api.app.inject({ url: "/events/all?limit=20" });
    expect(listReads).toBe(3);
    expect(moved.json().events[0].id > first.json().events[0].id).toBe(true);
  });
});
