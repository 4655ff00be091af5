/**
 * Reads of normalized events (ClickHouse `events`) with their address labels (Postgres) and
 * offloaded payloads. Every read returns main-chain rows only (versions are resolved here, as FINAL
 * would). Address, token and transaction reads use `event_lookup`, the same rows keyed by them.
 */
import { idCeiling, type NormalizedEvent } from "../../../lib/chain/types.ts";
import { readProgress } from "../../../lib/repos/progress.ts";
import type { Ch } from "../../../lib/stores/clickhouse.ts";
import type { Pg } from "../../../lib/stores/postgres.ts";
import { COLUMNS, mainEvents, type Row, resolveVersions } from "./rows.ts";
import { createEventsTail, type EventsTail } from "./tail.ts";

export interface LabelRow {
  label: string;
  icon?: string;
  mapped_label: string;
  source: string;
}

/** A normalized event as the API serves it: the stored event plus labels of its addresses. */
export type ApiEvent = NormalizedEvent & { address_labels: Record<string, LabelRow> };

export interface EventFilters {
  dapp_id?: string;
  address?: string;
  token_address?: string;
  category?: string[];
  sub_kind?: string[];
}

export interface EventsRepo {
  /** Low watermark (ms) up to which events are served; cached for a fraction of a second. */
  watermark(): Promise<number>;
  list(filters: EventFilters, page: { limit: number; afterId?: string; poll: boolean }): Promise<ApiEvent[]>;
  byTransaction(txId: string): Promise<ApiEvent[]>;
  /** Events of many transactions in one query (decorated explorer lists). */
  byTransactions(txIds: string[]): Promise<Map<string, ApiEvent[]>>;
  /** Labels of many addresses in one query. */
  labels(addresses: Iterable<string>): Promise<Record<string, LabelRow>>;
  readonly hydration: boolean;
  /** The in-memory tail of newest events, when enabled. */
  readonly tail: EventsTail | null;
}

export interface EventsRepoOptions {
  ch: Ch;
  pg: Pg;
  hydration: boolean;
  /** How long the watermark is reused (ms). */
  watermarkCacheMs?: number;
  /**
   * How long an identical list/poll page is reused, and how often kept address labels are checked against
   * `label_generation` (ms; 0 = neither). Pages are keyed by their query and the watermark, so a reused
   * page is the page a fresh read gives, until a retraction or a label edit; a label edit shows within
   * this time.
   */
  pageCacheMs?: number;
  /** Newest events kept in memory to answer pages near the tip (0 = off); see tail.ts. */
  tailCapacity?: number;
}

