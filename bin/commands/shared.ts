/**
 * Helpers the commands share: the process context (validated config, logger, metrics) and option parsers.
 * Light on purpose, like every command module: `--help`, option parsing and each command's start load only what
 * they use; a command loads the modules it runs on (stores, pipeline, API, ccxt …) when its action runs.
 */

import { InvalidArgumentError } from "commander";
import { type Config, loadConfig } from "../../lib/config.ts";
import { ConfigError } from "../../lib/errors.ts";
import { createLogger, type Logger } from "../../lib/logger.ts";
import { createMetrics, type Metrics } from "../../lib/metrics.ts";
import { startMetricsServer } from "../../lib/metrics-server.ts";
import type { Main } from "../../lib/run-process.ts";
import type { Stores } from "../../lib/stores/index.ts";
import type { TradeWatcher } from "../../pipeline/trade-watcher/watcher.ts";

export interface ProcessContext {
  config: Config;
  log: Logger;
  metrics: Metrics;
  /** True when the environment sets this key (even to ""): the demo's defaults apply only to keys left unset. */
  isSet(key: keyof Config): boolean;
}

/** Config from the environment; a bad value stops here with the key, the value and what is allowed. */
export function context(env: NodeJS.ProcessEnv = process.env): ProcessContext {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(
        `${error.message}\nRun \`alephium-indexer config\` for every key and its default.\n`,
      );
      process.exit(2);
    }
    throw error;
  }
  const set = new Set(Object.keys(env).filter((k) => env[k] !== undefined));
  return {
    config,
    log: createLogger({ level: config.LOG_LEVEL }),
    metrics: createMetrics(),
    isSet: (key) => set.has(key),
  };
}

/**
 * The stores of the configuration, opened for `command` and migrated (lib/stores and lib/migrate, loaded here
 * when a command runs).
 */
export async function openPreparedStores(ctx: ProcessContext, command: string): Promise<Stores> {
  const [{ openStores }, { prepareStores }] = await Promise.all([
    import("../../lib/stores/index.ts"),
    import("../../lib/migrate.ts"),
  ]);
  const stores = await openStores(ctx.config, ctx.log, { command });
  await prepareStores(stores, ctx.log);
  return stores;
}

/**
 * Wraps a pipeline process's main: with METRICS_PORT set, its own registry is served at /metrics (on HOST) while
 * it runs (lib/metrics-server.ts).
 */
export function withMetricsServer(ctx: ProcessContext, main: Main): Main {
  return async () => {
    const { METRICS_PORT: port, HOST: host } = ctx.config;
    const server = port > 0 ? await startMetricsServer(ctx.metrics.registry, host, port) : null;
    if (server) ctx.log.info({ port: server.port, host }, "Metrics served at /metrics.");
    try {
      const close = await main();
      return async () => {
        await close();
        await server?.close();
      };
    } catch (error) {
      await server?.close();
      throw error;
    }
  };
}

/** Normalized events the events sink of this process wrote (read from its metrics; a step behind). */
export function eventsWritten(metrics: Metrics): () => number {
  let written = 0;
  return () => {
    void metrics.pipelineRows.get().then((m) => {
      written = m.values.find((v) => v.labels.stage === "events-sink")?.value ?? written;
    });
    return written;
  };
}

/**
 * The trade watcher of this process (pipeline/trade-watcher): the exchange and EVM pool pollers and the feed they
 * hand trades to; null without databases or without a market source.
 */
export async function startProcessTradeWatcher(
  ctx: ProcessContext,
  stores: Stores,
): Promise<TradeWatcher | null> {
  if (!stores.pg || !stores.ch) return null;
  const { startTradeWatcher } = await import("../../pipeline/trade-watcher/watcher.ts");
  return startTradeWatcher({ pg: stores.pg, ch: stores.ch, log: ctx.log, metrics: ctx.metrics }, ctx.config);
}

export const positiveInt = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new InvalidArgumentError(`${name} must be a whole number, got ${value}`);
  return n;
};
