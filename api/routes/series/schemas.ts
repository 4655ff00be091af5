/** Schemas of the Series group: definitions, instances, scales, charts, and the admin inspection. */
import { Type } from "@sinclair/typebox";
import { SERIES_SCALES } from "../../../lib/series/definition.ts";
import { FormatQuery } from "../../csv.ts";
import { Nullable, StringEnum } from "../../schemas.ts";
import { MAX_TIME_MS } from "../prices/schemas.ts";

const TimeMs = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_TIME_MS, description });

export const SeriesIdParam = Type.String({
  pattern: "^(?!instances$)[a-z0-9][a-z0-9-]{0,63}$",
  description: "Series definition id (see GET /series/available); never `instances`.",
});
export const InstanceIdParam = Type.String({
  pattern: "^[0-9a-f]{64}$",
  description: "Series instance id: 64 lower-case hex (sha256 of the series id and its sorted dimensions).",
});
const ScaleDoc =
  "Scale: `0` (raw: one point per distinct event time), `1m`, `1h` or `1d`; each series serves the scales it lists.";
export const ScaleQuery = StringEnum(SERIES_SCALES, { description: ScaleDoc });
export const ScaleParam = Type.String({
  maxLength: 8,
  description: `${ScaleDoc} Another value answers 400.`,
});

export const InstanceParams = Type.Object({ instanceid: InstanceIdParam });
export const ChartParams = Type.Object({ instanceid: InstanceIdParam, scale: ScaleParam });

export const Dimensions = Type.Record(Type.String(), Type.String(), {
  description: 'Dimension name to value, for example `{ "chain_index": "3" }` or `{ "chain_index": "all" }`.',
});

export const TimeseriesDefinitionSchema = Type.Object(
  {
    id: Type.String(),
    description: Type.String(),
    scales: Type.Array(Type.String(), { description: "Scales served, finest first." }),
    pointKeys: Type.Array(Type.String(), { description: "Keys of a point (the chart's `key`)." }),
    pointKeyDetails: Type.Array(
      Type.Object({
        key: Type.String(),
        agg: StringEnum(["count", "sum", "net", "distinct", "last"] as const, {
          description:
            "How buckets aggregate: `count` and `sum` add up (`sum` of unsigned amounts, `net` of signed changes such as a holder count's delta, so its values may be negative), `distinct` is an exact distinct count at every scale (uniqExact states merged, never summed), `last` is the bucket's last value.",
        }),
        description: Type.String(),
      }),
    ),
    chartType: Type.String({ description: "Suggested chart: `line`, `bar` or `area`." }),
    dimensions: Type.Array(Type.String(), {
      description: "Dimension names; one instance per distinct value set.",
    }),
    source: StringEnum(["events", "balances"] as const, {
      description:
        "What the points are computed from: `events` (the normalized events, by the series processor) or `balances` (the blocks' outputs and spends, by the holders processor: every balance of every address over time).",
    }),
  },
  { $id: "SeriesTimeseriesDefinition", title: "SeriesTimeseriesDefinition" },
);

export const ListDefinitionSchema = Type.Object(
  {
    id: Type.String(),
    description: Type.String(),
    dimensions: Type.Array(Type.String()),
    sortKey: Type.String({ description: "`<timeseries id>.<point key>` ranked over the list's window." }),
    windowMs: Type.Integer({ description: "Trailing window of the ranking in ms." }),
    pageSize: Type.Integer(),
  },
  { $id: "SeriesListDefinition", title: "SeriesListDefinition" },
);

const summaryFields = {
  instanceId: Type.String({ description: "64-hex instance id." }),
  seriesId: Type.String(),
  dimensions: Dimensions,
  lastSeenAt: Type.Integer({ description: "Time (Unix ms) of the instance's newest main-chain event." }),
};

