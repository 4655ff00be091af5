/**
 * The reindex worker: takes reindex jobs off the pg-boss queue and publishes the stored raw blocks of their
 * range on the blocks topic again, so every processor rebuilds its rows with the current decoders (the
 * sinks are idempotent: what did not change stays byte-identical).
 *
 * A job runs as a chain of queue messages, one per chunk (`JOBS_CHUNK_BLOCKS` blocks): each message's
 * handler resumes from the job's saved cursor, saves progress after every page, and at the end of its chunk
 * moves the job to the next chunk and sends that chunk's message in one transaction. So:
 * - a worker that dies mid-chunk leaves its message active; pg-boss expires it after `JOBS_EXPIRE_S` and
 *   retries it (with backoff), and the retry resumes from the last saved page;
 * - every write is fenced: a message claims its chunk only while the job is on that chunk, and each claim
 *   increments the job's `attempts`, which every later write of that handler must still find; so a retry of a
 *   chunk the job already left, or a handler still running after its chunk expired and was claimed again,
 *   writes nothing and stops;
 * - cancelling sets the job's state, which the next progress write sees; the worker then stops.
 * A chunk's message fails only when its handler throws; after `JOBS_RETRY_LIMIT` retries the job is `failed`
 * with that error.
 */
import type PgBoss from "pg-boss";
import { countMainRawBlocks, mainRawBlocks } from "../../lib/chain/raw-blocks.ts";
import { REINDEX_QUEUE, startBoss } from "../../lib/jobs/queue.ts";
import { createJobsRepo, type JobsRepo, type ReindexJob, type ReindexMessage } from "../../lib/jobs/repo.ts";
import { startTeam } from "../../lib/jobs/team.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import { KNOWN_DAPP_CONTRACTS } from "../../lib/tokens/known-contracts.ts";
import type { PipelineDeps } from "../deps.ts";
import { republish } from "../reprocess.ts";
import { createNftMetadataWorker } from "./nft-metadata.ts";
import { startWebhookDelivery } from "./webhook-delivery.ts";

export interface JobWorker {
  readonly boss: PgBoss;
  readonly repo: JobsRepo;
  stop(): Promise<void>;
}

/** Every contract of a dapp this deployment knows: the built-in list, operators' rows, learned children. */
export async function dappContracts(pg: Pg, dappId: string): Promise<string[]> {
  const rows = await pg.query<{ address: string }>(
    "dapp_contracts_all",
    `SELECT address FROM contracts WHERE dapp_id = $1
     UNION SELECT contract_address FROM decoder_contracts WHERE dapp_id = $1
     UNION SELECT address FROM normalize_contract_dapps WHERE dapp_id = $1`,
    [dappId],
  );
  const known = KNOWN_DAPP_CONTRACTS.filter((c) => c.dapp_id === dappId).map((c) => c.contract_address);
  return [...new Set([...known, ...rows.map((r) => r.address)])].sort();
}

/** The contracts a job is limited to, or undefined for every block of its range. */
async function scope(pg: Pg, job: ReindexJob): Promise<string[] | undefined> {
  if (job.contract_address) return [job.contract_address];
  if (job.dapp_id) return dappContracts(pg, job.dapp_id);
  return undefined;
}

export interface WorkerOptions {
  /** The database the worker's queue and writes go through (tests pass one they can cut, to crash it). */
  pg?: Pg;
}

/**
 * Starts a worker on the reindex queue with `JOBS_CONCURRENCY` handlers, the webhook deliveries
 * (`WEBHOOK_CONCURRENCY` handlers, pipeline/jobs/webhook-delivery.ts) on the same queue connection, and the NFT
 * metadata fetcher (`NFT_METADATA_CONCURRENCY` fetches at once, pipeline/jobs/nft-metadata.ts).
 */
