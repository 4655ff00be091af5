// Test passes: embedded and server (the stream resumes across sink restarts and a replay over a pipeline on Kafka).
/**
 * `GET /events/stream` (issue 24, point 1): every matching event once, in id order, resuming with Last-Event-ID
 * across client reconnects, an events-sink restart, a whole-range replay and an API restart while blocks are produced
 * live; heartbeats; the per-key connection
 * limit; a client too slow to read is cut with the id to resume after. Over a real pipeline on the simulated
 * network (in-process bus, or Kafka on CI's second pass) and a listening API.
 */
import { EventSource } from "eventsource";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLive } from "../../devnet/live.ts";
import { serveStream } from "../../lib/events/stream.ts";
import { reprocessRange } from "../../pipeline/reprocess.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";

interface Received {
  ids: string[];
  ends: { reason: string; resume_after_id: string }[];
  comments: number;
  retry: number | null;
}

/** A Server-Sent Events client over fetch that parses what arrives until `stop()`. */
function openStream(base: string, key: string, query: string, lastEventId?: string) {
  const got: Received = { ids: [], ends: [], comments: 0, retry: null };
  const abort = new AbortController();
  const done = (async () => {
    const res = await fetch(`${base}/events/stream${query}`, {
      headers: {
        "x-api-key": key,
        authorization: `Bearer ${key}`,
        ...(lastEventId ? { "last-event-id": lastEventId } : {}),
      },
      signal: abort.signal,
    });
    if (res.status !== 200) return res.status;
    let buffer = "";
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split("\n");
          const field = (name: string) =>
            lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
          if (lines.every((l) => l.startsWith(":"))) got.comments++;
          const retry = field("retry");
          if (retry) got.retry = Number(retry);
          const data = field("data");
          if (field("event") === "end" && data) got.ends.push(JSON.parse(data));
          else if (data) {
            const event = JSON.parse(data) as { id: string };
            expect(field("id")).toBe(event.id);
            got.ids.push(event.id);
          }
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
    return 200;
  })();
  return { got, done, stop: () => abort.abort() };
}

/** Every event id of a filter, oldest first, read as a poller does. */
async function pollAll(t: TestApp, query: string): Promise<string[]> {
  const ids: string[] = [];
  let after = "0";
  for (;;) {
    const res = await t.app.inject({ url: `/events/all?poll=1&limit=200&after_id=${after}${query}` });
    const events = res.json().events as { id: string }[];
    if (events.length === 0) return ids;
    ids.push(...events.map((e) => e.id));
    after = events.at(-1)!.id;
  }
}

