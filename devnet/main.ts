/**
 * Entry point of the `devnet` CLI subcommand and of `start --devnet`: builds a deterministic simulated network
 * (TEST DOUBLE of an Alephium full node + explorer backend), makes the blocks due by now, serves it over HTTP
 * and keeps producing blocks as their timestamps pass. With a state file, a restart continues the same chain.
 */
import { CHAINS } from "../lib/chain/types.ts";
import { createDevnetChain, DEVNET_DEFAULTS, type DevnetChain } from "./chain.ts";
import { createProduction, type DevnetPace, naturalRate, type Production, runLive } from "./live.ts";
import { DEVNET_RUN_DEFAULTS, type DevnetRunOptions } from "./run-options.ts";
import { type DevnetServer, startDevnetServer } from "./server.ts";
import { type DevnetState, readDevnetState, writeDevnetState } from "./state.ts";

export { DEVNET_RUN_DEFAULTS, type DevnetRunOptions } from "./run-options.ts";

/** A running devnet. */
export interface RunningDevnet {
  chain: DevnetChain;
  server: DevnetServer;
  nodeUrl: string;
  explorerUrl: string;
  /** The state the chain was built from. */
  state: DevnetState;
  /** True when the chain was rebuilt from an existing state file. */
  resumed: boolean;
  /** Makes the blocks due by the clock now (the live timer does the same); returns how many. */
  catchUp(): number;
  close(): Promise<void>;
}

/** Chain time at the first start: the end of the history made ahead. */
const paceOf = (state: DevnetState, chain: DevnetChain): DevnetPace => ({
  wallAnchor: state.createdAt,
  chainAnchor: state.startTimestamp + Math.ceil(state.blocks / CHAINS) * chain.options.blockIntervalMs,
  speed: state.live / naturalRate(chain),
});

const PROGRESS_EVERY_MS = 3000;
const CHUNK = 1000;

/** Makes the blocks due by now in chunks, yielding to the event loop and logging progress every few seconds. */
async function catchUpToClock(
  production: Production,
  baseline: number,
  now: () => number,
  log: (line: string) => void,
): Promise<void> {
  const perBlockMs = production.chain.options.blockIntervalMs / CHAINS;
  let lastLog = performance.now();
  while (production.catchUp(now(), CHUNK) === CHUNK) {
    if (performance.now() - lastLog >= PROGRESS_EVERY_MS) {
      lastLog = performance.now();
      const due = Math.max(0, production.chainTime(now()) - production.pace.chainAnchor);
      log(
        `devnet catching up with the clock: ${production.made()} / ~${baseline + Math.round(due / perBlockMs)} blocks`,
      );
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Builds (or rebuilds) the chain, makes the blocks due by now, starts the server and live production, logs. */
export async function runDevnet(
  options: Partial<DevnetRunOptions> = {},
  log: (line: string) => void = console.log,
): Promise<RunningDevnet> {
  const o = { ...DEVNET_RUN_DEFAULTS, ...options };
  const now = o.now ?? Date.now;
  const saved = o.statePath ? readDevnetState(o.statePath) : undefined;
  const createdAt = now();
  const perChainSpan = Math.ceil(o.blocks / CHAINS) * DEVNET_DEFAULTS.blockIntervalMs;
  const state: DevnetState = saved ?? {
    format: 1,
    seed: o.seed,
    startTimestamp: o.startTimestamp ?? createdAt - perChainSpan,
    blocks: o.blocks,
    live: o.live,
    reorgEvery: o.reorgEvery,
    ...(o.reorgEvery > 0 ? { reorgDepth: o.reorgDepth } : {}),
    createdAt,
  };
  if (saved) {
    log(
      `devnet resumed from ${o.statePath} (seed ${saved.seed}, first started ${new Date(saved.createdAt).toISOString()})`,
    );
    const ignored = (["seed", "blocks", "live", "reorgEvery"] as const).filter(
      (k) => options[k] !== undefined && options[k] !== saved[k],
    );
    if (ignored.length > 0)
      log(
        `  the state file wins over the options: ${ignored.map((k) => `${k} ${saved[k]} (asked ${o[k]})`).join(", ")}`,
      );
  } else {
    if (o.statePath) writeDevnetState(o.statePath, state);
    log(
      `devnet created (seed ${state.seed}); ${o.statePath ? `state saved to ${o.statePath}` : "no state file: a restart makes a new chain"}`,
    );
  }

  const chain = createDevnetChain({ seed: state.seed, startTimestamp: state.startTimestamp });
  const production = createProduction(chain, {
    pace: paceOf(state, chain),
    reorgEvery: state.reorgEvery,
    reorgDepth: state.reorgDepth ?? 2,
    reorgAfter: state.blocks,
  });
  production.advance(state.blocks);
  if (state.live > 0) await catchUpToClock(production, state.blocks, now, log);
  const server = await startDevnetServer(chain, { host: o.host, port: o.port });
  const stopLive = runLive(production, { now });
  log(
    `devnet (simulated Alephium test double, seed ${state.seed}): ${production.made()} blocks, ${chain.tokens().length} tokens`,
  );
  log(`  node API:     ${server.nodeUrl}`);
  log(`  explorer API: ${server.explorerUrl}`);
  if (state.live > 0)
    log(
      `  live: ${state.live} blocks/s${state.reorgEvery > 0 ? `, reorg (depth 1..${state.reorgDepth ?? 2}) every ${state.reorgEvery} blocks` : ""}`,
    );
  return {
    chain,
    server,
    nodeUrl: server.nodeUrl,
    explorerUrl: server.explorerUrl,
    state,
    resumed: saved !== undefined,
    catchUp: () => production.catchUp(now()),
    async close() {
      stopLive();
      await server.close();
    },
  };
}
