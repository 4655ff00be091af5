/**
 * Reads of the series tables for the API: instances, scales, charts (over sealed segments, pending
 * points and archived pages), and the admin inspection of buckets and segments. Every read names its
 * instance first, the prefix of every series table's key.
 */
import { badRequest, notFound } from "../errors.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { ObjectStore } from "../stores/object-store.ts";
import type { ArchivePage } from "./archive.ts";
import { type Agg, SERIES_SCALE_MS, type SeriesScale, type TimeseriesDefinition } from "./definition.ts";
import { timeseriesById } from "./definitions/index.ts";
import { type SeriesSettings, spanOf } from "./settings.ts";

/** Most segments one chart request scans (SPEC.md, chart rule 5). */
export const MAX_CHART_SEGMENTS = 128;

export interface SeriesInstance {
  instanceId: string;
  seriesId: string;
  dimensions: Record<string, string>;
  lastSeenAt: number;
}

interface InstanceRow {
  instance_id: string;
  series_id: string;
  dimensions: string;
  last_seen_at: string;
}

const toInstance = (r: InstanceRow): SeriesInstance => ({
  instanceId: r.instance_id,
  seriesId: r.series_id,
  dimensions: JSON.parse(r.dimensions) as Record<string, string>,
  lastSeenAt: Number(r.last_seen_at),
});

