/**
 * Access control for every route, from the route's own `config.access`:
 * a banned client address answers 403 `banned` on every request (public routes, documentation and
 * unknown paths included), before anything else; public routes pass (with a per-IP allowance); user
 * and admin routes need the same key in both `X-API-Key` and `Authorization: Bearer`, a key that
 * exists and whose owner is not banned, that is not revoked or expired, whose allowed origins (when
 * any) include the request's `Origin`, and whose plan allowance is not spent. A route with
 * `config.keyInQuery` (the event stream, for browsers' EventSource) also takes the key as `api_key` in the query. The client address is
 * `request.ip`: the X-Forwarded-For address only with TRUST_PROXY. Without a database, user and admin routes
 * take only the keys of API_KEYS_FILE, and answer 503 `key_check_unavailable` without one: a key is never
 * let through unchecked. With AUTO_BAN_AFTER_429, an address
 * answered that many 429s within AUTO_BAN_WINDOW_S is banned for AUTO_BAN_DURATION_S. Every request
 * charged to a key's allowance (429s included) is counted for the key's usage figures, in memory
 * (lib/usage/recorder.ts flushes the counts to Postgres every USAGE_FLUSH_MS).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import type { Ban } from "../../lib/bans/repo.ts";
import { databaseDisabled } from "../../lib/errors.ts";
import { readKeyFile } from "../../lib/keys/file.ts";
import type { KeyWithPlan } from "../../lib/keys/repo.ts";
import { clientAddress } from "../../lib/net.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import type { ApiDeps, App } from "../types.ts";
import { sendProblem } from "./errors.ts";

/** Counters consumed per request: rpm and rpd windows per key, one window per client IP on public routes. */
export interface RateLimits {
  consumeKey(key: KeyWithPlan): Promise<LimitResult>;
  consumePublic(ip: string): Promise<LimitResult>;
  /** Counts a 429 answered to a client address, `points` allowed per `windowS` (automatic bans). */
  consumeRateLimited?(ip: string, points: number, windowS: number): Promise<LimitResult>;
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
  const limiter = (window: "rpm" | "rpd" | "ip" | "429", points: number, seconds?: number) => {
    const id = `${window}:${points}:${seconds ?? ""}`;
    let l = cache.get(id);
    if (!l) {
      l = factory(points, seconds ?? (window === "rpd" ? 86_400 : 60), `rl_${window}`);
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
    consumeRateLimited: (ip, points, windowS) => consume(limiter("429", points, windowS), ip, points),
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

/** 403 `banned`, with the ban's reason and expiry in `details`. */
function banned(request: FastifyRequest, reply: FastifyReply, ban: Ban, who: string) {
  const until = ban.expires_at ? `until ${ban.expires_at}` : "with no end";
  return sendProblem(request, reply, 403, "banned", `${who} is banned ${until}: ${ban.reason}`, {
    details: { kind: ban.kind, reason: ban.reason, expires_at: ban.expires_at, ban_id: ban.ban_id },
  });
}

function bearer(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

/**
 * 403 `banned` for every request from a banned client address, whatever the route (documentation, unknown
 * paths and CORS preflights too): registered before every other request hook.
 */
export function registerBanCheck(app: App, deps: Pick<ApiDeps, "bans">): void {
  app.addHook("onRequest", async (request, reply) => {
    const ipBan = deps.bans?.matchIp(request.ip);
    if (ipBan) return banned(request, reply, ipBan, `Client address ${request.ip}`);
  });
}

export function registerAuth(app: App, deps: ApiDeps, limits: RateLimits): void {
  const { AUTO_BAN_AFTER_429: autoAfter, AUTO_BAN_WINDOW_S: autoWindow } = deps.config;
  const autoCounter =
    autoAfter > 0 && !limits.consumeRateLimited
      ? new RateLimiterMemory({ points: autoAfter, duration: autoWindow, keyPrefix: "rl_429" })
      : null;
  /** Counts a 429 for the client address; bans it once AUTO_BAN_AFTER_429 were answered in the window. */
  const countRateLimited = async (request: FastifyRequest) => {
    const guard = deps.bans;
    const client = clientAddress(request.ip);
    if (autoAfter === 0 || !guard || !client) return;
    const r = autoCounter
      ? await consume(autoCounter, client.address, autoAfter)
      : await limits.consumeRateLimited!(client.address, autoAfter, autoWindow);
    if (r.allowed && r.remaining > 0) return;
    try {
      const ban = await guard.add({
        kind: "ip",
        value: client.address,
        reason: `automatic: ${autoAfter} rate-limited requests in ${autoWindow} s`,
        expiresAt: new Date(Date.now() + deps.config.AUTO_BAN_DURATION_S * 1000).toISOString(),
        createdBy: "automatic",
      });
      request.log.warn({ ban_id: ban.ban_id, ip: ban.value }, "Client address banned automatically.");
    } catch (error) {
      if ((error as { code?: string }).code !== "already_banned") {
        request.log.error({ err: error }, "Automatic ban failed.");
      }
    }
  };
  const rateLimited = async (request: FastifyRequest, reply: FastifyReply, r: LimitResult, what: string) => {
    await countRateLimited(request);
    return tooMany(request, reply, r, what);
  };

  const fileKeys = deps.keys ? null : readKeyFile(deps.config.API_KEYS_FILE);
  app.decorateRequest("apiKey", null);
  app.addHook("onRequest", async (request, reply) => {
    const config = request.routeOptions.config;
    const access = config.access;
    if (!access) return; // Routes without a config are the documentation's own static assets.
    if (config.db === "required" && !deps.pg) throw databaseDisabled();
    // The portal's own routes check their session cookie themselves (api/routes/portal); a key opens none.
    if (access === "session") return;

    if (access === "public") {
      const r = await limits.consumePublic(request.ip);
      setLimitHeaders(reply, r);
      if (!r.allowed) return rateLimited(request, reply, r, `client ${request.ip}`);
      return;
    }

    const headerKey = request.headers["x-api-key"];
    let xKey = Array.isArray(headerKey) ? headerKey[0] : headerKey;
    let bKey = bearer(request.headers.authorization);
    // Browsers' EventSource sends no headers: such a route takes the key as `api_key` in the query instead.
    const queryKey = config.keyInQuery ? (request.query as { api_key?: unknown }).api_key : undefined;
    if (!xKey && !bKey && typeof queryKey === "string" && queryKey) xKey = bKey = queryKey;
    if (!xKey || !bKey) {
      return sendProblem(
        request,
        reply,
        401,
        "missing_api_key",
        config.keyInQuery
          ? "Send the API key in both X-API-Key and Authorization: Bearer headers, or as the api_key query parameter."
          : "Send the API key in both X-API-Key and Authorization: Bearer headers.",
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
    // Without a database: the keys of API_KEYS_FILE, else none at all (docs/api.md#no-database-mode).
    if (!deps.keys) {
      if (!fileKeys) {
        return sendProblem(
          request,
          reply,
          503,
          "key_check_unavailable",
          "API keys cannot be checked on this deployment: it runs without a database and without API_KEYS_FILE.",
        );
      }
      const level = fileKeys.levelOf(xKey);
      if (!level) return sendProblem(request, reply, 401, "invalid_api_key", "Unknown API key.");
      if (access === "admin" && level !== "admin") {
        return sendProblem(request, reply, 403, "admin_required", "This route needs an admin key.");
      }
      return;
    }

    const key = await deps.keys.findByRawKey(xKey);
    if (!key) return sendProblem(request, reply, 401, "invalid_api_key", "Unknown API key.");
    const userBan = deps.bans?.matchUser(key.user_id);
    if (userBan) return banned(request, reply, userBan, `User ${key.user_id}`);
    if (key.revoked_at) return sendProblem(request, reply, 403, "key_revoked", "This API key was revoked.");
    if (key.valid_until && Date.parse(key.valid_until) <= Date.now()) {
      return sendProblem(request, reply, 403, "key_expired", `This API key expired at ${key.valid_until}.`);
    }
    const origin = request.headers.origin;
    if (origin && key.allowed_origins.length > 0 && !key.allowed_origins.includes(origin)) {
      // The CORS hook echoed the origin before the key was known: withdrawn, the browser keeps this answer from the page.
      reply.removeHeader("access-control-allow-origin");
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
    deps.usage?.count(key.key_id, !r.allowed);
    setLimitHeaders(reply, r);
    if (!r.allowed) return rateLimited(request, reply, r, `key ${key.key_prefix}`);
    request.apiKey = key;
  });
}
