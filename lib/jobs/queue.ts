/**
 * The job queue: pg-boss 10 (the line that runs on Node 20) on the same PostgreSQL as everything else, or on
 * the embedded PGlite. pg-boss talks to the database through its `db` option (`executeSql(text, values)`),
 * given our `Pg`: one pool and one set of labelled queries, and on PGlite the only way in (one connection,
 * one process). Measured both ways LIBRARIES.md lists for PGlite: through `db` it needs no socket server and
 * no second copy of PGlite in memory (pglite-socket pins its own PGlite version and costs ~730 MB per
 * instance), so that is the one used.
 *
 * pg-boss keeps its tables in the `pgboss` schema and creates or migrates them itself at `start()`.
 */
import PgBoss from "pg-boss";
import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { Pg, PgParam, PgQueryable } from "../stores/postgres.ts";

export const REINDEX_QUEUE = "reindex";
/** Outbound webhook deliveries: one chain of messages per active webhook (pipeline/jobs/webhook-delivery.ts). */
export const WEBHOOK_QUEUE = "webhook";
/** Where a webhook message goes once its last retry failed: its handler disables the webhook. */
export const WEBHOOK_DEAD_QUEUE = "webhook-dead";

type Executor = { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> };

/**
 * pg-boss's executor over a `Pg` or an open transaction: parameterised SQL through `query`; parameterless
 * scripts (pg-boss's migrations are `BEGIN; …; COMMIT;` blocks) through `exec` on PGlite, whose `query`
 * takes one statement only.
 */
export function bossExecutor(db: Pg | PgQueryable, log?: Logger): Executor {
  return {
    async executeSql(text, values) {
      const params = (values ?? []).map((v) => (v === undefined ? null : v)) as PgParam[];
      if (params.length === 0 && "kind" in db && db.kind === "pglite" && text.includes(";")) {
        await db.exec("pgboss", text);
        return { rows: [] };
      }
      try {
        return { rows: await db.query("pgboss", text, params) };
      } catch (error) {
        // pg-boss 10 completes or fails a handled job without awaiting it (manager.js `onFetch`), so a database
        // error there would be an unhandled rejection that ends the process. Losing that write is harmless: the
        // job stays active, expires after JOBS_EXPIRE_S and is retried, and every write of ours is fenced.
        if (log && isCompletion(text)) {
          log.warn(
            { err: error, component: "jobs" },
            "Could not record a queue job's end; it will expire and retry.",
          );
          return { rows: [{ count: "0" }] };
        }
        throw error;
      }
    },
  };
}

/** pg-boss's complete-by-id and fail-by-id statements (plans.js `completeJobs`, `failJobsById`). */
const isCompletion = (text: string) =>
  text.includes("UNNEST($2::uuid[])") &&
  (text.includes("completed_on = now()") || text.includes("deleted_jobs"));

export interface QueueOptions {
  /** Run pg-boss's maintenance (expiring jobs of dead workers, retries, archiving): workers do, the API does not. */
  supervise: boolean;
}

/** A started pg-boss with the reindex and webhook queues created. */
/** The queue settings pg-boss runs with: retries, expiry and maintenance of the job and webhook queues. */
export type QueueConfig = Pick<
  Config,
  | "JOBS_EXPIRE_S"
  | "JOBS_MAINTENANCE_S"
  | "JOBS_RETRY_DELAY_S"
  | "JOBS_RETRY_LIMIT"
  | "WEBHOOK_EXPIRE_S"
  | "WEBHOOK_RETRY_DELAY_S"
  | "WEBHOOK_RETRY_LIMIT"
>;

export async function startBoss(
  pg: Pg,
  config: QueueConfig,
  log: Logger,
  options: QueueOptions,
): Promise<PgBoss> {
  const boss = new PgBoss({
    db: bossExecutor(pg, log),
    schema: "pgboss",
    supervise: options.supervise,
    schedule: false,
    migrate: true,
    maintenanceIntervalSeconds: config.JOBS_MAINTENANCE_S,
  } as PgBoss.ConstructorOptions);
  boss.on("error", (error) => log.error({ err: error, component: "jobs" }, "Job queue error."));
  await boss.start();
  await boss.createQueue(REINDEX_QUEUE, {
    name: REINDEX_QUEUE,
    policy: "standard",
    retryLimit: config.JOBS_RETRY_LIMIT,
    retryDelay: config.JOBS_RETRY_DELAY_S,
    retryBackoff: true,
    expireInSeconds: config.JOBS_EXPIRE_S,
  });
  // The dead letter first: the webhook queue refers to it. Each message also carries these options (repo.ts).
  await boss.createQueue(WEBHOOK_DEAD_QUEUE, {
    name: WEBHOOK_DEAD_QUEUE,
    policy: "standard",
    retryLimit: 10,
    retryDelay: 10,
    retryBackoff: true,
  });
  await boss.createQueue(WEBHOOK_QUEUE, {
    name: WEBHOOK_QUEUE,
    policy: "standard",
    retryLimit: config.WEBHOOK_RETRY_LIMIT,
    retryDelay: config.WEBHOOK_RETRY_DELAY_S,
    retryBackoff: true,
    expireInSeconds: config.WEBHOOK_EXPIRE_S,
    deadLetter: WEBHOOK_DEAD_QUEUE,
  });
  return boss;
}
