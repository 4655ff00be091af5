/**
 * Reindex jobs as the API, the CLI and the bot create and read them: input checks (a range, at most one of a
 * dapp and a contract, a dapp that exists), the presentation with progress and ETA, and the queue's lazy
 * start (pg-boss without maintenance: workers do that).
 */
import type PgBoss from "pg-boss";
import { AppError, badRequest } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { Pg } from "../stores/postgres.ts";
import { type QueueConfig, startBoss } from "./queue.ts";
import { createJobsRepo, type JobsRepo, type ListQuery, type NewJob, type ReindexJob } from "./repo.ts";

export interface JobView extends Omit<ReindexJob, "chunk" | "cursor"> {
  /** Last block published: its time (ms), chain and height; null before the first page. */
  cursor: ReindexJob["cursor"];
  progress: {
    /** 0-100, null until the total is counted. */
    percent: number | null;
    /** Seconds left at the rate so far; null until there is a rate, 0 when ended. */
    eta_seconds: number | null;
  };
}

export function presentJob(job: ReindexJob, now = Date.now()): JobView {
  const { chunk: _chunk, ...rest } = job;
  const total = job.blocks_total;
  const percent = total === null ? null : total === 0 ? 100 : Math.min(100, (job.blocks_done / total) * 100);
  let eta: number | null = null;
  if (job.state === "completed" || job.state === "failed" || job.state === "cancelled") eta = 0;
  else if (total !== null && job.started_at && job.blocks_done > 0) {
    const elapsed = (now - Date.parse(job.started_at)) / 1000;
    eta = Math.max(0, Math.round(((total - job.blocks_done) * elapsed) / job.blocks_done));
  }
  return {
    ...rest,
    progress: { percent: percent === null ? null : Math.round(percent * 10) / 10, eta_seconds: eta },
  };
}

export interface JobsService {
  readonly repo: JobsRepo;
  create(input: NewJob): Promise<JobView>;
  get(jobId: string): Promise<JobView | null>;
  list(query: ListQuery): Promise<{ jobs: JobView[]; next: string | null }>;
  cancel(jobId: string): Promise<JobView>;
  /** The queue (started on first use, without maintenance), shared by the webhooks of this process. */
  boss(): Promise<PgBoss>;
  close(): Promise<void>;
}

export function createJobsService(pg: Pg, config: QueueConfig, log: Logger): JobsService {
  let boss: Promise<PgBoss> | null = null;
  const getBoss = () => {
    boss ??= startBoss(pg, config, log, { supervise: false }).catch((error: unknown) => {
      boss = null;
      throw error;
    });
    return boss;
  };
  const repo = createJobsRepo(pg, config, getBoss);
  return {
    repo,
    async create(input) {
      if (input.toTs < input.fromTs) {
        throw badRequest(`to (${input.toTs}) is before from (${input.fromTs})`, { field: "to" });
      }
      if (input.dappId && input.contractAddress) {
        throw badRequest("give dapp_id or contract_address, not both", { field: "contract_address" });
      }
      if (input.dappId) {
        const known = await pg.query("dapp_exists", "SELECT 1 FROM dapps WHERE id = $1", [input.dappId]);
        if (known.length === 0) {
          throw new AppError("unknown_dapp", `dapp_id ${JSON.stringify(input.dappId)} is not a known dapp`, {
            status: 400,
            details: { field: "dapp_id" },
          });
        }
      }
      return presentJob(await repo.create(input));
    },
    async get(jobId) {
      const job = await repo.get(jobId);
      return job ? presentJob(job) : null;
    },
    async list(query) {
      const page = await repo.list(query);
      return { jobs: page.jobs.map((j) => presentJob(j)), next: page.next };
    },
    cancel: async (jobId) => presentJob(await repo.cancel(jobId)),
    boss: getBoss,
    async close() {
      const b = boss;
      boss = null;
      if (b) await (await b.catch(() => null))?.stop({ graceful: true, close: false });
    },
  };
}
