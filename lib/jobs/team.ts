/**
 * Up to `size` handlers of one queue at once from one polling loop (issue 45: cheap to run).
 *
 * pg-boss 10 runs every `work` call as its own loop, each polling the queue every `pollingIntervalSeconds` while it
 * is empty, so `size` concurrent handlers cost `size` polls per interval at rest. A team polls once per interval
 * while a slot is free, fetches as many messages as it has free slots, runs each on its own (one message's handler
 * never waits for another's), and fetches again as soon as a handler ends or `notify` is called. Each message is
 * completed or failed on its own, as pg-boss's `work` does with a batch of one: a handler that throws fails its
 * message (pg-boss retries it with the queue's backoff), one that outlives the message's `expireInSeconds` fails it
 * (its late writes are fenced by the callers), and messages still running when `stop` gives up are failed as pg-boss
 * fails its own at shutdown. Delivery order and guarantees are the queue's, unchanged: only the polling differs.
 */
import type PgBoss from "pg-boss";
import type { Logger } from "../logger.ts";

export interface Team {
  /** Fetches at once (a message became due) instead of at the next poll. */
  notify(): void;
  /** Stops fetching and waits for running handlers, up to `timeoutMs`; those still running then are failed. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface TeamOptions {
  /** Handlers at once. */
  size: number;
  /** Seconds between polls while the queue is empty and a slot is free. */
  pollingIntervalSeconds: number;
  log: Logger;
  /** Called once a message's end is recorded (`error` undefined when its handler succeeded). */
  settled?: (job: PgBoss.JobWithMetadata<unknown>, error: unknown) => void;
}

export function startTeam<T>(
  boss: PgBoss,
  name: string,
  options: TeamOptions,
  handler: (job: PgBoss.JobWithMetadata<T>) => Promise<unknown>,
): Team {
  const running = new Map<string, Promise<void>>();
  let stopping = false;
  let wakeLoop: (() => void) | null = null;
  let notified = false;
  /** Ends the loop's current wait (a poll interval, or all slots busy). */
  const wake = () => {
    notified = true;
    wakeLoop?.();
  };
  /** Records a message's end; a database error there leaves it active, to expire and be retried (fenced writes). */
  const settle = async (job: PgBoss.JobWithMetadata<T>, error: unknown) => {
    try {
      if (error === undefined) await boss.complete(name, job.id);
      else await boss.fail(name, job.id, error as object);
    } catch (cause) {
      options.log.warn(
        { err: cause, queue: name },
        "Could not record a queue job's end; it will expire and retry.",
      );
      return;
    }
    options.settled?.(job as PgBoss.JobWithMetadata<unknown>, error);
  };
  const run = (job: PgBoss.JobWithMetadata<T>) => {
    let timer: NodeJS.Timeout | undefined;
    // As pg-boss's `work` (its expiry is a numeric, which may arrive as a string; pg-boss's default when absent).
    const timeoutMs = Math.max(1, Number(job.expireInSeconds) || 900) * 1000;
    const expiry = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`handler execution exceeded ${timeoutMs}ms`)), timeoutMs);
    });
    const done = Promise.race([Promise.resolve().then(() => handler(job)), expiry])
      .then(
        () => settle(job, undefined),
        (error: unknown) => settle(job, error ?? new Error("handler failed")),
      )
      .finally(() => {
        clearTimeout(timer);
        running.delete(job.id);
        wake();
      });
    running.set(job.id, done);
  };
  const loop = async () => {
    while (!stopping) {
      notified = false;
      const free = options.size - running.size;
      let fetched = 0;
      if (free > 0) {
        try {
          const jobs = await boss.fetch<T>(name, { batchSize: free, includeMetadata: true });
          fetched = jobs.length;
          if (stopping) {
            // Fetched while stopping: handed back at once (failed as a shutdown would), not run.
            for (const job of jobs) await settle(job, new Error("pg-boss shut down while active"));
            break;
          }
          for (const job of jobs) run(job);
        } catch (error) {
          options.log.warn({ err: error, queue: name }, "Queue poll failed; trying again.");
        }
      }
      // A full fetch may have left more waiting: fetch again while a slot is free; otherwise wait for a slot to free
      // (a handler's end wakes the loop) or the interval.
      if (notified || (fetched > 0 && fetched === free && running.size < options.size)) continue;
      await new Promise<void>((resolve) => {
        const timer =
          running.size < options.size
            ? setTimeout(resolve, options.pollingIntervalSeconds * 1000)
            : undefined;
        wakeLoop = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeLoop = null;
    }
  };
  const looping = loop();
  return {
    notify: wake,
    async stop(timeoutMs = 30_000) {
      stopping = true;
      wakeLoop?.();
      await looping;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), timeoutMs);
      });
      const outcome = await Promise.race([Promise.all(running.values()), late]);
      clearTimeout(timer);
      if (outcome === "late" && running.size > 0) {
        for (const id of running.keys())
          await boss.fail(name, id, new Error("pg-boss shut down while active")).catch(() => undefined);
      }
    },
  };
}
