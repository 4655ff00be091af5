import { badRequest } from "../errors.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { ObjectStore } from "../stores/object-store.ts";
import { SERIES_SCALES, type SeriesScale } from "./definition.ts";
import {
  type ArchiveSummary,
  archiveSummary,
  bucketPoints,
  type ChartResult,
  createPageReader,
  getInstance,
  getMetadata,
  getSegment,
  listInstances,
  listSegments,
  locateBucket,
  type PageReader,
  type ResolvedInstance,
  readChart,
  readList,
  type ScaleEntry,
  scaleEntries,
  segmentPoints,
  setMetadata,
} from "./reader.ts";
import type { SeriesSettings } from "./settings.ts";

/** The query of a chart as requested: rule 1 without a window, 2 `until_ts`, 3 `from_ts`, 4 both ends. */
export interface ChartRequest {
  key?: string;
  limit: number;
  until_ts?: number;
  from_ts?: number;
  to_ts?: number;
}

export interface SeriesService {
  /** An instance by id (404 when unknown), read from ClickHouse. */
  instance(id: string): Promise<ResolvedInstance>;
  /** The instance's scale, or 400 naming the scales it serves. */
  scaleOf(inst: ResolvedInstance, scale: string): SeriesScale;
  /** A chart after the rules' checks (400 naming the parameter), with the instance and scale it was read for. */
  chart(
    instanceId: string,
    scale: string,
    q: ChartRequest,
  ): Promise<{ inst: ResolvedInstance; scale: SeriesScale; result: ChartResult }>;
  /** A series' instances, a page of them, and how many there are. */
  instances(seriesId: string, limit: number, offset: number): ReturnType<typeof listInstances>;
  /** A ranked list's entries over its window. */
  list(q: Parameters<typeof readList>[1], limit: number, offset: number): ReturnType<typeof readList>;
  /** An instance's scales (with data only, or all it serves), its metadata and its archive's summary. */
  detail(
    inst: ResolvedInstance,
  ): Promise<[ScaleEntry[], Awaited<ReturnType<typeof getMetadata>>, ArchiveSummary]>;
  scales(inst: ResolvedInstance, hasData: boolean): Promise<ScaleEntry[]>;
  /** Merges a patch into an instance's metadata; the whole metadata after it. */
  setMetadata(instanceId: string, patch: Record<string, unknown>): ReturnType<typeof setMetadata>;
  /** Where a bucket's points live (its segment, archived or not) and the points. */
  bucket(
    instanceId: string,
    scale: SeriesScale,
    bucketStart: number,
  ): Promise<{
    loc: Awaited<ReturnType<typeof locateBucket>>;
    points: Awaited<ReturnType<typeof bucketPoints>>;
  }>;
  segments(
    instanceId: string,
    scale: SeriesScale,
    limit: number,
    offset: number,
  ): ReturnType<typeof listSegments>;
  /** One segment (404 when unknown) and its points. */
  segment(
    instanceId: string,
    scale: SeriesScale,
    segmentId: string,
  ): Promise<{
    segment: Awaited<ReturnType<typeof getSegment>>;
    points: Awaited<ReturnType<typeof segmentPoints>>;
  }>;
  /** The archive's page reader (opens the object store on first use). */
  pages(): PageReader;
  /** The public URL of an archived page, when the store is open and has one. */
  pageUrl(storageKey: string): string | null;
  close(): Promise<void>;
}

/** Checks a chart request's window parameters against the rules; throws 400 naming the parameter. */
export function checkChartRequest(q: ChartRequest): void {
  if (q.to_ts !== undefined && q.from_ts === undefined)
    throw badRequest("to_ts needs from_ts (rule 4); for the points up to a time use until_ts", {
      field: "to_ts",
    });
  if (q.until_ts !== undefined && q.from_ts !== undefined)
    throw badRequest("until_ts cannot be combined with from_ts: use from_ts with to_ts", {
      field: "until_ts",
    });
  if (q.from_ts !== undefined && q.to_ts !== undefined && q.to_ts < q.from_ts)
    throw badRequest(`to_ts (${q.to_ts}) is before from_ts (${q.from_ts})`, { field: "to_ts" });
}

export interface SeriesServiceOptions {
  ch: () => Ch;
  /** Bucket, segment and page widths (lib/series/settings.ts). */
  settings: SeriesSettings;
  /** Opens the archive's object store (on the first page read). */
  openArchive: () => ObjectStore;
}

export function createSeriesService(o: SeriesServiceOptions): SeriesService {
  const { ch, settings } = o;
  let objects: ObjectStore | null = null;
  let reader: PageReader | null = null;
  // Charts need an instance's series and dimensions only, which never change: kept once read.
  const known = new Map<string, ResolvedInstance>();
  const chartInstance = async (id: string) => {
    const hit = known.get(id);
    if (hit) return hit;
    const inst = await getInstance(ch(), id);
    if (known.size >= 10_000) known.delete(known.keys().next().value!);
    known.set(id, inst);
    return inst;
  };
  const service: SeriesService = {
    instance: (id) => getInstance(ch(), id),
    scaleOf(inst, scale) {
      if (!(inst.def.scales as readonly string[]).includes(scale)) {
        throw badRequest(
          `Unknown scale ${scale} for series ${inst.seriesId}: use one of ${inst.def.scales.join(", ")}`,
          { field: "scale" },
        );
      }
      return scale as SeriesScale;
    },
    async chart(instanceId, scaleParam, q) {
      checkChartRequest(q);
      if (!(SERIES_SCALES as readonly string[]).includes(scaleParam)) {
        throw badRequest(`Unknown scale ${scaleParam}: use one of ${SERIES_SCALES.join(", ")}`, {
          field: "scale",
        });
      }
      const inst = await chartInstance(instanceId);
      const scale = service.scaleOf(inst, scaleParam);
      if (q.key !== undefined && !inst.def.pointKeys.some((k) => k.key === q.key)) {
        throw badRequest(
          `Unknown key ${q.key} for series ${inst.seriesId}: use one of ${inst.def.pointKeys.map((k) => k.key).join(", ")}`,
          { field: "key" },
        );
      }
      const result = await readChart(ch(), service.pages(), inst, scale, q);
      return { inst, scale, result };
    },
    instances: (seriesId, limit, offset) => listInstances(ch(), seriesId, limit, offset),
    list: (q, limit, offset) => readList(ch(), q, limit, offset),
    detail: (inst) =>
      Promise.all([
        scaleEntries(ch(), inst, false),
        getMetadata(ch(), inst.instanceId),
        archiveSummary(ch(), inst.instanceId),
      ]),
    scales: (inst, hasData) => scaleEntries(ch(), inst, hasData),
    setMetadata: (instanceId, patch) => setMetadata(ch(), instanceId, patch),
    async bucket(instanceId, scale, bucketStart) {
      const loc = await locateBucket(ch(), settings, instanceId, scale, bucketStart);
      return { loc, points: await bucketPoints(ch(), service.pages(), instanceId, scale, bucketStart, loc) };
    },
    segments: (instanceId, scale, limit, offset) => listSegments(ch(), instanceId, scale, limit, offset),
    async segment(instanceId, scale, segmentId) {
      const segment = await getSegment(ch(), instanceId, scale, segmentId);
      return { segment, points: await segmentPoints(ch(), service.pages(), instanceId, scale, segment) };
    },
    pages() {
      objects ??= o.openArchive();
      reader ??= createPageReader(objects);
      return reader;
    },
    pageUrl: (storageKey) => (objects ? objects.urlOf(storageKey) : null),
    async close() {
      await objects?.close();
    },
  };
  return service;
}
