/**
 * Linx lending: Morpho-style markets in one contract. Event indexes and field positions as a third-party indexer
 * reads them (ThinEdgeLabs/linx-app-backend@b626eb0 `lending_processor.rs`): 4 MarketCreated(id, marketContractId,
 * loanToken, collateralToken, oracle, irm, ltv), 10 Supply, 11 Withdraw, 12 Borrow, 13 Repay, 14 SupplyCollateral,
 * 15 WithdrawCollateral, 16 Liquidate, 17 AccrueInterest; field types inferred from those positions and Morpho
 * Blue's events (no public artifact): any other count or type is refused with a decode error, never guessed.
 * An event names its market, not its token: `token_id` is the loan or collateral token only on MarketCreated,
 * and the amounts travel in the payload (`assets`, `shares`) with `market_id`.
 */
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

/** The market id, and the account the operation is for (to). */
const party =
  (at: number) =>
  (f: Fields): { to: string; extra: Record<string, unknown> } => ({
    to: f.str(at),
    extra: { market_id: f.str(0).toLowerCase() },
  });

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
    read: (f) => ({ token: f.str(2).toLowerCase(), extra: { market_id: f.str(0).toLowerCase() } }),
  },
  10: {
    name: "Supply",
    fields: [id, caller, onBehalf, assets, shares],
    triple: ["lending", "supply", "linx_lending"],
    read: party(2),
  },
  11: {
    name: "Withdraw",
    fields: [id, caller, onBehalf, receiver, assets, shares],
    triple: ["lending", "withdraw", "linx_lending"],
    read: party(3),
  },
  12: {
    name: "Borrow",
    fields: [id, caller, onBehalf, receiver, assets, shares],
    triple: ["lending", "borrow", "linx_lending"],
    read: party(3),
  },
  13: {
    name: "Repay",
    fields: [id, caller, onBehalf, assets, shares],
    triple: ["lending", "repay", "linx_lending"],
    read: party(2),
  },
  14: {
    name: "SupplyCollateral",
    fields: [id, caller, onBehalf, assets],
    triple: ["lending", "add_collateral", "linx_lending"],
    read: party(2),
  },
  15: {
    name: "WithdrawCollateral",
    fields: [id, caller, onBehalf, receiver, assets],
    triple: ["lending", "withdraw_collateral", "linx_lending"],
    read: party(3),
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
    read: party(2),
  },
  17: {
    name: "AccrueInterest",
    fields: [id, ["prevBorrowRate", U], ["interest", U], ["feeShares", U]],
    triple: ["lending", "accrue_interest", "linx_lending"],
    read: (f) => ({ extra: { market_id: f.str(0).toLowerCase() } }),
  },
};

export const decodeLinxLending = tableDecoder(LINX_LENDING);
