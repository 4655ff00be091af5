/**
 * The devnet's Ayin-like DEX, homed on chain 0→0: one factory, constant-product pairs it creates
 * (`PairCreated` event 0 on the factory), their first liquidity (`Mint` event 0) and swaps (`Swap` event 2).
 * Pairs keep reserves in their contract output but issue no LP token.
 */
import { DUST_AMOUNT, MINIMAL_CONTRACT_DEPOSIT, ONE_ALPH, subContractId } from "@alephium/web3";
import { ALPH_TOKEN_ID } from "../lib/chain/types.ts";
import { type Accounts, addTokens, type Ledger, sortedTokens } from "./ledger.ts";
import type { Rng } from "./random.ts";
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

export interface Dex {
  /** On chain 0→0: deploys the factory, then one pair at a time, each seeded with liquidity before the next. */
  setup(ctx: BlockCtx): void;
  /** A user swap on a funded pair of the block's chain; false when none is possible. */
  swap(ctx: BlockCtx): boolean;
}

export function createDex(deps: {
  rng: Rng;
  /** Pairs to create (0 = no DEX at all). */
  pools: number;
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
}): Dex {
  const { rng, ledger, builder } = deps;
  const group0 = deps.accounts.usersByGroup[0]!;

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

  /** Creates the next pair of held tokens (ALPH pairs first) through the factory. */
  const createPair = (ctx: BlockCtx, factory: ContractRec, pairs: ContractRec[]): void => {
    const existing = new Set(pairs.map((p) => `${p.pair!.token0}${p.pair!.token1}`));
    const held = new Map<string, bigint>();
    for (const u of group0) addTokens(held, sortedTokens(ledger.tokenBalance(u, ctx.ts)));
    const tokenIds = [...ledger.contracts()]
      .filter((c) => c.kind === "token" && held.has(c.id))
      .map((c) => c.id);
    const candidates: [string, string][] = [];
    for (const t of tokenIds) candidates.push([ALPH_TOKEN_ID, t]);
    for (let i = 0; i < tokenIds.length; i++)
      for (let j = i + 1; j < tokenIds.length; j++) {
        const a = tokenIds[i]!;
        const b = tokenIds[j]!;
        candidates.push(a < b ? [a, b] : [b, a]);
      }
    const next = candidates.find(([a, b]) => !existing.has(a + b));
    if (!next) return;
    const [token0, token1] = next;
    const pairId = subContractId(factory.id, token0 + token1, 0);
    ledger.touchContract(ctx, factory);
    factory.counter += 1;
    const pair = builder.deployContract(ctx, rng.pick(group0), "pair", pairId, {
      parent: factory,
      iface: "",
      pair: { token0, token1, reserve0: 0n, reserve1: 0n, liquidity: 0n, factory: factory.address },
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

  return {
    setup(ctx) {
      if (ctx.chainIndex !== 0 || deps.pools === 0) return;
      const factory = ledger.contractsOn(0, "factory")[0];
      if (!factory) {
        builder.deployContract(ctx, rng.pick(group0), "factory", builder.ownContractId(0), { iface: "" });
        return;
      }
      const pairs = ledger.contractsOn(0, "pair");
      // Seed liquidity of the newest empty pair, by any group-0 user holding the needed tokens.
      const empty = pairs.find((p) => p.pair!.reserve0 === 0n);
      if (empty) {
        const p = empty.pair!;
        const lp = group0.find((u) => {
          const bal = ledger.tokenBalance(u, ctx.ts);
          return (
            (bal.get(p.token1) ?? 0n) > 0n && (p.token0 === ALPH_TOKEN_ID || (bal.get(p.token0) ?? 0n) > 0n)
          );
        });
        if (lp) addLiquidity(ctx, empty, lp);
        return;
      }
      if (pairs.length >= deps.pools) return;
      createPair(ctx, factory, pairs);
    },

    swap(ctx) {
      const pairs = ledger.contractsOn(ctx.chainIndex, "pair").filter((p) => p.pair!.reserve0 > 0n);
      if (pairs.length === 0) return false;
      const pool = rng.pick(pairs);
      const p = pool.pair!;
      const user = rng.pick(deps.accounts.usersByGroup[ctx.from]!);
      const zeroForOne = rng.chance(0.5);
      const tokenIn = zeroForOne ? p.token0 : p.token1;
      const tokenOut = zeroForOne ? p.token1 : p.token0;
      let amountIn: bigint;
      if (tokenIn === ALPH_TOKEN_ID) amountIn = rng.bigint(ONE_ALPH / 2n, 40n * ONE_ALPH);
      else {
        const have = ledger.tokenBalance(user, ctx.ts).get(tokenIn) ?? 0n;
        amountIn = (have * BigInt(rng.int(1, 30))) / 100n;
      }
      if (amountIn === 0n) return false;
      const [rIn, rOut] = zeroForOne ? [p.reserve0, p.reserve1] : [p.reserve1, p.reserve0];
      const amountOut = swapAmountOut(amountIn, rIn, rOut);
      if (amountOut === 0n || amountOut >= rOut) return false;
      const gas = builder.userGas(60000);
      const alphNeed =
        BigInt(gas) * USER_GAS_PRICE +
        (tokenIn === ALPH_TOKEN_ID ? amountIn : 0n) +
        (tokenOut === ALPH_TOKEN_ID ? 0n : DUST_AMOUNT);
      const g = ledger.gather(
        user,
        ctx.ts,
        alphNeed,
        tokenIn === ALPH_TOKEN_ID ? new Map() : new Map([[tokenIn, amountIn]]),
      );
      if (!g) return false;
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
    },
  };
}
