/**
 * Deterministic simulated Alephium network — a TEST DOUBLE of a full node's block flow, not a real chain.
 *
 * Model (documented simplifications):
 * - 4 groups / 16 chains only (the web3 helpers hard-code 4 groups).
 * - Height 0 of every chain is a genesis block stamped 1231006505000 (like mainnet); genesis blocks of the
 *   intra-group chains (g→g) hold one allocation tx funding the users of group g. Heights ≥ 1 start at
 *   `startTimestamp` and every one of them ends with a coinbase.
 * - Asset outputs become spendable only once their chain has `maxReorgDepth` more blocks, and every contract is
 *   "homed" on the chain that created it (only that chain's blocks touch it). Together this makes a reorg of
 *   one chain (≤ maxReorgDepth) undoable without touching the other chains.
 * - Hashes, keys and signatures are random bytes from the seeded PRNG (no real PoW / blake2b / secp256k1).
 * - Ayin-like pairs keep reserves and emit Mint/Swap events but issue no LP token.
 */
import type { node } from "@alephium/web3";
import {
  addressFromContractId,
  addressFromPublicKey,
  addressToBytes,
  Contract,
  CreateContractEventAddresses,
  DUST_AMOUNT,
  groupOfAddress,
  MINIMAL_CONTRACT_DEPOSIT,
  ONE_ALPH,
  subContractId,
} from "@alephium/web3";
import { ALPH_TOKEN_ID, CHAINS, GROUPS, type RawBlock } from "../lib/chain/types.ts";
import { createRng, type Rng } from "./random.ts";

/** Timestamp of every genesis block (Bitcoin's genesis time, as on mainnet). */
export const GENESIS_TIMESTAMP = 1231006505000;
/** Coinbase outputs unlock this long after their block. */
export const COINBASE_LOCK_MS = 30_000_000;
/** Max span of a `blocks-with-events` query on the node. */
export const MAX_BLOCK_RANGE_MS = 30 * 60 * 1000;
const USER_GAS_PRICE = 100_000_000_000n;
const COINBASE_GAS_PRICE = "1000000000";
const MAX_INPUTS = 12;

/** Options of {@link createDevnetChain}; every field is optional. */
export interface DevnetOptions {
  /** PRNG seed (default 1). Same seed + same calls ⇒ byte-identical chain. */
  seed?: number;
  /** Number of groups; only 4 is supported (default 4 ⇒ 16 chains). */
  groups?: number;
  /** Timestamp (ms) of the first non-genesis block of chain 0 (default 1752573600000, the Danube fork). */
  startTimestamp?: number;
  /** Target block interval per chain (default 8000 ms); chains are offset by interval/16 so timestamps interleave. */
  blockIntervalMs?: number;
  /** Inclusive range of user transactions per block, coinbase excluded (default [0, 4]). */
  txPerBlock?: [number, number];
  /** Number of user (P2PKH) addresses, spread evenly over the groups (default 32). */
  users?: number;
  /** Fungible tokens issued early, on chains g→g (default 6). */
  tokens?: number;
  /** Constant-product pairs created early by the factory on chain 0→0 (default 4). */
  pools?: number;
  /** Generic contracts (arbitrary events) created early on chains g→g, g ≥ 1 (default 3). */
  genericContracts?: number;
  /** networkId written into transactions (default 4 = devnet). */
  networkId?: number;
  /** Probability that a block references a freshly made ghost uncle (default 0.05). */
  uncleRate?: number;
  /** Probability that a user tx is a failed script tx (default 0.04). */
  failedTxRate?: number;
  /** Deepest supported reorg; also the maturity (in blocks) of asset outputs (default 6). */
  maxReorgDepth?: number;
}

/** Options after defaults were applied. */
export type ResolvedDevnetOptions = Required<DevnetOptions>;

/** Defaults of {@link DevnetOptions}. */
export const DEVNET_DEFAULTS: ResolvedDevnetOptions = {
  seed: 1,
  groups: GROUPS,
  startTimestamp: 1752573600000,
  blockIntervalMs: 8000,
  txPerBlock: [0, 4],
  users: 32,
  tokens: 6,
  pools: 4,
  genericContracts: 3,
  networkId: 4,
  uncleRate: 0.05,
  failedTxRate: 0.04,
  maxReorgDepth: 6,
};

/** A user key pair stand-in: the public key and its P2PKH address. */
export interface DevnetAddress {
  address: string;
  publicKey: string;
  group: number;
}

/** A block as stored by the devnet, with its events and main-chain flag. */
export interface DevnetBlock {
  chainIndex: number;
  block: node.BlockEntry;
  events: node.ContractEventByBlockHash[];
  mainChain: boolean;
  /** True for ghost-uncle blocks that were never on the main chain. */
  uncle: boolean;
}

/** Where a transaction lives. */
export interface DevnetTxLocation {
  tx: node.Transaction;
  blockHash: string;
  txIndex: number;
  timestamp: number;
  chainIndex: number;
  mainChain: boolean;
  /** Last tx of a non-genesis block. */
  coinbase: boolean;
}

/** Every output ever created (main chain or not), used to enrich inputs like the explorer does. */
export interface DevnetOutput {
  key: string;
  hint: number;
  txId: string;
  blockHash: string;
  type: "AssetOutput" | "ContractOutput";
  fixedOutput: boolean;
  address: string;
  attoAlphAmount: bigint;
  tokens: { id: string; amount: bigint }[];
  lockTime: number;
  message: string;
}

/** A fungible token issued on the devnet. */
export interface DevnetToken {
  id: string;
  address: string;
  symbol: string;
  name: string;
  decimals: number;
  totalSupply: bigint;
  minter: string;
  mintTxId: string;
  mintBlockHash: string;
  mintTimestamp: number;
}

/** A constant-product pair (Ayin-like). token0 < token1 by id; ALPH (64 zeros) is always token0. */
export interface DevnetPool {
  id: string;
  address: string;
  factoryAddress: string;
  token0: string;
  token1: string;
  reserve0: bigint;
  reserve1: bigint;
  createTxId: string;
}

/** Kinds of contracts the generator knows. */
export type DevnetContractKind = "token" | "factory" | "pair" | "generic";

/** Result of a reorg. */
export interface ReorgResult {
  chainIndex: number;
  /** Old main-chain hashes, now mainChain=false (ascending height). */
  orphaned: string[];
  /** New main-chain hashes (ascending height); one more than orphaned. */
  added: string[];
}

/** Notified after each produced block and each reorg. */
export type DevnetListener = (
  change: { type: "block"; block: DevnetBlock } | ({ type: "reorg" } & ReorgResult),
) => void;

