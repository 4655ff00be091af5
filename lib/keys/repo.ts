/**
 * API keys and plans (Postgres). Keys are random 32-byte secrets shown once; the table keeps
 * SHA-256(key) for lookup and a short prefix for display. Used by the API and by `keys create`.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { badRequest, notFound } from "../errors.ts";
import type { PgQueryable } from "../stores/postgres.ts";

export type KeyLevel = "user" | "admin";

export interface ApiPlan {
  plan_id: string;
  name: string;
  rpm: number;
  rpd: number;
  price: string;
  price_alph: string;
  validity_days: number;
  created_at: string;
  updated_at: string;
}

export interface ApiKey {
  key_id: string;
  key_prefix: string;
  user_id: string;
  plan_id: string;
  level: KeyLevel;
  allowed_origins: string[];
  valid_until: string | null;
  last_payment_at: string | null;
  revoked_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A key as the auth layer needs it: the record plus its plan limits. */
export interface KeyWithPlan extends ApiKey {
  rpm: number;
  rpd: number;
}

export interface CreatedKey {
  key: string;
  keyId: string;
  key_prefix: string;
  valid_until: string | null;
}

const KEY_COLUMNS = `k.key_id, k.key_prefix, k.user_id, k.plan_id, k.level, k.allowed_origins,
  k.valid_until, k.last_payment_at, k.revoked_at, k.created_at, k.updated_at`;

export function hashKey(raw: string): string {
  return createHash("sha256").update(raw).digest("hex");
}

function toIso(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString();
}

function mapKey<T extends ApiKey>(row: T): T {
  return {
    ...row,
    valid_until: toIso(row.valid_until),
    last_payment_at: toIso(row.last_payment_at),
    revoked_at: toIso(row.revoked_at),
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
  };
}

export interface KeysRepo {
  listPlans(): Promise<ApiPlan[]>;
  upsertPlan(plan: Omit<ApiPlan, "created_at" | "updated_at">): Promise<ApiPlan>;
  /**
   * Creates a key. `validUntil` absent: now + the plan's validity_days; null: no end (operators' keys).
   */
  createKey(input: {
    userId: string;
    planId: string;
    level: KeyLevel;
    validUntil?: string | null;
  }): Promise<CreatedKey>;
  findByRawKey(raw: string): Promise<KeyWithPlan | null>;
  getKey(keyId: string): Promise<ApiKey | null>;
  listKeys(userId?: string): Promise<ApiKey[]>;
  addOrigin(keyId: string, origin: string): Promise<ApiKey>;
  removeOrigin(keyId: string, origin: string): Promise<ApiKey>;
  setPlan(keyId: string, planId: string): Promise<ApiKey>;
  revoke(keyId: string): Promise<ApiKey>;
  update(
    keyId: string,
    fields: { valid_until?: string | null; last_payment_at?: string | null },
  ): Promise<ApiKey>;
}

export interface KeysRepoOptions {
  /**
   * How long a key lookup is reused (ms). Changes made through this repository clear it at once;
   * a change made by another API process takes effect within this time.
   */
  cacheMs?: number;
}

