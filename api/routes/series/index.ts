/**
 * Series group: the definitions (code in lib/series/definitions), their instances, scales and charts,
 * and the admin inspection of buckets and segments. Points are ClickHouse (lib/series/reader.ts) and,
 * for raw points past retention, archive pages in the object store.
 */
import { Type } from "@sinclair/typebox";
import type { CsvColumn } from "../../../lib/csv.ts";
import { badRequest, notFound } from "../../../lib/errors.ts";
import { LISTS, TIMESERIES, timeseriesById } from "../../../lib/series/definitions/index.ts";
import { checkBucket, type RawPoint, type ResolvedInstance } from "../../../lib/series/reader.ts";
import type { SeriesService } from "../../../lib/series/service.ts";
import { seriesSettings } from "../../../lib/series/settings.ts";
import { CSV_NOTE, jsonOrCsv, responseFormat, sendCsv, varyOnAccept } from "../../csv.ts";
import { requireDb } from "../../require-db.ts";
import { Nullable } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import {
  BucketPointSchema,
  ChartAuditSchema,
  ChartParams,
  ChartPointSchema,
  ChartQuery,
  ChartWindowSchema,
  DEPRECATED_CHART_PARAMS,
  Dimensions,
  InstanceDetailSchema,
  InstanceParams,
  InstanceSummarySchema,
  ListDefinitionSchema,
  ScaleEntrySchema,
  ScaleQuery,
  SegmentSchema,
  SeriesIdParam,
  TimeseriesDefinitionSchema,
} from "./schemas.ts";

const Problem = Type.Ref("Problem");
const ERRORS_NOTE =
  "Errors are `application/problem+json`: 400 names the refused parameter, 404 the missing instance or segment.";
const TimeMsQ = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000, description });

interface ChartRow {
  t: number;
  kind: string;
  y?: number;
  values?: Record<string, number>;
}
const CHART_CSV_HEAD: CsvColumn<ChartRow>[] = [
  { name: "t", kind: "number" },
  { name: "t_iso", kind: "iso", get: (p) => p.t },
  { name: "kind", kind: "text" },
];
/** CSV columns of a chart: `t`, `t_iso`, `kind`, then `y` (with `key`) or one column per point key of the series. */
function chartCsvColumns(keys: readonly string[] | null): CsvColumn<ChartRow>[] {
  if (keys === null) return [...CHART_CSV_HEAD, { name: "y", kind: "number" }];
  return [
    ...CHART_CSV_HEAD,
    ...keys.map((k) => ({ name: k, kind: "number" as const, get: (p: ChartRow) => p.values?.[k] })),
  ];
}

/** Numbers of a point row: every key whose decimal text is a finite number. */
function finiteValues(values: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(values)) {
    const n = Number(v);
    if (v !== "" && Number.isFinite(n)) out[k] = n;
  }
  return out;
}

const bucketRows = (p: RawPoint | null) =>
  p
    ? Object.keys(p.values)
        .sort()
        .map((key) => ({ t: p.t, key, value: p.values[key]!, kind: p.kind }))
    : [];

