-- Health of external price sources (exchanges polled through ccxt): written by the exchange poller,
-- read by /status. `ok` after a successful poll, `degraded` while calls to the source fail.
ALTER TABLE price_sources ADD COLUMN IF NOT EXISTS status text NOT NULL DEFAULT 'ok'
  CHECK (status IN ('ok', 'degraded'));
ALTER TABLE price_sources ADD COLUMN IF NOT EXISTS last_ok_at bigint;
ALTER TABLE price_sources ADD COLUMN IF NOT EXISTS last_error text;
ALTER TABLE price_sources ADD COLUMN IF NOT EXISTS last_error_at bigint;
