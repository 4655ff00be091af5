// Test passes: embedded and server (two API processes' connection pools on one PostgreSQL add up their counts).
/**
 * Key usage figures (GET /system/keys/{keyid}/usage, postgres/0018 `key_usage`) on real stores
 * (PGlite, or PostgreSQL with TEST_POSTGRES_URL): the counts match the requests made, 429s included;
 * owner, other user and admin access; the window's validation; two API processes on the same stores
 * add up; the periodic flush and the retention.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyUsageRepo } from "../../lib/keys/usage-repo.ts";
import { createUsageRecorder } from "../../lib/usage/recorder.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { waitFor } from "../helpers/pipeline.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

describe("key usage figures", () => {
  let pg: TestPg;
  let ch: TestCh;
  let a: TestApp;
  /** A second API process on the same stores, counting on its own. */
  let b: TestApp | null = null;

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    // No periodic flush in time for these tests (10 minutes): they flush by reading, or by closing.
    a = await createTestApp({ stores: { pg, ch }, env: { USAGE_FLUSH_MS: "600000" } });
    await a.deps.keys!.upsertPlan({
      plan_id: "tiny5",
      name: "Tiny",
      rpm: 5,
      rpd: 1000,
      price: "0",
      price_alph: "0",
      validity_days: 1,
    });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await pg?.close();
    await ch?.close();
  });

  const usageOf = (t: TestApp, keyId: string, key: string, query = "") =>
    t.app.inject({ url: `/system/keys/${keyId}/usage${query}`, headers: t.auth(key) });
  const rowsOf = async (keyId: string) => {
    const rows = await pg.pg.query<{ requests: string; rate_limited: string }>(
      "test_usage_rows",
      "SELECT sum(requests)::text AS requests, sum(rate_limited)::text AS rate_limited FROM key_usage WHERE key_id = $1",
      [keyId],
    );
    return { requests: Number(rows[0]?.requests ?? 0), rateLimited: Number(rows[0]?.rate_limited ?? 0) };
  };

  it("counts every request charged to the key, the 429s apart", async () => {
    const keys = a.deps.keys!;
    const tiny = await keys.createKey({ userId: "usage-owner", planId: "free", level: "user" });
    await keys.setPlan(tiny.keyId, "tiny5");
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      statuses.push((await a.app.inject({ url: "/system/keys", headers: a.auth(tiny.key) })).statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // Not written per request: nothing in Postgres until a flush.
    expect(await rowsOf(tiny.keyId)).toEqual({ requests: 0, rateLimited: 0 });
    await a.deps.usage!.flush();
    expect(await rowsOf(tiny.keyId)).toEqual({ requests: 7, rateLimited: 2 });

    const res = await usageOf(a, tiny.keyId, a.adminKey, "?window=1h");
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      key_id: tiny.keyId,
      user_id: "usage-owner",
      plan_id: "tiny5",
      limits: { rpm: 5, rpd: 1000 },
      valid_until: tiny.valid_until,
      active: true,
      granularity: "minute",
      totals: { requests: 7, rate_limited: 2 },
      last_24h: { requests: 7, rate_limited: 2 },
    });
    // 61 minute buckets (the hour, its start rounded down), oldest first, zeros included.
    expect(body.buckets).toHaveLength(61);
    expect(body.buckets[0].start).toBe(body.from);
    expect(body.from.endsWith(":00.000Z")).toBe(true);
    const sum = (k: "requests" | "rate_limited") =>
      body.buckets.reduce((n: number, x: Record<string, number>) => n + x[k]!, 0);
    expect(sum("requests")).toBe(7);
    expect(sum("rate_limited")).toBe(2);
    // Seven requests in at most two minutes: the busiest minute had at least four.
    expect(body.totals.max_per_minute).toBeGreaterThanOrEqual(4);
    expect(body.totals.max_per_minute).toBeLessThanOrEqual(7);

    // The 24 h window by hour, and 7 days by UTC day: the same counts.
    const day = (await usageOf(a, tiny.keyId, a.adminKey)).json();
    expect(day.granularity).toBe("hour");
    expect(day.totals).toMatchObject({ requests: 7, rate_limited: 2 });
    const week = (await usageOf(a, tiny.keyId, a.adminKey, "?window=7d&granularity=day")).json();
    expect(week.buckets).toHaveLength(8);
    for (const x of week.buckets) expect(x.start).toMatch(/T00:00:00\.000Z$/);
    expect(week.buckets.at(-1)).toMatchObject({ requests: 7, rate_limited: 2 });

    // from/to: a window that ended before the requests holds none of them.
    const before = new Date(Date.now() - 3_600_000).toISOString();
    const earlier = (
      await usageOf(
        a,
        tiny.keyId,
        a.adminKey,
        `?from=${new Date(Date.now() - 7_200_000).toISOString()}&to=${before}`,
      )
    ).json();
    expect(earlier.totals.requests).toBe(0);
    expect(earlier.last_24h.requests).toBe(7);
  });

  it("answers the key's owner and admins, 403 to another user, 404 for an unknown key", async () => {
    const keys = a.deps.keys!;
    const watched = await keys.createKey({ userId: "usage-owner-2", planId: "pro", level: "user" });
    const sameOwner = await keys.createKey({ userId: "usage-owner-2", planId: "pro", level: "user" });
    expect((await a.app.inject({ url: "/system/keys", headers: a.auth(watched.key) })).statusCode).toBe(200);

    const own = await usageOf(a, watched.keyId, watched.key, "?window=1h");
    expect(own.statusCode).toBe(200);
    expect(own.json().totals.requests).toBe(2); // the list and this read
    const sibling = await usageOf(a, watched.keyId, sameOwner.key, "?window=1h");
    expect(sibling.statusCode).toBe(200);
    expect(sibling.json().totals.requests).toBe(2); // the sibling's read is charged to the sibling
    const admin = await usageOf(a, watched.keyId, a.adminKey, "?window=1h");
    expect(admin.statusCode).toBe(200);
    expect(admin.json()).toMatchObject({ user_id: "usage-owner-2", limits: { rpm: 600, rpd: 250_000 } });

    const other = await usageOf(a, watched.keyId, a.userKey);
    expect(other.statusCode).toBe(403);
    expect(other.json()).toMatchObject({ code: "not_key_owner" });
    expect(other.json().detail).toContain(watched.keyId);

    const unknown = "00000000-0000-4000-8000-000000000001";
    const missing = await usageOf(a, unknown, a.adminKey);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().detail).toContain(unknown);
    expect((await usageOf(a, unknown, a.userKey)).statusCode).toBe(404);
    const noKey = await a.app.inject({ url: `/system/keys/${watched.keyId}/usage` });
    expect(noKey.statusCode).toBe(401);
  });

  it("refuses a bad window with a 400 naming the parameter", async () => {
    const id = (await a.deps.keys!.listKeys("admin-user"))[0]!.key_id;
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const cases: [string, string][] = [
      ["?window=2h", "window"],
      ["?window=", "window"],
      ["?granularity=second", "granularity"],
      ["?from=yesterday", "from"],
      ["?to=2026-13-01T00:00:00Z", "to"],
      [`?window=1h&from=${iso(now - 60_000)}`, "window"],
      [`?from=${iso(now)}&to=${iso(now - 60_000)}`, "from"],
      [`?from=${iso(now - 32 * 86_400_000)}&to=${iso(now)}`, "from"],
      ["?window=7d&granularity=minute", "granularity"],
    ];
    for (const [query, field] of cases) {
      const res = await usageOf(a, id, a.adminKey, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      const body = res.json() as { detail: string; errors?: { path: string }[] };
      const named = body.detail.includes(field) || (body.errors ?? []).some((e) => e.path.includes(field));
      expect(named, `${query}: ${body.detail}`).toBe(true);
    }
    // The longest allowed: 31 days by day, and a day by minute.
    expect(
      (await usageOf(a, id, a.adminKey, `?from=${iso(now - 31 * 86_400_000)}&to=${iso(now)}`)).statusCode,
    ).toBe(200);
    const minutes = await usageOf(a, id, a.adminKey, "?window=24h&granularity=minute");
    expect(minutes.statusCode).toBe(200);
    expect(minutes.json().buckets).toHaveLength(1441);
  });

  it("adds up the counts of two API processes on the same stores", async () => {
    b = await createTestApp({ stores: { pg, ch }, env: { USAGE_FLUSH_MS: "600000" } });
    const shared = await a.deps.keys!.createKey({
      userId: "usage-shared",
      planId: "enterprise",
      level: "user",
    });
    for (let i = 0; i < 3; i++) {
      expect((await a.app.inject({ url: "/system/keys", headers: a.auth(shared.key) })).statusCode).toBe(200);
    }
    for (let i = 0; i < 4; i++) {
      expect((await b.app.inject({ url: "/system/plans", headers: b.auth(shared.key) })).statusCode).toBe(
        200,
      );
      expect((await b.app.inject({ url: "/system/keys", headers: b.auth(shared.key) })).statusCode).toBe(200);
    }
    // Public routes are not charged to a key (the plans list above, sent with a key, counts nothing).
    // Process a flushes before it reads; b's counts arrive when b flushes (here: when it closes).
    const partial = (await usageOf(a, shared.keyId, a.adminKey, "?window=1h")).json();
    expect(partial.totals.requests).toBe(3);
    await b.close();
    b = null;
    const both = (await usageOf(a, shared.keyId, a.adminKey, "?window=1h")).json();
    expect(both.totals).toMatchObject({ requests: 7, rate_limited: 0 });
    expect(await rowsOf(shared.keyId)).toEqual({ requests: 7, rateLimited: 0 });
  });

  it("flushes on its own every USAGE_FLUSH_MS", async () => {
    const c = await createTestApp({ stores: { pg, ch }, env: { USAGE_FLUSH_MS: "50" } });
    try {
      const k = await c.deps.keys!.createKey({ userId: "usage-timer", planId: "pro", level: "user" });
      for (let i = 0; i < 2; i++) {
        expect((await c.app.inject({ url: "/system/keys", headers: c.auth(k.key) })).statusCode).toBe(200);
      }
      await waitFor("the periodic usage flush", async () => (await rowsOf(k.keyId)).requests === 2);
    } finally {
      await c.close();
    }
  });

  it("keeps the counts of a failed flush for the next one", async () => {
    const repo = createKeyUsageRepo(pg.pg);
    let failures = 1;
    // The real repository, with its first write refused as a lost connection would.
    const flaky = {
      ...repo,
      add: async (counts: Parameters<typeof repo.add>[0]) => {
        if (failures-- > 0) throw new Error("connection lost");
        return repo.add(counts);
      },
    };
    const recorder = createUsageRecorder({ repo: flaky, log: quietLog, flushMs: 60_000, retentionDays: 0 });
    recorder.count("flaky-key", false);
    recorder.count("flaky-key", true);
    await recorder.flush();
    expect(await rowsOf("flaky-key")).toEqual({ requests: 0, rateLimited: 0 });
    recorder.count("flaky-key", false);
    await recorder.close();
    expect(await rowsOf("flaky-key")).toEqual({ requests: 3, rateLimited: 1 });
  });

  it("deletes minutes older than the retention when it flushes", async () => {
    const repo = createKeyUsageRepo(pg.pg);
    const minute = (ms: number) => ms - (ms % 60_000);
    const now = Date.now();
    await repo.add([
      { keyId: "retention-key", minuteMs: minute(now - 3 * 86_400_000), requests: 5, rateLimited: 1 },
      { keyId: "retention-key", minuteMs: minute(now - 3_600_000), requests: 2, rateLimited: 0 },
    ]);
    // Adding to an existing minute adds up.
    await repo.add([
      { keyId: "retention-key", minuteMs: minute(now - 3_600_000), requests: 1, rateLimited: 1 },
    ]);
    expect(await rowsOf("retention-key")).toEqual({ requests: 8, rateLimited: 2 });
    const recorder = createUsageRecorder({ repo, log: quietLog, flushMs: 60_000, retentionDays: 2 });
    recorder.count("retention-key", false);
    await recorder.close();
    expect(await rowsOf("retention-key")).toEqual({ requests: 4, rateLimited: 1 });
    const kept = createUsageRecorder({ repo, log: quietLog, flushMs: 60_000, retentionDays: 0 });
    await repo.add([
      { keyId: "retention-key", minuteMs: minute(now - 400 * 86_400_000), requests: 1, rateLimited: 0 },
    ]);
    await kept.close();
    expect(await rowsOf("retention-key")).toEqual({ requests: 5, rateLimited: 1 });
  });
});
