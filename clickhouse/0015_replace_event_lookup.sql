-- Lean lookups (issue 22): `event_lookup` (0003) kept a full copy of each `events` row per key, its
-- transaction key included, about 2.7× the `events` table on the simulated network. It is replaced by:
-- * events_by_key: the address and token keys, with the document (an address or token page is one range
--   of the primary key, documents included; reading them from `events` by id costs one granule of
--   `events` per row) and only the columns the reader filters on; the block as cityHash64 of its hash.
-- * event_ids_by_tx: transaction (cityHash64 of its id) to event ids only. A transaction's events are few
--   and neighbours in `events` (ordered by id), so its documents are read from `events` by id.
CREATE TABLE IF NOT EXISTS events_by_key
(
  kind LowCardinality(String) COMMENT 'What the key is: address (the event''s from or to) or token (its token_address)',
  key String COMMENT 'The address (base58) or the token contract address (base58)',
  id String COMMENT 'Event id (events.id)',
  block UInt64 COMMENT 'cityHash64(events.block_hash): tells the rows of one id in two blocks (a reorg) apart',
  dapp_id LowCardinality(String) COMMENT 'events.dapp_id, for the dapp filter',
  category LowCardinality(String) COMMENT 'events.category, for the category filter',
  sub_kind LowCardinality(String) COMMENT 'events.sub_kind, for the sub_kind filter',
  -- ZSTD only here: on key and id (read by every page) it took 4 % more per address page than LZ4.
  token_address String COMMENT 'events.token_address, for the token filter on an address read' CODEC(ZSTD(1)),
  main_chain Bool COMMENT 'events.main_chain',
  version UInt64 COMMENT 'events.version: the newest row of an (id, block) wins',
  payload_ref Nullable(String) COMMENT 'events.payload_ref',
  doc String COMMENT 'events.doc, the event as the API serves it' CODEC(ZSTD(1))
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (kind, key, id, block)
SETTINGS index_granularity = 1024
COMMENT 'Events by address and token contract (copies of events rows kept by events_by_key_mv), for the API''s address and token reads';

CREATE TABLE IF NOT EXISTS event_ids_by_tx
(
  tx UInt64 COMMENT 'cityHash64(events.tx_id); a read keeps only the rows of `events` whose tx_id it asked for (two transactions of one hash only add rows)',
  id String COMMENT 'Id of an event of that transaction in some block (events.id); its rows in `events` say which block and version' CODEC(ZSTD(1))
)
ENGINE = ReplacingMergeTree
ORDER BY (tx, id)
-- A read takes a few rows per transaction, scattered over the table: small granules (a batch of 20
-- transactions, p50 21.4 ms against 24.1 ms with granules of 1,024 rows; simulated network, 2026-11-26).
SETTINGS index_granularity = 256
COMMENT 'Event ids by transaction (kept by event_ids_by_tx_mv), for the API''s transaction reads: the documents are read from events by id';

CREATE MATERIALIZED VIEW IF NOT EXISTS events_by_key_mv TO events_by_key AS
SELECT k.1 AS kind, k.2 AS key, id, cityHash64(block_hash) AS block, dapp_id, category, sub_kind, token_address,
       main_chain, version, payload_ref, doc
FROM events
ARRAY JOIN arrayDistinct(arrayFilter(x -> x.2 != '', [('address', from), ('address', to), ('token', token_address)])) AS k;

CREATE MATERIALIZED VIEW IF NOT EXISTS event_ids_by_tx_mv TO event_ids_by_tx AS
SELECT cityHash64(tx_id) AS tx, id FROM events WHERE tx_id != '';

DROP VIEW IF EXISTS event_lookup_mv;

-- Rows written before this migration, from `events` alone (re-running it only writes rows the engine
-- merges away). The keys are those of each (id, block_hash)'s newest row: a key an older version had
-- and a rewrite dropped (retracted in event_lookup only) gets no row. Retracted rows get none either.
INSERT INTO events_by_key
SELECT k.1 AS kind, k.2 AS key, id, cityHash64(block_hash) AS block, dapp_id, category, sub_kind, token_address,
       main_chain, version, payload_ref, doc
FROM events FINAL
ARRAY JOIN arrayDistinct(arrayFilter(x -> x.2 != '', [('address', from), ('address', to), ('token', token_address)])) AS k
WHERE main_chain;

-- Every version's pair: the engine merges the repeats away (a DISTINCT here would hold the whole table in memory).
INSERT INTO event_ids_by_tx
SELECT cityHash64(tx_id) AS tx, id FROM events WHERE tx_id != '';

DROP TABLE IF EXISTS event_lookup;
