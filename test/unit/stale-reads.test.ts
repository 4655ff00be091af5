/**
 * Reads that do not queue behind ingest: the page cache's stale-while-revalidate, the dapp pager's previous
 * snapshot while a newer one is read, and the events watermark answered from its last read while one
 * background read replaces it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { idCeiling } from "../../lib/chain/types.ts";
import { createCursors } from "../../lib/dapps/cursor.ts";
import { createPager } from "../../lib/dapps/pages.ts";
import type { LabelCache } from "../../lib/events/label-cache.ts";
import { createPageCache } from "../../lib/events/page-cache.ts";
import type { EventsReader, StoredRow } from "../../lib/events/reader.ts";
import { createEventsService } from "../../lib/events/service.ts";
import { createEventsTail } from "../../lib/events/tail.ts";
import { staleWhileRevalidate } from "../../lib/stale.ts";

/** A promise resolved by hand, to hold a read "in the store" as long as a test needs. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
const settled = async <T>(p: Promise<T>) => {
  let done = false;
  p.then(() => {
    done = true;
  }).catch(() => undefined);
  // Long enough for any chain of resolved promises (timers are real: only Date is faked).
  await new Promise((r) => setTimeout(r, 30));
  return done;
};

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(1_000_000);
});
afterEach(() => vi.useRealTimers());

describe("page cache, stale while revalidate", () => {
  it("serves a page past its ttl at once while one background read replaces it, then the new page", async () => {
    const cache = createPageCache<string>({ ttlMs: 100, staleMs: 1_000 });
    expect(await cache.get("k", async () => "v1")).toBe("v1");
    vi.advanceTimersByTime(150);
    const slow = deferred<string>();
    const read = vi.fn(() => slow.promise);
    expect(await cache.get("k", read)).toBe("v1");
    expect(await cache.get("k", read)).toBe("v1");
    expect(read).toHaveBeenCalledTimes(1);
    slow.resolve("v2");
    await slow.promise;
    await Promise.resolve();
    expect(await cache.get("k", async () => "unused")).toBe("v2");
    expect(cache.peek("k")).toBe("v2");
  });

  it("keeps the old page when the background read fails, and waits for the store once it is too old", async () => {
    const cache = createPageCache<string>({ ttlMs: 100, staleMs: 1_000 });
    await cache.get("k", async () => "v1");
    vi.advanceTimersByTime(150);
    const failing = deferred<string>();
    expect(await cache.get("k", () => failing.promise)).toBe("v1");
    failing.reject(new Error("store down"));
    await failing.promise.catch(() => undefined);
    await Promise.resolve();
    vi.advanceTimersByTime(100);
    // Still within ttl + stale: served, and a new background read starts.
    expect(await cache.get("k", async () => "v2")).toBe("v1");
    vi.advanceTimersByTime(2_000);
    const fresh = deferred<string>();
    const waiting = cache.get("k", () => fresh.promise);
    expect(await settled(waiting)).toBe(false);
    fresh.resolve("v3");
    expect(await waiting).toBe("v3");
  });

  it("without staleMs waits for the read past the ttl", async () => {
    const cache = createPageCache<string>(100);
    await cache.get("k", async () => "v1");
    vi.advanceTimersByTime(150);
    const fresh = deferred<string>();
    const waiting = cache.get("k", () => fresh.promise);
    expect(await settled(waiting)).toBe(false);
    fresh.resolve("v2");
    expect(await waiting).toBe("v2");
  });
});

describe("dapp pager: first pages while a newer snapshot is read", () => {
  const setup = (staleMs: number) => {
    let watermark = 1_000;
    const cursors = createCursors({ secret: () => "s", ttlMs: 60_000 });
    const pager = createPager({ cursors, watermark: async () => watermark, cacheMs: 100, staleMs });
    const reads: { ceiling: string; result: ReturnType<typeof deferred<string[]>> }[] = [];
    const read = (ceiling: string) => {
      const result = deferred<string[]>();
      reads.push({ ceiling, result });
      return result.promise;
    };
    const page = () =>
      pager.page<string>(
        { list: "l", filters: {}, limit: 1 },
        (r) => [r],
        (c) => read(c),
      );
    return { cursors, page, reads, setWatermark: (w: number) => (watermark = w) };
  };

  it("answers with the previous snapshot (its nextKey keeps that ceiling) until the newer one is read", async () => {
    const { cursors, page, reads, setWatermark } = setup(5_000);
    const first = page();
    await vi.waitFor(() => expect(reads).toHaveLength(1));
    reads[0]!.result.resolve(["a1", "a2"]);
    expect((await first).rows).toEqual(["a1"]);

    setWatermark(2_000);
    const during = await page();
    expect(reads).toHaveLength(2);
    expect(reads[1]!.ceiling).toBe(idCeiling(2_000));
    expect(during.rows).toEqual(["a1"]);
    expect(cursors.open("l", {}, during.nextKey!).ceiling).toBe(idCeiling(1_000));
    // A second request meanwhile starts no second read.
    await page();
    expect(reads).toHaveLength(2);

    reads[1]!.result.resolve(["b1", "b2"]);
    await reads[1]!.result.promise;
    await Promise.resolve();
    const after = await page();
    expect(after.rows).toEqual(["b1"]);
    expect(cursors.open("l", {}, after.nextKey!).ceiling).toBe(idCeiling(2_000));
  });

  it("waits for the newer snapshot when the previous one is older than staleMs, or with staleMs 0", async () => {
    for (const [staleMs, age] of [
      [5_000, 6_000],
      [0, 10],
    ] as const) {
      const { page, reads, setWatermark } = setup(staleMs);
      const first = page();
      await vi.waitFor(() => expect(reads).toHaveLength(1));
      reads[0]!.result.resolve(["a1"]);
      await first;
      vi.advanceTimersByTime(age);
      setWatermark(2_000);
      const waiting = page();
      await vi.waitFor(() => expect(reads).toHaveLength(2));
      expect(await settled(waiting)).toBe(false);
      reads[1]!.result.resolve(["b1"]);
      expect((await waiting).rows).toEqual(["b1"]);
    }
  });
});

describe("events watermark", () => {
  it("is read once, reused for its cache time, then answered from the last read while one read replaces it", async () => {
    const progress = vi.fn<() => Promise<{ watermark: number }>>();
    const service = createEventsService({
      // Only the watermark is exercised: the reader's progress is the one store call it makes.
      reader: { progress } as unknown as EventsReader,
      labels: {} as LabelCache,
      tail: null,
      hydration: false,
      watermarkCacheMs: 200,
      pageCacheMs: 0,
    });
    const r1 = deferred<{ watermark: number }>();
    progress.mockReturnValueOnce(r1.promise);
    const firstRead = service.watermark();
    expect(await settled(firstRead)).toBe(false);
    r1.resolve({ watermark: 10 });
    expect(await firstRead).toBe(10);
    expect(await service.watermark()).toBe(10);
    expect(progress).toHaveBeenCalledTimes(1);

    vi.advanceTimersByTime(300);
    const r2 = deferred<{ watermark: number }>();
    progress.mockReturnValueOnce(r2.promise);
    expect(await service.watermark()).toBe(10);
    expect(await service.watermark()).toBe(10);
    expect(progress).toHaveBeenCalledTimes(2);
    r2.resolve({ watermark: 20 });
    await r2.promise;
    await Promise.resolve();
    expect(await service.watermark()).toBe(20);
  });
});

describe("staleWhileRevalidate", () => {
  it("waits for the read again once the last value is older than ttl + staleMs, and reads every time with ttl 0", async () => {
    let n = 0;
    const read = vi.fn(async () => ++n);
    const value = staleWhileRevalidate(read, { ttlMs: 100, staleMs: 1_000 });
    expect(await value()).toBe(1);
    vi.advanceTimersByTime(500);
    expect(await value()).toBe(1);
    await vi.waitFor(() => expect(read).toHaveBeenCalledTimes(2));
    expect(await value()).toBe(2);
    vi.advanceTimersByTime(1_200);
    const slow = deferred<number>();
    read.mockReturnValueOnce(slow.promise);
    const waiting = value();
    expect(await settled(waiting)).toBe(false);
    slow.resolve(7);
    expect(await waiting).toBe(7);

    const always = vi.fn(async () => 1);
    const uncached = staleWhileRevalidate(always, { ttlMs: 0 });
    await uncached();
    await uncached();
    expect(always).toHaveBeenCalledTimes(2);
  });
});

describe("events tail while the watermark moves", () => {
  // Rows as the store holds them; the reader double answers the tail's reads from this list, and `range` waits
  // for the test to release it, as a read queued behind ingest would.
  const row = (ms: number): StoredRow => {
    const id = `${String(ms).padStart(13, "0")}-00-0000000001-00000-0000`;
    const doc = JSON.stringify({
      id,
      tx_id: `tx${ms}`,
      dapp_id: "",
      category: "transfer",
      sub_kind: "send",
      from: "a",
      to: "b",
      with: "",
      token_address: "",
      payload_ref: null,
    });
    return { id, block_hash: `b${ms}`, main_chain: true, version: "1", payload_ref: null, doc };
  };
  it("answers pages under the tail's own ceiling while one background sync brings it up, then the newer events", async () => {
    const stored = [row(1_000), row(2_000)];
    let watermark = 1_500;
    let held: ReturnType<typeof deferred<void>> | null = null;
    const below = (ceiling: string) => stored.filter((r) => r.id < ceiling);
    const reader = {
      progress: async () => ({ watermark }),
      newest: async (ceiling: string) => below(ceiling).reverse(),
      range: async (from: string, ceiling: string) => {
        await held?.promise;
        return below(ceiling).filter((r) => r.id >= from);
      },
      rewrites: async () => ({ count: 0, last: 0 }),
      rewriteReaches: async () => false,
      payloads: async () => new Map(),
    } as unknown as EventsReader;
    const service = createEventsService({
      reader,
      labels: { labels: async () => ({}) },
      tail: createEventsTail({ reader, capacity: 100, checkMs: 200 }),
      hydration: false,
      watermarkCacheMs: 200,
      pageCacheMs: 0,
    });
    const ids = async () => [...(await service.page({}, { limit: 10, poll: true, afterId: "0" })).ids];
    expect(await ids()).toEqual([row(1_000).id]);

    watermark = 2_500;
    held = deferred<void>();
    vi.advanceTimersByTime(300);
    // The watermark read past its cache time answers the last value once; the next request sees the new one
    // while the tail's sync to it is held in the store: served under the tail's ceiling, without waiting.
    expect(await ids()).toEqual([row(1_000).id]);
    await vi.waitFor(async () => expect(await service.watermark()).toBe(2_500));
    const during = service.page({}, { limit: 10, poll: true, afterId: "0" });
    expect(await settled(during)).toBe(true);
    expect((await during).ids).toEqual([row(1_000).id]);

    held.resolve();
    await vi.waitFor(async () => expect(await ids()).toEqual([row(1_000).id, row(2_000).id]));
  });
});
