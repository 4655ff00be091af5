// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/** CORS (api/plugins/cors.ts and the origin check of api/plugins/auth.ts): preflights, origins per key, public routes. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.ts";

const GOOD = "https://good.example";
const OTHER = "https://other.example";

const preflight = (method: string, headers = "x-api-key,authorization,content-type,last-event-id") => ({
  "access-control-request-method": method,
  "access-control-request-headers": headers,
});

/** The comma-separated values of a header, lower-cased. */
const list = (value: unknown) =>
  String(value ?? "")
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);

describe("CORS with the default configuration", () => {
  let t: TestApp;
  let boundKey: string;

  beforeAll(async () => {
    t = await createTestApp();
    const repo = t.deps.keys!;
    boundKey = (await repo.createKey({ userId: "u-cors", planId: "enterprise", level: "user" })).key;
    await repo.addOrigin((await repo.listKeys("u-cors"))[0]!.key_id, GOOD);
  });
  afterAll(async () => t?.close());

  it("answers a preflight of a user route for any origin, with the API's methods and headers", async () => {
    for (const url of ["/system/keys", "/prod/system/keys"]) {
      const r = await t.app.inject({
        method: "OPTIONS",
        url,
        headers: { origin: OTHER, ...preflight("GET") },
      });
      expect(r.statusCode).toBe(204);
      expect(r.headers["access-control-allow-origin"]).toBe(OTHER);
      expect(list(r.headers.vary)).toContain("origin");
      expect(list(r.headers["access-control-allow-methods"])).toEqual(
        expect.arrayContaining(["get", "post", "put", "patch", "delete"]),
      );
      expect(list(r.headers["access-control-allow-headers"])).toEqual(
        expect.arrayContaining(["x-api-key", "authorization", "content-type", "last-event-id"]),
      );
      expect(r.headers["access-control-max-age"]).toBe("600");
      expect(r.body).toBe("");
    }
  });

  it("echoes an allowed origin on a key's request, with Vary: Origin", async () => {
    const r = await t.app.inject({ url: "/system/keys", headers: { origin: GOOD, ...t.auth(boundKey) } });
    expect(r.statusCode).toBe(200);
    expect(r.headers["access-control-allow-origin"]).toBe(GOOD);
    expect(list(r.headers.vary)).toContain("origin");
    expect(list(r.headers["access-control-expose-headers"])).toEqual(
      expect.arrayContaining(["x-request-id", "x-ratelimit-remaining", "retry-after"]),
    );
  });

  it("refuses another origin for a key restricted to one: 403 without Access-Control-Allow-Origin", async () => {
    const r = await t.app.inject({ url: "/system/keys", headers: { origin: OTHER, ...t.auth(boundKey) } });
    expect(r.statusCode).toBe(403);
    expect(r.json()).toMatchObject({ code: "origin_not_allowed", status: 403 });
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
    expect(list(r.headers.vary)).toContain("origin");
  });

  it("lets a key with no allowed origins be used from any origin (today's rule)", async () => {
    const r = await t.app.inject({ url: "/system/keys", headers: { origin: OTHER, ...t.auth(t.userKey) } });
    expect(r.statusCode).toBe(200);
    expect(r.headers["access-control-allow-origin"]).toBe(OTHER);
  });

  it("lets a page read a refusal that no key's origins decided (401 without a key)", async () => {
    const r = await t.app.inject({ url: "/system/keys", headers: { origin: OTHER } });
    expect(r.statusCode).toBe(401);
    expect(r.headers["access-control-allow-origin"]).toBe(OTHER);
  });

  it("sends no CORS headers to a request without Origin (servers, scripts)", async () => {
    const r = await t.app.inject({ url: "/system/keys", headers: t.auth(boundKey) });
    expect(r.statusCode).toBe(200);
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("allows any origin on public routes, preflight and request", async () => {
    const pre = await t.app.inject({
      method: "OPTIONS",
      url: "/system/plans",
      headers: { origin: OTHER, ...preflight("GET") },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("*");
    const r = await t.app.inject({ url: "/system/plans", headers: { origin: OTHER } });
    expect(r.statusCode).toBe(200);
    expect(r.headers["access-control-allow-origin"]).toBe("*");
    // A browser client that sends its (restricted) key on a public route too is not refused there.
    const keyed = await t.app.inject({
      url: "/system/plans",
      headers: { origin: OTHER, ...t.auth(boundKey) },
    });
    expect(keyed.statusCode).toBe(200);
    expect(keyed.headers["access-control-allow-origin"]).toBe("*");
  });

  it("takes the stream's key from the api_key query parameter, with the key's origins", async () => {
    const url = `/events/stream?until_caught_up=1&api_key=${encodeURIComponent(boundKey)}`;
    const ok = await t.app.inject({ url, headers: { origin: GOOD } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(ok.headers["access-control-allow-origin"]).toBe(GOOD);
    expect(list(ok.headers.vary)).toContain("origin");
    const refused = await t.app.inject({ url, headers: { origin: OTHER } });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers["access-control-allow-origin"]).toBeUndefined();
    const unknown = await t.app.inject({ url: "/events/stream?until_caught_up=1&api_key=alk_nope" });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().code).toBe("invalid_api_key");
  });

  it("takes a query key on no other route", async () => {
    const r = await t.app.inject({ url: `/system/keys?api_key=${encodeURIComponent(boundKey)}` });
    expect(r.statusCode).toBe(401);
    expect(r.json().code).toBe("missing_api_key");
  });

  it("answers an OPTIONS that is no preflight with the one error shape (405 with Allow)", async () => {
    const r = await t.app.inject({ method: "OPTIONS", url: "/system/keys" });
    expect(r.statusCode).toBe(405);
    expect(r.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(r.json()).toMatchObject({ code: "method_not_allowed", status: 405 });
    expect(String(r.headers.allow)).toContain("GET");
    expect(String(r.headers.allow)).not.toContain("OPTIONS");
    // Unknown paths stay 404 (the preflight route matches every path, but is no method of one).
    const unknown = await t.app.inject({ url: "/no/such/route" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe("route_not_found");
  });

  it("opens none of the admin portal's session routes to other origins", async () => {
    const pre = await t.app.inject({
      method: "OPTIONS",
      url: "/portal/session",
      headers: { origin: OTHER, ...preflight("GET") },
    });
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    expect(pre.statusCode).toBe(405);
    const r = await t.app.inject({ url: "/portal/session", headers: { origin: OTHER } });
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
  });
});

describe("CORS with public routes restricted by CORS_PUBLIC_ORIGINS", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: { CORS_PUBLIC_ORIGINS: `${GOOD},https://second.example`, CORS_MAX_AGE_S: "60" },
    });
  });
  afterAll(async () => t?.close());

  it("echoes a listed origin and withholds the header from others, with Vary: Origin", async () => {
    const ok = await t.app.inject({ url: "/system/plans", headers: { origin: GOOD } });
    expect(ok.headers["access-control-allow-origin"]).toBe(GOOD);
    expect(list(ok.headers.vary)).toContain("origin");
    const other = await t.app.inject({ url: "/system/plans", headers: { origin: OTHER } });
    expect(other.statusCode).toBe(200);
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    expect(list(other.headers.vary)).toContain("origin");
    const pre = await t.app.inject({
      method: "OPTIONS",
      url: "/system/plans",
      headers: { origin: OTHER, ...preflight("GET") },
    });
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    const preOk = await t.app.inject({
      method: "OPTIONS",
      url: "/system/plans",
      headers: { origin: GOOD, ...preflight("GET") },
    });
    expect(preOk.statusCode).toBe(204);
    expect(preOk.headers["access-control-allow-origin"]).toBe(GOOD);
    expect(preOk.headers["access-control-max-age"]).toBe("60");
  });

  it("leaves keyed routes to the keys' origins", async () => {
    const r = await t.app.inject({ url: "/system/keys", headers: { origin: OTHER, ...t.auth(t.userKey) } });
    expect(r.statusCode).toBe(200);
    expect(r.headers["access-control-allow-origin"]).toBe(OTHER);
  });
});

describe("CORS_PUBLIC_ORIGINS=none", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { CORS_PUBLIC_ORIGINS: "none" } });
  });
  afterAll(async () => t?.close());

  it("answers public routes to same-origin pages and servers only", async () => {
    const r = await t.app.inject({ url: "/system/plans", headers: { origin: OTHER } });
    expect(r.statusCode).toBe(200);
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
    const pre = await t.app.inject({
      method: "OPTIONS",
      url: "/system/plans",
      headers: { origin: OTHER, ...preflight("GET") },
    });
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    expect(pre.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });
});
