-- Price registry: sources, configured (watched) pairs, their token legs, and pairs a source offers.
-- Facts (trades, candles, spot) live in ClickHouse (clickhouse/0005_create_prices.sql), these rows say
-- which of them are served and how. Times are Unix milliseconds (bigint), as in the registry.

CREATE TABLE IF NOT EXISTS price_sources (
  id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  label text NOT NULL,
  -- onchain_dex: Alephium pools of `dapp_id` (dex_pools), decoded by the normalizer,
  -- oracle: OracleUpdate(key, value, timestamp) events of `contract_addresses`,
  -- cex, uniswap, pancakeswap, api, aggregator: external sources (their own processors).
  kind text NOT NULL CHECK (kind IN ('onchain_dex', 'oracle', 'cex', 'uniswap', 'pancakeswap', 'api', 'aggregator')),
  dapp_id text,
  contract_addresses text[] NOT NULL DEFAULT '{}',
  -- Decimals of oracle values (DIA posts 8-decimal USD values).
  value_decimals integer,
  supports_spot boolean NOT NULL DEFAULT false,
  supports_candles boolean NOT NULL DEFAULT false,
  supports_trades boolean NOT NULL DEFAULT false,
  supported_denominations text[] NOT NULL DEFAULT '{}',
  enabled boolean NOT NULL DEFAULT true,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

-- A configured (watched) pair. Deleting the row is the `watched -> removed` transition; candles stay
-- in ClickHouse (keyed by source and pair_symbol) and are recomputed if the pair is added again.
CREATE TABLE IF NOT EXISTS price_pairs (
  id serial PRIMARY KEY,
  source_id text NOT NULL REFERENCES price_sources (id) ON DELETE CASCADE,
  -- onchain_dex: the pool's contract address, oracle: the feed key (BTC/USD), cex: the exchange symbol.
  pair_symbol text NOT NULL,
  pair_label text NOT NULL,
  pool_created_at bigint,
  -- The priced token (base) and what it is priced in (quote); token_id is the derived primary leg.
  token_id text,
  quote_token_id text,
  chain text NOT NULL DEFAULT 'alph',
  chain_id integer,
  denomination text NOT NULL,
  available boolean NOT NULL DEFAULT true,
  enabled boolean NOT NULL DEFAULT true,
  enable_trades boolean NOT NULL DEFAULT false,
  include_in_tvl boolean NOT NULL DEFAULT false,
  token_address text,
  -- Decimals of the base and quote tokens, null = take them from the tokens table when served.
  decimals integer,
  quote_decimals integer,
  -- When the candles of the pair were last rebuilt from stored events (null: a backfill is due).
  backfilled_at bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  UNIQUE (source_id, pair_symbol)
);
CREATE INDEX IF NOT EXISTS price_pairs_token_idx ON price_pairs (token_id);
CREATE INDEX IF NOT EXISTS price_pairs_quote_idx ON price_pairs (quote_token_id);

CREATE TABLE IF NOT EXISTS price_pair_tokens (
  id serial PRIMARY KEY,
  token_price_source_id integer NOT NULL REFERENCES price_pairs (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('cex', 'dex', 'api', 'oracle', 'aggregator')),
  dapp text,
  chain text NOT NULL,
  token_id text NOT NULL,
  token_contract text,
  in_consolidated_market boolean NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS price_pair_tokens_pair_idx ON price_pair_tokens (token_price_source_id, id);
CREATE INDEX IF NOT EXISTS price_pair_tokens_token_idx ON price_pair_tokens (token_id);

-- Pairs a non-DEX source offers (exchange markets, oracle feeds). An onchain_dex source's available
-- pairs are its discovered pools (dex_pools), numbered by dex_pools.id.
CREATE TABLE IF NOT EXISTS price_available_pairs (
  id serial PRIMARY KEY,
  source_id text NOT NULL REFERENCES price_sources (id) ON DELETE CASCADE,
  pair_symbol text NOT NULL,
  base_asset text NOT NULL,
  quote_asset text NOT NULL,
  UNIQUE (source_id, pair_symbol)
);

ALTER TABLE dex_pools ADD COLUMN IF NOT EXISTS id serial;
CREATE UNIQUE INDEX IF NOT EXISTS dex_pools_id_idx ON dex_pools (id);
CREATE INDEX IF NOT EXISTS dex_pools_dapp_idx ON dex_pools (dapp_id, id);

-- On-chain sources known on mainnet: the DEXes whose swaps the normalizer decodes, and DIA's oracle.
INSERT INTO price_sources (id, label, kind, dapp_id, contract_addresses, value_decimals, supports_spot,
  supports_candles, supports_trades, supported_denominations, created_at, updated_at) VALUES
  ('ayin', 'Ayin DEX', 'onchain_dex', 'ayin', '{}', NULL, true, true, true, '{ALPH,USDT,USDC,AYIN,WETH,WBTC}', 0, 0),
  ('elexium', 'Elexium DEX', 'onchain_dex', 'elexium', '{}', NULL, true, true, true, '{ALPH,USDT,USDC,EX}', 0, 0),
  ('dia', 'DIA oracle', 'oracle', 'dia-oracle', '{285zrkZTPpUCpjKg9E3z238VmpUBQEAbESGsJT6yX7Rod}', 8, true, false, false,
   '{USD}', 0, 0)
ON CONFLICT (id) DO NOTHING;

INSERT INTO price_available_pairs (source_id, pair_symbol, base_asset, quote_asset) VALUES
  ('dia', 'ALPH/USD', 'ALPH', 'USD'),
  ('dia', 'AYIN/USD', 'AYIN', 'USD'),
  ('dia', 'BTC/USD', 'BTC', 'USD'),
  ('dia', 'ETH/USD', 'ETH', 'USD'),
  ('dia', 'USDC/USD', 'USDC', 'USD'),
  ('dia', 'USDT/USD', 'USDT', 'USD'),
  ('dia', 'WBTC/USD', 'WBTC', 'USD')
ON CONFLICT (source_id, pair_symbol) DO NOTHING;
