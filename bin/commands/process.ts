/** `process <name>`: one processor as its own consumer group, or the job worker. */
import { Argument, type Command } from "commander";
import { runProcess } from "../../lib/run-process.ts";
import { PROCESSOR_NAMES, type ProcessorName } from "../../pipeline/processor-names.ts";
import { context, openPreparedStores, withMetricsServer } from "./shared.ts";

export function installProcessCommand(program: Command): void {
  program
    .command("process")
    .description(
      "Run one processor as its own consumer group (distributed mode), or `jobs`: a job worker (reindex jobs and webhook deliveries)",
    )
    .addArgument(new Argument("<name>", "processor, or jobs").choices([...PROCESSOR_NAMES, "jobs"]))
    .action(async (name: ProcessorName | "jobs") => {
      const ctx = context();
      if (name === "jobs") {
        await runProcess(
          "jobs",
          ctx.log,
          withMetricsServer(ctx, async () => {
            const [{ startJobWorker }, { createPipelineDeps }] = await Promise.all([
              import("../../pipeline/jobs/worker.ts"),
              import("../../pipeline/runtime.ts"),
            ]);
            const stores = await openPreparedStores(ctx, "process jobs");
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
          const { createPipelineDeps, startPipeline } = await import("../../pipeline/runtime.ts");
          const stores = await openPreparedStores(ctx, "process");
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
