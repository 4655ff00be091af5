/**
 * Reorgs of one chain: the last `depth` main-chain blocks leave the main chain (their ledger changes undone,
 * newest first) and a branch of depth+1 new blocks replaces them. A reorg of one chain never touches another,
 * because asset outputs mature only `maxReorgDepth` blocks deep and contracts live on their home chain.
 */
import type { BlockProducer } from "./blocks.ts";
import type { Ledger } from "./ledger.ts";
import type { Rng } from "./random.ts";
import type { BlockRec, BlockStore, DevnetListener, ReorgResult } from "./types.ts";

export interface Reorgs {
  /** Replace the last `depth` main-chain blocks of a chain with a new branch of depth+1 blocks. */
  reorg(chainIndex: number, depth: number): ReorgResult;
  /** Reorg a PRNG-chosen chain with a depth in [1, maxDepth], if one is deep enough. */
  randomReorg(maxDepth: number): ReorgResult | undefined;
}

export function createReorgs(deps: {
  rng: Rng;
  /** Deepest supported reorg. */
  maxDepth: number;
  store: BlockStore;
  ledger: Ledger;
  producer: BlockProducer;
  emit: (change: Parameters<DevnetListener>[0]) => void;
}): Reorgs {
  const { rng, store, producer } = deps;
  const K = deps.maxDepth;

  const undoBlock = (rec: BlockRec): void => {
    if (!rec.undo) throw new Error("devnet: block cannot be undone");
    deps.ledger.undo(rec.undo);
    // An orphaned block never returns to the main chain.
    delete rec.undo;
    rec.mainChain = false;
  };

  const reorg = (chainIndex: number, depth: number): ReorgResult => {
    const chain = store.main[chainIndex];
    if (!chain) throw new Error(`invalid chain index ${chainIndex}`);
    if (!Number.isInteger(depth) || depth < 1 || depth > K)
      throw new Error(`reorg depth must be in [1, ${K}]`);
    if (depth > chain.length - 1) throw new Error(`chain ${chainIndex} has only ${chain.length - 1} blocks`);
    const orphanedRecs = chain.splice(chain.length - depth, depth);
    for (const rec of [...orphanedRecs].reverse()) undoBlock(rec);
    // The new branch fits between the fork point and the chain's next scheduled block.
    const base = chain.at(-1)!.block.timestamp;
    const span = producer.nextTimestampOf(chainIndex) - base;
    const added: string[] = [];
    for (let j = 1; j <= depth + 1; j++) {
      const ts = base + Math.max(j, Math.floor((span * j) / (depth + 2)));
      added.push(producer.produceOn(chainIndex, ts).block.hash);
    }
    const result = { chainIndex, orphaned: orphanedRecs.map((r) => r.block.hash), added };
    deps.emit({ type: "reorg", ...result });
    return result;
  };

  return {
    reorg,
    randomReorg(maxDepth) {
      const depth = rng.int(1, Math.min(maxDepth, K));
      const eligible = store.main.map((c, i) => ({ c, i })).filter(({ c }) => c.length - 1 >= depth);
      if (eligible.length === 0) return undefined;
      return reorg(rng.pick(eligible).i, depth);
    },
  };
}
