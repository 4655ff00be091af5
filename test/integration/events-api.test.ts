// Test passes: embedded (route validation, filters and hydration over stored events).
/** /events/all and /transaction/{txid}/events: validation, filters, payload offload and hydration. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

interface Ev {
  id: string;
  tx_id: string;
  category: string;
  sub_kind: string;
  dapp_id: string;
  from: string;
  to: string;
  token_address: string;
  payload: Record<string, unknown>;
  payload_ref: string | null;
}

describe("events API", () => {
  let p: TestPipeline;
  let noHydration: TestApp;
  beforeAll(async () => {
    // A tiny offload threshold: most payloads are stored apart and referenced by payload_ref.
    p = await startTestPipeline({ blocks: 400, confirmations: 2, env: { PAYLOAD_MAX_BYTES: "64" } });
    await p.catchUp();
    noHydration = await createTestApp({
      stores: { pg: p.pg, ch: p.ch },
      env: { PAYLOAD_HYDRATION: "false" },
    });
  });
  afterAll(async () => {
    await noHydration?.close();
    await p?.close();
  });

  const all = async (query: string) => {
    const r = await p.api.app.inject({ url: `/events/all?${query}` });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().events as Ev[];
  };

  it.each([
    ["limit=0", /limit must be >= 1/],
    ["limit=201", /limit must be <= 200/],
    ["limit=ten", /limit must be integer/],
    ["poll=yes", /poll must be equal to one of the allowed values: 0, 1/],
    ["after_id=1%27%20OR%201=1", /after_id must match pattern/],
  ])("rejects %s with a 400 naming the parameter", async (query, detail) => {
    const r = await p.api.app.inject({ url: `/events/all?${query}` });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ status: 400, code: "validation_failed" });
    expect(r.json().detail).toMatch(detail);
  });

  it.each(["", "abc", "z".repeat(64), "a".repeat(63)])("rejects txid %j with a 400", async (txid) => {
    const r = await p.api.app.inject({
      url: `/transaction/${txid}/events`,
      headers: p.api.auth(p.api.userKey),
    });
    expect(r.statusCode).toBe(400);
    expect(r.json().detail).toContain("txid");
  });

  it("applies the limit default of 50 and every filter", async () => {
    expect(await all("")).toHaveLength(50);
    const swaps = await all("category=dex&sub_kind=buy,sell&limit=200");
    expect(swaps.length).toBeGreaterThan(0);
    for (const e of swaps) expect(["buy", "sell"]).toContain(e.sub_kind);
    const mixed = await all("category=dex,mining&limit=200");
    expect(new Set(mixed.map((e) => e.category))).toEqual(new Set(["dex", "mining"]));
    // A swap of a token: the dapp, address and token filters each have events to keep and to drop.
    const swap = swaps.find((e) => e.token_address && e.from)!;
    expect(swap).toBeDefined();
    const every = await all("limit=200");
    const dapp = await all(`dapp_id=${swap.dapp_id}&limit=200`);
    expect(dapp.length).toBeGreaterThan(0);
    expect(every.some((e) => e.dapp_id !== swap.dapp_id)).toBe(true);
    for (const e of dapp) expect(e.dapp_id).toBe(swap.dapp_id);
    const mine = await all(`address=${swap.from}&limit=200`);
    expect(mine.length).toBeGreaterThan(0);
    for (const e of mine) expect([e.from, e.to]).toContain(swap.from);
    const tokens = await all(`token_address=${swap.token_address}&limit=200`);
    expect(tokens.length).toBeGreaterThan(0);
    expect(every.some((e) => e.token_address !== swap.token_address)).toBe(true);
    for (const e of tokens) expect(e.token_address).toBe(swap.token_address);
  });

  it("address and token reads (events_by_key) page exactly like the same filter over every event", async () => {
    const every: Ev[] = [];
    for (let page = await all("limit=200"); page.length > 0; ) {
      every.push(...page);
      page = await all(`limit=200&after_id=${page[page.length - 1]!.id}`);
    }
    const pageAll = async (query: string, poll: boolean) => {
      const out: Ev[] = [];
      let cursor = poll ? "0" : "";
      for (;;) {
        const page = await all(
          `${query}&limit=7${poll ? "&poll=1" : ""}${cursor ? `&after_id=${cursor}` : ""}`,
        );
        if (page.length === 0) return out;
        out.push(...page);
        cursor = page[page.length - 1]!.id;
      }
    };
    const swap = every.find(
      (e) => e.category === "dex" && ["buy", "sell"].includes(e.sub_kind) && e.token_address,
    )!;
    const cases: [string, (e: Ev) => boolean][] = [
      [`address=${swap.from}`, (e) => e.from === swap.from || e.to === swap.from],
      [
        `address=${swap.from}&category=dex`,
        (e) => (e.from === swap.from || e.to === swap.from) && e.category === "dex",
      ],
      [`token_address=${swap.token_address}`, (e) => e.token_address === swap.token_address],
      [
        `address=${swap.from}&token_address=${swap.token_address}`,
        (e) => (e.from === swap.from || e.to === swap.from) && e.token_address === swap.token_address,
      ],
      [
        `token_address=${swap.token_address}&sub_kind=buy,sell`,
        (e) => e.token_address === swap.token_address && ["buy", "sell"].includes(e.sub_kind),
      ],
    ];
    for (const [query, keep] of cases) {
      const expected = every.filter(keep).map((e) => e.id);
      expect(expected.length, query).toBeGreaterThan(0);
      expect(
        (await pageAll(query, false)).map((e) => e.id),
        query,
      ).toEqual(expected);
      expect(
        (await pageAll(query, true)).map((e) => e.id),
        query,
      ).toEqual([...expected].reverse());
    }
  });

  it("pages the list with after_id, newest first, without gaps or overlaps", async () => {
    const first = await all("limit=30");
    const second = await all(`limit=30&after_id=${first[first.length - 1]!.id}`);
    const both = await all("limit=60");
    expect([...first, ...second].map((e) => e.id)).toEqual(both.map((e) => e.id));
  });

  it("merges offloaded payloads back when hydration is on, and says so when it is off", async () => {
    const events = await all("limit=200");
    const offloaded = events.filter((e) => e.payload_ref);
    expect(offloaded.length).toBeGreaterThan(0);
    for (const e of offloaded) expect(Object.keys(e.payload).length).toBeGreaterThan(0);

    const tx = offloaded[0]!.tx_id;
    const on = await p.api.app.inject({
      url: `/transaction/${tx}/events`,
      headers: p.api.auth(p.api.userKey),
    });
    expect(on.json().meta).toEqual({ payload_chunk_hydration_enabled: true });
    const off = await noHydration.app.inject({
      url: `/transaction/${tx}/events`,
      headers: noHydration.auth(noHydration.userKey),
    });
    expect(off.json().meta).toEqual({ payload_chunk_hydration_enabled: false });
    const offEvent = (off.json().events as Ev[]).find((e) => e.id === offloaded[0]!.id)!;
    expect(offEvent.payload_ref).toBe(offloaded[0]!.payload_ref);
    expect(offEvent.payload).toEqual({});
    const onEvent = (on.json().events as Ev[]).find((e) => e.id === offloaded[0]!.id)!;
    expect(onEvent.payload).toEqual(offloaded[0]!.payload);
  });
});
