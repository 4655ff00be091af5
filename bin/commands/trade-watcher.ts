/**
 * `trade-watcher` (also `exchanges`, its first name): the trade watcher process, which runs the exchange and EVM
 * pool pollers and the feed they hand trades to (pipeline/trade-watcher).
 */
import type { Command } from "commander";
import { runProcess } from "../../lib/run-process.ts";
import { context, openPreparedStores, startProcessTradeWatcher, withMetricsServer } from "./shared.ts";

export function installTradeWatcherCommand(program: Command): void {
  program
    .command("trade-watcher")
    .alias("exchanges")
    .description(
      "Run the trade watcher: poll the exchanges of EXCHANGE_SOURCES (markets, 1m candles backfilled from listing, spot prices, fills) and the EVM pools of EVM_RPC_URLS (swaps, reserves); fills and swaps of pairs with enable_trades become events (one per deployment; `exchanges` is the same command)",
    )
    .action(async () => {
      const ctx = context();
      await runProcess(
        "trade-watcher",
        ctx.log,
        withMetricsServer(ctx, async () => {
          const stores = await openPreparedStores(ctx, "trade-watcher");
          if (!stores.pg || !stores.ch) throw new Error("trade-watcher needs the databases (DATABASES=on)");
          const watcher = await startProcessTradeWatcher(ctx, stores);
          if (!watcher)
            ctx.log.warn("EXCHANGE_SOURCES and EVM_RPC_URLS are empty: no market source to poll.");
          return async () => {
            await watcher?.stop();
            await stores.close();
          };
        }),
      );
    });
}
