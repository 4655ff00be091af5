/**
 * Keyset pages over a snapshot, shared by the dapp groups' lists. A first page takes the events ceiling of the
 * moment (the low watermark: every event under it is final), later pages reuse the ceiling their cursor
 * carries, so rows that arrive meanwhile never shift a page; each page asks for one row more than it serves to
 * know whether a next page exists. Pages are reused for a short time per query and ceiling (the data under a
 * ceiling only changes on a deep reorg, which the time bound covers), and for `staleMs` more while a background
 * read replaces them. A first page whose newer ceiling has not been read yet is answered with the query's
 * newest first page read within `staleMs` (a whole snapshot under its own, older ceiling, which its nextKey
 * carries) while the read under the new ceiling runs: a request waits for the store only when its query has
 * not been read for `staleMs`.
 */
import { idCeiling } from "../chain/types.ts";
import { createPageCache } from "../events/page-cache.ts";
import type { Cursors, SortKey } from "./cursor.ts";

export interface PageQuery {
  /** List id (route), part of the cursor. */
  list: string;
  /** The list's filters and sort: a cursor is only valid for the same. */
  filters: Record<string, unknown>;
  limit: number;
  nextKey?: string | undefined;
}

export interface Page<R> {
  rows: R[];
  nextKey: string | null;
}

/** Reads up to `limit` rows under `ceiling` after the sort key `after` (none: from the start), in list order. */
export type ReadRows<R> = (ceiling: string, after: SortKey | undefined, limit: number) => Promise<R[]>;

export interface Pager {
  /** The ceiling a first page reads under. */
  ceiling(): Promise<string>;
  page<R>(q: PageQuery, sortKey: (row: R) => SortKey, read: ReadRows<R>): Promise<Page<R>>;
}

export interface PagerOptions {
  cursors: Cursors;
  /** Low watermark (ms) of the events served. */
  watermark: () => Promise<number>;
  cacheMs: number;
  /** How long past `cacheMs` a page is still served while a background read replaces it (0 = never). */
  staleMs?: number;
}

/** Queries whose newest first page is kept beyond which the map starts over. */
const MAX_LATEST = 5_000;

export function createPager(o: PagerOptions): Pager {
  const staleMs = o.cacheMs > 0 ? (o.staleMs ?? 0) : 0;
  const cache = createPageCache<unknown>({ ttlMs: o.cacheMs, staleMs });
  const ceiling = async () => idCeiling(await o.watermark());
  /** Per query (no ceiling): the newest first page read, its ceiling and when it was read. */
  const latest = new Map<string, { at: string; rows: unknown[]; time: number }>();
  return {
    ceiling,
    async page<R>(q: PageQuery, sortKey: (row: R) => SortKey, read: ReadRows<R>): Promise<Page<R>> {
      const state = q.nextKey ? o.cursors.open(q.list, q.filters, q.nextKey) : undefined;
      const at = state?.ceiling ?? (await ceiling());
      const query = JSON.stringify([q.list, q.filters, q.limit]);
      const key = JSON.stringify([query, at, state?.after ?? null]);
      const readPage = async () => {
        const rows = await read(at, state?.after, q.limit + 1);
        const newest = latest.get(query);
        if (!state && (!newest || newest.at <= at)) {
          if (latest.size > MAX_LATEST) latest.clear();
          latest.set(query, { at, rows, time: Date.now() });
        }
        return rows;
      };
      let rows: R[];
      let snapshot = at;
      const previous = state ? undefined : latest.get(query);
      if (
        previous &&
        previous.at < at &&
        cache.peek(key) === undefined &&
        Date.now() - previous.time < staleMs
      ) {
        // The newer snapshot is read in the background (one read per key); this request gets the previous one.
        cache.get(key, readPage).catch(() => undefined);
        rows = previous.rows as R[];
        snapshot = previous.at;
      } else rows = (await cache.get(key, readPage)) as R[];
      const served = rows.slice(0, q.limit);
      const last = served[served.length - 1];
      return {
        rows: served,
        nextKey:
          rows.length > q.limit && last
            ? o.cursors.sign(q.list, q.filters, { ceiling: snapshot, after: sortKey(last) })
            : null,
      };
    },
  };
}

/** ClickHouse parameters and a condition from optional equality filters (`column = {name:String}`). */
export function whereEq(
  filters: Record<string, string | undefined>,
  columns: Record<string, string>,
): { sql: string; params: Record<string, string> } {
  const parts: string[] = [];
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(filters)) {
    if (value === undefined) continue;
    parts.push(`${columns[name] ?? name} = {${name}:String}`);
    params[name] = value;
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(""), params };
}
