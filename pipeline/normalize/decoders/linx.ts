/**
 * Linx lending: Morpho-style markets in one contract. Event indexes and field positions as a third-party indexer
 * reads them (ThinEdgeLabs/linx-app-backend@b626eb0 `lending_processor.rs`): 4 MarketCreated(id, marketContractId,
 * loanToken, collateralToken, oracle, irm, ltv), 10 Supply, 11 Withdraw, 12 Borrow, 13 Repay, 14 SupplyCollateral,
 * 15 WithdrawCollateral, 16 Liquidate, 17 AccrueInterest; field types inferred from those positions and Morpho
 * Blue's events (no public artifact): any other count or type is refused with a decode error, never guessed.
 * An event names its market, not its token: the market's tokens come from its MarketCreated (pipeline/normalize/
 * markets.ts). Supply, Withdraw, Borrow, Repay and AccrueInterest move the loan token (`amount`: assets, interest),
 * SupplyCollateral and WithdrawCollateral the collateral token, Liquidate repays the loan token and seizes
 * collateral (`seized_token_id`). The payload keeps every field with `market_id`. An event of a market whose
 * MarketCreated the index never saw carries no amount (ALPH, 0) and `market_unknown: true`: its fields stay in the
 * payload, never attributed to a guessed token.
 */
import type { ContractEvent, TxScope } from "../draft.ts";
import type { LendingMarket } from "../markets.ts";
import type { Fields } from "./fields.ts";
import { type TableEvent, tableDecoder } from "./layouts.ts";

const A = "Address" as const;
const B = "ByteVec" as const;
const U = "U256" as const;

const id = ["id", B] as const;
const caller = ["caller", A] as const;
const onBehalf = ["onBehalf", A] as const;
const receiver = ["receiver", A] as const;
const assets = ["assets", U] as const;
const shares = ["shares", U] as const;

type Side = "loan_token" | "collateral_token";

/**
 * The account the operation is for (`to`, at field `toAt`; none when null), and the amount of field `amountAt` in
 * the market's token of `side`.
 */
const party =
  (toAt: number | null, side: Side, amountAt: number) =>
  (f: Fields, _at: (name: string) => number, s: TxScope, ev: ContractEvent) => {
    const id = f.str(0).toLowerCase();
    const market: LendingMarket | undefined = s.markets?.marketOf(ev.contractAddress, id);
    const extra: Record<string, unknown> = { market_id: id };
    if (!market) extra["market_unknown"] = true;
    return {
      ...(toAt === null ? {} : { to: f.str(toAt) }),
      ...(market ? { token: market[side], amount: f.big(amountAt) } : {}),
      extra,
    };
  };

export const LINX_LENDING: Record<number, TableEvent> = {
  4: {
    name: "MarketCreated",
    fields: [
      id,
      ["marketContractId", B],
      ["loanToken", B],
      ["collateralToken", B],
      ["oracle", B],
      ["irm", B],
      ["ltv", U],
    ],
    triple: ["lending", "market_created", "linx_lending"],
    read: (f) => ({
      token: f.str(2).toLowerCase(),
      extra: { market_id: f.str(0).toLowerCase(), collateral_token_id: f.str(3).toLowerCase() },
    }),
  },
  10: {
    name: "Supply",
    fields: [id, caller, onBehalf, assets, shares],
    triple: ["lending", "supply", "linx_lending"],
    read: party(2, "loan_token", 3),
  },
  11: {
    name: "Withdraw",
    fields: [id, caller, onBehalf, receiver, assets, shares],
    triple: ["lending", "withdraw", "linx_lending"],
    read: party(3, "loan_token", 4),
  },
  12: {
    name: "Borrow",
    fields: [id, caller, onBehalf, receiver, assets, shares],
    triple: ["lending", "borrow", "linx_lending"],
    read: party(3, "loan_token", 4),
  },
  13: {
    name: "Repay",
    fields: [id, caller, onBehalf, assets, shares],
    triple: ["lending", "repay", "linx_lending"],
    read: party(2, "loan_token", 3),
  },
  14: {
    name: "SupplyCollateral",
    fields: [id, caller, onBehalf, assets],
    triple: ["lending", "add_collateral", "linx_lending"],
    read: party(2, "collateral_token", 3),
  },
  15: {
    name: "WithdrawCollateral",
    fields: [id, caller, onBehalf, receiver, assets],
    triple: ["lending", "withdraw_collateral", "linx_lending"],
    read: party(3, "collateral_token", 4),
  },
  16: {
    name: "Liquidate",
    fields: [
      id,
      caller,
      ["borrower", A],
      ["repaidAssets", U],
      ["repaidShares", U],
      ["seizedAssets", U],
      ["badDebtAssets", U],
      ["badDebtShares", U],
    ],
    triple: ["lending", "liquidate", "linx_lending"],
    read: (f, at, s, ev) => {
      const r = party(2, "loan_token", 3)(f, at, s, ev);
      const market = s.markets?.marketOf(ev.contractAddress, f.str(0).toLowerCase());
      return market ? { ...r, extra: { ...r.extra, seized_token_id: market.collateral_token } } : r;
    },
  },
  17: {
    name: "AccrueInterest",
    fields: [id, ["prevBorrowRate", U], ["interest", U], ["feeShares", U]],
    triple: ["lending", "accrue_interest", "linx_lending"],
    read: party(null, "loan_token", 2),
  },
};

export const decodeLinxLending = tableDecoder(LINX_LENDING);
