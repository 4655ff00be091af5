/**
 * The live event stream (`GET /events/stream`, Server-Sent Events) on the pollers' guarantee: each connection
 * is a poller of `/events/all?poll=1` that the server drives. It starts after the client's last id (the
 * `Last-Event-ID` its EventSource sends on reconnect, or `after_id`), reads poll pages under the watermark until
 * it is caught up, then waits for the next watermark step. So every matching event arrives once, in id order,
 * across reconnects, API restarts and replays, exactly as for a poller.
 *
 * Fan-out: a caught-up connection is handed to the one hub of its API process. The hub learns of each step the
 * moment pages are served under a higher ceiling (the events service's onStep; it also reads the ceiling every
 * STREAM_POLL_MS while it follows connections, which moves the watermark cache and the tail on), then reads one page
 * per distinct (filters, cursor) among its connections (from the in-memory tail near the tip) and writes its text,
 * rendered once, to every connection at that cursor in one pass: no per-connection wake, timer or page read. Keep-
 * alives come from one sweep. A connection that gets a full page, whose socket buffer fills, or that leaves is handed
 * back to its own loop (catching up, waiting for the drain, or ending).
 *
 * A client that reads too slowly (its unsent bytes pass `bufferBytes`, or a write does not drain within
 * `drainMs`) is sent a final `end` event with the reason and the id to resume after, then disconnected; it is
 * never skipped past events silently.
 */
import type { ServerResponse } from "node:http";
import { idCeiling } from "../chain/types.ts";
import type { Config } from "../config.ts";
import { sleep } from "../retry.ts";
import { isFiltered } from "./notice-scope.ts";
import type { EventFilters } from "./reader.ts";
import type { EventsPage, EventsService } from "./service.ts";

export interface StreamSettings {
  /** How often the hub reads the watermark while connections wait (ms). */
  pollMs: number;
  /** A comment line after this long without data (ms), so proxies keep the connection. */
  heartbeatMs: number;
  /** The `retry:` hint: how long an EventSource waits before reconnecting (ms). */
  retryMs: number;
  /** Unsent bytes past which a client is cut as too slow. */
  bufferBytes: number;
  /** How long a blocked write may take to drain before the client is cut (ms). */
  drainMs: number;
  /** Events per page read. */
  pageSize: number;
}

/** The stream's settings from the STREAM_* keys. */
export function streamSettings(
  c: Pick<
    Config,
    "STREAM_POLL_MS" | "STREAM_HEARTBEAT_MS" | "STREAM_RETRY_MS" | "STREAM_BUFFER_BYTES" | "STREAM_DRAIN_MS"
  >,
): StreamSettings {
  return {
    pollMs: c.STREAM_POLL_MS,
    heartbeatMs: c.STREAM_HEARTBEAT_MS,
    retryMs: c.STREAM_RETRY_MS,
    bufferBytes: c.STREAM_BUFFER_BYTES,
    drainMs: c.STREAM_DRAIN_MS,
    pageSize: 200,
  };
}

/** Where a stream writes: the HTTP response, seen as a byte sink with back-pressure. */
export interface StreamSink {
  /** False when the sink's buffer is full (wait for `drained`). Pages come as bytes, shared by every connection. */
  write(chunk: string | Uint8Array): boolean;
  /** Bytes written but not yet sent. */
  readonly pending: number;
  /** Resolves when the buffer drained, or false after `ms`. */
  drained(ms: number): Promise<boolean>;
  readonly closed: boolean;
  end(): void;
  /**
   * Calls `listener` when the client goes away (one listener: a later call replaces it, null removes it), so the hub
   * lets go of a followed connection at once. A sink without it is seen closed at its next write or keep-alive.
   */
  onClose?(listener: (() => void) | null): void;
}

/**
 * An HTTP response as a stream's sink (the route's; bench/sse-writes.ts drives the hub through the same). A class:
 * one is open per connection for its whole life, and an object of closures costs each connection a closure per
 * method, plus (under tsx, which keeps function names) a property table of its own for each named one.
 */
class ResponseSink implements StreamSink {
  private readonly raw: ServerResponse;
  private readonly drainMs: number;
  private closeListener: (() => void) | null = null;

  constructor(raw: ServerResponse, drainMs: number) {
    this.raw = raw;
    this.drainMs = drainMs;
    raw.on("close", () => this.closeListener?.());
  }