export const InstanceSummarySchema = Type.Object(summaryFields, {
  $id: "SeriesInstanceSummary",
  title: "SeriesInstanceSummary",
  description: "An instance in lists: its id, series, dimensions and the time of its newest event.",
});

export const ScaleEntrySchema = Type.Object(
  {
    scale: Type.String(),
    hasData: Type.Optional(Type.Boolean({ description: "Only with has_data=1/true: the scale has points." })),
    segmentCount: Type.Integer({ description: "Sealed segments (archived raw pages' segments included)." }),
    totalPoints: Type.Integer({ description: "Points in sealed segments plus pending points." }),
    minPointTs: Nullable(Type.Integer({ description: "Oldest point time (ms); null without points." })),
    maxPointTs: Nullable(Type.Integer({ description: "Newest point time (ms); null without points." })),
    pendingPoints: Type.Integer({
      description:
        "Points of the newest span, not yet sealed into a segment (served by charts all the same).",
    }),
  },
  { $id: "SeriesScaleEntry", title: "SeriesScaleEntry" },
);

export const InstanceDetailSchema = Type.Object(
  {
    ...summaryFields,
    description: Type.String({ description: "The series definition's description." }),
    chartType: Type.String(),
    pointKeys: Type.Array(Type.String()),
    scales: Type.Array(Type.Ref("SeriesScaleEntry")),
    pendingPoints: Type.Integer({ description: "Pending points over every scale." }),
    metadata: Nullable(
      Type.Object(
        {},
        { additionalProperties: true, description: "Admin overrides (PATCH), null when none." },
      ),
    ),
    rawArchivePageDays: Type.Integer({
      description:
        "Width of this instance's raw archive pages in days: its override, else SERIES_RAW_ARCHIVE_PAGE_DAYS.",
    }),
    archive: Type.Object(
      {
        pages: Type.Integer({ description: "Raw-scale pages in the object store." }),
        archivedPoints: Type.Integer({ description: "Raw points in those pages." }),
        archivedUntil: Nullable(
          Type.Integer({
            description: "End (exclusive, ms) of the newest page; older raw points are read from pages.",
          }),
        ),
      },
      { description: "Raw-scale archive of the instance." },
    ),
  },
  {
    $id: "SeriesInstanceDetail",
    title: "SeriesInstanceDetail",
    description: "An instance with its definition's chart type and keys, its scales, overrides and archive.",
  },
);

/** One object type for both point shapes: a union (anyOf) would make the serializer try each branch per point. */
export const ChartPointSchema = Type.Object(
  {
    t: Type.Integer({ description: "Bucket start (raw scale: event time), Unix ms." }),
    y: Type.Optional(Type.Number({ description: "With `key`: the key's value in the bucket." })),
    values: Type.Optional(
      Type.Record(Type.String(), Type.Number(), {
        description: "Without `key`: every point key whose value is a finite number in the bucket.",
      }),
    ),
    kind: StringEnum(["sealed", "pending", "archived"] as const, {
      description: "Where the point was read: a sealed segment, the pending span, or an archived raw page.",
    }),
  },
  { description: "With `key`: `{ t, y, kind }`; without: `{ t, values, kind }`." },
);

export const ChartWindowSchema = Type.Object(
  {
    rule: Type.Integer({
      description:
        "Chart rule applied: 1 latest `limit`; 2 `until_ts`; 3 `from_ts`; 4 `from_ts` + `to_ts` (SPEC.md chart rules).",
    }),
    order: StringEnum(["latest", "earliest"] as const, {
      description: "`latest`: the newest `limit` points of the window; `earliest`: the first `limit`.",
    }),
    from: Nullable(Type.Integer({ description: "Time of the first point served (null when none)." })),
    to: Nullable(Type.Integer({ description: "Time of the last point served (null when none)." })),
    requestedFromTs: Nullable(Type.Integer()),
    requestedToTs: Nullable(Type.Integer()),
    requestedUntilTs: Nullable(Type.Integer()),
    limit: Type.Integer(),
    truncated: Type.Boolean({
      description:
        "True when the 128-segment cap stopped the scan before `limit` points were found and more segments remain in the window (rule 5): ask again with a narrower window.",
    }),
    segmentsScanned: Type.Integer({ description: "Sealed segments read (at most 128)." }),
    pendingPointsIncluded: Type.Integer({
      description: "Points served from the pending (not yet sealed) span.",
    }),
  },
  { description: "The window actually served." },
);

