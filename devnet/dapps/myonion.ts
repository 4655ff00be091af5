/**
 * The devnet's MyOnion.fun (a bonding-curve launchpad) on chain 3→3: the TokenLauncher and the OnionRouter, then
 * users launch the planned tokens (one tx creates the token contract, which issues the whole supply to its
 * bonding-curve contract, and the curve: launcher events 5 CreateToken and 6 CreateBondingCurve) and trade them
 * through the router (event 5 Trade; tokenInId is ALPH's 64 zeros on a buy, the token on a sell).
 *
 * Curve: constant product between the tokens the curve holds and its ALPH plus a virtual 30,000 ALPH. A trade
 * pays a 1 % platform fee (kept by the router) and a 0.5 % royalty to the token's creator, both in ALPH.
 *
 * Once every planned token is launched, the owner upgrades the launcher as mainnet's upgradable contracts do
 * (event 2 MigrateCommence, then 3 MigrateApply carrying the new bytecode, which the node's contract state then
 * shows) and later starts an owner change (event 0): the normalizer's code-hash guard publishes that one generic
 * (`code_hash_changed`), since the registration names the first code's hash ({@link myonionCodeHash}).
 */
import type { node } from "@alephium/web3";
import { addressToBytes, binToHex, DUST_AMOUNT, MINIMAL_CONTRACT_DEPOSIT, ONE_ALPH } from "@alephium/web3";
import { blake2b } from "@noble/hashes/blake2b";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { addressVal, byteVec, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec } from "../types.ts";
import type { DefiPlan } from "./defi-plan.ts";
import { callTx, type DappDeps, dappState, newDappContract, pickUser, scriptOf } from "./kit.ts";

const METHOD = { changeOwner: 0, migrate: 1, migrateApply: 2, createToken: 2, buy: 3, sell: 4 } as const;
const VIRTUAL_ALPH = 30_000n * ONE_ALPH;
const utf8Hex = (s: string): string => Buffer.from(s, "utf8").toString("hex");

/** The devnet's MyOnion bytecode of a contract role and code version: fixed, so a registration can name its hash. */
export function myonionBytecode(role: "launcher" | "router", version: number): string {
  return `01${utf8Hex(`devnet MyOnion ${role} code v${version}`)}`;
}

/** blake2b-256 of a bytecode, as the node's `codeHash` and an artifact's. */
export function myonionCodeHash(role: "launcher" | "router", version: number): string {
  return Buffer.from(blake2b(Buffer.from(myonionBytecode(role, version), "hex"), { dkLen: 32 })).toString(
    "hex",
  );
}

export interface MyOnion {
  step(ctx: BlockCtx): void;
  call(c: ContractRec, methodIndex: number, args: node.Val[]): node.Val[] | undefined;
}

