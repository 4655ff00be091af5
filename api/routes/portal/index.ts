/**
 * The admin portal (docs/portal.md): its pages (built by Vite into portal/dist, served here), the sign-in
 * through the identity provider, and `/portal/api/*`, which calls the API's own routes with the session's
 * admin key attached server-side, so the browser never holds a key. Session routes need the signed
 * session cookie; state-changing ones also a CSRF token (`x-csrf-token`, from `GET /portal/session`).
 * Every change made through the portal, and every sign-in and sign-out, is in the audit log.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import cookie from "@fastify/cookie";
import csrf from "@fastify/csrf-protection";
import fastifyStatic from "@fastify/static";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, badRequest } from "../../../lib/errors.ts";
import type { PortalService } from "../../../lib/portal/service.ts";
import { hashToken, type PortalSession } from "../../../lib/portal/sessions.ts";
import { sendProblem } from "../../plugins/errors.ts";
import type { ApiDeps, App } from "../../types.ts";

/** Where `npm run portal:build` writes the pages (portal/vite.config.ts). */
export const PORTAL_DIST = fileURLToPath(new URL("../../../portal/dist/", import.meta.url));
export const SESSION_COOKIE = "portal_session";

/** No inline script or style anywhere; the pages talk to this origin only. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

declare module "fastify" {
  interface FastifyRequest {
    /** The signed-in portal session on session routes (api/routes/portal). */
    portalSession: (PortalSession & { hash: string }) | null;
  }
}

const pageHeaders = (reply: FastifyReply) =>
  reply
    .header("content-security-policy", CSP)
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "same-origin")
    .header("cache-control", "no-store");

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A plain page (no script) for the ends of the sign-in: refused account, failed or unconfigured sign-in. */
function plainPage(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="./assets/plain.css"></head><body><main class="plain"><h1>${escapeHtml(title)}</h1>${body}
<p><a href="./">Back to the portal</a></p></main></body></html>`;
}

/** The portal's public URL: PORTAL_URL, else this request's scheme, host and stage prefix. */
function portalUrl(request: FastifyRequest, configured: string, stage: string): string {
  if (configured) return configured.replace(/\/+$/, "");
  const prefix = request.originalUrl.startsWith(`/${stage}/`) ? `/${stage}` : "";
  return `${request.protocol}://${request.host}${prefix}/portal`;
}

