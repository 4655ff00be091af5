/**
 * Following a reindex job from a terminal (`reprocess`): a progress bar on a TTY (cli-progress), otherwise a
 * line on stderr every few seconds; resolves with the job once it ended.
 */
import cliProgress from "cli-progress";
import { sleep } from "../retry.ts";
import type { JobsService, JobView } from "./service.ts";

const ENDED = new Set(["completed", "failed", "cancelled"]);

export interface FollowOptions {
  stream?: NodeJS.WriteStream;
  pollMs?: number;
  /** Printed once while the job is still queued after this long: nobody is working the queue. */
  queuedHintMs?: number;
  signal?: AbortSignal;
}

export async function followJob(
  jobs: JobsService,
  jobId: string,
  options: FollowOptions = {},
): Promise<JobView> {
  const stream = options.stream ?? process.stderr;
  const pollMs = options.pollMs ?? 500;
  const started = Date.now();
  let hinted = false;
  let lastLine = 0;
  let bar: cliProgress.SingleBar | null = null;
  try {
    for (;;) {
      const job = await jobs.get(jobId);
      if (!job) throw new Error(`reindex job ${jobId} disappeared`);
      if (ENDED.has(job.state)) {
        bar?.update(job.blocks_done, { state: job.state, eta: "0s" });
        return job;
      }
      if (job.state === "queued" && !hinted && Date.now() - started >= (options.queuedHintMs ?? 5_000)) {
        hinted = true;
        stream.write(
          `reindex job ${jobId} is still queued: job workers run in \`npm start\` and \`npm run process -- jobs\`\n`,
        );
      }
      const eta = job.progress.eta_seconds === null ? "…" : `${job.progress.eta_seconds}s`;
      if (stream.isTTY && job.blocks_total !== null) {
        if (!bar) {
          bar = new cliProgress.SingleBar(
            {
              stream,
              format: "reindex |{bar}| {value}/{total} blocks | {state} | ETA {eta}",
              hideCursor: false,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(Math.max(1, job.blocks_total), 0, { state: job.state, eta });
        }
        bar.update(job.blocks_done, { state: job.state, eta });
      } else if (!stream.isTTY && Date.now() - lastLine >= 5_000) {
        lastLine = Date.now();
        stream.write(
          `reindex ${job.state}: ${job.blocks_done}/${job.blocks_total ?? "?"} blocks${job.progress.percent === null ? "" : ` (${job.progress.percent}%)`}, ETA ${eta}\n`,
        );
      }
      if (options.signal?.aborted) return job;
      await sleep(pollMs);
    }
  } finally {
    bar?.stop();
  }
}
