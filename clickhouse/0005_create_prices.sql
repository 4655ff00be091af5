-- Price facts, written by the candles processor (lib/prices/writer.ts).
--
-- trades: every on-chain DEX swap and oracle value, whether or not a pair watches it. Prices are raw
-- ratios (smallest units of quote per smallest unit of base, exact to 40 decimals): token decimals are
-- applied when served, so these rows depend on the blocks alone. Replays write the same rows again;
-- a retracted block's rows come back with main_chain = false and a larger version.
CREATE TABLE IF NOT EXISTS trades
(
  pool String COMMENT 'DEX: pool contract address (base58); oracle: <source id>:<feed key>',
  ts UInt64 COMMENT 'Trade time in ms: the block timestamp (swaps) or the value''s own timestamp (oracles)',
  id String COMMENT 'Id of the normalized event the trade comes from',
  block_hash String COMMENT 'Block of the event',
  tx_id String COMMENT 'Transaction of the event',
  kind LowCardinality(String) COMMENT 'buy or sell (the trader receives or gives the base token), or oracle',
  base_token_id String COMMENT 'Base token (64 hex) as the normalizer orients the pool; oracle: empty',
  quote_token_id String COMMENT 'Quote token (64 hex); oracle: empty',
  base_amount UInt256 COMMENT 'Base token amount in its smallest unit (0 for oracle values)',
  quote_amount UInt256 COMMENT 'Quote token amount in its smallest unit (0 for oracle values)',
  price Decimal(76, 40) COMMENT 'quote_amount / base_amount (oracles: the raw value), truncated to 40 decimals',
  inv_price Decimal(76, 40) COMMENT 'base_amount / quote_amount, truncated to 40 decimals (0 for oracle values)',
  main_chain Bool COMMENT 'False once the block left the main chain',
  version UInt64 COMMENT 'ReplacingMergeTree version: the block message seq',
  INDEX idx_block block_hash TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (pool, ts, id, block_hash)
COMMENT 'On-chain trades (DEX swaps) and oracle values; query with FINAL and main_chain';

-- candles: OHLCV per watched pair (market = <source id>:<pair symbol>) and scale, recomputed from
-- trades for every bucket a batch touches. Values are stored as decimal text, formatted once when a
-- bucket is recomputed: reading 1,000 candles then costs no wide-decimal formatting (which costs about
-- 25 us per 76-digit value in ClickHouse 26). Prices are raw ratios oriented for the pair (its token_id
-- is the base); `v` is the base volume in smallest units. A bucket whose trades all left the main
-- chain is written with deleted = 1.
CREATE TABLE IF NOT EXISTS candles
(
  market String COMMENT '<source id>:<pair symbol>',
  scale LowCardinality(String) COMMENT '1m, 3m, 5m, 15m, 1h, 4h, 1d or 1w',
  t UInt64 COMMENT 'Bucket start in ms (UTC; weeks start on Monday)',
  o String COMMENT 'Open: price of the bucket''s first trade (raw ratio, quote per base, exact decimal text of trades.price)',
  h String COMMENT 'High (raw ratio, decimal text)',
  l String COMMENT 'Low (raw ratio, decimal text)',
  c String COMMENT 'Close: price of the bucket''s last trade (raw ratio, decimal text)',
  v String COMMENT 'Base volume in the base token''s smallest unit (decimal text of a UInt256 sum)',
  trades UInt32 COMMENT 'Main-chain trades in the bucket',
  deleted UInt8 COMMENT '1 when the bucket has no main-chain trade any more',
  version UInt64 COMMENT 'max(trade version) * 1e6 + trades: a recompute that saw more wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (market, scale, t)
COMMENT 'OHLCV candles of watched pairs; query with FINAL and deleted = 0';

-- spot: the newest main-chain trade or oracle value per pool, recomputed for every pool a batch touches.
CREATE TABLE IF NOT EXISTS spot
(
  pool String COMMENT 'Pool address, or <source id>:<feed key> for oracle values (as in trades)',
  ts UInt64 COMMENT 'Time of the trade or value (ms)',
  id String COMMENT 'Event id of the trade',
  base_token_id String COMMENT 'Base token of the trade (orients price), empty for oracle values',
  price Decimal(76, 40) COMMENT 'Raw ratio, quote per base (as in trades)',
  inv_price Decimal(76, 40) COMMENT 'Raw ratio, base per quote',
  deleted UInt8 COMMENT '1 when the pool has no main-chain trade any more',
  version UInt64 COMMENT 'max(trade version) * 1e6 + trades seen: a recompute that saw more wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY pool
COMMENT 'Newest trade or oracle value per pool; query with FINAL and deleted = 0';
