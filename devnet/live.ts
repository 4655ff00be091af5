/**
 * Live production of the devnet, tied to a clock: at wall time `w` the chain holds exactly the blocks whose
 * timestamps are ≤ `chainTime(w)` (and at least the blocks made ahead), whatever the timer's ticks were. So a
 * restart that rebuilds the chain from the same seed reproduces what a continuous run had made by then.
 */
import { CHAINS } from "../lib/chain/types.ts";
import type { DevnetChain } from "./chain.ts";

/** Maps wall-clock time to chain time: `chainAnchor + (wall - wallAnchor) * speed`. */
export interface DevnetPace {
  wallAnchor: number;
  chainAnchor: number;
  /** Chain milliseconds per wall-clock millisecond (1 = blocks are made when their timestamp passes). */
  speed: number;
}

/** Options of {@link createProduction}. */
export interface ProductionOptions {
  pace: DevnetPace;
  /**
   * Reorg a random chain (depth 1..`reorgDepth`) after every `reorgEvery`-th block made past `reorgAfter`;
   * 0 = never.
   */
  reorgEvery?: number;
  /** Deepest random reorg (default 2; deeper than `CONFIRMATIONS` reaches the stream as a reorg notice). */
  reorgDepth?: number;
  reorgAfter?: number;
}

/** Block production of one chain: counts the blocks it made so reorgs fall on the same blocks every run. */
export interface Production {
  readonly chain: DevnetChain;
  readonly pace: DevnetPace;
  /** Blocks made so far by this production (reorg branches excluded). */
  made(): number;
  /** Chain time at a wall-clock time. */
  chainTime(wall: number): number;
  /** Makes `n` blocks whatever the clock says. */
  advance(n: number): void;
  /** Makes the blocks due at wall time `wall`, at most `limit`; returns how many it made. */
  catchUp(wall: number, limit?: number): number;
}

/** Blocks per second of a chain whose timestamps follow the wall clock (mainnet: 16 chains / 8 s = 2). */
export const naturalRate = (chain: DevnetChain): number => (CHAINS * 1000) / chain.options.blockIntervalMs;

export function createProduction(chain: DevnetChain, options: ProductionOptions): Production {
  const { pace } = options;
  const reorgEvery = options.reorgEvery ?? 0;
  const reorgAfter = options.reorgAfter ?? 0;
  const reorgDepth = options.reorgDepth ?? 2;
  let made = 0;
  const one = (): void => {
    chain.advance(1);
    made += 1;
    if (reorgEvery > 0 && made > reorgAfter && (made - reorgAfter) % reorgEvery === 0)
      chain.randomReorg(reorgDepth);
  };
  const chainTime = (wall: number): number =>
    pace.chainAnchor + Math.floor((wall - pace.wallAnchor) * pace.speed);
  return {
    chain,
    pace,
    made: () => made,
    chainTime,
    advance(n) {
      for (let i = 0; i < n; i++) one();
    },
    catchUp(wall, limit = Number.POSITIVE_INFINITY) {
      const until = chainTime(wall);
      let n = 0;
      while (n < limit && chain.nextTimestamp() <= until) {
        one();
        n += 1;
      }
      return n;
    },
  };
}

/** Options of {@link runLive}. */
export interface RunLiveOptions {
  /** Wall clock (default `Date.now`). */
  now?: () => number;
  /** Timer period (default: about one block per tick, within 10..1000 ms). */
  tickMs?: number;
}

/** Calls `production.catchUp(now())` on a timer; returns a stop function. */
export function runLive(production: Production, options: RunLiveOptions = {}): () => void {
  const now = options.now ?? Date.now;
  const rate = naturalRate(production.chain) * production.pace.speed;
  if (!(rate > 0)) return () => {};
  const period = options.tickMs ?? Math.max(10, Math.min(1000, Math.floor(1000 / rate)));
  const timer = setInterval(() => {
    production.catchUp(now());
  }, period);
  timer.unref?.();
  return () => clearInterval(timer);
}

/** Options of {@link startLive}. */
export interface LiveOptions {
  /** Blocks per wall-clock second across all chains (the chain's timestamps run faster or slower to match). */
  blocksPerSecond: number;
  /** Every N produced blocks, reorg a random chain (depth 1..2). Off when absent or 0. */
  reorgEvery?: number;
  /** Wall clock (default `Date.now`). */
  now?: () => number;
}

/** Produces blocks on an existing chain from its next scheduled block on, at a given rate; returns a stop function. */
export function startLive(chain: DevnetChain, options: LiveOptions): () => void {
  const now = options.now ?? Date.now;
  const production = createProduction(chain, {
    pace: {
      wallAnchor: now(),
      chainAnchor: chain.nextTimestamp() - 1,
      speed: options.blocksPerSecond / naturalRate(chain),
    },
    reorgEvery: options.reorgEvery ?? 0,
  });
  return runLive(production, { now });
}
