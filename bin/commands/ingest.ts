/** `ingest`: follow the node and publish blocks on the bus (distributed mode). */
import type { Command } from "commander";
import { prepareStores } from "../../lib/migrate.ts";
import { runProcess } from "../../lib/run-process.ts";
import { openStores } from "../../lib/stores/index.ts";
import { createProgressReporter } from "../../pipeline/ingest/progress.ts";
import { createPipelineDeps, startPipeline } from "../../pipeline/runtime.ts";
import { context, withMetricsServer } from "./shared.ts";

export function installIngestCommand(program: Command): void {
  program
    .command("ingest")
    .description("Follow the node and publish blocks on the bus (distributed mode: one process)")
    .action(async () => {
      const ctx = context();
      await runProcess(
        "ingest",
        ctx.log,
        withMetricsServer(ctx, async () => {
          const stores = await openStores(ctx.config, ctx.log, { command: "ingest" });
          await prepareStores(stores, ctx.log);
          const reporter = createProgressReporter(ctx.log);
          const pipeline = await startPipeline(await createPipelineDeps(ctx, stores), {
            processors: [],
            ingest: true,
            onProgress: (p) => reporter.update(p),
          });
          return async () => {
            reporter.stop();
            await pipeline.stop();
            await stores.close();
          };
        }),
      );
    });
}
