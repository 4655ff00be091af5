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

/**
 * The errors every operation of an access level can answer: 400 (input), 403 `banned` (a banned client address,
 * on every route), 429 (rate limits), 500; key routes also 401 (missing, mismatched or unknown key), 403 (revoked,
 * expired, origin, admin only) and 503 `key_check_unavailable` (no database and no API_KEYS_FILE). Routes that
 * need the database add 503, routes that take a body 413 and 415 (decorateRoute).
 */
const ERROR_STATUSES: Record<string, number[]> = {
  public: [400, 403, 429, 500],
  user: [400, 401, 403, 429, 500, 503],
  admin: [400, 401, 403, 429, 500, 503],
};

const ACCESS_TEXT: Record<string, string> = {
  session: "Admin portal session (cookie), not an API route.",
  public: "Public: no key needed.",
  user: "User: a valid API key in both `X-API-Key` and `Authorization: Bearer`.",
  admin: "Admin: an admin API key in both `X-API-Key` and `Authorization: Bearer`.",
};

/**
 * Stable operationId from method and path (`GET /token/{tokenid}/details` → `getTokenByTokenidDetails`),
 * the method names of generated clients. A route may give its own `schema.operationId`.
 */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .split("/")
    .filter(Boolean)
    .flatMap((part) => (part.startsWith(":") ? ["by", part.slice(1)] : [part]))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  const pascal = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
  return `${method.toLowerCase()}${pascal}`;
}

type RouteSchema = Record<string, unknown> & {
  tags?: string[];
  response?: Record<string, unknown>;
  hide?: boolean;
  description?: string;
  summary?: string;
  operationId?: string;
};

/**
 * What every operation documents: access level, security, operationId and the Problem body on errors.
 * It builds a new schema object: Fastify hands the GET route's schema object to its HEAD twin too, and
 * changing that object in place documented everything twice ("Access: …" appended once per method).
 */