export async function listInstances(
  ch: Ch,
  seriesId: string,
  limit: number,
  offset: number,
): Promise<{ instances: SeriesInstance[]; count: number }> {
  const rows = await ch.query<InstanceRow & { total: string }>(
    "series_instances_list",
    `SELECT instance_id, series_id, dimensions, last_seen_at, count() OVER () AS total
     FROM series_instances FINAL WHERE series_id = {series:String} AND last_seen_at > 0
     ORDER BY last_seen_at DESC, instance_id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    { series: seriesId, limit, offset },
  );
  let count = Number(rows[0]?.total ?? 0);
  if (rows.length === 0 && offset > 0) {
    const [c] = await ch.query<{ n: string }>(
      "series_instances_count",
      "SELECT count() AS n FROM series_instances FINAL WHERE series_id = {series:String} AND last_seen_at > 0",
      { series: seriesId },
    );
    count = Number(c?.n ?? 0);
  }
  return { instances: rows.map(toInstance), count };
}

export interface ResolvedInstance extends SeriesInstance {
  def: TimeseriesDefinition;
}

/** The instance with its definition; 404 when unknown (or of a definition no longer in the code). */
export async function getInstance(ch: Ch, instanceId: string): Promise<ResolvedInstance> {
  const [row] = await ch.query<InstanceRow>(
    "series_instance_get",
    `SELECT instance_id, series_id, dimensions, last_seen_at
     FROM series_instances FINAL WHERE instance_id = {id:String}`,
    { id: instanceId },
  );
  const def = row ? timeseriesById(row.series_id) : undefined;
  if (!row || !def) throw notFound(`Series instance ${instanceId} not found`, { instanceid: instanceId });
  return { ...toInstance(row), def };
}

export async function getMetadata(ch: Ch, instanceId: string): Promise<Record<string, unknown> | null> {
  const [row] = await ch.query<{ metadata: string }>(
    "series_instance_meta_get",
    "SELECT metadata FROM series_instance_meta FINAL WHERE instance_id = {id:String}",
    { id: instanceId },
  );
  return row ? (JSON.parse(row.metadata) as Record<string, unknown>) : null;
}

export async function setMetadata(ch: Ch, instanceId: string, patch: Record<string, unknown>) {
  const metadata = { ...((await getMetadata(ch, instanceId)) ?? {}), ...patch };
  await ch.insert("series_instance_meta_set", "series_instance_meta", [
    { instance_id: instanceId, metadata: JSON.stringify(metadata), updated_at: Date.now() },
  ]);
  return metadata;
}

export interface ArchiveSummary {
  pages: number;
  archivedPoints: number;
  /** End (exclusive, ms) of the newest archived page: raw points before it are read from the object store. */
  archivedUntil: number | null;
}

export async function archiveSummary(ch: Ch, instanceId: string): Promise<ArchiveSummary> {
  const [row] = await ch.query<{ n: string; p: string; until: string }>(
    "series_archive_summary",
    `SELECT count() AS n, sum(point_count) AS p, toString(max(page_end)) AS until
     FROM series_archive_pages FINAL WHERE instance_id = {id:String}`,
    { id: instanceId },
  );
  const pages = Number(row?.n ?? 0);
  return {
    pages,
    archivedPoints: Number(row?.p ?? 0),
    archivedUntil: pages > 0 ? Number(row?.until) : null,
  };
}

export interface ScaleEntry {
  scale: string;
  hasData?: boolean;
  segmentCount: number;
  totalPoints: number;
  minPointTs: number | null;
  maxPointTs: number | null;
  pendingPoints: number;
}

/** Where the pending points of (instance, scale) start: the end of its newest sealed segment. */
async function pendingFrom(ch: Ch, instanceId: string, scale: string): Promise<number> {
  const [row] = await ch.query<{ e: string }>(
    "series_pending_from",
    `SELECT toString(max(span_end)) AS e FROM series_segments FINAL
     WHERE instance_id = {id:String} AND scale = {scale:String} AND deleted = 0`,
    { id: instanceId, scale },
  );
  return Number(row?.e ?? 0);
}

export async function scaleEntries(ch: Ch, inst: ResolvedInstance, hasData: boolean): Promise<ScaleEntry[]> {
  const segs = await ch.query<{ scale: string; n: string; p: string; f: string; l: string; e: string }>(
    "series_scale_segments",
    `SELECT scale, count() AS n, sum(point_count) AS p, toString(min(first_ts)) AS f, toString(max(last_ts)) AS l,
       toString(max(span_end)) AS e
     FROM series_segments FINAL WHERE instance_id = {id:String} AND deleted = 0 GROUP BY scale`,
    { id: inst.instanceId },
  );
  const bySeg = new Map(segs.map((s) => [s.scale, s]));
  const scales = [...inst.def.scales];
  const pending = await ch.query<{ scale: string; n: string; f: string; l: string }>(
    "series_scale_pending",
    `SELECT scale, uniqExact(t) AS n, toString(min(t)) AS f, toString(max(t)) AS l
     FROM series_points FINAL
     WHERE instance_id = {id:String} AND deleted = 0
       AND t >= {froms:Array(UInt64)}[indexOf({scales:Array(String)}, scale)]
     GROUP BY scale`,
    {
      id: inst.instanceId,
      scales,
      froms: scales.map((s) => Number(bySeg.get(s)?.e ?? 0)),
    },
  );
  const byPending = new Map(pending.map((p) => [p.scale, p]));
  return scales.map((scale) => {
    const s = bySeg.get(scale);
    const p = byPending.get(scale);
    const segmentCount = Number(s?.n ?? 0);
    const pendingPoints = Number(p?.n ?? 0);
    const totalPoints = Number(s?.p ?? 0) + pendingPoints;
    const mins = [s && segmentCount > 0 ? Number(s.f) : null, p ? Number(p.f) : null].filter(
      (v): v is number => v !== null,
    );
    const maxs = [s && segmentCount > 0 ? Number(s.l) : null, p ? Number(p.l) : null].filter(
      (v): v is number => v !== null,
    );
    return {
      scale,
      ...(hasData ? { hasData: totalPoints > 0 } : {}),
      segmentCount,
      totalPoints,
      minPointTs: mins.length > 0 ? Math.min(...mins) : null,
      maxPointTs: maxs.length > 0 ? Math.max(...maxs) : null,
      pendingPoints,
    };
  });
}

export interface SegmentEntry {
  segmentId: string;
  spanStart: number;
  spanEnd: number;
  firstTs: number;
  lastTs: number;
  pointCount: number;
  storageKey: string;
  archived: boolean;
}

interface SegmentRow {
  segment_id: string;
  span_start: string;
  span_end: string;
  first_ts: string;
  last_ts: string;
  point_count: string;
  storage_key: string;
}

const toSegment = (r: SegmentRow): SegmentEntry => ({
  segmentId: r.segment_id,
  spanStart: Number(r.span_start),
  spanEnd: Number(r.span_end),
  firstTs: Number(r.first_ts),
  lastTs: Number(r.last_ts),
  pointCount: Number(r.point_count),
  storageKey: r.storage_key,
  archived: !r.storage_key.startsWith("clickhouse:"),
});

const SEGMENT_COLUMNS = "segment_id, span_start, span_end, first_ts, last_ts, point_count, storage_key";

export async function listSegments(
  ch: Ch,
  instanceId: string,
  scale: string,
  limit: number,
  offset: number,
): Promise<SegmentEntry[]> {
  const rows = await ch.query<SegmentRow>(
    "series_segments_list",
    `SELECT ${SEGMENT_COLUMNS} FROM series_segments FINAL
     WHERE instance_id = {id:String} AND scale = {scale:String} AND deleted = 0
     ORDER BY span_start LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    { id: instanceId, scale, limit, offset },
  );
  return rows.map(toSegment);
}

