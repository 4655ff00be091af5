/**
 * Portal sign-ins in flight (`portal_logins`) and sessions (`portal_sessions`), postgres/0020.
 * The browser holds a random session token (in a signed cookie); this table stores its SHA-256 and the
 * session's admin key sealed with AES-256-GCM under a key derived from the token (HKDF), so neither a
 * copy of the table nor the browser alone yields the admin key.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import type { PgQueryable } from "../stores/postgres.ts";

export interface PendingLogin {
  state: string;
  nonce: string;
  code_verifier: string;
  redirect_uri: string;
}

export interface PortalSession {
  subject: string;
  email: string | null;
  key_id: string;
  /** The raw admin key, unsealed with the session token (server-side only). */
  key: string;
  created_at: string;
  expires_at: string;
}

export interface ExpiredSession {
  session_hash: string;
  subject: string;
  email: string | null;
  key_id: string;
}

export interface PortalSessionsRepo {
  saveLogin(login: PendingLogin): Promise<void>;
  /** Takes (and deletes) the sign-in started with `state`, if younger than `maxAgeS`. */
  takeLogin(state: string, maxAgeS: number): Promise<PendingLogin | null>;
  create(input: {
    token: string;
    subject: string;
    email: string | null;
    keyId: string;
    key: string;
    expiresAt: Date;
  }): Promise<void>;
  /** The open, unexpired session of a token, or null. */
  find(token: string): Promise<PortalSession | null>;
  /** Ends the session of a token; its key id when it was open. */
  end(token: string, reason: string): Promise<ExpiredSession | null>;
  /** Ends the sessions past their expiry and returns them (their keys are then revoked). */
  endExpired(): Promise<ExpiredSession[]>;
}

const TS = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");

function sealingKey(token: string): Buffer {
  return Buffer.from(hkdfSync("sha256", token, "alephium-portal", "portal admin key", 32));
}

/** AES-256-GCM of `plain` under a key derived from the session token: iv.tag.ciphertext, base64url. */
export function seal(token: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(token), iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url")).join(".");
}

export function unseal(token: string, sealed: string): string | null {
  const [iv, tag, body] = sealed.split(".").map((p) => Buffer.from(p, "base64url"));
  if (!iv || !tag || !body) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", sealingKey(token), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

export function createPortalSessionsRepo(pg: PgQueryable): PortalSessionsRepo {
  return {
    async saveLogin(login) {
      await pg.query(
        "portal_login_save",
        `INSERT INTO portal_logins (state, nonce, code_verifier, redirect_uri) VALUES ($1, $2, $3, $4)`,
        [login.state, login.nonce, login.code_verifier, login.redirect_uri],
      );
      // Abandoned sign-ins (the user never came back from the identity provider) are swept here.
      await pg.query(
        "portal_login_sweep",
        `DELETE FROM portal_logins WHERE created_at < now() - interval '1 day'`,
      );
    },
    async takeLogin(state, maxAgeS) {
      const rows = await pg.query<PendingLogin & { fresh: boolean }>(
        "portal_login_take",
        `DELETE FROM portal_logins WHERE state = $1
         RETURNING state, nonce, code_verifier, redirect_uri, created_at > now() - make_interval(secs => $2) AS fresh`,
        [state, maxAgeS],
      );
      const row = rows[0];
      if (!row?.fresh) return null;
      return {
        state: row.state,
        nonce: row.nonce,
        code_verifier: row.code_verifier,
        redirect_uri: row.redirect_uri,
      };
    },
    async create({ token, subject, email, keyId, key, expiresAt }) {
      await pg.query(
        "portal_session_create",
        `INSERT INTO portal_sessions (session_hash, subject, email, key_id, key_sealed, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [hashToken(token), subject, email, keyId, seal(token, key), expiresAt.toISOString()],
      );
    },
    async find(token) {
      const rows = await pg.query<Omit<PortalSession, "key"> & { key_sealed: string }>(
        "portal_session_find",
        `SELECT subject, email, key_id, key_sealed, ${TS("created_at")} AS created_at, ${TS("expires_at")} AS expires_at
         FROM portal_sessions WHERE session_hash = $1 AND ended_at IS NULL AND expires_at > now()`,
        [hashToken(token)],
      );
      const row = rows[0];
      if (!row) return null;
      const key = unseal(token, row.key_sealed);
      if (!key) return null;
      return {
        subject: row.subject,
        email: row.email,
        key_id: row.key_id,
        key,
        created_at: row.created_at,
        expires_at: row.expires_at,
      };
    },
    async end(token, reason) {
      const rows = await pg.query<ExpiredSession>(
        "portal_session_end",
        `UPDATE portal_sessions SET ended_at = now(), end_reason = $2
         WHERE session_hash = $1 AND ended_at IS NULL RETURNING session_hash, subject, email, key_id`,
        [hashToken(token), reason],
      );
      return rows[0] ?? null;
    },
    endExpired: () =>
      pg.query<ExpiredSession>(
        "portal_session_end_expired",
        `UPDATE portal_sessions SET ended_at = now(), end_reason = 'expired'
         WHERE ended_at IS NULL AND expires_at <= now() RETURNING session_hash, subject, email, key_id`,
      ),
  };
}
