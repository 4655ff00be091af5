-- Token market figures and TVL, written by the figures processor (lib/figures/).
--
-- supply_changes and pool_reserve_changes are facts taken from normalized events, keyed by the event (or
-- block) they come from: replays write the same rows again, a retracted block's rows come back with
-- main_chain = false and a newer version. The figures (burned and locked supply, reserves) are sums over
-- them read with FINAL, never summed on insert, so any order or repetition of batches gives one state.
CREATE TABLE IF NOT EXISTS supply_changes
(
  token_id String COMMENT 'Token (64 hex; 64 zeros for ALPH)',
  kind LowCardinality(String) COMMENT 'burned (Furnace Burned event, or a transfer to a burn address) or locked (an output with a lock time after its block: coinbase and uncle rewards, genesis allocations)',
  id String COMMENT 'Id of the normalized event',
  block_hash String COMMENT 'Block of the event',
  ts UInt64 COMMENT 'Block time in ms',
  amount UInt256 COMMENT 'Amount in the token''s smallest unit',
  unlock_at UInt64 COMMENT 'locked: the output''s lock time in ms (it counts as locked until then); burned: 0',
  main_chain Bool COMMENT 'False once the block left the main chain',
  version UInt64 COMMENT 'ReplacingMergeTree version: the message seq'
)
ENGINE = ReplacingMergeTree(version)
-- kind and unlock_at lead the key: the locked sum reads only the rows still locked (one primary-key range),
-- however many years of unlocked coinbase rewards the table holds.
ORDER BY (kind, unlock_at, token_id, id, block_hash)
COMMENT 'Burned and locked amounts per event; sum with FINAL and main_chain (locked: unlock_at > now)';

CREATE TABLE IF NOT EXISTS pool_reserve_changes
(
  pool String COMMENT 'Alephium pool contract address (base58)',
  token_id String COMMENT 'One of the pool''s two tokens (64 hex)',
  block_hash String COMMENT 'Block whose events changed the reserve',
  ts UInt64 COMMENT 'Block time in ms',
  first_id String COMMENT 'Id of the block''s first event that changed this reserve',
  delta Int256 COMMENT 'Net change of the reserve in the block, smallest units: Mint +, Burn -, swap in +, swap out -',
  main_chain Bool COMMENT 'False once the block left the main chain',
  version UInt64 COMMENT 'ReplacingMergeTree version: the message seq'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (pool, token_id, block_hash)
COMMENT 'Per-block reserve changes of DEX pools from Mint, Burn and Swap events; a reserve is sum(delta) with FINAL and main_chain';

-- market_figures: each refresh of the figures, one row per token and per dapp and minute: the input of
-- market series (price, circulating supply in USD, TVL over time). A later refresh in the same minute replaces it.
CREATE TABLE IF NOT EXISTS market_figures
(
  entity LowCardinality(String) COMMENT 'token or dapp',
  entity_id String COMMENT 'Token id (64 hex) or dapp id',
  t UInt64 COMMENT 'Minute of the refresh (ms, UTC)',
  price_usd Nullable(Float64) COMMENT 'token: USD price by the documented rule; dapp: null',
  circulating_supply Nullable(String) COMMENT 'token: circulating supply in smallest units (decimal text)',
  circulating_supply_usd Nullable(Float64) COMMENT 'token: circulating supply in USD',
  tvl_usd Nullable(Float64) COMMENT 'Value locked in USD in pools with includeInTVL (token: its legs; dapp: its pools)',
  refreshed_at UInt64 COMMENT 'Time of the refresh (ms); the newest wins within the minute'
)
ENGINE = ReplacingMergeTree(refreshed_at)
ORDER BY (entity, entity_id, t)
COMMENT 'Token and dapp market figures per minute (series input); query with FINAL';
