/**
 * Bans (Postgres `bans`, postgres/0016): of a key owner (`user`), a Telegram user (`telegram`) or an IP
 * address or CIDR range (`ip`). A ban applies while it is not lifted and not past its `expires_at`.
 * Values are validated and normalized here (`normalizeBanValue`), so the API, the bot and the
 * automatic bans store one spelling per target. The API processes match through the cache in
 * lib/bans/guard.ts; the bot asks this table directly.
 */
import { randomUUID } from "node:crypto";
import { AppError, badRequest } from "../errors.ts";
import { parseIpRange } from "../net.ts";
import type { PgQueryable } from "../stores/postgres.ts";

export const BAN_KINDS = ["user", "telegram", "ip"] as const;
export type BanKind = (typeof BAN_KINDS)[number];
export const BAN_STATES = ["active", "expired", "lifted"] as const;
export type BanState = (typeof BAN_STATES)[number];

export interface Ban {
  ban_id: string;
  kind: BanKind;
  value: string;
  reason: string;
  expires_at: string | null;
  created_by: string;
  created_at: string;
  lifted_at: string | null;
  lifted_by: string | null;
  /** `lifted` when lifted, else `expired` past expires_at, else `active`. */
  state: BanState;
}

export interface NewBan {
  kind: BanKind;
  value: string;
  reason: string;
  expiresAt: string | null;
  createdBy: string;
}

export interface BanFilter {
  kind?: BanKind;
  state?: BanState;
  value?: string;
  /** Created at or after (ISO time). */
  from?: string;
  /** Created before (ISO time): the next page of a newest-first listing. */
  to?: string;
  limit: number;
}

export interface BansRepo {
  /**
   * Adds a ban; the value is normalized first (400 `bad_request` naming `value` when it is not one of
   * its kind). 409 `already_banned` when an active ban of the same target exists.
   */
  add(input: NewBan): Promise<Ban>;
  get(banId: string): Promise<Ban | null>;
  /** Newest first. */
  list(filter: BanFilter): Promise<Ban[]>;
  /** Lifts a ban (kept for the record); a lifted ban stays as it was. Null when the id is unknown. */
  lift(banId: string, by: string): Promise<Ban | null>;
  /** Lifts every active ban of a target; the number lifted. */
  liftTarget(kind: BanKind, value: string, by: string): Promise<number>;
  /** The active ban of a target, if any (the newest). */
  findActive(kind: BanKind, value: string): Promise<Ban | null>;
  /** Every ban not lifted and not expired (the per-process cache's load). */
  active(): Promise<Ban[]>;
  /** Active bans per kind. */
  countActive(kind: BanKind): Promise<number>;
}

const TS = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const STATE = `CASE WHEN lifted_at IS NOT NULL THEN 'lifted'
  WHEN expires_at IS NOT NULL AND expires_at <= now() THEN 'expired' ELSE 'active' END`;
const COLUMNS = `ban_id, kind, value, reason, ${TS("expires_at")} AS expires_at, created_by,
  ${TS("created_at")} AS created_at, ${TS("lifted_at")} AS lifted_at, lifted_by, ${STATE} AS state`;
const ACTIVE = "lifted_at IS NULL AND (expires_at IS NULL OR expires_at > now())";

const valueError = (kind: BanKind, message: string) =>
  badRequest(`Invalid body: value ${message}`, { field: "value", kind });

/** The stored spelling of a ban target, or 400 naming `value`. */
export function normalizeBanValue(kind: BanKind, raw: string): string {
  const value = raw.trim();
  if (kind === "user") {
    if (value === "") throw valueError(kind, "is empty: a user ban needs the keys' user_id");
    return value;
  }
  if (kind === "telegram") {
    if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
      throw valueError(kind, `${JSON.stringify(raw)} is not a Telegram user id (a positive integer)`);
    }
    return value;
  }
  const range = parseIpRange(value);
  if (typeof range === "string") throw valueError(kind, range);
  return range.value;
}

export function createBansRepo(pg: PgQueryable): BansRepo {
  const findActive = async (kind: BanKind, value: string) => {
    const rows = await pg.query<Ban>(
      "bans_find_active",
      `SELECT ${COLUMNS} FROM bans WHERE kind = $1 AND value = $2 AND ${ACTIVE}
       ORDER BY created_at DESC, ban_id LIMIT 1`,
      [kind, value],
    );
    return rows[0] ?? null;
  };
  return {
    async add(input) {
      const value = normalizeBanValue(input.kind, input.value);
      // One statement: the row is written only when no active ban of the target exists.
      const rows = await pg.query<Ban>(
        "bans_add",
        `INSERT INTO bans (ban_id, kind, value, reason, expires_at, created_by)
         SELECT $1, $2, $3, $4, $5::timestamptz, $6
         WHERE NOT EXISTS (SELECT 1 FROM bans WHERE kind = $2 AND value = $3 AND ${ACTIVE})
         RETURNING ${COLUMNS}`,
        [randomUUID(), input.kind, value, input.reason, input.expiresAt, input.createdBy],
      );
      if (rows[0]) return rows[0];
      const existing = await findActive(input.kind, value);
      throw new AppError(
        "already_banned",
        `${input.kind} ${value} is already banned (ban ${existing?.ban_id ?? "?"}); lift it first to change it`,
        { status: 409, details: { ban_id: existing?.ban_id ?? null, kind: input.kind, value } },
      );
    },
    async get(banId) {
      const rows = await pg.query<Ban>("bans_get", `SELECT ${COLUMNS} FROM bans WHERE ban_id = $1`, [banId]);
      return rows[0] ?? null;
    },
    async list(f) {
      const where: string[] = [];
      const params: (string | number)[] = [];
      const add = (sql: (n: string) => string, v: string | number) => {
        params.push(v);
        where.push(sql(`$${params.length}`));
      };
      if (f.kind) add((n) => `kind = ${n}`, f.kind);
      if (f.value) add((n) => `value = ${n}`, f.value);
      if (f.from) add((n) => `created_at >= ${n}::timestamptz`, f.from);
      if (f.to) add((n) => `created_at < ${n}::timestamptz`, f.to);
      if (f.state) add((n) => `(${STATE}) = ${n}`, f.state);
      params.push(f.limit);
      return pg.query<Ban>(
        "bans_list",
        `SELECT ${COLUMNS} FROM bans ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY created_at DESC, ban_id LIMIT $${params.length}`,
        params,
      );
    },
    async lift(banId, by) {
      const rows = await pg.query<Ban>(
        "bans_lift",
        `UPDATE bans SET lifted_at = COALESCE(lifted_at, now()), lifted_by = COALESCE(lifted_by, $2)
         WHERE ban_id = $1 RETURNING ${COLUMNS}`,
        [banId, by],
      );
      return rows[0] ?? null;
    },
    async liftTarget(kind, value, by) {
      const rows = await pg.query(
        "bans_lift_target",
        `UPDATE bans SET lifted_at = now(), lifted_by = $3
         WHERE kind = $1 AND value = $2 AND ${ACTIVE} RETURNING 1`,
        [kind, normalizeBanValue(kind, value), by],
      );
      return rows.length;
    },
    findActive: (kind, value) => findActive(kind, normalizeBanValue(kind, value)),
    active: () => pg.query<Ban>("bans_active", `SELECT ${COLUMNS} FROM bans WHERE ${ACTIVE}`),
    async countActive(kind) {
      const rows = await pg.query<{ n: string }>(
        "bans_count_active",
        `SELECT count(*)::text AS n FROM bans WHERE kind = $1 AND ${ACTIVE}`,
        [kind],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
