/**
 * Transaction and output construction: turns a {@link TxSpec} into a node-shaped transaction of the block being
 * built, checks that it conserves ALPH and tokens, and records it in the ledger and the tx index. Also the
 * transactions every chain needs whatever users do: genesis allocations, coinbases, contract deployments.
 */
import type { node } from "@alephium/web3";
import {
  addressFromContractId,
  Contract,
  CreateContractEventAddresses,
  DUST_AMOUNT,
  MINIMAL_CONTRACT_DEPOSIT,
  ONE_ALPH,
} from "@alephium/web3";
import { type Accounts, addTokens, type Ledger, sortedTokens } from "./ledger.ts";
import type { Rng } from "./random.ts";
import {
  type BlockCtx,
  type BlockStore,
  COINBASE_LOCK_MS,
  type ContractRec,
  type DevnetAddress,
  type DevnetContractKind,
  type EventSpec,
  type OutRec,
  type OutSpec,
  type TokenMeta,
  type TxSpec,
} from "./types.ts";

/**
 * One frozen empty array for every empty list the chain keeps (most outputs hold no token, most txs have no
 * contract input): a block keeps about twenty of them otherwise. Frozen, so a consumer that mutates one fails.
 */
const EMPTY: readonly never[] = Object.freeze([]);
export const shared = <T>(list: T[]): T[] => (list.length === 0 ? (EMPTY as never[]) : list);

export const USER_GAS_PRICE = 100_000_000_000n;
const COINBASE_GAS_PRICE = "1000000000";

export const u256 = (v: bigint | number): node.Val => ({ type: "U256", value: v.toString() });
export const byteVec = (hex: string): node.Val => ({ type: "ByteVec", value: hex });
export const addressVal = (a: string): node.Val => ({ type: "Address", value: a });

/** Options of {@link TxBuilder.deployContract}. */
export interface DeployOptions {
  parent?: ContractRec;
  iface: string;
  token?: TokenMeta;
  extraEvents?: EventSpec[];
  pair?: ContractRec["pair"];
  /** Tokens the deployer burns in the same tx (a Token Furnace burn that mints a burner NFT). */
  burn?: Map<string, bigint>;
}

export interface TxBuilder {
  /** Appends a transaction to the block being built and updates the ledger; returns its id and outputs. */
  commitTx(ctx: BlockCtx, spec: TxSpec): { txId: string; outputs: OutRec[] };
  /** Gas of a user tx: `base` plus a random part. */
  userGas(base?: number): number;
  /** Random script bytes (the devnet runs no VM). */
  script(): string;
  /** The contract's current output, the input of a tx that calls it. */
  contractOutputOf(c: ContractRec): OutRec;
  /** The output a tx that leaves the contract with its current assets creates. */
  contractSpec(c: ContractRec): OutSpec;
  /** A contract id of the given group, not derived from a parent. */
  ownContractId(group: number): string;
  /** Deploys a contract (and issues its token); undefined when the deployer cannot pay. */
  deployContract(
    ctx: BlockCtx,
    deployer: DevnetAddress,
    kind: DevnetContractKind,
    id: string,
    options: DeployOptions,
  ): ContractRec | undefined;
  /** The genesis allocation funding the users of an intra-group chain. */
  allocation(ctx: BlockCtx): void;
  /** The block's last tx: the reward of its miner and of the ghost uncles it references. */
  coinbase(ctx: BlockCtx, uncles: node.GhostUncleBlockEntry[]): void;
}

/** A contract record made in the block of `ctx`, not yet on chain, holding the minimal deposit. */
export function contractRecord(
  ctx: BlockCtx,
  id: string,
  kind: DevnetContractKind,
  code: { bytecode: string; codeHash: string },
): ContractRec {
  return {
    id,
    address: addressFromContractId(id),
    kind,
    homeChain: ctx.chainIndex,
    createdTxId: "",
    createdBlockHash: ctx.hash,
    createdTs: ctx.ts,
    createdHeight: ctx.height,
    outputKey: "",
    alph: MINIMAL_CONTRACT_DEPOSIT,
    tokens: new Map(),
    ...code,
    counter: 0,
  };
}

