-- Versioned read-only views for data engineers (POST /sql, and direct access with the role of
-- clickhouse/roles/api_v1_reader.sql). These views are the stable contract: the internal tables behind
-- them may change in any release; a view's name, columns, types and meaning do not change without a new
-- version (api_v2_*), and a column is only ever added at the end. Each view already resolves the
-- internal bookkeeping (FINAL, retracted blocks, deleted buckets), so a plain SELECT gives the current
-- main-chain state. Views show everything written, also events above the poll watermark that the JSON
-- routes do not serve yet.
CREATE VIEW IF NOT EXISTS api_v1_events
(
  id String COMMENT 'Sortable event id: block timestamp (13 digits)-chain index (2)-height (10)-tx index (5)-event index (4); string order = time order',
  chain_index UInt8 COMMENT 'Alephium chain index = fromGroup * 4 + toGroup (0..15); 17 for reorg notices',
  block_hash String COMMENT 'Block hash (64 hex)',
  block_height UInt32 COMMENT 'Height of the block on its chain',
  timestamp DateTime64(3, 'UTC') COMMENT 'Block timestamp (UTC)',
  tx_id String COMMENT 'Transaction id (64 hex)',
  tx_index UInt16 COMMENT 'Position of the transaction in its block; the coinbase is last',
  event_index UInt16 COMMENT 'Position of the normalized event among those of its transaction',
  dapp_id String COMMENT 'Dapp that produced the event; alephium for protocol events, unknown when not attributed',
  category String COMMENT 'Event category (dex, transfer, token, mining, contract ...)',
  sub_kind String COMMENT 'Event subtype (buy, sell, coinbase ...)',
  type String COMMENT 'Event type within the sub kind',
  is_main Bool COMMENT 'True for the one main event of the transaction',
  from String COMMENT 'Sender address (base58), empty when none',
  to String COMMENT 'Recipient address (base58), empty when none',
  with String COMMENT 'Counterparty contract or address (pool, dapp contract), empty when none',
  token_address String COMMENT 'Token contract address (base58); empty for ALPH-only events',
  token_id String COMMENT 'Token id (64 hex); 64 zeros for ALPH',
  amount UInt256 COMMENT 'Primary amount in the smallest unit of token_id',
  contract_address String COMMENT 'Contract that emitted the decoded contract event, empty when derived from outputs',
  contract_event_index Nullable(Int32) COMMENT 'Contract event index of the decoded event (-1 ContractCreated ...), null when none',
  payload String COMMENT 'Category-specific fields as JSON; {} when offloaded (see payload_ref)',
  payload_ref Nullable(String) COMMENT 'Key of the offloaded payload (payloads larger than PAYLOAD_MAX_BYTES), null when inline'
)
AS SELECT id, chain_index, block_hash, block_height, timestamp, tx_id, tx_index, event_index,
  toString(dapp_id) AS dapp_id, toString(category) AS category, toString(sub_kind) AS sub_kind, toString(type) AS type,
  is_main, from, to, with, token_address, token_id, amount, contract_address, contract_event_index, payload, payload_ref
FROM events FINAL
WHERE main_chain
COMMENT 'api v1: normalized events of the main chain, one row per event; order by id for time order';

CREATE VIEW IF NOT EXISTS api_v1_blocks
(
  chain_index UInt8 COMMENT 'Alephium chain index (0..15)',
  height UInt32 COMMENT 'Height on its chain',
  hash String COMMENT 'Block hash (64 hex)',
  timestamp DateTime64(3, 'UTC') COMMENT 'Block timestamp (UTC)',
  tx_count UInt32 COMMENT 'Number of transactions, coinbase included',
  event_count UInt32 COMMENT 'Number of contract events the node reported (system events included)'
)
AS SELECT chain_index, height, hash, timestamp, tx_count, event_count
FROM raw_blocks FINAL
WHERE main_chain
COMMENT 'api v1: indexed main-chain blocks';

CREATE VIEW IF NOT EXISTS api_v1_chain_progress
(
  chain_index UInt8 COMMENT 'Alephium chain index (0..15)',
  height UInt32 COMMENT 'Highest block height whose events are durably written',
  block_hash String COMMENT 'Hash of that block',
  block_ts DateTime64(3, 'UTC') COMMENT 'Timestamp of that block; the minimum over the chains is the poll watermark'
)
AS SELECT chain_index, height, block_hash, block_ts
FROM chain_progress FINAL
COMMENT 'api v1: how far the index has written each chain';

