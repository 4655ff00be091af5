/**
 * The contract of a series definition. A timeseries derives facts from each normalized event (a pure
 * function); the series processor stores them per block (series_block_facts) and recomputes the buckets they touch at
 * every scale. Adding a series = one file in `definitions/`, listed in `definitions/index.ts`, then
 * `alephium-indexer series backfill --series <id>` to build its history from the stored events.
 */
import { createHash } from "node:crypto";

/** Scales of a timeseries: `0` is raw (one point per distinct event time), then fixed-width buckets. */
export const SERIES_SCALES = ["0", "1m", "1h", "1d"] as const;
export type SeriesScale = (typeof SERIES_SCALES)[number];

/** Bucket width in ms (raw: 1, so a bucket is one event time). */
export const SERIES_SCALE_MS: Record<SeriesScale, number> = {
  "0": 1,
  "1m": 60_000,
  "1h": 3_600_000,
  "1d": 86_400_000,
};

/**
 * How a point key aggregates its facts; every aggregation rolls up exactly into coarser scales. `sum` adds
 * unsigned amounts (UInt256), `net` adds signed changes (Int256), such as a holder count's delta.
 */
export type Agg = "count" | "sum" | "net" | "distinct" | "last";

export interface PointKey {
  key: string;
  agg: Agg;
  description: string;
}

/** The fields of a normalized event a definition reads (payload parsed on demand). */
export interface SeriesEvent {
  id: string;
  chain_index: number;
  block_hash: string;
  timestamp: number;
  tx_id: string;
  is_main: boolean;
  dapp_id: string;
  category: string;
  sub_kind: string;
  type: string;
  from: string;
  to: string;
  with: string;
  token_id: string;
  amount: string;
  payload(): Record<string, unknown>;
}

/** One contribution of an event to a point key of one instance. */
export interface Fact {
  dimensions: Record<string, string>;
  key: string;
  /** Decimal text: the amount (sum), the value (last); omitted for count and distinct. */
  value?: string;
  /** What a distinct key counts. */
  member?: string;
}

export interface TimeseriesDefinition {
  id: string;
  /**
   * Where the facts come from: `events` (default) through `facts` in the series processor, or `balances`:
   * the holders processor derives them from the blocks' outputs and spends (lib/series/holders.ts), and
   * `facts` yields nothing.
   */
  source?: "events" | "balances";
  description: string;
  /** Scales served; `1m` is always among them (the instances' last_seen_at reads it). */
  scales: readonly SeriesScale[];
  chartType: "line" | "bar" | "area";
  dimensions: readonly string[];
  pointKeys: readonly PointKey[];
  /** Facts of one event (pure: the same event always gives the same facts). */
  facts(e: SeriesEvent): Fact[];
}

/** A list metric: instances of a timeseries ranked by a point key over a trailing window. */
export interface ListDefinition {
  id: string;
  description: string;
  dimensions: readonly string[];
  /** `<timeseries id>.<point key>` summed over `windowMs`. */
  sortKey: string;
  windowMs: number;
  pageSize: number;
}

/** The instance id of (series id, dimensions): sha256 hex of the id and the sorted `key=value` pairs. */
export function instanceIdOf(seriesId: string, dimensions: Record<string, string>): string {
  return instanceOf(seriesId, dimensions).id;
}

/**
 * The instance id and the dimensions' JSON (`dimensionsJson`) of (series id, dimensions), memoized (bounded): the
 * same instances recur on every block, and a SHA-256 per fact was about a third of deriving the facts in a
 * bench:pipeline CPU profile; the JSON is kept with it. One dimension (most series) is looked up by its name and value
 * as they are, in nested maps: a key built per fact (series id, names and values joined) is a new string to hash on
 * every lookup, and that was the largest part of deriving a block's facts in a profile.
 */
export function instanceOf(
  seriesId: string,
  dimensions: Record<string, string>,
): { id: string; json: string } {
  let only: string | undefined;
  let count = 0;
  for (const k in dimensions) {
    only = k;
    if (++count > 1) break;
  }
  let byValue: Map<string, Instance> | undefined;
  let lookup: string;
  if (count === 1) {
    let byName = single.get(seriesId);
    if (!byName) {
      byName = new Map();
      single.set(seriesId, byName);
    }
    byValue = byName.get(only!);
    if (!byValue) {
      byValue = new Map();
      byName.set(only!, byValue);
    }
    lookup = dimensions[only!]!;
  } else {
    byValue = several;
    lookup = canonicalText(seriesId, dimensions);
  }
  let hit = byValue.get(lookup);
  if (hit === undefined) {
    if (++cached > 100_000) {
      single.clear();
      several.clear();
      cached = 0;
      return instanceOf(seriesId, dimensions);
    }
    const text = count === 1 ? canonicalText(seriesId, dimensions) : lookup;
    hit = { id: createHash("sha256").update(text).digest("hex"), json: dimensionsJson(dimensions) };
    byValue.set(lookup, hit);
  }
  return hit;
}

/** What an instance id hashes: the series id, then each `name=value` pair in name order, one per line. */
function canonicalText(seriesId: string, dimensions: Record<string, string>): string {
  let text = seriesId;
  for (const k of Object.keys(dimensions).sort()) text += `\n${k}=${dimensions[k]}`;
  return text;
}

interface Instance {
  id: string;
  json: string;
}
/** Instances of one dimension: series id → dimension name → value. */
const single = new Map<string, Map<string, Map<string, Instance>>>();
/** Instances of no or several dimensions, by series id and the sorted `name=value` pairs. */
const several = new Map<string, Instance>();
let cached = 0;

/** Dimensions as stored and served: JSON with sorted keys. */
export function dimensionsJson(dimensions: Record<string, string>): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.keys(dimensions)
        .sort()
        .map((k) => [k, dimensions[k]]),
    ),
  );
}

/** Chains the per-chain series count (the market feed's off-chain events use index 16). */
export const CHAIN_COUNT = 16;

/** The per-chain dimensions of an event: its chain, and the `all` instance. */
export function chainDims(e: SeriesEvent): Record<string, string>[] {
  return [{ chain_index: String(e.chain_index) }, { chain_index: "all" }];
}
