/**
 * Access control for every route, from the route's own `config.access`:
 * public routes pass (with a per-IP allowance); user and admin routes need the same key in both
 * `X-API-Key` and `Authorization: Bearer`, a key that exists, is not revoked or expired, whose
 * allowed origins (when any) include the request's `Origin`, and whose plan allowance is not spent.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { databaseDisabled } from "../../lib/errors.ts";
import type { KeyWithPlan } from "../../lib/repos/keys.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import type { ApiDeps, App } from "../types.ts";
import { sendProblem } from "./errors.ts";

/** Counters consumed per request: rpm and rpd windows per key, one window per client IP on public routes. */
export interface RateLimits {
  consumeKey(key: KeyWithPlan): Promise<LimitResult>;
  consumePublic(ip: string): Promise<LimitResult>;
}

export interface LimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetMs: number;
}

async function makeLimiterFactory(
  pg: Pg | null,
  store: string,
): Promise<(points: number, duration: number, prefix: string) => RateLimiterAbstract> {
  const usePg = store === "postgres" || (store === "auto" && pg?.pool);
  if (usePg) {
    if (!pg?.pool) throw new Error("RATE_LIMIT_STORE=postgres needs POSTGRES_URL");
    const pool = pg.pool;
    return (points, duration, keyPrefix) => {
      const opts: ConstructorParameters<typeof RateLimiterPostgres>[0] = {
        storeClient: pool,
        storeType: "pool",
        tableName: "rate_limits",
        points,
        duration,
        keyPrefix,
        tableCreated: true, // created by postgres/0001 (no race on first use)
        clearExpiredByTimeout: true,
      };
      return new RateLimiterPostgres(opts);
    };
  }
  return (points, duration, keyPrefix) => new RateLimiterMemory({ points, duration, keyPrefix });
}

async function consume(limiter: RateLimiterAbstract, id: string, limit: number): Promise<LimitResult> {
  try {
    const res = await limiter.consume(id, 1);
    return { allowed: true, limit, remaining: res.remainingPoints, resetMs: res.msBeforeNext };
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) {
      return { allowed: false, limit, remaining: 0, resetMs: rejection.msBeforeNext };
    }
    throw rejection;
  }
}

export async function createRateLimits(deps: Pick<ApiDeps, "pg" | "config">): Promise<RateLimits> {
  const factory = await makeLimiterFactory(deps.pg, deps.config.RATE_LIMIT_STORE);
  // A plan change takes effect at once: limiters are cached per (window, allowance).
  const cache = new Map<string, RateLimiterAbstract>();
  const limiter = (window: "rpm" | "rpd" | "ip", points: number) => {
    const id = `${window}:${points}`;
    let l = cache.get(id);
    if (!l) {
      l = factory(points, window === "rpd" ? 86_400 : 60, `rl_${window}`);
      cache.set(id, l);
    }
    return l;
  };
  return {
    async consumeKey(key) {
      const minute = await consume(limiter("rpm", key.rpm), key.key_id, key.rpm);
      if (!minute.allowed) return minute;
      const day = await consume(limiter("rpd", key.rpd), key.key_id, key.rpd);
      return day.allowed && day.remaining >= minute.remaining ? minute : day;
    },
    consumePublic: (ip) => consume(limiter("ip", deps.config.PUBLIC_RPM), ip, deps.config.PUBLIC_RPM),
  };
}

function setLimitHeaders(reply: FastifyReply, r: LimitResult) {
  reply.header("x-ratelimit-limit", r.limit);
  reply.header("x-ratelimit-remaining", Math.max(0, r.remaining));
  reply.header("x-ratelimit-reset", Math.ceil(r.resetMs / 1000));
}

function tooMany(request: FastifyRequest, reply: FastifyReply, r: LimitResult, what: string) {
  reply.header("retry-after", Math.max(1, Math.ceil(r.resetMs / 1000)));
  return sendProblem(
    request,
    reply,
    429,
    "rate_limited",
    `Rate limit of ${r.limit} requests exceeded for ${what}; retry later.`,
  );
}

function bearer(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

export function registerAuth(app: App, deps: ApiDeps, limits: RateLimits): void {
  app.decorateRequest("apiKey", null);
  app.addHook("onRequest", async (request, reply) => {
    const config = request.routeOptions.config;
    const access = config.access;
    if (!access) return; // Routes without a config are the documentation's own static assets.
    if (config.db === "required" && !deps.pg) throw databaseDisabled();

    if (access === "public") {
      const r = await limits.consumePublic(request.ip);
      setLimitHeaders(reply, r);
      if (!r.allowed) return tooMany(request, reply, r, `client ${request.ip}`);
      return;
    }

    const headerKey = request.headers["x-api-key"];
    const xKey = Array.isArray(headerKey) ? headerKey[0] : headerKey;
    const bKey = bearer(request.headers.authorization);
    if (!xKey || !bKey) {
      return sendProblem(
        request,
        reply,
        401,
        "missing_api_key",
        "Send the API key in both X-API-Key and Authorization: Bearer headers.",
      );
    }
    if (xKey !== bKey) {
      return sendProblem(
        request,
        reply,
        401,
        "api_key_mismatch",
        "X-API-Key and Authorization: Bearer carry different keys.",
      );
    }
    // Without a database keys cannot be verified; the deployment's gateway is then the key check (README).
    if (!deps.keys) return;

    const key = await deps.keys.findByRawKey(xKey);
    if (!key) return sendProblem(request, reply, 401, "invalid_api_key", "Unknown API key.");
    if (key.revoked_at) return sendProblem(request, reply, 403, "key_revoked", "This API key was revoked.");
    if (key.valid_until && Date.parse(key.valid_until) <= Date.now()) {
      return sendProblem(request, reply, 403, "key_expired", `This API key expired at ${key.valid_until}.`);
    }
    const origin = request.headers.origin;
    if (origin && key.allowed_origins.length > 0 && !key.allowed_origins.includes(origin)) {
      return sendProblem(
        request,
        reply,
        403,
        "origin_not_allowed",
        `Origin ${origin} is not allowed for this API key.`,
      );
    }
    if (access === "admin" && key.level !== "admin") {
      return sendProblem(request, reply, 403, "admin_required", "This route needs an admin key.");
    }
    const r = await limits.consumeKey(key);
    setLimitHeaders(reply, r);
    if (!r.allowed) return tooMany(request, reply, r, `key ${key.key_prefix}`);
    request.apiKey = key;
  });
}
