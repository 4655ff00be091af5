/** `process <name>`: one processor as its own consumer group, or the job worker. */
import { Argument, type Command } from "commander";
import { prepareStores } from "../../lib/migrate.ts";
import { runProcess } from "../../lib/run-process.ts";
import { openStores } from "../../lib/stores/index.ts";
import { startJobWorker } from "../../pipeline/jobs/worker.ts";
import { createPipelineDeps, PROCESSORS, type ProcessorName, startPipeline } from "../../pipeline/runtime.ts";
import { context, withMetricsServer } from "./shared.ts";

export function installProcessCommand(program: Command): void {
  program
    .command("process")
    .description(
      "Run one processor as its own consumer group (distributed mode), or `jobs`: a job worker (reindex jobs and webhook deliveries)",
    )
    .addArgument(new Argument("<name>", "processor, or jobs").choices([...Object.keys(PROCESSORS), "jobs"]))
    .action(async (name: ProcessorName | "jobs") => {
      const ctx = context();
      if (name === "jobs") {
        await runProcess(
          "jobs",
          ctx.log,
          withMetricsServer(ctx, async () => {
            const stores = await openStores(ctx.config, ctx.log, { command: "process jobs" });
            await prepareStores(stores, ctx.log);
            if (!stores.pg) {
              await stores.close();
              throw new Error("reindex jobs need the databases (DATABASES=on)");
            }
            const worker = await startJobWorker(await createPipelineDeps(ctx, stores));
            ctx.log.info(
              { concurrency: ctx.config.JOBS_CONCURRENCY, webhooks: ctx.config.WEBHOOK_CONCURRENCY },
              "Job worker started (reindex jobs and webhook deliveries).",
            );
            return async () => {
              await worker.stop();
              await stores.close();
            };
          }),
        );
        return;
      }
      await runProcess(
        name,
        ctx.log,
        withMetricsServer(ctx, async () => {
          const stores = await openStores(ctx.config, ctx.log, { command: "process" });
          await prepareStores(stores, ctx.log);
          const pipeline = await startPipeline(await createPipelineDeps(ctx, stores), {
            processors: [name],
            ingest: false,
          });
          return async () => {
            await pipeline.stop();
            await stores.close();
          };
        }),
      );
    });
}
