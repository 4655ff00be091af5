/** `figures`: token market figures and TVL (backfill). */
import type { Command } from "commander";
import { context, openPreparedStores } from "./shared.ts";

export function installFiguresCommand(program: Command): void {
  const figures = program.command("figures").description("Token market figures and TVL");
  figures
    .command("backfill")
    .description(
      "Rebuild the facts behind token market figures (burned and locked amounts, pool reserves) from the stored normalized events, then recompute the figures (idempotent); prints one JSON result, progress on stderr",
    )
    .option(
      "--rebuild",
      "empty the facts first (after removing a burn address); run it while no figures processor runs",
    )
    .action(async (opts: { rebuild?: boolean }) => {
      const ctx = context();
      const [{ backfillFigures }, { factContext }, { refreshFigures, truncateFacts }] = await Promise.all([
        import("../../lib/figures/backfill.ts"),
        import("../../lib/figures/facts.ts"),
        import("../../lib/figures/store.ts"),
      ]);
      const stores = await openPreparedStores(ctx, "figures backfill");
      try {
        if (!stores.pg || !stores.ch) throw new Error("figures backfill needs the databases (DATABASES=on)");
        const deps = { ch: stores.ch, pg: stores.pg, log: ctx.log };
        if (opts.rebuild) await truncateFacts(stores.ch);
        const facts = await backfillFigures(deps, factContext(ctx.config));
        const refreshed = await refreshFigures(deps, {
          now: Date.now(),
          maxPriceAgeMs: ctx.config.FIGURES_MAX_PRICE_AGE_MS,
        });
        process.stdout.write(`${JSON.stringify({ ...facts, ...refreshed })}\n`);
      } finally {
        await stores.close();
      }
    });
}
