// Test passes: embedded and server (guarantee 3 for pollers, streams and webhooks: in-process bus in the embedded pass, Kafka in this one).
/**
 * Guarantee 3 for pollers: reorgs deeper than CONFIRMATIONS reach events pollers already received, and
 * the reorg notices in the poll stream (chain index 17, lib/events/notices.ts) let every poller end with
 * the store's main-chain events. 20 pollers follow /events/all?poll=1 while blocks are produced live
 * with random reorgs and explicit deep ones (CONFIRMATIONS 0: every reorg is deeper); half start after
 * the reorgs. 50 clients follow the same events over /events/stream, 15 of them cut twice and resuming with
 * Last-Event-ID. Each keeps a live set: events added, a retraction notice's `retracted_ids` removed, a
 * late_block notice's `events` added. Before the deep reorgs, a poller, a stream and a webhook per filter kind
 * (dapp, category, sub_kind, address, token; values of the events those reorgs replace) and one whose filter never
 * matches catch up from the start: each ends with the store's events of its filters, its notices once and in
 * order, and the one that never matched gets none (issue 46).
 *
 * A second case crashes the events sink between a notice's record and its row, and checks the replay
 * leaves the state of a run without the crash.
 */
import { setMaxListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { startLive } from "../../devnet/live.ts";
import { eventId, idCeiling, type NormalizedEvent } from "../../lib/chain/types.ts";
import { NOTICE_CHAIN_INDEX } from "../../lib/events/notices.ts";
import { type EventFilters, readProgress } from "../../lib/events/reader.ts";
import { matches } from "../../lib/events/tail.ts";
import type { BlockEventsMessage, EventsMessage } from "../../lib/events/wire.ts";
import { writeEventsBatch } from "../../lib/events/writer.ts";
import { createMetrics } from "../../lib/metrics.ts";
import { type JobWorker, startJobWorker } from "../../pipeline/jobs/worker.ts";
import {
  eventsStateHash,
  KAFKA_BROKERS,
  noticesStateHash,
  startTestPipeline,
  type TestPipeline,
  waitFor,
} from "../helpers/pipeline.ts";
import { openTestCh, type TestCh } from "../helpers/stores.ts";

// One bus a pass: the embedded pass runs the in-process bus, the PostgreSQL + Kafka pass runs Kafka.
const modes = KAFKA_BROKERS ? [{ name: "Kafka", kafka: true }] : [{ name: "embedded bus", kafka: false }];
console.warn(
  KAFKA_BROKERS
    ? "[skip notice] poller tombstones on the in-process bus: runs in the embedded pass (npm test)"
    : "[skip notice] poller tombstones over Kafka: KAFKA_BROKERS is not set (CI starts the kcat mock cluster)",
);

/** A local webhook receiver: answers 204, keeps each webhook's batches once by webhook-id, in the order received. */
interface HookReceiver {
  url: string;
  acked(webhookId: string): unknown[][];
  close(): Promise<void>;
}

async function startHookReceiver(): Promise<HookReceiver> {
  const batches = new Map<string, Map<string, unknown[]>>();
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      const body = JSON.parse(raw) as { webhook_id: string; events: unknown[] };
      const own = batches.get(body.webhook_id) ?? new Map<string, unknown[]>();
      batches.set(body.webhook_id, own);
      const messageId = String(req.headers["webhook-id"]);
      if (!own.has(messageId)) own.set(messageId, body.events);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    acked: (id) => [...(batches.get(id)?.values() ?? [])],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The fields filters look at. */
type Filterable = Pick<
  NormalizedEvent,
  "dapp_id" | "category" | "sub_kind" | "from" | "to" | "token_address"
>;

interface Served {
  id: string;
  chain_index: number;
  block_hash: string;
  sub_kind: string;
  payload: {
    retracted_ids?: string[];
    added_ids?: string[];
    events?: { id: string; block_hash: string }[];
  };
}

/** A poller's view: the live events (id → block hash) and what the notices did to it. */
class Poller {
  /** The poller's filters, as query parameters ("" for none). */
  constructor(readonly query = "") {}
  after = "0";
  last = "";
  live = new Map<string, string>();
  ordered = true;
  /** Ids this poller had received and a retraction notice removed. */
  recalled = 0;
  /** Ids a late_block notice gave it that it had not received (below its cursor). */
  late = 0;
  notices = 0;
  noticeIds: string[] = [];

  apply(events: Served[]) {
    for (const e of events) {
      if (e.id <= this.last) this.ordered = false;
      this.last = e.id;
      if (e.chain_index !== NOTICE_CHAIN_INDEX) {
        this.live.set(e.id, e.block_hash);
        continue;
      }
      this.notices++;
      this.noticeIds.push(e.id);
      if (e.sub_kind === "retraction")
        for (const id of e.payload.retracted_ids ?? []) if (this.live.delete(id)) this.recalled++;
      if (e.sub_kind === "late_block")
        for (const x of e.payload.events ?? []) {
          if (!this.live.has(x.id)) this.late++;
          this.live.set(x.id, x.block_hash);
        }
    }
    if (events.length > 0) this.after = events[events.length - 1]!.id;
  }
}

/**
 * Follows /events/stream into a poller until `stop` aborts, reconnecting with Last-Event-ID (the poller's last
 * id) whenever its connection is cut, as an EventSource does.
 */
function followStream(base: string, key: string, poller: Poller, stop: AbortSignal) {
  let connection = new AbortController();
  let connections = 0;
  const once = async (signal: AbortSignal) => {
    // A cut (abort) may land while connecting or while reading: either way the loop reconnects.
    try {
      await read(signal);
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  };
  const read = async (signal: AbortSignal) => {
    const res = await fetch(`${base}/events/stream?after_id=0${poller.query}`, {
      headers: {
        "x-api-key": key,
        authorization: `Bearer ${key}`,
        ...(poller.after === "0" ? {} : { "last-event-id": poller.after }),
      },
      signal,
    });
    expect(res.status).toBe(200);
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data && !/^event: /m.test(block)) poller.apply([JSON.parse(data) as Served]);
      }
    }
  };
  const done = (async () => {
    while (!stop.aborted) {
      connection = new AbortController();
      const cut = connection;
      const onStop = () => cut.abort();
      stop.addEventListener("abort", onStop, { once: true });
      connections++;
      await once(cut.signal);
      stop.removeEventListener("abort", onStop);
    }
  })();
  return { done, cut: () => connection.abort(), connections: () => connections };
}

