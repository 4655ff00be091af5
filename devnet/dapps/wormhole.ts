/**
 * The devnet's Wormhole bridge ("Alephium Bridge") on chain 0→0, as the mainnet fork (alephium/wormhole-fork) runs:
 * Governance, the TokenBridge, its TokenBridgeForChain for Ethereum and one RemoteTokenPool for USDT from
 * Ethereum (sub-contracts of the TokenBridge; the pool's id is the bridged token's id; it is issued the whole
 * u256 range, and what is bridged in circulates).
 *
 * Redemptions in: a user's script calls the TokenBridgeForChain's method 7 `completeTransfer` with a VAA, and
 * the pool pays the bridged token to the user (no event). Transfers out: the script calls the TokenBridge's
 * method 16 `transferToken`, the user's USDT goes back to the pool (or ALPH to the TokenBridge), and Governance
 * emits 0 `WormholeMessage(sender = TokenBridge id, targetChainId = 2, sequence, nonce (4 bytes), payload,
 * consistencyLevel)` with the fork's transfer payload: 01 ‖ amount (32 bytes, normalized to at most 8 decimals)
 * ‖ token address (32) ‖ token chain (u16) ‖ recipient length (u16) ‖ recipient (20 bytes) ‖ fee (32).
 */
import type { node } from "@alephium/web3";
import { MINIMAL_CONTRACT_DEPOSIT } from "@alephium/web3";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { byteVec, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec } from "../types.ts";
import { type DefiPlan, u16be, WORMHOLE_ETHEREUM } from "./defi-plan.ts";
import { callTx, type DappDeps, dappState, moveAsset, newDappContract, pickUser, scriptOf } from "./kit.ts";

/** Wormhole chain id of Alephium in the fork. */
export const WORMHOLE_ALEPHIUM = 255;
/** TokenBridge 16 `transferToken`, 14 `createRemoteTokenPool`; TokenBridgeForChain 7 `completeTransfer`. */
const METHOD = {
  completeTransfer: 7,
  transferToken: 16,
  createRemoteTokenPool: 14,
  registerChain: 4,
} as const;
const CONSISTENCY_LEVEL = 10n;

const be32 = (v: bigint): string => v.toString(16).padStart(64, "0");

/** A token-transfer payload (id 1) as the fork's token pools encode it: the recipient is length-prefixed. */
export function transferPayload(p: {
  amount: bigint;
  tokenAddress: string;
  tokenChain: number;
  recipient: string;
  fee: bigint;
}): string {
  return [
    "01",
    be32(p.amount),
    p.tokenAddress,
    u16be(p.tokenChain),
    u16be(p.recipient.length / 2),
    p.recipient,
    be32(p.fee),
  ].join("");
}

export interface Wormhole {
  step(ctx: BlockCtx): void;
  call(c: ContractRec, methodIndex: number, args: node.Val[]): node.Val[] | undefined;
}

