// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.ts";

describe("no-database mode (DATABASES=off)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ databases: false });
  });
  afterAll(async () => t?.close());

  it("answers 503 with the error body on every route that needs a store", async () => {
    const needing = t.app.routeTable.filter((r) => r.db === "required");
    expect(needing.length).toBeGreaterThan(5);
    for (const route of needing) {
      const r = await t.app.inject({
        method: route.method as "GET",
        url: route.url.replace(/:([a-z_]+)/g, "x"),
        headers: t.auth(t.adminKey),
        payload: route.method === "GET" ? undefined : {},
      });
      expect(r.statusCode, `${route.method} ${route.url}`).toBe(503);
      expect(r.headers["content-type"]).toContain("application/problem+json");
      expect(r.json()).toMatchObject({ status: 503, code: "database_not_configured" });
    }
  });

  it("still serves the documentation and liveness", async () => {
    expect((await t.app.inject({ url: "/openapi.json" })).statusCode).toBe(200);
    expect((await t.app.inject({ url: "/healthz" })).json()).toEqual({ status: "ok" });
    expect((await t.app.inject({ url: "/readyz" })).json()).toEqual({
      status: "ok",
      postgres: "off",
      clickhouse: "off",
    });
    const metrics = await t.app.inject({ url: "/metrics" });
    expect(metrics.headers["content-type"]).toContain("text/plain");
    expect(metrics.body).toContain("http_requests_total");
  });
});

/** Every key route with a made-up key, path parameters filled: the statuses answered. */
async function madeUpKeyStatuses(t: TestApp, key: string): Promise<Map<string, number>> {
  const keyRoutes = t.app.routeTable.filter((r) => r.access === "user" || r.access === "admin");
  expect(keyRoutes.length).toBeGreaterThan(20);
  const statuses = new Map<string, number>();
  for (const route of keyRoutes) {
    const r = await t.app.inject({
      method: route.method as "GET",
      url: route.url.replace(/:([a-z_]+)/g, "x"),
      headers: t.auth(key),
      payload: route.method === "GET" ? undefined : {},
    });
    statuses.set(`${route.method} ${route.url}`, r.statusCode);
  }
  return statuses;
}

describe("keys without a database", () => {
  const MADE_UP = "alk_made_up_key_nobody_issued____________________";

  it("with no API_KEYS_FILE: every key route answers 503 key_check_unavailable (or database_not_configured)", async () => {
    const t = await createTestApp({ databases: false, env: { API_KEYS_FILE: "" } });
    try {
      for (const [route, status] of await madeUpKeyStatuses(t, MADE_UP)) expect(status, route).toBe(503);
      const r = await t.app.inject({ url: "/series/available", headers: t.auth(MADE_UP) });
      expect(r.statusCode).toBe(503);
      expect(r.json()).toMatchObject({ code: "key_check_unavailable" });
      // The helper's keys are no better: nothing is let through unchecked.
      const known = await t.app.inject({ url: "/series/available", headers: t.auth(t.userKey) });
      expect(known.statusCode).toBe(503);
    } finally {
      await t.close();
    }
  });

  it("with API_KEYS_FILE: a key not in the file never gets 2xx; a listed key does, at its level", async () => {
    const t = await createTestApp({ databases: false });
    try {
      for (const [route, status] of await madeUpKeyStatuses(t, MADE_UP)) {
        expect([401, 503], route).toContain(status);
      }
      const made = await t.app.inject({ url: "/series/available", headers: t.auth(MADE_UP) });
      expect(made.statusCode).toBe(401);
      expect(made.json()).toMatchObject({ code: "invalid_api_key" });
      const known = await t.app.inject({ url: "/series/available", headers: t.auth(t.userKey) });
      expect(known.statusCode).toBe(200);
      // A user key of the file on an admin route: 403, not the route.
      const admin = t.app.routeTable.find((r) => r.access === "admin" && r.db !== "required");
      if (admin) {
        const r = await t.app.inject({
          method: admin.method as "GET",
          url: admin.url.replace(/:([a-z_]+)/g, "x"),
          headers: t.auth(t.userKey),
        });
        expect(r.statusCode, `${admin.method} ${admin.url}`).toBe(403);
      }
    } finally {
      await t.close();
    }
  });
});
