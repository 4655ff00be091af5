/**
 * The writer of the series tables. Facts are aggregated per (instance, point key, block) into
 * series_block_facts, with the block message's seq as version; a retraction writes them again with
 * main_chain = false. Points are never summed on insert: each batch recomputes the buckets it touched,
 * raw and 1m from `series_block_facts FINAL`, 1h and 1d from 1m (distinct counts merge uniqExact states), then
 * the segments of the touched spans, the archive pages of raw points past retention, and the instances'
 * last_seen_at. Any order, repetition or retraction of batches leaves the state of one clean pass.
 *
 * Every row a recompute writes carries a version from the write clock below, newer than every row
 * written before: a recompute reads everything stored before it, so the newest write is always the
 * right one. (Versions from the facts' seqs are not enough: over Kafka a retraction can carry a smaller
 * seq than another chain's block already counted in the same bucket.) Recomputes of one process run one
 * at a time (createRecomputeQueue), and each instance has one owner among the series-recompute replicas (its
 * touched spans are keyed by instance id). The holders recompute (lib/series/holders.ts) recomputes the
 * token-holders instances through the same functions: no instance is written by both, and each row key belongs
 * to one instance.
 */
import { createHash } from "node:crypto";
import type { EventsMessage } from "../events/wire.ts";
import { atKeyParam, type Ch, positionParam } from "../stores/clickhouse.ts";
import {
  instanceOf,
  SERIES_SCALE_MS,
  type SeriesEvent,
  type SeriesScale,
  type TimeseriesDefinition,
} from "./definition.ts";
import { TIMESERIES, timeseriesById } from "./definitions/index.ts";
import { clickhouseKeyOf, pageKeyOf, segmentIdOf } from "./ids.ts";
import { bucketOf, DAY_MS, type SeriesDeps, type SeriesSettings, segmentSpanMs, spanOf } from "./settings.ts";

/** What every fact row says: which instance and point key, when, from which block, at which version. */
interface FactBase {
  series_id: string;
  instance_id: string;
  dimensions: string;
  key: string;
  agg: string;
  ts: number;
  block_hash: string;
  value: string;
  /** The block message's seq; for the holders' facts, the write clock (decimal text, lib/series/holders.ts). */
  version: number | string;
}

/** One event's contribution to a point key of one instance (see the definitions). */
export interface EventFact extends FactBase {
  /** The event's id (the newest `last` value of a bucket wins by (ts, event id)). */
  event_id: string;
  member: string;
}

/** The facts of one (instance, point key, block): a row of series_block_facts. */
export interface FactRow extends FactBase {
  last_id: string;
  members: string[];
  main_chain: boolean;
}

/** How each point key of a definition aggregates, by key (looked up once per definition). */
const aggsByDef = new WeakMap<TimeseriesDefinition, Map<string, string>>();
function aggOf(def: TimeseriesDefinition, key: string): string {
  let aggs = aggsByDef.get(def);
  if (!aggs) {
    aggs = new Map(def.pointKeys.map((k) => [k.key, k.agg]));
    aggsByDef.set(def, aggs);
  }
  const agg = aggs.get(key);
  if (!agg) throw new Error(`Series ${def.id} derived a fact for unknown point key ${key}`);
  return agg;
}

/** A row of series_block_facts being aggregated. */
interface Acc {
  row: FactRow;
  sum: bigint;
  set: Set<string> | null;
}

/**
 * Facts aggregated per (instance, point key, block) as they are added: every event of a block has the block's
 * time, so counts and sums add up, the last value is the one of the highest event id, and members form a set.
 * The series processor adds a message's events straight in (no row per event fact in between).
 */
export class BlockFactSet {
  /**
   * Each row with its running sum and member set beside it (not in it: the rows go to the insert as they are), by
   * block, instance and point key in nested maps: the strings are the ones the facts carry, already hashed, where a
   * key joined per fact would be a new string to hash.
   */
  private readonly acc = new Map<string, Map<string, Map<string, Acc>>>();
  private readonly list: Acc[] = [];