  write(chunk: string | Uint8Array): boolean {
    return this.raw.write(chunk);
  }

  get pending(): number {
    return this.raw.writableLength;
  }

  drained(ms: number): Promise<boolean> {
    const raw = this.raw;
    return new Promise<boolean>((resolve) => {
      if (raw.writableLength === 0) return resolve(true);
      const timer = setTimeout(() => {
        raw.off("drain", ok);
        resolve(false);
      }, ms);
      const ok = () => {
        clearTimeout(timer);
        resolve(true);
      };
      raw.once("drain", ok);
    });
  }

  get closed(): boolean {
    return this.raw.destroyed || this.raw.writableEnded;
  }

  end(): void {
    const raw = this.raw;
    if (raw.writableEnded) return;
    raw.end();
    // A client that stopped reading may never take the rest: its socket goes after one more drain period.
    setTimeout(() => raw.destroy(), this.drainMs).unref();
  }

  onClose(listener: (() => void) | null): void {
    this.closeListener = listener;
  }
}

/** An HTTP response as a stream's sink. */
export function responseSink(raw: ServerResponse, drainMs: number): StreamSink {
  return new ResponseSink(raw, drainMs);
}

/** A caught-up connection the hub serves at each step (see `StreamHub.follow`). */
export interface Follower {
  filters: EventFilters;
  /** The last id written. */
  cursor: string;
  /** The ceiling the last page was read under: a step past it may have events for this connection. */
  seen: string;
  sink: StreamSink;
  /** When data (or a keep-alive) was last written (ms). */
  lastWrite: number;
  settings: StreamSettings;
  /** Events written to it; the hub adds those it writes. */
  delivered: number;
  /** The hub's: the key of its group while followed, "" otherwise (start with ""). */
  key: string;
  /** Called once when the hub hands the connection back (see `FollowEnd`). */
  handBack(reason: FollowEnd): void;
}

/**
 * Why `follow` handed a connection back: `more` (it was written a full page: catch up on its own), `drain` (its
 * socket buffer is full: wait for it to drain), `slow` (its unsent bytes passed `bufferBytes`: cut it), `closed` (the
 * client left or the hub closes).
 */
export type FollowEnd = "more" | "drain" | "slow" | "closed";

export interface StreamHub {
  /**
   * Serves a caught-up connection from here: at each step, one page read per distinct (filters, cursor) among the
   * connections followed, written to each of them in one pass (no per-connection wake, timer or read), and a
   * keep-alive after `heartbeatMs` without data. Calls its `handBack` when the connection needs its own loop again.
   * The follower is kept as it is (no copy, no promise): it is what an open connection costs while followed.
   */
  follow(follower: Follower): void;
  /** Counts a connection of `owner` against `limit`; null when the owner is at its limit. */
  acquire(owner: string, limit: number): (() => void) | null;
  /** Connections open per owner (tests, /status). */
  open(): number;
  /** Ends every stream (API shutdown): their clients reconnect with Last-Event-ID elsewhere. */
  close(): void;
  readonly closing: AbortSignal;
}

/** Connections at the same cursor with the same filters and page size: one page read serves them all. */
interface Group {
  filters: EventFilters;
  cursor: string;
  seen: string;
  pageSize: number;
  members: Set<Follower>;
}

/**
 * The ceiling a connection has seen after a page with events read under `ceiling`. A filtered page's reorg notices
 * are narrowed by the cursor it was read after (a notice names only events at or below it: lib/events/notice-scope.ts),
 * so the page from its new cursor under the same ceiling may hold a notice the page before could not: a filtered
 * connection reads once more from there ("" is below every ceiling). Unfiltered pages are plain id ranges.
 */
const afterPage = (filters: EventFilters, ceiling: string) => (isFiltered(filters) ? "" : ceiling);