export function decorateRoute(route: RouteOptions, operationIds: Set<string>): void {
  const access = route.config?.access;
  const schema = (route.schema ?? {}) as RouteSchema;
  if (!access) {
    if (schema.hide) return;
    throw new Error(`Route ${route.method} ${route.url} declares no access level (config.access)`);
  }
  // The admin portal's pages and endpoints are for its browser pages, not API clients: out of the document.
  if (access === "session" || schema.hide) {
    if (!schema.hide) throw new Error(`Route ${route.method} ${route.url}: a session route must be hidden`);
    return;
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
  // The body parser: a body over the size limit (413) or of a content type the API does not read (415).
  if ([route.method].flat().some((m) => m !== "GET" && m !== "HEAD")) statuses.push(413, 415);
  for (const status of statuses)
    response[status] ??= { description: "Error (problem details).", ...ProblemRef };
  const method = [route.method].flat().join("_");
  const operationId = schema.operationId ?? operationIdOf(method, route.url ?? "");
  // HEAD twins of GET routes are left out of the document (@fastify/swagger's default).
  if (method !== "HEAD") {
    if (operationIds.has(operationId)) {
      throw new Error(`Route ${route.method} ${route.url}: operationId ${operationId} is already used`);
    }
    operationIds.add(operationId);
  }
  const decorated: RouteSchema = {
    ...schema,
    operationId,
    response,
    "x-access-level": access,
    security: access === "public" ? [] : [{ apiKey: [], bearerAuth: [] }],
    description:
      `${String(schema.description ?? schema.summary ?? "")}\n\nAccess: ${ACCESS_TEXT[access]}`.trim(),
  };
  route.schema = decorated;
}

/** The description of every spec tag (SPEC.md, "What the service does", point 3). */
export const TAG_DESCRIPTIONS: Record<(typeof SPEC_TAGS)[number], string> = {
  Addresses: "Address labels, and the decorated explorer transactions of an address.",
  Category: "Token and dapp categories: list with counts, add or re-activate, soft delete.",
  Chain:
    "Chains known to the registry, the indexer's position per Alephium chain, and reindex jobs (admin): re-reading or reprocessing a range of blocks, with their progress and cancellation.",
  Contracts: "The registry entry of a contract and the dapp it is attributed to.",
  NFT: "NFT collections discovered on chain and their tokens.",
  Dapps: "Dapps: list, add, update, soft delete, and their categories (at most 3).",
  "dapps:furnace": "Furnace dapp data (cursor pagination through `nextKey`).",
  "dapps:chainreaction": "Chain Reaction dapp data (cursor pagination through `nextKey`).",
  "dapps:elexium": "Elexium dapp data (cursor pagination through `nextKey`).",
  "dapps:alphbanx": "AlphBanx dapp data (cursor pagination through `nextKey`; needs a user key).",
  "dapps:dia-oracle": "DIA oracle dapp data (cursor pagination through `nextKey`).",
  Events:
    "Normalized events across all transactions, in list and poll modes, and pushed live as Server-Sent Events (GET /events/stream, resumable with Last-Event-ID); read-only SQL over the versioned api_v1_* views (POST /sql).",
  Series: "Timeseries instances, their scales, charts and (admin) storage inspection.",
  Token: "The token registry: list with filters, details with bridged rows, admin update and delete.",
  Price: "Price sources, watched pairs, spot prices and OHLCV candles.",
  Transaction: "Decorated explorer transactions and the normalized events of a transaction.",
  Blocks: "Decorated explorer blocks and their transactions.",
  Keys: "API keys: creation (admin), listing, allowed origins, plan, revocation, usage figures.",
  Plans: "Plans: per-minute and per-day allowances, validity and price.",
  Payment: "Payments that extend a key's validity.",
  Banned:
    "Bans of key owners, Telegram users and IP addresses or ranges: a banned client gets 403 `banned` with the reason and expiry.",
  Telegram: "The messaging bot: its admins, and the webhook that receives its updates.",
  Webhook:
    "Outbound webhooks of key owners: the normalized events matching a webhook's filters POSTed in signed batches (Standard Webhooks) to its URL, with enable, disable and a delivery log; and the Telegram bot's inbound webhook (also under Telegram).",
  WireGuard:
    "Private access over WireGuard for key owners: peers with their client configuration (shown once), revocation, and the server's [Peer] sections for `wg syncconf`.",
  Docs: "This documentation, health, readiness, status and metrics.",
};

interface OpenApiDoc {
  paths?: Record<
    string,
    Record<
      string,
      {
        requestBody?: { required?: boolean; content?: Record<string, { schema?: { nullable?: boolean } }> };
        parameters?: { in: string; required?: boolean; schema?: { default?: unknown } }[];
      }
    >
  >;
}

export async function registerOpenApi(app: App, stage: string): Promise<void> {
  const operationIds = new Set<string>();
  app.addHook("onRoute", (route) => decorateRoute(route, operationIds));
  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: "Alephium indexer and normalized-events API",
        version: "1.0.0",
        // Proprietary, as package.json says; the URL explains the term (Redocly's info-license-strict wants one).
        license: {
          name: "UNLICENSED (proprietary: no license is granted)",
          url: "https://docs.npmjs.com/cli/v11/configuring-npm/package-json#license",
        },
        description: [
          "Normalized events, tokens, prices, timeseries and decorated explorer objects for Alephium (chain id 8738).",
          "",
          "**Errors.** Every error is `application/problem+json` (RFC 9457) with a stable `code`; see the `Problem` schema.",
          "**Authentication.** Non-public routes need the same key in `X-API-Key` and `Authorization: Bearer`.",
          "Missing either header or different values: 401 `missing_api_key` / `api_key_mismatch`; unknown key: 401",
          "`invalid_api_key`; revoked, expired, or an `Origin` header outside a non-empty `allowed_origins`: 403.",
          "Requests without an `Origin` header (servers, scripts) are not origin-checked: origins restrict browsers.",
          "Keys are always checked: a deployment without a database takes only the keys of its API_KEYS_FILE, and",
          "answers 503 `key_check_unavailable` on every key route without one. A banned client gets 403 `banned` on every route.",
          "**Browsers (CORS).** Preflights are answered for every route (they carry no key: the key's origins are",
          "checked on the request that follows). User and admin routes echo `Origin` in `Access-Control-Allow-Origin`",
          "(with `Vary: Origin`) when the key's `allowed_origins` is empty or lists it, and answer 403",
          "`origin_not_allowed` without that header otherwise; public routes allow the origins of CORS_PUBLIC_ORIGINS",
          "(any by default); the admin portal's routes none. `GET /events/stream` also takes the key as `api_key` in the",
          "query, for `EventSource`, which cannot send headers.",
          "**Rate limits.** Each key's plan allows `rpm` requests per minute and `rpd` per day; public routes allow a",
          "per-IP amount per minute. Responses carry `x-ratelimit-limit`, `x-ratelimit-remaining`, `x-ratelimit-reset`",
          "(seconds); beyond the allowance the answer is 429 `rate_limited` with `Retry-After` (seconds).",
          "**Stages.** Every path is also served under `/prod` or `/dev` (the stage this deployment runs).",
          "**Admin portal.** Operators sign in at [/portal/](/portal/) through the identity provider (allow-listed admin",
          "accounts) to manage keys, plans, bans, jobs, pairs, tokens, series, payments and peers, and to see candles",
          "and series as charts (docs/portal.md).",
        ].join("\n"),
      },
      servers: [{ url: "/" }, { url: `/${stage}` }],
      tags: SPEC_TAGS.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
      components: {
        securitySchemes: {
          apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
          bearerAuth: { type: "http", scheme: "bearer" },
        },
      },
    },
    // A nullable body (NoBody) may be left out; @fastify/swagger marks every body required. A query
    // parameter with a default may be left out too (the server fills it in): generated clients
    // (clients/typescript) then make it optional.
    transformObject: (documents) => {
      const doc = (documents as { openapiObject: OpenApiDoc }).openapiObject;
      for (const operation of Object.values(doc.paths ?? {}).flatMap((path) => Object.values(path))) {
        const body = operation.requestBody;
        if (body?.content?.["application/json"]?.schema?.nullable) body.required = false;
        for (const p of operation.parameters ?? []) {
          if (p.in === "query" && p.required && p.schema?.default !== undefined) p.required = false;
        }
      }
      return doc;
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { deepLinking: true }, staticCSP: true });
}
