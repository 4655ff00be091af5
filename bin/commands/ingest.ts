/** `ingest`: follow the node and publish blocks on the bus (distributed mode). */
import type { Command } from "commander";
import { runProcess } from "../../lib/run-process.ts";
import { context, openPreparedStores, withMetricsServer } from "./shared.ts";

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
          const [{ createProgressReporter }, { createPipelineDeps, startPipeline }] = await Promise.all([
            import("../../pipeline/ingest/progress.ts"),
            import("../../pipeline/runtime.ts"),
          ]);
          const stores = await openPreparedStores(ctx, "ingest");
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
