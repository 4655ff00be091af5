/**
 * Registration of the simulated network for prices (devnet/register.ts) into a real, migrated Postgres: the
 * DEX factory, the two price sources, the oracle's feeds and the watched pairs, from the chain's plan, before
 * the chain made any block; idempotent, and a restart re-adds a watched pair an admin deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import {
  DEVNET_DAPP,
  DEVNET_DEX_SOURCE,
  DEVNET_ORACLE_SOURCE,
  devnetPricePairs,
  registerDevnetDapps,
} from "../../devnet/register.ts";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { openTestPg, type TestPg } from "../helpers/stores.ts";

describe("devnet registration for prices", () => {
  let db: TestPg;
  let chain: DevnetChain;
  beforeAll(async () => {
    db = await openTestPg();
    chain = createDevnetChain({ seed: 31 });
    await registerDevnetDapps(db.pg, chain);
  });
  afterAll(async () => db?.close());

  const q = <T>(sql: string, params: (string | number)[] = []) => db.pg.query<T>("t", sql, params);

  it("registers the factory and both price sources before any block exists", async () => {
    expect(chain.pools()).toEqual([]);
    expect(await q("SELECT factory_address, dapp_id, swap_event_index FROM dex_factories")).toEqual([
      { factory_address: chain.plan().factory!.address, dapp_id: DEVNET_DAPP, swap_event_index: 2 },
    ]);
    const sources = await q<Record<string, unknown>>(
      `SELECT id, label, kind, dapp_id, contract_addresses, value_decimals, supports_spot, supports_candles,
         supports_trades, supported_denominations, enabled, created_at = updated_at AS same_times
       FROM price_sources WHERE id LIKE 'devnet-%' ORDER BY id`,
    );
    expect(sources).toEqual([
      {
        id: DEVNET_DEX_SOURCE,
        label: "Devnet DEX",
        kind: "onchain_dex",
        dapp_id: DEVNET_DAPP,
        contract_addresses: [],
        value_decimals: null,
        supports_spot: true,
        supports_candles: true,
        supports_trades: true,
        supported_denominations: ["ALPH"],
        enabled: true,
        same_times: true,
      },
      {
        id: DEVNET_ORACLE_SOURCE,
        label: "Devnet oracle",
        kind: "oracle",
        dapp_id: null,
        contract_addresses: [chain.oracle().address],
        value_decimals: 8,
        supports_spot: true,
        supports_candles: false,
        supports_trades: false,
        supported_denominations: ["USD"],
        enabled: true,
        same_times: true,
      },
    ]);
    expect(
      await q(
        "SELECT pair_symbol, base_asset, quote_asset FROM price_available_pairs WHERE source_id = $1 ORDER BY id",
        [DEVNET_ORACLE_SOURCE],
      ),
    ).toEqual([
      { pair_symbol: "ALPH/USD", base_asset: "ALPH", quote_asset: "USD" },
      { pair_symbol: "BTC/USD", base_asset: "BTC", quote_asset: "USD" },
      { pair_symbol: "ETH/USD", base_asset: "ETH", quote_asset: "USD" },
      { pair_symbol: "USDT/USD", base_asset: "USDT", quote_asset: "USD" },
    ]);
  });

  it("watches one pair per planned pool and per oracle key, as devnetPricePairs lists them", async () => {
    const rows = await q<Record<string, unknown>>(
      `SELECT source_id, pair_symbol, pair_label, pool_created_at, token_id, quote_token_id, chain, chain_id,
         denomination, available, enabled, enable_trades, include_in_tvl, token_address, decimals, quote_decimals
       FROM price_pairs WHERE source_id LIKE 'devnet-%' ORDER BY id`,
    );
    const expected = devnetPricePairs(chain);
    expect(rows).toEqual(
      expected.map((p) => ({
        source_id: p.sourceId,
        pair_symbol: p.pairSymbol,
        pair_label: p.pairLabel,
        pool_created_at: p.poolCreatedAt,
        token_id: p.tokenId,
        quote_token_id: p.quoteTokenId,
        chain: "alph",
        chain_id: 8738,
        denomination: p.denomination,
        available: true,
        enabled: true,
        enable_trades: false,
        // The demo counts its pools in TVL, not the oracle's feeds.
        include_in_tvl: p.sourceId === DEVNET_DEX_SOURCE,
        token_address: p.tokenAddress,
        decimals: p.decimals,
        quote_decimals: p.quoteDecimals,
      })),
    );
    // Derived from the plan: pool addresses, base = the token of an ALPH pool, quote ALPH (18 decimals).
    const plan = chain.plan();
    const dex = expected.filter((p) => p.sourceId === DEVNET_DEX_SOURCE);
    expect(dex.map((p) => p.pairSymbol)).toEqual(plan.pools.map((p) => p.address));
    dex.forEach((p, i) => {
      const token = plan.tokens.find((t) => t.id === plan.pools[i]!.token1)!;
      expect(p).toMatchObject({
        pairLabel: `${token.symbol}/ALPH`,
        tokenId: token.id,
        quoteTokenId: ALPH_TOKEN_ID,
        tokenAddress: token.address,
        denomination: "ALPH",
        decimals: token.decimals,
        quoteDecimals: 18,
        poolCreatedAt: null,
      });
    });
    expect(
      expected.filter((p) => p.sourceId === DEVNET_ORACLE_SOURCE).map((p) => [p.pairSymbol, p.tokenId]),
    ).toEqual([
      ["ALPH/USD", ALPH_TOKEN_ID],
      ["BTC/USD", null],
      ["ETH/USD", null],
      ["USDT/USD", null],
    ]);
  });

  it("is idempotent, and a restart re-adds a deleted watched pair", async () => {
    const count = async () =>
      Number(
        (await q<{ n: string }>("SELECT count(*) AS n FROM price_pairs WHERE source_id LIKE 'devnet-%'"))[0]!
          .n,
      );
    const before = await count();
    await q("UPDATE price_pairs SET enabled = false WHERE pair_symbol = 'BTC/USD'");
    await registerDevnetDapps(db.pg, chain);
    expect(await count()).toBe(before);
    // An operator's change stays (ON CONFLICT DO NOTHING).
    expect(await q("SELECT enabled FROM price_pairs WHERE pair_symbol = 'BTC/USD'")).toEqual([
      { enabled: false },
    ]);
    await q("DELETE FROM price_pairs WHERE pair_symbol = $1", [chain.plan().pools[0]!.address]);
    expect(await count()).toBe(before - 1);
    await registerDevnetDapps(db.pg, chain);
    expect(await count()).toBe(before);
  });

  it("records a pool's creation time when the pool already exists at registration", async () => {
    chain.produceUntil(chain.options.startTimestamp + 30 * 60_000);
    const pairs = devnetPricePairs(chain).filter((p) => p.sourceId === DEVNET_DEX_SOURCE);
    for (const pool of chain.pools()) {
      const created = chain.getTransaction(pool.createTxId)!.timestamp;
      expect(pairs.find((p) => p.pairSymbol === pool.address)?.poolCreatedAt).toBe(created);
    }
    expect(pairs.every((p) => p.poolCreatedAt !== null)).toBe(true);
  });
});
