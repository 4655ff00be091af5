/** `reprocess`: create a reindex job and follow it. */
import { type Command, InvalidArgumentError } from "commander";
import type { JobWorker } from "../../pipeline/jobs/worker.ts";
import { PROCESSOR_NAMES } from "../../pipeline/processor-names.ts";
import type { RunningPipeline } from "../../pipeline/runtime.ts";
import { context, openPreparedStores, positiveInt } from "./shared.ts";

export function installReprocessCommand(program: Command): void {
  program
    .command("reprocess")
    .description(
      "Create a reindex job: publish the stored raw blocks of a time range again (a new decoder reaches history without the node). Follows the job with a progress bar on stderr and prints it as JSON on stdout when it ends; exits 1 unless it completed",
    )
    .requiredOption(
      "--from <ms>",
      "start of the block-time range, Unix ms (inclusive)",
      positiveInt("--from"),
    )
    .requiredOption("--to <ms>", "end of the block-time range, Unix ms (inclusive)", positiveInt("--to"))
    .option("--dapp <id>", "only blocks that mention a contract of this dapp")
    .option("--contract <address>", "only blocks that mention this contract", (value: string) => {
      if (!/^[1-9A-HJ-NP-Za-km-z]{20,100}$/.test(value))
        throw new InvalidArgumentError(`--contract must be a base58 contract address, got ${value}`);
      return value;
    })
    .option(
      "--wait",
      "run the job in this process (a worker and, on the in-process bus, the processors) instead of waiting for the workers of `start` or `process jobs`; always so on the embedded stores",
    )
    .option("--no-follow", "print the queued job as JSON and exit")
    .action(
      async (opts: {
        from: number;
        to: number;
        dapp?: string;
        contract?: string;
        wait?: boolean;
        follow: boolean;
      }) => {
        const ctx = context();
        const { createJobsService } = await import("../../lib/jobs/service.ts");
        const stores = await openPreparedStores(ctx, "reprocess");
        if (!stores.pg || !stores.ch) {
          await stores.close();
          throw new Error("reprocess needs the databases (DATABASES=on)");
        }
        const jobs = createJobsService(stores.pg, ctx.config, ctx.log);
        let worker: JobWorker | null = null;
        let pipeline: RunningPipeline | null = null;
        try {
          const job = await jobs.create({
            fromTs: opts.from,
            toTs: opts.to,
            dappId: opts.dapp ?? null,
            contractAddress: opts.contract ?? null,
            createdBy: "cli",
          });
          if (!opts.follow) {
            process.stdout.write(`${JSON.stringify(job)}\n`);
            return;
          }
          // Following loads what runs or watches the job; `--no-follow` (and a refused job) needs none of it.
          const [{ followJob }, { startJobWorker }, { createPipelineDeps, startPipeline }] =
            await Promise.all([
              import("../../lib/jobs/follow.ts"),
              import("../../pipeline/jobs/worker.ts"),
              import("../../pipeline/runtime.ts"),
            ]);
          const deps = await createPipelineDeps(ctx, stores);
          // Embedded stores belong to this process alone: nobody else can work the queue, so it runs here.
          if (opts.wait || deps.bus.kind === "memory") {
            // The in-process bus has no consumers of its own: run the processors here, but the raw sink (raw blocks
            // are what is republished) and the registry (it asks the node, which reprocessing does without).
            const processors = PROCESSOR_NAMES.filter((name) => name !== "raw-sink" && name !== "registry");
            pipeline = await startPipeline(deps, {
              processors: deps.bus.kind === "memory" ? processors : [],
              ingest: false,
            });
            worker = await startJobWorker(deps);
          }
          const ended = await followJob(jobs, job.job_id);
          process.stdout.write(`${JSON.stringify(ended)}\n`);
          if (ended.state !== "completed") process.exitCode = 1;
        } finally {
          await worker?.stop();
          await pipeline?.stop();
          await jobs.close();
          await stores.close();
        }
      },
    );
}
