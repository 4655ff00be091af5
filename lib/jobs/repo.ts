/**
 * Reindex jobs as admins see them (`reindex_jobs`, postgres/0015): created here together with their first
 * queue message (one transaction, so a job never exists without its message or the reverse), listed, shown,
 * cancelled; and the worker's writes, each fenced by the job's `chunk` (see pipeline/jobs/worker.ts).
 */

import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import type { Config } from "../config.ts";
import { createdPage } from "../created-cursor.ts";
import { AppError, notFound } from "../errors.ts";
import type { Pg, PgQueryable } from "../stores/postgres.ts";
import { bossExecutor, REINDEX_QUEUE } from "./queue.ts";

export const JOB_STATES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface ReindexJob {
  job_id: string;
  state: JobState;
  /** Range of block time, Unix ms, both ends inclusive. */
  from_ts: number;
  to_ts: number;
  dapp_id: string | null;
  contract_address: string | null;
  blocks_total: number | null;
  blocks_done: number;
  /** Last block published (the resume point), null before the first page. */
  cursor: { ts: number; chain: number; height: number } | null;
  chunk: number;
  attempts: number;
  error: string | null;
  created_by: string;
  created_at: string;
  started_at: string | null;
  updated_at: string;
  finished_at: string | null;
}

/** The message a reindex queue job carries: which job, and which chunk of it (the fencing token). */
export interface ReindexMessage {
  job_id: string;
  chunk: number;
}

