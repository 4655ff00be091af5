/**
 * OpenAPI 3.0 generated from the route schemas, and an offline interactive reference at /docs
 * (Swagger UI assets are served from node_modules; no CDN). Every route is checked here: it must
 * declare an access level, a spec tag and response schemas, or the app refuses to start.
 */
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { RouteOptions } from "fastify";
import { ProblemRef } from "../schemas.ts";
import { type App, SPEC_TAGS } from "../types.ts";

const ERROR_STATUSES: Record<string, number[]> = {
  public: [400, 429, 500],
  user: [400, 401, 403, 429, 500],
  admin: [400, 401, 403, 429, 500],
};

const ACCESS_TEXT = {
  public: "Public: no key needed.",
  user: "User: a valid API key in both `X-API-Key` and `Authorization: Bearer`.",
  admin: "Admin: an admin API key in both `X-API-Key` and `Authorization: Bearer`.",
};

/** Adds what every operation documents: access level, security, and the Problem body on errors. */
export function decorateRoute(route: RouteOptions): void {
  const access = route.config?.access;
  const schema = (route.schema ?? {}) as Record<string, unknown> & {
    tags?: string[];
    response?: Record<string, unknown>;
    hide?: boolean;
  };
  if (!access) {
    if (schema.hide) return;
    throw new Error(`Route ${route.method} ${route.url} declares no access level (config.access)`);
  }
  const tag = schema.tags?.[0];
  if (!tag || !(SPEC_TAGS as readonly string[]).includes(tag)) {
    throw new Error(`Route ${route.method} ${route.url} has no spec tag (got ${String(tag)})`);
  }
  if (!schema.response || !Object.keys(schema.response).some((s) => s.startsWith("2"))) {
    throw new Error(`Route ${route.method} ${route.url} declares no success response schema`);
  }
  const response = { ...schema.response };
  const statuses = [...(ERROR_STATUSES[access] ?? [])];
  if (route.config?.db === "required") statuses.push(503);
  for (const status of statuses)
    response[status] ??= { description: "Error (problem details).", ...ProblemRef };
  schema.response = response;
  schema["x-access-level"] = access;
  schema.security = access === "public" ? [] : [{ apiKey: [], bearerAuth: [] }];
  schema.description =
    `${String(schema.description ?? schema.summary ?? "")}\n\nAccess: ${ACCESS_TEXT[access]}`.trim();
  route.schema = schema;
}

export async function registerOpenApi(app: App, stage: string): Promise<void> {
  app.addHook("onRoute", decorateRoute);
  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: "Alephium indexer and normalized-events API",
        version: "1.0.0",
        description: [
          "Normalized events, tokens, prices, timeseries and decorated explorer objects for Alephium (chain id 8738).",
          "",
          "**Errors.** Every error is `application/problem+json` (RFC 9457) with a stable `code`; see the `Problem` schema.",
          "**Authentication.** Non-public routes need the same key in `X-API-Key` and `Authorization: Bearer`.",
          "Missing either header or different values: 401 `missing_api_key` / `api_key_mismatch`; unknown key: 401",
          "`invalid_api_key`; revoked, expired, or an `Origin` header outside a non-empty `allowed_origins`: 403.",
          "Requests without an `Origin` header (servers, scripts) are not origin-checked: origins restrict browsers.",
          "**Rate limits.** Each key's plan allows `rpm` requests per minute and `rpd` per day; public routes allow a",
          "per-IP amount per minute. Responses carry `x-ratelimit-limit`, `x-ratelimit-remaining`, `x-ratelimit-reset`",
          "(seconds); beyond the allowance the answer is 429 `rate_limited` with `Retry-After` (seconds).",
          "**Stages.** Every path is also served under `/prod` or `/dev` (the stage this deployment runs).",
        ].join("\n"),
      },
      servers: [{ url: "/" }, { url: `/${stage}` }],
      tags: SPEC_TAGS.map((name) => ({ name })),
      components: {
        securitySchemes: {
          apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
          bearerAuth: { type: "http", scheme: "bearer" },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { deepLinking: true }, staticCSP: true });
}
