/**
 * AlphBanX publishes no events: operations are inferred from the tx's script (each `CallExternal` on a
 * contract of an AlphBanX kind, the contract id pushed right before it) and from the signer's ALPH/ABD/ABX
 * moves. Method map: openABX's catalog of mainnet write calls. Nothing here is published: low confidence.
 */
import {
  addressFromContractId,
  addressFromLockupScript,
  binToHex,
  codec,
  hexToBinUnsafe,
} from "@alephium/web3";
import { DAPP_UNKNOWN, type SubKind } from "../../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID } from "../../../lib/chain/types.ts";
import type { DecoderKind } from "../../../lib/dapps/kinds.ts";
import { contractIdOf } from "../chain-utils.ts";
import { type Draft, dappOf, draft, isAssetOutput, type TxScope } from "../draft.ts";

type Instr = codec.Instr;
type Role = "borrower" | "loan_manager" | "stake" | "auction";

const ROLES: Partial<Record<DecoderKind, Role>> = {
  "alphbanx-borrower": "borrower",
  "alphbanx-loan-manager": "loan_manager",
  "alphbanx-stake": "stake",
  "alphbanx-auction": "auction",
};

/** One external call found in a script. */
export interface ScriptCall {
  contract_address: string;
  method_index: number;
  /** Addresses pushed as constants since the previous call (the call's Address arguments, approvers). */
  addresses: string[];
}

/** Assets the script approves with constant amounts; `exact` is false when one amount or token is computed. */
export interface Approvals {
  amounts: Map<string, bigint>;
  exact: boolean;
}

const SMALL_U256: Partial<Record<Instr["name"], bigint>> = {
  U256Const0: 0n,
  U256Const1: 1n,
  U256Const2: 2n,
  U256Const3: 3n,
  U256Const4: 4n,
  U256Const5: 5n,
};

function u256Const(i: Instr | undefined): bigint | undefined {
  if (!i) return undefined;
  if (i.name === "U256Const") return i.value;
  return SMALL_U256[i.name];
}

/** The script's instructions, or undefined when the bytecode does not parse. */
export function scriptInstrs(scriptHex: string): Instr[] | undefined {
  try {
    return codec.script.scriptCodec.decode(hexToBinUnsafe(scriptHex)).methods.flatMap((m) => m.instrs);
  } catch {
    return undefined;
  }
}

/** External calls whose contract id is a constant pushed right before the call. */
export function scriptCalls(instrs: readonly Instr[]): ScriptCall[] {
  const calls: ScriptCall[] = [];
  let addresses: string[] = [];
  instrs.forEach((instr, i) => {
    if (instr.name === "AddressConst") {
      try {
        addresses.push(addressFromLockupScript(instr.value));
      } catch {
        // An address kind this web3 cannot print is no argument we can name.
      }
      return;
    }
    if (instr.name !== "CallExternal") return;
    const prev = instrs[i - 1];
    if (prev?.name === "BytesConst" && prev.value.length === 32) {
      calls.push({
        contract_address: addressFromContractId(binToHex(prev.value)),
        method_index: instr.index,
        addresses,
      });
    }
    addresses = [];
  });
  return calls;
}

/** Constant approvals: `amount ApproveAlph` and `tokenId amount ApproveToken`. */
export function scriptApprovals(instrs: readonly Instr[]): Approvals {
  const amounts = new Map<string, bigint>();
  let exact = true;
  const add = (token: string, amount: bigint) => amounts.set(token, (amounts.get(token) ?? 0n) + amount);
  instrs.forEach((instr, i) => {
    if (instr.name !== "ApproveAlph" && instr.name !== "ApproveToken") return;
    const amount = u256Const(instrs[i - 1]);
    const tokenInstr = instrs[i - 2];
    if (amount === undefined) exact = false;
    else if (instr.name === "ApproveAlph") add(ALPH_TOKEN_ID, amount);
    else if (tokenInstr?.name === "BytesConst" && tokenInstr.value.length === 32)
      add(binToHex(tokenInstr.value), amount);
    else exact = false;
  });
  return { amounts, exact };
}

/** Signed moves of the signer through the script: generated outputs to the signer minus constant approvals. */
function signerDeltas(s: TxScope, approvals: Approvals, tokens: { abd: Set<string>; abx: Set<string> }) {
  const received = new Map<string, bigint>();
  const add = (token: string, amount: bigint) => received.set(token, (received.get(token) ?? 0n) + amount);
  for (const o of s.tx.generatedOutputs) {
    if (!isAssetOutput(o) || o.address !== s.sender) continue;
    add(ALPH_TOKEN_ID, BigInt(o.attoAlphAmount));
    for (const t of o.tokens) add(t.id, BigInt(t.amount));
  }
  const delta = (ids: Iterable<string>) => {
    let d = 0n;
    for (const id of ids) d += (received.get(id) ?? 0n) - (approvals.amounts.get(id) ?? 0n);
    return d;
  };
  return { alph: delta([ALPH_TOKEN_ID]), abd: delta(tokens.abd), abx: delta(tokens.abx) };
}

