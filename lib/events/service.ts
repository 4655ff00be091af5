/**
 * Events as the API serves them, composed of the parts: the watermark (cached for a fraction of a
 * second), the in-memory tail, the page cache, the store reader, offloaded payloads merged back
 * (hydration) and the label cache. Each part lives in its own module; this one only orders them.
 *
 * A page is data made once, `{ ids, docs }`: each event's id and its JSON document (the stored document, built
 * once by the writer, with the event's `address_labels` appended), with no parse and re-serialisation of the events
 * per request. Each consumer joins it its own way: the JSON list as an array, CSV rows, the stream's
 * Server-Sent Events, a webhook's batch.
 */
import { idCeiling, type NormalizedEvent } from "../chain/types.ts";
import type { AddressLabel } from "../labels/repo.ts";
import { staleWhileRevalidate } from "../stale.ts";
import type { LabelCache } from "./label-cache.ts";
import { createNoticeScopes, isFiltered, narrowNotice, selectsNotices } from "./notice-scope.ts";
import { createPageCache } from "./page-cache.ts";
import {
  type EventFilters,
  type EventsReader,
  type HeldEvent,
  heldEvents,
  mainRows,
  type PageRequest,
} from "./reader.ts";
import { type EventsTail, isNoticeId } from "./tail.ts";

/** A normalized event as the API serves it: the stored event plus labels of its addresses. */
export type ApiEvent = NormalizedEvent & { address_labels: Record<string, AddressLabel> };

/** One page of served events, made once (and cached): ids and documents in the same order. */
export interface EventsPage {
  readonly ids: readonly string[];
  /** Each event's JSON document (an `ApiEvent`). */
  readonly docs: readonly string[];
  /** The ceiling the page was read under (events below it were served). */
  readonly ceiling?: string;
}

