// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../api/app.ts";
import { createApiDeps } from "../../api/deps.ts";
import { loadConfig } from "../../lib/config.ts";
import { hashKey } from "../../lib/keys/repo.ts";
import { createLogger } from "../../lib/logger.ts";
import { openTestCh, openTestPg, type TestCh, type TestPg } from "../helpers/stores.ts";

describe("raw API keys stay secret", () => {
  let pg: TestPg;
  let ch: TestCh;
  const lines: string[] = [];
  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
  });
  afterAll(async () => {
    await pg?.close();
    await ch?.close();
  });

  it("appear neither in the database nor in the logs", async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger({ level: "trace", stream });
    // The explorer is never called here; a closed local port keeps the test off the network.
    const deps = createApiDeps(
      loadConfig({ EXPLORER_URL: "http://127.0.0.1:9" }),
      { pg: pg.pg, ch: ch.ch },
      log,
    );
    const keys = deps.keys!;
    const app = await buildApp(deps);
    const admin = await keys.createKey({ userId: "root", planId: "enterprise", level: "admin" });
    const headers = { "x-api-key": admin.key, authorization: `Bearer ${admin.key}` };
    const created = await app.inject({
      method: "POST",
      url: "/system/keys",
      headers,
      payload: { userId: "alice", planId: "pro" },
    });
    expect(created.statusCode).toBe(200);
    const raw = created.json().key as string;
    expect(raw).toMatch(/^alk_[A-Za-z0-9_-]{43}$/);
    // Use both keys so that they pass through auth, logging and error paths.
    expect(
      (
        await app.inject({
          url: "/system/keys",
          headers: { "x-api-key": raw, authorization: `Bearer ${raw}` },
        })
      ).statusCode,
    ).toBe(200);
    await app.inject({ url: "/system/keys", headers: { "x-api-key": raw, authorization: "Bearer wrong" } });
    await app.close();

    const dump = JSON.stringify(
      await pg.pg.query("dump", "SELECT row_to_json(k)::text AS row FROM api_keys k"),
    );
    expect(dump).toContain(hashKey(raw));
    for (const secret of [raw, admin.key]) {
      expect(dump).not.toContain(secret);
      expect(lines.join("")).not.toContain(secret);
      // Not even the secret part after the displayed prefix.
      expect(lines.join("")).not.toContain(secret.slice(12));
    }
    // One debug line per request, with the request id: three requests, three lines.
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "Request completed.");
    expect(requests.map((l) => [l.level, l.method, l.route, l.status_code])).toEqual([
      [20, "POST", "/system/keys", 200],
      [20, "GET", "/system/keys", 200],
      [20, "GET", "/system/keys", 401],
    ]);
    for (const l of requests) {
      expect(typeof l.request_id).toBe("string");
      expect(typeof l.duration_ms).toBe("number");
    }
    expect(lines.filter((l) => l.includes("incoming request") || l.includes("request completed"))).toEqual(
      [],
    );
  });
});
