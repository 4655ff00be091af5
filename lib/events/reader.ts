/**
 * Store reads of the events tables: pages of `events` (or of `events_by_key`, the same rows keyed by
 * address and token), the events of transactions (ids from `event_ids_by_tx`, rows from `events`),
 * offloaded payloads, rewrite markers, and the per-chain progress with its low watermark. Rows come back
 * with every version the store holds; they are resolved here as FINAL would (the newest version of an
 * (id, block_hash) wins, main chain only), which on small pages is several times faster than FINAL.
 */
import { CHAINS, type NormalizedEvent } from "../chain/types.ts";
import type { Ch } from "../stores/clickhouse.ts";

export interface EventFilters {
  dapp_id?: string;
  address?: string;
  token_address?: string;
  category?: string[];
  sub_kind?: string[];
}

/** List mode: newest first, below `afterId`; poll mode with `afterId`: oldest first, above it. */
export interface PageRequest {
  limit: number;
  afterId?: string;
  poll: boolean;
}

/** A stored row as a page reads it: the served document plus what resolving versions needs. */
export interface StoredRow {
  id: string;
  /** The block hash; from `events_by_key`, its cityHash64 (compared only among rows of one read). */
  block_hash: string;
  main_chain: boolean;
  version: string;
  payload_ref: string | null;
  doc: string;
}

/**
 * An event as readers keep it: the served document, and the fields filters and labels need (read
 * from the document once).
 */
export type HeldEvent = Pick<
  NormalizedEvent,
  | "id"
  | "tx_id"
  | "dapp_id"
  | "category"
  | "sub_kind"
  | "from"
  | "to"
  | "with"
  | "token_address"
  | "payload_ref"
> & { doc: string };

export function heldEvents(rows: readonly StoredRow[]): HeldEvent[] {
  return rows.map((r) => {
    const e = JSON.parse(r.doc) as NormalizedEvent;
    return {
      id: e.id,
      tx_id: e.tx_id,
      dapp_id: e.dapp_id,
      category: e.category,
      sub_kind: e.sub_kind,
      from: e.from,
      to: e.to,
      with: e.with,
      token_address: e.token_address,
      payload_ref: e.payload_ref,
      doc: r.doc,
    };
  });
}

const COLUMNS = "id, block_hash, main_chain, version, payload_ref, doc";
/** `events_by_key` keeps the block as cityHash64(block_hash): a UInt64, which arrives as a string like `version`. */
const KEY_COLUMNS = "id, block AS block_hash, main_chain, version, payload_ref, doc";

/** Per (id, block_hash), the row with the highest version. */
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

