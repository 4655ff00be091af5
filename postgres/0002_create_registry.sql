-- Registry: chains, categories, dapps, tokens (with bridged rows), contracts and NFTs. Times are Unix milliseconds (bigint) because the API serves them as numbers.
-- Seeded rows come from @alephium/token-list and lib/registry/seed.ts (`registry seed`).

CREATE TABLE IF NOT EXISTS chains (
  id integer PRIMARY KEY,
  name text NOT NULL,
  short_name text NOT NULL UNIQUE
);

-- 8738 is the indexed Alephium chain; 1 and 56 are the EVM chains of the Wormhole bridge.
INSERT INTO chains (id, name, short_name) VALUES
  (8738, 'Alephium', 'alph'),
  (1, 'Ethereum', 'eth'),
  (56, 'BNB Smart Chain', 'bsc')
ON CONFLICT (id) DO NOTHING;

CREATE TABLE IF NOT EXISTS categories (
  id text PRIMARY KEY,
  sort_order integer NOT NULL DEFAULT 0,
  deleted boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS dapps (
  id text PRIMARY KEY,
  name text NOT NULL,
  description text,
  website text,
  logo text,
  deleted boolean NOT NULL DEFAULT false,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

-- At most 3 categories per dapp: enforced by the repository (a 400 names the limit).
CREATE TABLE IF NOT EXISTS dapp_categories (
  dapp_id text NOT NULL REFERENCES dapps (id) ON DELETE CASCADE,
  category_id text NOT NULL REFERENCES categories (id),
  position smallint NOT NULL,
  PRIMARY KEY (dapp_id, category_id)
);
CREATE INDEX IF NOT EXISTS dapp_categories_category_idx ON dapp_categories (category_id);

CREATE TABLE IF NOT EXISTS tokens (
  id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
  network_id integer NOT NULL DEFAULT 0,
  contract_address text NOT NULL UNIQUE,
  name text,
  symbol text,
  symbol_onchain text,
  name_onchain text,
  decimals integer,
  dapp text,
  logo_uri text,
  unchained_logo_uri text,
  description text,
  origin_chain text,
  max_supply text,
  circulating_supply text,
  burned_supply text,
  lock_supply text,
  minter text,
  mint_tx text,
  mint_time bigint,
  registered boolean NOT NULL DEFAULT false,
  source text NOT NULL,
  chain_id integer NOT NULL DEFAULT 8738,
  moderation text NOT NULL DEFAULT 'show' CHECK (moderation IN ('show', 'hide')),
  market_display boolean NOT NULL DEFAULT true,
  circulating_supply_usd double precision,
  metadata jsonb NOT NULL DEFAULT '{}',
  deleted boolean NOT NULL DEFAULT false,
  -- Fields an admin changed through POST /token/{id}/update; seeding and discovery never overwrite them.
  admin_edited_fields text[] NOT NULL DEFAULT '{}',
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS tokens_symbol_idx ON tokens (lower(symbol), id);
CREATE INDEX IF NOT EXISTS tokens_mint_time_idx ON tokens (mint_time, id);
CREATE INDEX IF NOT EXISTS tokens_supply_usd_idx ON tokens (circulating_supply_usd, id);
CREATE INDEX IF NOT EXISTS tokens_dapp_idx ON tokens (dapp);
CREATE INDEX IF NOT EXISTS tokens_filters_idx ON tokens (chain_id, registered, moderation, market_display);

-- At most 3 categories per token: enforced by the repository (a 400 names the limit).
CREATE TABLE IF NOT EXISTS token_categories (
  token_id text NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
  category_id text NOT NULL REFERENCES categories (id),
  position smallint NOT NULL,
  PRIMARY KEY (token_id, category_id)
);
CREATE INDEX IF NOT EXISTS token_categories_category_idx ON token_categories (category_id);

CREATE TABLE IF NOT EXISTS bridged_tokens (
  id bigserial PRIMARY KEY,
  native_token_id text NOT NULL,
  chain_id integer NOT NULL,
  contract_address text NOT NULL,
  mapping_kind text NOT NULL CHECK (mapping_kind IN ('legacy_ticker_bridge', 'wormhole_remote_pool')),
  origin_wormhole_chain_id integer,
  origin_token_id_hex text,
  alephium_contract_id_hex text,
  external_asset_id text,
  origin_evm_contract_address text,
  wormhole_pool_decimals integer,
  origin_wormhole_chain_name text,
  origin_token_explorer_url text,
  UNIQUE (native_token_id, chain_id, contract_address, mapping_kind)
);
CREATE INDEX IF NOT EXISTS bridged_tokens_contract_idx ON bridged_tokens (contract_address);

-- Every contract the pipeline has seen; dapp_id attributes its events to a dapp.
CREATE TABLE IF NOT EXISTS contracts (
  address text PRIMARY KEY,
  contract_id text NOT NULL UNIQUE,
  group_index integer NOT NULL,
  dapp_id text,
  kind text NOT NULL DEFAULT 'unknown',
  std_interface_id text,
  created_tx text,
  created_at bigint,
  registered boolean NOT NULL DEFAULT false,
  label text,
  updated_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS contracts_dapp_idx ON contracts (dapp_id) WHERE dapp_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS nft_collections (
  address text PRIMARY KEY,
  collection_id text NOT NULL UNIQUE,
  uri text,
  name text,
  description text,
  image text,
  std_interface_id text,
  total_supply text,
  created_tx text,
  created_at bigint,
  updated_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS nft_collections_name_idx ON nft_collections (lower(name), address);

CREATE TABLE IF NOT EXISTS nft_tokens (
  token_id text PRIMARY KEY,
  collection_address text NOT NULL,
  nft_index text,
  uri text,
  name text,
  image text,
  minter text,
  mint_tx text,
  mint_time bigint,
  updated_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS nft_tokens_collection_idx ON nft_tokens (collection_address, token_id);