export function createStreamHub(events: EventsService, settings: Pick<StreamSettings, "pollMs">): StreamHub {
  const groups = new Map<string, Group>();
  const owners = new Map<string, number>();
  const closing = new AbortController();
  let followed = 0;
  let running = false;
  let last = "";
  let stepping = false;
  let again = false;
  let sweeper: NodeJS.Timeout | null = null;

  const groupKey = (filters: EventFilters, cursor: string, pageSize: number) =>
    `${JSON.stringify(filters)}\n${cursor}\n${pageSize}`;
  /** `key` when the caller computed it once for many connections moving together (a group after its page). */
  const join = (f: Follower, key = groupKey(f.filters, f.cursor, f.settings.pageSize)) => {
    f.key = key;
    let g = groups.get(f.key);
    if (!g) {
      g = {
        filters: f.filters,
        cursor: f.cursor,
        seen: f.seen,
        pageSize: f.settings.pageSize,
        members: new Set(),
      };
      groups.set(f.key, g);
    } else if (f.seen < g.seen) g.seen = f.seen;
    g.members.add(f);
  };
  const leave = (f: Follower) => {
    const g = groups.get(f.key);
    if (g?.members.delete(f) && g.members.size === 0) groups.delete(f.key);
  };

  /** Hands a followed connection back to its own loop (once). */
  const done = (f: Follower, reason: FollowEnd) => {
    if (f.key === "") return;
    leave(f);
    f.key = "";
    f.sink.onClose?.(null);
    followed--;
    if (followed === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = null;
    }
    f.handBack(reason);
  };

  /** Writes to one followed connection; false when it was handed back (drain, slow). */
  const put = (f: Follower, text: string | Uint8Array, now: number): boolean => {
    const fits = f.sink.write(text);
    f.lastWrite = now;
    if (f.sink.pending > f.settings.bufferBytes) done(f, "slow");
    else if (!fits) done(f, "drain");
    else return true;
    return false;
  };

  /** One pass over the groups below the newest ceiling: a page read each, written to every member. */
  async function step() {
    if (stepping) {
      again = true;
      return;
    }
    stepping = true;
    try {
      do {
        again = false;
        const behind = [...groups.values()].filter((g) => g.seen < last);
        await Promise.all(
          behind.map(async (g) => {
            let page: EventsPage;
            try {
              page = await events.page(g.filters, { limit: g.pageSize, afterId: g.cursor, poll: true });
            } catch {
              return; // the store is away: the group stays as it is and the next step reads again
            }
            const ceiling = page.ceiling ?? last;
            if (page.ids.length === 0) {
              if (ceiling > g.seen) g.seen = ceiling;
              return;
            }
            const text = rendered(page);
            const lastId = page.ids[page.ids.length - 1]!;
            const full = page.ids.length >= g.pageSize;
            const members = [...g.members];
            const key = groupKey(g.filters, g.cursor, g.pageSize);
            if (groups.get(key) === g) groups.delete(key);
            // A filtered group reads again at once from its new cursor (see afterPage).
            if (isFiltered(g.filters)) again = true;
            // Every member moves to the same cursor: one key for all of them (10,000 connections at one cursor
            // would otherwise serialize the same filters 10,000 times per step), one clock read for the pass.
            const nextKey = groupKey(g.filters, lastId, g.pageSize);
            const seen = afterPage(g.filters, ceiling);
            const now = Date.now();
            for (const f of members) {
              if (f.sink.closed) {
                done(f, "closed");
                continue;
              }
              // Written before any `end` event that may follow: the connection resumes after the page's last id.
              f.cursor = lastId;
              f.delivered += page.ids.length;
              f.seen = seen;
              if (!put(f, text, now)) continue;
              if (full) done(f, "more");
              else join(f, nextKey);
            }
          }),
        );
      } while (again);
    } finally {
      stepping = false;
    }
  }

  const wake = (ceiling: string) => {
    if (ceiling > last) last = ceiling;
    if (followed > 0) void step();
  };
  // The moment pages are served under a higher ceiling (whoever's read made the step: this hub's, a poller's),
  // every connection followed below it is written.
  const unsubscribe = events.onStep(wake);

  // While connections are followed, the hub reads the ceiling every pollMs (one read for all of them): it is what
  // moves the watermark cache and the tail on when no poller does; the step itself is seen through onStep.
  const run = async () => {
    while (followed > 0 && !closing.signal.aborted) {
      try {
        wake(await events.ceiling());
      } catch {
        // the store is away: connections keep waiting (and get keep-alives); the next read retries
      }
      if (followed > 0) await sleep(settings.pollMs);
    }
    running = false;
  };

  /**
   * Keep-alives: one sweep over the followed connections, not a timer each. A group whose connections got one reads
   * its page again (as a connection whose wait timed out did before the hub served it): a page that changed under
   * the same ceiling (a rewrite of served history) reaches them within a heartbeat.
   */
  const sweep = () => {
    const now = Date.now();
    let reread = false;
    for (const g of [...groups.values()]) {
      let due = false;
      for (const f of [...g.members])
        if (now - f.lastWrite >= f.settings.heartbeatMs - 5) {
          due = true;
          if (f.sink.closed) done(f, "closed");
          else put(f, `: keep-alive ${now}\n\n`, now);
        }
      if (due && g.members.size > 0) {
        g.seen = "";
        reread = true;
      }
    }
    if (reread) void step();
  };

  return {
    closing: closing.signal,
    follow(f) {
      // A client that left while its page was read is not followed (its close was before the listener below).
      if (closing.signal.aborted || f.sink.closed) return f.handBack("closed");
      followed++;
      join(f);
      f.sink.onClose?.(() => done(f, "closed"));
      sweeper ??= setInterval(sweep, Math.min(1_000, Math.max(50, f.settings.heartbeatMs / 4)));
      sweeper.unref?.();
      if (!running) {
        running = true;
        void run();
      }
      // A step it has not seen yet (made while its last page was read) is served at once.
      if (last > f.seen) void step();
    },
    acquire(owner, limit) {
      const n = owners.get(owner) ?? 0;
      if (n >= limit) return null;
      owners.set(owner, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (owners.get(owner) ?? 1) - 1;
        if (left <= 0) owners.delete(owner);
        else owners.set(owner, left);
      };
    },
    open: () => [...owners.values()].reduce((a, b) => a + b, 0),
    close() {
      unsubscribe();
      closing.abort();
      for (const g of [...groups.values()]) for (const f of [...g.members]) done(f, "closed");
    },
  };
}

