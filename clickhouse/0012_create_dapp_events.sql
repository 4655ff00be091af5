-- The events of the five dapp groups' routes (furnace, chainreaction, elexium, alphbanx, dia-oracle) keyed by
-- dapp and sub kind, so each list is one primary-key range whatever the size of `events`. Rows are copies of
-- the `events` rows (versions and retractions included: read with FINAL and main_chain = 1), made by
-- dapp_events_mv on every insert into `events`.
CREATE TABLE IF NOT EXISTS dapp_events
(
  dapp_id LowCardinality(String) COMMENT 'events.dapp_id: furnace, chainreaction, elexium, alphbanx or dia-oracle',
  category LowCardinality(String) COMMENT 'events.category',
  sub_kind LowCardinality(String) COMMENT 'events.sub_kind (burn, player_joined, buy, price_update ...)',
  type LowCardinality(String) COMMENT 'events.type',
  id String COMMENT 'Event id (events.id)',
  block_hash String COMMENT 'events.block_hash',
  timestamp DateTime64(3, 'UTC') COMMENT 'Block timestamp',
  tx_id String COMMENT 'Transaction id (64 hex)',
  from String COMMENT 'events.from',
  to String COMMENT 'events.to',
  with String COMMENT 'events.with',
  token_id String COMMENT 'events.token_id (64 hex; 64 zeros for ALPH)',
  amount UInt256 COMMENT 'events.amount',
  contract_address String COMMENT 'events.contract_address',
  payload String COMMENT 'events.payload (JSON; {} when offloaded)',
  main_chain Bool COMMENT 'events.main_chain',
  version UInt64 COMMENT 'events.version: the newest row of an (id, block_hash) wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (dapp_id, sub_kind, id, block_hash)
SETTINGS index_granularity = 1024
COMMENT 'Events of the dapp groups (copies of events rows kept by dapp_events_mv), for the /dapps/<group>/ routes';

CREATE MATERIALIZED VIEW IF NOT EXISTS dapp_events_mv TO dapp_events AS
SELECT dapp_id, category, sub_kind, type, id, block_hash, timestamp, tx_id, from, to, with, token_id, amount,
       contract_address, payload, main_chain, version
FROM events
WHERE dapp_id IN ('furnace', 'chainreaction', 'elexium', 'alphbanx', 'dia-oracle');

-- Rows written before this migration.
INSERT INTO dapp_events
SELECT dapp_id, category, sub_kind, type, id, block_hash, timestamp, tx_id, from, to, with, token_id, amount,
       contract_address, payload, main_chain, version
FROM events
WHERE dapp_id IN ('furnace', 'chainreaction', 'elexium', 'alphbanx', 'dia-oracle');