describe("events stream", () => {
  let p: TestPipeline;
  const apps: TestApp[] = [];
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 150, confirmations: 2 });
    await p.catchUp();
  });
  afterAll(async () => {
    for (const a of apps) await a.close().catch(() => undefined);
    await p?.close();
  });

  const startApi = async (env: Record<string, string> = {}, port = 0) => {
    const t = await createTestApp({
      stores: { pg: p.pg, ch: p.ch },
      env: { EVENTS_WATERMARK_CACHE_MS: "100", STREAM_POLL_MS: "50", STREAM_HEARTBEAT_MS: "1000", ...env },
    });
    apps.push(t);
    const address = await t.app.listen({ port, host: "127.0.0.1" });
    return { t, base: address };
  };

  it("delivers every matching event once, in order, across reconnects and an API restart", async () => {
    const first = await startApi();
    // Filters over what the simulated chain made: all, the most common category, the next two, one sub kind.
    const all = (await first.t.app.inject({ url: "/events/all?limit=200" })).json().events as {
      category: string;
      sub_kind: string;
    }[];
    const count = (values: string[]) =>
      [...values.reduce((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map<string, number>())].sort(
        (a, b) => b[1] - a[1],
      );
    const categories = count(all.map((e) => e.category)).map(([c]) => c);
    const subKinds = count(all.map((e) => e.sub_kind)).map(([k]) => k);
    expect(categories.length).toBeGreaterThanOrEqual(3);
    const filters = [
      "",
      `&category=${categories[0]}`,
      `&category=${categories[1]},${categories[2]}`,
      `&sub_kind=${subKinds[1] ?? subKinds[0]}`,
    ];
    const clients = Array.from({ length: 50 }, (_, i) => {
      const query = `?after_id=0${filters[i % filters.length]}`;
      return { query, stream: openStream(first.base, first.t.userKey, query), ids: [] as string[] };
    });
    // History first: each client catches up from the start.
    const historic = await Promise.all(filters.map((f) => pollAll(first.t, f)));
    expect(historic[0]!.length).toBeGreaterThan(200);
    for (const h of historic) expect(h.length).toBeGreaterThan(0);
    await waitFor("the clients to catch up", async () =>
      clients.every((c, i) => c.stream.got.ids.length >= historic[i % filters.length]!.length),
    );
    // The process counts its open streams (alephium_stream_connections): the 50 clients.
    const metric = async (name: string) => {
      const text = (await first.t.app.inject({ url: "/metrics" })).body;
      return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
    };
    expect(await metric("alephium_stream_connections")).toBe(50);
    // One client leaves halfway and comes back with its Last-Event-ID.
    const leaver = clients[5]!;
    let second: Awaited<ReturnType<typeof startApi>> | undefined;
    leaver.stream.stop();
    await leaver.stream.done;
    leaver.ids.push(...leaver.stream.got.ids);
    // Its stream ended (closed by the client), with the events it was sent counted.
    await waitFor(
      "the leaver's stream to end",
      async () => (await metric("alephium_stream_connections")) === 49,
    );
    expect(await metric('alephium_stream_ends_total{reason="closed"}')).toBe(1);
    expect(await metric("alephium_stream_events_total")).toBe(leaver.ids.length);

    // From here blocks are produced live (16 per second over the 16 chains) and ingested as they come, while the
    // streams run, the leaver comes back, the events sink restarts, the whole range is replayed (reprocess) and
    // the API restarts.
    p.ingestor.start();
    const stopLive = startLive(p.chain, { blocksPerSecond: 16 });
    try {
      await waitFor("live blocks to reach the streams", async () => {
        const now = await pollAll(first.t, "");
        return now.length > historic[0]!.length;
      });
      leaver.stream = openStream(first.base, first.t.userKey, leaver.query, leaver.ids.at(-1));
      await p.restartProcessor("events-sink");
      // The whole range stored so far: under live production an open-ended replay would chase the tip.
      const [stored] = await p.ch.ch.query<{ top: string }>(
        "t",
        "SELECT toString(toUnixTimestamp64Milli(max(timestamp))) AS top FROM raw_blocks",
      );
      expect(await reprocessRange(p.deps, 0, Number(stored!.top))).toBeGreaterThan(0);

      // The API restarts: its streams end with `shutdown`, and the clients reconnect to the new process.
      await waitFor("the new blocks to reach the streams", async () =>
        clients.every((c) => c.stream.got.ids.length > 0),
      );
      await first.t.app.close();
      for (const c of clients) {
        await c.stream.done;
        expect(c.stream.got.ends.map((e) => e.reason)).toEqual(["shutdown"]);
        const resume = c.stream.got.ends[0]!.resume_after_id;
        c.ids.push(...c.stream.got.ids);
        // The resume point is the last event delivered (or the starting point when none came).
        expect(resume).toBe(c.ids.at(-1) ?? resume);
      }
      const restarted = await startApi();
      second = restarted;
      for (const c of clients)
        c.stream = openStream(restarted.base, restarted.t.userKey, c.query, c.ids.at(-1) ?? "0");
      // More live blocks reach the reconnected clients before production stops.
      const before = (await pollAll(restarted.t, "")).length;
      await waitFor(
        "live blocks after the restart",
        async () => (await pollAll(restarted.t, "")).length > before,
      );
    } finally {
      stopLive();
    }
    // Production stopped: live ingest stops and one catch-up brings the pipeline to the simulated tip.
    await p.ingestor.stop();
    await p.catchUp();
    if (!second) throw new Error("the API did not restart");
    const final = second;
    // The API reads the watermark through a cache (EVENTS_WATERMARK_CACHE_MS, 100 ms here) that answers the previous
    // read while a new one runs, and keeps pages for EVENTS_PAGE_CACHE_MS (1 s): the expected lists are taken once
    // two reads 1.2 s apart agree, so they hold every event the caught-up pipeline made and not a list cut at a
    // watermark read before the catch-up ended (CI once saw the clients receive 20 events past such a list).
    let expected: string[][] = [];
    await waitFor("the served events to settle at the caught-up watermark", async () => {
      const before = await Promise.all(filters.map((f) => pollAll(final.t, f)));
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expected = await Promise.all(filters.map((f) => pollAll(final.t, f)));
      return JSON.stringify(before) === JSON.stringify(expected);
    });
    expect(expected[0]!.length).toBeGreaterThan(historic[0]!.length);
    await waitFor(
      "every client to receive every event",
      async () =>
        clients.every(
          (c, i) => c.ids.length + c.stream.got.ids.length >= expected[i % filters.length]!.length,
        ),
      60_000,
    );
    for (const [i, c] of clients.entries()) {
      c.stream.stop();
      await c.stream.done;
      expect([...c.ids, ...c.stream.got.ids], `client ${i}${c.query}`).toEqual(expected[i % filters.length]);
    }
    expect(clients[0]!.stream.got.retry).toBe(3000);
  }, 300_000);

  it("an EventSource client (the eventsource package, as docs/events.md shows) resumes by itself across an API restart", async () => {
    const first = await startApi({ STREAM_RETRY_MS: "200" });
    const port = Number(new URL(first.base).port);
    const key = first.t.userKey;
    const received: string[] = [];
    const ends: string[] = [];
    // The documented client: the package's `fetch` option adds the key's headers; on a dropped connection
    // it reconnects after the server's `retry:` hint and sends Last-Event-ID by itself.
    const source = new EventSource(`${first.base}/events/stream?after_id=0`, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...init?.headers, "x-api-key": key, authorization: `Bearer ${key}` },
        }),
    });
    source.onmessage = (message) => {
      expect((JSON.parse(message.data) as { id: string }).id).toBe(message.lastEventId);
      received.push(message.lastEventId);
    };
    source.addEventListener("end", (message) =>
      ends.push((JSON.parse(message.data) as { reason: string }).reason),
    );
    try {
      const history = await pollAll(first.t, "");
      expect(history.length).toBeGreaterThan(200);
      await waitFor("the EventSource to receive the history", async () => received.length >= history.length);
      // The API stops (its streams end with `shutdown`); new blocks arrive while it is down; a new API process
      // listens on the same address and the EventSource comes back to it without help.
      await first.t.app.close();
      p.chain.advance(32);
      await p.catchUp();
      const second = await startApi({ STREAM_RETRY_MS: "200" }, port);
      const expected = await pollAll(second.t, "");
      expect(expected.length).toBeGreaterThan(history.length);
      await waitFor(
        "the EventSource to reconnect and receive the new events",
        async () => received.length >= expected.length,
        60_000,
      );
      expect(ends).toEqual(["shutdown"]);
      expect(received).toEqual(expected);
    } finally {
      source.close();
    }
  }, 120_000);

  it("sends heartbeats, limits connections per key by plan, and rejects a bad Last-Event-ID", async () => {
    const { t, base } = await startApi({ STREAM_CONNECTIONS: "free:1,pro:2" });
    const free = (await t.deps.keys!.createKey({ userId: "stream-user", planId: "free", level: "user" })).key;
    const one = openStream(base, free, "");
    await waitFor("a heartbeat", async () => one.got.comments >= 2, 10_000);
    const refused = await fetch(`${base}/events/stream`, {
      headers: { "x-api-key": free, authorization: `Bearer ${free}` },
    });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "too_many_streams" });
    one.stop();
    await one.done;
    // A new stream of that key is taken once the closed one's slot is free: its answer's status (the headers, however
    // long a loaded machine takes to send them), then it is closed at once.
    await waitFor("the slot to free", async () => {
      const abort = new AbortController();
      const again = await fetch(`${base}/events/stream`, {
        headers: { "x-api-key": free, authorization: `Bearer ${free}` },
        signal: abort.signal,
      });
      abort.abort();
      await again.body?.cancel().catch(() => undefined);
      return again.status === 200;
    });
    const bad = await fetch(`${base}/events/stream`, {
      headers: { "x-api-key": free, authorization: `Bearer ${free}`, "last-event-id": "nope" },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("last-event-id");
    const anonymous = await fetch(`${base}/events/stream`);
    expect(anonymous.status).toBe(401);
    // A batch reader: everything under the watermark, then `end` with `caught_up`.
    const batch = openStream(base, t.userKey, "?after_id=0&until_caught_up=1");
    expect(await batch.done).toBe(200);
    expect(batch.got.ids).toEqual(await pollAll(t, ""));
    expect(batch.got.ends).toEqual([
      expect.objectContaining({ reason: "caught_up", resume_after_id: batch.got.ids.at(-1) }),
    ]);
  });

  it("cuts a client that does not read with an end event naming where to resume", async () => {
    const events = apps[0]?.deps.events ?? (await startApi()).t.deps.events!;
    // A connection whose socket never drains: every write reports a full buffer that keeps growing.
    let pending = 0;
    const written: string[] = [];
    let ended = false;
    const sink = {
      write(chunk: string | Uint8Array) {
        const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
        written.push(text);
        pending += Buffer.byteLength(text);
        return pending < 2_000;
      },
      get pending() {
        return pending;
      },
      drained: async (ms: number) => {
        await new Promise((r) => setTimeout(r, ms));
        return false;
      },
      get closed() {
        return ended;
      },
      end() {
        ended = true;
      },
    };
    const hub = (await import("../../lib/events/stream.ts")).createStreamHub(events, { pollMs: 50 });
    const result = await serveStream(
      hub,
      events,
      { pollMs: 50, heartbeatMs: 1000, retryMs: 3000, bufferBytes: 10_000, drainMs: 50, pageSize: 200 },
      { filters: {}, afterId: "0", sink },
    );
    expect(result.reason).toBe("slow_consumer");
    expect(ended).toBe(true);
    const last = written.at(-1)!;
    expect(last.startsWith("event: end\n")).toBe(true);
    const end = JSON.parse(last.split("data: ")[1]!) as { reason: string; resume_after_id: string };
    expect(end.reason).toBe("slow_consumer");
    // The resume point is the last event written before the `end` event: a client that reads `end` has it.
    const ids = written.flatMap((w) => [...w.matchAll(/^id: (.*)$/gm)].map((m) => m[1]!));
    expect(ids.length).toBeGreaterThan(0);
    expect(end.resume_after_id).toBe(ids.at(-1));
    hub.close();
  });
});
