/**
 * AlphBanX reads (dapp `alphbanx`, category `lending`). Its contracts publish no events, so operations are the
 * normalizer's inferred `lending/<op>/alphbanx_op` events, and a position is read from contract state through
 * the full node: the loan manager's method 23 gives the user's loan contract id, whose methods 16 and 17 give
 * its collateral (atto-ALPH) and debt (ABD, 9 decimals); the loan manager's own 16 and 17 the protocol totals.
 * Collateral ratio and liquidation price use DIA's `ALPH/USD` feed and ABD at 1 USD, with AlphBanX's 200 %
 * minimum collateral ratio.
 */
import { addressFromContractId, type node } from "@alephium/web3";
import { AppError } from "../errors.ts";
import type { ContractCaller } from "../node-calls.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { Pg } from "../stores/postgres.ts";
import type { DiaReads } from "./dia.ts";
import type { Page, Pager } from "./pages.ts";
import { whereEq } from "./pages.ts";

/** Mainnet loan manager (used when no operator row names another). */
export const MAINNET_LOAN_MANAGER = "tpxjsWJSaUh5i7XzNAsTWMRtD9QvDTV9zmMNeHHS6jQB";
/** Minimum collateral ratio (200 %): below it a loan can be liquidated. */
export const ALPHBANX_MCR = 2;
const ABD_DECIMALS = 9;
const ALPH_DECIMALS = 18;

export interface Operation {
  id: string;
  tx_id: string;
  timestamp: number;
  address: string;
  op: string;
  contract: string;
  contract_role: string;
  method_index: number | null;
  token_id: string;
  amount: string;
  alph_delta: string;
  abd_delta: string;
  abx_delta: string;
  borrower: string;
}

export interface Position {
  address: string;
  loan_id: string;
  loan_address: string;
  collateral: string;
  debt: string;
  alph_usd: number | null;
  collateral_ratio: number | null;
  liquidation_price_usd: number | null;
  liquidatable: boolean | null;
}

export interface Totals {
  loan_manager: string;
  total_collateral: string | null;
  total_debt: string | null;
  alph_usd: number | null;
  collateral_ratio: number | null;
  operations: Record<string, number>;
  borrowers: number;
  stakers: number;
}

interface ListArgs {
  limit: number;
  nextKey?: string | undefined;
}

export interface AlphbanxReads {
  operations(
    f: { address?: string | undefined; op?: string | undefined },
    a: ListArgs,
  ): Promise<Page<Operation>>;
  /** The address's loan, or null when it has none. */
  position(address: string): Promise<Position | null>;
  totals(): Promise<Totals>;
}

const u256 = (v: node.Val | undefined): bigint | null =>
  v && (v.type === "U256" || v.type === "I256") && /^-?\d+$/.test(String(v.value))
    ? BigInt(String(v.value))
    : null;

/** `raw / 10^decimals` as a number (for ratios and prices, not amounts). */
const units = (raw: bigint, decimals: number) => Number(raw) / 10 ** decimals;