export async function getSegment(ch: Ch, instanceId: string, scale: string, segmentId: string) {
  const [row] = await ch.query<SegmentRow>(
    "series_segment_get",
    `SELECT ${SEGMENT_COLUMNS} FROM series_segments FINAL
     WHERE instance_id = {id:String} AND scale = {scale:String} AND deleted = 0
       AND segment_id = toUUIDOrZero({segment:String})`,
    { id: instanceId, scale, segment: segmentId },
  );
  if (!row) {
    throw notFound(`Segment ${segmentId} not found for instance ${instanceId} at scale ${scale}`, {
      segment_id: segmentId,
    });
  }
  return toSegment(row);
}

/** A point row as read: its time, its key values as decimal text, and where it came from. */
export interface RawPoint {
  t: number;
  values: Record<string, string>;
  kind: "sealed" | "pending" | "archived";
}

/** Points of (instance, scale) in [lo, hi) from ClickHouse, one row per time. */
async function pointsFromClickHouse(
  ch: Ch,
  instanceId: string,
  scale: string,
  lo: number,
  hi: number,
  key: string | undefined,
  kindOf: (t: number) => RawPoint["kind"],
): Promise<RawPoint[]> {
  const rows = await ch.query<{ t: string; key: string; value: string }>(
    "series_points_range",
    `SELECT t, key, value FROM series_points FINAL
     WHERE instance_id = {id:String} AND scale = {scale:String} AND t >= {lo:UInt64} AND t < {hi:UInt64}
       AND deleted = 0 ${key === undefined ? "" : "AND key = {key:String}"}
     ORDER BY t`,
    { id: instanceId, scale, lo, hi, key: key ?? "" },
  );
  const out: RawPoint[] = [];
  for (const r of rows) {
    const t = Number(r.t);
    let last = out[out.length - 1];
    if (last?.t !== t) {
      last = { t, values: {}, kind: kindOf(t) };
      out.push(last);
    }
    last.values[r.key] = r.value;
  }
  return out;
}

/**
 * Reads archive pages, each once per reader: make one per request (a rebuilt page keeps its key, so a
 * longer-lived cache could serve a stale page).
 */
export interface PageReader {
  read(key: string): Promise<ArchivePage>;
}

export function createPageReader(objects: ObjectStore, capacity = 64): PageReader {
  const cache = new Map<string, ArchivePage>();
  return {
    async read(key) {
      const hit = cache.get(key);
      if (hit) return hit;
      const body = await objects.get(key);
      if (!body) throw new Error(`Series archive page ${key} is missing from the object store`);
      const page = JSON.parse(body.toString("utf8")) as ArchivePage;
      cache.set(key, page);
      if (cache.size > capacity) cache.delete(cache.keys().next().value!);
      return page;
    },
  };
}

export interface ChartQuery {
  key?: string;
  limit: number;
  until_ts?: number;
  from_ts?: number;
  to_ts?: number;
}

export interface ChartResult {
  points: RawPoint[];
  window: {
    rule: 1 | 2 | 3 | 4;
    order: "latest" | "earliest";
    from: number | null;
    to: number | null;
    requestedFromTs: number | null;
    requestedToTs: number | null;
    requestedUntilTs: number | null;
    limit: number;
    truncated: boolean;
    segmentsScanned: number;
    pendingPointsIncluded: number;
  };
  audit: {
    store: "clickhouse" | "clickhouse+object-store";
    segmentsScanned: number;
    segmentIds: string[];
    clickhouseRangesRead: number;
    archivePagesRead: number;
    pendingIncluded: boolean;
    pointsRead: number;
    segmentCap: number;
  };
}

