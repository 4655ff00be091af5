-- Token market figures and TVL, kept current by the figures processor (lib/figures/). circulating_supply,
-- burned_supply, lock_supply and circulating_supply_usd exist since 0002; these are the new figures.
ALTER TABLE tokens ADD COLUMN IF NOT EXISTS price_usd double precision;
ALTER TABLE tokens ADD COLUMN IF NOT EXISTS tvl_usd double precision;
-- Which watched pair the USD price came from (price_pairs.id), and when the figures were last computed.
ALTER TABLE tokens ADD COLUMN IF NOT EXISTS price_pair_id integer;
ALTER TABLE tokens ADD COLUMN IF NOT EXISTS figures_updated_at bigint;
-- When the figures processor last asked the node for the token's total supply (max_supply).
ALTER TABLE tokens ADD COLUMN IF NOT EXISTS supply_read_at bigint;
ALTER TABLE dapps ADD COLUMN IF NOT EXISTS tvl_usd double precision;
ALTER TABLE dapps ADD COLUMN IF NOT EXISTS figures_updated_at bigint;
CREATE INDEX IF NOT EXISTS tokens_circulating_supply_usd_idx ON tokens (circulating_supply_usd, id);

-- Whether the figures' facts were rebuilt from the stored events once (a deployment that adds the
-- figures processor to an existing index): one row, written by the processor's first start.
CREATE TABLE IF NOT EXISTS figures_state (
  id smallint PRIMARY KEY CHECK (id = 1),
  backfilled_at bigint NOT NULL
);
