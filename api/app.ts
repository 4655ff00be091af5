/** Builds the Fastify app from a dependency bag; no listening here (see server.ts). */
import { randomUUID } from "node:crypto";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify from "fastify";
import { createRateLimits, type RateLimits, registerAuth, registerBanCheck } from "./plugins/auth.ts";
import { registerCors } from "./plugins/cors.ts";
import { clientErrorHandler, registerErrorHandling, sendProblem } from "./plugins/errors.ts";
import { addInputKeywords, registerInputRules } from "./plugins/input.ts";
import { registerOpenApi } from "./plugins/openapi.ts";
import { RequestLog } from "./plugins/request-log.ts";
import { sharedSerializers } from "./plugins/serializers.ts";
import { sharedValidators } from "./plugins/validators.ts";
import { exchangeWalletRoutes } from "./routes/addresses/exchange-wallets.ts";
import { addressLabelRoutes } from "./routes/addresses/labels.ts";
import { categoryRoutes } from "./routes/categories/index.ts";
import { chainRoutes } from "./routes/chains/index.ts";
import { contractRoutes } from "./routes/contracts/index.ts";
import { alphbanxRoutes } from "./routes/dapps/alphbanx.ts";
import { chainReactionRoutes } from "./routes/dapps/chainreaction.ts";
import { diaOracleRoutes } from "./routes/dapps/dia-oracle.ts";
import { elexiumRoutes } from "./routes/dapps/elexium.ts";
import { furnaceRoutes } from "./routes/dapps/furnace.ts";
import { dappRoutes } from "./routes/dapps/index.ts";
import { eventsRoutes } from "./routes/events/index.ts";
import { eventStreamRoutes } from "./routes/events/stream.ts";
import { explorerRoutes } from "./routes/explorer/index.ts";
import { metaRoutes } from "./routes/meta/index.ts";
import { nftRoutes } from "./routes/nft/index.ts";
import { paymentRoutes } from "./routes/payments/index.ts";
import { portalRoutes } from "./routes/portal/index.ts";
import { priceRoutes } from "./routes/prices/index.ts";
import { seriesRoutes } from "./routes/series/index.ts";
import { sqlRoutes } from "./routes/sql/index.ts";
import { banRoutes } from "./routes/system/bans.ts";
import { systemRoutes } from "./routes/system/index.ts";
import { jobRoutes } from "./routes/system/jobs.ts";
import { telegramRoutes } from "./routes/telegram/index.ts";
import { tokenRoutes } from "./routes/tokens/index.ts";
import { webhookRoutes } from "./routes/webhooks/index.ts";
import { wireguardRoutes } from "./routes/wireguard/index.ts";
import { Problem } from "./schemas.ts";
import type { ApiDeps, App, RouteEntry } from "./types.ts";

/** The response serializers of every app this process builds (./plugins/serializers.ts). */
export const SERIALIZERS = sharedSerializers();
/** One compiled request validator per distinct schema, likewise (api/plugins/validators.ts). */
export const VALIDATORS = sharedValidators();

/** A route group: a function that registers its routes on the app with the shared deps. */
export type RouteGroup = (app: App, deps: ApiDeps) => Promise<void>;

/** The route groups of the API, registered in this order (a new group is added here; see docs/development.md). */
export const ROUTE_GROUPS: RouteGroup[] = [
  metaRoutes,
  systemRoutes,
  banRoutes,
  eventsRoutes,
  eventStreamRoutes,
  addressLabelRoutes,
  exchangeWalletRoutes,
  tokenRoutes,
  categoryRoutes,
  priceRoutes,
  seriesRoutes,
  dappRoutes,
  furnaceRoutes,
  chainReactionRoutes,
  elexiumRoutes,
  alphbanxRoutes,
  diaOracleRoutes,
  chainRoutes,
  contractRoutes,
  nftRoutes,
  explorerRoutes,
  telegramRoutes,
  paymentRoutes,
  jobRoutes,
  webhookRoutes,
  wireguardRoutes,
  portalRoutes,
  sqlRoutes,
];

export interface BuildOptions {
  /** Extra route groups (tests, optional features). */
  extraGroups?: RouteGroup[];
  /** Injected rate-limit counters (tests); built from the deps when absent. */
  rateLimits?: RateLimits;
}

