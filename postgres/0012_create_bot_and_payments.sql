-- The Telegram bot and ALPH payments (README "Bot and payments").

-- Telegram users allowed to run the bot's admin commands (managed by /system/telegram/admins).
CREATE TABLE IF NOT EXISTS telegram_admins (
  telegram_user_id bigint PRIMARY KEY CHECK (telegram_user_id > 0),
  username text,
  added_at timestamptz NOT NULL DEFAULT now()
);

-- Telegram users the bot refuses (/ban, /unban).
CREATE TABLE IF NOT EXISTS telegram_bans (
  telegram_user_id bigint PRIMARY KEY CHECK (telegram_user_id > 0),
  banned_by bigint,
  banned_at timestamptz NOT NULL DEFAULT now()
);

-- Update ids already handled: Telegram retries an update until it is acknowledged.
CREATE TABLE IF NOT EXISTS telegram_updates (
  update_id bigint PRIMARY KEY,
  handled_at timestamptz NOT NULL DEFAULT now()
);

-- Telegram users seen by the bot; free_key_id makes `/key` issue one free key per user.
CREATE TABLE IF NOT EXISTS telegram_users (
  telegram_user_id bigint PRIMARY KEY CHECK (telegram_user_id > 0),
  username text,
  chat_id bigint NOT NULL,
  free_key_id text,
  first_seen_at timestamptz NOT NULL DEFAULT now()
);

-- An invoice asks for amount_atto attoALPH at address before expires_at to move key_id to plan_id.
-- amount_tag (amount mod 1 ALPH) is unique among the open invoices of an address, so a transfer of
-- the wrong whole amount still names its invoice (under- or overpaid).
CREATE TABLE IF NOT EXISTS payment_invoices (
  invoice_id text PRIMARY KEY,
  user_id text NOT NULL,
  key_id text NOT NULL REFERENCES api_keys (key_id),
  plan_id text NOT NULL REFERENCES api_plans (plan_id),
  address text NOT NULL,
  amount_atto numeric(78, 0) NOT NULL CHECK (amount_atto > 0),
  amount_tag numeric(78, 0) NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'paid', 'expired', 'cancelled')),
  chat_id bigint,
  payment_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS payment_invoices_open_tag_idx
  ON payment_invoices (address, amount_tag) WHERE status = 'open';
CREATE INDEX IF NOT EXISTS payment_invoices_user_idx ON payment_invoices (user_id, created_at);

-- Every ALPH transfer to a payment address (payment_id = the normalized event id) and every manual
-- payment (payment_id 'manual:<uuid>'). A chain transfer waits as `pending` until the events
-- watermark passes its block, then is settled once: credited, overpaid (credited), underpaid, late or
-- unmatched; a retracted block's payment becomes `reversed`. block_seq is the publish sequence of the
-- block message it came from: an older message (a replay) never overrides a newer one.
CREATE TABLE IF NOT EXISTS payments (
  payment_id text PRIMARY KEY,
  source text NOT NULL CHECK (source IN ('chain', 'manual')),
  status text NOT NULL
    CHECK (status IN ('pending', 'credited', 'overpaid', 'underpaid', 'late', 'unmatched', 'reversed')),
  amount_atto numeric(78, 0) NOT NULL,
  to_address text NOT NULL,
  from_address text NOT NULL DEFAULT '',
  tx_id text NOT NULL DEFAULT '',
  block_hash text NOT NULL DEFAULT '',
  chain_index integer,
  block_ts timestamptz,
  block_seq bigint NOT NULL DEFAULT 0,
  invoice_id text REFERENCES payment_invoices (invoice_id),
  user_id text,
  key_id text,
  plan_id text,
  -- The key as it was before the credit, and the validity end the credit set (for a reversal).
  prev_plan_id text,
  prev_valid_until timestamptz,
  credited_until timestamptz,
  note text,
  created_at timestamptz NOT NULL DEFAULT now(),
  settled_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS payments_pending_idx ON payments (block_ts) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS payments_block_idx ON payments (block_hash);
CREATE INDEX IF NOT EXISTS payments_user_idx ON payments (user_id, created_at);
