/**
 * The admin portal's server side: sign-in through the identity provider (lib/portal/oidc.ts), the
 * allow-list, sessions that each hold a short-lived admin key (created at sign-in, revoked at sign-out
 * and at expiry), and the audit log. The browser never sees the key: the portal's API endpoint attaches
 * it server-side (api/routes/portal).
 */
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import { AppError } from "../errors.ts";
import type { KeysRepo } from "../keys/repo.ts";
import type { Logger } from "../logger.ts";
import type { PgQueryable } from "../stores/postgres.ts";
import { createPortalAuditRepo, type PortalAuditRepo } from "./audit.ts";
import { createOidcClient, type OidcClient, type OidcIdentity } from "./oidc.ts";
import { createPortalSessionsRepo, type PortalSession, type PortalSessionsRepo } from "./sessions.ts";

/** How long a sign-in may stay at the identity provider before its callback is refused. */
const LOGIN_MAX_AGE_S = 600;

export type SignInResult =
  | { outcome: "signed_in"; token: string; actor: string; expiresAt: Date }
  | { outcome: "refused"; actor: string; reason: string };

export interface PortalService {
  /** False when PORTAL_OIDC_ISSUER is empty: sign-in answers 503 `portal_not_configured`. */
  readonly signInConfigured: boolean;
  readonly audit: PortalAuditRepo;
  /** Records a pending sign-in and returns the identity provider's authorization URL. */
  startSignIn(redirectUri: string): Promise<string>;
  /**
   * Checks the callback (state, nonce, PKCE), the allow-list, and opens a session when allowed.
   * `query` is the callback's query string as received (the redirect URI is the one the sign-in sent).
   */
  finishSignIn(query: string, state: string): Promise<SignInResult>;
  /** Opens a session for an identity already verified and allowed (the sign-in's last step). */
  openSession(identity: OidcIdentity): Promise<{ token: string; actor: string; expiresAt: Date }>;
  /** The open session of a cookie's token, with its admin key; null when unknown, ended or expired. */
  find(token: string): Promise<PortalSession | null>;
  /** Ends the session and revokes its admin key. */
  signOut(token: string): Promise<boolean>;
  /** Ends expired sessions and revokes their keys; the number ended. */
  sweep(): Promise<number>;
  /** Sweeps every PORTAL_SWEEP_MS until `close`. */
  start(): void;
  close(): Promise<void>;
}

/** The account's name in the audit log and as the key's owner: its verified e-mail, else its subject. */
export const actorOf = (identity: OidcIdentity): string =>
  identity.email && identity.emailVerified ? identity.email : identity.subject;

/** Allowed when the verified e-mail or the subject is on the list (e-mails compared case-insensitively). */
export function isAllowed(
  config: Pick<Config, "PORTAL_ADMIN_EMAILS" | "PORTAL_ADMIN_SUBJECTS">,
  identity: OidcIdentity,
) {
  const emails = config.PORTAL_ADMIN_EMAILS.map((e) => e.toLowerCase());
  const subjects = config.PORTAL_ADMIN_SUBJECTS;
  if (subjects.includes(identity.subject)) return true;
  return identity.emailVerified && identity.email !== null && emails.includes(identity.email.toLowerCase());
}

export interface PortalDeps {
  pg: PgQueryable;
  keys: KeysRepo;
  config: Pick<
    Config,
    | "PORTAL_ADMIN_EMAILS"
    | "PORTAL_ADMIN_SUBJECTS"
    | "PORTAL_KEY_PLAN"
    | "PORTAL_OIDC_CLIENT_ID"
    | "PORTAL_OIDC_CLIENT_SECRET"
    | "PORTAL_OIDC_ISSUER"
    | "PORTAL_SESSION_TTL_S"
    | "PORTAL_SWEEP_MS"
  >;
  log: Logger;
  /** Injected by tests; built from PORTAL_OIDC_* otherwise. */
  oidc?: OidcClient;
}

