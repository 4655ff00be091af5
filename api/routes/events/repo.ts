/**
 * Reads of normalized events (ClickHouse `events`) with their address labels (Postgres) and
 * offloaded payloads. Every read returns main-chain rows only (FINAL resolves replays and retractions).
 */
import { readProgress } from "../../../lib/repos/progress.ts";
import type { Ch } from "../../../lib/stores/clickhouse.ts";
import type { Pg } from "../../../lib/stores/postgres.ts";

export interface LabelRow {
  label: string;
  icon?: string;
  mapped_label: string;
  source: string;
}

export interface ApiEvent {
  id: string;
  chain_index: number;
  block_hash: string;
  block_height: number;
  timestamp: number;
  tx_id: string;
  tx_index: number;
  event_index: number;
  dapp_id: string;
  category: string;
  sub_kind: string;
  type: string;
  is_main: boolean;
  from: string;
  to: string;
  with: string;
  token_address: string;
  token_id: string;
  amount: string;
  contract_address: string;
  contract_event_index: number | null;
  payload: Record<string, unknown>;
  payload_ref: string | null;
  address_labels: Record<string, LabelRow>;
}

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
}

const COLUMNS = `id, chain_index, block_hash, block_height, toUnixTimestamp64Milli(timestamp) AS timestamp, tx_id,
  tx_index, event_index, dapp_id, category, sub_kind, type, is_main, from, to, with, token_address, token_id,
  toString(amount) AS amount, contract_address, contract_event_index, payload, payload_ref`;

type Row = Omit<ApiEvent, "payload" | "address_labels" | "timestamp"> & {
  payload: string;
  timestamp: string;
};

/** First id strictly greater than every id of events at or before `ts` (ids start with the 13-digit time). */
export function idCeiling(ts: number): string {
  return String(ts + 1).padStart(13, "0");
}

export function createEventsRepo(deps: {
  ch: Ch;
  pg: Pg;
  hydration: boolean;
  watermarkCacheMs?: number;
}): EventsRepo {
  const { ch, pg } = deps;
  let cached = { at: 0, value: 0 };
  const cacheMs = deps.watermarkCacheMs ?? 200;

  async function labels(addresses: Iterable<string>): Promise<Record<string, LabelRow>> {
    const list = [...new Set([...addresses].filter(Boolean))];
    if (list.length === 0) return {};
    const rows = await pg.query<{
      address: string;
      label: string;
      icon: string | null;
      mapped_label: string;
      source: string;
    }>(
      "labels_for_addresses",
      `SELECT DISTINCT ON (address) address, label, icon, mapped_label, source
       FROM address_labels WHERE address = ANY($1::text[]) ORDER BY address, priority, source`,
      [list],
    );
    const out: Record<string, LabelRow> = {};
    for (const r of rows) {
      out[r.address] = {
        label: r.label,
        mapped_label: r.mapped_label,
        source: r.source,
        ...(r.icon ? { icon: r.icon } : {}),
      };
    }
    return out;
  }

  async function finish(rows: Row[]): Promise<ApiEvent[]> {
    const refs = deps.hydration ? rows.filter((r) => r.payload_ref).map((r) => r.payload_ref as string) : [];
    const payloads = new Map<string, string>();
    if (refs.length > 0) {
      const found = await ch.query<{ ref: string; payload: string }>(
        "event_payloads_read",
        "SELECT ref, payload FROM event_payloads FINAL WHERE ref IN {refs:Array(String)}",
        { refs },
      );
      for (const p of found) payloads.set(p.ref, p.payload);
    }
    const labelMap = await labels(rows.flatMap((r) => [r.from, r.to, r.with, r.token_address]));
    return rows.map((r) => {
      const own: Record<string, LabelRow> = {};
      for (const a of [r.from, r.to, r.with, r.token_address]) {
        const l = a ? labelMap[a] : undefined;
        if (l) own[a] = l;
      }
      const hydrated = r.payload_ref ? payloads.get(r.payload_ref) : undefined;
      return {
        ...r,
        timestamp: Number(r.timestamp),
        is_main: Boolean(r.is_main),
        payload: JSON.parse(hydrated ?? r.payload) as Record<string, unknown>,
        address_labels: own,
      };
    });
  }

  const repo: EventsRepo = {
    hydration: deps.hydration,
    async watermark() {
      if (Date.now() - cached.at > cacheMs)
        cached = { at: Date.now(), value: (await readProgress(ch)).watermark };
      return cached.value;
    },
    async list(filters, page) {
      const ceiling = idCeiling(await repo.watermark());
      const where = ["main_chain", "id < {ceiling:String}"];
      const params: Record<string, unknown> = { ceiling, limit: page.limit };
      if (filters.dapp_id) {
        where.push("dapp_id = {dapp:String}");
        params.dapp = filters.dapp_id;
      }
      if (filters.address) {
        where.push("(from = {addr:String} OR to = {addr:String})");
        params.addr = filters.address;
      }
      if (filters.token_address) {
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
      let order = "DESC";
      if (page.afterId && page.poll) {
        where.push("id > {after:String}");
        order = "ASC";
      } else if (page.afterId) {
        where.push("id < {after:String}");
      }
      if (page.afterId) params.after = page.afterId;
      const rows = await ch.query<Row>(
        "events_list",
        `SELECT ${COLUMNS} FROM events FINAL WHERE ${where.join(" AND ")} ORDER BY id ${order} LIMIT {limit:UInt32}`,
        params,
      );
      return finish(rows);
    },
    async byTransaction(txId) {
      return (await repo.byTransactions([txId])).get(txId) ?? [];
    },
    async byTransactions(txIds) {
      const out = new Map<string, ApiEvent[]>();
      if (txIds.length === 0) return out;
      const rows = await ch.query<Row>(
        "events_by_tx",
        `SELECT ${COLUMNS} FROM events FINAL WHERE tx_id IN {txs:Array(String)} AND main_chain ORDER BY id`,
        { txs: txIds },
      );
      for (const e of await finish(rows)) {
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