export function createMyOnion(deps: DappDeps & { plan: DefiPlan["myonion"] }): MyOnion {
  const { rng, ledger, plan } = deps;
  const get = (id: string): ContractRec | undefined => ledger.contractById(id);

  const deploy = (ctx: BlockCtx, id: string, role: "launcher" | "router"): void => {
    const contract = newDappContract(ctx, rng, id, dappState(`myonion-${role}`));
    contract.bytecode = myonionBytecode(role, 1);
    contract.codeHash = myonionCodeHash(role, 1);
    callTx(deps, ctx, {
      user: deps.accounts.usersByGroup[ctx.from]![0]!,
      gas: 100_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT,
      created: [{ contract }],
      script: deps.builder.script(),
    });
  };

  /**
   * One step of the launcher's upgrade by its owner (the deployer): migrate commenced, applied (the contract's
   * code becomes v2), then an owner change commenced. False when this step does nothing.
   */
  const upgrade = (ctx: BlockCtx): boolean => {
    const launcher = get(plan.launcher.id)!;
    const stage = launcher.defi!.num["upgrade"] ?? 0n;
    if (stage >= 3n || !rng.chance(stage === 1n ? 0.2 : 0.05)) return false;
    const owner = deps.accounts.usersByGroup[ctx.from]![0]!;
    const code = myonionBytecode("launcher", 2);
    const event =
      stage === 2n
        ? {
            index: 0,
            method: METHOD.changeOwner,
            fields: [
              addressVal(owner.address),
              addressVal(deps.accounts.usersByGroup[ctx.from]![1]!.address),
            ],
          }
        : {
            index: stage === 0n ? 2 : 3,
            method: stage === 0n ? METHOD.migrate : METHOD.migrateApply,
            fields: [addressVal(owner.address), byteVec(code)],
          };
    return callTx(deps, ctx, {
      user: owner,
      gas: 60_000,
      touched: [launcher],
      apply: () => {
        launcher.defi!.num["upgrade"] = stage + 1n;
        if (stage === 1n) {
          launcher.bytecode = code;
          launcher.codeHash = myonionCodeHash("launcher", 2);
        }
      },
      events: () => [{ contractAddress: launcher.address, eventIndex: event.index, fields: event.fields }],
      script: scriptOf([
        { contractId: launcher.id, method: event.method, args: stage === 2n ? [] : [{ bytes: code }] },
      ]),
    });
  };

  const launch = (ctx: BlockCtx, index: number): void => {
    const launcher = get(plan.launcher.id)!;
    const t = plan.tokens[index]!;
    const creator = pickUser(deps, ctx, () => true)!;
    const token = newDappContract(ctx, rng, t.id, dappState("myonion-token"), {
      token: {
        symbol: t.symbol,
        name: t.name,
        decimals: t.decimals,
        totalSupply: t.totalSupply,
        minter: creator.address,
      },
    });
    const curve = newDappContract(
      ctx,
      rng,
      t.curve.id,
      dappState("myonion-curve", {}, { token: t.id, creator: creator.address }),
    );
    curve.tokens.set(t.id, t.totalSupply);
    callTx(deps, ctx, {
      user: creator,
      gas: 150_000,
      alphIn: 2n * MINIMAL_CONTRACT_DEPOSIT,
      touched: [launcher],
      created: [
        { contract: token, parent: launcher },
        { contract: curve, parent: launcher },
      ],
      apply: () => {
        launcher.counter += 1;
      },
      events: () => [
        {
          contractAddress: launcher.address,
          eventIndex: 5,
          fields: [
            byteVec(t.id),
            addressVal(creator.address),
            byteVec(utf8Hex(t.symbol)),
            byteVec(utf8Hex(t.name)),
            u256(t.decimals),
            u256(t.totalSupply),
            byteVec(binToHex(addressToBytes(creator.address))),
          ],
        },
        {
          contractAddress: launcher.address,
          eventIndex: 6,
          fields: [byteVec(t.id), addressVal(creator.address), byteVec(t.curve.id)],
        },
      ],
      script: scriptOf([
        {
          contractId: launcher.id,
          method: METHOD.createToken,
          alph: 2n * MINIMAL_CONTRACT_DEPOSIT,
          args: [{ bytes: utf8Hex(t.symbol) }, { bytes: utf8Hex(t.name) }, { u256: t.totalSupply }],
        },
      ]),
      issuedToken: t.id,
    });
  };

  const trade = (ctx: BlockCtx, curve: ContractRec): boolean => {
    const router = get(plan.router.id)!;
    const tokenId = curve.defi!.text["token"]!;
    const creator = curve.defi!.text["creator"]!;
    const held = curve.tokens.get(tokenId) ?? 0n;
    const real = curve.alph - MINIMAL_CONTRACT_DEPOSIT;
    const alphSide = VIRTUAL_ALPH + real;
    let sellAmount = 0n;
    const seller = rng.chance(0.35)
      ? pickUser(deps, ctx, (_u, bal) => {
          sellAmount = ((bal.get(tokenId) ?? 0n) * BigInt(rng.int(20, 80))) / 100n;
          return sellAmount > 0n;
        })
      : undefined;
    let user = seller;
    let amountIn: bigint;
    let amountOut: bigint;
    let alphGross: bigint;
    if (seller) {
      amountIn = sellAmount;
      alphGross = (alphSide * sellAmount) / (held + sellAmount);
      if (alphGross > real) return false;
    } else {
      user = pickUser(deps, ctx, () => true);
      alphGross = rng.bigint(2n, 150n) * ONE_ALPH;
      amountIn = alphGross;
    }
    if (!user) return false;
    const platformFee = alphGross / 100n;
    const royaltyFee = alphGross / 200n;
    const net = alphGross - platformFee - royaltyFee;
    if (seller) amountOut = net;
    else amountOut = (held * net) / (alphSide + net);
    if (amountOut === 0n || royaltyFee < DUST_AMOUNT) return false;
    const buying = !seller;
    const trader = user;
    return callTx(deps, ctx, {
      user: trader,
      gas: 80_000,
      ...(buying ? { alphIn: alphGross } : { tokensIn: [[tokenId, amountIn]] as [string, bigint][] }),
      contracts: [curve, router],
      apply: () => {
        router.alph += platformFee;
        if (buying) {
          curve.alph += net;
          curve.tokens.set(tokenId, held - amountOut);
        } else {
          curve.alph -= alphGross;
          curve.tokens.set(tokenId, held + amountIn);
        }
      },
      payouts: () => [
        buying
          ? { address: trader.address, tokens: [[tokenId, amountOut]] }
          : { address: trader.address, alph: amountOut },
        { address: creator, alph: royaltyFee },
      ],
      events: () => [
        {
          contractAddress: router.address,
          eventIndex: 5,
          fields: [
            byteVec(tokenId),
            addressVal(trader.address),
            byteVec(buying ? ALPH_TOKEN_ID : tokenId),
            u256(amountIn),
            u256(amountOut),
            u256(platformFee),
            u256(royaltyFee),
            addressVal(creator),
          ],
        },
      ],
      script: scriptOf([
        {
          contractId: router.id,
          method: buying ? METHOD.buy : METHOD.sell,
          ...(buying ? { alph: alphGross } : { tokens: [[tokenId, amountIn]] as [string, bigint][] }),
          args: [{ bytes: tokenId }, { u256: amountIn }],
        },
      ]),
    });
  };

  return {
    step(ctx) {
      if (ctx.chainIndex !== plan.chainIndex) return;
      if (!get(plan.launcher.id)) return deploy(ctx, plan.launcher.id, "launcher");
      if (!get(plan.router.id)) return deploy(ctx, plan.router.id, "router");
      const next = plan.tokens.findIndex((t) => !get(t.id));
      const curves = plan.tokens.flatMap((t) => get(t.curve.id) ?? []);
      // The first token right away, the others now and then (about one per ten minutes).
      if (next >= 0 && (next === 0 || rng.chance(0.013))) return launch(ctx, next);
      if (next < 0 && upgrade(ctx)) return;
      if (curves.length === 0 || !rng.chance(0.3)) return;
      trade(ctx, rng.pick(curves));
    },
    call(c, methodIndex) {
      // A bonding curve: 0 → (token reserve, real ALPH reserve).
      if (c.defi?.role !== "myonion-curve" || methodIndex !== 0) return undefined;
      const token = c.defi.text["token"] ?? "";
      return [u256(c.tokens.get(token) ?? 0n), u256(c.alph - MINIMAL_CONTRACT_DEPOSIT)];
    },
  };
}
