-- API plans and keys. Raw keys are never stored: only their SHA-256 (key_hash) and a display prefix.
CREATE TABLE IF NOT EXISTS api_plans (
  plan_id text PRIMARY KEY,
  name text NOT NULL,
  rpm integer NOT NULL CHECK (rpm > 0),
  rpd integer NOT NULL CHECK (rpd > 0),
  price text NOT NULL DEFAULT '0',
  price_alph text NOT NULL DEFAULT '0',
  validity_days integer NOT NULL CHECK (validity_days > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Plans that exist from the first start; prices are USD and ALPH per validity period.
INSERT INTO api_plans (plan_id, name, rpm, rpd, price, price_alph, validity_days) VALUES
  ('free', 'Free', 60, 10000, '0', '0', 30),
  ('pro', 'Pro', 600, 250000, '49', '150', 30),
  ('enterprise', 'Enterprise', 6000, 5000000, '499', '1500', 365)
ON CONFLICT (plan_id) DO NOTHING;

CREATE TABLE IF NOT EXISTS api_keys (
  key_id text PRIMARY KEY,
  key_hash text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  user_id text NOT NULL,
  plan_id text NOT NULL REFERENCES api_plans (plan_id),
  level text NOT NULL CHECK (level IN ('user', 'admin')),
  allowed_origins text[] NOT NULL DEFAULT '{}',
  valid_until timestamptz,
  last_payment_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS api_keys_user_id_idx ON api_keys (user_id);

-- Rate-limit counters shared by every API process (layout of rate-limiter-flexible's Postgres store).
CREATE TABLE IF NOT EXISTS rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