describe.each(modes)("reorg notices in the poll stream ($name)", ({ kafka }) => {
  let p: TestPipeline | undefined;
  let stopOnFailure: AbortController | undefined;
  let worker: JobWorker | undefined;
  let receiver: HookReceiver | undefined;
  afterAll(async () => {
    stopOnFailure?.abort();
    await worker?.stop();
    await receiver?.close();
    await p?.close();
  });

  it("pollers that saw orphaned events and pollers that had not end with the same live set", async () => {
    // The events and their notices come from normalize and the events sink; the other groups would only slow it.
    p = await startTestPipeline({
      blocks: 120,
      confirmations: 0,
      kafka,
      processors: ["normalize", "events-sink"],
      // Filtered webhooks too, to a local receiver (loopback allowed as an operator would), looked at every second.
      env: {
        WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
        WEBHOOK_POLL_S: "1",
        JOBS_POLL_S: "1",
        JOBS_EXPIRE_S: "600",
      },
    });
    worker = await startJobWorker(p.deps);
    receiver = await startHookReceiver();
    const pipeline = p;
    const { chain } = pipeline;
    const pollOnce = async (poller: Poller) => {
      const r = await pipeline.api.app.inject({
        url: `/events/all?poll=1&after_id=${poller.after}&limit=200${poller.query}`,
      });
      expect(r.statusCode).toBe(200);
      const events = r.json().events as Served[];
      poller.apply(events);
      return events.length;
    };
    let running = true;
    const follow = async (poller: Poller) => {
      while (running) {
        // As a client does: the next page at once after a full one, a pause once it has what there is.
        const got = await pollOnce(poller);
        await new Promise((r) => setTimeout(r, got >= 200 ? 0 : 50));
      }
    };
    const early = Array.from({ length: 10 }, () => new Poller());
    const filterSets: { name: string; query: string; filters: EventFilters }[] = [];
    const filtered: { name: string; query: string; filters: EventFilters; poller: Poller; via: string }[] =
      [];
    const hooks: { name: string; query: string; filters: EventFilters; webhookId: string }[] = [];
    let heldBefore = new Map<(typeof filtered)[number], Map<string, string>>();
    const lateJoiners = Array.from({ length: 10 }, () => new Poller());
    const loops = early.map(follow);
    // 50 more follow the same events over GET /events/stream (Server-Sent Events), applying the same notices;
    // 15 of them are cut twice on the way (around the deep reorgs and the events-sink restart) and come back
    // with Last-Event-ID.
    const base = await pipeline.api.app.listen({ port: 0, host: "127.0.0.1" });
    const streamers = Array.from({ length: 50 }, () => new Poller());
    const stopStreams = new AbortController();
    setMaxListeners(100, stopStreams.signal);
    stopOnFailure = stopStreams;
    const streams = streamers.map((poller) =>
      followStream(base, pipeline.api.userKey, poller, stopStreams.signal),
    );
    const cutSome = () => {
      for (const stream of streams.slice(0, 15)) stream.cut();
    };
    const seen = () => Math.max(...early.map((x) => x.live.size));
    const atTip = async () => {
      const progress = await readProgress(pipeline.ch.ch);
      return (
        progress.chains.length === 16 &&
        progress.chains.every((c) => c.height === chain.height(c.chain_index))
      );
    };
    pipeline.ingestor.start();
    // Random reorgs of depth 1..2 while blocks are produced: every one is deeper than CONFIRMATIONS.
    let stopLive = startLive(chain, { blocksPerSecond: 40, reorgEvery: 12 });

    try {
      await waitFor("first events visible to pollers", async () => seen() > 100, 60_000);
      // Deep reorgs (4 blocks) once the pollers hold everything served: the orphaned blocks' older
      // events were received.
      stopLive();
      await waitFor("the pipeline to reach the simulated tip", atTip, 90_000);
      const { watermark } = await readProgress(pipeline.ch.ch);
      const [last] = await pipeline.ch.ch.query<{ top: string }>(
        "t",
        "SELECT max(id) AS top FROM events FINAL WHERE main_chain AND id < {c:String}",
        { c: idCeiling(watermark) },
      );
      await waitFor(
        "pollers to reach the watermark",
        async () => early.every((x) => x.after >= last!.top),
        60_000,
      );
      // Filtered pollers and streams (each filter kind) with values of the newest events of the chains the deep
      // reorgs below replace: they catch up from the start and hold those events first.
      const newest = (
        await pipeline.ch.ch.query<{ doc: string }>(
          "t",
          `SELECT doc FROM events FINAL WHERE main_chain AND chain_index IN (3, 7, 11, 14) AND id < {c:String}
           ORDER BY id DESC LIMIT 100`,
          { c: idCeiling(watermark) },
        )
      ).map((r) => JSON.parse(r.doc) as Filterable);
      const pick = (f: (e: Filterable) => string) => newest.map(f).find((v) => v !== "") ?? "";
      const dapp = newest.find((e) => e.dapp_id !== "alephium")?.dapp_id ?? newest[0]!.dapp_id;
      filterSets.push(
        { name: "dapp", query: `&dapp_id=${dapp}`, filters: { dapp_id: dapp } },
        {
          name: "category",
          query: `&category=${newest[1]!.category}`,
          filters: { category: [newest[1]!.category] },
        },
        {
          name: "sub_kind",
          query: `&sub_kind=${newest[2]!.sub_kind}`,
          filters: { sub_kind: [newest[2]!.sub_kind] },
        },
        {
          name: "address",
          query: `&address=${pick((e) => e.from)}`,
          filters: { address: pick((e) => e.from) },
        },
        {
          name: "token",
          query: `&token_address=${pick((e) => e.token_address)}`,
          filters: { token_address: pick((e) => e.token_address) },
        },
        { name: "never", query: "&dapp_id=no-such-dapp", filters: { dapp_id: "no-such-dapp" } },
      );
      expect(filterSets.every((set) => !set.query.endsWith("="))).toBe(true);
      for (const set of filterSets) {
        const created = await pipeline.api.app.inject({
          method: "POST",
          url: "/webhooks",
          headers: pipeline.api.auth(pipeline.api.userKey),
          payload: { url: receiver!.url, filters: set.filters, after_id: "0" },
        });
        expect(created.statusCode, created.body).toBe(201);
        hooks.push({ ...set, webhookId: created.json().webhook.webhook_id as string });
        const poller = new Poller(set.query);
        filtered.push({ ...set, poller, via: "poll" });
        loops.push(follow(poller));
        const streamer = new Poller(set.query);
        filtered.push({ ...set, poller: streamer, via: "stream" });
        streams.push(followStream(base, pipeline.api.userKey, streamer, stopStreams.signal));
      }
      await waitFor(
        "filtered pollers and streams to reach the watermark",
        async () => {
          const tops = await Promise.all(
            filtered.map(async (x) => {
              const r = await pipeline.api.app.inject({
                url: `/events/all?poll=1&after_id=${x.poller.after}&limit=1${x.poller.query}`,
              });
              return (r.json().events as Served[]).length === 0;
            }),
          );
          return tops.every(Boolean);
        },
        60_000,
      );
      heldBefore = new Map(filtered.map((x) => [x, new Map(x.poller.live)]));
      const before = Math.min(...early.map((x) => x.notices));
      for (const c of [3, 7, 11, 14]) chain.reorg(c, 4);
      chain.advance(32);
      cutSome();
      await waitFor(
        "the reorgs' notices to reach the pollers",
        async () => {
          return Math.min(...early.map((x) => x.notices)) >= before + 8 && (await atTip());
        },
        90_000,
      );
      await pipeline.restartProcessor("events-sink");
      cutSome();
      for (const x of lateJoiners) loops.push(follow(x));
      stopLive = startLive(chain, { blocksPerSecond: 40, reorgEvery: 12 });
      const joined = seen();
      await waitFor("more events after the restart", async () => seen() > joined + 100, 60_000);
      stopLive();
      // Every chain moves past every notice's time, so every notice gets under the watermark.
      chain.advance(48);
      await waitFor("the pipeline to reach the simulated tip", atTip, 180_000);
    } finally {
      stopLive();
      running = false;
      await Promise.all(loops);
    }
    for (const poller of [
      ...early,
      ...lateJoiners,
      ...filtered.filter((x) => x.via === "poll").map((x) => x.poller),
    ])
      while ((await pollOnce(poller)) > 0);
    const top = early[0]!.after;
    await waitFor(
      "the streams to reach the pollers' last id",
      async () =>
        streamers.every((x) => x.after >= top) &&
        filtered.every(
          (x) =>
            x.via === "poll" ||
            x.poller.after === filtered.find((y) => y.name === x.name && y.via === "poll")!.poller.after,
        ),
      60_000,
    );
    // Each filtered webhook's cursor reaches its poller's last id (the one that never matched stays at 0).
    const cursorOf = async (id: string) =>
      (
        await pipeline.pg.pg.query<{ after_id: string }>(
          "t",
          "SELECT after_id FROM webhooks WHERE webhook_id = $1",
          [id],
        )
      )[0]?.after_id ?? "";
    await waitFor(
      "the filtered webhooks to reach their pollers' last id",
      async () => {
        for (const h of hooks) {
          const poll = filtered.find((x) => x.name === h.name && x.via === "poll")!.poller;
          if ((await cursorOf(h.webhookId)) < poll.after) return false;
        }
        return true;
      },
      120_000,
    );
    for (const h of hooks) {
      // The acknowledged batches once each (by webhook-id), in the order acknowledged: the webhook's events.
      const poller = new Poller(h.query);
      for (const events of receiver!.acked(h.webhookId)) poller.apply(events as Served[]);
      filtered.push({ ...h, poller, via: "webhook" });
    }
    stopStreams.abort();
    await Promise.all(streams.map((x) => x.done));
    // The cut streams reconnected (once per cut at least) and the others kept their first connection.
    for (const stream of streams.slice(0, 15)) expect(stream.connections()).toBeGreaterThanOrEqual(3);
    for (const stream of streams.slice(15)) expect(stream.connections()).toBe(1);
    // Filtered readers (issue 46): each ends with the store's main-chain events of its filters, every event it held
    // before the deep reorgs and the reorgs retracted removed by a notice, each notice once, in order; a reader whose
    // filter matched no event gets no notice.
    const docs = await pipeline.ch.ch.query<{ doc: string; block_hash: string }>(
      "t",
      "SELECT doc, block_hash FROM events FINAL WHERE main_chain AND chain_index < 16 AND id < {c:String}",
      { c: idCeiling((await readProgress(pipeline.ch.ch)).watermark) },
    );
    const servedNow = docs.map((r) => ({
      ...(JSON.parse(r.doc) as Filterable & { id: string }),
      block_hash: r.block_hash,
    }));
    const mainNow = new Set(servedNow.map((e) => `${e.id}/${e.block_hash}`));
    let recalledFiltered = 0;
    for (const x of filtered) {
      const label = `${x.via} ${x.name} ${x.query}`;
      const want = new Map(servedNow.filter((e) => matches(e, x.filters)).map((e) => [e.id, e.block_hash]));
      expect(x.poller.ordered, label).toBe(true);
      expect(new Set(x.poller.noticeIds).size, label).toBe(x.poller.noticeIds.length);
      expect(new Map([...x.poller.live].sort()), label).toEqual(new Map([...want].sort()));
      // Held before the deep reorgs, off the main chain now: removed by a notice (the live sets are equal).
      const orphaned = [...(heldBefore.get(x) ?? [])].filter(([id, hash]) => !mainNow.has(`${id}/${hash}`));
      recalledFiltered += orphaned.length;
      if (x.name === "never") {
        expect(x.poller.notices, label).toBe(0);
        expect(x.poller.live.size, label).toBe(0);
      }
    }
    expect(recalledFiltered).toBeGreaterThan(0);
    for (const via of ["poll", "stream", "webhook"])
      expect(
        filtered.filter((x) => x.via === via && x.name !== "never").reduce((n, x) => n + x.poller.notices, 0),
      ).toBeGreaterThan(0);
    const pollers = [...early, ...lateJoiners, ...streamers];

    const { watermark } = await readProgress(pipeline.ch.ch);
    const ceiling = idCeiling(watermark);
    const rows = await pipeline.ch.ch.query<{ id: string; block_hash: string; chain_index: number }>(
      "t",
      "SELECT id, block_hash, chain_index FROM events FINAL WHERE main_chain ORDER BY id",
    );
    const notices = rows.filter((r) => r.chain_index === NOTICE_CHAIN_INDEX);
    expect(notices.length).toBeGreaterThan(4);
    expect(notices.every((n) => n.id < ceiling)).toBe(true); // every notice was served
    const expected = new Map(
      rows
        .filter((r) => r.chain_index !== NOTICE_CHAIN_INDEX && r.id < ceiling)
        .map((r) => [r.id, r.block_hash]),
    );
    expect(expected.size).toBeGreaterThan(500);
    for (const poller of pollers) {
      expect(poller.ordered).toBe(true);
      expect(poller.notices).toBe(notices.length);
      expect(new Map([...poller.live].sort())).toEqual(new Map([...expected].sort()));
    }
    // Not vacuous: early pollers had received events the reorgs retracted, and got winning-branch
    // events below their cursor only through late_block notices.
    expect(early.reduce((n, x) => n + x.recalled, 0)).toBeGreaterThan(0);
    expect(early.reduce((n, x) => n + x.late, 0)).toBeGreaterThan(0);
    // The store's other rows equal a clean pass in shape: no retracted row is on the main chain.
    const orphaned = await pipeline.ch.ch.query<{ n: string }>(
      "t",
      `SELECT count() AS n FROM events FINAL WHERE main_chain AND chain_index < 16
       AND block_hash IN (SELECT block_hash FROM reorg_notices FINAL WHERE kind = 'retraction')
       AND block_hash NOT IN (SELECT block_hash FROM reorg_notices FINAL WHERE kind = 'late_block')`,
    );
    expect(Number(orphaned[0]?.n)).toBe(0);
  }, 600_000);
});

