/**
 * What the devnet's users do in a block: issue the planned tokens and deploy generic contracts early on the
 * intra-group chains, then a random mix of ALPH transfers, token transfers, DEX swaps (a `swapShare` of the txs
 * of a chain with live pools, plus the pools' bursts), generic contract calls and failed scripts.
 */
import { DUST_AMOUNT, groupOfAddress, ONE_ALPH } from "@alephium/web3";
import type { Dex } from "./dex.ts";
import type { Accounts, Ledger } from "./ledger.ts";
import type { Plan } from "./plan.ts";
import type { Rng } from "./random.ts";
import { addressVal, byteVec, type TxBuilder, USER_GAS_PRICE, u256 } from "./tx-builder.ts";
import type { BlockCtx, EventSpec, OutSpec, ResolvedDevnetOptions } from "./types.ts";

export interface Activity {
  /** Token issuance and generic contract deployment, on intra-group chains until each count is reached. */
  setup(ctx: BlockCtx): void;
  /** The block's user transactions (count and kinds drawn from the seed), after any queued transfer. */
  fill(ctx: BlockCtx): void;
  /** Queues an ALPH transfer to an address for the next block into its group; returns the queue length. */
  queueTransfer(to: string, alph: bigint): number;
  queued(): number;
}

export function createActivity(deps: {
  rng: Rng;
  opts: ResolvedDevnetOptions;
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
  dex: Dex;
  plan: Plan;
}): Activity {
  const { rng, opts, ledger, builder } = deps;
  const { usersByGroup, perGroup } = deps.accounts;
  // Transfers asked for from outside (a demo user paying an invoice); none by default, so a seed makes the same chain.
  const outbox: { to: string; group: number; alph: bigint }[] = [];

  /** A tx of a user paying `alph` + gas with change back, and nothing else (inputs, outputs, events given). */
  const userTx = (
    ctx: BlockCtx,
    g: NonNullable<ReturnType<Ledger["gather"]>>,
    gas: number,
    fixed: OutSpec[],
    extra: { scriptOpt?: string; ok?: boolean; events?: EventSpec[] } = {},
  ): void => {
    builder.commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [],
      fixed,
      generated: [],
      ...(extra.scriptOpt ? { scriptOpt: extra.scriptOpt } : {}),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: extra.ok ?? true,
      events: extra.events ?? [],
    });
  };

  const alphTransfer = (ctx: BlockCtx): boolean => {
    const sender = rng.pick(usersByGroup[ctx.from]!);
    const recipients = rng.chance(0.25) ? 2 : 1;
    const fixed: OutSpec[] = [];
    let total = 0n;
    for (let i = 0; i < recipients; i++) {
      let to = rng.pick(usersByGroup[ctx.to]!);
      if (to === sender) to = usersByGroup[ctx.to]![(usersByGroup[ctx.to]!.indexOf(to) + 1) % perGroup]!;
      const amount = rng.bigint(ONE_ALPH / 10n, 250n * ONE_ALPH);
      total += amount;
      fixed.push({ type: "AssetOutput", address: to.address, alph: amount, tokens: new Map() });
    }
    const gas = builder.userGas();
    const g = ledger.gather(sender, ctx.ts, total + BigInt(gas) * USER_GAS_PRICE);
    if (!g) return false;
    userTx(ctx, g, gas, [...fixed, g.change]);
    return true;
  };

  /** A queued transfer, paid by the first user of the source group who can (no draw from the seed but gas). */
  const queuedTransfer = (ctx: BlockCtx, to: string, alph: bigint): boolean => {
    const gas = builder.userGas();
    for (const sender of usersByGroup[ctx.from]!) {
      if (sender.address === to) continue;
      const g = ledger.gather(sender, ctx.ts, alph + BigInt(gas) * USER_GAS_PRICE);
      if (!g) continue;
      userTx(ctx, g, gas, [{ type: "AssetOutput", address: to, alph, tokens: new Map() }, g.change]);
      return true;
    }
    return false;
  };

  const tokenTransfer = (ctx: BlockCtx): boolean => {
    const holders = usersByGroup[ctx.from]!.map((u) => ({ u, bal: ledger.tokenBalance(u, ctx.ts) })).filter(
      (h) => h.bal.size > 0,
    );
    if (holders.length === 0) return false;
    const { u: sender, bal } = rng.pick(holders);
    const [id, have] = rng.pick([...bal].sort(([a], [b]) => a.localeCompare(b)));
    // 1-39 % of the balance, or (one draw in 40) all of it: the sender stops holding the token.
    const pct = rng.int(1, 40);
    const amount = pct === 40 ? have : (have * BigInt(pct)) / 100n;
    if (amount === 0n) return false;
    const to = rng.pick(usersByGroup[ctx.to]!);
    const gas = builder.userGas();
    const g = ledger.gather(
      sender,
      ctx.ts,
      DUST_AMOUNT + BigInt(gas) * USER_GAS_PRICE,
      new Map([[id, amount]]),
    );
    if (!g) return false;
    const sent: OutSpec = {
      type: "AssetOutput",
      address: to.address,
      alph: DUST_AMOUNT,
      tokens: new Map([[id, amount]]),
    };
    userTx(ctx, g, gas, [sent, g.change]);
    return true;
  };

  const failedScript = (ctx: BlockCtx): boolean => {
    const sender = rng.pick(usersByGroup[ctx.from]!);
    const gas = builder.userGas(30000);
    const g = ledger.gather(sender, ctx.ts, BigInt(gas) * USER_GAS_PRICE);
    if (!g) return false;
    userTx(ctx, g, gas, [g.change], { scriptOpt: builder.script(), ok: false });
    return true;
  };

  const genericCall = (ctx: BlockCtx): boolean => {
    const targets = ledger.contractsOn(ctx.chainIndex, "generic");
    if (targets.length === 0) return false;
    const target = rng.pick(targets);
    const caller = rng.pick(usersByGroup[ctx.from]!);
    const gas = builder.userGas(40000);
    const g = ledger.gather(caller, ctx.ts, BigInt(gas) * USER_GAS_PRICE);
    if (!g) return false;
    ledger.touchContract(ctx, target);
    target.counter += 1;
    const events: EventSpec[] = [
      {
        contractAddress: target.address,
        eventIndex: rng.int(0, 3),
        fields: [
          addressVal(caller.address),
          u256(target.counter),
          byteVec(rng.hex(8)),
          { type: "Bool", value: rng.chance(0.5) },
        ],
      },
    ];
    userTx(ctx, g, gas, [g.change], { scriptOpt: builder.script(), events });
    return true;
  };

  const kinds: [number, (ctx: BlockCtx) => boolean][] = [
    [45, alphTransfer],
    [20, tokenTransfer],
    [10, genericCall],
  ];
  const totalWeight = kinds.reduce((s, [w]) => s + w, 0);

  return {
    setup(ctx) {
      if (ctx.from !== ctx.to) return;
      const g = ctx.from;
      // Tokens: token i of the plan is issued on chain (i % 4)→(i % 4) by its minter, a user of that group.
      const n = [...ledger.contracts()].filter((c) => c.kind === "token").length;
      const planned = deps.plan.tokens[n];
      if (planned && planned.group === g) {
        const minter = deps.accounts.userByAddress.get(planned.meta.minter)!;
        builder.deployContract(ctx, minter, "token", planned.id, { iface: "0001", token: planned.meta });
      }
      if (
        g !== 0 &&
        ledger.contractsOn(ctx.chainIndex, "generic").length < Math.ceil(opts.genericContracts / 3)
      ) {
        const generics = [...ledger.contracts()].filter((c) => c.kind === "generic").length;
        if (generics < opts.genericContracts)
          builder.deployContract(ctx, rng.pick(usersByGroup[g]!), "generic", builder.ownContractId(g), {
            iface: "",
          });
      }
    },

    queueTransfer(to, alph) {
      if (alph <= 0n) throw new Error("sendAlph needs a positive amount");
      outbox.push({ to, group: groupOfAddress(to), alph });
      return outbox.length;
    },
    queued: () => outbox.length,

    fill(ctx) {
      for (let i = 0; i < outbox.length; ) {
        const t = outbox[i]!;
        if (t.group !== ctx.to || !queuedTransfer(ctx, t.to, t.alph)) {
          i++;
          continue;
        }
        outbox.splice(i, 1);
      }
      // The share is drawn only when it is set, so chains without it stay the same for a seed.
      const quiet = opts.userTxBlockShare < 1 && !rng.chance(opts.userTxBlockShare);
      const n = quiet ? 0 : rng.int(opts.txPerBlock[0], opts.txPerBlock[1]);
      const swaps = deps.dex.trades(ctx);
      for (let i = 0; i < n; i++) {
        if (rng.chance(opts.failedTxRate)) {
          failedScript(ctx);
          continue;
        }
        if (swaps && rng.chance(opts.swapShare)) {
          if (!deps.dex.swap(ctx)) alphTransfer(ctx);
          continue;
        }
        let r = rng.int(0, totalWeight - 1);
        for (const [w, kind] of kinds) {
          if (r < w) {
            if (!kind(ctx)) alphTransfer(ctx);
            break;
          }
          r -= w;
        }
      }
      if (swaps) deps.dex.bursts(ctx);
    },
  };
}