export function createEventsRepo(deps: EventsRepoOptions): EventsRepo {
  const { ch, pg } = deps;
  const pageCacheMs = deps.pageCacheMs ?? 0;
  // Caught-up pollers all ask for the same page: one read serves them (also while it is in flight).
  const pages = new Map<string, { at: number; events: Promise<ApiEvent[]> }>();
  let cached = { at: 0, value: 0 };
  const cacheMs = deps.watermarkCacheMs ?? 200;
  const tail =
    (deps.tailCapacity ?? 0) > 0
      ? createEventsTail({
          ch,
          capacity: deps.tailCapacity as number,
          checkMs: cacheMs,
        })
      : null;

  // Labels of addresses seen (misses included), kept until `label_generation` moves: a trigger bumps it
  // on every statement that can change a label; it is read at most every pageCacheMs.
  const labelCache = new Map<string, LabelRow | null>();
  let generation = { checkedAt: 0, value: "" };
  /** Bumped when the cache is dropped: a read that started before must not store what it found. */
  let epoch = 0;

  async function checkGeneration() {
    const now = Date.now();
    if (now - generation.checkedAt < pageCacheMs) return;
    generation.checkedAt = now;
    const [row] = await pg.query<{ generation: string }>(
      "label_generation_read",
      "SELECT generation::text AS generation FROM label_generation",
    );
    const value = row?.generation ?? "";
    if (value !== generation.value) {
      labelCache.clear();
      epoch += 1;
    }
    generation = { checkedAt: now, value };
  }

  async function labels(addresses: Iterable<string>): Promise<Record<string, LabelRow>> {
    const out: Record<string, LabelRow> = {};
    if (pageCacheMs > 0) await checkGeneration();
    const list: string[] = [];
    for (const a of new Set(addresses)) {
      if (!a) continue;
      const hit = pageCacheMs > 0 ? labelCache.get(a) : undefined;
      if (hit !== undefined) {
        if (hit) out[a] = hit;
      } else list.push(a);
    }
    if (list.length === 0) return out;
    const startedIn = epoch;
    const rows = await pg.query<{
      address: string;
      label: string;
      icon: string | null;
      mapped_label: string;
      source: string;
    }>(
      "labels_for_addresses",
      // Explicit labels first (by priority); a registered token's symbol labels its contract otherwise.
      `SELECT DISTINCT ON (address) address, label, icon, mapped_label, source FROM (
         SELECT address, label, icon, mapped_label, source, priority FROM address_labels WHERE address = ANY($1::text[])
         UNION ALL
         SELECT contract_address, symbol, logo_uri, COALESCE(name, symbol), 'token_registry', 1000
         FROM tokens WHERE contract_address = ANY($1::text[]) AND symbol IS NOT NULL AND NOT deleted AND registered
       ) AS l ORDER BY address, priority, source`,
      [list],
    );
    for (const r of rows) {
      out[r.address] = {
        label: r.label,
        mapped_label: r.mapped_label,
        source: r.source,
        ...(r.icon ? { icon: r.icon } : {}),
      };
    }
    if (pageCacheMs > 0 && startedIn === epoch) {
      if (labelCache.size > 200_000) labelCache.clear();
      for (const a of list) labelCache.set(a, out[a] ?? null);
    }
    return out;
  }

  const parse = (rows: Row[]) => rows.map((r) => JSON.parse(r.doc) as NormalizedEvent);

  async function finish(events: NormalizedEvent[]): Promise<ApiEvent[]> {
    const refs = deps.hydration ? events.flatMap((e) => (e.payload_ref ? [e.payload_ref] : [])) : [];
    const payloads = new Map<string, string>();
    if (refs.length > 0) {
      const found = await ch.query<{ ref: string; payload: string }>(
        "event_payloads_read",
        "SELECT ref, payload FROM event_payloads FINAL WHERE ref IN {refs:Array(String)}",
        { refs },
      );
      for (const p of found) payloads.set(p.ref, p.payload);
    }
    const labelMap = await labels(events.flatMap((e) => [e.from, e.to, e.with, e.token_address]));
    return events.map((e) => {
      const own: Record<string, LabelRow> = {};
      for (const a of [e.from, e.to, e.with, e.token_address]) {
        const l = a ? labelMap[a] : undefined;
        if (l) own[a] = l;
      }
      const hydrated = e.payload_ref ? payloads.get(e.payload_ref) : undefined;
      return {
        ...e,
        ...(hydrated ? { payload: JSON.parse(hydrated) as Record<string, unknown> } : {}),
        address_labels: own,
      };
    });
  }

  async function readPage(
    filters: EventFilters,
    page: { limit: number; afterId?: string; poll: boolean },
    ceiling: string,
  ): Promise<ApiEvent[]> {
    // An address (or else a token) read is one key range of `event_lookup`; other reads scan `events` by id.
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
    } else if (filters.address) {
      where.push("(from = {addr:String} OR to = {addr:String})");
      params.addr = filters.address;
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
    const best = new Map<string, Row>();
    let cap = page.limit * 2 + 16;
    let bound: string | undefined;
    for (;;) {
      const extra = bound ? [ascending ? "id >= {bound:String}" : "id <= {bound:String}"] : [];
      const rows = await ch.query<Row>(
        lookup ? "events_lookup" : "events_list",
        `SELECT ${COLUMNS} FROM ${lookup ? "event_lookup" : "events"} WHERE ${[...where, ...extra].join(" AND ")}
           ORDER BY id ${ascending ? "ASC" : "DESC"} LIMIT {cap:UInt32}`,
        { ...params, cap, ...(bound ? { bound } : {}) },
      );
      resolveVersions(rows, best);
      const complete = rows.length < cap;
      const lastId = rows[rows.length - 1]?.id ?? "";
      const settled = [...best.values()]
        .filter((r) => r.main_chain && (complete || before(r.id, lastId)))
        .sort((a, b) => (a.id === b.id ? 0 : before(a.id, b.id) ? -1 : 1));
      if (complete || settled.length >= page.limit) return finish(parse(settled.slice(0, page.limit)));
      if (bound === lastId) cap *= 4; // one id filled the whole window: widen it
      bound = lastId;
    }
  }

  const repo: EventsRepo = {
    hydration: deps.hydration,
    tail,
    async watermark() {
      if (Date.now() - cached.at > cacheMs)
        cached = { at: Date.now(), value: (await readProgress(ch)).watermark };
      return cached.value;
    },
    async list(filters, page) {
      const ceiling = idCeiling(await repo.watermark());
      if (tail) {
        await tail.sync(ceiling);
        const held = tail.read(filters, page, ceiling);
        if (held) return finish(held);
      }
      if (pageCacheMs <= 0) return readPage(filters, page, ceiling);
      const key = JSON.stringify([filters, page, ceiling]);
      const hit = pages.get(key);
      if (hit && Date.now() - hit.at < pageCacheMs) return hit.events;
      if (pages.size > 5_000) pages.clear();
      const events = readPage(filters, page, ceiling);
      pages.set(key, { at: Date.now(), events });
      events.catch(() => pages.delete(key));
      return events;
    },
    async byTransaction(txId) {
      return (await repo.byTransactions([txId])).get(txId) ?? [];
    },
    async byTransactions(txIds) {
      const out = new Map<string, ApiEvent[]>();
      if (txIds.length === 0) return out;
      // Transactions the in-memory tail holds need no store query; the others (older, or not yet
      // under the watermark) are read from `event_lookup`.
      let held = new Map<string, NormalizedEvent[]>();
      let missing = [...txIds];
      if (tail) {
        const ceiling = idCeiling(await repo.watermark());
        await tail.sync(ceiling);
        ({ found: held, missing } = tail.transactions(txIds, ceiling));
      }
      const rows =
        missing.length > 0
          ? await ch.query<Row>(
              "events_by_tx",
              // One primary-key range of `event_lookup` per transaction.
              `SELECT ${COLUMNS} FROM event_lookup WHERE kind = 'tx' AND key IN {txs:Array(String)}`,
              { txs: missing },
            )
          : [];
      for (const e of await finish([...[...held.values()].flat(), ...mainEvents(rows)])) {
        const list = out.get(e.tx_id) ?? [];
        list.push(e);
        out.set(e.tx_id, list);
      }
      return out;
    },
    labels,
  };
  return repo;
}
