/**
 * The devnet's Elexium (a Velodrome-style DEX) on chain 0→0, beside the Ayin-like DEX: its own factory, the EX
 * token and two dollar tokens (dUSDC, dUSDT, 6 decimals) issued to the group's users, a volatile ALPH/EX pool and a
 * stable dUSDC/dUSDT pool, then steady swaps and some liquidity added and removed.
 *
 * Layouts (dapp-spec.md): factory event 0 `(token0, token1, stable: Bool, pool id, pool count)`; pool events
 * 1 `Mint(sender, amount0, amount1)`, 2 `Burn(sender, to, amount0, amount1)`, 3 `Swap(sender, amount0In,
 * amount1In, amount0Out, amount1Out, to)`. Curves: volatile x·y = k with a 0.3 % fee; stable x³y + y³x = k on
 * amounts scaled to 18 decimals (Velodrome's `_k` and `_get_y`) with a 0.05 % fee. Fees stay in the reserves
 * (Velodrome moves them to a fees contract) and no LP token is issued: positions are kept per address.
 */
import type { node } from "@alephium/web3";
import { DUST_AMOUNT, MINIMAL_CONTRACT_DEPOSIT, ONE_ALPH } from "@alephium/web3";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { addressVal, byteVec, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec } from "../types.ts";
import type { DefiPlan, ElexiumPool } from "./defi-plan.ts";
import {
  boolVal,
  callTx,
  type DappDeps,
  dappState,
  moveAsset,
  newDappContract,
  pickUser,
  scriptOf,
  splitSupply,
} from "./kit.ts";

/** Factory method indexes (mainnet: 0 = pool count, 2 = pool id by index). */
const FACTORY_CREATE = 5;
const POOL_SWAP = 4;
const POOL_MINT = 2;
const POOL_BURN = 3;
const E18 = 10n ** 18n;

