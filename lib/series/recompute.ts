import { archiveRaw, passState, rebuildPages } from "./archive.ts";
import { nextVersion } from "./clock.ts";
import { SERIES_SCALE_MS, type SeriesScale } from "./definition.ts";
import { timeseriesById } from "./definitions/index.ts";
import { type SeriesTouched, touchSeries } from "./facts.ts";
import { RANGE_WHERE, type Ranges, recomputePoints } from "./points.ts";
import { type Newest, recomputeSegments } from "./segments.ts";
import { bucketOf, type SeriesDeps } from "./settings.ts";

/** last_seen_at of the touched instances: their newest main-chain fact (0 when none is left). */
async function updateInstances(deps: SeriesDeps, touched: SeriesTouched, newest: Newest): Promise<void> {
  const ids: string[] = [];
  const los: number[] = [];
  const his: number[] = [];
  const gone: string[] = [];
  for (const id of touched.keys()) {
    const t = newest.get(`${id}/1m`);
    if (t === undefined) gone.push(id);
    else {
      ids.push(id);
      los.push(t);
      his.push(t + SERIES_SCALE_MS["1m"]);
    }
  }
  const version = await nextVersion(deps);
  if (ids.length > 0) {
    await deps.ch.command(
      "series_instances_update",
      `INSERT INTO series_instances (instance_id, series_id, dimensions, last_seen_at, version)
       SELECT instance_id, any(series_id), any(dimensions), maxIf(ts, main_chain), toUInt64({version:String})
       FROM series_block_facts FINAL WHERE ${RANGE_WHERE("ts")} GROUP BY instance_id`,
      { ids, los, his, version },
    );
  }
  if (gone.length > 0) {
    await deps.ch.command(
      "series_instances_gone",
      `INSERT INTO series_instances (instance_id, series_id, dimensions, last_seen_at, version)
       SELECT instance_id, series_id, dimensions, 0, toUInt64({version:String})
       FROM series_instances FINAL WHERE instance_id IN {ids:Array(String)}`,
      { ids: gone, version },
    );
  }
}

/** Recomputes everything the touched spans reach: points at every scale, segments, archive, instances. */
export async function recomputeSeries(deps: SeriesDeps, touched: SeriesTouched): Promise<void> {
  if (touched.size === 0) return;
  const ids = [...touched.keys()];
  const state = await passState(deps.ch, ids);
  const { pages } = state;
  const ranges = (scale: SeriesScale): Ranges => {
    const r: Ranges = { ids: [], los: [], his: [] };
    for (const [id, span] of touched) {
      const def = timeseriesById(span.seriesId);
      if (!def?.scales.includes(scale)) continue;
      // A rolled-up scale reads every finer point of its touched buckets.
      let lo = bucketOf(scale, span.lo);
      const hi = bucketOf(scale, span.hi) + SERIES_SCALE_MS[scale];
      if (scale === "0") lo = Math.max(lo, pages.get(id)?.at(-1)?.end ?? 0);
      if (lo >= hi) continue;
      r.ids.push(id);
      r.los.push(lo);
      r.his.push(hi);
    }
    return r;
  };
  await recomputePoints(deps, "facts", [
    ["0", ranges("0")],
    ["1m", ranges("1m")],
  ]);
  await recomputePoints(deps, "rollup", [
    ["1h", ranges("1h")],
    ["1d", ranges("1d")],
  ]);

  // Archived pages the touched spans reach are rebuilt from the facts.
  const rebuild: { id: string; start: number; end: number }[] = [];
  for (const [id, span] of touched) {
    for (const p of pages.get(id) ?? [])
      if (p.start <= span.hi && span.lo < p.end) rebuild.push({ id, ...p });
  }
  await rebuildPages(deps, rebuild);

  const jobs: { id: string; scale: SeriesScale; lo: number; floor: number }[] = [];
  for (const [id, span] of touched) {
    for (const scale of timeseriesById(span.seriesId)?.scales ?? []) {
      // Raw segments below the archive's end belong to its pages.
      const floor = scale === "0" ? (pages.get(id)?.at(-1)?.end ?? 0) : 0;
      jobs.push({ id, scale, lo: Math.max(floor, bucketOf(scale, span.lo)), floor });
    }
  }
  const newest: Newest = new Map();
  await recomputeSegments(deps, jobs, newest, state.lastSealed);
  await archiveRaw(
    deps,
    ids.filter((id) => timeseriesById(touched.get(id)!.seriesId)?.scales.includes("0")),
    newest,
    state,
  );
  await updateInstances(deps, touched, newest);
}

/**
 * Merges the recomputes of concurrent batches (over Kafka, batches of several partitions are handled at
 * once): a request joins the next pass, which starts after the running one and after the request's facts
 * were written, so it reads them. Passes run one at a time; a failed pass fails every batch it merged
 * (each retries). One pass per fetch instead of one per partition: the `all` instances are touched by
 * every partition.
 */
export function createRecomputeQueue(run: (touched: SeriesTouched) => Promise<void>) {
  let pending: SeriesTouched | null = null;
  let next: Promise<void> = Promise.resolve();
  let running: Promise<void> = Promise.resolve();
  return (touched: SeriesTouched): Promise<void> => {
    if (!pending) {
      const mine: SeriesTouched = new Map();
      pending = mine;
      next = running
        .catch(() => undefined)
        .then(() => {
          pending = null;
          return run(mine);
        });
      running = next;
    }
    for (const [id, span] of touched) {
      touchSeries(pending, id, span.seriesId, span.lo);
      touchSeries(pending, id, span.seriesId, span.hi);
    }
    return next;
  };
}
