/** `trade-feed-pause`: pause a trade feed left active. */
import type { Command } from "commander";
import { context, openPreparedStores } from "./shared.ts";

export function installTradeFeedPauseCommand(program: Command): void {
  program
    .command("trade-feed-pause")
    .description(
      "Pause the trade watcher's feed left active by a watcher that stopped without pausing it (it holds the events watermark): writes what it recorded but did not write, then pauses it. Run it only where no watcher runs",
    )
    .action(async () => {
      const ctx = context();
      const { retireTradeFeed } = await import("../../pipeline/trade-watcher/feed.ts");
      const stores = await openPreparedStores(ctx, "trade-feed-pause");
      try {
        if (!stores.pg || !stores.ch) throw new Error("trade-feed-pause needs the databases (DATABASES=on)");
        const paused = await retireTradeFeed({
          pg: stores.pg,
          ch: stores.ch,
          log: ctx.log,
          metrics: ctx.metrics,
        });
        process.stdout.write(`${JSON.stringify({ paused })}\n`);
      } finally {
        await stores.close();
      }
    });
}
