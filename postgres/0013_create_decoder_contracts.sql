-- Contracts whose events follow a dapp decoder's layout (lib/dapps/kinds.ts), added by operators (and by the
-- simulated network for its own deployments) on top of the built-in mainnet list. Read by the normalizer at
-- start; a contract added later applies to blocks normalized after that (reprocess brings it to history).
CREATE TABLE IF NOT EXISTS decoder_contracts (
  contract_address text PRIMARY KEY,
  dapp_id text NOT NULL,
  decoder text NOT NULL,
  label text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The decoder kind a learned contract got from its parent (a room of a guessing-game hub), null when none.
ALTER TABLE normalize_contract_dapps ADD COLUMN IF NOT EXISTS decoder text;

-- Elexium-style factories: the pool-created event's stable flag (a Bool field, null when the layout has none)
-- and the pools' liquidity layout: 'ayin' = Mint/Burn(sender, amount0, amount1, liquidity);
-- 'velodrome' = Mint(sender, amount0, amount1), Burn(sender, to, amount0, amount1).
ALTER TABLE dex_factories ADD COLUMN IF NOT EXISTS stable_field integer;
ALTER TABLE dex_factories ADD COLUMN IF NOT EXISTS liquidity_layout text NOT NULL DEFAULT 'ayin';
