/** `exchanges`: the exchange and EVM pool pollers and the trade watcher. */
import type { Command } from "commander";
import { runProcess } from "../../lib/run-process.ts";
import { openStores } from "../../lib/stores/index.ts";
import { prepareStores } from "../../lib/stores/prepare.ts";
import { context, startMarkets, withMetricsServer } from "./shared.ts";

export function installExchangesCommand(program: Command): void {
  program
    .command("exchanges")
    .description(
      "Poll the exchanges of EXCHANGE_SOURCES (markets, 1m candles backfilled from listing, spot prices, fills) and the EVM pools of EVM_RPC_URLS (swaps, reserves), and run the trade watcher: fills and swaps of pairs with enable_trades become events (one watcher per deployment)",
    )
    .action(async () => {
      const ctx = context();
      await runProcess(
        "exchanges",
        ctx.log,
        withMetricsServer(ctx, async () => {
          const stores = await openStores(ctx.config, ctx.log, { command: "exchanges" });
          await prepareStores(stores, ctx.log);
          if (!stores.pg || !stores.ch) throw new Error("exchanges needs the databases (DATABASES=on)");
          const poller = await startMarkets(ctx, stores);
          if (!poller) ctx.log.warn("EXCHANGE_SOURCES and EVM_RPC_URLS are empty: no market source to poll.");
          return async () => {
            await poller?.stop();
            await stores.close();
          };
        }),
      );
    });
}
