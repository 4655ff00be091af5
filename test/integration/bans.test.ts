// Test passes: embedded and server (the bounded delay across two API processes on one database, two pools only on PostgreSQL).
/**
 * Bans (issue 23, point 2) on real stores: each kind (key owner, Telegram user, IP range), the 403 body,
 * expiry, lifting, IPv6 ranges and IPv4-mapped addresses, X-Forwarded-For with and without TRUST_PROXY,
 * the bounded delay across two API processes on one database, the routes' 400/401/403/404/409 cases,
 * automatic bans after repeated 429s, and the migration that moves the bot's old bans.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBanGuard } from "../../lib/bans/guard.ts";
import { createBansRepo } from "../../lib/bans/repo.ts";
import { migratePostgres, readMigrations } from "../../lib/migrate.ts";
import { parseIpRange } from "../../lib/net.ts";
import { createTelegramStore } from "../../lib/telegram/store.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { waitFor } from "../helpers/pipeline.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

const REFRESH_MS = "200";

describe("bans", () => {
  let pg: TestPg;
  let ch: TestCh;
  /** Two API processes on the same stores. */
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    a = await createTestApp({ stores: { pg, ch }, env: { BANS_REFRESH_MS: REFRESH_MS } });
    b = await createTestApp({ stores: { pg, ch }, env: { BANS_REFRESH_MS: REFRESH_MS } });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await pg?.close();
    await ch?.close();
  });

  const addBan = (t: TestApp, payload: Record<string, unknown>, key = t.adminKey) =>
    t.app.inject({ method: "POST", url: "/system/bans", headers: t.auth(key), payload });
  const lift = (t: TestApp, banId: string, key = t.adminKey) =>
    t.app.inject({ method: "POST", url: `/system/bans/${banId}/delete`, headers: t.auth(key) });
  const health = (t: TestApp, remoteAddress: string, headers: Record<string, string> = {}) =>
    t.app.inject({ url: "/healthz", remoteAddress, headers });

  it("a banned key owner gets 403 banned with the reason and expiry, before rate limiting", async () => {
    const created = await a.deps.keys!.createKey({ userId: "ban-me", planId: "free", level: "user" });
    const other = await a.deps.keys!.createKey({ userId: "keep-me", planId: "free", level: "user" });
    const before = await a.app.inject({ url: "/system/keys", headers: a.auth(created.key) });
    expect(before.statusCode).toBe(200);

    const res = await addBan(a, { kind: "user", value: " ban-me ", reason: "chargeback", duration_s: 3600 });
    expect(res.statusCode).toBe(200);
    const ban = res.json().ban;
    expect(ban).toMatchObject({ kind: "user", value: "ban-me", reason: "chargeback", state: "active" });
    expect(Date.parse(ban.expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    expect(ban.created_by).toContain("admin-user");

    const refused = await a.app.inject({ url: "/system/keys", headers: a.auth(created.key) });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers["content-type"]).toContain("application/problem+json");
    expect(refused.json()).toMatchObject({
      status: 403,
      code: "banned",
      details: { kind: "user", reason: "chargeback", expires_at: ban.expires_at, ban_id: ban.ban_id },
    });
    expect(refused.json().detail).toContain("chargeback");
    // Checked before rate limiting: the refused request did not consume the key's allowance.
    expect(refused.headers["x-ratelimit-limit"]).toBeUndefined();
    // Every key of the owner, another owner unaffected; public routes still answer the owner's address.
    expect((await a.app.inject({ url: "/system/keys", headers: a.auth(other.key) })).statusCode).toBe(200);

    // The second process applies it within BANS_REFRESH_MS.
    await waitFor(
      "the user ban on the second process",
      async () =>
        (await b.app.inject({ url: "/system/keys", headers: b.auth(created.key) })).statusCode === 403,
      10_000,
    );
    expect((await lift(a, ban.ban_id)).statusCode).toBe(200);
    expect((await a.app.inject({ url: "/system/keys", headers: a.auth(created.key) })).statusCode).toBe(200);
  });

  it("a Telegram ban through the route is the bot's ban, and the bot's /ban is listed", async () => {
    const store = a.deps.telegramStore!;
    expect(await store.isBanned(7001)).toBe(false);
    const before = (await store.counts()).banned;
    const res = await addBan(a, { kind: "telegram", value: "7001", reason: "spam" });
    expect(res.statusCode).toBe(200);
    expect(res.json().ban).toMatchObject({ kind: "telegram", value: "7001", expires_at: null });
    expect(await store.isBanned(7001)).toBe(true);
    expect(await b.deps.telegramStore!.isBanned(7001)).toBe(true);
    expect((await store.counts()).banned).toBe(before + 1);

    // The bot's own /ban writes the same table: listed by the route, lifted by the bot's /unban.
    await store.ban(7002, 42);
    await store.ban(7002, 42); // Already banned: nothing more.
    const listed = await a.app.inject({
      url: "/system/bans?kind=telegram&value=7002",
      headers: a.auth(a.adminKey),
    });
    expect(listed.json().bans).toHaveLength(1);
    expect(listed.json().bans[0]).toMatchObject({
      value: "7002",
      created_by: "telegram:42",
      state: "active",
    });
    expect(await store.unban(7002, 42)).toBe(true);
    expect(await store.unban(7002, 42)).toBe(false);
    expect(await store.isBanned(7002)).toBe(false);

    expect((await lift(a, res.json().ban.ban_id)).statusCode).toBe(200);
    expect(await store.isBanned(7001)).toBe(false);
  });

  it("a banned address gets 403 on every route, public ones, docs and unknown paths included", async () => {
    expect((await health(a, "198.51.100.7")).statusCode).toBe(200);
    const res = await addBan(a, { kind: "ip", value: "198.51.100.99/24", reason: "scraping" });
    expect(res.statusCode).toBe(200);
    const ban = res.json().ban;
    expect(ban.value).toBe("198.51.100.0/24");

    const refused = await health(a, "198.51.100.7");
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      code: "banned",
      details: { kind: "ip", reason: "scraping", expires_at: null },
    });
    expect(refused.headers["x-ratelimit-limit"]).toBeUndefined();
    for (const url of ["/openapi.json", "/no/such/route", "/system/plans"]) {
      expect((await a.app.inject({ url, remoteAddress: "198.51.100.200" })).statusCode).toBe(403);
    }
    // Even with an admin key.
    const admin = await a.app.inject({
      url: "/system/bans",
      headers: a.auth(a.adminKey),
      remoteAddress: "198.51.100.1",
    });
    expect(admin.statusCode).toBe(403);
    // IPv4-mapped IPv6 is the IPv4 address it carries.
    expect((await health(a, "::ffff:198.51.100.9")).statusCode).toBe(403);
    // Outside the range.
    expect((await health(a, "198.51.101.7")).statusCode).toBe(200);
    expect((await health(a, "::ffff:198.51.101.7")).statusCode).toBe(200);

    expect((await lift(a, ban.ban_id)).statusCode).toBe(200);
    expect((await health(a, "198.51.100.7")).statusCode).toBe(200);
  });

  it("an IPv6 range matches the addresses inside it and not those outside", async () => {
    const res = await addBan(a, { kind: "ip", value: "2001:DB8:ABCD:0:0::5/48", reason: "v6 abuse" });
    expect(res.statusCode).toBe(200);
    const ban = res.json().ban;
    expect(ban.value).toBe("2001:db8:abcd::/48");
    expect((await health(a, "2001:db8:abcd:12::1")).statusCode).toBe(403);
    expect((await health(a, "2001:db8:abcd:ffff:ffff:ffff:ffff:ffff")).statusCode).toBe(403);
    expect((await health(a, "2001:db8:abce::1")).statusCode).toBe(200);
    expect((await health(a, "2001:db9::1")).statusCode).toBe(200);
    // The same range in another spelling is the same target.
    const again = await addBan(a, { kind: "ip", value: "2001:db8:abcd::/48", reason: "again" });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: "already_banned", details: { ban_id: ban.ban_id } });
    expect((await lift(a, ban.ban_id)).statusCode).toBe(200);
    expect((await health(a, "2001:db8:abcd:12::1")).statusCode).toBe(200);
  });

  it("normalizes ranges to one canonical form", () => {
    const cases: [string, string][] = [
      ["203.0.113.7", "203.0.113.7/32"],
      ["203.0.113.7/24", "203.0.113.0/24"],
      ["10.1.2.3/8", "10.0.0.0/8"],
      ["2001:db8::1", "2001:db8::1/128"],
      ["2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1/128"],
      ["2001:db8:0:0:1::/64", "2001:db8::/64"],
      ["::ffff:1.2.3.4", "1.2.3.4/32"],
      ["::ffff:1.2.3.0/120", "1.2.3.0/24"],
      ["::/0", "::/0"],
      ["0.0.0.0/0", "0.0.0.0/0"],
    ];
    for (const [input, value] of cases)
      expect([input, parseIpRange(input)]).toMatchObject([input, { value }]);
    for (const bad of [
      "300.1.1.1",
      "1.2.3.0/33",
      "1.2.3.4/",
      "1.2.3.4/x",
      "abc",
      "2001:db8::/129",
      "fe80::1%eth0",
    ])
      expect(typeof parseIpRange(bad)).toBe("string");
  });

  it("an expired ban stops applying at its time, without waiting for a reload", async () => {
    // Already expired when written: never applies, listed as expired.
    await pg.pg.query(
      "t",
      `INSERT INTO bans (ban_id, kind, value, reason, expires_at, created_by)
       VALUES (gen_random_uuid()::text, 'ip', '192.0.2.55/32', 'old', now() - interval '1 minute', 'test')`,
    );
    await a.deps.bans!.refresh();
    expect((await health(a, "192.0.2.55")).statusCode).toBe(200);
    const expired = await a.app.inject({
      url: "/system/bans?kind=ip&value=192.0.2.55&state=expired",
      headers: a.auth(a.adminKey),
    });
    expect(expired.json().bans.map((x: { reason: string }) => x.reason)).toEqual(["old"]);
    // A new ban of the same target is allowed once the last one expired.
    const res = await addBan(a, { kind: "ip", value: "192.0.2.55", reason: "short", duration_s: 1 });
    expect(res.statusCode).toBe(200);
    expect((await health(a, "192.0.2.55")).statusCode).toBe(403);
    await waitFor(
      "the 1 s ban to expire",
      async () => (await health(a, "192.0.2.55")).statusCode === 200,
      5_000,
    );

    // The cache checks expiry at match time: with no reload at all, a later clock no longer matches.
    let clock = Date.now();
    const guard = createBanGuard({
      repo: createBansRepo(pg.pg),
      refreshMs: 600_000,
      log: quietLog,
      now: () => clock,
    });
    const repo = createBansRepo(pg.pg);
    const ban = await repo.add({
      kind: "user",
      value: "clocked",
      reason: "r",
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      createdBy: "test",
    });
    await guard.start();
    try {
      expect(guard.matchUser("clocked")?.ban_id).toBe(ban.ban_id);
      clock += 2 * 3_600_000;
      expect(guard.matchUser("clocked")).toBeNull();
    } finally {
      guard.close();
      await repo.lift(ban.ban_id, "test");
    }
  });

  it("believes X-Forwarded-For only with TRUST_PROXY", async () => {
    const res = await addBan(a, { kind: "ip", value: "203.0.113.9", reason: "xff" });
    expect(res.statusCode).toBe(200);
    const proxied = await createTestApp({
      stores: { pg, ch },
      env: { BANS_REFRESH_MS: REFRESH_MS, TRUST_PROXY: "true" },
    });
    try {
      // Without TRUST_PROXY: the peer address counts, the header changes nothing either way.
      expect((await health(a, "10.0.0.1", { "x-forwarded-for": "203.0.113.9" })).statusCode).toBe(200);
      expect((await health(a, "203.0.113.9", { "x-forwarded-for": "10.0.0.2" })).statusCode).toBe(403);
      // With TRUST_PROXY: the forwarded client address counts.
      const banned = await health(proxied, "10.0.0.1", { "x-forwarded-for": "203.0.113.9" });
      expect(banned.statusCode).toBe(403);
      expect(banned.json().code).toBe("banned");
      expect((await health(proxied, "10.0.0.1", { "x-forwarded-for": "10.0.0.2" })).statusCode).toBe(200);
    } finally {
      await proxied.close();
    }
    expect((await lift(a, res.json().ban.ban_id)).statusCode).toBe(200);
  });

  it("a ban added or lifted through one process applies on the other within BANS_REFRESH_MS", async () => {
    const res = await addBan(a, { kind: "ip", value: "192.0.2.77", reason: "cross" });
    expect(res.statusCode).toBe(200);
    expect((await health(a, "192.0.2.77")).statusCode).toBe(403); // At once where it was made.
    await waitFor(
      "the ban on process B",
      async () => (await health(b, "192.0.2.77")).statusCode === 403,
      10_000,
    );
    expect((await lift(a, res.json().ban.ban_id)).statusCode).toBe(200);
    expect((await health(a, "192.0.2.77")).statusCode).toBe(200);
    await waitFor(
      "the lift on process B",
      async () => (await health(b, "192.0.2.77")).statusCode === 200,
      10_000,
    );
  });

  it("lists newest first with filters and pages with `to`", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await addBan(a, { kind: "user", value: `page-user-${i}`, reason: `page ${i}` });
      ids.push(r.json().ban.ban_id);
      await new Promise((r) => setTimeout(r, 5)); // Distinct created_at milliseconds.
    }
    await lift(a, ids[1]!);
    const list = async (query: string) =>
      (await a.app.inject({ url: `/system/bans?${query}`, headers: a.auth(a.adminKey) })).json().bans as {
        ban_id: string;
        created_at: string;
        state: string;
      }[];
    const users = (await list("kind=user&limit=500")).filter((x) => ids.includes(x.ban_id));
    expect(users.map((x) => x.ban_id)).toEqual([ids[2], ids[1], ids[0]]);
    const first = await list("kind=user&limit=1");
    expect(first.map((x) => x.ban_id)).toEqual([ids[2]]);
    const next = await list(`kind=user&limit=1&to=${encodeURIComponent(first[0]!.created_at)}`);
    expect(next.map((x) => x.ban_id)).toEqual([ids[1]]);
    expect(next[0]!.state).toBe("lifted");
    const lifted = (await list("state=lifted&limit=500")).map((x) => x.ban_id);
    expect(lifted).toContain(ids[1]);
    expect(lifted).not.toContain(ids[0]);
    const active = (await list("state=active&kind=user")).map((x) => x.ban_id);
    expect(active).toEqual(expect.arrayContaining([ids[0], ids[2]]));
    expect(active).not.toContain(ids[1]);
    const one = await a.app.inject({ url: `/system/bans/${ids[0]}`, headers: a.auth(a.adminKey) });
    expect(one.json().ban).toMatchObject({ ban_id: ids[0], value: "page-user-0", reason: "page 0" });
    for (const id of [ids[0]!, ids[2]!]) await lift(a, id);
  });

  it("answers 400 naming the field, 401, 403, 404 and 409", async () => {
    const bad: [Record<string, unknown>, string, string][] = [
      [{ kind: "ip", value: "300.1.1.1", reason: "r" }, "value", "bad_request"],
      [{ kind: "ip", value: "10.0.0.0/33", reason: "r" }, "value", "bad_request"],
      [{ kind: "ip", value: "not-an-ip", reason: "r" }, "value", "bad_request"],
      [{ kind: "telegram", value: "-5", reason: "r" }, "value", "bad_request"],
      [{ kind: "telegram", value: "12ab", reason: "r" }, "value", "bad_request"],
      [{ kind: "telegram", value: "99999999999999999", reason: "r" }, "value", "bad_request"],
      [{ kind: "user", value: "   ", reason: "r" }, "value", "bad_request"],
      [{ kind: "user", value: "", reason: "r" }, "value", "validation_failed"],
      [{ kind: "user", value: "x", reason: "" }, "reason", "validation_failed"],
      [{ kind: "dog", value: "x", reason: "r" }, "kind", "validation_failed"],
      [{ kind: "user", value: "x", reason: "r", extra: 1 }, "extra", "validation_failed"],
      [
        { kind: "user", value: "x", reason: "r", expires_at: "2001-01-01T00:00:00Z" },
        "expires_at",
        "bad_request",
      ],
      [{ kind: "user", value: "x", reason: "r", expires_at: "tomorrow" }, "expires_at", "validation_failed"],
      [{ kind: "user", value: "x", reason: "r", duration_s: 0 }, "duration_s", "validation_failed"],
      [
        { kind: "user", value: "x", reason: "r", duration_s: 5, expires_at: "2999-01-01T00:00:00Z" },
        "duration_s",
        "bad_request",
      ],
      [{ kind: "ip", value: "0.0.0.0/0", reason: "r" }, "force", "ban_too_wide"],
      [{ kind: "ip", value: "::/0", reason: "r" }, "force", "ban_too_wide"],
      [{ kind: "ip", value: "10.0.0.0/7", reason: "r" }, "force", "ban_too_wide"],
      [{ kind: "ip", value: "127.0.0.0/8", reason: "r" }, "force", "ban_locks_out_caller"],
      [{ kind: "user", value: "admin-user", reason: "r" }, "force", "ban_locks_out_caller"],
    ];
    for (const [payload, field, code] of bad) {
      const r = await addBan(a, payload);
      expect([JSON.stringify(payload), r.statusCode, r.json().code]).toEqual([
        JSON.stringify(payload),
        400,
        code,
      ]);
      const body = r.json();
      const named =
        String(body.detail).includes(field) ||
        (body.errors ?? []).some((e: { path: string }) => e.path.includes(field));
      expect([JSON.stringify(payload), named]).toEqual([JSON.stringify(payload), true]);
    }
    // force bans a wide range anyway (one no test address is in).
    const forced = await addBan(a, { kind: "ip", value: "240.0.0.0/4", reason: "reserved", force: true });
    expect(forced.statusCode).toBe(200);
    expect((await lift(a, forced.json().ban.ban_id)).statusCode).toBe(200);
    // The value filter of the list needs its kind, and is validated per kind.
    const noKind = await a.app.inject({ url: "/system/bans?value=1.2.3.4", headers: a.auth(a.adminKey) });
    expect(noKind.statusCode).toBe(400);
    const badValue = await a.app.inject({
      url: "/system/bans?kind=ip&value=1.2.3.400",
      headers: a.auth(a.adminKey),
    });
    expect(badValue.statusCode).toBe(400);
    expect(badValue.json().detail).toContain("value");

    const payload = { kind: "user", value: "nobody", reason: "r" };
    expect((await a.app.inject({ method: "POST", url: "/system/bans", payload })).statusCode).toBe(401);
    expect((await a.app.inject({ url: "/system/bans" })).statusCode).toBe(401);
    const asUser = await addBan(a, payload, a.userKey);
    expect([asUser.statusCode, asUser.json().code]).toEqual([403, "admin_required"]);
    expect((await a.app.inject({ url: "/system/bans", headers: a.auth(a.userKey) })).statusCode).toBe(403);
    const unknown = "00000000-0000-4000-8000-000000000000";
    const gone = await lift(a, unknown);
    expect([gone.statusCode, gone.json().code]).toEqual([404, "not_found"]);
    expect(gone.json().detail).toContain(unknown);
    expect(
      (await a.app.inject({ url: `/system/bans/${unknown}`, headers: a.auth(a.adminKey) })).statusCode,
    ).toBe(404);
    expect((await lift(a, "not-a-uuid")).statusCode).toBe(400);

    const first = await addBan(a, payload);
    expect(first.statusCode).toBe(200);
    const dup = await addBan(a, { ...payload, value: " nobody" });
    expect([dup.statusCode, dup.json().code]).toEqual([409, "already_banned"]);
    const lifted = await lift(a, first.json().ban.ban_id);
    expect(lifted.json().ban).toMatchObject({
      state: "lifted",
      lifted_by: expect.stringContaining("admin-user"),
    });
    const again = await lift(a, first.json().ban.ban_id);
    expect([again.statusCode, again.json().ban.lifted_at]).toEqual([200, lifted.json().ban.lifted_at]);
  });

  it("bans an address automatically after AUTO_BAN_AFTER_429 rate-limited requests", async () => {
    const auto = await createTestApp({
      stores: { pg, ch },
      env: {
        PUBLIC_RPM: "2",
        AUTO_BAN_AFTER_429: "3",
        AUTO_BAN_WINDOW_S: "60",
        AUTO_BAN_DURATION_S: "120",
        BANS_REFRESH_MS: REFRESH_MS,
      },
    });
    try {
      const ip = "192.0.2.201";
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await health(auto, ip)).statusCode);
      expect(statuses).toEqual([200, 200, 429, 429, 429, 403]);
      const refused = await health(auto, ip);
      expect(refused.json()).toMatchObject({
        code: "banned",
        details: { kind: "ip", reason: "automatic: 3 rate-limited requests in 60 s" },
      });
      const until = Date.parse(refused.json().details.expires_at) - Date.now();
      expect(until).toBeGreaterThan(60_000);
      expect(until).toBeLessThanOrEqual(120_000);
      const listed = await auto.app.inject({
        url: `/system/bans?kind=ip&value=${ip}`,
        headers: auto.auth(auto.adminKey),
      });
      expect(listed.json().bans[0]).toMatchObject({
        value: `${ip}/32`,
        created_by: "automatic",
        state: "active",
      });
      // Other addresses are not affected; off by default (process A never bans automatically).
      expect((await health(auto, "192.0.2.202")).statusCode).toBe(200);
      expect(a.deps.config.AUTO_BAN_AFTER_429).toBe(0);
      await lift(auto, listed.json().bans[0].ban_id);
    } finally {
      await auto.close();
    }
  });
});

