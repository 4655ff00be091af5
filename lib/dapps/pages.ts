/**
 * Keyset pages over a snapshot, shared by the dapp groups' lists. A first page takes the events ceiling of the
 * moment (the low watermark: every event under it is final), later pages reuse the ceiling their cursor
 * carries, so rows that arrive meanwhile never shift a page; each page asks for one row more than it serves to
 * know whether a next page exists. Pages are reused for a short time per query and ceiling (the data under a
 * ceiling only changes on a deep reorg, which the time bound covers).
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
}

export function createPager(o: PagerOptions): Pager {
  const cache = createPageCache<unknown>(o.cacheMs);
  const ceiling = async () => idCeiling(await o.watermark());
  return {
    ceiling,
    async page<R>(q: PageQuery, sortKey: (row: R) => SortKey, read: ReadRows<R>): Promise<Page<R>> {
      const state = q.nextKey ? o.cursors.open(q.list, q.filters, q.nextKey) : undefined;
      const at = state?.ceiling ?? (await ceiling());
      const key = JSON.stringify([q.list, q.filters, q.limit, at, state?.after ?? null]);
      const rows = (await cache.get(key, () => read(at, state?.after, q.limit + 1))) as R[];
      const served = rows.slice(0, q.limit);
      const last = served[served.length - 1];
      return {
        rows: served,
        nextKey:
          rows.length > q.limit && last
            ? o.cursors.sign(q.list, q.filters, { ceiling: at, after: sortKey(last) })
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