describe("reorg notices survive crashes", () => {
  const stores: TestCh[] = [];
  afterAll(async () => {
    for (const s of stores.reverse()) await s.close();
  });

  /** 16 chains at durable time T, then a reorg of chain 2 reaching served rows, delivered in two batches. */
  const T = 1_700_000_000_000;
  const seq0 = 1_764_000_000_000;
  const event = (ts: number, chain: number, height: number, i: number, size = 10) =>
    ({
      id: eventId(ts, chain, height, i, 0),
      tx_id: `tx-${chain}-${height}-${i}`,
      tx_index: i,
      event_index: 0,
      dapp_id: "alephium",
      category: "mining",
      sub_kind: "coinbase",
      type: "reward",
      is_main: true,
      from: "",
      to: `miner${chain}`,
      with: "",
      token_address: "",
      token_id: "0".repeat(64),
      amount: "1",
      contract_address: "",
      contract_event_index: null,
      payload_json: JSON.stringify({ pad: "x".repeat(size) }),
      payload_ref: null,
    }) satisfies BlockEventsMessage["events"][number];
  const block = (chain: number, height: number, ts: number, hash: string, seq: number, n = 3) =>
    ({
      kind: "block",
      chain_index: chain,
      block_hash: hash,
      block_height: height,
      block_timestamp: ts,
      seq,
      events: Array.from({ length: n }, (_, i) => event(ts, chain, height, i)),
      offloaded: [],
    }) satisfies BlockEventsMessage;
  const base = Array.from({ length: 16 }, (_, c) => block(c, 1, T - 100 + c, `a${c}`, seq0 + c));
  const tips = Array.from({ length: 16 }, (_, c) => block(c, 2, T + c, `b${c}`, seq0 + 100 + c));
  // Chain 2 reorgs at height 1: both served blocks leave, a winning branch (big enough to be offloaded).
  const reorg: EventsMessage[] = [
    { ...tips[2]!, kind: "retraction", seq: seq0 + 200 },
    { ...base[2]!, kind: "retraction", seq: seq0 + 201 },
    { ...block(2, 1, T - 99, "w1", seq0 + 202, 40) },
    { ...block(2, 2, T - 50, "w2", seq0 + 203) },
  ];
  const batches: EventsMessage[][] = [base, tips, reorg.slice(0, 2), reorg.slice(2)];

  async function run(crash?: { label: string; batch: number }) {
    // chDB takes one data directory per process: every run is a database of its own in the first's.
    const ch = await openTestCh(stores[0] ? { dataDir: stores[0].dataDir } : {});
    stores.push(ch);
    const real = ch.ch.insert.bind(ch.ch);
    let armed = false;
    let failures = 0;
    ch.ch.insert = async (label, table, rows) => {
      if (armed && label === crash?.label) {
        armed = false;
        throw new Error(`injected crash at ${label}`);
      }
      return real(label, table, rows);
    };
    const deps = { ch: ch.ch, metrics: createMetrics(), maxPayloadBytes: 512 };
    for (const [i, batch] of batches.entries()) {
      armed = i === crash?.batch;
      for (;;) {
        try {
          await writeEventsBatch(deps, batch);
          break;
        } catch (error) {
          // The bus re-delivers the batch after the injected crash; anything else is a failure.
          if (!String(error).includes("injected crash") || ++failures > 1) throw error;
        }
      }
    }
    return { ch, failures };
  }

  it("a crash between a notice's record and its row, or before any row, replays into the same state", async () => {
    const clean = await run();
    const state = { events: await eventsStateHash(clean.ch), notices: await noticesStateHash(clean.ch) };
    expect(state.notices.rows).toBe(4); // two retractions, two late blocks
    for (const hash of [state.notices.hash, state.notices.payloads, state.notices.records])
      expect(hash).toMatch(/^[1-9]\d+$/);
    const offloaded = await clean.ch.ch.query<{ n: string }>(
      "t",
      "SELECT count() AS n FROM events FINAL WHERE chain_index = 17 AND payload_ref IS NOT NULL",
    );
    expect(Number(offloaded[0]?.n)).toBeGreaterThan(0);
    const crashes = [
      { label: "reorg_notice_events_insert", batch: 2 },
      { label: "reorg_notice_events_insert", batch: 3 },
      { label: "events_insert", batch: 3 },
      { label: "chain_progress_insert", batch: 3 },
    ];
    for (const crash of crashes) {
      const label = JSON.stringify(crash);
      const crashed = await run(crash);
      expect(crashed.failures, label).toBe(1);
      expect(await eventsStateHash(crashed.ch), label).toEqual(state.events);
      expect(await noticesStateHash(crashed.ch), label).toEqual(state.notices);
    }
    // Re-delivering every batch again (a replay from the start) and reprocessing (new seqs) add nothing.
    for (const batch of batches)
      await writeEventsBatch({ ch: clean.ch.ch, metrics: createMetrics(), maxPayloadBytes: 512 }, batch);
    // Reprocessing republishes the main-chain blocks only (raw_blocks where main_chain).
    const retracted = new Set(["a2", "b2"]);
    const reprocessed = batches
      .flat()
      .flatMap((m) =>
        m.kind === "block" && !retracted.has(m.block_hash) ? [{ ...m, seq: m.seq + 10_000 }] : [],
      );
    await writeEventsBatch({ ch: clean.ch.ch, metrics: createMetrics(), maxPayloadBytes: 512 }, reprocessed);
    expect(await noticesStateHash(clean.ch)).toEqual(state.notices);
  }, 120_000);
});