  /** Adds one event's facts under the given definitions; returns how many it had. */
  addEvent(e: SeriesEvent, version: number, defs: readonly TimeseriesDefinition[] = TIMESERIES): number {
    let n = 0;
    for (const def of defs) {
      const facts = def.facts(e);
      for (const f of facts) {
        const agg = aggOf(def, f.key);
        const instance = instanceOf(def.id, f.dimensions);
        const value = agg === "count" || agg === "distinct" ? "" : (f.value ?? "0");
        this.put(def.id, instance.id, instance.json, f.key, agg, e, value, f.member ?? "", version);
        n++;
      }
    }
    return n;
  }

  /** Adds one fact row of an event. */
  add(f: EventFact): void {
    this.put(
      f.series_id,
      f.instance_id,
      f.dimensions,
      f.key,
      f.agg,
      { id: f.event_id, timestamp: f.ts, block_hash: f.block_hash },
      f.value,
      f.member,
      f.version,
    );
  }

  private put(
    seriesId: string,
    instanceId: string,
    dimensions: string,
    key: string,
    agg: string,
    e: { id: string; timestamp: number; block_hash: string },
    value: string,
    member: string,
    version: number | string,
  ): void {
    let byInstance = this.acc.get(e.block_hash);
    if (!byInstance) {
      byInstance = new Map();
      this.acc.set(e.block_hash, byInstance);
    }
    let byKey = byInstance.get(instanceId);
    if (!byKey) {
      byKey = new Map();
      byInstance.set(instanceId, byKey);
    }
    let r = byKey.get(key);
    if (!r) {
      r = {
        row: {
          series_id: seriesId,
          instance_id: instanceId,
          dimensions,
          key,
          agg,
          ts: e.timestamp,
          block_hash: e.block_hash,
          value: "",
          last_id: "",
          members: [],
          main_chain: true,
          version,
        },
        sum: 0n,
        set: agg === "distinct" ? new Set() : null,
      };
      byKey.set(key, r);
      this.list.push(r);
    }
    const row = r.row;
    if (Number(version) > Number(row.version)) row.version = version;
    if (agg === "count") r.sum += 1n;
    else if (agg === "sum" || agg === "net") r.sum += BigInt(value);
    else if (agg === "distinct") r.set!.add(member);
    else if (row.last_id === "" || e.id > row.last_id) {
      row.last_id = e.id;
      row.value = value;
    }
  }

  /** The rows of series_block_facts. */
  rows(): FactRow[] {
    const out: FactRow[] = [];
    for (const { row, sum, set } of this.list) {
      if (row.agg === "count" || row.agg === "sum" || row.agg === "net") row.value = sum.toString();
      if (set) row.members = [...set].sort();
      out.push(row);
    }
    return out;
  }
}

/** Aggregates event facts per (instance, point key, block) (see BlockFactSet). */
export function blockFacts(facts: readonly EventFact[]): FactRow[] {
  const set = new BlockFactSet();
  for (const f of facts) set.add(f);
  return set.rows();
}

/** Time span of the facts a batch wrote or retracted, per instance. */
export type SeriesTouched = Map<string, { seriesId: string; lo: number; hi: number }>;

export function touchSeries(touched: SeriesTouched, instanceId: string, seriesId: string, ts: number): void {
  const span = touched.get(instanceId);
  if (!span) touched.set(instanceId, { seriesId, lo: ts, hi: ts });
  else {
    if (ts < span.lo) span.lo = ts;
    if (ts > span.hi) span.hi = ts;
  }
}

/** The facts of one event under the given definitions (pure). */
export function factsOfEvent(
  e: SeriesEvent,
  version: number,
  defs: readonly TimeseriesDefinition[] = TIMESERIES,
): EventFact[] {
  const rows: EventFact[] = [];
  for (const def of defs) {
    for (const f of def.facts(e)) {
      const agg = aggOf(def, f.key);
      const instance = instanceOf(def.id, f.dimensions);
      rows.push({
        series_id: def.id,
        instance_id: instance.id,
        dimensions: instance.json,
        key: f.key,
        agg,
        ts: e.timestamp,
        event_id: e.id,
        block_hash: e.block_hash,
        value: agg === "count" || agg === "distinct" ? "" : (f.value ?? "0"),
        member: f.member ?? "",
        version,
      });
    }
  }
  return rows;
}