export function createWormhole(deps: DappDeps & { plan: DefiPlan["wormhole"] }): Wormhole {
  const { rng, ledger, plan } = deps;
  const get = (id: string): ContractRec | undefined => ledger.contractById(id);
  const planned = plan.pools[0]!;

  const deploy = (ctx: BlockCtx, id: string, role: string): void => {
    callTx(deps, ctx, {
      user: deps.accounts.usersByGroup[ctx.from]![0]!,
      gas: 100_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT,
      created: [{ contract: newDappContract(ctx, rng, id, dappState(role)) }],
      script: deps.builder.script(),
    });
  };

  /** Ethereum's registration: the TokenBridge creates its TokenBridgeForChain (a sub-contract). */
  const registerChain = (ctx: BlockCtx): void => {
    const bridge = get(plan.tokenBridge.id)!;
    callTx(deps, ctx, {
      user: deps.accounts.usersByGroup[ctx.from]![0]!,
      gas: 150_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT,
      created: [
        {
          contract: newDappContract(ctx, rng, plan.bridgeForChain.id, dappState("wormhole-for-chain")),
          parent: bridge,
        },
      ],
      script: scriptOf([
        {
          contractId: bridge.id,
          method: METHOD.registerChain,
          alph: MINIMAL_CONTRACT_DEPOSIT,
          args: [{ bytes: rng.hex(rng.int(120, 180)) }],
        },
      ]),
    });
  };

  /** The attestation of USDT: the TokenBridge creates its RemoteTokenPool. */
  const createPool = (ctx: BlockCtx): void => {
    const bridge = get(plan.tokenBridge.id)!;
    const pool = newDappContract(ctx, rng, planned.id, dappState("wormhole-pool", { totalBridged: 0n }), {
      token: {
        symbol: planned.symbol,
        name: planned.name,
        decimals: planned.decimals,
        totalSupply: planned.totalSupply,
        minter: bridge.address,
      },
    });
    pool.tokens.set(planned.id, planned.totalSupply);
    callTx(deps, ctx, {
      user: deps.accounts.usersByGroup[ctx.from]![0]!,
      gas: 150_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT,
      created: [{ contract: pool, parent: bridge }],
      script: scriptOf([
        {
          contractId: bridge.id,
          method: METHOD.createRemoteTokenPool,
          alph: MINIMAL_CONTRACT_DEPOSIT,
          args: [{ bytes: rng.hex(rng.int(120, 180)) }],
        },
      ]),
      issuedToken: planned.id,
    });
  };

  /** A redemption of a VAA through the TokenBridgeForChain: the pool pays bridged USDT to the user. */
  const redeem = (ctx: BlockCtx, forChain: ContractRec, pool: ContractRec): boolean => {
    const user = pickUser(deps, ctx, () => true);
    if (!user) return false;
    const amount = rng.bigint(10n, 2000n) * 10n ** BigInt(planned.decimals);
    return callTx(deps, ctx, {
      user,
      gas: 120_000,
      contracts: [forChain, pool],
      apply: () => {
        moveAsset(pool, planned.id, -amount);
        pool.defi!.num["totalBridged"] = (pool.defi!.num["totalBridged"] ?? 0n) + amount;
      },
      payouts: () => [{ address: user.address, tokens: [[planned.id, amount]] }],
      script: scriptOf([
        {
          contractId: forChain.id,
          method: METHOD.completeTransfer,
          args: [{ bytes: rng.hex(rng.int(170, 220)) }],
        },
      ]),
    });
  };

  /** USDT back to the pool (or ALPH to the TokenBridge) and a WormholeMessage to Ethereum. */
  const transferOut = (
    ctx: BlockCtx,
    bridge: ContractRec,
    pool: ContractRec,
    governance: ContractRec,
  ): boolean => {
    const alph = rng.chance(0.35);
    let amount = 0n;
    const user = alph
      ? pickUser(deps, ctx, () => true)
      : pickUser(deps, ctx, (_u, bal) => {
          amount = ((bal.get(planned.id) ?? 0n) * BigInt(rng.int(20, 90))) / 100n;
          return amount > 0n;
        });
    if (!user) return false;
    // Wormhole carries at most 8 decimals: ALPH's last 10 are cut (and not sent).
    const normalized = alph ? rng.bigint(5n, 300n) * 10n ** 8n : amount;
    if (alph) amount = normalized * 10n ** 10n;
    const sequence = BigInt(governance.counter);
    const nonce = rng.hex(4);
    const payload = transferPayload({
      amount: normalized,
      tokenAddress: alph ? ALPH_TOKEN_ID : planned.originToken,
      tokenChain: alph ? WORMHOLE_ALEPHIUM : planned.tokenChain,
      recipient: rng.hex(20),
      fee: 0n,
    });
    return callTx(deps, ctx, {
      user,
      gas: 110_000,
      ...(alph ? { alphIn: amount } : { tokensIn: [[planned.id, amount]] as [string, bigint][] }),
      contracts: [alph ? bridge : pool],
      touched: [governance],
      apply: () => {
        governance.counter += 1;
        if (alph) bridge.alph += amount;
        else {
          moveAsset(pool, planned.id, amount);
          pool.defi!.num["totalBridged"] = (pool.defi!.num["totalBridged"] ?? 0n) - amount;
        }
      },
      events: () => [
        {
          contractAddress: governance.address,
          eventIndex: 0,
          fields: [
            byteVec(plan.tokenBridge.id),
            u256(WORMHOLE_ETHEREUM),
            u256(sequence),
            byteVec(nonce),
            byteVec(payload),
            u256(CONSISTENCY_LEVEL),
          ],
        },
      ],
      script: scriptOf([
        {
          contractId: bridge.id,
          method: METHOD.transferToken,
          ...(alph ? { alph: amount } : { tokens: [[planned.id, amount]] as [string, bigint][] }),
          args: [{ bytes: alph ? ALPH_TOKEN_ID : planned.originToken }, { u256: amount }, { bytes: nonce }],
        },
      ]),
    });
  };

  return {
    step(ctx) {
      if (ctx.chainIndex !== plan.chainIndex) return;
      const governance = get(plan.governance.id);
      if (!governance) return deploy(ctx, plan.governance.id, "wormhole-governance");
      const bridge = get(plan.tokenBridge.id);
      if (!bridge) return deploy(ctx, plan.tokenBridge.id, "wormhole-bridge");
      const forChain = get(plan.bridgeForChain.id);
      if (!forChain) return registerChain(ctx);
      const pool = get(planned.id);
      if (!pool) return createPool(ctx);
      // About one and a half bridge txs a minute.
      if (!rng.chance(0.2)) return;
      if (rng.chance(0.55)) redeem(ctx, forChain, pool);
      else transferOut(ctx, bridge, pool, governance);
    },
    call(c, methodIndex) {
      // The pool: 8 → what circulates (its token metadata answers 0–3 with the issued u256 range).
      if (c.defi?.role === "wormhole-pool" && methodIndex === 8)
        return [u256(c.defi.num["totalBridged"] ?? 0n)];
      return undefined;
    },
  };
}
