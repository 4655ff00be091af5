/**
 * What the simulated network offers the price processors: an oracle posting `OracleUpdate` events about once a
 * minute per key, and pools whose trading has shape over chain time (steady, bursts, quiet gaps, prices that
 * move both ways), all known up front (plan) and deterministic from the seed.
 */
import { addressFromContractId, subContractId } from "@alephium/web3";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createDevnetChain,
  type DevnetChain,
  type DevnetPlannedPool,
  ORACLE_FEEDS,
  poolRegime,
} from "../../devnet/chain.ts";
import { devnetPricePairs } from "../../devnet/register.ts";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { createStaticDappBook } from "../../pipeline/normalize/dapps.ts";
import { normalizeBlock } from "../../pipeline/normalize/normalize.ts";
import { createPoolBook } from "../../pipeline/normalize/pools.ts";

const MINUTE = 60_000;
const TWO_HOURS = 2 * 60 * MINUTE;
const CHAINS = 16;

interface SwapPoint {
  ts: number;
  /** Price of the base token in the quote token (raw units) after the swap, from the replayed reserves. */
  price: number;
}

/** Replays a pool's Mint and Swap events (main chain) into its reserves; returns the price after each swap. */
function replayPool(
  chain: DevnetChain,
  pool: DevnetPlannedPool,
): { swaps: SwapPoint[]; r0: bigint; r1: bigint } {
  let r0 = 0n;
  let r1 = 0n;
  const swaps: SwapPoint[] = [];
  const baseIs1 = pool.token0 === ALPH_TOKEN_ID;
  for (const b of chain.mainChain(0))
    for (const e of b.events) {
      if (e.contractAddress !== pool.address) continue;
      const n = (i: number): bigint => BigInt(e.fields[i]!.value as string);
      if (e.eventIndex === 0) {
        r0 += n(1);
        r1 += n(2);
      } else if (e.eventIndex === 2) {
        r0 += n(1) - n(3);
        r1 += n(2) - n(4);
        swaps.push({
          ts: b.block.timestamp,
          price: baseIs1 ? Number(r0) / Number(r1) : Number(r1) / Number(r0),
        });
      }
    }
  return { swaps, r0, r1 };
}

/** Largest rise from a running low and largest fall from a running high, as fractions. */
function swings(prices: number[]): { up: number; down: number } {
  let low = Number.POSITIVE_INFINITY;
  let high = 0;
  let up = 0;
  let down = 0;
  for (const p of prices) {
    low = Math.min(low, p);
    high = Math.max(high, p);
    up = Math.max(up, p / low - 1);
    down = Math.max(down, 1 - p / high);
  }
  return { up, down };
}

describe("devnet plan", () => {
  it("knows token, factory, pool and oracle addresses before any block, and creates exactly those", () => {
    const chain = createDevnetChain({ seed: 5 });
    const plan = chain.plan();
    expect(plan.tokens).toHaveLength(6);
    expect(plan.pools).toHaveLength(4);
    const factory = plan.factory!;
    expect(factory.address).toBe(addressFromContractId(factory.id));
    for (const p of plan.pools) {
      expect(p.id).toBe(subContractId(factory.id, p.token0 + p.token1, 0));
      expect(p.address).toBe(addressFromContractId(p.id));
      // Default pools are ALPH pairs (ALPH, 64 zeros, sorts first as token0).
      expect(p.token0).toBe(ALPH_TOKEN_ID);
    }
    expect(chain.oracle()).toMatchObject({
      address: addressFromContractId(chain.oracle().id),
      keys: ["ALPH/USD", "BTC/USD", "ETH/USD", "USDT/USD"],
      updateEventIndex: 1,
      valueDecimals: 8,
    });
    expect(chain.pools()).toEqual([]);
    chain.produceUntil(chain.options.startTimestamp + 20 * MINUTE);
    expect(chain.tokens().map((t) => [t.id, t.symbol, t.decimals])).toEqual(
      plan.tokens.map((t) => [t.id, t.symbol, t.decimals]),
    );
    expect(new Set(chain.pools().map((p) => p.address))).toEqual(new Set(plan.pools.map((p) => p.address)));
    expect(chain.pools().every((p) => p.factoryAddress === factory.address)).toBe(true);
    expect(chain.contractInfo(chain.oracle().address)?.kind).toBe("oracle");
  });

  it("has no DEX with pools: 0, and still an oracle", () => {
    const chain = createDevnetChain({ seed: 5, pools: 0 });
    expect(chain.plan().factory).toBeUndefined();
    expect(chain.plan().pools).toEqual([]);
    chain.advance(300);
    expect(chain.pools()).toEqual([]);
    expect(chain.contractInfo(chain.oracle().address)?.kind).toBe("oracle");
  });
});

