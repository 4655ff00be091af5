-- Normalized events: one row per (event id, block hash). Replays insert identical rows (same version)
-- and retractions of orphaned blocks insert the same key with main_chain = 0 and a larger version, so
-- `FINAL` (or argMax by version) yields the state of one clean pass over the winning chain.
CREATE TABLE IF NOT EXISTS events
(
  id String COMMENT 'Sortable event id: block timestamp (13 digits)-chain index (2)-height (10)-tx index (5)-event index (4); string order = visibility order for pollers',
  chain_index UInt8 COMMENT 'Alephium chain index = fromGroup * 4 + toGroup (0..15)',
  block_hash String COMMENT 'Block hash (64 hex)',
  block_height UInt32 COMMENT 'Height of the block on its chain',
  timestamp DateTime64(3, 'UTC') COMMENT 'Block timestamp',
  tx_id String COMMENT 'Transaction id (64 hex)',
  tx_index UInt16 COMMENT 'Position of the transaction in its block; the coinbase is last',
  event_index UInt16 COMMENT 'Position of the normalized event among those of its transaction',
  dapp_id LowCardinality(String) COMMENT 'Dapp that produced the event; alephium for protocol events, unknown when not attributed',
  category LowCardinality(String) COMMENT 'Event category (dex, transfer, token, mining, contract ...), see the taxonomy',
  sub_kind LowCardinality(String) COMMENT 'Event subtype (buy, sell, genesis_mint, coinbase ...)',
  type LowCardinality(String) COMMENT 'Event type within the sub kind',
  is_main Bool COMMENT 'True for the one main event of the transaction',
  from String COMMENT 'Sender address (base58), empty when none',
  to String COMMENT 'Recipient address (base58), empty when none',
  with String COMMENT 'Counterparty contract/address (pool, dapp contract), empty when none',
  token_address String COMMENT 'Token contract address (base58); empty for ALPH-only events',
  token_id String COMMENT 'Token id (64 hex); 64 zeros for ALPH',
  amount UInt256 COMMENT 'Primary amount in the smallest unit of token_id',
  contract_address String COMMENT 'Contract that emitted the decoded contract event, empty when derived from outputs',
  contract_event_index Nullable(Int32) COMMENT 'Contract event index of the decoded event (-1 ContractCreated ...)',
  payload String COMMENT 'Category-specific fields as JSON; {} when offloaded (see payload_ref)',
  payload_ref Nullable(String) COMMENT 'Key of the offloaded payload in event_payloads, null when inline',
  main_chain Bool COMMENT 'False once the block left the main chain (a reorg retraction)',
  doc String COMMENT 'The event as the API serves it (JSON of the columns above but main_chain): one column to read per page' CODEC(ZSTD(1)),
  version UInt64 COMMENT 'Row version for ReplacingMergeTree: the retraction of a block carries a larger version',
  INDEX idx_tx tx_id TYPE bloom_filter(0.001) GRANULARITY 1,
  INDEX idx_from from TYPE bloom_filter(0.01) GRANULARITY 2,
  INDEX idx_to to TYPE bloom_filter(0.01) GRANULARITY 2,
  INDEX idx_token token_address TYPE bloom_filter(0.01) GRANULARITY 2,
  INDEX idx_dapp dapp_id TYPE set(256) GRANULARITY 2,
  INDEX idx_category category TYPE set(64) GRANULARITY 2
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, block_hash)
-- Small granules: the API reads a few dozen rows at a time (a page, a transaction), never scans.
SETTINGS index_granularity = 1024
COMMENT 'Normalized events of the Alephium main chain; query with FINAL and main_chain = 1';

CREATE TABLE IF NOT EXISTS event_payloads
(
  ref String COMMENT 'payload_ref of the event that offloaded this payload',
  payload String COMMENT 'The full payload JSON',
  version UInt64 COMMENT 'Row version (replays write the same row)'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY ref
COMMENT 'Payloads larger than PAYLOAD_MAX_BYTES, merged back into events when payload hydration is enabled';
