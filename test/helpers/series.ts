/**
 * Series test helpers: a reference built with plain loops from the events read back (independent of
 * lib/series), a reader of every point of an instance through the chart route, and a hash of the series
 * tables for the guarantee tests.
 */
import { expect } from "vitest";
import type { TestApp } from "./app.ts";
import type { TestCh } from "./stores.ts";

export interface RefEvent {
  id: string;
  chain_index: number;
  timestamp: number;
  is_main: boolean;
  dapp_id: string;
  category: string;
  sub_kind: string;
  type: string;
  from: string;
  token_id: string;
  amount: string;
  payload: Record<string, unknown>;
}

/** Every main-chain on-chain event, in id order, read back from the events table. */
export async function readEvents(ch: TestCh): Promise<RefEvent[]> {
  const rows = await ch.ch.query<{ doc: string }>(
    "t",
    "SELECT doc FROM events FINAL WHERE main_chain AND chain_index < 16 ORDER BY id",
  );
  return rows.map((r) => JSON.parse(r.doc) as RefEvent);
}

const WIDTH: Record<string, number> = { "0": 1, "1m": 60_000, "1h": 3_600_000, "1d": 86_400_000 };

type Acc = { count: number; sum: bigint; set: Set<string>; last: { ts: number; id: string; v: string } | null };

/** instance key (JSON of dims) → scale → t → key → value */
export type RefSeries = Map<string, Map<string, Map<number, Record<string, number>>>>;

/**
 * Reference points of one series: `contribute` says, per event, which (dims, key, kind, value) it adds.
 * Buckets are computed from the events directly at every scale (no roll-up), so distinct counts are
 * exact by construction.
 */
export function reference(
  events: RefEvent[],
  scales: string[],
  contribute: (e: RefEvent) => { dims: Record<string, string>; key: string; add: "count" | "sum" | "distinct" | "last"; v?: string }[],
): RefSeries {
  const accs = new Map<string, Map<string, Map<number, Map<string, Acc>>>>();
  for (const e of events) {
    for (const c of contribute(e)) {
      const inst = JSON.stringify(Object.fromEntries(Object.entries(c.dims).sort()));
      let byScale = accs.get(inst);
      if (!byScale) accs.set(inst, (byScale = new Map()));
      for (const scale of scales) {
        const t = e.timestamp - (e.timestamp % WIDTH[scale]!);
        let byT = byScale.get(scale);
        if (!byT) byScale.set(scale, (byT = new Map()));
        let byKey = byT.get(t);
        if (!byKey) byT.set(t, (byKey = new Map()));
        let acc = byKey.get(c.key);
        if (!acc) byKey.set(c.key, (acc = { count: 0, sum: 0n, set: new Set(), last: null }));
        if (c.add === "count") acc.count++;
        if (c.add === "sum") acc.sum += BigInt(c.v!);
        if (c.add === "distinct") acc.set.add(c.v!);
        if (c.add === "last") {
          const newer = !acc.last || e.timestamp > acc.last.ts || (e.timestamp === acc.last.ts && e.id > acc.last.id);
          if (newer) acc.last = { ts: e.timestamp, id: e.id, v: c.v! };
        }
        (acc as Acc & { kind?: string }).kind = c.add;
      }
    }
  }
  const out: RefSeries = new Map();
  for (const [inst, byScale] of accs) {
    const s = new Map<string, Map<number, Record<string, number>>>();
    for (const [scale, byT] of byScale) {
      const m = new Map<number, Record<string, number>>();
      for (const [t, byKey] of byT) {
        const values: Record<string, number> = {};
        for (const [key, acc] of byKey) {
          const kind = (acc as Acc & { kind?: string }).kind;
          values[key] =
            kind === "count"
              ? acc.count
              : kind === "sum"
                ? Number(acc.sum.toString())
                : kind === "distinct"
                  ? acc.set.size
                  : Number(acc.last!.v);
        }
        m.set(t, values);
      }
      s.set(scale, m);
    }
    out.set(inst, s);
  }
  return out;
}

export interface ChartPoint {
  t: number;
  values: Record<string, number>;
  kind: string;
}

/** Every point of (instance, scale) through the chart route: the latest page, then until_ts backwards. */
export async function readAllPoints(api: TestApp, instanceId: string, scale: string): Promise<ChartPoint[]> {
  const headers = api.auth(api.userKey);
  const pages: ChartPoint[][] = [];
  let url = `/series/instances/${instanceId}/${scale}/chart?limit=5000`;
  for (let i = 0; i < 1000; i++) {
    const r = await api.app.inject({ url, headers });
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json() as { points: ChartPoint[]; window: { from: number | null; truncated: boolean } };
    if (body.points.length === 0) break;
    pages.unshift(body.points);
    url = `/series/instances/${instanceId}/${scale}/chart?limit=5000&until_ts=${body.window.from! - 1}`;
  }
  return pages.flat();
}

/** Hash of each series table's resolved state (every column but versions and the uniqExact states). */
export async function seriesStateHash(ch: TestCh): Promise<Record<string, { rows: number; hash: string }>> {
  const q = async (sql: string) => {
    const [r] = await ch.ch.query<{ rows: string; hash: string }>(
      "series_state_hash",
      `SELECT count() AS rows, toString(sum(cityHash64(*))) AS hash FROM (${sql})`,
    );
    return { rows: Number(r?.rows ?? 0), hash: r?.hash ?? "" };
  };
  return {
    facts: await q("SELECT * EXCEPT (version) FROM series_facts FINAL WHERE main_chain"),
    points: await q("SELECT * EXCEPT (version, state) FROM series_points FINAL WHERE deleted = 0"),
    segments: await q("SELECT * EXCEPT (version) FROM series_segments FINAL WHERE deleted = 0"),
    pages: await q("SELECT * EXCEPT (version) FROM series_archive_pages FINAL"),
    instances: await q("SELECT * EXCEPT (version) FROM series_instances FINAL WHERE last_seen_at > 0"),
  };
}
