/** Every error, whoever raises it (router, body parser, schema, handler), has the one Problem shape. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.ts";

describe("one error body everywhere", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const cases: [string, () => Promise<Awaited<ReturnType<TestApp["app"]["inject"]>>>, number, string][] = [];
  const admin = () => t.auth(t.adminKey);
  cases.push(
    ["unknown route", () => t.app.inject({ url: "/nope" }), 404, "route_not_found"],
    ["bad URL encoding", () => t.app.inject({ url: "/%" }), 400, "bad_url"],
    [
      "path parameter too long",
      () => t.app.inject({ url: `/transaction/${"a".repeat(300)}/events` }),
      414,
      "max_param_length",
    ],
    [
      "malformed JSON body",
      () =>
        t.app.inject({
          method: "POST",
          url: "/system/keys",
          headers: { ...admin(), "content-type": "application/json" },
          payload: "{bad json",
        }),
      400,
      "ctp_invalid_json_body",
    ],
    [
      "unsupported media type",
      () =>
        t.app.inject({
          method: "POST",
          url: "/system/keys",
          headers: { ...admin(), "content-type": "text/csv" },
          payload: "a,b",
        }),
      415,
      "ctp_invalid_media_type",
    ],
    [
      "schema violation in a body",
      () =>
        t.app.inject({
          method: "POST",
          url: "/system/keys",
          headers: admin(),
          payload: { userId: "x", planId: "gold" },
        }),
      400,
      "validation_failed",
    ],
    [
      "unknown body field",
      () =>
        t.app.inject({
          method: "POST",
          url: "/category/add",
          headers: admin(),
          payload: { id: "x", colour: "red" },
        }),
      400,
      "validation_failed",
    ],
  );

  it.each(cases.map(([name, run, status, code]) => ({ name, run, status, code })))(
    "$name → $status $code",
    async ({ run, status, code }) => {
      const r = await run();
      expect(r.statusCode).toBe(status);
      expect(r.headers["content-type"]).toContain("application/problem+json");
      const body = r.json();
      expect(body).toMatchObject({ status, code, type: "about:blank" });
      expect(typeof body.detail).toBe("string");
      expect(body.request_id).toBe(r.headers["x-request-id"]);
    },
  );
});
