// Test passes: embedded (figures computed from the stored events, whatever batches the bus made; the guarantees run over Kafka elsewhere).
/**
 * Token market figures and TVL on the demo network, against values computed here by hand: pool reserves
 * from the simulated chain's own pool state, locked ALPH from the coinbase outputs of its raw blocks,
 * burned amounts from the transfers to a burn address read back from the events table, prices from the
 * spot routes (token/ALPH × ALPH/USD), the sort of /token/all by circulating_supply_usd, the bridged USDT's supply
 * against its bridge pool's balance, and no token's figures above its maxSupply. Every block is published
 * (confirmations 0), so the indexed state is the chain's tip.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import { DEVNET_DAPP } from "../../devnet/register.ts";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { backfillFigures } from "../../lib/figures/backfill.ts";
import { BRIDGE_POOL_ISSUANCE } from "../../lib/figures/compute.ts";
import { factContext } from "../../lib/figures/facts.ts";
import { readReserves, readSupplyChanges, refreshFigures } from "../../lib/figures/store.ts";
import { nodeHoldingSource, readTokenSupplies } from "../../pipeline/processors/figures.ts";
import { nodeMetadataSource } from "../../pipeline/processors/registry.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { pricesStateHash } from "../helpers/prices.ts";

/** The wallet that receives the most token outputs from others: the test's "burn address". */
function busiestTokenRecipient(chain: DevnetChain): string {
  const counts = new Map<string, number>();
  for (let c = 0; c < 16; c++) {
    for (const b of chain.mainChain(c)) {
      const txs = b.block.transactions;
      for (const tx of txs.slice(0, b.block.height > 0 ? -1 : undefined)) {
        for (const o of tx.unsigned.fixedOutputs)
          if (o.tokens.length > 0) counts.set(o.address, (counts.get(o.address) ?? 0) + 1);
      }
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
}

/** ALPH still locked at `now`: coinbase outputs (last tx of every block above genesis) and genesis outputs. */
function lockedAlph(chain: DevnetChain, now: number): bigint {
  let sum = 0n;
  for (let c = 0; c < 16; c++) {
    for (const b of chain.mainChain(c)) {
      const txs = b.block.height > 0 ? b.block.transactions.slice(-1) : b.block.transactions;
      for (const tx of txs)
        for (const o of tx.unsigned.fixedOutputs)
          if (o.lockTime > b.block.timestamp && o.lockTime > now) sum += BigInt(o.attoAlphAmount);
    }
  }
  return sum;
}

interface TokenDetails {
  id: string;
  decimals: number | null;
  maxSupply: string | null;
  circulatingSupply: string | null;
  burnedSupply: string | null;
  lockSupply: string | null;
  circulatingSupplyUsd: number | null;
  priceUsd: number | null;
  tvlUsd: number | null;
  unknownFigures: Record<string, string>;
}

describe("token market figures and TVL", () => {
  let p: TestPipeline;
  let burnAddress: string;
  let now: number;
  beforeAll(async () => {
    const chain = createDevnetChain({ seed: 7 });
    chain.advance(1500);
    burnAddress = busiestTokenRecipient(chain);
    // The refresh is driven by the test at a fixed time (the chain's tip), not by the processor's clock.
    p = await startTestPipeline({
      chain,
      confirmations: 0,
      env: { BURN_ADDRESSES: burnAddress, FIGURES_REFRESH_MS: "3600000" },
    });
    await p.catchUp();
    now = chain.latestTimestamp();
    await refreshFigures({ ch: p.ch.ch, pg: p.pg.pg }, { now, maxPriceAgeMs: 7 * 86_400_000 });
  }, 180_000);
  afterAll(async () => p?.close());

  const details = async (id: string): Promise<TokenDetails> => {
    const r = await p.api.app.inject({ url: `/token/${id}/details` });
    expect(r.statusCode).toBe(200);
    return r.json().token as TokenDetails;
  };
  const sources = () => ({
    metadata: nodeMetadataSource(p.deps, { retries: 0 }),
    holding: nodeHoldingSource(p.deps, { timeoutMs: 5_000 }),
  });
  const spot = async (source: string, symbol: string): Promise<number> => {
    const pairs = (await p.api.app.inject({ url: `/price/source/${source}/pair/all` })).json().pairs as {
      id: number;
      pair_symbol: string;
    }[];
    const pair = pairs.find((x) => x.pair_symbol === symbol)!;
    const r = await p.api.app.inject({ url: `/price/pair/${pair.id}/spot` });
    return r.json().price as number;
  };

  it("keeps every pool's reserves equal to the chain's own pool state", async () => {
    const pools = p.chain.pools();
    expect(pools.length).toBeGreaterThanOrEqual(3);
    const reserves = await readReserves(
      p.ch.ch,
      pools.map((x) => x.address),
    );
    for (const pool of pools) {
      const r = reserves.get(pool.address);
      expect(r?.get(pool.token0), `${pool.address} token0`).toBe(pool.reserve0);
      expect(r?.get(pool.token1), `${pool.address} token1`).toBe(pool.reserve1);
    }
  });

  it("counts locked coinbase rewards and transfers to the burn address", async () => {
    const supplies = await readSupplyChanges(p.ch.ch, now);
    const locked = lockedAlph(p.chain, now);
    expect(locked).toBeGreaterThan(0n);
    expect(supplies.get(ALPH_TOKEN_ID)?.locked).toBe(locked);
    // Later, when part of them has unlocked (rewards lock for 500 minutes): only the rest counts.
    const later = now + 30_000_000 - Math.floor((now - p.chain.options.startTimestamp) / 2);
    const lockedLater = lockedAlph(p.chain, later);
    expect(lockedLater).toBeGreaterThan(0n);
    expect(lockedLater).toBeLessThan(locked);
    expect((await readSupplyChanges(p.ch.ch, later)).get(ALPH_TOKEN_ID)?.locked).toBe(lockedLater);
    // Burned: every send or payout to the burn address and every Furnace burn (the simulated network runs
    // furnaces), summed per token from the events read back.
    const rows = await p.ch.ch.query<{ token_id: string; amount: string }>(
      "t",
      `SELECT token_id, toString(amount) AS amount FROM events FINAL
       WHERE main_chain AND ((category = 'transfer' AND sub_kind IN ('send', 'payout') AND to = {a:String})
         OR (category = 'token' AND sub_kind = 'burn' AND type = 'furnace_burn'))`,
      { a: burnAddress },
    );
    const burned = new Map<string, bigint>();
    for (const r of rows) burned.set(r.token_id, (burned.get(r.token_id) ?? 0n) + BigInt(r.amount));
    expect([...burned.keys()].filter((t) => t !== ALPH_TOKEN_ID).length).toBeGreaterThan(0);
    for (const [token, amount] of burned) expect(supplies.get(token)?.burned, token).toBe(amount);
    for (const token of p.chain.tokens()) {
      const d = await details(token.id);
      const b = burned.get(token.id) ?? 0n;
      expect(d.burnedSupply).toBe(b.toString());
      expect(d.lockSupply).toBe("0");
      expect(d.maxSupply).toBe(token.totalSupply.toString());
      expect(d.circulatingSupply).toBe((token.totalSupply - b).toString());
    }
  });

  it("prices tokens through their ALPH pool and the oracle's ALPH/USD, and values circulating supply and TVL", async () => {
    const alphUsd = await spot("devnet-oracle", "ALPH/USD");
    expect(alphUsd).toBeGreaterThan(0);
    const plan = p.chain.plan();
    // Every devnet token has one pool against ALPH (the plan's pools with token0 = ALPH).
    const alphPools = plan.pools.filter((x) => x.token0 === ALPH_TOKEN_ID);
    const priceOf = new Map<string, number>([[ALPH_TOKEN_ID, alphUsd]]);
    for (const pool of alphPools) {
      const traded = p.chain.pools().some((x) => x.address === pool.address);
      if (traded) priceOf.set(pool.token1, (await spot("devnet-dex", pool.address)) * alphUsd);
    }
    expect(priceOf.size).toBeGreaterThan(2);
    const tokens = new Map(p.chain.tokens().map((t) => [t.id, t]));
    const decimals = (id: string) => (id === ALPH_TOKEN_ID ? 18 : tokens.get(id)!.decimals);
    const whole = (amount: bigint, id: string) => Number(amount) / 10 ** decimals(id);
    // TVL by hand: every devnet pool counts (includeInTVL), both legs priced.
    const tvlOf = new Map<string, number>();
    let dappTvl = 0;
    for (const pool of p.chain.pools()) {
      const legs: [string, bigint][] = [
        [pool.token0, pool.reserve0],
        [pool.token1, pool.reserve1],
      ];
      for (const [id, reserve] of legs) {
        const value = whole(reserve, id) * priceOf.get(id)!;
        tvlOf.set(id, (tvlOf.get(id) ?? 0) + value);
        dappTvl += value;
      }
    }
    for (const [id, price] of priceOf) {
      if (id === ALPH_TOKEN_ID) continue;
      const d = await details(id);
      expect(d.priceUsd, id).toBeCloseTo(price, 9);
      expect(d.tvlUsd! / tvlOf.get(id)!, id).toBeCloseTo(1, 9);
      const circulating = BigInt(d.circulatingSupply!);
      expect(d.circulatingSupplyUsd! / (whole(circulating, id) * price), id).toBeCloseTo(1, 9);
    }
    const dapps = (await p.api.app.inject({ url: "/dapps/all" })).json().dapps as {
      id: string;
      tvl_usd: number | null;
    }[];
    const dapp = dapps.find((d) => d.id === DEVNET_DAPP);
    expect(dapp?.tvl_usd).not.toBeNull();
    expect((dapp?.tvl_usd ?? 0) / dappTvl).toBeCloseTo(1, 9);
    // The refresh also leaves a row per token and dapp for series.
    const [history] = await p.ch.ch.query<{ n: string }>(
      "t",
      "SELECT count() AS n FROM market_figures FINAL WHERE entity = 'dapp' AND entity_id = {d:String} AND tvl_usd > 0",
      { d: DEVNET_DAPP },
    );
    expect(Number(history?.n)).toBe(1);
  });

  it("sorts /token/all by circulating_supply_usd with real numbers first and nulls last, both ways", async () => {
    // A token without a price: a registry row that no watched pair prices.
    const extra = `${"9".repeat(63)}0`;
    await p.pg.pg.query(
      "t",
      `INSERT INTO tokens (id, contract_address, symbol, decimals, max_supply, source, created_at, updated_at)
       VALUES ($1, 'unpriced-test-token', 'NOPRICE', 0, '5', 'chain', 0, 0)`,
      [extra],
    );
    await refreshFigures({ ch: p.ch.ch, pg: p.pg.pg }, { now, maxPriceAgeMs: 7 * 86_400_000 });
    for (const order of ["asc", "desc"] as const) {
      const r = await p.api.app.inject({
        url: `/token/all?sort=circulating_supply_usd&order=${order}&pageSize=-1`,
      });
      expect(r.statusCode).toBe(200);
      const values = (r.json().tokens as { circulatingSupplyUsd: number | null }[]).map(
        (t) => t.circulatingSupplyUsd,
      );
      const numbers = values.filter((v): v is number => v !== null);
      expect(numbers.length).toBeGreaterThan(2);
      expect(values.length).toBeGreaterThan(numbers.length);
      // Every number comes before the first null, in the asked order.
      expect(values.slice(0, numbers.length)).toEqual(numbers);
      const sorted = [...numbers].sort((a, b) => (order === "asc" ? a - b : b - a));
      expect(numbers).toEqual(sorted);
    }
  });

  it("reads a missing maxSupply from the node, then counts the token's circulating supply", async () => {
    const token = p.chain.tokens()[0]!;
    await p.pg.pg.query("t", "UPDATE tokens SET max_supply = NULL WHERE id = $1", [token.id]);
    // The official list's tokens (seeded, unknown to the simulated node) were read already: this one is due first.
    await p.pg.pg.query("t", "UPDATE tokens SET supply_read_at = 1 WHERE id <> $1", [token.id]);
    await refreshFigures({ ch: p.ch.ch, pg: p.pg.pg }, { now, maxPriceAgeMs: 7 * 86_400_000 });
    expect((await details(token.id)).circulatingSupply).toBeNull();
    // The simulated node answers getTotalSupply (multicall method 3) as a real node does.
    const read = await readTokenSupplies(p.pg.pg, sources(), now);
    expect(read).toBeGreaterThanOrEqual(1);
    await refreshFigures({ ch: p.ch.ch, pg: p.pg.pg }, { now, maxPriceAgeMs: 7 * 86_400_000 });
    const d = await details(token.id);
    expect(d.maxSupply).toBe(token.totalSupply.toString());
    expect(BigInt(d.circulatingSupply!)).toBe(token.totalSupply - BigInt(d.burnedSupply!));
  });

  it("counts what left the bridge pool as the bridged token's supply, never the pool's unissued u256 range", async () => {
    const planned = p.chain.plan().wormhole.pools[0]!;
    const pool = p.chain.contractState(planned.address);
    expect(pool, "the bridge pool exists at the chain's tip").toBeDefined();
    const held = BigInt(pool!.asset.tokens!.find((t) => t.id === planned.id)!.amount);
    const left = BRIDGE_POOL_ISSUANCE - held;
    expect(left).toBeGreaterThan(0n);
    // Before the pool is read, maxSupply is the node's getTotalSupply, the pool's issuance: refused, with the reason.
    const before = await details(planned.id);
    expect(before.maxSupply).toBe(BRIDGE_POOL_ISSUANCE.toString());
    expect(before.circulatingSupply).toBeNull();
    expect(before.circulatingSupplyUsd).toBeNull();
    expect(before.unknownFigures).toMatchObject({
      circulatingSupply: "unissued_supply",
      circulatingSupplyUsd: "circulating_supply_unknown",
    });
    // The supply read takes the pool's balance: the bridged token is due first.
    await p.pg.pg.query(
      "t",
      "UPDATE tokens SET supply_read_at = CASE WHEN id = $1 THEN NULL ELSE 1 END WHERE NOT deleted",
      [planned.id],
    );
    expect(await readTokenSupplies(p.pg.pg, sources(), now)).toBeGreaterThanOrEqual(1);
    await refreshFigures({ ch: p.ch.ch, pg: p.pg.pg }, { now, maxPriceAgeMs: 7 * 86_400_000 });
    const after = await details(planned.id);
    expect(after.maxSupply).toBe(left.toString());
    expect(BigInt(after.circulatingSupply!)).toBe(
      left - BigInt(after.burnedSupply!) - BigInt(after.lockSupply!),
    );
    expect(after.priceUsd).toBe(1);
    expect(
      after.circulatingSupplyUsd! / (Number(after.circulatingSupply) / 10 ** planned.decimals),
    ).toBeCloseTo(1, 9);
    expect(after.unknownFigures.circulatingSupply).toBeUndefined();
  });

  it("publishes no circulating supply above maxSupply, none in USD above maxSupply × price, and says why a figure is null", async () => {
    const r = await p.api.app.inject({
      url: "/token/all?sort=circulating_supply_usd&order=desc&pageSize=-1",
    });
    const list = r.json().tokens as { id: string; unknownFigures: Record<string, string> }[];
    expect(list.length).toBeGreaterThan(5);
    let checked = 0;
    for (const entry of list) {
      const d = await details(entry.id);
      expect(d.unknownFigures, d.id).toEqual(entry.unknownFigures);
      for (const figure of ["circulatingSupply", "circulatingSupplyUsd", "priceUsd", "tvlUsd"] as const) {
        if (d[figure] === null) expect(d.unknownFigures[figure], `${d.id} ${figure}`).toBeDefined();
        else expect(d.unknownFigures[figure], `${d.id} ${figure}`).toBeUndefined();
      }
      if (d.circulatingSupply === null || d.maxSupply === null) continue;
      expect(BigInt(d.circulatingSupply), d.id).toBeLessThanOrEqual(BigInt(d.maxSupply));
      if (d.circulatingSupplyUsd !== null && d.priceUsd !== null && d.decimals !== null) {
        expect(d.circulatingSupplyUsd, d.id).toBeLessThanOrEqual(
          (Number(d.maxSupply) / 10 ** d.decimals) * d.priceUsd,
        );
        checked++;
      }
    }
    expect(checked, "tokens with a circulating supply in USD and a maxSupply").toBeGreaterThan(2);
  });

  it("rebuilds the same facts from the stored events (the backfill a new deployment runs)", async () => {
    const before = await pricesStateHash(p.ch);
    expect(before.pool_reserve_changes!.rows).toBeGreaterThan(5);
    const r = await backfillFigures({ ch: p.ch.ch, pg: p.pg.pg, log: p.deps.log }, factContext(p.config));
    expect(r.supply_changes).toBe(before.supply_changes!.rows);
    expect(await pricesStateHash(p.ch)).toEqual(before);
    // And from nothing: the tables emptied, the backfill alone gives the processor's state.
    await p.ch.ch.command("t", "TRUNCATE TABLE supply_changes");
    await p.ch.ch.command("t", "TRUNCATE TABLE pool_reserve_changes");
    await backfillFigures({ ch: p.ch.ch, pg: p.pg.pg, log: p.deps.log }, factContext(p.config));
    expect(await pricesStateHash(p.ch)).toEqual(before);
  });
});
