/**
 * CORS for browser pages on other origins, through @fastify/cors (docs/api.md#browsers-cors).
 *
 * - Public routes (and the documentation's assets): the origins of CORS_PUBLIC_ORIGINS (`*` by default).
 * - User and admin routes: every origin is echoed here, with `Vary: Origin`; the auth hook, once it knows the
 *   key, removes `Access-Control-Allow-Origin` when the key's non-empty `allowed_origins` lacks the request's
 *   `Origin` (and answers 403 `origin_not_allowed`), so the browser keeps that answer from the page.
 * - Preflights carry no key: one for a user or admin route is answered for any origin, and the key's origins
 *   are enforced on the request that follows. The preflight's route is found by the requested method and path.
 * - The admin portal's session routes get no CORS headers (same-origin pages only).
 * - An OPTIONS request that is not a preflight (no `Origin` or no `Access-Control-Request-Method`) goes to the
 *   not-found handler: 405 with `Allow` on a known path, as for any other method a path lacks.
 */
import cors, { type FastifyCorsOptions } from "@fastify/cors";
import type { FastifyRequest, RouteOptions } from "fastify";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import type { AccessLevel, App } from "../types.ts";

/** The request headers browsers may send: the key's two headers, JSON bodies, the stream's resume id. */
export const CORS_ALLOWED_HEADERS = [
  "X-API-Key",
  "Authorization",
  "Content-Type",
  "Last-Event-ID",
  "X-Request-ID",
];
/** Response headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  "X-Request-ID",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
  "Allow",
];
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

export interface CorsSettings {
  /** CORS_PUBLIC_ORIGINS: `*`, `none` or comma-separated origins. */
  publicOrigins: readonly string[];
  /** CORS_MAX_AGE_S. */
  maxAgeS: number;
}

/** `*` → any origin; `none` → none; else the listed origins. */
function publicOriginOption(origins: readonly string[]): FastifyCorsOptions["origin"] {
  if (origins[0] === "*") return "*";
  if (origins.length === 0 || origins[0]?.toLowerCase() === "none") return false;
  return [...origins];
}

/** The access level of the route a request (or, for a preflight, the request it announces) goes to. */
function accessLookup(app: App): (request: FastifyRequest) => AccessLevel | undefined {
  const router = FindMyWay({ maxParamLength: 256 });
  app.addHook("onRoute", (route: RouteOptions) => {
    if (route.url === "*") return;
    for (const method of [route.method].flat() as HTTPMethod[]) {
      if (method === "OPTIONS") continue;
      router.on(method, route.url, () => undefined, route.config?.access);
    }
  });
  return (request) => {
    if (request.method !== "OPTIONS") return request.routeOptions.config.access;
    const wanted = request.headers["access-control-request-method"];
    const path = request.url.split("?")[0] ?? "/";
    const method = (typeof wanted === "string" ? wanted.toUpperCase() : "GET") as HTTPMethod;
    return router.find(method, path)?.store as AccessLevel | undefined;
  };
}

export async function registerCors(app: App, settings: CorsSettings): Promise<void> {
  const publicOrigin = publicOriginOption(settings.publicOrigins);
  const accessOf = accessLookup(app);
  const common = {
    methods: METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: settings.maxAgeS,
  };
  await app.register(cors, {
    hook: "onRequest",
    delegator: (request, callback) => {
      const isPreflight =
        request.method === "OPTIONS" &&
        request.headers.origin !== undefined &&
        request.headers["access-control-request-method"] !== undefined;
      // Not a preflight: left to the router (405 with Allow), never @fastify/cors's text/plain 400.
      if (request.method === "OPTIONS" && !isPreflight) return callback(null, { origin: false });
      const access = accessOf(request);
      if (access === "session") return callback(null, { origin: false });
      // The key is checked on the request itself (api/plugins/auth.ts withdraws the header on a refused origin).
      if (access === "user" || access === "admin") return callback(null, { ...common, origin: true });
      callback(null, { ...common, origin: publicOrigin });
    },
  });
}