export interface EventsService {
  /** Low watermark (ms) up to which events are served. */
  watermark(): Promise<number>;
  /** One page of served events. */
  page(filters: EventFilters, page: PageRequest): Promise<EventsPage>;
  /** The ceiling pages are served under now (an event id bound: the watermark's, or the tail's while it syncs). */
  ceiling(): Promise<string>;
  /**
   * Calls `listener` with the new ceiling each time pages start being served under a higher one: the moment new
   * events become visible (a watermark step once the tail holds it). Returns the unsubscribe.
   */
  onStep(listener: (ceiling: string) => void): () => void;
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

/** How long a tail's last sync may be behind before requests wait for the next one (ms). */
const TAIL_STALE_MS = 10_000;

/** An offloaded event's document holds `"payload":{}` right before its `payload_ref` (see fields.ts). */
const OFFLOADED = ',"payload":{},"payload_ref":';

export function createEventsService(o: EventsServiceOptions): EventsService {
  const { reader, tail } = o;
  const pages = createPageCache<EventsPage>(o.pageCacheMs);
  // Past its cache time the last watermark read is answered (every event under it is still final) while one
  // background read replaces it: a request does not queue behind ingest's statements for it.
  const watermark = staleWhileRevalidate(async () => (await reader.progress()).watermark, {
    ttlMs: o.watermarkCacheMs,
  });

  /** Each event's document with its offloaded payload merged back, and the labels of its addresses. */
  async function finish(events: readonly HeldEvent[]): Promise<{ doc: string; labels: string }[]> {
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
      const doc = hydrated ? e.doc.replace(OFFLOADED, () => `,"payload":${hydrated},"payload_ref":`) : e.doc;
      return { doc, labels: JSON.stringify(own) };
    });
  }

  const scopes = createNoticeScopes(reader);
  /**
   * A filtered poll page with the reorg notices about the events its filters match (lib/events/notice-scope.ts):
   * the notices between the cursor and the page's end (its last id when full, else the ceiling), narrowed,
   * merged in id order, the page cut back to its limit.
   */
  async function withNotices(
    filters: EventFilters,
    page: PageRequest & { afterId: string },
    below: string,
    held: HeldEvent[],
  ): Promise<HeldEvent[]> {
    // The page's end: its last id when full, else the ceiling (no id equals a ceiling: `<=` is `<` there).
    const end = held.length >= page.limit ? (held[held.length - 1] as HeldEvent).id : below;
    const candidates =
      tail?.notices(page.afterId, end) ?? heldEvents(mainRows(await reader.notices(page.afterId, end)));
    if (candidates.length === 0) return held;
    // Notices the filters select by their own category or sub kind stay whole; others that matched by their other
    // own fields (dapp_id `alephium`) are narrowed like the rest.
    if (!selectsNotices(filters)) held = held.filter((e) => !isNoticeId(e.id));
    const present = new Set(held.map((e) => e.id));
    const added: HeldEvent[] = [];
    for (const c of candidates) {
      if (present.has(c.id)) continue; // its own fields match: served whole
      const narrowed = narrowNotice(await scopes.get(c), filters, page.afterId);
      if (narrowed) added.push(narrowed);
    }
    if (added.length === 0) return held;
    return [...held, ...added].sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, page.limit);
  }

  const pageOf = async (events: readonly HeldEvent[]): Promise<EventsPage> => ({
    ids: events.map((e) => e.id),
    docs: (await finish(events)).map((e) => `${e.doc.slice(0, -1)},"address_labels":${e.labels}}`),
  });

  let syncing: Promise<void> | null = null;
  const listeners = new Set<(ceiling: string) => void>();
  let served = "";
  /** Notes the ceiling pages are served under; a higher one is a step, told to the listeners. */
  const reached = (at: string): string => {
    if (at > served) {
      served = at;
      for (const listener of listeners) listener(at);
    }
    return at;
  };
  /**
   * The ceiling pages are served under. A tail synced within TAIL_STALE_MS answers at once, under its own ceiling
   * when the watermark has moved past it (every event under it is still final), while one background sync brings
   * it up (and checks for rewrites): a request never waits for that store read. A tail never loaded, or not
   * synced for longer (a store that stays down), is synced first; so is every request with no watermark reuse.
   */
  async function ceiling(): Promise<string> {
    const at = idCeiling(await service.watermark());
    const held = tail?.held();
    if (tail && held && o.watermarkCacheMs > 0 && Date.now() - held.at <= TAIL_STALE_MS) {
      if (!syncing)
        syncing = tail
          .sync(at)
          .then(
            () => {
              // The tail now holds everything under `at` (the watermark it followed): pages are served under it.
              const now = tail.held();
              // biome-ignore lint/complexity/useMathMinMax: ids are strings (compared as text), not numbers
              if (now) reached(now.top < at ? now.top : at);
            },
            () => undefined,
          )
          .finally(() => {
            syncing = null;
          });
      // biome-ignore lint/complexity/useMathMinMax: ids are strings (compared as text), not numbers
      return reached(held.top < at ? held.top : at);
    }
    await tail?.sync(at);
    return reached(at);
  }

  const service: EventsService = {
    hydration: o.hydration,
    tail,
    watermark,
    ceiling,
    onStep(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async page(filters, page) {
      const below = await ceiling();
      // One build per (filters, page, ceiling) within EVENTS_PAGE_CACHE_MS, from the tail or the store: stream
      // connections and pollers at the same cursor share it.
      return pages.get(JSON.stringify([filters, page, below]), async () => {
        let held = tail?.read(filters, page, below) ?? heldEvents(await reader.page(filters, page, below));
        if (page.poll && page.afterId && isFiltered(filters))
          held = await withNotices(filters, { ...page, afterId: page.afterId }, below, held);
        return { ...(await pageOf(held)), ceiling: below };
      });
    },
    async byTransaction(txId) {
      return (await service.byTransactions([txId])).get(txId) ?? [];
    },
    async byTransactions(txIds) {
      const out = new Map<string, ApiEvent[]>();
      if (txIds.length === 0) return out;
      // Transactions the tail holds need no store query; the others (older, or not yet under the
      // watermark) are read from the store (`event_ids_by_tx`, then `events`).
      let held = new Map<string, HeldEvent[]>();
      let missing = [...txIds];
      if (tail) ({ found: held, missing } = tail.transactions(txIds, await ceiling()));
      const stored = heldEvents(await reader.byTransactions(missing));
      for (const e of await finish([...[...held.values()].flat(), ...stored])) {
        const event = { ...(JSON.parse(e.doc) as NormalizedEvent), address_labels: JSON.parse(e.labels) };
        const list = out.get(event.tx_id) ?? [];
        list.push(event);
        out.set(event.tx_id, list);
      }
      return out;
    },
    labels: (addresses) => o.labels.labels(addresses),
  };
  return service;
}
