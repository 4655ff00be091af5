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
