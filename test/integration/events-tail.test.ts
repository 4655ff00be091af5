// Test passes: embedded (the API's in-memory tail against the store; the bus only fills the store).
/**
 * The in-memory tail of /events/all (EVENTS_TAIL_CACHE): every page it answers equals the page the
 * store gives (an app on the same stores with the tail off), pages older than the tail go to the
 * store, new events are appended as the watermark moves, and a rewrite of served history (here a
 * retraction of a visible block, as a reorg deeper than CONFIRMATIONS would write) reaches it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEventsBatch } from "../../lib/events/writer.ts";
import type { EventsMessage } from "../../pipeline/messages.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

interface Ev {
  id: string;
  tx_id: string;
  block_hash: string;
  block_height: number;
  chain_index: number;
  timestamp: number;
  from: string;
  token_address: string;
  category: string;
}

describe("events tail", () => {
  let p: TestPipeline;
  let store: TestApp;
  // Store reads made by the app with the tail (the pipeline's API), by label. Both apps share one
  // ClickHouse client: reads are counted only while the app with the tail answers.
  const reads = new Map<string, number>();
  let counting = false;
  const count = (...labels: string[]) => labels.reduce((n, l) => n + (reads.get(l) ?? 0), 0);

  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 300, confirmations: 2, env: { EVENTS_TAIL_CACHE: "120" } });
    await p.catchUp();
    store = await createTestApp({ stores: { pg: p.pg, ch: p.ch }, env: { EVENTS_TAIL_CACHE: "0" } });
    const ch = p.api.deps.ch!;
    const real = ch.query.bind(ch);
    ch.query = async (label, sql, params) => {
      if (counting) reads.set(label, (reads.get(label) ?? 0) + 1);
      return real(label, sql, params);
    };
  });
  afterAll(async () => {
    await store?.close();
    await p?.close();
  });

  const get = async (app: TestApp, query: string) => {
    const r = await app.app.inject({ url: `/events/all?${query}` });
    expect(r.statusCode, r.body).toBe(200);
    return r;
  };
  /** The page from the app with the tail, checked equal to the store's; returns its events. */
  const same = async (query: string): Promise<Ev[]> => {
    counting = true;
    const tailed = await get(p.api, query).finally(() => {
      counting = false;
    });
    expect(tailed.body, query).toBe((await get(store, query)).body);
    return tailed.json().events as Ev[];
  };

  it("answers pages near the tip from memory, equal to the store's", async () => {
    const newest = await same("limit=20");
    expect(newest).toHaveLength(20);
    const held = p.api.deps.events!.tail!.stats();
    expect(held.events).toBeGreaterThan(100);
    expect(held.low).not.toBe("");
    reads.clear();
    const cursor = newest[19]!.id;
    const older = await same(`limit=20&after_id=${cursor}`);
    const polled = await same(`poll=1&limit=200&after_id=${older[19]!.id}`);
    expect(polled.map((e) => e.id)).toEqual(
      [...newest, ...older]
        .filter((e) => e.id > older[19]!.id)
        .map((e) => e.id)
        .reverse(),
    );
    const swap = (await same("limit=100")).find((e) => e.token_address);
    expect(swap).toBeDefined();
    await same(`limit=1&token_address=${swap!.token_address}`);
    await same("limit=5&category=mining");
    expect(count("events_list", "events_lookup")).toBe(0);
  });

  it("reads pages older than the tail from the store", async () => {
    const oldest = await same("poll=1&after_id=0&limit=50");
    expect(oldest).toHaveLength(50);
    reads.clear();
    await same(`poll=1&limit=50&after_id=${oldest[10]!.id}`);
    expect(count("events_list")).toBe(1);
    // A filter whose matches are sparse in the tail falls through to the store for a full page.
    reads.clear();
    const sparse = await same(`limit=200&address=${oldest[0]!.from}`);
    expect(sparse.length).toBeGreaterThan(0);
    expect(count("events_lookup")).toBe(1);
  });

  it("answers transactions it holds from memory and the others from the store", async () => {
    const txEvents = async (txId: string) => {
      const url = `/transaction/${txId}/events`;
      counting = true;
      const tailed = await p.api.app.inject({ url, headers: p.api.auth(p.api.userKey) }).finally(() => {
        counting = false;
      });
      const plain = await store.app.inject({ url, headers: store.auth(store.userKey) });
      expect(tailed.statusCode).toBe(200);
      expect(tailed.body).toBe(plain.body);
      return tailed.json().events as Ev[];
    };
    const [recent] = await same("limit=1");
    const [old] = await same("poll=1&after_id=0&limit=1");
    reads.clear();
    expect((await txEvents(recent!.tx_id)).length).toBeGreaterThan(0);
    expect(count("events_by_tx")).toBe(0);
    expect((await txEvents(old!.tx_id)).length).toBeGreaterThan(0);
    expect(count("events_by_tx")).toBe(1);
    expect(await txEvents("f".repeat(64))).toEqual([]);
    expect(count("events_by_tx")).toBe(2);
  });

  it("appends the events the watermark reveals", async () => {
    const before = await same("limit=1");
    const { reloads } = p.api.deps.events!.tail!.stats();
    p.chain.advance(16);
    await p.catchUp();
    reads.clear();
    const fresh = await same(`poll=1&limit=200&after_id=${before[0]!.id}`);
    expect(fresh.length).toBeGreaterThan(0);
    expect(count("events_tail_append")).toBe(1);
    expect(count("events_list", "events_lookup", "events_tail_load")).toBe(0);
    expect(p.api.deps.events!.tail!.stats().reloads).toBe(reloads);
  });

  it("reloads when a rewrite of served history reaches it", async () => {
    const shown = await same("limit=10");
    const victim = shown[5]!;
    const { reloads } = p.api.deps.events!.tail!.stats();
    // A retraction of a visible block, as the events sink writes one for a reorg deeper than CONFIRMATIONS.
    const retraction: EventsMessage = {
      kind: "retraction",
      chain_index: victim.chain_index,
      block_hash: victim.block_hash,
      block_height: victim.block_height,
      block_timestamp: victim.timestamp,
      seq: Date.now() * 10,
    };
    const rewrites = async () =>
      Number((await p.ch.ch.query<{ n: string }>("t", "SELECT count() AS n FROM event_rewrites"))[0]?.n);
    // Ingesting new blocks (every batch so far) announces no rewrite: the tail never reloaded for them.
    expect(await rewrites()).toBe(0);
    await writeEventsBatch(p.deps, [retraction]);
    expect(await rewrites()).toBe(1);
    const after = await same("limit=10");
    expect(after.map((e) => e.block_hash)).not.toContain(victim.block_hash);
    expect(p.api.deps.events!.tail!.stats().reloads).toBe(reloads + 1);
    const status = await p.api.app.inject({ url: "/status" });
    expect(status.json().events_tail).toMatchObject({ capacity: 120, reloads: reloads + 1 });
    expect((await store.app.inject({ url: "/status" })).json().events_tail).toBeNull();
  });
});
