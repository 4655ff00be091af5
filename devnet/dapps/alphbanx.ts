/**
 * The devnet's AlphBanX (ALPH-backed loans in the ABD stablecoin) on the oracle's chain 2→2, so loans read
 * ALPH/USD from the devnet oracle's current value on the same chain. Contracts: ABD (its supply held by its own
 * contract, paid out on loans and taken back on repayment) and ABX (issued to the group's users), borrower
 * operations, the loan manager (each loan is its sub-contract holding the collateral), the stake manager (ABX
 * staked, ALPH rewards from the borrowing fees) and the auction manager (the stability pool of ABD that absorbs
 * liquidated debt and receives the collateral).
 *
 * AlphBanX publishes no events: users' script txs call the methods by index (dapp-spec.md): borrower 11 openLoan,
 * 7 addCollateral, 10 repay, 19 closeLoan, 20 withdrawCollateral, 0 redeem; stake 30 stake, 31 requestUnstake,
 * 32 claimUnstake, 33 claimRewards; auction 36 poolDeposit, 41 poolWithdraw, 40 poolClaim; a keeper's loan-manager
 * call 5 liquidates a loan under the 200 % minimum collateral ratio, naming the borrower as an Address argument.
 * About one loan in two opens at 201–203 % by a careless borrower who never tends it (nor is it redeemed
 * against), so ALPH/USD's first dips make liquidations within the first hours.
 */
import type { node } from "@alephium/web3";
import {
  addressToBytes,
  binToHex,
  DUST_AMOUNT,
  MINIMAL_CONTRACT_DEPOSIT,
  ONE_ALPH,
  subContractId,
} from "@alephium/web3";
import { byteVec, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec, DevnetAddress, DevnetOracle } from "../types.ts";
import type { DefiPlan } from "./defi-plan.ts";
import {
  type CallSpec,
  callTx,
  type DappDeps,
  dappState,
  moveAsset,
  newDappContract,
  pickUser,
  scriptOf,
  splitSupply,
} from "./kit.ts";

/** Minimum collateral ratio, percent. */
const MCR = 200n;
/** Borrowing fee paid in ALPH to the stake manager, per mille of the collateral. */
const BORROW_FEE_PERMILLE = 5n;
const UNSTAKE_DELAY_MS = 10 * 60_000;
const E9 = 1_000_000_000n;

/** Method indexes called by users' scripts. */
export const ALPHBANX_METHOD = {
  openLoan: 11,
  addCollateral: 7,
  repay: 10,
  closeLoan: 19,
  withdrawCollateral: 20,
  redeem: 0,
  stake: 30,
  requestUnstake: 31,
  claimUnstake: 32,
  claimRewards: 33,
  poolDeposit: 36,
  poolWithdraw: 41,
  poolClaim: 40,
  liquidate: 5,
} as const;

/** Read-only methods the call-contract double answers. */
export const ALPHBANX_VIEW = { loanOf: 23, collateral: 16, debt: 17 } as const;

/** USD value (9 decimals, ABD's) of atto-ALPH at an 8-decimal price. */
export const alphValue = (atto: bigint, price: bigint): bigint => (atto * price) / 10n ** 17n;

export interface AlphBanX {
  step(ctx: BlockCtx): void;
  call(c: ContractRec, methodIndex: number, args: node.Val[]): node.Val[] | undefined;
}

