/** The portal's audit log (`portal_audit`, postgres/0020): who did what, when, with the answer's status. */
import type { PgQueryable } from "../stores/postgres.ts";

export interface AuditEntry {
  audit_id: number;
  at: string;
  /** The account: its verified e-mail, else its subject at the identity provider. */
  actor: string;
  /** `sign_in`, `sign_in_refused`, `sign_out`, `session_expired`, or the API call (`POST /system/keys`). */
  action: string;
  target: string | null;
  status: number | null;
  detail: string | null;
}

export interface NewAuditEntry {
  actor: string;
  action: string;
  target?: string | null;
  status?: number | null;
  detail?: string | null;
}

export interface PortalAuditRepo {
  record(entry: NewAuditEntry): Promise<void>;
  /** Newest first; `before` is an audit id (the next page). */
  list(options: { limit: number; before?: number }): Promise<AuditEntry[]>;
}

export function createPortalAuditRepo(pg: PgQueryable): PortalAuditRepo {
  return {
    async record(e) {
      await pg.query(
        "portal_audit_record",
        `INSERT INTO portal_audit (actor, action, target, status, detail) VALUES ($1, $2, $3, $4, $5)`,
        [e.actor, e.action, e.target ?? null, e.status ?? null, e.detail ?? null],
      );
    },
    async list({ limit, before }) {
      const rows = await pg.query<AuditEntry & { audit_id: string | number }>(
        "portal_audit_list",
        `SELECT audit_id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at,
           actor, action, target, status, detail
         FROM portal_audit WHERE ($2::bigint IS NULL OR audit_id < $2) ORDER BY audit_id DESC LIMIT $1`,
        [limit, before ?? null],
      );
      return rows.map((r) => ({ ...r, audit_id: Number(r.audit_id) }));
    },
  };
}
