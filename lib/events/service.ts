/**
 * Events as the API serves them, composed of the parts: the watermark (cached for a fraction of a
 * second), the in-memory tail, the page cache, the store reader, offloaded payloads merged back
 * (hydration) and the label cache. Each part lives in its own module; this one only orders them.
 */
import { idCeiling, type NormalizedEvent } from "../chain/types.ts";
import type { AddressLabel } from "../repos/address-labels.ts";
import type { LabelCache } from "./label-cache.ts";
import { createPageCache } from "./page-cache.ts";
import type { EventFilters, EventsReader, PageRequest, StoredRow } from "./reader.ts";
import type { EventsTail } from "./tail.ts";

/** A normalized event as the API serves it: the stored event plus labels of its addresses. */
export type ApiEvent = NormalizedEvent & { address_labels: Record<string, AddressLabel> };

export interface EventsService {
  /** Low watermark (ms) up to which events are served. */
  watermark(): Promise<number>;
  list(filters: EventFilters, page: PageRequest): Promise<ApiEvent[]>;
  byTransaction(txId: string): Promise<ApiEvent[]>;
  /** Events of many transactions in one store query at most (decorated explorer lists). */
  byTransactions(txIds: string[]): Promise<Map<string, ApiEvent[]>>;
  /** Labels of many addresses in one query at most. */
  labels(addresses: Iterable<string>): Promise<Record<string, AddressLabel>>;
  /** Whether offloaded payloads are merged back. */
  readonly hydration: boolean;
  /** The in-memory tail of newest events, when enabled. */
  readonly tail: EventsTail | null;
}

export interface EventsServiceOptions {
  reader: EventsReader;
  labels: LabelCache;
  tail: EventsTail | null;
  hydration: boolean;
  /** How long the watermark is reused (ms). */
  watermarkCacheMs: number;
  /** How long an identical list/poll page is reused (ms; 0 = off). */
  pageCacheMs: number;
}

const parse = (rows: readonly StoredRow[]) => rows.map((r) => JSON.parse(r.doc) as NormalizedEvent);

export function createEventsService(o: EventsServiceOptions): EventsService {
  const { reader, tail } = o;
  const pages = createPageCache<ApiEvent[]>(o.pageCacheMs);
  let cached = { at: 0, value: 0 };

  /** Offloaded payloads merged back, and each event's labels. */
  async function finish(events: NormalizedEvent[]): Promise<ApiEvent[]> {
    const refs = o.hydration ? events.flatMap((e) => (e.payload_ref ? [e.payload_ref] : [])) : [];
    const [payloads, labels] = await Promise.all([
      reader.payloads(refs),
      o.labels.labels(events.flatMap((e) => [e.from, e.to, e.with, e.token_address])),
    ]);
    return events.map((e) => {
      const own: Record<string, AddressLabel> = {};
      for (const a of [e.from, e.to, e.with, e.token_address]) {
        const l = a ? labels[a] : undefined;
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

  const service: EventsService = {
    hydration: o.hydration,
    tail,
    async watermark() {
      if (Date.now() - cached.at > o.watermarkCacheMs)
        cached = { at: Date.now(), value: (await reader.progress()).watermark };
      return cached.value;
    },
    async list(filters, page) {
      const ceiling = idCeiling(await service.watermark());
      if (tail) {
        await tail.sync(ceiling);
        const held = tail.read(filters, page, ceiling);
        if (held) return finish(held);
      }
      return pages.get(JSON.stringify([filters, page, ceiling]), async () =>
        finish(parse(await reader.page(filters, page, ceiling))),
      );
    },
    async byTransaction(txId) {
      return (await service.byTransactions([txId])).get(txId) ?? [];
    },
    async byTransactions(txIds) {
      const out = new Map<string, ApiEvent[]>();
      if (txIds.length === 0) return out;
      // Transactions the tail holds need no store query; the others (older, or not yet under the
      // watermark) are read from `event_lookup`.
      let held = new Map<string, NormalizedEvent[]>();
      let missing = [...txIds];
      if (tail) {
        const ceiling = idCeiling(await service.watermark());
        await tail.sync(ceiling);
        ({ found: held, missing } = tail.transactions(txIds, ceiling));
      }
      const stored = parse(await reader.byTransactions(missing));
      for (const e of await finish([...[...held.values()].flat(), ...stored])) {
        const list = out.get(e.tx_id) ?? [];
        list.push(e);
        out.set(e.tx_id, list);
      }
      return out;
    },
    labels: (addresses) => o.labels.labels(addresses),
  };
  return service;
}
