-- Admin portal (issue 26): sign-ins in flight, sessions and the audit log.

-- An authorization request sent to the identity provider, until its callback (one use; old rows are swept).
CREATE TABLE portal_logins (
  state text PRIMARY KEY,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  redirect_uri text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A signed-in admin. The cookie carries a random token; only its SHA-256 is stored, and the session's
-- admin key is sealed (AES-256-GCM) with a key derived from that token, so this table alone opens nothing.
CREATE TABLE portal_sessions (
  session_hash text PRIMARY KEY,
  subject text NOT NULL,
  email text,
  key_id text NOT NULL REFERENCES api_keys (key_id),
  key_sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  ended_at timestamptz,
  end_reason text
);
CREATE INDEX portal_sessions_open ON portal_sessions (expires_at) WHERE ended_at IS NULL;

-- Who did what, when: sign-ins (refused ones too), sign-outs, expiries and every change made through the portal.
CREATE TABLE portal_audit (
  audit_id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  actor text NOT NULL,
  action text NOT NULL,
  target text,
  status integer,
  detail text
);
CREATE INDEX portal_audit_at ON portal_audit (at DESC);