export async function startJobWorker(deps: PipelineDeps, options: WorkerOptions = {}): Promise<JobWorker> {
  const pg = options.pg ?? deps.pg;
  const { config } = deps;
  const log = deps.log.child({ component: "jobs" });
  const boss = await startBoss(pg, config, log, { supervise: true });
  const repo = createJobsRepo(pg, config, async () => boss);
  let lastSeq = 0;
  const seqFor = (n: number) => {
    const first = Math.max(Date.now(), lastSeq + 1);
    lastSeq = first + n - 1;
    return first;
  };

  /** Runs one chunk; `claimed.attempt` is set once the chunk is claimed (the fencing token of its writes). */
  async function runChunk(message: ReindexMessage, claimed: { attempt: number | null }): Promise<void> {
    const { job_id: jobId, chunk } = message;
    const job = await repo.claim(jobId, chunk);
    claimed.attempt = job?.attempts ?? null;
    if (!job) {
      log.info({ job_id: jobId, chunk }, "Reindex message skipped: the job ended or moved past this chunk.");
      return;
    }
    const contracts = await scope(pg, job);
    if (job.blocks_total === null) {
      const total = await countMainRawBlocks(deps.ch, { fromTs: job.from_ts, toTs: job.to_ts, contracts });
      if (!(await repo.setTotal(jobId, job.attempts, total))) return;
    }
    log.info({ job_id: jobId, chunk, cursor: job.cursor, done: job.blocks_done }, "Reindex chunk started.");
    let budget = config.JOBS_CHUNK_BLOCKS;
    let more = false;
    const pages = mainRawBlocks(deps.ch, {
      fromTs: job.from_ts,
      toTs: job.to_ts,
      ...(job.cursor ? { after: job.cursor } : {}),
      contracts,
      page: Math.min(config.JOBS_PAGE_BLOCKS, budget),
    });
    for await (const rows of pages) {
      const last = rows.at(-1)!;
      await republish(deps, rows, seqFor(rows.length));
      const saved = await repo.progress(
        jobId,
        job.attempts,
        { ts: last.ts, chain: last.chain_index, height: last.height },
        rows.length,
      );
      if (!saved) {
        log.info({ job_id: jobId, chunk }, "Reindex stopped: the job was cancelled or moved on.");
        return;
      }
      budget -= rows.length;
      if (budget <= 0) {
        more = true;
        break;
      }
    }
    if (more) await repo.advance(jobId, job.attempts);
    else if (await repo.complete(jobId, job.attempts)) log.info({ job_id: jobId }, "Reindex job completed.");
  }

  const handler: PgBoss.WorkWithMetadataHandler<ReindexMessage> = async ([job]) => {
    if (!job) return;
    const claimed: { attempt: number | null } = { attempt: null };
    try {
      await runChunk(job.data, claimed);
    } catch (error) {
      const final = job.retryCount >= job.retryLimit;
      const text = error instanceof Error ? error.message : String(error);
      log.warn({ err: error, job_id: job.data.job_id, final }, "Reindex chunk failed.");
      if (claimed.attempt !== null)
        await repo.fail(job.data.job_id, claimed.attempt, text, final).catch(() => undefined);
      throw error;
    }
  };
  // One polling loop for JOBS_CONCURRENCY chunks at once (lib/jobs/team.ts).
  const team = startTeam<ReindexMessage>(
    boss,
    REINDEX_QUEUE,
    { size: config.JOBS_CONCURRENCY, pollingIntervalSeconds: config.JOBS_POLL_S, log },
    (job) => handler([job]),
  );
  // Outbound webhooks share the queue and this process (WEBHOOK_CONCURRENCY deliveries at once; lib/webhooks).
  const webhooks = await startWebhookDelivery({
    boss,
    pg,
    ch: deps.ch,
    config,
    log: deps.log,
    metrics: deps.metrics,
  });
  // NFT token and collection URIs are fetched here too, off the API's request path (pipeline/jobs/nft-metadata.ts).
  const nftMetadata = createNftMetadataWorker({ pg, config, log: deps.log, metrics: deps.metrics });
  nftMetadata.start();

  return {
    boss,
    repo,
    async stop() {
      await nftMetadata.stop();
      await webhooks.stop();
      await team.stop();
      await boss.stop({ graceful: true, close: false, timeout: 30_000 });
    },
  };
}