export function createAlphbanxReads(deps: {
  ch: Ch;
  pg: Pg;
  pager: Pager;
  dia: DiaReads;
  node: ContractCaller | null;
}): AlphbanxReads {
  const { ch, pager } = deps;

  async function loanManager(): Promise<string> {
    const rows = await deps.pg.query<{ contract_address: string }>(
      "dapp_alphbanx_loan_manager",
      "SELECT contract_address FROM decoder_contracts WHERE decoder = 'alphbanx-loan-manager' ORDER BY created_at, contract_address LIMIT 1",
    );
    return rows[0]?.contract_address ?? MAINNET_LOAN_MANAGER;
  }

  async function alphUsd(): Promise<number | null> {
    const feed = (await deps.dia.feeds()).find((f) => f.key === "ALPH/USD");
    return feed ? Number(feed.value) / 10 ** feed.decimals : null;
  }

  function requireNode(): ContractCaller {
    if (!deps.node)
      throw new AppError(
        "node_not_configured",
        "Positions are read from the full node, and NODE_URL is empty.",
        {
          status: 503,
        },
      );
    return deps.node;
  }

  return {
    operations: (f, a) =>
      pager.page<Operation>(
        { list: "alphbanx.operations", filters: { ...f }, ...a },
        (r) => [r.id],
        async (ceiling, after, limit) => {
          const eq = whereEq({ address: f.address, op: f.op }, { address: "from", op: "sub_kind" });
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_alphbanx_operations",
            `SELECT id, tx_id, toUnixTimestamp64Milli(timestamp) AS ts, from, sub_kind, to, token_id, toString(amount) AS amount,
                    JSONExtractString(payload, 'contract_role') AS role, JSONExtractRaw(payload, 'method_index') AS mi,
                    JSONExtractString(payload, 'alph_delta') AS alph_delta, JSONExtractString(payload, 'abd_delta') AS abd_delta,
                    JSONExtractString(payload, 'abx_delta') AS abx_delta, JSONExtractString(payload, 'borrower') AS borrower
             FROM dapp_events FINAL
             WHERE dapp_id = 'alphbanx' AND category = 'lending' AND main_chain AND id < {ceiling:String}${eq.sql}
               ${after ? "AND id < {a0:String}" : ""}
             ORDER BY id DESC LIMIT {limit:UInt32}`,
            { ...eq.params, ceiling, a0: after?.[0], limit },
          );
          return rows.map((r) => ({
            id: String(r.id),
            tx_id: String(r.tx_id),
            timestamp: Number(r.ts),
            address: String(r.from),
            op: String(r.sub_kind),
            contract: String(r.to),
            contract_role: String(r.role),
            method_index: /^\d+$/.test(String(r.mi)) ? Number(r.mi) : null,
            token_id: String(r.token_id),
            amount: String(r.amount),
            alph_delta: String(r.alph_delta || "0"),
            abd_delta: String(r.abd_delta || "0"),
            abx_delta: String(r.abx_delta || "0"),
            borrower: String(r.borrower),
          }));
        },
      ),
    async position(address) {
      const node = requireNode();
      const manager = await loanManager();
      const loan = (await node.call(manager, 23, [{ type: "Address", value: address }]))?.[0];
      const loanId = loan && loan.type === "ByteVec" ? String(loan.value) : "";
      if (!/^[0-9a-f]{64}$/.test(loanId)) return null;
      const loanAddress = addressFromContractId(loanId);
      const [c, d] = await Promise.all([node.call(loanAddress, 16), node.call(loanAddress, 17)]);
      const collateral = u256(c?.[0]);
      const debt = u256(d?.[0]);
      if (collateral === null || debt === null) return null;
      const price = await alphUsd();
      const debtUsd = units(debt, ABD_DECIMALS);
      const coll = units(collateral, ALPH_DECIMALS);
      const ratio = price !== null && debtUsd > 0 ? (coll * price) / debtUsd : null;
      return {
        address,
        loan_id: loanId,
        loan_address: loanAddress,
        collateral: collateral.toString(),
        debt: debt.toString(),
        alph_usd: price,
        collateral_ratio: ratio,
        liquidation_price_usd: coll > 0 && debtUsd > 0 ? (debtUsd * ALPHBANX_MCR) / coll : null,
        liquidatable: ratio === null ? null : ratio < ALPHBANX_MCR,
      };
    },
    async totals() {
      const manager = await loanManager();
      const [c, d] = deps.node
        ? await Promise.all([deps.node.call(manager, 16), deps.node.call(manager, 17)])
        : [null, null];
      const collateral = u256(c?.[0] ?? undefined);
      const debt = u256(d?.[0] ?? undefined);
      const ceiling = await pager.ceiling();
      const counts = await ch.query<{ sub_kind: string; n: string; users: string }>(
        "dapp_alphbanx_counts",
        `SELECT sub_kind, count() AS n, uniqExact(from) AS users FROM dapp_events FINAL
         WHERE dapp_id = 'alphbanx' AND category = 'lending' AND main_chain AND id < {ceiling:String} GROUP BY sub_kind`,
        { ceiling },
      );
      const price = await alphUsd();
      const users = (op: string) => Number(counts.find((r) => r.sub_kind === op)?.users ?? 0);
      return {
        loan_manager: manager,
        total_collateral: collateral?.toString() ?? null,
        total_debt: debt?.toString() ?? null,
        alph_usd: price,
        collateral_ratio:
          collateral !== null && debt !== null && debt > 0n && price !== null
            ? (units(collateral, ALPH_DECIMALS) * price) / units(debt, ABD_DECIMALS)
            : null,
        operations: Object.fromEntries(counts.map((r) => [r.sub_kind, Number(r.n)])),
        borrowers: users("open_loan"),
        stakers: users("stake"),
      };
    },
  };
}
