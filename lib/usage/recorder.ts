/**
 * Per-key request counts of one API process, kept off the request path: the auth hook calls `count`
 * (a map increment), and the counts are added to Postgres (`key_usage`, one row per key and UTC minute)
 * every USAGE_FLUSH_MS, on demand before a read, and when the app closes. The upserts add to what is
 * there, so any number of API processes add up. A failed flush keeps its counts for the next one.
 * Minutes older than USAGE_RETENTION_DAYS are deleted by a flush at most once an hour (0 keeps them).
 */

import type {
  KeyUsageRepo,
  UsageBucket,
  UsageCount,
  UsageGranularity,
  UsageTotals,
} from "../keys/usage-repo.ts";
import type { Logger } from "../logger.ts";

export interface UsageRecorder {
  /** Counts one request charged to a key's plan allowance; `rateLimited` when it was answered 429. */
  count(keyId: string, rateLimited: boolean): void;
  /** Adds this process's pending counts to Postgres now (never throws: a failure is logged and retried). */
  flush(): Promise<void>;
  /** Requests and 429s of each key over the last 24 hours, this process's pending counts included. */
  last24h(keyIds: string[]): Promise<Map<string, UsageTotals>>;
  /** A key's non-empty buckets in [fromMs, toMs) (KeyUsageRepo.buckets), this process's counts included. */
  buckets(keyId: string, fromMs: number, toMs: number, granularity: UsageGranularity): Promise<UsageBucket[]>;
  /** Starts the periodic flush (idempotent). */
  start(): void;
  /** Stops the periodic flush and flushes what is pending. */
  close(): Promise<void>;
}

export interface UsageRecorderOptions {
  repo: KeyUsageRepo;
  log: Logger;
  flushMs: number;
  /** Days of minutes kept; 0 keeps every minute. */
  retentionDays: number;
  now?: () => number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

export function createUsageRecorder(options: UsageRecorderOptions): UsageRecorder {
  const { repo, log } = options;
  const now = options.now ?? Date.now;
  let pending = new Map<string, UsageCount>();
  let chain: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  let prunedAt = 0;

  const merge = (into: Map<string, UsageCount>, c: UsageCount) => {
    const id = `${c.keyId} ${c.minuteMs}`;
    const had = into.get(id);
    if (had) {
      had.requests += c.requests;
      had.rateLimited += c.rateLimited;
    } else into.set(id, { ...c });
  };

  const flushOnce = async () => {
    if (pending.size > 0) {
      const batch = pending;
      pending = new Map();
      try {
        await repo.add([...batch.values()]);
      } catch (error) {
        for (const c of batch.values()) merge(pending, c);
        log.warn(
          { err: error, pending: pending.size },
          "Key usage counts not saved; retried at the next flush.",
        );
        return;
      }
    }
    if (options.retentionDays > 0 && now() - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = now();
      try {
        const n = await repo.prune(now() - options.retentionDays * DAY_MS);
        if (n > 0)
          log.info({ rows: n, retention_days: options.retentionDays }, "Old key usage minutes deleted.");
      } catch (error) {
        log.warn({ err: error }, "Old key usage minutes not deleted.");
      }
    }
  };

  const flush = () => {
    // One flush at a time, in call order: a flush asked for waits for the one running, then runs.
    const run = chain.then(flushOnce);
    chain = run.catch(() => undefined);
    return run;
  };

  return {
    count(keyId, rateLimited) {
      const t = now();
      merge(pending, {
        keyId,
        minuteMs: t - (t % MINUTE_MS),
        requests: 1,
        rateLimited: rateLimited ? 1 : 0,
      });
    },
    flush,
    async last24h(keyIds) {
      await flush();
      return repo.totalsSince(keyIds, now() - DAY_MS);
    },
    async buckets(keyId, fromMs, toMs, granularity) {
      await flush();
      return repo.buckets(keyId, fromMs, toMs, granularity);
    },
    start() {
      if (timer) return;
      timer = setInterval(() => void flush(), options.flushMs);
      timer.unref();
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = null;
      await flush();
    },
  };
}
