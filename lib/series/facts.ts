import type { EventsMessage } from "../events/wire.ts";
import type { Ch } from "../stores/clickhouse.ts";
import { instanceOf, type SeriesEvent, type TimeseriesDefinition } from "./definition.ts";
import { TIMESERIES } from "./definitions/index.ts";

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
