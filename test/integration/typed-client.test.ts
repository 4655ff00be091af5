// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/**
 * The typed client (clients/typescript) against the real app listening on a local port: public, user
 * and admin routes, typed answers and typed error bodies; and the generated types are current (the
 * stale check fails once a route schema changes without regeneration).
 */
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../api/types.ts";
import { generateSchema, SCHEMA_FILE, staleness } from "../../clients/typescript/scripts/generate.ts";
import { createClient, type IndexerClient, type Problem } from "../../clients/typescript/src/index.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

describe("typed client over HTTP", () => {
  let t: TestApp;
  let baseUrl: string;
  let anonymous: IndexerClient;
  let user: IndexerClient;
  let admin: IndexerClient;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = t.app.server.address() as AddressInfo;
    baseUrl = `http://127.0.0.1:${port}`;
    anonymous = createClient(baseUrl);
    user = createClient(`${baseUrl}/`, t.userKey);
    admin = createClient(baseUrl, t.adminKey);
  });
  afterAll(async () => t?.close());

  it("calls public routes without a key", async () => {
    const plans = await anonymous.GET("/system/plans");
    expect(plans.response.status).toBe(200);
    expect(plans.data?.plans.find((p) => p.plan_id === "free")).toMatchObject({ rpm: 60, rpd: 10_000 });

    // A query parameter with a default (limit) may be left out; the stage prefix serves the same API.
    const events = await createClient(`${baseUrl}/prod`).GET("/events/all", {
      params: { query: { poll: "1" } },
    });
    expect(events.response.status).toBe(200);
    expect(events.data?.events).toEqual([]);
  });

  it("sends the key in both headers on user routes", async () => {
    const mine = await user.GET("/system/keys");
    expect(mine.error).toBeUndefined();
    expect(mine.data?.keys.map((k) => k.user_id)).toEqual(["plain-user"]);
    expect(mine.response.headers.get("x-ratelimit-limit")).toBe("6000");

    const none = await anonymous.GET("/system/keys");
    expect(none.response.status).toBe(401);
    expect(none.error?.code).toBe("missing_api_key");
  });

  it("calls admin routes, and a key it creates works through the client", async () => {
    const created = await admin.POST("/system/keys", {
      body: { user_id: "client-user", plan_id: "pro" },
    });
    expect(created.response.status).toBe(200);
    const key = created.data!;
    expect(key.key.startsWith(key.key_prefix)).toBe(true);

    const own = createClient(baseUrl, key.key);
    const listed = await own.GET("/system/keys");
    expect(listed.data?.keys).toHaveLength(1);
    expect(listed.data?.keys[0]).toMatchObject({ key_id: key.keyId, plan_id: "pro", level: "user" });

    const usage = await own.GET("/system/keys/{keyid}/usage", {
      params: { path: { keyid: key.keyId }, query: { window: "1h" } },
    });
    expect(usage.response.status).toBe(200);
    expect(usage.data).toMatchObject({ key_id: key.keyId, limits: { rpm: 600, rpd: 250_000 } });
    // The list above and this read itself.
    expect(usage.data?.totals.requests).toBe(2);
    expect(usage.data?.granularity).toBe("minute");

    const upserted = await admin.POST("/system/plans/upsert", {
      body: {
        plan_id: "client-plan",
        name: "Client",
        rpm: 5,
        rpd: 50,
        price: "1",
        price_alph: "2",
        validity_days: 7,
      },
    });
    expect(upserted.data?.plan).toMatchObject({ plan_id: "client-plan", rpm: 5, rpd: 50 });
  });

  it("types the error body (Problem) of refused calls", async () => {
    const refused = await user.POST("/system/keys", { body: { user_id: "x", plan_id: "free" } });
    expect(refused.data).toBeUndefined();
    const problem: Problem | undefined = refused.error;
    expect(problem).toMatchObject({ status: 403, code: "admin_required" });
    expect(refused.response.headers.get("content-type")).toContain("application/problem+json");

    const missing = await admin.GET("/system/keys/{keyid}/usage", {
      params: { path: { keyid: "00000000-0000-4000-8000-000000000000" } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.code).toBe("not_found");
    expect(missing.error?.detail).toContain("00000000-0000-4000-8000-000000000000");
  });
});

describe("generated types", () => {
  it("type-check the README's example (clients/typescript/examples/readme.ts holds the same code as its js block)", () => {
    const dir = join(dirname(SCHEMA_FILE), "..");
    const readme = readFileSync(join(dir, "README.md"), "utf8");
    const block = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    const example = readFileSync(join(dir, "examples", "readme.ts"), "utf8");
    expect(block).toBeDefined();
    expect(example.slice(example.indexOf("\n") + 1)).toBe(block);
  });

  it("are current with the API's OpenAPI document (else: npm run client:generate)", async () => {
    const committed = readFileSync(SCHEMA_FILE, "utf8");
    expect(staleness(await generateSchema(), committed)).toBeNull();
  });

  it("are reported stale once a route schema changes without regeneration", async () => {
    const committed = readFileSync(SCHEMA_FILE, "utf8");
    const extra = async (app: App) => {
      app.get(
        "/system/plans/extra",
        {
          config: { access: "public", db: "none" },
          schema: {
            tags: ["Plans"],
            summary: "A route added after the client was generated",
            response: { 200: Type.Object({ ok: Type.Boolean() }) },
          },
        },
        async () => ({ ok: true }),
      );
    };
    const diff = staleness(await generateSchema({ extraGroups: [extra] }), committed);
    expect(diff).not.toBeNull();
    expect(diff!.expected).toContain("/system/plans/extra");
  });
});
