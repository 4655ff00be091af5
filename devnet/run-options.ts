/**
 * The options of the simulated network's run (devnet/main.ts) and their defaults, apart from the network itself so
 * that the CLI's `devnet` command shows them in its help without loading it.
 */

/** Options of `runDevnet` (devnet/main.ts); see {@link DEVNET_RUN_DEFAULTS}. */
export interface DevnetRunOptions {
  /** HTTP port (0 = ephemeral). */
  port: number;
  /** Interface to bind. */
  host: string;
  /** PRNG seed: same seed ⇒ same chain. */
  seed: number;
  /** Blocks made ahead at the first start (across all 16 chains). */
  blocks: number;
  /**
   * Live production rate in blocks per second across all chains; 0 disables live mode. At 2 (mainnet's rate,
   * 16 chains / 8 s) block timestamps follow the wall clock; other rates make chain time run faster or slower.
   */
  live: number;
  /** In live mode, reorg a random chain after every N live blocks; 0 disables. */
  reorgEvery: number;
  /**
   * Deepest random reorg (1..6, the devnet's deepest). Deeper than the indexer's `CONFIRMATIONS` (2), a reorg
   * reaches the event stream as a reorg notice (docs/events.md#reorg-notices).
   */
  reorgDepth: number;
  /**
   * Timestamp of the first block. Default: the first start's time minus the time `blocks` blocks take, so the
   * history made ahead ends at the first start.
   */
  startTimestamp?: number;
  /**
   * State file. When it exists, the chain is rebuilt from it (its seed, start time, rate and reorg rhythm win
   * over these options) up to the clock; otherwise the first start writes it.
   */
  statePath?: string;
  /** Wall clock (default `Date.now`). */
  now?: () => number;
}

/**
 * Defaults: port 22973 (the devnet docs' REST port), host 127.0.0.1, seed 1, 14400 blocks ahead (two hours
 * of chain time: enough for hourly candles in the demo),
 * live 2 blocks/s (mainnet's rate: 16 chains / 8 s), no random reorgs.
 */
export const DEVNET_RUN_DEFAULTS: DevnetRunOptions = {
  port: 22973,
  host: "127.0.0.1",
  seed: 1,
  blocks: 14_400,
  live: 2,
  reorgEvery: 0,
  reorgDepth: 2,
};
