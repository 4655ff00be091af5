/**
 * Series test helpers: a reference built with plain loops from the events read back (independent of
 * lib/series), a reader of every point of an instance through the chart route, and a hash of the series
 * tables for the guarantee tests.
 */
import { expect } from "vitest";
import type { ProcessorName } from "../../pipeline/processor-names.ts";
import type { TestApp } from "./app.ts";
import { startTestPipeline, type TestPipeline, type TestPipelineOptions } from "./pipeline.ts";
import { openTestCh, openTestPg, type TestCh } from "./stores.ts";

export const HOUR = 3_600_000;

/**
 * A devnet that starts 4 hours before a midnight (blocks every 15 minutes per chain): {@link SERIES_BLOCKS} blocks
 * span 8.5 hours, so the series roll into a second day and, with a 3-hour raw retention and 1-day pages, the first
 * day's page (20:00 to midnight) is archived. A test's cost follows its chain time (ingest rounds of at most 30
 * minutes, each costing every processor its statements), hence the shortest chain that crosses both boundaries.
 */
export const SERIES_DEVNET = { startTimestamp: 1752537600000 - 4 * HOUR, blockIntervalMs: 15 * 60_000 };

/** 34 blocks on each of the 16 chains: 8.5 hours of {@link SERIES_DEVNET}, to 04:30 on the second day. */
export const SERIES_BLOCKS = 544;

/** Small segments (3 buckets, 1-hour raw spans) so the 1m scale of the `all` instances has more than 128. */
export const SERIES_TEST_ENV = {
  SERIES_SEGMENT_POINTS: "3",
  SERIES_RAW_SEGMENT_MS: String(HOUR),
  SERIES_RAW_RETENTION_HOURS: "3",
  SERIES_RAW_ARCHIVE_PAGE_DAYS: "1",
  INGEST_WINDOW_MS: String(30 * 60_000),
};

export interface RefEvent {
  id: string;
  tx_id: string;
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

type Acc = {
  count: number;
  sum: bigint;
  set: Set<string>;
  last: { ts: number; id: string; v: string } | null;
};

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
  contribute: (e: RefEvent) => {
    dims: Record<string, string>;
    key: string;
    add: "count" | "sum" | "distinct" | "last";
    v?: string;
  }[],
): RefSeries {
  const accs = new Map<string, Map<string, Map<number, Map<string, Acc>>>>();
  for (const e of events) {
    for (const c of contribute(e)) {
      const inst = JSON.stringify(Object.fromEntries(Object.entries(c.dims).sort()));
      const byScale = getOr(accs, inst, () => new Map());
      for (const scale of scales) {
        const t = e.timestamp - (e.timestamp % WIDTH[scale]!);
        const byKey = getOr(
          getOr(byScale, scale, () => new Map()),
          t,
          () => new Map(),
        );
        const acc = getOr(
          byKey,
          c.key,
          () => ({ count: 0, sum: 0n, set: new Set<string>(), last: null }) as Acc,
        );
        if (c.add === "count") acc.count++;
        if (c.add === "sum") acc.sum += BigInt(c.v!);
        if (c.add === "distinct") acc.set.add(c.v!);
        if (c.add === "last") {
          const newer =
            !acc.last || e.timestamp > acc.last.ts || (e.timestamp === acc.last.ts && e.id > acc.last.id);
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

function getOr<K, V>(m: Map<K, V>, k: K, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) {
    v = make();
    m.set(k, v);
  }
  return v;
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

/**
 * The groups whose tables `seriesStateHash` covers, and what they read: normalize (the events), the raw sink (a
 * reprocess reads its blocks), the registry (contracts learned from events), series and holders with their
 * recomputes. The events sink, candles, figures and payments write nothing the hash reads
 * (test/integration/replay-rebatch.test.ts replays every processor together).
 */
export const SERIES_PROCESSORS: readonly ProcessorName[] = [
  "normalize",
  "raw-sink",
  "registry",
  "series",
  "series-recompute",
  "holders",
  "holders-recompute",
];

/** Hash of each series table's resolved state (every column but versions and the uniqExact states). */
export async function seriesStateHash(ch: TestCh): Promise<Record<string, { rows: number; hash: string }>> {
  const q = async (sql: string) => {
    const [r] = await ch.ch.query<{ rows: string; hash: string }>(
      "series_state_hash",
      `SELECT count() AS rows, toString(sum(cityHash64(toString(tuple(*))))) AS hash FROM (${sql})`,
    );
    return { rows: Number(r?.rows ?? 0), hash: r?.hash ?? "" };
  };
  return {
    facts: await q("SELECT * EXCEPT (version) FROM series_block_facts FINAL WHERE main_chain"),
    points: await q("SELECT * EXCEPT (version, state) FROM series_points FINAL WHERE deleted = 0"),
    segments: await q("SELECT * EXCEPT (version) FROM series_segments FINAL WHERE deleted = 0"),
    pages: await q("SELECT * EXCEPT (version) FROM series_archive_pages FINAL"),
    instances: await q("SELECT * EXCEPT (version) FROM series_instances FINAL WHERE last_seen_at > 0"),
    holders: await q(
      `SELECT 'o', token_id, address, key, block_hash, ts, toString(amount), '' FROM holder_outputs FINAL WHERE main_chain
       UNION ALL SELECT 's', '', '', key, block_hash, ts, '', '' FROM holder_spends FINAL WHERE main_chain
       UNION ALL SELECT toString(kind), token_id, address, key, block_hash, ts, toString(amount), ''
         FROM holder_moves FINAL WHERE main_chain
       UNION ALL SELECT 'c', token_id, address, '', '', ts, '', toString(change) FROM holder_changes FINAL WHERE change != 0
       UNION ALL SELECT 'h', token_id, address, '', '', hour, '', toString(net) FROM holder_hour_sums FINAL WHERE net != 0
       UNION ALL SELECT 'p', token_id, address, '', '', period, '', toString(net) FROM holder_period_sums FINAL
         WHERE net != 0`,
    ),
  };
}

/**
 * The series state hash of one clean pass over `source`'s chain into fresh stores (a new PostgreSQL database, a new
 * ClickHouse database in `dataDir`: chDB opens one directory per process): what a run that crashed, replayed or held
 * rounds must end with.
 */
export async function cleanSeriesState(
  source: { chain: TestPipeline["chain"]; server: TestPipeline["server"] },
  dataDir: string,
  options: Pick<TestPipelineOptions, "confirmations" | "env" | "processors" | "kafka">,
): Promise<Awaited<ReturnType<typeof seriesStateHash>>> {
  const pg = await openTestPg();
  const ch = await openTestCh({ dataDir });
  try {
    const clean = await startTestPipeline({
      ...options,
      chain: source.chain,
      server: source.server,
      stores: { pg, ch },
    });
    try {
      await clean.catchUp();
      return await seriesStateHash(ch);
    } finally {
      await clean.close();
    }
  } finally {
    await pg.close();
    await ch.close();
  }
}
