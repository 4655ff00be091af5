// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/**
 * Decorated explorer routes when the explorer fails (down, timing out, 5xx, odd bodies) and in
 * no-database mode; the explorer client's classification of upstream answers.
 */
import { createServer } from "node:net";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import { type DevnetServer, startDevnetServer } from "../../devnet/server.ts";
import { createExplorerClient } from "../../lib/explorer-client.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { quietLog } from "../helpers/stores.ts";

/** A local port nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function routesOf(chain: DevnetChain): string[] {
  const token = chain.tokens()[0]!;
  return [
    `/transaction/${token.mintTxId}`,
    `/block/${token.mintBlockHash}`,
    `/block/${token.mintBlockHash}/transactions`,
    `/addresses/${token.minter}/transactions`,
    `/addresses/${token.minter}/tokens/${token.id}/transactions`,
    `/token/${token.id}/transactions`,
  ];
}

describe("decorated explorer routes when the explorer fails", () => {
  let chain: DevnetChain;
  let server: DevnetServer;
  let t: TestApp;
  let down: TestApp;

  beforeAll(async () => {
    chain = createDevnetChain({ seed: 5 });
    chain.advance(80);
    server = await startDevnetServer(chain, { port: 0 });
    t = await createTestApp({ explorerUrl: server.explorerUrl, env: { EXPLORER_TIMEOUT_MS: "300" } });
    down = await createTestApp({
      // Same stores (one chDB per process); `close` of a test app leaves given stores open.
      stores: {
        pg: { pg: t.deps.pg!, url: "", close: async () => {} },
        ch: { ch: t.deps.ch!, dataDir: "", close: async () => {} },
      },
      explorerUrl: `http://127.0.0.1:${await closedPort()}`,
    });
  });
  afterAll(async () => {
    await down?.close();
    await t?.close();
    await server?.close();
  });

  const expect502 = async (app: TestApp, url: string, detail: RegExp) => {
    const r = await app.app.inject({ url, headers: app.auth(app.userKey) });
    expect(r.statusCode, url).toBe(502);
    expect(r.headers["content-type"]).toContain("application/problem+json");
    expect(r.json(), url).toMatchObject({ status: 502, code: "upstream_unavailable" });
    expect(r.json().detail, url).toMatch(detail);
  };

  it("answers 502 when the explorer is unreachable", async () => {
    for (const url of routesOf(chain)) await expect502(down, url, /unreachable/);
  });

  it("answers 502 when the explorer answers 500", async () => {
    server.setFailureMode("explorer-500");
    try {
      for (const url of routesOf(chain)) await expect502(t, url, /answered 500/);
    } finally {
      server.setFailureMode("none");
    }
  });

  it("answers 502 within the timeout when the explorer does not answer", async () => {
    server.setFailureMode("explorer-timeout");
    try {
      for (const url of routesOf(chain)) {
        const started = Date.now();
        await expect502(t, url, /did not answer within 300 ms/);
        expect(Date.now() - started).toBeLessThan(3_000);
      }
    } finally {
      server.setFailureMode("none");
    }
    // The pool recovers once the explorer answers again.
    const r = await t.app.inject({ url: routesOf(chain)[0]!, headers: t.auth(t.userKey) });
    expect(r.statusCode).toBe(200);
  });
});

describe("decorated explorer routes without the database", () => {
  let chain: DevnetChain;
  let server: DevnetServer;
  let t: TestApp;

  beforeAll(async () => {
    chain = createDevnetChain({ seed: 5 });
    chain.advance(80);
    server = await startDevnetServer(chain, { port: 0 });
    t = await createTestApp({ databases: false, explorerUrl: server.explorerUrl });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  it("serves the transaction and the block as the plain explorer objects, never 503", async () => {
    const token = chain.tokens()[0]!;
    for (const [ours, theirs] of [
      [`/transaction/${token.mintTxId}`, `/transactions/${token.mintTxId}`],
      [`/block/${token.mintBlockHash}`, `/blocks/${token.mintBlockHash}`],
    ] as const) {
      const upstream = await (await fetch(`${server.explorerUrl}${theirs}`)).text();
      const r = await t.app.inject({ url: ours, headers: t.auth(t.userKey) });
      expect(r.statusCode, ours).toBe(200);
      expect(r.body).toBe(upstream);
      expect(r.json()).not.toHaveProperty("ext");
    }
  });

  it("answers 503 on the decorated lists without calling the explorer", async () => {
    server.resetRequestCounts();
    for (const url of routesOf(chain).slice(2)) {
      const r = await t.app.inject({ url, headers: t.auth(t.userKey) });
      expect(r.statusCode, url).toBe(503);
      expect(r.json()).toMatchObject({ code: "database_not_configured" });
    }
    expect(server.requestCount("/explorer")).toBe(0);
  });

  it("still refuses calls without a key", async () => {
    const r = await t.app.inject({ url: routesOf(chain)[0]! });
    expect(r.statusCode).toBe(401);
  });
});

describe("explorer client classification", () => {
  const upstream = Fastify({ logger: false });
  let base = "";
  beforeAll(async () => {
    upstream.get("/x/transactions/:id", async (req, reply) => {
      const id = (req.params as { id: string }).id;
      if (id === "bad") return reply.code(400).send({ detail: "Invalid value for: path parameter" });
      if (id === "gone")
        return reply.code(404).send({ detail: "Transaction gone not found", resource: "tx" });
      if (id === "busy") return reply.code(503).send({ detail: "Service unavailable" });
      if (id === "limited") return reply.code(429).send({ detail: "slow down" });
      if (id === "html") return reply.type("text/html").send("<html>oops</html>");
      if (id === "array") return [];
      return reply.type("application/json").send(`{"hash":"${id}","z":1,"a":{"n":12345678901234567890}}`);
    });
    upstream.get("/x/tokens/:id/transactions", async () => ({ not: "a list" }));
    base = `${await upstream.listen({ host: "127.0.0.1", port: 0 })}/x`;
  });
  afterAll(async () => upstream.close());

  const client = () => createExplorerClient({ baseUrl: base, timeoutMs: 1000, log: quietLog });

  it("returns status, raw body and parsed JSON on success, under the base URL's path prefix", async () => {
    const c = client();
    const r = await c.transaction("ok");
    expect(r.status).toBe(200);
    expect(r.body).toBe('{"hash":"ok","z":1,"a":{"n":12345678901234567890}}');
    expect(Object.keys(r.json)).toEqual(["hash", "z", "a"]);
    await c.close();
    await c.close();
  });

  it("maps 400 to 400, 404 to 404 with the explorer's detail, everything else to 502", async () => {
    const c = client();
    const status = async (id: string) =>
      c.transaction(id).then(
        () => ({ status: 200 }) as { status: number; message?: string; details?: unknown },
        (e: { status: number; message: string; details?: unknown }) => e,
      );
    expect(await status("bad")).toMatchObject({ status: 400, message: "Invalid value for: path parameter" });
    expect(await status("gone")).toMatchObject({
      status: 404,
      message: "Transaction gone not found",
      details: { resource: "tx" },
    });
    expect(await status("busy")).toMatchObject({ status: 502, message: expect.stringMatching(/503/) });
    expect(await status("limited")).toMatchObject({ status: 502 });
    expect(await status("html")).toMatchObject({ status: 502, message: expect.stringMatching(/unexpected/) });
    expect(await status("array")).toMatchObject({ status: 502 });
    await expect(c.tokenTransactions("t", { page: 1, limit: 20 })).rejects.toMatchObject({ status: 502 });
    await c.close();
  });

  it("answers 502 when no explorer is configured", async () => {
    const c = createExplorerClient({ baseUrl: "", timeoutMs: 1000, log: quietLog });
    await expect(c.block("ab".repeat(32))).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/EXPLORER_URL/),
    });
    await c.close();
  });
});
