/**
 * The live event stream (`GET /events/stream`, Server-Sent Events) on the pollers' guarantee: each connection
 * is a poller of `/events/all?poll=1` that the server drives. It starts after the client's last id (the
 * `Last-Event-ID` its EventSource sends on reconnect, or `after_id`), reads poll pages under the watermark until
 * it is caught up, then waits for the next watermark step. So every matching event arrives once, in id order,
 * across reconnects, API restarts and replays, exactly as for a poller.
 *
 * Fan-out: one hub per API process reads the watermark (one shared read per step, however many connections
 * wait) and wakes the waiting connections; their next pages near the tip come from the in-memory tail (and the
 * page cache shares identical pages), not from one store read per client.
 *
 * A client that reads too slowly (its unsent bytes pass `bufferBytes`, or a write does not drain within
 * `drainMs`) is sent a final `end` event with the reason and the id to resume after, then disconnected; it is
 * never skipped past events silently.
 */
import { setMaxListeners } from "node:events";
import { idCeiling } from "../chain/types.ts";
import type { Config } from "../config.ts";
import { sleep } from "../retry.ts";
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
  /** False when the sink's buffer is full (wait for `drained`). */
  write(text: string): boolean;
  /** Bytes written but not yet sent. */
  readonly pending: number;
  /** Resolves when the buffer drained, or false after `ms`. */
  drained(ms: number): Promise<boolean>;
  readonly closed: boolean;
  end(): void;
}

export interface StreamHub {
  /**
   * Resolves with the ceiling pages are served under once it is above `seen` (a ceiling a page was read under), or
   * after `timeoutMs` / when `signal` aborts.
   */
  next(seen: string, timeoutMs: number, signal: AbortSignal): Promise<string>;
  /** Counts a connection of `owner` against `limit`; null when the owner is at its limit. */
  acquire(owner: string, limit: number): (() => void) | null;
  /** Connections open per owner (tests, /status). */
  open(): number;
  /** Ends every stream (API shutdown): their clients reconnect with Last-Event-ID elsewhere. */
  close(): void;
  readonly closing: AbortSignal;
}

export function createStreamHub(events: EventsService, settings: Pick<StreamSettings, "pollMs">): StreamHub {
  const waiters = new Set<{ seen: string; wake: (ceiling: string) => void }>();
  const owners = new Map<string, number>();
  const closing = new AbortController();
  // Every open stream listens to it (thousands are expected): not a leak.
  setMaxListeners(0, closing.signal);
  let running = false;
  let last = "";

  const wake = (ceiling: string) => {
    if (ceiling > last) last = ceiling;
    for (const w of [...waiters]) if (last > w.seen) w.wake(last);
  };
  // The moment pages are served under a higher ceiling (whoever's read made the step: this hub's, a poller's),
  // every connection waiting below it wakes.
  const unsubscribe = events.onStep(wake);

  // While connections wait, the hub reads the ceiling every pollMs (one read for all of them): it is what moves the
  // watermark cache and the tail on when no poller does; the step itself wakes them through onStep.
  const run = async () => {
    while (waiters.size > 0 && !closing.signal.aborted) {
      try {
        wake(await events.ceiling());
      } catch {
        // the store is away: waiters keep waiting (and send heartbeats); the next step retries
      }
      if (waiters.size > 0) await sleep(settings.pollMs);
    }
    running = false;
  };

  return {
    closing: closing.signal,
    next(seen, timeoutMs, signal) {
      if (last > seen) return Promise.resolve(last);
      return new Promise((resolve) => {
        const done = (ceiling: string) => {
          clearTimeout(timer);
          signal.removeEventListener("abort", abort);
          waiters.delete(waiter);
          resolve(ceiling);
        };
        const waiter = { seen, wake: done };
        const abort = () => done(last);
        const timer = setTimeout(() => done(last), timeoutMs);
        signal.addEventListener("abort", abort, { once: true });
        waiters.add(waiter);
        if (!running) {
          running = true;
          void run();
        }
      });
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
    },
  };
}

