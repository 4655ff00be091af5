-- Key usage figures (GET /system/keys/{keyid}/usage, the bot's /keys): requests per API key per UTC
-- minute. Each API process counts in memory and adds its counts here every USAGE_FLUSH_MS with upserts
-- that add (requests = key_usage.requests + EXCLUDED.requests), so several processes add up.
-- `requests` counts every request charged to the key's plan allowance, the 429s included, and
-- `rate_limited` the 429s among them. Rows older than USAGE_RETENTION_DAYS are deleted by the flushes.
CREATE TABLE IF NOT EXISTS key_usage (
  key_id text NOT NULL,
  minute timestamptz NOT NULL,
  requests integer NOT NULL DEFAULT 0 CHECK (requests >= 0),
  rate_limited integer NOT NULL DEFAULT 0 CHECK (rate_limited >= 0),
  PRIMARY KEY (key_id, minute)
);

-- Retention deletes by age across every key.
CREATE INDEX IF NOT EXISTS key_usage_minute_idx ON key_usage (minute);