CREATE VIEW IF NOT EXISTS api_v1_trades
(
  pool String COMMENT 'DEX: pool contract address (base58); oracle: <source id>:<feed key>',
  ts UInt64 COMMENT 'Trade time in Unix ms',
  id String COMMENT 'Id of the normalized event the trade comes from (api_v1_events.id)',
  block_hash String COMMENT 'Block of the event',
  tx_id String COMMENT 'Transaction of the event',
  kind String COMMENT 'buy or sell (the trader receives or gives the base token), or oracle',
  base_token_id String COMMENT 'Base token (64 hex); empty for oracle values',
  quote_token_id String COMMENT 'Quote token (64 hex); empty for oracle values',
  base_amount UInt256 COMMENT 'Base amount in its smallest unit (0 for oracle values)',
  quote_amount UInt256 COMMENT 'Quote amount in its smallest unit (0 for oracle values)',
  price Decimal(76, 40) COMMENT 'Raw ratio: quote_amount / base_amount in smallest units (oracles: the raw value); apply token decimals yourself',
  inv_price Decimal(76, 40) COMMENT 'Raw ratio: base_amount / quote_amount (0 for oracle values)'
)
AS SELECT pool, ts, id, block_hash, tx_id, toString(kind) AS kind, base_token_id, quote_token_id, base_amount,
  quote_amount, price, inv_price
FROM trades FINAL
WHERE main_chain
COMMENT 'api v1: on-chain DEX swaps and oracle values of the main chain';

CREATE VIEW IF NOT EXISTS api_v1_candles
(
  market String COMMENT 'Watched pair: <source id>:<pair symbol> (the pool address for DEX sources)',
  scale String COMMENT '1m, 3m, 5m, 15m, 1h, 4h, 1d or 1w',
  t UInt64 COMMENT 'Bucket start in Unix ms (UTC; weeks start on Monday)',
  o String COMMENT 'Open (raw ratio, quote per base in smallest units, exact decimal text)',
  h String COMMENT 'High (raw ratio, decimal text)',
  l String COMMENT 'Low (raw ratio, decimal text)',
  c String COMMENT 'Close (raw ratio, decimal text)',
  v String COMMENT 'Base volume in the base token''s smallest unit (decimal text)',
  trades UInt32 COMMENT 'Main-chain trades in the bucket'
)
AS SELECT market, toString(scale) AS scale, t, o, h, l, c, v, trades
FROM candles FINAL
WHERE deleted = 0
COMMENT 'api v1: OHLCV candles of watched pairs (raw ratios: the API applies token decimals)';

CREATE VIEW IF NOT EXISTS api_v1_spot
(
  pool String COMMENT 'Pool address, or <source id>:<feed key> for oracle values',
  ts UInt64 COMMENT 'Time of the newest trade or value (Unix ms)',
  id String COMMENT 'Event id of that trade',
  base_token_id String COMMENT 'Base token of the trade (orients price), empty for oracle values',
  price Decimal(76, 40) COMMENT 'Raw ratio, quote per base (as in api_v1_trades)',
  inv_price Decimal(76, 40) COMMENT 'Raw ratio, base per quote'
)
AS SELECT pool, ts, id, base_token_id, price, inv_price
FROM spot FINAL
WHERE deleted = 0
COMMENT 'api v1: newest main-chain trade or oracle value per pool';

CREATE VIEW IF NOT EXISTS api_v1_series_instances
(
  instance_id String COMMENT 'Series instance id (64 hex), as in /series routes',
  series_id String COMMENT 'Series definition id',
  dimensions String COMMENT 'Dimensions as JSON (sorted keys)',
  last_seen_at UInt64 COMMENT 'Time (Unix ms) of the instance''s newest main-chain fact; 0 when none is left'
)
AS SELECT instance_id, toString(series_id) AS series_id, dimensions, last_seen_at
FROM series_instances FINAL
COMMENT 'api v1: series instances (a series id with its dimensions)';

CREATE VIEW IF NOT EXISTS api_v1_series_points
(
  instance_id String COMMENT 'Series instance id (api_v1_series_instances.instance_id)',
  scale String COMMENT 'Scale: 0 (raw: one point per distinct event time), 1m, 1h or 1d',
  t UInt64 COMMENT 'Bucket start in Unix ms (raw scale: the event time)',
  key String COMMENT 'Point key',
  agg String COMMENT 'count, sum, distinct or last',
  value String COMMENT 'The point value as exact decimal text'
)
AS SELECT instance_id, toString(scale) AS scale, t, toString(key) AS key, toString(agg) AS agg, value
FROM series_points FINAL
WHERE deleted = 0
COMMENT 'api v1: series points kept in ClickHouse (raw points of archived pages are in the object store, not here)';

CREATE VIEW IF NOT EXISTS api_v1_market_figures
(
  entity String COMMENT 'token or dapp',
  entity_id String COMMENT 'Token id (64 hex) or dapp id',
  t UInt64 COMMENT 'Minute of the refresh (Unix ms, UTC)',
  price_usd Nullable(Float64) COMMENT 'token: USD price; dapp: null',
  circulating_supply Nullable(String) COMMENT 'token: circulating supply in smallest units (decimal text)',
  circulating_supply_usd Nullable(Float64) COMMENT 'token: circulating supply in USD',
  tvl_usd Nullable(Float64) COMMENT 'Value locked in USD in pools counted for TVL'
)
AS SELECT toString(entity) AS entity, entity_id, t, price_usd, circulating_supply, circulating_supply_usd, tvl_usd
FROM market_figures FINAL
COMMENT 'api v1: token and dapp market figures per minute';
