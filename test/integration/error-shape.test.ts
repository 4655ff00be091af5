// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/** Every error, whoever raises it (router, body parser, schema, handler), has the one Problem shape. */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notFoundDetail } from "../../api/plugins/errors.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

describe("a 404's detail", () => {
  it('keeps a detail that says "not found" and completes one that does not (a message passed on)', () => {
    expect(notFoundDetail("Transaction ab not found")).toBe("Transaction ab not found");
    expect(notFoundDetail("Unknown transaction. ")).toBe("Unknown transaction (not found).");
  });
});

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

  // 404s from the router, handlers and a disabled feature: one shape, and a detail that says "not found".
  const uuid = "00000000-0000-4000-8000-000000000000";
  cases.push(
    [
      "unknown reindex job",
      () => t.app.inject({ url: `/system/jobs/${uuid}`, headers: admin() }),
      404,
      "not_found",
    ],
    ["unknown webhook", () => t.app.inject({ url: `/webhooks/${uuid}`, headers: admin() }), 404, "not_found"],
    [
      "payments off",
      () =>
        t.app.inject({
          method: "POST",
          url: "/payments/invoices",
          headers: admin(),
          payload: { plan_id: "pro" },
        }),
      404,
      "payments_disabled",
    ],
    ["unknown portal asset", () => t.app.inject({ url: "/portal/assets/nope.js" }), 404, "not_found"],
  );

  it.each(cases.filter((c) => c[2] === 404).map(([name, run]) => ({ name, run })))(
    '$name: the 404 detail says "not found"',
    async ({ run }) => {
      const r = await run();
      expect(r.statusCode).toBe(404);
      expect(r.json().detail).toContain("not found");
    },
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

/** Errors raised before a route runs, over a real socket (inject cannot overflow Node's header parser). */
describe("one error body on a listening server", () => {
  let t: TestApp;
  let base: string;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp();
    base = await t.app.listen({ host: "127.0.0.1", port: 0 });
    port = Number(new URL(base).port);
  });
  afterAll(async () => t?.close());

  /** Writes a raw request and reads the whole answer (the server closes the connection after it). */
  function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      let data = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk) => {
        data += chunk;
      });
      socket.on("error", reject);
      socket.on("close", () => {
        const [head = "", body = ""] = data.split("\r\n\r\n");
        resolve({ status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body });
      });
      socket.write(request);
    });
  }

  const expectProblem = (status: number, contentType: string | null, body: string, code: string) => {
    expect(contentType).toContain("application/problem+json");
    const problem = JSON.parse(body);
    expect(problem).toMatchObject({ type: "about:blank", status, code });
    expect(typeof problem.detail).toBe("string");
    expect(typeof problem.request_id).toBe("string");
  };

  it("431: headers past Node's limit", async () => {
    const r = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(r.status).toBe(431);
    const type = /content-type: ([^\r\n]+)/.exec(r.headers)?.[1] ?? null;
    expectProblem(431, type, r.body, "header_too_large");
  });

  it("414: a path parameter past the router's limit", async () => {
    const r = await fetch(`${base}/transaction/${"a".repeat(300)}/events`);
    expect(r.status).toBe(414);
    expectProblem(414, r.headers.get("content-type"), await r.text(), "max_param_length");
  });

  it("413: a body past the body limit", async () => {
    const r = await fetch(`${base}/system/keys`, {
      method: "POST",
      headers: { ...t.auth(t.adminKey), "content-type": "application/json" },
      body: JSON.stringify({ user_id: "a".repeat(1_100_000), plan_id: "free" }),
    });
    expect(r.status).toBe(413);
    expectProblem(413, r.headers.get("content-type"), await r.text(), "ctp_body_too_large");
  });

  it("415: a body of an unsupported media type", async () => {
    const r = await fetch(`${base}/system/keys`, {
      method: "POST",
      headers: { ...t.auth(t.adminKey), "content-type": "text/csv" },
      body: "a,b",
    });
    expect(r.status).toBe(415);
    expectProblem(415, r.headers.get("content-type"), await r.text(), "ctp_invalid_media_type");
  });

  it("405: a known path under another method, with Allow", async () => {
    const r = await fetch(`${base}/healthz`, { method: "POST" });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET, HEAD");
    expectProblem(405, r.headers.get("content-type"), await r.text(), "method_not_allowed");
    // The server still answers after each of these.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