export function createKeysRepo(pg: PgQueryable, options: KeysRepoOptions = {}): KeysRepo {
  const cacheMs = options.cacheMs ?? 2_000;
  const byHash = new Map<string, { at: number; key: KeyWithPlan | null }>();
  let plans: { at: number; rows: ApiPlan[] } | null = null;
  const one = async (keyId: string, sql: string, params: (string | null)[]): Promise<ApiKey> => {
    byHash.clear();
    const rows = await pg.query<ApiKey>("keys_update", sql, params);
    const row = rows[0];
    if (!row) throw notFound(`API key ${keyId} not found`, { keyId });
    return mapKey(row);
  };
  const ensurePlan = async (planId: string) => {
    const rows = await pg.query("plans_get", "SELECT 1 FROM api_plans WHERE plan_id = $1", [planId]);
    if (rows.length === 0) throw badRequest(`Unknown plan ${planId}`, { planId });
  };
  const returning = `RETURNING key_id, key_prefix, user_id, plan_id, level, allowed_origins, valid_until,
    last_payment_at, revoked_at, created_at, updated_at`;

  return {
    async listPlans() {
      if (plans && Date.now() - plans.at < cacheMs) return plans.rows;
      const rows = await pg.query<ApiPlan>(
        "plans_list",
        `SELECT plan_id, name, rpm, rpd, price, price_alph, validity_days,
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
                to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at
         FROM api_plans ORDER BY rpm, plan_id`,
      );
      plans = { at: Date.now(), rows };
      return rows;
    },
    async upsertPlan(plan) {
      byHash.clear();
      plans = null;
      const rows = await pg.query<ApiPlan>(
        "plans_upsert",
        `INSERT INTO api_plans (plan_id, name, rpm, rpd, price, price_alph, validity_days)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (plan_id) DO UPDATE SET name = EXCLUDED.name, rpm = EXCLUDED.rpm, rpd = EXCLUDED.rpd,
           price = EXCLUDED.price, price_alph = EXCLUDED.price_alph, validity_days = EXCLUDED.validity_days,
           updated_at = now()
         RETURNING plan_id, name, rpm, rpd, price, price_alph, validity_days,
           to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
           to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`,
        [plan.plan_id, plan.name, plan.rpm, plan.rpd, plan.price, plan.price_alph, plan.validity_days],
      );
      return rows[0] as ApiPlan;
    },
    async createKey({ userId, planId, level, validUntil }) {
      await ensurePlan(planId);
      const raw = `alk_${randomBytes(32).toString("base64url")}`;
      const keyId = randomUUID();
      const prefix = raw.slice(0, 12);
      const rows = await pg.query<{ valid_until: unknown }>(
        "keys_create",
        `INSERT INTO api_keys (key_id, key_hash, key_prefix, user_id, plan_id, level, valid_until)
         SELECT $1, $2, $3, $4, p.plan_id, $6,
           CASE WHEN $7 THEN $8::timestamptz ELSE now() + make_interval(days => p.validity_days) END
         FROM api_plans p WHERE p.plan_id = $5
         RETURNING valid_until`,
        [
          keyId,
          hashKey(raw),
          prefix,
          userId,
          planId,
          level,
          String(validUntil !== undefined),
          validUntil ?? null,
        ],
      );
      return { key: raw, keyId, key_prefix: prefix, valid_until: toIso(rows[0]?.valid_until) };
    },
    async findByRawKey(raw) {
      const hash = hashKey(raw);
      const hit = byHash.get(hash);
      if (hit && Date.now() - hit.at < cacheMs) return hit.key;
      const rows = await pg.query<KeyWithPlan>(
        "keys_auth",
        `SELECT ${KEY_COLUMNS}, p.rpm, p.rpd FROM api_keys k JOIN api_plans p ON p.plan_id = k.plan_id
         WHERE k.key_hash = $1`,
        [hash],
      );
      const key = rows[0] ? mapKey(rows[0]) : null;
      if (byHash.size > 10_000) byHash.clear();
      byHash.set(hash, { at: Date.now(), key });
      return key;
    },
    async getKey(keyId) {
      const rows = await pg.query<ApiKey>(
        "keys_get",
        `SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.key_id = $1`,
        [keyId],
      );
      return rows[0] ? mapKey(rows[0]) : null;
    },
    async listKeys(userId) {
      const rows = userId
        ? await pg.query<ApiKey>(
            "keys_list_user",
            `SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.user_id = $1 ORDER BY k.created_at, k.key_id`,
            [userId],
          )
        : await pg.query<ApiKey>(
            "keys_list",
            `SELECT ${KEY_COLUMNS} FROM api_keys k ORDER BY k.created_at, k.key_id`,
          );
      return rows.map(mapKey);
    },
    addOrigin: (keyId, origin) =>
      one(
        keyId,
        `UPDATE api_keys SET allowed_origins = CASE WHEN $2 = ANY(allowed_origins) THEN allowed_origins
           ELSE array_append(allowed_origins, $2) END, updated_at = now() WHERE key_id = $1 ${returning}`,
        [keyId, origin],
      ),
    removeOrigin: (keyId, origin) =>
      one(
        keyId,
        `UPDATE api_keys SET allowed_origins = array_remove(allowed_origins, $2), updated_at = now()
         WHERE key_id = $1 ${returning}`,
        [keyId, origin],
      ),
    async setPlan(keyId, planId) {
      await ensurePlan(planId);
      return one(
        keyId,
        `UPDATE api_keys SET plan_id = $2, updated_at = now() WHERE key_id = $1 ${returning}`,
        [keyId, planId],
      );
    },
    revoke: (keyId) =>
      one(
        keyId,
        `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()), updated_at = now() WHERE key_id = $1 ${returning}`,
        [keyId],
      ),
    update: (keyId, fields) =>
      one(
        keyId,
        `UPDATE api_keys SET
           valid_until = CASE WHEN $2 THEN $3::timestamptz ELSE valid_until END,
           last_payment_at = CASE WHEN $4 THEN $5::timestamptz ELSE last_payment_at END,
           updated_at = now()
         WHERE key_id = $1 ${returning}`,
        [
          keyId,
          String("valid_until" in fields),
          fields.valid_until ?? null,
          String("last_payment_at" in fields),
          fields.last_payment_at ?? null,
        ],
      ),
  };
}
