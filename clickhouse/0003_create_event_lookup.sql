-- Events by address, token and transaction. `events` is ordered by id (time first), so a filter on
-- an address would test every granule's bloom filter and then read one granule per matching event
-- scattered over the table: its cost grows with the table. Here the events of one address, token or
-- transaction are one range of the primary key, whatever the table's size. Rows are copies of the
-- `events` rows (versions and retractions included, resolved by the reader as in `events`), made by
-- event_lookup_mv on every insert into `events`.
CREATE TABLE IF NOT EXISTS event_lookup
(
  kind LowCardinality(String) COMMENT 'What the key is: address (the event''s from or to), token (its token_address) or tx (its tx_id)',
  key String COMMENT 'The address (base58), the token contract address (base58) or the transaction id (64 hex)',
  id String COMMENT 'Event id (events.id)',
  block_hash String COMMENT 'Block hash of the event row (events.block_hash)',
  dapp_id LowCardinality(String) COMMENT 'events.dapp_id, for the dapp filter',
  category LowCardinality(String) COMMENT 'events.category, for the category filter',
  sub_kind LowCardinality(String) COMMENT 'events.sub_kind, for the sub_kind filter',
  token_address String COMMENT 'events.token_address, for the token filter on an address read',
  main_chain Bool COMMENT 'events.main_chain',
  version UInt64 COMMENT 'events.version: the newest row of an (id, block_hash) wins',
  payload_ref Nullable(String) COMMENT 'events.payload_ref',
  doc String COMMENT 'events.doc, the event as the API serves it' CODEC(ZSTD(1))
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (kind, key, id, block_hash)
SETTINGS index_granularity = 1024
COMMENT 'Events by address, token contract and transaction (copies of events rows kept by event_lookup_mv), for the API''s address, token and transaction reads';

CREATE MATERIALIZED VIEW IF NOT EXISTS event_lookup_mv TO event_lookup AS
SELECT k.1 AS kind, k.2 AS key, id, block_hash, dapp_id, category, sub_kind, token_address, main_chain, version, payload_ref, doc
FROM events
ARRAY JOIN arrayDistinct(arrayFilter(x -> x.2 != '', [('address', from), ('address', to), ('token', token_address), ('tx', tx_id)])) AS k;

-- Rows written before this migration (re-running it only writes rows the engine merges away).
INSERT INTO event_lookup
SELECT k.1 AS kind, k.2 AS key, id, block_hash, dapp_id, category, sub_kind, token_address, main_chain, version, payload_ref, doc
FROM events
ARRAY JOIN arrayDistinct(arrayFilter(x -> x.2 != '', [('address', from), ('address', to), ('token', token_address), ('tx', tx_id)])) AS k;
