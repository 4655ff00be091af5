// Test passes: embedded (figures computed from the stored events, whatever batches the bus made; the guarantees run over Kafka elsewhere).
/**
 * ALPH's supply (GET /token/alph/supply, ALPH's circulatingSupply and circulatingSupplyUsd, its rank in
 * /token/all?sort=circulating_supply_usd) against the simulated explorer's /infos/supply, which computes the
 * figures from the simulated chain's UTXO set; the explorer-down case; and, on a chain indexed from its
 * genesis blocks, the total computed from the index.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, GENESIS_TIMESTAMP } from "../../devnet/chain.ts";
import { startDevnetServer } from "../../devnet/server.ts";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { createExplorerClient } from "../../lib/explorer-client.ts";
import {
  ALPH_MAX_SUPPLY,
  type AlphSupply,
  createAlphSupplyReader,
  indexAlphTotal,
  indexAlphTotalFromMoves,
} from "../../lib/figures/alph-supply.ts";
import { refreshFigures } from "../../lib/figures/store.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { quietLog } from "../helpers/stores.ts";

const MAX_PRICE_AGE_MS = 7 * 86_400_000;

interface ListEntry {
  id: string;
  circulatingSupplyUsd: number | null;
}

describe("ALPH's supply from the explorer backend", () => {
  let p: TestPipeline;
  let tip: number;
  beforeAll(async () => {
    const chain = createDevnetChain({ seed: 11 });
    chain.advance(600);
    tip = chain.latestTimestamp();
    // The explorer double's clock is the chain's tip, so the newest coinbase rewards are still locked.
    const server = await startDevnetServer(chain, { port: 0, clock: () => tip });
    p = await startTestPipeline({ chain, server, confirmations: 0, env: { FIGURES_REFRESH_MS: "3600000" } });
    await p.catchUp();
  }, 180_000);
  afterAll(async () => {
    await p?.close();
    await p?.server.close();
  });

  const explorer = () =>
    createExplorerClient({ baseUrl: p.server.explorerUrl, timeoutMs: 2_000, log: quietLog });
  const supplyRoute = async (): Promise<AlphSupply> => {
    const r = await p.api.app.inject({ url: "/token/alph/supply" });
    expect(r.statusCode).toBe(200);
    return r.json() as AlphSupply;
  };
  const alphDetails = async () => {
    const r = await p.api.app.inject({ url: `/token/${ALPH_TOKEN_ID}/details` });
    expect(r.statusCode).toBe(200);
    return r.json().token as {
      circulatingSupply: string | null;
      lockSupply: string | null;
      circulatingSupplyUsd: number | null;
      priceUsd: number | null;
    };
  };
  const ranked = async (): Promise<ListEntry[]> => {
    const r = await p.api.app.inject({
      url: "/token/all?sort=circulating_supply_usd&order=desc&pageSize=-1",
    });
    expect(r.statusCode).toBe(200);
    return r.json().tokens as ListEntry[];
  };

  it("is written by the running figures processor", async () => {
    const s = await supplyRoute();
    expect(s.explorer.status).toBe("ok");
    expect(s.circulating.value).not.toBeNull();
  });

  it("serves the explorer's figures, each with its source, and makes ALPH's circulating supply a number", async () => {
    const expected = p.chain.alphSupply(tip);
    expect(expected.locked).toBeGreaterThan(0n);
    expect(expected.reserved).toBeGreaterThan(0n);
    const reader = createAlphSupplyReader(
      { ch: p.ch.ch, explorer: explorer(), log: quietLog },
      { refreshMs: 0 },
    );
    await refreshFigures(
      { ch: p.ch.ch, pg: p.pg.pg },
      { now: tip, maxPriceAgeMs: MAX_PRICE_AGE_MS, alphSupply: await reader.read(tip) },
    );
    const s = await supplyRoute();
    expect(s.maximum).toEqual({ value: ALPH_MAX_SUPPLY, source: "protocol" });
    expect(s.total).toEqual({ value: expected.total.toString(), source: "explorer" });
    expect(s.circulating).toEqual({ value: expected.circulating.toString(), source: "explorer" });
    expect(s.reserved).toEqual({ value: expected.reserved.toString(), source: "explorer" });
    expect(s.locked).toEqual({ value: expected.locked.toString(), source: "explorer" });
    expect(s.index_from_genesis).toBe(false);
    expect(s.explorer).toMatchObject({ status: "ok", fetched_at: tip, snapshot_ts: tip, error: null });

    const alph = await alphDetails();
    expect(alph.circulatingSupply).toBe(expected.circulating.toString());
    expect(alph.lockSupply).toBe(expected.locked.toString());
    expect(alph.priceUsd).toBeGreaterThan(0);
    const usd = (Number(expected.circulating) / 1e18) * alph.priceUsd!;
    expect(alph.circulatingSupplyUsd! / usd).toBeCloseTo(1, 9);
  });

  it("ranks ALPH among the other tokens by circulating_supply_usd", async () => {
    const tokens = await ranked();
    const alph = tokens.find((t) => t.id === ALPH_TOKEN_ID);
    expect(alph?.circulatingSupplyUsd).toBeGreaterThan(0);
    const numbers = tokens.map((t) => t.circulatingSupplyUsd).filter((v): v is number => v !== null);
    expect(numbers.length).toBeGreaterThan(2);
    expect(numbers).toEqual([...numbers].sort((a, b) => b - a));
    // ALPH's place is the count of tokens worth more.
    const above = numbers.filter((v) => v > alph!.circulatingSupplyUsd!).length;
    expect(tokens.findIndex((t) => t.id === ALPH_TOKEN_ID)).toBe(above);
  });

  it("keeps the stored supply for ALPH when a refresh has none (figures backfill)", async () => {
    await refreshFigures({ ch: p.ch.ch, pg: p.pg.pg }, { now: tip, maxPriceAgeMs: MAX_PRICE_AGE_MS });
    expect((await alphDetails()).circulatingSupply).toBe(p.chain.alphSupply(tip).circulating.toString());
  });

  it("keeps the last figures, marked unavailable, while the explorer fails, and answers null before a first read", async () => {
    const expected = p.chain.alphSupply(tip);
    const reader = createAlphSupplyReader(
      { ch: p.ch.ch, explorer: explorer(), log: quietLog },
      { refreshMs: 0 },
    );
    await reader.read(tip);
    p.server.setFailureMode("explorer-500");
    try {
      const later = tip + 60_000;
      const kept = await reader.read(later);
      expect(kept.explorer.status).toBe("unavailable");
      expect(kept.explorer.fetched_at).toBe(tip);
      expect(kept.explorer.error).toMatch(/explorer/i);
      expect(kept.circulating).toEqual({ value: expected.circulating.toString(), source: "explorer" });
      await refreshFigures(
        { ch: p.ch.ch, pg: p.pg.pg },
        { now: later, maxPriceAgeMs: MAX_PRICE_AGE_MS, alphSupply: kept },
      );
      expect((await supplyRoute()).explorer.status).toBe("unavailable");
      expect((await alphDetails()).circulatingSupply).toBe(expected.circulating.toString());

      // A reader that never reached the explorer: the explorer's figures are null, and so is ALPH's value.
      const fresh = createAlphSupplyReader(
        { ch: p.ch.ch, explorer: explorer(), log: quietLog },
        { refreshMs: 0 },
      );
      const none = await fresh.read(later);
      await refreshFigures(
        { ch: p.ch.ch, pg: p.pg.pg },
        { now: later, maxPriceAgeMs: MAX_PRICE_AGE_MS, alphSupply: none },
      );
      const s = await supplyRoute();
      expect(s.explorer).toMatchObject({ status: "unavailable", fetched_at: null });
      for (const f of [s.total, s.circulating, s.reserved, s.locked])
        expect(f).toEqual({ value: null, source: null });
      expect(s.maximum.value).toBe(ALPH_MAX_SUPPLY);
      const alph = await alphDetails();
      expect(alph.circulatingSupply).toBeNull();
      expect(alph.circulatingSupplyUsd).toBeNull();
      const tokens = await ranked();
      expect(tokens.at(-1)?.circulatingSupplyUsd === null).toBe(true);
      expect(tokens.find((t) => t.id === ALPH_TOKEN_ID)?.circulatingSupplyUsd).toBeNull();
    } finally {
      p.server.setFailureMode("none");
    }
  });
});

describe("ALPH's total supply from an index that holds genesis", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    // Blocks start a minute after the genesis blocks, and ingest starts before them: the index holds genesis.
    const chain = createDevnetChain({ seed: 5, startTimestamp: GENESIS_TIMESTAMP + 60_000 });
    chain.advance(300);
    p = await startTestPipeline({
      chain,
      confirmations: 0,
      env: { FIGURES_REFRESH_MS: "3600000", INGEST_START_TS: String(GENESIS_TIMESTAMP - 1) },
    });
    await p.catchUp();
  }, 180_000);
  afterAll(async () => p?.close());

  it("computes the total from the index's ALPH balances and the circulating supply from it", async () => {
    const now = Date.now();
    const expected = p.chain.alphSupply(now);
    const explorer = createExplorerClient({ baseUrl: p.server.explorerUrl, timeoutMs: 2_000, log: quietLog });
    const reader = createAlphSupplyReader({ ch: p.ch.ch, explorer, log: quietLog }, { refreshMs: 0 });
    const s = await reader.read(now);
    expect(s.index_from_genesis).toBe(true);
    expect(s.total).toEqual({ value: expected.total.toString(), source: "index" });
    // The total is read from the net moves per hour; summed over every move it is the same.
    expect(await indexAlphTotal(p.ch.ch)).toBe(expected.total.toString());
    expect(await indexAlphTotalFromMoves(p.ch.ch)).toBe(expected.total.toString());
    expect(s.circulating).toEqual({ value: expected.circulating.toString(), source: "computed" });
    expect(s.reserved.source).toBe("explorer");
    await refreshFigures(
      { ch: p.ch.ch, pg: p.pg.pg },
      { now, maxPriceAgeMs: MAX_PRICE_AGE_MS, alphSupply: s },
    );
    const r = await p.api.app.inject({ url: "/token/alph/supply" });
    expect(r.json().total.source).toBe("index");
  });
});