describe("migration 0016", () => {
  let pg: TestPg;
  beforeAll(async () => {
    pg = await openTestPg({ migrate: false });
  });
  afterAll(async () => pg?.close());

  it("moves the bot's telegram_bans into bans and drops the old table", async () => {
    const all = readMigrations("postgres");
    await migratePostgres(
      pg.pg,
      quietLog,
      all.filter((m) => m.version < 16),
    );
    await pg.pg.query(
      "t",
      `INSERT INTO telegram_bans (telegram_user_id, banned_by, banned_at)
       VALUES (111, 5, '2025-01-02T03:04:05.678Z'), (222, NULL, now())`,
    );
    await migratePostgres(pg.pg, quietLog, all);
    const store = createTelegramStore(pg.pg);
    expect(await store.isBanned(111)).toBe(true);
    expect(await store.isBanned(222)).toBe(true);
    expect(await store.isBanned(333)).toBe(false);
    const rows = await pg.pg.query<{ value: string; created_by: string; created_at: string }>(
      "t",
      `SELECT value, created_by, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
       FROM bans WHERE kind = 'telegram' ORDER BY value`,
    );
    expect(rows.map((r) => [r.value, r.created_by])).toEqual([
      ["111", "telegram:5"],
      ["222", "telegram"],
    ]);
    expect(rows[0]!.created_at).toBe("2025-01-02T03:04:05.678Z");
    const old = await pg.pg.query(
      "t",
      "SELECT 1 FROM information_schema.tables WHERE table_name = 'telegram_bans'",
    );
    expect(old).toHaveLength(0);
  });
});