const BORROWER: Record<number, SubKind> = {
  11: "open_loan",
  12: "open_loan",
  7: "add_collateral",
  8: "add_collateral",
  10: "repay",
  19: "close_loan",
  20: "withdraw_collateral",
};
const STAKE: Record<number, SubKind> = {
  30: "stake",
  31: "request_unstake",
  32: "claim_unstake",
  33: "claim_rewards",
};
const AUCTION: Record<number, SubKind> = {
  36: "pool_deposit",
  40: "pool_claim",
  42: "pool_claim",
  41: "pool_withdraw",
};

function subKindOf(role: Role, method: number, d: { alph: bigint; abd: bigint }): SubKind {
  if (role === "loan_manager") return "liquidate";
  if (role === "stake") return STAKE[method] ?? "call";
  if (role === "auction") return AUCTION[method] ?? "call";
  // Method 20 is shared: the signer's ALPH going into the loan makes it a top-up.
  if (method === 20 && d.alph < 0n) return "add_collateral";
  if (method === 0) return d.abd < 0n && d.alph > 0n ? "redeem" : "call";
  return BORROWER[method] ?? "call";
}

/** The asset whose move an operation stands for. */
function mainAsset(role: Role, sub: SubKind): "alph" | "abd" | "abx" {
  if (role === "stake") return "abx";
  if (role === "auction" || sub === "repay" || sub === "redeem") return "abd";
  return "alph";
}

const abs = (v: bigint) => (v < 0n ? -v : v);

/** One `lending/*` draft per AlphBanX call of the tx's script; [] when there is none or the script does not parse. */
export function inferAlphBanXOps(s: TxScope): Draft[] {
  const { tx } = s;
  const script = tx.unsigned.scriptOpt?.toLowerCase();
  if (!tx.scriptExecutionOk || script === undefined) return [];
  // A constant contract id is in the bytecode verbatim: scripts naming no AlphBanX contract are not parsed.
  const roleIds = (Object.keys(ROLES) as DecoderKind[]).flatMap((k) =>
    s.decoders.addressesOf(k).flatMap((a) => contractIdOf(a) ?? []),
  );
  if (!roleIds.some((id) => script.includes(id))) return [];
  const instrs = scriptInstrs(script);
  if (!instrs) return [];
  const calls = scriptCalls(instrs).flatMap((c) => {
    const kind = s.decoders.kindOf(c.contract_address);
    const role = kind && ROLES[kind];
    return role ? [{ ...c, role }] : [];
  });
  if (calls.length === 0) return [];
  const idsOf = (kind: DecoderKind) =>
    new Set(s.decoders.addressesOf(kind).flatMap((a) => contractIdOf(a) ?? []));
  const tokens = { abd: idsOf("alphbanx-abd"), abx: idsOf("alphbanx-abx") };
  const approvals = scriptApprovals(instrs);
  const d = signerDeltas(s, approvals, tokens);
  const drafts = calls.map((c) => {
    const sub = subKindOf(c.role, c.method_index, d);
    const asset = mainAsset(c.role, sub);
    const tokenId = asset === "alph" ? ALPH_TOKEN_ID : ([...tokens[asset]][0] ?? ALPH_TOKEN_ID);
    const payload: Record<string, unknown> = {
      method_index: c.method_index,
      contract_role: c.role,
      inferred: true,
      alph_delta: d.alph.toString(),
      abd_delta: d.abd.toString(),
      abx_delta: d.abx.toString(),
      deltas_exact: approvals.exact,
    };
    if (sub === "liquidate") payload.borrower = c.addresses.find((a) => a !== s.sender) ?? "";
    return draft("lending", sub, "alphbanx_op", {
      dapp_id: dappOf(s, c.contract_address, DAPP_UNKNOWN),
      from: s.sender,
      to: c.contract_address,
      token_id: tokenId,
      amount: abs(d[asset]),
      contract_address: c.contract_address,
      payload,
    });
  });
  // The first call is the tx's operation: later ones never outrank it.
  const first = drafts[0]!.priority;
  for (const x of drafts.slice(1)) x.priority = Math.min(x.priority, first);
  return drafts;
}
