import { positionParam } from "../stores/clickhouse.ts";
import { nextVersion } from "./clock.ts";
import type { SeriesScale } from "./definition.ts";
import { clickhouseKeyOf, segmentIdOf } from "./ids.ts";
import { type SeriesDeps, type SeriesSettings, segmentSpanMs, spanOf } from "./settings.ts";

export interface SegmentRow {
  instance_id: string;
  scale: string;
  span_start: number;
  span_end: number;
  segment_id: string;
  first_ts: number;
  last_ts: number;
  point_count: number;
  storage_key: string;
  deleted: number;
  version: string;
}

export function segmentRow(
  s: SeriesSettings,
  instanceId: string,
  scale: SeriesScale,
  spanStart: number,
  stats: { first: number; last: number; count: number } | null,
  storageKey: string,
  version: string,
): SegmentRow {
  return {
    instance_id: instanceId,
    scale,
    span_start: spanStart,
    span_end: spanStart + segmentSpanMs(s, scale),
    segment_id: segmentIdOf(instanceId, scale, spanStart),
    first_ts: stats?.first ?? 0,
    last_ts: stats?.last ?? 0,
    point_count: stats?.count ?? 0,
    storage_key: stats ? storageKey : "",
    deleted: stats ? 0 : 1,
    version,
  };
}

/** Newest point time per (instance, scale) after a segment recompute, for archiving and last_seen_at. */
export type Newest = Map<string, number>;

/**
 * Recomputes the segments of (instance, scale) from the start of the touched span (or of the last sealed
 * segment, which a retraction may make pending again) onwards: every span but the newest is sealed.
 */
export async function recomputeSegments(
  deps: SeriesDeps,
  jobs: { id: string; scale: SeriesScale; lo: number; floor: number }[],
  newest: Newest,
  lastSealed: Map<string, number>,
): Promise<void> {
  if (jobs.length === 0) return;
  const { ch, settings } = deps;
  // Taken before the reads the rows derive from (see the write clock).
  const version = await nextVersion(deps);
  const ids = [...new Set(jobs.map((j) => j.id))];
  const keys: string[] = [];
  const los: number[] = [];
  const widths: number[] = [];
  const scaleLo = new Map<string, number>();
  for (const j of jobs) {
    const k = `${j.id}/${j.scale}`;
    keys.push(k);
    // Without a sealed segment every point is in one span: start from the floor.
    const lo = Math.max(j.floor, Math.min(spanOf(settings, j.scale, j.lo), lastSealed.get(k) ?? 0));
    los.push(lo);
    widths.push(segmentSpanMs(settings, j.scale));
    scaleLo.set(j.scale, Math.min(scaleLo.get(j.scale) ?? lo, lo));
  }
  const params = {
    ids,
    keys,
    los,
    widths,
    scales: [...scaleLo.keys()],
    scale_los: [...scaleLo.values()],
  };
  // The per-scale lower bounds let the primary key skip old points; the per-key bound is exact.
  const groups = await ch.query<{
    instance_id: string;
    scale: string;
    s: string;
    f: string;
    l: string;
    n: string;
  }>(
    "series_segments_recompute",
    `SELECT instance_id, scale, t - t % {widths:Array(UInt64)}[j] AS s, min(t) AS f, max(t) AS l, uniqExact(t) AS n
     FROM (
       SELECT instance_id, scale, t, ${positionParam("concat(instance_id, '/', scale)", "keys")} AS j
       FROM series_points FINAL
       WHERE instance_id IN {ids:Array(String)} AND deleted = 0 AND scale IN {scales:Array(String)}
         AND t >= {scale_los:Array(UInt64)}[indexOf({scales:Array(String)}, scale)]
     )
     WHERE j > 0 AND t >= {los:Array(UInt64)}[j]
     GROUP BY instance_id, scale, j, s ORDER BY instance_id, scale, s`,
    params,
  );
  const existing = await ch.query<{ instance_id: string; scale: string; s: string }>(
    "series_segments_existing",
    `SELECT instance_id, scale, s FROM (
       SELECT instance_id, scale, span_start AS s, ${positionParam("concat(instance_id, '/', scale)", "keys")} AS j
       FROM series_segments FINAL
       WHERE instance_id IN {ids:Array(String)} AND deleted = 0
     ) WHERE j > 0 AND s >= {los:Array(UInt64)}[j]`,
    params,
  );
  const byKey = new Map<string, typeof groups>();
  for (const g of groups) {
    const k = `${g.instance_id}/${g.scale}`;
    const list = byKey.get(k) ?? [];
    list.push(g);
    byKey.set(k, list);
  }
  const rows: SegmentRow[] = [];
  const written = new Set<string>();
  for (const [k, list] of byKey) {
    const newestGroup = list[list.length - 1]!;
    newest.set(k, Number(newestGroup.l));
    for (const g of list.slice(0, -1)) {
      const scale = g.scale as SeriesScale;
      const s = Number(g.s);
      written.add(`${k}/${s}`);
      rows.push(
        segmentRow(
          settings,
          g.instance_id,
          scale,
          s,
          { first: Number(g.f), last: Number(g.l), count: Number(g.n) },
          clickhouseKeyOf(g.instance_id, scale, s),
          version,
        ),
      );
    }
  }
  for (const e of existing) {
    const s = Number(e.s);
    if (written.has(`${e.instance_id}/${e.scale}/${s}`)) continue;
    rows.push(segmentRow(settings, e.instance_id, e.scale as SeriesScale, s, null, "", version));
  }
  await ch.insert("series_segments_insert", "series_segments", rows);
}