/** The facts of a block message's events, aggregated per (instance, point key) as they are derived. */
export function factsOfMessage(
  m: EventsMessage & { kind: "block" },
  defs: readonly TimeseriesDefinition[] = TIMESERIES,
): FactRow[] {
  const set = new BlockFactSet();
  // Payloads over EVENTS_MAX_PAYLOAD_BYTES travel beside the events, under the event's payload_ref.
  const offloaded = m.offloaded.length > 0 ? new Map(m.offloaded.map((o) => [o.ref, o.payload_json])) : null;
  for (const w of m.events) {
    let parsed: Record<string, unknown> | null = null;
    // The fields a definition reads, one shape for every event (not a copy of every wire field).
    const e: SeriesEvent = {
      id: w.id,
      chain_index: m.chain_index,
      block_hash: m.block_hash,
      timestamp: m.block_timestamp,
      tx_id: w.tx_id,
      is_main: w.is_main,
      dapp_id: w.dapp_id,
      category: w.category,
      sub_kind: w.sub_kind,
      type: w.type,
      from: w.from,
      to: w.to,
      with: w.with,
      token_id: w.token_id,
      amount: w.amount,
      payload: () => {
        parsed ??= JSON.parse(
          (w.payload_ref ? offloaded?.get(w.payload_ref) : undefined) ?? w.payload_json,
        ) as Record<string, unknown>;
        return parsed;
      },
    };
    set.addEvent(e, m.seq, defs);
  }
  return set.rows();
}

export async function insertFacts(ch: Ch, rows: readonly FactRow[], touched: SeriesTouched): Promise<void> {
  for (const r of rows) touchSeries(touched, r.instance_id, r.series_id, r.ts);
  await ch.insert("series_facts_insert", "series_block_facts", rows);
}

/** Marks the facts of a block that left the main chain (a newer seq wins) and touches their spans. */
export async function retractFacts(
  ch: Ch,
  block: { block_hash: string; seq: number },
  touched: SeriesTouched,
): Promise<void> {
  const spans = await ch.query<{ instance_id: string; series_id: string; lo: string; hi: string }>(
    "series_facts_retracted_spans",
    `SELECT instance_id, any(series_id) AS series_id, min(ts) AS lo, max(ts) AS hi
     FROM series_block_facts FINAL WHERE block_hash = {hash:String} GROUP BY instance_id`,
    { hash: block.block_hash },
  );
  if (spans.length === 0) return;
  await ch.command(
    "series_facts_retract",
    `INSERT INTO series_block_facts SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
     FROM series_block_facts FINAL WHERE block_hash = {hash:String}`,
    { seq: block.seq, hash: block.block_hash },
  );
  for (const s of spans) {
    touchSeries(touched, s.instance_id, s.series_id, Number(s.lo));
    touchSeries(touched, s.instance_id, s.series_id, Number(s.hi));
  }
}

/** Half-open ranges [lo, hi) per instance, as array parameters. */
interface Ranges {
  ids: string[];
  los: number[];
  his: number[];
}

/** The ranges' condition on `col`; `p` suffixes the parameter names (several ranges in one statement). */
const RANGE_WHERE = (col: string, p = "") =>
  `instance_id IN {ids${p}:Array(String)}
   AND ${col} >= ${atKeyParam("instance_id", `ids${p}`, `los${p}`)}
   AND ${col} < ${atKeyParam("instance_id", `ids${p}`, `his${p}`)}`;

/** The ranges as parameters suffixed with `p`. */
const rangeParams = (r: Ranges, p: string) => ({
  [`ids${p}`]: r.ids,
  [`los${p}`]: r.los,
  [`his${p}`]: r.his,
});

