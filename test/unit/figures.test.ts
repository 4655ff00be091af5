/** The figures' pure parts: facts from events (lib/figures/facts.ts) and the rules of lib/figures/compute.ts. */
import { describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import {
  BRIDGE_POOL_ISSUANCE,
  bridgedOut,
  computeTvl,
  type PriceRoute,
  resolveUsdPrices,
  type TokenFiguresInput,
  tokenFigures,
} from "../../lib/figures/compute.ts";
import {
  BlockReserves,
  type FactSource,
  FURNACE_CONTRACTS,
  reserveChangesOf,
  supplyChangeOf,
  ZERO_ADDRESS,
} from "../../lib/figures/facts.ts";

const TOKEN = "ab".repeat(32);
const USDT = "cd".repeat(32);
const OTHER = "ef".repeat(32);
const FURNACE = "21ekPmzVCwV3fH1XmajtCVWjnDsLxHt14PWdwodk16Zyh";
const ctx = { burnAddresses: new Set([ZERO_ADDRESS]), furnaces: FURNACE_CONTRACTS };

const event = (over: Partial<FactSource>): FactSource => ({
  id: "1700000000000-00-0000000001-00000-0000",
  block_hash: "0a".repeat(32),
  timestamp: 1_700_000_000_000,
  category: "transfer",
  sub_kind: "send",
  type: "token",
  to: "",
  token_id: TOKEN,
  amount: "0",
  contract_address: "",
  contract_event_index: null,
  payload: "{}",
  ...over,
});

describe("supply changes from events", () => {
  it("reads a Furnace Burned event as the node gives its fields", () => {
    const fields = [
      { type: "Address", value: "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH" },
      { type: "ByteVec", value: TOKEN.toUpperCase() },
      { type: "U256", value: "12345" },
      { type: "Bool", value: false },
      { type: "U256", value: "1700000000" },
    ];
    const e = event({
      category: "contract",
      sub_kind: "event",
      type: "undecoded",
      contract_address: FURNACE,
      contract_event_index: 0,
      payload: JSON.stringify({ event_index: 0, fields }),
    });
    // Three generations of one furnace per group.
    expect(FURNACE_CONTRACTS.size).toBe(12);
    expect(supplyChangeOf(e, ctx, true, 7)).toEqual({
      id: e.id,
      block_hash: e.block_hash,
      ts: e.timestamp,
      token_id: TOKEN,
      kind: "burned",
      amount: "12345",
      unlock_at: 0,
      main_chain: true,
      version: 7,
    });
    // Another contract, another event index, or a malformed field is not a burn.
    expect(supplyChangeOf({ ...e, contract_address: "xyz" }, ctx, true, 7)).toBeNull();
    expect(supplyChangeOf({ ...e, contract_event_index: 1 }, ctx, true, 7)).toBeNull();
    const bad = fields.map((f, i) => (i === 2 ? { type: "U256", value: "-5" } : f));
    expect(supplyChangeOf({ ...e, payload: JSON.stringify({ fields: bad }) }, ctx, true, 7)).toBeNull();
    expect(supplyChangeOf({ ...e, payload: "not json" }, ctx, true, 7)).toBeNull();
  });

  it("reads the Furnace decoder's token/burn/furnace_burn events, of any furnace-kind contract", () => {
    const e = event({
      category: "token",
      sub_kind: "burn",
      type: "furnace_burn",
      to: "a-devnet-furnace",
      token_id: TOKEN,
      amount: "4242",
      contract_address: "a-devnet-furnace",
      contract_event_index: 0,
      payload: JSON.stringify({ token_id: TOKEN, amount: "4242", token_burned_encoding: "text" }),
    });
    expect(supplyChangeOf(e, ctx, true, 5)).toEqual({
      id: e.id,
      block_hash: e.block_hash,
      ts: e.timestamp,
      token_id: TOKEN,
      kind: "burned",
      amount: "4242",
      unlock_at: 0,
      main_chain: true,
      version: 5,
    });
    expect(supplyChangeOf({ ...e, amount: "0" }, ctx, true, 5)).toBeNull();
    expect(supplyChangeOf({ ...e, token_id: "not-an-id" }, ctx, true, 5)).toBeNull();
  });

  it("counts transfers to a burn address, of ALPH and tokens, and nothing else", () => {
    const send = event({ to: ZERO_ADDRESS, amount: "500" });
    expect(supplyChangeOf(send, ctx, true, 1)).toMatchObject({
      kind: "burned",
      token_id: TOKEN,
      amount: "500",
    });
    const payout = event({
      sub_kind: "payout",
      type: "alph",
      to: ZERO_ADDRESS,
      token_id: ALPH_TOKEN_ID,
      amount: "9",
    });
    expect(supplyChangeOf(payout, ctx, false, 2)).toMatchObject({
      token_id: ALPH_TOKEN_ID,
      main_chain: false,
    });
    expect(
      supplyChangeOf({ ...send, to: "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH" }, ctx, true, 1),
    ).toBeNull();
    expect(supplyChangeOf({ ...send, amount: "0" }, ctx, true, 1)).toBeNull();
    expect(supplyChangeOf({ ...send, sub_kind: "self" }, ctx, true, 1)).toBeNull();
  });

  it("locks rewards and allocations until their lock time", () => {
    const ts = 1_700_000_000_000;
    const coinbase = event({
      category: "mining",
      sub_kind: "coinbase",
      type: "reward",
      token_id: ALPH_TOKEN_ID,
      amount: "2000000000000000000",
      payload: JSON.stringify({ lock_time: ts + 30_000_000, uncle_count: 0 }),
    });
    expect(supplyChangeOf(coinbase, ctx, true, 3)).toMatchObject({
      kind: "locked",
      token_id: ALPH_TOKEN_ID,
      amount: "2000000000000000000",
      unlock_at: ts + 30_000_000,
    });
    const uncle = { ...coinbase, sub_kind: "uncle_reward" };
    expect(supplyChangeOf(uncle, ctx, true, 3)?.kind).toBe("locked");
    const genesis = { ...coinbase, category: "transfer", sub_kind: "genesis_allocation", type: "alph" };
    expect(supplyChangeOf(genesis, ctx, true, 3)?.kind).toBe("locked");
    // Not locked past its own block, or without a lock time.
    expect(
      supplyChangeOf({ ...coinbase, payload: JSON.stringify({ lock_time: ts }) }, ctx, true, 3),
    ).toBeNull();
    expect(supplyChangeOf({ ...coinbase, payload: "{}" }, ctx, true, 3)).toBeNull();
  });
});

describe("pool reserve changes", () => {
  const pool = "25ywM8iGxKpZWuGA5z6DXKGcZCXtPBmnbQyJEsjvjjWTy";
  const swap = (over: Record<string, unknown>) =>
    event({
      category: "dex",
      sub_kind: "buy",
      type: "swap",
      payload: JSON.stringify({
        pool_address: pool,
        token_in_id: ALPH_TOKEN_ID,
        token_out_id: TOKEN,
        amount_in: "1000",
        amount_out: "30",
        ...over,
      }),
    });

  it("a swap adds what went in and removes what came out; Mint adds, Burn removes", () => {
    expect(reserveChangesOf(swap({}))).toEqual([
      [pool, ALPH_TOKEN_ID, 1000n],
      [pool, TOKEN, -30n],
    ]);
    const liquidity = (type: "mint" | "burn") =>
      event({
        category: "dex",
        sub_kind: type === "mint" ? "add_liquidity" : "remove_liquidity",
        type,
        payload: JSON.stringify({
          pool_address: pool,
          token0_id: ALPH_TOKEN_ID,
          token1_id: TOKEN,
          amount0: "7",
          amount1: "11",
        }),
      });
    expect(reserveChangesOf(liquidity("mint"))).toEqual([
      [pool, ALPH_TOKEN_ID, 7n],
      [pool, TOKEN, 11n],
    ]);
    expect(reserveChangesOf(liquidity("burn"))).toEqual([
      [pool, ALPH_TOKEN_ID, -7n],
      [pool, TOKEN, -11n],
    ]);
    // The multi-hop aggregate, EVM pool swaps and malformed payloads change nothing here.
    expect(reserveChangesOf({ ...swap({}), sub_kind: "swap" })).toEqual([]);
    expect(reserveChangesOf({ ...swap({}), type: "evm_swap" })).toEqual([]);
    expect(reserveChangesOf(swap({ amount_in: "1e3" }))).toEqual([]);
  });

  it("sums a block's changes per pool and token, keeping the first event's id", () => {
    const b = new BlockReserves();
    b.add(swap({}));
    b.add({
      ...swap({ token_in_id: TOKEN, token_out_id: ALPH_TOKEN_ID, amount_in: "10", amount_out: "300" }),
      id: "z",
    });
    expect(b.rows({ block_hash: "h", ts: 5 }, true, 9)).toEqual([
      {
        pool,
        token_id: ALPH_TOKEN_ID,
        block_hash: "h",
        ts: 5,
        first_id: swap({}).id,
        delta: "700",
        main_chain: true,
        version: 9,
      },
      {
        pool,
        token_id: TOKEN,
        block_hash: "h",
        ts: 5,
        first_id: swap({}).id,
        delta: "-20",
        main_chain: true,
        version: 9,
      },
    ]);
  });
});

describe("USD prices", () => {
  const now = 1_700_000_000_000;
  const opts = { now, maxAgeMs: 86_400_000 };
  const route = (over: Partial<PriceRoute>): PriceRoute => ({
    pair_id: 1,
    token_id: ALPH_TOKEN_ID,
    quote_token_id: null,
    denomination: "USD",
    price: 0.5,
    spot_ts: now - 1000,
    volume_24h: 0,
    ...over,
  });

  it("prices ALPH from its USD routes, then tokens quoted in ALPH through it", () => {
    const prices = resolveUsdPrices(
      [
        route({ pair_id: 1, price: 0.5 }),
        route({ pair_id: 2, token_id: TOKEN, quote_token_id: ALPH_TOKEN_ID, denomination: "ALPH", price: 4 }),
      ],
      new Set(),
      opts,
    );
    expect(prices.get(ALPH_TOKEN_ID)).toEqual({ price: 0.5, pair_id: 1 });
    expect(prices.get(TOKEN)).toEqual({ price: 2, pair_id: 2 });
  });

  it("takes USDT and USDC as 1 USD and a pool against them as a USD route", () => {
    const prices = resolveUsdPrices(
      [route({ pair_id: 3, token_id: TOKEN, quote_token_id: USDT, denomination: "USDT", price: 1.25 })],
      new Set([USDT]),
      opts,
    );
    expect(prices.get(USDT)).toEqual({ price: 1, pair_id: null });
    expect(prices.get(TOKEN)).toEqual({ price: 1.25, pair_id: 3 });
  });

  it("picks the route with the most 24 h USD volume, then USD before ALPH, newest, lowest id", () => {
    const base = [route({ pair_id: 1, price: 2 })];
    const viaAlph = route({
      pair_id: 5,
      token_id: TOKEN,
      quote_token_id: ALPH_TOKEN_ID,
      denomination: "ALPH",
      price: 3,
      volume_24h: 100,
    });
    const viaUsd = route({ pair_id: 6, token_id: TOKEN, price: 5.5, volume_24h: 100 });
    // 100 × 6 USD through ALPH beats 100 × 5.5 USD direct.
    expect(resolveUsdPrices([...base, viaAlph, viaUsd], new Set(), opts).get(TOKEN)).toEqual({
      price: 6,
      pair_id: 5,
    });
    // Equal USD volume: the USD route.
    const equal = { ...viaUsd, price: 6 };
    expect(resolveUsdPrices([...base, viaAlph, equal], new Set(), opts).get(TOKEN)?.pair_id).toBe(6);
    // No volume at all (oracles): the newest, then the lowest id.
    const a = route({ pair_id: 9, token_id: OTHER, price: 1, spot_ts: now - 10 });
    const b = route({ pair_id: 8, token_id: OTHER, price: 2, spot_ts: now - 20 });
    expect(resolveUsdPrices([a, b], new Set(), opts).get(OTHER)?.pair_id).toBe(9);
    expect(resolveUsdPrices([a, { ...b, spot_ts: now - 10 }], new Set(), opts).get(OTHER)?.pair_id).toBe(8);
  });

  it("skips stale, non-positive and unroutable prices", () => {
    const stale = route({ spot_ts: now - 2 * 86_400_000 });
    expect(resolveUsdPrices([stale], new Set(), opts).size).toBe(0);
    expect(resolveUsdPrices([route({ price: 0 })], new Set(), opts).size).toBe(0);
    // Quoted in ALPH without an ALPH price, or in a token with no USD value: no price.
    const viaAlph = route({
      pair_id: 2,
      token_id: TOKEN,
      quote_token_id: ALPH_TOKEN_ID,
      denomination: "ALPH",
    });
    const viaOther = route({ pair_id: 3, token_id: TOKEN, quote_token_id: OTHER, denomination: "XYZ" });
    expect(resolveUsdPrices([viaAlph, viaOther], new Set(), opts).size).toBe(0);
  });
});

describe("supplies and TVL", () => {
  const input = (over: Partial<TokenFiguresInput>): TokenFiguresInput => ({
    max_supply: "1000",
    decimals: 2,
    burned: 100n,
    locked: 50n,
    price_usd: 2,
    tvl_usd: 5,
    ...over,
  });

  it("circulating = max - burned - locked, valued at the price; null with a reason without max", () => {
    expect(tokenFigures(input({}))).toEqual({
      burned_supply: "100",
      lock_supply: "50",
      circulating_supply: "850",
      circulating_supply_usd: 17,
      notes: {},
    });
    const noMax = tokenFigures(input({ max_supply: null }));
    expect(noMax.circulating_supply).toBeNull();
    expect(noMax.circulating_supply_usd).toBeNull();
    expect(noMax.notes).toEqual({
      circulatingSupply: "max_supply_unknown",
      circulatingSupplyUsd: "circulating_supply_unknown",
    });
  });

  it("refuses a circulating supply from burned + locked above max, instead of publishing 0", () => {
    const f = tokenFigures(input({ max_supply: "10", burned: 100n, locked: 0n }));
    expect(f.circulating_supply).toBeNull();
    expect(f.burned_supply).toBe("100");
    expect(f.notes.circulatingSupply).toBe("supply_inconsistent");
    // Exactly max burned leaves 0 circulating: a real figure.
    expect(tokenFigures(input({ max_supply: "150" })).circulating_supply).toBe("0");
  });

  it("refuses a given circulating supply (ALPH's sources) above max, and says when there is none", () => {
    const above = tokenFigures(input({ circulating: { value: "1001" } }));
    expect(above.circulating_supply).toBeNull();
    expect(above.circulating_supply_usd).toBeNull();
    expect(above.notes.circulatingSupply).toBe("exceeds_max_supply");
    expect(tokenFigures(input({ circulating: { value: "1000" } })).circulating_supply).toBe("1000");
    expect(tokenFigures(input({ circulating: { value: null } })).notes.circulatingSupply).toBe(
      "supply_source_unavailable",
    );
    expect(
      tokenFigures(input({ circulating: { value: null, refused: "exceeds_total" } })).notes.circulatingSupply,
    ).toBe("exceeds_max_supply");
  });

  it("a bridged token's supply is what left its pool; at the pool's issuance it is unissued and refused", () => {
    expect(BRIDGE_POOL_ISSUANCE).toBe(2n ** 256n - 1n);
    expect(bridgedOut(BRIDGE_POOL_ISSUANCE)).toBe(0n);
    expect(bridgedOut((BRIDGE_POOL_ISSUANCE - 1234n).toString())).toBe(1234n);
    expect(bridgedOut("x")).toBeNull();
    expect(bridgedOut(5n, 4n)).toBeNull();
    const unread = tokenFigures(
      input({
        max_supply: BRIDGE_POOL_ISSUANCE.toString(),
        bridge_pool: true,
        decimals: 6,
        burned: 7n,
        locked: 0n,
        price_usd: 1,
      }),
    );
    // The demo's bridged USDT before this rule: 1.16e71 USD.
    expect(unread.circulating_supply).toBeNull();
    expect(unread.circulating_supply_usd).toBeNull();
    expect(unread.notes.circulatingSupply).toBe("unissued_supply");
    // The same maxSupply of a token not issued by a bridge pool is what it issued.
    expect(
      tokenFigures(input({ max_supply: BRIDGE_POOL_ISSUANCE.toString(), bridge_pool: false }))
        .circulating_supply,
    ).toBe((BRIDGE_POOL_ISSUANCE - 150n).toString());
    const read = tokenFigures(
      input({ max_supply: bridgedOut(BRIDGE_POOL_ISSUANCE - 5_000_000n)!.toString(), bridge_pool: true }),
    );
    expect(read.circulating_supply).toBe((5_000_000n - 150n).toString());
    expect(read.notes).toEqual({});
  });

  it("names every null figure: no price, no decimals, no TVL pool, a USD value that is not finite", () => {
    expect(tokenFigures(input({ price_usd: null, tvl_usd: null })).notes).toEqual({
      circulatingSupplyUsd: "no_price",
      priceUsd: "no_price",
      tvlUsd: "not_in_tvl_pools",
    });
    expect(tokenFigures(input({ decimals: null })).notes).toEqual({
      circulatingSupplyUsd: "decimals_unknown",
    });
    const huge = tokenFigures(input({ max_supply: (10n ** 77n).toString(), decimals: 0, price_usd: 1e300 }));
    expect(huge.circulating_supply).not.toBeNull();
    expect(huge.circulating_supply_usd).toBeNull();
    expect(huge.notes).toEqual({ circulatingSupplyUsd: "exceeds_max_supply_value" });
  });

  it("never publishes a circulating supply above max, nor a USD value above max × price", () => {
    const amounts = [0n, 1n, 49n, 50n, 999n, 1000n, 1001n, 10n ** 30n];
    for (const burned of amounts)
      for (const locked of [0n, 1n, 500n])
        for (const given of [undefined, "0", "999", "1000", "1001"]) {
          const f = tokenFigures(
            input({ burned, locked, ...(given ? { circulating: { value: given } } : {}) }),
          );
          if (f.circulating_supply !== null) expect(BigInt(f.circulating_supply)).toBeLessThanOrEqual(1000n);
          if (f.circulating_supply_usd !== null) expect(f.circulating_supply_usd).toBeLessThanOrEqual(20);
          if (f.circulating_supply === null) expect(f.notes.circulatingSupply).toBeDefined();
        }
  });

  it("values both legs, fills an unpriced leg with its priced twin, and sums per token and dapp", () => {
    const price = (id: string) => (id === ALPH_TOKEN_ID ? 0.5 : id === TOKEN ? 2 : null);
    const decimals = (id: string) => (id === ALPH_TOKEN_ID ? 18 : 0);
    const tvl = computeTvl(
      [
        {
          pool: "p1",
          dapp_id: "d",
          legs: [
            { token_id: ALPH_TOKEN_ID, reserve: 4n * 10n ** 18n },
            { token_id: TOKEN, reserve: 3n },
          ],
        },
        {
          pool: "p2",
          dapp_id: "d",
          legs: [
            { token_id: TOKEN, reserve: 5n },
            { token_id: OTHER, reserve: 999n },
          ],
        },
        {
          pool: "p3",
          dapp_id: "e",
          legs: [
            { token_id: OTHER, reserve: 1n },
            { token_id: OTHER.replace("e", "1"), reserve: 1n },
          ],
        },
      ],
      price,
      decimals,
    );
    expect(tvl.pools).toEqual(
      new Map([
        ["p1", 8],
        ["p2", 20],
      ]),
    );
    expect(tvl.tokens).toEqual(
      new Map([
        [ALPH_TOKEN_ID, 2],
        [TOKEN, 16],
        [OTHER, 10],
      ]),
    );
    expect(tvl.dapps).toEqual(new Map([["d", 28]]));
  });
});
