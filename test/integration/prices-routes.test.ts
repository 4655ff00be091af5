// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * The Price routes on real stores: the registry (sources with counts, available lists from dex_pools
 * and from the available table, the add flows and their refusals, the update whitelist, the
 * watched → removed transition, token legs), the pairs of a token with their candle scales, and the
 * refusals and empty answers of spot and OHLCV. Seeds tokens, pools and candles as plain rows.
 */
import { addressFromContractId } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { openTestCh, openTestPg, type TestCh, type TestPg } from "../helpers/stores.ts";

type Reply = Awaited<ReturnType<TestApp["app"]["inject"]>>;

const PXA = "a1".repeat(32);
const PXB = "b2".repeat(32);
/** A token no registry row describes. */
const GHOST = "c3".repeat(32);
const DUP1 = "d4".repeat(32);
const DUP2 = "e5".repeat(32);

const pool = (byte: string) => addressFromContractId(byte.repeat(32));
/** ALPH / PXA on ayin: base PXA (the non-ALPH leg). */
const P1 = pool("01");
/** PXA / PXB on ayin: base PXA (token0). */
const P2 = pool("02");
/** PXB / ALPH on elexium. */
const P3 = pool("03");
/** GHOST / ALPH on ayin. */
const P4 = pool("04");
/** A valid contract address the indexer never saw as a pool. */
const P_UNSEEN = pool("0f");
/** A valid asset (P2PKH) address: not a contract. */
const ASSET_ADDRESS = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH";
const EVM_POOL = `0x${"Ab".repeat(20)}`;

interface Pair {
  id: number;
  source_id: string;
  pair_symbol: string;
  pair_label: string;
  pool_created_at: string | null;
  tokens: Leg[];
  token_id: string | null;
  quote_token_id: string | null;
  chain: string;
  chain_id: number | null;
  denomination: string;
  available: boolean;
  enabled: boolean;
  enable_trades: boolean;
  includeInTVL: boolean;
  token_address: string | null;
  decimals: number | null;
  quote_decimals: number | null;
  scales_meta: Record<string, { first_ts: number; last_ts: number }>;
}
interface Leg {
  id: number;
  token_price_source_id: number;
  type: string;
  dapp: string | null;
  chain: string;
  token_id: string;
  token_contract: string | null;
  in_consolidated_market: boolean;
}
interface Source {
  id: string;
  availableCount: number;
  watchedCount: number;
  [k: string]: unknown;
}

function expectProblem(r: Reply, status: number, ...named: string[]): void {
  expect(r.statusCode, r.body).toBe(status);
  expect(r.headers["content-type"]).toContain("application/problem+json");
  const body = r.json() as { status: number; detail: string };
  expect(body.status).toBe(status);
  for (const name of named) expect(body.detail).toContain(name);
}