export function createAlphBanX(
  deps: DappDeps & { plan: DefiPlan["alphbanx"]; oracle: DevnetOracle },
): AlphBanX {
  const { rng, ledger, plan } = deps;
  const abdId = plan.abd.id;
  const abxId = plan.abx.id;
  const get = (id: string): ContractRec | undefined => ledger.contractById(id);

  const price = (): bigint | undefined => get(deps.oracle.id)?.oracle?.values[0];

  const deployments: { id: string; role: string; token?: "abd" | "abx" }[] = [
    { id: plan.abd.id, role: "alphbanx-abd", token: "abd" },
    { id: plan.abx.id, role: "alphbanx-abx", token: "abx" },
    { id: plan.borrower.id, role: "alphbanx-borrower" },
    { id: plan.loanManager.id, role: "alphbanx-loan-manager" },
    { id: plan.stake.id, role: "alphbanx-stake" },
    { id: plan.auction.id, role: "alphbanx-auction" },
  ];

  const deploy = (ctx: BlockCtx, d: (typeof deployments)[number]): void => {
    const users = deps.accounts.usersByGroup[ctx.from]!;
    const admin = users[0]!;
    const t = d.token === "abd" ? plan.abd : d.token === "abx" ? plan.abx : undefined;
    const c = newDappContract(
      ctx,
      rng,
      d.id,
      dappState(d.role),
      t
        ? {
            token: {
              symbol: t.symbol,
              name: t.name,
              decimals: t.decimals,
              totalSupply: t.totalSupply,
              minter: admin.address,
            },
          }
        : {},
    );
    // ABD's supply stays in its contract; ABX is shared among the group's users.
    if (d.token === "abd") c.tokens.set(abdId, plan.abd.totalSupply);
    const shared = d.token === "abx";
    callTx(deps, ctx, {
      user: admin,
      gas: 100_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT + (shared ? BigInt(users.length) * DUST_AMOUNT : 0n),
      created: [{ contract: c }],
      ...(shared ? { payouts: () => splitSupply(users, abxId, plan.abx.totalSupply) } : {}),
      script: deps.builder.script(),
      ...(t ? { issuedToken: t.id } : {}),
    });
  };

  const num = (c: ContractRec, key: string): bigint => c.defi!.num[key] ?? 0n;
  const add = (c: ContractRec, key: string, v: bigint): void => {
    c.defi!.num[key] = num(c, key) + v;
  };
  const loanOf = (address: string): ContractRec | undefined => {
    const id = get(plan.loanManager.id)?.defi?.text[`loan:${address}`];
    return id ? get(id) : undefined;
  };
  const call = (
    ctx: BlockCtx,
    user: DevnetAddress,
    target: { id: string },
    method: number,
    spec: Omit<CallSpec, "user" | "gas" | "script">,
    args: NonNullable<Parameters<typeof scriptOf>[0][number]["args"]> = [],
  ): boolean =>
    callTx(deps, ctx, {
      user,
      gas: 90_000,
      ...spec,
      script: scriptOf([
        {
          contractId: target.id,
          method,
          ...(spec.alphIn ? { alph: spec.alphIn } : {}),
          ...(spec.tokensIn ? { tokens: spec.tokensIn } : {}),
          args,
        },
      ]),
    });

  // ---- borrower operations ---------------------------------------------------------------------------
  const openLoan = (ctx: BlockCtx, p: bigint): boolean => {
    const lm = get(plan.loanManager.id)!;
    const abd = get(abdId)!;
    const stake = get(plan.stake.id)!;
    const user = pickUser(deps, ctx, (u) => loanOf(u.address) === undefined);
    if (!user) return false;
    const risky = rng.chance(0.45);
    const collateral = risky ? rng.bigint(50n, 200n) * ONE_ALPH : rng.bigint(100n, 1500n) * ONE_ALPH;
    const ratio = risky ? BigInt(rng.int(201, 203)) : BigInt(rng.int(230, 400));
    const debt = (alphValue(collateral, p) * 100n) / ratio;
    const fee = (collateral * BORROW_FEE_PERMILLE) / 1000n;
    const nonce = num(lm, "loans");
    const loanId = subContractId(
      lm.id,
      binToHex(addressToBytes(user.address)) + nonce.toString(16).padStart(8, "0"),
      ctx.from,
    );
    const loan = newDappContract(
      ctx,
      rng,
      loanId,
      dappState("alphbanx-loan", { collateral, debt, careless: risky ? 1n : 0n }, { owner: user.address }),
    );
    loan.alph += collateral;
    return call(
      ctx,
      user,
      plan.borrower,
      ALPHBANX_METHOD.openLoan,
      {
        alphIn: collateral + fee + MINIMAL_CONTRACT_DEPOSIT,
        contracts: [abd, stake],
        touched: [lm],
        created: [{ contract: loan, parent: lm }],
        apply: () => {
          moveAsset(abd, abdId, -debt);
          moveAsset(stake, "0".repeat(64), fee);
          add(lm, "loans", 1n);
          add(lm, "totalDebt", debt);
          add(lm, "totalCollateral", collateral);
          lm.defi!.text[`loan:${user.address}`] = loanId;
        },
        payouts: () => [{ address: user.address, tokens: [[abdId, debt]] }],
      },
      [{ u256: debt }],
    );
  };

  const withLoan = (ctx: BlockCtx, ok: (loan: ContractRec, bal: Map<string, bigint>) => boolean) => {
    let found: ContractRec | undefined;
    const user = pickUser(deps, ctx, (u, bal) => {
      found = loanOf(u.address);
      return found !== undefined && num(found, "careless") === 0n && ok(found, bal);
    });
    return user && found ? { user, loan: found } : undefined;
  };

  const addCollateral = (ctx: BlockCtx): boolean => {
    const lm = get(plan.loanManager.id)!;
    const hit = withLoan(ctx, () => true);
    if (!hit) return false;
    const amount = rng.bigint(20n, 300n) * ONE_ALPH;
    return call(ctx, hit.user, plan.borrower, ALPHBANX_METHOD.addCollateral, {
      alphIn: amount,
      contracts: [hit.loan],
      touched: [lm],
      apply: () => {
        hit.loan.alph += amount;
        add(hit.loan, "collateral", amount);
        add(lm, "totalCollateral", amount);
      },
    });
  };

  const repay = (ctx: BlockCtx): boolean => {
    const lm = get(plan.loanManager.id)!;
    const abd = get(abdId)!;
    let amount = 0n;
    const hit = withLoan(ctx, (loan, bal) => {
      const have = bal.get(abdId) ?? 0n;
      const debt = num(loan, "debt");
      // Half the repayments pay back all the borrower can, so loans do get closed.
      amount = ((have < debt ? have : debt) * BigInt(rng.chance(0.5) ? 100 : rng.int(20, 60))) / 100n;
      return amount > 0n;
    });
    if (!hit) return false;
    return call(ctx, hit.user, plan.borrower, ALPHBANX_METHOD.repay, {
      tokensIn: [[abdId, amount]],
      contracts: [abd],
      touched: [lm, hit.loan],
      apply: () => {
        moveAsset(abd, abdId, amount);
        add(hit.loan, "debt", -amount);
        add(lm, "totalDebt", -amount);
      },
    });
  };

  /** Pays a loan's debt back (by its owner, closing it) and destroys it. */
  const closeLoan = (ctx: BlockCtx): boolean => {
    const lm = get(plan.loanManager.id)!;
    const abd = get(abdId)!;
    const hit = withLoan(ctx, (loan, bal) => (bal.get(abdId) ?? 0n) >= num(loan, "debt"));
    if (!hit) return false;
    const { loan, user } = hit;
    const debt = num(loan, "debt");
    const collateral = num(loan, "collateral");
    const back = loan.alph;
    return call(ctx, user, plan.borrower, ALPHBANX_METHOD.closeLoan, {
      ...(debt > 0n ? { tokensIn: [[abdId, debt]] as [string, bigint][] } : {}),
      contracts: [loan, abd],
      destroyed: [loan],
      touched: [lm],
      apply: () => {
        moveAsset(abd, abdId, debt);
        loan.alph = 0n;
        add(lm, "totalDebt", -debt);
        add(lm, "totalCollateral", -collateral);
        delete lm.defi!.text[`loan:${user.address}`];
      },
      payouts: () => [{ address: user.address, alph: back }],
    });
  };

  const withdrawCollateral = (ctx: BlockCtx, p: bigint): boolean => {
    const lm = get(plan.loanManager.id)!;
    let amount = 0n;
    const hit = withLoan(ctx, (loan) => {
      // Keep at least 250 %.
      const keep = (num(loan, "debt") * 250n * 10n ** 17n) / (100n * p) + 1n;
      const excess = num(loan, "collateral") - keep;
      amount = (excess * BigInt(rng.int(20, 50))) / 100n;
      return amount >= ONE_ALPH;
    });
    if (!hit) return false;
    return call(
      ctx,
      hit.user,
      plan.borrower,
      ALPHBANX_METHOD.withdrawCollateral,
      {
        contracts: [hit.loan],
        touched: [lm],
        apply: () => {
          hit.loan.alph -= amount;
          add(hit.loan, "collateral", -amount);
          add(lm, "totalCollateral", -amount);
        },
        payouts: () => [{ address: hit.user.address, alph: amount }],
      },
      [{ u256: amount }],
    );
  };

  /** ABD in, ALPH out at the oracle price (less 0.5 %), taken from the loan with the lowest ratio. */
  const redeem = (ctx: BlockCtx, p: bigint): boolean => {
    const lm = get(plan.loanManager.id)!;
    const abd = get(abdId)!;
    const loans = [...ledger.contracts()].filter(
      (c) => c.defi?.role === "alphbanx-loan" && num(c, "debt") > 0n && num(c, "careless") === 0n,
    );
    if (loans.length === 0) return false;
    const ratio = (c: ContractRec): bigint => (alphValue(num(c, "collateral"), p) * 10_000n) / num(c, "debt");
    const target = loans.reduce((m, c) => (ratio(c) < ratio(m) ? c : m));
    let amount = 0n;
    const user = pickUser(deps, ctx, (u, bal) => {
      if (u.address === target.defi!.text["owner"]) return false;
      const have = bal.get(abdId) ?? 0n;
      amount = (have * BigInt(rng.int(10, 40))) / 100n;
      if (amount > num(target, "debt")) amount = num(target, "debt");
      return amount >= 5n * E9;
    });
    if (!user) return false;
    const alphOut = (((amount * 10n ** 17n) / p) * 995n) / 1000n;
    if (alphOut >= num(target, "collateral")) return false;
    return call(
      ctx,
      user,
      plan.borrower,
      ALPHBANX_METHOD.redeem,
      {
        tokensIn: [[abdId, amount]],
        contracts: [target, abd],
        touched: [lm],
        apply: () => {
          moveAsset(abd, abdId, amount);
          target.alph -= alphOut;
          add(target, "collateral", -alphOut);
          add(target, "debt", -amount);
          add(lm, "totalDebt", -amount);
          add(lm, "totalCollateral", -alphOut);
        },
        payouts: () => [{ address: user.address, alph: alphOut }],
      },
      [{ u256: amount }],
    );
  };

  // ---- liquidation ------------------------------------------------------------------------------------
  /**
   * A keeper liquidates the first loan under the MCR: the stability pool absorbs what it can of the debt (its
   * depositors lose that ABD pro rata and share the collateral); debt it cannot absorb is written off (its ABD
   * stays in circulation, a simplification of AlphBanX's auctions).
   */
  const liquidate = (ctx: BlockCtx, p: bigint): boolean => {
    const lm = get(plan.loanManager.id)!;
    const abd = get(abdId)!;
    const auction = get(plan.auction.id)!;
    const pooled = num(auction, "total");
    const loan = [...ledger.contracts()]
      .filter((c) => c.defi?.role === "alphbanx-loan")
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .find((c) => {
        const debt = num(c, "debt");
        return debt > 0n && alphValue(num(c, "collateral"), p) * 100n < MCR * debt;
      });
    if (!loan) return false;
    const owner = loan.defi!.text["owner"]!;
    const keeper = pickUser(deps, ctx, (u) => u.address !== owner);
    if (!keeper) return false;
    const debt = num(loan, "debt");
    let absorbed = debt;
    if (pooled < debt) absorbed = pooled;
    const collateral = num(loan, "collateral");
    const deposit = loan.alph - collateral;
    return call(
      ctx,
      keeper,
      plan.loanManager,
      ALPHBANX_METHOD.liquidate,
      {
        contracts: [loan, auction, abd],
        destroyed: [loan],
        touched: [lm],
        apply: () => {
          let burnt = 0n;
          if (pooled > 0n)
            for (const [key, d] of Object.entries(auction.defi!.num)) {
              if (!key.startsWith("d:") || d === 0n) continue;
              const loss = (absorbed * d) / pooled;
              burnt += loss;
              auction.defi!.num[key] = d - loss;
              add(auction, `g:${key.slice(2)}`, (collateral * d) / pooled);
            }
          add(auction, "total", -burnt);
          moveAsset(auction, abdId, -burnt);
          moveAsset(abd, abdId, burnt);
          auction.alph += collateral;
          loan.alph = 0n;
          add(lm, "totalDebt", -debt);
          add(lm, "totalCollateral", -collateral);
          add(lm, "liquidations", 1n);
          delete lm.defi!.text[`loan:${owner}`];
        },
        // The loan's deposit rewards the keeper.
        payouts: () => [{ address: keeper.address, alph: deposit }],
      },
      [{ address: owner }],
    );
  };

  // ---- stake manager ----------------------------------------------------------------------------------
  const stakeAbx = (ctx: BlockCtx): boolean => {
    const stake = get(plan.stake.id)!;
    let amount = 0n;
    const user = pickUser(deps, ctx, (_u, bal) => {
      amount = ((bal.get(abxId) ?? 0n) * BigInt(rng.int(10, 40))) / 100n;
      return amount > 0n;
    });
    if (!user) return false;
    return call(
      ctx,
      user,
      plan.stake,
      ALPHBANX_METHOD.stake,
      {
        tokensIn: [[abxId, amount]],
        contracts: [stake],
        apply: () => {
          moveAsset(stake, abxId, amount);
          add(stake, `s:${user.address}`, amount);
          add(stake, "total", amount);
        },
      },
      [{ u256: amount }],
    );
  };

  const requestUnstake = (ctx: BlockCtx): boolean => {
    const stake = get(plan.stake.id)!;
    const user = pickUser(
      deps,
      ctx,
      (u) => num(stake, `s:${u.address}`) > 0n && num(stake, `u:${u.address}`) === 0n,
    );
    if (!user) return false;
    const amount = (num(stake, `s:${user.address}`) * BigInt(rng.int(30, 100))) / 100n;
    if (amount === 0n) return false;
    return call(
      ctx,
      user,
      plan.stake,
      ALPHBANX_METHOD.requestUnstake,
      {
        touched: [stake],
        apply: () => {
          add(stake, `s:${user.address}`, -amount);
          add(stake, "total", -amount);
          add(stake, `u:${user.address}`, amount);
          stake.defi!.num[`t:${user.address}`] = BigInt(ctx.ts + UNSTAKE_DELAY_MS);
        },
      },
      [{ u256: amount }],
    );
  };

  const claimUnstake = (ctx: BlockCtx): boolean => {
    const stake = get(plan.stake.id)!;
    const user = pickUser(
      deps,
      ctx,
      (u) => num(stake, `u:${u.address}`) > 0n && num(stake, `t:${u.address}`) <= BigInt(ctx.ts),
    );
    if (!user) return false;
    const amount = num(stake, `u:${user.address}`);
    return call(ctx, user, plan.stake, ALPHBANX_METHOD.claimUnstake, {
      contracts: [stake],
      apply: () => {
        moveAsset(stake, abxId, -amount);
        delete stake.defi!.num[`u:${user.address}`];
        delete stake.defi!.num[`t:${user.address}`];
      },
      payouts: () => [{ address: user.address, tokens: [[abxId, amount]] }],
    });
  };

  /** A staker's share of the rewards (the ALPH the stake manager holds above its deposit). */
  const claimRewards = (ctx: BlockCtx): boolean => {
    const stake = get(plan.stake.id)!;
    const total = num(stake, "total");
    const rewards = stake.alph - MINIMAL_CONTRACT_DEPOSIT;
    if (total === 0n) return false;
    let amount = 0n;
    const user = pickUser(deps, ctx, (u) => {
      amount = (rewards * num(stake, `s:${u.address}`)) / total;
      return amount >= ONE_ALPH / 100n;
    });
    if (!user) return false;
    return call(ctx, user, plan.stake, ALPHBANX_METHOD.claimRewards, {
      contracts: [stake],
      apply: () => {
        stake.alph -= amount;
      },
      payouts: () => [{ address: user.address, alph: amount }],
    });
  };

  // ---- auction manager (stability pool) -----------------------------------------------------------------
  const poolDeposit = (ctx: BlockCtx): boolean => {
    const auction = get(plan.auction.id)!;
    let amount = 0n;
    const user = pickUser(deps, ctx, (u, bal) => {
      // A careful borrower keeps what closing the loan takes.
      const loan = loanOf(u.address);
      const keep = loan && num(loan, "careless") === 0n ? num(loan, "debt") : 0n;
      const spare = (bal.get(abdId) ?? 0n) - keep;
      amount = spare > 0n ? (spare * BigInt(rng.int(30, 70))) / 100n : 0n;
      return amount >= E9;
    });
    if (!user) return false;
    return call(
      ctx,
      user,
      plan.auction,
      ALPHBANX_METHOD.poolDeposit,
      {
        tokensIn: [[abdId, amount]],
        contracts: [auction],
        apply: () => {
          moveAsset(auction, abdId, amount);
          add(auction, `d:${user.address}`, amount);
          add(auction, "total", amount);
        },
      },
      [{ u256: amount }],
    );
  };

  const poolWithdraw = (ctx: BlockCtx): boolean => {
    const auction = get(plan.auction.id)!;
    let amount = 0n;
    const user = pickUser(deps, ctx, (u) => {
      amount = (num(auction, `d:${u.address}`) * BigInt(rng.int(20, 50))) / 100n;
      return amount > 0n;
    });
    if (!user) return false;
    return call(
      ctx,
      user,
      plan.auction,
      ALPHBANX_METHOD.poolWithdraw,
      {
        contracts: [auction],
        apply: () => {
          moveAsset(auction, abdId, -amount);
          add(auction, `d:${user.address}`, -amount);
          add(auction, "total", -amount);
        },
        payouts: () => [{ address: user.address, tokens: [[abdId, amount]] }],
      },
      [{ u256: amount }],
    );
  };

  const poolClaim = (ctx: BlockCtx): boolean => {
    const auction = get(plan.auction.id)!;
    const user = pickUser(deps, ctx, (u) => num(auction, `g:${u.address}`) >= ONE_ALPH / 100n);
    if (!user) return false;
    const amount = num(auction, `g:${user.address}`);
    return call(ctx, user, plan.auction, ALPHBANX_METHOD.poolClaim, {
      contracts: [auction],
      apply: () => {
        auction.alph -= amount;
        delete auction.defi!.num[`g:${user.address}`];
      },
      payouts: () => [{ address: user.address, alph: amount }],
    });
  };

  const actions: [number, (ctx: BlockCtx, p: bigint) => boolean][] = [
    [26, openLoan],
    [8, addCollateral],
    [9, repay],
    [8, closeLoan],
    [5, withdrawCollateral],
    [4, redeem],
    [9, stakeAbx],
    [3, requestUnstake],
    [4, claimUnstake],
    [5, claimRewards],
    [13, poolDeposit],
    [4, poolWithdraw],
    [8, poolClaim],
  ];
  const totalWeight = actions.reduce((s, [w]) => s + w, 0);

  return {
    step(ctx) {
      if (ctx.chainIndex !== plan.chainIndex) return;
      const next = deployments.find((d) => !get(d.id));
      if (next) return deploy(ctx, next);
      const p = price();
      if (p === undefined) return;
      if (liquidate(ctx, p)) return;
      // About three calls a minute on a chain with a block every 8 s.
      if (!rng.chance(0.4)) return;
      let r = rng.int(0, totalWeight - 1);
      for (const [w, action] of actions) {
        if (r < w) {
          action(ctx, p);
          return;
        }
        r -= w;
      }
    },
    call(c, methodIndex, args) {
      const role = c.defi?.role;
      if (role === "alphbanx-loan-manager") {
        if (methodIndex === ALPHBANX_VIEW.loanOf) {
          const a = args[0];
          if (a?.type !== "Address") return undefined;
          return [byteVec(c.defi!.text[`loan:${String(a.value)}`] ?? "")];
        }
        if (methodIndex === ALPHBANX_VIEW.collateral) return [u256(num(c, "totalCollateral"))];
        if (methodIndex === ALPHBANX_VIEW.debt) return [u256(num(c, "totalDebt"))];
      }
      if (role === "alphbanx-loan") {
        if (methodIndex === ALPHBANX_VIEW.collateral) return [u256(num(c, "collateral"))];
        if (methodIndex === ALPHBANX_VIEW.debt) return [u256(num(c, "debt"))];
      }
      return undefined;
    },
  };
}