/**
 * Chart rules 1-4 (SPEC.md) over sealed segments, pending points and archive pages; rule 5's cap. The
 * segments of the window are listed once (with where pending points start), then the points of the chosen
 * segments that are in ClickHouse, and the pending ones, are one range read: they are contiguous in time.
 */
export async function readChart(
  ch: Ch,
  pages: PageReader,
  inst: ResolvedInstance,
  scale: SeriesScale,
  q: ChartQuery,
): Promise<ChartResult> {
  const rule: 1 | 2 | 3 | 4 =
    q.from_ts !== undefined ? (q.to_ts !== undefined ? 4 : 3) : q.until_ts !== undefined ? 2 : 1;
  const latest = rule === 1 || rule === 2;
  const lo = q.from_ts ?? 0;
  // Half-open internally: hi is one past the last time served.
  const hi = (q.to_ts ?? q.until_ts ?? Number.MAX_SAFE_INTEGER - 1) + 1;
  const id = inst.instanceId;
  const inWindow = (p: RawPoint) => p.t >= lo && p.t < hi;
  const audit: ChartResult["audit"] = {
    store: "clickhouse",
    segmentsScanned: 0,
    segmentIds: [],
    clickhouseRangesRead: 0,
    archivePagesRead: 0,
    pendingIncluded: false,
    pointsRead: 0,
    segmentCap: MAX_CHART_SEGMENTS,
  };
  // Segments in the window, in reading order, one more than the cap to know whether it truncated. Newest
  // first over an open-ended window (rule 1), the first segment is the newest sealed one: pending points
  // start at its end, and the read needs no second pass over the segments.
  const openEnded = latest && q.until_ts === undefined && q.to_ts === undefined;
  const segRows = await ch.query<SegmentRow & { pending_from?: string }>(
    "series_chart_segments",
    `SELECT ${SEGMENT_COLUMNS}${
      openEnded
        ? ""
        : `, (SELECT max(span_end) FROM series_segments FINAL
        WHERE instance_id = {id:String} AND scale = {scale:String} AND deleted = 0) AS pending_from`
    }
     FROM series_segments FINAL
     WHERE instance_id = {id:String} AND scale = {scale:String} AND deleted = 0
       AND span_end > {lo:UInt64} AND span_start < {hi:UInt64} AND last_ts >= {lo:UInt64} AND first_ts < {hi:UInt64}
     ORDER BY span_start ${latest ? "DESC" : "ASC"} LIMIT {n:UInt32}`,
    { id, scale, lo, hi, n: MAX_CHART_SEGMENTS + 1 },
  );
  const first = segRows[0];
  const pendingFromTs =
    first === undefined
      ? await pendingFrom(ch, id, scale)
      : Number(openEnded ? first.span_end : first.pending_from);
  const segments = segRows.map(toSegment);
  const kindOf = (t: number): RawPoint["kind"] => (t >= pendingFromTs ? "pending" : "sealed");

  /** Archived segments of a batch, from their pages. */
  const readArchived = async (chosen: SegmentEntry[]): Promise<RawPoint[]> => {
    const out: RawPoint[] = [];
    const keys = [...new Set(chosen.map((s) => s.storageKey))];
    if (keys.length > 0) audit.store = "clickhouse+object-store";
    for (const k of keys) {
      const page = await pages.read(k);
      audit.archivePagesRead++;
      for (const p of page.points) {
        if (!chosen.some((s) => s.storageKey === k && p.t >= s.spanStart && p.t < s.spanEnd)) continue;
        const v = q.key === undefined ? p.values : p.values[q.key];
        if (v === undefined || p.t < lo || p.t >= hi) continue;
        out.push({ t: p.t, values: typeof v === "string" ? { [q.key!]: v } : v, kind: "archived" });
      }
    }
    return out;
  };
  const readRange = async (a: number, b: number): Promise<RawPoint[]> => {
    if (a >= b) return [];
    audit.clickhouseRangesRead++;
    return pointsFromClickHouse(ch, id, scale, a, b, q.key, kindOf);
  };

  let collected: RawPoint[] = [];
  let truncated = false;
  let i = 0;
  // Latest first: ranges go down from the window's end, the first one holding the pending span.
  // Earliest first: ranges go up, the pending span after the last segment.
  let chLow = hi;
  const pendingStart = Math.max(lo, pendingFromTs);
  for (;;) {
    if (collected.length >= q.limit) break;
    if (i >= segments.length) {
      // No sealed segment (left) in the window: only the pending span can hold more.
      if (latest && chLow === hi) collected.push(...(await readRange(pendingStart, hi)));
      if (!latest) collected.push(...(await readRange(Math.max(pendingStart, lastEnd(collected)), hi)));
      break;
    }
    if (i >= MAX_CHART_SEGMENTS) {
      truncated = true;
      break;
    }
    const batch: SegmentEntry[] = [];
    let planned = 0;
    while (i < segments.length && i < MAX_CHART_SEGMENTS && collected.length + planned < q.limit) {
      const s = segments[i++]!;
      batch.push(s);
      planned += s.pointCount;
    }
    audit.segmentsScanned += batch.length;
    audit.segmentIds.push(...batch.map((s) => s.segmentId));
    const inCh = batch.filter((s) => !s.archived);
    if (latest) {
      const a =
        inCh.length > 0
          ? Math.max(lo, Math.min(...inCh.map((s) => s.spanStart)))
          : Math.min(chLow, pendingStart);
      if (a < chLow) collected.push(...(await readRange(a, chLow)));
      chLow = Math.min(chLow, a);
    } else if (inCh.length > 0) {
      const a = Math.max(lo, Math.min(...inCh.map((s) => s.spanStart)));
      const b = Math.min(hi, Math.max(...inCh.map((s) => s.spanEnd)));
      collected.push(...(await readRange(a, b)));
    }
    collected.push(...(await readArchived(batch.filter((s) => s.archived))));
  }
  collected = collected.filter(inWindow).sort((a, b) => a.t - b.t);
  // A range read may hold points past the segments chosen (older ones in latest mode): keep them only if
  // the chosen segments did not cover the limit, which is what the limit slice does.
  const points = latest
    ? collected.slice(Math.max(0, collected.length - q.limit))
    : collected.slice(0, q.limit);
  const included = points.filter((p) => p.kind === "pending").length;
  audit.pointsRead = collected.length;
  audit.pendingIncluded = included > 0;
  return {
    points,
    window: {
      rule,
      order: latest ? "latest" : "earliest",
      from: points[0]?.t ?? null,
      to: points[points.length - 1]?.t ?? null,
      requestedFromTs: q.from_ts ?? null,
      requestedToTs: q.to_ts ?? null,
      requestedUntilTs: q.until_ts ?? null,
      limit: q.limit,
      truncated,
      segmentsScanned: audit.segmentsScanned,
      pendingPointsIncluded: included,
    },
    audit,
  };
}