/** Buckets of one base scale (raw or 1m) computed from the facts of the ranges (parameters suffixed `p`). */
function pointsFromFactsSql(p = ""): string {
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
function rollUpSql(p: string): string {
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

const POINT_COLUMNS = "(instance_id, scale, t, key, agg, value, state, deleted, version)";

/**
 * One statement per step: raw and `1m` points from the facts, then `1h` and `1d` from the `1m` points
 * (a day merges its minutes directly: the same exact result as through hours, one statement less).
 */
async function recomputePoints(deps: SeriesDeps, step: "facts" | "rollup", byScale: [SeriesScale, Ranges][]) {
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

/**
 * The write clock: wall-clock nanoseconds (ms × 1e6, then one more per write), never below a version
 * already stored in the series tables, so a restart after a clock step back still writes newer rows.
 * Versions are decimal text (UInt64 past 2^53).
 */
interface WriteClock {
  last: bigint;
  loaded: Promise<void>;
}
const clocks = new WeakMap<Ch, WriteClock>();

/** Raises the clock to the newest stored version (it never goes back); a failed read is retried by the next write. */
function loadClock(ch: Ch, clock: WriteClock, after: Promise<void>): void {
  clock.loaded = after.then(async () => {
    const [row] = await ch.query<{ v: string }>(
      "series_versions_max",
      `SELECT toString(greatest(
         (SELECT max(version) FROM series_points), (SELECT max(version) FROM series_segments),
         (SELECT max(version) FROM series_instances), (SELECT max(version) FROM series_archive_pages),
         (SELECT max(version) FROM holder_changes), (SELECT max(version) FROM holder_pending_token_moments),
         (SELECT max(version) FROM holder_hour_sums))) AS v`,
    );
    const stored = BigInt(row?.v ?? "0");
    if (stored > clock.last) clock.last = stored;
  });
  clock.loaded.catch(() => {
    if (clocks.get(ch) === clock) clocks.delete(ch);
  });
}

export async function nextVersion(deps: Pick<SeriesDeps, "ch">): Promise<string> {
  let clock = clocks.get(deps.ch);
  if (!clock) {
    clock = { last: 0n, loaded: Promise.resolve() };
    loadClock(deps.ch, clock, Promise.resolve());
    clocks.set(deps.ch, clock);
  }
  await clock.loaded;
  const now = BigInt(Date.now()) * 1_000_000n;
  clock.last = now > clock.last ? now : clock.last + 1n;
  return clock.last.toString();
}

/**
 * Reads the newest stored version again before the next write (series-recompute, when its Kafka group rebalanced):
 * instances taken over from another replica then get versions above what it wrote, whatever its clock said.
 */
export function refreshVersionClock(ch: Ch): void {
  const clock = clocks.get(ch);
  if (clock)
    loadClock(
      ch,
      clock,
      clock.loaded.catch(() => undefined),
    );
}

interface SegmentRow {
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

function segmentRow(
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
type Newest = Map<string, number>;

/**
 * Recomputes the segments of (instance, scale) from the start of the touched span (or of the last sealed
 * segment, which a retraction may make pending again) onwards: every span but the newest is sealed.
 */
async function recomputeSegments(
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

/** Raw points of a page as stored in the object store. */
export interface ArchivePage {
  instanceId: string;
  scale: "0";
  pageStart: number;
  pageEnd: number;
  points: { t: number; values: Record<string, string> }[];
}

interface PointRow {
  t: string;
  key: string;
  value: string;
}

function pageOf(instanceId: string, pageStart: number, pageEnd: number, rows: PointRow[]): ArchivePage {
  const byT = new Map<number, Record<string, string>>();
  for (const r of rows) {
    const t = Number(r.t);
    const values = byT.get(t) ?? {};
    values[r.key] = r.value;
    byT.set(t, values);
  }
  const points = [...byT.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([t, values]) => ({
      t,
      values: Object.fromEntries(
        Object.keys(values)
          .sort()
          .map((k) => [k, values[k]!]),
      ),
    }));
  return { instanceId, scale: "0", pageStart, pageEnd, points };
}

/**
 * Stores archive pages in one version: each page's object, then the raw segments of their spans (pointing at the
 * pages) and the page rows, one statement each for all the pages. A span of a page that no longer has points (an
 * existing segment row inside the page) gets an empty row.
 */
async function storePages(deps: SeriesDeps, pages: readonly ArchivePage[], version: string): Promise<void> {
  if (pages.length === 0) return;
  const { ch, objects, settings } = deps;
  const segments: SegmentRow[] = [];
  const pageRows: Record<string, unknown>[] = [];
  /** Per instance, its pages in this call with the spans their points cover. */
  const byInstance = new Map<string, { start: number; end: number; spans: Set<number> }[]>();
  for (const page of pages) {
    const key = pageKeyOf(page.instanceId, page.pageStart, page.pageEnd);
    const body = Buffer.from(JSON.stringify(page));
    await objects.put(key, body);
    const stats = new Map<number, { first: number; last: number; count: number }>();
    for (const p of page.points) {
      const s = spanOf(settings, "0", p.t);
      const st = stats.get(s);
      if (!st) stats.set(s, { first: p.t, last: p.t, count: 1 });
      else {
        st.last = p.t;
        st.count++;
      }
    }
    for (const [s, st] of stats)
      segments.push(segmentRow(settings, page.instanceId, "0", s, st, key, version));
    const list = byInstance.get(page.instanceId) ?? [];
    list.push({ start: page.pageStart, end: page.pageEnd, spans: new Set(stats.keys()) });
    byInstance.set(page.instanceId, list);
    pageRows.push({
      instance_id: page.instanceId,
      page_start: page.pageStart,
      page_end: page.pageEnd,
      storage_key: key,
      point_count: page.points.length,
      sha256: createHash("sha256").update(body).digest("hex"),
      version,
    });
  }
  const ids = [...byInstance.keys()];
  const los = ids.map((id) => Math.min(...byInstance.get(id)!.map((x) => x.start)));
  const his = ids.map((id) => Math.max(...byInstance.get(id)!.map((x) => x.end)));
  const existing = await ch.query<{ instance_id: string; s: string }>(
    "series_page_segments_existing",
    `SELECT instance_id, toString(span_start) AS s FROM series_segments FINAL
     WHERE instance_id IN {ids:Array(String)} AND scale = '0' AND deleted = 0
       AND span_start >= ${atKeyParam("instance_id", "ids", "los")} AND span_start < ${atKeyParam("instance_id", "ids", "his")}`,
    { ids, los, his },
  );
  for (const e of existing) {
    const s = Number(e.s);
    // Only spans inside a page of this call (a rebuild's pages of one instance need not be contiguous).
    const page = byInstance.get(e.instance_id)?.find((x) => x.start <= s && s < x.end);
    if (page && !page.spans.has(s))
      segments.push(segmentRow(settings, e.instance_id, "0", s, null, "", version));
  }
  await ch.insert("series_segments_insert", "series_segments", segments);
  await ch.insert("series_archive_pages_insert", "series_archive_pages", pageRows);
}

/** What a pass reads of the touched instances before it writes: in one statement. */
interface PassState {
  /** Archived pages per instance, in time order (the last one's end is where the archive ends). */
  pages: Map<string, { start: number; end: number }[]>;
  /** Raw page width in days of the instances that override it (PATCH rawArchivePageDays). */
  pageDays: Map<string, number>;
  /** Start of the newest sealed segment in ClickHouse per `<instance>/<scale>`. */
  lastSealed: Map<string, number>;
}

async function passState(ch: Ch, ids: string[]): Promise<PassState> {
  const state: PassState = { pages: new Map(), pageDays: new Map(), lastSealed: new Map() };
  if (ids.length === 0) return state;
  const rows = await ch.query<{ k: string; instance_id: string; s: string; a: string; b: string }>(
    "series_pass_state",
    `SELECT 'page' AS k, instance_id, '' AS s, toString(page_start) AS a, toString(page_end) AS b
     FROM series_archive_pages FINAL WHERE instance_id IN {ids:Array(String)}
     UNION ALL
     SELECT 'meta', instance_id, '', metadata, '' FROM series_instance_meta FINAL WHERE instance_id IN {ids:Array(String)}
     UNION ALL
     SELECT 'sealed', instance_id, toString(scale), toString(max(span_start)), '' FROM series_segments FINAL
     WHERE instance_id IN {ids:Array(String)} AND deleted = 0 AND storage_key LIKE 'clickhouse:%'
     GROUP BY instance_id, scale`,
    { ids },
  );
  for (const r of rows) {
    if (r.k === "page") {
      const list = state.pages.get(r.instance_id) ?? [];
      list.push({ start: Number(r.a), end: Number(r.b) });
      state.pages.set(r.instance_id, list);
    } else if (r.k === "meta") {
      const days = (JSON.parse(r.a) as { rawArchivePageDays?: number }).rawArchivePageDays;
      if (typeof days === "number") state.pageDays.set(r.instance_id, days);
    } else state.lastSealed.set(`${r.instance_id}/${r.s}`, Number(r.a));
  }
  for (const list of state.pages.values()) list.sort((x, y) => x.start - y.start);
  return state;
}

/** Rebuilds archived pages from the facts (a replay, reprocess or deep reorg reached archived times). */
async function rebuildPages(deps: SeriesDeps, pages: { id: string; start: number; end: number }[]) {
  for (const p of pages) {
    const version = await nextVersion(deps);
    const rows = await deps.ch.query<PointRow>(
      "series_page_rebuild",
      `SELECT o_t AS t, o_key AS key, o_value AS value FROM (${pointsFromFactsSql()}) WHERE o_deleted = 0`,
      { ids: [p.id], los: [p.start], his: [p.end], scale: "0", width: 1, version: "0" },
    );
    await storePages(deps, [pageOf(p.id, p.start, p.end, rows)], version);
  }
}

/**
 * A round of statements reads, stores and deletes the pages of instances until it holds this many pages (their points
 * are in memory; one instance's due pages always go in one round).
 */
const ARCHIVE_PAGES_PER_ROUND = 64;

/**
 * Archives the raw points of whole pages that ended before the instance's newest point minus retention. About
 * ARCHIVE_PAGES_PER_ROUND pages are handled by one round of statements: one read of their points, their objects,
 * one insert of their segments and one of their rows, then one delete of the archived points (a statement per page
 * made a backfill's archive cost grow with its instances: a delete took about 100 ms).
 */
async function archiveRaw(
  deps: SeriesDeps,
  ids: string[],
  newest: Newest,
  { pages, pageDays: days }: PassState,
): Promise<void> {
  const { ch, settings } = deps;
  const live = ids.filter((id) => newest.has(`${id}/0`));
  if (live.length === 0) return;
  const floors = live.map((id) => pages.get(id)?.at(-1)?.end ?? 0);
  const floor = atKeyParam("instance_id", "ids", "floors");
  const firsts = await ch.query<{ instance_id: string; f: string; live: string; below: string }>(
    "series_raw_first_live",
    `SELECT instance_id, toString(minIf(t, t >= ${floor})) AS f, countIf(t >= ${floor}) AS live,
       countIf(t < ${floor}) AS below
     FROM series_points FINAL
     WHERE instance_id IN {ids:Array(String)} AND scale = '0' AND deleted = 0
     GROUP BY instance_id`,
    { ids: live, floors },
  );
  const firstOf = new Map(firsts.filter((r) => Number(r.live) > 0).map((r) => [r.instance_id, Number(r.f)]));
  // Raw points below the archive's end: a pass that died between an archive round's pages and their delete left them
  // (readers already go to the pages there). Its batch comes again and touches the same instances: this deletes them.
  const left = new Set(firsts.filter((r) => Number(r.below) > 0).map((r) => r.instance_id));
  if (left.size > 0)
    await deleteArchivedRaw(
      ch,
      live.filter((id) => left.has(id)),
      floors.filter((_, i) => left.has(live[i]!)),
    );
  // The pages each instance can archive: whole pages from its first live point up to the limit, contiguous.
  const due: { id: string; starts: number[]; end: number }[] = [];
  for (const [i, id] of live.entries()) {
    const firstLive = firstOf.get(id);
    if (firstLive === undefined) continue;
    const newestT = newest.get(`${id}/0`)!;
    const limit = Math.min(newestT - settings.retentionMs, spanOf(settings, "0", newestT));
    const pageMs = (days.get(id) ?? settings.pageDays) * DAY_MS;
    let start = Math.max(floors[i]!, firstLive - (firstLive % pageMs));
    const starts: number[] = [];
    while (start + pageMs - (start % pageMs) <= limit) {
      starts.push(start);
      start = start - (start % pageMs) + pageMs;
    }
    if (starts.length > 0) due.push({ id, starts, end: start });
  }
  let round: typeof due = [];
  let roundPages = 0;
  for (const [i, d] of due.entries()) {
    round.push(d);
    roundPages += d.starts.length;
    if (roundPages >= ARCHIVE_PAGES_PER_ROUND || i === due.length - 1) {
      await archiveRound(deps, round, days);
      round = [];
      roundPages = 0;
    }
  }
}

/** One round of archiveRaw: the given instances' due pages (contiguous per instance, ending at `end`). */
async function archiveRound(
  deps: SeriesDeps,
  due: readonly { id: string; starts: number[]; end: number }[],
  days: Map<string, number>,
): Promise<void> {
  const { ch, settings } = deps;
  const version = await nextVersion(deps);
  const ids = due.map((d) => d.id);
  const rows = await ch.query<PointRow & { instance_id: string }>(
    "series_raw_page_points",
    `SELECT instance_id, t, key, value FROM series_points FINAL
     WHERE instance_id IN {ids:Array(String)} AND scale = '0' AND deleted = 0
       AND t >= ${atKeyParam("instance_id", "ids", "los")} AND t < ${atKeyParam("instance_id", "ids", "his")}`,
    { ids, los: due.map((d) => d.starts[0]!), his: due.map((d) => d.end) },
  );
  const byPage = new Map<string, PointRow[]>();
  for (const r of rows) {
    const pageMs = (days.get(r.instance_id) ?? settings.pageDays) * DAY_MS;
    const t = Number(r.t);
    const k = `${r.instance_id}/${t - (t % pageMs)}`;
    const list = byPage.get(k);
    if (list) list.push(r);
    else byPage.set(k, [r]);
  }
  const archived: ArchivePage[] = [];
  const deleteIds: string[] = [];
  const deleteUntil: number[] = [];
  for (const d of due) {
    const pageMs = (days.get(d.id) ?? settings.pageDays) * DAY_MS;
    let last = 0;
    for (const start of d.starts) {
      const end = start - (start % pageMs) + pageMs;
      const points = byPage.get(`${d.id}/${start - (start % pageMs)}`);
      if (!points) continue;
      archived.push(pageOf(d.id, start, end, points));
      last = end;
    }
    if (last > 0) {
      deleteIds.push(d.id);
      deleteUntil.push(last);
    }
  }
  if (archived.length === 0) return;
  await storePages(deps, archived, version);
  // The pages are durable: their points leave ClickHouse (readers go to the pages for times before their end).
  await deleteArchivedRaw(ch, deleteIds, deleteUntil);
}

/** Deletes each instance's raw points before `until[i]` (the end of its archived pages). */
async function deleteArchivedRaw(ch: Ch, ids: string[], until: number[]): Promise<void> {
  await ch.command(
    "series_raw_archived_delete",
    `DELETE FROM series_points WHERE instance_id IN {ids:Array(String)} AND scale = '0'
       AND t < ${atKeyParam("instance_id", "ids", "until")}`,
    { ids, until },
  );
}

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