/** The main-chain rows of rows that hold every version of their ids, resolved, in id order. */
export function mainRows(rows: Iterable<StoredRow>): StoredRow[] {
  return [...resolveVersions(rows).values()]
    .filter((r) => r.main_chain)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export interface ChainPosition {
  chain_index: number;
  height: number;
  block_hash: string;
  block_ts: number;
  updated_at: number;
}

/** The market-events feed (the trade watcher) as it last wrote its position. */
export interface FeedPosition {
  /** Every market event id up to this time (ms) is written; later ones get later ids. */
  position: number;
  /** False when the watcher stopped cleanly (or never ran): the watermark ignores the feed. */
  active: boolean;
  updated_at: number;
}

export interface Progress {
  chains: ChainPosition[];
  /** The trade watcher's feed, or null when no watcher ever ran. */
  feed: FeedPosition | null;
  /** Low watermark in ms; 0 until every chain has a durable position. */
  watermark: number;
}

/**
 * Per-chain durable positions of the events sink and the low watermark: the oldest of the 16 chains'
 * newest durable block timestamps. Every event at or before it is written, and no event at or before
 * it can still arrive (chains only grow forward in time), so serving events up to the watermark makes
 * them visible to pollers in id order. Market events (exchange fills, EVM pool swaps) have ids by the
 * time the trade watcher recorded them; while the watcher is active its position bounds the
 * watermark too (pipeline/trade-watcher/feed.ts). Its position follows the wall clock, not the exchanges, so a
 * stalled exchange holds nothing back.
 */
export async function readProgress(ch: Ch): Promise<Progress> {
  const rows = await ch.query<{
    chain_index: number;
    height: number;
    block_hash: string;
    block_ts: string;
    updated_at: string;
  }>(
    "chain_progress_read",
    `SELECT chain_index, height, block_hash, toUnixTimestamp64Milli(block_ts) AS block_ts,
            toUnixTimestamp64Milli(updated_at) AS updated_at
     FROM chain_progress FINAL ORDER BY chain_index`,
  );
  // Read after the chains, never before: a feed seen paused here was still paused when the chains
  // were read, so a watcher starting meanwhile reads the chains later and assigns ids above them.
  const feeds = await ch.query<{ position: string; active: boolean | number; updated_at: string }>(
    "market_feed_progress_read",
    `SELECT toUnixTimestamp64Milli(position) AS position, active,
            toUnixTimestamp64Milli(updated_at) AS updated_at
     FROM market_feed_progress FINAL WHERE feed = 'trades'`,
  );
  const chains = rows.map((r) => ({
    chain_index: r.chain_index,
    height: r.height,
    block_hash: r.block_hash,
    block_ts: Number(r.block_ts),
    updated_at: Number(r.updated_at),
  }));
  const f = feeds[0];
  const feed = f
    ? { position: Number(f.position), active: Boolean(f.active), updated_at: Number(f.updated_at) }
    : null;
  let watermark = chains.length === CHAINS ? Math.min(...chains.map((c) => c.block_ts)) : 0;
  if (feed?.active) watermark = Math.min(watermark, feed.position);
  return { chains, feed, watermark };
}

export interface EventsReader {
  /** One page of main-chain rows below `ceiling`, in page order. */
  page(filters: EventFilters, page: PageRequest, ceiling: string): Promise<StoredRow[]>;
  /** Main-chain rows of these transactions, in id order. */
  byTransactions(txIds: readonly string[]): Promise<StoredRow[]>;
  /** Offloaded payloads (JSON text) by ref. */
  payloads(refs: readonly string[]): Promise<Map<string, string>>;
  /** The newest `n` rows below `ceiling` (every version), newest first. */
  newest(ceiling: string, n: number): Promise<StoredRow[]>;
  /** Up to `n` rows with `from <= id < ceiling` (every version), oldest first. */
  range(from: string, ceiling: string, n: number): Promise<StoredRow[]>;
  /** How many rewrites were announced, and when the last was written (ms). */
  rewrites(): Promise<{ count: number; last: number }>;
  /** Whether a rewrite written at or after `since` (ms) reaches ids above `low`. */
  rewriteReaches(since: number, low: string): Promise<boolean>;
  /** Rows of the reorg notices with `after < id <= upTo` (every version), by `reorg_notices`. */
  notices(after: string, upTo: string): Promise<StoredRow[]>;
  /** Rows of these ids in one block (every version, main chain or not): what a retraction notice retracted. */
  blockRows(blockHash: string, ids: readonly string[]): Promise<StoredRow[]>;
  progress(): Promise<Progress>;
}

export function createEventsReader(ch: Ch): EventsReader {
  return {
    async page(filters, page, ceiling) {
      // An address (or else a token) read is one key range of `events_by_key`; other reads scan `events` by id.
      const lookup = filters.address
        ? { kind: "address", key: filters.address }
        : filters.token_address
          ? { kind: "token", key: filters.token_address }
          : null;
      const where = ["id < {ceiling:String}"];
      const params: Record<string, unknown> = { ceiling };
      if (lookup) {
        where.push("kind = {kind:String} AND key = {key:String}");
        Object.assign(params, lookup);
      }
      if (filters.dapp_id) {
        where.push("dapp_id = {dapp:String}");
        params.dapp = filters.dapp_id;
      }
      if (filters.token_address && lookup?.kind !== "token") {
        where.push("token_address = {token:String}");
        params.token = filters.token_address;
      }
      if (filters.category?.length) {
        where.push("category IN {cats:Array(String)}");
        params.cats = filters.category;
      }
      if (filters.sub_kind?.length) {
        where.push("sub_kind IN {subs:Array(String)}");
        params.subs = filters.sub_kind;
      }
      const ascending = Boolean(page.afterId && page.poll);
      if (page.afterId) {
        where.push(ascending ? "id > {after:String}" : "id < {after:String}");
        params.after = page.afterId;
      }
      const before = (a: string, b: string) => (ascending ? a < b : a > b);
      // Windows of rows in id order; rows of the window's last id may continue in the next window.
      const best = new Map<string, StoredRow>();
      let cap = page.limit * 2 + 16;
      let bound: string | undefined;
      for (;;) {
        const extra = bound ? [ascending ? "id >= {bound:String}" : "id <= {bound:String}"] : [];
        const rows = await ch.query<StoredRow>(
          lookup ? "events_lookup" : "events_list",
          `SELECT ${lookup ? `${KEY_COLUMNS} FROM events_by_key` : `${COLUMNS} FROM events`} WHERE ${[...where, ...extra].join(" AND ")}
           ORDER BY id ${ascending ? "ASC" : "DESC"} LIMIT {cap:UInt32}`,
          { ...params, cap, ...(bound ? { bound } : {}) },
        );
        resolveVersions(rows, best);
        const complete = rows.length < cap;
        const lastId = rows[rows.length - 1]?.id ?? "";
        const settled = [...best.values()]
          .filter((r) => r.main_chain && (complete || before(r.id, lastId)))
          .sort((a, b) => (a.id === b.id ? 0 : before(a.id, b.id) ? -1 : 1));
        if (complete || settled.length >= page.limit) return settled.slice(0, page.limit);
        if (bound === lastId) cap *= 4; // one id filled the whole window: widen it
        bound = lastId;
      }
    },
    async byTransactions(txIds) {
      if (txIds.length === 0) return [];
      // The ids: one primary-key range of `event_ids_by_tx` per transaction (by its id's hash). The rows: a
      // primary-key read of `events` (a transaction's ids are neighbours), with every block's and version's
      // rows of these ids. Two blocks can give one id to events of different transactions (ids are built
      // from the block's time, chain, height and positions), and two transactions can share a hash: rows of
      // other transactions are left out after resolving, by the document's tx_id (every version of an
      // (id, block_hash) has the same). Filtering on the tx_id column in the statement instead took about
      // 1 ms more per read on chDB (the simulated network's events, 2026-11-26).
      const rows = await ch.query<StoredRow>(
        "events_by_tx",
        `SELECT ${COLUMNS} FROM events
         WHERE id IN (SELECT id FROM event_ids_by_tx WHERE has(arrayMap(t -> cityHash64(t), {txs:Array(String)}), tx))`,
        { txs: txIds },
      );
      const wanted = new Set(txIds);
      return mainRows(rows).filter((r) => wanted.has((JSON.parse(r.doc) as { tx_id: string }).tx_id));
    },
    async payloads(refs) {
      const out = new Map<string, string>();
      if (refs.length === 0) return out;
      const found = await ch.query<{ ref: string; payload: string }>(
        "event_payloads_read",
        "SELECT ref, payload FROM event_payloads FINAL WHERE ref IN {refs:Array(String)}",
        { refs },
      );
      for (const p of found) out.set(p.ref, p.payload);
      return out;
    },
    newest: (ceiling, n) =>
      ch.query<StoredRow>(
        "events_tail_load",
        `SELECT ${COLUMNS} FROM events WHERE id < {ceiling:String} ORDER BY id DESC LIMIT {n:UInt32}`,
        { ceiling, n },
      ),
    range: (from, ceiling, n) =>
      ch.query<StoredRow>(
        "events_tail_append",
        `SELECT ${COLUMNS} FROM events WHERE id >= {top:String} AND id < {ceiling:String}
         ORDER BY id ASC LIMIT {n:UInt32}`,
        { top: from, ceiling, n },
      ),
    async rewrites() {
      const [now] = await ch.query<{ n: string; last: string }>(
        "event_rewrites_count",
        "SELECT count() AS n, toUnixTimestamp64Milli(max(written_at)) AS last FROM event_rewrites",
      );
      return { count: Number(now?.n ?? 0), last: Number(now?.last ?? 0) };
    },
    async rewriteReaches(since, low) {
      const [touching] = await ch.query<{ n: string }>(
        "event_rewrites_touching",
        `SELECT count() AS n FROM event_rewrites
         WHERE written_at >= fromUnixTimestamp64Milli({since:Int64}) AND to_id > {low:String}`,
        { since, low },
      );
      return Number(touching?.n ?? 0) > 0;
    },
    notices: (after, upTo) =>
      // `reorg_notices` holds one small row per notice: the ids, then a primary-key read of `events`.
      ch.query<StoredRow>(
        "reorg_notices_page",
        `SELECT ${COLUMNS} FROM events WHERE id IN (
           SELECT notice_id FROM reorg_notices FINAL WHERE notice_id > {after:String} AND notice_id <= {upTo:String})
         ORDER BY id`,
        { after, upTo },
      ),
    blockRows: (blockHash, ids) =>
      ids.length === 0
        ? Promise.resolve([])
        : ch.query<StoredRow>(
            "reorg_retracted_rows",
            `SELECT ${COLUMNS} FROM events WHERE id IN {ids:Array(String)} AND block_hash = {hash:String}`,
            { ids, hash: blockHash },
          ),
    progress: () => readProgress(ch),
  };
}