/** A simulated network. All accessors return live objects: do not mutate them. */
export interface DevnetChain {
  readonly options: ResolvedDevnetOptions;
  /** Produce the next `n` (default 1) main-chain blocks across chains, in timestamp order. */
  advance(n?: number): DevnetBlock[];
  /** Produce every block whose scheduled timestamp is ≤ ts. */
  produceUntil(ts: number): DevnetBlock[];
  /** Replace the last `depth` main-chain blocks of a chain with a new branch of depth+1 blocks. */
  reorg(chainIndex: number, depth: number): ReorgResult;
  /** Reorg a PRNG-chosen chain with a depth in [1, maxDepth] (default 2), if one is deep enough. */
  randomReorg(maxDepth?: number): ReorgResult | undefined;
  /** Main-chain blocks of a chain, index = height (genesis included). */
  mainChain(chainIndex: number): readonly DevnetBlock[];
  /** Current main-chain height of a chain. */
  height(chainIndex: number): number;
  /** Any known block (main chain, orphaned or uncle). */
  getBlock(hash: string): DevnetBlock | undefined;
  /** All block hashes at a height, main chain first. */
  hashesAt(chainIndex: number, height: number): string[];
  /** `RawBlock` view of a block (shared message type). */
  rawBlock(hash: string): RawBlock | undefined;
  /** Main-chain blocks with fromTs ≤ timestamp ≤ toTs, one ascending array per chain. */
  blocksInRange(fromTs: number, toTs: number): DevnetBlock[][];
  /** Transaction by id (main chain or not). */
  getTransaction(txId: string): DevnetTxLocation | undefined;
  /** Output by key (every output ever created, including those of orphaned blocks). */
  getOutput(key: string): DevnetOutput | undefined;
  /** Tx id of the main-chain tx that spent an output, if any. */
  spentBy(key: string): string | undefined;
  /** Main-chain events of a tx, in order. */
  eventsOfTx(txId: string): node.ContractEventByTxId[];
  /** Issued tokens (main chain only). */
  tokens(): DevnetToken[];
  /** Pools (main chain only), with current reserves. */
  pools(): DevnetPool[];
  /** Node-shaped state of a contract (tokens, pairs, factory, generic), or undefined. */
  contractState(address: string): node.ContractState | undefined;
  /** Kind and token metadata of a contract, for the multicall double. */
  contractInfo(
    address: string,
  ): { kind: DevnetContractKind; token?: DevnetToken; pool?: DevnetPool } | undefined;
  /** User addresses. */
  addresses(): readonly DevnetAddress[];
  /** Miner addresses, one per group. */
  miners(): readonly DevnetAddress[];
  /** Timestamp of the newest main-chain block across chains. */
  latestTimestamp(): number;
  /** Monotonic counter bumped on every change (cache key for derived views). */
  version(): number;
  /** Subscribe to new blocks and reorgs; returns an unsubscribe function. */
  subscribe(listener: DevnetListener): () => void;
}

interface OutRec extends DevnetOutput {
  chainIndex: number;
  height: number;
  owner?: DevnetAddress;
}

interface TokenMeta {
  symbol: string;
  name: string;
  decimals: number;
  totalSupply: bigint;
  minter: string;
}

interface ContractRec {
  id: string;
  address: string;
  kind: DevnetContractKind;
  homeChain: number;
  createdTxId: string;
  createdBlockHash: string;
  createdTs: number;
  outputKey: string;
  alph: bigint;
  tokens: Map<string, bigint>;
  bytecode: string;
  codeHash: string;
  counter: number;
  token?: TokenMeta;
  pair?: {
    token0: string;
    token1: string;
    reserve0: bigint;
    reserve1: bigint;
    liquidity: bigint;
    factory: string;
  };
}

interface Undo {
  spent: OutRec[];
  created: OutRec[];
  contracts: Map<string, ContractRec | null>;
}

interface BlockRec extends DevnetBlock {
  undo?: Undo;
}

interface OutSpec {
  type: "AssetOutput" | "ContractOutput";
  address: string;
  alph: bigint;
  tokens: Map<string, bigint>;
  lockTime?: number;
  message?: string;
}

interface EventSpec {
  contractAddress: string;
  eventIndex: number;
  fields: node.Val[];
}

interface TxSpec {
  inputs: OutRec[];
  contractInputs: OutRec[];
  fixed: OutSpec[];
  generated: OutSpec[];
  scriptOpt?: string;
  gasAmount: number;
  gasPrice: bigint;
  ok: boolean;
  events: EventSpec[];
  /** Token issued by this tx (exempt from the conservation check). */
  issuedToken?: string;
  noInputsAllowed?: boolean;
}

interface BlockCtx {
  chainIndex: number;
  from: number;
  to: number;
  height: number;
  ts: number;
  hash: string;
  undo: Undo;
  txs: node.Transaction[];
  events: node.ContractEventByBlockHash[];
}

const u256 = (v: bigint | number): node.Val => ({ type: "U256", value: v.toString() });
const byteVec = (hex: string): node.Val => ({ type: "ByteVec", value: hex });
const addressVal = (a: string): node.Val => ({ type: "Address", value: a });
const utf8Hex = (s: string): string => Buffer.from(s, "utf8").toString("hex");

/** djb2 as used by Alephium script hints (web3 keeps its copy private). */
function djb2(bytes: Uint8Array): number {
  let hash = 5381;
  for (const b of bytes) hash = ((hash << 5) + hash + (b & 0xff)) | 0;
  return hash;
}

function addTokens(into: Map<string, bigint>, tokens: Iterable<{ id: string; amount: bigint }>): void {
  for (const t of tokens) into.set(t.id, (into.get(t.id) ?? 0n) + t.amount);
}

function bigintSqrt(v: bigint): bigint {
  if (v < 2n) return v;
  // Newton iteration from a power of two above the root converges monotonically downwards.
  let x = 1n << BigInt((v.toString(2).length >> 1) + 1);
  for (;;) {
    const y = (x + v / x) >> 1n;
    if (y >= x) break;
    x = y;
  }
  return x;
}

/** Amount out of a constant-product swap with the 0.3% fee (Uniswap V2 / Ayin formula). */
export function swapAmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  const inWithFee = amountIn * 997n;
  return (inWithFee * reserveOut) / (reserveIn * 1000n + inWithFee);
}

const TOKEN_NAMES = [
  "Aurora",
  "Basalt",
  "Cobalt",
  "Dune",
  "Ember",
  "Fjord",
  "Garnet",
  "Harbor",
  "Indigo",
  "Jade",
];

