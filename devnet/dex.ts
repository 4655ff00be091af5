/**
 * The devnet's Ayin-like DEX, homed on chain 0→0: one factory, the constant-product pairs of the plan it creates
 * (`PairCreated` event 0 on the factory), their first liquidity (`Mint` event 0) and swaps (`Swap` event 2).
 * Pairs keep reserves in their contract output but issue no LP token.
 *
 * Trading follows a schedule per pool, a function of chain time and the seed only ({@link poolRegime}), so the
 * demo's candles have shape: steady trading (a swap every few blocks), bursts of a minute or two (several
 * extra swaps per block), quiet gaps of several minutes (no swap at all), and trend phases of half an hour or
 * so that alternate buy-heavy and sell-heavy, pulled back towards the pool's first price: the constant-product
 * price then drifts up and down by tens of percent.
 */
import { DUST_AMOUNT, MINIMAL_CONTRACT_DEPOSIT, ONE_ALPH } from "@alephium/web3";
import { ALPH_TOKEN_ID } from "../lib/chain/types.ts";
import type { Accounts, Ledger } from "./ledger.ts";
import type { Plan } from "./plan.ts";
import { hashUnit, type Rng } from "./random.ts";
import { addressVal, byteVec, type TxBuilder, USER_GAS_PRICE, u256 } from "./tx-builder.ts";
import type { BlockCtx, ContractRec, DevnetAddress, OutSpec } from "./types.ts";

/** Amount out of a constant-product swap with the 0.3% fee (Uniswap V2 / Ayin formula). */
export function swapAmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  const inWithFee = amountIn * 997n;
  return (inWithFee * reserveOut) / (reserveIn * 1000n + inWithFee);
}

function bigintSqrt(v: bigint): bigint {
  if (v < 2n) return v;
  // Newton iteration from a power of two above the root converges monotonically downwards.
  let x = 1n << BigInt((v.toString(2).length >> 1) + 1);
  for (;;) {
    const y = (x + v / x) >> 1n;
    if (y >= x) break;
    x = y;
  }
  return x;
}

const MINUTE = 60_000;
/** Each pool's activity window: at most one burst early in it and one quiet gap late in it. */
const ACTIVITY_WINDOW_MS = 20 * MINUTE;

/** How a pool trades at a moment of chain time. */
export interface PoolRegime {
  /** quiet: no swap; steady: its share of the block's swaps; burst: that, doubled, plus 1–3 extra per block. */
  mode: "quiet" | "steady" | "burst";
  /** Probability that a swap buys the base token (before the pull back to the pool's first price). */
  buyBias: number;
}

/**
 * The trading regime of the `index`-th planned pool at `ts`, from the seed only. Activity windows of 20 min
 * (staggered by 7 min per pool) hold a burst of 1–2 min starting 2–7 min in (70% of windows) and a quiet gap of
 * 3.5–7 min starting 10–13 min in (75% of windows). Trend phases of 24 + 5·index min alternate buy-heavy and
 * sell-heavy (bias 0.5 ± 0.15..0.35); a burst leans hard one way (0.85 or 0.15).
 */
export function poolRegime(seed: number, index: number, ts: number): PoolRegime {
  const shifted = ts + index * 7 * MINUTE;
  const w = Math.floor(shifted / ACTIVITY_WINDOW_MS);
  const pos = shifted - w * ACTIVITY_WINDOW_MS;
  const h = (salt: number): number => hashUnit(seed, index, w, salt);
  if (h(1) < 0.7) {
    const start = 2 * MINUTE + Math.floor(h(2) * 5 * MINUTE);
    const length = MINUTE + Math.floor(h(3) * MINUTE);
    if (pos >= start && pos < start + length) return { mode: "burst", buyBias: h(4) < 0.5 ? 0.85 : 0.15 };
  }
  if (h(5) < 0.75) {
    const start = 10 * MINUTE + Math.floor(h(6) * 3 * MINUTE);
    const length = 3.5 * MINUTE + Math.floor(h(7) * 3.5 * MINUTE);
    if (pos >= start && pos < start + length) return { mode: "quiet", buyBias: 0.5 };
  }
  const phaseMs = (24 + 5 * index) * MINUTE;
  const phase = Math.floor((ts + index * 11 * MINUTE) / phaseMs);
  const sign = phase % 2 === 0 ? 1 : -1;
  return { mode: "steady", buyBias: 0.5 + sign * (0.15 + 0.2 * hashUnit(seed, index, phase, 8)) };
}