export async function seriesRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(TimeseriesDefinitionSchema);
  app.addSchema(ListDefinitionSchema);
  app.addSchema(InstanceSummarySchema);
  app.addSchema(ScaleEntrySchema);
  app.addSchema(InstanceDetailSchema);
  app.addSchema(SegmentSchema);

  const settings = seriesSettings(deps.config);
  const series = () => need("series");
  const instance = (id: string) => series().instance(id);
  const scaleOf: SeriesService["scaleOf"] = (inst, scale) => series().scaleOf(inst, scale);

  app.get(
    "/series/available",
    {
      config: { access: "user", db: "none" },
      schema: {
        tags: ["Series"],
        summary: "Series definitions: timeseries and list metrics",
        description:
          "Definitions live in the code (lib/series/definitions, one file each). A timeseries has one instance per distinct set of its `dimensions` values; list metrics rank instances of a timeseries by `sortKey` over a trailing window.",
        response: {
          200: Type.Object({
            timeseries: Type.Array(Type.Ref("SeriesTimeseriesDefinition")),
            lists: Type.Array(Type.Ref("SeriesListDefinition")),
          }),
        },
      },
    },
    async () => ({
      timeseries: TIMESERIES.map((d) => ({
        id: d.id,
        description: d.description,
        scales: [...d.scales],
        pointKeys: d.pointKeys.map((k) => k.key),
        pointKeyDetails: d.pointKeys.map((k) => ({ ...k })),
        chartType: d.chartType,
        dimensions: [...d.dimensions],
        source: d.source ?? "events",
      })),
      lists: LISTS.map((l) => ({ ...l, dimensions: [...l.dimensions] })),
    }),
  );

  app.get(
    "/series/:seriesid/instances",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "Instances of a timeseries, newest activity first",
        description: `Ordered by \`lastSeenAt\` descending (ties by id); \`count\` is the number of instances with data. An unknown series id answers 404. ${ERRORS_NOTE}`,
        params: Type.Object({ seriesid: SeriesIdParam }),
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
          offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
        }),
        response: {
          200: Type.Object({
            instances: Type.Array(Type.Ref("SeriesInstanceSummary")),
            limit: Type.Integer(),
            offset: Type.Integer(),
            count: Type.Integer(),
          }),
          404: Problem,
        },
      },
    },
    async (request) => {
      const { seriesid } = request.params;
      if (!timeseriesById(seriesid))
        throw notFound(`Series ${seriesid} not found (see GET /series/available)`, { seriesid });
      const { limit, offset } = request.query;
      const r = await series().instances(seriesid, limit, offset);
      return { instances: r.instances, limit, offset, count: r.count };
    },
  );

  app.get(
    "/series/lists/:listid/entries",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "A list metric: instances of a timeseries ranked over a trailing window",
        description:
          "Ranks the instances of the list's timeseries by its `sortKey` summed (distinct keys: merged, exact) " +
          "over the list's window, in whole hours ending with the hour of the series' newest event (`from`, `to`: " +
          "the window served, `to` exclusive; null while the series has no data). Highest first, ties by instance " +
          "id. `value` is exact decimal text. `limit` defaults to the list's `pageSize`. " +
          `An unknown list answers 404. ${ERRORS_NOTE}`,
        params: Type.Object({
          listid: Type.String({
            pattern: "^[a-z0-9][a-z0-9-]{0,63}$",
            description: "List id (GET /series/available).",
          }),
        }),
        querystring: Type.Object({
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 200, description: "Default: the list's pageSize." }),
          ),
          offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
        }),
        response: {
          200: Type.Object({
            listId: Type.String(),
            seriesId: Type.String(),
            sortKey: Type.String(),
            windowMs: Type.Integer(),
            from: Nullable(Type.Integer()),
            to: Nullable(Type.Integer()),
            limit: Type.Integer(),
            offset: Type.Integer(),
            count: Type.Integer({ description: "Instances with data in the window." }),
            entries: Type.Array(
              Type.Object({
                rank: Type.Integer(),
                instanceId: Type.String(),
                dimensions: Dimensions,
                value: Type.String({ description: "The ranked value, exact decimal text." }),
              }),
            ),
          }),
          404: Problem,
        },
      },
    },
    async (request) => {
      const { listid } = request.params;
      const list = LISTS.find((l) => l.id === listid);
      if (!list) throw notFound(`List ${listid} not found (see GET /series/available)`, { listid });
      const [seriesId, key] = list.sortKey.split(".") as [string, string];
      const agg = timeseriesById(seriesId)?.pointKeys.find((k) => k.key === key)?.agg;
      if (!agg) throw new Error(`List ${list.id} sorts by ${list.sortKey}, which no timeseries defines`);
      const limit = request.query.limit ?? list.pageSize;
      const { offset } = request.query;
      const r = await series().list({ seriesId, key, agg, windowMs: list.windowMs }, limit, offset);
      return {
        listId: list.id,
        seriesId,
        sortKey: list.sortKey,
        windowMs: list.windowMs,
        from: r.from,
        to: r.to,
        limit,
        offset,
        count: r.count,
        entries: r.entries,
      };
    },
  );

  const detailOf = async (inst: ResolvedInstance) => {
    const [scales, metadata, archive] = await series().detail(inst);
    const days = metadata?.rawArchivePageDays;
    return {
      instanceId: inst.instanceId,
      seriesId: inst.seriesId,
      dimensions: inst.dimensions,
      lastSeenAt: inst.lastSeenAt,
      description: inst.def.description,
      chartType: inst.def.chartType,
      pointKeys: inst.def.pointKeys.map((k) => k.key),
      scales,
      pendingPoints: scales.reduce((n, s) => n + s.pendingPoints, 0),
      metadata,
      rawArchivePageDays: typeof days === "number" ? days : settings.pageDays,
      archive,
    };
  };

  app.get(
    "/series/instances/:instanceid",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "One series instance with its scales, overrides and archive",
        description: `The id is 64 hex (400 otherwise); an unknown id answers 404. ${ERRORS_NOTE}`,
        params: InstanceParams,
        response: { 200: Type.Ref("SeriesInstanceDetail"), 404: Problem },
      },
    },
    async (request) => detailOf(await instance(request.params.instanceid)),
  );

  app.patch(
    "/series/instances/:instanceid",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "Override an instance's raw archive page width",
        description: `\`rawArchivePageDays\` (1-366) sets the width of the raw-scale pages archived from now on (pages already written keep theirs). No other field is accepted; an empty body answers 400. ${ERRORS_NOTE}`,
        params: InstanceParams,
        body: Type.Object(
          {
            rawArchivePageDays: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 366, description: "Raw archive page width in days." }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            instanceId: Type.String(),
            metadata: Nullable(Type.Object({}, { additionalProperties: true })),
          }),
          404: Problem,
        },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      if (body.rawArchivePageDays === undefined)
        throw badRequest("No field to update: give rawArchivePageDays (1-366)", {
          field: "rawArchivePageDays",
        });
      const inst = await instance(request.params.instanceid);
      const metadata = await series().setMetadata(inst.instanceId, {
        rawArchivePageDays: body.rawArchivePageDays,
      });
      return { instanceId: inst.instanceId, metadata };
    },
  );

  app.get(
    "/series/instances/:instanceid/scales",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "Scales of an instance with their segment and point counts",
        description: `\`has_data\` = \`1\`/\`true\` adds \`hasData\` per scale. ${ERRORS_NOTE}`,
        params: InstanceParams,
        querystring: Type.Object({
          has_data: Type.Optional(
            Type.Unsafe<"0" | "1" | "true" | "false">({
              type: "string",
              enum: ["0", "1", "true", "false"],
              description: "`1` or `true` adds hasData per scale.",
            }),
          ),
        }),
        response: {
          200: Type.Object({
            instanceId: Type.String(),
            seriesId: Type.String(),
            dimensions: Dimensions,
            pendingPoints: Type.Integer(),
            scales: Type.Array(Type.Ref("SeriesScaleEntry")),
          }),
          404: Problem,
        },
      },
    },
    async (request) => {
      const inst = await instance(request.params.instanceid);
      const hasData = request.query.has_data === "1" || request.query.has_data === "true";
      const scales = await series().scales(inst, hasData);
      return {
        instanceId: inst.instanceId,
        seriesId: inst.seriesId,
        dimensions: inst.dimensions,
        pendingPoints: scales.reduce((n, s) => n + s.pendingPoints, 0),
        scales,
      };
    },
  );

  app.get(
    "/series/instances/:instanceid/:scale/chart",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "Chart points of an instance at a scale",
        description: [
          "Rules: (1) no window parameter: the most recent `limit` points, ascending by `t`; (2) `until_ts`: points",
          "with t <= until_ts, the last `limit`; (3) `from_ts`: points with t >= from_ts, the first `limit`; (4)",
          "`from_ts` + `to_ts`: the closed range, the first `limit` from `from_ts`; (5) at most 128 segments are",
          "scanned, `window.truncated` says the cap stopped the scan; (6) `bucket_start_ts` is refused (400), as are",
          "the deprecated `from`, `to`, `start`, `end`, `interval`, `page`, `pageSize` (the message names the",
          "replacement), `to_ts` without `from_ts`, `until_ts` with `from_ts`/`to_ts`, and `to_ts` < `from_ts`.",
          "With `key`, points are `{ t, y, kind }` (buckets where the key has a value); without, `{ t, values, kind }`",
          "with every finite key. Pending points (newest span, not sealed yet) and archived raw pages are served like",
          "sealed segments; `kind` says which. `window` is the window actually served, `audit` what was read.",
          ERRORS_NOTE,
          CSV_NOTE,
          "In CSV, one row per point (ascending `t`, as in `points`): `t`, `t_iso`, `kind`, then `y` with `key`, else",
          "one column per point key of the series in its definition's order (`pointKeys` of GET /series/available),",
          "empty where the bucket has no finite value. `window` and `audit` are not in the CSV, but",
          "`X-Chart-Truncated: true` says rule 5 stopped the scan; page with `until_ts` / `from_ts` as in JSON.",
        ].join(" "),
        params: ChartParams,
        querystring: ChartQuery,
        response: {
          200: jsonOrCsv(
            Type.Object({
              instanceId: Type.String(),
              seriesId: Type.String(),
              scale: Type.String(),
              chartType: Type.String(),
              key: Type.Optional(Type.String()),
              points: Type.Array(ChartPointSchema),
              window: ChartWindowSchema,
              audit: ChartAuditSchema,
            }),
            "t, t_iso, kind, then y (with `key`) or the series' point keys.",
            "The chart, as JSON or CSV.",
          ),
          404: Problem,
        },
      },
    },
    async (request, reply) => {
      const q = request.query as typeof request.query & Record<string, unknown>;
      for (const [param, replacement] of Object.entries(DEPRECATED_CHART_PARAMS)) {
        if (q[param] !== undefined)
          throw badRequest(`Query parameter ${param} is not supported on this route: use ${replacement}`, {
            field: param,
          });
      }
      const {
        inst,
        scale,
        result: r,
      } = await series().chart(request.params.instanceid, request.params.scale, {
        key: q.key,
        limit: q.limit,
        until_ts: q.until_ts,
        from_ts: q.from_ts,
        to_ts: q.to_ts,
      });
      const key = q.key;
      const points =
        key === undefined
          ? r.points.map((p) => ({ t: p.t, values: finiteValues(p.values), kind: p.kind }))
          : r.points.flatMap((p) => {
              const y = Number(p.values[key]);
              return Number.isFinite(y) ? [{ t: p.t, y, kind: p.kind }] : [];
            });
      varyOnAccept(reply);
      if (responseFormat(request) === "csv") {
        return sendCsv(reply, {
          columns: chartCsvColumns(key === undefined ? inst.def.pointKeys.map((k) => k.key) : null),
          rows: points as ChartRow[],
          filename: `${inst.seriesId}-${scale}.csv`,
          headers: { "x-chart-truncated": String(r.window.truncated) },
        });
      }
      return {
        instanceId: inst.instanceId,
        seriesId: inst.seriesId,
        scale,
        chartType: inst.def.chartType,
        ...(key === undefined ? {} : { key }),
        points,
        window: r.window,
        audit: r.audit,
      };
    },
  );

  const BucketQuery = Type.Object({
    scale: ScaleQuery,
    bucket_start_ts: TimeMsQ("Start of the bucket (ms), a multiple of the scale's width."),
  });

  app.get(
    "/series/instances/:instanceid/bucket",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "Where one bucket of an instance is stored (admin)",
        description: [
          "`timeseriesStorage` is `segments`. `key` is the storage key of the sealed segment holding the bucket",
          "(`clickhouse:…` or an archive page's object key), null while the bucket is pending or empty; `pageUrl`",
          "the archive page's URL when archived; `keyOrUrl` the first of those that is set. `pageStartTs` is the",
          "start of the archive page (archived raw buckets) or of the segment's span. `bucket` is the stored point",
          "`{ t, values (decimal text), kind }`, null when the bucket has none.",
          ERRORS_NOTE,
        ].join(" "),
        params: InstanceParams,
        querystring: BucketQuery,
        response: {
          200: Type.Object({
            instanceId: Type.String(),
            seriesId: Type.String(),
            scale: Type.String(),
            bucketStartTs: Type.Integer(),
            pageStartTs: Type.Integer(),
            dimensions: Dimensions,
            bucket: Nullable(
              Type.Object({
                t: Type.Integer(),
                values: Type.Record(Type.String(), Type.String()),
                kind: Type.String(),
              }),
            ),
            timeseriesStorage: Type.Literal("segments"),
            key: Nullable(Type.String()),
            pageUrl: Nullable(Type.String()),
            keyOrUrl: Nullable(Type.String()),
            segmentIds: Type.Array(Type.String()),
            segmentS3Keys: Type.Array(Type.String()),
          }),
          404: Problem,
        },
      },
    },
    async (request) => {
      const inst = await instance(request.params.instanceid);
      const scale = scaleOf(inst, request.query.scale);
      const t = request.query.bucket_start_ts;
      checkBucket(scale, t);
      const { loc, points: bucket } = await series().bucket(inst.instanceId, scale, t);
      const key = loc.segment?.storageKey ?? null;
      const pageUrl = loc.segment?.archived ? series().pageUrl(loc.segment.storageKey) : null;
      return {
        instanceId: inst.instanceId,
        seriesId: inst.seriesId,
        scale,
        bucketStartTs: t,
        pageStartTs: loc.pageStartTs,
        dimensions: inst.dimensions,
        bucket,
        timeseriesStorage: "segments" as const,
        key,
        pageUrl,
        keyOrUrl: pageUrl ?? key,
        segmentIds: loc.segment ? [loc.segment.segmentId] : [],
        segmentS3Keys: loc.segment?.archived ? [loc.segment.storageKey] : [],
      };
    },
  );

  app.get(
    "/series/instances/:instanceid/segments",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "Sealed segments of an instance at a scale (admin)",
        description: `Oldest first. Pending points are not in a segment (see /scales). ${ERRORS_NOTE}`,
        params: InstanceParams,
        querystring: Type.Object({
          scale: ScaleQuery,
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
          offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
        }),
        response: {
          200: Type.Object({
            instanceId: Type.String(),
            seriesId: Type.String(),
            scale: Type.String(),
            dimensions: Dimensions,
            timeseriesStorage: Type.Literal("segments"),
            limit: Type.Integer(),
            offset: Type.Integer(),
            segments: Type.Array(Type.Ref("SeriesSegment")),
          }),
          404: Problem,
        },
      },
    },
    async (request) => {
      const inst = await instance(request.params.instanceid);
      const scale = scaleOf(inst, request.query.scale);
      const { limit, offset } = request.query;
      return {
        instanceId: inst.instanceId,
        seriesId: inst.seriesId,
        scale,
        dimensions: inst.dimensions,
        timeseriesStorage: "segments" as const,
        limit,
        offset,
        segments: await series().segments(inst.instanceId, scale, limit, offset),
      };
    },
  );

  app.get(
    "/series/instances/:instanceid/bucket-data",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "Stored values of one bucket, one row per point key (admin)",
        description: `Values are the exact decimal text stored; [] when the bucket is empty. ${ERRORS_NOTE}`,
        params: InstanceParams,
        querystring: BucketQuery,
        response: {
          200: Type.Object({
            instanceId: Type.String(),
            seriesId: Type.String(),
            scale: Type.String(),
            bucketStartTs: Type.Integer(),
            pageStartTs: Type.Integer(),
            dimensions: Dimensions,
            points: Type.Array(BucketPointSchema),
          }),
          404: Problem,
        },
      },
    },
    async (request) => {
      const inst = await instance(request.params.instanceid);
      const scale = scaleOf(inst, request.query.scale);
      const t = request.query.bucket_start_ts;
      checkBucket(scale, t);
      const { loc, points: p } = await series().bucket(inst.instanceId, scale, t);
      return {
        instanceId: inst.instanceId,
        seriesId: inst.seriesId,
        scale,
        bucketStartTs: t,
        pageStartTs: loc.pageStartTs,
        dimensions: inst.dimensions,
        points: bucketRows(p),
      };
    },
  );

  app.get(
    "/series/instances/:instanceid/segment-data",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Series"],
        summary: "Stored values of one sealed segment (admin)",
        description: `404 when the segment is not one of this instance at this scale. ${ERRORS_NOTE}`,
        params: InstanceParams,
        querystring: Type.Object({
          scale: ScaleQuery,
          segment_id: Type.String({ format: "uuid", maxLength: 36, description: "Segment id (uuid)." }),
        }),
        response: {
          200: Type.Object({
            instanceId: Type.String(),
            seriesId: Type.String(),
            scale: Type.String(),
            segmentId: Type.String(),
            dimensions: Dimensions,
            points: Type.Array(BucketPointSchema),
          }),
          404: Problem,
        },
      },
    },
    async (request) => {
      const inst = await instance(request.params.instanceid);
      const scale = scaleOf(inst, request.query.scale);
      const { segment, points } = await series().segment(inst.instanceId, scale, request.query.segment_id);
      return {
        instanceId: inst.instanceId,
        seriesId: inst.seriesId,
        scale,
        segmentId: segment.segmentId,
        dimensions: inst.dimensions,
        points: points.flatMap(bucketRows),
      };
    },
  );
}