/** End (exclusive) of what was collected so far, for the pending read after ascending segments. */
function lastEnd(points: RawPoint[]): number {
  let m = 0;
  for (const p of points) if (p.t + 1 > m) m = p.t + 1;
  return m;
}

/** Start of the bucket's segment span (raw: of its archive page when archived). */
export function checkBucket(scale: SeriesScale, bucketStartTs: number): void {
  const w = SERIES_SCALE_MS[scale];
  if (bucketStartTs % w !== 0)
    throw badRequest(
      `bucket_start_ts ${bucketStartTs} is not the start of a ${scale} bucket (a multiple of ${w} ms)`,
      {
        field: "bucket_start_ts",
      },
    );
}

export interface BucketLocation {
  pageStartTs: number;
  segment: SegmentEntry | null;
  pending: boolean;
}

export async function locateBucket(
  ch: Ch,
  settings: SeriesSettings,
  instanceId: string,
  scale: SeriesScale,
  t: number,
): Promise<BucketLocation> {
  const span = spanOf(settings, scale, t);
  const [row] = await ch.query<SegmentRow>(
    "series_bucket_segment",
    `SELECT ${SEGMENT_COLUMNS} FROM series_segments FINAL
     WHERE instance_id = {id:String} AND scale = {scale:String} AND span_start = {s:UInt64} AND deleted = 0`,
    { id: instanceId, scale, s: span },
  );
  const segment = row ? toSegment(row) : null;
  let pageStartTs = span;
  if (segment?.archived) {
    const m = /\/(\d+)-(\d+)\.json$/.exec(segment.storageKey);
    if (m) pageStartTs = Number(m[1]);
  }
  return { pageStartTs, segment, pending: !segment && t >= (await pendingFrom(ch, instanceId, scale)) };
}