describe("price routes", () => {
  let t: TestApp;
  let pg: TestPg;
  let ch: TestCh;
  const admin = () => t.auth(t.adminKey);
  const post = (url: string, payload?: object) =>
    t.app.inject({ method: "POST", url, headers: admin(), ...(payload ? { payload } : {}) });
  const get = (url: string) => t.app.inject({ url });
  const sources = async () => (await get("/price/source/all")).json().sources as Source[];
  const source = async (id: string) => (await sources()).find((s) => s.id === id)!;
  const pairs = async (src: string) => (await get(`/price/source/${src}/pair/all`)).json().pairs as Pair[];
  const pairOf = async (src: string, id: number) => (await pairs(src)).find((p) => p.id === id);
  const add = async (src: string, body: object) => {
    const r = await post(`/price/source/${src}/pair/add`, body);
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as { ok: boolean; id: number; pair_symbol: string; created: boolean };
  };
  const sql = (text: string, params: (string | number | null)[] = []) => pg.pg.query("test", text, params);
  /** dex_pools.id of a pool: the `pair_id` its available row carries. */
  const poolId = async (address: string) =>
    Number((await sql("SELECT id FROM dex_pools WHERE pool_address = $1", [address]))[0]?.id);

  beforeAll(async () => {
    // Own stores, so that the app can be closed first and the stores read after it.
    pg = await openTestPg();
    ch = await openTestCh();
    t = await createTestApp({ stores: { pg, ch } });
    const now = Date.now();
    for (const [id, symbol, decimals] of [
      [PXA, "PXA", 6],
      [PXB, "PXB", 9],
      [DUP1, "PXDUP", 2],
      [DUP2, "PXDUP", 3],
    ] as const) {
      await sql(
        `INSERT INTO tokens (id, contract_address, symbol, decimals, source, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'chain', $5, $5)`,
        [id, addressFromContractId(id), symbol, decimals, now],
      );
    }
    for (const [address, dapp, t0, t1, created] of [
      [P1, "ayin", ALPH_TOKEN_ID, PXA, "2024-03-01T12:00:00Z"],
      [P2, "ayin", PXA, PXB, "2024-03-02T00:00:00Z"],
      [P3, "elexium", PXB, ALPH_TOKEN_ID, "2024-03-03T00:00:00Z"],
      [P4, "ayin", GHOST, ALPH_TOKEN_ID, "2024-03-04T00:00:00Z"],
    ] as const) {
      await sql(
        "INSERT INTO dex_pools (pool_address, dapp_id, token0_id, token1_id, created_at) VALUES ($1, $2, $3, $4, $5)",
        [address, dapp, t0, t1, created],
      );
    }
    // Sources of the kinds without a processor: a CEX, an oracle of our own, an EVM DEX.
    await sql(
      `INSERT INTO price_sources (id, label, kind, value_decimals, supports_spot, created_at, updated_at) VALUES
       ('testcex', 'Test CEX', 'cex', NULL, true, 0, 0),
       ('testoracle', 'Test oracle', 'oracle', 6, true, 0, 0),
       ('testuni', 'Test Uniswap', 'uniswap', NULL, true, 0, 0)`,
    );
    await sql(
      `INSERT INTO price_available_pairs (source_id, pair_symbol, base_asset, quote_asset) VALUES
       ('testcex', 'PXAUSDT', 'PXA', 'USDT'), ('testcex', 'PXBUSDT', 'PXB', 'USDT'),
       ('testoracle', 'PXA/USD', 'PXA', 'USD'), ('testoracle', 'PXDUP/USD', 'PXDUP', 'USD')`,
    );
  });
  afterAll(async () => {
    await t?.close();
    await ch?.close();
    await pg?.close();
  });

  describe("sources and available pairs", () => {
    it("lists every source with the spec's fields, available counts from dex_pools or the list", async () => {
      const all = await sources();
      expect(all.map((s) => s.id)).toEqual([
        "ayin",
        "dia",
        "elexium",
        "pancakeswap",
        "testcex",
        "testoracle",
        "testuni",
        "uniswap",
      ]);
      // The seeded EVM pool sources: pools are added by address, so nothing is listed as available.
      expect(all.find((s) => s.id === "uniswap")).toMatchObject({ kind: "uniswap", availableCount: 0 });
      expect(all.find((s) => s.id === "pancakeswap")).toMatchObject({
        kind: "pancakeswap",
        availableCount: 0,
      });
      expect(all.find((s) => s.id === "dia")).toEqual({
        id: "dia",
        label: "DIA oracle",
        kind: "oracle",
        supportsSpot: true,
        supportsCandles: false,
        supportsTrades: false,
        supportedDenominations: ["USD"],
        enabled: true,
        availableCount: 7,
        watchedCount: 0,
      });
      expect(all.find((s) => s.id === "ayin")).toMatchObject({
        kind: "onchain_dex",
        supportsCandles: true,
        availableCount: 3,
        watchedCount: 0,
      });
      expect(all.find((s) => s.id === "elexium")).toMatchObject({ availableCount: 1 });
      expect(all.find((s) => s.id === "testcex")).toMatchObject({ availableCount: 2, watchedCount: 0 });
      expect(all.find((s) => s.id === "testuni")).toMatchObject({ availableCount: 0 });
    });

    it("lists an on-chain DEX's discovered pools with symbols, the non-ALPH leg as base", async () => {
      const r = await get("/price/source/ayin/pair/available");
      expect(r.statusCode).toBe(200);
      const body = r.json() as { source_id: string; available: Record<string, unknown>[] };
      expect(body.source_id).toBe("ayin");
      const ids = (await sql("SELECT id, pool_address FROM dex_pools ORDER BY id")) as {
        id: number;
        pool_address: string;
      }[];
      const idOf = (address: string) => ids.find((p) => p.pool_address === address)!.id;
      expect(body.available).toEqual([
        { id: idOf(P1), source_id: "ayin", pair_symbol: P1, base_asset: "PXA", quote_asset: "ALPH" },
        { id: idOf(P2), source_id: "ayin", pair_symbol: P2, base_asset: "PXA", quote_asset: "PXB" },
        // A token without a registry row is shown by its id.
        { id: idOf(P4), source_id: "ayin", pair_symbol: P4, base_asset: GHOST, quote_asset: "ALPH" },
      ]);
      const elexium = (await get("/price/source/elexium/pair/available")).json().available;
      expect(elexium).toEqual([
        { id: idOf(P3), source_id: "elexium", pair_symbol: P3, base_asset: "PXB", quote_asset: "ALPH" },
      ]);
    });

    it("lists the available table of other sources, and answers 404 for an unknown source", async () => {
      const dia = (await get("/price/source/dia/pair/available")).json();
      expect(dia.source_id).toBe("dia");
      expect(dia.available.map((a: { pair_symbol: string }) => a.pair_symbol)).toEqual([
        "ALPH/USD",
        "AYIN/USD",
        "BTC/USD",
        "ETH/USD",
        "USDC/USD",
        "USDT/USD",
        "WBTC/USD",
      ]);
      expect(dia.available[0]).toMatchObject({ source_id: "dia", base_asset: "ALPH", quote_asset: "USD" });
      expectProblem(await get("/price/source/nosuch/pair/available"), 404, "nosuch");
      expectProblem(await get("/price/source/nosuch/pair/all"), 404, "nosuch");
    });
  });

  describe("adding pairs", () => {
    it("adds an on-chain pool by address with every field filled, and is idempotent", async () => {
      const added = await add("ayin", { pair_symbol: P1, token_id: PXA.toUpperCase() });
      expect(added).toMatchObject({ ok: true, pair_symbol: P1, created: true });
      const pair = await pairOf("ayin", added.id);
      expect(pair).toEqual({
        id: added.id,
        source_id: "ayin",
        pair_symbol: P1,
        pair_label: "PXA/ALPH",
        pool_created_at: "2024-03-01T12:00:00.000Z",
        tokens: [],
        token_id: PXA,
        quote_token_id: ALPH_TOKEN_ID,
        chain: "alph",
        chain_id: 8738,
        denomination: "ALPH",
        available: true,
        enabled: true,
        enable_trades: false,
        includeInTVL: false,
        token_address: addressFromContractId(PXA),
        decimals: 6,
        quote_decimals: 18,
        scales_meta: {},
      });
      expect(await source("ayin")).toMatchObject({ watchedCount: 1, availableCount: 3 });

      const again = await add("ayin", { pair_symbol: P1, token_id: PXA });
      expect(again).toEqual({ ok: true, id: added.id, pair_symbol: P1, created: false });
      expect(await source("ayin")).toMatchObject({ watchedCount: 1 });
    });

    it("adds a pool by its pair_id with the listed base as token, or priced in the other leg", async () => {
      const p2 = await poolId(P2);
      const byId = await add("ayin", { pair_id: p2 });
      const pair = await pairOf("ayin", byId.id);
      expect(pair).toMatchObject({
        pair_symbol: P2,
        pair_label: "PXA/PXB",
        token_id: PXA,
        quote_token_id: PXB,
        denomination: "PXB",
        decimals: 6,
        quote_decimals: 9,
      });
      // The other leg of a known pool, by address: priced in PXA.
      const inverse = await add("elexium", { pair_symbol: P3, token_id: ALPH_TOKEN_ID });
      expect(await pairOf("elexium", inverse.id)).toMatchObject({
        pair_label: "ALPH/PXB",
        token_id: ALPH_TOKEN_ID,
        quote_token_id: PXB,
        token_address: null,
        decimals: 18,
        quote_decimals: 9,
      });
    });

    it("adds a pool the indexer has not seen: quote unknown until then", async () => {
      const added = await add("ayin", { pair_symbol: P_UNSEEN, token_id: PXB });
      expect(await pairOf("ayin", added.id)).toMatchObject({
        pair_symbol: P_UNSEEN,
        pair_label: "PXB/?",
        denomination: "?",
        token_id: PXB,
        quote_token_id: null,
        pool_created_at: null,
        decimals: 9,
        quote_decimals: null,
      });
    });

    it("refuses what the on-chain DEX flow cannot use, naming the field", async () => {
      const url = "/price/source/ayin/pair/add";
      expectProblem(await post(url, {}), 400, "pair_symbol", "pair_id");
      expectProblem(await post(url, { pair_symbol: P2 }), 400, "token_id");
      expectProblem(await post(url, { pair_symbol: "notAnAddress", token_id: PXA }), 400, "pair_symbol");
      expect((await post(url, { pair_symbol: "notAnAddress", token_id: PXA })).json().detail).toMatch(
        /invalid pool address/i,
      );
      expectProblem(await post(url, { pair_symbol: ASSET_ADDRESS, token_id: PXA }), 400, "pair_symbol");
      expectProblem(await post(url, { pair_symbol: EVM_POOL, token_id: PXA }), 400, "pair_symbol");
      // Known pool, token not one of its two.
      expectProblem(await post(url, { pair_symbol: P2, token_id: ALPH_TOKEN_ID }), 400, "token_id");
      // A pool of another dapp.
      expectProblem(await post(url, { pair_symbol: P3, token_id: PXB }), 400, "pair_symbol", "elexium");
      expectProblem(await post(url, { pair_symbol: P2, token_id: "xyz" }), 400, "token_id");
      expectProblem(await post(url, { pair_symbol: P2, token_id: PXA, chain_id: 1 }), 400, "chain_id");
      expectProblem(await post(url, { pair_symbol: P2, token_id: PXA, colour: "red" }), 400, "colour");
      const p3 = await poolId(P3);
      expectProblem(await post(url, { pair_id: p3 }), 404, "pair_id");
      expectProblem(await post(url, { pair_id: 999_999 }), 404, "pair_id");
      const p1 = await poolId(P1);
      expectProblem(await post(url, { pair_id: p1, pair_symbol: P2, token_id: PXA }), 400, "pair_symbol");
      expectProblem(await post("/price/source/nosuch/pair/add", { pair_symbol: P1, token_id: PXA }), 404);
    });

    it("adds listed pairs of oracle and CEX sources, and 404s a pair not in the list", async () => {
      const alph = await add("dia", { pair_symbol: "ALPH/USD" });
      expect(await pairOf("dia", alph.id)).toMatchObject({
        pair_label: "ALPH/USD",
        token_id: ALPH_TOKEN_ID,
        quote_token_id: null,
        denomination: "USD",
        token_address: null,
        decimals: 0,
        quote_decimals: 8,
        chain: "alph",
        chain_id: 8738,
        pool_created_at: null,
      });
      const listed = (await sql(
        "SELECT id, pair_symbol FROM price_available_pairs WHERE source_id = 'testoracle'",
      )) as {
        id: number;
        pair_symbol: string;
      }[];
      const pxa = await add("testoracle", { pair_id: listed.find((l) => l.pair_symbol === "PXA/USD")!.id });
      expect(await pairOf("testoracle", pxa.id)).toMatchObject({
        pair_symbol: "PXA/USD",
        token_id: PXA,
        token_address: addressFromContractId(PXA),
        decimals: 0,
        quote_decimals: 6,
      });
      // Two tokens carry the symbol: no token is guessed.
      const dup = await add("testoracle", { pair_symbol: "PXDUP/USD" });
      expect(await pairOf("testoracle", dup.id)).toMatchObject({ token_id: null, token_address: null });

      const cex = await add("testcex", { pair_symbol: "PXBUSDT", chain_id: 1 });
      expect(await pairOf("testcex", cex.id)).toMatchObject({
        pair_label: "PXB/USDT",
        token_id: PXB,
        denomination: "USDT",
        chain: "eth",
        chain_id: 1,
        // Exchanges send whole-unit prices and base volumes: served as stored, whatever the token's decimals.
        decimals: 0,
        quote_decimals: 0,
      });

      expectProblem(
        await post("/price/source/dia/pair/add", { pair_symbol: "DOGE/USD" }),
        404,
        "pair_symbol",
      );
      expectProblem(await post("/price/source/testcex/pair/add", { pair_id: 999_999 }), 404, "pair_id");
      expectProblem(await post("/price/source/testcex/pair/add", {}), 400, "pair_symbol", "pair_id");
      expectProblem(
        await post("/price/source/testcex/pair/add", { pair_symbol: "PXAUSDT", chain_id: 777 }),
        400,
        "chain_id",
      );
      const dia = await source("dia");
      expect(dia).toMatchObject({ watchedCount: 1, availableCount: 7 });
    });

    it("adds an EVM DEX pool by 0x address with a token_id, and refuses other addresses", async () => {
      const added = await add("testuni", { pair_symbol: EVM_POOL, token_id: PXA, chain_id: 1 });
      expect(added.pair_symbol).toBe(EVM_POOL.toLowerCase());
      expect(await pairOf("testuni", added.id)).toMatchObject({
        pair_symbol: EVM_POOL.toLowerCase(),
        pair_label: "PXA/?",
        token_id: PXA,
        chain: "eth",
        chain_id: 1,
      });
      const url = "/price/source/testuni/pair/add";
      expectProblem(await post(url, { pair_symbol: EVM_POOL }), 400, "token_id");
      expectProblem(await post(url, { pair_symbol: "0x1234", token_id: PXA }), 400, "pair_symbol");
      expectProblem(await post(url, { pair_symbol: P1, token_id: PXA }), 400, "pair_symbol");
    });
  });

  describe("updating and removing pairs", () => {
    it("changes only the whitelisted flags, with include_in_tvl as an alias of includeInTVL", async () => {
      const { id } = await add("ayin", { pair_symbol: P4, token_id: GHOST });
      const url = `/price/source/ayin/pair/${id}/update`;
      const r = await post(url, { enabled: false, include_in_tvl: true });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json()).toEqual({ ok: true, id });
      expect(await pairOf("ayin", id)).toMatchObject({
        enabled: false,
        includeInTVL: true,
        available: true,
        enable_trades: false,
      });
      expect(
        (await post(url, { includeInTVL: false, enable_trades: true, available: false })).statusCode,
      ).toBe(200);
      const after = await pairOf("ayin", id);
      expect(after).toMatchObject({
        enabled: false,
        includeInTVL: false,
        available: false,
        enable_trades: true,
      });

      for (const field of ["pair_label", "token_id", "denomination", "decimals"]) {
        expectProblem(await post(url, { [field]: "x" }), 400, field);
      }
      expectProblem(await post(url, { enabled: "maybe" }), 400, "enabled");
      // A bad value under the alias names the alias the client sent.
      expectProblem(await post(url, { include_in_tvl: "maybe" }), 400, "include_in_tvl");
      expectProblem(await post(url, { includeInTVL: true, include_in_tvl: false }), 400, "include_in_tvl");
      expectProblem(await post(url, {}), 400, "No fields to update");
      expectProblem(await post(url), 400, "No fields to update");
      // Nothing changed by the refused requests.
      expect(await pairOf("ayin", id)).toEqual(after);

      expectProblem(await post(`/price/source/nosuch/pair/${id}/update`, { enabled: true }), 404, "nosuch");
      expectProblem(await post("/price/source/ayin/pair/999999/update", { enabled: true }), 404, "999999");
      // The pair exists, but under another source.
      expectProblem(await post(`/price/source/dia/pair/${id}/update`, { enabled: true }), 404);
      expect((await pairOf("ayin", id))?.enabled).toBe(false);
    });

    it("manages token legs: add, list, update, delete, with 404s for unknown rows", async () => {
      const { id: pairId } = await add("ayin", { pair_symbol: P1, token_id: PXA });
      const base = `/price/source/ayin/pair/${pairId}/token`;
      const a = await post(`${base}/add`, { type: "dex", chain: "alph", token_id: PXA, dapp: "ayin" });
      expect(a.statusCode, a.body).toBe(200);
      const legA = a.json().id as number;
      expect(a.json()).toEqual({ ok: true, id: legA });
      const b = await post(`${base}/add`, {
        type: "cex",
        chain: "eth",
        token_id: "pxa-on-cex",
        token_contract: null,
        in_consolidated_market: true,
      });
      const legB = b.json().id as number;

      const list = await get(`${base}/all`);
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual({
        source_id: "ayin",
        pair_id: pairId,
        pair_symbol: P1,
        tokens: [
          {
            id: legA,
            token_price_source_id: pairId,
            type: "dex",
            dapp: "ayin",
            chain: "alph",
            token_id: PXA,
            token_contract: null,
            in_consolidated_market: false,
          },
          {
            id: legB,
            token_price_source_id: pairId,
            type: "cex",
            dapp: null,
            chain: "eth",
            token_id: "pxa-on-cex",
            token_contract: null,
            in_consolidated_market: true,
          },
        ],
      });
      expect((await pairOf("ayin", pairId))?.tokens.map((l) => l.id)).toEqual([legA, legB]);

      const upd = await post(`${base}/update`, {
        id: legA,
        dapp: null,
        in_consolidated_market: true,
        type: "api",
      });
      expect(upd.json()).toEqual({ ok: true, id: legA });
      const legs = (await get(`${base}/all`)).json().tokens as Leg[];
      expect(legs[0]).toMatchObject({
        id: legA,
        dapp: null,
        in_consolidated_market: true,
        type: "api",
        chain: "alph",
      });

      expectProblem(await post(`${base}/update`, { id: legA }), 400, "No fields to update");
      expectProblem(await post(`${base}/update`, { id: legA, type: "nft" }), 400, "type");
      expectProblem(await post(`${base}/update`, { id: legA, colour: "red" }), 400, "colour");
      expectProblem(await post(`${base}/update`, { id: 999_999, chain: "alph" }), 404, "999999");
      expectProblem(await post(`${base}/add`, { type: "dex", chain: "alph" }), 400, "token_id");
      expectProblem(await post(`${base}/add`, { type: "nft", chain: "alph", token_id: PXA }), 400, "type");

      // A mapping of another pair is not found under this one.
      const other = await add("elexium", { pair_symbol: P3, token_id: PXB });
      const otherLeg = (
        await post(`/price/source/elexium/pair/${other.id}/token/add`, {
          type: "dex",
          chain: "alph",
          token_id: PXB,
        })
      ).json().id as number;
      expectProblem(await post(`${base}/update`, { id: otherLeg, chain: "bsc" }), 404);
      expectProblem(await post(`${base}/del`, { id: otherLeg }), 404);

      expect((await post(`${base}/del`, { id: legB })).json()).toEqual({ ok: true, deleted: 1 });
      expectProblem(await post(`${base}/del`, { id: legB }), 404);
      expect(((await get(`${base}/all`)).json().tokens as Leg[]).map((l) => l.id)).toEqual([legA]);

      expectProblem(await get("/price/source/nosuch/pair/1/token/all"), 404, "nosuch");
      expectProblem(await get("/price/source/ayin/pair/999999/token/all"), 404, "999999");
      expectProblem(await get(`/price/source/dia/pair/${pairId}/token/all`), 404);
      expectProblem(
        await post("/price/source/ayin/pair/999999/token/add", { type: "dex", chain: "alph", token_id: PXA }),
        404,
      );
    });

    it("removes a pair (watched → removed): gone from the list, counts down, legs deleted with it", async () => {
      const { id } = await add("testcex", { pair_symbol: "PXAUSDT" });
      await post(`/price/source/testcex/pair/${id}/token/add`, { type: "cex", chain: "alph", token_id: PXA });
      const before = await source("testcex");
      expect((await pairs("testcex")).map((p) => p.id)).toContain(id);

      expectProblem(await post(`/price/source/ayin/pair/${id}/del`), 404);
      expectProblem(await post(`/price/source/nosuch/pair/${id}/del`), 404, "nosuch");
      expect((await pairs("testcex")).map((p) => p.id)).toContain(id);

      const r = await post(`/price/source/testcex/pair/${id}/del`);
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json()).toEqual({ ok: true, deleted: 1 });
      expect((await pairs("testcex")).map((p) => p.id)).not.toContain(id);
      expect(await source("testcex")).toMatchObject({
        watchedCount: before.watchedCount - 1,
        availableCount: before.availableCount,
      });
      const legs = (await sql(
        "SELECT count(*)::int AS n FROM price_pair_tokens WHERE token_price_source_id = $1",
        [id],
      )) as { n: number }[];
      expect(legs[0]?.n).toBe(0);
      expectProblem(await post(`/price/source/testcex/pair/${id}/del`), 404);
      expectProblem(await get(`/price/source/testcex/pair/${id}/token/all`), 404);
      // Removed, it can be watched again (a new row).
      const again = await add("testcex", { pair_symbol: "PXAUSDT" });
      expect(again.created).toBe(true);
      expect(again.id).not.toBe(id);
    });
  });

  describe("pairs of a token, spot and OHLCV", () => {
    const DAY = 86_400_000;
    /** 2024-01-02 (a Tuesday) 10:07 and 2024-01-09 15:33 UTC. */
    const FIRST = Date.UTC(2024, 0, 2, 10, 7);
    const LAST = Date.UTC(2024, 0, 9, 15, 33);

    it("lists a token's pairs (by token_id or a leg) with the scales their candles cover", async () => {
      const p1 = await add("ayin", { pair_symbol: P1, token_id: PXA });
      // Candles of P1 as the processor writes them: 1d and 1m at the first and the last trade.
      const market = `ayin:${P1}`;
      const candle = (scale: string, t0: number, c: string) => ({
        market,
        scale,
        t: t0,
        o: c,
        h: c,
        l: c,
        c,
        v: "1000000",
        trades: 1,
        deleted: 0,
        version: 1,
      });
      await ch.ch.insert("test_candles", "candles", [
        candle("1d", Date.UTC(2024, 0, 2), "2000000000000"),
        candle("1d", Date.UTC(2024, 0, 9), "3000000000000"),
        candle("1m", FIRST, "2000000000000"),
        candle("1m", LAST, "3000000000000"),
      ]);

      const r = await get(`/token/${PXA}/pairs`);
      expect(r.statusCode, r.body).toBe(200);
      const body = r.json() as {
        token_id: string;
        chain: string | null;
        pairs: {
          id: number;
          source_id: string;
          available_scales: string[];
          scales: {
            scale: string;
            first_ts: number;
            last_ts: number;
            date_range: { from: string; to: string };
          }[];
        }[];
      };
      expect(body.token_id).toBe(PXA);
      expect(body.chain).toBeNull();
      const viaToken = (await sql("SELECT id FROM price_pairs WHERE token_id = $1 ORDER BY id", [PXA])) as {
        id: number;
      }[];
      // ayin P1 and P2, testoracle PXA/USD, testuni (eth), testcex PXAUSDT; no leg-only pair yet.
      expect(body.pairs.map((p) => p.id)).toEqual(viaToken.map((p) => p.id));
      const mine = body.pairs.find((p) => p.id === p1.id)!;
      expect(mine).toMatchObject({
        source_id: "ayin",
        pair_symbol: P1,
        pair_label: "PXA/ALPH",
        available: true,
        enabled: true,
        enable_trades: false,
        includeInTVL: false,
      });
      expect(mine.available_scales).toEqual(["1m", "3m", "5m", "15m", "1h", "4h", "1d", "1w"]);
      const byScale = Object.fromEntries(mine.scales.map((s) => [s.scale, s]));
      expect(byScale["1m"]).toEqual({
        scale: "1m",
        first_ts: FIRST,
        last_ts: LAST,
        date_range: { from: "2024-01-02T10:07:00.000Z", to: "2024-01-09T15:33:00.000Z" },
      });
      expect(byScale["1h"]).toMatchObject({
        first_ts: Date.UTC(2024, 0, 2, 10),
        last_ts: Date.UTC(2024, 0, 9, 15),
      });
      expect(byScale["1d"]?.date_range).toEqual({
        from: "2024-01-02T00:00:00.000Z",
        to: "2024-01-09T00:00:00.000Z",
      });
      // Weeks start on Monday: 2024-01-01 and 2024-01-08.
      expect(byScale["1w"]).toMatchObject({ first_ts: Date.UTC(2024, 0, 1), last_ts: Date.UTC(2024, 0, 8) });
      expect(body.pairs.find((p) => p.source_id === "testoracle")).toMatchObject({
        available_scales: [],
        scales: [],
      });
      // The pair list of the source carries the same spans as scales_meta.
      expect((await pairOf("ayin", p1.id))?.scales_meta["1d"]).toEqual({
        first_ts: Date.UTC(2024, 0, 2),
        last_ts: Date.UTC(2024, 0, 9),
      });

      // The contract address names the same token; chain filters on the pair's chain.
      const byAddress = (await get(`/token/${addressFromContractId(PXA)}/pairs`)).json();
      expect(byAddress.pairs.map((p: { id: number }) => p.id)).toEqual(body.pairs.map((p) => p.id));
      const eth = (await get(`/token/${PXA}/pairs?chain=eth`)).json();
      expect(eth.chain).toBe("eth");
      expect(eth.pairs.map((p: { source_id: string }) => p.source_id)).toEqual(["testuni"]);
      const alph = (await get(`/token/${PXA}/pairs?chain=alph`)).json();
      expect(alph.pairs.map((p: { source_id: string }) => p.source_id)).not.toContain("testuni");
      expect(alph.pairs.length).toBe(body.pairs.length - 1);

      // A leg naming the token brings its pair in.
      const ghostBefore = (await get(`/token/${DUP1}/pairs`)).json().pairs;
      expect(ghostBefore).toEqual([]);
      await post(
        `/price/source/elexium/pair/${(await add("elexium", { pair_symbol: P3, token_id: PXB })).id}/token/add`,
        {
          type: "dex",
          chain: "alph",
          token_id: DUP1,
        },
      );
      const viaLeg = (await get(`/token/${DUP1}/pairs`)).json().pairs;
      expect(
        viaLeg.map((p: { source_id: string; pair_symbol: string }) => [p.source_id, p.pair_symbol]),
      ).toEqual([["elexium", P3]]);

      expectProblem(await get(`/token/${ASSET_ADDRESS}/pairs`), 400, "tokenid");
      expectProblem(await get("/token/not-a-token/pairs"), 400, "tokenid");
      expectProblem(await get("/token//pairs"), 400, "tokenid");
      // The details route of the same path prefix is unaffected.
      expect((await get(`/token/${ALPH_TOKEN_ID}/details`)).statusCode).toBe(200);
    });

    it("serves OHLCV of a pair through its decimals, latest first, paged or by range", async () => {
      const { id } = await add("ayin", { pair_symbol: P1, token_id: PXA });
      const r = await get(`/price/pair/${id}/ohlcv?scale=1d`);
      expect(r.statusCode, r.body).toBe(200);
      // Raw ratio 2e12 (smallest units) × 10^(6 − 18) = 2.
      expect(r.json()).toEqual({
        pair_id: id,
        pair: "PXA/ALPH",
        source: "ayin",
        denomination: "ALPH",
        scale: "1d",
        ohlcv: [
          { t: Date.UTC(2024, 0, 9), o: 3, h: 3, l: 3, c: 3, v: 1 },
          { t: Date.UTC(2024, 0, 2), o: 2, h: 2, l: 2, c: 2, v: 1 },
        ],
      });
      const page1 = (await get(`/price/pair/${id}/ohlcv?scale=1d&pageSize=1&page=1`)).json().ohlcv;
      expect(page1.map((c: { t: number }) => c.t)).toEqual([Date.UTC(2024, 0, 2)]);
      const range = (
        await get(`/price/pair/${id}/ohlcv?scale=1d&start=${Date.UTC(2024, 0, 3)}&end=${LAST}`)
      ).json();
      expect(range.ohlcv.map((c: { t: number }) => c.t)).toEqual([Date.UTC(2024, 0, 9)]);
      const limited = (await get(`/price/pair/${id}/ohlcv?scale=1d&start=0&limit=1`)).json();
      expect(limited.ohlcv.map((c: { t: number }) => c.t)).toEqual([Date.UTC(2024, 0, 9)]);
      expect((await get(`/price/pair/${id}/ohlcv?scale=1d&start=${LAST + DAY}`)).json().ohlcv).toEqual([]);
    });

    it("answers empty spot and OHLCV for a pair without trades, and 404 for an unknown pair", async () => {
      const { id } = await add("ayin", { pair_symbol: P2, token_id: PXA });
      const spot = await get(`/price/pair/${id}/spot`);
      expect(spot.statusCode, spot.body).toBe(200);
      expect(spot.json()).toEqual({
        pair_id: id,
        pair: "PXA/PXB",
        source: "ayin",
        denomination: "PXB",
        token_id: PXA,
        price: null,
        timestamp: null,
        updated_at: null,
        from_spot_table: true,
      });
      // A time in ms past int32 is a legal timestamp.
      const at = await get(`/price/pair/${id}/spot?timestamp=1700000000000&scale=1d`);
      expect(at.statusCode, at.body).toBe(200);
      expect(at.json()).toMatchObject({ price: null, timestamp: null, from_spot_table: false });
      const avg = await get(`/price/pair/${id}/spot?averageWindow=1d&scale=1h`);
      expect(avg.json()).toMatchObject({ price: null, from_spot_table: false });

      const ohlcv = await get(`/price/pair/${id}/ohlcv`);
      expect(ohlcv.statusCode).toBe(200);
      expect(ohlcv.json()).toEqual({
        pair_id: id,
        pair: "PXA/PXB",
        source: "ayin",
        denomination: "PXB",
        scale: "1h",
        ohlcv: [],
      });
      expect((await get(`/price/pair/${id}/ohlcv?start=0&end=1700000000000`)).json().ohlcv).toEqual([]);

      expectProblem(await get("/price/pair/999999/spot"), 404, "999999");
      expectProblem(await get("/price/pair/999999/ohlcv"), 404, "999999");
    });

    it("refuses bad spot and OHLCV parameters, naming them", async () => {
      const { id } = await add("ayin", { pair_symbol: P2, token_id: PXA });
      const scale = await get(`/price/pair/${id}/ohlcv?scale=2h`);
      expectProblem(scale, 400, "scale");
      expect(scale.json().detail).toContain("1m, 3m, 5m, 15m, 1h, 4h, 1d, 1w");
      expectProblem(await get(`/price/pair/${id}/spot?scale=2h`), 400, "scale");
      expectProblem(await get(`/price/pair/${id}/spot?averageWindow=2d`), 400, "averageWindow");
      expectProblem(await get(`/price/pair/${id}/spot?averageWindow=3m`), 400, "averageWindow");
      // A window shorter than the scale cannot be averaged.
      expectProblem(
        await get(`/price/pair/${id}/spot?averageWindow=1m&scale=1h`),
        400,
        "averageWindow",
        "scale",
      );
      expectProblem(await get(`/price/pair/${id}/spot?timestamp=-1`), 400, "timestamp");
      expectProblem(await get(`/price/pair/${id}/spot?timestamp=9000000000000000`), 400, "timestamp");
      expectProblem(await get(`/price/pair/${id}/ohlcv?start=2000&end=1000`), 400, "end");
      expectProblem(await get(`/price/pair/${id}/ohlcv?pageSize=1001`), 400, "pageSize");
      expectProblem(await get(`/price/pair/${id}/ohlcv?pageSize=0`), 400, "pageSize");
      expectProblem(await get(`/price/pair/${id}/ohlcv?page=-1`), 400, "page");
      expectProblem(await get(`/price/pair/${id}/ohlcv?limit=1001&start=0`), 400, "limit");
      expectProblem(await get("/price/pair/abc/ohlcv"), 400, "pairid");
      expectProblem(await get("/price/pair/0/spot"), 400, "pairid");
    });
  });

  it("is public for reads and admin-only for changes", async () => {
    expect((await t.app.inject({ url: "/price/source/all" })).statusCode).toBe(200);
    const user = await t.app.inject({
      method: "POST",
      url: "/price/source/ayin/pair/add",
      headers: t.auth(t.userKey),
      payload: { pair_symbol: P1, token_id: PXA },
    });
    expectProblem(user, 403);
    const none = await t.app.inject({
      method: "POST",
      url: "/price/source/ayin/pair/add",
      payload: { pair_symbol: P1, token_id: PXA },
    });
    expectProblem(none, 401);
  });

  it("leaves an added on-chain pair's rebuild to the candles processor (one writer of candles)", async () => {
    const fresh = await add("elexium", { pair_id: await poolId(P3) });
    // P3 was added to elexium earlier: this answer is the idempotent one.
    expect(fresh.created).toBe(false);
    const dia = await add("dia", { pair_symbol: "ETH/USD" });
    expect(dia.created).toBe(true);
    await t.app.close();
    const rows = (await sql(
      `SELECT p.id, p.backfilled_at, s.kind FROM price_pairs p JOIN price_sources s ON s.id = p.source_id
       ORDER BY p.id`,
    )) as { id: number; backfilled_at: string | number | null; kind: string }[];
    // No candles processor runs here: every pair created through the route waits for it, none rebuilt by the API
    // (test/integration/candles.test.ts has the processor rebuild a re-added pair).
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.filter((r) => r.kind === "onchain_dex" || r.kind === "oracle").length).toBeGreaterThan(5);
    expect(rows.filter((r) => r.backfilled_at !== null)).toEqual([]);
  });
});

describe("price routes without a database", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ databases: false });
  });
  afterAll(async () => t?.close());

  it("answer 503 database_not_configured", async () => {
    for (const [method, url] of [
      ["GET", "/price/source/all"],
      ["GET", "/price/source/ayin/pair/all"],
      ["POST", "/price/source/ayin/pair/add"],
      ["GET", "/price/pair/1/spot"],
      ["GET", "/price/pair/1/ohlcv"],
      ["GET", `/token/${PXA}/pairs`],
    ] as const) {
      const r = await t.app.inject({
        method,
        url,
        headers: t.auth(t.adminKey),
        ...(method === "POST" ? { payload: {} } : {}),
      });
      expectProblem(r, 503);
      expect(r.json().code).toBe("database_not_configured");
    }
  });
});
