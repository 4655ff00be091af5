/**
 * Candle scales and their buckets. Buckets are computed with integer arithmetic on Unix milliseconds,
 * the same way in TypeScript and in ClickHouse (`ts - (ts - offset) % width`): minutes and hours are
 * aligned on the epoch, days on UTC midnight, weeks on Monday 00:00 UTC.
 */

export const SCALES = ["1m", "3m", "5m", "15m", "1h", "4h", "1d", "1w"] as const;
export type Scale = (typeof SCALES)[number];

export const DEFAULT_SCALE: Scale = "1h";

const MINUTE = 60_000;

/** Bucket width in ms per scale. */
export const SCALE_MS: Record<Scale, number> = {
  "1m": MINUTE,
  "3m": 3 * MINUTE,
  "5m": 5 * MINUTE,
  "15m": 15 * MINUTE,
  "1h": 60 * MINUTE,
  "4h": 240 * MINUTE,
  "1d": 1440 * MINUTE,
  "1w": 7 * 1440 * MINUTE,
};

/** 1970-01-05 00:00 UTC, the first Monday after the epoch: weeks are aligned on it. */
const MONDAY = 4 * 1440 * MINUTE;

/** Offset a scale's buckets are aligned on (ms since the epoch). */
export function scaleOffset(scale: Scale): number {
  return scale === "1w" ? MONDAY : 0;
}

/** Start (ms) of the bucket of `scale` that holds `ts`. */
export function bucketStart(scale: Scale, ts: number): number {
  const width = SCALE_MS[scale];
  const off = scaleOffset(scale);
  return ts - ((((ts - off) % width) + width) % width);
}

export function isScale(value: string): value is Scale {
  return (SCALES as readonly string[]).includes(value);
}
