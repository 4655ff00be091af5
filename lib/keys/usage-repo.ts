/**
 * Key usage counts (postgres/0018 `key_usage`): requests and 429s per API key per UTC minute. Written
 * by the usage recorder (lib/usage/recorder.ts) in batches of upserts that add, so that several API
 * processes add up; read by `GET /system/keys/{keyid}/usage` and the bot's /keys.
 */
import type { PgQueryable } from "../stores/postgres.ts";

/** Counts of one key in one minute (`minuteMs`: the minute's start, Unix ms). */
export interface UsageCount {
  keyId: string;
  minuteMs: number;
  requests: number;
  rateLimited: number;
}

export type UsageGranularity = "minute" | "hour" | "day";

/** A key's counts in one bucket of a granularity; `maxPerMinute` is its busiest minute. */
export interface UsageBucket {
  startMs: number;
  requests: number;
  rateLimited: number;
  maxPerMinute: number;
}

export interface UsageTotals {
  requests: number;
  rateLimited: number;
}

export interface KeyUsageRepo {
  /** Adds counts (one upsert for the batch): existing minutes are incremented, never overwritten. */
  add(counts: UsageCount[]): Promise<void>;
  /** The non-empty buckets of one key with `fromMs <= minute < toMs`, oldest first (UTC boundaries). */
  buckets(keyId: string, fromMs: number, toMs: number, granularity: UsageGranularity): Promise<UsageBucket[]>;
  /** Requests and 429s of each key since `sinceMs` (keys without any are absent). */
  totalsSince(keyIds: string[], sinceMs: number): Promise<Map<string, UsageTotals>>;
  /** Deletes the minutes before `beforeMs`; returns how many rows went. */
  prune(beforeMs: number): Promise<number>;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function createKeyUsageRepo(pg: PgQueryable): KeyUsageRepo {
  return {
    async add(counts) {
      if (counts.length === 0) return;
      await pg.query(
        "key_usage_add",
        `INSERT INTO key_usage (key_id, minute, requests, rate_limited)
         SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::int[])
         ON CONFLICT (key_id, minute) DO UPDATE SET
           requests = key_usage.requests + EXCLUDED.requests,
           rate_limited = key_usage.rate_limited + EXCLUDED.rate_limited`,
        [
          counts.map((c) => c.keyId),
          counts.map((c) => iso(c.minuteMs)),
          counts.map((c) => c.requests),
          counts.map((c) => c.rateLimited),
        ],
      );
    },
    async buckets(keyId, fromMs, toMs, granularity) {
      // Truncated in UTC whatever the session's time zone; epoch of a UTC wall time is Unix time.
      const rows = await pg.query<{ start_s: string; requests: string; rate_limited: string; peak: string }>(
        "key_usage_buckets",
        `SELECT extract(epoch FROM date_trunc($4, minute AT TIME ZONE 'UTC'))::bigint::text AS start_s,
                sum(requests)::text AS requests, sum(rate_limited)::text AS rate_limited,
                max(requests)::text AS peak
         FROM key_usage WHERE key_id = $1 AND minute >= $2::timestamptz AND minute < $3::timestamptz
         GROUP BY 1 ORDER BY 1`,
        [keyId, iso(fromMs), iso(toMs), granularity],
      );
      return rows.map((r) => ({
        startMs: Number(r.start_s) * 1000,
        requests: Number(r.requests),
        rateLimited: Number(r.rate_limited),
        maxPerMinute: Number(r.peak),
      }));
    },
    async totalsSince(keyIds, sinceMs) {
      if (keyIds.length === 0) return new Map();
      const rows = await pg.query<{ key_id: string; requests: string; rate_limited: string }>(
        "key_usage_totals",
        `SELECT key_id, sum(requests)::text AS requests, sum(rate_limited)::text AS rate_limited
         FROM key_usage WHERE key_id = ANY($1::text[]) AND minute >= $2::timestamptz GROUP BY key_id`,
        [keyIds, iso(sinceMs)],
      );
      return new Map(
        rows.map((r) => [r.key_id, { requests: Number(r.requests), rateLimited: Number(r.rate_limited) }]),
      );
    },
    async prune(beforeMs) {
      const rows = await pg.query<{ n: string }>(
        "key_usage_prune",
        `WITH gone AS (DELETE FROM key_usage WHERE minute < $1::timestamptz RETURNING 1)
         SELECT count(*)::text AS n FROM gone`,
        [iso(beforeMs)],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