export interface Dex {
  /**
   * On chain 0→0, one step a block: deploys the factory, then seeds an empty pair with liquidity (by a group-0
   * user holding its tokens) or creates the next planned pair whose tokens exist.
   */
  setup(ctx: BlockCtx): void;
  /** Whether the block's chain has a funded pair (swaps are possible). */
  trades(ctx: BlockCtx): boolean;
  /** A user swap on a funded pair of the block's chain, chosen by the pools' regimes; false when none. */
  swap(ctx: BlockCtx): boolean;
  /** The extra swaps of the pools in a burst (1–3 each). */
  bursts(ctx: BlockCtx): void;
}

export function createDex(deps: {
  rng: Rng;
  seed: number;
  plan: Plan;
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
}): Dex {
  const { rng, ledger, builder, plan } = deps;
  const group0 = deps.accounts.usersByGroup[0]!;
  const planIndex = new Map(plan.pairs.map((p, i) => [p.id, i]));

  /** Moves pair reserves and mirrors them into the pair's contract assets. */
  const applyPairDelta = (pool: ContractRec, d0: bigint, d1: bigint): void => {
    const p = pool.pair!;
    p.reserve0 += d0;
    p.reserve1 += d1;
    pool.alph = MINIMAL_CONTRACT_DEPOSIT + (p.token0 === ALPH_TOKEN_ID ? p.reserve0 : 0n);
    pool.tokens = new Map();
    if (p.token0 !== ALPH_TOKEN_ID) pool.tokens.set(p.token0, p.reserve0);
    pool.tokens.set(p.token1, p.reserve1);
  };

  const addLiquidity = (ctx: BlockCtx, pool: ContractRec, user: DevnetAddress): boolean => {
    const p = pool.pair!;
    const bal = ledger.tokenBalance(user, ctx.ts);
    let a0: bigint;
    let a1: bigint;
    const have1 = bal.get(p.token1) ?? 0n;
    if (p.reserve0 === 0n) {
      a1 = (have1 * BigInt(rng.int(20, 40))) / 100n;
      a0 =
        p.token0 === ALPH_TOKEN_ID
          ? rng.bigint(200n * ONE_ALPH, 2000n * ONE_ALPH)
          : ((bal.get(p.token0) ?? 0n) * BigInt(rng.int(20, 40))) / 100n;
    } else {
      a1 = (have1 * BigInt(rng.int(5, 15))) / 100n;
      a0 = (a1 * p.reserve0) / p.reserve1;
    }
    if (a0 === 0n || a1 === 0n) return false;
    const gas = builder.userGas(70000);
    const tokens = new Map([[p.token1, a1]]);
    if (p.token0 !== ALPH_TOKEN_ID) tokens.set(p.token0, a0);
    const alphNeed = BigInt(gas) * USER_GAS_PRICE + (p.token0 === ALPH_TOKEN_ID ? a0 : 0n);
    const g = ledger.gather(user, ctx.ts, alphNeed, tokens);
    if (!g) return false;
    let liquidity = bigintSqrt(a0 * a1);
    if (p.liquidity > 0n) {
      const l0 = (a0 * p.liquidity) / p.reserve0;
      const l1 = (a1 * p.liquidity) / p.reserve1;
      liquidity = l0;
      if (l1 < l0) liquidity = l1;
    }
    const contractInput = builder.contractOutputOf(pool);
    ledger.touchContract(ctx, pool);
    applyPairDelta(pool, a0, a1);
    p.liquidity += liquidity;
    if (p.anchor0 === 0n) {
      p.anchor0 = p.reserve0;
      p.anchor1 = p.reserve1;
    }
    const { outputs: made } = builder.commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [contractInput],
      fixed: [g.change],
      generated: [builder.contractSpec(pool)],
      scriptOpt: builder.script(),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events: [
        {
          contractAddress: pool.address,
          eventIndex: 0,
          fields: [addressVal(user.address), u256(a0), u256(a1), u256(liquidity)],
        },
      ],
    });
    pool.outputKey = made.find((o) => o.type === "ContractOutput")!.key;
    return true;
  };

  /** Whether a pair's token exists beyond reorg depth (ALPH always does). */
  const settledToken = (id: string): boolean => {
    if (id === ALPH_TOKEN_ID) return true;
    const c = ledger.contractById(id);
    return c !== undefined && ledger.settled(c);
  };

  /** Creates the first planned pair not yet created whose tokens were issued beyond reorg depth. */
  const createPair = (ctx: BlockCtx, factory: ContractRec, pairs: ContractRec[]): void => {
    const existing = new Set(pairs.map((p) => p.id));
    const next = plan.pairs.find(
      (p) => !existing.has(p.id) && settledToken(p.token0) && settledToken(p.token1),
    );
    if (!next) return;
    const { token0, token1, id: pairId } = next;
    ledger.touchContract(ctx, factory);
    factory.counter += 1;
    const pair = builder.deployContract(ctx, rng.pick(group0), "pair", pairId, {
      parent: factory,
      iface: "",
      pair: {
        token0,
        token1,
        reserve0: 0n,
        reserve1: 0n,
        liquidity: 0n,
        factory: factory.address,
        anchor0: 0n,
        anchor1: 0n,
      },
      extraEvents: [
        {
          contractAddress: factory.address,
          eventIndex: 0,
          fields: [byteVec(token0), byteVec(token1), byteVec(pairId), u256(factory.counter)],
        },
      ],
    });
    if (!pair) factory.counter -= 1;
  };

  /** Funded pairs of the block's chain. */
  const live = (ctx: BlockCtx): ContractRec[] =>
    ledger.contractsOn(ctx.chainIndex, "pair").filter((p) => p.pair!.reserve0 > 0n);
  const regimeOf = (pool: ContractRec, ts: number): PoolRegime =>
    poolRegime(deps.seed, planIndex.get(pool.id) ?? 0, ts);

  /**
   * A swap on `pool` by a group-0 user who can pay it. Direction: buy the base token (token1 of an ALPH pair,
   * else token0, as the normalizer prices them) with probability `buyBias`, less as the price rose above the
   * pool's first price (more as it fell). Size: 0.05%–1.2% of the input reserve, small ones more likely.
   */
  const swapOn = (ctx: BlockCtx, pool: ContractRec, buyBias: number): boolean => {
    const p = pool.pair!;
    const baseIs1 = p.token0 === ALPH_TOKEN_ID;
    // Price of the base in the quote relative to the first one: (quote/base now) / (quote/base at the anchor).
    const [rb, rq, ab, aq] = baseIs1
      ? [p.reserve1, p.reserve0, p.anchor1, p.anchor0]
      : [p.reserve0, p.reserve1, p.anchor0, p.anchor1];
    const relative = Number((rq * ab * 1_000_000n) / (rb * aq)) / 1_000_000;
    const buyProb = Math.min(0.9, Math.max(0.1, buyBias - 0.6 * (relative - 1)));
    const buy = rng.chance(buyProb);
    // Buying the base means paying the quote in.
    const zeroForOne = baseIs1 ? buy : !buy;
    const tokenIn = zeroForOne ? p.token0 : p.token1;
    const tokenOut = zeroForOne ? p.token1 : p.token0;
    const [rIn, rOut] = zeroForOne ? [p.reserve0, p.reserve1] : [p.reserve1, p.reserve0];
    const u = rng.next();
    const ppm = BigInt(500 + Math.floor(11_500 * u * u));
    const amountIn = (rIn * ppm) / 1_000_000n;
    if (amountIn === 0n) return false;
    const amountOut = swapAmountOut(amountIn, rIn, rOut);
    if (amountOut === 0n || amountOut >= rOut) return false;
    const gas = builder.userGas(60000);
    const alphNeed =
      BigInt(gas) * USER_GAS_PRICE +
      (tokenIn === ALPH_TOKEN_ID ? amountIn : 0n) +
      (tokenOut === ALPH_TOKEN_ID ? 0n : DUST_AMOUNT);
    const tokensNeed = tokenIn === ALPH_TOKEN_ID ? new Map<string, bigint>() : new Map([[tokenIn, amountIn]]);
    // The first user (from a random one on) who holds what the swap needs.
    const users = deps.accounts.usersByGroup[ctx.from]!;
    const first = rng.int(0, users.length - 1);
    let user: DevnetAddress | undefined;
    let g: ReturnType<Ledger["gather"]>;
    for (let k = 0; k < users.length && !g; k++) {
      user = users[(first + k) % users.length]!;
      if (tokenIn !== ALPH_TOKEN_ID && (ledger.tokenBalance(user, ctx.ts).get(tokenIn) ?? 0n) < amountIn)
        continue;
      g = ledger.gather(user, ctx.ts, alphNeed, tokensNeed);
    }
    if (!g || !user) return false;
    const contractInput = builder.contractOutputOf(pool);
    ledger.touchContract(ctx, pool);
    applyPairDelta(pool, zeroForOne ? amountIn : -amountOut, zeroForOne ? -amountOut : amountIn);
    const userOut: OutSpec =
      tokenOut === ALPH_TOKEN_ID
        ? { type: "AssetOutput", address: user.address, alph: amountOut, tokens: new Map() }
        : {
            type: "AssetOutput",
            address: user.address,
            alph: DUST_AMOUNT,
            tokens: new Map([[tokenOut, amountOut]]),
          };
    const { outputs: made } = builder.commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [contractInput],
      fixed: [g.change],
      generated: [userOut, builder.contractSpec(pool)],
      scriptOpt: builder.script(),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events: [
        {
          contractAddress: pool.address,
          eventIndex: 2,
          fields: [
            addressVal(user.address),
            u256(zeroForOne ? amountIn : 0n),
            u256(zeroForOne ? 0n : amountIn),
            u256(zeroForOne ? 0n : amountOut),
            u256(zeroForOne ? amountOut : 0n),
            addressVal(user.address),
          ],
        },
      ],
    });
    pool.outputKey = made.find((o) => o.type === "ContractOutput")!.key;
    return true;
  };

  return {
    setup(ctx) {
      if (ctx.chainIndex !== 0 || !plan.factory) return;
      const factory = ledger.contractsOn(0, "factory")[0];
      if (!factory) {
        builder.deployContract(ctx, rng.pick(group0), "factory", plan.factory.id, { iface: "" });
        return;
      }
      const pairs = ledger.contractsOn(0, "pair");
      // Seed liquidity of the first empty pair a group-0 user can fund (holding both tokens).
      for (const empty of pairs.filter((p) => p.pair!.reserve0 === 0n)) {
        const p = empty.pair!;
        const lp = group0.find((u) => {
          const bal = ledger.tokenBalance(u, ctx.ts);
          return (
            (bal.get(p.token1) ?? 0n) > 0n && (p.token0 === ALPH_TOKEN_ID || (bal.get(p.token0) ?? 0n) > 0n)
          );
        });
        if (lp && addLiquidity(ctx, empty, lp)) return;
      }
      if (pairs.length < plan.pairs.length) createPair(ctx, factory, pairs);
    },

    // Pairs are homed on chain 0→0 (the factory's): other chains skip the scan.
    trades: (ctx) => ctx.chainIndex === 0 && live(ctx).length > 0,

    swap(ctx) {
      const weighted = live(ctx).map((pool) => {
        const regime = regimeOf(pool, ctx.ts);
        return { pool, regime, weight: regime.mode === "quiet" ? 0 : regime.mode === "burst" ? 2 : 1 };
      });
      const total = weighted.reduce((s, w) => s + w.weight, 0);
      if (total === 0) return false;
      let r = rng.int(0, total - 1);
      for (const w of weighted) {
        if (r < w.weight) return swapOn(ctx, w.pool, w.regime.buyBias);
        r -= w.weight;
      }
      return false;
    },

    bursts(ctx) {
      for (const pool of live(ctx)) {
        const regime = regimeOf(pool, ctx.ts);
        if (regime.mode !== "burst") continue;
        const n = rng.int(1, 3);
        for (let i = 0; i < n; i++) swapOn(ctx, pool, regime.buyBias);
      }
    },
  };
}
