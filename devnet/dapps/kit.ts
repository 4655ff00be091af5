/**
 * What the devnet's dapps share: one way to build a user's contract call (inputs gathered, contract outputs
 * spent and remade with their new assets, contracts created or destroyed, generated outputs to users, events),
 * and real script bytecode (web3's codec) naming the called contract and method.
 */
import type { node } from "@alephium/web3";
import {
  addressToBytes,
  binToHex,
  Contract,
  CreateContractEventAddresses,
  codec,
  DestroyContractEventAddresses,
  DUST_AMOUNT,
  hexToBinUnsafe,
} from "@alephium/web3";
import type { Accounts, Ledger } from "../ledger.ts";
import type { Rng } from "../random.ts";
import { addressVal, byteVec, contractRecord, type TxBuilder, USER_GAS_PRICE } from "../tx-builder.ts";
import type { BlockCtx, ContractRec, DevnetAddress, EventSpec, OutSpec, TokenMeta } from "../types.ts";
import type { DappState } from "./defi-plan.ts";

/** What every dapp module gets. */
export interface DappDeps {
  rng: Rng;
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
}

/** One external call of a script: assets approved by the caller, arguments, the contract and the method. */
export interface ScriptCall {
  contractId: string;
  method: number;
  alph?: bigint;
  tokens?: [string, bigint][];
  /** Arguments pushed before the call, in order. */
  args?: ({ u256: bigint } | { bytes: string } | { address: string } | { bool: boolean })[];
}

const argInstr = (a: NonNullable<ScriptCall["args"]>[number]): codec.Instr => {
  if ("u256" in a) return codec.U256Const(a.u256);
  if ("bytes" in a) return codec.BytesConst(hexToBinUnsafe(a.bytes));
  if ("bool" in a) return a.bool ? codec.ConstTrue : codec.ConstFalse;
  return codec.AddressConst(codec.lockupScript.lockupScriptCodec.decode(addressToBytes(a.address)));
};

/**
 * A TxScript (hex) of one public method doing the calls in order, the way Ralph compiles `Contract(id).m{…}(…)`:
 * approvals (caller, amount, ApproveAlph / ApproveToken), the arguments, their count and the return count, the
 * contract id (BytesConst) and `CallExternal(method)`.
 */
export function scriptOf(calls: ScriptCall[]): string {
  const instrs: codec.Instr[] = [];
  let approves = false;
  for (const c of calls) {
    if (c.alph !== undefined && c.alph > 0n) {
      instrs.push(codec.CallerAddress, codec.U256Const(c.alph), codec.ApproveAlph);
      approves = true;
    }
    for (const [id, amount] of c.tokens ?? []) {
      instrs.push(
        codec.CallerAddress,
        codec.BytesConst(hexToBinUnsafe(id)),
        codec.U256Const(amount),
        codec.ApproveToken,
      );
      approves = true;
    }
    for (const a of c.args ?? []) instrs.push(argInstr(a));
    instrs.push(
      codec.U256Const(BigInt(c.args?.length ?? 0)),
      codec.U256Const0,
      codec.BytesConst(hexToBinUnsafe(c.contractId)),
      codec.CallExternal(c.method),
    );
  }
  const method: codec.Method = {
    isPublic: true,
    usePreapprovedAssets: approves,
    useContractAssets: false,
    usePayToContractOnly: false,
    argsLength: 0,
    localsLength: 0,
    returnLength: 0,
    instrs,
  };
  return binToHex(codec.script.scriptCodec.encode({ methods: [method] }));
}

/** A dapp contract record not yet on chain (created by {@link callTx}). */
export function newDappContract(
  ctx: BlockCtx,
  rng: Rng,
  id: string,
  state: DappState,
  extra: { token?: TokenMeta; pair?: ContractRec["pair"] } = {},
): ContractRec {
  const bytecode = [`0${rng.int(1, 9)}`, rng.hex(rng.int(40, 120))].join("");
  return { ...contractRecord(ctx, id, "dapp", { bytecode, codeHash: rng.hex(32) }), defi: state, ...extra };
}

export const dappState = (
  role: string,
  num: Record<string, bigint> = {},
  text: Record<string, string> = {},
): DappState => ({
  role,
  num,
  text,
});

/** A generated output paying a user ALPH and/or tokens (tokens carry at least the dust amount of ALPH). */
export interface Payout {
  address: string;
  alph?: bigint;
  tokens?: [string, bigint][];
}

/** Payouts sharing a newly issued supply among users (the first gets the rounding), each with dust ALPH. */
export function splitSupply(users: readonly DevnetAddress[], tokenId: string, supply: bigint): Payout[] {
  const share = supply / BigInt(users.length);
  return users.map((u, i) => ({
    address: u.address,
    alph: DUST_AMOUNT,
    tokens: [[tokenId, i === 0 ? supply - share * BigInt(users.length - 1) : share]],
  }));
}

/** A user's call of dapp contracts. */
export interface CallSpec {
  user: DevnetAddress;
  /** Gas base (a random part is added). */
  gas: number;
  /** ALPH the user puts into contracts (deposits of created contracts included). */
  alphIn?: bigint;
  /** Tokens the user puts into contracts. */
  tokensIn?: [string, bigint][];
  /** Existing contracts whose assets the call changes: spent as contract inputs, remade (unless destroyed). */
  contracts?: ContractRec[];
  /** Contracts whose state (not assets) the call changes: snapshotted for undo, no contract input. */
  touched?: ContractRec[];
  /** Contracts the call creates (each gets a ContractCreated event; `parent` is its creator). */
  created?: { contract: ContractRec; parent?: ContractRec }[];
  /** Contracts among `contracts` the call destroys (ContractDestroyed; their assets must have been paid out). */
  destroyed?: ContractRec[];
  /** Moves the contracts' assets and state; called after their snapshot. */
  apply?: () => void;
  /** Outputs to users (their dust is paid by the caller when they carry only tokens and no ALPH). */
  payouts?: () => Payout[];
  events?: () => EventSpec[];
  script: string;
  /** Token issued by this call (its supply appears from nothing). */
  issuedToken?: string;
}