export function createTxBuilder(deps: {
  rng: Rng;
  networkId: number;
  accounts: Accounts;
  ledger: Ledger;
  store: BlockStore;
}): TxBuilder {
  const { rng, accounts, ledger, store } = deps;

  // Strings the chain keeps are built flat (join) or shared: a template literal makes a rope that keeps its
  // pieces for as long as the chain lives.
  const unlockScripts = new Map<string, string>();
  const unlockScriptOf = (owner: DevnetAddress): string => {
    let script = unlockScripts.get(owner.publicKey);
    if (script === undefined) {
      script = ["00", owner.publicKey].join("");
      unlockScripts.set(owner.publicKey, script);
    }
    return script;
  };

  /** Balance check: a generator bug must fail loudly, not produce an inconsistent chain. */
  const checkBalance = (spec: TxSpec, txId: string): void => {
    const gasFee = BigInt(spec.gasAmount) * spec.gasPrice;
    const outSpecs = spec.ok ? [...spec.fixed, ...spec.generated] : spec.fixed;
    const inAlph = [...spec.inputs, ...spec.contractInputs].reduce((s, o) => s + o.attoAlphAmount, 0n);
    const outAlph = outSpecs.reduce((s, o) => s + o.alph, 0n);
    if (inAlph !== outAlph + gasFee)
      throw new Error(`devnet: ALPH imbalance in ${txId}: ${inAlph} vs ${outAlph}`);
    const tin = new Map<string, bigint>();
    const tout = new Map<string, bigint>();
    for (const o of [...spec.inputs, ...spec.contractInputs]) addTokens(tin, o.tokens);
    for (const o of outSpecs) addTokens(tout, sortedTokens(o.tokens));
    for (const id of new Set([...tin.keys(), ...tout.keys()])) {
      if (id === spec.issuedToken) continue;
      if ((tin.get(id) ?? 0n) - (spec.burned?.get(id) ?? 0n) !== (tout.get(id) ?? 0n))
        throw new Error(`devnet: token imbalance ${id} in ${txId}`);
    }
  };

  const assetOut = (o: OutRec): node.FixedAssetOutput => ({
    hint: o.hint,
    key: o.key,
    attoAlphAmount: o.attoAlphAmount.toString(),
    address: o.address,
    tokens: shared(o.tokens.map((t) => ({ id: t.id, amount: t.amount.toString() }))),
    lockTime: o.lockTime,
    message: o.message,
  });
  const generatedOut = (o: OutRec): node.Output => {
    if (o.type === "AssetOutput") return { type: "AssetOutput", ...assetOut(o) };
    return {
      type: "ContractOutput",
      hint: o.hint,
      key: o.key,
      attoAlphAmount: o.attoAlphAmount.toString(),
      address: o.address,
      tokens: shared(o.tokens.map((t) => ({ id: t.id, amount: t.amount.toString() }))),
    };
  };

  const commitTx: TxBuilder["commitTx"] = (ctx, spec) => {
    if (spec.inputs.length === 0 && !spec.noInputsAllowed) throw new Error("devnet: user tx without inputs");
    const txId = rng.hex(32);
    if (!spec.noInputsAllowed) checkBalance(spec, txId);
    const made: OutRec[] = [];
    const toRecord = (s: OutSpec, fixed: boolean): OutRec => {
      const rec: OutRec = {
        key: rng.hex(32),
        hint: ledger.hintOf(s.address, s.type === "ContractOutput"),
        txId,
        blockHash: ctx.hash,
        type: s.type,
        fixedOutput: fixed,
        address: s.address,
        attoAlphAmount: s.alph,
        tokens: shared(sortedTokens(s.tokens)),
        lockTime: s.lockTime ?? 0,
        message: s.message ?? "",
        chainIndex: ctx.chainIndex,
        height: ctx.height,
      };
      const owner = accounts.userByAddress.get(s.address);
      if (owner) rec.owner = owner;
      made.push(rec);
      return rec;
    };
    const fixedRecs = spec.fixed.map((s) => toRecord(s, true));
    const generatedRecs = spec.ok ? spec.generated.map((s) => toRecord(s, false)) : [];
    const signers = [...new Set(spec.inputs.map((i) => i.owner!.publicKey))];
    const tx: node.Transaction = {
      unsigned: {
        txId,
        version: 0,
        networkId: deps.networkId,
        ...(spec.scriptOpt ? { scriptOpt: spec.scriptOpt } : {}),
        gasAmount: spec.gasAmount,
        gasPrice: spec.gasPrice.toString(),
        inputs: shared(
          spec.inputs.map((i) => ({
            outputRef: { hint: i.hint, key: i.key },
            unlockScript: unlockScriptOf(i.owner!),
          })),
        ),
        fixedOutputs: fixedRecs.map(assetOut),
      },
      scriptExecutionOk: spec.ok,
      contractInputs: shared(spec.ok ? spec.contractInputs.map((i) => ({ hint: i.hint, key: i.key })) : []),
      generatedOutputs: shared(generatedRecs.map(generatedOut)),
      inputSignatures: signers.map(() => rng.hex(64)),
      scriptSignatures: shared([]),
    };
    ledger.apply(ctx, txId, [...spec.inputs, ...(spec.ok ? spec.contractInputs : [])], made);
    if (spec.ok) {
      for (const e of spec.events) ctx.events.push({ txId, timestamp: ctx.ts, ...e });
    }
    store.txIndex.set(txId, { blockHash: ctx.hash, txIndex: ctx.txs.length });
    ctx.txs.push(tx);
    return { txId, outputs: made };
  };

  const userGas = (base = 20000): number => base + rng.int(0, 40) * 1000;
  const script = (): string => ["0101030001000", rng.hex(rng.int(24, 72))].join("");
  const contractSpec = (c: ContractRec): OutSpec => ({
    type: "ContractOutput",
    address: c.address,
    alph: c.alph,
    tokens: new Map(c.tokens),
  });

  const newContract = (
    ctx: BlockCtx,
    id: string,
    kind: DevnetContractKind,
    extra: Partial<ContractRec>,
  ): ContractRec => {
    const bytecode = [`0${rng.int(1, 9)}`, rng.hex(rng.int(40, 120))].join("");
    return { ...contractRecord(ctx, id, kind, { bytecode, codeHash: rng.hex(32) }), ...extra };
  };

  const createdEvent = (
    group: number,
    address: string,
    parent: string | undefined,
    iface: string,
  ): EventSpec => ({
    contractAddress: CreateContractEventAddresses[group]!,
    eventIndex: Contract.ContractCreatedEventIndex,
    fields: [addressVal(address), parent ? addressVal(parent) : byteVec(""), byteVec(iface)],
  });

  /** A tx without inputs (genesis allocation, coinbase). */
  const mint = (ctx: BlockCtx, fixed: OutSpec[]): void => {
    commitTx(ctx, {
      inputs: [],
      contractInputs: [],
      fixed,
      generated: [],
      gasAmount: 20000,
      gasPrice: BigInt(COINBASE_GAS_PRICE),
      ok: true,
      events: [],
      noInputsAllowed: true,
    });
  };

  return {
    commitTx,
    userGas,
    script,
    contractOutputOf: (c) => ledger.utxo(c.outputKey)!,
    contractSpec,
    ownContractId: (group) => rng.hex(31) + group.toString(16).padStart(2, "0"),
    deployContract(ctx, deployer, kind, id, options) {
      const gas = userGas(100000);
      const issued = options.token?.totalSupply ?? 0n;
      const alphNeed =
        BigInt(gas) * USER_GAS_PRICE + MINIMAL_CONTRACT_DEPOSIT + (issued > 0n ? DUST_AMOUNT : 0n);
      const g = ledger.gather(deployer, ctx.ts, alphNeed, options.burn);
      if (!g) return undefined;
      const c = newContract(ctx, id, kind, {
        ...(options.token ? { token: options.token } : {}),
        ...(options.pair ? { pair: options.pair } : {}),
      });
      const generated: OutSpec[] = [contractSpec(c)];
      if (issued > 0n)
        generated.push({
          type: "AssetOutput",
          address: deployer.address,
          alph: DUST_AMOUNT,
          tokens: new Map([[id, issued]]),
        });
      const { txId, outputs: made } = commitTx(ctx, {
        inputs: g.inputs,
        contractInputs: [],
        fixed: [g.change],
        generated,
        scriptOpt: script(),
        gasAmount: gas,
        gasPrice: USER_GAS_PRICE,
        ok: true,
        events: [
          createdEvent(ctx.from, c.address, options.parent?.address, options.iface),
          ...(options.extraEvents ?? []),
        ],
        ...(issued > 0n ? { issuedToken: id } : {}),
        ...(options.burn ? { burned: options.burn } : {}),
      });
      c.createdTxId = txId;
      c.outputKey = made.find((o) => o.type === "ContractOutput" && o.address === c.address)!.key;
      ledger.addContract(ctx, c);
      return c;
    },
    allocation(ctx) {
      const fixed: OutSpec[] = [];
      for (const u of accounts.usersByGroup[ctx.from]!)
        for (let i = 0; i < 4; i++)
          fixed.push({ type: "AssetOutput", address: u.address, alph: 5000n * ONE_ALPH, tokens: new Map() });
      // The feeder posts several times a minute: eight outputs keep one mature while the others' change matures.
      if (accounts.feeder.group === ctx.from)
        for (let i = 0; i < 8; i++)
          fixed.push({
            type: "AssetOutput",
            address: accounts.feeder.address,
            alph: 1000n * ONE_ALPH,
            tokens: new Map(),
          });
      mint(ctx, fixed);
    },
    coinbase(ctx, uncles) {
      const reward = rng.bigint(ONE_ALPH / 4n, ONE_ALPH / 2n);
      const message = [
        ctx.from.toString(16).padStart(2, "0"),
        ctx.to.toString(16).padStart(2, "0"),
        ctx.ts.toString(16).padStart(16, "0"),
      ].join("");
      const lockTime = ctx.ts + COINBASE_LOCK_MS;
      const output = (address: string, alph: bigint): OutSpec => ({
        type: "AssetOutput",
        address,
        alph,
        tokens: new Map(),
        lockTime,
        message,
      });
      mint(ctx, [
        output(accounts.miners[ctx.to]!.address, reward),
        ...uncles.map((u) => output(u.miner, (reward * 7n) / 8n)),
      ]);
    },
  };
}
