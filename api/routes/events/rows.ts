/**
 * Event rows as the API reads them from `events` and `event_lookup`, and their resolution: the
 * repository's store reads and the in-memory tail share both.
 */
import type { NormalizedEvent } from "../../../lib/chain/types.ts";

/** A page reads the served document plus what resolving versions needs. */
export const COLUMNS = "id, block_hash, main_chain, version, payload_ref, doc";

export interface Row {
  id: string;
  block_hash: string;
  main_chain: boolean;
  version: string;
  payload_ref: string | null;
  doc: string;
}

/**
 * Resolves replays and retractions like FINAL would, on the rows a query returned: per
 * (id, block_hash) the row with the highest version wins, and only main-chain winners are kept.
 * Reading without FINAL and resolving here is several times faster on small pages.
 */
export function resolveVersions<
  T extends { id: string; block_hash: string; version: string; main_chain: boolean },
>(rows: Iterable<T>, into = new Map<string, T>()): Map<string, T> {
  for (const r of rows) {
    const key = `${r.id}/${r.block_hash}`;
    const seen = into.get(key);
    if (!seen || BigInt(r.version) > BigInt(seen.version)) into.set(key, r);
  }
  return into;
}

/** The served events of rows that hold every version of their ids: resolved, main chain, id order. */
export function mainEvents(rows: Iterable<Row>): NormalizedEvent[] {
  return [...resolveVersions(rows).values()]
    .filter((r) => r.main_chain)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((r) => JSON.parse(r.doc) as NormalizedEvent);
}