export const ChartAuditSchema = Type.Object(
  {
    store: StringEnum(["clickhouse", "clickhouse+object-store"] as const, {
      description: "Stores read: ClickHouse, plus the object store when archived raw pages were read.",
    }),
    segmentsScanned: Type.Integer(),
    segmentIds: Type.Array(Type.String(), { description: "Ids of the segments read, in reading order." }),
    clickhouseRangesRead: Type.Integer({
      description: "ClickHouse range reads (sealed and pending points).",
    }),
    archivePagesRead: Type.Integer({ description: "Archive pages read from the object store." }),
    pendingIncluded: Type.Boolean({
      description: "The pending span held points in the window and was read.",
    }),
    pointsRead: Type.Integer({ description: "Points read before the limit was applied." }),
    segmentCap: Type.Integer({ description: "Most segments scanned per request (128)." }),
  },
  { description: "What the request read (facts only, no timings)." },
);

export const ChartQuery = Type.Object({
  key: Type.Optional(
    Type.String({
      maxLength: 64,
      description: "Point key: points are then `{t, y, kind}`; unknown keys answer 400.",
    }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 5000, default: 1000, description: "Most points returned." }),
  until_ts: Type.Optional(TimeMs("Rule 2: points with t <= until_ts, the last `limit`.")),
  from_ts: Type.Optional(TimeMs("Rules 3 and 4: points with t >= from_ts, the first `limit`.")),
  to_ts: Type.Optional(TimeMs("Rule 4 (with from_ts): closed range end.")),
  ...Object.fromEntries(
    ["bucket_start_ts", "from", "to", "start", "end", "interval", "page", "pageSize"].map((k) => [
      k,
      Type.Optional(
        Type.String({ maxLength: 64, description: "Not supported: answers 400 naming the replacement." }),
      ),
    ]),
  ),
  ...FormatQuery,
});

/** Deprecated chart parameters and what replaced them. */
export const DEPRECATED_CHART_PARAMS: Record<string, string> = {
  bucket_start_ts: "GET /series/instances/{instanceid}/bucket (admin) or from_ts/to_ts",
  from: "from_ts",
  to: "to_ts (with from_ts) or until_ts",
  start: "from_ts",
  end: "to_ts (with from_ts) or until_ts",
  interval: "the {scale} path parameter",
  page: "until_ts (older points) or from_ts (newer points)",
  pageSize: "limit",
};

export const SegmentSchema = Type.Object(
  {
    segmentId: Type.String({ format: "uuid" }),
    spanStart: Type.Integer({ description: "Start of the segment's time span (ms)." }),
    spanEnd: Type.Integer({ description: "End (exclusive) of the span." }),
    firstTs: Type.Integer(),
    lastTs: Type.Integer(),
    pointCount: Type.Integer(),
    storageKey: Type.String({
      description:
        "`clickhouse:series_points/<instance>/<scale>/<span start>` for points in ClickHouse, else the object key of the archive page holding them.",
    }),
    archived: Type.Boolean({
      description: "True when the points are in an archived page of the object store.",
    }),
  },
  { $id: "SeriesSegment", title: "SeriesSegment" },
);

export const BucketPointSchema = Type.Object({
  t: Type.Integer(),
  key: Type.String(),
  value: Type.String({ description: "Exact decimal text as stored." }),
  kind: StringEnum(["sealed", "pending", "archived"] as const),
});
