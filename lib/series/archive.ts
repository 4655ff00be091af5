/**
 * The archive of raw points past retention: whole pages written to the object store with their segment and page
 * rows, then the archived points deleted; pages a replay, reprocess or deep reorg reaches are rebuilt from the facts.
 */
import { createHash } from "node:crypto";
import { atKeyParam, type Ch } from "../stores/clickhouse.ts";
import { nextVersion } from "./clock.ts";
import { pageKeyOf } from "./ids.ts";
import { pointsFromFactsSql } from "./points.ts";
import { type Newest, type SegmentRow, segmentRow } from "./segments.ts";
import { DAY_MS, type SeriesDeps, spanOf } from "./settings.ts";

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
       AND span_start >= arrayMin({los:Array(UInt64)}) AND span_start < arrayMax({his:Array(UInt64)})
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

/** Rebuilds archived pages from the facts (a replay, reprocess or deep reorg reached archived times). */
export async function rebuildPages(deps: SeriesDeps, pages: { id: string; start: number; end: number }[]) {
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
export async function archiveRaw(
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
       AND t >= arrayMin({los:Array(UInt64)}) AND t < arrayMax({his:Array(UInt64)})
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

/** What a pass reads of the touched instances before it writes: in one statement. */
export interface PassState {
  /** Archived pages per instance, in time order (the last one's end is where the archive ends). */
  pages: Map<string, { start: number; end: number }[]>;
  /** Raw page width in days of the instances that override it (PATCH rawArchivePageDays). */
  pageDays: Map<string, number>;
  /** Start of the newest sealed segment in ClickHouse per `<instance>/<scale>`. */
  lastSealed: Map<string, number>;
}

export async function passState(ch: Ch, ids: string[]): Promise<PassState> {
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