/** The points of one bucket (every key), from ClickHouse or its archive page. */
export async function bucketPoints(
  ch: Ch,
  pages: PageReader,
  instanceId: string,
  scale: SeriesScale,
  t: number,
  loc: BucketLocation,
): Promise<RawPoint | null> {
  if (loc.segment?.archived) {
    const page = await pages.read(loc.segment.storageKey);
    const p = page.points.find((x) => x.t === t);
    return p ? { t, values: p.values, kind: "archived" } : null;
  }
  const [p] = await pointsFromClickHouse(ch, instanceId, scale, t, t + 1, undefined, () =>
    loc.segment ? "sealed" : "pending",
  );
  return p ?? null;
}

export async function segmentPoints(
  ch: Ch,
  pages: PageReader,
  instanceId: string,
  scale: SeriesScale,
  segment: SegmentEntry,
): Promise<RawPoint[]> {
  if (!segment.archived)
    return pointsFromClickHouse(
      ch,
      instanceId,
      scale,
      segment.spanStart,
      segment.spanEnd,
      undefined,
      () => "sealed",
    );
  const page = await pages.read(segment.storageKey);
  return page.points
    .filter((p) => p.t >= segment.spanStart && p.t < segment.spanEnd)
    .map((p) => ({ t: p.t, values: p.values, kind: "archived" as const }));
}

export interface ListEntry {
  rank: number;
  instanceId: string;
  dimensions: Record<string, string>;
  value: string;
}

/**
 * A list metric: the instances of its timeseries ranked by the point key over the window's whole hours
 * ending with the hour of the series' newest event (1h buckets; distinct keys merge their states, so a
 * 7-day distinct count is exact). Ties go by instance id.
 */
export async function readList(
  ch: Ch,
  list: { seriesId: string; key: string; agg: Agg; windowMs: number },
  limit: number,
  offset: number,
): Promise<{ from: number | null; to: number | null; count: number; entries: ListEntry[] }> {
  const [newest] = await ch.query<{ n: string }>(
    "series_list_newest",
    "SELECT max(last_seen_at) AS n FROM series_instances FINAL WHERE series_id = {series:String}",
    { series: list.seriesId },
  );
  const newestTs = Number(newest?.n ?? 0);
  if (newestTs === 0) return { from: null, to: null, count: 0, entries: [] };
  const to = newestTs - (newestTs % 3_600_000) + 3_600_000;
  const from = Math.max(0, to - list.windowMs);
  const value =
    list.agg === "distinct"
      ? "toString(uniqExactMerge(state))"
      : list.agg === "last"
        ? "argMax(value, t)"
        : list.agg === "net"
          ? "toString(sum(toInt256OrZero(value)))"
          : "toString(sum(toUInt256OrZero(value)))";
  const order =
    list.agg === "last" ? "toFloat64OrZero(v)" : list.agg === "net" ? "toInt256(v)" : "toUInt256(v)";
  const rows = await ch.query<{ instance_id: string; dimensions: string; v: string; total: string }>(
    "series_list_read",
    `SELECT p.instance_id AS instance_id, i.dimensions AS dimensions, p.v AS v, count() OVER () AS total
     FROM (
       SELECT instance_id, ${value} AS v FROM series_points FINAL
       WHERE instance_id IN (SELECT instance_id FROM series_instances FINAL WHERE series_id = {series:String})
         AND scale = '1h' AND key = {key:String} AND deleted = 0 AND t >= {from:UInt64} AND t < {to:UInt64}
       GROUP BY instance_id
     ) AS p
     INNER JOIN (SELECT instance_id, dimensions FROM series_instances FINAL WHERE series_id = {series:String}) AS i
       ON i.instance_id = p.instance_id
     ORDER BY ${order} DESC, instance_id ASC LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    { series: list.seriesId, key: list.key, from, to, limit, offset },
  );
  return {
    from,
    to,
    count: Number(rows[0]?.total ?? 0),
    entries: rows.map((r, i) => ({
      rank: offset + i + 1,
      instanceId: r.instance_id,
      dimensions: JSON.parse(r.dimensions) as Record<string, string>,
      value: r.v,
    })),
  };
}