function bigintSqrt(v: bigint): bigint {
  if (v < 2n) return v;
  let x = 1n << BigInt((v.toString(2).length >> 1) + 1);
  for (;;) {
    const y = (x + v / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** Velodrome's stable invariant on amounts scaled to 18 decimals: x³y + y³x (scaled by 1e18). */
export function stableK(x: bigint, y: bigint, dec0: number, dec1: number): bigint {
  const sx = (x * E18) / 10n ** BigInt(dec0);
  const sy = (y * E18) / 10n ** BigInt(dec1);
  const a = (sx * sy) / E18;
  const b = (sx * sx) / E18 + (sy * sy) / E18;
  return (a * b) / E18;
}

const f = (x0: bigint, y: bigint): bigint =>
  (x0 * ((((y * y) / E18) * y) / E18)) / E18 + (((((x0 * x0) / E18) * x0) / E18) * y) / E18;
const d = (x0: bigint, y: bigint): bigint =>
  (3n * x0 * ((y * y) / E18)) / E18 + (((x0 * x0) / E18) * x0) / E18;

/** Velodrome's `_get_y`: the y with f(x0, y) = xy, by Newton steps from `y`. */
function getY(x0: bigint, xy: bigint, start: bigint): bigint {
  let y = start;
  for (let i = 0; i < 255; i++) {
    const k = f(x0, y);
    if (k < xy) {
      let dy = ((xy - k) * E18) / d(x0, y);
      if (dy === 0n) {
        if (k === xy || f(x0, y + 1n) > xy) return y + 1n;
        dy = 1n;
      }
      y += dy;
    } else {
      let dy = ((k - xy) * E18) / d(x0, y);
      if (dy === 0n) {
        if (k === xy || f(x0, y - 1n) < xy) return y;
        dy = 1n;
      }
      y -= dy;
    }
  }
  return y;
}

/** Amount out of a swap of `amountIn` of token0 (zeroForOne) or token1 on a pool. */
export function elexiumAmountOut(
  pool: { stable: boolean; reserve0: bigint; reserve1: bigint; decimals0: number; decimals1: number },
  amountIn: bigint,
  zeroForOne: boolean,
): bigint {
  const [rIn, rOut, decIn, decOut] = zeroForOne
    ? [pool.reserve0, pool.reserve1, pool.decimals0, pool.decimals1]
    : [pool.reserve1, pool.reserve0, pool.decimals1, pool.decimals0];
  if (!pool.stable) {
    const inWithFee = amountIn * 997n;
    return (inWithFee * rOut) / (rIn * 1000n + inWithFee);
  }
  const inAfterFee = amountIn - (amountIn * 5n) / 10_000n;
  const xy = stableK(pool.reserve0, pool.reserve1, pool.decimals0, pool.decimals1);
  const sIn = (rIn * E18) / 10n ** BigInt(decIn);
  const sOut = (rOut * E18) / 10n ** BigInt(decOut);
  const a = (inAfterFee * E18) / 10n ** BigInt(decIn);
  const y = sOut - getY(a + sIn, xy, sOut);
  // One unit less than the curve allows: rounding never lets k fall.
  const out = (y * 10n ** BigInt(decOut)) / E18 - 1n;
  return out > 0n ? out : 0n;
}

export interface Elexium {
  /** On chain 0→0: deployments one per block, then now and then a swap or a liquidity move. */
  step(ctx: BlockCtx): void;
  /** Read-only calls: factory 0 → pool count, 2 (index) → pool id. */
  call(c: ContractRec, methodIndex: number, args: node.Val[]): node.Val[] | undefined;
}

export function createElexium(deps: DappDeps & { plan: DefiPlan["elexium"] }): Elexium {
  const { rng, ledger, plan } = deps;
  const decimalsOf = (id: string): number =>
    id === ALPH_TOKEN_ID ? 18 : (plan.tokens.find((t) => t.id === id)?.decimals ?? 18);

  const setReserves = (pool: ContractRec, r0: bigint, r1: bigint): void => {
    const p = pool.pair!;
    moveAsset(pool, p.token0, r0 - p.reserve0);
    moveAsset(pool, p.token1, r1 - p.reserve1);
    p.reserve0 = r0;
    p.reserve1 = r1;
  };

  const deployFactory = (ctx: BlockCtx): void => {
    const user = pickUser(deps, ctx, () => true)!;
    const factory = newDappContract(ctx, rng, plan.factory.id, dappState("elexium-factory"));
    callTx(deps, ctx, {
      user,
      gas: 100_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT,
      created: [{ contract: factory }],
      script: deps.builder.script(),
    });
  };

  /** Issues a planned token, its supply split among the group's users. */
  const issue = (ctx: BlockCtx, index: number): void => {
    const t = plan.tokens[index]!;
    const users = deps.accounts.usersByGroup[ctx.from]!;
    const c = newDappContract(ctx, rng, t.id, dappState("elexium-token"), {
      token: {
        symbol: t.symbol,
        name: t.name,
        decimals: t.decimals,
        totalSupply: t.totalSupply,
        minter: users[0]!.address,
      },
    });
    callTx(deps, ctx, {
      user: users[0]!,
      gas: 100_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT + BigInt(users.length) * DUST_AMOUNT,
      created: [{ contract: c }],
      payouts: () => splitSupply(users, t.id, t.totalSupply),
      script: deps.builder.script(),
      issuedToken: t.id,
    });
  };

  const createPool = (ctx: BlockCtx, factory: ContractRec, planned: ElexiumPool): void => {
    const user = pickUser(deps, ctx, () => true)!;
    const pool = newDappContract(
      ctx,
      rng,
      planned.id,
      dappState("elexium-pool", { stable: planned.stable ? 1n : 0n }),
      {
        pair: {
          token0: planned.token0,
          token1: planned.token1,
          reserve0: 0n,
          reserve1: 0n,
          liquidity: 0n,
          factory: factory.address,
          anchor0: 0n,
          anchor1: 0n,
        },
      },
    );
    const count = factory.counter + 1;
    callTx(deps, ctx, {
      user,
      gas: 120_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT,
      touched: [factory],
      created: [{ contract: pool, parent: factory }],
      apply: () => {
        factory.counter = count;
      },
      events: () => [
        {
          contractAddress: factory.address,
          eventIndex: 0,
          fields: [
            byteVec(planned.token0),
            byteVec(planned.token1),
            boolVal(planned.stable),
            byteVec(planned.id),
            u256(count),
          ],
        },
      ],
      script: scriptOf([
        {
          contractId: factory.id,
          method: FACTORY_CREATE,
          alph: MINIMAL_CONTRACT_DEPOSIT,
          args: [{ bytes: planned.token0 }, { bytes: planned.token1 }, { bool: planned.stable }],
        },
      ]),
    });
  };

  const alphOrTokens = (id: string, amount: bigint): { alph?: bigint; tokens?: [string, bigint][] } =>
    id === ALPH_TOKEN_ID ? { alph: amount } : { tokens: [[id, amount]] };
  const tokensIn = (pairs: [string, bigint][]): [string, bigint][] =>
    pairs.filter(([id]) => id !== ALPH_TOKEN_ID);
  const alphIn = (pairs: [string, bigint][]): bigint =>
    pairs.reduce((s, [id, a]) => s + (id === ALPH_TOKEN_ID ? a : 0n), 0n);
  const holds = (bal: Map<string, bigint>, id: string, amount: bigint): boolean =>
    id === ALPH_TOKEN_ID ? true : (bal.get(id) ?? 0n) >= amount;

  const addLiquidity = (ctx: BlockCtx, pool: ContractRec, first: boolean): boolean => {
    const p = pool.pair!;
    let a0 = 0n;
    let a1 = 0n;
    const user = pickUser(deps, ctx, (_u, bal) => {
      const b1 = bal.get(p.token1) ?? 0n;
      if (b1 === 0n) return false;
      a1 = (b1 * BigInt(first ? rng.int(20, 40) : rng.int(3, 12))) / 100n;
      if (first)
        a0 =
          p.token0 === ALPH_TOKEN_ID
            ? // EX opens at 0.05–0.2 ALPH.
              (a1 * BigInt(rng.int(5, 20))) / 100n
            : (a1 * 10n ** BigInt(decimalsOf(p.token0))) / 10n ** BigInt(decimalsOf(p.token1));
      else a0 = (a1 * p.reserve0) / p.reserve1;
      if (p.token0 === ALPH_TOKEN_ID && a0 > 3000n * ONE_ALPH) {
        a1 = (a1 * 3000n * ONE_ALPH) / a0;
        a0 = 3000n * ONE_ALPH;
      }
      return a0 > 0n && a1 > 0n && holds(bal, p.token0, a0);
    });
    if (!user) return false;
    let liquidity = bigintSqrt(a0 * a1);
    if (!first) {
      liquidity = (a0 * p.liquidity) / p.reserve0;
      const l1 = (a1 * p.liquidity) / p.reserve1;
      if (l1 < liquidity) liquidity = l1;
    }
    const ins: [string, bigint][] = [
      [p.token0, a0],
      [p.token1, a1],
    ];
    return callTx(deps, ctx, {
      user,
      gas: 70_000,
      alphIn: alphIn(ins),
      tokensIn: tokensIn(ins),
      contracts: [pool],
      apply: () => {
        setReserves(pool, p.reserve0 + a0, p.reserve1 + a1);
        p.liquidity += liquidity;
        const key = `lp:${user.address}`;
        pool.defi!.num[key] = (pool.defi!.num[key] ?? 0n) + liquidity;
      },
      events: () => [
        {
          contractAddress: pool.address,
          eventIndex: 1,
          fields: [addressVal(user.address), u256(a0), u256(a1)],
        },
      ],
      script: scriptOf([
        {
          contractId: pool.id,
          method: POOL_MINT,
          alph: alphIn(ins),
          tokens: tokensIn(ins),
          args: [{ address: user.address }, { u256: a0 }, { u256: a1 }],
        },
      ]),
    });
  };

  const removeLiquidity = (ctx: BlockCtx, pool: ContractRec): boolean => {
    const p = pool.pair!;
    const user = pickUser(deps, ctx, (u) => (pool.defi!.num[`lp:${u.address}`] ?? 0n) > 0n);
    if (!user) return false;
    const key = `lp:${user.address}`;
    const mine = pool.defi!.num[key]!;
    const burnt = (mine * BigInt(rng.int(20, 60))) / 100n;
    // The pool keeps most of its liquidity: one position never drains it.
    if (burnt === 0n || burnt * 3n > p.liquidity) return false;
    const a0 = (p.reserve0 * burnt) / p.liquidity;
    const a1 = (p.reserve1 * burnt) / p.liquidity;
    if (a0 === 0n || a1 === 0n) return false;
    return callTx(deps, ctx, {
      user,
      gas: 70_000,
      contracts: [pool],
      apply: () => {
        setReserves(pool, p.reserve0 - a0, p.reserve1 - a1);
        p.liquidity -= burnt;
        pool.defi!.num[key] = mine - burnt;
      },
      payouts: () => [
        p.token0 === ALPH_TOKEN_ID
          ? { address: user.address, alph: a0, tokens: [[p.token1, a1]] }
          : {
              address: user.address,
              tokens: [
                [p.token0, a0],
                [p.token1, a1],
              ],
            },
      ],
      events: () => [
        {
          contractAddress: pool.address,
          eventIndex: 2,
          fields: [addressVal(user.address), addressVal(user.address), u256(a0), u256(a1)],
        },
      ],
      script: scriptOf([
        { contractId: pool.id, method: POOL_BURN, args: [{ address: user.address }, { u256: burnt }] },
      ]),
    });
  };

  const swap = (ctx: BlockCtx, pool: ContractRec): boolean => {
    const p = pool.pair!;
    const zeroForOne = rng.chance(0.5);
    const [tokenIn, tokenOut, rIn] = zeroForOne
      ? [p.token0, p.token1, p.reserve0]
      : [p.token1, p.token0, p.reserve1];
    const u = rng.next();
    let amountIn = (rIn * BigInt(300 + Math.floor(20_000 * u * u))) / 1_000_000n;
    const user = pickUser(deps, ctx, (_u, bal) => {
      if (tokenIn === ALPH_TOKEN_ID) return true;
      const have = bal.get(tokenIn) ?? 0n;
      if (have === 0n) return false;
      if (have < amountIn) amountIn = (have * BigInt(rng.int(10, 50))) / 100n;
      return amountIn > 0n;
    });
    if (!user || amountIn === 0n) return false;
    const amountOut = elexiumAmountOut(
      {
        stable: pool.defi!.num["stable"] === 1n,
        reserve0: p.reserve0,
        reserve1: p.reserve1,
        decimals0: decimalsOf(p.token0),
        decimals1: decimalsOf(p.token1),
      },
      amountIn,
      zeroForOne,
    );
    const rOut = zeroForOne ? p.reserve1 : p.reserve0;
    if (amountOut <= 0n || amountOut >= rOut || (tokenOut === ALPH_TOKEN_ID && amountOut < DUST_AMOUNT))
      return false;
    const ins: [string, bigint][] = [[tokenIn, amountIn]];
    return callTx(deps, ctx, {
      user,
      gas: 60_000,
      alphIn: alphIn(ins),
      tokensIn: tokensIn(ins),
      contracts: [pool],
      apply: () =>
        zeroForOne
          ? setReserves(pool, p.reserve0 + amountIn, p.reserve1 - amountOut)
          : setReserves(pool, p.reserve0 - amountOut, p.reserve1 + amountIn),
      payouts: () => [{ address: user.address, ...alphOrTokens(tokenOut, amountOut) }],
      events: () => [
        {
          contractAddress: pool.address,
          eventIndex: 3,
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
      script: scriptOf([
        {
          contractId: pool.id,
          method: POOL_SWAP,
          alph: alphIn(ins),
          tokens: tokensIn(ins),
          args: [{ address: user.address }, { bytes: tokenIn }, { u256: amountIn }, { u256: amountOut }],
        },
      ]),
    });
  };

  return {
    step(ctx) {
      if (ctx.chainIndex !== plan.chainIndex) return;
      const factory = ledger.contractById(plan.factory.id);
      if (!factory) return deployFactory(ctx);
      const issued = plan.tokens.findIndex((t) => !ledger.contractById(t.id));
      if (issued >= 0) return issue(ctx, issued);
      const missing = plan.pools.find((p) => !ledger.contractById(p.id));
      if (missing) return createPool(ctx, factory, missing);
      const pools = plan.pools.map((p) => ledger.contractById(p.id)!);
      const empty = pools.find((p) => p.pair!.reserve0 === 0n);
      if (empty) {
        addLiquidity(ctx, empty, true);
        return;
      }
      // About two txs a minute on a chain with a block every 8 s.
      if (!rng.chance(0.25)) return;
      const pool = rng.pick(pools);
      const r = rng.next();
      if (r < 0.82) swap(ctx, pool);
      else if (r < 0.93) addLiquidity(ctx, pool, false);
      else removeLiquidity(ctx, pool);
    },
    call(c, methodIndex, args) {
      if (c.id !== plan.factory.id) return undefined;
      if (methodIndex === 0) return [u256(c.counter)];
      if (methodIndex === 2) {
        const i = Number(args[0]?.value ?? -1);
        const id = plan.pools[i]?.id;
        return id && i < c.counter ? [byteVec(id)] : undefined;
      }
      return undefined;
    },
  };
}
