/**
 * Block production of the devnet: genesis, the per-chain schedule of timestamps, and assembling a block (ghost
 * uncle, contract setup, oracle posts, user transactions, coinbase, header fields) into the {@link BlockStore}.
 */
import type { node } from "@alephium/web3";
import { ADDRESS_GROUPS, CHAINS } from "../lib/chain/types.ts";
import type { Activity } from "./activity.ts";
import type { DefiDapps } from "./dapps/defi.ts";
import type { Dex } from "./dex.ts";
import type { Accounts, Ledger } from "./ledger.ts";
import type { Oracle } from "./oracle.ts";
import type { Rng } from "./random.ts";
import { shared, type TxBuilder } from "./tx-builder.ts";
import {
  type BlockCtx,
  type BlockRec,
  type BlockStore,
  type DevnetListener,
  GENESIS_TIMESTAMP,
  type ResolvedDevnetOptions,
} from "./types.ts";

export interface BlockProducer {
  /** Makes the genesis blocks (once, first). */
  genesis(): void;
  /** Makes the next block of the schedule (the chain whose next timestamp is the smallest). */
  step(): BlockRec;
  /** Makes a main-chain block on a chain's tip at `ts`, outside the schedule (reorg branches). */
  produceOn(chainIndex: number, ts: number): BlockRec;
  /** Timestamp of the block `step()` makes next. */
  nextTimestamp(): number;
  /** Scheduled timestamp of a chain's next block. */
  nextTimestampOf(chainIndex: number): number;
}

export function createBlockProducer(deps: {
  rng: Rng;
  opts: ResolvedDevnetOptions;
  store: BlockStore;
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
  activity: Activity;
  dex: Dex;
  oracle: Oracle;
  /** Dapps of devnet/dapps/, each stepped once per block after the oracle, in this order. */
  dapps?: readonly { step(ctx: BlockCtx): void }[];
  defi: DefiDapps;
  emit: (change: Parameters<DevnetListener>[0]) => void;
}): BlockProducer {
  const { rng, opts, store, builder } = deps;
  const { main } = store;
  /** Per chain, the timestamp of its next scheduled block. */
  const nextTs: number[] = [];

  const blockHash = (chainIndex: number): string => {
    const tail = ((rng.int(0, 0xfff) << 4) | chainIndex).toString(16).padStart(4, "0");
    return ["000000", rng.hex(27), tail].join("");
  };

  const depsFor = (from: number, to: number, parent: string): string[] => {
    const out: string[] = [];
    for (let g = 0; g < ADDRESS_GROUPS; g++) {
      if (g === from) continue;
      out.push(main[g * ADDRESS_GROUPS + g]!.at(-1)!.block.hash);
    }
    for (let t = 0; t < ADDRESS_GROUPS; t++)
      out.push(t === to ? parent : main[from * ADDRESS_GROUPS + t]!.at(-1)!.block.hash);
    return out;
  };

  const finishBlock = (
    ctx: BlockCtx,
    parent: string | undefined,
    uncles: node.GhostUncleBlockEntry[],
    mainChain: boolean,
    uncle = false,
  ): BlockRec => {
    const blockDeps = parent
      ? depsFor(ctx.from, ctx.to, parent)
      : Array.from({ length: 2 * ADDRESS_GROUPS - 1 }, () => "0".repeat(64));
    const block: node.BlockEntry = {
      hash: ctx.hash,
      timestamp: ctx.ts,
      chainFrom: ctx.from,
      chainTo: ctx.to,
      height: ctx.height,
      deps: blockDeps,
      transactions: ctx.txs,
      nonce: rng.hex(24),
      version: 0,
      depStateHash: rng.hex(32),
      txsHash: rng.hex(32),
      target: "20ffffff",
      ghostUncles: shared(uncles),
    };
    const rec: BlockRec = {
      chainIndex: ctx.chainIndex,
      block,
      events: shared(ctx.events),
      mainChain,
      uncle,
      undo: ctx.undo,
    };
    store.blocks.set(ctx.hash, rec);
    const atHeight = store.heights[ctx.chainIndex]!;
    const siblings = atHeight[ctx.height] ?? [];
    siblings.push(ctx.hash);
    atHeight[ctx.height] = siblings;
    return rec;
  };

  const newCtx = (chainIndex: number, height: number, ts: number): BlockCtx => ({
    chainIndex,
    from: Math.floor(chainIndex / ADDRESS_GROUPS),
    to: chainIndex % ADDRESS_GROUPS,
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
    builder.coinbase(ctx, []);
    // Uncle txs never touch the UTXO set: drop what commitTx recorded.
    deps.ledger.forget(ctx.undo.created);
    const rec = finishBlock(ctx, parent.block.hash, [], false, true);
    delete rec.undo;
    return { blockHash: ctx.hash, miner: deps.accounts.miners[ctx.to]!.address };
  };

  const produceOn = (chainIndex: number, ts: number): BlockRec => {
    const chain = main[chainIndex]!;
    const parent = chain.at(-1)!;
    const uncles: node.GhostUncleBlockEntry[] = [];
    if (rng.chance(opts.uncleRate)) {
      const u = makeUncle(chainIndex);
      if (u) uncles.push(u);
    }
    const ctx = newCtx(chainIndex, parent.block.height + 1, ts);
    deps.activity.setup(ctx);
    deps.dex.setup(ctx);
    deps.oracle.step(ctx);
    for (const dapp of deps.dapps ?? []) dapp.step(ctx);
    deps.defi.step(ctx);
    deps.activity.fill(ctx);
    builder.coinbase(ctx, uncles);
    const rec = finishBlock(ctx, parent.block.hash, uncles, true);
    chain.push(rec);
    // A reorg undoes at most the last maxReorgDepth blocks: deeper ones no longer need their undo.
    const settled = chain[chain.length - 1 - opts.maxReorgDepth];
    if (settled) delete settled.undo;
    deps.emit({ type: "block", block: rec });
    return rec;
  };

  const nextChain = (): number => {
    let best = 0;
    for (let c = 1; c < CHAINS; c++) if (nextTs[c]! < nextTs[best]!) best = c;
    return best;
  };

  return {
    genesis() {
      // Allocation txs on the intra-group chains fund the users.
      for (let c = 0; c < CHAINS; c++) {
        const ctx = newCtx(c, 0, GENESIS_TIMESTAMP);
        if (ctx.from === ctx.to) builder.allocation(ctx);
        const rec = finishBlock(ctx, undefined, [], true);
        delete rec.undo;
        main[c]!.push(rec);
        nextTs.push(opts.startTimestamp + Math.floor((c * opts.blockIntervalMs) / CHAINS));
      }
    },
    step() {
      const c = nextChain();
      const ts = nextTs[c]!;
      // Jitter keeps chains from ticking in lockstep while staying strictly inside the slot.
      const jitter = Math.floor(opts.blockIntervalMs / 32);
      nextTs[c] = ts + opts.blockIntervalMs + rng.int(-jitter, jitter);
      return produceOn(c, ts);
    },
    produceOn,
    nextTimestamp: () => nextTs[nextChain()]!,
    nextTimestampOf: (chainIndex) => nextTs[chainIndex]!,
  };
}
