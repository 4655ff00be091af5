/** Types of the simulated network: the public shapes of {@link DevnetChain} and the records its parts share. */
import type { node } from "@alephium/web3";
import { ADDRESS_GROUPS, type RawBlock } from "../lib/chain/types.ts";
import type { DappState as DefiDappState, DefiPlan } from "./dapps/defi-plan.ts";
import type { DappState, GamesContractKind, GamesPlan } from "./dapps/games-types.ts";

/** Timestamp of every genesis block (Bitcoin's genesis time, as on mainnet). */
export const GENESIS_TIMESTAMP = 1231006505000;
/** Coinbase outputs unlock this long after their block. */
export const COINBASE_LOCK_MS = 30_000_000;
/** Max span of a `blocks-with-events` query on the node. */
export const MAX_BLOCK_RANGE_MS = 30 * 60 * 1000;

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
  /**
   * Share of blocks that carry user transactions (`txPerBlock` of them; the others only the coinbase and the
   * dapps' own activity). Default 1: every block draws from `txPerBlock`. {@link DEVNET_MAINNET_PROFILE} sets it.
   */
  userTxBlockShare?: number;
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
  /**
   * Probability that a (not failed) user tx of a block on a chain that homes live pools is a DEX swap
   * (default 0.5). Pools live on chain 0→0 only, where contract calls of group 0 run, so this shapes that
   * chain's blocks: 1 with `txPerBlock: [4, 8]` makes a swap-heavy stream for a candles benchmark. The pool
   * of a swap follows the pools' schedule (none in a quiet gap, more in a burst), and bursts add their own
   * swaps on top of these (see devnet/dex.ts).
   */
  swapShare?: number;
  /** Deepest supported reorg; also the maturity (in blocks) of asset outputs (default 6). */
  maxReorgDepth?: number;
}

/** Options after defaults were applied. */
export type ResolvedDevnetOptions = Required<DevnetOptions>;

/** Defaults of {@link DevnetOptions}. */
export const DEVNET_DEFAULTS: ResolvedDevnetOptions = {
  seed: 1,
  groups: ADDRESS_GROUPS,
  startTimestamp: 1752573600000,
  blockIntervalMs: 8000,
  txPerBlock: [0, 4],
  userTxBlockShare: 1,
  users: 32,
  tokens: 6,
  pools: 4,
  genericContracts: 3,
  networkId: 4,
  uncleRate: 0.05,
  failedTxRate: 0.04,
  swapShare: 0.5,
  maxReorgDepth: 6,
};

/**
 * Blocks shaped like mainnet's (2026: most blocks carry only the coinbase, about 2 normalized events per block on
 * average, as docs/sizing.md assumes): a third of the blocks carry 1 to 3 user transactions. Measured on seed 3
 * over 4,000 blocks: about 2 events per block, about 60 % of the blocks coinbase only (`bench:pipeline` with
 * BENCH_CHAIN=mainnet prints both).
 */
export const DEVNET_MAINNET_PROFILE: DevnetOptions = { txPerBlock: [1, 3], userTxBlockShare: 0.3 };

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

/** Kinds of contracts the generator knows ("dapp": a DeFi contract of devnet/dapps, its role in `defi`). */
export type DevnetContractKind =
  | "token"
  | "factory"
  | "pair"
  | "generic"
  | "oracle"
  | "dapp"
  | GamesContractKind;

/** A token the chain issues early (known from the seed before its block exists). */
export interface DevnetPlannedToken {
  id: string;
  address: string;
  /** Group of its home chain g→g (token i is issued on group i % 4). */
  group: number;
  symbol: string;
  name: string;
  decimals: number;
}

/** A pair the factory creates (its id is subContractId(factory, token0 ++ token1, 0), known from the seed). */
export interface DevnetPlannedPool {
  id: string;
  address: string;
  token0: string;
  token1: string;
}

/** The DIA-like price oracle: where it lives, the keys its feeder posts and the feeder's address. */
export interface DevnetOracle {
  id: string;
  address: string;
  /** Home chain (g→g) of the oracle and of its feeder's posts. */
  chainIndex: number;
  /** Feed keys in posting order, as UTF-8 text ("ALPH/USD"); events carry them hex-encoded. */
  keys: string[];
  /** Address of the account that posts the values (not one of `addresses()`). */
  feeder: string;
  /** Index of `OracleUpdate(key: ByteVec, value: U256, timestamp: U256)`; timestamp in seconds. */
  updateEventIndex: number;
  /** Decimals of posted values (8, like DIA). */
  valueDecimals: number;
}

/**
 * What a seed makes the chain create, known before the blocks that create it exist; `randomness`, `furnaces` and
 * `chainReaction` come from {@link GamesPlan} (devnet/dapps/games-common.ts).
 */
