import { atKeyParam } from "../stores/clickhouse.ts";
import { nextVersion } from "./clock.ts";
import { SERIES_SCALE_MS, type SeriesScale } from "./definition.ts";
import type { SeriesDeps } from "./settings.ts";

/** Half-open ranges [lo, hi) per instance, as array parameters. */
export interface Ranges {
  ids: string[];
  los: number[];
  his: number[];
}

/**
 * The ranges' condition on `col`; `p` suffixes the parameter names (several ranges in one statement). The per-instance
 * bounds (`transform` of the instance) are exact but no bound of the primary key: alone, they read every fact or
 * point of each touched instance since the chain's start, so a backfill's rounds grew with the history behind them
 * (the `all` instances gain a fact every block). The lowest and highest bound of all the ranges, constants once the
 * parameters are bound, let the key skip what lies outside (issue 45).
 */
export const RANGE_WHERE = (col: string, p = "") =>
  `${col} >= arrayMin({los${p}:Array(UInt64)}) AND ${col} < arrayMax({his${p}:Array(UInt64)})
   AND instance_id IN {ids${p}:Array(String)}
   AND ${col} >= ${atKeyParam("instance_id", `ids${p}`, `los${p}`)}
   AND ${col} < ${atKeyParam("instance_id", `ids${p}`, `his${p}`)}`;

/** The ranges as parameters suffixed with `p`. */
export const rangeParams = (r: Ranges, p: string) => ({
  [`ids${p}`]: r.ids,
  [`los${p}`]: r.los,
  [`his${p}`]: r.his,
});

/** Buckets of one base scale (raw or 1m) computed from the facts of the ranges (parameters suffixed `p`). */
export function pointsFromFactsSql(p = ""): string {
  return `SELECT instance_id, {scale${p}:String} AS o_scale, b AS o_t, fkey AS o_key, any(fagg) AS o_agg,
       multiIf(o_agg = 'distinct', toString(uniqExactIf(fm, main_chain)),
               o_agg = 'last', argMaxIf(fv, (ts, lid), main_chain),
               o_agg = 'net', toString(sumIf(toInt256OrZero(fv), main_chain)),
               toString(sumIf(toUInt256OrZero(fv), main_chain))) AS o_value,
       uniqExactStateIf(fm, main_chain AND fagg = 'distinct') AS o_state,
       toUInt8(countIf(main_chain) = 0) AS o_deleted,
       toUInt64({version:String}) AS o_version
     FROM (
       SELECT instance_id, key AS fkey, agg AS fagg, ts, last_id AS lid, value AS fv, main_chain,
         arrayJoin(if(agg = 'distinct' AND notEmpty(members), members, [''])) AS fm,
         ts - ts % {width${p}:UInt64} AS b
       FROM series_block_facts FINAL
       WHERE ${RANGE_WHERE("ts", p)}
     )
     GROUP BY instance_id, fkey, b`;
}

/** Buckets of a coarser scale merged from the `1m` points of the ranges (parameters suffixed `p`). */
export function rollUpSql(p: string): string {
  return `SELECT instance_id, {to${p}:String}, b, pkey, any(pagg) AS o_agg,
       multiIf(o_agg = 'distinct', toString(uniqExactMerge(pstate)),
               o_agg = 'last', argMaxIf(pv, t, pdeleted = 0),
               o_agg = 'net', toString(sumIf(toInt256OrZero(pv), pdeleted = 0)),
               toString(sumIf(toUInt256OrZero(pv), pdeleted = 0))),
       uniqExactMergeState(pstate), toUInt8(countIf(pdeleted = 0) = 0), toUInt64({version:String})
     FROM (
       SELECT instance_id, key AS pkey, agg AS pagg, t, value AS pv, state AS pstate, deleted AS pdeleted,
         t - t % {width${p}:UInt64} AS b
       FROM series_points FINAL
       WHERE scale = '1m' AND ${RANGE_WHERE("t", p)}
     )
     GROUP BY instance_id, pkey, b`;
}

export const POINT_COLUMNS = "(instance_id, scale, t, key, agg, value, state, deleted, version)";

/**
 * One statement per step: raw and `1m` points from the facts, then `1h` and `1d` from the `1m` points
 * (a day merges its minutes directly: the same exact result as through hours, one statement less).
 */
export async function recomputePoints(
  deps: SeriesDeps,
  step: "facts" | "rollup",
  byScale: [SeriesScale, Ranges][],
) {
  const live = byScale.filter(([, r]) => r.ids.length > 0);
  if (live.length === 0) return;
  const params: Record<string, unknown> = { version: await nextVersion(deps) };
  const selects: string[] = [];
  for (const [i, [scale, r]] of live.entries()) {
    const p = `_${i}`;
    Object.assign(params, rangeParams(r, p), { [`width${p}`]: SERIES_SCALE_MS[scale] });
    if (step === "facts") {
      params[`scale${p}`] = scale;
      selects.push(pointsFromFactsSql(p));
    } else {
      params[`to${p}`] = scale;
      selects.push(rollUpSql(p));
    }
  }
  await deps.ch.command(
    `series_points_${step === "facts" ? "recompute" : "rollup"}`,
    `INSERT INTO series_points ${POINT_COLUMNS} ${selects.join("\n     UNION ALL ")}`,
    params,
  );
}