const sse = (id: string, data: string) => `id: ${id}\ndata: ${data}\n\n`;
const endEvent = (reason: string, resumeAfter: string, detail: string) =>
  `event: end\ndata: ${JSON.stringify({ reason, resume_after_id: resumeAfter, detail })}\n\n`;

/** The final `end` event of a client that read too slowly, then the end of its stream. */
function cut(sink: StreamSink, resumeAfter: string): void {
  sink.write(
    endEvent(
      "slow_consumer",
      resumeAfter,
      `The client read too slowly (${sink.pending} bytes unsent); reconnect with Last-Event-ID or after_id=${resumeAfter}.`,
    ),
  );
  sink.end();
}

export interface StreamRequest {
  filters: EventFilters;
  /** Deliver events after this id; null starts at the watermark (new events only). */
  afterId: string | null;
  /** The client's connection: the stream ends when it is closed (`closed`, and its `onClose` while followed). */
  sink: StreamSink;
  /** End with `caught_up` once everything under the watermark was delivered (batch readers, `curl`). */
  untilCaughtUp?: boolean;
}

/** Serves one stream until the client leaves, the API closes, or the client is cut as too slow. */
export function serveStream(
  hub: StreamHub,
  events: EventsService,
  settings: StreamSettings,
  req: StreamRequest,
): Promise<{ delivered: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const stream = new Stream(hub, events, settings, req, resolve, reject);
    stream.start(req.afterId).catch(reject);
  });
}

/**
 * One stream's state, and the hub's follower while it is caught up. A connection's loop (`catchUp`) runs only while
 * it reads its own pages; once caught up it hands itself to the hub and its frame ends, so a followed connection keeps
 * this object and no suspended frame or promise of its own. One class: the hub's loop over its members stays
 * monomorphic (see docs/benchmarks.md#benchstream for what a map per follower cost on Node 20).
 */
class Stream implements Follower {
  readonly filters: EventFilters;
  cursor = "";
  seen = "";
  readonly sink: StreamSink;
  lastWrite = Date.now();
  readonly settings: StreamSettings;
  delivered = 0;
  key = "";
  private readonly hub: StreamHub;
  private readonly events: EventsService;
  private readonly untilCaughtUp: boolean;
  private readonly resolve: (result: { delivered: number; reason: string }) => void;
  private readonly reject: (error: unknown) => void;

