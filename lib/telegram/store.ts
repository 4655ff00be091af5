/**
 * The bot's own tables (Postgres): admins, handled update ids, users and their free key; its bans are
 * the `telegram` bans of the shared `bans` table (lib/bans/repo.ts), also managed by `/system/bans`.
 */
import { createBansRepo } from "../bans/repo.ts";
import type { PgQueryable } from "../stores/postgres.ts";

export interface TelegramAdmin {
  telegram_user_id: number;
  username: string | null;
  added_at: string;
}

export interface TelegramStore {
  listAdmins(): Promise<TelegramAdmin[]>;
  /** Adds or renames an admin. */
  addAdmin(userId: number, username: string | null): Promise<TelegramAdmin>;
  /** False when the user was not an admin. */
  removeAdmin(userId: number): Promise<boolean>;
  isAdmin(userId: number): Promise<boolean>;
  /** Bans a Telegram user (no expiry); nothing when already banned. */
  ban(userId: number, by: number | null): Promise<void>;
  /** Lifts the user's active bans; false when the user was not banned. */
  unban(userId: number, by?: number | null): Promise<boolean>;
  isBanned(userId: number): Promise<boolean>;
  /** True the first time an update id is claimed; false for a retry of a handled update. */
  claimUpdate(updateId: number): Promise<boolean>;
  /** Gives a claimed update back (its handling failed, so Telegram's retry handles it). */
  releaseUpdate(updateId: number): Promise<void>;
  /** Records a user; returns the free key id already issued to them, if any. */
  touchUser(userId: number, username: string | null, chatId: number): Promise<string | null>;
  /** Reserves the user's one free key: true for the first caller only. */
  reserveFreeKey(userId: number, keyId: string): Promise<boolean>;
  /** Replaces the reservation marker by the key made. */
  confirmFreeKey(userId: number, marker: string, keyId: string): Promise<void>;
  /** Frees the reservation when the key could not be made. */
  unreserveFreeKey(userId: number, keyId: string): Promise<void>;
  counts(): Promise<{ users: number; admins: number; banned: number }>;
}

const TS = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export function createTelegramStore(pg: PgQueryable): TelegramStore {
  const mapAdmin = (r: { telegram_user_id: string; username: string | null; added_at: string }) => ({
    telegram_user_id: Number(r.telegram_user_id),
    username: r.username,
    added_at: r.added_at,
  });
  const bans = createBansRepo(pg);
  let claims = 0;
  const exists = async (label: string, sql: string, id: number) =>
    (await pg.query(label, sql, [String(id)])).length > 0;
  return {
    async listAdmins() {
      const rows = await pg.query<{ telegram_user_id: string; username: string | null; added_at: string }>(
        "telegram_admins_list",
        `SELECT telegram_user_id::text AS telegram_user_id, username, ${TS("added_at")} AS added_at
         FROM telegram_admins ORDER BY telegram_user_id`,
      );
      return rows.map(mapAdmin);
    },
    async addAdmin(userId, username) {
      const rows = await pg.query<{ telegram_user_id: string; username: string | null; added_at: string }>(
        "telegram_admins_add",
        `INSERT INTO telegram_admins (telegram_user_id, username) VALUES ($1::bigint, $2)
         ON CONFLICT (telegram_user_id) DO UPDATE SET username = COALESCE(EXCLUDED.username, telegram_admins.username)
         RETURNING telegram_user_id::text AS telegram_user_id, username, ${TS("added_at")} AS added_at`,
        [String(userId), username],
      );
      return mapAdmin(rows[0]!);
    },
    removeAdmin: (userId) =>
      exists(
        "telegram_admins_remove",
        "DELETE FROM telegram_admins WHERE telegram_user_id = $1::bigint RETURNING 1",
        userId,
      ),
    isAdmin: (userId) =>
      exists(
        "telegram_admins_get",
        "SELECT 1 FROM telegram_admins WHERE telegram_user_id = $1::bigint",
        userId,
      ),
    async ban(userId, by) {
      await bans
        .add({
          kind: "telegram",
          value: String(userId),
          reason: "banned with the bot's /ban",
          expiresAt: null,
          createdBy: by === null ? "telegram" : `telegram:${by}`,
        })
        .catch((error: unknown) => {
          if ((error as { code?: string }).code !== "already_banned") throw error;
        });
    },
    unban: async (userId, by = null) =>
      (await bans.liftTarget("telegram", String(userId), by === null ? "telegram" : `telegram:${by}`)) > 0,
    isBanned: async (userId) => (await bans.findActive("telegram", String(userId))) !== null,
    async claimUpdate(updateId) {
      // Telegram stops retrying an update after a day: older ids are forgotten now and then.
      if (++claims % 1000 === 0) {
        await pg.query(
          "telegram_updates_prune",
          "DELETE FROM telegram_updates WHERE handled_at < now() - interval '7 days'",
        );
      }
      return exists(
        "telegram_updates_claim",
        "INSERT INTO telegram_updates (update_id) VALUES ($1::bigint) ON CONFLICT DO NOTHING RETURNING 1",
        updateId,
      );
    },
    async releaseUpdate(updateId) {
      await pg.query(
        "telegram_updates_release",
        "DELETE FROM telegram_updates WHERE update_id = $1::bigint",
        [String(updateId)],
      );
    },
    async touchUser(userId, username, chatId) {
      const rows = await pg.query<{ free_key_id: string | null }>(
        "telegram_users_touch",
        `INSERT INTO telegram_users (telegram_user_id, username, chat_id) VALUES ($1::bigint, $2, $3::bigint)
         ON CONFLICT (telegram_user_id) DO UPDATE SET username = EXCLUDED.username, chat_id = EXCLUDED.chat_id
         RETURNING free_key_id`,
        [String(userId), username, String(chatId)],
      );
      return rows[0]?.free_key_id ?? null;
    },
    reserveFreeKey: (userId, keyId) =>
      pg
        .query(
          "telegram_users_reserve_key",
          `UPDATE telegram_users SET free_key_id = $2 WHERE telegram_user_id = $1::bigint AND free_key_id IS NULL
           RETURNING 1`,
          [String(userId), keyId],
        )
        .then((rows) => rows.length > 0),
    async confirmFreeKey(userId, marker, keyId) {
      await pg.query(
        "telegram_users_confirm_key",
        "UPDATE telegram_users SET free_key_id = $3 WHERE telegram_user_id = $1::bigint AND free_key_id = $2",
        [String(userId), marker, keyId],
      );
    },
    async unreserveFreeKey(userId, keyId) {
      await pg.query(
        "telegram_users_unreserve_key",
        "UPDATE telegram_users SET free_key_id = NULL WHERE telegram_user_id = $1::bigint AND free_key_id = $2",
        [String(userId), keyId],
      );
    },
    async counts() {
      const rows = await pg.query<{ users: string; admins: string; banned: string }>(
        "telegram_counts",
        `SELECT (SELECT count(*) FROM telegram_users)::text AS users,
                (SELECT count(*) FROM telegram_admins)::text AS admins,
                (SELECT count(*) FROM bans WHERE kind = 'telegram' AND lifted_at IS NULL
                   AND (expires_at IS NULL OR expires_at > now()))::text AS banned`,
      );
      const r = rows[0]!;
      return { users: Number(r.users), admins: Number(r.admins), banned: Number(r.banned) };
    },
  };
}
