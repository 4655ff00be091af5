-- Ingest position per Alephium chain: the last block published on the bus.
CREATE TABLE IF NOT EXISTS ingest_cursor (
  chain_index smallint PRIMARY KEY CHECK (chain_index BETWEEN 0 AND 15),
  height integer NOT NULL,
  block_hash text NOT NULL,
  block_ts bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Recently published main-chain blocks per chain: where a reorg walk-back finds the fork point.
CREATE TABLE IF NOT EXISTS ingest_blocks (
  chain_index smallint NOT NULL,
  height integer NOT NULL,
  block_hash text NOT NULL,
  block_ts bigint NOT NULL,
  PRIMARY KEY (chain_index, height)
);

-- DEX pools learned from factory events (PairCreated), used by the normalizer to decode swaps.
CREATE TABLE IF NOT EXISTS dex_pools (
  pool_address text PRIMARY KEY,
  dapp_id text NOT NULL,
  token0_id text NOT NULL,
  token1_id text NOT NULL,
  factory_address text,
  created_tx text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Address labels shown on events (address_labels); one primary label per address and source.
CREATE TABLE IF NOT EXISTS address_labels (
  address text NOT NULL,
  source text NOT NULL,
  label text NOT NULL,
  icon text,
  mapped_label text NOT NULL,
  priority integer NOT NULL DEFAULT 100,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (address, source)
);
CREATE INDEX IF NOT EXISTS address_labels_label_idx ON address_labels (lower(label));

-- DEX factories whose pool-created events the normalizer follows (besides the built-in mainnet ones).
CREATE TABLE IF NOT EXISTS dex_factories (
  factory_address text PRIMARY KEY,
  dapp_id text NOT NULL,
  created_event_index integer NOT NULL,
  token0_field integer NOT NULL,
  token1_field integer NOT NULL,
  pool_field integer NOT NULL,
  swap_event_index integer NOT NULL,
  mint_event_index integer,
  burn_event_index integer
);
