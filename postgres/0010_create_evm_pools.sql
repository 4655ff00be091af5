-- EVM pool sources: Uniswap V2 pools on Ethereum and PancakeSwap V2 pools on BSC (added by pool
-- address, `chain_id` of the pair = the EVM chain), read through the chain's JSON-RPC (EVM_RPC_URLS).
INSERT INTO price_sources (id, label, kind, dapp_id, contract_addresses, value_decimals, supports_spot,
  supports_candles, supports_trades, supported_denominations, created_at, updated_at) VALUES
  ('uniswap', 'Uniswap V2 (Ethereum)', 'uniswap', NULL, '{}', NULL, true, true, true, '{}', 0, 0),
  ('pancakeswap', 'PancakeSwap V2 (BSC)', 'pancakeswap', NULL, '{}', NULL, true, true, true, '{}', 0, 0)
ON CONFLICT (id) DO NOTHING;

-- The EVM poller's position per pool: the next block to read, the pool's tokens and orientation, and
-- the hashes of recent blocks it read swaps from (to see a reorg and retract what left the chain).
CREATE TABLE IF NOT EXISTS evm_pool_cursors (
  chain_id integer NOT NULL,
  pool text NOT NULL,
  next_block bigint NOT NULL,
  -- Hash of block next_block - 1 as read: a different hash now means a reorg.
  last_hash text,
  -- 0: token0 is the pair's base, 1: token1.
  base_index smallint NOT NULL CHECK (base_index IN (0, 1)),
  token0 text NOT NULL,
  token1 text NOT NULL,
  decimals0 integer NOT NULL,
  decimals1 integer NOT NULL,
  -- [{ "n": block number, "hash": block hash }] of recent blocks that had swaps.
  recent jsonb NOT NULL DEFAULT '[]',
  updated_at bigint NOT NULL,
  PRIMARY KEY (chain_id, pool)
);
