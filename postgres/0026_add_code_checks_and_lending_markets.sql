-- Code-hash guard, node check (issue 42): the normalizer reads each dapp contract's live code hash from the node
-- (CODE_HASH_CHECK_INTERVAL_S). A contract without an expected hash (no artifact, no operator row) takes the node's
-- first answer as its expected one; a later different answer is a change like a block's migration.
CREATE TABLE IF NOT EXISTS code_hash_baselines (
  contract_address text PRIMARY KEY,
  code_hash text NOT NULL,
  -- When the node first answered it (ms).
  seen_at bigint NOT NULL
);
-- Where the live code hash came from: 'migration' (a block's event carried the new code) or 'node' (a check).
ALTER TABLE normalize_contract_dapps ADD COLUMN IF NOT EXISTS code_source text;

-- Lending markets the normalizer learned from a Linx lending contract's MarketCreated (event 4): the market's later
-- events name only its id, and carry its loan or collateral token from this row.
CREATE TABLE IF NOT EXISTS lending_markets (
  contract_address text NOT NULL,
  market_id text NOT NULL,
  loan_token text NOT NULL,
  collateral_token text NOT NULL,
  PRIMARY KEY (contract_address, market_id)
);
