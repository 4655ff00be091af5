-- Outbound webhooks (issue 24): a key owner's URL and filter, and where its delivery stands. Deliveries run as a
-- chain of pg-boss messages (queue `webhook`, lib/webhooks/worker.ts), one in flight per webhook: a message claims
-- the webhook's `step` (each claim increments `attempts`), and every later write of that handler checks both, so a
-- duplicate or late handler writes nothing. `after_id` is the last event id a 2xx acknowledged; `pending_last_id`
-- the in-flight batch's last id, so a retry sends the same batch (same `webhook-id`). The secret signs the
-- deliveries, so it is stored; the API shows it once, at creation.
CREATE TABLE IF NOT EXISTS webhooks (
  webhook_id uuid PRIMARY KEY,
  user_id text NOT NULL,
  key_id text NOT NULL,
  url text NOT NULL,
  filters jsonb NOT NULL DEFAULT '{}',
  secret text NOT NULL,
  after_id text NOT NULL,
  pending_last_id text,
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled')),
  failures integer NOT NULL DEFAULT 0,
  last_error text,
  disabled_reason text,
  disabled_at timestamptz,
  step integer NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0,
  last_success_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS webhooks_owner_idx ON webhooks (user_id, created_at DESC, webhook_id DESC);
CREATE INDEX IF NOT EXISTS webhooks_created_idx ON webhooks (created_at DESC, webhook_id DESC);

-- Every POST attempt (2xx or not); the last WEBHOOK_LOG_KEEP per webhook are kept, older rows are pruned as new ones
-- are written.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  delivery_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id uuid NOT NULL REFERENCES webhooks (webhook_id) ON DELETE CASCADE,
  message_id text NOT NULL,
  first_event_id text NOT NULL,
  last_event_id text NOT NULL,
  event_count integer NOT NULL,
  attempt integer NOT NULL,
  ok boolean NOT NULL,
  status integer,
  error text,
  latency_ms integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, delivery_id DESC);