describe("devnet prices over two hours of chain time", () => {
  let chain: DevnetChain;
  beforeAll(() => {
    chain = createDevnetChain({ seed: 8 });
    chain.produceUntil(chain.options.startTimestamp + TWO_HOURS);
  });

  it("posts OracleUpdate(key: ByteVec, value: U256, timestamp: U256 seconds) about once a minute per key", () => {
    const oracle = chain.oracle();
    const keyOfHex = new Map(oracle.keys.map((k) => [Buffer.from(k, "utf8").toString("hex"), k]));
    const posts = new Map<string, { ts: number; value: bigint }[]>(oracle.keys.map((k) => [k, []]));
    const txs = new Set<string>();
    for (let c = 0; c < CHAINS; c++)
      for (const b of chain.mainChain(c))
        for (const e of b.events) {
          if (e.contractAddress !== oracle.address) continue;
          expect(c).toBe(oracle.chainIndex);
          expect(e.eventIndex).toBe(1);
          expect(e.fields.map((f) => f.type)).toEqual(["ByteVec", "U256", "U256"]);
          const [key, value, seconds] = e.fields.map((f) => f.value) as [string, string, string];
          expect(keyOfHex.has(key)).toBe(true);
          expect(value).toMatch(/^[1-9][0-9]*$/);
          expect(seconds).toBe(String(Math.floor(b.block.timestamp / 1000)));
          expect(e.timestamp).toBe(b.block.timestamp);
          posts.get(keyOfHex.get(key)!)!.push({ ts: b.block.timestamp, value: BigInt(value) });
          txs.add(e.txId);
        }
    for (const feed of ORACLE_FEEDS) {
      const list = posts.get(feed.key)!;
      // About one post a minute: 2 h hold 100..130 of them, each 50 s to 80 s after the previous one.
      expect(list.length).toBeGreaterThanOrEqual(100);
      expect(list.length).toBeLessThanOrEqual(130);
      for (let i = 1; i < list.length; i++) {
        expect(list[i]!.ts - list[i - 1]!.ts).toBeGreaterThanOrEqual(50_000);
        expect(list[i]!.ts - list[i - 1]!.ts).toBeLessThanOrEqual(80_000);
      }
      const values = list.map((p) => Number(p.value) / 1e8);
      expect(Math.min(...values)).toBeGreaterThanOrEqual(feed.min);
      expect(Math.max(...values)).toBeLessThanOrEqual(feed.max);
      // It moves: both up and down, and not always by the same step.
      const steps = values.slice(1).map((v, i) => v - values[i]!);
      expect(steps.some((s) => s > 0)).toBe(true);
      expect(steps.some((s) => s < 0)).toBe(true);
      expect(new Set(values).size).toBeGreaterThan(list.length / 2);
    }
    const alph = posts.get("ALPH/USD")!.map((p) => p.value);
    for (const v of alph) {
      expect(v).toBeGreaterThanOrEqual(30_000_000n);
      expect(v).toBeLessThanOrEqual(100_000_000n);
    }
    // The posts are script txs of the feeder: its inputs, no contract input or output, events in key order.
    for (const txId of [...txs].slice(0, 20)) {
      const loc = chain.getTransaction(txId)!;
      expect(loc.tx.scriptExecutionOk).toBe(true);
      expect(loc.tx.unsigned.scriptOpt).toMatch(/^[0-9a-f]+$/);
      expect(loc.tx.contractInputs).toEqual([]);
      expect(loc.tx.generatedOutputs).toEqual([]);
      for (const i of loc.tx.unsigned.inputs)
        expect(chain.getOutput(i.outputRef.key)!.address).toBe(oracle.feeder);
      const keys = chain.eventsOfTx(txId).map((e) => keyOfHex.get(e.fields[0]!.value as string)!);
      expect(keys).toEqual(oracle.keys.filter((k) => keys.includes(k)));
    }
    // The contract state holds the last value posted for each key.
    const state = chain.contractState(oracle.address)!;
    expect(state.mutFields.slice(1).map((f) => BigInt(f.value as string))).toEqual(
      oracle.keys.map((k) => posts.get(k)!.at(-1)!.value),
    );
  });

  it("normalizes oracle posts as undecoded contract events with the node's fields", () => {
    const oracle = chain.oracle();
    // The randomness oracle shares the chain and the event index: pick a block with a price post.
    const block = chain
      .mainChain(oracle.chainIndex)
      .find((b) => b.events.some((e) => e.contractAddress === oracle.address && e.eventIndex === 1))!;
    const events = normalizeBlock(chain.rawBlock(block.block.hash)!, {
      dapps: createStaticDappBook([]),
      pools: createPoolBook([]),
      maxPayloadBytes: 100_000,
    }).events.filter((e) => e.contract_address === oracle.address);
    const posted = block.events.filter((e) => e.contractAddress === oracle.address);
    expect(events.map((e) => [e.category, e.sub_kind, e.type])).toEqual(
      posted.map(() => ["contract", "event", "undecoded"]),
    );
    // The main event of each post also carries the tx's fee.
    const fees = new Map(
      block.block.transactions.map((t) => [
        t.unsigned.txId,
        (BigInt(t.unsigned.gasAmount) * BigInt(t.unsigned.gasPrice)).toString(),
      ]),
    );
    expect(events.map((e) => [e.contract_event_index, e.payload])).toEqual(
      posted.map((p, i) => [
        1,
        {
          event_index: 1,
          fields: p.fields,
          ...(events[i]!.is_main ? { tx_fee: fees.get(p.txId) } : {}),
        },
      ]),
    );
    expect(events.some((e) => e.is_main)).toBe(true);
  });

  it("trades every pool steadily, in bursts and with quiet gaps, moving its price both ways", () => {
    const plan = chain.plan();
    expect(chain.pools()).toHaveLength(plan.pools.length);
    for (const planned of plan.pools) {
      const { swaps, r0, r1 } = replayPool(chain, planned);
      // The replayed events account for the pool's reserves exactly.
      const pool = chain.pools().find((p) => p.id === planned.id)!;
      expect([r0, r1]).toEqual([pool.reserve0, pool.reserve1]);
      const perMinute = new Map<number, number>();
      for (const s of swaps) {
        const m = Math.floor(s.ts / MINUTE);
        perMinute.set(m, (perMinute.get(m) ?? 0) + 1);
      }
      // Steady: swaps in most minutes of the two hours (minus start-up and quiet gaps).
      expect(perMinute.size).toBeGreaterThanOrEqual(60);
      // Bursts: minutes with at least 5 swaps.
      expect([...perMinute.values()].filter((n) => n >= 5).length).toBeGreaterThanOrEqual(1);
      // Quiet gaps: at least one stretch of 3 minutes without a swap.
      const gaps = swaps.slice(1).map((s, i) => s.ts - swaps[i]!.ts);
      expect(Math.max(...gaps)).toBeGreaterThanOrEqual(3 * MINUTE);
      // Trends: the price rose by 15% from a low and fell by 15% from a high at some point.
      const { up, down } = swings(swaps.map((s) => s.price));
      expect(up).toBeGreaterThanOrEqual(0.15);
      expect(down).toBeGreaterThanOrEqual(0.15);
    }
  });

  it("prices swaps the way the watched pairs say (base and quote per the normalizer's rule)", () => {
    const pairs = new Map(
      devnetPricePairs(chain)
        .filter((p) => p.sourceId === "devnet-dex")
        .map((p) => [p.pairSymbol, p]),
    );
    const plan = chain.plan();
    const registry = createPoolBook(
      plan.pools.map((p) => ({
        pool_address: p.address,
        token0_id: p.token0,
        token1_id: p.token1,
        dapp_id: "devnet-dex",
        swap_event_index: 2,
        mint_event_index: 0,
        burn_event_index: 1,
      })),
    );
    let checked = 0;
    for (const b of chain.mainChain(0).slice(-200)) {
      const events = normalizeBlock(chain.rawBlock(b.block.hash)!, {
        dapps: createStaticDappBook([]),
        pools: registry,
        maxPayloadBytes: 100_000,
      }).events;
      for (const e of events) {
        if (e.category !== "dex" || e.type !== "swap") continue;
        const payload = e.payload as { pool_address: string; base_token_id: string; quote_token_id: string };
        const pair = pairs.get(payload.pool_address)!;
        expect([payload.base_token_id, payload.quote_token_id]).toEqual([pair.tokenId, pair.quoteTokenId]);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("follows the stateless schedule: no swap on a pool in its quiet gap", () => {
    const plan = chain.plan();
    plan.pools.forEach((planned, index) => {
      for (const s of replayPool(chain, planned).swaps)
        expect(poolRegime(chain.options.seed, index, s.ts).mode).not.toBe("quiet");
    });
  });
});

describe("devnet price activity knobs and determinism", () => {
  const swapCounts = (chain: DevnetChain): { swaps: number; userTxs: number } => {
    const pools = new Set(chain.plan().pools.map((p) => p.address));
    let swaps = 0;
    let userTxs = 0;
    // From the first swap on (pools funded), on chain 0→0 where the pools live.
    const blocks = chain.mainChain(0);
    const first = blocks.findIndex((b) =>
      b.events.some((e) => pools.has(e.contractAddress) && e.eventIndex === 2),
    );
    for (const b of blocks.slice(first)) {
      userTxs += b.block.transactions.length - 1;
      swaps += b.events.filter((e) => pools.has(e.contractAddress) && e.eventIndex === 2).length;
    }
    return { swaps, userTxs };
  };

  it("makes only burst swaps with swapShare 0, and mostly swaps with swapShare 1", () => {
    const none = createDevnetChain({ seed: 3, swapShare: 0 });
    none.produceUntil(none.options.startTimestamp + 60 * MINUTE);
    none.plan().pools.forEach((planned, index) => {
      for (const s of replayPool(none, planned).swaps) expect(poolRegime(3, index, s.ts).mode).toBe("burst");
    });
    expect(swapCounts(none).swaps).toBeGreaterThan(0);

    const heavy = createDevnetChain({ seed: 3, swapShare: 1, txPerBlock: [4, 8] });
    heavy.produceUntil(heavy.options.startTimestamp + 60 * MINUTE);
    const h = swapCounts(heavy);
    const d = createDevnetChain({ seed: 3 });
    d.produceUntil(d.options.startTimestamp + 60 * MINUTE);
    expect(h.swaps).toBeGreaterThan(2 * swapCounts(d).swaps);
    expect(h.swaps / h.userTxs).toBeGreaterThan(0.6);
    expect(() => createDevnetChain({ swapShare: 1.5 })).toThrow(/swapShare/);
  });

  it("is byte-identical for a seed (pools, swaps and oracle posts), reorgs included", () => {
    const make = (seed: number): string => {
      const chain = createDevnetChain({ seed });
      chain.produceUntil(chain.options.startTimestamp + 20 * MINUTE);
      chain.reorg(0, 3);
      chain.reorg(chain.oracle().chainIndex, 2);
      chain.advance(200);
      return JSON.stringify(
        [0, chain.oracle().chainIndex].map((c) => chain.mainChain(c).map((b) => [b.block, b.events])),
      );
    };
    const a = make(13);
    expect(make(13)).toBe(a);
    expect(make(14)).not.toBe(a);
  });

  it("gives each pool its own schedule, with bursts, quiet gaps and both trend directions", () => {
    for (let index = 0; index < 4; index++) {
      const modes = new Set<string>();
      let buyHeavy = false;
      let sellHeavy = false;
      for (let ts = 1_752_573_600_000; ts < 1_752_573_600_000 + TWO_HOURS; ts += 10_000) {
        const r = poolRegime(1, index, ts);
        modes.add(r.mode);
        if (r.mode === "steady" && r.buyBias > 0.6) buyHeavy = true;
        if (r.mode === "steady" && r.buyBias < 0.4) sellHeavy = true;
        expect(poolRegime(1, index, ts)).toEqual(r);
      }
      expect([...modes].sort()).toEqual(["burst", "quiet", "steady"]);
      expect([buyHeavy, sellHeavy]).toEqual([true, true]);
    }
  });
});
