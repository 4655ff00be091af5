/**
 * The trade watcher, wired in one place: the exchange poller (ccxt venues of EXCHANGE_SOURCES), the EVM pool
 * poller (EVM_RPC_URLS) and the feed they hand the trades of pairs with `enable_trades` to, which turns them into
 * market events (chain index 16) and moves the watermark's feed position (feed.ts). One watcher per deployment:
 * it is the only writer of market event ids.
 *
 *   venues ─► exchange-poller ─┐
 *                              ├─► feed ─► events (chain 16), market_trades, market_feed_progress
 *   EVM RPC ─► evm-poller ─────┘
 *
 * `createTradeWatcher` builds the parts from options (tests and benches pass their own); `startTradeWatcher`
 * builds them from the configuration and starts them, as `start` and `exchanges` do. The readers the API uses
 * (candles, spot, markets) stay in lib/prices.
 */
import type { Config } from "../../lib/config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import { rpcUrlsByChain } from "./evm.ts";
import { createEvmPoller, type EvmPoller, type EvmPollerOptions } from "./evm-poller.ts";
import { apiBaseUrls } from "./exchange.ts";
import { createExchangePoller, type ExchangePoller, type ExchangePollerOptions } from "./exchange-poller.ts";
import { createTradeFeed, retireTradeFeed, type TradeFeed, type TradeFeedOptions } from "./feed.ts";

export interface TradeWatcherDeps {
  pg: Pg;
  ch: Ch;
  log: Logger;
  metrics: Metrics;
}

export interface TradeWatcherOptions {
  /** The feed (market events); null: the pollers keep candles and spot only and hand no trade on. */
  feed: TradeFeedOptions | null;
  /** The exchange poller; null or no sources: none. */
  exchanges?: ExchangePollerOptions | null;
  /** The EVM pool poller; null or no RPC URL: none. */
  evm?: EvmPollerOptions | null;
}

export interface TradeWatcher {
  readonly feed: TradeFeed | null;
  readonly exchanges: ExchangePoller | null;
  readonly evm: EvmPoller | null;
  /**
   * Starts the feed (writing what a crash left, announcing it active), then, unless `poll` is false, each
   * poller's loop (tests and benches drive `pollOnce` themselves).
   */
  start(options?: { poll?: boolean }): Promise<void>;
  /** Stops the pollers' loops, then the feed (announcing it paused). */
  stop(): Promise<void>;
}

export function createTradeWatcher(deps: TradeWatcherDeps, options: TradeWatcherOptions): TradeWatcher {
  const feed = options.feed ? createTradeFeed(deps, options.feed) : null;
  const exchanges =
    options.exchanges && options.exchanges.sources.length > 0
      ? createExchangePoller({ ...deps, sink: feed }, options.exchanges)
      : null;
  const evm =
    options.evm && options.evm.rpcUrls.size > 0
      ? createEvmPoller({ ...deps, sink: feed }, options.evm)
      : null;
  return {
    feed,
    exchanges,
    evm,
    async start({ poll = true } = {}) {
      await feed?.start();
      if (!poll) return;
      evm?.start();
      exchanges?.start();
    },
    async stop() {
      await exchanges?.stop();
      await evm?.stop();
      await feed?.stop();
    },
  };
}

/** EXCHANGE_SOURCES, EXCHANGE_API_URLS and EVM_RPC_URLS as the pollers take them (the config checked each). */
export function marketSettings(config: Config): {
  sources: string[];
  apiUrls: Record<string, string>;
  rpcUrls: Map<number, string>;
} {
  return {
    sources: [...new Set(config.EXCHANGE_SOURCES)],
    apiUrls: apiBaseUrls(config.EXCHANGE_API_URLS),
    rpcUrls: rpcUrlsByChain(config.EVM_RPC_URLS),
  };
}

/** The watcher's options from the configuration (the settings named in docs/prices.md#trade-watcher). */
export function tradeWatcherOptions(config: Config): TradeWatcherOptions {
  const { sources, apiUrls, rpcUrls } = marketSettings(config);
  return {
    feed: { heartbeatMs: config.TRADE_FEED_HEARTBEAT_MS },
    exchanges: {
      sources,
      apiUrls,
      pollMs: config.EXCHANGE_POLL_MS,
      tradesPollMs: config.EXCHANGE_TRADES_POLL_MS,
      timeoutMs: config.EXCHANGE_TIMEOUT_MS,
      backfillDays: config.EXCHANGE_BACKFILL_DAYS,
    },
    evm: {
      rpcUrls,
      confirmations: config.EVM_CONFIRMATIONS,
      pollMs: config.EVM_POLL_MS,
      timeoutMs: config.EVM_TIMEOUT_MS,
      blockRange: config.EVM_BLOCK_RANGE,
      backfillBlocks: config.EVM_BACKFILL_BLOCKS,
    },
  };
}

/**
 * Starts the trade watcher of the configuration, or, where no market source is configured, retires a feed a
 * crashed watcher left active (so it does not hold the events watermark) and returns null.
 */
export async function startTradeWatcher(
  deps: TradeWatcherDeps,
  config: Config,
): Promise<TradeWatcher | null> {
  const options = tradeWatcherOptions(config);
  if (options.exchanges?.sources.length === 0 && options.evm?.rpcUrls.size === 0) {
    if (await retireTradeFeed(deps)) deps.log.info("Trade watcher feed paused (no market source).");
    return null;
  }
  const watcher = createTradeWatcher(deps, options);
  await watcher.start();
  return watcher;
}