interface Row {
  job_id: string;
  state: JobState;
  from_ts: string;
  to_ts: string;
  dapp_id: string | null;
  contract_address: string | null;
  blocks_total: string | null;
  blocks_done: string;
  cursor_ts: string | null;
  cursor_chain: number | null;
  cursor_height: string | null;
  chunk: number;
  attempts: number;
  error: string | null;
  created_by: string;
  created_at: Date | string;
  started_at: Date | string | null;
  updated_at: Date | string;
  finished_at: Date | string | null;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function toJob(r: Row): ReindexJob {
  return {
    job_id: r.job_id,
    state: r.state,
    from_ts: Number(r.from_ts),
    to_ts: Number(r.to_ts),
    dapp_id: r.dapp_id,
    contract_address: r.contract_address,
    blocks_total: r.blocks_total === null ? null : Number(r.blocks_total),
    blocks_done: Number(r.blocks_done),
    cursor:
      r.cursor_ts === null
        ? null
        : { ts: Number(r.cursor_ts), chain: Number(r.cursor_chain), height: Number(r.cursor_height) },
    chunk: r.chunk,
    attempts: r.attempts,
    error: r.error,
    created_by: r.created_by,
    created_at: iso(r.created_at)!,
    started_at: iso(r.started_at),
    updated_at: iso(r.updated_at)!,
    finished_at: iso(r.finished_at),
  };
}

const COLUMNS = `job_id, state, from_ts, to_ts, dapp_id, contract_address, blocks_total, blocks_done, cursor_ts,
  cursor_chain, cursor_height, chunk, attempts, error, created_by, created_at, started_at, updated_at, finished_at`;

export interface NewJob {
  fromTs: number;
  toTs: number;
  dappId?: string | null;
  contractAddress?: string | null;
  /** Who asked: `key:<user id>`, `cli`, `telegram:<user id>`. */
  createdBy: string;
}

export interface ListQuery {
  state?: JobState;
  /** Created at or after / before, Unix ms. */
  since?: number;
  until?: number;
  limit: number;
  /** Opaque cursor from the previous page (`next`). */
  cursor?: string;
}

/** Options of each queue message: retries with exponential backoff, expiry of a dead worker's chunk. */
export function sendOptions(
  config: Pick<Config, "JOBS_EXPIRE_S" | "JOBS_RETRY_DELAY_S" | "JOBS_RETRY_LIMIT">,
): PgBoss.SendOptions {
  return {
    retryLimit: config.JOBS_RETRY_LIMIT,
    retryDelay: config.JOBS_RETRY_DELAY_S,
    retryBackoff: true,
    expireInSeconds: config.JOBS_EXPIRE_S,
  };
}

export interface JobsRepo {
  /** Creates a job and its first queue message; 409 `job_overlaps` when an open job's range overlaps. */
  create(job: NewJob): Promise<ReindexJob>;
  get(jobId: string): Promise<ReindexJob | null>;
  list(query: ListQuery): Promise<{ jobs: ReindexJob[]; next: string | null }>;
  /** Cancels a queued or running job; 404 unknown, 409 `job_finished` when it already ended. */
  cancel(jobId: string): Promise<ReindexJob>;
  // The worker's writes, each fenced by the attempt `claim` returned (the job's `attempts` then): they change
  // nothing, and say so, once the job was cancelled, moved to another chunk or claimed by a later attempt.
  /** Starts an attempt at the chunk; null when the job is finished, cancelled or on another chunk. */
  claim(jobId: string, chunk: number): Promise<ReindexJob | null>;
  setTotal(jobId: string, attempt: number, total: number): Promise<boolean>;
  progress(
    jobId: string,
    attempt: number,
    cursor: { ts: number; chain: number; height: number },
    blocks: number,
  ): Promise<boolean>;
  complete(jobId: string, attempt: number): Promise<boolean>;
  /** Moves the job to its next chunk and sends that chunk's message, in one transaction. */
  advance(jobId: string, attempt: number): Promise<boolean>;
  /** Records an attempt's error; `final` marks the job failed. */
  fail(jobId: string, attempt: number, error: string, final: boolean): Promise<boolean>;
}

export function createJobsRepo(
  pg: Pg,
  config: Pick<Config, "JOBS_EXPIRE_S" | "JOBS_RETRY_DELAY_S" | "JOBS_RETRY_LIMIT">,
  boss: () => Promise<PgBoss>,
): JobsRepo {
  const one = async (label: string, tx: PgQueryable, sql: string, params: (string | number | null)[]) =>
    (await tx.query<Row>(label, sql, params))[0];
  const fenced = async (label: string, sql: string, params: (string | number | null)[]) =>
    (await pg.query(label, sql, params)).length > 0;

  return {
    async create(job) {
      const b = await boss();
      const jobId = randomUUID();
      const row = await pg.transaction(async (tx) => {
        // Creates from every API process and CLI take turns, so two overlapping jobs cannot both pass the check.
        await tx.query("reindex_jobs_lock", "SELECT pg_advisory_xact_lock(8738, hashtext('reindex_jobs'))");
        const open = await tx.query<{ job_id: string; from_ts: string; to_ts: string; state: string }>(
          "reindex_jobs_overlap",
          `SELECT job_id, from_ts, to_ts, state FROM reindex_jobs
            WHERE state IN ('queued', 'running') AND from_ts <= $2 AND to_ts >= $1
            ORDER BY created_at LIMIT 1`,
          [job.fromTs, job.toTs],
        );
        const other = open[0];
        if (other) {
          throw new AppError(
            "job_overlaps",
            `Job ${other.job_id} (${other.state}) already covers part of ${job.fromTs}..${job.toTs} (its range ${other.from_ts}..${other.to_ts}); cancel it or wait for it to end.`,
            { status: 409, details: { job_id: other.job_id } },
          );
        }
        const inserted = await one(
          "reindex_jobs_insert",
          tx,
          `INSERT INTO reindex_jobs (job_id, state, from_ts, to_ts, dapp_id, contract_address, created_by)
           VALUES ($1, 'queued', $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
          [jobId, job.fromTs, job.toTs, job.dappId ?? null, job.contractAddress ?? null, job.createdBy],
        );
        const message: ReindexMessage = { job_id: jobId, chunk: 0 };
        await b.send(
          REINDEX_QUEUE,
          message as unknown as object,
          {
            ...sendOptions(config),
            db: bossExecutor(tx),
          } as PgBoss.SendOptions,
        );
        return inserted;
      });
      return toJob(row!);
    },

    async get(jobId) {
      const row = await one("reindex_jobs_get", pg, `SELECT ${COLUMNS} FROM reindex_jobs WHERE job_id = $1`, [
        jobId,
      ]);
      return row ? toJob(row) : null;
    },

    async list(query) {
      const filters: [string, string | number][] = [];
      if (query.state) filters.push(["state = $?", query.state]);
      if (query.since !== undefined) filters.push(["created_at >= to_timestamp($? / 1000.0)", query.since]);
      if (query.until !== undefined) filters.push(["created_at < to_timestamp($? / 1000.0)", query.until]);
      const page = await createdPage(pg, {
        name: "reindex_jobs_list",
        table: "reindex_jobs",
        columns: COLUMNS,
        idColumn: "job_id",
        filters,
        limit: query.limit,
        cursor: query.cursor,
        toItem: toJob,
        key: (job) => [job.created_at, job.job_id],
      });
      return { jobs: page.items, next: page.next };
    },

    async cancel(jobId) {
      const row = await one(
        "reindex_jobs_cancel",
        pg,
        `UPDATE reindex_jobs SET state = 'cancelled', finished_at = now(), updated_at = now()
          WHERE job_id = $1 AND state IN ('queued', 'running') RETURNING ${COLUMNS}`,
        [jobId],
      );
      if (row) return toJob(row);
      const existing = await this.get(jobId);
      if (!existing) throw notFound(`Reindex job ${jobId} not found.`, { job_id: jobId });
      throw new AppError("job_finished", `Job ${jobId} already ended (${existing.state}).`, { status: 409 });
    },

    async claim(jobId, chunk) {
      const row = await one(
        "reindex_jobs_claim",
        pg,
        `UPDATE reindex_jobs SET state = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now()),
                updated_at = now()
          WHERE job_id = $1 AND chunk = $2 AND state IN ('queued', 'running') RETURNING ${COLUMNS}`,
        [jobId, chunk],
      );
      return row ? toJob(row) : null;
    },

    setTotal: (jobId, attempt, total) =>
      fenced(
        "reindex_jobs_total",
        `UPDATE reindex_jobs SET blocks_total = $3, updated_at = now()
          WHERE job_id = $1 AND attempts = $2 AND state = 'running' RETURNING 1`,
        [jobId, attempt, total],
      ),

    progress: (jobId, attempt, cursor, blocks) =>
      fenced(
        "reindex_jobs_progress",
        `UPDATE reindex_jobs SET cursor_ts = $3, cursor_chain = $4, cursor_height = $5,
                blocks_done = blocks_done + $6, error = NULL, updated_at = now()
          WHERE job_id = $1 AND attempts = $2 AND state = 'running' RETURNING 1`,
        [jobId, attempt, cursor.ts, cursor.chain, cursor.height, blocks],
      ),

    complete: (jobId, attempt) =>
      fenced(
        "reindex_jobs_complete",
        `UPDATE reindex_jobs SET state = 'completed', finished_at = now(), updated_at = now(), error = NULL
          WHERE job_id = $1 AND attempts = $2 AND state = 'running' RETURNING 1`,
        [jobId, attempt],
      ),

    async advance(jobId, attempt) {
      const b = await boss();
      return pg.transaction(async (tx) => {
        const moved = await tx.query<{ chunk: number }>(
          "reindex_jobs_advance",
          `UPDATE reindex_jobs SET chunk = chunk + 1, updated_at = now()
            WHERE job_id = $1 AND attempts = $2 AND state = 'running' RETURNING chunk`,
          [jobId, attempt],
        );
        const chunk = moved[0]?.chunk;
        if (chunk === undefined) return false;
        const message: ReindexMessage = { job_id: jobId, chunk };
        await b.send(
          REINDEX_QUEUE,
          message as unknown as object,
          {
            ...sendOptions(config),
            db: bossExecutor(tx),
          } as PgBoss.SendOptions,
        );
        return true;
      });
    },

    fail: (jobId, attempt, error, final) =>
      fenced(
        "reindex_jobs_fail",
        `UPDATE reindex_jobs SET error = $3, updated_at = now(),
                state = CASE WHEN $4::int = 1 THEN 'failed' ELSE state END,
                finished_at = CASE WHEN $4::int = 1 THEN now() ELSE finished_at END
          WHERE job_id = $1 AND attempts = $2 AND state = 'running' RETURNING 1`,
        [jobId, attempt, error.slice(0, 2000), final ? 1 : 0],
      ),
  };
}