/** Builds a deterministic simulated Alephium network (test double). */
export function createDevnetChain(options: DevnetOptions = {}): DevnetChain {
  const opts: ResolvedDevnetOptions = { ...DEVNET_DEFAULTS, ...options };
  if (opts.groups !== GROUPS) throw new Error(`devnet supports ${GROUPS} groups only (got ${opts.groups})`);
  if (opts.txPerBlock[0] > opts.txPerBlock[1] || opts.txPerBlock[0] < 0)
    throw new Error("invalid txPerBlock");
  const rng: Rng = createRng(opts.seed);
  const K = opts.maxReorgDepth;

  const blocks = new Map<string, BlockRec>();
  const heights: string[][][] = Array.from({ length: CHAINS }, () => []);
  const main: BlockRec[][] = Array.from({ length: CHAINS }, () => []);
  const nextTs: number[] = [];
  const txIndex = new Map<string, { blockHash: string; txIndex: number }>();
  const outputs = new Map<string, OutRec>();
  const utxos = new Map<string, OutRec>();
  const utxosByOwner = new Map<string, Set<string>>();
  const spent = new Map<string, string>();
  const contracts = new Map<string, ContractRec>();
  const listeners = new Set<DevnetListener>();
  let changeCounter = 0;

  const makeKeyPair = (): DevnetAddress => {
    const publicKey = (rng.chance(0.5) ? "02" : "03") + rng.hex(32);
    const address = addressFromPublicKey(publicKey);
    return { address, publicKey, group: groupOfAddress(address) };
  };
  const users: DevnetAddress[] = [];
  const usersByGroup: DevnetAddress[][] = Array.from({ length: GROUPS }, () => []);
  const perGroup = Math.max(1, Math.ceil(opts.users / GROUPS));
  while (users.length < perGroup * GROUPS) {
    const kp = makeKeyPair();
    const bucket = usersByGroup[kp.group]!;
    if (bucket.length < perGroup) {
      bucket.push(kp);
      users.push(kp);
    }
  }
  const userByAddress = new Map(users.map((u) => [u.address, u]));
  const minerList: DevnetAddress[] = [];
  while (minerList.length < GROUPS) {
    const kp = makeKeyPair();
    if (kp.group === minerList.length) minerList.push(kp);
  }

  const hintCache = new Map<string, number>();
  const hintOf = (address: string, contract: boolean): number => {
    let h = hintCache.get(address);
    if (h === undefined) {
      h = djb2(addressToBytes(address).slice(1));
      hintCache.set(address, h);
    }
    return contract ? h & ~1 : h | 1;
  };

  const blockHash = (chainIndex: number): string => {
    const tail = ((rng.int(0, 0xfff) << 4) | chainIndex).toString(16).padStart(4, "0");
    return `000000${rng.hex(27)}${tail}`;
  };

  const emit = (change: Parameters<DevnetListener>[0]): void => {
    changeCounter += 1;
    for (const l of listeners) l(change);
  };

  // ---- UTXO helpers ---------------------------------------------------------------------------------

  const isMature = (o: OutRec, ts: number): boolean =>
    o.lockTime <= ts && (o.height === 0 || main[o.chainIndex]!.length - 1 >= o.height + K);

  const spendable = (owner: DevnetAddress, ts: number): OutRec[] => {
    const keys = utxosByOwner.get(owner.address);
    if (!keys) return [];
    const out: OutRec[] = [];
    for (const k of keys) {
      const o = utxos.get(k);
      if (o && isMature(o, ts)) out.push(o);
    }
    return out;
  };

  const tokenBalance = (owner: DevnetAddress, ts: number): Map<string, bigint> => {
    const m = new Map<string, bigint>();
    for (const o of spendable(owner, ts)) addTokens(m, o.tokens);
    return m;
  };

  /** Picks inputs covering `alph` (+ dust for the change) and the given tokens; undefined when impossible. */
  const gather = (
    owner: DevnetAddress,
    ts: number,
    alph: bigint,
    tokens: Map<string, bigint> = new Map(),
  ): { inputs: OutRec[]; change: OutSpec } | undefined => {
    const candidates = spendable(owner, ts);
    const chosen: OutRec[] = [];
    const used = new Set<string>();
    for (const [id, need] of tokens) {
      let have = 0n;
      for (const o of chosen) for (const t of o.tokens) if (t.id === id) have += t.amount;
      const withToken = candidates
        .filter((o) => !used.has(o.key) && o.tokens.some((t) => t.id === id))
        .sort((a, b) => {
          const ta = a.tokens.find((t) => t.id === id)!.amount;
          const tb = b.tokens.find((t) => t.id === id)!.amount;
          return ta === tb ? a.key.localeCompare(b.key) : tb > ta ? 1 : -1;
        });
      for (const o of withToken) {
        if (have >= need) break;
        chosen.push(o);
        used.add(o.key);
        have += o.tokens.find((t) => t.id === id)!.amount;
      }
      if (have < need) return undefined;
    }
    let total = chosen.reduce((s, o) => s + o.attoAlphAmount, 0n);
    const rest = candidates
      .filter((o) => !used.has(o.key))
      .sort((a, b) =>
        a.attoAlphAmount === b.attoAlphAmount
          ? a.key.localeCompare(b.key)
          : b.attoAlphAmount > a.attoAlphAmount
            ? 1
            : -1,
      );
    for (const o of rest) {
      if (total >= alph + DUST_AMOUNT) break;
      chosen.push(o);
      total += o.attoAlphAmount;
    }
    if (total < alph + DUST_AMOUNT || chosen.length > MAX_INPUTS || chosen.length === 0) return undefined;
    const changeTokens = new Map<string, bigint>();
    for (const o of chosen) addTokens(changeTokens, o.tokens);
    for (const [id, need] of tokens) changeTokens.set(id, changeTokens.get(id)! - need);
    for (const [id, amount] of changeTokens) if (amount === 0n) changeTokens.delete(id);
    return {
      inputs: chosen,
      change: { type: "AssetOutput", address: owner.address, alph: total - alph, tokens: changeTokens },
    };
  };

  const touchContract = (ctx: BlockCtx, c: ContractRec): void => {
    if (ctx.undo.contracts.has(c.id)) return;
    ctx.undo.contracts.set(c.id, {
      ...c,
      tokens: new Map(c.tokens),
      ...(c.pair ? { pair: { ...c.pair } } : {}),
    });
  };

  const sortedTokens = (m: Map<string, bigint>): { id: string; amount: bigint }[] =>
    [...m]
      .filter(([, a]) => a > 0n)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, amount]) => ({ id, amount }));

  /** Appends a transaction to the block being built and updates UTXOs; returns its id and outputs. */
  const commitTx = (ctx: BlockCtx, spec: TxSpec): { txId: string; outputs: OutRec[] } => {
    if (spec.inputs.length === 0 && !spec.noInputsAllowed) throw new Error("devnet: user tx without inputs");
    const txId = rng.hex(32);
    const gasFee = BigInt(spec.gasAmount) * spec.gasPrice;
    // Balance check: a generator bug must fail loudly, not produce an inconsistent chain.
    if (!spec.noInputsAllowed) {
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
        if ((tin.get(id) ?? 0n) !== (tout.get(id) ?? 0n))
          throw new Error(`devnet: token imbalance ${id} in ${txId}`);
      }
    }
    const made: OutRec[] = [];
    const toRecord = (s: OutSpec, fixed: boolean): OutRec => {
      const contract = s.type === "ContractOutput";
      const rec: OutRec = {
        key: rng.hex(32),
        hint: hintOf(s.address, contract),
        txId,
        blockHash: ctx.hash,
        type: s.type,
        fixedOutput: fixed,
        address: s.address,
        attoAlphAmount: s.alph,
        tokens: sortedTokens(s.tokens),
        lockTime: s.lockTime ?? 0,
        message: s.message ?? "",
        chainIndex: ctx.chainIndex,
        height: ctx.height,
      };
      const owner = userByAddress.get(s.address);
      if (owner) rec.owner = owner;
      made.push(rec);
      return rec;
    };
    const fixedRecs = spec.fixed.map((s) => toRecord(s, true));
    const generatedRecs = spec.ok ? spec.generated.map((s) => toRecord(s, false)) : [];
    const assetOut = (o: OutRec): node.FixedAssetOutput => ({
      hint: o.hint,
      key: o.key,
      attoAlphAmount: o.attoAlphAmount.toString(),
      address: o.address,
      tokens: o.tokens.map((t) => ({ id: t.id, amount: t.amount.toString() })),
      lockTime: o.lockTime,
      message: o.message,
    });
    const signers = [...new Set(spec.inputs.map((i) => i.owner!.publicKey))];
    const tx: node.Transaction = {
      unsigned: {
        txId,
        version: 0,
        networkId: opts.networkId,
        ...(spec.scriptOpt ? { scriptOpt: spec.scriptOpt } : {}),
        gasAmount: spec.gasAmount,
        gasPrice: spec.gasPrice.toString(),
        inputs: spec.inputs.map((i) => ({
          outputRef: { hint: i.hint, key: i.key },
          unlockScript: `00${i.owner!.publicKey}`,
        })),
        fixedOutputs: fixedRecs.map(assetOut),
      },
      scriptExecutionOk: spec.ok,
      contractInputs: spec.ok ? spec.contractInputs.map((i) => ({ hint: i.hint, key: i.key })) : [],
      generatedOutputs: generatedRecs.map((o): node.Output => {
        if (o.type === "AssetOutput") return { type: "AssetOutput", ...assetOut(o) };
        return {
          type: "ContractOutput",
          hint: o.hint,
          key: o.key,
          attoAlphAmount: o.attoAlphAmount.toString(),
          address: o.address,
          tokens: o.tokens.map((t) => ({ id: t.id, amount: t.amount.toString() })),
        };
      }),
      inputSignatures: signers.map(() => rng.hex(64)),
      scriptSignatures: [],
    };
    for (const i of [...spec.inputs, ...(spec.ok ? spec.contractInputs : [])]) {
      utxos.delete(i.key);
      utxosByOwner.get(i.address)?.delete(i.key);
      spent.set(i.key, txId);
      ctx.undo.spent.push(i);
    }
    for (const o of made) {
      outputs.set(o.key, o);
      utxos.set(o.key, o);
      let set = utxosByOwner.get(o.address);
      if (!set) {
        set = new Set();
        utxosByOwner.set(o.address, set);
      }
      set.add(o.key);
      ctx.undo.created.push(o);
    }
    if (spec.ok) {
      for (const e of spec.events) ctx.events.push({ txId, timestamp: ctx.ts, ...e });
    }
    txIndex.set(txId, { blockHash: ctx.hash, txIndex: ctx.txs.length });
    ctx.txs.push(tx);
    return { txId, outputs: made };
  };

  const userGas = (base = 20000): number => base + rng.int(0, 40) * 1000;
  const script = (): string => `0101030001000${rng.hex(rng.int(24, 72))}`;
  const contractOutputOf = (c: ContractRec): OutRec => utxos.get(c.outputKey)!;
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
    extra: Partial<ContractRec> = {},
  ): ContractRec => {
    const c: ContractRec = {
      id,
      address: addressFromContractId(id),
      kind,
      homeChain: ctx.chainIndex,
      createdTxId: "",
      createdBlockHash: ctx.hash,
      createdTs: ctx.ts,
      outputKey: "",
      alph: MINIMAL_CONTRACT_DEPOSIT,
      tokens: new Map(),
      bytecode: `0${rng.int(1, 9)}${rng.hex(rng.int(40, 120))}`,
      codeHash: rng.hex(32),
      counter: 0,
      ...extra,
    };
    return c;
  };

  /** Registers a contract created by `txId` whose ContractOutput is in `made`. */
  const registerContract = (ctx: BlockCtx, c: ContractRec, txId: string, made: OutRec[]): void => {
    c.createdTxId = txId;
    c.outputKey = made.find((o) => o.type === "ContractOutput" && o.address === c.address)!.key;
    contracts.set(c.id, c);
    ctx.undo.contracts.set(c.id, null);
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

  // ---- tx kinds -------------------------------------------------------------------------------------

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
    const gas = userGas();
    const g = gather(sender, ctx.ts, total + BigInt(gas) * USER_GAS_PRICE);
    if (!g) return false;
    commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [],
      fixed: [...fixed, g.change],
      generated: [],
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events: [],
    });
    return true;
  };

  const tokenTransfer = (ctx: BlockCtx): boolean => {
    const holders = usersByGroup[ctx.from]!.map((u) => ({ u, bal: tokenBalance(u, ctx.ts) })).filter(
      (h) => h.bal.size > 0,
    );
    if (holders.length === 0) return false;
    const { u: sender, bal } = rng.pick(holders);
    const [id, have] = rng.pick([...bal].sort(([a], [b]) => a.localeCompare(b)));
    const amount = (have * BigInt(rng.int(1, 40))) / 100n;
    if (amount === 0n) return false;
    const to = rng.pick(usersByGroup[ctx.to]!);
    const gas = userGas();
    const g = gather(sender, ctx.ts, DUST_AMOUNT + BigInt(gas) * USER_GAS_PRICE, new Map([[id, amount]]));
    if (!g) return false;
    commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [],
      fixed: [
        { type: "AssetOutput", address: to.address, alph: DUST_AMOUNT, tokens: new Map([[id, amount]]) },
        g.change,
      ],
      generated: [],
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events: [],
    });
    return true;
  };

  const failedScript = (ctx: BlockCtx): boolean => {
    const sender = rng.pick(usersByGroup[ctx.from]!);
    const gas = userGas(30000);
    const g = gather(sender, ctx.ts, BigInt(gas) * USER_GAS_PRICE);
    if (!g) return false;
    commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [],
      fixed: [g.change],
      generated: [],
      scriptOpt: script(),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: false,
      events: [],
    });
    return true;
  };

  const contractsOn = (chainIndex: number, kind: DevnetContractKind): ContractRec[] =>
    [...contracts.values()].filter((c) => c.homeChain === chainIndex && c.kind === kind);

  const genericCall = (ctx: BlockCtx): boolean => {
    const targets = contractsOn(ctx.chainIndex, "generic");
    if (targets.length === 0) return false;
    const target = rng.pick(targets);
    const caller = rng.pick(usersByGroup[ctx.from]!);
    const gas = userGas(40000);
    const g = gather(caller, ctx.ts, BigInt(gas) * USER_GAS_PRICE);
    if (!g) return false;
    touchContract(ctx, target);
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
    commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [],
      fixed: [g.change],
      generated: [],
      scriptOpt: script(),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events,
    });
    return true;
  };

  const swap = (ctx: BlockCtx): boolean => {
    const pairs = contractsOn(ctx.chainIndex, "pair").filter((p) => p.pair!.reserve0 > 0n);
    if (pairs.length === 0) return false;
    const pool = rng.pick(pairs);
    const p = pool.pair!;
    const user = rng.pick(usersByGroup[ctx.from]!);
    const zeroForOne = rng.chance(0.5);
    const tokenIn = zeroForOne ? p.token0 : p.token1;
    const tokenOut = zeroForOne ? p.token1 : p.token0;
    let amountIn: bigint;
    if (tokenIn === ALPH_TOKEN_ID) amountIn = rng.bigint(ONE_ALPH / 2n, 40n * ONE_ALPH);
    else {
      const have = tokenBalance(user, ctx.ts).get(tokenIn) ?? 0n;
      amountIn = (have * BigInt(rng.int(1, 30))) / 100n;
    }
    if (amountIn === 0n) return false;
    const [rIn, rOut] = zeroForOne ? [p.reserve0, p.reserve1] : [p.reserve1, p.reserve0];
    const amountOut = swapAmountOut(amountIn, rIn, rOut);
    if (amountOut === 0n || amountOut >= rOut) return false;
    const gas = userGas(60000);
    const alphNeed =
      BigInt(gas) * USER_GAS_PRICE +
      (tokenIn === ALPH_TOKEN_ID ? amountIn : 0n) +
      (tokenOut === ALPH_TOKEN_ID ? 0n : DUST_AMOUNT);
    const g = gather(
      user,
      ctx.ts,
      alphNeed,
      tokenIn === ALPH_TOKEN_ID ? new Map() : new Map([[tokenIn, amountIn]]),
    );
    if (!g) return false;
    const contractInput = contractOutputOf(pool);
    touchContract(ctx, pool);
    applyPairDelta(pool, zeroForOne ? amountIn : -amountOut, zeroForOne ? -amountOut : amountIn);
    const userOut: OutSpec =
      tokenOut === ALPH_TOKEN_ID
        ? { type: "AssetOutput", address: user.address, alph: amountOut, tokens: new Map() }
        : {
            type: "AssetOutput",
            address: user.address,
            alph: DUST_AMOUNT,
            tokens: new Map([[tokenOut, amountOut]]),
          };
    const { outputs: made } = commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [contractInput],
      fixed: [g.change],
      generated: [userOut, contractSpec(pool)],
      scriptOpt: script(),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events: [
        {
          contractAddress: pool.address,
          eventIndex: 2,
          fields: [
            addressVal(user.address),
            u256(zeroForOne ? amountIn : 0n),
            u256(zeroForOne ? 0n : amountIn),
            u256(zeroForOne ? 0n : amountOut),
            u256(zeroForOne ? amountOut : 0n),
            addressVal(user.address),
          ],
        },
      ],
    });
    pool.outputKey = made.find((o) => o.type === "ContractOutput")!.key;
    return true;
  };

  /** Moves pair reserves and mirrors them into the pair's contract assets. */
  const applyPairDelta = (pool: ContractRec, d0: bigint, d1: bigint): void => {
    const p = pool.pair!;
    p.reserve0 += d0;
    p.reserve1 += d1;
    pool.alph = MINIMAL_CONTRACT_DEPOSIT + (p.token0 === ALPH_TOKEN_ID ? p.reserve0 : 0n);
    pool.tokens = new Map();
    if (p.token0 !== ALPH_TOKEN_ID) pool.tokens.set(p.token0, p.reserve0);
    pool.tokens.set(p.token1, p.reserve1);
  };

  const addLiquidity = (ctx: BlockCtx, pool: ContractRec, user: DevnetAddress): boolean => {
    const p = pool.pair!;
    const bal = tokenBalance(user, ctx.ts);
    let a0: bigint;
    let a1: bigint;
    const have1 = bal.get(p.token1) ?? 0n;
    if (p.reserve0 === 0n) {
      a1 = (have1 * BigInt(rng.int(20, 40))) / 100n;
      a0 =
        p.token0 === ALPH_TOKEN_ID
          ? rng.bigint(200n * ONE_ALPH, 2000n * ONE_ALPH)
          : ((bal.get(p.token0) ?? 0n) * BigInt(rng.int(20, 40))) / 100n;
    } else {
      a1 = (have1 * BigInt(rng.int(5, 15))) / 100n;
      a0 = (a1 * p.reserve0) / p.reserve1;
    }
    if (a0 === 0n || a1 === 0n) return false;
    const gas = userGas(70000);
    const tokens = new Map([[p.token1, a1]]);
    if (p.token0 !== ALPH_TOKEN_ID) tokens.set(p.token0, a0);
    const alphNeed = BigInt(gas) * USER_GAS_PRICE + (p.token0 === ALPH_TOKEN_ID ? a0 : 0n);
    const g = gather(user, ctx.ts, alphNeed, tokens);
    if (!g) return false;
    let liquidity = bigintSqrt(a0 * a1);
    if (p.liquidity > 0n) {
      const l0 = (a0 * p.liquidity) / p.reserve0;
      const l1 = (a1 * p.liquidity) / p.reserve1;
      liquidity = l0;
      if (l1 < l0) liquidity = l1;
    }
    const contractInput = contractOutputOf(pool);
    touchContract(ctx, pool);
    applyPairDelta(pool, a0, a1);
    p.liquidity += liquidity;
    const { outputs: made } = commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [contractInput],
      fixed: [g.change],
      generated: [contractSpec(pool)],
      scriptOpt: script(),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events: [
        {
          contractAddress: pool.address,
          eventIndex: 0,
          fields: [addressVal(user.address), u256(a0), u256(a1), u256(liquidity)],
        },
      ],
    });
    pool.outputKey = made.find((o) => o.type === "ContractOutput")!.key;
    return true;
  };

  // ---- setup (tokens, factory, pairs, generic contracts) ----------------------------------------------

  const tokenCount = (): number => [...contracts.values()].filter((c) => c.kind === "token").length;

  const deployContract = (
    ctx: BlockCtx,
    deployer: DevnetAddress,
    kind: DevnetContractKind,
    id: string,
    opts2: {
      parent?: ContractRec;
      iface: string;
      token?: TokenMeta;
      extraEvents?: EventSpec[];
      pair?: ContractRec["pair"];
    },
  ): ContractRec | undefined => {
    const gas = userGas(100000);
    const issued = opts2.token?.totalSupply ?? 0n;
    const alphNeed =
      BigInt(gas) * USER_GAS_PRICE + MINIMAL_CONTRACT_DEPOSIT + (issued > 0n ? DUST_AMOUNT : 0n);
    const g = gather(deployer, ctx.ts, alphNeed);
    if (!g) return undefined;
    const c = newContract(ctx, id, kind, {
      ...(opts2.token ? { token: opts2.token } : {}),
      ...(opts2.pair ? { pair: opts2.pair } : {}),
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
        createdEvent(ctx.from, c.address, opts2.parent?.address, opts2.iface),
        ...(opts2.extraEvents ?? []),
      ],
      ...(issued > 0n ? { issuedToken: id } : {}),
    });
    registerContract(ctx, c, txId, made);
    return c;
  };

  const ownContractId = (group: number): string => rng.hex(31) + group.toString(16).padStart(2, "0");

  const setupStep = (ctx: BlockCtx): void => {
    if (ctx.from !== ctx.to) return;
    const g = ctx.from;
    // Tokens: token i is issued on chain (i % 4)→(i % 4) by a user of that group.
    const n = tokenCount();
    if (n < opts.tokens && n % GROUPS === g) {
      const decimals = rng.pick([18, 18, 6, 9, 8, 0]);
      const word = TOKEN_NAMES[n % TOKEN_NAMES.length]!;
      const symbol = `${word.slice(0, 3).toUpperCase()}${n}`;
      const minter = rng.pick(usersByGroup[g]!);
      const meta: TokenMeta = {
        symbol,
        name: `Devnet ${word} ${n}`,
        decimals,
        totalSupply: rng.bigint(1_000_000n, 1_000_000_000n) * 10n ** BigInt(decimals),
        minter: minter.address,
      };
      deployContract(ctx, minter, "token", ownContractId(g), { iface: "0001", token: meta });
    }
    if (g !== 0 && contractsOn(ctx.chainIndex, "generic").length < Math.ceil(opts.genericContracts / 3)) {
      const generics = [...contracts.values()].filter((c) => c.kind === "generic").length;
      if (generics < opts.genericContracts)
        deployContract(ctx, rng.pick(usersByGroup[g]!), "generic", ownContractId(g), { iface: "" });
    }
    if (ctx.chainIndex !== 0 || opts.pools === 0) return;
    const factory = contractsOn(0, "factory")[0];
    if (!factory) {
      deployContract(ctx, rng.pick(usersByGroup[0]!), "factory", ownContractId(0), { iface: "" });
      return;
    }
    const pairs = contractsOn(0, "pair");
    // Seed liquidity of the newest empty pair, by any group-0 user holding the needed tokens.
    const empty = pairs.find((p) => p.pair!.reserve0 === 0n);
    if (empty) {
      const p = empty.pair!;
      const lp = usersByGroup[0]!.find((u) => {
        const bal = tokenBalance(u, ctx.ts);
        return (
          (bal.get(p.token1) ?? 0n) > 0n && (p.token0 === ALPH_TOKEN_ID || (bal.get(p.token0) ?? 0n) > 0n)
        );
      });
      if (lp) addLiquidity(ctx, empty, lp);
      return;
    }
    if (pairs.length >= opts.pools) return;
    const existing = new Set(pairs.map((p) => `${p.pair!.token0}${p.pair!.token1}`));
    const held = new Map<string, bigint>();
    for (const u of usersByGroup[0]!) addTokens(held, sortedTokens(tokenBalance(u, ctx.ts)));
    const tokenIds = [...contracts.values()]
      .filter((c) => c.kind === "token" && held.has(c.id))
      .map((c) => c.id);
    const candidates: [string, string][] = [];
    for (const t of tokenIds) candidates.push([ALPH_TOKEN_ID, t]);
    for (let i = 0; i < tokenIds.length; i++)
      for (let j = i + 1; j < tokenIds.length; j++) {
        const a = tokenIds[i]!;
        const b = tokenIds[j]!;
        candidates.push(a < b ? [a, b] : [b, a]);
      }
    const next = candidates.find(([a, b]) => !existing.has(a + b));
    if (!next) return;
    const [token0, token1] = next;
    const pairId = subContractId(factory.id, token0 + token1, 0);
    touchContract(ctx, factory);
    factory.counter += 1;
    const pair = deployContract(ctx, rng.pick(usersByGroup[0]!), "pair", pairId, {
      parent: factory,
      iface: "",
      pair: { token0, token1, reserve0: 0n, reserve1: 0n, liquidity: 0n, factory: factory.address },
      extraEvents: [
        {
          contractAddress: factory.address,
          eventIndex: 0,
          fields: [byteVec(token0), byteVec(token1), byteVec(pairId), u256(factory.counter)],
        },
      ],
    });
    if (!pair) factory.counter -= 1;
  };

  // ---- blocks ---------------------------------------------------------------------------------------

  const coinbaseTx = (ctx: BlockCtx, uncles: node.GhostUncleBlockEntry[]): void => {
    const reward = rng.bigint(ONE_ALPH / 4n, ONE_ALPH / 2n);
    const message = [
      ctx.from.toString(16).padStart(2, "0"),
      ctx.to.toString(16).padStart(2, "0"),
      ctx.ts.toString(16).padStart(16, "0"),
    ].join("");
    const lockTime = ctx.ts + COINBASE_LOCK_MS;
    const fixed: OutSpec[] = [
      {
        type: "AssetOutput",
        address: minerList[ctx.to]!.address,
        alph: reward,
        tokens: new Map(),
        lockTime,
        message,
      },
      ...uncles.map(
        (u): OutSpec => ({
          type: "AssetOutput",
          address: u.miner,
          alph: (reward * 7n) / 8n,
          tokens: new Map(),
          lockTime,
          message,
        }),
      ),
    ];
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

  const depsFor = (from: number, to: number, parent: string): string[] => {
    const deps: string[] = [];
    for (let g = 0; g < GROUPS; g++) {
      if (g === from) continue;
      const c = g * GROUPS + g;
      deps.push(main[c]!.at(-1)!.block.hash);
    }
    for (let t = 0; t < GROUPS; t++)
      deps.push(t === to ? parent : main[from * GROUPS + t]!.at(-1)!.block.hash);
    return deps;
  };

  const finishBlock = (
    ctx: BlockCtx,
    parent: string | undefined,
    uncles: node.GhostUncleBlockEntry[],
    mainChain: boolean,
    uncle = false,
  ): BlockRec => {
    const deps = parent
      ? depsFor(ctx.from, ctx.to, parent)
      : Array.from({ length: 2 * GROUPS - 1 }, () => "0".repeat(64));
    const block: node.BlockEntry = {
      hash: ctx.hash,
      timestamp: ctx.ts,
      chainFrom: ctx.from,
      chainTo: ctx.to,
      height: ctx.height,
      deps,
      transactions: ctx.txs,
      nonce: rng.hex(24),
      version: 0,
      depStateHash: rng.hex(32),
      txsHash: rng.hex(32),
      target: "20ffffff",
      ghostUncles: uncles,
    };
    const rec: BlockRec = {
      chainIndex: ctx.chainIndex,
      block,
      events: ctx.events,
      mainChain,
      uncle,
      undo: ctx.undo,
    };
    blocks.set(ctx.hash, rec);
    const atHeight = heights[ctx.chainIndex]!;
    const siblings = atHeight[ctx.height] ?? [];
    siblings.push(ctx.hash);
    atHeight[ctx.height] = siblings;
    return rec;
  };

  const newCtx = (chainIndex: number, height: number, ts: number): BlockCtx => ({
    chainIndex,
    from: Math.floor(chainIndex / GROUPS),
    to: chainIndex % GROUPS,
    height,
    ts,
    hash: blockHash(chainIndex),
    undo: { spent: [], created: [], contracts: new Map() },
    txs: [],
    events: [],
  });

  /** An orphan sibling of the current tip (coinbase only), referenced as ghost uncle by the next block. */
  const makeUncle = (chainIndex: number): node.GhostUncleBlockEntry | undefined => {
    const chain = main[chainIndex]!;
    const tip = chain.at(-1)!;
    if (tip.block.height < 2) return undefined;
    const parent = chain[tip.block.height - 1]!;
    const ctx = newCtx(chainIndex, tip.block.height, tip.block.timestamp + rng.int(1, 500));
    coinbaseTx(ctx, []);
    // Uncle txs never touch the UTXO set: drop what commitTx recorded.
    for (const o of ctx.undo.created) {
      utxos.delete(o.key);
      utxosByOwner.get(o.address)?.delete(o.key);
    }
    const rec = finishBlock(ctx, parent.block.hash, [], false, true);
    delete rec.undo;
    return { blockHash: ctx.hash, miner: minerList[ctx.to]!.address };
  };

  const txKinds: [number, (ctx: BlockCtx) => boolean][] = [
    [45, alphTransfer],
    [20, tokenTransfer],
    [20, swap],
    [10, genericCall],
  ];

  const produceOn = (chainIndex: number, ts: number): BlockRec => {
    const chain = main[chainIndex]!;
    const parent = chain.at(-1)!;
    const uncles: node.GhostUncleBlockEntry[] = [];
    if (rng.chance(opts.uncleRate)) {
      const u = makeUncle(chainIndex);
      if (u) uncles.push(u);
    }
    const ctx = newCtx(chainIndex, parent.block.height + 1, ts);
    setupStep(ctx);
    const n = rng.int(opts.txPerBlock[0], opts.txPerBlock[1]);
    const totalWeight = txKinds.reduce((s, [w]) => s + w, 0);
    for (let i = 0; i < n; i++) {
      if (rng.chance(opts.failedTxRate)) {
        failedScript(ctx);
        continue;
      }
      let r = rng.int(0, totalWeight - 1);
      for (const [w, kind] of txKinds) {
        if (r < w) {
          if (!kind(ctx)) alphTransfer(ctx);
          break;
        }
        r -= w;
      }
    }
    coinbaseTx(ctx, uncles);
    const rec = finishBlock(ctx, parent.block.hash, uncles, true);
    chain.push(rec);
    emit({ type: "block", block: rec });
    return rec;
  };

  // Genesis: allocation txs on the intra-group chains fund the users.
  for (let c = 0; c < CHAINS; c++) {
    const ctx = newCtx(c, 0, GENESIS_TIMESTAMP);
    if (ctx.from === ctx.to) {
      const fixed: OutSpec[] = [];
      for (const u of usersByGroup[ctx.from]!)
        for (let i = 0; i < 4; i++)
          fixed.push({ type: "AssetOutput", address: u.address, alph: 5000n * ONE_ALPH, tokens: new Map() });
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
    }
    const rec = finishBlock(ctx, undefined, [], true);
    delete rec.undo;
    main[c]!.push(rec);
    nextTs.push(opts.startTimestamp + Math.floor((c * opts.blockIntervalMs) / CHAINS));
  }

  const nextChain = (): number => {
    let best = 0;
    for (let c = 1; c < CHAINS; c++) if (nextTs[c]! < nextTs[best]!) best = c;
    return best;
  };

  const step = (): BlockRec => {
    const c = nextChain();
    const ts = nextTs[c]!;
    // Jitter keeps chains from ticking in lockstep while staying strictly inside the slot.
    const jitter = Math.floor(opts.blockIntervalMs / 32);
    nextTs[c] = ts + opts.blockIntervalMs + rng.int(-jitter, jitter);
    return produceOn(c, ts);
  };

  const undoBlock = (rec: BlockRec): void => {
    const undo = rec.undo;
    if (!undo) throw new Error("devnet: block cannot be undone");
    for (const o of undo.created) {
      utxos.delete(o.key);
      utxosByOwner.get(o.address)?.delete(o.key);
    }
    for (const o of undo.spent) {
      spent.delete(o.key);
      utxos.set(o.key, o);
      utxosByOwner.get(o.address)?.add(o.key);
    }
    for (const [id, snapshot] of undo.contracts) {
      if (snapshot === null) contracts.delete(id);
      else contracts.set(id, snapshot);
    }
    rec.mainChain = false;
  };

  const reorg = (chainIndex: number, depth: number): ReorgResult => {
    const chain = main[chainIndex];
    if (!chain) throw new Error(`invalid chain index ${chainIndex}`);
    if (!Number.isInteger(depth) || depth < 1 || depth > K)
      throw new Error(`reorg depth must be in [1, ${K}]`);
    if (depth > chain.length - 1) throw new Error(`chain ${chainIndex} has only ${chain.length - 1} blocks`);
    const orphanedRecs = chain.splice(chain.length - depth, depth);
    for (const rec of [...orphanedRecs].reverse()) undoBlock(rec);
    const base = chain.at(-1)!.block.timestamp;
    const span = nextTs[chainIndex]! - base;
    const added: string[] = [];
    for (let j = 1; j <= depth + 1; j++) {
      const ts = base + Math.max(j, Math.floor((span * j) / (depth + 2)));
      added.push(produceOn(chainIndex, ts).block.hash);
    }
    const result = { chainIndex, orphaned: orphanedRecs.map((r) => r.block.hash), added };
    emit({ type: "reorg", ...result });
    return result;
  };

  const tokenView = (c: ContractRec): DevnetToken => ({
    id: c.id,
    address: c.address,
    symbol: c.token!.symbol,
    name: c.token!.name,
    decimals: c.token!.decimals,
    totalSupply: c.token!.totalSupply,
    minter: c.token!.minter,
    mintTxId: c.createdTxId,
    mintBlockHash: c.createdBlockHash,
    mintTimestamp: c.createdTs,
  });
  const poolView = (c: ContractRec): DevnetPool => ({
    id: c.id,
    address: c.address,
    factoryAddress: c.pair!.factory,
    token0: c.pair!.token0,
    token1: c.pair!.token1,
    reserve0: c.pair!.reserve0,
    reserve1: c.pair!.reserve1,
    createTxId: c.createdTxId,
  });
  const contractByAddress = (address: string): ContractRec | undefined => {
    for (const c of contracts.values()) if (c.address === address) return c;
    return undefined;
  };

  const chainApi: DevnetChain = {
    options: opts,
    advance(n = 1) {
      const out: DevnetBlock[] = [];
      for (let i = 0; i < n; i++) out.push(step());
      return out;
    },
    produceUntil(ts) {
      const out: DevnetBlock[] = [];
      while (nextTs[nextChain()]! <= ts) out.push(step());
      return out;
    },
    reorg,
    randomReorg(maxDepth = 2) {
      const depth = rng.int(1, Math.min(maxDepth, K));
      const eligible = main.map((c, i) => ({ c, i })).filter(({ c }) => c.length - 1 >= depth);
      if (eligible.length === 0) return undefined;
      return reorg(rng.pick(eligible).i, depth);
    },
    mainChain: (chainIndex) => main[chainIndex] ?? [],
    height: (chainIndex) => (main[chainIndex]?.length ?? 0) - 1,
    getBlock: (hash) => blocks.get(hash),
    hashesAt(chainIndex, height) {
      const all = heights[chainIndex]?.[height] ?? [];
      const m = main[chainIndex]?.[height]?.block.hash;
      return m ? [m, ...all.filter((h) => h !== m)] : [...all];
    },
    rawBlock(hash) {
      const b = blocks.get(hash);
      return b && { chainIndex: b.chainIndex, block: b.block, events: b.events, mainChain: b.mainChain };
    },
    blocksInRange(fromTs, toTs) {
      return main.map((chain) => {
        // Binary search the first block with timestamp ≥ fromTs (timestamps grow with height).
        let lo = 0;
        let hi = chain.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (chain[mid]!.block.timestamp < fromTs) lo = mid + 1;
          else hi = mid;
        }
        const out: DevnetBlock[] = [];
        for (let i = lo; i < chain.length && chain[i]!.block.timestamp <= toTs; i++) out.push(chain[i]!);
        return out;
      });
    },
    getTransaction(txId) {
      const loc = txIndex.get(txId);
      if (!loc) return undefined;
      const b = blocks.get(loc.blockHash)!;
      return {
        tx: b.block.transactions[loc.txIndex]!,
        blockHash: loc.blockHash,
        txIndex: loc.txIndex,
        timestamp: b.block.timestamp,
        chainIndex: b.chainIndex,
        mainChain: b.mainChain,
        coinbase: b.block.height > 0 && loc.txIndex === b.block.transactions.length - 1,
      };
    },
    getOutput: (key) => outputs.get(key),
    spentBy: (key) => spent.get(key),
    eventsOfTx(txId) {
      const loc = txIndex.get(txId);
      const b = loc && blocks.get(loc.blockHash);
      if (!b?.mainChain) return [];
      return b.events
        .filter((e) => e.txId === txId)
        .map((e) => ({
          blockHash: b.block.hash,
          timestamp: e.timestamp,
          contractAddress: e.contractAddress,
          eventIndex: e.eventIndex,
          fields: e.fields,
        }));
    },
    tokens: () => [...contracts.values()].filter((c) => c.kind === "token").map(tokenView),
    pools: () => [...contracts.values()].filter((c) => c.kind === "pair").map(poolView),
    contractState(address) {
      const c = contractByAddress(address);
      if (!c) return undefined;
      let immFields: node.Val[] = [];
      let mutFields: node.Val[] = [u256(c.counter)];
      if (c.token) {
        const t = c.token;
        immFields = [
          byteVec(utf8Hex(t.symbol)),
          byteVec(utf8Hex(t.name)),
          u256(t.decimals),
          u256(t.totalSupply),
          byteVec("414c50480001"),
        ];
        mutFields = [];
      } else if (c.pair) {
        const p = c.pair;
        immFields = [byteVec(p.token0), byteVec(p.token1), addressVal(p.factory)];
        mutFields = [u256(p.reserve0), u256(p.reserve1), u256(c.createdTs), u256(p.liquidity)];
      }
      return {
        address: c.address,
        bytecode: c.bytecode,
        codeHash: c.codeHash,
        initialStateHash: c.codeHash,
        immFields,
        mutFields,
        asset: {
          attoAlphAmount: c.alph.toString(),
          tokens: sortedTokens(c.tokens).map((t) => ({ id: t.id, amount: t.amount.toString() })),
        },
      };
    },
    contractInfo(address) {
      const c = contractByAddress(address);
      if (!c) return undefined;
      return {
        kind: c.kind,
        ...(c.token ? { token: tokenView(c) } : {}),
        ...(c.pair ? { pool: poolView(c) } : {}),
      };
    },
    addresses: () => users,
    miners: () => minerList,
    latestTimestamp: () => Math.max(...main.map((c) => c.at(-1)!.block.timestamp)),
    version: () => changeCounter,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return chainApi;
}