export function createPortalService(deps: PortalDeps): PortalService {
  const { config, keys } = deps;
  const log = deps.log.child({ component: "portal" });
  const sessions: PortalSessionsRepo = createPortalSessionsRepo(deps.pg);
  const audit = createPortalAuditRepo(deps.pg);
  const signInConfigured = config.PORTAL_OIDC_ISSUER !== "";
  const oidc =
    deps.oidc ??
    (signInConfigured
      ? createOidcClient({
          issuer: config.PORTAL_OIDC_ISSUER,
          clientId: config.PORTAL_OIDC_CLIENT_ID,
          clientSecret: config.PORTAL_OIDC_CLIENT_SECRET,
        })
      : null);
  let timer: NodeJS.Timeout | null = null;

  const revokeKey = async (keyId: string) => {
    try {
      await keys.revoke(keyId);
    } catch (error) {
      log.error({ err: error, key_id: keyId }, "Portal session key could not be revoked.");
    }
  };

  const service: PortalService = {
    signInConfigured,
    audit,
    async startSignIn(redirectUri) {
      if (!oidc) throw notConfigured();
      const start = await oidc.start(redirectUri);
      await sessions.saveLogin({
        state: start.state,
        nonce: start.nonce,
        code_verifier: start.codeVerifier,
        redirect_uri: redirectUri,
      });
      return start.url;
    },
    async finishSignIn(query, state) {
      if (!oidc) throw notConfigured();
      const pending = await sessions.takeLogin(state, LOGIN_MAX_AGE_S);
      if (!pending) {
        throw new AppError(
          "sign_in_expired",
          "Invalid query: state matches no sign-in in progress (already used, older than 10 minutes, or forged); sign in again.",
          { status: 400, details: { field: "state" } },
        );
      }
      const identity = await oidc.finish(`${pending.redirect_uri}?${query}`, {
        state: pending.state,
        nonce: pending.nonce,
        codeVerifier: pending.code_verifier,
      });
      const actor = actorOf(identity);
      if (!isAllowed(config, identity)) {
        const reason =
          identity.email && !identity.emailVerified ? "e-mail not verified" : "not on the allow-list";
        await audit.record({ actor, action: "sign_in_refused", detail: reason });
        log.warn({ actor, reason }, "Portal sign-in refused.");
        return { outcome: "refused", actor, reason };
      }
      const opened = await service.openSession(identity);
      return { outcome: "signed_in", ...opened };
    },
    async openSession(identity) {
      const actor = actorOf(identity);
      const expiresAt = new Date(Date.now() + config.PORTAL_SESSION_TTL_S * 1000);
      const created = await keys.createKey({
        userId: `portal:${actor}`,
        planId: config.PORTAL_KEY_PLAN,
        level: "admin",
        validUntil: expiresAt.toISOString(),
      });
      const token = randomBytes(32).toString("base64url");
      await sessions.create({
        token,
        subject: identity.subject,
        email: identity.email,
        keyId: created.keyId,
        key: created.key,
        expiresAt,
      });
      await audit.record({ actor, action: "sign_in", target: created.key_prefix });
      log.info({ actor, key_prefix: created.key_prefix }, "Portal session opened.");
      return { token, actor, expiresAt };
    },
    find: (token) => sessions.find(token),
    async signOut(token) {
      const ended = await sessions.end(token, "signed_out");
      if (!ended) return false;
      await revokeKey(ended.key_id);
      await audit.record({ actor: ended.email ?? ended.subject, action: "sign_out" });
      return true;
    },
    async sweep() {
      const ended = await sessions.endExpired();
      for (const s of ended) {
        await revokeKey(s.key_id);
        await audit.record({ actor: s.email ?? s.subject, action: "session_expired" });
      }
      return ended.length;
    },
    start() {
      timer = setInterval(() => {
        service.sweep().catch((error: unknown) => log.error({ err: error }, "Portal session sweep failed."));
      }, config.PORTAL_SWEEP_MS);
      timer.unref();
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
  return service;
}

const notConfigured = () =>
  new AppError(
    "portal_not_configured",
    "Portal sign-in is not configured on this deployment (PORTAL_OIDC_ISSUER is empty).",
    { status: 503 },
  );