const SessionView = Type.Object({
  subject: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  expires_at: Type.String(),
  csrf_token: Type.String({ description: "Send it in `x-csrf-token` on every state-changing request." }),
});
const AuditView = Type.Object({
  entries: Type.Array(
    Type.Object({
      audit_id: Type.Integer(),
      at: Type.String(),
      actor: Type.String(),
      action: Type.String(),
      target: Type.Union([Type.String(), Type.Null()]),
      status: Type.Union([Type.Integer(), Type.Null()]),
      detail: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

/**
 * The portal's routes in a context of their own: its cookie, CSRF and static-file plugins add hooks and reply state
 * (a cookie Map per reply) that only its routes use; in the root context they ran on every request of the API,
 * open event streams included.
 */
export async function portalRoutes(app: App, deps: ApiDeps): Promise<void> {
  await app.register(async (scope) => portalScope(scope as unknown as App, deps));
}

async function portalScope(app: App, deps: ApiDeps): Promise<void> {
  // Configured, else kept in Postgres: a session and its CSRF token made by one API process work on another.
  const secret = deps.secrets.get("portal_session");
  await app.register(cookie, { secret, hook: "onRequest" });
  await app.register(csrf, {
    sessionPlugin: "@fastify/cookie",
    cookieKey: "portal_csrf",
    cookieOpts: { signed: true, httpOnly: true, sameSite: "strict", path: "/", secure: "auto" },
    csrfOpts: { hmacKey: secret, userInfo: true },
    // A token is good for the session it was made for only.
    getUserInfo: (request: FastifyRequest) => request.portalSession?.hash ?? "",
  });
  await app.register(fastifyStatic, { root: PORTAL_DIST, serve: false });
  app.decorateRequest("portalSession", null);
  const portal = (): PortalService => {
    if (!deps.portal)
      throw new AppError("database_not_configured", "The portal needs the database.", { status: 503 });
    return deps.portal;
  };
  const cookieOptions = (request: FastifyRequest) => ({
    path: "/",
    httpOnly: true,
    sameSite: "lax" as const,
    secure: request.protocol === "https",
    signed: true,
  });

  /** Session routes: the signed cookie of an open session, else 401 (a tampered cookie fails its signature). */
  const requireSession = async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = request.cookies[SESSION_COOKIE];
    const unsigned = raw ? request.unsignCookie(raw) : null;
    const session = unsigned?.valid && unsigned.value ? await deps.portal?.find(unsigned.value) : null;
    if (!session || !unsigned?.value) {
      return sendProblem(
        request,
        reply,
        401,
        "portal_session_required",
        "Sign in to the portal first (no session, or it was signed out, expired or altered).",
      );
    }
    request.portalSession = { ...session, hash: hashToken(unsigned.value) };
  };
  const actorOf = (request: FastifyRequest) =>
    request.portalSession?.email ?? request.portalSession?.subject ?? "";

  app.get("/portal", { config: { access: "public" }, schema: { hide: true } }, async (request, reply) =>
    reply.redirect(`${request.originalUrl.split("?")[0]}/`),
  );

  app.get("/portal/", { config: { access: "public" }, schema: { hide: true } }, async (_request, reply) => {
    if (!existsSync(`${PORTAL_DIST}index.html`)) {
      throw new AppError(
        "portal_not_built",
        "The portal's pages are not built: run `npm run portal:build`.",
        {
          status: 503,
        },
      );
    }
    return pageHeaders(reply)
      .type("text/html; charset=utf-8")
      .sendFile("index.html", { cacheControl: false });
  });

  app.get<{ Params: { file: string } }>(
    "/portal/assets/:file",
    {
      config: { access: "public" },
      schema: {
        hide: true,
        params: Type.Object({ file: Type.String({ pattern: "^[A-Za-z0-9_.-]{1,120}$" }) }),
      },
    },
    async (request, reply) => {
      const file = request.params.file;
      if (file.startsWith(".") || !existsSync(`${PORTAL_DIST}assets/${file}`)) {
        throw new AppError("not_found", `Portal asset ${file} not found.`, {
          status: 404,
          details: { field: "file" },
        });
      }
      // Vite names assets by content hash: they never change under one name.
      return reply
        .header("x-content-type-options", "nosniff")
        .header("cache-control", "public, max-age=31536000, immutable")
        .sendFile(`assets/${file}`);
    },
  );

  app.get(
    "/portal/login",
    { config: { access: "public" }, schema: { hide: true } },
    async (request, reply) => {
      const url = await portal().startSignIn(
        `${portalUrl(request, deps.config.PORTAL_URL, deps.config.STAGE)}/callback`,
      );
      return pageHeaders(reply).redirect(url);
    },
  );

  app.get<{ Querystring: { state?: string; code?: string; error?: string; error_description?: string } }>(
    "/portal/callback",
    {
      config: { access: "public" },
      schema: {
        hide: true,
        querystring: Type.Object(
          {
            state: Type.Optional(Type.String({ maxLength: 512 })),
            code: Type.Optional(Type.String({ maxLength: 4096 })),
            error: Type.Optional(Type.String({ maxLength: 512 })),
            error_description: Type.Optional(Type.String({ maxLength: 2048 })),
          },
          { additionalProperties: true },
        ),
      },
    },
    async (request, reply) => {
      const { state, error, error_description: description } = request.query;
      if (!state)
        throw badRequest("Invalid query: state is required (the identity provider's callback carries it).", {
          field: "state",
        });
      if (error) {
        return pageHeaders(reply)
          .code(400)
          .type("text/html; charset=utf-8")
          .send(
            plainPage(
              "Sign-in did not complete",
              `<p>The identity provider answered <code>${escapeHtml(error)}</code>${description ? `: ${escapeHtml(description)}` : ""}.</p><p><a href="login">Sign in again</a></p>`,
            ),
          );
      }
      const query = request.originalUrl.split("?")[1] ?? "";
      const result = await portal().finishSignIn(query, state);
      if (result.outcome === "refused") {
        return pageHeaders(reply)
          .code(403)
          .type("text/html; charset=utf-8")
          .send(
            plainPage(
              "Access refused",
              `<p id="refused">The account <strong>${escapeHtml(result.actor)}</strong> is not allowed to administer this API (${escapeHtml(result.reason)}).</p><p>No session and no key were created. Ask an operator to add the account to PORTAL_ADMIN_EMAILS or PORTAL_ADMIN_SUBJECTS.</p>`,
            ),
          );
      }
      reply.setCookie(SESSION_COOKIE, result.token, {
        ...cookieOptions(request),
        maxAge: deps.config.PORTAL_SESSION_TTL_S,
      });
      return pageHeaders(reply).redirect("./");
    },
  );

  app.get(
    "/portal/session",
    {
      config: { access: "session" },
      onRequest: requireSession,
      schema: { hide: true, response: { 200: SessionView } },
    },
    async (request, reply) => {
      const s = request.portalSession!;
      reply.header("cache-control", "no-store");
      return {
        subject: s.subject,
        email: s.email,
        created_at: s.created_at,
        expires_at: s.expires_at,
        csrf_token: reply.generateCsrf({ userInfo: s.hash }),
      };
    },
  );

  // The page's first question, answered 200 either way: a signed-out visitor's browser logs no failed request.
  app.get(
    "/portal/session-state",
    {
      config: { access: "public" },
      schema: {
        hide: true,
        response: { 200: Type.Object({ signed_in: Type.Boolean(), session: Type.Optional(SessionView) }) },
      },
    },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      const raw = request.cookies[SESSION_COOKIE];
      const unsigned = raw ? request.unsignCookie(raw) : null;
      const s = unsigned?.valid && unsigned.value ? await deps.portal?.find(unsigned.value) : null;
      if (!s || !unsigned?.value) return { signed_in: false };
      return {
        signed_in: true,
        session: {
          subject: s.subject,
          email: s.email,
          created_at: s.created_at,
          expires_at: s.expires_at,
          csrf_token: reply.generateCsrf({ userInfo: hashToken(unsigned.value) }),
        },
      };
    },
  );

  app.post(
    "/portal/logout",
    {
      config: { access: "session" },
      onRequest: requireSession,
      preHandler: app.csrfProtection,
      schema: { hide: true, response: { 200: Type.Object({ signed_out: Type.Boolean() }) } },
    },
    async (request, reply) => {
      const raw = request.unsignCookie(request.cookies[SESSION_COOKIE] ?? "");
      const signedOut = raw.value ? await portal().signOut(raw.value) : false;
      reply.clearCookie(SESSION_COOKIE, { path: "/" });
      return { signed_out: signedOut };
    },
  );

  app.get<{ Querystring: { limit: number; before?: number } }>(
    "/portal/audit",
    {
      config: { access: "session" },
      onRequest: requireSession,
      schema: {
        hide: true,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
          before: Type.Optional(Type.Integer({ minimum: 1, maximum: 9_007_199_254_740_991 })),
        }),
        response: { 200: AuditView },
      },
    },
    async (request) => ({ entries: await portal().audit.list(request.query) }),
  );

  app.route<{ Params: { "*": string } }>({
    method: ["GET", "POST", "PUT", "PATCH", "DELETE"],
    url: "/portal/api/*",
    config: { access: "session" },
    onRequest: requireSession,
    // Reads need no token; a refused token is answered by csrfProtection itself (403, the one error shape).
    preHandler: (request, reply, done) =>
      request.method === "GET" ? done() : app.csrfProtection(request, reply, done),
    schema: { hide: true },
    handler: async (request, reply) => {
      const session = request.portalSession!;
      const path = request.params["*"];
      if (!path || path.startsWith("portal") || path.startsWith("/")) {
        throw badRequest(
          "Invalid path: the portal calls the API's routes only (for example api/system/keys).",
          {
            field: "path",
          },
        );
      }
      const query = request.originalUrl.includes("?") ? `?${request.originalUrl.split("?")[1]}` : "";
      const hasBody = request.body !== undefined && request.method !== "GET";
      const answer = await app.inject({
        method: request.method as "GET",
        url: `/${path}${query}`,
        remoteAddress: request.ip,
        headers: {
          "x-api-key": session.key,
          authorization: `Bearer ${session.key}`,
          "x-request-id": request.id,
          ...(hasBody ? { "content-type": "application/json" } : {}),
        },
        ...(hasBody ? { payload: JSON.stringify(request.body) } : {}),
      });
      if (request.method !== "GET") {
        await portal().audit.record({
          actor: actorOf(request),
          action: `${request.method} /${path}`,
          status: answer.statusCode,
          detail: answer.statusCode >= 400 ? answer.body.slice(0, 500) : null,
        });
      }
      const type = answer.headers["content-type"];
      if (type) reply.header("content-type", type);
      return reply.code(answer.statusCode).header("cache-control", "no-store").send(answer.rawPayload);
    },
  });
}
