// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
import SwaggerParser from "@apidevtools/swagger-parser";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SPEC_TAGS } from "../../api/types.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

interface Operation {
  operationId?: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: { default?: unknown } }[];
  description?: string;
  requestBody?: {
    required?: boolean;
    content: Record<string, { schema: { properties?: Record<string, Record<string, unknown>> } }>;
  };
  tags?: string[];
  "x-access-level"?: string;
  security?: unknown;
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string; title?: string } }> }>;
}
interface OpenApiDoc {
  openapi: string;
  info: { version: string; license?: { name: string; url?: string } };
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
}

describe("/openapi.json", () => {
  let t: TestApp;
  let doc: OpenApiDoc;
  beforeAll(async () => {
    t = await createTestApp();
    const r = await t.app.inject({ url: "/openapi.json" });
    expect(r.statusCode).toBe(200);
    doc = JSON.parse(r.body);
  });
  afterAll(async () => t?.close());

  it("is a valid OpenAPI 3.0 document with version 1.0.0", async () => {
    expect(doc.openapi).toMatch(/^3\.0\.\d$/);
    expect(doc.info.version).toBe("1.0.0");
    // The validator dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it("gives every operation a spec tag, an access level, a success schema and the Problem body on errors", () => {
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    // The admin portal's routes (pages and their cookie endpoints) are left out of the document (docs/portal.md).
    const documented = t.app.routeTable.filter((r) => r.url !== "/portal" && !r.url.startsWith("/portal/"));
    expect(t.app.routeTable.length - documented.length).toBeGreaterThan(5);
    expect(ops.length).toBe(documented.length);
    expect(ops.some(({ path }) => path.startsWith("/portal"))).toBe(false);
    for (const { path, method, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(SPEC_TAGS, where).toContain(op.tags?.[0]);
      expect(["public", "user", "admin"], where).toContain(op["x-access-level"]);
      const codes = Object.keys(op.responses);
      expect(
        codes.some((c) => c.startsWith("2")),
        where,
      ).toBe(true);
      const success = op.responses[codes.find((c) => c.startsWith("2")) ?? ""];
      expect(success?.content, where).toBeDefined();
      // /readyz documents its own 503 body (which store is down); every other error is a Problem.
      for (const code of codes.filter((c) => Number(c) >= 400 && !(path === "/readyz" && c === "503"))) {
        const schema = op.responses[code]?.content?.["application/json"]?.schema;
        expect(String(schema?.$ref ?? schema?.title), `${where} ${code}`).toMatch(/Problem/);
      }
      if (op["x-access-level"] !== "public") {
        expect(op.security, where).toEqual([{ apiKey: [], bearerAuth: [] }]);
        expect(codes, where).toEqual(expect.arrayContaining(["401", "403", "429"]));
      }
    }
  });

  it("gives client generators what they read: operationIds, tag descriptions, a license", () => {
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(ops.length).toBeGreaterThan(10);
    const ids = ops.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths["/token/{tokenid}/details"]?.get?.operationId).toBe("getTokenByTokenidDetails");
    // Each operation states its access level once (a HEAD twin once appended it a second time).
    const accessLines = ops.map(({ where, op }) => [where, op.description?.split("Access:").length]);
    expect(accessLines.filter(([, n]) => n !== 2)).toEqual([]);
    expect(doc.tags.map((tag) => tag.name)).toEqual([...SPEC_TAGS]);
    expect(doc.tags.filter((tag) => !tag.description)).toEqual([]);
    expect(doc.info.license?.name).toBeTruthy();
    // A query parameter with a default may be left out: generated clients make it optional.
    const withDefault = ops.flatMap(({ where, op }) =>
      (op.parameters ?? [])
        .filter((p) => p.in === "query" && p.schema?.default !== undefined)
        .map((p) => [where, p.name, p.required ?? false]),
    );
    expect(withDefault.length).toBeGreaterThan(10);
    expect(withDefault.filter(([, , required]) => required)).toEqual([]);
    expect(withDefault).toContainEqual(["GET /events/all", "limit", false]);
  });

  it("documents both spellings of aliased body fields, and the body-less revocation as optional", () => {
    const keys = doc.paths["/system/keys"]?.post?.requestBody?.content["application/json"]?.schema;
    expect(keys?.properties?.userId).toMatchObject({ "x-alias-of": "user_id" });
    expect(keys?.properties?.planId).toMatchObject({ "x-alias-of": "plan_id" });
    expect(keys?.properties?.user_id).toBeDefined();
    expect(doc.paths["/system/key/{keyid}/delete"]?.post?.requestBody?.required).toBe(false);
    expect(doc.paths["/system/keys"]?.post?.requestBody?.required).toBe(true);
  });

  it("lists the bot's webhook under Webhook as well as Telegram, and the WireGuard routes under WireGuard", () => {
    expect(doc.paths["/telegram/webhook"]?.post?.tags).toEqual(["Telegram", "Webhook"]);
    const wireguard = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => op.tags?.includes("WireGuard"))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(wireguard.sort()).toEqual([
      "GET /system/wireguard/peers",
      "GET /system/wireguard/peers/{peerid}",
      "GET /system/wireguard/server-peers",
      "POST /system/wireguard/peers",
      "POST /system/wireguard/peers/{peerid}/revoke",
    ]);
    expect(doc.paths["/system/wireguard/peers/{peerid}/revoke"]?.post?.requestBody?.required).toBe(false);
  });

  it("documents 403 banned on every operation, and 503 key_check_unavailable on every key route", () => {
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(ops.filter(({ op }) => !op.responses["403"]).map(({ where }) => where)).toEqual([]);
    expect(
      ops
        .filter(({ op }) => op["x-access-level"] !== "public" && !op.responses["503"])
        .map(({ where }) => where),
    ).toEqual([]);
    // The body parser's 413 and 415 on every operation that takes a body.
    expect(
      ops.filter(
        ({ where, op }) => where.startsWith("POST") && !(op.responses["413"] && op.responses["415"]),
      ),
    ).toEqual([]);
  });

  it("documents the 404, 409 and 502 the job, webhook, dapp detail and AlphBanX routes answer", () => {
    const has = (path: string, method: string, ...codes: string[]) =>
      expect(Object.keys(doc.paths[path]?.[method]?.responses ?? {}), `${method} ${path}`).toEqual(
        expect.arrayContaining(codes),
      );
    has("/system/jobs", "post", "409");
    has("/system/jobs/{jobid}", "get", "404");
    has("/system/jobs/{jobid}/cancel", "post", "404", "409");
    has("/webhooks", "post", "409");
    for (const path of ["/webhooks/{webhookid}", "/webhooks/{webhookid}/deliveries"]) has(path, "get", "404");
    for (const action of ["delete", "enable", "disable"])
      has(`/webhooks/{webhookid}/${action}`, "post", "404");
    has("/dapps/alphbanx/positions/{address}", "get", "404", "502", "503");
    has("/dapps/alphbanx/totals", "get", "502");
    has("/dapps/elexium/pools/{pool}", "get", "404");
    has("/dapps/elexium/pools/{pool}/daily", "get", "404");
    has("/dapps/chainreaction/games/{gameid}/{chainid}", "get", "404");
    has("/dapps/dia-oracle/randomness/{round}", "get", "404");
    has("/dapps/furnace/tokens/{tokenid}", "get", "404");
  });

  it("tags the job routes under Chain, and describes the outbound webhooks and the event stream", () => {
    expect(doc.paths["/system/jobs"]?.post?.tags).toEqual(["Chain"]);
    expect(doc.paths["/system/jobs/{jobid}/cancel"]?.post?.tags).toEqual(["Chain"]);
    const tag = (name: string) => doc.tags.find((x) => x.name === name)?.description ?? "";
    expect(tag("Webhook")).toMatch(/Outbound webhooks/);
    expect(tag("Events")).toContain("/events/stream");
    expect(tag("Chain")).toMatch(/reindex jobs/);
  });

  it("test apps refuse a status their document does not list (the check behind every route test)", async () => {
    const teapot = async (app: TestApp["app"]) => {
      app.get(
        "/teapot",
        {
          config: { access: "public" },
          schema: { tags: ["Docs"], response: { 200: Type.Object({}) } },
        },
        async (_request, reply) => reply.code(418 as 200).send({}),
      );
    };
    const strict = await createTestApp({ databases: false, extraGroups: [teapot] });
    expect((await strict.app.inject({ url: "/teapot" })).statusCode).toBe(418);
    await expect(strict.close()).rejects.toThrow(/GET \/teapot 418/);
    const lenient = await createTestApp({
      databases: false,
      extraGroups: [teapot],
      allowUndocumentedStatuses: true,
    });
    expect((await lenient.app.inject({ url: "/teapot" })).statusCode).toBe(418);
    await lenient.close();
  });

  it("refuses to start with two operations of the same operationId", async () => {
    const twin = async (app: TestApp["app"]) => {
      for (const url of ["/dup/a", "/dup/b"]) {
        app.get(
          url,
          {
            config: { access: "public" },
            schema: { tags: ["Docs"], operationId: "sameName", response: { 200: Type.Object({}) } },
          },
          async () => ({}),
        );
      }
    };
    await expect(createTestApp({ databases: false, extraGroups: [twin] })).rejects.toThrow(
      /operationId sameName is already used/,
    );
  });

  it("serves the interactive reference without external assets", async () => {
    const page = await t.app.inject({ url: "/docs/" });
    const html =
      page.statusCode === 302
        ? (await t.app.inject({ url: page.headers.location as string })).body
        : page.body;
    expect(html).toContain("swagger-ui");
    expect(html).not.toMatch(/https?:\/\/(?!localhost)[a-z0-9.-]+\.[a-z]{2,}\/[^"']*\.(js|css)/i);
    const js = await t.app.inject({ url: "/docs/static/swagger-ui-bundle.js" });
    expect(js.statusCode).toBe(200);
    expect(js.body.length).toBeGreaterThan(100_000);
  });

  it("serves the same API under the stage prefix", async () => {
    const plain = await t.app.inject({ url: "/system/plans" });
    const staged = await t.app.inject({ url: "/prod/system/plans" });
    expect(staged.statusCode).toBe(200);
    expect(staged.json()).toEqual(plain.json());
    expect((await t.app.inject({ url: "/dev/system/plans" })).statusCode).toBe(404);
  });
});
