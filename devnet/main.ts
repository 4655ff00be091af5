/**
 * Entry point of the `devnet` CLI subcommand (wired in bin/cli.ts by its owner): builds a deterministic simulated
 * network (TEST DOUBLE of an Alephium full node + explorer backend), pre-produces blocks and serves it over HTTP.
 */
import { createDevnetChain, DEVNET_DEFAULTS, type DevnetChain } from "./chain.ts";
import { type DevnetServer, startDevnetServer, startLive } from "./server.ts";

/** Options of {@link runDevnet}; see {@link DEVNET_RUN_DEFAULTS}. */
export interface DevnetRunOptions {
  /** HTTP port (0 = ephemeral). */
  port: number;
  /** Interface to bind. */
  host: string;
  /** PRNG seed: same seed ⇒ same chain. */
  seed: number;
  /** Blocks produced before the server starts (across all 16 chains). */
  blocks: number;
  /** Live production rate in blocks per second across all chains; 0 disables live mode. */
  live: number;
  /** In live mode, reorg a random chain every N produced blocks; 0 disables. */
  reorgEvery: number;
  /**
   * Timestamp of the first block. Default: now minus the time `blocks` blocks take, so the pre-produced
   * history ends around "now" and live production (at ≈2 blocks/s) keeps pace with the wall clock.
   */
  startTimestamp?: number;
}

/**
 * Defaults: port 22973 (the devnet docs' REST port), host 127.0.0.1, seed 1, 2000 blocks ahead,
 * live 2 blocks/s (mainnet's rate: 16 chains / 8 s), no random reorgs.
 */
export const DEVNET_RUN_DEFAULTS: DevnetRunOptions = {
  port: 22973,
  host: "127.0.0.1",
  seed: 1,
  blocks: 2000,
  live: 2,
  reorgEvery: 0,
};

/** A running devnet. */
export interface RunningDevnet {
  chain: DevnetChain;
  server: DevnetServer;
  nodeUrl: string;
  explorerUrl: string;
  close(): Promise<void>;
}

/** Builds the chain, pre-produces blocks, starts the server (and live production), logs the URLs. */
export async function runDevnet(
  options: Partial<DevnetRunOptions> = {},
  log: (line: string) => void = console.log,
): Promise<RunningDevnet> {
  const o = { ...DEVNET_RUN_DEFAULTS, ...options };
  const perChainSpan = Math.ceil(o.blocks / 16) * DEVNET_DEFAULTS.blockIntervalMs;
  const startTimestamp = o.startTimestamp ?? Date.now() - perChainSpan;
  const chain = createDevnetChain({ seed: o.seed, startTimestamp });
  chain.advance(o.blocks);
  const server = await startDevnetServer(chain, { host: o.host, port: o.port });
  const stopLive = startLive(chain, { blocksPerSecond: o.live, reorgEvery: o.reorgEvery });
  log(
    `devnet (simulated Alephium test double, seed ${o.seed}): ${o.blocks} blocks, ${chain.tokens().length} tokens`,
  );
  log(`  node API:     ${server.nodeUrl}`);
  log(`  explorer API: ${server.explorerUrl}`);
  if (o.live > 0)
    log(`  live: ${o.live} blocks/s${o.reorgEvery > 0 ? `, reorg every ${o.reorgEvery} blocks` : ""}`);
  return {
    chain,
    server,
    nodeUrl: server.nodeUrl,
    explorerUrl: server.explorerUrl,
    async close() {
      stopLive();
      await server.close();
    },
  };
}
