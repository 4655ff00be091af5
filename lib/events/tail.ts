/**
 * The newest served events, kept in memory by each API process (EVENTS_TAIL_CACHE events).
 *
 * Pollers read near the tip, so most pages fall inside the tail: they are answered from memory
 * instead of one chDB/ClickHouse query each. The tail holds every resolved main-chain event with
 * `low < id < top`, where `top` is the ceiling of the watermark it last followed: rows below the
 * watermark are durable and final (guarantee 1), so the tail only appends. The only exceptions are
 * rewrites of served history (replays, reprocessing, reorgs deeper than CONFIRMATIONS): the events
 * sink announces each in `event_rewrites` after writing it, and the tail reloads when one reaches
 * its range. A page the tail cannot answer in full (older than `low`) is read from the store.
 */
import type { EventFilters, EventsReader, HeldEvent, PageRequest } from "./reader.ts";
import { heldEvents, mainRows } from "./reader.ts";

export interface TailOptions {
  reader: EventsReader;
  /** Most events kept. */
  capacity: number;
  /** How often `event_rewrites` is checked (ms); 0 = on every read. */
  checkMs: number;
}

export interface EventsTail {
  /** Brings the tail up to `ceiling` (exclusive), reloading it after a rewrite that reaches it. */
  sync(ceiling: string): Promise<void>;
  /** The page from memory, or null when the tail does not hold all of it. */
  read(filters: EventFilters, page: PageRequest, ceiling: string): HeldEvent[] | null;
  /** Reorg notices with `after < id <= upTo`, or null when the tail does not hold that whole range. */
  notices(after: string, upTo: string): HeldEvent[] | null;
  /**
   * Events of the transactions the tail holds in full (a transaction's events are all held or none,
   * unless `low` falls inside it); `missing` lists the others, for the store to answer.
   */
  transactions(
    txIds: readonly string[],
    ceiling: string,
  ): { found: Map<string, HeldEvent[]>; missing: string[] };
  /** What the tail holds (for /status and tests). */
  stats(): { events: number; low: string | null; reloads: number };
  /** The ceiling the tail is synced to and when that sync ended (null before the first load). */
  held(): { top: string; at: number } | null;
}

/** `timestamp-chain-height-txindex`: the id prefix every event of one transaction shares. */
const txPrefix = (id: string) => id.slice(0, 33);

/** Whether an event's id is a reorg notice's (chain index 17, after the 13-digit time). */
export const isNoticeId = (id: string) => id.slice(14, 16) === "17";

export function matches(
  e: Pick<HeldEvent, "dapp_id" | "category" | "sub_kind" | "from" | "to" | "token_address">,
  f: EventFilters,
): boolean {
  return (
    (!f.dapp_id || e.dapp_id === f.dapp_id) &&
    (!f.address || e.from === f.address || e.to === f.address) &&
    (!f.token_address || e.token_address === f.token_address) &&
    (!f.category?.length || f.category.includes(e.category)) &&
    (!f.sub_kind?.length || f.sub_kind.includes(e.sub_kind))
  );
}

