-- Known exchange (CEX) wallets on Alephium: transfers to / from them are normalized as cex
-- deposit / withdraw. A wallet classifies the transfers of blocks with applies_from <= block time <
-- applies_until (null: open), so the same block always gives the same events: a change applies to
-- blocks newer than any published when it was made, and a reindex (`reprocess`) after moving
-- applies_from back brings it to history. Removing a wallet closes its range (applies_until).
CREATE TABLE IF NOT EXISTS exchange_wallets (
  address text PRIMARY KEY,
  exchange_id text NOT NULL CHECK (exchange_id ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  label text,
  applies_from bigint NOT NULL,
  applies_until bigint,
  source text NOT NULL DEFAULT 'admin' CHECK (source IN ('seed', 'admin')),
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  CHECK (applies_until IS NULL OR applies_until >= applies_from)
);
