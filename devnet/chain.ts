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
 * - Ayin-like pairs keep reserves and emit Mint/Swap events but issue no LP token; their trading follows a
 *   schedule of steady trading, bursts, quiet gaps and trend phases (devnet/dex.ts).
 * - A DIA-like oracle on chain 2→2 gets `OracleUpdate` events from a feeder's script txs (devnet/oracle.ts).
 * - devnet/dapps/: a DIA-like randomness oracle (same feeder and chain), a Token Furnace per group and Chain
 *   Reaction on chain 0→0 (V2 factory and its games, V1, the guessing hub and its rooms), stepped after the oracle.
 * - DeFi dapps (devnet/dapps/defi.ts), each homed on one intra-group chain: Elexium and the Wormhole bridge on
 *   0→0, DeadRare on 1→1, AlphBanX on 2→2 (reading the oracle), MyOnion.fun on 3→3.
 * - Token, factory, pair, oracle and dapp ids are drawn up front (devnet/plan.ts): their addresses are known before
 *   the blocks that create them, see {@link DevnetChain.plan}.
 */
import type { node } from "@alephium/web3";
import { ADDRESS_GROUPS, CHAINS } from "../lib/chain/types.ts";
import { createActivity } from "./activity.ts";
import { createBlockProducer } from "./blocks.ts";
import { createChainReaction } from "./dapps/chain-reaction.ts";
import { createDefiDapps } from "./dapps/defi.ts";
import { createFurnace, furnaceNftCall } from "./dapps/furnace.ts";
import { createGuessingWar } from "./dapps/guessing-war.ts";
import { createRandomness } from "./dapps/randomness.ts";
import { createDex } from "./dex.ts";
import { createAccounts, createLedger, sortedTokens } from "./ledger.ts";
import { createOracle } from "./oracle.ts";
import { createPlan, ORACLE_GROUP } from "./plan.ts";
import { createRng } from "./random.ts";
import { createReorgs } from "./reorg.ts";
import { addressVal, byteVec, createTxBuilder, u256 } from "./tx-builder.ts";
import {
  type BlockStore,
  type ContractRec,
  DEVNET_DEFAULTS,
  type DevnetBlock,
  type DevnetChain,
  type DevnetListener,
  type DevnetOptions,
  type DevnetPlan,
  type DevnetPool,
  type DevnetToken,
  type ResolvedDevnetOptions,
} from "./types.ts";

export type {
  DevnetChainReaction,
  DevnetFurnace,
  DevnetRandomness,
} from "./dapps/games-types.ts";
export { type PoolRegime, poolRegime, swapAmountOut } from "./dex.ts";
export {
  ORACLE_FEEDS,
  ORACLE_GROUP,
  ORACLE_UPDATE_EVENT,
  ORACLE_VALUE_DECIMALS,
  type OracleFeed,
} from "./plan.ts";
export {
  COINBASE_LOCK_MS,
  DEVNET_DEFAULTS,
  type DevnetAddress,
  type DevnetAlphSupply,
  type DevnetBlock,
  type DevnetChain,
  type DevnetContractKind,
  type DevnetListener,
  type DevnetOptions,
  type DevnetOracle,
  type DevnetOutput,
  type DevnetPlan,
  type DevnetPlannedPool,
  type DevnetPlannedToken,
  type DevnetPool,
  type DevnetToken,
  type DevnetTxLocation,
  GENESIS_TIMESTAMP,
  MAX_BLOCK_RANGE_MS,
  type ReorgResult,
  type ResolvedDevnetOptions,
} from "./types.ts";

const utf8Hex = (s: string): string => Buffer.from(s, "utf8").toString("hex");

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

/** Node-shaped state of a contract: token metadata, pair reserves, oracle values, or a call counter. */
function contractStateView(c: ContractRec): node.ContractState {
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
  } else if (c.oracle) {
    // The posts so far, then the last value of each key (in key order).
    mutFields = [u256(c.counter), ...c.oracle.values.map((v) => u256(v))];
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
}

/**
 * Builds a deterministic simulated Alephium network (test double). Every random value comes from one PRNG, in
 * the order the parts draw them: key pairs first, then the plan, then genesis, then each block in schedule order
 * (the pools' and the oracle's phases are stateless hashes of the seed and the chain time).
 */