const sse = (id: string, data: string) => `id: ${id}\ndata: ${data}\n\n`;
const endEvent = (reason: string, resumeAfter: string, detail: string) =>
  `event: end\ndata: ${JSON.stringify({ reason, resume_after_id: resumeAfter, detail })}\n\n`;

export interface StreamRequest {
  filters: EventFilters;
  /** Deliver events after this id; null starts at the watermark (new events only). */
  afterId: string | null;
  sink: StreamSink;
  /** Aborted when the client went away. */
  signal: AbortSignal;
  /** End with `caught_up` once everything under the watermark was delivered (batch readers, `curl`). */
  untilCaughtUp?: boolean;
}

/** Serves one stream until the client leaves, the API closes, or the client is cut as too slow. */
export async function serveStream(
  hub: StreamHub,
  events: EventsService,
  settings: StreamSettings,
  req: StreamRequest,
): Promise<{ delivered: number; reason: string }> {
  const { sink } = req;
  let cursor = req.afterId ?? idCeiling(await events.watermark());
  let delivered = 0;
  let lastWrite = Date.now();
  const stop = AbortSignal.any([req.signal, hub.closing]);
  sink.write(`retry: ${settings.retryMs}\n: stream after ${cursor}\n\n`);

  /** Writes, then cuts the client when it cannot keep up; false when the stream must end. */
  const put = async (text: string, resumeAfter: string): Promise<boolean> => {
    const fits = sink.write(text);
    lastWrite = Date.now();
    if (sink.pending > settings.bufferBytes || (!fits && !(await sink.drained(settings.drainMs)))) {
      sink.write(
        endEvent(
          "slow_consumer",
          resumeAfter,
          `The client read too slowly (${sink.pending} bytes unsent); reconnect with Last-Event-ID or after_id=${resumeAfter}.`,
        ),
      );
      sink.end();
      return false;
    }
    return true;
  };

  while (!stop.aborted && !sink.closed) {
    const page = await events.page(req.filters, { limit: settings.pageSize, afterId: cursor, poll: true });
    if (stop.aborted || sink.closed) break;
    if (page.ids.length > 0) {
      const last = page.ids[page.ids.length - 1]!;
      // One write per page; written before any `end` event that may follow, so resume after the page's last id.
      if (!(await put(rendered(page), last)))
        return { delivered: delivered + page.ids.length, reason: "slow_consumer" };
      cursor = last;
      delivered += page.ids.length;
      if (page.ids.length === settings.pageSize) continue; // catching up: the next page at once
    }
    if (req.untilCaughtUp) {
      sink.write(
        endEvent("caught_up", cursor, `Every event under the watermark was sent; continue after ${cursor}.`),
      );
      sink.end();
      return { delivered, reason: "caught_up" };
    }
    // The ceiling this page was read under: a step past it has events this page could not hold.
    const seen = page.ceiling ?? (await events.ceiling());
    const wait = Math.max(1, settings.heartbeatMs - (Date.now() - lastWrite));
    const ceiling = await hub.next(seen, wait, stop);
    if (stop.aborted || sink.closed) break;
    if (ceiling <= seen && Date.now() - lastWrite >= settings.heartbeatMs - 5) {
      if (!(await put(`: keep-alive ${Date.now()}\n\n`, cursor)))
        return { delivered, reason: "slow_consumer" };
    }
  }
  if (hub.closing.aborted && !sink.closed) {
    sink.write(
      endEvent(
        "shutdown",
        cursor,
        `This API process is stopping; reconnect with Last-Event-ID or after_id=${cursor}.`,
      ),
    );
    sink.end();
    return { delivered, reason: "shutdown" };
  }
  sink.end();
  return { delivered, reason: "closed" };
}

/**
 * A page as Server-Sent Events, built once per page: connections at the same cursor get the same page from the
 * service's page cache, so its rendering is shared too.
 */
const renderedPages = new WeakMap<EventsPage, string>();
function rendered(page: EventsPage): string {
  let text = renderedPages.get(page);
  if (text === undefined) {
    text = page.ids.map((id, i) => sse(id, page.docs[i]!)).join("");
    renderedPages.set(page, text);
  }
  return text;
}