  constructor(
    hub: StreamHub,
    events: EventsService,
    settings: StreamSettings,
    req: StreamRequest,
    resolve: (result: { delivered: number; reason: string }) => void,
    reject: (error: unknown) => void,
  ) {
    this.filters = req.filters;
    this.sink = req.sink;
    this.settings = settings;
    this.hub = hub;
    this.events = events;
    this.untilCaughtUp = req.untilCaughtUp === true;
    this.resolve = resolve;
    this.reject = reject;
  }

  async start(afterId: string | null): Promise<void> {
    this.cursor = afterId ?? idCeiling(await this.events.watermark());
    this.sink.write(`retry: ${this.settings.retryMs}\n: stream after ${this.cursor}\n\n`);
    return this.catchUp();
  }

  /** Reads pages until caught up, then hands the connection to the hub (or ends the stream). */
  private async catchUp(): Promise<void> {
    const { hub, events, sink, settings } = this;
    while (!hub.closing.aborted && !sink.closed) {
      const page = await events.page(this.filters, {
        limit: settings.pageSize,
        afterId: this.cursor,
        poll: true,
      });
      if (hub.closing.aborted || sink.closed) break;
      if (page.ids.length > 0) {
        const last = page.ids[page.ids.length - 1]!;
        // One write per page; written before any `end` event that may follow, so resume after the page's last id.
        const fits = sink.write(rendered(page));
        this.lastWrite = Date.now();
        this.delivered += page.ids.length;
        if (sink.pending > settings.bufferBytes || (!fits && !(await sink.drained(settings.drainMs)))) {
          cut(sink, last);
          return this.resolve({ delivered: this.delivered, reason: "slow_consumer" });
        }
        this.cursor = last;
        if (page.ids.length === settings.pageSize) continue; // catching up: the next page at once
      }
      if (this.untilCaughtUp) {
        sink.write(
          endEvent(
            "caught_up",
            this.cursor,
            `Every event under the watermark was sent; continue after ${this.cursor}.`,
          ),
        );
        sink.end();
        return this.resolve({ delivered: this.delivered, reason: "caught_up" });
      }
      // Caught up: the hub serves this connection from here (one page read per distinct cursor and filters at each
      // step, written to every connection there); it hands it back when it needs its own loop again.
      // The ceiling this page was read under: a step past it has events this page could not hold.
      this.seen =
        page.ids.length > 0
          ? afterPage(this.filters, page.ceiling ?? "")
          : (page.ceiling ?? (await events.ceiling()));
      hub.follow(this);
      return;
    }
    this.end();
  }

  handBack(reason: FollowEnd): void {
    // After the hub's pass, as a promise's continuation was: not inside its loop over the members.
    queueMicrotask(() => this.resume(reason).catch(this.reject));
  }

  private async resume(reason: FollowEnd): Promise<void> {
    if (reason === "closed") return this.end();
    if (reason === "more") return this.catchUp();
    // Its buffer filled while followed: its own loop again once it drains, else it is cut.
    if (reason === "slow" || !(await this.sink.drained(this.settings.drainMs))) {
      cut(this.sink, this.cursor);
      return this.resolve({ delivered: this.delivered, reason: "slow_consumer" });
    }
    return this.catchUp();
  }

  /** The client left or the API closes. */
  private end(): void {
    const { sink, cursor } = this;
    if (this.hub.closing.aborted && !sink.closed) {
      sink.write(
        endEvent(
          "shutdown",
          cursor,
          `This API process is stopping; reconnect with Last-Event-ID or after_id=${cursor}.`,
        ),
      );
      sink.end();
      this.resolve({ delivered: this.delivered, reason: "shutdown" });
      return;
    }
    sink.end();
    this.resolve({ delivered: this.delivered, reason: "closed" });
  }
}

/**
 * A page as Server-Sent Events, built once per page and encoded once: connections at the same cursor get the same
 * page from the service's page cache, so its bytes are shared too (a string written to each socket would be encoded
 * to UTF-8 again for every one of them).
 */
const renderedPages = new WeakMap<EventsPage, Buffer>();
function rendered(page: EventsPage): Buffer {
  let bytes = renderedPages.get(page);
  if (bytes === undefined) {
    bytes = Buffer.from(page.ids.map((id, i) => sse(id, page.docs[i]!)).join(""), "utf8");
    renderedPages.set(page, bytes);
  }
  return bytes;
}
