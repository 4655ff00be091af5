/** Series storage settings from the config, and the time arithmetic of buckets, segments and pages. */
import { join } from "node:path";
import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { Ch } from "../stores/clickhouse.ts";
import { createObjectStore, type ObjectStore } from "../stores/object-store.ts";
import { fencedObjectStore } from "../stores/pg-lock.ts";
import { SERIES_SCALE_MS, type SeriesScale } from "./definition.ts";

export const DAY_MS = 86_400_000;

export interface SeriesSettings {
  retentionMs: number;
  /** Default raw archive page width in days (an instance may override it). */
  pageDays: number;
  segmentPoints: number;
  rawSegmentMs: number;
}

/** The config's series settings (its rules checked the raw segment divides a day). */
export function seriesSettings(config: Config): SeriesSettings {
  return {
    retentionMs: config.SERIES_RAW_RETENTION_HOURS * 3_600_000,
    pageDays: config.SERIES_RAW_ARCHIVE_PAGE_DAYS,
    segmentPoints: config.SERIES_SEGMENT_POINTS,
    rawSegmentMs: config.SERIES_RAW_SEGMENT_MS,
  };
}

/** The archive store: SERIES_S3_* when an endpoint is set, else a directory under DATA_DIR. */
export function seriesObjectStore(config: Config): ObjectStore {
  if (config.SERIES_S3_ENDPOINT) {
    return createObjectStore({
      dir: "",
      s3: {
        endpoint: config.SERIES_S3_ENDPOINT,
        bucket: config.SERIES_S3_BUCKET,
        region: config.SERIES_S3_REGION,
        accessKeyId: config.SERIES_S3_ACCESS_KEY_ID,
        secretAccessKey: config.SERIES_S3_SECRET_ACCESS_KEY,
      },
    });
  }
  return createObjectStore({
    dir: config.SERIES_ARCHIVE_DIR || join(config.DATA_DIR, config.STAGE, "series-archive"),
  });
}

export function bucketOf(scale: SeriesScale, ts: number): number {
  const w = SERIES_SCALE_MS[scale];
  return ts - (ts % w);
}

/** Width of a segment's time span at a scale. */
export function segmentSpanMs(s: SeriesSettings, scale: SeriesScale): number {
  return scale === "0" ? s.rawSegmentMs : s.segmentPoints * SERIES_SCALE_MS[scale];
}

export function spanOf(s: SeriesSettings, scale: SeriesScale, t: number): number {
  const w = segmentSpanMs(s, scale);
  return t - (t % w);
}

/** What the series writer, its recompute and archive run with. */
export interface SeriesDeps {
  ch: Ch;
  objects: ObjectStore;
  settings: SeriesSettings;
  log: Logger;
}

/** What the series writers need (the series and holders processors, `series backfill`), from the config. */
export function createSeriesDeps(ctx: {
  ch: Ch;
  config: Config;
  log: Logger;
  /** A lock holder's fence (pipeline/processor.ts): archive writes check it first. */
  fence?: () => Promise<void>;
}): SeriesDeps {
  const objects = seriesObjectStore(ctx.config);
  return {
    ch: ctx.ch,
    objects: ctx.fence ? fencedObjectStore(objects, ctx.fence) : objects,
    settings: seriesSettings(ctx.config),
    log: ctx.log,
  };
}
