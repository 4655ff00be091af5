-- Contracts the normalizer attributed to a dapp when their creation was normalized (their parent
-- belongs to the dapp). The normalizer's own state, written before it publishes the block's events,
-- so attribution depends on the blocks alone, never on when another processor ran.
CREATE TABLE IF NOT EXISTS normalize_contract_dapps (
  address text PRIMARY KEY,
  dapp_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