export async function buildApp(deps: ApiDeps, options: BuildOptions = {}): Promise<App> {
  const stagePrefix = `/${deps.config.STAGE}`;
  const app = Fastify({
    // One compiled response serializer and request validator per distinct schema, shared by every route and app of
    // the process.
    schemaController: {
      compilersFactory: {
        buildSerializer: SERIALIZERS.buildSerializer,
        buildValidator: VALIDATORS.buildValidator,
      },
    },
    loggerInstance: deps.log,
    logController: new RequestLog(),
    clientErrorHandler: clientErrorHandler(deps.log),
    trustProxy: deps.config.TRUST_PROXY,
    // Groupless and multisig addresses run past Fastify's default of 100 characters.
    routerOptions: { maxParamLength: 256 },
    // Errors the router raises before any route (bad URL encoding, too long a parameter) keep the one body shape.
    frameworkErrors: (error, request, reply) => {
      const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 400;
      const code = (error.code ?? "bad_request").toLowerCase().replace(/^fst_err_/, "");
      void sendProblem(request, reply.header("x-request-id", request.id), status, code, error.message);
    },
    requestTimeout: deps.config.REQUEST_TIMEOUT_MS,
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    // `/prod/...` (or `/dev/...`) is the same API as `/...` on the stage this process serves.
    rewriteUrl: (req) => {
      const url = req.url ?? "/";
      if (url === stagePrefix || url.startsWith(`${stagePrefix}/`) || url.startsWith(`${stagePrefix}?`)) {
        return url.slice(stagePrefix.length) || "/";
      }
      return url;
    },
    ajv: {
      // strictNumbers off: with it on, Ajv coerces "1e309" to Infinity and then skips every number
      // keyword (a non-finite number is not a number to them), so Infinity passed `maximum`. Off, the
      // bounds that registerInputRules puts on every number refuse it.
      customOptions: {
        coerceTypes: "array",
        removeAdditional: false,
        allErrors: false,
        strictNumbers: false,
      },
      plugins: [addInputKeywords],
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  // The route table as registered (the access-matrix test walks it, not a hand-written list).
  const routeTable: RouteEntry[] = [];
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === "HEAD" || !route.config?.access) continue;
      routeTable.push({
        method,
        url: route.url ?? "",
        access: route.config.access,
        db: route.config.db ?? "none",
      });
    }
  });
  app.decorate("routeTable", routeTable);
  app.addSchema(Problem);
  registerErrorHandling(app);
  registerInputRules(app);
  await deps.secrets.load();
  await registerOpenApi(app, deps.config.STAGE);
  if (deps.bans) {
    // Bans apply from the first request; each process reloads them every BANS_REFRESH_MS.
    await deps.bans.start();
    const bans = deps.bans;
    app.addHook("onClose", async () => bans.close());
  }
  if (deps.streamHub) {
    // Before the server waits for open connections: end the streams, so their clients reconnect elsewhere.
    const hub = deps.streamHub;
    app.addHook("preClose", async () => hub.close());
  }
  if (deps.series) {
    // The archive's object store, opened by the first page read.
    const series = deps.series;
    app.addHook("onClose", async () => series.close());
  }
  if (deps.usage) {
    // Counts go to Postgres every USAGE_FLUSH_MS, and the last ones when the app closes.
    const usage = deps.usage;
    usage.start();
    app.addHook("onClose", async () => usage.close());
  }
  if (deps.portal) {
    // Expired portal sessions are ended and their admin keys revoked every PORTAL_SWEEP_MS.
    const portal = deps.portal;
    portal.start();
    app.addHook("onClose", async () => portal.close());
  }
  registerBanCheck(app, deps);
  // Before the auth hook: preflights are answered before any key check, and every answer carries the CORS headers.
  await registerCors(app, {
    publicOrigins: deps.config.CORS_PUBLIC_ORIGINS,
    maxAgeS: deps.config.CORS_MAX_AGE_S,
  });
  registerAuth(app, deps, options.rateLimits ?? (await createRateLimits(deps)));

  app.addHook("onSend", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    deps.metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    deps.metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  for (const group of [...ROUTE_GROUPS, ...(options.extraGroups ?? [])]) await group(app, deps);
  await app.ready();
  return app;
}
