/**
 * dapps:alphbanx (user key) — a position read from contract state through the full node, the operations the
 * normalizer infers (AlphBanX publishes no events), and protocol totals.
 */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { requireDb } from "../../require-db.ts";
import { Base58Address, HexId, Nullable, problemOf, StringEnum, U256String, UnixMs } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import { dappListRoute } from "./list-route.ts";

const TAG = "dapps:alphbanx";
const OPS = [
  "open_loan",
  "add_collateral",
  "repay",
  "close_loan",
  "withdraw_collateral",
  "redeem",
  "liquidate",
  "stake",
  "request_unstake",
  "claim_unstake",
  "claim_rewards",
  "pool_deposit",
  "pool_withdraw",
  "pool_claim",
  "call",
] as const;

export async function alphbanxRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  const reads = () => need("dapps").alphbanx;
  const cfg = { access: "user" as const, db: "required" as const };

  app.get(
    "/dapps/alphbanx/positions/:address",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "A borrower's position (from contract state)",
        description:
          "Read from the full node (`NODE_URL`): the loan manager's method 23 names the address's loan contract, whose methods 16 and 17 give its collateral and debt. `collateral_ratio` = collateral × ALPH/USD (DIA's feed) / debt (ABD at 1 USD); `liquidation_price_usd` = the ALPH/USD price at which the ratio reaches the 200 % minimum. 404 when the address has no loan; 502 when the node does not answer; 503 without `NODE_URL`.",
        params: Type.Object({ address: Base58Address("Borrower address.") }),
        response: {
          404: problemOf("The address has no AlphBanX loan."),
          502: problemOf("The full node does not answer."),
          503: problemOf("NODE_URL is empty (or the database is off)."),
          200: Type.Object({
            address: Type.String(),
            loan_id: HexId("Loan contract id."),
            loan_address: Type.String(),
            collateral: U256String("Collateral, atto-ALPH."),
            debt: U256String("Debt, ABD smallest unit (9 decimals)."),
            alph_usd: Nullable(Type.Number({ description: "DIA's newest ALPH/USD value." })),
            collateral_ratio: Nullable(Type.Number({ description: "2 means 200 %." })),
            liquidation_price_usd: Nullable(Type.Number()),
            liquidatable: Nullable(Type.Boolean({ description: "Ratio below the 200 % minimum." })),
          }),
        },
      },
    },
    async (request) => {
      const position = await reads().position(request.params.address);
      if (!position)
        throw notFound(`Address ${request.params.address} has no AlphBanX loan`, {
          address: request.params.address,
        });
      return position;
    },
  );

  dappListRoute(app, {
    path: "/dapps/alphbanx/operations",
    tag: TAG,
    access: "user",
    summary: "Operations, newest first",
    description:
      "Inferred from the called contract and method index and the signer's ALPH/ABD/ABX moves (see the taxonomy): open_loan, add_collateral, repay, close_loan, withdraw_collateral, redeem, liquidate, stake, request_unstake, claim_unstake, claim_rewards, pool_deposit, pool_withdraw, pool_claim, call.",
    query: {
      address: Type.Optional(Base58Address("Only operations signed by this address.")),
      op: Type.Optional(StringEnum(OPS, { description: "Only this operation." })),
    },
    rowsKey: "operations",
    row: Type.Object({
      id: Type.String(),
      tx_id: Type.String(),
      timestamp: UnixMs("Block time."),
      address: Type.String({ description: "Signer." }),
      op: Type.String(),
      contract: Type.String({ description: "Called AlphBanX contract." }),
      contract_role: Type.String(),
      method_index: Nullable(Type.Integer()),
      token_id: HexId("Main asset moved."),
      amount: U256String("Its amount."),
      alph_delta: U256String("Signer's ALPH change (signed)."),
      abd_delta: U256String("Signer's ABD change (signed)."),
      abx_delta: U256String("Signer's ABX change (signed)."),
      borrower: Type.String({ description: "Liquidated borrower, when the script names one." }),
    }),
    read: (f, page) => reads().operations(f, page),
  });

  app.get(
    "/dapps/alphbanx/totals",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "Protocol totals",
        description:
          "Total collateral and debt from the loan manager's state (null when the node is not configured or refuses the call), and operation counts from the events.",
        response: {
          502: problemOf("The full node does not answer."),
          200: Type.Object({
            loan_manager: Type.String(),
            total_collateral: Nullable(U256String("atto-ALPH.")),
            total_debt: Nullable(U256String("ABD smallest unit.")),
            alph_usd: Nullable(Type.Number()),
            collateral_ratio: Nullable(Type.Number()),
            operations: Type.Record(Type.String(), Type.Integer(), { description: "Operations per kind." }),
            borrowers: Type.Integer({ description: "Addresses that opened a loan." }),
            stakers: Type.Integer({ description: "Addresses that staked ABX." }),
          }),
        },
      },
    },
    async () => reads().totals(),
  );
}
