// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
import { randomBytes, randomUUID } from "node:crypto";
import { sign } from "@fastify/cookie";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteEntry } from "../../api/types.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

/** Fills path parameters with values of a plausible shape; auth runs before validation anyway. */
function concreteUrl(url: string): string {
  const filled = url.replace(/:([A-Za-z_]+)/g, (_m, name: string) =>
    name === "keyid" ? randomUUID() : name.includes("hash") || name.includes("tx") ? "ab".repeat(32) : "x1",
  );
  // A stream answers until the client leaves: asked to end once caught up, so the request returns.
  return url === "/events/stream" ? `${filled}?until_caught_up=1` : filled;
}

function bodyFor(route: RouteEntry) {
  return route.method === "GET" || route.method === "HEAD" ? undefined : {};
}

describe("access matrix over the registered route table", () => {
  let t: TestApp;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp();
    const repo = t.deps.keys!;
    keys.revoked = (await repo.createKey({ userId: "u-revoked", planId: "enterprise", level: "admin" })).key;
    const revokedId = (await repo.listKeys("u-revoked"))[0]!.key_id;
    await repo.revoke(revokedId);
    keys.expired = (await repo.createKey({ userId: "u-expired", planId: "enterprise", level: "admin" })).key;
    const expiredId = (await repo.listKeys("u-expired"))[0]!.key_id;
    await repo.update(expiredId, { valid_until: new Date(Date.now() - 60_000).toISOString() });
    keys.originBound = (
      await repo.createKey({ userId: "u-origin", planId: "enterprise", level: "admin" })
    ).key;
    const originId = (await repo.listKeys("u-origin"))[0]!.key_id;
    await repo.addOrigin(originId, "https://good.example");
  });
  afterAll(async () => t?.close());

  const call = (route: RouteEntry, headers: Record<string, string>) =>
    t.app.inject({
      method: route.method as "GET",
      url: concreteUrl(route.url),
      headers,
      payload: bodyFor(route),
    });

  it("covers the system routes and has an access level on every route", () => {
    const table = t.app.routeTable;
    expect(table.length).toBeGreaterThan(10);
    const urls = table.map((r) => `${r.method} ${r.url}`);
    expect(urls).toContain("POST /system/keys");
    expect(urls).toContain("GET /system/plans");
    for (const r of table) expect(["public", "user", "admin", "session"]).toContain(r.access);
    // The admin portal's own routes: pages and sign-in public, the rest behind its session.
    expect(urls).toContain("GET /portal/");
    expect(
      table.filter((r) => r.url.startsWith("/portal/") && r.access === "session").length,
    ).toBeGreaterThan(3);
  });

  it("answers every cell of the matrix as the spec says", async () => {
    const failures: string[] = [];
    const expectStatus = (route: RouteEntry, cell: string, got: number, ok: (s: number) => boolean) => {
      if (!ok(got)) failures.push(`${route.method} ${route.url} [${cell}] -> ${got}`);
    };
    const unknown = `alk_${randomBytes(32).toString("base64url")}`;
    // A portal session (opened as the sign-in's last step does) and its cookie, signed as the portal signs it (with
    // its session secret; the cookie plugin lives in the portal's own context, so the app has no signCookie).
    const portal = t.deps.portal!;
    const secret = t.deps.secrets.get("portal_session");
    const signCookie = (value: string) => sign(value, secret);
    const opened = await portal.openSession({
      subject: "matrix",
      email: "matrix@example.com",
      emailVerified: true,
    });
    const sessionCookie = `portal_session=${signCookie(opened.token)}`;
    const other = await portal.openSession({
      subject: "other",
      email: "other@example.com",
      emailVerified: true,
    });
    const sessionRead = await t.app.inject({ url: "/portal/session", headers: { cookie: sessionCookie } });
    const csrfCookie = (sessionRead.headers["set-cookie"] as string | string[] | undefined) ?? [];
    const csrfPair = [csrfCookie]
      .flat()
      .map((c) => c.split(";")[0])
      .join("; ");
    const csrfToken = (sessionRead.json() as { csrf_token: string }).csrf_token;
    const otherToken = (
      (
        await t.app.inject({
          url: "/portal/session",
          headers: { cookie: `portal_session=${signCookie(other.token)}` },
        })
      ).json() as { csrf_token: string }
    ).csrf_token;
    // Sign-out ends the matrix's session: walked last.
    const last = (r: RouteEntry) => Number(r.url === "/portal/logout");
    for (const route of [...t.app.routeTable].sort((a, b) => last(a) - last(b))) {
      if (route.access === "session") {
        const writes = route.method !== "GET";
        // The proxy's wildcard is a route of the API (a read every admin may do).
        const session = (headers: Record<string, string>) =>
          t.app.inject({
            method: route.method as "GET",
            url: concreteUrl(route.url).replace("*", "system/plans"),
            headers,
            ...(writes ? { payload: {} } : {}),
          });
        const withSession = { cookie: `${sessionCookie}; ${csrfPair}` };
        const cells: [string, Record<string, string>, (s: number) => boolean][] = [
          ["no cookie", {}, (s) => s === 401],
          ["admin key, no cookie", t.auth(t.adminKey), (s) => s === 401],
          ["unsigned cookie", { cookie: `portal_session=${opened.token}` }, (s) => s === 401],
          ["forged signature", { cookie: `${sessionCookie.slice(0, -2)}AA` }, (s) => s === 401],
        ];
        if (writes) {
          cells.push(
            ["session, no CSRF token", withSession, (s) => s === 403],
            [
              "session, another session's CSRF token",
              { ...withSession, "x-csrf-token": otherToken },
              (s) => s === 403,
            ],
          );
        }
        // The good cell last: on sign-out it ends the session.
        cells.push([
          "session",
          writes ? { ...withSession, "x-csrf-token": csrfToken } : withSession,
          (s) => s !== 401 && s !== 403,
        ]);
        for (const [cell, headers, ok] of cells) {
          const r = await session(headers);
          expectStatus(route, cell, r.statusCode, ok);
          if (r.statusCode === 401 || r.statusCode === 403) {
            expect(r.headers["content-type"]).toContain("application/problem+json");
          }
        }
        continue;
      }
      if (route.access === "public") {
        const r = await call(route, {});
        expectStatus(route, "public/no key", r.statusCode, (s) => s !== 401 && s !== 403);
        continue;
      }
      const both = (k: string) => t.auth(k);
      const cells: [string, Record<string, string>, (s: number) => boolean][] = [
        ["no key", {}, (s) => s === 401],
        ["x-api-key only", { "x-api-key": t.adminKey }, (s) => s === 401],
        ["bearer only", { authorization: `Bearer ${t.adminKey}` }, (s) => s === 401],
        ["mismatched", { "x-api-key": t.adminKey, authorization: `Bearer ${t.userKey}` }, (s) => s === 401],
        ["unknown key", both(unknown), (s) => s === 401],
        ["revoked key", both(keys.revoked!), (s) => s === 403],
        ["expired key", both(keys.expired!), (s) => s === 403],
        [
          "disallowed origin",
          { ...both(keys.originBound!), origin: "https://evil.example" },
          (s) => s === 403,
        ],
        [
          "allowed origin",
          { ...both(keys.originBound!), origin: "https://good.example" },
          (s) => s !== 401 && s !== 403,
        ],
        ["no origin header", both(keys.originBound!), (s) => s !== 401 && s !== 403],
        [
          "user key",
          both(t.userKey),
          route.access === "admin" ? (s) => s === 403 : (s) => s !== 401 && s !== 403,
        ],
        ["admin key", both(t.adminKey), (s) => s !== 401 && s !== 403],
      ];
      for (const [cell, headers, ok] of cells) {
        const r = await call(route, headers);
        expectStatus(route, cell, r.statusCode, ok);
        if (r.statusCode === 401 || r.statusCode === 403) {
          expect(r.headers["content-type"]).toContain("application/problem+json");
          expect(JSON.parse(r.body).status).toBe(r.statusCode);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe("plan rate limits", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it("answers 429 with Retry-After once a plan's per-minute allowance is spent", async () => {
    const repo = t.deps.keys!;
    await repo.upsertPlan({
      plan_id: "tiny",
      name: "Tiny",
      rpm: 3,
      rpd: 1000,
      price: "0",
      price_alph: "0",
      validity_days: 1,
    });
    const created = await repo.createKey({ userId: "rl-user", planId: "free", level: "user" });
    await repo.setPlan(created.keyId, "tiny");
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof t.app.inject>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await t.app.inject({ url: "/system/keys", headers: t.auth(created.key) });
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(last!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(last!.headers["retry-after"])).toBeLessThanOrEqual(60);
    expect(last!.headers["x-ratelimit-limit"]).toBe("3");
    expect(JSON.parse(last!.body).code).toBe("rate_limited");
    // Another key is not affected.
    const other = await t.app.inject({ url: "/system/keys", headers: t.auth(t.userKey) });
    expect(other.statusCode).toBe(200);
  });

  it("enforces the per-day allowance too", async () => {
    const repo = t.deps.keys!;
    await repo.upsertPlan({
      plan_id: "daily2",
      name: "Daily",
      rpm: 100,
      rpd: 2,
      price: "0",
      price_alph: "0",
      validity_days: 1,
    });
    const created = await repo.createKey({ userId: "rl-day", planId: "free", level: "user" });
    await repo.setPlan(created.keyId, "daily2");
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await t.app.inject({ url: "/system/keys", headers: t.auth(created.key) })).statusCode);
    }
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe("key update with null", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it("clears valid_until when null is sent (null is not coerced to an empty string)", async () => {
    const repo = t.deps.keys!;
    const created = await repo.createKey({ userId: "nullable", planId: "free", level: "user" });
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const set = await t.app.inject({
      method: "POST",
      url: `/system/key/${created.keyId}/update`,
      headers: t.auth(t.adminKey),
      payload: { valid_until: until },
    });
    expect(set.json().key.valid_until).toBe(until);
    const cleared = await t.app.inject({
      method: "POST",
      url: `/system/key/${created.keyId}/update`,
      headers: t.auth(t.adminKey),
      payload: { valid_until: null },
    });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json().key.valid_until).toBeNull();
    const none = await t.app.inject({
      method: "POST",
      url: `/system/key/${created.keyId}/update`,
      headers: t.auth(t.adminKey),
      payload: {},
    });
    expect(none.statusCode).toBe(400);
  });
});