/**
 * Commits a user's call of dapp contracts; false (and nothing changed) when the user cannot pay. The caller
 * checks beforehand that contracts can pay what `apply` takes out of them: the tx builder's balance check throws
 * on any imbalance.
 */
export function callTx(deps: DappDeps, ctx: BlockCtx, spec: CallSpec): boolean {
  const { ledger, builder } = deps;
  const gas = builder.userGas(spec.gas);
  // Payouts are known only after `apply`: the caller reserves dust for up to four token-only ones.
  const tokensIn = new Map<string, bigint>();
  for (const [id, a] of spec.tokensIn ?? []) tokensIn.set(id, (tokensIn.get(id) ?? 0n) + a);
  const contracts = spec.contracts ?? [];
  const contractInputs = contracts.map((c) => builder.contractOutputOf(c));
  const g0 = ledger.gather(
    spec.user,
    ctx.ts,
    BigInt(gas) * USER_GAS_PRICE + (spec.alphIn ?? 0n) + 4n * DUST_AMOUNT,
    tokensIn,
  );
  if (!g0) return false;
  for (const c of [...contracts, ...(spec.touched ?? [])]) ledger.touchContract(ctx, c);
  spec.apply?.();
  const payouts = spec.payouts?.() ?? [];
  let dust = 0n;
  const generated: OutSpec[] = payouts.map((p) => {
    const tokens = new Map(p.tokens ?? []);
    let alph = p.alph ?? 0n;
    if (alph === 0n) {
      alph = DUST_AMOUNT;
      dust += DUST_AMOUNT;
    }
    return { type: "AssetOutput", address: p.address, alph, tokens };
  });
  if (dust > 4n * DUST_AMOUNT) throw new Error("devnet: more than four token-only payouts in one dapp call");
  const destroyed = new Set((spec.destroyed ?? []).map((c) => c.id));
  for (const c of contracts) if (!destroyed.has(c.id)) generated.push(builder.contractSpec(c));
  for (const { contract } of spec.created ?? []) generated.push(builder.contractSpec(contract));
  const change: OutSpec = { ...g0.change, alph: g0.change.alph + 4n * DUST_AMOUNT - dust };
  const events: EventSpec[] = [
    ...(spec.created ?? []).map(({ contract, parent }) => ({
      contractAddress: CreateContractEventAddresses[ctx.from]!,
      eventIndex: Contract.ContractCreatedEventIndex,
      fields: [addressVal(contract.address), parent ? addressVal(parent.address) : byteVec(""), byteVec("")],
    })),
    ...(spec.destroyed ?? []).map((c) => ({
      contractAddress: DestroyContractEventAddresses[ctx.from]!,
      eventIndex: Contract.ContractDestroyedEventIndex,
      fields: [addressVal(c.address)],
    })),
    ...(spec.events?.() ?? []),
  ];
  const { txId, outputs } = builder.commitTx(ctx, {
    inputs: g0.inputs,
    contractInputs,
    fixed: [change],
    generated,
    scriptOpt: spec.script,
    gasAmount: gas,
    gasPrice: USER_GAS_PRICE,
    ok: true,
    events,
    ...(spec.issuedToken ? { issuedToken: spec.issuedToken } : {}),
  });
  const keyOf = (c: ContractRec): string =>
    outputs.find((o) => o.type === "ContractOutput" && o.address === c.address)!.key;
  for (const c of contracts) {
    if (destroyed.has(c.id)) ledger.removeContract(ctx, c);
    else c.outputKey = keyOf(c);
  }
  for (const { contract } of spec.created ?? []) {
    contract.createdTxId = txId;
    contract.outputKey = keyOf(contract);
    ledger.addContract(ctx, contract);
  }
  return true;
}

/** The first user of the group from a random one on for whom `ok` holds (balances at the block's time). */
export function pickUser(
  deps: DappDeps,
  ctx: BlockCtx,
  ok: (user: DevnetAddress, balance: Map<string, bigint>) => boolean,
): DevnetAddress | undefined {
  const users = deps.accounts.usersByGroup[ctx.from]!;
  const first = deps.rng.int(0, users.length - 1);
  for (let k = 0; k < users.length; k++) {
    const u = users[(first + k) % users.length]!;
    if (ok(u, deps.ledger.tokenBalance(u, ctx.ts))) return u;
  }
  return undefined;
}

/** Adds `amount` (may be negative) of a token to a contract's assets (ALPH when the id is ALPH's). */
export function moveAsset(c: ContractRec, id: string, amount: bigint): void {
  if (/^0{64}$/.test(id)) {
    c.alph += amount;
    return;
  }
  const next = (c.tokens.get(id) ?? 0n) + amount;
  if (next < 0n) throw new Error(`devnet: contract ${c.address} would hold a negative amount of ${id}`);
  if (next === 0n) c.tokens.delete(id);
  else c.tokens.set(id, next);
}

export const boolVal = (value: boolean): node.Val => ({ type: "Bool", value });
export const i256 = (v: bigint): node.Val => ({ type: "I256", value: v.toString() });