export interface DevnetPlan extends GamesPlan {
  tokens: DevnetPlannedToken[];
  /** The DEX factory (undefined when `pools` is 0). */
  factory: { id: string; address: string } | undefined;
  /** Pairs in plan order; the factory creates each once a group-0 user holds its tokens. */
  pools: DevnetPlannedPool[];
  oracle: DevnetOracle;
  /** Elexium, AlphBanX, DeadRare, MyOnion and Wormhole contracts (devnet/dapps/). */
  elexium: DefiPlan["elexium"];
  alphbanx: DefiPlan["alphbanx"];
  deadrare: DefiPlan["deadrare"];
  myonion: DefiPlan["myonion"];
  wormhole: DefiPlan["wormhole"];
}

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
/** ALPH's supply in attoALPH (see {@link DevnetChain.alphSupply}). */
export interface DevnetAlphSupply {
  total: bigint;
  circulating: bigint;
  reserved: bigint;
  locked: bigint;
}

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
  /** Answer of a devnet/dapps contract to a read-only call (call-contract double), undefined when none. */
  dappCall(address: string, methodIndex: number, args: node.Val[]): node.Val[] | undefined;
  /** User addresses. */
  addresses(): readonly DevnetAddress[];
  /** Miner addresses, one per group. */
  miners(): readonly DevnetAddress[];
  /** Timestamp of the newest main-chain block across chains. */
  latestTimestamp(): number;
  /**
   * ALPH's supply as the explorer backend computes it (`/infos/supply`), in attoALPH, from the UTXO set at `now`
   * (ms): total = every unspent output, locked = those whose lock time is after `now`, reserved = the unlocked
   * outputs of {@link reservedAddresses}, circulating = total − reserved − locked.
   */
  alphSupply(now: number): DevnetAlphSupply;
  /** The addresses the explorer double counts as reserved (like the foundation's on mainnet): the first user of each group. */
  reservedAddresses(): readonly string[];
  /** Monotonic counter bumped on every change (cache key for derived views). */
  version(): number;
  /** Scheduled timestamp of the block the next `advance(1)` makes. */
  nextTimestamp(): number;
  /** Subscribe to new blocks and reorgs; returns an unsubscribe function. */
  subscribe(listener: DevnetListener): () => void;
  /** The price oracle (deployed by the chain's first block on its home chain) and its feed keys. */
  oracle(): DevnetOracle;
  /** Tokens, factory and pools the chain creates, with their ids and addresses, before they exist. */
  plan(): DevnetPlan;
  /**
   * Queues an ALPH transfer of `attoAlph` to `to` (any address): the next block of a chain into the
   * address's group carries it, sent by a funded user of the chain's source group (simple transfer,
   * change back). Returns how many transfers wait.
   */
  sendAlph(to: string, attoAlph: bigint): number;
  /** Queued transfers not in a block yet. */
  pendingSends(): number;
}

// ---- records shared by the devnet's parts (internal: chain.ts does not re-export them) -----------------

/** An output with where it was made and, for user outputs, its owner. */
export interface OutRec extends DevnetOutput {
  chainIndex: number;
  height: number;
  owner?: DevnetAddress;
}

export interface TokenMeta {
  symbol: string;
  name: string;
  decimals: number;
  totalSupply: bigint;
  minter: string;
}

export interface ContractRec {
  id: string;
  address: string;
  kind: DevnetContractKind;
  homeChain: number;
  createdTxId: string;
  createdBlockHash: string;
  createdTs: number;
  /** Height of the creating block on the home chain. */
  createdHeight: number;
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
    /** Reserves right after the first liquidity: the price its trend phases revert towards. */
    anchor0: bigint;
    anchor1: bigint;
  };
  /** Oracle feeds: last posted values (8 decimals), and when each key is due next (ms). */
  oracle?: {
    values: bigint[];
    nextDue: number[];
  };
  /** State of a game, oracle or furnace contract of devnet/dapps/ (copied when a block touches the contract). */
  dapp?: DappState;
  /** A DeFi contract's role and state (devnet/dapps/defi.ts). */
  defi?: DefiDappState;
}

export interface Undo {
  spent: OutRec[];
  created: OutRec[];
  contracts: Map<string, ContractRec | null>;
}

export interface BlockRec extends DevnetBlock {
  undo?: Undo;
}

export interface OutSpec {
  type: "AssetOutput" | "ContractOutput";
  address: string;
  alph: bigint;
  tokens: Map<string, bigint>;
  lockTime?: number;
  message?: string;
}

export interface EventSpec {
  contractAddress: string;
  eventIndex: number;
  fields: node.Val[];
}

export interface TxSpec {
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
  /** Tokens this tx burns (inputs minus outputs, like Ralph's `burnToken!`). */
  burned?: Map<string, bigint>;
  noInputsAllowed?: boolean;
}

export interface BlockCtx {
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

/** Every block ever made, by hash and by height, and the current main chains. */
export interface BlockStore {
  blocks: Map<string, BlockRec>;
  /** Per chain, per height: the hashes of every block made at that height. */
  heights: string[][][];
  /** Per chain: main-chain blocks, index = height (genesis included). */
  main: BlockRec[][];
  txIndex: Map<string, { blockHash: string; txIndex: number }>;
}
