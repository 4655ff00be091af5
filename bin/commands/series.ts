/** `series`: series history (backfill). */
import { type Command, InvalidArgumentError } from "commander";
import { TIMESERIES } from "../../lib/series/definitions/index.ts";
import { context, openPreparedStores } from "./shared.ts";

export function installSeriesCommand(program: Command): void {
  const series = program
    .command("series")
    .description("Series (timeseries of the normalized events and balances)");
  series
    .command("backfill")
    .description(
      "Build series history from the stored normalized events (and, for token-holders, the stored raw blocks; stop the holders processor meanwhile), idempotent: facts, points at every scale, segments, archive pages; progress on stderr, one JSON result on stdout",
    )
    .option("--series <id...>", `series ids (default: all): ${TIMESERIES.map((d) => d.id).join(", ")}`)
    .action(async (opts: { series?: string[] }) => {
      const unknown = (opts.series ?? []).filter((id) => !TIMESERIES.some((d) => d.id === id));
      if (unknown.length > 0) throw new InvalidArgumentError(`Unknown series ${unknown.join(", ")}`);
      const defs = opts.series ? TIMESERIES.filter((d) => opts.series!.includes(d.id)) : TIMESERIES;
      const fromEvents = defs.filter((d) => (d.source ?? "events") === "events");
      const ctx = context();
      const [
        { backfillSeries },
        { backfillHolders },
        { createSeriesDeps },
        { tryLock },
        { CONSUMER_GROUPS },
        { processorLockName },
      ] = await Promise.all([
        import("../../lib/series/backfill.ts"),
        import("../../lib/series/holders.ts"),
        import("../../lib/series/settings.ts"),
        import("../../lib/stores/pg-lock.ts"),
        import("../../pipeline/messages.ts"),
        import("../../pipeline/processor.ts"),
      ]);
      const stores = await openPreparedStores(ctx, "series backfill");
      const pg = stores.pg;
      if (!stores.ch || !pg) {
        await stores.close();
        throw new Error("series backfill needs the databases (DATABASES=on)");
      }
      const deps = createSeriesDeps({ ch: stores.ch, config: ctx.config, log: ctx.log });
      try {
        const events =
          fromEvents.length > 0
            ? await backfillSeries(deps, fromEvents, (p) =>
                process.stderr.write(
                  `series backfill: day ${p.day}/${p.days}, ${p.events} events, ${p.facts} facts\n`,
                ),
              )
            : { series: [], events: 0, facts: 0, days: 0 };
        const result: Record<string, unknown> = { ...events };
        if (defs.some((d) => d.source === "balances")) {
          result.series = defs.map((d) => d.id);
          // The holders pass reads the crossings its previous pass wrote: never beside the holders-recompute replicas
          // (each holds the group's lock shared while it runs).
          const lockName = processorLockName(CONSUMER_GROUPS.holdersRecompute);
          const lock = await tryLock(pg, lockName);
          if (!lock)
            throw new Error(
              `the holders-recompute processor is running (its replicas hold the lock ${lockName}): stop them, then run this backfill`,
            );
          try {
            result.holders = await backfillHolders(deps, (p) =>
              process.stderr.write(
                `series backfill: token-holders, block ${p.blocks}/${p.total}, ${p.changes} holder changes\n`,
              ),
            );
          } finally {
            await lock.release();
          }
        }
        process.stdout.write(`${JSON.stringify(result)}\n`);
      } finally {
        deps.objects.close();
        await stores.close();
      }
    });
}
