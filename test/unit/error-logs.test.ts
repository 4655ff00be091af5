/**
 * Error answers are logged at the level their cause deserves (docs/operations.md#logs): a client's 4xx at
 * info, a feature that is off (503 `*_not_configured`) at warn, a failure of the service at error, and every
 * warn or error line names what to do.
 */
import { Writable } from "node:stream";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorLogPolicy, registerErrorHandling } from "../../api/plugins/errors.ts";
import type { App } from "../../api/types.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { createLogger } from "../../lib/logger.ts";

interface Line {
  level: number;
  msg: string;
  status?: number;
  code?: string;
  action?: string;
  err?: { message: string; stack?: string };
}

const INFO = 30;
const WARN = 40;
const ERROR = 50;

describe("error answers' log levels", () => {
  const lines: Line[] = [];
  let app: ReturnType<typeof Fastify>;
  beforeAll(async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const text of String(chunk).split("\n")) if (text.trim()) lines.push(JSON.parse(text) as Line);
        done();
      },
    });
    app = Fastify({ loggerInstance: createLogger({ level: "info", stream }) });
    registerErrorHandling(app as unknown as App);
    app.get("/missing", async () => {
      throw notFound("Token xyz not found");
    });
    app.get("/off", async () => {
      throw new AppError("wireguard_not_configured", "WG_SERVER_PUBLIC_KEY is not set.", { status: 503 });
    });
    app.get("/broken", async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'x')");
    });
    await app.ready();
  });
  afterAll(async () => app?.close());

  const linesOf = (code: string) => lines.filter((l) => l.code === code);

  it("logs a 404 at info, with no error line", async () => {
    const res = await app.inject({ url: "/missing" });
    expect(res.statusCode).toBe(404);
    const logged = linesOf("not_found");
    expect(logged).toHaveLength(1);
    expect(logged[0]?.level).toBe(INFO);
    expect(lines.some((l) => l.level >= WARN)).toBe(false);
  });

  it("logs a 503 not-configured at warn, naming what to do", async () => {
    const res = await app.inject({ url: "/off" });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe("wireguard_not_configured");
    const logged = linesOf("wireguard_not_configured");
    expect(logged).toHaveLength(1);
    expect(logged[0]?.level).toBe(WARN);
    expect(logged[0]?.action).toMatch(/configuration/);
    expect(lines.some((l) => l.level >= ERROR)).toBe(false);
  });

  it("logs a real 500 at error, with the stack and what to do", async () => {
    const res = await app.inject({ url: "/broken" });
    expect(res.statusCode).toBe(500);
    expect(res.json().detail).toBe("Internal server error.");
    const logged = linesOf("internal_error");
    expect(logged).toHaveLength(1);
    expect(logged[0]?.level).toBe(ERROR);
    expect(logged[0]?.err?.stack).toMatch(/TypeError/);
    expect(logged[0]?.action).toMatch(/report/);
  });

  it("keeps upstream outages at warn and other 5xx at error", () => {
    expect(errorLogPolicy(502, "upstream_unavailable").level).toBe("warn");
    expect(errorLogPolicy(503, "database_not_configured").level).toBe("warn");
    expect(errorLogPolicy(500, "internal_error").level).toBe("error");
    expect(errorLogPolicy(429, "rate_limited").level).toBe("info");
  });
});
