-- Secrets every API process must share (issue 46): the dapp cursors' HMAC key and the portal's cookie/CSRF key
-- when DAPP_CURSOR_SECRET or PORTAL_SESSION_SECRET is empty. The first process to need one creates it; every
-- other reads the same row, so a nextKey, a portal session or a CSRF token made by one replica works on another.
CREATE TABLE shared_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
