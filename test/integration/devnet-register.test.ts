// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * Registration of the simulated network for prices (devnet/register.ts) into a real, migrated Postgres: the
 * DEX factory, the two price sources, the oracle's feeds and the watched pairs, the decoder kinds of its dapp
 * contracts, the DeFi dapps' rows and the Elexium factory, from the chain's plan, before the chain made any block; idempotent, and a restart re-adds a
 * watched pair an admin deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import {
  DEVNET_DAPP,
  DEVNET_DEX_SOURCE,
  DEVNET_ORACLE_SOURCE,
  devnetDecoderContracts,
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
    expect(
      await q("SELECT factory_address, dapp_id, swap_event_index FROM dex_factories WHERE dapp_id = $1", [
        DEVNET_DAPP,
      ]),
    ).toEqual([
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

  it("registers the DeFi dapps: their rows, every contract's decoder kind and the Elexium factory", async () => {
    const plan = chain.plan();
    const dapps = await q<{ id: string }>(
      "SELECT id FROM dapps WHERE id IN ('elexium', 'alphbanx', 'deadrare', 'myonion', 'wormhole') ORDER BY id",
    );
    expect(dapps.map((d) => d.id)).toEqual(["alphbanx", "deadrare", "elexium", "myonion", "wormhole"]);
    const rows = await q<Record<string, string>>(
      "SELECT contract_address, dapp_id, decoder, label, code_hash FROM decoder_contracts ORDER BY contract_address",
    );
    const expected = devnetDecoderContracts(plan)
      .map((r) => ({
        contract_address: r.contractAddress,
        dapp_id: r.dappId,
        decoder: r.decoder,
        label: r.label,
        code_hash: "codeHash" in r ? r.codeHash : null,
      }))
      .sort((a, b) => (a.contract_address < b.contract_address ? -1 : 1));
    expect(rows).toEqual(expected);
    const kinds = new Map(rows.map((r) => [r.contract_address, r.decoder]));
    expect(kinds.get(plan.alphbanx.loanManager.address)).toBe("alphbanx-loan-manager");
    expect(kinds.get(plan.alphbanx.abd.address)).toBe("alphbanx-abd");
    expect(kinds.get(plan.alphbanx.abx.address)).toBe("alphbanx-abx");
    expect(kinds.get(plan.wormhole.governance.address)).toBe("wormhole-governance");
    expect(
      await q(
        `SELECT dapp_id, created_event_index, token0_field, token1_field, pool_field, swap_event_index, mint_event_index,
           burn_event_index, stable_field, liquidity_layout FROM dex_factories WHERE factory_address = $1`,
        [plan.elexium.factory.address],
      ),
    ).toEqual([
      {
        dapp_id: "elexium",
        created_event_index: 0,
        token0_field: 0,
        token1_field: 1,
        pool_field: 3,
        swap_event_index: 3,
        mint_event_index: 1,
        burn_event_index: 2,
        stable_field: 2,
        liquidity_layout: "velodrome",
      },
    ]);
  });

  it("watches one pair per planned pool and per oracle key, as devnetPricePairs lists them", async () => {
    const rows = await q<Record<string, unknown>>(
      `SELECT source_id, pair_symbol, pair_label, pool_created_at, token_id, quote_token_id, chain, chain_id,
         denomination, available, enabled, enable_trades, include_in_tvl, token_address, decimals, quote_decimals
       FROM price_pairs WHERE source_id LIKE 'devnet-%' ORDER BY id`,
    );
    const expected = devnetPricePairs(chain);
    const byAddressOrder = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a["contract_address"]) < String(b["contract_address"]) ? -1 : 1;
    expect([...rows].sort(byAddressOrder)).toEqual(
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

  it("binds the devnet's dapp contracts to their decoder kinds and adds their dapps", async () => {
    const plan = chain.plan();
    const rows = await q<Record<string, unknown>>(
      "SELECT contract_address, dapp_id, decoder, label FROM decoder_contracts",
    );
    const byAddressOrder = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a["contract_address"]) < String(b["contract_address"]) ? -1 : 1;
    expect([...rows].sort(byAddressOrder)).toEqual(
      devnetDecoderContracts(plan)
        .map((r) => ({
          contract_address: r.contractAddress,
          dapp_id: r.dappId,
          decoder: r.decoder,
          label: r.label,
        }))
        .sort(byAddressOrder),
    );
    const byAddress = new Map(rows.map((r) => [r["contract_address"], [r["dapp_id"], r["decoder"]]]));
    expect(byAddress.get(plan.randomness.address)).toEqual(["dia-oracle", "dia-random"]);
    expect(byAddress.get(plan.oracle.address)).toEqual(["dia-oracle", "dia-price"]);
    for (const f of plan.furnaces) expect(byAddress.get(f.address)).toEqual(["furnace", "furnace"]);
    const cr = plan.chainReaction;
    expect(byAddress.get(cr.factoryV2.address)).toEqual(["chainreaction", "chainreaction-v2"]);
    expect(byAddress.get(cr.v1.address)).toEqual(["chainreaction", "chainreaction-v1"]);
    expect(byAddress.get(cr.hub.address)).toEqual(["chainreaction", "guessing-hub"]);
    expect(
      await q(
        "SELECT id, name FROM dapps WHERE id IN ('chainreaction', 'furnace', 'dia-oracle') ORDER BY id",
      ),
    ).toEqual([
      { id: "chainreaction", name: "Chain Reaction" },
      { id: "dia-oracle", name: "DIA Oracle" },
      { id: "furnace", name: "Token Furnace" },
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
