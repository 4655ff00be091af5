-- Bans (README "Bans"): a key owner (`user`, api_keys.user_id), a Telegram user (`telegram`, the
-- numeric id as text) or an IP address or CIDR range (`ip`, canonical `network/prefix`, a single
-- address as /32 or /128). A ban applies while lifted_at is null and expires_at is null or ahead.
-- Lifting keeps the row (who lifted it and when) for the record.
CREATE TABLE IF NOT EXISTS bans (
  ban_id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('user', 'telegram', 'ip')),
  value text NOT NULL CHECK (value <> ''),
  reason text NOT NULL DEFAULT '',
  expires_at timestamptz,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  lifted_at timestamptz,
  lifted_by text
);

CREATE INDEX IF NOT EXISTS bans_unlifted_idx ON bans (kind, value) WHERE lifted_at IS NULL;
CREATE INDEX IF NOT EXISTS bans_created_idx ON bans (created_at DESC, ban_id);

-- The bot's bans (postgres/0012) move here: the bot's /ban and /unban now write this table.
INSERT INTO bans (ban_id, kind, value, reason, created_by, created_at)
  SELECT gen_random_uuid()::text, 'telegram', telegram_user_id::text, 'banned with the bot''s /ban',
    CASE WHEN banned_by IS NULL THEN 'telegram' ELSE 'telegram:' || banned_by::text END,
    date_trunc('milliseconds', banned_at)
  FROM telegram_bans;

DROP TABLE IF EXISTS telegram_bans;