/** Index of the first event whose id is greater than `id` (events sorted by id). */
function firstAfter(events: readonly HeldEvent[], id: string): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((events[mid] as HeldEvent).id <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function createEventsTail(options: TailOptions): EventsTail {
  const { reader, capacity } = options;
  let events: HeldEvent[] = [];
  /** The reorg notices among `events` (rare: a scan of them costs nothing). */
  let notices: HeldEvent[] = [];
  /** Held events by transaction, in id order. */
  let byTx = new Map<string, HeldEvent[]>();
  const index = (list: readonly HeldEvent[]) => {
    for (const e of list) {
      const own = byTx.get(e.tx_id);
      if (own) own.push(e);
      else byTx.set(e.tx_id, [e]);
    }
  };
  /** Exclusive lower bound of what is held; "" = everything from the first event; null = not loaded. */
  let low: string | null = null;
  let top = "";
  let reloads = 0;
  let checkedAt = 0;
  let seenRewrites = { count: -1, last: 0 };
  let running: Promise<void> | null = null;
  let syncedAt = 0;

  /** Drops the oldest events beyond capacity, at an id boundary. */
  function trim() {
    if (events.length <= capacity) return;
    let cut = events.length - capacity;
    const boundary = (events[cut - 1] as HeldEvent).id;
    while (cut < events.length && (events[cut] as HeldEvent).id === boundary) cut++;
    // The dropped events are the oldest, so each is the first of its transaction's list.
    for (const e of events.slice(0, cut)) {
      const own = byTx.get(e.tx_id);
      own?.shift();
      if (own && own.length === 0) byTx.delete(e.tx_id);
    }
    events = events.slice(cut);
    low = boundary;
    notices = notices.filter((e) => e.id > boundary);
  }

  async function load(ceiling: string) {
    const window = capacity + 64;
    const rows = await reader.newest(ceiling, window);
    const complete = rows.length < window;
    const oldest = rows[rows.length - 1]?.id ?? "";
    // The oldest id's rows may continue past the window: keep only ids above it.
    events = heldEvents(mainRows(complete ? rows : rows.filter((r) => r.id > oldest)));
    byTx = new Map();
    index(events);
    notices = events.filter((e) => isNoticeId(e.id));
    low = complete ? "" : oldest;
    top = ceiling;
    reloads += 1;
    trim();
  }

  /** True when a rewrite announced since the last check reaches the held range. */
  async function rewritten(): Promise<boolean> {
    const { count, last } = await reader.rewrites();
    if (count === seenRewrites.count) return false;
    const first = seenRewrites.count < 0;
    // A minute of slack: sinks writing at once may commit a marker stamped before the newest seen.
    const since = seenRewrites.last - 60_000;
    seenRewrites = { count, last };
    if (first || low === null) return false;
    return reader.rewriteReaches(since, low);
  }

  async function step(ceiling: string) {
    if (Date.now() - checkedAt >= options.checkMs || low === null) {
      checkedAt = Date.now();
      if ((await rewritten()) || low === null) return load(ceiling);
    }
    if (ceiling <= top) return;
    const window = capacity + 64;
    const rows = await reader.range(top, ceiling, window);
    // Far behind (more new events than the tail holds): start over from the newest.
    if (rows.length >= window) return load(ceiling);
    const added = heldEvents(mainRows(rows));
    events = events.concat(added);
    index(added);
    for (const e of added) if (isNoticeId(e.id)) notices.push(e);
    top = ceiling;
    trim();
  }

  return {
    async sync(ceiling) {
      // One refresh at a time; callers that arrive meanwhile wait for it, then check again.
      while (running) await running;
      if (ceiling <= top && low !== null && Date.now() - checkedAt < options.checkMs) {
        // Already up to `ceiling` and checked for rewrites recently: as fresh as a sync would make it.
        syncedAt = Date.now();
        return;
      }
      running = step(ceiling)
        .then(() => {
          syncedAt = Date.now();
        })
        .finally(() => {
          running = null;
        });
      await running;
    },
    read(filters, page, ceiling) {
      if (low === null || top < ceiling) return null;
      const out: HeldEvent[] = [];
      const below = (e: HeldEvent) => e.id < ceiling;
      if (page.afterId && page.poll) {
        // Oldest first after the cursor: complete when the cursor is inside the held range.
        if (page.afterId < low) return null;
        for (let i = firstAfter(events, page.afterId); i < events.length && out.length < page.limit; i++) {
          const e = events[i] as HeldEvent;
          if (!below(e)) break;
          if (matches(e, filters)) out.push(e);
        }
        return out;
      }
      // Newest first (below the cursor when there is one): complete when the page fills, or when the
      // tail holds everything from the first event.
      const start = page.afterId ? firstAfter(events, page.afterId) - 1 : events.length - 1;
      for (let i = start; i >= 0 && out.length < page.limit; i--) {
        const e = events[i] as HeldEvent;
        if (page.afterId && e.id >= page.afterId) continue;
        if (below(e) && matches(e, filters)) out.push(e);
      }
      return out.length === page.limit || low === "" ? out : null;
    },
    notices(after, upTo) {
      if (low === null || top < upTo || after < low) return null;
      return notices.filter((e) => e.id > after && e.id <= upTo);
    },
    transactions(txIds, ceiling) {
      const found = new Map<string, HeldEvent[]>();
      const missing: string[] = [];
      const current = low !== null && top >= ceiling;
      for (const tx of txIds) {
        const own = current ? byTx.get(tx) : undefined;
        const first = own?.[0];
        if (first && first.id < ceiling && (low === "" || txPrefix(first.id) !== txPrefix(low as string)))
          found.set(tx, own as HeldEvent[]);
        else missing.push(tx);
      }
      return { found, missing };
    },
    stats: () => ({ events: events.length, low, reloads }),
    held: () => (low === null ? null : { top, at: syncedAt }),
  };
}