export function createDevnetChain(options: DevnetOptions = {}): DevnetChain {
  const opts: ResolvedDevnetOptions = { ...DEVNET_DEFAULTS, ...options };
  if (opts.groups !== ADDRESS_GROUPS)
    throw new Error(`devnet supports ${ADDRESS_GROUPS} groups only (got ${opts.groups})`);
  if (opts.txPerBlock[0] > opts.txPerBlock[1] || opts.txPerBlock[0] < 0)
    throw new Error("invalid txPerBlock");
  if (!(opts.userTxBlockShare >= 0 && opts.userTxBlockShare <= 1))
    throw new Error(`invalid userTxBlockShare ${opts.userTxBlockShare}: expected 0 to 1`);
  if (!(opts.swapShare >= 0 && opts.swapShare <= 1)) throw new Error("swapShare must be in [0, 1]");
  const rng = createRng(opts.seed);
  const store: BlockStore = {
    blocks: new Map(),
    heights: Array.from({ length: CHAINS }, () => []),
    main: Array.from({ length: CHAINS }, () => []),
    txIndex: new Map(),
  };
  const { blocks, main, heights, txIndex } = store;
  const listeners = new Set<DevnetListener>();
  let changeCounter = 0;
  const emit = (change: Parameters<DevnetListener>[0]): void => {
    changeCounter += 1;
    for (const l of listeners) l(change);
  };

  const accounts = createAccounts(rng, opts.users, ORACLE_GROUP);
  const plan = createPlan(rng, opts, accounts);
  const publicPlan: DevnetPlan = {
    tokens: plan.tokens.map((t) => ({
      id: t.id,
      address: t.address,
      group: t.group,
      symbol: t.meta.symbol,
      name: t.meta.name,
      decimals: t.meta.decimals,
    })),
    factory: plan.factory,
    pools: plan.pairs,
    oracle: plan.oracle,
    randomness: plan.randomness,
    furnaces: plan.furnaces,
    chainReaction: plan.chainReaction,
    ...plan.defi,
  };
  const ledger = createLedger({
    maturity: opts.maxReorgDepth,
    chainHeight: (chainIndex) => main[chainIndex]!.length - 1,
  });
  const builder = createTxBuilder({ rng, networkId: opts.networkId, accounts, ledger, store });
  const dex = createDex({ rng, seed: opts.seed, plan, accounts, ledger, builder });
  const oracle = createOracle({ rng, seed: opts.seed, plan, accounts, ledger, builder });
  const defi = createDefiDapps({ rng, accounts, ledger, builder, plan: plan.defi, oracle: plan.oracle });
  const activity = createActivity({ rng, opts, accounts, ledger, builder, dex, plan });
  const { feeder } = accounts;
  const dapps = [
    createRandomness({ seed: opts.seed, planned: plan.randomness, feeder, ledger, builder }),
    createFurnace({ rng, planned: plan.furnaces, accounts, ledger, builder }),
    createChainReaction({ rng, plan, accounts, ledger, builder }),
    createGuessingWar({ rng, seed: opts.seed, plan, accounts, ledger, builder }),
  ];
  const producer = createBlockProducer({
    rng,
    opts,
    store,
    accounts,
    ledger,
    builder,
    activity,
    dex,
    oracle,
    dapps,
    defi,
    emit,
  });
  const reorgs = createReorgs({ rng, maxDepth: opts.maxReorgDepth, store, ledger, producer, emit });
  producer.genesis();

  const reserved = accounts.usersByGroup.map((g) => g[0]!.address);
  const contractsOf = (kind: ContractRec["kind"]): ContractRec[] =>
    [...ledger.contracts()].filter((c) => c.kind === kind);

  return {
    options: opts,
    advance(n = 1) {
      const out: DevnetBlock[] = [];
      for (let i = 0; i < n; i++) out.push(producer.step());
      return out;
    },
    produceUntil(ts) {
      const out: DevnetBlock[] = [];
      while (producer.nextTimestamp() <= ts) out.push(producer.step());
      return out;
    },
    reorg: reorgs.reorg,
    randomReorg: (maxDepth = 2) => reorgs.randomReorg(maxDepth),
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
    getOutput: (key) => ledger.output(key),
    spentBy: (key) => ledger.spentBy(key),
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
    tokens: () => contractsOf("token").map(tokenView),
    pools: () => contractsOf("pair").map(poolView),
    contractState(address) {
      const c = ledger.contractByAddress(address);
      return c && contractStateView(c);
    },
    contractInfo(address) {
      const c = ledger.contractByAddress(address);
      if (!c) return undefined;
      return {
        kind: c.kind,
        ...(c.token ? { token: tokenView(c) } : {}),
        ...(c.pair ? { pool: poolView(c) } : {}),
      };
    },
    dappCall(address, methodIndex, args) {
      const c = ledger.contractByAddress(address);
      return c && (furnaceNftCall(c, methodIndex) ?? defi.call(c, methodIndex, args));
    },
    addresses: () => accounts.users,
    miners: () => accounts.miners,
    latestTimestamp: () => Math.max(...main.map((c) => c.at(-1)!.block.timestamp)),
    alphSupply(now) {
      const reservedSet = new Set(reserved);
      let total = 0n;
      let locked = 0n;
      let held = 0n;
      for (const o of ledger.utxos()) {
        total += o.attoAlphAmount;
        if (o.lockTime > now) locked += o.attoAlphAmount;
        else if (reservedSet.has(o.address)) held += o.attoAlphAmount;
      }
      return { total, locked, reserved: held, circulating: total - held - locked };
    },
    reservedAddresses: () => reserved,
    version: () => changeCounter,
    nextTimestamp: () => producer.nextTimestamp(),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    oracle: () => plan.oracle,
    plan: () => publicPlan,
    sendAlph: (to, attoAlph) => activity.queueTransfer(to, attoAlph),
    pendingSends: () => activity.queued(),
  };
}
