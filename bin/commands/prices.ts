/** `prices`: price pairs, trades and candles (backfill). */
import type { Command } from "commander";
import { context, openPreparedStores, positiveInt } from "./shared.ts";

export function installPricesCommand(program: Command): void {
  const prices = program.command("prices").description("Price pairs, trades and candles");
  prices
    .command("backfill")
    .description(
      "Rebuild the trades, candles and spot price of configured pairs from the stored normalized events (idempotent); prints one JSON result per pair, progress on stderr",
    )
    .option("--pair <id...>", "pair ids (default: every pair of an on-chain source)")
    .option("--pending", "only pairs not rebuilt yet (added while no candles processor ran)")
    .action(async (opts: { pair?: string[]; pending?: boolean }) => {
      const ids = opts.pair?.map((v) => positiveInt("--pair")(v));
      const ctx = context();
      const [{ backfillPair }, { loadPricePairIds }] = await Promise.all([
        import("../../lib/prices/backfill.ts"),
        import("../../lib/prices/watched.ts"),
      ]);
      const stores = await openPreparedStores(ctx, "prices backfill");
      try {
        if (!stores.pg || !stores.ch) throw new Error("prices backfill needs the databases (DATABASES=on)");
        const pairs = await loadPricePairIds(stores.pg, ids, opts.pending === true);
        if (ids) {
          const missing = ids.filter((id) => !pairs.includes(id));
          if (missing.length > 0)
            throw new Error(`No configured pair of an on-chain source has id ${missing.join(", ")}`);
        }
        for (const [i, id] of pairs.entries()) {
          ctx.log.info({ pair_id: id, pair: i + 1, pairs: pairs.length }, "Backfilling pair.");
          const result = await backfillPair({ ch: stores.ch, pg: stores.pg, log: ctx.log }, { id });
          process.stdout.write(`${JSON.stringify(result)}\n`);
        }
      } finally {
        await stores.close();
      }
    });
}
